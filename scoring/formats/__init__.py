"""Source formats: one module per format, each answering the same questions about a path
(`recognise`, `load` -> scoring.formats.base.SourceLoad). The harness formats live here:
lmms-eval, VLMEvalKit, LongDocURL. The next harness is one module and one test file: add it to
FORMATS. (The benchmarks' own layouts -- XL-DocBench, DocVQA-style, MMLongBench-Doc -- are still
read by scoring.loaders and scoring.mmlongbench.)"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from . import lmms_eval, longdocurl, vlmevalkit
from .base import HarnessQuestion, HarnessRow, HarnessRun, SourceLoad

__all__ = ["FORMATS", "detect", "open_source", "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad"]

FORMATS: tuple[ModuleType, ...] = (lmms_eval, vlmevalkit, longdocurl)


def detect(path: str | Path) -> ModuleType | None:
    """The format module that recognises `path` (a file or a folder), or None."""
    p = Path(path)
    for fmt in FORMATS:
        try:
            if fmt.recognise(p):
                return fmt
        except OSError:
            continue
    return None


def open_source(path: str | Path) -> SourceLoad | None:
    """Everything a harness path holds, read by the format that recognises it; None when none does."""
    fmt = detect(path)
    return None if fmt is None else fmt.load(Path(path))

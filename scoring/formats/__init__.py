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

__all__ = ["FORMATS", "detect", "detect_all", "open_source", "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad"]

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


def detect_all(path: str | Path) -> list[ModuleType]:
    """Every format module that recognises `path` (a folder may hold several harnesses' outputs)."""
    p = Path(path)
    found = []
    for fmt in FORMATS:
        try:
            if fmt.recognise(p):
                found.append(fmt)
        except OSError:
            continue
    return found


def open_source(path: str | Path) -> SourceLoad | None:
    """Everything a harness path holds, read by each format that recognises it (one SourceLoad,
    the formats' runs, gold and problems together); None when none does."""
    loads = [fmt.load(Path(path)) for fmt in detect_all(path)]
    if not loads:
        return None
    if len(loads) == 1:
        return loads[0]
    out = SourceLoad(format="+".join(x.format for x in loads), root=loads[0].root)
    for x in loads:
        out.runs.extend(x.runs)
        out.problems.extend(x.problems)
        out.files.extend(x.files)
        for task, questions in x.gold.items():
            out.gold.setdefault(task, []).extend(questions)
    return out

"""Source formats: one module per format, each answering the same questions about a path.

Harness outputs (FORMATS: lmms-eval, VLMEvalKit, LongDocURL): `recognise(path)`, `load(path)` ->
scoring.formats.base.SourceLoad (gold per task, runs with the harness's own per-question scores,
the documents named, problems). The next harness is one module and one test file: add it to FORMATS.

Benchmarks' own folders (BENCHMARK_FORMATS: MMLongBench-Doc, DocVQA-style, XL-DocBench):
`recognise(path)`, `layout(folder)` -> scoring.formats.base.BenchmarkFiles (which file holds the
gold, documents, runs, official scores), and their readers (`read_gold`, ...: scoring.loaders and
scoring.mmlongbench, each problem with file, line and field). `benchmark_format` picks one.
scoring.formats.records turns a harness source into the benchmark records (GoldQuestion, Prediction,
ScoreRow) the rest of the library reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from . import docvqa, lmms_eval, longdocurl, mmlongbench_doc, vlmevalkit, xldocbench
from .base import BenchmarkFiles, HarnessQuestion, HarnessRow, HarnessRun, Progress, SourceLoad, listing_once, reporting

__all__ = ["FORMATS", "BENCHMARK_FORMATS", "detect", "detect_all", "open_source", "benchmark_format", "BenchmarkFiles",
           "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad"]

FORMATS: tuple[ModuleType, ...] = (lmms_eval, vlmevalkit, longdocurl)
BENCHMARK_FORMATS: tuple[ModuleType, ...] = (mmlongbench_doc, docvqa, xldocbench)


def benchmark_format(bench: Path | None, gold: Sequence[Path] = ()) -> ModuleType:
    """The benchmark format of a folder and the gold files given (which replace its own): MMLongBench-Doc
    when every gold file given is a samples.json (or none is given and the folder is a clone); DocVQA-style
    when the gold files hold DocVQA records; else XL-DocBench (whose loaders say what they cannot read)."""
    if mmlongbench_doc.claims(bench, gold):
        return mmlongbench_doc
    files = list(gold) or (xldocbench.gold_files(bench) if bench is not None and bench.is_dir() else [])
    if files and any(docvqa.recognise(p) for p in files):
        return docvqa
    return xldocbench


def detect(path: str | Path) -> ModuleType | None:
    """The format module that recognises `path` (a file or a folder), or None."""
    p = Path(path)
    with listing_once():
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
    with listing_once():
        for fmt in FORMATS:
            try:
                if fmt.recognise(p):
                    found.append(fmt)
            except OSError:
                continue
    return found


def open_source(path: str | Path, *, progress: Progress | None = None) -> SourceLoad | None:
    """Everything a harness path holds, read by each format that recognises it (one SourceLoad,
    the formats' runs, gold and problems together); None when none does. The folder is listed once
    for all the formats (`listing_once`); `progress(entries, path)` hears a long listing."""
    with listing_once(), reporting(progress):
        loads = [fmt.load(Path(path)) for fmt in detect_all(path)]
    if not loads:
        return None
    if len(loads) == 1:
        return loads[0]
    out = SourceLoad(format="+".join(x.format for x in loads), root=loads[0].root)
    said: set = set()
    for x in loads:
        out.runs.extend(x.runs)
        for p in x.problems:  # a folder's own problems (a FIFO, a link loop) are found by every format's walk: said once
            if p not in said:
                said.add(p)
                out.problems.append(p)
        out.files.extend(x.files)
        out.conflicts.extend(x.conflicts)
        for task, questions in x.gold.items():
            out.gold.setdefault(task, []).extend(questions)
    return out

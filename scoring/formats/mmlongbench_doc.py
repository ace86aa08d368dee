"""MMLongBench-Doc's own repository layout: gold `data/samples.json` (one JSON list), PDFs in
`data/documents/`, result files `results/res_<model>.json` (each row the sample plus `response`,
`pred`, `score`: the official per-question score). Read by scoring.mmlongbench; this module says
which file holds what (`recognise`, `layout`) and names the readers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..mmlongbench import document_records, load_results, load_samples, run_name
from ..mmlongbench_report import evidence_categories
from ..mmlongbench_rule import judge_question
from ..reading import open_regular
from .base import BenchmarkFiles

__all__ = ["NAME", "LAYOUT", "PROFILE", "is_samples", "recognise", "claims", "layout", "read_gold", "read_run",
           "documents", "run_name", "evidence_categories", "judge_question"]

NAME = "mmlongbench-doc"
LAYOUT = "mmlongbench"  # dashboard.data.workspace.Discovery.layout of a clone
PROFILE = "mmlongbench-doc"  # the benchmark's own evaluator (scoring.profiles)

read_gold = load_samples
read_run = load_results
documents = document_records


def is_samples(path: Path) -> bool:
    """Whether a gold file is MMLongBench-Doc's samples.json: a .json file whose text starts as a JSON
    list of objects with `doc_id` and `answer_format` (its first 4 kB looked at; never raises)."""
    if path.suffix.lower() != ".json":
        return False
    try:
        with open_regular(path) as fh:  # a FIFO is never waited on
            head = fh.read(4096).decode("utf-8-sig", "replace").lstrip()
    except OSError:
        return path.name == "samples.json"
    return head.startswith("[") and '"doc_id"' in head and '"answer_format"' in head


def recognise(path: Path) -> bool:
    """samples.json itself, or a clone: a folder with data/samples.json and no top-level *.jsonl."""
    try:
        if path.is_file():
            return is_samples(path)
        return path.is_dir() and (path / "data" / "samples.json").is_file() and \
            not any(p.is_file() for p in path.glob("*.jsonl"))
    except OSError:
        return False


def claims(bench: Path | None, gold: Sequence[Path]) -> bool:
    """Whether a benchmark folder and the gold files given (which replace its own) are MMLongBench-Doc's:
    every gold file given is a samples.json, or none is given and the folder is a clone."""
    if gold:
        return all(is_samples(p) for p in gold)
    return bench is not None and bench.is_dir() and recognise(bench)


def layout(bench: Path) -> BenchmarkFiles:
    out = BenchmarkFiles(format=NAME, docs_dir=bench / "data" / "documents", gold=[bench / "data" / "samples.json"])
    if (bench / "results").is_dir():
        out.predictions.extend(sorted(p for p in (bench / "results").glob("res_*.json") if p.is_file()))
    return out

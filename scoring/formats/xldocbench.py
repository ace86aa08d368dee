"""XL-DocBench's own folder (the project's "lens" layout): gold in every top-level *.jsonl except
documents.jsonl (qa_single_doc.jsonl and qa_cross_doc.jsonl first), documents.jsonl, docs/<id>.pdf,
runs/*.json[l] prediction files, results/ score files (scores.jsonl, summary.json,
official/*.report.json|*.per_question.csv). Read by scoring.loaders; this module says which file
holds what (`recognise`, `layout`) and names the readers. DocVQA-style folders share the layout
(scoring.formats.docvqa)."""

from __future__ import annotations

import json
from pathlib import Path

from ..limits import JSONL_HUGE_LINE
from ..loaders import load_documents, load_gold, load_predictions, load_scores, load_summary
from ..problems import Problem
from ..reading import Overlong, bounded_lines, open_regular
from .base import BenchmarkFiles

__all__ = ["NAME", "LAYOUT", "GOLD_SNIFF_ROWS", "DEFAULT_GOLD", "recognise", "layout", "looks_like_gold", "gold_like",
           "prediction_files", "classify_scores", "read_gold", "read_documents", "read_predictions", "read_scores",
           "read_summary", "default_gold_paths"]

NAME = "xldocbench"
LAYOUT = "lens"  # dashboard.data.workspace.Discovery.layout of this layout (and DocVQA-style folders)
DEFAULT_GOLD = ("qa_single_doc.jsonl", "qa_cross_doc.jsonl")  # the gold files read when none is named, in this order
GOLD_SNIFF_ROWS = 50  # non-blank lines read to decide whether a top-level .jsonl file holds gold

def default_gold_paths(data_dir: Path) -> list[Path]:
    """The gold files read when none is named: DEFAULT_GOLD in `data_dir`, those that exist (a benchmark of
    single-document questions only has no qa_cross_doc.jsonl, and is not an error); all of them when none
    exists, so the error names what was looked for."""
    paths = [data_dir / f for f in DEFAULT_GOLD]
    return [p for p in paths if p.exists()] or paths


read_gold = load_gold
read_documents = load_documents
read_predictions = load_predictions
read_scores = load_scores
read_summary = load_summary


def gold_like(row: object) -> bool:
    if not isinstance(row, dict):
        return False
    if "questionId" in row and "answers" in row:  # DocVQA
        return True
    answer = row.get("answer")
    return "question" in row or (isinstance(answer, dict) and "value" in answer)


def looks_like_gold(path: Path, rows: int = GOLD_SNIFF_ROWS) -> bool:
    """Whether a top-level .jsonl file holds gold questions: one of its first `rows` non-blank
    lines is an object with a `question` (or an `answer` object with a `value`, or DocVQA's
    `questionId` and `answers`). A file none of whose first lines even parse as JSON is read as
    gold, so that its problems are listed; an empty file too. Never raises."""
    parsed = 0
    try:
        with open_regular(path) as fh:  # a FIFO is never waited on (the loader names it)
            for raw in bounded_lines(fh, JSONL_HUGE_LINE):  # never more of a line held than the sniff needs
                if isinstance(raw, Overlong):
                    return True  # a huge line: let the loader report it
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw.removeprefix(b"\xef\xbb\xbf"))
                except (ValueError, RecursionError):
                    rows -= 1
                    if rows <= 0:
                        break
                    continue
                parsed += 1
                if gold_like(row):
                    return True
                rows -= 1
                if rows <= 0:
                    break
    except OSError:
        return True  # unreadable: the loader says so
    return parsed == 0


def _gold_order(path: Path) -> tuple[int, str]:
    return (DEFAULT_GOLD.index(path.name) if path.name in DEFAULT_GOLD else len(DEFAULT_GOLD), path.name)


def prediction_files(target: Path) -> list[Path]:
    """The prediction files a --runs path names: the file itself, or a folder's *.json and *.jsonl."""
    if target.is_dir():
        return sorted(p for p in target.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl"))
    return [target]


def classify_scores(target: Path, out: BenchmarkFiles) -> None:
    """A score path's files: summary.json a summary; *.jsonl, *.csv and *.report.json (or the file given) scores."""
    files = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
    for p in files:
        name = p.name.lower()
        if name == "summary.json":
            out.summaries.append(p)
        elif name.endswith((".jsonl", ".csv", ".report.json")) or not target.is_dir():
            out.scores.append(p)


def _top_jsonl(bench: Path) -> list[Path]:
    return [p for p in bench.glob("*.jsonl") if p.is_file() and p.name != "documents.jsonl"]


def recognise(path: Path) -> bool:
    """A folder with documents.jsonl or a top-level *.jsonl that looks like gold; or a gold .jsonl file."""
    try:
        if path.is_file():
            return path.suffix.lower() == ".jsonl" and looks_like_gold(path)
        return path.is_dir() and ((path / "documents.jsonl").is_file() or any(looks_like_gold(p) for p in _top_jsonl(path)))
    except OSError:
        return False


def _top_files(bench: Path) -> tuple[list[Path], list[Path]]:
    """The folder's top-level .jsonl files in gold order: (those with gold in their first rows, the others)."""
    gold: list[Path] = []
    other: list[Path] = []
    for p in sorted(_top_jsonl(bench), key=_gold_order):
        (gold if looks_like_gold(p) else other).append(p)
    return gold, other


def gold_files(bench: Path) -> list[Path]:
    """`layout`'s gold files, without listing the folder's runs."""
    return _top_files(bench)[0]


def layout(bench: Path) -> BenchmarkFiles:
    """Which files of the folder hold what; a top-level .jsonl without gold in its first rows is named and not read."""
    out = BenchmarkFiles(format=NAME, docs_dir=bench / "docs")
    if (bench / "documents.jsonl").is_file():
        out.documents = bench / "documents.jsonl"
    gold, other = _top_files(bench)
    out.gold.extend(gold)
    for p in other:
        out.problems.append(Problem.warning(str(p), None, None, "gold question records (question, answer)",
                                            "none in its first rows: not read as gold", skipped=True,
                                            kind="files that are not gold"))
    if (bench / "runs").is_dir():
        out.predictions.extend(prediction_files(bench / "runs"))
    if (bench / "results").is_dir():
        classify_scores(bench / "results", out)
    return out

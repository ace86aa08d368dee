"""MMLongBench-Doc's text report: what the released `show_results` writes to `res_<model>.txt`,
and the benchmark-shaped rows it reads, made from our records (`gold_rows`) or from a result file
with recomputed scores (`rescored_rows`). The scores are MMLongBench-Doc's rule
(scoring/mmlongbench_rule.py); the files are read by scoring/mmlongbench.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .mmlongbench import ResultsLoad, evidence_value
from .mmlongbench_rule import NOT_ANSWERABLE, acc_and_f1
from .model import GoldQuestion

__all__ = ["SEPARATOR", "evidence_categories", "show_results", "gold_rows", "rescored_rows"]

SEPARATOR = "-" * 23


def _key(value: Any) -> Any:
    """A grouping key: the value itself, or its str() when it cannot be a dict key."""
    try:
        hash(value)
    except TypeError:
        return str(value)
    return value


def evidence_categories(evidence_pages: Any, answer: Any) -> tuple[str, ...]:
    """The report's page categories of one question, overlaps included: `single-page` (exactly one
    evidence page, unanswerable questions too), `cross-page` (any other number of pages -- none
    included -- and answerable), `unanswerable` (answer exactly "Not answerable")."""
    n = len(evidence_value(evidence_pages))
    out = []
    if n == 1:
        out.append("single-page")
    elif answer != NOT_ANSWERABLE:
        out.append("cross-page")
    if answer == NOT_ANSWERABLE:
        out.append("unanswerable")
    return tuple(out)


def show_results(rows: Iterable[Mapping[str, Any]]) -> str:
    """The text the released `show_results` writes to `res_<model>.txt`, for benchmark-shaped rows
    in file order (`answer`, `pred`, `score`, `doc_type`, and `evidence_pages`/`evidence_sources`
    as literal strings or lists). Write it with UTF-8 and no newline translation.

    Lines, each ending in "\\n" (numbers printed by str(): `0.5`, `0.30000000000000004`, `0.0`):
      Overall Acc: {acc} | Question Number: {rows}
      Overall F1-score: {f1} | Question Number: {rows}
      -----------------------
      Single-page | Accuracy: {acc} | Question Number: {n}
      Cross-page | Accuracy: {acc} | Question Number: {n}
      Unanswerable | Accuracy: {acc} | Question Number: {n}
      -----------------------
      Evidence Sources: {source} | Accuracy: {acc} | Question Number: {n}    (first-seen order)
      -----------------------
      Document Type: {doc_type} | Accuracy: {acc} | Question Number: {n}     (first-seen order)
    "Question Number" counts every row of the group, evaluated or not; each Accuracy is the Acc of
    `acc_and_f1` over the group. Where the evaluator raises, the report reads on: a missing
    `answer` is answerable, a missing `doc_type` is grouped as None, a source or document type
    that cannot be a dict key is grouped as its str(), and evidence values as `evidence_value`."""
    rows = list(rows)
    pages = [evidence_value(r.get("evidence_pages")) for r in rows]
    n = len(rows)
    acc, f1 = acc_and_f1(rows)
    lines = [f"Overall Acc: {acc} | Question Number: {n}", f"Overall F1-score: {f1} | Question Number: {n}", SEPARATOR]
    single = [r for r, p in zip(rows, pages) if len(p) == 1]
    cross = [r for r, p in zip(rows, pages) if len(p) != 1 and r.get("answer") != NOT_ANSWERABLE]
    unanswerable = [r for r in rows if r.get("answer") == NOT_ANSWERABLE]
    for label, group in (("Single-page", single), ("Cross-page", cross), ("Unanswerable", unanswerable)):
        lines.append(f"{label} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    lines.append(SEPARATOR)
    by_source: dict[Any, list[Mapping[str, Any]]] = {}
    by_type: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        for source in evidence_value(r.get("evidence_sources")):
            by_source.setdefault(_key(source), []).append(r)
        by_type.setdefault(_key(r.get("doc_type")), []).append(r)
    for source, group in by_source.items():
        lines.append(f"Evidence Sources: {source} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    lines.append(SEPARATOR)
    for doc_type, group in by_type.items():
        lines.append(f"Document Type: {doc_type} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    return "\n".join(lines) + "\n"


def gold_rows(gold: Iterable[GoldQuestion], preds: Mapping[str, str], scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """Benchmark-shaped rows for `acc_and_f1` / `show_results` from our records, in gold order:
    every question (Question Number counts them all), `pred` and `score` where given."""
    out: list[dict[str, Any]] = []
    for q in gold:
        row: dict[str, Any] = {
            "doc_id": q.metadata.get("doc_id"), "doc_type": q.metadata.get("doc_type"), "question": q.question,
            "answer": q.metadata.get("answer", q.gold_answer), "answer_format": q.raw_format,
            "evidence_pages": q.metadata.get("evidence_pages", []), "evidence_sources": q.metadata.get("evidence_sources", []),
        }
        if q.qid in preds:
            row["pred"] = preds[q.qid]
        if q.qid in scores:
            row["score"] = scores[q.qid]
        out.append(row)
    return out


def rescored_rows(results: ResultsLoad, scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """The result file's rows in file order (what its own report covers), each joined row's
    `score` replaced by `scores[qid]` where given: `show_results` of these is the report of the
    recomputed scores."""
    out = []
    for row, qid in zip(results.rows, results.row_qids):
        copy = dict(row)
        if qid is not None and qid in scores:
            copy["score"] = scores[qid]
        out.append(copy)
    return out

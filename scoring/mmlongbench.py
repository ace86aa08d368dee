"""MMLongBench-Doc's two file kinds, `data/samples.json` and `results/res_<model>.json`, read into
our records (questions, predictions, the file's own scores). The rule that scores an answer is
scoring/mmlongbench_rule.py; the text report, scoring/mmlongbench_report.py."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import guard
from .mmlongbench_rule import FORMATS
from .model import DocRef, DocumentRecord, GoldQuestion, Prediction, ScoreRow, quick_state, to_str
from .problems import LoadResult, Problem, kind_of, short_value
from .reading import read_literal

__all__ = [
    "NOT_EVALUATED",
    "QID_PREFIX",
    "ResultExtras",
    "ResultsLoad",
    "evidence_value",
    "qid_for",
    "position_of",
    "run_name",
    "extract_pred",
    "load_samples",
    "load_results",
    "document_records",
]

QID_PREFIX = "mmlongbench_"
NOT_EVALUATED = "rows not evaluated yet"  # the problem kind of a result row without `pred` (skipped)

_CONTAINERS = (str, bytes, list, tuple, dict, set, frozenset)


def evidence_value(value: Any) -> Any:
    """An `evidence_pages` / `evidence_sources` value as the report reads it: a string is read as
    a Python literal (never executed); one that is not a literal, and a missing or null value,
    read as an empty list; a number or other scalar as a one-element list (the evaluator raises
    on all of these)."""
    if isinstance(value, str):
        ok, value = read_literal(value)
        if not ok:
            return []
    if value is None:
        return []
    return value if isinstance(value, _CONTAINERS) else [value]


# ----------------------------------------------------------------------------- files


def qid_for(position: int) -> str:
    """The question id of the sample at 0-based `position` in samples.json: mmlongbench_0007."""
    return f"{QID_PREFIX}{position:04d}"


def position_of(qid: str) -> int | None:
    """The samples.json position named by a question id of `qid_for`, or None."""
    if not qid.startswith(QID_PREFIX):
        return None
    tail = qid[len(QID_PREFIX):]
    return int(tail) if tail.isascii() and tail.isdigit() else None


def run_name(path: str | Path) -> str:
    """The run's name from its result file: `res_gpt-4o.json` -> `gpt-4o`."""
    name = Path(path).name
    if name.lower().endswith(".json"):
        name = name[:-5]
    return name[4:] if name.startswith("res_") else name


def extract_pred(extracted_res: Any) -> str | None:
    """The scored answer run_api.py cuts from the extractor's text: what follows the first
    "Extracted answer:" and precedes the first "Answer format:", stripped; None when the text has
    no "Extracted answer:" before its first "Answer format:" (run_api.py stops with IndexError)."""
    if not isinstance(extracted_res, str):
        return None
    head = extracted_res.split("Answer format:")[0]
    marker = head.find("Extracted answer:")
    if marker < 0:
        return None
    return head[marker + len("Extracted answer:"):].split("Extracted answer:")[0].strip()


def _read_list(path: Path, res: LoadResult[Any]) -> list[Any] | None:
    """The one JSON list a samples or results file holds, or None with the problem recorded."""
    name = str(path)
    res.files.append(name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        got = {FileNotFoundError: "no such file", IsADirectoryError: "a directory"}.get(type(exc), exc.strerror or str(exc))
        res.problems.append(Problem.error(name, None, None, "a readable file", got))
        res.unreadable.append(name)
        return None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        res.problems.append(Problem.error(name, None, None, "UTF-8 text", f"an invalid byte at offset {exc.start}"))
        res.unreadable.append(name)
        return None
    except (json.JSONDecodeError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nesting too deep"
        res.problems.append(Problem.error(name, line, None, "a JSON document", why))
        res.unreadable.append(name)
        return None
    if not isinstance(doc, list):
        res.problems.append(Problem.error(name, None, None, "a JSON list of samples", kind_of(doc)))
        res.unreadable.append(name)
        return None
    res.rows_read += len(doc)
    return doc


def _literal_field(row: dict, key: str, where: str, name: str, res: LoadResult[Any]) -> Any:
    """An evidence field: a string holding a Python literal (read with ast.literal_eval), or
    already a JSON list. A missing, non-literal or non-list value is a warning; the question stays."""
    if key not in row:
        res.problems.append(Problem.warning(name, None, where, "a Python literal list such as \"[5]\"", "no such field"))
        return []
    raw = row[key]
    value = raw
    if isinstance(raw, str):
        ok, value = read_literal(raw)
        if not ok:
            res.problems.append(Problem.warning(name, None, where, "a Python literal list such as \"[5]\"", kind_of(raw)))
            return []
    if not isinstance(value, list):
        res.problems.append(Problem.warning(name, None, where, "a list", kind_of(raw) + f" (read as {type(value).__name__})"))
    return value


def _pages(value: Any, raw: Any, where: str, name: str, res: LoadResult[Any]) -> tuple[int, ...]:
    items = value if isinstance(value, (list, tuple)) else [value] if isinstance(value, int) else []
    pages = [p for p in items if isinstance(p, int) and not isinstance(p, bool) and p >= 1]
    if len(pages) != len(items):
        res.problems.append(Problem.warning(name, None, where, "1-based page numbers", short_value(raw)))
    return tuple(pages)


def load_samples(path: str | Path) -> LoadResult[GoldQuestion]:
    """`_load_samples` where the file can be killed (scoring/guard.py): over the read limits, it is named
    and not read. Its size bounds what reading it takes (`bounded`): the file is one JSON document, and
    each Python literal in it is parsed only up to LITERAL_MAX_CHARS and LITERAL_MAX_DEPTH (`read_literal`)."""
    return guard.read(_load_samples, path, bounded=True, refused=_unread)


def _unread(problem: Problem) -> LoadResult[Any]:
    res: LoadResult[Any] = LoadResult(problems=[problem], unreadable=[problem.file])
    return res


def _load_samples(path: str | Path) -> LoadResult[GoldQuestion]:
    """`data/samples.json`: one JSON list of samples. The question id is `qid_for(position)`
    (the 0-based position in the list, counted over every element). Problems name the file,
    line None and the field as `[index].field`.

    A sample becomes a GoldQuestion with `answers = (text of answer,)`, `answer_format` as text
    (raw value kept), `split` "unknown", one DocRef whose `document_id` is the PDF file name
    (`doc_id`) and whose evidence pages are the 1-based pages of `evidence_pages` (the
    benchmark numbers pages from 1, as we do; a 0 or a non-integer is left out, with a warning),
    and metadata: `doc_id`, `doc_type`, `evidence_pages` and `evidence_sources` (the lists as
    read, unfiltered: the report counts them), `evidence_page_count`, `answer` (the gold value
    as read, for exact scoring), `position`.

    An element that is not an object, or has no `answer`, is skipped (error). A missing
    `question`, `doc_id`, `doc_type` or `answer_format` and a bad evidence literal are warnings
    and the question is kept (an absent format scores as Str)."""
    path = Path(path)
    name = str(path)
    res: LoadResult[GoldQuestion] = LoadResult()
    doc = _read_list(path, res)
    if doc is None:
        return res
    for k, row in enumerate(doc):
        where = f"[{k}]"
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, None, where, "a JSON object", kind_of(row), kind="samples that are not JSON objects"))
            continue
        if "answer" not in row:
            res.skipped += 1
            res.problems.append(Problem.error(name, None, f"{where}.answer", "the gold answer", "no such field"))
            continue
        for key in ("doc_id", "question", "doc_type"):
            if not isinstance(row.get(key), str):
                got = "no such field" if key not in row else kind_of(row[key])
                res.problems.append(Problem.warning(name, None, f"{where}.{key}", "a string", got))
        format_given = "answer_format" in row
        raw_format = row.get("answer_format", "Str")
        if not format_given:
            res.problems.append(Problem.warning(name, None, f"{where}.answer_format", "one of " + ", ".join(FORMATS),
                                                "no such field (scored as Str)"))
        elif raw_format not in FORMATS:
            res.problems.append(Problem.warning(name, None, f"{where}.answer_format", "one of " + ", ".join(FORMATS),
                                                kind_of(raw_format) + " (scored as List, as the evaluator does)"))
        pages_value = _literal_field(row, "evidence_pages", f"{where}.evidence_pages", name, res)
        sources_value = _literal_field(row, "evidence_sources", f"{where}.evidence_sources", name, res)
        doc_id = to_str(row.get("doc_id"))
        pages = _pages(pages_value, row.get("evidence_pages"), f"{where}.evidence_pages", name, res)
        metadata = {
            "doc_id": doc_id,
            "doc_type": row.get("doc_type"),
            "evidence_pages": pages_value,
            "evidence_sources": sources_value if isinstance(sources_value, list) else [sources_value],
            "evidence_page_count": len(evidence_value(pages_value)),
            "answer": row["answer"],
            "position": k,
        }
        res.items.append(GoldQuestion(
            qid=qid_for(k),
            question=to_str(row.get("question")),
            answers=(to_str(row["answer"]),),
            answer_format=to_str(raw_format) if format_given else "Str",
            verification_rule="",
            split="unknown",
            metadata=metadata,
            documents=(DocRef(document_id=doc_id, evidence_pages=pages),) if doc_id else (),
            file=name,
            line=None,
            raw_format=raw_format,
            format_given=format_given,
        ))
    return res


def document_records(gold: Iterable[GoldQuestion]) -> list[DocumentRecord]:
    """One DocumentRecord per PDF the questions name, in first-seen order: `file` is the PDF's
    file name inside the benchmark's `data/documents/`, `doc_type` the first question's."""
    seen: dict[str, DocumentRecord] = {}
    for q in gold:
        doc_id = to_str(q.metadata.get("doc_id"))
        if doc_id and doc_id not in seen:
            seen[doc_id] = DocumentRecord(document_id=doc_id, file=doc_id)
    return list(seen.values())


@quick_state
@dataclass(frozen=True, slots=True)
class ResultExtras:
    """What a result row holds beyond the scored `pred` (Prediction has no place for it)."""

    response: Any  # the model's raw answer
    extracted_res: Any  # the extractor's "Extracted answer: … Answer format: …"
    pred: Any  # `pred` as read (the Prediction holds its text form)
    index: int  # the row's 0-based position in the result file
    joined_by: str  # "position" or "doc_id+question"


@dataclass(slots=True)
class ResultsLoad(LoadResult[Prediction]):
    """A result file read against the gold: `items` are the Predictions (text = `pred`, in file
    order), `official` the file's `score` values (accuracy = score; token_f1 and anls are NaN: the
    file has none), `extras` the raw `response`/`extracted_res` by question id, `rows` every
    object row of the file in order and `row_qids` the question id each joined to (None if it
    did not)."""

    run: str = ""
    official: list[ScoreRow] = field(default_factory=list)
    extras: dict[str, ResultExtras] = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    row_qids: list[str | None] = field(default_factory=list)


def load_results(path: str | Path, gold: Sequence[GoldQuestion] | LoadResult[GoldQuestion]) -> ResultsLoad:
    """`_load_results` where the file can be killed (scoring/guard.py): over the read limits, it is named
    and not read (its size bounds what reading it takes, as `load_samples`'s does)."""
    return guard.read(_load_results, path, gold, bounded=True, refused=lambda problem: ResultsLoad(
        problems=[problem], unreadable=[problem.file], run=run_name(path)))


def _load_results(path: str | Path, gold: Sequence[GoldQuestion] | LoadResult[GoldQuestion]) -> ResultsLoad:
    """`results/res_<model>.json` joined to the questions of `load_samples`.

    A row is joined to the question at its own position when its `doc_id` and `question` equal
    that question's; otherwise (a reordered or filtered file) to the first question not yet
    joined with the same (`doc_id`, `question`) -- preferring one whose gold `answer` equals the
    row's, since samples.json repeats one pair. A row that joins nowhere, or to a question already
    joined, is an error and skipped. A row without `pred` (not evaluated yet: run_api.py writes
    the file after every sample) is skipped with a warning. A `score` that is not a number is an
    error (the prediction is still loaded); an `answer` other than the gold's is a warning."""
    path = Path(path)
    name = str(path)
    questions = list(gold.items if isinstance(gold, LoadResult) else gold)
    res = ResultsLoad(run=run_name(path))
    doc = _read_list(path, res)
    if doc is None:
        return res
    by_position: dict[int, GoldQuestion] = {}
    by_pair: dict[tuple[str, str], list[GoldQuestion]] = {}
    for question in questions:
        pos = position_of(question.qid)
        if pos is not None:
            by_position[pos] = question
        by_pair.setdefault((to_str(question.metadata.get("doc_id")), question.question), []).append(question)
    used: set[str] = set()
    moved = 0
    for k, row in enumerate(doc):
        where = f"[{k}]"
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, None, where, "a JSON object", kind_of(row), kind="rows that are not JSON objects"))
            continue
        res.rows.append(row)
        res.row_qids.append(None)
        pair = (to_str(row.get("doc_id")), to_str(row.get("question")))
        here = by_position.get(k)
        free = [c for c in by_pair.get(pair, []) if c.qid not in used]
        same = [c for c in free if c.metadata.get("answer", c.gold_answer) == row["answer"]] if "answer" in row else free
        # its own position when the answer agrees, else a question of that pair with the same answer,
        # else its own position, else the first question of that pair not yet joined
        q: GoldQuestion | None = None
        for group in (same, free):
            q = next((c for c in group if c is here), None) or (group[0] if group is same and group else None)
            if q is not None:
                break
        q = q or (free[0] if free else None)
        if q is None:
            res.skipped += 1
            taken = bool(by_pair.get(pair))
            res.problems.append(Problem.error(
                name, None, where,
                "a question not joined before" if taken else "a (doc_id, question) pair of samples.json",
                f"doc_id {short_value(pair[0])}, question {short_value(pair[1])}" + (" again" if taken else ""),
                kind="repeated rows" if taken else "rows not in samples.json"))
            continue
        joined_by = "position" if q is here else "doc_id+question"
        used.add(q.qid)
        res.row_qids[-1] = q.qid
        if joined_by != "position":
            moved += 1
        if "answer" in row and row["answer"] != q.metadata.get("answer", q.gold_answer):
            res.problems.append(Problem.warning(name, None, f"{where}.answer", f"the answer of {q.qid} in samples.json",
                                                kind_of(row["answer"]), kind="answers that differ from samples.json"))
        if "pred" not in row:
            res.skipped += 1
            res.problems.append(Problem.warning(name, None, f"{where}.pred", "the scored answer", "no such field (not evaluated yet)",
                                                skipped=True, kind=NOT_EVALUATED))
            continue
        text = to_str(row["pred"])
        res.items.append(Prediction(qid=q.qid, text=text, status="success", file=name, line=None))
        res.extras[q.qid] = ResultExtras(response=row.get("response"), extracted_res=row.get("extracted_res"),
                                         pred=row["pred"], index=k, joined_by=joined_by)
        if "score" in row:
            score = row["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
                res.problems.append(Problem.error(name, None, f"{where}.score", "a number in 0..1", kind_of(score),
                                                  skipped=False, kind="scores that are not numbers"))
            else:
                res.official.append(ScoreRow(qid=q.qid, system=res.run, accuracy=float(score), token_f1=math.nan,
                                             anls=math.nan, prediction=text, file=name, line=None))
    if moved:
        res.problems.append(Problem.warning(name, None, None, "rows in samples.json order",
                                            f"{moved} rows joined by (doc_id, question) instead", kind="rows out of order"))
    return res

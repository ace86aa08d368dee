"""A harness source as the benchmark records the rest of the library reads (scoring.model): its
questions as GoldQuestion (the gold built from the files themselves), a run's answers as
Prediction, the harness's own per-question scores as official ScoreRow, and one line saying where
a run comes from (harness, version, model arguments, date). Used by the app to open a harness
folder like a benchmark folder; nothing here reads a file."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..model import DocRef, GoldQuestion, Prediction, ScoreRow
from ..problems import LoadResult, Problem
from .base import ANLS_FAMILY, MMLONGBENCH_FAMILY, HarnessQuestion, HarnessRun, SourceLoad

__all__ = ["gold_question", "gold_of", "predictions", "official_rows", "origin", "run_files", "run_digest", "tasks",
           "default_task", "task_label", "app_names"]

_MM_FORMATS = ("Int", "Float", "Str", "List", "None")


def _pages(q: HarnessQuestion) -> Any:
    return q.metadata.get("evidence_pages", list(q.evidence_pages))


def gold_question(q: HarnessQuestion, family: str, file: str) -> GoldQuestion:
    """One harness question as a GoldQuestion. DocVQA-style tasks keep every acceptable answer and
    score by ANLS (verification rule `anls`); MMLongBench-Doc's keep its answer format (inferred
    from the answer when the harness's line has none: `format_given` False)."""
    meta: dict[str, Any] = {k: v for k, v in q.metadata.items() if isinstance(v, (str, int, float, bool, list)) or v is None}
    meta.setdefault("harness_qid", q.qid)
    if family == ANLS_FAMILY:
        qtypes = q.metadata.get("question_types") or q.metadata.get("category") or ()
        if isinstance(qtypes, str):
            qtypes = (qtypes,)
        return GoldQuestion(
            qid=q.qid, question=q.question, answers=tuple(q.answers) or ("",), answer_format="Str",
            verification_rule="anls", split=q.metadata.get("data_split", q.metadata.get("split", "unknown")),
            metadata=meta, documents=(DocRef(document_id=q.document),) if q.document else (), file=file, line=None,
            question_types=tuple(str(t) for t in qtypes), image=q.document)
    fmt = q.answer_format if q.answer_format in _MM_FORMATS else (q.answer_format or "Str")
    inferred = bool(q.metadata.get("answer_format_inferred"))
    answer = q.answer_raw if q.answer_raw is not None and not (isinstance(q.answer_raw, float) and math.isnan(q.answer_raw)) \
        else (q.answers[0] if q.answers else "")
    meta["answer"] = answer if isinstance(answer, (str, int, float, list)) else str(answer)
    meta.setdefault("evidence_pages", list(q.evidence_pages))
    split = q.metadata.get("task_tag") if family != MMLONGBENCH_FAMILY else None
    return GoldQuestion(
        qid=q.qid, question=q.question, answers=(q.answers[0] if q.answers else "",), answer_format=fmt,
        verification_rule="", split=split if isinstance(split, str) and split else "unknown", metadata=meta,
        documents=(DocRef(document_id=q.document, evidence_pages=tuple(q.evidence_pages)),) if q.document else (),
        file=file, line=None, raw_format=fmt, format_given=not inferred)


def tasks(src: SourceLoad) -> dict[str, list[HarnessRun]]:
    """The benchmarks a source holds: task (lmms-eval) or dataset (VLMEvalKit) -> its runs, in file order."""
    out: dict[str, list[HarnessRun]] = {}
    for run in src.runs:
        out.setdefault(run.task, []).append(run)
    return out


def default_task(src: SourceLoad) -> str:
    """The task opened first: the one with the most runs (then the most questions, then by name)."""
    found = tasks(src)
    if not found:
        return ""
    return min(found, key=lambda t: (-len(found[t]), -len(src.gold.get(t, ())), t))


def task_label(src: SourceLoad, task: str) -> str:
    runs = tasks(src).get(task, [])
    harnesses = sorted({r.harness for r in runs})
    return (f"{task} ({', '.join(harnesses)}: {len(runs)} run{'s' if len(runs) != 1 else ''}, "
            f"{len(src.gold.get(task, ())):,} questions)")


def gold_of(src: SourceLoad, task: str) -> LoadResult[GoldQuestion]:
    """The gold of one task built from the harness's files (its first file names the rows)."""
    runs = tasks(src).get(task, [])
    family = runs[0].family if runs else ANLS_FAMILY
    file = runs[0].files[0] if runs and runs[0].files else task
    res: LoadResult[GoldQuestion] = LoadResult(files=[file])
    for q in src.gold.get(task, []):
        res.items.append(gold_question(q, family, file))
        res.rows_read += 1
    return res


def app_names(runs: Iterable[HarnessRun], taken: Iterable[str] = ()) -> list[str]:
    """A name per run for the leaderboard: the model; the eval date where one model has several runs,
    then the harness where two harnesses ran the same model at the same date."""
    runs = list(runs)
    used = set(taken)
    by_model: dict[str, int] = {}
    for r in runs:
        by_model[r.model or r.name] = by_model.get(r.model or r.name, 0) + 1
    out = []
    for r in runs:
        base = r.model or r.name
        name = f"{base} ({r.date})" if by_model[base] > 1 and r.date else base
        if name in used or name in out:
            name = f"{name} ({r.harness})"
        k, candidate = 2, name
        while candidate in used or candidate in out:
            candidate, k = f"{name} ({k})", k + 1
        out.append(candidate)
    return out


def predictions(run: HarnessRun, qids: Mapping[str, str] | None = None) -> LoadResult[Prediction]:
    """A run's answers (the text the harness scored), the first line of each question only (lmms-eval
    writes one per filter or repeat). `qids` maps the harness's question ids to the benchmark's (a
    joined run: rows not in it are left out, their questions were named when joining)."""
    res: LoadResult[Prediction] = LoadResult(files=list(run.files[:1]))
    seen: set[str] = set()
    for row in run.rows:
        if row.occurrence:  # another filter's (or repeat's) line of a question: the first is the run's answer
            continue
        res.rows_read += 1
        qid = row.qid if qids is None else qids.get(row.qid, "")
        if not qid or qid in seen:
            res.skipped += 1
            if qid in seen:
                res.problems.append(Problem.warning(row.file, row.line, None, "each question once",
                                                    f"{qid} again (the first line is used)", skipped=True,
                                                    kind="duplicate lines"))
            continue
        seen.add(qid)
        res.items.append(Prediction(qid=qid, text=row.prediction, status="success", file=row.file, line=row.line))
    return res


def official_rows(run: HarnessRun, system: str, qids: Mapping[str, str] | None = None) -> list[ScoreRow]:
    """The harness's own per-question scores (0-1) as official score rows (Accuracy only: the harness
    states no token F1 or ANLS beside its score, so those stay NaN and are not compared)."""
    out: list[ScoreRow] = []
    seen: set[str] = set()
    for row in run.rows:
        qid = row.qid if qids is None else qids.get(row.qid, "")
        if not qid or row.occurrence or qid in seen or row.official is None:
            continue
        seen.add(qid)
        out.append(ScoreRow(qid=qid, system=system, accuracy=float(row.official), token_f1=math.nan, anls=math.nan,
                            prediction=row.prediction, status="success", file=row.file, line=row.line))
    return out


def origin(run: HarnessRun) -> str:
    """Where a run comes from, in one line: harness and version, task, model arguments, date."""
    parts = [f"{run.harness}{' ' + run.version if run.version else ''}", f"task {run.task}"]
    if run.model_args:
        parts.append(f"model args {run.model_args}")
    elif run.model:
        parts.append(f"model {run.model}")
    if run.date:
        parts.append(f"date {run.date}")
    if run.older:
        parts.append("an older eval id")
    return " · ".join(parts)


def run_files(run: HarnessRun, root: Path) -> list[Path]:
    """A run's files as paths (the names in `files` are relative to the folder given, or absolute)."""
    return [root / f for f in run.files]


def run_digest(run: HarnessRun, root: Path) -> str:
    """A sha256 naming a run's content: its files' bytes, with its task and model (one file of
    VLMEvalKit or lmms-eval may hold several runs' parts; the name keeps them apart)."""
    h = hashlib.sha256(f"{run.harness}\0{run.task}\0{run.model}\0{run.date}\0".encode())
    for p in run_files(run, root):
        try:
            with open(p, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError:
            h.update(b"\0missing\0" + str(p).encode("utf-8", "replace"))
    return h.hexdigest()

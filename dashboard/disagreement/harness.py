"""Evaluator sensitivity across harnesses: a harness run's own per-question scores (lmms-eval's metric
on each line, VLMEvalKit's per-row score) against the benchmark's own evaluator applied to the same
answers (`docvqa` for DocVQA, `mmlongbench-doc` for MMLongBench-Doc): the questions that change, in
which direction, per slice, with the reason in words (scoring.harness.why), and how the ranks of the
harness runs move. No streamlit here."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pandas as pd

from dashboard.data.workspace import HarnessEntry
from dashboard.disagreement.frames import slice_labels
from scoring.harness import SLICE_FIELDS, Rescored, first_rows, question_labels, rescore

CHANGE_COLUMNS = ["question_id", "harness id", "slice", "harness score", "evaluator score", "direction", "reason",
                  "prediction", "gold", "where"]
SLICE_COLUMNS = ["slice", "questions", "changed", "up", "down", "unchanged"]
RANK_COLUMNS = ["Run", "Harness", "Questions", "Harness score (%)", "Evaluator score (%)", "Δ (points)", "Rank by harness",
                "Rank by evaluator", "Rank change"]

_CACHE: dict[tuple[str, str, str], Rescored] = {}
_LOCK = threading.Lock()
_CACHE_SIZE = 64


def compared(entries: Sequence[HarnessEntry]) -> list[HarnessEntry]:
    """The harness runs there is a benchmark evaluator to compare with (LongDocURL has none here)."""
    return [e for e in entries if e.benchmark_profile and e.run.rows]


def rescored(entry: HarnessEntry, digest: str = "") -> Rescored:
    """The run's answers under the benchmark's own evaluator, beside the harness's own scores (memoised
    per run content and profile)."""
    key = (digest or f"run@{id(entry.run)}", entry.name, entry.benchmark_profile)
    with _LOCK:
        got = _CACHE.get(key)
    if got is None:
        got = rescore(entry.run, entry.questions, entry.benchmark_profile)
        with _LOCK:
            while len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = got
    return got


def _first_rows(r: Rescored) -> list:
    """One row per question: the first filter's (lmms-eval may write one line per filter)."""
    return first_rows(r.rows)


def _question_ids(entry: HarnessEntry, qid: str) -> str:
    """The workspace's question id of a harness row ("" when it was not joined)."""
    return entry.qids.get(qid, "") if entry.qids is not None else qid


def labels(entry: HarnessEntry, r: Rescored, questions: pd.DataFrame | None, field_name: str) -> dict[str, list[str]]:
    """Harness question id -> its labels in a breakdown field: the workspace's question frame's (the
    labels every other page shows; a joined run: the benchmark's), else the harness's own files'."""
    known: dict[str, list[str]] = {}
    if questions is not None and len(questions) and field_name in questions.columns:
        frame = slice_labels(questions, field_name)
        for qid, label in zip(frame["question_id"].astype(str), frame["label"].astype(str)):
            known.setdefault(qid, []).append(label)
    out: dict[str, list[str]] = {}
    for x in _first_rows(r):
        got = known.get(_question_ids(entry, x.qid))
        if got is None:
            q = entry.questions.get(x.qid)
            got = question_labels(entry.run, q, field_name) if q is not None else ["unknown"]
        out[x.qid] = list(dict.fromkeys(got))
    return out


def slice_fields(entry: HarnessEntry, r: Rescored, questions: pd.DataFrame | None) -> list[str]:
    """The breakdown fields that split this run's scored questions: two labels or more (a field with
    one value is no slice), in the order the pages offer them."""
    both = {x.qid for x in _first_rows(r) if x.official is not None and x.score is not None}
    out = []
    for f in SLICE_FIELDS:
        seen = {label for qid, ls in labels(entry, r, questions, f).items() if qid in both for label in ls}
        if len(seen) >= 2:
            out.append(f)
    return out


def headline(r: Rescored) -> dict[str, int]:
    """Questions with both scores, and how many the evaluator scores differently: up, down."""
    pairs = [(x.official, x.score) for x in _first_rows(r) if x.official is not None and x.score is not None]
    return {"count": len(pairs), "changed": sum(1 for o, s in pairs if s != o), "up": sum(1 for o, s in pairs if s > o),
            "down": sum(1 for o, s in pairs if s < o)}


def changes(entry: HarnessEntry, r: Rescored, questions: pd.DataFrame | None = None, field_name: str = "") -> pd.DataFrame:
    """Each question whose score changes: both scores, the direction and the reason in words. `slice`:
    its labels in `field_name` (none given: the answer format, MMLongBench-Doc, or the task)."""
    named = labels(entry, r, questions, field_name) if field_name else {}
    rows = []
    for x in _first_rows(r):
        if x.official is None or x.score is None or x.score == x.official:
            continue
        rows.append({"question_id": _question_ids(entry, x.qid), "harness id": x.qid,
                     "slice": ", ".join(named[x.qid]) if field_name else (x.slice or "unknown"),
                     "harness score": float(x.official), "evaluator score": float(x.score),
                     "direction": "up" if x.score > x.official else "down", "reason": x.reason or x.note,
                     "prediction": x.prediction, "gold": x.gold,
                     "where": f"{x.file}:{x.line}" if x.line is not None else x.file})
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


def slices(entry: HarnessEntry, r: Rescored, questions: pd.DataFrame | None, field_name: str) -> pd.DataFrame:
    """Per label of a breakdown field: the questions with both scores (the first line of each), how many
    change, up, down and unchanged (a question with several evidence sources counts under each)."""
    named = labels(entry, r, questions, field_name)
    counts: dict[str, dict[str, int]] = {}
    for x in _first_rows(r):
        if x.official is None or x.score is None:
            continue
        way = "up" if x.score > x.official else "down" if x.score < x.official else "unchanged"
        for label in named[x.qid]:
            c = counts.setdefault(label, {"questions": 0, "changed": 0, "up": 0, "down": 0, "unchanged": 0})
            c["questions"] += 1
            c[way] += 1
            c["changed"] += way != "unchanged"
    rows = [{"slice": k, **counts[k]} for k in sorted(counts)]
    return pd.DataFrame(rows, columns=SLICE_COLUMNS)


def ranks(pairs: Sequence[tuple[HarnessEntry, Rescored]], others: Sequence[tuple[str, int, float]] = ()) -> pd.DataFrame:
    """The harness runs ranked by the harness's own mean per-question score and by the benchmark's
    evaluator's, over the questions each run has both for; the rank change (+1 = one place up).
    `others`: the leaderboard's other runs (name, questions, Accuracy 0-1 under the benchmark's own
    evaluator: the same in both rankings), among which the harness runs move."""
    rows = [{"Run": name, "Harness": "(the benchmark's files)", "Questions": count, "Harness score (%)": 100 * acc,
             "Evaluator score (%)": 100 * acc, "Δ (points)": 0.0} for name, count, acc in others]
    for entry, r in pairs:
        both = [(x.official, x.score) for x in _first_rows(r) if x.official is not None and x.score is not None]
        if not both:
            continue
        own = 100 * sum(o for o, _ in both) / len(both)
        ev = 100 * sum(s for _, s in both) / len(both)
        rows.append({"Run": entry.name, "Harness": entry.run.harness, "Questions": len(both), "Harness score (%)": own,
                     "Evaluator score (%)": ev, "Δ (points)": ev - own})
    frame = pd.DataFrame(rows, columns=RANK_COLUMNS[:6])
    if frame.empty:
        return pd.DataFrame(columns=RANK_COLUMNS)
    frame["Rank by harness"] = _rank(frame, "Harness score (%)")
    frame["Rank by evaluator"] = _rank(frame, "Evaluator score (%)")
    frame["Rank change"] = frame["Rank by harness"] - frame["Rank by evaluator"]
    return frame.sort_values(["Rank by evaluator", "Run"], kind="stable").reset_index(drop=True)


def _rank(frame: pd.DataFrame, column: str) -> list[int]:
    order = sorted(range(len(frame)), key=lambda i: (-round(float(frame[column].iloc[i]), 9), str(frame["Run"].iloc[i])))
    out = [0] * len(frame)
    for place, i in enumerate(order, start=1):
        out[i] = place
    return out

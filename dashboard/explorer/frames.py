"""The question explorer's frames: filters, search, the grouped per-run table. No streamlit here."""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from dashboard.core.analysis import META_GROUP, QUESTION_GROUP, run_column, top_runs
from dashboard.core.links import View, value_label
from scoring.registry import METRIC_SHORT_LABELS, METRICS

DEFAULT_RUNS = 4  # runs the explorer and the Evidence page open on when the link names none


def default_runs(analysis, metric: str = "accuracy", n: int = DEFAULT_RUNS) -> list[str]:
    """The runs a page opens on when the link names none: the n best on the leaderboard by `metric`
    (of fifty runs, the first four files say nothing), those with answers to read first (a run of
    loaded scores has none), in leaderboard order. `analysis`: a dashboard.core.analysis.Analysis."""
    board = analysis.leaderboard()
    answered = board[board["Run"].isin([r.name for r in analysis.runs if r.recomputed])]
    return top_runs(answered if len(answered) else board, metric or "accuracy", n)


def _matches(series: pd.Series, wanted: list[str]) -> pd.Series:
    if series.name in ("evidence_source", "page_category"):  # tuples of labels (analysis.MULTI_LABEL): any of them
        return series.map(lambda values: any(v in wanted for v in values))
    return series.astype(str).isin(wanted)


def filter_questions(questions: pd.DataFrame, scores: pd.DataFrame, view: View) -> pd.DataFrame:
    """The questions that pass every filter of the view. Score ranges and statuses are checked
    against the chosen runs: with `view.match == "every"` a question passes the ranges when every
    chosen run's scores are inside them, with "any" when at least one chosen run's scores are all
    inside them; a status filter passes when any chosen run has one of the statuses."""
    keep = pd.Series(True, index=questions.index)
    for name, wanted in view.filters.items():
        if name in questions.columns and wanted:
            keep &= _matches(questions[name], wanted)
    mine = scores[scores["run"].isin(view.runs)]
    if view.ranges:
        inside = pd.Series(True, index=mine.index)
        for metric, (lo, hi) in view.ranges.items():
            pct = mine[metric] * 100
            inside &= (pct >= lo - 1e-9) & (pct <= hi + 1e-9)
        if view.match == "any":
            keep &= questions.index.isin(set(mine[inside]["question_id"]))
        else:
            keep &= ~questions.index.isin(set(mine[~inside]["question_id"]))
    if view.status:
        keep &= questions.index.isin(set(mine[mine["status"].isin(view.status)]["question_id"]))
    if view.search:
        keep &= _search(questions, mine, view.search)
    return questions[keep]


SEARCHED = "question ids, questions, gold answers and the chosen runs' predictions"


def _search(questions: pd.DataFrame, scores: pd.DataFrame, text: str) -> pd.Series:
    """Case-insensitive substring search in SEARCHED."""
    needle = text.strip().casefold()
    if not needle:
        return pd.Series(True, index=questions.index)
    hit = pd.Series(False, index=questions.index)
    for col in ("question_id", "question", "gold"):
        hit |= questions[col].astype(str).str.casefold().str.contains(needle, regex=False)
    by_pred = scores[scores["prediction"].str.casefold().str.contains(needle, regex=False)]["question_id"]
    return hit | questions.index.isin(set(by_pred))


META_COLUMNS = ("answer_format", "reasoning_type", "evidence_source", "document", "pages")
SLICE_COLUMNS = ("answer_format", "reasoning_type", "evidence_source")  # left out when they tell no question apart


def explorer_frame(questions: pd.DataFrame, scores: pd.DataFrame, runs: list[str],
                   hidden: Collection[str] = ()) -> pd.DataFrame:
    """questions × runs: id, question and gold, then per run its three scores, prediction and status,
    then the metadata (META_COLUMNS but those in `hidden`: the fields that tell no question apart,
    `hidden_columns`). A run with no score for a question leaves its cells empty."""
    base = questions[["question_id", "question", "gold"]].copy()
    for run in runs:
        part = scores[scores["run"] == run].set_index("question_id")
        for col in (*METRICS, "prediction", "status"):
            base[run_column(run, col)] = part[col].reindex(base.index)
    meta = questions[[c for c in META_COLUMNS if c not in hidden]].copy()
    if "evidence_source" in meta.columns:
        meta["evidence_source"] = meta["evidence_source"].map(", ".join)
    return pd.concat([base, meta], axis=1).reset_index(drop=True)


def in_words(frame: pd.DataFrame) -> pd.DataFrame:
    """explorer_frame's `frame` as the table shows it: the metadata values whose value alone misleads in
    words (links.value_label: the answer format "None" is "None (unanswerable)"); the CSV keeps the values."""
    if "answer_format" not in frame.columns:
        return frame
    return frame.assign(answer_format=frame["answer_format"].map(lambda v: value_label("answer_format", v)))


def hidden_columns(analysis) -> frozenset[str]:
    """The metadata columns of the explorer left out: fields of SLICE_COLUMNS that take one value
    over the whole gold (every question `unknown`: MMLongBench-Doc's reasoning type).
    `analysis`: a dashboard.core.analysis.Analysis (its `informative`)."""
    return frozenset(c for c in SLICE_COLUMNS if not analysis.informative(c))


def filter_options(analysis, view: View) -> dict[str, list[str]]:
    """The explorer's filter fields and their values: every field that tells questions apart (two
    values or more, `Analysis.informative`; a one-valued field offers nothing to choose), and any
    field the view filters on already (a link's filter is shown, never dropped silently)."""
    return {name: values for name, values in analysis.field_options().items()
            if (len(values) >= 2 and analysis.informative(name)) or view.filters.get(name)}


HEADER_FIELDS = ("split", "domain", "reasoning_type")  # a question header's fields, in this order


def question_header(q, analysis, fields: tuple[str, ...] = HEADER_FIELDS, tail: str | None = None) -> str:
    """A question's header line: its id, then its `fields` (split, domain, reasoning type) -- each
    only when the field tells questions apart (`Analysis.informative`), so MMLongBench-Doc's never
    reads "unknown · unknown" -- then `tail` (default: its documents). `q`: a scoring.model.GoldQuestion.
    Plain text (the caller escapes it)."""
    parts = [q.qid]
    for name in fields:
        if analysis.informative(name):
            parts.append(q.labels("split")[0] if name == "split" else q.meta(name))
    parts.append(f"documents {', '.join(q.document_ids) or 'none'}" if tail is None else tail)
    return " · ".join(parts)


SHORT = METRIC_SHORT_LABELS | {"prediction": "Prediction", "status": "Status"}


# A run's evidence columns (dashboard.evidence.grounding.explorer_columns named with run_column(run, label)): short labels
EVIDENCE_SHORT = {"Page precision": "Pages P", "Page recall": "Pages R", "Grounding": "Ground.", "Answer location": "Location"}


# Under the group header "Question" (QUESTION_GROUP): its id, its text and the gold answer -- no
# header cell repeats its group's name.
HEADERS = {"question_id": "Id", "question": "Text", "gold": "Gold", "answer_format": "Format",
           "reasoning_type": "Reasoning type", "evidence_source": "Evidence sources", "document": "Document",
           "pages": "Evidence pages"}


def grouped(frame: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """The explorer table with two header rows: each run's columns grouped under its name with short
    labels (Acc, F1, ANLS, Prediction, Status); the question's columns under "Question", the rest
    under "Metadata". Values are untouched; `flat_column` gives back explorer_frame's names."""
    owner = {run_column(run, col): (run, SHORT[col]) for run in runs for col in SHORT}
    owner |= {run_column(run, col): (run, EVIDENCE_SHORT[col]) for run in runs for col in EVIDENCE_SHORT}
    tuples = []
    for col in frame.columns:
        if col in owner:
            tuples.append(owner[col])
        else:
            group = QUESTION_GROUP if col in ("question_id", "question", "gold") else META_GROUP
            tuples.append((group, HEADERS.get(col, col)))
    out = frame.copy()
    out.columns = pd.MultiIndex.from_tuples(tuples)
    return out


def flat_column(header: tuple[str, str]) -> str:
    """The explorer_frame name of a `grouped` header."""
    group, label = header
    if group in (QUESTION_GROUP, META_GROUP):
        return next((k for k, v in HEADERS.items() if v == label), label)
    return run_column(group, next(k for k, v in (SHORT | EVIDENCE_SHORT).items() if v == label))


def with_run_columns(frame: pd.DataFrame, extra: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """explorer_frame's `frame` with `extra` (indexed by question id, columns named run_column(run, x))
    joined on, each run's extra columns right after its own (after its Status), so that `grouped`
    keeps a run's columns under one header."""
    if extra.empty and not len(extra.columns):
        return frame
    joined = frame.join(extra, on="question_id")
    order: list[str] = []
    for col in frame.columns:
        order.append(col)
        for run in runs:
            if col == run_column(run, "status"):
                mine = {run_column(run, label) for label in EVIDENCE_SHORT}
                order += [c for c in extra.columns if c in mine and c not in order]
    order += [c for c in joined.columns if c not in order]
    return joined[order]



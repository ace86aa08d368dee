"""The Weak slices page's frames (dashboard/views/weak.py): the finder's inputs read from the analysis,
and its answer as a ranked table with links into the question explorer. No streamlit here; the
search itself is scoring.slices (documents as the unit, false-discovery control, folding).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard.annotations.db import SavedSlice
from dashboard.core.analysis import MULTI_LABEL
from dashboard.core.links import META, View, page_url, with_source
from dashboard.weak.saved import SAVED_FIELD, TAG_FIELD, column_of
from scoring.slices import SliceSearch, find_weak_slices
from scoring.stats import Clusters, document_clusters

# the question frame's breakdown columns, by the product's field names (links.FIELDS, analysis.question_frame)
# and, when the page added them (dashboard.weak.saved.with_fields), the saved slices and the triage notes' tags
FIELD_COLUMNS = ("split", "reasoning_type", "evidence_source", "answer_format", "domain", "difficulty", "doc_type",
                 "length", "position", "page_category", SAVED_FIELD, TAG_FIELD)
MAX_META_VALUES = 20  # another gold metadata key is a field only with 2..20 distinct values (not ids, not free text)
EXPLORER = "questions"  # the explorer page's URL path (views/questions.py)
INTERVAL = "Gap, 95% CI by document (pp)"
TABLE_COLUMNS = ["Rank", "Conditions", "Questions", "Documents", "Gap (pp)", INTERVAL,
                 "Excess failures", "p (one-sided)", "q", "Explains", "Open in explorer"]


@dataclass(frozen=True)
class Settings:
    """The finder's settings the page offers (defaults as the command line's)."""

    fdr: float = 0.05
    method: str = "bh"
    min_questions: int = 0  # 0: max(30, 0.5 % of the questions)
    min_documents: int = 20


@dataclass(frozen=True)
class Inputs:
    """One run's per-question outcome, the questions' fields and their document clusters."""

    run: str
    metric: str
    outcome: np.ndarray  # the run's score, or (pair mode) the run's score minus the baseline's
    fields: dict[str, list]
    clusters: Clusters
    question_ids: list[str]
    baseline: str = ""  # pair mode: the run compared against ("" for one run against the rest of itself)


def _scored(scores: pd.DataFrame, run: str, metric: str) -> pd.DataFrame:
    return scores.loc[scores["run"] == run, ["question_id", metric]].dropna().drop_duplicates("question_id")


def inputs(questions: pd.DataFrame, scores: pd.DataFrame, gold: Mapping[str, Any], run: str, metric: str,
           baseline: str = "") -> Inputs:
    """The finder's inputs for `run`: its scored questions (in the question frame's order), the
    breakdown fields of FIELD_COLUMNS present there (multi-valued ones as tuples), the other metadata
    keys with 2..MAX_META_VALUES values, and each question's cluster: the first document its gold
    names (scoring.stats.document_clusters). With a `baseline` (pair mode), the questions both runs
    were scored on, and the outcome is the run's score minus the baseline's."""
    mine = _scored(scores, run, metric)
    if baseline:
        mine = mine.merge(_scored(scores, baseline, metric), on="question_id", suffixes=("", "_base"))
        mine[metric] = mine[metric] - mine[metric + "_base"]
    mine = mine[mine["question_id"].isin(questions.index)]
    order = questions.index.get_indexer(mine["question_id"])
    mine = mine.iloc[np.argsort(order, kind="stable")]
    ids = mine["question_id"].astype(str).tolist()
    q = questions.loc[ids]
    fields: dict[str, list] = {}
    for col in FIELD_COLUMNS:
        if col in q.columns:
            values = q[col].tolist()
            fields[col] = [tuple(v) if isinstance(v, (list, tuple)) else v for v in values] if col in MULTI_LABEL else values
    for col in q.columns:
        if col.startswith(META) and 2 <= q[col].nunique(dropna=True) <= MAX_META_VALUES:
            fields[col] = [None if v is None or v == "" else str(v) for v in q[col].tolist()]
    docs = [gold[i].document_ids if i in gold else [] for i in ids]
    return Inputs(run, metric, mine[metric].to_numpy(dtype=float), fields, document_clusters(docs), ids, baseline)


def scores_key(scores: pd.DataFrame, questions: pd.DataFrame, run: str, metric: str, baseline: str = "") -> tuple[int, int]:
    """A cache key part for one run's (and the baseline's) scores of `metric` and the questions'
    fields (content hashes)."""
    part = scores.loc[scores["run"].isin([run, baseline] if baseline else [run]), ["run", "question_id", metric]]
    cols = [c for c in questions.columns if c in FIELD_COLUMNS or c.startswith(META)] + (
        ["document"] if "document" in questions.columns else [])
    fields = questions[cols].astype(str) if cols else questions.iloc[:, :0]
    return (int(pd.util.hash_pandas_object(part, index=False).sum()) if len(part) else 0,
            int(pd.util.hash_pandas_object(fields, index=True).sum()) if len(fields) else 0)


def search(data: Inputs, settings: Settings, progress: Callable[[float, str], object] | None = None) -> SliceSearch:
    """scoring.slices.find_weak_slices on the inputs (pair mode when they have a baseline: the outcome
    is already the paired difference, as find_weak_pair_slices makes it)."""
    return find_weak_slices(data.outcome, data.fields, data.clusters, fdr=settings.fdr, method=settings.method,
                            min_questions=settings.min_questions or None, min_documents=settings.min_documents,
                            progress=progress, mode="pair" if data.baseline else "run")


def explorer_view(run: str, conditions: tuple[tuple[str, str], ...], baseline: str = "",
                  saved: Mapping[str, SavedSlice] | None = None) -> View:
    """The explorer's view of a slice's questions for this run (and the baseline, side by side): one
    filter per condition (a multi-valued field matches any value); a tag condition is the tag filter;
    a saved-slice condition brings that slice's filters (`saved`: name -> SavedSlice), intersected
    with the others on a shared field."""
    filters: dict[str, list[str]] = {}
    tags: list[str] = []

    def add(field_name: str, values: list[str]) -> None:
        if field_name in filters:
            filters[field_name] = [v for v in filters[field_name] if v in values]
        else:
            filters[field_name] = list(values)

    for f, v in conditions:
        if f == TAG_FIELD:
            tags.append(v)
        elif f == SAVED_FIELD and saved and v in saved:
            for name, values in saved[v].definition.items():
                if name == TAG_FIELD:
                    tags.extend(x for x in values if x not in tags)
                elif name != SAVED_FIELD:
                    add(column_of(name), list(values))
        else:
            add(f, [v])
    return View(runs=[run, baseline] if baseline else [run], filters=filters, tags=tags)


def explorer_link(run: str, conditions: tuple[tuple[str, str], ...], baseline: str = "",
                  saved: Mapping[str, SavedSlice] | None = None, source: View | None = None) -> str:
    """The explorer's URL (relative to the app) of `explorer_view`, showing what `source` (the page's
    view) shows: its benchmark folder, task and profile (links.with_source; it opens in a new tab)."""
    view = explorer_view(run, conditions, baseline, saved)
    return page_url(EXPLORER, view if source is None else with_source(view, source))


def _pp(x: float) -> str:
    return f"{x * 100:+.1f}"


def table(found: SliceSearch, run: str, baseline: str = "", saved: Mapping[str, SavedSlice] | None = None,
          source: View | None = None) -> pd.DataFrame:
    """The kept weak slices, ranked: conditions (as a list: chips), questions, documents, the gap to
    the rest in percentage points with its 95 % interval by document, excess failures, p, q, how many
    significant slices each explains, and its explorer link (showing what `source` shows)."""
    rows = [{"Rank": k, "Conditions": [f"{f}={v}" for f, v in s.conditions], "Questions": s.n, "Documents": s.documents,
             "Gap (pp)": s.gap * 100,
             INTERVAL: f"{_pp(s.gap)} [{_pp(s.ci_low)}, {_pp(s.ci_high)}]",
             "Excess failures": s.excess_failures, "p (one-sided)": s.p, "q": s.q, "Explains": len(s.explains),
             "Open in explorer": explorer_link(run, s.conditions, baseline, saved, source)} for k, s in enumerate(found.weak, 1)]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def folded_table(found: SliceSearch) -> pd.DataFrame:
    """The significant slices folded under a kept one: what explains each."""
    return pd.DataFrame([{"Slice": s.name, "Folded under": s.folded_under, "Questions": s.n, "Documents": s.documents,
                          "Gap (pp)": s.gap * 100, "q": s.q} for s in found.folded],
                        columns=["Slice", "Folded under", "Questions", "Documents", "Gap (pp)", "q"])


def settings_text(found: SliceSearch) -> str:
    """The thresholds and the multiplicity control in force, in words (no user text)."""
    how = "Benjamini–Hochberg" if found.method == "bh" else "Benjamini–Yekutieli"
    what = "the run's score" if found.mode == "run" else "the paired difference run − baseline"
    return (f"{found.tested:,} slices tested: conjunctions of 1–3 conditions over {len(found.fields)} fields, each with at "
            f"least {found.min_questions:,} questions and {found.min_documents:,} {found.unit}s; gap = slice − rest in "
            f"{what}, cluster-robust by {found.unit} ({found.questions:,} questions in {found.units:,} {found.unit}s); "
            f"{how} q < {found.fdr:g}.")

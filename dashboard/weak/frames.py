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

from dashboard.annotations.records import SavedSlice
from dashboard.core.escape import md_escape
from dashboard.core.links import META, View, page_url, with_source
from dashboard.weak.saved import SAVED_FIELD, TAG_FIELD, column_of
from scoring.registry import MIN_DOCUMENTS
from scoring.slice_fields import FieldSet, QuestionValues, describe, slice_fields
from scoring.slice_worker import search_bounded
from scoring.slices import Slice, SliceSearch
from scoring.stats import Clusters, document_clusters

# the question frame's columns the finder's fields are made of (a search's cache key hashes them): the
# breakdowns, and, when the page added them (dashboard.weak.saved.with_fields), the saved slices and the
# triage notes' tags; the fields themselves are listed by scoring.slice_fields (as on the command line)
FIELD_COLUMNS = ("split", "reasoning_type", "evidence_source", "answer_format", "domain", "difficulty", "doc_type",
                 "length", "position", "page_category", SAVED_FIELD, TAG_FIELD)
EXTRA_FIELDS = (SAVED_FIELD, TAG_FIELD)  # the page's fields beyond the gold's (the command line has no notes)
NAMED_FIELDS = (SAVED_FIELD,)  # slices named before looking: a saved slice keeps its unadjusted interval
EXPLORER = "questions"  # the explorer page's URL path (views/questions.py)
INTERVAL = "Gap (pp), interval adjusted for the search"
TABLE_COLUMNS = ["Rank", "Conditions", INTERVAL, "p (one-sided)", "q", "Questions", "Documents", "Gap (pp)",
                 "Excess failures", "Explains", "Open in explorer"]
INTERVAL_HELP = ("slice − rest of the run in percentage points (negative: the slice is worse), with its interval by "
                 "document adjusted for the search (false-coverage rate, Benjamini–Yekutieli): a slice found among "
                 "many gets a wider interval than one named in advance, and a slice found weak has its whole interval "
                 "below 0; “as named”: a saved slice's own interval at 95 %")


@dataclass(frozen=True)
class Settings:
    """The finder's settings the page offers (defaults as the command line's)."""

    fdr: float = 0.05
    method: str = "bh"
    min_questions: int = 0  # 0: max(30, 0.5 % of the questions)
    min_documents: int = MIN_DOCUMENTS


@dataclass(frozen=True)
class Inputs:
    """One run's per-question outcome, the questions' fields and their document clusters."""

    run: str
    metric: str
    outcome: np.ndarray  # the run's score, or (pair mode) the run's score minus the baseline's
    fields: FieldSet
    clusters: Clusters
    question_ids: list[str]
    baseline: str = ""  # pair mode: the run compared against ("" for one run against the rest of itself)


def _scored(scores: pd.DataFrame, run: str, metric: str) -> pd.DataFrame:
    return scores.loc[scores["run"] == run, ["question_id", metric]].dropna().drop_duplicates("question_id")


@dataclass(frozen=True)
class Scope:
    """The questions the finder tests for a run (and baseline), without their fields: enough to say
    whether a search can test anything (`too_small`)."""

    outcome: np.ndarray
    clusters: Clusters
    question_ids: list[str]
    baseline: str = ""


def scope(questions: pd.DataFrame, scores: pd.DataFrame, gold: Mapping[str, Any], run: str, metric: str,
          baseline: str = "") -> Scope:
    """`run`'s scored questions that the question frame and the gold hold, in the frame's order, with the
    outcome (pair mode: the run's score minus the baseline's, on the questions both were scored on) and
    each question's cluster: the first document its gold names (scoring.stats.document_clusters)."""
    mine = _scored(scores, run, metric)
    if baseline:
        mine = mine.merge(_scored(scores, baseline, metric), on="question_id", suffixes=("", "_base"))
        mine[metric] = mine[metric] - mine[metric + "_base"]
    qids = mine["question_id"].to_numpy(object)
    at = questions.index.get_indexer(qids)  # -1: not in the frame (the frame's index is unique)
    keep = (at >= 0) & np.fromiter((q in gold for q in qids), dtype=bool, count=qids.size)
    order = np.argsort(at[keep], kind="stable")
    ids = [str(q) for q in qids[keep][order]]
    return Scope(mine[metric].to_numpy(dtype=float)[keep][order], document_clusters([gold[i].document_ids for i in ids]),
                 ids, baseline)


def inputs(questions: pd.DataFrame, scores: pd.DataFrame, gold: Mapping[str, Any], run: str, metric: str,
           baseline: str = "", page_counts: Mapping[str, int | None] | None = None,
           values: QuestionValues | None = None) -> Inputs:
    """The finder's inputs for `run`: its questions (`scope`), their fields as the command line lists
    them (`scoring.slice_fields.slice_fields` on their gold, with the documents' page counts) plus the
    saved slices and the tags when the frame has them."""
    s = scope(questions, scores, gold, run, metric, baseline)
    q = questions.loc[s.question_ids]
    extra = {col: [tuple(v) if isinstance(v, (list, tuple)) else v for v in q[col].tolist()]
             for col in EXTRA_FIELDS if col in q.columns}
    # `values`: the whole gold's question_values on the same page counts (the analysis keeps them): no gold read again
    fields = values.fields(s.question_ids, extra) if values is not None else \
        slice_fields([gold[i] for i in s.question_ids], page_counts, extra)
    return Inputs(run, metric, s.outcome, fields, s.clusters, s.question_ids, baseline)


def too_small(data: Inputs | Scope, settings: Settings) -> str:
    """Why the finder cannot test a single slice here, before searching ('' when it can): each slice
    needs `min_documents` documents, and the run's questions come from fewer."""
    if data.clusters.unit == "document" and data.clusters.units < settings.min_documents:
        return (f"each slice needs {settings.min_documents} documents; this benchmark has {data.clusters.units} "
                f"(for {'the runs' if data.baseline else 'this run'}'s {len(data.question_ids):,} questions)")
    return ""


def scores_key(scores: pd.DataFrame, questions: pd.DataFrame, run: str, metric: str, baseline: str = "",
               fields: int | None = None) -> tuple[int, int]:
    """A cache key part for one run's (and the baseline's) scores of `metric` and the questions'
    fields (content hashes). `fields`: the questions' `fields_digest`, when the caller keeps it (it does
    not depend on the runs)."""
    part = scores.loc[scores["run"].isin([run, baseline] if baseline else [run]), ["run", "question_id", metric]]
    return (int(pd.util.hash_pandas_object(part, index=False).sum()) if len(part) else 0,
            fields_digest(questions) if fields is None else fields)


def fields_digest(questions: pd.DataFrame) -> int:
    """The content hash of the questions' fields the finder reads (`scores_key`'s second part)."""
    cols = [c for c in questions.columns if c in FIELD_COLUMNS or c.startswith(META)] + (
        ["document"] if "document" in questions.columns else [])
    fields = questions[cols].astype(str) if cols else questions.iloc[:, :0]
    return int(pd.util.hash_pandas_object(fields, index=True).sum()) if len(fields) else 0


def search(data: Inputs, settings: Settings, progress: Callable[[float, str], object] | None = None) -> SliceSearch:
    """scoring.slices.find_weak_slices on the inputs (pair mode when they have a baseline: the outcome
    is already the paired difference, as find_weak_pair_slices makes it), in the finder's worker
    process (scoring.slice_worker: a memory limit and a time budget; SearchFailed when it runs out).
    The saved slices are named before looking: theirs keep the unadjusted interval."""
    return search_bounded(data.outcome, data.fields, data.clusters, fdr=settings.fdr, method=settings.method,
                          min_questions=settings.min_questions or None, min_documents=settings.min_documents,
                          progress=progress, mode="pair" if data.baseline else "run", named=NAMED_FIELDS)


def members(data: Inputs, conditions: tuple[tuple[str, str], ...]) -> list[str]:
    """The question ids of `data` a slice holds (every condition met; a multi-valued field: any value)."""
    keep = np.ones(len(data.question_ids), dtype=bool)
    for f, v in conditions:
        column = data.fields.columns.get(f, [])
        keep &= np.fromiter((v in x if isinstance(x, tuple) else x == v for x in column), dtype=bool, count=len(column)) \
            if len(column) == keep.size else np.zeros(keep.size, dtype=bool)
    return [q for q, k in zip(data.question_ids, keep) if k]


def explorer_view(run: str, conditions: tuple[tuple[str, str], ...], baseline: str = "",
                  saved: Mapping[str, SavedSlice] | None = None, found: SliceSearch | None = None) -> View:
    """The explorer's view of a slice's questions for this run (and the baseline, side by side): one
    filter per condition (a multi-valued field matches any value; a numeric range, every value in it:
    `found.raw_values`); a tag condition is the tag filter; a saved-slice condition brings that
    slice's filters (`saved`: name -> SavedSlice), intersected with the others on a shared field."""
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
        elif found is not None:
            add(f, found.raw_values(f, v))
        else:
            add(f, [v])
    return View(runs=[run, baseline] if baseline else [run], filters=filters, tags=tags)


def explorer_link(run: str, conditions: tuple[tuple[str, str], ...], baseline: str = "",
                  saved: Mapping[str, SavedSlice] | None = None, found: SliceSearch | None = None,
                  source: View | None = None) -> str:
    """The explorer's URL (relative to the app) of `explorer_view`, showing what `source` (the page's
    view) shows: its benchmark folder, task and profile (links.with_source; it opens in a new tab)."""
    view = explorer_view(run, conditions, baseline, saved, found)
    return page_url(EXPLORER, view if source is None else with_source(view, source))


def pp(x: float) -> str:
    """Percentage points with their sign, the minus a real one: "−54.4", "+3.0"."""
    return f"{x * 100:+.1f}".replace("-", "−")


def interval_text(s: Slice) -> str:
    """"−54.4 [−63.9, −44.9]": the gap and its interval (adjusted for the search; "as named" when not)."""
    return f"{pp(s.gap)} [{pp(s.ci_low)}, {pp(s.ci_high)}]" + ("" if s.adjusted else " as named")


def table(found: SliceSearch, run: str, baseline: str = "", saved: Mapping[str, SavedSlice] | None = None,
          source: View | None = None) -> pd.DataFrame:
    """The kept weak slices, ranked: conditions in words (a list: chips), the gap to the rest in
    percentage points (negative: worse) with its interval adjusted for the search, p, q, questions,
    documents, excess failures, how many significant slices each explains, and its explorer link
    (showing what `source`, the page's view, shows)."""
    rows = [{"Rank": k, "Conditions": [describe_condition(f, v) for f, v in s.conditions], INTERVAL: interval_text(s),
             "p (one-sided)": max(s.p, P_FLOOR), "q": max(s.q, P_FLOOR), "Questions": s.n, "Documents": s.documents, "Gap (pp)": s.gap * 100,
             "Excess failures": s.excess_failures, "Explains": len(s.explains),
             "Open in explorer": explorer_link(run, s.conditions, baseline, saved, found, source)} for k, s in enumerate(found.weak, 1)]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def describe_condition(field_name: str, value: str) -> str:
    """One condition in words: "Answer format: Int"."""
    return describe(((field_name, value),))


def folded_table(found: SliceSearch) -> pd.DataFrame:
    """The significant slices folded under a kept one: what explains each (both in words)."""
    labels = {s.name: s.label for s in found.weak}
    return pd.DataFrame([{"Slice": s.label, "Folded under": labels.get(s.folded_under, s.folded_under), "Questions": s.n,
                          "Documents": s.documents, "Gap (pp)": s.gap * 100, "q": s.q} for s in found.folded],
                        columns=["Slice", "Folded under", "Questions", "Documents", "Gap (pp)", "q"])


def csv_bytes(found: SliceSearch) -> bytes:
    """The kept weak slices as the command line's --weak-slices CSV (scoring.gate: CSV_COLUMNS, numbers
    to 6 significant digits; `ci_low`/`ci_high` the intervals adjusted for the search), through the one
    CSV writer (scoring.writers: a text cell a spreadsheet would read as a formula gets a `'` in front;
    numbers stay numbers) -- the same bytes as the command line's file."""
    from scoring.gate import CSV_COLUMNS, slice_rows
    from scoring.writers import csv_string

    rows = ([row[k] for k in CSV_COLUMNS] for row in slice_rows(found))
    return csv_string(rows, CSV_COLUMNS, float_format=lambda v: format(v, ".6g")).encode("utf-8")


def settings_text(found: SliceSearch) -> str:
    """The thresholds, the multiplicity control and the intervals in force, in words (no user text)."""
    how = "Benjamini–Hochberg" if found.method == "bh" else "Benjamini–Yekutieli"
    what = "the run's score" if found.mode == "run" else "the paired difference run − baseline"
    out = (f"{found.tested:,} slices tested: conjunctions of 1–{found.max_conditions} conditions, each with at "
           f"least {found.min_questions:,} questions and {found.min_documents:,} {found.unit}s; gap = slice − rest in "
           f"{what} (negative: worse), cluster-robust by {found.unit} ({found.questions:,} questions in "
           f"{found.units:,} {found.unit}s); {how} q < {found.fdr:g}.")
    if found.significant:
        out += f" Intervals of the slices found: {found.interval_text()}."
    return out


def fields_text(found: SliceSearch) -> str:
    """Which fields were tested, which not and why, and the caps, in words (field names only)."""
    return found.fields_text()[0].upper() + found.fields_text()[1:] + "."


# ----------------------------------------------------------------------------- the one sentence

Parts = list[tuple[str, bool]]  # (text, bold): a sentence the pages write as Markdown and the report as HTML
SENTENCE_TOP = 3  # slices named in the sentence


def sentence(found: SliceSearch, run: str, metric_label: str, baseline: str = "", top: int = SENTENCE_TOP) -> Parts:
    """The finder's answer in one sentence -- the report's "Where X is weakest", Compare's "All runs"
    and the Presentation say exactly this: the first-ranked slice with its score against the rest's,
    the gap (negative: worse) and its interval adjusted for the search, q, then the next ones in rank
    order; or "not enough evidence" with how many slices were tested. Plain text parts; the caller
    escapes them."""
    unit = found.unit
    tested = f"{found.tested:,} slices tested over {len(found.fields) - len(found.untestable_fields)} fields"
    if not found.weak:
        if found.tested == 0:
            return [("Not enough evidence", True), (": no slice of ", False), (run, True),
                    (f" holds {found.min_questions:,} questions in {found.min_documents:,} {unit}s "
                     f"({found.questions:,} questions in {found.units:,} {unit}s), so none could be tested.", False)]
        where = (f" lost more to {baseline} than on its other questions" if baseline else
                 " is weaker than on its other questions")
        return [("Not enough evidence", True), (" of a slice where ", False), (run, True),
                (f"{where} beyond chance ({tested}, {found.units:,} {unit}s as the unit, "
                 f"false discoveries controlled at q < {found.fdr:g}).", False)]
    first = found.weak[0]
    head: Parts
    if baseline:
        head = [(run, True), (" lost most to ", False), (baseline, True), (" on ", False), (first.label, True),
                (f": a paired {metric_label} difference {pp(first.score_slice)} pp there against {pp(first.score_rest)} pp "
                 f"on the rest", False)]
    else:
        head = [(run, True), (" is weakest on ", False), (first.label, True),
                (f": {100 * first.score_slice:.1f} % {metric_label} on {first.n:,} questions in {first.documents:,} "
                 f"{unit}s against {100 * first.score_rest:.1f} % on the rest", False)]
    head.append((f", a gap of {pp(first.gap)} pp ({_interval_words(first)}; q {p_text(first.q)})", False))
    rest = found.weak[1:top]
    if rest:
        head.append(("; then ", False))
        for k, s in enumerate(rest):
            head += [(s.label, True), (f" ({pp(s.gap)} pp [{pp(s.ci_low)}, {pp(s.ci_high)}])", False)]
            if k < len(rest) - 1:
                head.append((", ", False))
    more = len(found.weak) - 1 - len(rest)
    head.append((f". {len(found.weak)} weak slice{'s' * (len(found.weak) != 1)} of {tested}"
                 + (f" ({more} more in the table)" if more > 0 else "") + ".", False))
    return head


def small_sentence(why: str) -> Parts:
    """The sentence when no slice can be tested here (`too_small`'s reason)."""
    return [("Not enough evidence", True), (f" for the finder: {why}.", False)]


def _interval_words(s: Slice) -> str:
    if s.adjusted:
        return f"{pp(s.ci_low)} to {pp(s.ci_high)}, interval by document adjusted for the search"
    return f"{pp(s.ci_low)} to {pp(s.ci_high)}, 95 % interval by document of a slice named in advance"


P_FLOOR = 1e-300  # a p or q that underflowed to 0 is shown as below this, never as 0


def p_text(p: float) -> str:
    """A p or q as every page and the report write it: two significant digits ("1.8e-16", "0.032"),
    "< 1e-300" for one that underflowed to 0."""
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.2g}"


def markdown(parts: Parts) -> str:
    """A sentence's parts as Markdown: every text escaped, the bold ones in **."""
    return "".join(f"**{md_escape(t)}**" if bold else md_escape(t) for t, bold in parts)

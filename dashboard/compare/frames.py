"""Run comparison, pure (pandas + scoring; no streamlit, no plotly): run A against baseline B over
the questions both are scored on -- Accuracy flips, the per-slice paired table (`deltas`: the one the
gate writes, `scoring.paired_slices`) with DOCUMENTS AS THE UNIT (`scoring.stats.paired_by_document`:
a document bootstrap and a sign-flip test of document sums; Benjamini-Hochberg q across slices),
McNemar's question-level p kept as a secondary column -- and, over many runs, each run's rank per
slice. Where a run is weak is the weak-slice finder's answer (dashboard/weak), not a table of this module.

Documents as the unit: questions come in documents, and a model that cannot read one document misses
its questions together, so every interval and p-value here resamples or tests documents. A question's
document is the `cluster` column of the question frame (its first document, or the question itself
when it names none; `scoring.stats.document_clusters` states the rule); only when no question names
a document is the unit the question, and the tables say so (`unit`). A slice with fewer than
MIN_DOCUMENTS (20) documents gets no interval ("too few documents to tell", `too_few`) but the
smallest gap it could detect (`<metric>_detectable`), and is not counted in the false-discovery family.

Inputs are the frames of `dashboard.core.analysis.Analysis`: `questions` (one row per gold question,
indexed by question id, metadata columns) and `scores` (long: run, question_id, accuracy, token_f1,
anls, status, prediction). Scores and deltas stay fractions (0..1); pages and charts show them in
percent / percentage points.

Slices of `deltas`: the finder's fields (`pair_fields`: `scoring.slice_fields.slice_fields`, as the
command line lists them) and the saved slices. Slices of the flip table (`flip_table`, `slices`): every
label of every field in `BREAKDOWNS` (reasoning type, evidence source, domain, difficulty, answer
format, document type, split) -- and of SAVED_FIELD, the saved slices (each saved slice's name a label,
a question in each it matches), when the pages add it -- that has at least two labels: a field with one
value (MMLongBench-Doc's reasoning type, domain, difficulty: all "unknown") is no slice. A question
with several evidence sources is in each of their slices, as in the overview's breakdowns. A missing
label is "unknown".

Right or wrong (the flips): the score frame's `right` column (the profile's one definition of a right
answer) where the frame has it; a frame without it (built by hand) reads Accuracy by
`scoring.profiles.Profile.right_mask` under MMLongBench-Doc's threshold (at least 0.5 is right). A
question a run has no prediction for (status "missing") is not scored by that run, so it is in no
pair: the comparison is over the questions both runs answered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scoring import model
from scoring.model import GoldQuestion
from scoring.paired_slices import OVERALL_RESAMPLES, SLICE_RESAMPLES, SliceRow, paired_table
from scoring.profiles import MMLONGBENCH_PROFILE, get_profile
from scoring.registry import (  # noqa: F401  (METRIC_LABELS, MIN_DOCUMENTS: the pages read them here)
    METRIC_LABELS,
    METRICS,
    MIN_DOCUMENTS,
    MISSING_STATUS,
)
from scoring.slice_fields import FieldSet, QuestionValues, slice_fields
from scoring.stats import (
    DOCUMENT,
    QUESTION,
    Clusters,
    mcnemar_exact,
    paired_by_document_rows,
    sign_flip_p,
)

# the saved slices (dashboard.weak.saved): a field of the question frame when the page added it
SAVED_FIELD = "saved_slice"
# the scoring report's breakdowns, in the order the comparison shows them
SHOWN_FIRST = ("reasoning_type", "evidence_source", "domain", "difficulty", "answer_format", "doc_type")
BREAKDOWNS = tuple(sorted(model.BREAKDOWNS, key=lambda f: SHOWN_FIRST.index(f) if f in SHOWN_FIRST else len(SHOWN_FIRST)))
OVERALL_FIELD, OVERALL_LABEL = "overall", "all questions"
BOTH_RIGHT, ONLY_A, ONLY_B, BOTH_WRONG = "both right", "only A", "only B", "both wrong"
FLIPS = (BOTH_RIGHT, ONLY_A, ONLY_B, BOTH_WRONG)
SMALL = 20  # slices with fewer paired questions get a warning
RESAMPLES = OVERALL_RESAMPLES
UNKNOWN = "unknown"
# a frame without the `right` column reads Accuracy by the most lenient profile's rule (MMLongBench-Doc's:
# at least 0.5), which every all-or-nothing profile's 0/1 Accuracy reads the same way
LENIENT = get_profile(MMLONGBENCH_PROFILE)


def is_right(accuracy: pd.Series | np.ndarray) -> np.ndarray:
    """Accuracy read as right or wrong where no `right` column says it: `Profile.right_mask` under
    MMLongBench-Doc's threshold (0.5 is right, 0.49 is not)."""
    return LENIENT.right_mask(accuracy)


def flip_of(acc_a: float, acc_b: float) -> str:
    """The flip of two Accuracies read by `is_right` (a frame without the `right` column)."""
    a, b = bool(is_right([acc_a])[0]), bool(is_right([acc_b])[0])
    return BOTH_RIGHT if a and b else ONLY_A if a else ONLY_B if b else BOTH_WRONG


# ----------------------------------------------------------------------------- pairing and slices


def paired(scores: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """One row per question both runs answered (in A's order), indexed by question id:
    `<metric>_a`, `<metric>_b`, `prediction_a/_b`, `status_a/_b`, `right_a/_b` and `flip`. A question
    a run has no prediction for (status "missing": the score frame keeps it, scored 0, for the
    leaderboard) is left out: it is not a question that run got wrong against the other."""
    cols = [*METRICS, "prediction", "status"]
    has_right = "right" in scores.columns

    def side(run: str) -> pd.DataFrame:
        part = scores.loc[scores["run"] == run, ["question_id", *cols, *(["right"] if has_right else [])]]
        part = part[part["status"].astype(str) != MISSING_STATUS].drop_duplicates("question_id").set_index("question_id")
        if not has_right:
            part = part.assign(right=is_right(part["accuracy"]))
        return part.astype({"right": bool})

    out = side(a).add_suffix("_a").join(side(b).add_suffix("_b"), how="inner")
    ra, rb = out["right_a"].to_numpy(bool), out["right_b"].to_numpy(bool)
    out["flip"] = np.select([ra & rb, ra & ~rb, ~ra & rb], [BOTH_RIGHT, ONLY_A, ONLY_B], BOTH_WRONG)
    return out.rename_axis("question_id")


def unit_of(questions: pd.DataFrame) -> str:
    """"document" when any question names a document, else "question" (`scoring.stats.document_clusters`)."""
    if "document" not in questions.columns or questions.empty:
        return QUESTION
    return DOCUMENT if bool((questions["document"].fillna("").astype(str) != "").any()) else QUESTION


def cluster_keys(questions: pd.DataFrame) -> pd.Series:
    """(question id -> its cluster): the question frame's `cluster` column (its first document, or
    the question id when it names none), else the first of its `document` ids, else the question."""
    ids = pd.Series(questions.index.astype(str), index=questions.index)
    if "cluster" in questions.columns:
        keys = questions["cluster"]
    elif "document" in questions.columns:
        keys = questions["document"].fillna("").astype(str).str.split(", ").str[0]
    else:
        return ids
    keys = keys.where(keys.notna() & (keys.astype(str) != ""), ids)
    # a question naming no document is its own cluster: keep it apart from any document of the same name
    named = questions["document"].fillna("").astype(str) != "" if "document" in questions.columns else pd.Series(True, index=ids.index)
    return ("d:" + keys.astype(str)).where(named, "q:" + ids)


def cluster_codes(questions: pd.DataFrame, index: pd.Index) -> tuple[np.ndarray, str]:
    """(integer cluster code per question of `index`, unit); a question not in the frame is its own."""
    keys = cluster_keys(questions).reindex(index)
    keys = keys.where(keys.notna(), "q:" + pd.Series(index.astype(str), index=index))
    codes, _ = pd.factorize(keys)
    return codes.astype(np.int64), unit_of(questions)


def clusters_at(codes: np.ndarray, unit: str, pos: np.ndarray) -> Clusters:
    """The clusters of the questions at positions `pos` (renumbered by scoring.stats)."""
    part = codes[pos]
    return Clusters(part, unit, int(np.unique(part).size))


def labels_of(questions: pd.DataFrame, field_name: str) -> pd.Series:
    """(question id -> label) for one field; evidence_source gives a question once per source, and
    SAVED_FIELD once per saved slice it is in (none: no label, not "unknown")."""
    if field_name not in questions.columns:
        return pd.Series(dtype=object)
    col = questions[field_name]
    if field_name == SAVED_FIELD:
        return col.map(lambda v: list(v) if isinstance(v, (list, tuple)) else []).explode().dropna().astype(str).astype(object)
    if field_name == "evidence_source":
        col = col.map(lambda v: list(v) if isinstance(v, (list, tuple)) and len(v) else [UNKNOWN]).explode()
    known = col.notna() & (col.astype(str) != "")
    return col.astype(str).where(known, UNKNOWN).astype(object)


def slices(questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS, *,
           overall: bool = True) -> Iterator[tuple[str, str, pd.Index]]:
    """(field, label, question ids): first every question, then each label of each field, sorted.
    A field with fewer than two labels (every question "unknown", or all one value) gives no slice;
    SAVED_FIELD gives each saved slice (one is a slice: its questions against the rest)."""
    if overall:
        yield OVERALL_FIELD, OVERALL_LABEL, questions.index
    for name in fields:
        lab = labels_of(questions, name)
        if lab.nunique() < (1 if name == SAVED_FIELD else 2):
            continue
        for label, ids in lab.groupby(lab.values, sort=True).groups.items():
            yield name, str(label), pd.Index(ids).unique()


def slice_ids(questions: pd.DataFrame, field_name: str, label: str) -> pd.Index:
    if field_name == OVERALL_FIELD:
        return questions.index
    lab = labels_of(questions, field_name)
    return pd.Index(lab.index[lab.values == label]).unique()


def parse_slice(text: str) -> tuple[str, str] | None:
    """`field:label` (the deep-link form) -> (field, label); None when unreadable."""
    name, sep, label = (text or "").partition(":")
    return (name, label) if sep and name and label else None


def slice_key(field_name: str, label: str) -> str:
    return f"{field_name}:{label}"


# ----------------------------------------------------------------------------- flips


FLIP_COLUMNS = ["field", "label", "questions", *FLIPS, "documents", "unit", "p", "p_mcnemar"]


def slice_positions(questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS) -> list[tuple[str, str, np.ndarray]]:
    """`slices(questions, fields)` with each slice's questions as positions in the frame (its index is unique)."""
    return [(name, label, questions.index.get_indexer(ids)) for name, label, ids in slices(questions, fields)]


def flip_table(pairs: pd.DataFrame, questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS,
               of_questions: Sequence[tuple[str, str, np.ndarray]] | None = None) -> pd.DataFrame:
    """Accuracy flips overall and per slice: field, label, questions, both right, only A, only B, both
    wrong; then the test of the flips with documents as the unit -- `documents` (units), `unit`, `p`
    (the sign-flip test of the per-document sums of right_A - right_B: exact) -- and McNemar's exact
    p on the discordant questions (`p_mcnemar`, question-level, secondary). `of_questions`:
    `slice_positions(questions, fields)`, when the caller keeps it (it does not depend on the pair)."""
    code = pd.Categorical(pairs["flip"], categories=FLIPS).codes  # by position: no index join per slice
    d = pairs["right_a"].to_numpy(float) - pairs["right_b"].to_numpy(float) if len(pairs) else np.zeros(0)
    clusters, unit = cluster_codes(questions, pairs.index)
    in_pairs = pairs.index.get_indexer(questions.index)  # each frame question's row in the pairs (-1: not paired)
    rows = []
    for name, label, at in slice_positions(questions, fields) if of_questions is None else of_questions:
        pos = in_pairs[at]
        pos = np.sort(pos[pos >= 0])
        part = code[pos]
        counts = np.bincount(part[part >= 0], minlength=len(FLIPS))
        sums = np.bincount(clusters[pos], weights=d[pos]) if pos.size else np.zeros(0)
        rows.append({"field": name, "label": label, "questions": int(part.size),
                     **{f: int(c) for f, c in zip(FLIPS, counts)},
                     "documents": int(np.unique(clusters[pos]).size), "unit": unit,
                     "p": sign_flip_p(sums)[0] if pos.size else np.nan,
                     "p_mcnemar": mcnemar_exact(int(counts[1]), int(counts[2])) if pos.size else np.nan})
    return pd.DataFrame(rows, columns=FLIP_COLUMNS)


def flip_questions(pairs: pd.DataFrame, questions: pd.DataFrame, field_name: str, label: str, flip: str | None) -> pd.DataFrame:
    """The paired rows of one flip-table cell (flip None: the whole slice)."""
    ids = pairs.index.intersection(slice_ids(questions, field_name, label))
    part = pairs.loc[ids]
    return part if not flip else part[part["flip"] == flip]


# ----------------------------------------------------------------------------- deltas


@dataclass(frozen=True)
class Settings:
    resamples: int = RESAMPLES  # the overall row and the runs' intervals
    seed: int = 0
    confidence: float = 0.95
    slice_resamples: int = SLICE_RESAMPLES  # each slice: the command line's (scoring.paired_slices)


def pair_fields(pairs: pd.DataFrame, questions: pd.DataFrame, gold: Mapping[str, GoldQuestion],
                page_counts: Mapping[str, int | None] | None = None, values: QuestionValues | None = None) -> FieldSet:
    """The fields of the paired questions, in the pairs' order: the finder's and the command line's
    (`scoring.slice_fields.slice_fields` on their gold, with the documents' declared page counts),
    and the saved slices (SAVED_FIELD) when the question frame has them. `values`: the whole gold's
    `question_values` on the same page counts (the analysis keeps them), so each pair reads no gold."""
    extra: dict[str, list[Any]] = {}
    if SAVED_FIELD in questions.columns:
        saved = questions[SAVED_FIELD].reindex(pairs.index)
        extra[SAVED_FIELD] = [tuple(v) if isinstance(v, (list, tuple)) else () for v in saved]
    if values is not None:
        return values.fields(pairs.index, extra)
    return slice_fields([gold[str(q)] for q in pairs.index], page_counts, extra)


def _delta_row(r: SliceRow, a: np.ndarray, b: np.ndarray, flips: np.ndarray) -> dict:
    """One row of `deltas` from the paired table's row `r` (`a`, `b`: the 3 x n metric arrays, `flips`
    the flip labels, of every paired question)."""
    pos = r.positions
    n = pos.size
    first = r.first()
    row: dict = {"field": r.field, "label": r.value, "questions": int(n), "documents": first.units, "unit": first.unit,
                 "too_few": first.too_few}
    for i, m in enumerate(METRICS):
        res = r.results[m]
        q = res.p if r.field == OVERALL_FIELD else r.q[m]  # the overall row: a family of one
        row |= {f"{m}_a": float(a[i, pos].mean()) if n else np.nan, f"{m}_b": float(b[i, pos].mean()) if n else np.nan,
                f"{m}_delta": res.delta, f"{m}_low": res.low, f"{m}_high": res.high, f"{m}_p": res.p,
                f"{m}_q": np.nan if q is None else q, f"{m}_detectable": res.detectable}
    only_a, only_b = int(np.count_nonzero(flips[pos] == ONLY_A)), int(np.count_nonzero(flips[pos] == ONLY_B))
    return row | {"p": row["accuracy_p"], "q": row["accuracy_q"], "only_a": only_a, "only_b": only_b,
                  "p_mcnemar": mcnemar_exact(only_a, only_b)}


DELTA_COLUMNS = ["field", "label", "questions", "documents", "unit", "small", "too_few",
                 *(f"{m}_{k}" for m in METRICS for k in ("a", "b", "delta", "low", "high", "p", "q", "detectable")),
                 "p", "q", "only_a", "only_b", "p_mcnemar"]


def _metric_rows(pairs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The 3 x n metric arrays of A and B over the paired questions."""
    return (pairs[[f"{m}_a" for m in METRICS]].to_numpy(float).T, pairs[[f"{m}_b" for m in METRICS]].to_numpy(float).T)


def overall_frame(row: SliceRow, pairs: pd.DataFrame) -> pd.DataFrame:
    """`deltas`' first row, from its all-questions row (the frame `headline` reads; `deltas(on_overall=)`
    hands the row over before the slices are done)."""
    a, b = _metric_rows(pairs)
    out = pd.DataFrame([_delta_row(row, a, b, pairs["flip"].to_numpy(object))])
    out["small"] = out["questions"] < SMALL
    return out[DELTA_COLUMNS]


def deltas(pairs: pd.DataFrame, questions: pd.DataFrame, fields: FieldSet | Mapping[str, Sequence[Any]] | None = None,
           settings: Settings = Settings(), on_overall: Callable[[SliceRow], object] | None = None) -> pd.DataFrame:
    """The per-slice paired table of the pair (`scoring.paired_slices.paired_table`, the one the gate
    writes to compare.json), as a frame: first all questions, then every slice of `fields` -- the
    fields of the paired questions in the pairs' order (`pair_fields`; a mapping field -> one value
    per pair; None: the overall row only) -- with documents as the unit (`questions` gives each
    question's document, `cluster_codes`):
    - questions paired, `documents` (how many units: documents, or questions when the gold names no
      document, `unit`), `small` (< 20 questions), `too_few` (< MIN_DOCUMENTS documents);
    - per metric the means of A and B, delta = A - B, its document-bootstrap interval (`_low`,
      `_high`; nan when too_few), its sign-flip p by document (`_p`) and the smallest gap detectable at
      80 % power (`_detectable`);
    - `<metric>_q`: that p adjusted by Benjamini-Hochberg across the slices with at least
      MIN_DOCUMENTS documents (nan for a slice with fewer: not tested, not in the family), the saved
      slices among themselves -- so the benchmark's slices have the command line's q; the overall row
      is a family of one (q = p);
    - `p`, `q`: the Accuracy ones (= `accuracy_p`, `accuracy_q`);
    - the Accuracy flips only A / only B and McNemar's exact p on them (`p_mcnemar`: question-level,
      what other tools report; secondary).

    `on_overall`: called with the all-questions row as soon as it is drawn, before the slices are done
    (`paired_table`'s; `overall_frame` makes it the table's first row)."""
    a, b = _metric_rows(pairs)
    flips = pairs["flip"].to_numpy(object)
    codes, unit = cluster_codes(questions, pairs.index)
    table = paired_table(a, b, Clusters(codes, unit, int(np.unique(codes).size)), fields or {}, metrics=METRICS,
                         own_family=(SAVED_FIELD,), resamples=settings.resamples, slice_resamples=settings.slice_resamples,
                         seed=settings.seed, confidence=settings.confidence, on_overall=on_overall)
    out = pd.DataFrame([_delta_row(r, a, b, flips) for r in [table.overall, *table.slices]])
    if out.empty:
        return pd.DataFrame(columns=DELTA_COLUMNS)
    out["small"] = out["questions"] < SMALL
    return out[DELTA_COLUMNS]


class PairJob:
    """A pair's per-slice table (`deltas`) made on a thread of its own, started at once: the page asks
    for the all-questions row (`head`, drawn first) for its headline, works out what needs no table --
    the flips, the finder's scope -- while the slices' rows are computed (in worker processes:
    `scoring.paired_slices`), then asks for the `table`. `build(on_overall)` makes the table, calling `on_overall` with
    the all-questions row when it is drawn. An error is raised where `head` or `table` is asked."""

    def __init__(self, build: Callable[[Callable[[SliceRow], object]], pd.DataFrame]) -> None:
        self._head: Future[SliceRow] = Future()
        self._table: Future[pd.DataFrame] = Future()
        threading.Thread(target=self._run, args=(build,), name="compare-pair", daemon=True).start()

    def _run(self, build: Callable[[Callable[[SliceRow], object]], pd.DataFrame]) -> None:
        try:
            table = build(self._got_head)
        except BaseException as exc:  # handed to whoever asks, in its thread
            if not self._head.done():
                self._head.set_exception(exc)
            self._table.set_exception(exc)
        else:
            self._table.set_result(table)

    def _got_head(self, row: SliceRow) -> None:
        if not self._head.done():
            self._head.set_result(row)

    def head(self) -> SliceRow:
        return self._head.result()

    def table(self) -> pd.DataFrame:
        return self._table.result()

    def head_ready(self) -> bool:
        return self._head.done()

    def ready(self) -> bool:
        return self._table.done()

    def failed(self) -> bool:
        return self._table.done() and self._table.exception() is not None


def tested_count(table: pd.DataFrame) -> int:
    """How many slices of a `deltas` table have a q (enough documents: in a family)."""
    return int(((table["field"] != OVERALL_FIELD) & table["q"].notna()).sum()) if len(table) else 0


def verdict(row: dict | pd.Series, metric: str = "accuracy", alpha: float = 0.05) -> str:
    """What a page may say about one row of `deltas`: "real" (enough documents, the interval by
    documents excludes 0 and p < alpha), "too few" (fewer than MIN_DOCUMENTS documents), or "chance"."""
    if bool(row["too_few"]):
        return "too few"
    lo, hi = row[f"{metric}_low"], row[f"{metric}_high"]
    p = row[f"{metric}_p"]
    return "real" if p < alpha and (lo > 0 or hi < 0) else "chance"


def holding_slices(table: pd.DataFrame, metric: str = "accuracy", alpha: float = 0.05) -> pd.DataFrame:
    """The slices of a `deltas` table whose difference holds by document after the false-discovery
    control (q below `alpha` and the interval off 0), the largest difference first by its size (a drop
    of 20 pp before a gain of 10): what the report and the Presentation both name and count."""
    rows = table[(table["field"] != OVERALL_FIELD) & (table["q"] < alpha)
                 & ((table[f"{metric}_low"] > 0) | (table[f"{metric}_high"] < 0))]
    return rows.iloc[np.argsort(-rows[f"{metric}_delta"].abs().to_numpy(), kind="stable")]


def headline(table: pd.DataFrame) -> dict:
    """The overall row of `deltas` as a dict."""
    row = table[table["field"] == OVERALL_FIELD]
    return row.iloc[0].to_dict() if len(row) else {}


# ----------------------------------------------------------------------------- many runs


def _membership(questions: pd.DataFrame, fields: Iterable[str]) -> pd.DataFrame:
    """Long: field, label, question_id -- one row per (slice, question), overall first (fields of one
    label left out, as in `slices`)."""
    parts = [pd.DataFrame({"field": OVERALL_FIELD, "label": OVERALL_LABEL, "question_id": questions.index})]
    for name in fields:
        lab = labels_of(questions, name)
        if lab.nunique() >= (1 if name == SAVED_FIELD else 2):
            parts.append(pd.DataFrame({"field": name, "label": lab.values, "question_id": lab.index}))
    return pd.concat(parts, ignore_index=True).drop_duplicates()


def slice_scores(scores: pd.DataFrame, questions: pd.DataFrame, runs: list[str], metric: str,
                 fields: Iterable[str] = BREAKDOWNS) -> pd.DataFrame:
    """Every run's mean of `metric` per slice, with its rank among the runs (1 = best; ties share
    the better rank): field, label, run, questions, score, rank."""
    fields = list(fields)
    mine = scores.loc[scores["run"].isin(runs), ["run", "question_id", metric]]
    merged = _membership(questions, fields).merge(mine, on="question_id", how="inner")
    out = merged.groupby(["field", "label", "run"], sort=False).agg(
        questions=("question_id", "size"), score=(metric, "mean")).reset_index()
    out["rank"] = out.groupby(["field", "label"])["score"].rank(method="min", ascending=False).astype(int)
    order = {f: k for k, f in enumerate([OVERALL_FIELD, *fields])}
    out["_f"] = out["field"].map(order)
    out["_r"] = out["run"].map({r: k for k, r in enumerate(runs)})
    return out.sort_values(["_f", "label", "_r"]).drop(columns=["_f", "_r"]).reset_index(drop=True)


def rank_table(long: pd.DataFrame) -> pd.DataFrame:
    """`slice_scores` as a wide table: one row per slice, per run its rank (1 = best)."""
    if long.empty:
        return pd.DataFrame(columns=["field", "label", "questions"])
    wide = long.pivot_table(index=["field", "label"], columns="run", values="rank", sort=False).astype("Int64")
    sizes = long.groupby(["field", "label"], sort=False)["questions"].max()
    out = wide.assign(questions=sizes).reset_index()
    runs = list(dict.fromkeys(long["run"]))
    return out[["field", "label", "questions", *runs]]


def run_intervals(scores: pd.DataFrame, runs: list[str], settings: Settings = Settings(),
                  questions: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per run and metric: questions, documents, unit, mean, low, high (fractions): the interval
    resamples documents (`questions` gives them; without it, or when no question names a document,
    questions) and is nan with fewer than MIN_DOCUMENTS of them."""
    rows = []
    frame = questions if questions is not None else pd.DataFrame(index=pd.Index([], dtype=object))
    for r in runs:
        part = scores[scores["run"] == r]
        ids = pd.Index(part["question_id"].astype(str))
        codes, unit = cluster_codes(frame, ids)
        clusters = Clusters(codes, unit, int(np.unique(codes).size))
        values = part[list(METRICS)].to_numpy(float).T
        results = paired_by_document_rows(values, np.zeros_like(values), clusters, resamples=settings.resamples,
                                          seed=settings.seed, confidence=settings.confidence)
        row: dict = {"run": r, "questions": int(len(part)), "documents": results[0].units if len(part) else 0,
                     "unit": results[0].unit}
        for m, res in zip(METRICS, results):
            row |= {m: res.delta, f"{m}_low": res.low, f"{m}_high": res.high}
        rows.append(row)
    return pd.DataFrame(rows, columns=["run", "questions", "documents", "unit",
                                       *(f"{m}{k}" for m in METRICS for k in ("", "_low", "_high"))])


def benchmark_scores(an, runs: list[str]) -> dict[str, tuple[float, float]]:
    """The benchmark's own Acc and F1 (0..1) of each run that has them (`core.analysis.benchmark_acc_f1`:
    MMLongBench-Doc's), when any run is scored under that benchmark's profile; else {}."""
    from dashboard.core.analysis import benchmark_acc_f1
    from scoring.profiles import MMLONGBENCH_PROFILE

    chosen = [r for r in (an.run(name) for name in runs) if r is not None]
    if not any(r.recomputed and r.profile_name == MMLONGBENCH_PROFILE for r in chosen):
        return {}
    out = {}
    for r in chosen:
        got = benchmark_acc_f1(r, an.gold)
        if got is not None:
            out[r.name] = (float(got[0]), float(got[1]))
    return out


def shown_fields(table: pd.DataFrame, k: int = 3) -> list[str]:
    """The first `k` breakdowns (in BREAKDOWNS order) that a `deltas` table has slices of."""
    present = set(table["field"])
    return [f for f in BREAKDOWNS if f in present][:k]


# ----------------------------------------------------------------------------- telling failures


def telling_failures(pairs: pd.DataFrame, questions: pd.DataFrame, weak: Iterable[tuple[str, Iterable[str], float]],
                     k: int = 8) -> pd.DataFrame:
    """The questions that tell most about A's weaknesses: A wrong, baseline right first (regressions),
    then both wrong; within each, questions in more of A's weak slices (`weak`: the finder's, as
    (label, question ids, weight = excess failures)), then the larger token-F1 gap B - A; one question
    per document before any second one. Returns the paired rows with `why` (the weak slices they fall in)."""
    wrong = pairs[~pairs["right_a"].astype(bool)].copy()
    if wrong.empty:
        return wrong.assign(why=pd.Series(dtype=object))
    weight = pd.Series(0.0, index=wrong.index)
    why: dict[str, list[str]] = {q: [] for q in wrong.index}
    for label, members, w in weak:
        ids = wrong.index.intersection(pd.Index(list(members)))
        weight.loc[ids] += float(w)
        for q in ids:
            why[q].append(label)
    wrong["_regression"] = (wrong["flip"] == ONLY_B).astype(int)
    wrong["_weight"] = weight
    wrong["_gap"] = wrong["token_f1_b"] - wrong["token_f1_a"]
    docs = questions["document"].reindex(wrong.index) if "document" in questions.columns else pd.Series("", index=wrong.index)
    wrong["_doc"] = docs.fillna("").astype(str)
    wrong = wrong.sort_values(["_regression", "_weight", "_gap"], ascending=False, kind="stable")
    wrong["_nth"] = wrong.groupby("_doc").cumcount()  # spread over documents: each document's best first
    wrong = wrong.sort_values(["_nth", "_regression", "_weight", "_gap"], ascending=[True, False, False, False], kind="stable")
    out = wrong.head(k).copy()
    out["why"] = [why[q] for q in out.index]
    return out.drop(columns=["_regression", "_weight", "_gap", "_doc", "_nth"])


# ----------------------------------------------------------------------------- export


def units_text(n: int, unit: str) -> str:
    """"12 documents", or "12 questions (the gold names no documents)": what an interval or p rests on."""
    if unit == "document":
        return f"{n} document{'s' * (n != 1)}"
    return f"{n} question{'s' * (n != 1)} (the gold names no documents)"


def detectable_text(gap: float) -> str:
    """The smallest gap a slice with too few documents could detect, in percentage points, as words."""
    if pd.isna(gap) or gap == float("inf"):
        return "no gap could be detected"
    if gap == 0:
        return "the runs agree on every question here"
    return f"the smallest gap it could detect is about ±{100 * gap:.1f} pp"

"""Run comparison, pure (pandas + scoring.stats; no streamlit, no plotly): run A against baseline B
over the questions both are scored on -- Accuracy flips, per-slice deltas with bootstrap intervals,
McNemar p-values with Holm's adjustment across slices -- and, over many runs, each run's rank per
slice and a run's weakest slices.

Inputs are the frames of `dashboard.tables.Analysis`: `questions` (one row per gold question,
indexed by question id, metadata columns) and `scores` (long: run, question_id, accuracy, token_f1,
anls, status, prediction). Scores and deltas stay fractions (0..1); pages and charts show them in
percent / percentage points.

Slices: every label of every field in `BREAKDOWNS` (reasoning type, evidence source, domain,
difficulty, answer format, document type, split). A question with several evidence sources is in
each of their slices, as in the overview's breakdowns. A missing label is "unknown".

An Accuracy at or above 0.5 counts as right (the release's Accuracy is 0 or 1 per question).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring import model
from scoring.registry import METRIC_LABELS, METRICS  # noqa: F401  (METRIC_LABELS: the comparison pages read it here)
from scoring.stats import holm, mcnemar_exact, paired_bootstrap, paired_bootstrap_rows

# the scoring report's breakdowns, in the order the comparison shows them
SHOWN_FIRST = ("reasoning_type", "evidence_source", "domain", "difficulty", "answer_format", "doc_type")
BREAKDOWNS = tuple(sorted(model.BREAKDOWNS, key=lambda f: SHOWN_FIRST.index(f) if f in SHOWN_FIRST else len(SHOWN_FIRST)))
OVERALL_FIELD, OVERALL_LABEL = "overall", "all questions"
BOTH_RIGHT, ONLY_A, ONLY_B, BOTH_WRONG = "both right", "only A", "only B", "both wrong"
FLIPS = (BOTH_RIGHT, ONLY_A, ONLY_B, BOTH_WRONG)
SMALL = 20  # slices with fewer paired questions get a warning
RESAMPLES = 10_000
UNKNOWN = "unknown"
RIGHT = 0.5


def is_right(accuracy: pd.Series | np.ndarray) -> np.ndarray:
    return np.asarray(accuracy, dtype=float) >= RIGHT


def flip_of(acc_a: float, acc_b: float) -> str:
    a, b = acc_a >= RIGHT, acc_b >= RIGHT
    return BOTH_RIGHT if a and b else ONLY_A if a else ONLY_B if b else BOTH_WRONG


# ----------------------------------------------------------------------------- pairing and slices


def paired(scores: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """One row per question both runs are scored on (in A's order), indexed by question id:
    `<metric>_a`, `<metric>_b`, `prediction_a/_b`, `status_a/_b` and `flip`."""
    cols = [*METRICS, "prediction", "status"]
    left = scores.loc[scores["run"] == a, ["question_id", *cols]].drop_duplicates("question_id").set_index("question_id")
    right = scores.loc[scores["run"] == b, ["question_id", *cols]].drop_duplicates("question_id").set_index("question_id")
    out = left.add_suffix("_a").join(right.add_suffix("_b"), how="inner")
    ra, rb = is_right(out["accuracy_a"]), is_right(out["accuracy_b"])
    out["flip"] = np.select([ra & rb, ra & ~rb, ~ra & rb], [BOTH_RIGHT, ONLY_A, ONLY_B], BOTH_WRONG)
    return out.rename_axis("question_id")


def labels_of(questions: pd.DataFrame, field_name: str) -> pd.Series:
    """(question id -> label) for one field; evidence_source gives a question once per source."""
    if field_name not in questions.columns:
        return pd.Series(dtype=object)
    col = questions[field_name]
    if field_name == "evidence_source":
        col = col.map(lambda v: list(v) if isinstance(v, (list, tuple)) and len(v) else [UNKNOWN]).explode()
    known = col.notna() & (col.astype(str) != "")
    return col.astype(str).where(known, UNKNOWN).astype(object)


def slices(questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS, *,
           overall: bool = True) -> Iterator[tuple[str, str, pd.Index]]:
    """(field, label, question ids): first every question, then each label of each field, sorted."""
    if overall:
        yield OVERALL_FIELD, OVERALL_LABEL, questions.index
    for name in fields:
        lab = labels_of(questions, name)
        if lab.empty:
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


def flip_table(pairs: pd.DataFrame, questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS) -> pd.DataFrame:
    """Accuracy flips overall and per slice: field, label, questions, both right, only A, only B, both wrong."""
    code = pd.Categorical(pairs["flip"], categories=FLIPS).codes  # by position: no index join per slice
    rows = []
    for name, label, ids in slices(questions, fields):
        pos = pairs.index.get_indexer(ids)
        part = code[pos[pos >= 0]]
        counts = np.bincount(part[part >= 0], minlength=len(FLIPS))
        rows.append({"field": name, "label": label, "questions": int(part.size),
                     **{f: int(c) for f, c in zip(FLIPS, counts)}})
    return pd.DataFrame(rows, columns=["field", "label", "questions", *FLIPS])


def flip_questions(pairs: pd.DataFrame, questions: pd.DataFrame, field_name: str, label: str, flip: str | None) -> pd.DataFrame:
    """The paired rows of one flip-table cell (flip None: the whole slice)."""
    ids = pairs.index.intersection(slice_ids(questions, field_name, label))
    part = pairs.loc[ids]
    return part if not flip else part[part["flip"] == flip]


# ----------------------------------------------------------------------------- deltas


@dataclass(frozen=True)
class Settings:
    resamples: int = RESAMPLES
    seed: int = 0
    confidence: float = 0.95


def _delta_row(a: np.ndarray, b: np.ndarray, flips: np.ndarray, s: Settings) -> dict:
    """One slice: `a`, `b` the 3 x n metric arrays of its paired questions, `flips` their flip labels."""
    n = a.shape[1]
    row: dict = {"questions": int(n)}
    intervals = paired_bootstrap_rows(a, b, resamples=s.resamples, seed=s.seed, confidence=s.confidence, approximate=True)
    for i, (m, (delta, low, high)) in enumerate(zip(METRICS, intervals)):
        row |= {f"{m}_a": float(a[i].mean()) if n else np.nan, f"{m}_b": float(b[i].mean()) if n else np.nan,
                f"{m}_delta": delta, f"{m}_low": low, f"{m}_high": high}
    only_a, only_b = int(np.count_nonzero(flips == ONLY_A)), int(np.count_nonzero(flips == ONLY_B))
    row |= {"only_a": only_a, "only_b": only_b, "p_mcnemar": mcnemar_exact(only_a, only_b)}
    return row


DELTA_COLUMNS = ["field", "label", "questions", "small",
                 *(f"{m}_{k}" for m in METRICS for k in ("a", "b", "delta", "low", "high")),
                 "only_a", "only_b", "p_mcnemar", "p_holm"]


def deltas(pairs: pd.DataFrame, questions: pd.DataFrame, fields: Iterable[str] = BREAKDOWNS,
           settings: Settings = Settings()) -> pd.DataFrame:
    """Per slice (the first row: all questions): questions paired, `small` (< 20), per metric the
    means of A and B, delta = A - B with its bootstrap interval (`_low`, `_high`), the Accuracy flips
    only A / only B, McNemar's exact p on them, and `p_holm`: Holm-adjusted across all the slices
    of all fields (the family of slice tests; the overall row is its own single test, p_holm = p)."""
    a = pairs[[f"{m}_a" for m in METRICS]].to_numpy(float).T
    b = pairs[[f"{m}_b" for m in METRICS]].to_numpy(float).T
    flips = pairs["flip"].to_numpy(object)
    rows = []
    for name, label, ids in slices(questions, fields):
        pos = pairs.index.get_indexer(ids)
        pos = np.sort(pos[pos >= 0])  # the slice's paired questions, in the pairs' order
        if name != OVERALL_FIELD and not pos.size:
            continue
        rows.append({"field": name, "label": label} | _delta_row(a[:, pos], b[:, pos], flips[pos], settings))
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=DELTA_COLUMNS)
    out["small"] = out["questions"] < SMALL
    is_slice = out["field"] != OVERALL_FIELD
    out["p_holm"] = out["p_mcnemar"]
    out.loc[is_slice, "p_holm"] = holm(out.loc[is_slice, "p_mcnemar"].tolist())
    return out[DELTA_COLUMNS]


def headline(table: pd.DataFrame) -> dict:
    """The overall row of `deltas` as a dict."""
    row = table[table["field"] == OVERALL_FIELD]
    return row.iloc[0].to_dict() if len(row) else {}


# ----------------------------------------------------------------------------- many runs


def _membership(questions: pd.DataFrame, fields: Iterable[str]) -> pd.DataFrame:
    """Long: field, label, question_id -- one row per (slice, question), overall first."""
    parts = [pd.DataFrame({"field": OVERALL_FIELD, "label": OVERALL_LABEL, "question_id": questions.index})]
    for name in fields:
        lab = labels_of(questions, name)
        if not lab.empty:
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


OWN, BEST = "own overall", "best run"
WEAK_COLUMNS = ["field", "label", "questions", "score", "reference", "reference_run", "gap", "gap_low", "gap_high",
                "weight", "small"]


def weakest(scores: pd.DataFrame, questions: pd.DataFrame, run: str, metric: str = "accuracy", *,
            against: str = OWN, runs: list[str] | None = None, fields: Iterable[str] = BREAKDOWNS,
            settings: Settings = Settings(), top: int | None = None) -> pd.DataFrame:
    """A run's weakest slices, ranked by weight = slice size x gap, where the gap is
    - against OWN: the run's overall score minus its score on the slice; the interval is the
      bootstrap interval of the slice mean, turned into a gap (the overall score taken as fixed);
    - against BEST: the best other run's score on the slice minus this run's, over the questions
      both are scored on; the interval is the paired bootstrap interval of that difference.
    Columns: field, label, questions, score, reference, reference_run, gap, gap_low, gap_high,
    weight, small. Slices are only those of `fields` (not the overall row)."""
    mine = scores[scores["run"] == run].drop_duplicates("question_id").set_index("question_id")[metric]
    if mine.empty:
        return pd.DataFrame(columns=WEAK_COLUMNS)
    overall = float(mine.mean())
    others = [r for r in (runs or list(dict.fromkeys(scores["run"]))) if r != run]
    qidx = questions.index

    def aligned(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """(values, present) over the gold questions' positions: slices are then taken by position."""
        pos = qidx.get_indexer(series.index)
        ok = pos >= 0
        values, present = np.full(len(qidx), np.nan), np.zeros(len(qidx), dtype=bool)
        values[pos[ok]] = series.to_numpy(float)[ok]
        present[pos[ok]] = True
        return values, present

    my_values, my_present = aligned(mine)
    by_run = {r: aligned(scores[scores["run"] == r].drop_duplicates("question_id").set_index("question_id")[metric])
              for r in others}
    rows = []
    for name, label, ids in slices(questions, fields, overall=False):
        spos = qidx.get_indexer(ids)
        spos = np.sort(spos[spos >= 0])
        here = spos[my_present[spos]]
        if not here.size:
            continue
        x = my_values[here]
        score = float(np.nanmean(x)) if not np.all(np.isnan(x)) else np.nan
        if against == BEST:
            cands = []
            for r, (values, present) in by_run.items():
                theirs = values[spos[present[spos]]]
                if theirs.size:
                    cands.append((float(np.nanmean(theirs)) if not np.all(np.isnan(theirs)) else np.nan, r))
            if not cands:
                continue
            ref, ref_run = max(cands, key=lambda c: c[0])
            values, present = by_run[ref_run]
            common = here[present[here]]
            gap, low, high = paired_bootstrap(values[common], my_values[common],
                                              resamples=settings.resamples, seed=settings.seed, confidence=settings.confidence, approximate=True)
        else:
            ref, ref_run = overall, run
            _, lo, hi = paired_bootstrap(x, np.zeros(len(x)), resamples=settings.resamples,
                                         seed=settings.seed, confidence=settings.confidence, approximate=True)
            gap, low, high = overall - score, overall - hi, overall - lo
        rows.append({"field": name, "label": label, "questions": int(len(x)), "score": score, "reference": ref,
                     "reference_run": ref_run, "gap": gap, "gap_low": low, "gap_high": high,
                     "weight": len(x) * gap, "small": len(x) < SMALL})
    out = pd.DataFrame(rows, columns=WEAK_COLUMNS)
    out = out.sort_values(["weight", "questions"], ascending=[False, False], kind="stable").reset_index(drop=True)
    return out.head(top) if top else out


def run_intervals(scores: pd.DataFrame, runs: list[str], settings: Settings = Settings()) -> pd.DataFrame:
    """Per run and metric: questions, mean, low, high (fractions)."""
    rows = []
    for r in runs:
        part = scores[scores["run"] == r]
        row: dict = {"run": r, "questions": int(len(part))}
        values = part[list(METRICS)].to_numpy(float).T
        for m, (mean, low, high) in zip(METRICS, paired_bootstrap_rows(values, np.zeros_like(values), resamples=settings.resamples,
                                                                       seed=settings.seed, confidence=settings.confidence,
                                                                       approximate=True)):
            row |= {m: mean, f"{m}_low": low, f"{m}_high": high}
        rows.append(row)
    return pd.DataFrame(rows, columns=["run", "questions", *(f"{m}{k}" for m in METRICS for k in ("", "_low", "_high"))])


# ----------------------------------------------------------------------------- telling failures


def telling_failures(pairs: pd.DataFrame, questions: pd.DataFrame, weak: pd.DataFrame, k: int = 8) -> pd.DataFrame:
    """The questions that tell most about A's weaknesses: A wrong, baseline right first (regressions),
    then both wrong; within each, questions in more of A's weakest slices (by weight), then the larger
    token-F1 gap B - A; one question per document before any second one. Returns the paired rows with
    `why` (the weak slices they fall in)."""
    wrong = pairs[~is_right(pairs["accuracy_a"])].copy()
    if wrong.empty:
        return wrong.assign(why=pd.Series(dtype=object))
    weight = pd.Series(0.0, index=wrong.index)
    why: dict[str, list[str]] = {q: [] for q in wrong.index}
    for _, w in weak[weak["weight"] > 0].head(10).iterrows():
        ids = wrong.index.intersection(slice_ids(questions, w["field"], w["label"]))
        weight.loc[ids] += float(w["weight"])
        for q in ids:
            why[q].append(f"{w['field']}: {w['label']}")
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



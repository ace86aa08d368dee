"""DataFrames for the pages: questions, per-question scores of every run, leaderboard,
breakdowns, joins, reproducibility and the explorer table. No streamlit here.

Scores stay fractions in 0..1 in every frame; pages and charts turn them into percentages.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from dashboard.core.escape import COPY_CHARS, TABLE_CHARS, clip_where
from dashboard.core.links import FIELDS, META
from scoring.aggregate import bucket
from scoring.evaluate import RunResult
from scoring.mmlongbench_report import gold_rows
from scoring.mmlongbench_rule import acc_and_f1
from scoring.model import GoldQuestion, ScoreRow, to_str
from scoring.profiles import MMLONGBENCH_PROFILE, Profile, get_profile
from scoring.registry import METRIC_LABELS, METRICS, MISSING_STATUS, is_success_status
from scoring.runner import column_list, compact_columns, in_columns, overall_of, prediction_texts
from scoring.slice_fields import (  # noqa: F401  (one definition of length and position; the pages read them here)
    LENGTH_BUCKETS,
    LONGEST,
    PAGE_CATEGORY,
    POSITIONS,
    STANDARD_METADATA,
    context_pages,
    evidence_position,
    length_bucket,
    question_position,
)

RECOMPUTED = "recomputed"
OFFICIAL = "scores loaded, not recomputed"
UNKNOWN = "unknown"


@dataclass
class Run:
    """One row of the leaderboard: a scored prediction file, or official scores only."""

    name: str
    source: str  # RECOMPUTED or OFFICIAL
    file: str
    result: RunResult | None = None
    official: list[ScoreRow] = field(default_factory=list)
    origin: str = ""  # a harness run: harness, version, task, model arguments, date (shown with its signature)
    file_rows: int = 0  # the rows its file held (read, joined or not; 0: not known): how a join is judged (`Join`)

    @property
    def signature(self) -> str:
        return self.result.signature if self.result else "official scores (profile not stated)"


# ----------------------------------------------------------------------------- questions


def _pages_text(q: GoldQuestion) -> str:
    return "; ".join(f"{d.document_id}: {', '.join(map(str, d.evidence_pages))}" for d in q.documents if d.evidence_pages)


def question_frame(gold: list[GoldQuestion], page_counts: dict[str, int | None]) -> pd.DataFrame:
    """One row per gold question, in gold order, indexed by question id."""
    rows = []
    for q in gold:
        pages = context_pages(q, page_counts)
        row: dict[str, object] = {
            "question_id": q.qid,
            "question": q.question,
            "gold": q.gold_answer,
            "answer_format": q.labels("answer_format")[0],
            "rule": q.verification_rule,
            "split": q.labels("split")[0],
            "domain": q.meta("domain"),
            "reasoning_type": q.meta("reasoning_type"),
            "difficulty": q.meta("difficulty"),
            "doc_type": q.meta("doc_type"),
            "evidence_source": tuple(q.labels("evidence_source")),
            **({PAGE_CATEGORY: tuple(q.metadata[PAGE_CATEGORY])} if PAGE_CATEGORY in q.metadata else {}),
            "length": length_bucket(pages),
            "position": question_position(q, page_counts),
            "document": ", ".join(q.document_ids),
            "cluster": q.document_ids[0] if q.document_ids else q.qid,  # the unit of compare's statistics (scoring.stats.document_clusters)
            "pages": _pages_text(q),
            "page_count": pages,
        }
        rows.append(row | _extra_metadata(q))
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=QUESTION_COLUMNS)
    elif PAGE_CATEGORY in frame.columns:  # a question without categories is in none (not "unknown")
        frame[PAGE_CATEGORY] = frame[PAGE_CATEGORY].map(lambda v: v if isinstance(v, tuple) else ())
    return frame.set_index("question_id", drop=False).rename_axis(None)


def _extra_metadata(q: GoldQuestion) -> dict[str, str]:
    return {META + k: to_str(v) for k, v in q.metadata.items()
            if k not in STANDARD_METADATA and not isinstance(v, (list, dict))}


MULTI_LABEL = frozenset({"evidence_source", PAGE_CATEGORY})  # fields whose value is a tuple of labels: a question
# is counted once per label (scoring.aggregate counts evidence sources so; the MMLongBench-Doc report its categories)
QUESTION_COLUMNS = ["question_id", "question", "gold", "answer_format", "rule", "split", "domain", "reasoning_type",
                    "difficulty", "doc_type", "evidence_source", "length", "position", "document", "cluster", "pages", "page_count"]


# ----------------------------------------------------------------------------- scores


def is_success(status: str) -> bool:
    return is_success_status(status)


def frame_profile(runs: list[Run], profile: str | Profile | None = None) -> Profile:
    """The profile that says which answers are right in a score frame: `profile` when given, else
    the one the recomputed runs were scored with (all of one frame share it), else the default."""
    if profile is not None:
        return get_profile(profile)
    return next((r.result.profile for r in runs if r.result is not None), get_profile(None))


def score_frame(runs: list[Run], gold_ids: set[str], profile: str | Profile | None = None) -> pd.DataFrame:
    """Long table: one row per (run, gold question that the run covers). `right` (bool): the answer
    is right by Accuracy under the run's profile (`scoring.profiles.Profile.is_right`, the one
    definition: Accuracy 1, or at least 0.5 for MMLongBench-Doc's partial score); a run of official
    scores only is read under `frame_profile(runs, profile)`."""
    return score_frame_at(runs, gold_ids, profile)[0]


def score_frame_at(runs: list[Run], gold_ids: set[str], profile: str | Profile | None = None,
                   questions: pd.Index | None = None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """`score_frame`, and with `questions` (the question frame's index) each row's position in it
    (-1: not there; `question_positions`) -- read from each run's columns, which are in gold order,
    instead of looking four million ids up (a quarter of a gigabyte of strings at 200 runs)."""
    cols = ["run", "question_id", *METRICS, "status", "prediction"]
    fallback = frame_profile(runs, profile)
    if runs and all(r.result is not None and in_columns(r.result) for r in runs):
        return _frame_of_columns(runs, questions)
    parts: list[pd.DataFrame] = []
    positions: list[np.ndarray] = []
    order = np.arange(len(questions) if questions is not None else 0, dtype=np.intp)
    for run in runs:
        if run.result is not None:  # built column by column (a run's records are not walked: see compact_columns)
            c = compact_columns(run.result)
            part = pd.DataFrame({k: _column(c[k]) for k in cols[1:]}, columns=cols[1:])
        else:
            part = pd.DataFrame([{"question_id": s.qid, "accuracy": s.accuracy, "token_f1": s.token_f1, "anls": s.anls,
                                 "status": s.status or "success", "prediction": s.prediction or ""}
                                 for s in run.official if s.qid in gold_ids], columns=cols[1:])
        if len(part):
            part.insert(0, "run", run.name)
            part = part.astype({m: "float64" for m in METRICS})
            part["right"] = (run.result.profile if run.result is not None else fallback).right_mask(part["accuracy"])
            parts.append(part)
            if questions is not None:
                positions.append(_positions(c["question_id"] if run.result is not None else part["question_id"],
                                            questions, order))
    where = np.concatenate(positions) if positions else np.zeros(0, dtype=np.intp) if questions is not None else None
    if not parts:
        return pd.DataFrame([], columns=[*cols, "right"]).astype({"right": bool}), where
    return pd.concat(parts, ignore_index=True), where


def _frame_of_columns(runs: list[Run], questions: pd.Index | None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """`score_frame_at` for runs held in columns (the app's, `dashboard.core.runs`), built column by
    column over all runs at once -- no frame per run, no concatenation of frames: the question ids
    and predictions are the runs' Arrow arrays (shared), the run names one dictionary decoded in
    Arrow. The same frame as concatenating the runs' parts (tests/test_columns_equal_rows.py)."""
    cs = [compact_columns(r.result) for r in runs if r.result is not None]
    kept = [(r, c) for r, c in zip(runs, cs) if len(c["accuracy"])]
    if not kept:
        return score_frame_at([], set(), None, questions)
    lengths = np.array([len(c["accuracy"]) for _, c in kept], dtype=np.int64)
    names = pa.array([r.name for r, _ in kept], pa.string())
    run = pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.arange(len(kept), dtype=np.int32), lengths)), names)

    def strings(key: str) -> pd.api.extensions.ExtensionArray:
        chunks = [c[key] if isinstance(c[key], pa.Array) else pa.array(np.asarray(c[key], dtype=object), pa.string())
                  for _, c in kept]
        return pd.array(pa.chunked_array(chunks, pa.string()), dtype=_STR)

    scores = {m: np.concatenate([np.asarray(c[m], dtype=np.float64) for _, c in kept]) for m in METRICS}
    frame = pd.DataFrame({
        "run": pd.array(pa.chunked_array([run.cast(pa.string())]), dtype=_STR),
        "question_id": strings("question_id"),
        **scores,
        "status": strings("status"),
        "prediction": strings("prediction"),
        "right": np.concatenate([r.result.profile.right_mask(np.asarray(c["accuracy"], dtype=np.float64))
                                 for r, c in kept if r.result is not None]),
    }, copy=False)
    # each run's scores become views of the frame's columns (equal values): held once, not twice
    ends = np.cumsum(lengths)
    for (_, c), end, n in zip(kept, ends, lengths):
        for m in METRICS:
            column = frame[m].to_numpy()
            if np.shares_memory(column, scores[m]):
                view = column[end - n:end]
                view.flags.writeable = False
                c[m] = view
    if questions is None:
        return frame, None
    order = np.arange(len(questions), dtype=np.intp)
    return frame, np.concatenate([_positions(c["question_id"], questions, order) for _, c in kept])


def _positions(ids, questions: pd.Index, order: np.ndarray) -> np.ndarray:
    """Each of a run's rows' position in the question frame (-1: not there): `order` itself when its
    ids are the gold's shared Arrow array in the frame's order (no lookup), else looked up."""
    if isinstance(ids, (pa.Array, pa.ChunkedArray)) and len(ids) == len(questions) and _same_ids(ids, questions):
        return order
    return np.asarray(questions.get_indexer(pd.Index(column_list(ids))), dtype=np.intp)


_SAME_IDS: list[tuple[object, object]] = []  # (ids array, index) pairs found equal, the last few


def _same_ids(ids, index: pd.Index) -> bool:
    """Whether a run's question ids (an Arrow array, shared by the runs of one gold) are the question
    frame's index, in order (compared once per pair)."""
    for a, b in _SAME_IDS:
        if a is ids and b is index:
            return True
    arr = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    same = len(arr) == len(index) and arr.equals(pa.array(index.astype(str).tolist(), pa.string()))
    if same:
        _SAME_IDS.append((ids, index))
        del _SAME_IDS[:-8]
    return same


_STR = pd.StringDtype("pyarrow", na_value=np.nan)  # pandas' default string dtype ("str"), held in Arrow


def _column(values):
    """A run's column for its score-frame part: an Arrow array as a pandas string column over the same
    buffers (concatenating parts keeps them: a run's texts are held once, by its alignment), a numpy
    object array of strings as a string column, anything else as it is."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
        return pd.array(chunked, dtype=_STR)
    if isinstance(values, np.ndarray) and values.dtype == object:
        return pd.array(values, dtype=_STR)
    return values


def coverage(run: Run, gold_ids: set[str]) -> dict[str, int]:
    """How many gold questions a run answered (a success status), failed (an error, a timeout) and is
    missing (no row for it). It attempted the answered and the failed ones."""
    if run.result is not None:
        c = compact_columns(run.result)
        answered = np.asarray(c["answered"], dtype=bool)
        present = np.asarray(c["status"], dtype=object)[answered]
        # a handful of distinct statuses: each failed one counted in numpy, no Python object per row
        failed = sum(int(np.count_nonzero(present == st)) for st in pd.unique(present) if not is_success(st))
        missing = len(run.result.missing_ids)
        return {"answered": len(present) - failed, "missing": missing, "failed": failed}
    else:
        present = [s.status or "success" for s in run.official if s.qid in gold_ids]
        missing = len(gold_ids) - len(present)
    failed = sum(1 for s in present if not is_success(s))
    return {"answered": len(present) - failed, "missing": missing, "failed": failed}


BENCH_F1 = "F1 (benchmark, %)"  # MMLongBench-Doc's own F1 (its Acc is Accuracy under its profile)
SHARED_ACC = "Shared Acc (%)"  # Accuracy over the questions every ranked run attempted (when their questions differ)
ATTEMPTED = "Attempted"  # questions a run has a row for (answered or failed): its metrics are over these


def attempted_overall(result: RunResult) -> dict:
    """The count and the three means (as the release rounds them) over the questions the run
    attempted -- answered or failed, not missing: `overall_of` itself when it attempted every one."""
    c = compact_columns(result)
    answered = np.asarray(c["answered"], dtype=bool)
    if answered.all():
        return overall_of(result)
    acc, f1, an = (np.asarray(c[m], dtype=np.float64)[answered].tolist() for m in METRICS)
    return bucket(acc, f1, an)


def _benchmark_profile(run: Run) -> bool:
    return run.result is not None and run.result.profile.name == MMLONGBENCH_PROFILE


def benchmark_acc_f1(run: Run, gold: dict[str, GoldQuestion]) -> tuple[float, float] | None:
    """MMLongBench-Doc's Acc and F1 of a run (`scoring.mmlongbench_rule.acc_and_f1` over the questions it
    answered: its per-question scores, the gold `answer`, its `pred`), in 0..1; None for a run
    recomputed under another profile. Official scores (the result files' own `score`) are read as
    that benchmark's scores."""
    if run.result is not None:
        if not _benchmark_profile(run):
            return None
        preds = prediction_texts(run.result)  # the questions it answered, with their texts as read
        c = compact_columns(run.result)
        scored = {q: float(a) for q, a, done in zip(column_list(c["question_id"]), column_list(c["accuracy"]),
                                                    column_list(c["answered"])) if done}
        questions = [gold[q] for q in scored if q in gold]
    else:
        questions = [gold[s.qid] for s in run.official if s.qid in gold]
        preds = {s.qid: s.prediction or "" for s in run.official}
        scored = {s.qid: s.accuracy for s in run.official}
    return acc_and_f1(gold_rows(questions, preds, scored))


def board_signature(run: Run, missing: int) -> str:
    """The signature of a run's leaderboard numbers: its own, saying `missing:ignored` when it has
    missing questions (they are not counted: the numbers are those of the command line's
    --ignore-missing, `scoring.profiles.signature`)."""
    sig = run.signature
    return sig.replace("|missing:scored|", "|missing:ignored|") if missing and run.result is not None else sig


def leaderboard(runs: list[Run], scores: pd.DataFrame | None, gold_ids: set[str],
                gold: dict[str, GoldQuestion] | None = None) -> pd.DataFrame:
    """One row per run: the three metrics in % over the questions it attempted (answered or failed: a
    run of 40 questions beside 1,082 is scored on its 40, `attempted_overall`), how many it attempted
    (`Questions` = ATTEMPTED), answered, missed and failed, and its signature. `scores` (the score
    frame) is read only for runs of official scores, those without a result. When a run is scored
    under the mmlongbench-doc profile, every run also gets the benchmark's own F1 in % (BENCH_F1:
    `benchmark_acc_f1`; empty for a run under another profile) -- its Acc is Accuracy there, shown once."""
    rows = []
    for run in runs:
        if run.result is not None:
            overall = attempted_overall(run.result)
        else:
            assert scores is not None, "a run of official scores is ranked from the score frame"
            part = scores[scores["run"] == run.name]
            overall = {"count": len(part)} | {m: (part[m].mean() if len(part) else 0.0) for m in METRICS}
        cover = coverage(run, gold_ids)
        rows.append({"Run": run.name, "Source": run.source, "Questions": overall["count"],
                     **{METRIC_LABELS[m] + " (%)": 100 * overall[m] for m in METRICS},
                     ATTEMPTED: cover["answered"] + cover["failed"],
                     **{k.capitalize(): v for k, v in cover.items()},
                     "Signature": board_signature(run, cover["missing"]) + (f"\nsource: {run.origin}" if run.origin else "")})
    frame = pd.DataFrame(rows, columns=["Run", "Source", "Questions", "Accuracy (%)", "Token F1 (%)", "ANLS (%)",
                                        ATTEMPTED, "Answered", "Missing", "Failed", "Signature"])
    if any(_benchmark_profile(r) for r in runs):
        pairs = [benchmark_acc_f1(r, gold or {}) for r in runs]
        frame.insert(frame.columns.get_loc("ANLS (%)") + 1, BENCH_F1, [100 * p[1] if p else float("nan") for p in pairs])
    return frame.sort_values("Accuracy (%)", ascending=False, kind="stable").reset_index(drop=True)


def breakdown(scores: pd.DataFrame, questions: pd.DataFrame, field_name: str, positions=None,
              run_codes: tuple[np.ndarray, list[str]] | None = None) -> pd.DataFrame:
    """Mean of each metric per (run, label of field_name), sorted by run, then label; a MULTI_LABEL
    field (evidence_source, page_category) counts a question once per label.
    `positions`: each score row's position in `questions` (-1 for an id that is not there), when the
    caller keeps it (Analysis does): joining a million rows on their string ids took most of an
    overview's time at 50 runs x 20,000 questions; here the join is by position. `run_codes`: the
    score rows' runs as (codes, sorted names) (`run_codes`), when the caller keeps them.
    The groups are integer keys -- each question's labels are read once, not once per score row
    (grouping four million rows on two string columns took seconds at 200 runs); the means are
    pandas' own over the same rows in the same order, so the numbers are those of grouping on the
    strings (`breakdown_by_strings`, which the tests compare with this)."""
    if positions is None:
        positions = question_positions(scores, questions)
    codes, names = run_codes if run_codes is not None else score_run_codes(scores)
    keep = positions >= 0
    kept = bool(keep.all())  # usually: then nothing is copied to leave rows out
    pos = positions if kept else positions[keep]
    run_of = codes if kept else codes[keep]
    labels, per_question = _question_labels(questions[field_name], field_name)
    width = max(1, len(labels))
    if field_name in MULTI_LABEL:  # each row once per label of its question, in row order, labels in order
        counts = np.fromiter((len(v) for v in per_question), np.int64, len(per_question))
        flat = np.fromiter((k for v in per_question for k in v), np.int64, int(counts.sum()))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        n_each = counts[pos]
        rows = np.repeat(np.arange(len(pos), dtype=np.int64), n_each)
        within = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(n_each) - n_each, n_each)
        within += starts[pos[rows]]
        key = run_of[rows].astype(np.int64) * width + flat[within]
        del within
        take = rows if kept else np.flatnonzero(keep)[rows]
        del rows

        def values(m: str) -> np.ndarray:
            return scores[m].to_numpy()[take]
    else:
        per_label = np.fromiter((v[0] for v in per_question), np.int64, len(per_question))
        key = run_of.astype(np.int64) * width + per_label[pos]

        def values(m: str) -> np.ndarray:
            return scores[m].to_numpy() if kept else scores[m].to_numpy()[keep]
    # one metric at a time (a copy of one column alive at once); sort=True: grouping unsorted and
    # sorting the groups after gave other last bits in some means. The keys are small integers
    # (run x label), so they are the codes of a categorical: pandas groups by them as they are,
    # where grouping on the integers hashed four million of them once per metric (3-4 CPU-s of an
    # overview at 200 runs); same groups, same rows in the same order, so the same means.
    by = pd.Categorical.from_codes(key, categories=np.arange(max(1, len(names)) * width, dtype=np.int64))
    groups = pd.Series(values(METRICS[0]), copy=False).groupby(by, sort=True, observed=True)
    grouped = pd.DataFrame({"count": groups.size(), METRICS[0]: groups.mean()})
    for m in METRICS[1:]:
        grouped[m] = pd.Series(values(m), copy=False).groupby(by, sort=True, observed=True).mean()
    k = np.asarray(grouped.index, dtype=np.int64)
    out = pd.DataFrame({"run": pd.array([names[i] for i in k // width], dtype=_STR),
                        "label": pd.array([labels[i] for i in k % width], dtype=_STR),
                        "count": grouped["count"].to_numpy(dtype=np.int64),
                        **{m: grouped[m].to_numpy() for m in METRICS}})
    return out


def score_run_codes(scores: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each score row's run as a code into the sorted run names: (codes, names)."""
    if not len(scores):
        return np.zeros(0, dtype=np.int64), []
    codes, uniques = pd.factorize(scores["run"], sort=True)
    return codes.astype(np.int64), [str(u) for u in uniques]


def _question_labels(col: pd.Series, field_name: str) -> tuple[list[str], list[tuple[int, ...]]]:
    """(the labels, sorted; each question's label codes, in order): a null is UNKNOWN, and a
    question in no page category has none (the benchmark's report counts it in none)."""
    def label(v) -> str | None:
        if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
            return None if field_name == PAGE_CATEGORY else UNKNOWN
        return str(v)

    raw: list[list[str]] = []
    for v in col.tolist():
        items = (list(v) or [None]) if field_name in MULTI_LABEL and isinstance(v, (list, tuple)) else [v]
        raw.append([x for x in map(label, items) if x is not None])
    names = sorted({x for labs in raw for x in labs})
    index = {x: i for i, x in enumerate(names)}
    return names, [tuple(index[x] for x in labs) for labs in raw]


def breakdown_by_strings(scores: pd.DataFrame, questions: pd.DataFrame, field_name: str, positions=None) -> pd.DataFrame:
    """`breakdown` as it was computed before integer keys: grouping on the run and label strings
    (kept as the reference the tests compare `breakdown` with)."""
    if positions is None:
        positions = question_positions(scores, questions)
    keep = positions >= 0
    pos = positions[keep]
    base = {"run": scores["run"][keep].reset_index(drop=True),
            **{m: scores[m][keep].reset_index(drop=True) for m in METRICS}}
    col = questions[field_name]
    if field_name in MULTI_LABEL:
        ex = col.reset_index(drop=True).explode()  # index: the question's position
        if field_name == PAGE_CATEGORY:  # in no category: counted in none, as the benchmark's report does
            ex = ex.dropna()
        labels = pd.DataFrame({"q": ex.index.to_numpy(), "label": ex.to_numpy(dtype=object)})
        merged = pd.DataFrame({"q": pos, **base}).merge(labels, on="q", how="inner").drop(columns="q")
    else:
        merged = pd.DataFrame({**base, "label": col.to_numpy(dtype=object)[pos]})
    merged["label"] = merged["label"].fillna(UNKNOWN).astype(str)
    out = merged.groupby(["run", "label"], sort=True).agg(
        count=("run", "size"), **{m: (m, "mean") for m in METRICS}).reset_index()
    return out


def question_positions(scores: pd.DataFrame, questions: pd.DataFrame):
    """Each score row's position in `questions` (indexed by question id), -1 when it is not there."""

    if not len(scores):
        return np.zeros(0, dtype=np.intp)
    return questions.index.get_indexer(scores["question_id"])


# ----------------------------------------------------------------------------- joins: what may be ranked

JOIN_WARN_SHARE = 0.5  # a run matching fewer than this share of the gold questions is warned about


@dataclass(frozen=True)
class Join:
    """How one run joins the gold: questions matched (attempted) of the gold's, the rows its file held
    (0: not known), and one id of the run's that matches no gold question (empty when every id matches)."""

    run: str
    matched: int
    total: int
    unmatched_example: str = ""
    rows: int = 0

    @property
    def ranked(self) -> bool:
        """A run that matches no gold question is listed, never ranked, charted or compared."""
        return self.matched > 0 or self.total == 0

    @property
    def short(self) -> bool:
        return self.total > 0 and self.matched < JOIN_WARN_SHARE * self.total

    @property
    def foreign(self) -> bool:
        """It matches no gold question, or almost none of its own rows do: another benchmark's run,
        or one keyed by other ids (not a run that answered a subset of this one)."""
        if self.total == 0:
            return False
        if self.rows <= 0:  # the rows are not known: an id matching nothing says it is not a mere subset
            return self.matched == 0 or bool(self.unmatched_example)
        return self.matched < JOIN_WARN_SHARE * self.rows

    @property
    def subset(self) -> bool:
        """Its rows match the gold, but it attempted only some of the questions: scored on those."""
        return not self.foreign and 0 < self.matched < self.total

    def message(self) -> str:
        """`run X matched N of M gold questions (e.g. unmatched id 'foo')`."""
        text = f"run {self.run} matched {self.matched:,} of {self.total:,} gold questions"
        said = [f"e.g. unmatched id {self.unmatched_example[:60]!r}"] if self.unmatched_example else []
        if self.matched and self.rows > self.matched:
            said.append(f"{self.matched:,} of its {self.rows:,} rows match")
        return text + (f" ({'; '.join(said)})" if said else "")

    def stray(self) -> str:
        """A subset run's rows that match no gold question, in words ("" for none)."""
        n = self.rows - self.matched if self.rows else 0
        if not self.unmatched_example or n <= 0:
            return ""
        return (f"{self.run}: {n:,} row{'s' if n != 1 else ''} {'match' if n != 1 else 'matches'} no gold question, "
                f"e.g. id {self.unmatched_example[:60]!r}")


JOIN_LISTED = 5  # runs named in the join warning before the rest are counted


def _listed(parts: list[str], n: int) -> list[str]:
    return parts[:JOIN_LISTED] + ([f"and {n - JOIN_LISTED} more run{'s' if n - JOIN_LISTED > 1 else ''}"]
                                  if n > JOIN_LISTED else [])


def join_warning(short: list[Join]) -> str:
    """The warning for runs matching fewer than half of the gold, saying what is true of each: a run
    that answered a subset (its rows match the gold) is scored on the questions it attempted; a run
    matching no or almost no gold (`Join.foreign`) is likely from another benchmark or keyed by other
    ids, and one matching none is left out of the ranking; "" when there is none."""
    if not short:
        return ""
    subset = [j for j in short if not j.foreign]
    foreign = [j for j in short if j.foreign]
    out = []
    if subset:
        counts = sorted({j.matched for j in subset})
        total = subset[0].total
        if len(counts) == 1:
            of = f"{counts[0]:,} of {total:,} questions"
            who = f": {', '.join(j.run for j in subset[:JOIN_LISTED])}" + (
                f" and {len(subset) - JOIN_LISTED} more" if len(subset) > JOIN_LISTED else "")
            head = (f"{len(subset)} runs answered a subset ({of}){who}" if len(subset) > 1
                    else f"run {subset[0].run} answered a subset ({of})")
        else:
            head = (f"{len(subset)} runs answered a subset (" if len(subset) > 1 else "a run answered a subset (") + \
                "; ".join(_listed([f"{j.run}: {j.matched:,}" for j in subset], len(subset))) + f" of {total:,} questions)"
        stray = [j.stray() for j in subset if j.stray()]
        out.append(head + (": each is scored on the questions it attempted" if len(subset) > 1
                           else ": it is scored on the questions it attempted")
                   + (f" ({'; '.join(stray[:JOIN_LISTED])})" if stray else "") + ".")
    if foreign:
        parts = [j.message() + ("" if j.ranked else ": not ranked, charted or compared") for j in foreign]
        out.append("; ".join(_listed(parts, len(foreign))) + ". A run matching no or almost no gold question is likely "
                   "from another benchmark or keyed by other ids; the Data page shows each run's join.")
    return " ".join(out)


def run_join(run: Run, gold_ids: set[str]) -> Join:
    if run.result is not None:
        matched = int(np.count_nonzero(np.asarray(compact_columns(run.result)["answered"], dtype=bool)))
        extra = next(iter(run.result.extra_ids), "")
        rows = run.file_rows or (matched + len(run.result.extra_ids))
    else:
        ids = {s.qid for s in run.official}
        matched = len(ids & gold_ids)
        extra = next((s.qid for s in run.official if s.qid not in gold_ids), "")
        rows = run.file_rows or len(ids)
    return Join(run.name, matched, len(gold_ids), extra, rows)


def right_runs(scores: pd.DataFrame, qid: str) -> set[str]:
    """The runs whose answer to question `qid` is right (the score frame's `right` column)."""
    if not len(scores):
        return set()
    mine = scores[scores["question_id"] == qid]
    return set(mine.loc[mine["right"].astype(bool), "run"])


def top_runs(board: pd.DataFrame, metric: str, n: int = 10, keep: tuple[str, ...] = ()) -> list[str]:
    """The n best runs of a leaderboard by `metric` (a METRICS name), plus the runs in `keep`
    (baselines), in leaderboard order."""
    col = METRIC_LABELS[metric] + " (%)"
    best = set(board.sort_values(col, ascending=False, kind="stable")["Run"].head(n)) | set(keep)
    return [r for r in board["Run"] if r in best]


# ----------------------------------------------------------------------------- data page


# ----------------------------------------------------------------------------- explorer


QUESTION_GROUP, META_GROUP = "Question", "Metadata"


def run_column(run: str, col: str) -> str:
    """A run's column in the tables that show runs side by side (the explorer's, the annotations'):
    the run's name and the metric's (or column's) label."""
    return f"{run} · {METRIC_LABELS.get(col, col)}"


def field_values(questions: pd.DataFrame, name: str) -> pd.Series:
    """The values a field takes over the questions, nulls dropped: one per label of a MULTI_LABEL field."""
    col = questions[name]
    return (col.explode() if name in MULTI_LABEL else col).dropna()


def field_options(questions: pd.DataFrame) -> dict[str, list[str]]:
    """The values each filter field takes, sorted."""
    out = {}
    for name in filter_fields(questions):
        values = field_values(questions, name)
        # str() of each value, as the filter compares them; unique first, so each distinct value is converted once
        out[name] = sorted({str(v) for v in (values.unique() if pd.api.types.is_string_dtype(values) else values)})
    return out


@dataclass(frozen=True)
class Shared:
    """The questions a set of runs all attempted: `runs` runs share `questions` of the gold's `total`;
    `differs`: some run attempted questions the others did not (then they are compared on `mask`,
    a boolean over the gold questions in gold order)."""

    runs: int
    questions: int
    total: int
    differs: bool
    mask: np.ndarray = field(repr=False, compare=False)

    def text(self) -> str:
        """`3 runs share 40 questions` (of the gold's 1,082 when fewer)."""
        of = f" of {self.total:,}" if self.questions < self.total else ""
        if not self.questions:
            return f"the {self.runs} runs share no question"
        return f"{self.runs} run{'s' if self.runs != 1 else ''} share{'' if self.runs != 1 else 's'} " \
               f"{self.questions:,}{of} question{'s' if self.questions != 1 else ''}"


# ----------------------------------------------------------------------------- all of it


@dataclass
class Analysis:
    """Everything the pages show for one workspace and profile. Built once per (workspace, profile)
    and cached; treated as read-only, except the breakdown and leaderboard memos."""

    runs: list[Run]
    _questions: pd.DataFrame | None  # None until first asked for: `questions`
    _scores: pd.DataFrame | None  # None until first asked for: `scores`
    _breakdowns: dict[object, pd.DataFrame] = field(default_factory=dict)  # field (or field, runs) -> breakdown
    _leaderboard: pd.DataFrame | None = None
    _positions: object = None  # each score row's position in `questions` (numpy), for breakdowns
    _run_codes: tuple[np.ndarray, list[str]] | None = None  # each score row's run as a code (score_run_codes)
    _bounds: dict[str, tuple[int, int]] | bool | None = None  # memo of `_run_bounds` (False: not consecutive)
    gold: dict[str, GoldQuestion] = field(default_factory=dict)  # question id -> its gold (benchmark_acc_f1)
    # document id -> pages as documents.jsonl declares them: the finder's length and position, as the command
    # line reads them (scoring/slice_fields.py); the question frame's columns also count a PDF's pages
    declared_pages: dict[str, int | None] = field(default_factory=dict)
    _joins: dict[str, Join] | None = None  # memo of `joins`
    _field_options: dict[str, list[str]] | None = None  # memo of `field_options`
    _later: Callable[[], tuple[pd.DataFrame, np.ndarray | None]] | None = None  # builds `scores` when first asked
    _later_questions: Callable[[], pd.DataFrame] | None = None  # builds `questions` when first asked
    _attempted: dict[str, np.ndarray] = field(default_factory=dict)  # run -> attempted (bool, gold order): `attempted`
    _attempted_rows: np.ndarray | bool | None = None  # each score row attempted (False: every row is), `_row_attempted`
    _gold_ids: pd.Index | None = None  # memo of `_gold_index`
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @classmethod
    def build(cls, runs: list[Run], gold: list[GoldQuestion], page_counts: dict[str, int | None],
              profile: str | Profile | None = None, declared_pages: dict[str, int | None] | None = None) -> Analysis:
        """`profile`: the one in force, which reads the runs of official scores (`score_frame`).
        The question and score frames are built when first asked for (`questions`, `scores`): the
        leaderboard, drawn first, reads the runs' own columns and the gold's ids, and at 200 runs x
        20,000 questions the two frames took two seconds of a restart before it."""
        # one frame for both (built under the analysis's lock); the closures do not hold the analysis,
        # which is freed by reference counting once its cache entry goes (gc.freeze: no cycle is collected)
        questions_of = functools.cache(lambda: question_frame(gold, page_counts))
        return cls(runs, None, None, gold={q.qid: q for q in gold}, declared_pages=dict(declared_pages or {}),
                   _later_questions=questions_of,
                   _later=lambda: score_frame_at(runs, set(questions_of().index), profile, questions_of().index))

    @property
    def questions(self) -> pd.DataFrame:
        """One row per gold question (`question_frame`), built once, on first use."""
        if self._questions is None:
            with self._lock:  # sessions share the analysis: the first one to ask builds it
                if self._questions is None:
                    assert self._later_questions is not None
                    self._questions, self._later_questions = self._later_questions(), None
        return self._questions

    @property
    def scores(self) -> pd.DataFrame:
        """One row per (run, gold question) scored (`score_frame_at`), built once, on first use."""
        if self._scores is None:
            with self._lock:
                if self._scores is None:
                    assert self._later is not None
                    frame, positions = self._later()
                    if self._positions is None:
                        self._positions = positions
                    self._scores, self._later = frame, None
        return self._scores

    @property
    def question_count(self) -> int:
        """How many gold questions (without building `questions`: the gold's ids are distinct)."""
        return len(self._questions) if self._questions is not None else len(self.gold)

    @property
    def gold_ids(self) -> set[str]:
        """The gold's question ids (the question frame's index; read from the gold while it is not built)."""
        return set(self._questions.index) if self._questions is not None else set(self.gold)

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def run(self, name: str) -> Run | None:
        return next((r for r in self.runs if r.name == name), None)

    def run_of(self, name: str) -> Run:
        """The run `name`, for a page that offers only loaded runs: a KeyError naming it otherwise."""
        run = self.run(name)
        if run is None:
            raise KeyError(f"no run named {name!r} is loaded (runs: {', '.join(self.run_names) or 'none'})")
        return run

    def result_of(self, name: str) -> RunResult:
        """The recomputed result of run `name`, for a page that offers only scored runs: a KeyError
        naming it when it is not loaded or has official scores only."""
        run = self.run_of(name)
        if run.result is None:
            raise KeyError(f"run {name!r} has official scores only: it was not recomputed")
        return run.result

    def joins(self) -> dict[str, Join]:
        """Run name -> how it joins the gold (computed once)."""
        if self._joins is None:
            gold = self.gold_ids
            self._joins = {r.name: run_join(r, gold) for r in self.runs}
        return self._joins

    @property
    def ranked_names(self) -> list[str]:
        """The runs that may be ranked, charted and compared: all but those matching no gold question."""
        joins = self.joins()
        return [r.name for r in self.runs if joins[r.name].ranked]

    def not_ranked(self) -> list[Join]:
        """The runs matching no gold question: listed apart, never ranked."""
        return [j for j in self.joins().values() if not j.ranked]

    def short_joins(self) -> list[Join]:
        """The runs matching fewer than half of the gold questions (those matching none included)."""
        return [j for j in self.joins().values() if j.short]

    def leaderboard(self) -> pd.DataFrame:
        """Computed once (a page asks for it several times per rerun); a copy, which callers may change.
        Runs that match no gold question are left out (`not_ranked`). Each run's metrics are over the
        questions it attempted; when the runs attempted different questions, SHARED_ACC is each one's
        Accuracy over those they all attempted (`shared`), and the board is ranked by it (nan and
        ranked by Accuracy when they share none)."""
        if self._leaderboard is None:
            ranked = set(self.ranked_names)
            chosen = [r for r in self.runs if r.name in ranked]
            # the frame only for runs of official scores: the others' overall figures are their own columns'
            frame = self.scores if any(r.result is None for r in chosen) else None
            board = leaderboard(chosen, frame, self.gold_ids, self.gold)
            common = self.shared([r.name for r in chosen])
            if common.differs:
                at = board.columns.get_loc("ANLS (%)") + 1
                board.insert(at, SHARED_ACC, [self.mean_on(name, "accuracy", common.mask) * 100 if common.questions
                                              else float("nan") for name in board["Run"]])
                if common.questions:
                    board = board.sort_values(SHARED_ACC, ascending=False, kind="stable").reset_index(drop=True)
            self._leaderboard = board
        return self._leaderboard.copy()

    # ------------------------------------------------------------------ what each run attempted

    def attempted(self, name: str) -> np.ndarray:
        """Over the gold questions (gold order, the question frame's): whether run `name` attempted
        each -- has a row for it, answered or failed (computed once per run)."""
        got = self._attempted.get(name)
        if got is None:
            got = self._aligned(self.run_of(name), None)
            self._attempted[name] = got
        return got

    def _gold_index(self) -> pd.Index:
        """The gold's question ids in gold order (the question frame's index, without building it)."""
        if self._gold_ids is None:
            self._gold_ids = pd.Index(list(self.gold), dtype=object)
        return self._gold_ids

    def _aligned(self, run: Run, metric: str | None) -> np.ndarray:
        """A run's `metric` over the gold questions (gold order; nan where it has no row), or with
        `metric` None whether it attempted each."""
        index = self._gold_index()
        n = len(index)
        if run.result is not None:
            c = compact_columns(run.result)
            pos = _positions(c["question_id"], index, np.arange(n, dtype=np.intp))
            done = np.asarray(c["answered"], dtype=bool)
            values = None if metric is None else np.asarray(c[metric], dtype=np.float64)
        else:
            rows = [s for s in run.official if s.qid in self.gold]
            pos = np.asarray(index.get_indexer([s.qid for s in rows]), dtype=np.intp)
            done = np.ones(len(rows), dtype=bool)
            values = None if metric is None else np.array([getattr(s, metric) for s in rows], dtype=np.float64)
        ok = (pos >= 0) & done
        if values is None:
            out = np.zeros(n, dtype=bool)
            out[pos[ok]] = True
            return out
        aligned = np.full(n, np.nan)
        aligned[pos[ok]] = values[ok]
        return aligned

    def mean_on(self, name: str, metric: str, mask: np.ndarray) -> float:
        """Run `name`'s mean `metric` over the gold questions of `mask` (gold order) it attempted."""
        values = self._aligned(self.run_of(name), metric)[mask & self.attempted(name)]
        return float(values.mean()) if len(values) else float("nan")

    def shared(self, names: list[str]) -> Shared:
        """The questions every one of these runs attempted, and whether some run attempted others."""
        total = self.question_count
        if not names:
            return Shared(0, total, total, False, np.ones(total, dtype=bool))
        joins = self.joins()
        if all(joins[n].matched == total for n in names if n in joins):  # the usual case: nothing to align
            return Shared(len(names), total, total, False, np.ones(total, dtype=bool))
        masks = [self.attempted(n) for n in names]
        mask = np.logical_and.reduce(masks)
        count = int(np.count_nonzero(mask))
        return Shared(len(names), count, total, any(int(np.count_nonzero(m)) != count for m in masks), mask)

    def _row_attempted(self) -> np.ndarray | None:
        """Each score row: whether its run attempted its question (not a `missing` row, which the
        frame keeps for the explorer); None when every row is."""
        if self._attempted_rows is None:
            joins = self.joins()
            if all(j.matched == j.total for j in joins.values()):
                self._attempted_rows = False
            else:
                status = self.scores["status"]
                self._attempted_rows = (status.astype(str) != MISSING_STATUS).to_numpy(dtype=bool) if len(status) \
                    else False
        return None if self._attempted_rows is False else self._attempted_rows  # type: ignore[return-value]

    def attempted_scores(self, names: list[str], shared: bool = True) -> tuple[pd.DataFrame, Shared]:
        """The score rows of these runs on the questions they attempted -- with `shared`, only those
        every one of them attempted (`shared`): what compares them on the same questions; `scores`
        itself when nothing is left out."""
        common = self.shared(names)
        keep = self._row_attempted()
        if shared and common.differs:
            pos = self._row_positions()
            on = np.zeros(len(pos), dtype=bool)
            ok = pos >= 0
            on[ok] = common.mask[pos[ok]]
            keep = on if keep is None else keep & on
        frame = self.rows_of(names)
        if keep is not None:  # the score frame's index is its rows' positions (a RangeIndex)
            frame = frame[keep[frame.index.to_numpy()]]
        return frame, common

    def _row_positions(self) -> np.ndarray:
        scores = self.scores
        if self._positions is None:
            self._positions = question_positions(scores, self.questions)
        return self._positions  # type: ignore[return-value]

    def display_scores(self) -> pd.DataFrame:
        """`scores` with the predictions longer than COPY_CHARS cut to TABLE_CHARS (computed once);
        the same object as `scores` when none is that long. Copying a 50 MB answer through every
        explorer rerun cost seconds; the table cuts the rest (`clipped`) on the rows it shows, so a
        million ordinary answers are not cut here (most of a second, at 50 runs x 20,000)."""
        if "display_scores" not in self._breakdowns:
            shown = self.scores
            if len(shown):
                lengths = shown["prediction"].str.len()
                huge = (lengths > COPY_CHARS).fillna(False).to_numpy(dtype=bool)
                if huge.any():
                    shown = shown.assign(prediction=clip_where(shown["prediction"], huge, TABLE_CHARS))
            self._breakdowns["display_scores"] = shown
        return self._breakdowns["display_scores"]

    def field_options(self) -> dict[str, list[str]]:
        """`field_options(self.questions)`, computed once."""
        if self._field_options is None:
            self._field_options = field_options(self.questions)
        return self._field_options

    def informative(self, field_name: str) -> bool:
        """Whether the field tells questions apart: the gold gives it a value somewhere and it takes
        at least two labels (a null counted as `unknown`, as a breakdown counts it). A breakdown whose
        only label is `unknown` (MMLongBench-Doc has no reasoning type, DocVQA no domain), or any one
        label, says nothing: such a field is no slice, no chart, no default and no part of a header."""
        if field_name not in self.questions.columns:
            return False
        # read from the gold, not from a breakdown: computing every tab's breakdown is what the tabs avoid
        values = field_values(self.questions, field_name)
        if not len(values):
            return False
        labels = set(values.astype(str).unique())
        if len(values) < len(self.questions) and field_name not in MULTI_LABEL:
            labels.add(UNKNOWN)  # a null is `unknown` in a breakdown
        return len(labels) >= 2 and bool(labels - {UNKNOWN})

    def right_runs(self, qid: str) -> set[str]:
        """`right_runs(self.scores, qid)`, the question's rows found by position (a number compared per
        row) rather than by comparing every row's question id."""
        pos = self.questions.index.get_indexer([qid])[0] if len(self.questions) else -1
        scores = self.scores  # built first: building it finds the positions
        at = self._positions
        if pos < 0 or not isinstance(at, np.ndarray) or len(at) != len(scores):
            return right_runs(scores, qid)
        rows = np.flatnonzero(at == pos)  # a handful of rows: their run and `right` cells, no row taken whole
        right = scores["right"].to_numpy(dtype=bool)[rows]
        return set(scores["run"].iloc[rows[right]])

    def rows_of(self, runs, frame: pd.DataFrame | None = None) -> pd.DataFrame:
        """The rows of these runs in `scores` (or in `frame`, a frame with its rows: `display_scores`),
        as `frame[frame["run"].isin(runs)]` gives them -- same rows, order and index -- taken as the
        runs' blocks of rows (a run's rows are consecutive) instead of comparing four million run
        names at 200 runs."""
        frame = self.scores if frame is None else frame
        bounds = self._run_bounds()
        if bounds is None or len(frame) != len(self.scores):
            return frame[frame["run"].isin(list(runs))]
        spans = sorted(bounds[r] for r in set(runs) if r in bounds)
        if not spans:
            return frame.iloc[0:0]
        # slices, not a take: the string columns are a chunk per run, and taking rows from two hundred
        # chunks copied every chunk (seconds at 200 runs); a slice and a concatenation copy none
        return frame.iloc[spans[0][0]:spans[0][1]] if len(spans) == 1 else pd.concat([frame.iloc[a:b] for a, b in spans])

    def _run_bounds(self) -> dict[str, tuple[int, int]] | None:
        """Run name -> (first row, end) of its rows in `scores`; None when some run's rows are not
        consecutive (then `rows_of` compares names)."""
        if self._bounds is None:
            if self._run_codes is None:
                self._run_codes = score_run_codes(self.scores)
            codes, names = self._run_codes
            if not len(codes):
                self._bounds = {}
                return self._bounds
            starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
            ends = np.r_[starts[1:], len(codes)]
            run_at = codes[starts]
            if len(set(run_at.tolist())) != len(run_at):
                self._bounds = False
            else:
                self._bounds = {names[c]: (int(a), int(b)) for c, a, b in zip(run_at.tolist(), starts, ends)}
        return self._bounds if isinstance(self._bounds, dict) else None

    def breakdown(self, field_name: str, runs: list[str] | None = None) -> pd.DataFrame:
        """`breakdown` of every run over the questions it attempted (a missing answer is no 0 here: it
        is no answer). With `runs` whose questions differ (`shared`), over the questions they all
        attempted, so that their bars compare the same questions (`chart_note` says so)."""
        common = self.shared(list(runs)) if runs is not None else None
        if common is not None and not common.questions:  # nothing shared: each run over its own questions
            common = None
        key = field_name if common is None or not common.differs else (field_name, tuple(sorted(runs or ())))
        if key not in self._breakdowns:
            scores = self.scores  # built first: building it finds the positions
            positions = self._row_positions()
            if self._run_codes is None:
                self._run_codes = score_run_codes(scores)
            keep = self._row_attempted()
            if common is not None and common.differs:
                ok = positions >= 0
                on = np.zeros(len(positions), dtype=bool)
                on[ok] = common.mask[positions[ok]]
                keep = on if keep is None else keep & on
            if keep is not None:  # rows left out: position -1, as an id not in the gold
                positions = np.where(keep, positions, -1)
            self._breakdowns[key] = breakdown(scores, self.questions, field_name, positions, self._run_codes)
        return self._breakdowns[key]


def filter_fields(questions: pd.DataFrame) -> list[str]:
    """The standard fields, then every other metadata key found in the gold (`meta.<key>`)."""
    return [f for f in FIELDS if f in questions.columns] + [c for c in questions.columns if c.startswith(META)]

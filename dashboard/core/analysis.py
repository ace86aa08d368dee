"""What the pages show for one workspace and profile: the questions (a frame per gold question, held in
the process), and the scored runs -- in the engine (scoring/engine/, through `dashboard.core.scored.Store`),
asked for what a page shows: the leaderboard, breakdowns, the questions runs share, and the rows of
the few runs a page shows (a Compare's two, the explorer's chosen ones) with their texts. No streamlit here.

No frame of every run x question is held: a 1,000-run campaign's rows stay in the engine. Scores stay
fractions in 0..1 in every frame; pages and charts turn them into percentages.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dashboard.core.escape import COPY_CHARS, TABLE_CHARS, clip_where
from dashboard.core.links import FIELDS, META
from dashboard.core.scored import Store, memory_store
from scoring.engine import queries as Q
from scoring.evaluate import RunResult
from scoring.mmlongbench_report import gold_rows
from scoring.mmlongbench_rule import acc_and_f1
from scoring.model import GoldQuestion, ScoreRow, to_str
from scoring.profiles import MMLONGBENCH_PROFILE, Profile, get_profile
from scoring.registry import METRIC_LABELS, METRICS, MISSING_STATUS, is_success_status
from scoring.runner import column_list, compact_columns, prediction_texts
from scoring.slice_fields import (  # noqa: F401  (one definition of length and position; the pages read them here)
    LENGTH_BUCKETS,
    LONGEST,
    PAGE_CATEGORY,
    POSITIONS,
    STANDARD_METADATA,
    QuestionValues,
    context_pages,
    evidence_position,
    length_bucket,
    question_position,
    question_values,
)

RECOMPUTED = "recomputed"
OFFICIAL = "scores loaded, not recomputed"
UNKNOWN = "unknown"
OFFICIAL_SIGNATURE = "official scores (profile not stated)"


class Run:
    """One row of the leaderboard: a scored prediction file (RECOMPUTED), or official scores only (OFFICIAL).

    Its scored rows are in the engine. A recomputed run's RunResult (its records, its predictions) is made
    when a page asks (`result`): the one it was built with, or `rebuild()` -- its prediction file read again
    beside its scores from the engine, kept in a bounded memory (dashboard/core/runs.py). `recomputed` says
    which kind it is without making it; `signature` and `profile_name` are known without it too."""

    def __init__(self, name: str, source: str, file: str, result: RunResult | None = None,
                 official: list[ScoreRow] | None = None, origin: str = "", file_rows: int = 0, *,
                 rebuild: Callable[[], RunResult] | None = None, signature: str = "", profile: str = "") -> None:
        self.name, self.source, self.file = name, source, file
        self.official = list(official or [])
        self.origin = origin  # a harness run: harness, version, task, model arguments, date (shown with its signature)
        self.file_rows = file_rows  # the rows its file held (read, joined or not; 0: not known): how a join is judged
        self._result, self._rebuild = result, rebuild
        self._signature = signature or (result.signature if result is not None else "")
        self._profile = profile or (result.profile.name if result is not None else "")

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.source!r}, {self.file!r})"

    @property
    def recomputed(self) -> bool:
        return self.source == RECOMPUTED

    @property
    def result(self) -> RunResult | None:
        """The run's RunResult (None: official scores only), made on first use when not given."""
        if self._result is not None or self._rebuild is None:
            return self._result
        return self._rebuild()

    @property
    def signature(self) -> str:
        if self._signature:
            return self._signature
        return OFFICIAL_SIGNATURE if not self.recomputed else (self.result.signature if self.result else OFFICIAL_SIGNATURE)

    @property
    def profile_name(self) -> str:
        """The profile a recomputed run was scored with ("" for official scores)."""
        if not self.recomputed:
            return ""
        if not self._profile and self.result is not None:
            self._profile = self.result.profile.name
        return self._profile


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
            "length": length_bucket(pages),  # slice_fields.length_and_position, with the pages counted once
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
    """The profile that says which answers are right: `profile` when given, else the one the recomputed
    runs were scored with (all of one analysis share it), else the default. A run of official scores only
    is read under it (`scoring.profiles.Profile.right_mask`, the one definition)."""
    if profile is not None:
        return get_profile(profile)
    return next((get_profile(r.profile_name) for r in runs if r.recomputed and r.profile_name), get_profile(None))


_STR = pd.StringDtype("pyarrow", na_value=np.nan)  # pandas' default string dtype ("str"), held in Arrow
SCORE_COLUMNS = ["run", "question_id", *METRICS, "status", "prediction", "right"]


BENCH_F1 = "F1 (benchmark, %)"  # MMLongBench-Doc's own F1 (its Acc is Accuracy under its profile)
SHARED_ACC = "Shared Acc (%)"  # Accuracy over the questions every ranked run attempted (when their questions differ)
ATTEMPTED = "Attempted"  # questions a run has a row for (answered or failed): its metrics are over these


def _benchmark_profile(run: Run) -> bool:
    return run.recomputed and run.profile_name == MMLONGBENCH_PROFILE


def benchmark_acc_f1(run: Run, gold: dict[str, GoldQuestion]) -> tuple[float, float] | None:
    """MMLongBench-Doc's Acc and F1 of a run (`scoring.mmlongbench_rule.acc_and_f1` over the questions it
    answered: its per-question scores, the gold `answer`, its `pred`), in 0..1; None for a run
    recomputed under another profile. Official scores (the result files' own `score`) are read as
    that benchmark's scores."""
    if run.recomputed:
        if not _benchmark_profile(run) or run.result is None:
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
    return sig.replace("|missing:scored|", "|missing:ignored|") if missing and run.recomputed else sig


BOARD_COLUMNS = ["Run", "Source", "Questions", "Accuracy (%)", "Token F1 (%)", "ANLS (%)", ATTEMPTED, "Answered", "Missing",
                 "Failed", "Signature"]


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


def top_runs(board: pd.DataFrame, metric: str, n: int = 10, keep: tuple[str, ...] = ()) -> list[str]:
    """The n best runs of a leaderboard by `metric` (a METRICS name), plus the runs in `keep`
    (baselines), in leaderboard order."""
    col = METRIC_LABELS[metric] + " (%)"
    best = set(board.sort_values(col, ascending=False, kind="stable")["Run"].head(n)) | set(keep)
    return [r for r in board["Run"] if r in best]


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

MEMO = 24  # frames of a few runs (rows, breakdowns, shared questions) kept per analysis
LIGHT_MEMO = 32  # small values a page derives from the analysis alone (`Analysis.remember`)


class _Memo:
    """A small memo of an analysis's frames, least recently used out first, safe across sessions' threads: each built once."""

    def __init__(self, capacity: int = MEMO) -> None:
        self.capacity = capacity
        self._items: OrderedDict[object, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[object, threading.RLock] = {}  # key -> held while its value is built

    def get(self, key: object, build: Callable[[], Any]) -> Any:
        """The value kept under `key`, else `build()`'s, built once: a thread asking for a key being built waits for it."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            building = self._building.setdefault(key, threading.RLock())
        with building:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
            try:
                value = build()
            except BaseException:
                with self._lock:
                    self._building.pop(key, None)
                raise
            with self._lock:  # kept and no longer building at once: a thread arriving now finds it
                self._building.pop(key, None)
                self._items[key] = value
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
        return value


@dataclass
class Analysis:
    """Everything the pages show for one workspace and profile: the runs, the gold and its question frame
    (in the process), and `store` -- the engine holding the runs' scored rows, asked for what a page shows.
    Built once per (workspace, profile, runs) and cached; treated as read-only (its memos aside)."""

    runs: list[Run]
    store: Store
    gold: dict[str, GoldQuestion] = field(default_factory=dict)  # question id -> its gold (benchmark_acc_f1)
    # document id -> pages as documents.jsonl declares them: the finder's length and position, as the command
    # line reads them (scoring/slice_fields.py); the question frame's columns also count a PDF's pages
    declared_pages: dict[str, int | None] = field(default_factory=dict)
    _questions: pd.DataFrame | None = None  # built on first use: `questions`
    _later_questions: Callable[[], pd.DataFrame] | None = None
    _facts: dict[str, dict] | None = None  # run -> the engine's leaderboard row (counts, means, extra ids)
    _leaderboard: pd.DataFrame | None = None
    _joins: dict[str, Join] | None = None
    _field_options: dict[str, list[str]] | None = None
    _memo: _Memo = field(default_factory=_Memo, repr=False, compare=False)
    _light: _Memo = field(default_factory=lambda: _Memo(LIGHT_MEMO), repr=False, compare=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    _board_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def build(cls, runs: list[Run], gold: list[GoldQuestion], page_counts: dict[str, int | None],
              profile: str | Profile | None = None, declared_pages: dict[str, int | None] | None = None,
              store: Store | None = None, questions: pd.DataFrame | None = None,
              later_questions: Callable[[], pd.DataFrame] | None = None) -> Analysis:
        """`store`: where the runs' rows are (the app's engine, every run ingested there); without one, the
        runs are held in memory (their results, their official rows) and are ingested into DuckDB in memory
        (`scored.memory_store`), read by `profile` (the one in force, which reads the runs of official scores).
        `questions`: the question frame, when it is made already; else it is made on first use
        (`later_questions`, the app's shared one, or `question_frame`): the leaderboard does not need it."""
        declared = dict(declared_pages or {})
        if store is None:
            store = memory_store(runs, gold, page_counts, declared, frame_profile(runs, profile))
        built = later_questions or functools.cache(lambda: question_frame(gold, page_counts))
        return cls(runs, store, gold={q.qid: q for q in gold}, declared_pages=declared, _questions=questions,
                   _later_questions=None if questions is not None else built)

    # ------------------------------------------------------------------ the questions

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
    def question_count(self) -> int:
        """How many gold questions (without building `questions`: the gold's ids are distinct)."""
        return len(self._questions) if self._questions is not None else len(self.gold)

    @property
    def gold_ids(self) -> set[str]:
        """The gold's question ids (the question frame's index; read from the gold while it is not built)."""
        return set(self._questions.index) if self._questions is not None else set(self.gold)

    def remember(self, key: object, build: Callable[[], Any], questions: pd.DataFrame | None = None) -> Any:
        """A small value a page derives from this analysis alone -- its runs' scores and its question frame, which
        never change -- such as a digest, a pair's flip table or the finder's scope of a run: built once (by one
        session while the others wait) and kept, LIGHT_MEMO of them, least recently used out first, apart from
        the frames' memo so that keeping them never pushes out a frame. Every page rerun asked them again.
        `questions`, when given, is the question frame the value rests on: only the analysis's own is kept on;
        another (a page's filtered or tagged frame) is built every time."""
        if questions is not None and questions is not self.questions:
            return build()
        return self._light.get(key, build)

    def question_values(self) -> QuestionValues:
        """Each gold question's slice-field values, read from the gold once (with the declared page counts, as the
        command line reads them): `.fields(ids, extra)` is `slice_fields` of those questions, for any subset."""
        return self._memo.get("question values", lambda: question_values(list(self.gold.values()), self.declared_pages))

    def _gold_array(self) -> pa.Array:
        """The gold's question ids in gold order (the engine's positions), as Arrow."""
        return self._memo.get("gold ids", lambda: pa.array(list(self.gold), pa.string()))

    # ------------------------------------------------------------------ the runs

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
        if not run.recomputed or run.result is None:
            raise KeyError(f"run {name!r} has official scores only: it was not recomputed")
        return run.result

    def facts(self) -> dict[str, dict]:
        """Run name -> what the engine's summaries say of it (queries.leaderboard: questions attempted, the
        metrics' means, right, answered, missing, failed, extra_ids, extra_example), one query for every run."""
        if self._facts is None:
            with self._lock:
                if self._facts is None:
                    names = {v: k for k, v in self.store.ids.items()}
                    with self.store.read() as con:
                        rows = Q.leaderboard(con, run_ids=list(self.store.ids.values()))
                    self._facts = {names[int(r["run_id"])]: r for r in rows if int(r["run_id"]) in names}
        return self._facts

    def _fact(self, name: str) -> dict:
        return self.facts().get(name) or {"questions": 0, "attempted": 0, "answered": 0, "missing": 0, "failed": 0,
                                          "right": 0, "extra_ids": 0, "extra_example": "",
                                          **{m: 0.0 for m in METRICS}}

    def coverage(self, name: str) -> dict[str, int]:
        """How many gold questions run `name` answered (a success status), failed (an error, a timeout) and is
        missing (no row for it). It attempted the answered and the failed ones."""
        f = self._fact(name)
        attempted = int(f["attempted"])
        return {"answered": int(f["answered"]), "missing": self.question_count - attempted, "failed": int(f["failed"])}

    def joins(self) -> dict[str, Join]:
        """Run name -> how it joins the gold (computed once)."""
        if self._joins is None:
            gold = self.gold_ids
            out = {}
            for r in self.runs:
                if r.recomputed:
                    f = self._fact(r.name)
                    matched, extra = int(f["attempted"]), int(f.get("extra_ids") or 0)
                    out[r.name] = Join(r.name, matched, len(gold), str(f.get("extra_example") or ""),
                                       r.file_rows or (matched + extra))
                else:
                    ids = {s.qid for s in r.official}
                    out[r.name] = Join(r.name, len(ids & gold), len(gold),
                                       next((s.qid for s in r.official if s.qid not in gold), ""), r.file_rows or len(ids))
            self._joins = out
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
        """One row per ranked run (runs that match no gold question are left out, `not_ranked`): the three
        metrics in % over the questions it attempted (answered or failed: a run of 40 questions beside
        1,082 is scored on its 40) -- from the engine's summaries --, how many it attempted, answered,
        missed and failed, and its signature. When a run is scored under the mmlongbench-doc profile,
        every run also gets the benchmark's own F1 in % (BENCH_F1; empty for a run under another profile).
        When the runs attempted different questions, SHARED_ACC is each one's Accuracy over those they all
        attempted (`shared`), and the board is ranked by it (nan and ranked by Accuracy when they share none).
        Computed once; a copy, which callers may change."""
        with self._board_lock:  # once: a second session (or the server's warm) waits for the first's board, not a second build
            if self._leaderboard is None:
                ranked = set(self.ranked_names)
                chosen = [r for r in self.runs if r.name in ranked]
                rows = []
                for run in chosen:
                    f, cover = self._fact(run.name), self.coverage(run.name)
                    rows.append({"Run": run.name, "Source": run.source, "Questions": int(f["questions"]),
                                 **{METRIC_LABELS[m] + " (%)": 100 * float(f[m]) for m in METRICS},
                                 ATTEMPTED: cover["answered"] + cover["failed"], **{k.capitalize(): v for k, v in cover.items()},
                                 "Signature": board_signature(run, cover["missing"]) + (f"\nsource: {run.origin}" if run.origin else "")})
                board = pd.DataFrame(rows, columns=BOARD_COLUMNS)
                if any(_benchmark_profile(r) for r in chosen):
                    pairs = [benchmark_acc_f1(r, self.gold) for r in chosen]
                    board.insert(board.columns.get_loc("ANLS (%)") + 1, BENCH_F1, [100 * p[1] if p else float("nan") for p in pairs])
                board = board.sort_values("Accuracy (%)", ascending=False, kind="stable").reset_index(drop=True)
                common = self.shared([r.name for r in chosen])
                if common.differs:
                    means = self._means_over(list(board["Run"]), common) if common.questions else {}
                    board.insert(board.columns.get_loc("ANLS (%)") + 1, SHARED_ACC,
                                 [means.get(name, float("nan")) * 100 if common.questions else float("nan") for name in board["Run"]])
                    if common.questions:
                        board = board.sort_values(SHARED_ACC, ascending=False, kind="stable").reset_index(drop=True)
                self._leaderboard = board
        return self._leaderboard.copy()

    def _means_over(self, names: list[str], common: Shared, metric: str = "accuracy") -> dict[str, float]:
        ids = {self.store.ids[n]: n for n in names if n in self.store.ids}
        with self.store.read() as con:
            got = Q.means_over(con, list(ids), np.flatnonzero(common.mask))
        return {ids[r]: float(v[metric]) for r, v in got.items()}

    # ------------------------------------------------------------------ what each run attempted

    def values(self, name: str) -> dict[str, np.ndarray]:
        """Run `name` over the gold questions (gold order): its metrics (nan where it has no row), and
        is_right, attempted, failed (queries.run_values; kept for a few runs)."""
        run_id = self.store.id_of(name)

        def build() -> dict[str, np.ndarray]:
            if run_id is None:
                n = self.question_count
                return {**{m: np.full(n, np.nan) for m in METRICS},
                        **{k: np.zeros(n, dtype=bool) for k in ("is_right", "attempted", "failed", "present")}}
            with self.store.read() as con:
                return Q.run_values(con, run_id, self.question_count)

        return self._memo.get(("values", name, run_id), build)

    def attempted(self, name: str) -> np.ndarray:
        """Over the gold questions (gold order, the question frame's): whether run `name` attempted
        each -- has a row for it, answered or failed."""
        self.run_of(name)
        return self.values(name)["attempted"]

    def mean_on(self, name: str, metric: str, mask: np.ndarray) -> float:
        """Run `name`'s mean `metric` over the gold questions of `mask` (gold order) it attempted."""
        got = self.values(name)
        values = got[metric][mask & got["attempted"]]
        return float(values.mean()) if len(values) else float("nan")

    def shared(self, names: list[str]) -> Shared:
        """The questions every one of these runs attempted, and whether some run attempted others."""
        total = self.question_count
        if not names:
            return Shared(0, total, total, False, np.ones(total, dtype=bool))
        joins = self.joins()
        if all(joins[n].matched == total for n in names if n in joins):  # the usual case: nothing to align
            return Shared(len(names), total, total, False, np.ones(total, dtype=bool))

        def build() -> Shared:
            for n in names:
                self.run_of(n)
            # a run that attempted every question takes none away: only the others' rows are read (at 1,000 runs
            # x 20,000 questions, 224 runs partial: 4.5 M rows scanned instead of 20 M)
            partial = [n for n in names if n not in joins or joins[n].matched != total]
            with self.store.read() as con:
                positions = Q.attempted_by_all(con, self.store.ids_of(partial))
            mask = np.zeros(total, dtype=bool)
            mask[positions] = True
            count = len(positions)
            return Shared(len(names), count, total, any(joins[n].matched != count for n in names if n in joins), mask)

        return self._memo.get(("shared", tuple(sorted(set(names)))), build)

    # ------------------------------------------------------------------ the rows of a few runs

    def _frame(self, table: pa.Table) -> pd.DataFrame:
        """The score rows of an engine table (queries.rows): run, question_id, metrics, status, prediction
        ("" where the run has no answer), right -- and `attempted`."""
        names = {v: k for k, v in self.store.ids.items()}
        run_ids = table.column("run_id").to_numpy()
        order = sorted(set(run_ids.tolist()))
        codes = np.searchsorted(np.asarray(order, dtype=np.int64), run_ids) if len(run_ids) else np.zeros(0, dtype=np.int64)
        run = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array([names[r] for r in order],
                                                                                         pa.string())).cast(pa.string())
        q = table.column("q").combine_chunks() if table.num_rows else pa.array([], pa.int32())
        ids = self._gold_array().take(q) if table.num_rows else pa.array([], pa.string())
        prediction = pc.fill_null(table.column("prediction"), "") if "prediction" in table.column_names else \
            pa.nulls(table.num_rows, pa.string()).fill_null("")
        return pd.DataFrame({
            "run": pd.array(pa.chunked_array([run]), dtype=_STR),
            "question_id": pd.array(pa.chunked_array([ids]), dtype=_STR),
            **{m: table.column(m).to_numpy().astype(np.float64, copy=False) for m in METRICS},
            "status": pd.array(table.column("status"), dtype=_STR),
            "prediction": pd.array(prediction, dtype=_STR),
            "right": table.column("is_right").to_numpy().astype(bool, copy=False),
            "attempted": table.column("attempted").to_numpy().astype(bool, copy=False),
        })

    def _ordered(self, runs) -> list[str]:
        """These runs in the analysis's order (`runs`' order), each once."""
        wanted = set(runs)
        return [r.name for r in self.runs if r.name in wanted]

    def rows_of(self, runs) -> pd.DataFrame:
        """The score rows of these runs (a run after another, in the analysis's order; each in gold order):
        run, question_id, accuracy, token_f1, anls, status, prediction, right -- every gold question of a
        recomputed run (a missing one with status "missing", scored 0), the rows of official scores. Read
        from the engine with their texts (kept for a few sets of runs)."""
        names = self._ordered(runs)

        def build() -> pd.DataFrame:
            with self.store.read() as con:
                table = Q.rows(con, self.store.ids_of(names))
            return self._frame(table)

        return self._memo.get(("rows", tuple(names)), build)[SCORE_COLUMNS]

    def display_rows(self, runs) -> tuple[pd.DataFrame, bool]:
        """`rows_of(runs)` with the predictions longer than COPY_CHARS cut to TABLE_CHARS (the table cuts the
        rest on the rows it shows), and whether any was cut (a CSV then reads them whole)."""
        names = self._ordered(runs)

        def build() -> tuple[pd.DataFrame, bool]:
            shown = self.rows_of(names)
            if not len(shown):
                return shown, False
            lengths = shown["prediction"].str.len()
            huge = (lengths > COPY_CHARS).fillna(False).to_numpy(dtype=bool)
            if not huge.any():
                return shown, False
            return shown.assign(prediction=clip_where(shown["prediction"], huge, TABLE_CHARS)), True

        return self._memo.get(("display", tuple(names)), build)

    def attempted_scores(self, names: list[str], shared: bool = True) -> tuple[pd.DataFrame, Shared]:
        """The score rows of these runs on the questions they attempted -- with `shared`, only those
        every one of them attempted (`shared`): what compares them on the same questions."""
        common = self.shared(names)
        frame = self.rows_of(names)
        keep = (frame["status"].astype(str) != MISSING_STATUS).to_numpy(dtype=bool, copy=True) if len(frame) \
            else np.zeros(0, bool)
        if shared and common.differs and len(frame):
            pos = self.questions.index.get_indexer(frame["question_id"])
            on = np.zeros(len(pos), dtype=bool)
            ok = pos >= 0
            on[ok] = common.mask[pos[ok]]
            keep &= on
        return (frame if keep.all() else frame[keep]), common

    def right_runs(self, qid: str) -> set[str]:
        """The runs whose answer to question `qid` is right (the profile's one definition)."""
        pos = self.questions.index.get_indexer([qid])[0] if len(self.questions) else -1
        if pos < 0:
            return set()
        names = {v: k for k, v in self.store.ids.items()}
        with self.store.read() as con:
            return {names[r] for r in Q.right_runs(con, list(names), int(pos))}

    def right_sets(self, runs: Sequence[str] | None = None) -> dict[str, set[str]]:
        """Run name -> the question ids it got right (every run, or these)."""
        chosen = self.run_names if runs is None else list(runs)
        names = {self.store.ids[n]: n for n in chosen if n in self.store.ids}
        ids = list(self.gold)
        with self.store.read() as con:
            got = Q.right_rows(con, list(names))
        return {names[r]: {ids[q] for q in qs.tolist()} for r, qs in got.items()}

    def scored_ids(self, names: Sequence[str]) -> tuple[int, ...]:
        """The engine's run ids of these recomputed runs, in this order: what a result built from their rows is
        keyed by (a changed file is a new ingest, with a new id). A KeyError, as `result_of`'s, for a run that is
        not loaded or has official scores only."""
        out = []
        for name in names:
            run = self.run_of(name)
            run_id = self.store.id_of(name)
            if not run.recomputed or run_id is None:
                raise KeyError(f"run {name!r} has official scores only: it was not recomputed")
            out.append(run_id)
        return tuple(out)

    def checkpoint_matrix(self, names: Sequence[str], ids: Sequence[str], metrics: Sequence[str]) -> dict[str, np.ndarray]:
        """These recomputed runs (rows, in this order) over the questions `ids` (columns, in this order):
        each metric's scores (0 where a run holds no row), `attempted` and `is_right` (the profile's one
        definition), read from the engine (queries.checkpoint_matrix). An id the gold does not hold is a
        column no run attempted."""
        run_ids = self.scored_ids(names)
        with self.store.read() as con:
            return Q.checkpoint_matrix(con, run_ids, self._gold_positions(ids), metrics)

    def _gold_positions(self, ids: Sequence[str]) -> np.ndarray:
        """Each question id's gold position (the engine's q), -1 for an id the gold does not hold."""
        if not len(ids):
            return np.zeros(0, np.int64)
        gold = self._memo.get("gold index", lambda: pd.Index(list(self.gold)))
        return gold.get_indexer(pd.Index([str(q) for q in ids], dtype=object))

    def answer(self, name: str, qid: str) -> dict[str, Any] | None:
        """Recomputed run `name`'s row for question `qid`, read from the engine for that one row
        (queries.answer): its metrics, is_right, attempted, failed, status and prediction (None where it has
        no answer); None when the run holds no row for it or the gold has no such question. A KeyError, as
        `scored_ids`', for a run not loaded or of official scores only."""
        (run_id,) = self.scored_ids([name])
        pos = int(self._gold_positions([qid])[0])
        if pos < 0:
            return None
        with self.store.read() as con:
            return Q.answer(con, run_id, pos)

    def status_counts(self) -> dict[str, dict[str, int]]:
        """Run name -> status -> the rows it attempted with it (every run)."""
        names = {v: k for k, v in self.store.ids.items()}
        out: dict[str, dict[str, int]] = {n: {} for n in self.run_names}
        with self.store.read() as con:
            for r in Q.status_counts(con, list(names)):
                out.setdefault(names[int(r["run_id"])], {})[str(r["status"])] = int(r["count"])
        return out

    # ------------------------------------------------------------------ fields and breakdowns

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

    def _labels(self, field_name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """A field's labels (sorted) and its (gold position, label code) pairs, as the breakdowns count them."""
        def build() -> tuple[list[str], np.ndarray, np.ndarray]:
            labels, per_question = _question_labels(self.questions[field_name], field_name)
            counts = np.fromiter((len(v) for v in per_question), np.int64, len(per_question))
            q = np.repeat(np.arange(len(per_question), dtype=np.int64), counts)
            code = np.fromiter((k for v in per_question for k in v), np.int64, int(counts.sum()))
            return labels, q, code

        return self._memo.get(("labels", field_name), build)

    def breakdown(self, field_name: str, runs: list[str] | None = None) -> pd.DataFrame:
        """Mean of each metric per (run, label of field_name) over the questions each run attempted (a missing
        answer is no 0 here: it is no answer), sorted by run, then label: run, label, count, the metrics. A
        MULTI_LABEL field (evidence_source, page_category) counts a question once per label. With `runs`
        (those runs only) whose questions differ (`shared`), over the questions they all attempted, so that
        their bars compare the same questions (`chart_note` says so). From the engine's summaries where it
        coded the field, else by the page's labels joined with the runs' rows in the engine."""
        common = self.shared(list(runs)) if runs is not None else None
        if common is not None and not common.questions:  # nothing shared: each run over its own questions
            common = None
        differs = common is not None and common.differs
        names = self.run_names if runs is None else self._ordered(runs)

        def build() -> pd.DataFrame:
            ids = self.store.ids_of(names)
            by_id = {self.store.ids[n]: n for n in names if n in self.store.ids}
            if not differs and field_name in self.store.fields:
                with self.store.read() as con:
                    got = Q.breakdown(con, field_name, run_ids=ids)
                rows = [(by_id[int(r["run_id"])], str(r["label"]), int(r["count"]), *(r[m] for m in METRICS)) for r in got]
            else:
                labels, q, code = self._labels(field_name)
                with self.store.read() as con:
                    got = Q.breakdown_by(con, ids, q, code,
                                         positions=np.flatnonzero(common.mask) if differs and common is not None else None)
                rows = [(by_id[r["run_id"]], labels[r["code"]], r["count"], *(r[f"sum_{m}"] / r["count"] for m in METRICS))
                        for r in got]
            rows.sort(key=lambda r: (r[0], r[1]))
            return pd.DataFrame({"run": pd.array([r[0] for r in rows], dtype=_STR),
                                 "label": pd.array([r[1] for r in rows], dtype=_STR),
                                 "count": np.array([r[2] for r in rows], dtype=np.int64),
                                 **{m: np.array([r[3 + k] for r in rows], dtype=np.float64) for k, m in enumerate(METRICS)}})

        return self._memo.get(("breakdown", field_name, tuple(names), differs), build)

    def breakdown_by_labels(self, member: pd.Series, runs: Sequence[str] | None = None) -> pd.DataFrame:
        """A breakdown by labels the page gives the questions (`member`: question id -> its labels, a list;
        a question once per label -- the saved slices): run, label, count and each metric's mean over the
        questions each run (every run, or these) attempted, sorted by run, then label."""
        names = self.run_names if runs is None else self._ordered(runs)
        labels = member.explode().dropna()
        pos = self.questions.index.get_indexer(labels.index) if len(labels) else np.zeros(0, dtype=np.intp)
        keep = pos >= 0
        text = labels.astype(str).to_numpy(dtype=object)[keep]
        shown = sorted(set(text.tolist()))
        index = {x: i for i, x in enumerate(shown)}
        code = np.fromiter((index[x] for x in text), np.int64, len(text))
        by_id = {self.store.ids[n]: n for n in names if n in self.store.ids}
        with self.store.read() as con:
            got = Q.breakdown_by(con, list(by_id), pos[keep], code)
        rows = sorted(((by_id[r["run_id"]], shown[r["code"]], r["count"], *(r[f"sum_{m}"] / r["count"] for m in METRICS))
                       for r in got), key=lambda r: (r[0], r[1]))
        return pd.DataFrame({"run": [r[0] for r in rows], "label": [r[1] for r in rows],
                             "count": np.array([r[2] for r in rows], dtype=np.int64),
                             **{m: np.array([r[3 + k] for r in rows], dtype=np.float64) for k, m in enumerate(METRICS)}},
                            columns=["run", "label", "count", *METRICS])


def remembered(an: Any, key: object, build: Callable[[], Any], questions: pd.DataFrame | None = None) -> Any:
    """`Analysis.remember` where the analysis can remember (the pages' tests hand in small stand-ins that
    cannot): the one place that rule is written."""
    remember = getattr(an, "remember", None)
    return build() if remember is None else remember(key, build, questions)


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



def filter_fields(questions: pd.DataFrame) -> list[str]:
    """The standard fields, then every other metadata key found in the gold (`meta.<key>`)."""
    return [f for f in FIELDS if f in questions.columns] + [c for c in questions.columns if c.startswith(META)]

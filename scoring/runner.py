"""Scoring many runs at once on every core, with one worker pool for the life of the process.

`evaluate()` scores one run and, for a large one, starts a pool of its own. A campaign of fifty
runs scored that way starts fifty pools, and under Streamlit every worker also imports the
caller's `__main__` (the streamlit CLI, or the app script that Streamlit installs as
`__main__`). Here:

- `plan(gold, predictions)` is evaluate's join (gold order; missing, extra ids) without scoring;
- `score_runs(gold, runs, profile)` scores every run's items in chunks on one shared pool
  (forkserver, one worker per core, started on first use and kept), and yields each run's
  `RunResult` as soon as its chunks are back, so a caller can move a progress bar per run;
- `assemble(...)` builds the `RunResult` from decisions computed earlier (a worker's, or a
  cache's), exactly as `evaluate()` builds it -- tests pin the equality;
- `decisions_of(result)` is the other direction: the plain tuples a cache stores.

Workers import `scoring` only: the pool's forkserver preloads `scoring.runner` instead of
`__main__`, and worker processes are started while `sys.modules["__main__"]` is a bare module,
so multiprocessing has no main script to re-run in them. If workers cannot start, runs are
scored in this process.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import chain
from typing import Any, cast

from ._gc import paused_gc
from .aggregate import bucket, run_groups
from .evaluate import PARALLEL_MIN, RunResult, extra_prediction_problems
from .metrics import Judgement, QuestionResult, column_scores, decide
from .model import GoldQuestion, Prediction
from .profiles import Profile, get_profile, signature
from .registry import METRICS, MISSING_STATUS, is_success_status
from .workers import bare_main, discard_shared_pool, shared_pool

__all__ = ["Plan", "plan", "assemble", "assemble_columns", "columns_of", "compact_columns", "in_columns", "column_list", "overall_of",
           "record_of", "prediction_texts", "predictions_by_id", "gold_positions", "decisions_of", "score_runs", "shutdown", "StoredRunResult", "CHUNK"]

AHEAD = 4  # runs whose chunks are on the shared pool at once (score_runs)
CHUNK = 4_000  # questions per task: large enough to amortise pickling, small enough to balance two cores
Decision = tuple  # (accuracy, token_f1, anls, decided_by, threshold, details), as scoring.metrics.decide returns
Scores = tuple[list[float], list[float], list[float]]  # (accuracy, token_f1, anls) of each question, in order


class Plan:
    """evaluate()'s join of one run with the gold, before scoring: the questions scored (gold
    order; without the missing ones under ignore_missing) and their predictions (None: missing),
    as two aligned lists."""

    __slots__ = ("questions", "predictions", "missing", "extras", "prediction_count")

    def __init__(self, questions: list[GoldQuestion], predictions: list[Prediction | None], missing: list[str],
                 extras: list[Prediction], prediction_count: int) -> None:
        self.questions, self.predictions = questions, predictions
        self.missing, self.extras, self.prediction_count = missing, extras, prediction_count

    @property
    def todo(self) -> list[tuple[GoldQuestion, Prediction | None]]:
        return list(zip(self.questions, self.predictions))

    @property
    def question_ids(self) -> list[str]:
        return [q.qid for q in self.questions]

    @property
    def statuses(self) -> list[str | None]:
        """The status each question is scored with (None: no prediction)."""
        return [None if pr is None else pr.status for pr in self.predictions]

    @paused_gc()
    def items(self) -> list[tuple]:
        return [(None, None, q.answers, q.answer_format, q.verification_rule) if pr is None
                else (pr.text, pr.status, q.answers, q.answer_format, q.verification_rule)
                for q, pr in zip(self.questions, self.predictions)]


@paused_gc()
def plan(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], *, ignore_missing: bool = False) -> Plan:
    by_id = {pr.qid: pr for pr in predictions}
    questions = list(gold)
    aligned = [by_id.get(q.qid) for q in questions]
    missing = [q.qid for q, pr in zip(questions, aligned) if pr is None]
    if missing and ignore_missing:
        kept = [(q, pr) for q, pr in zip(questions, aligned) if pr is not None]
        questions, aligned = [q for q, _ in kept], [pr for _, pr in kept]
    gold_ids = {q.qid for q in gold}
    extras = [pr for pr in predictions if pr.qid not in gold_ids]
    return Plan(questions, aligned, missing, extras, len(by_id))


_ZERO, _ONE = 0.0, 1.0


def _shared(x: float) -> float:
    return x if 0.0 < x < 1.0 else (_ONE if x else _ZERO)


@paused_gc()
def assemble(gold: Sequence[GoldQuestion], the_plan: Plan, decisions: Sequence[Decision], *, profile: str | Profile,
             name: str = "run", ignore_missing: bool = False, prediction_field: str | None = None) -> RunResult:
    """The RunResult that evaluate() returns for this plan, from its decisions (one per planned question)."""
    if len(decisions) != len(the_plan.questions):
        raise ValueError(f"{len(decisions)} decisions for {len(the_plan.questions)} questions")
    p = get_profile(profile)
    results = [
        QuestionResult(q, pr, Judgement(
            None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
            MISSING_STATUS if pr is None else pr.status, p, _shared(acc), _shared(f1), _shared(an), rule, threshold, details))
        for q, pr, (acc, f1, an, rule, threshold, details) in zip(the_plan.questions, the_plan.predictions, decisions)
    ]
    return RunResult(results=results, **_run_fields(gold, the_plan, p, name, ignore_missing, prediction_field))


def _run_fields(gold: Sequence[GoldQuestion], the_plan: Plan, p: Profile, name: str, ignore_missing: bool,
                prediction_field: str | None) -> dict:
    """RunResult's fields besides the records, as evaluate() sets them."""
    return dict(
        name=name,
        profile=p,
        signature=signature(p, ignore_missing=ignore_missing, prediction_field=prediction_field),
        gold_count=len(gold),
        prediction_count=the_plan.prediction_count,
        missing_ids=list(the_plan.missing),
        extra_ids=[pr.qid for pr in the_plan.extras],
        ignore_missing=ignore_missing,
        problems=extra_prediction_problems(the_plan.extras),
        groups=run_groups(gold),
    )


# ----------------------------------------------------------------------------- columns and lazy records

COLUMNS = ("question_id", "status", "accuracy", "token_f1", "anls", "answered", "prediction")


def columns_of(result: RunResult) -> dict[str, list]:
    """The run's questions as columns (lists, in question order): question_id, status (as scored:
    "missing" without a prediction), accuracy, token_f1, anls, answered (a prediction was present)
    and prediction (as the release reports it). Kept on the result once computed; a
    `StoredRunResult` has them without building its records."""
    compact = result.__dict__.get("_lens_compact")
    if compact is not None:  # a run held in columns (arrays): lists made for the caller, not kept
        return {k: column_list(v) for k, v in compact.items()}
    cols = result.__dict__.get("_lens_columns")
    if cols is None and "_lens_columns_build" in result.__dict__:  # a StoredRunResult's, made when first asked for
        cols = result.__dict__["_lens_columns"] = result.__dict__["_lens_columns_build"]()
    if cols is None:
        rs = result.results
        cols = {
            "question_id": [r.question.qid for r in rs],
            "status": [r.judgement.status for r in rs],
            "accuracy": [r.judgement.accuracy for r in rs],
            "token_f1": [r.judgement.token_f1 for r in rs],
            "anls": [r.judgement.anls for r in rs],
            "answered": [r.prediction is not None for r in rs],
            "prediction": [r.judgement.reported_prediction for r in rs],
        }
        result.__dict__["_lens_columns"] = cols
    return cols


def column_list(values) -> list:
    """A column as a list: a list as it is, a numpy array by `tolist`, an Arrow array by `to_pylist`."""
    if isinstance(values, list):
        return values
    if hasattr(values, "to_pylist"):
        return values.to_pylist()
    return values.tolist()


def in_columns(result: RunResult) -> bool:
    """Whether a run is held in columns (`assemble_columns`): its columns are arrays, not lists."""
    return "_lens_compact" in result.__dict__


def compact_columns(result: RunResult) -> dict:
    """The run's columns as it holds them: for a run held in columns (`assemble_columns`), arrays --
    numpy for the scores, `answered` and `status`, whatever the caller gave for `question_id` and
    `prediction` (the dashboard gives Arrow arrays shared between runs); else `columns_of`'s lists."""
    compact = result.__dict__.get("_lens_compact")
    return compact if compact is not None else columns_of(result)


def overall_of(result: RunResult) -> dict:
    """`result.overall` (count and the three means, as the release rounds them), from the columns."""
    if result._agg is not None:
        return result._agg[0]
    c = compact_columns(result)
    if sys.version_info < (3, 12) and all(hasattr(c[m], "cumsum") for m in METRICS):
        acc, f1, an = (cast(Sequence[float], _LeftToRight(c[m])) for m in METRICS)
        return bucket(acc, f1, an)  # bucket asks only len() and sum()
    return bucket(column_list(c["accuracy"]), column_list(c["token_f1"]), column_list(c["anls"]))


class _LeftToRight:
    """A numpy column whose `sum()` is Python's: before 3.12, sum() of floats adds them left to right
    in doubles, and so does numpy's cumsum (its last value is that sum, bit for bit), without a
    Python float per question (two hundred runs made twelve million of them for the leaderboard).
    From 3.12 sum() compensates its rounding, and the columns are summed as lists."""

    def __init__(self, values) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):  # sum() starts from 0 and adds each item: give it the one total
        yield float(self.values.cumsum()[-1]) if len(self.values) else 0.0


def record_of(result: RunResult, qid: str) -> QuestionResult | None:
    """The record of one question of a run (None: not one of its questions). A run held in columns
    builds that one record, without the others (`assemble_columns`); any other run is searched."""
    one = result.__dict__.get("_lens_one")
    if one is not None:
        return one(qid)
    return next((r for r in result.results if r.qid == qid), None)


class StoredRunResult(RunResult):
    """A RunResult rebuilt from stored scores: the per-question records (`results`, with their
    Judgements) are built on first access; the leaderboard's figures and `columns_of` come from
    the stored columns without them, so fifty runs of 20,000 questions open in a moment."""

    def __init__(self, *, build, columns: dict[str, list] | Callable[[], dict[str, list]], **fields) -> None:
        self.__dict__["_lens_build"] = build
        self.__dict__["_lens_columns" if isinstance(columns, dict) else "_lens_columns_build"] = columns
        self.__dict__["_lens_lock"] = threading.Lock()
        super().__init__(results=None, **fields)  # type: ignore[arg-type]  # built on first use (`results`)

    @property
    def results(self) -> list[QuestionResult]:
        built = self.__dict__.get("_lens_results")
        if built is None:
            with self.__dict__["_lens_lock"]:
                built = self.__dict__.get("_lens_results")
                if built is None:
                    built = self.__dict__["_lens_results"] = self.__dict__["_lens_build"]()
        return built

    @results.setter
    def results(self, value) -> None:
        if value is not None:
            self.__dict__["_lens_results"] = value

    @property
    def overall(self) -> dict:
        return overall_of(self)

    @property
    def failed_count(self) -> int:
        c = compact_columns(self)
        statuses = column_list(c["status"])
        ok = {st: is_success_status(st) for st in set(statuses)}  # a handful of distinct statuses
        if all(ok.values()):
            return 0
        return sum(1 for a, st in zip(column_list(c["answered"]), statuses) if a and not ok[st])


@paused_gc()
def assemble_columns(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], columns: dict, *,
                     rows: Any, extra_rows: Any, decisions_later: Callable[[], Sequence[Decision]],
                     profile: str | Profile, name: str = "run") -> StoredRunResult:
    """A run held in columns, as the app keeps a scored run: `columns` are `COLUMNS` as arrays (see
    `compact_columns`) in gold order, one per gold question (the app scores every question: no
    ignore_missing), `rows[i]` the position in `predictions` of gold question i's prediction (-1:
    missing), `extra_rows` those of the predictions of no gold question. Nothing per question is
    built here: `results` (every record) when first read, from `decisions_later()` (the stored
    decisions; scored again when they do not read back), and `record_of` one record, judged again
    (the same decision: a store entry's key names the scoring code)."""
    n = len(gold)
    if any(len(v) != n for v in columns.values()) or len(rows) != n:
        raise ValueError(f"columns of another length than the {n} gold questions")
    p = get_profile(profile)
    missing = [gold[i].qid for i in _positions_missing(rows)]
    extras = [predictions[int(k)] for k in extra_rows]

    def the_plan() -> Plan:
        preds: list[Prediction | None] = [None if r < 0 else predictions[int(r)] for r in rows]
        return Plan(list(gold), preds, missing, extras, len(predictions))

    def build() -> list[QuestionResult]:
        pl = the_plan()
        try:
            decisions = decisions_later()
            if len(decisions) != n:
                raise ValueError("stored decisions of another length")
        except ValueError:  # stored details that do not read back: never trusted, scored again here
            decisions = _decide_chunk((p, pl.items()))
        return assemble(gold, pl, decisions, profile=p).results

    def one(qid: str) -> QuestionResult | None:
        i = gold_positions(gold).get(qid)
        if i is None:
            return None
        q, r = gold[i], int(rows[i])
        pr = None if r < 0 else predictions[r]
        acc, f1, an, rule, threshold, details = decide(None if pr is None else pr.text, q.answers, q.answer_format,
                                                       q.verification_rule, None if pr is None else pr.status, p)
        return QuestionResult(q, pr, Judgement(
            None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
            MISSING_STATUS if pr is None else pr.status, p, _shared(acc), _shared(f1), _shared(an), rule, threshold, details))

    result = StoredRunResult(build=build, columns={}, name=name, profile=p,
                             signature=signature(p, ignore_missing=False, prediction_field=None), gold_count=n,
                             prediction_count=len(predictions), missing_ids=missing,
                             extra_ids=[pr.qid for pr in extras], ignore_missing=False,
                             problems=extra_prediction_problems(extras), groups=_groups_of(gold))
    result.__dict__["_lens_compact"] = columns
    result.__dict__["_lens_one"] = one
    result.__dict__["_lens_texts"] = lambda: {gold[i].qid: predictions[int(r)].text for i, r in enumerate(rows) if r >= 0}
    result.__dict__["_lens_predictions"] = _Answered(gold, rows, predictions)
    return result


def _positions_missing(rows) -> list[int]:
    """The positions of the questions without a prediction (`rows` < 0); numpy's when `rows` is an array."""
    if hasattr(rows, "nonzero"):
        return (rows < 0).nonzero()[0].tolist()
    return [i for i, r in enumerate(rows) if r < 0]


class _PerGold:
    """A value computed once per gold list (by identity) and shared by the runs of that gold; the
    last few golds kept (a gold with corrections is another list). Safe between threads."""

    def __init__(self, make: Callable[[Sequence[GoldQuestion]], Any], kept: int = 4) -> None:
        self.make, self.kept = make, kept
        self.memo: list[tuple[Sequence[GoldQuestion], Any]] = []
        self.lock = threading.Lock()

    def __call__(self, gold: Sequence[GoldQuestion]) -> Any:
        with self.lock:
            for g, value in self.memo:
                if g is gold:
                    return value
        value = self.make(gold)
        with self.lock:
            self.memo.append((gold, value))
            del self.memo[:-self.kept]
        return value


# run_groups(gold): two hundred runs of one gold asked it two hundred times
_groups_of: Callable[[Sequence[GoldQuestion]], tuple[str, ...]] = _PerGold(run_groups)
# question id -> position in the gold, one dict per gold list shared by its runs
gold_positions: Callable[[Sequence[GoldQuestion]], dict[str, int]] = _PerGold(
    lambda gold: {q.qid: i for i, q in enumerate(gold)})


class _Answered(Mapping[str, Prediction]):
    """A run in columns' predictions by question id, the questions it answered only; a record is
    built when looked up."""

    def __init__(self, gold: Sequence[GoldQuestion], rows, predictions: Sequence[Prediction]) -> None:
        self._gold, self._rows, self._predictions = gold, rows, predictions

    def __getitem__(self, qid: str) -> Prediction:
        i = gold_positions(self._gold).get(qid)
        r = -1 if i is None else int(self._rows[i])
        if r < 0:
            raise KeyError(qid)
        return self._predictions[r]

    def __iter__(self) -> Iterator[str]:
        return (q.qid for q, r in zip(self._gold, self._rows) if r >= 0)

    def __len__(self) -> int:
        return sum(1 for r in self._rows if r >= 0)


def predictions_by_id(result: RunResult) -> Mapping[str, Prediction]:
    """The run's predictions by question id, for the questions it answered (a run in columns builds
    each record when it is looked up)."""
    got = result.__dict__.get("_lens_predictions")
    if got is not None:
        return got
    return {r.qid: r.prediction for r in result.results if r.prediction is not None}


def prediction_texts(result: RunResult) -> dict[str, str]:
    """Question id -> the prediction's text as read (before the overflow substitution), for every
    question the run answered; a run held in columns builds only these."""
    texts = result.__dict__.get("_lens_texts")
    if texts is not None:
        return texts()
    return {r.qid: r.prediction.text for r in result.results if r.prediction is not None}


def decisions_of(result: RunResult) -> list[Decision]:
    """The decision tuples of a scored run, in its question order (what a cache stores)."""
    out = []
    for r in result.results:
        j = r.judgement
        out.append((j.accuracy, j.token_f1, j.anls, j.decided_by, j.threshold, j.details))
    return out


# ----------------------------------------------------------------------------- the pool


def _decide_chunk(args: tuple[Profile, list[tuple]]) -> list[Decision]:
    profile, items = args
    with paused_gc():
        return [decide(text, answers, fmt, rule, status, profile) for text, status, answers, fmt, rule in items]


def _score_chunk(args: tuple[Profile, list[tuple]]) -> Scores:
    """A chunk's (Accuracy, token F1, ANLS) columns: `metrics.column_scores`, the command line's
    scoring (`columnar.score_columns`), so the app and the command line score alike."""
    profile, items = args
    if not items:
        return [], [], []
    texts, statuses, answers, formats, rules = zip(*items)
    with paused_gc():
        return column_scores(texts, statuses, answers, formats, rules, profile)


def _imported_streamlit() -> bool:
    """Run in a worker: whether it imported streamlit (it must not)."""
    return "streamlit" in sys.modules


def _pool() -> ProcessPoolExecutor | None:
    """The shared pool (scoring/workers.py); a name of its own so that tests can take it away."""
    return shared_pool()


def _discard_pool() -> None:
    discard_shared_pool()


def shutdown() -> None:
    """Stop the shared pool's workers (they are started again on the next use)."""
    discard_shared_pool()


def workers_import_streamlit() -> bool | None:
    """Whether a worker of the shared pool has streamlit imported (None: no pool). For tests and benchmarks."""
    pool = _pool()
    if pool is None:
        return None
    with bare_main():
        fut = pool.submit(_imported_streamlit)
    return fut.result(timeout=120)


def score_runs(gold: Sequence[GoldQuestion], runs: Sequence[tuple[str, Sequence[Prediction]]], *,
               profile: str | Profile = "xldocbench", ignore_missing: bool = False, prediction_field: str | None = None,
               parallel: bool = True, min_parallel: int = PARALLEL_MIN,
               progress: Callable[[int, int, int], None] | None = None, ahead: int = AHEAD,
               make: Callable[[int, Plan, Any], Any] | None = None, columns: bool = False) -> Iterator[tuple[int, Any]]:
    """Score every run (name, predictions) against `gold`; yield (index in `runs`, RunResult) per
    run as it completes, in order. The chunks of `ahead` runs at a time are on the shared pool, so
    both cores stay busy across run boundaries while only those runs' items are held (two hundred
    runs' items at once held gigabytes); fewer than `min_parallel` questions in all are scored in
    this process. `progress(run index, questions done, questions of the run)` is called as each
    chunk of the run being waited for comes back. Each result equals `evaluate(gold, predictions,
    ...)`; with `make`, `make(index, plan, decisions)` is yielded instead (the app keeps runs in columns
    and never builds the records `assemble` makes). With `columns` (and `make`), the runs are scored in
    columns, as the command line scores them (`metrics.column_scores`), and `make(index, plan, scores)`
    gets their (Accuracy, token F1, ANLS) columns: no decision record is made or sent back; a page that
    shows a run's records decides them again when it asks."""
    if columns and make is None:
        raise ValueError("scores in columns need `make`: there are no records to assemble")
    p = get_profile(profile)
    chunk_of = _score_chunk if columns else _decide_chunk
    # a few thousand questions are scored faster here than sent to workers
    pool = _pool() if parallel and len(gold) * len(runs) >= min_parallel else None
    plans: dict[int, Plan] = {}
    pending: dict[int, list[Future]] = {}
    submitted = 0

    def plan_of(k: int) -> Plan:
        return plans.pop(k, None) or plan(gold, runs[k][1], ignore_missing=ignore_missing)

    def submit(upto: int) -> None:
        nonlocal submitted, pool
        while pool is not None and submitted < min(upto, len(runs)):
            k = submitted
            plans[k] = pl = plan(gold, runs[k][1], ignore_missing=ignore_missing)
            items = pl.items()
            try:
                with bare_main():
                    pending[k] = [pool.submit(chunk_of, (p, items[j : j + CHUNK])) for j in range(0, len(items), CHUNK)]
            except (BrokenProcessPool, OSError, RuntimeError):
                _discard_pool()
                pool = None
                _cancel(pending)
            submitted += 1

    try:
        for i, (name, _) in enumerate(runs):
            submit(i + max(1, ahead))
            pl = plan_of(i)
            parts: list | None = None  # the run's chunks' results, in order
            futures = pending.pop(i, None)
            if futures is not None:
                try:
                    parts, done = [], 0
                    for f in futures:
                        parts.append(f.result())
                        done += len(parts[-1][0]) if columns else len(parts[-1])
                        if progress is not None:
                            progress(i, done, len(pl.questions))
                except (BrokenProcessPool, OSError, RuntimeError):
                    # a worker died (or the pool was shut down): score this and the rest here
                    _discard_pool()
                    pool = None
                    _cancel(pending)
                    parts = None
            if parts is None:
                items = pl.items()
                parts = []
                for k in range(0, len(items), CHUNK):
                    parts.append(chunk_of((p, items[k : k + CHUNK])))
                    if progress is not None:
                        progress(i, min(k + CHUNK, len(items)), len(items))
            scored: Any = (tuple(list(chain.from_iterable(part[m] for part in parts)) for m in range(3)) if columns
                           else list(chain.from_iterable(parts)))  # score columns, or decisions
            if make is not None:
                yield i, make(i, pl, scored)
            else:
                yield i, assemble(gold, pl, scored, profile=p, name=name, ignore_missing=ignore_missing,
                                  prediction_field=prediction_field)
    finally:  # the caller stopped early: drop the chunks not started
        _cancel(pending)


def _cancel(pending: dict[int, list[Future]]) -> None:
    for futures in pending.values():
        for f in futures:
            f.cancel()
    pending.clear()

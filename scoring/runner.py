"""Runs held in columns, and their per-question records built only when a page asks.

The app scores its runs in columns (`scoring.evaluate.score_runs(columns=True)`) and keeps them so
(`assemble_columns`): the leaderboard's figures, `columns_of` and `overall_of` read the columns;
`record_of` builds one question's record, `predictions_by_id` and `prediction_texts` a run's
predictions, and `results` every record only when first read (`StoredRunResult`). The record path
itself -- the join, the shared pool, `evaluate` -- is scoring/evaluate.py.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from ._gc import paused_gc
from .aggregate import bucket, run_groups
from .evaluate import Plan, RunResult, assemble, extra_prediction_problems, judged
from .metrics import Decision, QuestionResult, decide
from .model import GoldQuestion, Prediction
from .profiles import Profile, get_profile, signature
from .registry import METRICS, is_success_status

__all__ = ["assemble_columns", "columns_of", "compact_columns", "in_columns", "column_list", "overall_of",
           "record_of", "prediction_texts", "predictions_by_id", "gold_positions", "decisions_of", "StoredRunResult"]


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
            decisions = pl.decisions(p)
        return assemble(gold, pl, decisions, profile=p).results

    def one(qid: str) -> QuestionResult | None:
        i = gold_positions(gold).get(qid)
        if i is None:
            return None
        q, r = gold[i], int(rows[i])
        pr = None if r < 0 else predictions[r]
        return judged(q, pr, decide(None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
                                    None if pr is None else pr.status, p), p)

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

"""The command line's path in columns: one run scored, aggregated and written from the gold's and
the predictions' columns (`loaders.load_gold_columns`, `load_prediction_columns`), in one process.

No per-question object is built: the join is a dict of prediction ids; each distinct (prediction,
status, answers, format, rule) is judged once (`decide`, the one scoring function) and the scores
of a repeated one shared; each breakdown bucket's members are found on columns (each group's
label read once per distinct value) and summed by `aggregate.aggregate_scores`; the rows are
written a batch at a time from columns (`writers.rows_json`, `csv_columns`).
The bytes are those of `RunResult.write_files` and of `bulk` (tests/test_columnar.py compares
them on generated inputs with every format, status and kind of damaged row).

The result is a `StoredRunResult` whose records (`results`) are made only if asked for, by
reading the files again through the record path (`load_gold`, `load_predictions`, `evaluate`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from ._gc import paused_gc
from .aggregate import aggregate_scores, members_of_parts, partition
from .evaluate import extra_prediction_problems
from .loaders import ABSENT, GoldColumns, PredictionColumns
from .metrics import QuestionResult, column_scores
from .model import BREAKDOWNS, to_str, to_str_release
from .profiles import Profile, signature
from .registry import MISSING_STATUS, OVERFLOW_STATUSES, OVERFLOW_TEXT
from .runner import StoredRunResult
from .writers import CSV_COLUMNS, columns_are_safe, csv_columns, csv_string, dicts_of, open_for_writing, rows_json

__all__ = ["Joined", "join", "score_columns", "members_of", "write_columns", "run_columns"]

BATCH = 1_000  # rows encoded per call (small enough for its text to stay in the cache)


class Joined:
    """A run's join with the gold, in columns: `gold_at[k]` is the gold position of the k-th
    question scored (gold order; the missing ones left out under ignore_missing) and `pred_at[k]`
    its prediction's position (None: missing)."""

    __slots__ = ("gold_at", "pred_at", "missing", "extras", "prediction_count")

    def __init__(self, gold_at: list[int] | None, pred_at: list[int | None], missing: list[str], extras: list[int],
                 prediction_count: int) -> None:
        self.gold_at, self.pred_at, self.missing, self.extras = gold_at, pred_at, missing, extras
        self.prediction_count = prediction_count


def join(gold: GoldColumns, preds: PredictionColumns, *, ignore_missing: bool) -> Joined:
    """`runner.plan` on columns. `gold_at` is None when every gold question is scored."""
    at = preds.at if preds.at is not None else dict(zip(preds.qid, range(len(preds.qid))))
    pred_at = list(map(at.get, gold.qid))
    missing = [q for q, k in zip(gold.qid, pred_at) if k is None]
    gold_at = None
    if missing and ignore_missing:
        gold_at = [i for i, k in enumerate(pred_at) if k is not None]
        pred_at = [pred_at[i] for i in gold_at]
    matched = len(gold.qid) - len(missing)
    extras: list[int] = []
    if matched < len(at):  # some prediction id is no gold id (the gold's ids are distinct)
        gold_ids = set(gold.qid)
        extras = [k for k, q in enumerate(preds.qid) if q not in gold_ids]
    return Joined(gold_at, pred_at, missing, extras, len(at))


def _picked(col: list, at: list[int] | None) -> list:
    return col if at is None else [col[i] for i in at]


@paused_gc()
def score_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, profile: Profile
                  ) -> tuple[list[float], list[float], list[float]]:
    """(accuracy, token F1, ANLS) of each question scored, in order: `decide`'s scores
    (`metrics.column_scores`, which is `scores_of` a column at a time)."""
    at = joined.gold_at
    texts, statuses = preds.text, preds.status
    pred_at = joined.pred_at
    if None in pred_at:
        scored = [None if k is None else texts[k] for k in pred_at]
        status = [None if k is None else statuses[k] for k in pred_at]
    else:
        scored = list(map(texts.__getitem__, pred_at))  # type: ignore[arg-type]
        status = list(map(statuses.__getitem__, pred_at))  # type: ignore[arg-type]
    return column_scores(scored, status, _picked(gold.answers, at), _picked(gold.answer_format, at),
                         _picked(gold.verification_rule, at), profile)


# ----------------------------------------------------------------------------- breakdowns


def _text_fn(release: bool) -> Callable[[Any], str]:
    return to_str_release if release else to_str


def _label_reader(gold: GoldColumns, group: str) -> tuple[list, Callable[[int], list[str]]]:
    """(the value each gold question's labels in `group` are made of -- equal values (as keyed by
    `_fast_keys`), equal labels -- and the labels of the question at a position):
    `GoldQuestion.labels` on columns."""
    release, other = gold.release, gold.release_text

    def text_at(i: int) -> Callable[[Any], str]:
        return _text_fn(other.get(i, release))

    if group == "split":
        col = gold.split
        return col, lambda i: [text_at(i)(col[i]) or "unknown"]
    if group == "answer_format":
        raw, given = gold.raw_format, gold.format_given
        return ([r if g else ABSENT for r, g in zip(raw, given)],
                lambda i: [(text_at(i)(raw[i]) if given[i] else "") or "unknown"])
    if group == "question_type":
        types = gold.question_types
        return list(types), lambda i: list(types[i]) or ["unknown"]
    if group == "evidence_source":
        ev = gold.meta["evidence_sources"]

        def sources(i: int) -> list[str]:
            value = ev[i]
            if value is ABSENT or value is None:
                return ["unknown"]
            if not isinstance(value, list):
                value = [value]
            return [s or "unknown" for s in map(text_at(i), value)] or ["unknown"]

        return ev, sources
    col = gold.meta[group]

    def meta_label(i: int) -> list[str]:
        v = col[i]
        if v is ABSENT:
            v = None
        return [v if type(v) is str and v else (text_at(i)(v) or "unknown")]

    return col, meta_label


def _keys(col: list) -> list:
    """Hashable stand-ins for a column's values, equal for values with equal labels: strings as
    they are, lists of strings as tuples, anything else as (type, repr) -- so 1, 1.0 and true stay
    apart, as `aggregate.label_keys` keeps them. A tuple of strings never equals a string nor a
    (type, text) pair."""
    kinds = set(map(type, col))
    if kinds == _STR_ONLY:
        return col
    if list in kinds:
        lists = col if kinds == _LIST_ONLY else [v for v in col if type(v) is list]
        if set(map(type, chain.from_iterable(lists))) <= _STR_ONLY:
            if kinds == _LIST_ONLY:
                return list(map(tuple, col))
            return [tuple(v) if type(v) is list else (v if type(v) is str else _typed(v)) for v in col]
    return [v if type(v) is str else _typed(v) for v in col]


def _typed(value: Any) -> tuple:
    try:
        return type(value), repr(value)
    except RecursionError:  # nested too deeply for repr: a key of its own
        return type(value), id(value)


_STR_ONLY, _LIST_ONLY = {str}, {list}


def members_of(gold: GoldColumns, at: list[int] | None, groups: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """`aggregate.breakdown_members` of the questions scored (gold positions `at`, None: all), in
    columns: group -> label -> ascending positions (a position twice when a question names a label
    twice). Per group the questions are partitioned by key, and the labels read once per key."""
    out = {}
    for g in groups:
        values, labels_at = _label_reader(gold, g)
        keys = values if g == "question_type" else _keys(values)
        if gold.release_text:  # a few questions write their labels otherwise: their keys apart
            keys = [(k, gold.release_text.get(i)) for i, k in enumerate(keys)]
        if at is not None:
            keys = [keys[i] for i in at]
        # each key's labels read once, at the gold position of its first question
        out[g] = members_of_parts(((idx[0] if at is None else at[idx[0]], idx) for idx in partition(keys).values()),
                                  labels_at)
    return out



# ----------------------------------------------------------------------------- the run and its files


def _row_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, acc: list[float], f1: list[float],
                 an: list[float]) -> list[list]:
    """`writers.row_columns` of the questions scored, from columns."""
    at = joined.gold_at
    texts, statuses = preds.text, preds.status
    overflow = OVERFLOW_STATUSES
    pred_at = joined.pred_at
    return [
        _picked(gold.qid, at),
        ["" if k is None else (OVERFLOW_TEXT if statuses[k] in overflow else texts[k]) for k in pred_at],
        [a[0] if a else "" for a in _picked(gold.answers, at)],
        [r if g else "Str" for r, g in zip(_picked(gold.raw_format, at), _picked(gold.format_given, at))],
        [MISSING_STATUS if k is None else statuses[k] for k in pred_at],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in acc],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in f1],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in an],
        _picked(gold.split, at),
        ["unknown" if v is ABSENT else v for v in _picked(gold.meta["domain"], at)],
        ["unknown" if v is ABSENT else v for v in _picked(gold.meta["reasoning_type"], at)],
    ]


def write_columns(run: StoredRunResult, columns: list[list], *, report: str | Path | None, csv_path: str | Path | None,
                  per_question: bool, lens: bool) -> None:
    """The report JSON and the per-question CSV of a run whose rows are `columns` (CSV_COLUMNS
    order): the bytes of `RunResult.write_files`, a batch of rows at a time."""
    n = len(columns[0])
    with paused_gc(), contextlib.ExitStack() as stack:
        csv_fh = stack.enter_context(open_for_writing(csv_path)) if csv_path else None
        json_fh = stack.enter_context(open_for_writing(report)) if report else None
        if csv_fh is not None:
            csv_fh.write(csv_string((), CSV_COLUMNS))
        sep = None
        if json_fh is not None:
            head, sep, tail = run.report_frame(per_question=per_question, lens=lens)
            json_fh.write(head)
        for start in range(0, n, BATCH):
            batch = [col[start : start + BATCH] for col in columns]
            if csv_fh is not None:
                csv_fh.write(csv_columns(batch))
            if json_fh is not None and sep is not None:
                if start:
                    json_fh.write(sep)
                json_fh.write(rows_json(dicts_of(batch), safe=columns_are_safe(batch)))
        if json_fh is not None:
            json_fh.write(tail)


def run_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, *, profile: Profile, name: str,
                ignore_missing: bool, prediction_field: str | None, report: str | Path | None = None,
                csv_path: str | Path | None = None, per_question: bool = True, lens: bool = True) -> StoredRunResult:
    """Score a joined run, write its report and CSV (when named) and return it: `evaluate` +
    `RunResult.write_files`, in columns."""
    with paused_gc():
        acc, f1, an = score_columns(gold, preds, joined, profile)
        groups = BREAKDOWNS + (("question_type",) if any(gold.question_types) else ())
        columns = _row_columns(gold, preds, joined, acc, f1, an)
        extras = [preds.record(k) for k in joined.extras]

        def build() -> list[QuestionResult]:  # the records, only if asked for: read again by the record path
            from .evaluate import evaluate

            return evaluate(gold.records(), preds.records(), profile=profile, ignore_missing=ignore_missing, name=name,
                            prediction_field=prediction_field, workers=1).results

        run = StoredRunResult(
            build=build,
            columns={"question_id": columns[0], "status": columns[4], "accuracy": acc, "token_f1": f1, "anls": an,
                     "answered": [k is not None for k in joined.pred_at], "prediction": columns[1]},
            name=name, profile=profile,
            signature=signature(profile, ignore_missing=ignore_missing, prediction_field=prediction_field),
            gold_count=len(gold), prediction_count=joined.prediction_count, missing_ids=joined.missing,
            extra_ids=[pr.qid for pr in extras], ignore_missing=ignore_missing, problems=extra_prediction_problems(extras),
            groups=groups,
        )
        run._agg = aggregate_scores(members_of(gold, joined.gold_at, groups), acc, f1, an)
        if report or csv_path:
            write_columns(run, columns, report=report, csv_path=csv_path, per_question=per_question, lens=lens)
    return run

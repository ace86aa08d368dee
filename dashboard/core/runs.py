"""Scored runs held in columns, as the app keeps them. No streamlit here.

A scored run is its scores as numpy arrays, in gold order, beside its prediction file's columns
(`dashboard.core.predictions.PredictionTable`) and its join with the gold (`Alignment`): the
question ids are the gold's one Arrow array, the prediction texts its alignment's `reported`
array, the statuses one shared str each. No record per question is built until a page asks for one
(`scoring.runner.record_of`) or for all of a run's (`RunResult.results`: the stored decisions,
read from the Parquet entry again). `dashboard.core.store.load_run` is the row path these replace
in the app, kept for the command line's tools and as the reference the tests compare this with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from dashboard.core.predictions import PredictionTable, as_table
from dashboard.core.store import ScoredRows, ScoreStore
from scoring._gc import paused_gc
from scoring.model import GoldQuestion, Prediction
from scoring.runner import Decision, StoredRunResult, assemble_columns

__all__ = ["column_run", "load_column_run", "save_decisions", "stored_decisions", "table_of"]


def table_of(predictions: Sequence[Prediction]) -> PredictionTable:
    """The predictions as a PredictionTable (a list is converted; one that cannot be: ValueError)."""
    got = as_table(predictions)
    if not isinstance(got, PredictionTable):
        got = PredictionTable.from_items(predictions)  # raises, saying why
    return got


def column_run(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], accuracy, token_f1, anls, *,
               profile, name: str, decisions_later) -> StoredRunResult:
    """The run in columns: `accuracy`, `token_f1`, `anls` in gold order (any sequence of floats)."""
    table = table_of(predictions)
    al = table.aligned(gold)
    columns = {
        "question_id": al.ids,
        "status": al.status,
        "accuracy": np.asarray(accuracy, dtype=np.float64),
        "token_f1": np.asarray(token_f1, dtype=np.float64),
        "anls": np.asarray(anls, dtype=np.float64),
        "answered": al.answered,
        "prediction": al.reported,
    }
    return assemble_columns(gold, table, columns, rows=al.rows, extra_rows=al.extra_rows,
                            decisions_later=decisions_later, profile=profile, name=name)


def load_column_run(store: ScoreStore, key: str, gold: Sequence[GoldQuestion], predictions: Sequence[Prediction],
                    profile, name: str) -> StoredRunResult | None:
    """The run from its store entry, in columns (`store.load_run`'s result, without a record per
    question), or None when there is none or it was computed for another join (then removed)."""
    with paused_gc():
        got = store.scores(key)
        if got is None:
            return None
        stored_ids, stored_statuses, acc, f1, an = got
        table = table_of(predictions)
        al = table.aligned(gold)
        try:
            statuses = al.stored_statuses()
            same = stored_ids.equals(pa.chunked_array([al.ids])) and stored_statuses.equals(pa.chunked_array([statuses]))
        except (pa.ArrowException, UnicodeError):
            same = False
        if not same:  # computed for another join: removed, so that it is written again
            store.discard(key)
            return None
        return column_run(gold, table, acc, f1, an, profile=profile, name=name,
                          decisions_later=lambda: stored_decisions(store, key))


def stored_decisions(store: ScoreStore, key: str) -> list[Decision]:
    """The entry's decisions read again (a ValueError when it is gone or no longer reads back: the
    run's records are then scored again)."""
    rows = store.read_quietly(key)
    if rows is None:
        raise ValueError("the stored entry is gone")
    return rows.decisions


def save_decisions(store: ScoreStore, key: str, gold: Sequence[GoldQuestion], predictions: Sequence[Prediction],
                   decisions: list[Decision]) -> tuple[bool, bool]:
    """Write a freshly scored run's decisions to the store: (whether the entry is there, whether
    another writer -- a second app server -- published it first: then it is read back from the store)."""
    al = table_of(predictions).aligned(gold)
    lost = store.lost_races
    with paused_gc():
        written = store.put(key, ScoredRows(al.ids.to_pylist(), al.stored_statuses().to_pylist(), decisions))
    return written is not None, store.lost_races != lost

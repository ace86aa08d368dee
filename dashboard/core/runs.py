"""A scored run held in columns, as the app makes it for a page that asks for its records. No streamlit here.

A scored run is its scores as numpy arrays, in gold order, beside its prediction file's columns
(`dashboard.core.predictions.PredictionTable`) and its join with the gold (`Alignment`): the
question ids are the gold's one Arrow array, the prediction texts its alignment's `reported`
array, the statuses one shared str each. No record per question is built until a page asks for one
(`scoring.runner.record_of`) or for all of a run's (`RunResult.results`: its decisions, kept from
scoring or decided again). The scores come from scoring it, or from the engine (dashboard/shell/scorer.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dashboard.core.predictions import PredictionTable, as_table
from scoring.evaluate import RunResult, assemble
from scoring.model import GoldQuestion, Prediction
from scoring.runner import StoredRunResult, assemble_columns

__all__ = ["column_run", "decided_again", "from_engine", "held_run", "scored_in_columns", "table_of"]


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


def scored_in_columns(predictions: Sequence[Prediction]) -> bool:
    """Whether a prediction file's run is scored in columns (`scoring.evaluate.score_runs(columns=True)`,
    the command line's scoring): every file kept as a PredictionTable; one kept as records (text Arrow
    cannot hold, such as a lone surrogate) is scored with its decisions and held with its records."""
    return isinstance(predictions, PredictionTable)


def held_run(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], the_plan, scored, *, profile,
             name: str) -> RunResult:
    """What `score_runs(..., make=..., columns=scored_in_columns(predictions))` makes of a run, as the app
    holds it: a file in columns (`scored`: its Accuracy, token F1 and ANLS columns) as a run in columns, its
    records decided when a page first asks for them; a file kept as records (`scored`: its decisions)
    with its records."""
    if not scored_in_columns(predictions):
        return assemble(gold, the_plan, scored, profile=profile, name=name)
    acc, f1, an = (np.asarray(column, dtype=np.float64) for column in scored)
    return column_run(gold, predictions, acc, f1, an, profile=profile, name=name, decisions_later=decided_again)


def decided_again() -> list:
    """`decisions_later` of a run whose scores were kept without decisions: raising makes
    `scoring.runner.assemble_columns` decide its records again when they are first read (the same
    decisions: the scores were decided by the same code)."""
    raise ValueError("decided again")


def from_engine(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], values: dict, *, profile,
                name: str) -> StoredRunResult:
    """A run held in columns again from its prediction file's rows and its scores as the engine holds them
    (`scoring.engine.queries.run_values`: one per gold question, gold order) -- the same scores, nothing
    rescored; its records' decisions are made again when a page first asks for them (the same decisions:
    the scores the engine holds were decided by the same code)."""
    return column_run(gold, predictions, values["accuracy"], values["token_f1"], values["anls"], profile=profile,
                      name=name, decisions_later=decided_again)

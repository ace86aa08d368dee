"""The question x run matrix's frames (dashboard/views/matrix.py). No streamlit here.

The matrix is held once per set of runs as small integer arrays (runs x questions: a cell's state, one
byte each; 200 runs x 20,000 questions is 4 MB), built from the runs' rows in the engine
(scoring.engine.queries.checkpoint_matrix, the same query as the trends'). What a cell is: the profile's
one definition of a right answer (`scoring.profiles.Profile.right_mask`, the engine's `is_right`): RIGHT;
an answer with some Accuracy that is not right (a partial credit below the profile's line): PARTIAL;
Accuracy 0: WRONG; no answer: MISSING. A
question's order keys are computed over every run at once (numpy); only the page shown becomes a frame.

    forgotten   right at the first run that answered it, not right at the last
    learned     not right at the first, right at the last
    flips       how often it changes between right and not right from one run (that answered) to the next
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard.core.bounded import Bounded

MISSING, WRONG, PARTIAL, RIGHT = 0, 1, 2, 3
SYMBOL = {RIGHT: "✓", PARTIAL: "◐", WRONG: "✗", MISSING: "·"}  # shapes that differ without their colours
STYLE = {"✓": "background-color: #dcfce7; color: #166534", "✗": "background-color: #fee2e2; color: #991b1b",
         "◐": "background-color: #fef9c3; color: #854d0e", "·": "color: #94a3b8"}
WORD = {RIGHT: "right", PARTIAL: "partial", WRONG: "wrong", MISSING: "missing"}
SORTS = {"forgotten": "forgotten first (right at first, wrong at last)",
         "learned": "learned first (wrong at first, right at last)",
         "flips": "most flips first", "order": "benchmark order"}
PAGE_ROWS = 50
TEXT_CHARS = 90
QUESTION, DOCUMENT = "questions", "documents"
GRIDS: Bounded[Grid] = Bounded(4)


@dataclass
class Grid:
    """runs x questions: `state` (MISSING..RIGHT) and `accuracy`; questions in the gold's order (`ids`)."""

    runs: list[str]
    steps: list[int | None]
    ids: list[str]
    state: np.ndarray
    accuracy: np.ndarray

    def keys(self) -> dict[str, np.ndarray]:
        """Per question: forgotten, learned (bool) and flips (int), over the runs that answered it."""
        if "_keys" not in self.__dict__:
            self.__dict__["_keys"] = order_keys(self.state)
        return self.__dict__["_keys"]


def order_keys(state: np.ndarray) -> dict[str, np.ndarray]:
    """forgotten, learned and flips of every question (columns) of a runs x questions state array."""
    k, n = state.shape
    answered = state != MISSING
    right = state == RIGHT
    has = answered.any(axis=0)
    first = np.argmax(answered, axis=0)
    last = k - 1 - np.argmax(answered[::-1], axis=0)
    cols = np.arange(n)
    first_right = right[first, cols] & has
    last_right = right[last, cols] & has
    several = has & (first != last)
    # flips: consecutive answered runs that differ (a missing run in between is skipped over)
    flips = np.zeros(n, dtype=np.int64)
    prev = np.full(n, -1, dtype=np.int8)  # -1: none yet, else 0/1 (right)
    for row in range(k):
        seen = answered[row]
        now = right[row].astype(np.int8)
        flips += (seen & (prev >= 0) & (now != prev)).astype(np.int64)
        prev = np.where(seen, now, prev)
    return {"forgotten": several & first_right & ~last_right, "learned": several & ~first_right & last_right,
            "flips": flips}


def grid(analysis: Any, runs: Sequence[str], steps: Sequence[int | None], ids: Sequence[str]) -> Grid:
    """The matrix of these runs (in this order) over the questions `ids`, read from the engine
    (`Analysis.checkpoint_matrix`), built once and shared by the sessions (keyed by the runs' identities in
    the engine -- their run ids, a changed file being a new ingest --, not their names)."""
    key = ("grid", analysis.store.benchmark, tuple(runs), analysis.scored_ids(runs), tuple(steps), len(ids),
           hash(tuple(ids)))

    def build() -> Grid:
        got = analysis.checkpoint_matrix(runs, list(ids), ["accuracy"])
        acc, right = got["accuracy"], got["is_right"]
        state = np.full(acc.shape, WRONG, dtype=np.uint8)
        state[right] = RIGHT
        state[~right & (acc > 0)] = PARTIAL
        state[~got["attempted"]] = MISSING
        return Grid(list(runs), list(steps), list(ids), state, acc.astype(np.float32))

    return GRIDS.get_or_build(key, build)


def lost_at(g: Grid, step: int) -> np.ndarray | None:
    """Questions right at the run before `step`, not right at it and at the last run (an alarm's lost
    questions); None when `step` is not a run's step here, or the first."""
    at = [i for i, s in enumerate(g.steps) if s == step]
    if not at or at[0] == 0:
        return None
    k = at[0]
    right = g.state == RIGHT
    return right[k - 1] & ~right[k] & ~right[-1]


def ordered(g: Grid, positions: np.ndarray, sort: str) -> np.ndarray:
    """The question positions (into `g.ids`) in the order asked: the sort's questions first (forgotten or
    learned, most flips first among them), or by flips, or as given (benchmark order)."""
    positions = np.asarray(positions, dtype=np.int64)
    if sort == "order" or not positions.size:
        return positions
    keys = g.keys()
    flips = keys["flips"][positions]
    if sort == "flips":
        return positions[np.lexsort((positions, -flips))]
    first = keys[sort][positions] if sort in ("forgotten", "learned") else np.zeros(positions.size, dtype=bool)
    return positions[np.lexsort((positions, -flips, ~first))]


def counts(g: Grid, positions: np.ndarray) -> dict[str, int]:
    keys = g.keys()
    return {"forgotten": int(keys["forgotten"][positions].sum()), "learned": int(keys["learned"][positions].sum()),
            "flipped": int((keys["flips"][positions] > 0).sum())}


def column_names(g: Grid) -> list[str]:
    """One column per run: its name (unique), in step order."""
    return list(g.runs)


def question_page(g: Grid, positions: np.ndarray, questions: pd.DataFrame, page: int, rows: int = PAGE_ROWS
                  ) -> pd.DataFrame:
    """One page of the question rows: id, the question's text (cut), flips, and a symbol per run."""
    part = positions[page * rows:(page + 1) * rows]
    ids = [g.ids[i] for i in part.tolist()]
    text = questions["question"].reindex(ids).fillna("").astype(str) if len(questions) else pd.Series([""] * len(ids))
    symbols = np.array([SYMBOL[s] for s in (MISSING, WRONG, PARTIAL, RIGHT)], dtype=object)
    cells = symbols[g.state[:, part]]  # runs x page
    columns = {"Question": ids, "Text": [t if len(t) <= TEXT_CHARS else t[:TEXT_CHARS - 1] + "…" for t in text],
               "Flips": g.keys()["flips"][part], **{run: cells[row] for row, run in enumerate(g.runs)}}
    return pd.DataFrame(columns)  # one frame built at once (a column at a time fragments it: 200 runs)


def document_rows(g: Grid, positions: np.ndarray, documents: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(documents, right counts runs x documents, answered counts runs x documents) over the questions at
    `positions`; `documents`: each question's document (by position in `g.ids`)."""
    docs = np.asarray(documents, dtype=object)[positions]
    names, codes = np.unique(docs.astype(str), return_inverse=True) if positions.size else (np.array([]), np.zeros(0, int))
    k = len(g.runs)
    right = np.zeros((k, len(names)))
    seen = np.zeros((k, len(names)))
    for row in range(k):
        s = g.state[row, positions]
        right[row] = np.bincount(codes, weights=(s == RIGHT), minlength=len(names))
        seen[row] = np.bincount(codes, weights=(s != MISSING), minlength=len(names))
    return [str(n) for n in names], right, seen


def ordered_documents(g: Grid, right: np.ndarray, seen: np.ndarray, flips_per_doc: np.ndarray, sort: str) -> np.ndarray:
    """Document order: by the share right lost (forgotten) or gained (learned) from the first run to the last,
    by flips, or by name."""
    n = right.shape[1]
    if sort == "order" or not n:
        return np.arange(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(seen > 0, right / np.where(seen > 0, seen, 1), np.nan)
    first = share[0] if share.shape[0] else np.zeros(n)
    last = share[-1] if share.shape[0] else np.zeros(n)
    change = np.nan_to_num(last - first)
    if sort == "flips":
        return np.lexsort((np.arange(n), -flips_per_doc))
    return np.lexsort((np.arange(n), -flips_per_doc, change if sort == "forgotten" else -change))


def document_page(g: Grid, names: list[str], right: np.ndarray, seen: np.ndarray, flips: np.ndarray,
                  order: np.ndarray, page: int, rows: int = PAGE_ROWS) -> pd.DataFrame:
    """One page of the document rows: the document, its questions' flips, and per run `right/answered`."""
    part = order[page * rows:(page + 1) * rows]
    columns: dict[str, Any] = {"Document": [names[i] for i in part], "Flips": flips[part].astype(int)}
    for row, run in enumerate(g.runs):
        columns[run] = [f"{int(r)}/{int(s)}" if s else "·" for r, s in zip(right[row, part], seen[row, part])]
    return pd.DataFrame(columns)


def cell_style(value: object) -> str:
    """A cell's CSS: a question cell by its state (STYLE), a document cell `right/answered` green by its share."""
    text = str(value)
    if text in STYLE:
        return STYLE[text]
    right, sep, seen = text.partition("/")
    if sep and right.isdecimal() and seen.isdecimal() and int(seen):
        return f"background-color: rgba(22, 163, 74, {0.08 + 0.45 * int(right) / int(seen):.2f})"
    return ""


def answer(analysis: Any, run: str, qid: str) -> dict[str, Any]:
    """A run's answer to a question, read from the engine for that one (run, question) (`Analysis.answer`):
    prediction text ("" where it has none), Accuracy, status, answered; {} when the run holds no row for it."""
    row = analysis.answer(run, qid)
    if row is None:
        return {}
    return {"prediction": "" if row["prediction"] is None else str(row["prediction"]), "accuracy": float(row["accuracy"]),
            "status": str(row["status"]), "answered": bool(row["attempted"])}

"""A prediction file held as columns, and its join with the gold. No streamlit here.

A campaign of 200 runs x 20,000 questions is four million predictions. Held as `Prediction`
objects (a slotted record, its id, text, line and evidence each a Python object) they cost about
300 bytes each before anything is scored; held as Arrow columns, a few dozen bytes plus the text.
`PredictionTable` is a read-only `Sequence[Prediction]` over such columns: indexing or iterating
builds the records, so code written for a list of predictions reads it unchanged, while the app
keeps only the columns and builds a record for the questions a page shows.

`PredictionTable.aligned(gold)` is its join with a gold (`Alignment`): for every gold question, in
gold order, the row of its prediction (-1: missing), the status it is scored with ("missing"), and
the prediction as the release reports it (`reported`: "" when missing, OVERFLOW_TEXT for an
overflow status, else the text). `reported` is where the texts live from then on: the file-order
text column is given up, and a row's text is read back from `reported` (rows of no gold question
and rows with an overflow status keep theirs aside). So each text is held once, and the score
frame's `prediction` column is `reported` itself (Arrow strings are shared, not copied, when
pandas concatenates them).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from scoring.model import GoldQuestion, PredictedEvidence, Prediction
from scoring.registry import MISSING_STATUS, OVERFLOW_STATUSES, OVERFLOW_TEXT

# Arrow allocates through the C library's malloc, not its bundled mimalloc: a server holds its tables
# for hours while reading Parquet entries leaves freed buffers behind, which mimalloc kept (110 MB of
# 520 after reading 50 runs' prediction files; bench/bench_scale.py) and glibc gives back.
pa.set_memory_pool(pa.system_memory_pool())


def _fixed_malloc_thresholds() -> None:
    """glibc serves a block of 128 KB or more with its own mapping, returned when freed -- but after such
    a block is freed it raises that threshold to the block's size (up to 32 MB), so the next arrays of
    a table build land in the heap, which cannot shrink past a block still in use. A server that
    builds and drops frames of a million rows grew by hundreds of megabytes that way. Fixed thresholds
    keep large arrays in mappings of their own (bench/bench_scale.py: 50 runs x 20,000 questions, the
    overview drawn at 605 MB instead of 839). Nothing happens on another C library."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 256 * 1024)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1024 * 1024)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


_fixed_malloc_thresholds()

__all__ = ["PredictionTable", "Alignment", "gold_ids", "as_table"]

_GOLD_MEMO: list[tuple[Sequence[GoldQuestion], pa.Array]] = []  # (gold list, its ids), newest last
_GOLD_LOCK = threading.Lock()
_GOLD_KEPT = 8


def gold_ids(gold: Sequence[GoldQuestion]) -> pa.Array:
    """The gold's question ids as one Arrow string array, shared: the same list gives the same array,
    and so does another list with the same ids (a gold with corrections keeps its ids), so that every
    run's `question_id` column is one buffer."""
    with _GOLD_LOCK:
        for g, arr in reversed(_GOLD_MEMO):
            if g is gold:
                return arr
    arr = pa.array([q.qid for q in gold], pa.string())
    with _GOLD_LOCK:
        for _g, known in _GOLD_MEMO:
            if len(known) == len(arr) and known.equals(arr):
                arr = known
                break
        _GOLD_MEMO.append((gold, arr))
        del _GOLD_MEMO[:-_GOLD_KEPT]
    return arr


class Alignment:
    """A prediction file joined with one gold, in gold order (see the module's docstring)."""

    __slots__ = ("ids", "rows", "status", "reported", "answered")

    def __init__(self, ids: pa.Array, rows: np.ndarray, status: np.ndarray, reported: pa.Array) -> None:
        self.ids = ids  # the gold's ids (shared by every run of that gold)
        self.rows = rows  # int32: the file row of each gold question's prediction, -1 when missing
        self.status = status  # object array of shared strs: the status scored ("missing" without a prediction)
        self.reported = reported  # Arrow strings: the prediction as the release reports it
        self.answered = rows >= 0

    def __len__(self) -> int:
        return len(self.rows)


def _interned_status(values: pa.Array) -> np.ndarray:
    """An Arrow string column as an object array whose equal values are one str (a handful of statuses)."""
    if not len(values):
        return np.empty(0, dtype=object)
    enc = pc.dictionary_encode(values)
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    labels = np.array([MISSING_STATUS if v is None else v for v in enc.dictionary.to_pylist()] + [MISSING_STATUS], dtype=object)
    codes = enc.indices.fill_null(len(labels) - 1).to_numpy(zero_copy_only=False)
    return labels[codes]


class PredictionTable(Sequence[Prediction]):
    """One prediction file's rows as Arrow columns, read as a sequence of `Prediction` records (built
    when indexed). Read-only; safe to share between sessions."""

    def __init__(self, qid: pa.Array, text: pa.Array, status: pa.Array, file: str, line: pa.Array,
                 evidence_pages: pa.Array, evidence: pa.Array) -> None:
        n = len(qid)
        if not (len(text) == len(status) == len(line) == len(evidence_pages) == len(evidence) == n):
            raise ValueError("prediction columns of different lengths")
        self._qid, self._status, self._line = _one(qid), _one(status), _one(line)
        self._pages, self._evidence = _one(evidence_pages), _one(evidence)
        self._text: pa.Array | None = _one(text)  # None once the texts live in an alignment's `reported`
        self._aside: dict[int, str] = {}  # row -> text, for rows whose text is not in `reported`
        self._home: tuple[np.ndarray, pa.Array] | None = None  # (each row's gold position or -1, reported)
        self.file = file
        self._aligned: list[tuple[pa.Array, Alignment]] = []
        self._lock = threading.Lock()
        self._index: dict[str, int] | None = None

    # ------------------------------------------------------------------ building

    @classmethod
    def from_items(cls, items: Sequence[Prediction]) -> PredictionTable:
        """The columns of a list of predictions (as scoring.loaders.load_predictions returns them)."""
        if isinstance(items, PredictionTable):
            return items
        file = items[0].file if items else ""
        if any(p.file != file for p in items):
            raise ValueError("predictions of several files")
        return cls(pa.array([p.qid for p in items], pa.string()), pa.array([p.text for p in items], pa.string()),
                   pa.array([p.status for p in items], pa.string()), file,
                   pa.array([p.line for p in items], pa.int64()),
                   pa.array([list(p.evidence_pages) for p in items], pa.list_(pa.int64())),
                   pa.array([_evidence_json(p.evidence) for p in items], pa.string()))

    # ------------------------------------------------------------------ the sequence

    def __len__(self) -> int:
        return len(self._qid)

    @overload
    def __getitem__(self, i: int) -> Prediction: ...

    @overload
    def __getitem__(self, i: slice) -> list[Prediction]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._record(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._record(i)

    def __iter__(self) -> Iterator[Prediction]:
        texts = self.texts()
        qids, statuses = self._qid.to_pylist(), _interned_status(self._status)
        lines, pages = self._line.to_pylist(), self._pages.to_pylist()
        evidence = self._evidence.to_pylist()
        for k in range(len(qids)):
            yield Prediction(qids[k], texts[k], statuses[k], self.file, lines[k], tuple(pages[k] or ()),
                             _evidence_back(evidence[k]))

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same records (a list of predictions as the loader returns it)."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which is not hashable

    def __repr__(self) -> str:
        return f"PredictionTable({len(self)} rows of {self.file!r})"

    def _record(self, i: int) -> Prediction:
        return Prediction(self._qid[i].as_py(), self.text_at(i), self._status[i].as_py(), self.file, self._line[i].as_py(),
                          tuple(self._pages[i].as_py() or ()), _evidence_back(self._evidence[i].as_py()))

    # ------------------------------------------------------------------ columns

    @property
    def question_ids(self) -> pa.Array:
        return self._qid

    @property
    def statuses(self) -> pa.Array:
        return self._status

    def text_at(self, i: int) -> str:
        with self._lock:
            if self._text is not None:
                return self._text[i].as_py()
            if i in self._aside:
                return self._aside[i]
            assert self._home is not None
            at, reported = self._home
            return reported[int(at[i])].as_py()

    def texts(self) -> list[str]:
        """Every row's text, in file order."""
        with self._lock:
            if self._text is not None:
                return self._text.to_pylist()
            assert self._home is not None
            at, reported = self._home
            out = pc.take(reported, pa.array(np.where(at >= 0, at, 0))).to_pylist()
            for i, t in self._aside.items():
                out[i] = t
            return out

    def row_of(self, qid: str) -> int | None:
        """The row of a question id (None: not in the file); the index is built on first use."""
        with self._lock:
            if self._index is None:
                self._index = {q: k for k, q in enumerate(self._qid.to_pylist())}
            return self._index.get(qid)

    def get(self, qid: str) -> Prediction | None:
        row = self.row_of(qid)
        return None if row is None else self._record(row)

    # ------------------------------------------------------------------ the join with a gold

    def aligned(self, gold: Sequence[GoldQuestion]) -> Alignment:
        """This file joined with `gold` (computed once per gold ids; see the module's docstring)."""
        ids = gold_ids(gold)
        with self._lock:
            for known, al in self._aligned:
                if known is ids:
                    return al
        rows_arr = pc.index_in(ids, value_set=self._qid) if len(ids) else pa.array([], pa.int32())
        rows = rows_arr.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
        take = pa.array(np.where(rows >= 0, rows, 0), pa.int32())
        status_taken = pc.take(self._status, take) if len(self) else pa.nulls(len(rows), pa.string())
        status_taken = pc.if_else(pa.array(rows >= 0), status_taken, pa.scalar(None, pa.string()))
        status = _interned_status(status_taken)
        overflow = np.isin(status, list(OVERFLOW_STATUSES))
        with self._lock:
            source = self._text  # None after a first alignment gave it up: read row by row (a second gold)
        if source is not None:
            texts = pc.take(source, take) if len(self) else pa.nulls(len(rows), pa.string())
        else:
            texts = pa.array(self._texts_at(rows), pa.string())
        reported = pc.if_else(pa.array(~overflow & (rows >= 0)), texts,
                              pa.array(np.where(overflow, OVERFLOW_TEXT, ""), pa.string()))
        reported = reported.combine_chunks() if isinstance(reported, pa.ChunkedArray) else reported
        al = Alignment(ids, rows, status, reported)
        with self._lock:
            self._aligned.append((ids, al))
            if self._text is not None:  # the texts now live in `reported`: give up the file-order column
                self._release(rows, overflow, reported)
        return al

    def _texts_at(self, rows: np.ndarray) -> list[str]:
        return [self.text_at(int(r)) if r >= 0 else "" for r in rows]

    def _release(self, rows: np.ndarray, overflow: np.ndarray, reported: pa.Array) -> None:
        """Called under the lock: each row's text is read from `reported` at its gold position, but
        those whose text is not there (no gold question, or an overflow status) keep theirs aside."""
        assert self._text is not None
        at = np.full(len(self), -1, dtype=np.int32)
        answered = rows >= 0
        at[rows[answered]] = np.nonzero(answered)[0].astype(np.int32)
        over_rows = rows[answered & overflow]
        at[over_rows] = -1
        aside = np.nonzero(at < 0)[0]
        if len(aside):
            texts = pc.take(self._text, pa.array(aside)).to_pylist()
            self._aside = dict(zip(aside.tolist(), texts))
        self._home = (at, reported)
        self._text = None


def as_table(items: Sequence[Prediction]) -> Sequence[Prediction]:
    """A prediction file's records as a PredictionTable; records it cannot hold as columns (a text
    with a lone surrogate, a page number beyond 64 bits) are kept as they are."""
    if isinstance(items, PredictionTable) or not items:
        return items
    try:
        return PredictionTable.from_items(items)
    except (pa.ArrowException, UnicodeError, ValueError, TypeError, OverflowError):
        return items


def _one(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _evidence_json(evidence) -> str | None:
    if not evidence:
        return None
    return json.dumps([[e.page, e.document_id, list(e.bbox) if e.bbox is not None else None] for e in evidence],
                      ensure_ascii=True, allow_nan=True)


def _evidence_back(text: str | None) -> tuple:
    if text is None:
        return ()
    parsed = json.loads(text)
    return tuple(PredictedEvidence(v[0], v[1], tuple(v[2]) if v[2] is not None else None) for v in parsed)

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


def _arrow_pool() -> pa.MemoryPool:
    """Arrow allocates through its bundled jemalloc where the wheel has it, else the C library's malloc.
    Not mimalloc, Arrow's default: a server holds its tables for hours while reading Parquet entries
    leaves freed buffers behind, which mimalloc kept (110 MB of 520 after reading 50 runs' prediction
    files; bench/bench_scale.py). Not glibc's malloc either where jemalloc is there: with the fixed
    thresholds below, every Arrow buffer of 256 KB or more was a mapping of its own, faulted in page
    by page and given back when freed -- reading 200 runs' entries touched 3 GB of fresh pages (2-3
    CPU-s of the kernel's time); jemalloc reuses freed extents, so a restart at 200 runs x 20,000
    questions drew the leaderboard after 8.6-9.3 CPU-s instead of 11.3-11.8, with a lower peak
    (1,503 MB against 1,591) and the same memory once trimmed (1,234 against 1,220 MB;
    `dashboard.shell.cache.trim` gives jemalloc's unused pages back as it does glibc's)."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without it
        return pa.system_memory_pool()


pa.set_memory_pool(_arrow_pool())


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

    __slots__ = ("ids", "rows", "status", "reported", "answered", "extra_rows")

    def __init__(self, ids: pa.Array, rows: np.ndarray, status: np.ndarray, reported: pa.Array,
                 extra_rows: np.ndarray) -> None:
        self.ids = ids  # the gold's ids (shared by every run of that gold)
        self.rows = rows  # int32: the file row of each gold question's prediction, -1 when missing
        self.status = status  # object array of shared strs: the status scored ("missing" without a prediction)
        self.reported = reported  # Arrow strings: the prediction as the release reports it
        self.answered = rows >= 0
        self.extra_rows = extra_rows  # the file rows of ids that are no gold question's

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


def _narrow(arr: pa.Array, to: pa.DataType) -> pa.Array:
    """Integers in 32 bits when they fit (line numbers, page numbers); as they are otherwise."""
    try:
        return arr.cast(to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return arr


class _Home:
    """Where a table's rows live after its first alignment: each row's gold position (-1: an id of no
    gold question), the gold's ids and the alignment's texts and statuses, and aside, by row, what
    is not there (the ids of no gold question; texts of those rows and of overflow statuses; their statuses)."""

    __slots__ = ("pos", "ids", "reported", "status", "over", "qid", "text", "row_status")

    def __init__(self, pos: np.ndarray, al: Alignment, over: np.ndarray, qid: dict[int, str], text: dict[int, str],
                 row_status: dict[int, str]) -> None:
        self.pos, self.ids, self.reported, self.status, self.over = pos, al.ids, al.reported, al.status, over
        self.qid, self.text, self.row_status = qid, text, row_status


class PredictionTable(Sequence[Prediction]):
    """One prediction file's rows as Arrow columns, read as a sequence of `Prediction` records (built
    when indexed). Read-only; safe to share between sessions. After its first alignment with a gold
    it gives up its id, text and status columns: the gold's ids and the alignment's arrays hold them
    (`_Home`), so a campaign's texts and ids are held once."""

    def __init__(self, qid: pa.Array, text: pa.Array, status: pa.Array, file: str, line: pa.Array,
                 evidence_pages: pa.Array, evidence: pa.Array) -> None:
        n = len(qid)
        if not (len(text) == len(status) == len(line) == len(evidence_pages) == len(evidence) == n):
            raise ValueError("prediction columns of different lengths")
        self._n = n
        self._qid: pa.Array | None = _one(qid)  # these three are None once the table has a home (_Home)
        self._text: pa.Array | None = _one(text)
        self._status: pa.Array | None = _one(status)
        self._line = _narrow(_one(line), pa.int32())
        self._pages = _narrow(_one(evidence_pages), pa.list_(pa.int32()))
        self._evidence = _one(evidence)
        self._home: _Home | None = None
        self.file = file
        self._aligned: list[tuple[pa.Array, Alignment]] = []
        self._lock = threading.RLock()
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
                   pa.array([evidence_json(p.evidence) for p in items], pa.string()))

    # ------------------------------------------------------------------ the sequence

    def __len__(self) -> int:
        return self._n

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
        texts, qids, statuses = self.texts(), self.question_ids.to_pylist(), self._statuses_list()
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
        return Prediction(self.qid_at(i), self.text_at(i), self.status_at(i), self.file, self._line[i].as_py(),
                          tuple(self._pages[i].as_py() or ()), _evidence_back(self._evidence[i].as_py()))

    # ------------------------------------------------------------------ columns, row by row

    def qid_at(self, i: int) -> str:
        with self._lock:
            if self._qid is not None:
                return self._qid[i].as_py()
            h = self._home
        assert h is not None
        p = int(h.pos[i])
        return h.ids[p].as_py() if p >= 0 else h.qid[i]

    def status_at(self, i: int) -> str:
        with self._lock:
            if self._status is not None:
                return self._status[i].as_py()
            h = self._home
        assert h is not None
        p = int(h.pos[i])
        return h.status[p] if p >= 0 else h.row_status[i]

    def text_at(self, i: int) -> str:
        with self._lock:
            if self._text is not None:
                return self._text[i].as_py()
            h = self._home
        assert h is not None
        if i in h.text:
            return h.text[i]
        return h.reported[int(h.pos[i])].as_py()

    # ------------------------------------------------------------------ whole columns

    def _taken(self, values, h: _Home) -> pa.Array:
        return pc.take(values, pa.array(np.where(h.pos >= 0, h.pos, 0), pa.int32()))

    @property
    def question_ids(self) -> pa.Array:
        """Every row's question id, in file order (an Arrow array; rebuilt from the home once there is one)."""
        with self._lock:
            if self._qid is not None:
                return self._qid
            h = self._home
        assert h is not None
        if not len(self):
            return pa.array([], pa.string())
        out = self._taken(h.ids, h).to_pylist()
        for i, q in h.qid.items():
            out[i] = q
        return pa.array(out, pa.string())

    def _statuses_list(self) -> list[str]:
        with self._lock:
            if self._status is not None:
                return _interned_status(self._status).tolist()
            h = self._home
        assert h is not None
        out = [h.status[p] if p >= 0 else "" for p in h.pos.tolist()]
        for i, st in h.row_status.items():
            out[i] = st
        return out

    def texts(self) -> list[str]:
        """Every row's text, in file order."""
        with self._lock:
            if self._text is not None:
                return self._text.to_pylist()
            h = self._home
        assert h is not None
        if not len(self):
            return []
        out = self._taken(h.reported, h).to_pylist()
        for i, t in h.text.items():
            out[i] = t
        return out

    def row_of(self, qid: str) -> int | None:
        """The row of a question id (None: not in the file); the index is built on first use."""
        with self._lock:
            index = self._index
        if index is None:
            index = {q: k for k, q in enumerate(self.question_ids.to_pylist())}
            with self._lock:
                self._index = index
        return index.get(qid)

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
            qid = self._qid if self._qid is not None else self.question_ids
            status = self._status if self._status is not None else pa.array(self._statuses_list(), pa.string())
            source = self._text
            n = len(self)
            in_order = n == len(ids) and n > 0 and _same_strings(qid, ids)
            if in_order:  # the file answers every gold question, in gold order (as harnesses write them): no join
                rows = np.arange(n, dtype=np.int32)
                status_taken = _one(status)
            else:
                rows_arr = pc.index_in(ids, value_set=qid) if len(ids) else pa.array([], pa.int32())
                rows = rows_arr.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
                take = pa.array(np.where(rows >= 0, rows, 0), pa.int32())
                status_taken = pc.take(status, take) if n else pa.nulls(len(rows), pa.string())
            answered = rows >= 0
            if not answered.all():
                status_taken = pc.if_else(pa.array(answered), status_taken, pa.scalar(None, pa.string()))
            scored_status = _interned_status(status_taken)
            overflow = np.isin(scored_status, list(OVERFLOW_STATUSES))
            if source is None:
                texts = pa.array([self.text_at(int(r)) if r >= 0 else "" for r in rows], pa.string())
            elif in_order:
                texts = _one(source)
            else:
                texts = pc.take(source, take) if n else pa.nulls(len(rows), pa.string())
            reported = texts if answered.all() else pc.if_else(pa.array(answered), texts, pa.scalar("", pa.string()))
            if overflow.any():
                reported = pc.if_else(pa.array(overflow), pa.scalar(OVERFLOW_TEXT, pa.string()), reported)
            reported = reported.combine_chunks() if isinstance(reported, pa.ChunkedArray) else reported
            in_gold = np.zeros(n, dtype=bool)  # the rows some gold question took (ids are unique in a file)
            in_gold[rows[answered]] = True
            al = Alignment(ids, rows, scored_status, reported, np.flatnonzero(~in_gold))
            self._aligned.append((ids, al))
            if self._home is None:  # the first: the ids, texts and statuses now live in the alignment
                self._move_home(al, overflow, qid, status)
        return al

    def _move_home(self, al: Alignment, overflow: np.ndarray, qid: pa.Array, status: pa.Array) -> None:
        """Called under the lock: give up the id, text and status columns; each row reads them at its
        gold position, but what is not there (see _Home) is kept aside, by row."""
        assert self._text is not None
        pos = np.full(len(self), -1, dtype=np.int32)
        answered = al.answered
        pos[al.rows[answered]] = np.flatnonzero(answered).astype(np.int32)
        over = np.zeros(len(self), dtype=bool)
        over[al.rows[answered & overflow]] = True
        extra = np.flatnonzero(pos < 0)
        odd_text = np.flatnonzero((pos < 0) | over)
        qids = dict(zip(extra.tolist(), pc.take(qid, pa.array(extra)).to_pylist())) if len(extra) else {}
        statuses = dict(zip(extra.tolist(), pc.take(status, pa.array(extra)).to_pylist())) if len(extra) else {}
        texts = dict(zip(odd_text.tolist(), pc.take(self._text, pa.array(odd_text)).to_pylist())) if len(odd_text) else {}
        self._home = _Home(pos, al, over, qids, texts, statuses)
        self._qid = self._text = self._status = None


def as_table(items: Sequence[Prediction]) -> Sequence[Prediction]:
    """A prediction file's records as a PredictionTable; records it cannot hold as columns (a text
    with a lone surrogate, a page number beyond 64 bits) are kept as they are."""
    if isinstance(items, PredictionTable) or not items:
        return items
    try:
        return PredictionTable.from_items(items)
    except (pa.ArrowException, UnicodeError, ValueError, TypeError, OverflowError):
        return items


def _same_strings(a, b) -> bool:
    """Whether two Arrow string arrays (either may be chunked) hold the same values in the same order."""
    a = a if isinstance(a, pa.ChunkedArray) else pa.chunked_array([a])
    b = b if isinstance(b, pa.ChunkedArray) else pa.chunked_array([b])
    return a.type == b.type and a.equals(b)


def _one(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def evidence_json(evidence) -> str | None:
    """A prediction's cited evidence as the JSON text its column holds (None: none cited)."""
    if not evidence:
        return None
    return json.dumps([[e.page, e.document_id, list(e.bbox) if e.bbox is not None else None] for e in evidence],
                      ensure_ascii=True, allow_nan=True)


def evidence_of(parsed) -> tuple:
    """`evidence_json`'s value parsed back into PredictedEvidence records; ValueError for anything of
    another shape (a cache entry is never trusted: dashboard/core/store.py checks entries with it)."""
    if type(parsed) is not list or not parsed:
        raise ValueError("evidence that is not a list")
    out = []
    for v in parsed:
        if type(v) is not list or len(v) != 3 or type(v[0]) is not int or not isinstance(v[1], str):
            raise ValueError("an evidence entry of another shape")
        out.append(PredictedEvidence(v[0], v[1], box_of(v[2])))
    return tuple(out)


def box_of(value) -> tuple | None:
    """A box read back from a cache entry's JSON: None, or four numbers as a tuple; ValueError otherwise."""
    if value is None:
        return None
    if type(value) is not list or len(value) != 4 or any(type(x) not in (int, float) for x in value):
        raise ValueError("a bbox that is not four numbers")
    return tuple(value)


def _evidence_back(text: str | None) -> tuple:
    return () if text is None else evidence_of(json.loads(text))

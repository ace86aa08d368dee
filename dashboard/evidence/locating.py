"""Locating every answer in the background, the documents in view first. No streamlit here.

`start(key, docs, first, compute)` begins (once for every session: single-flight by `key`, the
evidence metrics' key) a background job that reads each document's whole text -- one document at a
time, through the per-document jobs the Evidence page shares (dashboard/documents/ocr.py
`background`, keyed by `text_key`), so a document read for one is read for the other -- and then
runs `compute()` (the evidence table) and returns its value. Documents are read in a shared order:
the documents of the questions a session shows first (`prefer`, asked by every session that shows
the section meanwhile), the rest after. A document already read comes from memory or the disk caches
(doctext/, ocr/) at once. `progress(key)` says what is left (dashboard/evidence/progress.py).

`LocatedStore`: the located answers (the evidence table) kept on disk, `<cache folder>/located/<key>.parquet`,
named by a digest of everything they are computed from (dashboard/evidence/locate_panel.py `located_key`:
the gold, each run's answers, which answers are right, each document's bytes, the locating code), so a
server start reads them back instead of locating every answer again (seconds on the sample), and a changed
PDF, run or profile gives another name. Written atomically (dashboard/core/store.py EntryFolder); an entry
that does not read back whole, with its columns, types, key and row count, is a miss and removed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dashboard.core.store import EntryFolder
from dashboard.documents import ocr, pdf
from dashboard.evidence.grounding import COLUMNS, LOCATIONS
from dashboard.evidence.progress import Doc, Tally, reading_order, seconds_left, tally

KEPT = 8  # locatings remembered (their order and counts), oldest dropped first


def text_key(path: Path) -> tuple:
    """The key of a document's whole-text job (ocr.background), shared with the Evidence page."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1
    return ("doc_text", str(path), mtime)


def read_text(path: Path):
    """The build of a document's whole-text job: pdf.doc_text until complete (ocr.read_whole), long
    documents on the worker processes. The Evidence page's job for one question's documents and the
    locating's are one job (`text_key`): whichever starts it, the other listens to its steps."""
    def build(progress):
        try:
            n = pdf.page_count(path)
        except pdf.DocumentError:
            n = 0
        if n >= pdf.PARALLEL_MIN_PAGES:
            pdf.warm_up()
        return ocr.read_whole(pdf.doc_text, path, progress)
    return build


@dataclass
class _Reading:
    """One document's counts as its job reports them. The job's progress calls are (done, total) of
    the text-layer pass (long documents only: total == its page count, at least PARALLEL_MIN_PAGES,
    more than an OCR round's MAX_PAGES) or of an OCR round (the pages read by OCR now, not cached)."""

    pages: int = 0
    finished: bool = False
    text_read: int = 0
    ocr_pages: int = 0
    ocr_read: int = 0
    ocr_timed: int = 0
    size: int = 0
    _round: int = 0  # pages of OCR rounds before the current one
    _last: int = 0

    def tick(self, done: int, total: int) -> None:
        if self.pages >= pdf.PARALLEL_MIN_PAGES and total == self.pages:  # an OCR round is never this long
            self.text_read = max(self.text_read, done)
            return
        if done <= self._last:  # a new OCR round
            self._round += self._last
        self._last = done
        self.ocr_pages = max(self.ocr_pages, self._round + total)
        self.ocr_timed = self._round + done
        self.ocr_read = self.ocr_timed

    def finish(self, path: Path) -> None:
        st = ocr.status(path)
        without = len(st.pages | set(st.problems) | st.unread)
        if pdf.is_image(path):
            without = max(without, self.pages)
        self.ocr_pages = max(self.ocr_timed, without)
        self.ocr_read = self.ocr_pages
        self.finished = True

    def doc(self) -> Doc:
        return Doc(self.pages, self.finished, self.text_read, self.ocr_pages, self.ocr_read, self.ocr_timed, self.size)


@dataclass
class Locating:
    """The shared state of one locating: the reading order and each document's counts."""

    docs: list[Path]
    started: float = field(default_factory=time.monotonic)
    readings: dict[Path, _Reading] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    current: Path | None = None
    job: ocr.Job | None = None

    def prefer(self, first: Sequence[Path]) -> None:
        with self.lock:
            self.docs = reading_order(first, self.docs)

    def _next(self) -> Path | None:
        with self.lock:
            return next((p for p in self.docs if not self._reading(p).finished), None)

    def _reading(self, p: Path) -> _Reading:
        return self.readings.setdefault(p, _Reading())

    def run(self, compute: Callable[[], object]) -> object:
        for doc in list(self.docs):  # page counts first: the totals are known from the start (milliseconds a file)
            try:
                self._reading(doc).size = doc.stat().st_size
                self._reading(doc).pages = pdf.page_count(doc)
            except (pdf.DocumentError, OSError):
                pass
        while (path := self._next()) is not None:
            r = self._reading(path)
            self.current = path
            # its steps timed whoever started the job (the Evidence page may have, for the question in view): a
            # document read meanwhile counted as untimed work kept the time left where it was as documents finished
            job = ocr.background(text_key(path), read_text(path), listener=r.tick)
            job.finished.wait()  # a background thread of its own: waiting holds no session
            if job.failed:  # the search names the document's problem
                ocr.forget(job.key)
            r.finish(path)
        self.current = None
        return compute()

    def tally(self) -> Tally:
        with self.lock:
            return tally(self._reading(p).doc() for p in self.docs)

    def seconds_left(self, now: float | None = None) -> float | None:
        return seconds_left(self.tally(), (time.monotonic() if now is None else now) - self.started)


_LOCATINGS: dict[tuple, Locating] = {}
_LOCK = threading.Lock()


def start(key: tuple, docs: Sequence[Path], first: Sequence[Path], compute: Callable[[], object]) -> Locating:
    """The locating for `key` (started now if none runs or is kept): `first` moved to the front of its
    reading order; its job is `.job` (its value: compute()'s)."""
    with _LOCK:
        loc = _LOCATINGS.get(key)
        if loc is None or (loc.job is not None and loc.job.failed):
            loc = _LOCATINGS[key] = Locating(list(dict.fromkeys(docs)))
            for k in list(_LOCATINGS)[:max(0, len(_LOCATINGS) - KEPT)]:
                del _LOCATINGS[k]
    loc.prefer(first)
    if loc.job is None or loc.job.failed:
        if loc.job is not None:
            ocr.forget(loc.job.key)
        loc.job = ocr.background(("locate", *key), lambda progress: loc.run(compute))
    return loc


def get(key: tuple) -> Locating | None:
    with _LOCK:
        return _LOCATINGS.get(key)


# ----------------------------------------------------------------------------- the located answers on disk

LOCATED_FORMAT = "1"
LOCATED_SCHEMA = pa.schema([
    ("question_id", pa.string()),
    ("run", pa.string()),
    ("evidence_precision", pa.float64()),  # null: the run cites no page
    ("evidence_recall", pa.float64()),
    ("grounding", pa.float64()),  # null: no gold or no cited boxes
    ("answer_location", pa.string()),  # null: not searched for another reason
    ("answer_pages_evidence", pa.list_(pa.int64())),
    ("answer_pages_elsewhere", pa.list_(pa.int64())),
])
_FLOATS = ("evidence_precision", "evidence_recall", "grounding")
_PAGES = ("answer_pages_evidence", "answer_pages_elsewhere")
assert LOCATED_SCHEMA.names == COLUMNS


def _missing(value: object) -> bool:
    """None, pandas' NA or NaN (a row built with None in a text column holds NaN there)."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _floats(values: list) -> list[float | None]:
    """The table's float cells as Python floats or None (pandas' NA and NaN are None)."""
    return [None if _missing(v) else float(v) for v in values]


class LocatedStore(EntryFolder):
    """The evidence tables (dashboard.evidence.grounding.evidence_table) kept on disk by `located_key`."""

    SUBFOLDER = "located"

    def put(self, key: str, table: pd.DataFrame) -> Path | None:
        """Keep `table` under `key`; never raises (a folder that cannot be written: located again next time)."""
        try:
            cols = {c: table[c].tolist() for c in COLUMNS}
            arrays = {c: _floats(cols[c]) if c in _FLOATS else
                      [[int(p) for p in pages] for pages in cols[c]] if c in _PAGES else
                      [None if _missing(v) else str(v) for v in cols[c]] for c in COLUMNS}
            out = pa.table(arrays, schema=LOCATED_SCHEMA.with_metadata(
                {"lens.key": key, "lens.rows": str(len(table)), "lens.format": LOCATED_FORMAT}))
        except (KeyError, TypeError, ValueError, pa.ArrowException):
            return None
        if self.path(key).is_file() and self._valid(self.path(key), key):
            self._used(self.path(key))
            return self.path(key)
        return self._write(self.path(key), out)

    def get(self, key: str) -> pd.DataFrame | None:
        return self._entry(key, lambda path: self._read(path, key))

    @staticmethod
    def _read(path: Path, key: str) -> pd.DataFrame:
        with pq.ParquetFile(path) as pf:  # not read_table: it makes (and imports) a pyarrow.dataset
            got = pf.read(use_threads=False)
        meta = got.schema.metadata or {}
        if (got.schema.remove_metadata() != LOCATED_SCHEMA or meta.get(b"lens.key") != key.encode()
                or meta.get(b"lens.format") != LOCATED_FORMAT.encode()
                or meta.get(b"lens.rows") != str(got.num_rows).encode()):
            raise ValueError(f"{path.name}: not this key's located answers")
        cols = {c: got.column(c).to_pylist() for c in COLUMNS}
        if any(v is None for c in ("question_id", "run", *_PAGES) for v in cols[c]):
            raise ValueError(f"{path.name}: a null id, run or page list")
        if any(v is not None and v not in LOCATIONS for v in cols["answer_location"]):
            raise ValueError(f"{path.name}: an unknown answer location")
        if any(v is not None and not 0.0 <= v <= 1.0 for c in _FLOATS for v in cols[c]):
            raise ValueError(f"{path.name}: a rate outside 0..1")
        # built as evidence_table builds it (rows as dicts), so that the frame is the same, NaN where it had None
        frame = pd.DataFrame([dict(zip(COLUMNS, row)) for row in zip(*(cols[c] for c in COLUMNS))], columns=COLUMNS)
        return frame.astype({c: "Float64" for c in _FLOATS})

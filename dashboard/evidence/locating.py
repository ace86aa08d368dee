"""Locating every answer in the background, the documents in view first. No streamlit here.

`start(key, docs, first, compute)` begins (once for every session: single-flight by `key`, the
evidence metrics' key) a background job that reads each document's whole text -- one document at a
time, through the per-document jobs the Evidence page shares (dashboard/documents/ocr.py
`background`, keyed by `text_key`), so a document read for one is read for the other -- and then
runs `compute()` (the evidence table) and returns its value. Documents are read in a shared order:
the documents of the questions a session shows first (`prefer`, asked by every session that shows
the section meanwhile), the rest after. A document already read comes from memory or the disk caches
(doctext/, ocr/) at once. `progress(key)` says what is left (dashboard/evidence/progress.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.documents import ocr, pdf
from dashboard.evidence.progress import Doc, Tally, reading_order, seconds_left, tally

KEPT = 8  # locatings remembered (their order and counts), oldest dropped first


def text_key(path: Path) -> tuple:
    """The key of a document's whole-text job (ocr.background), shared with the Evidence page."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1
    return ("doc_text", str(path), mtime)


def read_text(path: Path, tick: Callable[[int, int], None] | None = None):
    """The build of a document's whole-text job: pdf.doc_text until complete (ocr.read_whole), long
    documents on the worker processes; `tick(done, total)` also told of each progress step."""
    def build(progress):
        def both(done: int, total: int) -> None:
            progress(done, total)
            if tick is not None:
                tick(done, total)
        try:
            n = pdf.page_count(path)
        except pdf.DocumentError:
            n = 0
        if n >= pdf.PARALLEL_MIN_PAGES:
            pdf.warm_up()
        return ocr.read_whole(pdf.doc_text, path, both)
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
            job = ocr.background(text_key(path), read_text(path, r.tick))
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

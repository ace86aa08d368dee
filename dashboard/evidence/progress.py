"""What is left of locating every answer, and how long it will take. No streamlit here.

Locating every answer reads each document's whole text first (dashboard/evidence/locating.py): a
page with a text layer costs milliseconds, a page without one is read by OCR (about a second).
`Doc` is one document's reading as far as it went; `tally` adds them up (documents and pages done
of their totals, the pages without a text layer apart); `seconds_left` extrapolates the rate
measured so far, and says nothing (None: "estimating…") until a few pages were timed;
`reading_order` puts the documents of the questions in view first.

The cost model: an OCR page is one unit, a text-layer page TEXT_COST units. Pages read by OCR from
its cache (ocr/) or documents read back from the disk cache (doctext/) are counted as done but not
as timed work: the rate is the elapsed time over the units of pages actually read by OCR now
(`Doc.ocr_timed`) plus the text pages. Pages without a text layer not found yet (documents not yet
opened) are expected as in the opened document nearest in bytes a page (a deck of page images
weighs tens of kilobytes a page, a text PDF a few), else in the proportion met so far; none in a
document of fewer than IMAGE_PAGE_BYTES a page (too light to hold a page image worth reading).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

TEXT_COST = 0.002  # one text-layer page against one OCR page (about 2 ms against 1 s on this machine)
MIN_OCR_TIMED = 3  # OCR pages read before the time left is estimated (while OCR pages remain)
MIN_PAGES_TIMED = 20  # text-layer pages read before it is estimated (when no OCR page is expected)
ESTIMATING = "estimating…"
IMAGE_PAGE_BYTES = 8_000  # a document lighter than this a page holds no page images to speak of

T = TypeVar("T")


@dataclass(frozen=True)
class Doc:
    """One document's reading: `pages` its page count (0: not counted yet); `finished`; the pages of
    the text-layer pass read so far (long documents report it); `ocr_pages` the pages found without
    a text layer so far, `ocr_read` of those read (OCR cache included), `ocr_timed` of those read by
    OCR in this reading (not from its cache); `size` the file's bytes (0: not known)."""

    pages: int = 0
    finished: bool = False
    text_read: int = 0
    ocr_pages: int = 0
    ocr_read: int = 0
    ocr_timed: int = 0
    size: int = 0

    @property
    def pages_read(self) -> int:
        if self.finished:
            return self.pages
        if self.ocr_pages:  # the text-layer pass is over once OCR starts
            return max(0, self.pages - self.ocr_pages) + self.ocr_read
        return min(self.text_read, self.pages)

    @property
    def examined(self) -> int:
        """Pages known to have, or not to have, a text layer."""
        return self.pages if self.finished or self.ocr_pages else 0


@dataclass(frozen=True)
class Tally:
    docs_done: int
    docs_total: int
    pages_read: int
    pages_total: int
    ocr_read: int  # pages without a text layer read (OCR cache included)
    ocr_found: int  # pages found without a text layer so far
    ocr_expected: float  # pages without a text layer expected in all (found, and in the pages not opened)
    units_timed: float  # the work done in the measured time (see the module's cost model)
    ocr_timed: int
    units_left: float

    @property
    def ocr_left(self) -> float:
        return max(0.0, self.ocr_expected - self.ocr_read)


def tally(docs: Iterable[Doc]) -> Tally:
    docs = list(docs)
    pages_total = sum(d.pages for d in docs)
    pages_read = sum(d.pages_read for d in docs)
    examined = sum(d.examined for d in docs)
    found = sum(d.ocr_pages for d in docs)
    ocr_read = sum(min(d.ocr_read, d.ocr_pages) for d in docs)
    ocr_timed = sum(d.ocr_timed for d in docs)
    expected = found + sum(_expected_without_text(d, docs, found / examined if examined else 0.0)
                           for d in docs if not d.examined)
    text_read = pages_read - ocr_read
    text_left = max(0.0, (pages_total - expected) - text_read)
    return Tally(docs_done=sum(d.finished for d in docs), docs_total=len(docs), pages_read=pages_read,
                 pages_total=pages_total, ocr_read=ocr_read, ocr_found=found, ocr_expected=expected,
                 units_timed=ocr_timed + TEXT_COST * text_read, ocr_timed=ocr_timed,
                 units_left=max(0.0, expected - ocr_read) + TEXT_COST * text_left)


def _per_page(d: Doc) -> float:
    return math.log(d.size / d.pages) if d.size > 0 and d.pages > 0 else math.nan


def _expected_without_text(d: Doc, docs: list[Doc], share: float) -> float:
    """The pages without a text layer expected in a document not opened yet: in the share of the
    opened document nearest to it in bytes a page (log scale), else in the share met overall."""
    mine = _per_page(d)
    if not math.isnan(mine) and mine < math.log(IMAGE_PAGE_BYTES):
        return 0.0
    known = [(abs(_per_page(o) - mine), o.ocr_pages / o.pages) for o in docs
             if o.examined and o.pages and not math.isnan(_per_page(o))]
    if math.isnan(mine) or not known:
        return share * d.pages
    return min(known)[1] * d.pages


def seconds_left(t: Tally, elapsed_s: float) -> float | None:
    """The time left at the rate measured so far (elapsed_s over the units timed), or None while too
    few pages were timed to say (MIN_OCR_TIMED OCR pages when pages without a text layer remain,
    else MIN_PAGES_TIMED pages)."""
    if t.docs_total and t.docs_done == t.docs_total:
        return 0.0
    if t.ocr_left > 0 and t.ocr_timed < MIN_OCR_TIMED:
        return None
    if t.ocr_left <= 0 and t.pages_read < MIN_PAGES_TIMED:
        return None
    if t.units_timed <= 0 or elapsed_s <= 0:
        return None
    return t.units_left * elapsed_s / t.units_timed


def duration(seconds: float) -> str:
    """"about 40 s", "about 3 min", "about 1 h 5 min" (rounded up to 10 s, then to the minute)."""
    s = max(0, int(-(-seconds // 1)))
    if s < 60:
        return f"about {max(10, -(-s // 10) * 10)} s" if s else "less than 10 s"
    m = -(-s // 60)
    if m < 60:
        return f"about {m} min"
    return f"about {m // 60} h {m % 60} min"


def describe(t: Tally, left_s: float | None) -> str:
    """The progress line: documents and pages done of their totals, the pages without a text layer
    apart, and the time left (or "estimating…")."""
    line = (f"{t.docs_done:,} / {t.docs_total:,} documents, {t.pages_read:,} / {t.pages_total:,} pages read; "
            f"pages without a text layer (read by OCR, the slow ones): {t.ocr_read:,} / {t.ocr_found:,} found")
    more = round(t.ocr_expected - t.ocr_found)
    if more > 0:
        line += f", about {more:,} more expected"
    when = ESTIMATING if left_s is None else duration(left_s) + " left"
    return f"{line} · {when}"


def fraction(t: Tally) -> float:
    """The share of the work done, by the same cost model (0 to 1) for a progress bar."""
    done = t.ocr_read + TEXT_COST * (t.pages_read - t.ocr_read)
    whole = done + t.units_left
    if whole <= 0:
        return 1.0 if t.docs_total and t.docs_done == t.docs_total else 0.0
    return min(1.0, done / whole)


def reading_order(first: Sequence[T], every: Sequence[T]) -> list[T]:
    """`every` (each once) with the items of `first` that it holds moved to the front, in `first`'s order."""
    whole = dict.fromkeys(every)
    front = [x for x in dict.fromkeys(first) if x in whole]
    return front + [x for x in whole if x not in set(front)]


def documents_of(questions: Sequence[str], where: Mapping[str, Iterable[T | None]]) -> list[T]:
    """The documents of these questions, in the questions' order, each once (None: not located)."""
    out: dict[T, None] = {}
    for qid in questions:
        for doc in where.get(qid, ()):
            if doc is not None:
                out.setdefault(doc, None)
    return list(out)

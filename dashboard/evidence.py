"""Where evidence quotes and answers sit on the pages of a document. No streamlit here.

    python -m dashboard.evidence --benchmark DIR --output boxes.jsonl \
        [--runs FILE_OR_DIR ... --answers-output answers.jsonl]

Every rectangle is `(x0, y0, x1, y1)` in PDF points in the coordinate space of PyMuPDF's
`Page.search_for` on that page: unrotated, origin at the top-left corner of the CropBox. The
renderer (dashboard/pagerender.py) maps them onto the rendered, possibly rotated, image.

Location of a quote on its page, first hit wins:
  1. exact: the quote's normalised text (NFKC, so ligatures become letters; curly quotes and
     dashes straightened; case folded; whitespace and line breaks collapsed; a hyphen at a line
     end joined) is a substring of the page's normalised text;
  2. exact: the same with every space and hyphen removed on both sides ("hyphen-ated",
     "well-\\nknown", words run together in a table cell);
  3. fuzzy: rapidfuzz's best partial alignment of the quote against the page's characters (space
     and hyphen free), accepted at a score of at least 0.8 (0.9 for quotes under 12 characters).
A quote with an ellipsis (`…` or `...`) for an omitted middle is located part by part.

PyMuPDF is not thread-safe: every open, read and close happens inside one call under the one
module-level lock shared with the workspace and the renderer. Extracted texts are cached in small
LRUs keyed by (path, mtime_ns, page), never Document objects.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz import fuzz

from scoring.model import DocRef, GoldQuestion, Prediction
from scoring.numbers import read_number
from scoring.runner import bare_main

from .workspace import _PDF_LOCK as PDF_LOCK
from .workspace import inside, locate_document

Rect = tuple[float, float, float, float]

EXACT, FUZZY, NOT_FOUND, NO_DOCUMENT = "exact", "fuzzy", "not_found", "no_document"
EVIDENCE_PAGE, OTHER_PAGE, NOT_IN_DOCUMENT = "evidence_page", "other_page", "not_in_document"
FUZZY_MIN, FUZZY_MIN_SHORT, SHORT_QUOTE = 0.80, 0.90, 12
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp")
MAX_ANSWER_WORDS = 12  # longer answers are searched by their bold parts and numbers only

# ----------------------------------------------------------------------------- normalisation

_TRANSLATE = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00ad": "", "\u200b": "", "\ufeff": "", "\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " ",
}
_CHAR_CACHE: dict[str, str] = {}


def norm_char(c: str) -> str:
    """One character as the search sees it: NFKC (ligatures → letters, … → ...), quotes and dashes
    straightened, case folded, every kind of space a plain space."""
    out = _CHAR_CACHE.get(c)
    if out is None:
        t = _TRANSLATE.get(c, c)
        t = unicodedata.normalize("NFKC", t).casefold() if t else ""
        t = "".join(_TRANSLATE.get(x, " " if x.isspace() else x) for x in t)
        out = _CHAR_CACHE[c] = t
    return out


_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u00ad\u2010\u2011]\s*\n\s*(?=\w)")


_TABLE = str.maketrans(_TRANSLATE)


def norm_text(text: str) -> str:
    """A free text (a quote, an answer, a page's plain text) normalised like the page streams:
    a hyphen ending a line is joined, whitespace collapsed to single spaces. (The same rules as
    norm_char, applied to a whole string at C speed.)"""
    text = _LINE_HYPHEN.sub("", text).translate(_TABLE)
    s = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold().translate(_TABLE)
    return " ".join(s.split())


def tight(text: str) -> str:
    """Normalised text without spaces and hyphens (pass 2 and fuzzy)."""
    return text.replace(" ", "").replace("-", "")


_ELLIPSIS = re.compile(r"\s*(?:\u2026|\.\.\.+|\[\s*(?:\u2026|\.\.\.)\s*\])\s*")


def quote_parts(quote: str) -> list[str]:
    """The parts of a quote written with an ellipsis for an omitted middle (or the whole quote)."""
    parts = [p.strip() for p in _ELLIPSIS.split(quote)]
    return [p for p in parts if norm_text(p)] or [quote]


# ----------------------------------------------------------------------------- page text


@dataclass
class PageText:
    """One page's characters in reading order: `text` (normalised, single spaces) and `packed`
    (no spaces or hyphens), each with the index of the source character of every position."""

    page: int  # 1-based
    width: float  # unrotated, in points: the extent of search_for space
    height: float
    rotation: int
    boxes: list[Rect]  # per source character
    lines: list[int]  # per source character: its line number on the page
    text: str
    text_src: list[int]
    packed: str
    packed_src: list[int]
    has_text: bool = True

    def rects(self, sources: Iterable[int]) -> list[Rect]:
        """One rectangle per line covered by these source characters (as search_for gives them)."""
        by_line: dict[int, list[float]] = {}
        for i in sources:
            if i < 0:
                continue
            x0, y0, x1, y1 = self.boxes[i]
            r = by_line.get(self.lines[i])
            if r is None:
                by_line[self.lines[i]] = [x0, y0, x1, y1]
            else:
                r[0], r[1], r[2], r[3] = min(r[0], x0), min(r[1], y0), max(r[2], x1), max(r[3], y1)
        return [tuple(round(v, 2) for v in r) for r in by_line.values()]  # type: ignore[misc]

    def span_rects(self, start: int, end: int, packed: bool = False) -> list[Rect]:
        src = self.packed_src if packed else self.text_src
        return self.rects(src[start:end])


def _page_text_from_rawdict(raw: dict, number: int, width: float, height: float, rotation: int) -> PageText:
    boxes: list[Rect] = []
    lines: list[int] = []
    chars: list[str] = []
    line_no = 0
    for block in raw.get("blocks", []):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", []):
            start = len(chars)
            for span in line.get("spans", []):
                for ch in span.get("chars", []):
                    chars.append(ch["c"])
                    boxes.append(tuple(ch["bbox"]))
                    lines.append(line_no)
            # a hyphen ending a line after a letter joins the word across the line break
            k = len(chars) - 1
            while k >= start and chars[k].isspace():
                k -= 1
            line_no += 1
            if k > start and chars[k] in "-\u00ad\u2010\u2011" and chars[k - 1].isalpha():
                chars[k] = "\x00soft"
                del chars[k + 1:], boxes[k + 1:], lines[k + 1:]  # no space after a joined hyphen
                continue
            chars.append("\n")
            boxes.append((0.0, 0.0, 0.0, 0.0))
            lines.append(-1)
    text: list[str] = []
    text_src: list[int] = []
    packed: list[str] = []
    packed_src: list[int] = []
    for i, c in enumerate(chars):
        if c == "\x00soft":
            continue
        n = " " if c == "\n" else norm_char(c)
        for x in n:
            if x == " ":
                if text and text[-1] != " ":
                    text.append(" ")
                    text_src.append(-1)
                continue
            text.append(x)
            text_src.append(i)
            if x != "-":
                packed.append(x)
                packed_src.append(i)
    if text and text[-1] == " ":
        text.pop()
        text_src.pop()
    return PageText(number, width, height, rotation, boxes, lines, "".join(text), text_src, "".join(packed), packed_src,
                    bool(text))


class _LRU:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_PAGES = _LRU(512)
_DOCS = _LRU(16)
_COUNTS = _LRU(1024)  # (path, mtime) -> number of pages


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def is_image(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


class DocumentError(Exception):
    """A document that cannot be opened or a page it does not have (shown as a message)."""


def _open(path: Path):
    import pymupdf

    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # pymupdf raises several types for unreadable files
        raise DocumentError(f"{path.name} cannot be opened: {exc}") from None
    if doc.needs_pass:
        doc.close()
        raise DocumentError(f"{path.name} is encrypted (needs a password)")
    return doc


def page_count(path: Path) -> int:
    """The number of pages of a PDF or image file; cached by (path, mtime). Raises DocumentError
    for a file that cannot be opened (not cached)."""
    key = (str(path), _mtime(path))
    hit = _COUNTS.get(key)
    if hit is not None:
        return hit
    with PDF_LOCK:
        with _open(path) as doc:
            n = doc.page_count
    _COUNTS.put(key, n)
    return n


def page_text(path: Path, page: int) -> PageText:
    """The characters of page `page` (1-based) with their boxes; cached by (path, mtime, page)."""
    key = (str(path), _mtime(path), page)
    hit = _PAGES.get(key)
    if hit is not None:
        return hit
    with PDF_LOCK:
        with _open(path) as doc:
            if not 1 <= page <= doc.page_count:
                raise DocumentError(f"page {page} is beyond the document ({doc.page_count} page"
                                    f"{'s' if doc.page_count != 1 else ''})")
            p = doc[page - 1]
            raw = p.get_text("rawdict") if not is_image(path) else {"blocks": []}
            out = _page_text_from_rawdict(raw, page, p.cropbox.width, p.cropbox.height, p.rotation)
    _PAGES.put(key, out)
    return out


@dataclass
class DocText:
    """A whole document's normalised text, one string per page, and the numbers on each page."""

    pages: list[str]
    numbers: list[frozenset[float]]


_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*%?")


def _number_key(value: float) -> float:
    return float(f"{value:.9g}")


def _numbers_in(text: str) -> frozenset[float]:
    out = set()
    for m in _NUMBER_TOKEN.finditer(text):
        v = _token_value(m.group())
        if v is not None:
            out.add(_number_key(v))
    return frozenset(out)


_PLAIN = re.compile(r"-?\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _token_value(token: str) -> float | None:
    """The value of a number token of a page: plain and thousands-separated forms directly (as
    scoring.numbers.read_number reads them), anything else through read_number."""
    token = token.rstrip("%").rstrip(".,")
    if _PLAIN.fullmatch(token):
        return float(token)
    if _THOUSANDS.fullmatch(token):
        return float(token.replace(",", ""))
    got = read_number(token)
    return got[0] if got else None


PARALLEL_MIN_PAGES = 300  # documents this long are read by worker processes, one chunk of pages each
CHUNK_PAGES = 125


def _read_pages(path: str, start: int, stop: int) -> list[tuple[str, frozenset[float]]]:
    """Pages start..stop-1 of a PDF as (normalised text, numbers on it). Runs in this process (under
    the lock) or in a worker process (its own PyMuPDF, no lock needed)."""
    import pymupdf

    out = []
    with pymupdf.open(path) as doc:
        for k in range(start, min(stop, doc.page_count)):
            text = norm_text(doc[k].get_text("text", flags=pymupdf.TEXT_MEDIABOX_CLIP))
            out.append((text, _numbers_in(text)))
    return out


_POOL_LOCK = threading.Lock()
_POOL = None


def _pool():
    """Worker processes for reading long documents (forkserver: no copy of a threaded server), started
    on first use; None on one core or when processes cannot start."""
    global _POOL
    import os

    with _POOL_LOCK:
        if _POOL is None:
            try:
                cores = len(os.sched_getaffinity(0))
            except (AttributeError, OSError):
                cores = os.cpu_count() or 1
            if cores < 2:
                return None
            try:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                _POOL = ProcessPoolExecutor(max_workers=min(cores, 4), mp_context=multiprocessing.get_context("forkserver"))
            except (OSError, ValueError, ImportError):
                return None
        return _POOL


def warm_up() -> None:
    """Start the worker processes ahead of a first long-document search (the Evidence page calls it)."""
    pool = _pool()
    if pool is not None:
        with bare_main():
            for f in [pool.submit(norm_text, "warm") for _ in range(2)]:
                try:
                    f.result(timeout=60)
                except Exception:  # a pool that cannot start: reading falls back to this process
                    return


def _read_parallel(path: Path, n: int, progress) -> list[tuple[str, frozenset[float]]] | None:
    pool = _pool()
    if pool is None:
        return None
    try:
        with bare_main():
            futures = [pool.submit(_read_pages, str(path), a, a + CHUNK_PAGES) for a in range(0, n, CHUNK_PAGES)]
        out: list[tuple[str, frozenset[float]]] = []
        for k, f in enumerate(futures):
            out += f.result(timeout=600)
            if progress:
                progress(min(n, (k + 1) * CHUNK_PAGES), n)
        return out
    except Exception:  # a broken pool: read in this process instead
        return None


def doc_text(path: Path, progress: Callable[[int, int], None] | None = None) -> DocText:
    """Every page's normalised plain text and numbers; cached by (path, mtime). A long PDF is read
    by worker processes in chunks of pages; a short one here, in one open under the lock."""
    key = (str(path), _mtime(path))
    hit = _DOCS.get(key)
    if hit is not None:
        return hit
    n = page_count(path)
    if is_image(path):
        out = DocText([""] * n, [frozenset()] * n)
    else:
        pages = _read_parallel(path, n, progress) if n >= PARALLEL_MIN_PAGES else None
        if pages is None:
            with PDF_LOCK:
                pages = _read_pages(str(path), 0, n)
        out = DocText([t for t, _ in pages], [nums for _, nums in pages])
    _DOCS.put(key, out)
    return out


def clear_caches() -> None:
    _PAGES.clear()
    _DOCS.clear()
    _COUNTS.clear()


# ----------------------------------------------------------------------------- quotes


@dataclass
class Location:
    rects: list[Rect]
    method: str  # exact, fuzzy, not_found, no_document
    score: float  # 0..1
    message: str = ""
    parts: int = 1


def _all(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i >= 0 and needle:
        out.append(i)
        i = hay.find(needle, i + len(needle))
    return out


def _locate_part(pt: PageText, part: str) -> Location:
    q = norm_text(part)
    if not q:
        return Location([], NOT_FOUND, 0.0, "empty quote")
    hits = _all(pt.text, q)
    if hits:
        return Location([r for h in hits for r in pt.span_rects(h, h + len(q))], EXACT, 1.0)
    qp = tight(q)
    hits = _all(pt.packed, qp)
    if hits:
        return Location([r for h in hits for r in pt.span_rects(h, h + len(qp), packed=True)], EXACT, 1.0)
    if not pt.packed or not qp:
        return Location([], NOT_FOUND, 0.0, "the page has no text layer" if not pt.has_text else "")
    if len(qp) > len(pt.packed):
        score = fuzz.ratio(qp, pt.packed) / 100
        return Location([], NOT_FOUND, round(score, 3))
    al = fuzz.partial_ratio_alignment(qp, pt.packed)
    score = round(al.score / 100, 3)
    if score >= (FUZZY_MIN_SHORT if len(qp) < SHORT_QUOTE else FUZZY_MIN):
        return Location(pt.span_rects(al.dest_start, al.dest_end, packed=True), FUZZY, score)
    return Location([], NOT_FOUND, score)


def locate_quote(pt: PageText, quote: str) -> Location:
    """The quote on this page: exact, then fuzzy; an elided quote part by part."""
    parts = quote_parts(quote)
    if len(parts) == 1:
        loc = _locate_part(pt, parts[0])
    else:
        found = [_locate_part(pt, p) for p in parts]
        rects = [r for f in found for r in f.rects]
        located = [f for f in found if f.method != NOT_FOUND]
        score = round(sum(f.score for f in found) / len(found), 3)
        if not located:
            loc = Location([], NOT_FOUND, score, parts=len(parts))
        else:
            method = EXACT if len(located) == len(found) and all(f.method == EXACT for f in found) else FUZZY
            miss = len(found) - len(located)
            loc = Location(rects, method, score, f"{miss} of {len(parts)} parts not found" if miss else "", len(parts))
    if loc.method == NOT_FOUND and not loc.message:
        loc.message = ("the page has no text layer (an image): quotes cannot be searched" if not pt.has_text else
                       f"not found on page {pt.page}; best fuzzy score {loc.score:.2f}")
    return loc


def locate_in_document(path: Path | None, page: int, quote: str) -> Location:
    """A quote on page `page` (1-based) of the document at `path`; never raises."""
    if path is None:
        return Location([], NO_DOCUMENT, 0.0, "document not found")
    try:
        return locate_quote(page_text(path, page), quote)
    except DocumentError as exc:
        return Location([], NOT_FOUND, 0.0, str(exc))
    except OSError as exc:
        return Location([], NO_DOCUMENT, 0.0, f"{path.name}: {exc.strerror or exc}")


# ----------------------------------------------------------------------------- answers

REFUSALS = re.compile(r"^(?:not answerable|unanswerable|n/?a|none|unknown|no answer|cannot be determined|"
                      r"the answer cannot be determined.*|the document does not (?:provide|contain|state|mention).*|"
                      r"not (?:stated|given|mentioned|provided).*|insufficient information.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_PREFIX = re.compile(r"^(?:[-*•]\s*)?(?:.{0,60}?\bthe\s+answer\s+is\s*:?|final\s+answer\s*:|answer\s*:|answer\s+is)\s*", re.I)
_OPTION = re.compile(r"^[A-Da-d]\)\s+")
_LABELS = frozenset({"answer", "evidence", "final answer", "answer is"})


def answer_candidates(answer: str) -> list[str]:
    """What to look for in the document for one answer: its text without wrappers ("The answer
    is", "Answer:", Markdown emphasis, a final period), and its bold parts. Empty for refusals,
    empty answers and single characters (a choice letter names an option, not a text; a single
    digit is on every page)."""
    text = (answer or "").strip()
    if not text:
        return []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    marked = [ln for ln in lines if re.search(r"answer\s*[:*]", ln, re.I)]
    text = (marked[-1] if marked else lines[-1] if len(lines) > 1 and len(lines[-1]) < 80 else text).strip()
    bold = [a or b for a, b in _BOLD.findall(text)]
    text = _PREFIX.sub("", text.replace("**", "").replace("__", "").strip()).strip()
    text = re.sub(r"^[-*•]\s+", "", text).strip()
    text = _PREFIX.sub("", text).strip().rstrip(".").strip().strip('"\'').strip()
    text = _OPTION.sub("", text)
    if REFUSALS.match(norm_text(text)) or norm_text(text).startswith(("not answerable", "unanswerable")):
        return []
    out = []
    if text and len(text.split()) <= MAX_ANSWER_WORDS:
        out.append(text)
    for b in bold:
        b = _OPTION.sub("", _PREFIX.sub("", b.strip()).rstrip(".:").strip())
        if b and b not in out and norm_text(b) not in _LABELS:
            out.append(b)
    out = [c for c in out if not REFUSALS.match(norm_text(c)) and len(c) > 1]
    return out


_IDENTIFIER = re.compile(r"(?<![\d.])[^\W\d_]+-?\d")


def _answer_number(candidate: str) -> tuple[float, tuple[str, ...]] | None:
    """The number an answer stands for, when the answer is essentially a number (with a unit, a
    currency, a percent sign: `1,250`, `EUR 6,228.0 million`, `26.9%`), and its other words, which
    must then stand near the number on the page (`5 months` is not any 5). A bare one-digit integer
    is no evidence of anything (page numbers, list items) and is not searched as a number."""
    text = norm_text(candidate)
    if _IDENTIFIER.search(text):  # HX-420, M30, A100: a name with digits, matched as text
        return None
    got = read_number(text)
    if got is None:
        return None
    words = tuple(w for w in re.findall(r"[^\W\d_]+", text.replace(got[1], " ", 1)) if len(w) > 1)
    if len(words) > 3:
        return None
    if not words and re.fullmatch(r"[-+]?\d", got[1].strip()):
        return None
    return got[0], words


def _number_hits(text: str, value: float, words: tuple[str, ...], page: int = 0) -> list[tuple[int, int]]:
    """Where the number stands in the text; a bare integer equal to the page's own number is taken
    for the page number (a header or footer) and skipped."""
    key = _number_key(value)
    if not words and value == page:
        return []
    out = []
    for m in _NUMBER_TOKEN.finditer(text):
        v = _token_value(m.group())
        if v is None or _number_key(v) != key:
            continue
        if words:
            near = text[max(0, m.start() - 30): m.end() + 30]
            if not any(re.search(rf"(?<!\w){re.escape(w)}", near) for w in words):
                continue
        out.append((m.start(), m.end()))
    return out


def _bounded(hay: str, start: int, end: int) -> bool:
    before = hay[start - 1] if start > 0 else " "
    after = hay[end] if end < len(hay) else " "
    return not before.isalnum() and not after.isalnum()


def _text_hits(hay: str, needle: str) -> list[int]:
    return [i for i in _all(hay, needle) if _bounded(hay, i, i + len(needle))]


def answer_rects(pt: PageText, answer: str) -> list[Rect]:
    """Every occurrence of the answer on this page: its text (word-bounded), and a numeric
    answer's value written in any form (`1,250` finds `1250`)."""
    rects: list[Rect] = []
    for cand in answer_candidates(answer):
        q = norm_text(cand)
        num = _answer_number(cand)
        if num is None:
            for h in _text_hits(pt.text, q):
                rects += pt.span_rects(h, h + len(q))
        else:
            for a, b in _number_hits(pt.text, *num, page=pt.page):
                rects += pt.span_rects(a, b)
    return list(dict.fromkeys(rects))


def answer_pages(doc: DocText, answer: str) -> list[int]:
    """1-based pages whose text holds the answer (text or number)."""
    cands = answer_candidates(answer)
    nums = [n for n in (_answer_number(c) for c in cands) if n is not None]
    texts = [norm_text(c) for c in cands if _answer_number(c) is None]
    keys = {_number_key(v) for v, _ in nums}
    out = []
    for k, page in enumerate(doc.pages):
        if any(t and _text_hits(page, t) for t in texts):
            out.append(k + 1)
        elif keys & doc.numbers[k] and any(_number_hits(page, v, w, k + 1) for v, w in nums):
            out.append(k + 1)
    return out


@dataclass
class AnswerLocation:
    answer: str
    searched: bool  # False: a refusal, an empty answer or a choice letter, or no text layer
    location: str | None  # evidence_page, other_page, not_in_document, no_document; None when not searched
    evidence_pages: dict[str, list[int]] = field(default_factory=dict)  # document -> evidence pages holding it
    other_pages: dict[str, list[int]] = field(default_factory=dict)  # document -> other pages holding it
    missing: list[str] = field(default_factory=list)  # documents that could not be searched
    message: str = ""

    @property
    def in_document(self) -> bool | None:
        if self.location in (EVIDENCE_PAGE, OTHER_PAGE):
            return True
        if self.location == NOT_IN_DOCUMENT:
            return False
        return None

    def flat(self, which: str) -> list[int]:
        pages = self.evidence_pages if which == "evidence" else self.other_pages
        return sorted({p for ps in pages.values() for p in ps})


def _s(items) -> str:
    return "s" if len(items) != 1 else ""


def _pages_text(pages: dict[str, list[int]], several: bool) -> str:
    parts = []
    for doc_id, ps in pages.items():
        if ps:
            shown = ", ".join(map(str, ps[:12])) + (f" and {len(ps) - 12} more" if len(ps) > 12 else "")
            parts.append(f"{doc_id} p. {shown}" if several else shown)
    return "; ".join(parts)


def locate_answer(answer: str, q: GoldQuestion, paths: dict[str, Path | None],
                  progress: Callable[[int, int], None] | None = None) -> AnswerLocation:
    """Where an answer appears in the question's documents: on an evidence page, only on other
    pages (a wrong-page answer), nowhere (likely invented), or unknown (no document)."""
    out = AnswerLocation(answer, False, None)
    if not answer_candidates(answer):
        out.message = "not searched: an empty answer, a refusal or a choice letter"
        return out
    refs = [d for d in q.documents if d.document_id]
    searched_any = False
    for ref in refs:
        path = paths.get(ref.document_id)
        if path is None:
            out.missing.append(ref.document_id)
            continue
        try:
            dt = doc_text(path, progress)
        except (DocumentError, OSError):
            out.missing.append(ref.document_id)
            continue
        if is_image(path):
            continue
        searched_any = True
        hits = answer_pages(dt, answer)
        gold = set(ref.evidence_pages) | {p for it in ref.evidence_items for p in it.pages}
        ev = [p for p in hits if p in gold]
        other = [p for p in hits if p not in gold]
        if ev:
            out.evidence_pages[ref.document_id] = ev
        if other:
            out.other_pages[ref.document_id] = other
    several = len(refs) > 1
    out.searched = searched_any
    if out.evidence_pages:
        out.location = EVIDENCE_PAGE
        out.message = f"appears on the evidence page{'s' if len(out.flat('evidence')) > 1 else ''} " \
                      f"{_pages_text(out.evidence_pages, several)}"
        if out.other_pages:
            out.message += f" (and on page{_s(out.flat('other'))} {_pages_text(out.other_pages, several)})"
    elif out.other_pages:
        out.location = OTHER_PAGE
        out.message = f"appears on page{_s(out.flat('other'))} {_pages_text(out.other_pages, several)}, not on the evidence pages"
    elif searched_any:
        out.location = NOT_IN_DOCUMENT
        out.message = "appears nowhere in the document" + ("s" if several else "") + " (likely invented)"
        if out.missing:
            out.message += f"; not searched: {', '.join(out.missing)} (missing)"
    elif out.missing:
        out.location = NO_DOCUMENT
        out.message = f"not searched: document {', '.join(out.missing)} not found"
    else:
        out.message = "not searched: the documents are page images without a text layer"
    return out


# ----------------------------------------------------------------------------- gold rows


def item_pages(ref: DocRef, k: int) -> list[int]:
    it = ref.evidence_items[k]
    return list(it.pages) or list(ref.evidence_pages)


def gold_rows(q: GoldQuestion, paths: dict[str, Path | None]) -> list[dict]:
    """One row per (evidence item with a quote, page it lists): where the quote sits."""
    rows = []
    for ref in q.documents:
        path = paths.get(ref.document_id)
        for k, it in enumerate(ref.evidence_items):
            if not it.quote.strip():
                continue
            for page in item_pages(ref, k) or [None]:
                if page is None:
                    loc = Location([], NOT_FOUND, 0.0, "the evidence item lists no page")
                else:
                    loc = locate_in_document(path, page, it.quote)
                rows.append({"question_id": q.qid, "document_id": ref.document_id, "page": page, "quote": it.quote,
                             "rects": [list(r) for r in loc.rects], "method": loc.method, "score": loc.score,
                             "item": k, "locator": it.locator, "message": loc.message})
    return rows


_SUCCESS = frozenset({"", "success", "ok", "completed"})


def answered(pred: Prediction | None) -> str:
    """The text to locate: a successful prediction's text; "" for a missing or failed one."""
    if pred is None or pred.status.strip().lower() not in _SUCCESS:
        return ""
    return pred.text


def answer_row(q: GoldQuestion, run: str, pred: Prediction | None, paths: dict[str, Path | None]) -> dict:
    text = pred.text if pred is not None else ""
    loc = locate_answer(answered(pred), q, paths)
    return {"question_id": q.qid, "run": run, "answer": text, "answer_pages_evidence": loc.flat("evidence"),
            "answer_pages_elsewhere": loc.flat("other"), "in_document": loc.in_document, "location": loc.location,
            "documents": {d: {"evidence": loc.evidence_pages.get(d, []), "elsewhere": loc.other_pages.get(d, [])}
                          for d in dict.fromkeys([*loc.evidence_pages, *loc.other_pages])},
            "message": loc.message}


# ----------------------------------------------------------------------------- documents of a benchmark


def image_path(q: GoldQuestion, benchmark: Path | None, docs_dir: Path | None) -> Path | None:
    """A DocVQA record's page image: its `image` field relative to the benchmark folder, then to
    docs/, then its file name in docs/ -- never outside those folders."""
    if not q.image:
        return None
    tries = []
    if benchmark is not None:
        tries.append(inside(benchmark, q.image))
    if docs_dir is not None and docs_dir.is_dir():
        tries += [inside(docs_dir, q.image), inside(docs_dir, Path(q.image.replace("\\", "/")).name)]
    return next((p for p in tries if p is not None and p.is_file()), None)


def question_paths(q: GoldQuestion, locations: dict, benchmark: Path | None, docs_dir: Path | None) -> dict[str, Path | None]:
    """document id -> file for one question: the workspace's located PDFs; a DocVQA image."""
    out: dict[str, Path | None] = {}
    for ref in q.documents:
        loc = locations.get(ref.document_id)
        out[ref.document_id] = loc.path if loc is not None else None
    img = image_path(q, benchmark, docs_dir)
    if img is not None:
        for doc_id in out or [q.image]:
            out[doc_id] = img
    return out


def missing_message(document_id: str, docs_dir: Path | None, how: str = "not found") -> str:
    where = str(docs_dir / f"{document_id}.pdf") if docs_dir else "<benchmark>/docs/" + f"{document_id}.pdf"
    folder = str(docs_dir) if docs_dir else "<benchmark>/docs"
    return (f"Document {document_id} not found ({how}): looked for {where}. Put {document_id}.pdf into {folder}/, "
            f"or give its record in documents.jsonl a \"file\" field naming a PDF inside that folder.")


def _benchmark_paths(bench: Path) -> tuple[list[GoldQuestion], dict[str, Path | None], Path, list[str]]:
    from scoring.loaders import load_documents, load_gold

    from .workspace import Sources, discover

    disc = discover(Sources(benchmark=bench))
    notes = [p.message for p in disc.problems]
    gold = load_gold(disc.gold) if disc.gold else None
    questions = gold.items if gold else []
    if gold:
        notes += [f"{p.file}:{p.line or ''} {p.message}" for p in gold.problems]
    records = {d.document_id: d for d in load_documents(disc.documents).items} if disc.documents else {}
    docs_dir = disc.docs_dir or bench / "docs"
    locations = {}
    for q in questions:
        for ref in q.documents:
            if ref.document_id and ref.document_id not in locations:
                rec = records.get(ref.document_id)
                locations[ref.document_id] = locate_document(ref.document_id, rec.file if rec else "",
                                                             (rec.url if rec else "") or ref.url, docs_dir)
    return questions, locations, docs_dir, notes


def _prediction_files(targets: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for t in targets:
        if t.is_dir():
            out += sorted(p for p in t.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl"))
        else:
            out.append(t)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from scoring.loaders import load_predictions

    from .workspace import run_name

    ap = argparse.ArgumentParser(prog="python -m dashboard.evidence",
                                 description="Locate gold evidence quotes (and runs' answers) on the pages of a "
                                             "benchmark's documents.")
    ap.add_argument("--benchmark", required=True, help="benchmark folder (gold *.jsonl, documents.jsonl, docs/)")
    ap.add_argument("--output", required=True, help="JSONL: one row per evidence item with a quote and page")
    ap.add_argument("--runs", nargs="+", action="extend", default=[], help="prediction files or folders")
    ap.add_argument("--answers-output", help="JSONL: one row per question × run with the answer's location")
    args = ap.parse_args(argv)
    bench = Path(args.benchmark)
    if not bench.is_dir():
        print(f"ERROR: {bench}: no such folder", file=sys.stderr)
        return 1
    if args.runs and not args.answers_output:
        ap.error("--runs needs --answers-output")
    questions, locations, docs_dir, notes = _benchmark_paths(bench)
    for n in notes:
        print(f"warning: {n}", file=sys.stderr)
    if not questions:
        print(f"ERROR: no gold questions in {bench}", file=sys.stderr)
        return 1
    paths = {q.qid: question_paths(q, locations, bench, docs_dir) for q in questions}
    for doc_id, loc in locations.items():
        if loc.path is None and not any(paths[q.qid].get(doc_id) for q in questions if doc_id in q.document_ids):
            print(f"warning: {missing_message(doc_id, docs_dir, loc.how)}", file=sys.stderr)
    counts: dict[str, int] = {}
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for q in questions:
            for row in gold_rows(q, paths[q.qid]):
                counts[row["method"]] = counts.get(row["method"], 0) + 1
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{out}: {sum(counts.values())} rows ({', '.join(f'{k} {v}' for k, v in sorted(counts.items())) or 'none'})")
    if args.answers_output:
        files = _prediction_files([Path(p) for p in args.runs])
        where = Path(args.answers_output)
        where.parent.mkdir(parents=True, exist_ok=True)
        tally: dict[str, int] = {}
        with open(where, "w", encoding="utf-8", newline="\n") as fh:
            for f in files:
                loaded = load_predictions(f)
                for p in loaded.problems:
                    print(f"warning: {p.file}:{p.line or ''} {p.message}", file=sys.stderr)
                preds = {p.qid: p for p in loaded.items}
                run = run_name(f)
                for q in questions:
                    row = answer_row(q, run, preds.get(q.qid), paths[q.qid])
                    tally[str(row["location"])] = tally.get(str(row["location"]), 0) + 1
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{where}: {sum(tally.values())} rows ({', '.join(f'{k} {v}' for k, v in sorted(tally.items()))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The one home of PDF access. PyMuPDF is not thread-safe and Streamlit runs sessions in threads: every open, read, render and close happens inside one call under PDF_LOCK, and only plain values (text, counts, PNG bytes) leave it, cached by (path, mtime_ns, page)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dashboard.evidence import ocr
from dashboard.evidence.pagetext import DocText, PageText, norm_text, numbers_in, page_text_from_rawdict
from scoring.runner import bare_main

pass


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp")


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


def open_document(path: Path):
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
        with open_document(path) as doc:
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
        with open_document(path) as doc:
            if not 1 <= page <= doc.page_count:
                raise DocumentError(f"page {page} is beyond the document ({doc.page_count} page"
                                    f"{'s' if doc.page_count != 1 else ''})")
            p = doc[page - 1]
            raw = p.get_text("rawdict") if not is_image(path) else {"blocks": []}
            out = page_text_from_rawdict(raw, page, p.cropbox.width, p.cropbox.height, p.rotation)
            scan = ocr.needs_ocr(raw, p.cropbox.width, p.cropbox.height, is_image(path), ocr.is_scanned(path))
    if scan:  # no usable text layer: read by OCR outside the lock (dashboard/evidence/ocr.py)
        out = ocr.ocr_page_text(path, page, out)
        if not ocr.was_ocr(path, page):
            return out  # not kept: read again once Tesseract is installed or the page can be read
    _PAGES.put(key, out)
    return out


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
            out.append((text, numbers_in(text)))
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
        pages = [("", frozenset())] * n
    else:
        pages = _read_parallel(path, n, progress) if n >= PARALLEL_MIN_PAGES else None
        if pages is None:
            with PDF_LOCK:
                pages = _read_pages(str(path), 0, n)
    # pages without a usable text layer read by OCR on the worker pool (capped per request)
    pages, complete = ocr.fill_doc_pages(path, pages, is_image(path) or ocr.is_scanned(path), progress)
    out = DocText([t for t, _ in pages], [nums for _, nums in pages])
    if complete:
        _DOCS.put(key, out)
    return out


def clear_caches() -> None:
    _PAGES.clear()
    _DOCS.clear()
    _COUNTS.clear()


PDF_LOCK = threading.Lock()  # PyMuPDF is not thread-safe; Streamlit runs sessions in threads


PDF_SUFFIXES = (".pdf",)


PDF_HEADER_WINDOW = 1024  # the PDF header may follow up to 1 KiB of leading bytes


@dataclass(frozen=True)
class DocCheck:
    """What opening a document once told: its page count, and why it cannot be shown ("" if it can)."""

    pages: int | None
    problem: str = ""


def inspect_document(path: Path) -> DocCheck:
    """Open a document once -- under the PyMuPDF lock, nothing kept -- and say whether it can be
    shown: "empty file (no pages)", "not a PDF" (no %PDF header, e.g. a text file named .pdf),
    "encrypted" (needs a password), "no pages", "corrupt: <why>" (cannot be opened), or for a page
    image "not an image". Never raises."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(PDF_HEADER_WINDOW)
    except OSError as exc:
        return DocCheck(None, f"cannot be read: {exc.strerror or exc}")
    if size == 0:
        return DocCheck(0, "empty file (no pages)")
    is_image = path.suffix.lower() in IMAGE_SUFFIXES
    if not is_image and b"%PDF-" not in head:
        return DocCheck(None, "not a PDF")
    import pymupdf

    with PDF_LOCK:
        try:
            with pymupdf.open(path) as doc:
                if doc.needs_pass:
                    return DocCheck(None, "encrypted (needs a password)")
                n = doc.page_count
        except Exception as exc:  # PyMuPDF raises its own types for broken files
            reason = (str(exc).splitlines() or [type(exc).__name__])[0].replace(str(path), path.name)[:120]
            return DocCheck(None, "not an image" if is_image else f"corrupt: {reason}")
    if n < 1:
        return DocCheck(0, "no pages")
    return DocCheck(n)

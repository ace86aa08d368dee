"""The one home of PDF access. PyMuPDF is not thread-safe and Streamlit runs sessions in threads: every open, read, render and close happens inside one call under PDF_LOCK, and only plain values (text, counts, PNG bytes) leave it, cached by (path, mtime_ns, page)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dashboard.core import settings
from dashboard.core.bounded import Bounded
from dashboard.documents import ocr, pagetext
from dashboard.documents.guard import PDF_LOCK, heavy_page
from dashboard.documents.pagetext import DocText, PageText, norm_text, numbers_in, page_text_from_rawdict
from scoring.workers import bare_main, shared_pool

pass


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp")


_PAGES: Bounded[PageText] = Bounded(512)


DOC_SLOTS = 16  # whole documents kept in memory
_DOCS: Bounded[DocText] = Bounded(DOC_SLOTS)


_COUNTS: Bounded[int] = Bounded(1024)  # (path, mtime) -> number of pages


def mtime(path: Path) -> int:
    """The file's mtime_ns (-1 when it cannot be read): part of every cache key."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


_mtime = mtime


def is_image(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


class DocumentError(Exception):
    """A document that cannot be opened or a page it does not have (shown as a message)."""


# ----------------------------------------------------------------------------- damaged documents

_CODE = re.compile(r"code=\d+: ?")  # MuPDF's error code before its message
_PATH = re.compile(r"/(?:[^\s'\"/]{1,200}/)+")  # the folders of a path (each ends at its own "/": linear)


def damage_reason(exc: BaseException, path: Path) -> str:
    """MuPDF's reason for a failure as one short line without server paths (`cycle in parent chain`);
    the message is cut to 200 characters before any pattern sees it."""
    line = (str(exc).strip().splitlines() or [""])[0][:200] or type(exc).__name__
    line = line.replace(str(path), path.name)
    return _PATH.sub("", _CODE.sub("", line)).strip() or type(exc).__name__


@contextmanager
def mupdf_errors(path: Path, what: str = "") -> Iterator[None]:
    """Any MuPDF failure inside (FzErrorFormat, RuntimeError `code=7: …`, ValueError, MemoryError)
    becomes a DocumentError "<file>: this PDF is damaged: <reason>" (`what` names the part read):
    one document's problem, shown where it is used, never a traceback."""
    try:
        yield
    except DocumentError:
        raise
    except Exception as exc:  # PyMuPDF raises several types, MuPDF's own included
        where = f" ({what})" if what else ""
        raise DocumentError(f"{path.name}: this PDF is damaged{where}: {damage_reason(exc, path)}") from None


def open_document(path: Path):
    import pymupdf

    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # pymupdf raises several types for unreadable files
        raise DocumentError(f"{path.name} cannot be opened: {damage_reason(exc, path)}") from None
    if doc.needs_pass:
        doc.close()
        raise DocumentError(f"{path.name} is encrypted (needs a password)")
    return doc


def page_count(path: Path) -> int:
    """The number of pages of a PDF or image file; cached by (path, mtime). Raises DocumentError
    for a file that cannot be opened (not cached)."""
    key = (str(path), _mtime(path))
    hit = _COUNTS.get(key)
    if hit is None:
        hit = remembered_pages(path, hash_it=False)  # checked when the workspace was loaded (a restart)
    if hit is not None:
        return hit
    with PDF_LOCK:
        with mupdf_errors(path, "page count"), open_document(path) as doc:
            n = doc.page_count
    _COUNTS.put(key, n)
    return n


def page_text(path: Path, page: int) -> PageText:
    """The characters of page `page` (1-based) with their boxes; cached by (path, mtime, page)."""
    key = (str(path), _mtime(path), page)
    hit = _PAGES.get(key)
    if hit is not None:
        return hit
    refused = _REFUSED.get(key)
    if refused is not None:
        raise WorkRefused(refused)
    scanned = ocr.is_scanned(path)
    with PDF_LOCK:
        with mupdf_errors(path, f"page {page}"), open_document(path) as doc:
            p = _page(doc, page)
            heavy = None if is_image(path) else heavy_page(doc, p)
            if heavy is None:
                out, scan = _page_text_of(p, path, page, scanned)
    if heavy is not None:  # read by a worker process with a time budget, the lock not held
        out, scan = run_limited(_page_text_job, (str(path), page, scanned), key, f"page {page} of {path.name}",
                                "read", heavy)
    if scan:  # no usable text layer: read by OCR outside the lock (dashboard/documents/ocr.py)
        out = ocr.ocr_page_text(path, page, out)
        if not ocr.was_ocr(path, page):
            return out  # not kept: read again once Tesseract is installed or the page can be read
    _PAGES.put(key, out)
    return out


def _page(doc, page: int):
    """Page `page` (1-based) of an open document; DocumentError beyond its end."""
    if not 1 <= page <= doc.page_count:
        raise DocumentError(f"page {page} is beyond the document ({doc.page_count} page"
                            f"{'s' if doc.page_count != 1 else ''})")
    return doc[page - 1]


def _page_text_of(p, path: Path, page: int, scanned: bool) -> tuple[PageText, bool]:
    """A loaded page's PageText, and whether it needs OCR (no usable text layer)."""
    import pymupdf

    raw: dict = {"blocks": []}
    if not is_image(path):
        # the characters without the images' pixels (a 39-megapixel picture: 4.7 s of the lock to copy
        # them out, issue 29.5); where the images lie comes from get_image_info, nothing decoded
        raw = p.get_text("rawdict", flags=pymupdf.TEXTFLAGS_RAWDICT & ~pymupdf.TEXT_PRESERVE_IMAGES)
        raw["blocks"] = raw.get("blocks", []) + [{"type": 1, "bbox": tuple(i["bbox"])} for i in p.get_image_info()]
    out = page_text_from_rawdict(raw, page, p.cropbox.width, p.cropbox.height, p.rotation)
    return out, ocr.needs_ocr(raw, p.cropbox.width, p.cropbox.height, is_image(path), scanned)


def _page_text_job(path: str, page: int, scanned: bool) -> tuple[PageText, bool]:
    """page_text's reading in a worker process (its own PyMuPDF: no lock)."""
    where = Path(path)
    with mupdf_errors(where, f"page {page}"), open_document(where) as doc:
        return _page_text_of(_page(doc, page), where, page, scanned)


# ----------------------------------------------------------------------------- heavy pages
#
# A page whose content streams are large (a 1 MB Flate stream can inflate to 1 GiB: 17 s of
# MuPDF holding the GIL and the lock) or whose images have very many pixels is not read or
# rendered here: a worker process does it with a time budget and is killed when the budget runs
# out; the page then says what was refused, and the refusal is remembered for that file version.
# The cost is judged from the raw (compressed) stream sizes, which reading them does not inflate.

WORK_BUDGET_S = 10.0  # a worker's time for one heavy page (reading or rendering)
WORKERS = 2  # heavy pages in work at once; a third waits for one within the budget




REFUSED: Bounded[str] = Bounded(1024)  # (path, mtime, page[, zoom]) -> why a heavy page was refused
_REFUSED = REFUSED


def _serve(conn) -> None:
    """A worker process: run (function, arguments) jobs sent over `conn`, one at a time; send back
    (True, value) or (False, message)."""
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send((True, fn(*args)))
        except DocumentError as exc:
            conn.send((False, str(exc)))
        except Exception as exc:  # the job failed: its message, never a traceback
            conn.send((False, f"{type(exc).__name__}: {str(exc)[:200]}"))


class _Worker:
    def __init__(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True, name="lens-pdf-worker")
        with bare_main():
            self.proc.start()
        child.close()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.join(5)
        self.conn.close()


_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()
_SLOTS = threading.BoundedSemaphore(WORKERS)


class WorkRefused(DocumentError):
    """A heavy page whose work did not finish within the budget (or found no worker)."""


def run_limited(fn, args: tuple, key, what: str, verb: str, why: str, budget: float | None = None):
    """fn(*args) in a worker process, waited for at most `budget` seconds without holding PDF_LOCK;
    on expiry the worker is killed and WorkRefused says so (remembered under `key`)."""
    budget = WORK_BUDGET_S if budget is None else budget
    refusal = (f"{what} was not {verb}: it needs more than {budget:g} s of work ({why}; a page this heavy "
               f"may be a decompression bomb)")
    if not _SLOTS.acquire(timeout=budget):
        raise WorkRefused(f"{what} was not {verb}: every PDF worker is busy with heavy pages; try again")
    worker = None
    try:
        with _IDLE_LOCK:
            worker = _IDLE.pop() if _IDLE else None
        if worker is None:
            try:
                worker = _Worker()
            except (OSError, ValueError, ImportError) as exc:  # no processes: refused, never run under the lock
                raise WorkRefused(f"{what} was not {verb}: no worker process could start ({exc})") from None
        worker.conn.send((fn, args))
        if not worker.conn.poll(budget):
            worker.stop()
            worker = None
            _REFUSED.put(key, refusal)
            raise WorkRefused(refusal)
        ok, value = worker.conn.recv()
    except (EOFError, OSError, BrokenPipeError):  # the worker died (killed, out of memory)
        if worker is not None:
            worker.stop()
            worker = None
        _REFUSED.put(key, refusal)
        raise WorkRefused(refusal) from None
    finally:
        if worker is not None:
            with _IDLE_LOCK:
                _IDLE.append(worker)
        _SLOTS.release()
    if not ok:
        raise DocumentError(value)
    return value


def stop_workers() -> None:
    with _IDLE_LOCK:
        idle, _IDLE[:] = list(_IDLE), []
    for w in idle:
        w.stop()


# ----------------------------------------------------------------------------- whole documents

PARALLEL_MIN_PAGES = 300  # documents this long are read by worker processes, one chunk of pages each


CHUNK_PAGES = 125


LOCAL_CHUNK_PAGES = 25  # a short document read here takes the lock for at most this many pages at a time
HOLD_S = 0.25  # and no further page once a hold has lasted this long (each page is bounded by heavy_page)


def _read_pages(path: str, start: int, stop: int, light_only: bool = False) -> list[tuple[str, frozenset[float]]]:
    """Pages start..stop-1 of a PDF as (normalised text, numbers on it). Runs in this process (under
    the lock) or in a worker process (its own PyMuPDF, no lock needed). `light_only`: stop before
    the first heavy page (heavy_page), which the caller has read by a worker with a budget, and
    before any further page once HOLD_S has passed (a hold of the lock is bounded work: issue 29.5)."""
    import time

    import pymupdf

    out: list[tuple[str, frozenset[float]]] = []
    where = Path(path)
    until = time.monotonic() + HOLD_S
    with mupdf_errors(where, f"pages {start + 1}-{stop}"), open_document(where) as doc:
        for k in range(start, min(stop, doc.page_count)):
            if light_only and out and time.monotonic() > until:
                break
            p = doc[k]
            if light_only and heavy_page(doc, p) is not None:
                break
            text = norm_text(p.get_text("text", flags=pymupdf.TEXT_MEDIABOX_CLIP))
            out.append((text, numbers_in(text)))
    return out


def _read_here(path: Path, n: int, refused: list[int] | None = None) -> list[tuple[str, frozenset[float]]]:
    """Every page read in this process, LOCAL_CHUNK_PAGES per hold of the lock; a heavy page by a
    worker with a time budget (refused: read as a page without text, its number added to `refused`)."""
    pages: list[tuple[str, frozenset[float]]] = []
    while len(pages) < n:
        k = len(pages)
        with PDF_LOCK:
            pages += _read_pages(str(path), k, min(n, k + LOCAL_CHUNK_PAGES), light_only=True)
        if len(pages) == k:  # page k + 1 is heavy (a hold that ran out of time has read one page at least)
            try:
                pages += run_limited(_read_pages, (str(path), k, k + 1), (str(path), _mtime(path), k + 1, "text"),
                                     f"page {k + 1} of {path.name}", "read", "a heavy page")
            except WorkRefused:
                pages.append(("", frozenset()))
                if refused is not None:
                    refused.append(k + 1)
    return pages


def _pool():
    """The shared pool of worker processes (scoring/workers.py) for reading long documents; None on
    one core or when processes cannot start. Budgeted work on heavy pages runs in `run_limited`'s
    processes instead, which can be killed."""
    return shared_pool()


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


PARALLEL_READS: list[str] = []  # documents read by the worker pool in this process (the CLI reports them)


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
        PARALLEL_READS.append(str(path))
        return out
    except DocumentError:  # the document itself: its problem, not the pool's
        raise
    except Exception:  # a broken pool: read in this process instead
        return None


def doc_text(path: Path, progress: Callable[[int, int], None] | None = None) -> DocText:
    """Every page's normalised plain text and numbers; cached by (path, mtime) in memory and, for a
    complete document of DISK_MIN_PAGES pages or more, on disk by the file's content (stored_text):
    a restart reads it back without opening the PDF. A long PDF is read by worker processes in
    chunks of pages; a short one here, in one open under the lock."""
    key = (str(path), _mtime(path))
    hit = _DOCS.get(key)
    if hit is not None:
        return hit
    hit = stored_text(path)
    if hit is not None:
        _DOCS.put(key, hit)
        _COUNTS.put(key, len(hit.pages))
        return hit
    n = page_count(path)
    pages: list[tuple[str, frozenset[float]]] | None
    refused: list[int] = []
    if is_image(path):
        pages = [("", frozenset())] * n
    else:
        pages = _read_parallel(path, n, progress) if n >= PARALLEL_MIN_PAGES else None
        if pages is None:
            pages = _read_here(path, n, refused)
    # pages without a usable text layer read by OCR on the worker pool (capped per request)
    pages, complete = ocr.fill_doc_pages(path, pages, is_image(path) or ocr.is_scanned(path), progress)
    out = DocText([t for t, _ in pages], [nums for _, nums in pages])
    if complete:
        _DOCS.put(key, out)
        state = ocr.status(path)
        if not (refused or state.pages or state.problems or state.unread or state.missing):
            store_text(path, out)
    return out


# ----------------------------------------------------------------------------- document text on disk
#
# A document's text read once is kept in `settings.cache_root() / "doctext"`, one file per document
# named by its content sha256 (ocr.file_sha256): a restart, or a copy of the file elsewhere, reads it
# back instead of opening the PDF (a 2,415-page manual: seconds of work). Only a complete reading is
# kept: not one with heavy pages refused, pages left to OCR or read by it (their OCR cache, ocr/,
# keeps those pages, and ocr.status must learn of them), or Tesseract missing. An entry is a header
# line (format, key, reader, page count, byte count and sha256 of the body) and a JSON body; one
# that fails a check is read again, never trusted. The folder, or an entry, that is a symbolic link
# is not used. Written atomically (a temporary file, then os.replace); a full or read-only folder
# only means the document is read again next time.

DOCTEXT_VERSION = 1
DISK_MIN_PAGES = 20  # shorter documents are read again (milliseconds) rather than kept on disk
_READER: list[str] = []  # a digest of pagetext.py: a change in normalisation or number reading is a new key


def doctext_dir() -> Path:
    return settings.cache_root() / "doctext"


def _reader() -> str:
    if not _READER:
        try:
            _READER.append(hashlib.sha256(Path(pagetext.__file__).read_bytes()).hexdigest()[:16])
        except OSError:
            _READER.append("unknown")
    return _READER[0]


def _usable_dir(folder: Path) -> bool:
    """The folder exists, is a real folder and no symbolic link (nor is the cache folder)."""
    try:
        return not folder.is_symlink() and not folder.parent.is_symlink() and folder.is_dir()
    except OSError:
        return False


def _entry(sha: str) -> Path:
    return doctext_dir() / f"{sha}.json"


def stored_text(path: Path) -> DocText | None:
    """The document's text from the disk cache, or None (not kept, unreadable, or failing a check)."""
    folder = doctext_dir()
    if not _usable_dir(folder):
        return None
    try:
        sha = ocr.file_sha256(path)
        fd = os.open(_entry(sha), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    try:
        meta = json.loads(head)
        if not (isinstance(meta, dict) and meta.get("v") == DOCTEXT_VERSION and meta.get("sha256") == sha
                and meta.get("reader") == _reader() and meta.get("bytes") == len(body)
                and meta.get("digest") == hashlib.sha256(body).hexdigest()):
            return None
        text, numbers = json.loads(body)
        n = meta.get("pages")
        if not (isinstance(n, int) and isinstance(text, list) and isinstance(numbers, list)
                and len(text) == len(numbers) == n and all(isinstance(t, str) for t in text)):
            return None
        return DocText(text, [frozenset(float(x) for x in nums) for nums in numbers])
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


def store_text(path: Path, text: DocText) -> bool:
    """Keep a complete document's text on disk (see above); never raises. Whether it was written."""
    if len(text.pages) < DISK_MIN_PAGES:
        return False
    folder = doctext_dir()
    try:
        sha = ocr.file_sha256(path)
        if not folder.exists() and not folder.parent.is_symlink():
            folder.mkdir(parents=True, exist_ok=True)
        if not _usable_dir(folder):
            return False
        body = json.dumps([text.pages, [sorted(nums) for nums in text.numbers]], ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")
        head = json.dumps({"v": DOCTEXT_VERSION, "sha256": sha, "reader": _reader(), "pages": len(text.pages),
                           "bytes": len(body), "digest": hashlib.sha256(body).hexdigest()}).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head + b"\n" + body)
            os.replace(tmp, _entry(sha))  # replaces a symbolic link at that name, never writes through it
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return True
    except (OSError, ValueError):
        return False


def clear_caches() -> None:
    _PAGES.clear()
    _DOCS.clear()
    _COUNTS.clear()
    _REFUSED.clear()




PDF_SUFFIXES = (".pdf",)


PDF_HEADER_WINDOW = 1024  # the PDF header may follow up to 1 KiB of leading bytes


@dataclass(frozen=True)
class DocCheck:
    """What opening a document once told: its page count, and why it cannot be shown ("" if it can)."""

    pages: int | None
    problem: str = ""


# ----------------------------------------------------------------------------- page counts on disk
#
# The load check's answer for a document that can be shown (its page count) is kept beside the
# document texts, in `<cache folder>/doctext/pages/`: one small entry named by the file's content
# sha256 (a copy of the file elsewhere is hashed, not opened), and one named by a digest of its path,
# device, inode, size and mtime_ns that also holds the sha256 and the count (a restart neither opens
# nor hashes a document checked before). Only a document that can be shown is kept (a damaged one is
# checked again: a newer MuPDF may read it). Entries are checked when read (a wrong one is ignored and
# rewritten), written atomically, one file each (no index rewritten per document: a benchmark of
# 10,000 documents writes 20,000 small files once); a folder or entry that is a symbolic link is not used.

PAGES_VERSION = 1


def pages_dir() -> Path:
    return doctext_dir() / "pages"


def _stat_key(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    key = f"{os.path.abspath(path)}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _read_pages_entry(name: str) -> dict | None:
    folder = pages_dir()
    if not _usable_dir(folder):
        return None
    try:
        fd = os.open(folder / f"{name}.json", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = json.loads(fh.read(4096))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(data, dict) and data.get("v") == PAGES_VERSION and isinstance(data.get("sha256"), str)
            and len(data["sha256"]) == 64 and type(data.get("pages")) is int and data["pages"] > 0):
        return None
    return data


def _write_pages_entry(name: str, sha: str, pages: int) -> None:
    """Never raises: a folder that cannot be written only means the document is opened next time."""
    folder = pages_dir()
    try:
        if not folder.exists() and not folder.parent.is_symlink() and not folder.parent.parent.is_symlink():
            folder.mkdir(parents=True, exist_ok=True)
        if not _usable_dir(folder) or folder.parent.is_symlink():
            return
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"v": PAGES_VERSION, "sha256": sha, "pages": pages}, fh)
            os.replace(tmp, folder / f"{name}.json")  # replaces a symbolic link at that name, never writes through it
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


def remembered_pages(path: Path, hash_it: bool = True) -> int | None:
    """The page count kept for this file (see above), or None. By its path and stat first; else,
    with `hash_it`, by its content's sha256 (the file read, not opened as a PDF)."""
    key = _stat_key(path)
    if key is None:
        return None
    hit = _read_pages_entry(key)
    if hit is not None:
        return hit["pages"]
    if not hash_it:
        return None
    try:
        sha = ocr.file_sha256(path)
    except OSError:
        return None
    hit = _read_pages_entry(sha)
    if hit is None or hit["sha256"] != sha:
        return None
    _write_pages_entry(key, sha, hit["pages"])
    return hit["pages"]


def _remember_pages(path: Path, pages: int) -> None:
    key = _stat_key(path)
    try:
        sha = ocr.file_sha256(path)
    except OSError:
        return
    if key is None or key != _stat_key(path):  # changed while it was read: not kept
        return
    _write_pages_entry(sha, sha, pages)
    _write_pages_entry(key, sha, pages)


def inspect_document(path: Path) -> DocCheck:
    """check_document's answer, from the page counts on disk for a document that could be shown
    before (a restart opens no PDF it checked before); else check_document's, kept when the document
    can be shown. Never raises."""
    pages = remembered_pages(path)
    if pages is not None:
        return DocCheck(pages)
    check = check_document(path)
    if not check.problem and check.pages:
        _remember_pages(path, check.pages)
    return check


def check_document(path: Path) -> DocCheck:
    """Open a document once -- under the PyMuPDF lock, nothing kept -- and say whether it can be
    shown: "empty file (no pages)", "not a PDF" (no %PDF header, e.g. a text file named .pdf),
    "encrypted" (needs a password), "no pages", "corrupt: <why>" (cannot be opened), "damaged: <why>"
    (its page count or its first or last page cannot be read: a cycle in the page tree, `/Count
    2147483648`), or for a page image "not an image". Never raises."""
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
                try:
                    n = doc.page_count
                    for k in {0, n - 1} if n > 0 else ():  # loads the page tree's ends (cheap; no content read)
                        doc.load_page(k)
                except Exception as exc:  # a page tree MuPDF cannot walk
                    return DocCheck(None, f"damaged: {damage_reason(exc, path)[:120]}")
        except Exception as exc:  # PyMuPDF raises its own types for broken files
            return DocCheck(None, "not an image" if is_image else f"corrupt: {damage_reason(exc, path)[:120]}")
    if n < 1:
        return DocCheck(0, "no pages")
    return DocCheck(n)

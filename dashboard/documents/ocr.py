"""Reading pages that have no text layer with OCR (Tesseract through PyMuPDF). No streamlit here.

When: a page is read by OCR only when it has no usable text layer -- fewer than MIN_CHARS
characters, or fewer than FEW_GLYPHS over an image covering most of the page -- and every page of
an image document (PNG, JPG, ... as in DocVQA) or of a document whose `pdf_type` is "scanned" in
documents.jsonl (`register_scanned`).

How: `Page.get_textpage_ocr(language=LANGUAGE, dpi=DPI, full=True)` in a worker process (its own
PyMuPDF, so neither the PDF lock nor the server's GIL is held for the second or so a page takes --
rendering a page with a 39-megapixel image for Tesseract held the server's GIL for seconds (issue
29.5) -- and a page that crashes or hangs MuPDF costs only itself: after the budget, LENS_OCR_BUDGET_S
seconds (120 by default), the worker is killed and the page says what was refused). Nothing of a
page is prepared for Tesseract in the server process: on one core the pool has one worker, and when
no worker process can start the page is named as not read. The
OCR TextPage's rawdict becomes the same `PageText` the text layer gives (pagetext.py), so quote
and answer location work unchanged; its words (boxes in PDF points, search_for space) feed the
viewer's "OCR words" layer.

Cost: every page read is cached on disk under `settings.cache_root() / "ocr"`, keyed by (the
file's content sha256, page, dpi, language), written atomically and checked on read (version,
key, digest of the payload; a bad entry is read again, never trusted), and in memory. A request
OCRs at most MAX_PAGES pages (a whole-document search of a long deck reads the rest on later
requests); a page whose rendering would exceed MAX_PIXELS, or that holds an image of more than
MAX_IMAGE_PIXELS, is refused and named.

Without Tesseract (no language data found) nothing raises: the page keeps its empty text layer
and `status(path).missing` is set, so the panel can say NO_TESSERACT once.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.core import settings
from dashboard.core.bounded import Bounded
from dashboard.core.digests import FileDigests
from dashboard.documents.guard import PDF_LOCK, heavy_page
from dashboard.documents.pagetext import PageText, Rect, norm_text, numbers_in, page_text_from_rawdict
from scoring.workers import bare_main, usable_cores

DPI = 150  # the stated OCR resolution: about 0.3-0.6 s a page on this machine
LANGUAGE = "eng"
MIN_CHARS = 8  # fewer non-space characters than this: no usable text layer
FEW_GLYPHS = 40  # at most this many over an image covering FULL_PAGE of the page: a scan with a stray label
FULL_PAGE = 0.7
MAX_PAGES = 100  # pages OCR'd per request (a whole-document search); the rest on the next request
MAX_PIXELS = 40_000_000  # an OCR rendering never has more pixels than this (a 150 dpi A0 page has 26 M)
MAX_IMAGE_PIXELS = 100_000_000  # nor is a page read that holds an image larger than this
PAGE_BUDGET_S = settings.OCR_BUDGET_DEFAULT_S  # a page still not read after this long is abandoned (its worker
# killed); the setting LENS_OCR_BUDGET_S (dashboard/core/settings.py) changes it, read at each request
CACHE_VERSION = 1
NO_TESSERACT = "no text layer; install tesseract-ocr to search it"
INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-eng"

OK, NOT_NEEDED, REFUSED, FAILED = "ok", "not_needed", "refused", "failed"



# ----------------------------------------------------------------------------- when


def _image_cover(raw: dict, width: float, height: float) -> float:
    """The share of the page covered by its largest image block (0..1)."""
    area = max(width * height, 1.0)
    best = 0.0
    for b in raw.get("blocks", []):
        if b.get("type", 0) != 1:
            continue
        x0, y0, x1, y1 = b.get("bbox", (0, 0, 0, 0))
        w = max(0.0, min(x1, width) - max(x0, 0.0))
        h = max(0.0, min(y1, height) - max(y0, 0.0))
        best = max(best, w * h / area)
    return best


def _glyphs(raw: dict) -> int:
    return sum(1 for b in raw.get("blocks", []) if b.get("type", 0) == 0 for ln in b.get("lines", [])
               for s in ln.get("spans", []) for c in s.get("chars", []) if not c["c"].isspace())


def needs_ocr(raw: dict, width: float, height: float, image_document: bool = False, scanned: bool = False) -> bool:
    """Whether a page (its rawdict, with image blocks) must be read by OCR: an image document or a
    document marked scanned always; else no usable text layer (fewer than MIN_CHARS characters, or
    at most FEW_GLYPHS over an image covering FULL_PAGE of the page)."""
    if image_document or scanned:
        return True
    n = _glyphs(raw)
    if n < MIN_CHARS:
        return True
    return n <= FEW_GLYPHS and _image_cover(raw, width, height) >= FULL_PAGE


_SCANNED: set[str] = set()
_SCANNED_LOCK = threading.Lock()


def _key_path(path: Path | str) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return str(path)


def register_scanned(paths: Iterable[Path | str]) -> None:
    """Documents whose every page is read by OCR (documents.jsonl `pdf_type: scanned`)."""
    with _SCANNED_LOCK:
        _SCANNED.update(_key_path(p) for p in paths)


def is_scanned(path: Path | str) -> bool:
    with _SCANNED_LOCK:
        return _key_path(path) in _SCANNED


def scanned_paths(records: Iterable, locations: dict) -> list[Path]:
    """The located files of document records (scoring.model.DocumentRecord) whose `pdf_type` is "scanned"."""
    out = []
    for rec in records:
        if rec.pdf_type == "scanned":
            loc = locations.get(rec.document_id)
            if loc is not None and getattr(loc, "path", None) is not None:
                out.append(loc.path)
    return out


# ----------------------------------------------------------------------------- tesseract

_TESSDATA: dict[str, str | None] = {}


def tessdata_dir(language: str = LANGUAGE) -> str | None:
    """The Tesseract language-data folder holding `<language>.traineddata`, or None (Tesseract not
    installed): $TESSDATA_PREFIX, Debian's /usr/share/tesseract-ocr/<v>/tessdata, then what
    PyMuPDF finds through the `tesseract` program. Cached per language."""
    if language in _TESSDATA:
        return _TESSDATA[language]
    cands = [os.environ.get("TESSDATA_PREFIX", "")]
    base = Path("/usr/share/tesseract-ocr")
    if base.is_dir():
        cands += [str(p / "tessdata") for p in sorted(base.iterdir(), reverse=True)]
    cands += ["/usr/share/tessdata", "/usr/local/share/tessdata"]
    found = next((c for c in cands if c and (Path(c) / f"{language}.traineddata").is_file()), None)
    if found is None and shutil.which("tesseract"):
        try:
            import pymupdf

            c = pymupdf.get_tessdata()
            found = c if (Path(c) / f"{language}.traineddata").is_file() else None
        except Exception:  # PyMuPDF raises RuntimeError when it finds no Tesseract
            found = None
    _TESSDATA[language] = found
    return found


def available(language: str = LANGUAGE) -> bool:
    return tessdata_dir(language) is not None


# ----------------------------------------------------------------------------- status per document


@dataclass
class OcrStatus:
    """What OCR did for one document in this process: pages read by OCR, pages refused or failed
    (with why), pages left for a later request, and whether Tesseract was missing when needed."""

    pages: set[int] = field(default_factory=set)
    problems: dict[int, str] = field(default_factory=dict)
    unread: set[int] = field(default_factory=set)
    missing: bool = False

    @property
    def message(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"{NO_TESSERACT} ({INSTALL_HINT})")
        if self.problems:
            parts += [f"p. {p}: {m}" for p, m in sorted(self.problems.items())[:5]]
            if len(self.problems) > 5:
                parts.append(f"and {len(self.problems) - 5} more pages not read")
        if self.unread:
            parts.append(f"{len(self.unread)} page{'s' if len(self.unread) != 1 else ''} without a text layer not read "
                         f"yet (at most {MAX_PAGES} are read by OCR per search; search again to read more)")
        return "; ".join(parts)


_STATUS: dict[str, OcrStatus] = {}
_STATUS_LOCK = threading.Lock()


def status(path: Path | str) -> OcrStatus:
    """A copy of the document's OCR status."""
    with _STATUS_LOCK:
        s = _STATUS.get(_key_path(path)) or OcrStatus()
        return OcrStatus(set(s.pages), dict(s.problems), set(s.unread), s.missing)


def _note(path: Path | str, page: int, payload: dict | None, missing: bool = False) -> None:
    with _STATUS_LOCK:
        s = _STATUS.setdefault(_key_path(path), OcrStatus())
        if missing:
            s.missing = True
            return
        s.unread.discard(page)
        if payload is None:
            s.unread.add(page)
        elif payload["status"] == OK:
            s.pages.add(page)
            s.problems.pop(page, None)
        elif payload["status"] in (REFUSED, FAILED):
            s.problems[page] = payload["message"]


def any_missing(paths: Iterable[Path | str]) -> bool:
    """Whether a page of one of these documents needed OCR while Tesseract was missing."""
    return any(status(p).missing for p in paths if p is not None)


def clear() -> None:
    """Forget in-memory caches and statuses (the disk cache stays)."""
    with _STATUS_LOCK:
        _STATUS.clear()
    _MEM.clear()
    _SHA.clear()
    _TESSDATA.clear()
    with _JOBS_LOCK:  # finished background jobs (a running one finishes on its own)
        for k in [k for k, j in _JOBS.items() if not j.running]:
            del _JOBS[k]


# ----------------------------------------------------------------------------- the cache


_MEM: Bounded[dict] = Bounded(2048)  # (sha, page, dpi, language) -> payload
_SHA: Bounded[str] = Bounded(1024)  # (path, mtime_ns, size) -> sha256


def file_sha256(path: Path) -> str:
    """The file's content sha256, cached in the process by (path, mtime, size) and on disk by the
    file's identity (dashboard.core.digests.FileDigests): a restart does not read every document
    again to name its cached text, page count, OCR and located answers."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    hit = _SHA.get(key)
    if hit is None:
        hit = FileDigests().sha256(path)
        _SHA.put(key, hit)
    return hit


def cache_dir() -> Path:
    return settings.cache_root() / "ocr"


def cache_file(sha: str, page: int, dpi: int = DPI, language: str = LANGUAGE) -> Path:
    safe = "".join(c for c in language if c.isalnum() or c in "+_-") or "x"
    return cache_dir() / sha[:2] / f"{sha}-p{page}-d{dpi}-{safe}.json"


def _digest(payload: dict) -> str:
    body = {k: v for k, v in payload.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _valid(payload, sha: str, page: int, dpi: int, language: str) -> bool:
    try:
        return (isinstance(payload, dict) and payload.get("v") == CACHE_VERSION and payload.get("sha256") == sha
                and payload.get("page") == page and payload.get("dpi") == dpi and payload.get("language") == language
                and payload.get("status") in (OK, REFUSED) and isinstance(payload.get("lines"), list)
                and isinstance(payload.get("words"), list) and payload.get("digest") == _digest(payload))
    except (TypeError, ValueError):
        return False


def _read_cache(sha: str, page: int, dpi: int, language: str) -> dict | None:
    key = (sha, page, dpi, language)
    hit = _MEM.get(key)
    if hit is not None:
        return hit
    f = cache_file(sha, page, dpi, language)
    try:
        payload = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not _valid(payload, sha, page, dpi, language):
        return None  # a damaged or foreign entry: read the page again
    _MEM.put(key, payload)
    return payload


def _write_cache(payload: dict) -> None:
    """Keep a read page (a refusal too: it is a property of the file); atomically, never raising."""
    key = (payload["sha256"], payload["page"], payload["dpi"], payload["language"])
    _MEM.put(key, payload)
    if payload["status"] not in (OK, REFUSED):
        return  # a failure (a crash, a time-out) may be the machine's: tried again next time
    f = cache_file(*key)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, f)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass  # a read-only or full cache folder: the page is read again next time


# ----------------------------------------------------------------------------- reading (worker side)


def _r(v: float) -> float:
    return round(float(v), 2)


def read_page(path: str, page: int, dpi: int, language: str, tessdata: str, check: bool,
              limits: tuple[int, int] = (MAX_PIXELS, MAX_IMAGE_PIXELS)) -> dict:
    """OCR page `page` (1-based) of a file: the payload that is cached. Runs in a worker process (its
    own PyMuPDF; never in the server, whose GIL the render for Tesseract would hold). With `check`, a page that
    has a usable text layer is not read (status not_needed). Never raises: a page that cannot be
    read has status refused (too large) or failed, with a message naming it."""
    import pymupdf

    max_pixels, max_image = limits
    name = Path(path).name
    out = {"v": CACHE_VERSION, "page": page, "dpi": dpi, "language": language, "status": OK, "message": "",
           "width": 0.0, "height": 0.0, "rotation": 0, "lines": [], "words": []}
    try:
        with pymupdf.open(path) as doc:
            if not 1 <= page <= doc.page_count:
                return {**out, "status": FAILED, "message": f"page {page} is beyond {name} ({doc.page_count} pages)"}
            p = doc[page - 1]
            out.update(width=_r(p.cropbox.width), height=_r(p.cropbox.height), rotation=p.rotation)
            if check:
                raw = p.get_text("rawdict", flags=0)  # the characters only; images from get_image_info
                info = p.get_image_info()
                blocks = raw.get("blocks", []) + [{"type": 1, "bbox": tuple(i["bbox"])} for i in info]
                if not needs_ocr({"blocks": blocks}, p.cropbox.width, p.cropbox.height):
                    return {**out, "status": NOT_NEEDED}
            else:
                info = p.get_image_info()
            big = max((i.get("width", 0) * i.get("height", 0) for i in info), default=0)
            if big > max_image:
                w, h = max(((i.get("width", 0), i.get("height", 0)) for i in info), key=lambda t: t[0] * t[1])
                return {**out, "status": REFUSED,
                        "message": f"page {page} of {name} holds a {w} × {h} px image, over the OCR limit of "
                                   f"{max_image / 1e6:g} megapixels: not read"}
            px = (p.rect.width * dpi / 72) * (p.rect.height * dpi / 72)
            if px > max_pixels:
                return {**out, "status": REFUSED,
                        "message": f"page {page} of {name} would be {px / 1e6:.0f} megapixels at {dpi} dpi, over the "
                                   f"OCR limit of {max_pixels / 1e6:g}: not read"}
            tp = p.get_textpage_ocr(language=language, dpi=dpi, full=True, tessdata=tessdata)
            raw = p.get_text("rawdict", textpage=tp)
            words = p.get_text("words", textpage=tp)
    except Exception as exc:  # MuPDF raises its own types for damaged pages and images
        why = (str(exc).splitlines() or [type(exc).__name__])[0].replace(path, name)[:160]
        return {**out, "status": FAILED, "message": f"page {page} of {name} cannot be read by OCR: {why}"}
    lines = []
    for b in raw.get("blocks", []):
        if b.get("type", 0) != 0:
            continue
        for ln in b.get("lines", []):
            chars = [[c["c"], *(_r(v) for v in c["bbox"])] for s in ln.get("spans", []) for c in s.get("chars", [])]
            if chars:
                lines.append(chars)
    out["lines"] = lines
    out["words"] = [[_r(w[0]), _r(w[1]), _r(w[2]), _r(w[3]), w[4]] for w in words if str(w[4]).strip()]
    return out


def _finish(payload: dict, sha: str) -> dict:
    payload = {**payload, "sha256": sha}
    payload["digest"] = _digest(payload)
    return payload


# ----------------------------------------------------------------------------- workers

_POOL = None
_POOL_LOCK = threading.Lock()


_workers = usable_cores  # one way of counting cores (scoring/workers.py)


def page_budget_s() -> float:
    """The seconds one page may take: $LENS_OCR_BUDGET_S, else PAGE_BUDGET_S."""
    return settings.ocr_budget_s() if settings.OCR_BUDGET.value() else PAGE_BUDGET_S


def _pool():
    """OCR worker processes (forkserver: no copy of a threaded server), started on first use, one
    on a single core; None when processes cannot start (the pages are then named as not read: a
    page is never prepared for Tesseract in the server process, issue 29.5)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            try:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                _POOL = ProcessPoolExecutor(max_workers=max(1, min(_workers(), 4)),
                                            mp_context=multiprocessing.get_context("forkserver"))
            except (OSError, ValueError, ImportError):
                _POOL = None
        return _POOL


def _kill_pool() -> None:
    """Abandon the pool after a page overran its budget or crashed a worker: its processes are
    killed (a hung MuPDF call cannot be interrupted otherwise) and a new pool starts on next use."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is None:
        return
    for proc in list(getattr(pool, "_processes", {}).values()):  # the stdlib keeps them here
        try:
            proc.kill()
        except (OSError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    """Stop the OCR workers (started again on next use)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown)


def read_pages_by_ocr(path: Path, pages: list[int], dpi: int, language: str, check: bool,
                      progress: Callable[[int, int], None] | None = None) -> dict[int, dict]:
    """Read these pages by OCR on the worker pool (every core, each page within page_budget_s());
    never in this process: without a pool each page is failed, named, and tried again on a later
    request. Returns page -> payload (without sha)."""
    tessdata = tessdata_dir(language) or ""
    limits = (MAX_PIXELS, MAX_IMAGE_PIXELS)
    out: dict[int, dict] = {}
    pool = _pool()
    if pool is not None:
        from concurrent.futures import TimeoutError as FutureTimeout


        try:
            with bare_main():
                futures = {p: pool.submit(read_page, str(path), p, dpi, language, tessdata, check, limits)
                           for p in pages}
        except Exception:  # a pool that cannot start: read here instead
            futures = {}
            _kill_pool()
        if futures:
            each = page_budget_s()
            budget = each * (1 + len(pages) // max(1, min(_workers(), 4)))
            for k, (p, f) in enumerate(futures.items()):
                try:
                    out[p] = f.result(timeout=budget)
                except FutureTimeout:
                    _kill_pool()
                    msg = (f"page {p} of {path.name} was not read by OCR: it needs more than {each:g} s "
                           f"(the budget, {settings.OCR_BUDGET.name}); abandoned")
                    for q in pages:
                        out.setdefault(q, {"status": FAILED, "message": msg if q == p else
                                           f"page {q} of {path.name} not read: OCR abandoned after page {p}"})
                    break
                except Exception as exc:  # a worker that died (MuPDF crashed on the page)
                    _kill_pool()
                    out[p] = {"status": FAILED, "message": f"page {p} of {path.name} crashed the OCR reader "
                                                            f"({type(exc).__name__}): not read"}
                    pool = None
                    break
                if progress:
                    progress(k + 1, len(pages))
            if len(out) == len(pages):
                return out
    for p in pages:  # no worker: never read here (it would hold the lock and the GIL for seconds)
        out.setdefault(p, {"status": FAILED, "message": f"page {p} of {path.name} not read by OCR: no OCR worker "
                                                        f"process could start"})
    return out


# ----------------------------------------------------------------------------- the public calls


def _base(payload: dict) -> dict:
    return {"v": CACHE_VERSION, "page": payload.get("page", 0), "dpi": payload.get("dpi", DPI),
            "language": payload.get("language", LANGUAGE), "width": 0.0, "height": 0.0, "rotation": 0,
            "lines": [], "words": [], "message": "", **payload}


def ocr_pages(path: Path, pages: list[int], dpi: int = DPI, language: str = LANGUAGE, check: bool = False,
              progress: Callable[[int, int], None] | None = None, limit: int | None = None) -> dict[int, dict | None]:
    """page -> payload for these pages: from the cache, else read by OCR (at most `limit` pages this
    request; the pages left over map to None). With `check`, pages with a usable text layer come
    back with status not_needed. Tesseract missing: every page maps to None and the document's
    status says so. Never raises for a page; an unreadable file raises OSError from hashing."""
    path = Path(path)
    if not available(language):
        _note(path, 0, None, missing=True)
        return {p: None for p in pages}
    sha = file_sha256(path)
    out: dict[int, dict | None] = {}
    todo = []
    for p in pages:
        hit = _read_cache(sha, p, dpi, language)
        if hit is None:
            hit = _MEM.get(("not_needed", sha, p, dpi, language))
        if hit is not None:
            out[p] = hit
        else:
            todo.append(p)
    limit = MAX_PAGES if limit is None else max(0, limit)
    now, later = todo[:limit], todo[limit:]
    if now:
        done = read_pages_by_ocr(path, now, dpi, language, check, progress)
        for p in now:
            payload = _finish(_base({"page": p, "dpi": dpi, "language": language, **done[p]}), sha)
            if payload["status"] == NOT_NEEDED:
                _MEM.put(("not_needed", sha, p, dpi, language), payload)
            else:
                _write_cache(payload)
            out[p] = payload
    for p in later:
        out[p] = None
    for p in pages:
        _note(path, p, out[p])
    return out


def page_text_of(payload: dict, page: int, fallback: PageText | None = None) -> PageText:
    """The PageText of an OCR payload, as the text layer would give it (page_text_from_rawdict)."""
    raw = {"blocks": [{"type": 0, "lines": [{"spans": [{"chars": [{"c": c[0], "bbox": tuple(c[1:5])} for c in line]}]}
                                            for line in payload["lines"]]}]}
    w = payload.get("width") or (fallback.width if fallback else 0.0)
    h = payload.get("height") or (fallback.height if fallback else 0.0)
    rot = payload.get("rotation", fallback.rotation if fallback else 0)
    return page_text_from_rawdict(raw, page, w, h, rot)


def plain_text(payload: dict) -> str:
    """The page's text, one line per OCR line (what get_text("text") would give)."""
    return "\n".join("".join(c[0] for c in line) for line in payload["lines"])


def ocr_page_text(path: Path, page: int, fallback: PageText, dpi: int = DPI, language: str = LANGUAGE) -> PageText:
    """The page read by OCR (cached), or `fallback` (its empty text layer) when Tesseract is
    missing or the page is refused or cannot be read -- the document's status says which."""
    try:
        payload = ocr_pages(path, [page], dpi, language)[page]
    except OSError:
        return fallback
    if payload is None or payload["status"] != OK:
        return fallback
    return page_text_of(payload, page, fallback)


def fill_doc_pages(path: Path, pages: list[tuple[str, frozenset[float]]], forced: bool,
                   progress: Callable[[int, int], None] | None = None) -> tuple[list[tuple[str, frozenset[float]]], bool]:
    """A whole document's (normalised text, numbers) per page with the pages that have no usable
    text layer read by OCR: every page when `forced` (an image or scanned document), else the pages
    with at most FEW_GLYPHS characters, checked in the worker. Returns (pages, complete): complete
    is False when pages were left for a later request or Tesseract is missing (do not cache it)."""
    cands = [k + 1 for k, (t, _) in enumerate(pages) if forced or len(t.replace(" ", "")) <= FEW_GLYPHS]
    if cands and not forced:
        cands = _without_text(path, cands)
    if not cands:
        return pages, True
    try:
        got = ocr_pages(path, cands, progress=progress)
    except OSError:
        return pages, False
    out = list(pages)
    complete = True
    for p, payload in got.items():
        if payload is None:
            complete = status(path).missing  # nothing changes before Tesseract is installed
        elif payload["status"] == OK:
            text = norm_text(plain_text(payload))
            out[p - 1] = (text, numbers_in(text))
    return out, complete


_CHECKED: Bounded[list[int]] = Bounded(256)  # (path, mtime_ns, pages) -> the pages among them without a usable text layer


def _without_text(path: Path, pages: list[int]) -> list[int]:
    """Which of these pages (few characters in their text) have no usable text layer: their
    characters and images looked at here, under the PDF lock (a few milliseconds a page)."""
    import pymupdf

    try:
        key = (str(path), path.stat().st_mtime_ns, tuple(pages))
    except OSError:
        return pages
    hit = _CHECKED.get(key)
    if hit is not None:
        return hit
    out = []
    with PDF_LOCK:
        try:
            with pymupdf.open(path) as doc:
                for n in pages:
                    p = doc[n - 1]
                    if heavy_page(doc, p) is not None:  # issue 17: never read under the lock (a bomb: 13 s)
                        continue
                    raw = p.get_text("rawdict", flags=0)
                    raw["blocks"] += [{"type": 1, "bbox": tuple(i["bbox"])} for i in p.get_image_info()]
                    if needs_ocr(raw, p.cropbox.width, p.cropbox.height):
                        out.append(n)
        except Exception:  # a damaged file: the caller's reading already reported it
            return pages
    _CHECKED.put(key, out)
    return out


def page_words(path: Path, page: int, dpi: int = DPI, language: str = LANGUAGE) -> list[tuple[Rect, str]]:
    """The words OCR read on a page, with their boxes in PDF points (search_for space), from the
    cache only ([] for a page not read by OCR): the viewer's "OCR words" layer."""
    try:
        sha = file_sha256(Path(path))
    except OSError:
        return []
    payload = _read_cache(sha, page, dpi, language)
    if payload is None or payload["status"] != OK:
        return []
    return [((w[0], w[1], w[2], w[3]), w[4]) for w in payload["words"]]


def was_ocr(path: Path, page: int) -> bool:
    """Whether this page's text came from OCR in this process."""
    return page in status(path).pages


# ----------------------------------------------------------------------------- whole documents in the background

JOBS_KEPT = 64  # finished jobs remembered (their outcome: done, or the document's problem)


@dataclass
class Job:
    """A whole-document reading running in a background thread (one per document key, shared by
    every session that asks for it meanwhile): its progress in pages, and once `finished`, its
    `value` or the `error` that is that document's problem."""

    key: tuple
    done: int = 0
    total: int = 0
    error: str = ""
    value: object = None
    finished: threading.Event = field(default_factory=threading.Event)
    listeners: list[Callable[[int, int], None]] = field(default_factory=list)

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        for listen in list(self.listeners):
            listen(done, total)

    def listen(self, listener: Callable[[int, int], None]) -> None:
        """Tell `listener(done, total)` of every progress step from now on (a job another session
        started, joined later: its steps from the join on)."""
        self.listeners.append(listener)

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    @property
    def failed(self) -> bool:
        return self.finished.is_set() and bool(self.error)


_JOBS: dict[tuple, Job] = {}  # running jobs and the last JOBS_KEPT finished ones, oldest first
_JOBS_LOCK = threading.Lock()


def _run_job(job: Job, build: Callable[[Callable[[int, int], None]], object]) -> None:
    try:
        job.value = build(job.progress)
    except Exception as exc:  # the document's problem, shown where its answers would be; never the server's
        job.error = (str(exc).splitlines() or [type(exc).__name__])[0][:200] or type(exc).__name__
    finally:
        job.finished.set()


def background(key: tuple, build: Callable[[Callable[[int, int], None]], object],
               listener: Callable[[int, int], None] | None = None) -> Job:
    """The job for `key`: the one running or finished, else `build(progress)` started now in a
    daemon thread. Single-flight: two sessions asking at once get the same job and `build` runs
    once. `build` may call `progress(done, total)` from any thread; an exception it raises becomes
    the job's `error`. A failed job stays failed until `forget(key)` (the page offers a retry).
    `listener(done, total)` is told of the job's progress steps, whoever started it (Job.listen)."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is not None:
            if listener is not None and job.running:
                job.listen(listener)
            return job
        job = _JOBS[key] = Job(key, listeners=[listener] if listener is not None else [])
        finished = [k for k, j in _JOBS.items() if not j.running]
        for k in finished[:max(0, len(finished) - JOBS_KEPT)]:
            del _JOBS[k]
    threading.Thread(target=_run_job, args=(job, build), name=f"lens-doc-{key[0]!s:.40}", daemon=True).start()
    return job


def job(key: tuple) -> Job | None:
    """The job for `key` if one was started (running or finished), else None."""
    with _JOBS_LOCK:
        return _JOBS.get(key)


def forget(key: tuple) -> None:
    """Drop a finished job, so that the next `background(key, ...)` starts it again."""
    with _JOBS_LOCK:
        j = _JOBS.get(key)
        if j is not None and not j.running:
            del _JOBS[key]


def read_whole(read: Callable[..., object], path: Path, progress: Callable[[int, int], None] | None = None):
    """`read(path, progress)` (pdf.doc_text) again until its result is complete: in the background a
    whole-document search reads every page without a text layer, MAX_PAGES per round on the OCR
    workers, instead of one round per search. Stops when a round reads nothing new."""
    value = read(path, progress)
    for _ in range(1 + (len(getattr(value, "pages", ())) // MAX_PAGES)):
        left = status(path).unread
        if not left or status(path).missing:
            break
        value = read(path, progress)
        if status(path).unread == left:
            break
    return value

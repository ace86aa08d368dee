"""Every hold of the PDF lock is bounded work (issue 29.5): ordinary heavy pages that held it just over
a second -- the render of a page with a negative, very large MediaBox, the text of a document of
100,000 objects, one page of a 3,000-page text bomb -- and a 39-megapixel noise page read by OCR
(4.7 s of the lock and the GIL copying its pixels out) go to a worker process; the lock does only
the check that routes them (guard.heavy_page: sizes, counts, at most HEAVY_CONTENT_BYTES inflated).

The holds are measured and printed (`pytest -s`); what is asserted is where the work ran (counted
calls of the worker, the calls this process makes) and a hang guard of 20 times the one-second
promise -- never a tight time. Figures on this machine (2 shared cores), before -> after:
negative MediaBox render 0.99 s -> 0.005 s; text-bomb page 1.42-2.10 s -> 0.03 s; a hold of the
many-object document's text 6.6 s (25 pages) -> 0.52 s; the noise page's text 4.7 s -> 0.004 s."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pymupdf
import pytest

from damaged_kit import many_objects_bytes, negative_mediabox_bytes, noise_page_bytes, text_bomb_bytes, write
from dashboard.core import settings
from dashboard.documents import guard, ocr, pdf
from dashboard.evidence import render

HANG_S = 20.0  # 20 times the one-second promise: a hang, not a measurement


class TimedLock:
    """The PDF lock with each hold's length recorded."""

    def __init__(self, inner) -> None:
        self.inner, self.holds = inner, []

    def __enter__(self):
        self.inner.acquire()
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.holds.append(time.perf_counter() - self.started)
        self.inner.release()

    def acquire(self, *args, **kwargs):
        return self.inner.acquire(*args, **kwargs)

    def release(self) -> None:
        self.inner.release()


@pytest.fixture
def timed(monkeypatch, tmp_path):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    lock = TimedLock(guard.PDF_LOCK)
    for module in (pdf, render, ocr):
        monkeypatch.setattr(module, "PDF_LOCK", lock)
    pdf.clear_caches()
    ocr.clear()
    yield lock
    pdf.clear_caches()
    ocr.clear()
    pdf.stop_workers()


@pytest.fixture
def worker_calls(monkeypatch):
    """The jobs sent to pdf.run_limited's worker processes, by function name."""
    calls: list[str] = []
    real = pdf.run_limited

    def counted(fn, *args, **kwargs):
        calls.append(fn.__name__)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(pdf, "run_limited", counted)
    monkeypatch.setattr(render, "run_limited", counted)
    return calls


def _report(what: str, lock: TimedLock) -> None:
    print(f"\n{what}: {len(lock.holds)} holds of the PDF lock, longest {max(lock.holds, default=0):.3f} s")
    assert max(lock.holds, default=0) < HANG_S


def test_a_negative_mediabox_page_is_rendered_by_a_worker(tmp_path, timed, worker_calls):
    path = write(tmp_path, "negative", negative_mediabox_bytes())
    with pymupdf.open(path) as doc:
        assert doc[0].mediabox.x0 == -14_400 and doc[0].rect.width == 14_400
        assert "pixels to render" in guard.heavy_page(doc, doc[0], 1.0)
        assert guard.heavy_page(doc, doc[0]) is None  # its text is light: read under the lock
    shown = render.render_page(path, 1)
    _report("render of a page with MediaBox [-14400 -14400 0 0]", timed)
    assert worker_calls == ["_render_job"]
    assert shown.capped and shown.width * shown.height <= render.MAX_PIXELS * 1.01
    assert "negative mediabox page" in pdf.page_text(path, 1).text
    assert worker_calls == ["_render_job"]


def test_an_ordinary_page_is_rendered_and_read_under_the_lock(tmp_path, timed, worker_calls):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "an ordinary letter page")
    doc.save(tmp_path / "letter.pdf")
    doc.close()
    path = tmp_path / "letter.pdf"
    for zoom in render.ZOOMS:  # a letter page at the largest zoom: 4.5 megapixels, under the lock
        render.render_page(path, 1, zoom)
    assert "ordinary letter page" in pdf.page_text(path, 1).text
    assert worker_calls == []


def test_one_page_of_a_text_bomb_is_read_and_rendered_by_a_worker(tmp_path, timed, worker_calls):
    """3,000 pages sharing one 3 KB Flate stream that draws 400,000 characters: far under the
    compressed-size threshold, but heavy_page inflates it (at most HEAVY_CONTENT_BYTES + 1 bytes)."""
    path = write(tmp_path, "text-bomb", text_bomb_bytes())
    assert path.stat().st_size < 600_000  # 3,000 page objects and one small stream
    with pymupdf.open(path) as doc:
        assert doc.page_count == 3_000
        assert len(doc.xref_stream_raw(doc[6].get_contents()[0])) < guard.HEAVY_STREAM_BYTES
        assert "MB of content" in guard.heavy_page(doc, doc[6])
    text = pdf.page_text(path, 7)
    render.render_page(path, 7)
    _report("page 7 of a 3,000-page text bomb (text, then render)", timed)
    assert worker_calls == ["_page_text_job", "_render_job"]
    assert text.text.count("lorem ipsum") > 1_000
    assert pdf.page_count(path) == 3_000


def test_a_document_of_100000_objects_is_read_in_bounded_holds(tmp_path, timed, worker_calls, monkeypatch):
    """A page drawing 2,500 form XObjects is judged by counting them, none read (bounded work); a
    document of such pages has its text read by the worker page by page, and the lock is never
    held for 25 pages at once: a hold ends after pdf.HOLD_S (here 0: one page a hold)."""
    big = write(tmp_path, "objects", many_objects_bytes(100_000, pages=40))
    with pymupdf.open(big) as doc:
        assert doc.xref_length() > 100_000
        assert "2,500 form XObjects" == guard.heavy_page(doc, doc[0])
    small = write(tmp_path, "objects-small", many_objects_bytes(3_000, pages=6))  # 500 forms a page
    text = pdf.doc_text(small)
    _report("text of a 6-page document of 3,000 form objects", timed)
    assert worker_calls == ["_read_pages"] * 6 and "w3.7" in text.pages[3] and "w5.499" in text.pages[5]

    # an ordinary document: every page read here, and with HOLD_S = 0 one page per hold
    doc = pymupdf.open()
    for k in range(30):
        doc.new_page().insert_text((72, 72), f"ordinary page number {k + 1}")
    doc.save(tmp_path / "plain.pdf")
    doc.close()
    per_hold: list[int] = []
    real = pdf._read_pages
    monkeypatch.setattr(pdf, "_read_pages", lambda *a, **k: per_hold.append(len(out := real(*a, **k))) or out)
    monkeypatch.setattr(pdf, "HOLD_S", 0.0)
    pdf.clear_caches()
    worker_calls.clear()
    plain = pdf.doc_text(tmp_path / "plain.pdf")
    assert per_hold == [1] * 30 and worker_calls == []
    assert plain.pages[29] == "ordinary page number 30"


@pytest.fixture(scope="module")
def noise(tmp_path_factory) -> Path:
    return write(tmp_path_factory.mktemp("noise"), "noise", noise_page_bytes(39.0))


def _count_server_calls(monkeypatch) -> list[str]:
    """What this (the server's) process asks of PyMuPDF that prepares a page for Tesseract or
    copies an image's pixels: none of it may run here."""
    seen: list[str] = []
    for name in ("get_pixmap", "get_textpage_ocr"):
        real = getattr(pymupdf.Page, name)
        monkeypatch.setattr(pymupdf.Page, name, lambda self, *a, _n=name, _r=real, **k: seen.append(_n) or _r(self, *a, **k))
    real_text = pymupdf.Page.get_text

    def get_text(self, option="text", *a, **k):
        flags = k.get("flags")
        if option in ("dict", "rawdict") and (flags is None or flags & pymupdf.TEXT_PRESERVE_IMAGES):
            seen.append(f"get_text({option}) with images")
        return real_text(self, option, *a, **k)

    monkeypatch.setattr(pymupdf.Page, "get_text", get_text)
    return seen


def test_the_server_stays_responsive_while_a_noise_page_is_read_by_ocr(noise, timed, monkeypatch):
    """A heartbeat thread ticks every 5 ms while the 39-megapixel noise page is read (OCR budget
    4 s: read or abandoned, either way in the worker). Before, 4.7 s passed without a tick (the GIL
    held copying the image out under the lock); the bound on the longest gap is generous (3 s, 20
    times the longest hold measured now). Nothing that renders or OCRs ran in this process."""
    monkeypatch.setenv(settings.OCR_BUDGET.name, "4")
    with pymupdf.open(noise) as doc:
        assert guard.HEAVY_IMAGE_PIXELS < 39_000_000 < ocr.MAX_IMAGE_PIXELS  # heavy for the lock, not refused by OCR
        assert guard.heavy_page(doc, doc[0]) == f"{6244 * 6244:,} image pixels"
    seen = _count_server_calls(monkeypatch)
    ticks: list[float] = []
    stop = threading.Event()

    def heartbeat():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.005)

    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    started = time.perf_counter()
    out = pdf.page_text(noise, 1)
    took = time.perf_counter() - started
    stop.set()
    beat.join(HANG_S)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    _report(f"text of a 39-megapixel noise page ({took:.1f} s with OCR; {len(ticks)} heartbeats, longest gap "
            f"{max(gaps):.3f} s)", timed)
    assert seen == []
    assert took < 10 * HANG_S and max(gaps) < 3.0
    state = ocr.status(noise)
    assert ocr.was_ocr(noise, 1) or "page 1 of noise.pdf" in state.problems[1], state
    assert out.page == 1


def test_a_page_over_the_ocr_budget_says_what_was_refused(noise, timed, monkeypatch):
    """LENS_OCR_BUDGET_S of 10 ms: no machine starts a worker and reads 39 megapixels in that time.
    The page says it was not read, the budget and the setting's name; the server rendered nothing."""
    monkeypatch.setenv(settings.OCR_BUDGET.name, "0.01")
    seen = _count_server_calls(monkeypatch)
    assert not pdf.page_text(noise, 1).has_text
    msg = ocr.status(noise).problems[1]
    assert msg == ("page 1 of noise.pdf was not read by OCR: it needs more than 0.01 s (the budget, "
                   "LENS_OCR_BUDGET_S); abandoned"), msg
    assert "page 1 of noise.pdf was not read by OCR" in ocr.status(noise).message
    assert seen == []


def test_without_a_worker_no_page_is_read_by_ocr_in_the_server(noise, timed, monkeypatch):
    monkeypatch.setattr(ocr, "_pool", lambda: None)
    monkeypatch.setattr(ocr, "read_page", lambda *a, **k: pytest.fail("read in the server process"))
    assert not pdf.page_text(noise, 1).has_text
    assert ocr.status(noise).problems[1] == "page 1 of noise.pdf not read by OCR: no OCR worker process could start"


def test_one_core_still_has_an_ocr_worker(monkeypatch):
    monkeypatch.setattr(ocr, "_workers", lambda: 1)
    monkeypatch.setattr(ocr, "_POOL", None)
    pool = ocr._pool()
    try:
        assert pool is not None and pool._max_workers == 1
    finally:
        ocr.shutdown()


@pytest.mark.parametrize("value, seconds", [("", 120.0), ("30", 30.0), ("2.5", 2.5), ("abc", 120.0), ("0", 120.0),
                                            ("-5", 120.0), ("nan", 120.0), ("1e9", 120.0)])
def test_the_ocr_budget_setting(value, seconds, monkeypatch):
    assert settings.ocr_budget_s({"LENS_OCR_BUDGET_S": value}) == seconds
    monkeypatch.setenv("LENS_OCR_BUDGET_S", value)
    assert ocr.page_budget_s() == seconds

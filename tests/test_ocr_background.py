"""Whole-document reading in the background (dashboard/documents/ocr.py `background`, the Evidence
page's "Where each answer appears"): the job runs once for every session asking meanwhile, its
failure is the document's problem, and the Evidence page is drawn while the job is still running
(the whole-document OCR held on an Event), its answers after it finishes."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.documents import ocr, pdf

ROOT = Path(__file__).resolve().parent.parent
DOCVQA = ROOT / "sample_runs" / "docvqa"
HANG = 60  # a hang guard, far over the milliseconds these waits take


def test_one_job_for_sessions_asking_at_once():
    release, calls = threading.Event(), []

    def build(progress):
        calls.append(1)
        progress(1, 3)
        assert release.wait(HANG)
        progress(3, 3)
        return "text"

    key = ("test-job", "a")
    ocr.forget(key)
    got, start = [], threading.Barrier(4)

    def ask():
        start.wait(HANG)
        got.append(ocr.background(key, build))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG)
    assert len({id(j) for j in got}) == 1
    job = got[0]
    assert job.running and not job.finished.wait(0.05)
    assert ocr.job(key) is job and (job.done, job.total) == (1, 3)
    release.set()
    assert job.finished.wait(HANG)
    assert job.value == "text" and not job.failed and (job.done, job.total) == (3, 3)
    assert ocr.background(key, build) is job and calls == [1]  # finished: kept, not built again
    ocr.forget(key)


def test_a_failed_job_is_its_documents_problem_until_forgotten():
    def broken(progress):
        raise RuntimeError("cycle in parent chain\nsecond line")

    key = ("test-job", "broken")
    ocr.forget(key)
    job = ocr.background(key, broken)
    assert job.finished.wait(HANG)
    assert job.failed and job.error == "cycle in parent chain" and job.value is None
    assert ocr.background(key, lambda p: "ok") is job  # still failed: the page offers a retry
    ocr.forget(key)
    again = ocr.background(key, lambda p: "ok")
    assert again.finished.wait(HANG) and again.value == "ok" and not again.failed
    ocr.forget(key)


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)  # md_escape undone


def answer_lines(at: AppTest) -> list[str]:
    return [plain(m.value) for m in at.markdown if "docvqa-ocr" in plain(m.value)]


def progress_texts(at: AppTest) -> list[str]:
    return [plain(str(getattr(p.proto, "text", ""))) for p in at.get("progress")]


def test_evidence_page_is_drawn_while_the_document_is_read(monkeypatch):
    real, calls = ocr.fill_doc_pages, []
    release, armed = threading.Event(), threading.Event()

    def held(path, pages, forced, progress=None):  # the whole-document OCR, held until released
        if not armed.is_set():
            return real(path, pages, forced, progress)
        calls.append(Path(path).name)
        if progress:
            progress(0, len(pages))
        assert release.wait(HANG)
        return real(path, pages, forced, progress)

    monkeypatch.setattr(ocr, "fill_doc_pages", held)
    try:
        first = app_on(monkeypatch, DOCVQA, {"profile": "docvqa", "sel": "61002"}, timeout=120)  # the overview
        second = app_on(monkeypatch, DOCVQA, {"profile": "docvqa", "sel": "61002"}, timeout=120)
        pdf.clear_caches()  # the overview's metrics read the documents: forget their texts
        ocr.clear()
        armed.set()
        first.switch_page("views/evidence.py").run()
        assert not first.exception, [e.value for e in first.exception]
        shown = "\n".join(c.value for c in first.caption)
        assert "52001 · page 1 of 1" in shown  # the page, its layers and the rest are drawn ...
        assert len(first.get("plotly_chart")) == 1 and first.get("pills")
        assert any("Reading harbour_invoice.png" in t for t in progress_texts(first)), progress_texts(first)
        assert answer_lines(first) == []  # ... the answers not yet
        # a second session asking meanwhile shares the running job
        second.switch_page("views/evidence.py").run()
        assert not second.exception and answer_lines(second) == []
        assert calls == ["harbour_invoice.png"]
        release.set()
        job = ocr.job(("doc_text", str(DOCVQA / "docs" / "harbour_invoice.png"),
                       (DOCVQA / "docs" / "harbour_invoice.png").stat().st_mtime_ns))
        assert job is not None and job.finished.wait(HANG) and not job.failed, job and job.error
        first.run()  # the fragment's poll (a rerun here) finds the job done
        assert not first.exception, [e.value for e in first.exception]
        lines = answer_lines(first)
        assert len(lines) == 1 and "$1,250" in lines[0] and "appears on page 1" in lines[0], lines
        assert progress_texts(first) == []
        assert calls == ["harbour_invoice.png"]  # read once for both sessions
    finally:
        release.set()

"""Locating every answer: what is left and how long (dashboard/evidence/progress.py, pure, pinned
against hand-computed figures), the documents in view read first (dashboard/evidence/locating.py,
readings held on Events), and the overview's progress line while a reading is held (AppTest)."""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.documents import ocr
from dashboard.evidence import grounding, locate_panel, locating
from dashboard.evidence.progress import (
    ESTIMATING,
    Doc,
    describe,
    documents_of,
    duration,
    fraction,
    reading_order,
    seconds_left,
    tally,
)

ROOT = Path(__file__).resolve().parent.parent
DOCVQA = ROOT / "sample_runs" / "docvqa"
HANG = 60  # a hang guard, far over the milliseconds these waits take


def _until(cond) -> bool:
    """Wait for a state (never a moment): True once cond() holds, False after the hang guard."""
    wake = threading.Event()
    for _ in range(HANG * 100):
        if cond():
            return True
        wake.wait(0.01)
    return cond()


# ----------------------------------------------------------------------------- the pure estimate

MIXED = [
    Doc(pages=10, finished=True, ocr_pages=4, ocr_read=4, ocr_timed=4),  # an image-heavy deck, done
    Doc(pages=20, ocr_pages=10, ocr_read=5, ocr_timed=5),  # half its 10 OCR pages read
    Doc(pages=30),  # not opened yet
]


def test_tally_counts_documents_pages_and_the_ocr_pages_apart():
    t = tally(MIXED)
    assert (t.docs_done, t.docs_total) == (1, 3)
    assert (t.pages_read, t.pages_total) == (25, 60)  # 10 + (20 - 10 + 5) + 0
    assert (t.ocr_read, t.ocr_found, t.ocr_timed) == (9, 14, 9)
    # 14 of the 30 pages examined lack a text layer: as many expected in the 30 not opened
    assert t.ocr_expected == pytest.approx(28.0)
    assert t.ocr_left == pytest.approx(19.0)
    assert t.units_timed == pytest.approx(9 + 0.002 * 16)  # 16 text pages read
    assert t.units_left == pytest.approx(19 + 0.002 * 16)  # (60 - 28) - 16 text pages left


def test_time_left_is_the_measured_rate_times_the_work_left():
    t = tally(MIXED)
    # 90.32 s over 9.032 units: 10 s a unit; 19.032 units left
    assert seconds_left(t, 90.32) == pytest.approx(190.32)
    assert describe(t, seconds_left(t, 90.32)) == (
        "1 / 3 documents, 25 / 60 pages read; pages without a text layer (read by OCR, the slow ones): "
        "9 / 14 found, about 14 more expected · about 4 min left")
    assert fraction(t) == pytest.approx((9 + 0.002 * 16) / (9 + 0.002 * 16 + 19 + 0.002 * 16))


def test_estimating_until_a_few_ocr_pages_were_read_now():
    few = tally([Doc(pages=20, ocr_pages=10, ocr_read=2, ocr_timed=2), Doc(pages=5)])
    assert seconds_left(few, 30.0) is None
    assert describe(few, None).endswith("· " + ESTIMATING)
    # 50 pages from the OCR cache are done, but were not timed work: still estimating
    cached = tally([Doc(pages=50, finished=True, ocr_pages=50, ocr_read=50, ocr_timed=0), Doc(pages=50)])
    assert (cached.pages_read, cached.ocr_expected) == (50, 100.0)
    assert seconds_left(cached, 0.5) is None
    assert seconds_left(tally([Doc(pages=20, ocr_pages=10, ocr_read=3, ocr_timed=3)]), 0.0) is None


def test_text_only_documents_are_estimated_from_their_pages():
    t = tally([Doc(pages=400, finished=True), Doc(pages=100)])
    assert t.ocr_expected == 0 and t.pages_read == 400
    assert seconds_left(t, 4.0) == pytest.approx(1.0)  # 0.8 units in 4 s, 0.2 left
    assert seconds_left(tally([Doc(pages=10, finished=True), Doc(pages=100)]), 4.0) is None  # too few pages
    assert seconds_left(tally([Doc(pages=3, finished=True)]), 1.0) == 0.0  # all done


def test_durations_are_rounded_up():
    assert duration(0) == "less than 10 s"
    assert duration(3) == "about 10 s"
    assert duration(45) == "about 50 s"
    assert duration(59.2) == "about 1 min"
    assert duration(190.32) == "about 4 min"
    assert duration(3700) == "about 1 h 2 min"


def test_documents_in_view_come_first():
    assert reading_order(["c", "x", "a", "c"], ["a", "b", "c", "d"]) == ["c", "a", "b", "d"]
    assert reading_order([], ["a", "b", "a"]) == ["a", "b"]
    where = {"q1": ["d2", None], "q2": ["d1", "d2"], "q3": ["d3"]}
    assert documents_of(["q2", "q1", "missing"], where) == ["d1", "d2"]
    assert documents_of(["q3", "q1", "q2"], where) == ["d3", "d2", "d1"]


def test_a_readings_counts_tell_the_text_pass_from_the_ocr_rounds():
    r = locating._Reading(pages=400)
    r.tick(200, 400)
    r.tick(400, 400)  # the text-layer pass of a long document
    assert (r.text_read, r.ocr_pages, r.doc().pages_read) == (400, 0, 400)
    r.tick(1, 100)
    r.tick(100, 100)  # the first OCR round
    r.tick(400, 400)  # the second round reads the text layer again: not OCR pages
    r.tick(1, 30)  # the second round's OCR
    assert (r.ocr_pages, r.ocr_timed, r.ocr_read) == (130, 101, 101)
    assert r.doc().pages_read == 400 - 130 + 101
    short = locating._Reading(pages=12)
    short.tick(3, 12)  # a short document reports its OCR only, even of all its pages
    assert (short.text_read, short.ocr_pages, short.ocr_timed) == (0, 12, 3)


# ----------------------------------------------------------------------------- the documents in view first


def _copy(tmp_path: Path) -> Path:
    bench = tmp_path / "docvqa"
    shutil.copytree(DOCVQA, bench)
    return bench


def test_the_documents_in_view_are_read_first_and_shared(tmp_path):
    docs = sorted((_copy(tmp_path) / "docs").glob("*.png"))
    gates = {p: threading.Event() for p in docs}

    def held(p):
        def build(progress):
            progress(0, 1)
            assert gates[p].wait(HANG)
            return "text"
        return build

    jobs = {p: ocr.background(locating.text_key(p), held(p)) for p in docs}  # the Evidence page's jobs, held
    key = ("test-locate", str(tmp_path))
    loc = locating.start(key, docs, [docs[3]], lambda: "table")
    try:
        assert _until(lambda: loc.current == docs[3])  # the document in view, before the gold order
        assert locating.start(key, docs, [docs[4]], lambda: "other") is loc  # a second session joins it
        gates[docs[3]].set()
        assert _until(lambda: loc.current == docs[4])  # ... and its document in view is next
        t = loc.tally()
        assert (t.docs_done, t.docs_total, t.pages_total) == (1, 5, 5)
        for p in docs:
            gates[p].set()
        assert loc.job is not None and loc.job.finished.wait(HANG)
        assert loc.job.value == "table" and not loc.job.failed
        assert loc.tally().docs_done == 5 and loc.seconds_left() == 0.0
    finally:
        for p in docs:
            gates[p].set()
            jobs[p].finished.wait(HANG)
            ocr.forget(jobs[p].key)


def test_a_document_the_evidence_page_is_reading_is_timed_by_the_locating(tmp_path):
    """The Evidence page reads the question in view's documents with jobs of its own (the same job key as
    the locating's): the locating listens to such a job's steps, so the pages it reads count as timed work
    and the time left moves as documents finish (they counted as untimed before: the estimate stood still)."""
    docs = sorted((_copy(tmp_path) / "docs").glob("*.png"))
    steps = {p: threading.Event() for p in docs}
    ends = {p: threading.Event() for p in docs}

    def held(p):
        def build(progress):
            progress(0, 4)  # four pages without a text layer to read by OCR
            assert steps[p].wait(HANG)
            progress(4, 4)
            assert ends[p].wait(HANG)
            return "text"
        return build

    jobs = {p: ocr.background(locating.text_key(p), held(p)) for p in docs}  # started by the Evidence page
    key = ("test-locate-timed", str(tmp_path))
    loc = locating.start(key, docs, [docs[0]], lambda: "table")
    try:
        assert _until(lambda: loc.current == docs[0] and jobs[docs[0]].listeners)  # it listens to the page's job
        assert loc.seconds_left(loc.started + 10) is None  # nothing timed yet: estimating
        steps[docs[0]].set()
        assert _until(lambda: loc.tally().ocr_timed == 4)  # the steps of a job it did not start
        first = loc.seconds_left(loc.started + 10)
        assert first is not None
        ends[docs[0]].set()
        assert _until(lambda: loc.current == docs[1] and jobs[docs[1]].listeners)
        steps[docs[1]].set()
        assert _until(lambda: loc.tally().ocr_timed == 8 and loc.tally().docs_done == 1)
        later = loc.seconds_left(loc.started + 20)  # twice the time for twice the pages: the same rate, less left
        assert later is not None and later < first
    finally:
        for p in docs:
            steps[p].set()
            ends[p].set()
        assert loc.job is not None and loc.job.finished.wait(HANG)
        for p in docs:
            jobs[p].finished.wait(HANG)
            ocr.forget(jobs[p].key)


def test_a_reloaded_evidence_page_shows_the_locating_under_way(monkeypatch, tmp_path):
    """One page load starts locating every answer (the Evidence page's switch, on large data); a new
    session -- the page reloaded, another tab -- sees that job's progress at once, its switch on, without
    starting anything; once the job is done the metrics are drawn there."""
    bench = _copy(tmp_path)
    reached, release = held_reading(monkeypatch, tmp_path, bench)
    monkeypatch.setattr(grounding, "AUTO_PAIRS", 0)
    try:
        first = app_on(monkeypatch, bench, {"profile": "docvqa"}, timeout=120)
        first.switch_page("views/evidence.py").run()
        assert not first.exception, [e.value for e in first.exception]
        assert first.toggle(key="ev_metrics").value is False
        assert not [t for t in progress_texts(first) if "Locating every answer" in t]
        first.toggle(key="ev_metrics").set_value(True).run()
        assert not first.exception, [e.value for e in first.exception]
        assert reached.wait(HANG)
        assert _until(lambda: any(v.docs and v.docs[0].parent.parent == bench and v.job is not None and v.job.running
                                  for v in locating._LOCATINGS.values()))

        again = app_on(monkeypatch, bench, {"profile": "docvqa"}, timeout=120)  # the page reloaded: a new session
        again.switch_page("views/evidence.py").run()
        assert not again.exception, [e.value for e in again.exception]
        assert again.toggle(key="ev_metrics").value is True
        texts = progress_texts(again)
        assert any("Locating every answer" in t and "0 / 5 documents" in t for t in texts), texts
        assert not any("Turn the switch on" in c.value for c in again.caption)

        release.set()
        loc = next(v for v in locating._LOCATINGS.values() if v.docs and v.docs[0].parent.parent == bench)
        assert loc.job is not None and loc.job.finished.wait(HANG) and not loc.job.failed, loc.job and loc.job.error
        again.run()
        assert not again.exception, [e.value for e in again.exception]
        assert not [t for t in progress_texts(again) if "Locating every answer" in t]
        assert any("precision" in " ".join(map(str, d.value.columns)).lower() for d in again.dataframe), \
            [list(d.value.columns) for d in again.dataframe]
    finally:
        release.set()


# ----------------------------------------------------------------------------- the overview while a reading is held


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def held_reading(monkeypatch, tmp_path: Path, bench: Path) -> tuple[threading.Event, threading.Event]:
    """The large-data path on a copy of the sample (located in a cache folder of its own, not read back by
    LocatedStore), every reading of its documents held at its start: (reached, release) -- set once a
    reading is held; set it to let them go on."""
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    real = ocr.read_whole
    reached, release = threading.Event(), threading.Event()

    def held(read, path, progress=None):
        if Path(path).parent.parent == bench:
            if progress is not None:
                progress(0, 1)  # its one page, without a text layer, about to be read by OCR
            reached.set()
            assert release.wait(HANG)
        return real(read, path, progress)

    monkeypatch.setattr(ocr, "read_whole", held)
    monkeypatch.setattr(locate_panel, "AUTO_PAIRS", 0)
    return reached, release


def progress_texts(at) -> list[str]:
    return [plain(str(getattr(p.proto, "text", ""))) for p in at.get("progress")]


def test_overview_says_documents_and_pages_left_while_a_reading_is_held(monkeypatch, tmp_path):
    bench = _copy(tmp_path)
    reached, release = held_reading(monkeypatch, tmp_path, bench)
    try:
        at = app_on(monkeypatch, bench, {"profile": "docvqa"}, timeout=120)
        assert not at.exception, [e.value for e in at.exception]
        assert reached.wait(HANG)
        at.run()  # the fragment's poll, now that the first document is being read
        assert not at.exception, [e.value for e in at.exception]
        texts = progress_texts(at)
        assert any("0 / 5 documents, 0 / 5 pages read; pages without a text layer (read by OCR, the slow ones): "
                   "0 / 1 found, about 4 more expected · estimating…" in t and "Reading harbour_invoice.png" in t
                   for t in texts), texts
        assert not at.get("plotly_chart") or all("ov_locations" not in str(c.proto) for c in at.get("plotly_chart"))
        release.set()
        loc = next(v for v in locating._LOCATINGS.values() if v.docs and v.docs[0].parent.parent == bench)
        assert loc.job is not None and loc.job.finished.wait(HANG) and not loc.job.failed, loc.job and loc.job.error
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert progress_texts(at) == []
        assert any("where its answer appears" in c.value for c in at.caption), [c.value for c in at.caption]
    finally:
        release.set()


def test_explorer_reads_the_filtered_tables_documents_first(monkeypatch, tmp_path):
    bench = _copy(tmp_path)
    # a cache folder of its own: the answers an earlier test located in a copy of this benchmark are kept
    # on disk by content (dashboard/evidence/locating.py LocatedStore), and would be read back, not located
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    real = ocr.read_whole
    reached, release, order = threading.Event(), threading.Event(), []

    def held(read, path, progress=None):
        if Path(path).parent.parent == bench:
            order.append(Path(path).name)
            reached.set()
            assert release.wait(HANG)
        return real(read, path, progress)

    monkeypatch.setattr(ocr, "read_whole", held)
    monkeypatch.setattr(locate_panel, "AUTO_PAIRS", 0)  # large data: the pages locate on request only
    monkeypatch.setattr(grounding, "AUTO_PAIRS", 0)
    try:
        # the explorer searching "nitrate": the filtered table's questions are on lab_report.png
        at = app_on(monkeypatch, bench, {"profile": "docvqa", "q": "nitrate"}, timeout=120)
        assert [b for b in at.button if b.key == "ov_locate"] and not order  # the overview asks first
        at.switch_page("views/questions.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert not order and at.toggle(key="x_evidence").value is False
        at.toggle(key="x_evidence").set_value(True).run()
        assert not at.exception, [e.value for e in at.exception]
        assert reached.wait(HANG)
        at.run()
        texts = progress_texts(at)
        assert any("0 / 5 documents" in t and "Reading lab_report.png" in t for t in texts), texts
        assert order == ["lab_report.png"]
        release.set()
        loc = next(v for v in locating._LOCATINGS.values() if v.docs and v.docs[0].parent.parent == bench)
        assert loc.job is not None and loc.job.finished.wait(HANG) and not loc.job.failed
        at.run()
        assert progress_texts(at) == [] and not at.exception
        # the page's next run finds them located: the evidence columns are in the table
        assert any("Location" in str(c) for d in at.dataframe for c in d.value.columns), \
            [list(d.value.columns) for d in at.dataframe]
    finally:
        release.set()


def test_pages_without_text_expected_as_in_the_nearest_document_by_bytes_a_page():
    docs = [Doc(pages=10, finished=True, ocr_pages=10, ocr_read=10, ocr_timed=10, size=1_000_000),  # 100 kB a page: images
            Doc(pages=40, finished=True, size=80_000),  # 2 kB a page: a text layer
            Doc(pages=20, size=2_000_000),  # 100 kB a page: expected as the deck, 20 pages
            Doc(pages=30, size=90_000)]  # 3 kB a page: nearest the text PDF (|ln 3 - ln 2| < |ln 3 - ln 100|): none
    t = tally(docs)
    assert t.ocr_expected == pytest.approx(30.0) and t.ocr_found == 10
    assert describe(t, None).startswith("2 / 4 documents, 50 / 100 pages read; pages without a text layer (read by "
                                         "OCR, the slow ones): 10 / 10 found, about 20 more expected")
    # without sizes: the share met overall (10 of 50 opened pages) for the 50 pages not opened
    bare = tally([Doc(pages=10, finished=True, ocr_pages=10, ocr_read=10), Doc(pages=40, finished=True), Doc(pages=50)])
    assert bare.ocr_expected == pytest.approx(20.0)
    # only decks opened so far: a 2 kB-a-page document is still not expected to need OCR (too light)
    decks = tally([Doc(pages=10, finished=True, ocr_pages=10, ocr_read=10, ocr_timed=10, size=600_000),
                   Doc(pages=40, size=80_000), Doc(pages=12, size=720_000)])
    assert decks.ocr_expected == pytest.approx(22.0)  # 10 found + the other deck's 12

"""Annotations in a real browser (issue 21): a note written in one browser context -- one Streamlit
session -- is seen in another, with who wrote it; the second person's explorer filters by its tag.
The server runs on tests/fixtures/mini_bench with LENS_DATA_DIR in a temporary folder, so the
database is this test's own."""

from __future__ import annotations

from urllib.parse import urlencode

from browser_kit import check_clean, open_page, serve, settle, shot, wait_idle
from dashboard.annotations.location import FILE_NAME
from dashboard.annotations.store import AnnotationStore

QID, RUN = "adubench_single_000001", "alpha"
TEXT = "Reads the 2022 column <b>not</b> 2023"


def runs_chosen(page) -> str:
    """The explorer's Runs picker as the user sees it (its chips)."""
    return page.locator('[data-testid="stMultiSelect"]').filter(has=page.get_by_label("Runs", exact=True)).first.inner_text()


def note_form(page, label: str):
    return page.locator('[data-testid="stForm"]').filter(has=page.get_by_label(label))


def test_a_note_written_in_one_session_is_seen_in_another(tmp_path, mini_bench, browser):
    from playwright.sync_api import expect

    data = tmp_path / "data"
    # the session's Chromium (browser_kit's `browser` fixture): a second sync Playwright in this thread
    # would fail ("using Playwright Sync API inside the asyncio loop") once another browser test ran
    with serve({"LENS_BENCHMARK": str(mini_bench), "LENS_DATA_DIR": str(data)}, name="annotations") as (url, log):
        link = f"{url}/questions?{urlencode({'sel': QID, 'run': RUN})}"

        # 1. Ana, in her own browser context: name once, a note with a tag on alpha's answer, Save.
        errors: list[str] = []
        ana = open_page(browser, url, errors)
        ana.goto(link)
        settle(ana, "Question explorer")
        assert RUN in runs_chosen(ana), f"the link's run is not chosen: {runs_chosen(ana)!r} at {ana.url}"
        name = ana.get_by_label("Your name (saved with every note)")
        name.fill("Ana")
        name.press("Tab")
        wait_idle(ana)
        shot(ana, "annotations-00-named.png")
        assert RUN in runs_chosen(ana), f"the run was dropped when the name was typed: {runs_chosen(ana)!r} at {ana.url}"
        form = note_form(ana, "Note on this answer")
        form.get_by_label("Note on this answer").fill(TEXT)
        form.get_by_role("button", name="Save").click()
        wait_idle(ana)
        assert RUN in runs_chosen(ana), f"the run was dropped on Save: {runs_chosen(ana)!r} at {ana.url}"
        expect(ana.get_by_text("Last saved by Ana")).to_be_visible()
        check_clean(ana, errors, log, "Ana saved")
        shot(ana, "annotations-01-saved.png")
        stored = AnnotationStore(data / FILE_NAME).notes(next(iter(AnnotationStore(data / FILE_NAME).benchmarks())))
        assert [(n.question_id, n.run, n.text, n.author) for n in stored] == [(QID, RUN, TEXT, "Ana")]

        # 2. Bo, in another context (another session, nothing shared but the server): sees it, as text.
        errors2: list[str] = []
        bo = open_page(browser, url, errors2)
        bo.goto(link)
        settle(bo, "Question explorer")
        expect(note_form(bo, "Note on this answer").get_by_label("Note on this answer")).to_have_value(TEXT)
        expect(bo.get_by_text("Last saved by Ana")).to_be_visible()
        assert bo.locator("b", has_text="not").count() == 0  # the note's markup is never rendered
        check_clean(bo, errors2, log, "Bo reads")
        shot(bo, "annotations-02-other-session.png")

        # 3. Bo's explorer from a link with note=1: only the question with Ana's note.
        bo.goto(f"{url}/questions?{urlencode({'run': RUN, 'note': '1'})}")
        settle(bo, "Question explorer")
        expect(bo.get_by_text("1 of 10 questions")).to_be_visible()
        check_clean(bo, errors2, log, "Bo filters")
        shot(bo, "annotations-03-filtered.png")

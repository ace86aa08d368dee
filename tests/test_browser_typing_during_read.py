"""Typing while a document is read in the background (issue 29, item 1). The Evidence viewer's
answer search waits for the question's document to be read; while it is read, a fragment polls the
reading. That poller used to end with a full-page rerun, which re-created the page's widgets while
the user was typing in them: a typed name vanished, the Runs picker came back empty, Save was
refused. Here the reading is held on purpose (tests/held_reading.py: until a file exists), the user
types during it (each commit's own rerun waited for, the poller polling throughout), the reading is
released while the note is still being typed, and everything typed must still be there -- then Save must
work, with the name last committed as the note's author. Every wait is for a state (a text shown, the app idle),
never for a moment."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from browser_kit import check_clean, open_page, serve, settle, shot, wait_idle
from dashboard.annotations.location import FILE_NAME
from dashboard.annotations.store import AnnotationStore

HELD = Path(__file__).resolve().parent / "held_reading.py"
QID, RUN = "adubench_single_000001", "alpha"
TEXT = "Typed while the document was being read"


def runs_chosen(page) -> str:
    return page.locator('[data-testid="stMultiSelect"]').filter(has=page.get_by_label("Runs", exact=True)).first.inner_text()


def test_what_is_typed_during_a_background_reading_is_kept(tmp_path, mini_bench, browser):
    from playwright.sync_api import expect

    release = tmp_path / "release"
    data = tmp_path / "data"
    env = {"LENS_BENCHMARK": str(mini_bench), "LENS_DATA_DIR": str(data), "LENS_TEST_RELEASE": str(release)}
    with serve(env, name="typing-during-read", launcher=HELD) as (url, log):
        errors: list[str] = []
        page = open_page(browser, url, errors)
        page.goto(f"{url}/questions?{urlencode({'sel': QID, 'run': RUN})}")
        settle(page, "Question explorer")
        reading = page.get_by_text("to search it for each answer", exact=False)
        expect(reading.first).to_be_visible()  # the reading is held: the poller is running
        assert RUN in runs_chosen(page), f"the link's run is not chosen: {runs_chosen(page)!r}"

        # 1. typed and committed while the poller runs, several times over its polls
        name = page.get_by_label("Your name (saved with every note)")
        # each commit's own rerun is waited for (a box typed into while a full rerun re-creates it loses the
        # keys: Streamlit's, not the poller's); the poller keeps polling through all of it
        for typed in ("A", "An", "Ana"):
            name.fill(typed)
            name.press("Tab")
            wait_idle(page)
            page.get_by_role("textbox", name="Search", exact=True).fill("adubench")
            page.get_by_role("textbox", name="Search", exact=True).press("Enter")
            wait_idle(page)
            page.get_by_role("textbox", name="Search", exact=True).fill("")
            page.get_by_role("textbox", name="Search", exact=True).press("Enter")
            wait_idle(page)
        expect(reading.first).to_be_visible()  # still reading: what follows happens during it
        expect(name).to_have_value("Ana")
        assert RUN in runs_chosen(page), f"the run was dropped while the document was read: {runs_chosen(page)!r}"

        # 2. the reading finishes while the user types and commits (the poller's last poll among them)
        form = page.locator('[data-testid="stForm"]').filter(has=page.get_by_label("Note on this answer"))
        form.get_by_label("Note on this answer").fill(TEXT)
        release.touch()
        for typed in ("Ana B", "Ana"):
            name.fill(typed)
            name.press("Tab")
            wait_idle(page)
        expect(page.get_by_text("Reading ", exact=False).filter(has_text="to search it")).to_have_count(0, timeout=60_000)
        expect(page.get_by_text(f"{RUN}: “", exact=False).first).to_be_visible()  # the answer line, drawn in place
        wait_idle(page)
        shot(page, "typing-during-read-01-read.png")
        expect(form.get_by_label("Note on this answer")).to_have_value(TEXT)
        expect(name).to_have_value("Ana")
        assert RUN in runs_chosen(page), f"the run was dropped when the reading finished: {runs_chosen(page)!r}"

        # 3. Save works with what was typed
        form.get_by_role("button", name="Save").click()
        wait_idle(page)
        expect(page.get_by_text("Last saved by Ana")).to_be_visible()
        check_clean(page, errors, log, "typed during a reading")
        store = AnnotationStore(data / FILE_NAME)
        notes = store.notes(next(iter(store.benchmarks())))
        assert [(n.question_id, n.run, n.text, n.author) for n in notes] == [(QID, RUN, TEXT, "Ana")]

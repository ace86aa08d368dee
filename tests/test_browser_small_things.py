"""Issue 34, section 4, in a real browser at 1,400 and 800 px: with the annotations server stopped (a real
PostgreSQL, tests/pg_kit.py), every "Try again" button -- the overview's failure modes, the question's
note forms -- shows its whole label (it read "Tr…" at 1,400 px and lost its words at 800 in a fifth of a
column); the overview says the database cannot be reached. Screenshots in test-output/browser/."""

from __future__ import annotations

from urllib.parse import urlencode

from browser_kit import check_clean, open_page, serve, settle, shot, wait_idle

QID, RUN = "adubench_single_000001", "alpha"  # tests/fixtures/mini_bench
CUT = """el => [el, ...el.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1).length"""


def whole(page, where: str, n: int) -> None:
    """`n` "Try again" buttons are shown (waited for: the page may still be drawing), each with its whole label."""
    from playwright.sync_api import expect

    buttons = page.get_by_role("button", name="Try again")
    expect(buttons).to_have_count(n)
    wait_idle(page)
    for k in range(n):
        b = buttons.nth(k)
        b.scroll_into_view_if_needed()
        assert b.inner_text().strip().endswith("Try again"), f"{where}: button {k} reads {b.inner_text()!r}"
        assert b.evaluate(CUT) == 0, f"{where}: button {k}'s label is cut"


def test_try_again_is_whole_and_the_overview_says_the_database_is_away(tmp_path, mini_bench, browser):
    import pg_kit
    from dashboard.annotations.store import AnnotationStore

    with pg_kit.running() as pg:
        where = pg.fresh_database("whole")
        AnnotationStore(where).vocabulary()  # made, then the server stops
        pg.stop()
        env = {"LENS_BENCHMARK": str(mini_bench), "LENS_DATA_DIR": str(tmp_path / "data"), "LENS_DATABASE_URL": where}
        with serve(env, name="database-away") as (url, log):
            for width in (1400, 800):
                errors: list[str] = []
                page = open_page(browser, url, errors, viewport={"width": width, "height": 1000})
                page.goto(url)
                settle(page, "Leaderboard")
                page.get_by_role("heading", name="Failure modes").scroll_into_view_if_needed()
                notice = page.get_by_text("The annotations database cannot be reached now, so the failure modes")
                notice.wait_for()
                assert page.get_by_text("No tagged notes yet").count() == 0
                whole(page, f"overview at {width} px", 1)
                shot(page, f"small-things-overview-database-away-{width}.png")
                check_clean(page, errors, log, f"overview at {width} px")
                page.goto(f"{url}/questions?{urlencode({'sel': QID, 'run': RUN})}")
                settle(page, "Question detail")
                page.get_by_text("Triage notes").first.scroll_into_view_if_needed()
                # the database's absence said once for the note forms, with one Try again (beside the answer's note)
                whole(page, f"note forms at {width} px", 1)
                shot(page, f"small-things-note-forms-database-away-{width}.png")
                check_clean(page, errors, log, f"note forms at {width} px")
                page.context.close()
            assert pg_kit.PASSWORD not in log.read_text(errors="replace")

"""End to end in headless Chromium: the metric disagreement page on sample_runs/.

Open the page from the navigation -> the category bars and the scatter are drawn -> click the
bar segment of one category of one run -> exactly that run's answers of that category are listed
and the URL names them -> select an answer -> its why panel (category, character diff as text,
token overlap) -> the URL opened in a fresh context restores the list. The same checks as the
other browser tests: no exception box, no console error, no request off the machine, no traceback.
At 800 px the charts fit the window. Screenshots go to test-output/browser/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from browser_kit import ROW_PX, check_clean, open_page, settle, shot, wait_fitted, wait_idle

RUN = "small-9b"
CATEGORY = "false_refusal"
WORDS = "False refusal"  # how the page names it (scoring.categories.CATEGORY_LABELS)
EXPECTED = json.loads((Path(__file__).resolve().parent / "fixtures" / "expected" / "categories_sample_runs.json")
                      .read_text())["runs"][RUN]["primary"][CATEGORY]

pytestmark = pytest.mark.browser


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def answers_grid(page):
    return page.locator('[data-testid="stDataFrame"]').filter(has_text="Question id").first  # its pinned first column


def answer_rows(page, count: int) -> list[list[str]]:
    """(question id, run) of the rows of the answers table (its question id column is pinned first),
    once `count` rows are drawn."""
    from playwright.sync_api import expect

    grid = answers_grid(page)
    grid.scroll_into_view_if_needed()
    rows = grid.locator('tr[role="row"]:has(td)')
    expect(rows).to_have_count(count)
    out = []
    for k in range(count):
        out.append(rows.nth(k).locator("td").all_inner_texts()[:2])
    return out


def test_category_click_lists_its_answers_and_why(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors)
    page.goto(url)
    settle(page, "Leaderboard")
    page.get_by_role("link", name="Metric disagreement").click()
    settle(page, "Categories per run")
    check_clean(page, errors, log, "disagreement page")
    assert urlsplit(page.url).path == "/disagreement"

    # the bars: one segment per (run, category) with answers; click RUN's CATEGORY segment
    bars = page.locator(".js-plotly-plot .barlayer .point")
    # the chart drawn: a segment shows (the first in the page may be a run's empty one, of zero size)
    bars.filter(visible=True).first.wait_for()
    data = bars.evaluate_all("""els => els.map(el => {
        const gd = el.closest('.js-plotly-plot');
        const trace = el.closest('.trace');
        const k = [...trace.parentNode.children].indexOf(trace);
        return gd.data[k].customdata[el.__data__.i]; })""")
    k = data.index([RUN, CATEGORY])
    bar = bars.nth(k)
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text(f"Category: {WORDS}").first.wait_for()
    shot(page, "20-disagreement-bars-hover.png")
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    check_clean(page, errors, log, "category clicked")
    assert params(page.url)["cat"] == [CATEGORY] and params(page.url)["dis_run"] == [RUN]
    expect(page.get_by_text(re.compile(rf"^category {WORDS} · run {RUN}: {EXPECTED} answers$"))).to_be_visible()
    rows = answer_rows(page, EXPECTED)
    assert all(r[1] == RUN for r in rows) and len({r[0] for r in rows}) == EXPECTED, rows
    shot(page, "21-disagreement-category-answers.png")

    # select the first answer: its why panel, the diff as plain text
    grid = answers_grid(page)
    gbox = grid.bounding_box()
    page.mouse.click(gbox["x"] + 16, gbox["y"] + ROW_PX + ROW_PX / 2)
    wait_idle(page)
    check_clean(page, errors, log, "answer selected")
    expect(page.get_by_text(f"Category: {WORDS}", exact=False).last).to_be_visible()
    expect(page.get_by_text("Character diff, prediction → gold")).to_be_visible()
    diff = page.locator('[data-testid="stCode"]').filter(has_text="[-").first
    expect(diff).to_be_visible()
    expect(page.get_by_text("Token overlap behind token F1")).to_be_visible()
    assert params(page.url)["dis_q"] == [rows[0][0]]
    diff.scroll_into_view_if_needed()
    shot(page, "22-disagreement-why.png")

    # the link restores the list and the selected answer in a new session
    errors2: list[str] = []
    page2 = open_page(browser, url, errors2)
    page2.goto(page.url)
    settle(page2, "Categories per run")
    check_clean(page2, errors2, log, "deep link")
    assert answer_rows(page2, EXPECTED) == rows
    expect(page2.get_by_text("Character diff, prediction → gold")).to_be_visible()
    page2.context.close()
    page.context.close()


def test_disagreement_page_fits_800_px(server, browser):
    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors, viewport={"width": 800, "height": 1000})
    page.goto(url + "/disagreement")
    settle(page, "Categories per run")
    plots = page.locator(".js-plotly-plot")
    plots.nth(1).wait_for()
    check_clean(page, errors, log, "disagreement at 800 px")
    for k in range(2):
        plot = plots.nth(k)
        plot.scroll_into_view_if_needed()
        wait_fitted(plot)  # the relayout once the chart is in view
        box = plot.bounding_box()
        assert box["x"] + box["width"] <= 800, box
        # axis titles and the chart title are drawn (readable charts say what they show)
        assert plot.locator(".gtitle").count() == 1
        assert plot.locator(".xtitle").count() == 1
        shot(page, f"23-disagreement-800px-{k + 1}.png")

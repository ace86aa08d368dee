"""End to end in headless Chromium on sample_runs/: the Compare runs page.

deep link to A against B -> headline drawn -> click a slice's marker in the delta chart -> that
slice's flips -> an outcome -> a question row -> A and B side by side -> the URL in a fresh context
restores it -> the many-runs tab (the finder's answer: too few documents, the campaign offered) -> on the
campaign, a weak slice of the forest plot opens the explorer -> the presentation page, at 800 px wide too. Screenshots go to
test-output/browser/. Fails on any exception box, console error, request off the machine, or
traceback in the server log (tests/browser_kit.py).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from browser_kit import ROW_PX, check_clean, open_page, settle, shot, wait_idle

A, B = "longctx-ocr", "small-9b"
pytestmark = pytest.mark.browser


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_compare_slice_flip_question_and_presentation(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors)

    # 1. A deep link to the pair: the headline's three deltas.
    page.goto(f"{url}/compare?{urlencode({'a': A, 'b': B})}")
    settle(page, "Compare runs")
    metrics = page.locator('[data-testid="stMetricValue"]')
    expect(metrics).to_have_count(3)
    assert all(t.endswith(" pp") for t in metrics.all_inner_texts())
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for()
    check_clean(page, errors, log, "compare")
    shot(page, "compare-01-headline.png")

    # 2. Click the marker of a slice (not the overall row) in the delta chart.
    points = page.locator(".js-plotly-plot .scatterlayer .point")
    data = points.evaluate_all("""els => els.map(el => {
        const gd = el.closest('.js-plotly-plot'); return gd.data[0].customdata[el.__data__.i]; })""")
    k, (field, label) = next((k, (d[0], d[1])) for k, d in enumerate(data) if d[0] == "difficulty")
    marker = points.nth(k)
    marker.scroll_into_view_if_needed()
    box = marker.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_idle(page)
    check_clean(page, errors, log, "slice clicked")
    assert params(page.url)["cmp_slice"] == [f"{field}:{label}"]
    expect(page.get_by_role("combobox", name="Slice", exact=True)).to_have_value(f"Difficulty: {label}")

    # 3. An outcome, then the first question of that cell.
    page.get_by_role("radiogroup", name="Outcome").get_by_role("radio", name="only A", exact=True).click()
    wait_idle(page)
    assert params(page.url)["cmp_flip"] == ["only A"]
    count = page.get_by_text(re.compile(rf"^\d+ questions?: Difficulty: {re.escape(label)} · only A$"))
    expect(count).to_be_visible()
    # the cell's questions as CSV: the file is written when the button is pressed (a deferred download), and holds
    # that cell's questions, every one an "only A"
    with page.expect_download() as got:
        page.locator(".st-key-cmp_dl_questions_csv button").click()
    rows = list(csv.reader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8"), newline="")))
    assert rows[0][:2] == ["question_id", "outcome"], rows[0]
    assert len(rows) - 1 == int(count.inner_text().split()[0]) and {r[1] for r in rows[1:]} == {"only A"}
    check_clean(page, errors, log, "questions downloaded")
    grid = page.locator('[data-testid="stDataFrame"]').filter(has=page.locator('text=question_id')).first
    grid.scroll_into_view_if_needed()
    ids = grid.locator('tr[role="row"] td[aria-colindex="1"]')
    ids.first.wait_for(state="attached")
    first_id = ids.all_inner_texts()[0]
    assert first_id.startswith("adubench_"), first_id
    gbox = grid.bounding_box()
    page.mouse.click(gbox["x"] + 16, gbox["y"] + ROW_PX + ROW_PX / 2)
    settle(page, "Question detail")
    check_clean(page, errors, log, "question")
    assert params(page.url)["cmp_q"] == [first_id]
    expect(page.get_by_text(f"A · {A}", exact=True)).to_be_visible()
    expect(page.get_by_text(f"B · {B}", exact=True)).to_be_visible()
    expect(page.get_by_text("Character difference A → B")).to_be_visible()
    page.get_by_role("heading", name="Question detail").scroll_into_view_if_needed()
    shot(page, "compare-02-question.png")

    # 4. The link in a fresh session restores the pair, slice, outcome and question.
    link = page.url
    errors2: list[str] = []
    page2 = open_page(browser, url, errors2)
    page2.goto(link)
    settle(page2, "Question detail")
    check_clean(page2, errors2, log, "deep link")
    assert params(page2.url) == params(link)
    expect(page2.get_by_text(f"A · {A}", exact=True)).to_be_visible()
    page2.context.close()

    # 5. The many-runs tab: where a run is weak is the finder's answer -- on the sample's 6 documents, the
    #    reason none can be tested and the campaign offered -- and the ranks.
    page.get_by_role("tab", name="All runs: weakest slices and ranks").click()
    settle(page, "Where a run is weakest")
    expect(page.get_by_role("heading", name="Ranks per slice")).to_be_visible()
    expect(page.get_by_text("each slice needs 20 documents; this benchmark has 6", exact=False).first).to_be_visible()
    check_clean(page, errors, log, "many runs")
    assert params(page.url)["cmp_tab"] == ["all"]
    shot(page, "compare-03-many-runs.png")
    offer = page.get_by_role("link", name="open the bundled campaign sample").first
    campaign = params(offer.get_attribute("href") or "")["data"][0]

    # 6. On the campaign, a slice of the forest plot opens that run's questions of that slice in the explorer.
    page.goto(f"{url}/compare?{urlencode({'data': campaign, 'cmp_tab': 'all', 'cmp_run': 'vision-13b'})}")
    settle(page, "Where a run is weakest")
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for()
    check_clean(page, errors, log, "many runs on the campaign")
    shot(page, "compare-03b-many-runs-campaign.png")
    # p and q stay in view at 1,400 px: the columns up to q fit in the table's width without scrolling sideways
    from dashboard.weak import panel as weak_panel

    widths = {k: c["width"] for k, c in weak_panel.table_config().items()}
    upto_q = weak_panel.SHOWN[:weak_panel.SHOWN.index("q") + 1]
    assert all(isinstance(widths[c], int) for c in upto_q)
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()  # the weak-slice table (then the ranks)
    assert grid and sum(widths[c] for c in upto_q) <= grid["width"], (grid, upto_q)
    points = page.locator(".js-plotly-plot .scatterlayer .point")
    ranks = points.evaluate_all("""els => els.map(el => {
        const gd = el.closest('.js-plotly-plot'); const c = gd.data[0].customdata[el.__data__.i]; return c[c.length - 1]; })""")
    point = points.nth(ranks.index(1))  # the first-ranked slice
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    settle(page, "Question explorer")
    check_clean(page, errors, log, "weak slice opened")
    assert params(page.url)["run"] == ["vision-13b"]
    assert params(page.url)["f.reasoning_type"] == ["counting"] and params(page.url)["f.evidence_source"] == ["Chart"]
    page.context.close()

    # 7. Presentation at 800 px: no sidebar, three charts (no slice to plot on 6 documents), nothing wider than the window.
    errors3: list[str] = []
    page3 = open_page(browser, url, errors3, viewport={"width": 800, "height": 1000})
    page3.goto(f"{url}/present?{urlencode({'a': A, 'b': B})}")
    settle(page3, f"{A} against {B}")
    page3.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 3")
    expect(page3.locator('[data-testid="stSidebar"]')).to_be_hidden()
    check_clean(page3, errors3, log, "presentation")
    assert page3.evaluate("() => document.documentElement.scrollWidth") <= 800
    shot(page3, "compare-04-presentation-800.png")
    page3.context.close()

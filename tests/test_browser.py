"""End to end in headless Chromium: the real `streamlit run` server on sample_runs/.

overview -> click a heatmap cell -> the question explorer on that slice -> select a question ->
its detail -> the page's URL opened in a fresh browser context shows the same question again.

Screenshots of every step go to test-output/browser/ (git-ignored), with the server's log.
The test fails on any Streamlit exception box, any browser console error or page error, any
request to a host other than the app's own server, and any traceback in the server log
(tests/browser_kit.py; the `server` and `browser` fixtures live in conftest.py).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from browser_kit import ROW_PX, SAMPLE, STEP_TIMEOUT, check_clean, open_page, settle, shot, wait_fitted
from scoring.loaders import load_gold

RUN = "longctx-ocr"  # a run of sample_runs/ with a prediction file, so its detail has the Accuracy trace
FIELD = "reasoning_type"  # the field of the first heatmap

pytestmark = pytest.mark.browser


# ----------------------------------------------------------------------------- page helpers


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def table_ids(page, count: int) -> list[str]:
    """Question ids of the explorer table (the first st.dataframe), read from the grid's accessible
    rows once `count` of them are drawn (the grid draws them after the table is in view)."""
    from playwright.sync_api import expect

    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    cells = grid.locator('tr[role="row"] td[aria-colindex="1"]')
    expect(cells).to_have_count(count)
    return cells.all_inner_texts()


def check_detail(page, q) -> None:
    """The detail of question q: its caption, question and gold answer (plain text), the run's
    prediction and the Accuracy trace."""
    from playwright.sync_api import expect

    detail = page.get_by_role("heading", name="Question detail")
    expect(detail).to_be_visible()
    expect(page.get_by_text(re.compile("^" + re.escape(q.qid) + " · "))).to_be_visible()
    codes = page.locator('[data-testid="stCode"]')
    expect(codes.nth(0)).to_have_text(q.question)
    expect(codes.nth(1)).to_have_text(q.gold_answer)
    expect(page.get_by_text("Gold answer", exact=True)).to_be_visible()
    expect(page.get_by_text(f"{RUN} · recomputed", exact=True)).to_be_visible()
    quotes = [item.quote for d in q.documents for item in d.evidence_items if item.quote]
    expect(codes).to_have_count(3 + len(quotes))  # question, gold, the evidence quotes, the one run's prediction
    if quotes:
        expect(page.locator("strong").filter(has_text=re.compile(r"^Gold evidence"))).to_be_visible()
        expect(codes.nth(2)).to_have_text(quotes[0])
    # the evidence page, rendered with its boxes, inside the detail
    panel = page.locator('[data-testid="stExpander"]').filter(has_text="Evidence pages")
    expect(panel.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    expect(page.get_by_role("tab", name=re.compile("^" + re.escape(RUN) + " · "))).to_be_visible()
    expect(page.locator('[data-testid="stExpander"]').filter(has_text="Why this Accuracy")).to_be_visible()
    trace = page.locator('[data-testid="stDataFrame"]').nth(1)
    expect(trace.locator('td[aria-colindex="1"]', has_text="Rule that decided")).to_have_count(1)
    detail.scroll_into_view_if_needed()


def chips(page, label: str):
    """The chosen values shown in the multiselect whose label is `label`."""
    box = page.locator('[data-testid="stMultiSelect"]').filter(has=page.locator(f'input[aria-label="{label}"]'))
    return box.locator(".react-aria-ComboBox [data-tag]")


def check_slice(page, label: str, count: int) -> None:
    """The explorer shows the slice: the run and the label chosen in their widgets, `count` questions."""
    from playwright.sync_api import expect

    expect(chips(page, "Runs")).to_have_text([RUN])
    expect(chips(page, "Reasoning type")).to_have_text([label])
    expect(page.get_by_text(re.compile(rf"^{count} of \d+ questions"))).to_be_visible()


# ----------------------------------------------------------------------------- the test


def test_heatmap_click_explorer_detail_and_deep_link(server, browser):
    url, log = server
    gold = {q.qid: q for q in load_gold(sorted(SAMPLE.glob("qa_*.jsonl"), key=lambda p: "cross" in p.name)).items}
    errors: list[str] = []
    page = open_page(browser, url, errors)

    # 1. Overview: leaderboard and heatmaps drawn, the script idle.
    page.goto(url)
    settle(page, "Leaderboard")
    points = page.locator(".js-plotly-plot .scatterlayer .point")
    points.first.wait_for()
    check_clean(page, errors, log, "overview")
    shot(page, "01-overview.png")

    # 2. Click the cell (RUN, first reasoning type with 2..10 questions) of the first heatmap.
    cells = points.evaluate_all("""els => els.map(el => {
        const gd = el.closest('.js-plotly-plot');
        return gd.data[0].customdata[el.__data__.i]; })""")
    k, (_, _, label, count, *_) = next((k, c) for k, c in enumerate(cells)
                                         if c[0] == RUN and c[1] == FIELD and 2 <= c[3] <= 10)
    cell = points.nth(k)
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)  # hover first, as a person does: the screenshot shows the cell's tooltip
    page.get_by_text(f"Questions: {count}").wait_for()
    shot(page, "02-heatmap-cell-hovered.png")
    page.mouse.click(x, y)
    settle(page, "Question explorer")
    check_clean(page, errors, log, "explorer")
    assert urlsplit(page.url).path == "/questions"
    assert params(page.url) == {"run": [RUN], "f." + FIELD: [label]}
    check_slice(page, label, count)
    ids = table_ids(page, count)
    assert len(ids) == count and all(gold[i].meta(FIELD) == label for i in ids), ids
    shot(page, "03-explorer-on-slice.png")

    # 3. Select the second row: a real click on its row-selection box in the canvas grid.
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    row = 1
    # two header rows (the run's name over Acc, F1, ANLS, …), then the rows
    page.mouse.click(box["x"] + 16, box["y"] + ROW_PX * (row + 2) + ROW_PX / 2)
    qid = ids[row]
    settle(page, "Question detail")
    check_clean(page, errors, log, "detail")
    check_detail(page, gold[qid])
    shot(page, "04-question-detail.png")
    link = page.url
    assert params(link) == {"run": [RUN], "f." + FIELD: [label], "sel": [qid]}

    # 4. The deep link in a new context (a new Streamlit session, nothing shared): same view.
    errors2: list[str] = []
    page2 = open_page(browser, url, errors2)
    page2.goto(link)
    settle(page2, "Question explorer")
    shot(page2, "05-deep-link-restored.png")
    check_clean(page2, errors2, log, "deep link")
    assert params(page2.url) == params(link)
    check_slice(page2, label, count)
    assert table_ids(page2, count) == ids
    selected = page2.locator('[data-testid="stDataFrame"]').first.locator('tr[role="row"][aria-selected="true"]')
    assert selected.locator('td[aria-colindex="1"]').all_inner_texts() == [qid]
    check_detail(page2, gold[qid])
    shot(page2, "05-deep-link-restored.png")  # again, scrolled to the detail
    check_clean(page, errors, log, "end")
    page2.context.close()
    page.context.close()


# ----------------------------------------------------------------------------- an 800 px window


OVERLAPS = """gd => {
  const boxes = sel => [...gd.querySelectorAll(sel)].filter(e => e.textContent.trim())
      .map(e => { const r = e.getBoundingClientRect(); return {t: e.textContent, l: r.left, r: r.right, tp: r.top, b: r.bottom}; });
  const clash = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.tp < b.b - 1 && b.tp < a.b - 1;
  const out = [];
  for (const sel of ['.xtick text', '.ytick text', '.heatmaplayer text']) {
    const bs = boxes(sel);
    for (let i = 0; i < bs.length; i++) for (let j = i + 1; j < bs.length; j++)
      if (clash(bs[i], bs[j])) out.push(sel + ': ' + bs[i].t + ' / ' + bs[j].t);
  }
  const cell = gd._fullLayout.xaxis._length / gd.data[1].x.length;
  for (const b of boxes('.heatmaplayer text')) if (b.r - b.l > cell) out.push('wider than its cell: ' + b.t);
  return {out, cells: gd.data[1].x.length, texts: boxes('.heatmaplayer text').length, ticks: boxes('.xtick text').length};
}"""


def test_narrow_window_heatmaps_tiles_and_a_link_to_a_missing_run(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors, viewport={"width": 800, "height": 1000})
    page.goto(url)
    settle(page, "Leaderboard")
    charts = page.locator('[data-testid="stPlotlyChart"]')
    charts.first.wait_for()
    charts.first.scroll_into_view_if_needed()  # below the fold at this size: drawn once in view
    plots = page.locator(".js-plotly-plot").filter(has=page.locator(".heatmaplayer"))
    expect(plots).to_have_count(2, timeout=STEP_TIMEOUT)
    check_clean(page, errors, log, "overview at 800 px")
    for k in range(2):
        plot = plots.nth(k)
        plot.scroll_into_view_if_needed()
        wait_fitted(plot)  # the relayout once the chart is in view
        report = plot.evaluate(OVERLAPS)
        assert report["texts"] > 0 and report["ticks"] == report["cells"], report
        assert report["out"] == [], report["out"]
        box = plot.bounding_box()
        assert box["x"] + box["width"] <= 800, box  # sized to the window
        shot(page, f"10-narrow-heatmap-{k + 1}.png")

    # The question detail: score tiles wrap instead of being cut to "100.…".
    qid = "adubench_single_000003"
    page.goto(f"{url}/questions?run={RUN}&sel={qid}")
    settle(page, "Question detail")
    check_clean(page, errors, log, "detail at 800 px")
    tiles = page.locator('[data-testid="stMetricValue"]')
    expect(tiles).to_have_count(4, timeout=STEP_TIMEOUT)  # drawn one by one: wait for the last
    tiles.first.scroll_into_view_if_needed()
    cut = tiles.evaluate_all("els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)")
    assert cut == [], cut
    shot(page, "11-narrow-question-detail.png")

    # A link naming a run that is not loaded (e.g. one that was uploaded) says so.
    page.goto(f"{url}/questions?run={RUN}&run=my-upload")
    settle(page, "Question explorer")
    check_clean(page, errors, log, "missing run")
    expect(page.get_by_text(re.compile(r"The link names 1 run that is not loaded: my-upload"))).to_be_visible()
    expect(chips(page, "Runs")).to_have_text([RUN])
    shot(page, "12-link-to-a-missing-run.png")
    page.context.close()

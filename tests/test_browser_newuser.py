"""What a new user tripped over (issue 18), where it is about what is shown: headless Chromium on the real
`streamlit run` server on sample_runs/ (one server for every check, tests/conftest.py).

- a link to the Evidence page with a page, a zoom and layers shows that page (55 in the page box, not
  1), that zoom and those layers, and what the user then changes goes back into the URL;
- Back after a click on a chart returns to the overview in one press;
- at 800 px the leaderboard does not scroll sideways and no bar chart label is cut;
- no console error, no request off the machine, no exception (browser_kit.check_clean) at any step.

Screenshots go to test-output/browser/newuser-*.png.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from browser_kit import check_clean, open_page, settle, shot, wait_fitted, wait_idle

pytestmark = pytest.mark.browser

CROSS = "adubench_cross_000001"  # its first document, doc_000004, has 55 pages; p. 55 is a scanned page
RUN = "longctx-img"
SLICE_RUN = "longctx-ocr"
BREAKDOWN_TABS = ("Domain", "Difficulty", "Answer format", "Document type", "Split", "Document length",
                  "Evidence position")


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def pressed(page) -> list[str]:
    """The names of the layer pills switched on (their icon's ligature text taken off)."""
    pills = page.locator('[data-testid="stButtonGroup"] button[aria-pressed="true"]')
    return [re.sub(r"^(stop|check_box_outline_blank)\s*", "", t).strip() for t in pills.all_inner_texts()]


def test_evidence_link_restores_page_zoom_and_layers(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors)
    layers = ["Gold boxes", f"{RUN}: answer"]
    query = f"sel={CROSS}&run={RUN}&page=55&zoom=200&" + "&".join(f"layer={quote(x)}" for x in layers)
    page.goto(f"{url}/evidence?{query}")
    settle(page, "Evidence")
    page.locator(".js-plotly-plot").first.wait_for()
    wait_idle(page)
    check_clean(page, errors, log, "evidence deep link")
    box = page.locator('input[aria-label="Page (of 55)"]')
    expect(box).to_have_value("55")  # the OCR engineer's link showed 1
    expect(page.get_by_text("doc_000004 · page 55 of 55 · not an evidence page")).to_be_visible()
    zoom = page.locator('[data-testid="stSlider"]').filter(has_text="Zoom")
    expect(zoom.get_by_role("slider")).to_have_attribute("aria-valuetext", "200 %")
    assert pressed(page) == layers
    assert params(page.url) == {"sel": [CROSS], "run": [RUN], "page": ["55"], "zoom": ["200"], "layer": layers}
    page.get_by_role("heading", name="Evidence", exact=True).scroll_into_view_if_needed()
    shot(page, "newuser-01-evidence-deep-link.png")  # the page box, the zoom and the layers
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    shot(page, "newuser-01-evidence-deep-link-page.png")  # page 55 at 200 %

    # a page turn reruns the viewer alone (a fragment): the URL follows it all the same
    page.get_by_role("button", name="Previous").click()
    wait_idle(page)
    check_clean(page, errors, log, "previous evidence page")
    expect(box).to_have_value("11")
    expect(page.get_by_text("doc_000004 · page 11 of 55 · evidence page 1 of 1")).to_be_visible()
    assert "page" not in params(page.url)  # the first evidence page is the default: the link forgets it
    assert params(page.url)["zoom"] == ["200"] and params(page.url)["layer"] == layers
    box.fill("30")
    box.press("Enter")
    wait_idle(page)
    check_clean(page, errors, log, "typed page")
    expect(page.get_by_text("doc_000004 · page 30 of 55 · not an evidence page")).to_be_visible()
    assert params(page.url)["page"] == ["30"]

    # that link, in a new session, shows the same again
    errors2: list[str] = []
    page2 = open_page(browser, url, errors2)
    page2.goto(page.url)
    settle(page2, "Evidence")
    page2.locator(".js-plotly-plot").first.wait_for()
    wait_idle(page2)
    check_clean(page2, errors2, log, "evidence link reopened")
    expect(page2.locator('input[aria-label="Page (of 55)"]')).to_have_value("30")
    assert pressed(page2) == layers
    page2.context.close()
    page.context.close()


def test_back_after_a_slice_returns_to_the_overview_in_one_press(server, browser):
    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors)
    page.goto(url)
    settle(page, "Leaderboard")
    points = page.locator(".js-plotly-plot .scatterlayer .point")
    points.first.wait_for()
    check_clean(page, errors, log, "overview")
    cells = points.evaluate_all("""els => els.map(el => {
        const gd = el.closest('.js-plotly-plot');
        return gd.data[0].customdata[el.__data__.i]; })""")
    k = next(k for k, c in enumerate(cells) if c[0] == SLICE_RUN and c[3] >= 2)
    cell = points.nth(k)
    cell.scroll_into_view_if_needed()
    b = cell.bounding_box()
    page.mouse.click(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    settle(page, "Question explorer")
    check_clean(page, errors, log, "explorer on the slice")
    assert urlsplit(page.url).path == "/questions" and params(page.url)["run"] == [SLICE_RUN]
    # The switch used to push /questions (its query cleared), then the explorer pushed /questions?<slice>:
    # the first Back showed the bare explorer. Now the slice's query goes with the switch.
    page.go_back()
    wait_idle(page)
    assert urlsplit(page.url).path == "/", page.url  # the overview after one press, not the bare explorer
    settle(page, "Leaderboard")
    check_clean(page, errors, log, "back")
    assert page.get_by_role("heading", name="Question explorer").count() == 0
    shot(page, "newuser-02-back-to-the-overview.png")
    page.context.close()


CLIPPED = """gd => {
  const svg = gd.querySelector('svg.main-svg').getBoundingClientRect();
  const sel = '.xtick text, .ytick text, .legendtext, .legendtitletext, .g-xtitle text, .g-ytitle text, .gtitle';
  const boxes = [...gd.querySelectorAll(sel)].filter(e => e.textContent.trim()).map(e => {
    const r = e.getBoundingClientRect();
    const turned = /rotate\\((?!0[,)])/.test(e.getAttribute('transform') || '');
    return {t: e.textContent, l: r.left, r: r.right, tp: r.top, b: r.bottom, turned}; });
  const out = [];
  for (const b of boxes)
    if (b.l < svg.left - 1 || b.r > svg.right + 1 || b.tp < svg.top - 1 || b.b > svg.bottom + 1) out.push('cut: ' + b.t);
  const flat = boxes.filter(b => !b.turned);  // a turned label's box is a rectangle around a slanted line
  const clash = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.tp < b.b - 1 && b.tp < a.b - 1;
  for (let i = 0; i < flat.length; i++) for (let j = i + 1; j < flat.length; j++)
    if (clash(flat[i], flat[j])) out.push('overlap: ' + flat[i].t + ' / ' + flat[j].t);
  return {out, ticks: gd.querySelectorAll('.xtick text').length, legend: gd.querySelectorAll('.legendtext').length,
          right: svg.right};
}"""


OVERFLOW = 100  # px of the 800 px board's last columns (Attempted, Failed) reached by scrolling sideways


def test_overview_at_800_px_fits(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors, viewport={"width": 800, "height": 1000})
    page.goto(url)
    settle(page, "Leaderboard")
    check_clean(page, errors, log, "overview at 800 px")
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.locator(".dvn-scroller").wait_for()
    # a state, not a moment: the grid first draws with its default widths, then with the configured ones
    # (a clean-clone CI run measured 1053 px in 466 in between); wait until it fits, then check it does
    # issue 34: agent-pipeline has no answer to 2 of the 77 questions, so the board ranks the runs on the 75 they all
    # attempted (Shared Acc %) beside each run's own Acc over what it attempted: the ranking and the three metrics
    # fit in 466 px; Attempted and Failed are at most OVERFLOW px of sideways scroll away
    fits = ("g => { const s = g.querySelector('.dvn-scroller'); return !!s && s.clientWidth > 0 "
            f"&& s.scrollWidth <= s.clientWidth + {OVERFLOW}; }}")
    try:
        grid.element_handle().wait_for_element_state("stable")
        page.wait_for_function(f"() => ({fits})(document.querySelector('[data-testid=\"stDataFrame\"]'))",
                               timeout=30_000)
    except Exception:
        pass  # it never fits: the assertion below says by how much
    width = grid.evaluate("g => { const s = g.querySelector('.dvn-scroller'); "
                          "return {scroll: s.scrollWidth, client: s.clientWidth}; }")
    assert width["scroll"] <= width["client"] + OVERFLOW, width  # (it was 1212 px in 466)
    headers = grid.locator('th[role="columnheader"]')
    expect(headers.first).to_have_text("Run")
    assert headers.all_inner_texts()[:5] == ["Run", "Shared Acc %", "Acc %", "Token F1 %", "ANLS %"]
    shot(page, "newuser-03-overview-800.png")
    for name in BREAKDOWN_TABS:
        page.get_by_role("tab", name=name).click()
        wait_idle(page)
        check_clean(page, errors, log, f"{name} at 800 px")
        plot = page.locator(".js-plotly-plot").filter(has=page.locator(".barlayer")).first
        plot.scroll_into_view_if_needed()
        plot.locator(".legendtext").first.wait_for()
        wait_fitted(plot)  # the relayout once the chart is in view
        report = plot.evaluate(CLIPPED)
        assert report["ticks"] >= 1 and report["legend"] >= 2, (name, report)
        assert report["out"] == [], (name, report["out"])
        assert report["right"] <= 800, (name, report)
        if name in ("Domain", "Document length"):
            shot(page, f"newuser-04-bars-{name.lower().replace(' ', '-')}-800.png")
    page.context.close()

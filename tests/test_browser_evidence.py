"""The Evidence page in headless Chromium on sample_runs/: a question's evidence page drawn with its
boxes, toggling a layer off and on, stepping to another page, the wrong-page diagnosis.

Screenshots go to test-output/browser/ (git-ignored). Fails on any Streamlit exception box,
browser console or page error, request off the machine or traceback in the server log.
"""

from __future__ import annotations

import pytest

from browser_kit import check_clean, open_page, settle, shot

pytestmark = pytest.mark.browser

QID = "adubench_single_000024"  # longctx-ocr answers with a value from page 4; gold evidence on pages 24 and 26
RUN = "longctx-ocr"


def legend(page) -> list[str]:
    return page.locator(".js-plotly-plot .legend .legendtext").evaluate_all("els => els.map(e => e.textContent)")


def test_open_evidence_page_and_toggle_a_layer(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors)
    page.goto(f"{url}/evidence?sel={QID}&run={RUN}")
    settle(page, "Evidence")
    plot = page.locator(".js-plotly-plot").first
    plot.wait_for()
    check_clean(page, errors, log, "evidence page")
    expect(page.get_by_text("doc_000002 · page 24 of 36 · evidence page 1 of 2")).to_be_visible()
    # the page image is drawn inside the chart, from a data: URL (nothing leaves the machine)
    href = plot.locator("image").first.get_attribute("href")
    assert href and href.startswith("data:image/png;base64,")
    names = legend(page)
    assert "Gold evidence" in names and f"{RUN}: cited evidence" not in names  # the run cites page 4, not 24
    boxes = plot.locator(".scatterlayer .trace").count()
    assert boxes >= 1
    expect(page.get_by_text(f"{RUN}: “prior preventive failure” — appears on page 4, not on the evidence pages")).to_be_visible()
    plot.scroll_into_view_if_needed()
    shot(page, "evidence-01-page.png")

    # toggle the gold evidence layer off: its legend entry and boxes go
    pill = page.locator('[data-testid="stButtonGroup"] button').filter(has_text="Gold evidence")
    pill.click()
    settle(page, "Evidence")
    check_clean(page, errors, log, "layer off")
    expect(page.locator(".js-plotly-plot .legend .legendtext").filter(has_text="Gold evidence")).to_have_count(0)
    assert page.locator(".js-plotly-plot").first.locator(".scatterlayer .trace").count() < boxes
    shot(page, "evidence-02-layer-off.png")
    pill.click()
    settle(page, "Evidence")
    expect(page.locator(".js-plotly-plot .legend .legendtext").filter(has_text="Gold evidence")).to_have_count(1)

    # open the page where the answer is: the run cites it, its answer is boxed there
    page.get_by_role("button", name="Open p. 4", exact=True).first.click()
    settle(page, "Evidence")
    check_clean(page, errors, log, "page 4")
    expect(page.get_by_text("doc_000002 · page 4 of 36 · not an evidence page")).to_be_visible()
    names = legend(page)
    assert f"{RUN}: answer" in names and f"{RUN}: cited evidence" in names, names
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    shot(page, "evidence-03-answer-page.png")
    check_clean(page, errors, log, "end")
    page.context.close()

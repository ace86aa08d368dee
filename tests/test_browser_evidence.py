"""The Evidence page in headless Chromium on sample_runs/: a question's evidence page drawn with its
boxes, toggling a layer off and on, stepping to another page, the wrong-page diagnosis; at 800 px the
question id whole and the page image above the fold; on the MMLongBench-Doc sample, a list answer
found element by element with a box for each.

Screenshots go to test-output/browser/ (git-ignored). Fails on any Streamlit exception box,
browser console or page error, request off the machine or traceback in the server log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_kit import check_clean, open_page, serve, settle, shot

pytestmark = pytest.mark.browser

MM = Path(__file__).resolve().parent.parent / "sample_runs" / "mmlongbench"

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


SHOWN = """() => {
  const input = document.querySelector('input[aria-label="Question"]');
  const img = document.querySelector('.js-plotly-plot image').getBoundingClientRect();
  return {id: input.value, cut: input.scrollWidth > input.clientWidth, imageTop: img.top, fold: window.innerHeight};
}"""


def test_at_800_px_the_question_id_is_whole_and_the_page_above_the_fold(server, browser):
    from playwright.sync_api import expect

    url, log = server
    errors: list[str] = []
    page = open_page(browser, url, errors, viewport={"width": 800, "height": 1000})
    page.goto(f"{url}/evidence?sel={QID}&run={RUN}")
    settle(page, "Evidence")
    page.locator(".js-plotly-plot image").first.wait_for()
    check_clean(page, errors, log, "evidence at 800 px")
    expect(page.get_by_text("doc_000002 · page 24 of 36 · evidence page 1 of 2")).to_be_visible()
    got = page.evaluate(SHOWN)
    # the id was cut to "adubench_single_000" in two fifths of the row; the page's top 70 px were in view
    assert got["id"] == QID and not got["cut"], got
    assert got["imageTop"] + 200 <= got["fold"], got
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 800
    shot(page, "evidence-04-800px.png")
    page.context.close()


def test_a_list_answer_is_boxed_element_by_element(browser):
    """MMLongBench-Doc's `['Maria Jensen', 'Tom Okafor', 'Lena Fischer']`: a gold box for each name on the
    evidence page, and each run's list answer found when each of its elements is."""
    from playwright.sync_api import expect

    with serve({"LENS_BENCHMARK": str(MM)}, name="evidence-lists") as (url, log):
        for width, height in ((1400, 1100), (800, 1000)):
            errors: list[str] = []
            page = open_page(browser, url, errors, viewport={"width": width, "height": height})
            page.goto(f"{url}/evidence?sel=mmlongbench_0005&run=gpt-4o&run=docowl-8b")
            settle(page, "Evidence")
            plot = page.locator(".js-plotly-plot").first
            plot.locator("image").first.wait_for()
            check_clean(page, errors, log, f"list question at {width} px")
            assert "Gold answer" in legend(page)
            labels = plot.evaluate("gd => gd.data.map(t => t.text)")
            gold = sorted(t for t in labels if t.startswith("Gold answer"))
            assert gold == ["Gold answer, element 1 of 3: “Maria Jensen”", "Gold answer, element 2 of 3: “Tom Okafor”",
                            "Gold answer, element 3 of 3: “Lena Fischer”"], labels
            expect(page.get_by_text("gpt-4o: “['Tom Okafor', 'Maria Jensen', 'Lena Fischer']” — all 3 elements "
                                    "appear on the evidence page 5")).to_be_attached()
            got = page.evaluate(SHOWN)
            assert got["id"] == "mmlongbench_0005" and not got["cut"] and got["imageTop"] + 200 <= got["fold"], got
            shot(page, f"evidence-05-list-{width}px.png")
            page.context.close()

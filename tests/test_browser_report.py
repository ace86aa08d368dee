"""The stakeholder report in headless Chromium: opened from a file with every request off that file
refused, at 800 px. It must draw its charts (marks, not only axes), decode its thumbnails, make no
request and fit the window. Screenshot: test-output/browser/report-800px.png."""

from pathlib import Path

import pytest

from dashboard.report.__main__ import main as report_main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
pytestmark = pytest.mark.browser


def write(tmp_path: Path, argv: list[str]) -> int:
    return report_main([*argv, "--output", str(tmp_path / "report.html"), "--resamples", "1000"])


def test_report_draws_its_charts_offline_in_chromium(tmp_path, browser):
    """Uses the session's Chromium (tests/conftest.py): a second Playwright in one process fails."""
    import browser_kit

    # the campaign sample (40 documents): large enough for the finder, so its forest plot is drawn too
    code = write(tmp_path, ["--benchmark", str(SAMPLE / "campaign"), "--runs", "vision-13b", "ckpt-0520", "ckpt-0410",
                               "--baseline", "ckpt-0520"])
    assert code == 0
    src = (tmp_path / "report.html").resolve()
    requests: list[str] = []
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 800, "height": 1000})

    def guard(route):
        url = route.request.url
        if url == src.as_uri() or url.startswith("data:"):
            route.continue_()
        else:
            requests.append(url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.on("request", lambda r: None if r.url == src.as_uri() or r.url.startswith("data:") else requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(src.as_uri())
    charts = page.locator(".js-plotly-plot")
    charts.first.wait_for()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4")
    assert charts.count() >= 4
    # every chart has drawn marks, not just axes
    marks = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].map("
                          "g => g.querySelectorAll('.point, .bars path, .scatterlayer path').length)")
    assert all(n > 0 for n in marks), marks
    images = page.evaluate("() => [...document.images].map(i => i.naturalWidth)")
    assert images and all(w > 0 for w in images)  # the thumbnails decoded
    browser_kit.OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(browser_kit.OUT / "report-800px.png"), full_page=True)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 800  # the layout holds at 800 px: nothing wider than the window
    context.close()
    assert requests == [] and errors == []

"""End to end in headless Chromium: the real `streamlit run` server on sample_runs/.

overview -> click a heatmap cell -> the question explorer on that slice -> select a question ->
its detail -> the page's URL opened in a fresh browser context shows the same question again.

Screenshots of every step go to test-output/browser/ (git-ignored), with the server's log.
The test fails on any Streamlit exception box, any browser console error or page error (one
narrow, commented exception: see `harmless`) and any traceback in the server log.

Needs Debian's Chromium (`apt-get install -y chromium`, /usr/bin/chromium) and the `playwright`
Python package (`pip install -e '.[test]'`); never `playwright install`. Without them the test is
skipped, unless LENS_REQUIRE_BROWSER=1 (as in CI), where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from scoring.loaders import load_gold

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
OUT = ROOT / "test-output" / "browser"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1400, "height": 1100}
SERVER_START_TIMEOUT = 60  # s, until /_stcore/health answers 200
STEP_TIMEOUT = 30_000  # ms, for any one wait in the browser
RUN = "longctx-ocr"  # a run of sample_runs/ with a prediction file, so its detail has the Accuracy trace
FIELD = "reasoning_type"  # the field of the first heatmap
ROW_PX = 35  # st.dataframe's row height and header height (glide-data-grid default in Streamlit)

pytestmark = pytest.mark.browser


# ----------------------------------------------------------------------------- prerequisites


def _unavailable(reason: str) -> None:
    if os.environ.get("LENS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (LENS_REQUIRE_BROWSER=1, so this is a failure, not a skip)")
    pytest.skip(reason)


def _chromium() -> str:
    path = "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else shutil.which("chromium")
    if not path:
        _unavailable("Chromium not found: install it with `apt-get install -y chromium` (never `playwright install`)")
    return path


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is missing: `pip install -e '.[test]'`")
    return sync_playwright


# ----------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _tail(path: Path, n: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else "(no log)"


@pytest.fixture(scope="module")
def server():
    """`streamlit run dashboard/app.py` on a free port, from the repo root, on sample_runs/ (the
    default: LENS_* variables are removed); yields (base URL, log path); always terminated."""
    _chromium()
    _playwright()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.png"):
        old.unlink()
    log = OUT / "server.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    cmd = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
           "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    url = f"http://localhost:{port}"
    with open(log, "w") as sink:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"no 200 from {url}/_stcore/health within {SERVER_START_TIMEOUT} s:\n{_tail(log)}")
            time.sleep(0.25)
        yield url, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture(scope="module")
def browser(server):
    with _playwright()() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


# ----------------------------------------------------------------------------- page helpers


PAGES = ("questions", "data")  # url paths of the app's other pages (st.Page default: the file name)


def harmless(msg, base: str) -> bool:
    """The only console errors tolerated, two artefacts that a user sees too and that break nothing:
    1. `st.set_page_config(page_icon=":material/…:")` makes the browser fetch the favicon SVG from
       Google's font CDN, which fails on a machine without internet access (the tab has no icon).
    2. Opened directly on a page URL (a deep link such as /questions?…), Streamlit's frontend first
       tries that path as the app's base: GET /questions/_stcore/health and /_stcore/host-config
       answer 404, then it uses / (streamlit/streamlit#7074, open).
    Anything else, from any other URL or with another status, fails the test."""
    url = (msg.location or {}).get("url", "")
    favicon = (msg.text.startswith("Failed to load resource: net::ERR_")
               and url.startswith("https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/"))
    probe = (msg.text == "Failed to load resource: the server responded with a status of 404 (Not Found)"
             and url in {f"{base}/{page}/_stcore/{what}" for page in PAGES for what in ("health", "host-config")})
    return favicon or probe


def open_page(browser, base: str, errors: list[str]):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(STEP_TIMEOUT)
    page.on("console", lambda m: None if m.type != "error" or harmless(m, base) else errors.append(
        f"console error: {m.text} @ {(m.location or {}).get('url', '')}"))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    return page


IDLE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && !document.querySelector('[data-stale="true"]');
}"""


def wait_idle(page, timeout: float = STEP_TIMEOUT / 1000, settle: float = 0.6) -> None:
    """Until the script has finished its run (and any rerun it asked for): the app reports
    `notRunning`, no status widget, no stale element -- continuously for `settle` seconds."""
    deadline = time.monotonic() + timeout
    since = None
    while time.monotonic() < deadline:
        if page.evaluate(IDLE):
            since = since or time.monotonic()
            if time.monotonic() - since >= settle:
                return
        else:
            since = None
        page.wait_for_timeout(100)
    raise AssertionError(f"the app did not become idle within {timeout} s")


def settle(page, heading: str) -> None:
    """After an action: until the heading (or an exception box) shows, then until the app is idle."""
    page.get_by_role("heading", name=heading).or_(page.locator('[data-testid="stException"]')).first.wait_for()
    wait_idle(page)


def check_clean(page, errors: list[str], log: Path, step: str) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, f"{step}: Streamlit exception shown:\n" + "\n".join(boxes.all_inner_texts())
    assert not errors, f"{step}: browser errors:\n" + "\n".join(errors)
    assert "Traceback" not in log.read_text(errors="replace"), f"{step}: traceback in the server log:\n{_tail(log)}"


def shot(page, name: str) -> None:
    page.screenshot(path=str(OUT / name))


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
    expect(codes).to_have_count(3)  # question, gold, the one run's prediction
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
    k, (_, _, label, count) = next((k, c) for k, c in enumerate(cells)
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
    page.mouse.click(box["x"] + 16, box["y"] + ROW_PX * (row + 1) + ROW_PX / 2)
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

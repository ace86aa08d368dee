"""Speed of the dashboard (a script, not a test: it prints figures and asserts nothing).

    .venv/bin/python bench/bench_dashboard.py [--repeat 5] [--cold 3] [--no-browser] [--profile]

In one run:
(a) cold start on sample_runs/ in headless Chromium: `streamlit run` started -> /_stcore/health
    200 -> the overview complete (leaderboard and every chart drawn, the script idle), `--cold`
    times, each on a new server;
(b) on the synthetic benchmark (13 runs x 1,519 questions, bench/make_synthetic_benchmark.py,
    written to bench/out/synthetic/ when missing): the first load in the browser on a fresh
    server (reading, scoring and drawing), then, measured directly in this process, reading the
    files (`load_workspace`) and scoring alone (`scoring.evaluate` over the 13 runs);
(c) the server time of each interaction once scored, with streamlit.testing.v1.AppTest
    (LENS_BENCHMARK = the synthetic folder; `at.run()` timed after each interaction, `--repeat`
    times each): open a slice from the overview, change the slice (a filter), change the run,
    select a question, change the overview's metric; then in the browser: click a heatmap cell,
    add a run, click a table row, change the metric -- each timed on the page's own clock from the
    pointer press to the script idle again (the app's `data-test-script-state` back to
    `notRunning`, no status widget), and split into press -> script start, the server's script
    time (the server is started through this file, `--timed-server`, which logs each script run)
    and the rest (the browser receiving and drawing). A one-button app gives the same figure for
    Streamlit alone on this machine.
Prints the figures beside the targets (under 300 ms per interaction once scored, first load
under 5 s including scoring) and a markdown table for docs/performance.md. Where an AppTest interaction
misses its target (or with --profile), one more run of it under cProfile (inside AppTest's script
thread) shows where the time goes.

Needs /usr/bin/chromium and the playwright package for the browser parts (--no-browser skips
them). Chromium, the server and this process share the machine's cores: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import make_synthetic_benchmark  # noqa: E402

APP = ROOT / "dashboard" / "app.py"
SAMPLE = ROOT / "sample_runs"
SYNTHETIC = make_synthetic_benchmark.OUT
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1400, "height": 1100}
INTERACTION_TARGET_S = 0.300
FIRST_LOAD_TARGET_S = 5.0
ROW_PX = 35  # st.dataframe row and header height

# ----------------------------------------------------------------------------- server and browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


SCRIPT_LOG = ROOT / "bench" / "out" / "script_runs.log"


def timed_server(log: str, argv: list[str]) -> None:
    """`streamlit <argv>` whose every script run is logged to `log` as `<end time> <seconds>`
    (time.time()): the server's own time per run, to split a browser interaction's latency."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.web.cli import main as streamlit_main

    original = script_runner.exec_func_with_error_handling

    def logged(*a, **kw):
        t = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            with open(log, "a") as f:
                f.write(f"{time.time():.6f} {time.perf_counter() - t:.6f}\n")

    script_runner.exec_func_with_error_handling = logged
    if not os.environ.get("BENCH_NO_WARM"):  # as `docbench-lens serve` does (dashboard/session/server.py): the benchmark read ahead
        try:
            from dashboard.session.server import start_warming
        except ImportError:  # an app from before the server read ahead (a worktree of an older commit)
            pass
        else:
            start_warming(argv)
    if os.environ.get("BENCH_TRACE_LOG"):  # diagnosis: when each element is queued and sent to the browser
        _trace_messages(os.environ["BENCH_TRACE_LOG"])
    sys.argv = ["streamlit", *argv]
    streamlit_main(prog_name="streamlit")


def _trace_messages(log: str) -> None:
    """Log `<time> queued|sent <element type>` for every element delta and script-finished message."""
    from streamlit.runtime import app_session

    def kinds(msg) -> str:
        if msg.WhichOneof("type") == "delta":
            d = msg.delta
            which = d.WhichOneof("type")
            return f"{which}:{getattr(d, which).WhichOneof('type')}" if which == "new_element" else str(which)
        return str(msg.WhichOneof("type"))

    enqueue, flush = app_session.AppSession._enqueue_forward_msg, app_session.AppSession.flush_browser_queue

    def queued(self, msg):
        with open(log, "a") as f:
            f.write(f"{time.time():.6f} queued {kinds(msg)}\n")
        return enqueue(self, msg)

    def sent(self):
        msgs = flush(self)
        with open(log, "a") as f:
            f.writelines(f"{time.time():.6f} sent {kinds(m)}\n" for m in msgs)
        return msgs

    app_session.AppSession._enqueue_forward_msg = queued  # type: ignore[method-assign]
    app_session.AppSession.flush_browser_queue = sent  # type: ignore[method-assign]


def script_seconds(since: float) -> float:
    """Total server script time of the runs that ended after `since` (time.time())."""
    if not SCRIPT_LOG.exists():
        return 0.0
    rows = [line.split() for line in SCRIPT_LOG.read_text().splitlines() if line.strip()]
    return sum(float(d) for end, d in rows if float(end) > since)


@contextmanager
def server(benchmark: Path | None, app: Path = Path("dashboard/app.py"), port: int | None = None, warm: bool = True):
    """`streamlit run dashboard/app.py` on a free port, its script runs logged to SCRIPT_LOG, reading the
    benchmark ahead as `docbench-lens serve` does (dashboard/session/server.py; not with `warm=False`);
    yields (url, seconds until health 200). The server gets no LENS_* variable of this process but
    the cache and user-data folders (LENS_CACHE_DIR, LENS_DATA_DIR): a benchmark that sets a fresh
    cache folder measures a cold cache (dropping it too made every "cold" run after the first on a
    machine read the default cache, warm)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_") or k in ("LENS_CACHE_DIR", "LENS_DATA_DIR")}
    if benchmark is not None:
        env["LENS_BENCHMARK"] = str(benchmark)
    if not warm:
        env["BENCH_NO_WARM"] = "1"
    port = port or free_port()
    url = f"http://localhost:{port}"
    SCRIPT_LOG.parent.mkdir(parents=True, exist_ok=True)
    SCRIPT_LOG.write_text("")
    cmd = [sys.executable, __file__, "--timed-server", str(SCRIPT_LOG), "run", str(app), "--server.headless", "true",
           "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        while not _healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {proc.stderr.read()}")
            if time.perf_counter() - t0 > 60:
                raise RuntimeError("no /_stcore/health 200 within 60 s")
            time.sleep(0.05)
        yield url, time.perf_counter() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# Every change of the app's script state, with the page's clock (performance.now(), ms), and the
# moment of the latest pointer or key press (an interaction is timed from it, not from when the
# driver was asked to act).
STATE_LOG = """(() => {
  window.__lensInput = 0;
  for (const type of ['pointerdown', 'keydown']) document.addEventListener(type, () => { window.__lensInput = performance.now(); }, true);
  const log = window.__lensStates = [];
  new MutationObserver(ms => { for (const m of ms) log.push([m.target.getAttribute('data-test-script-state'), performance.now()]); })
    .observe(document, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
  // the moments the first table (the overview's leaderboard, the floor app's table) arrives and has its
  // canvas, and the first plotly chart arrives; not the app's prefetch (an empty table and chart in a
  // one-pixel container, .st-key-lens_prefetch, on a session's first run: dashboard/app.py)
  window.__lensBoard = null; window.__lensBoardIn = null; window.__lensChartIn = null;
  const shown = sel => [...document.querySelectorAll(sel)].some(e => !e.closest('.st-key-lens_prefetch'));
  const board = new MutationObserver(() => {
    const now = performance.now();
    if (window.__lensBoardIn === null && shown('[data-testid="stDataFrame"]')) window.__lensBoardIn = now;
    if (window.__lensChartIn === null && shown('[data-testid="stPlotlyChart"]')) window.__lensChartIn = now;
    if (window.__lensBoard === null && shown('[data-testid="stDataFrame"] canvas')) window.__lensBoard = now;
    if (window.__lensBoard !== null && window.__lensChartIn !== null) board.disconnect();
  });
  board.observe(document, {childList: true, subtree: true});
})();"""

# True when the script is idle (no run, no status widget, no stale element).
IDLE_NOW = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && !document.querySelector('[data-stale="true"]');
}"""

# True when the script is idle and the overview is fully drawn (leaderboard and every chart).
OVERVIEW_DONE = """() => {
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return (""" + IDLE_NOW + """)()
      && !!document.querySelector('[data-testid="stDataFrame"] canvas')
      && charts.length > 0 && charts.every(c => c.querySelector('.js-plotly-plot .main-svg'));
}"""

# After an action started at t0 (page clock; or at its pointer/key press, if later): a run happened
# and the script has been idle for `settle` ms since; returns [idle moment - t0, first run start -
# t0] (ms), else false.
IDLE_AFTER = """([t0, settle]) => {
  if (window.__lensInput > t0) t0 = window.__lensInput;
  const log = window.__lensStates.filter(e => e[1] >= t0);
  if (!log.some(e => e[0] === 'running')) return false;
  const last = log[log.length - 1];
  const app = document.querySelector('[data-testid="stApp"]');
  if (last[0] !== 'notRunning' || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  const first = log.find(e => e[0] === 'running');
  return performance.now() - last[1] >= settle ? [Math.max(last[1] - t0, 0.001), first[1] - t0] : false;
}"""


def wait_stable(page, js: str, timeout: float = 120.0, settle: float = 0.5) -> float:
    """Poll js until it holds for `settle` s; returns the perf_counter() when it first held."""
    deadline = time.perf_counter() + timeout
    since = None
    while time.perf_counter() < deadline:
        ok = page.evaluate(js)
        now = time.perf_counter()
        if ok:
            since = since or now
            if now - since >= settle:
                return since
        else:
            since = None
        time.sleep(0.03)
    raise RuntimeError("the page did not settle")


STARTS: dict[str, list[float]] = {}  # per interaction: action -> the script's first run starts (s)


SERVER: dict[str, list[float]] = {}  # per interaction: the server's script time (s)


def timed(page, action, name: str = "") -> float:
    """Seconds from the action to the script idle again (page clock)."""
    since = time.time()
    t0 = page.evaluate("performance.now()")
    action()
    total, start = page.wait_for_function(IDLE_AFTER, arg=[t0, 500], polling=50, timeout=120_000).json_value()
    STARTS.setdefault(name, []).append(start / 1000)
    SERVER.setdefault(name, []).append(script_seconds(since))
    return total / 1000


def new_page(browser, context=None):
    """A page in a new browser context (nothing cached, the state log installed), or in `context`."""
    if context is None:
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(STATE_LOG)
    page = context.new_page()
    page.set_default_timeout(60_000)
    return page


def first_load(browser, url: str, context=None) -> tuple[float, dict[str, float]]:
    """goto -> the overview complete, in s; and its phases on the page's clock (from navigation):
    until the script starts (HTML, JS, websocket), the script's runs, drawing after the last run.
    In a new browser context (nothing cached), or in `context` (a returning browser: its cache kept)."""
    page = new_page(browser, context)
    since = time.time()
    t0 = time.perf_counter()
    page.goto(url)
    nav = page.evaluate("performance.timeOrigin") / 1000  # the page clock's zero, on the wall clock
    done = wait_stable(page, OVERVIEW_DONE)
    total = done - t0
    states = page.evaluate("window.__lensStates")
    board, board_in, chart_in = page.evaluate("[window.__lensBoard, window.__lensBoardIn, window.__lensChartIn]")
    if context is None:
        page.context.close()
    else:
        page.close()
    start = next(t for st, t in states if st == "running") / 1000
    end = max(t for st, t in states if st == "notRunning") / 1000
    lead = max(nav - since, 0.0)  # goto called -> the page clock's zero
    return total, {"page until the script starts": start, "script runs": end - start,
                   "of which server script time": script_seconds(since), "drawing after": total - end,
                   "first table drawn": lead + board / 1000 if board is not None else float("nan"),
                   "first table arrives": lead + board_in / 1000 if board_in is not None else float("nan"),
                   "first chart arrives": lead + chart_in / 1000 if chart_in is not None else float("nan")}


def heatmap_cells(page) -> list:
    pts = page.locator(".js-plotly-plot .scatterlayer .point")
    pts.first.wait_for()
    return pts.evaluate_all("els => els.map(el => el.closest('.js-plotly-plot').data[0].customdata[el.__data__.i])")


def click_point(page, k: int) -> None:
    pt = page.locator(".js-plotly-plot .scatterlayer .point").nth(k)
    pt.scroll_into_view_if_needed()
    box = pt.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.click(x, y)


FLOOR_APP = """import streamlit as st
st.title("floor")
if st.button("Press"):
    st.session_state["n"] = st.session_state.get("n", 0) + 1
st.write(st.session_state.get("n", 0))
"""


def floor(browser, repeat: int) -> list[float]:
    """Press -> idle in a one-button app on the same server setup: what Streamlit itself costs here."""
    app = SCRIPT_LOG.parent / "floor_app.py"
    app.write_text(FLOOR_APP)
    with server(None, app) as (url, _):
        page = new_page(browser)
        page.goto(url)
        page.get_by_role("button", name="Press").wait_for()
        wait_stable(page, IDLE_NOW)
        out = [timed(page, lambda: page.get_by_role("button", name="Press").click(), "floor") for _ in range(repeat)]
        page.context.close()
    return out


def browser_interactions(browser, url: str, repeat: int) -> dict[str, list[float]]:
    """Open slice (heatmap click), change run, select question, change metric -- in one session."""
    page = new_page(browser)
    page.goto(url)
    wait_stable(page, OVERVIEW_DONE)
    out: dict[str, list[float]] = {k: [] for k in ("open slice", "change run", "select question", "change metric")}
    cells = heatmap_cells(page)
    runs = list(dict.fromkeys(c[0] for c in cells))
    picks = [k for k, c in enumerate(cells) if c[3] >= 8][:: max(1, len(cells) // (repeat * 2))][:repeat]
    for i, k in enumerate(picks):
        # the overview's metric, then a heatmap cell -> explorer
        metric = ("Token F1", "ANLS", "Accuracy")[i % 3]
        out["change metric"].append(timed(page, lambda: page.get_by_role("radio", name=metric, exact=True).click(), "change metric"))
        wait_stable(page, OVERVIEW_DONE)
        out["open slice"].append(timed(page, lambda: click_point(page, k), "open slice"))
        page.get_by_role("heading", name="Question explorer").wait_for()
        # add a run in the Runs multiselect (typed, then its option clicked; the value is sent on the click)
        other = runs[(runs.index(cells[k][0]) + 1) % len(runs)]
        box = page.locator('input[aria-label="Runs"]')
        box.click()
        box.fill(other)
        out["change run"].append(timed(page, lambda: page.get_by_role("option").filter(has_text=other).first.click(), "change run"))
        page.keyboard.press("Escape")
        # a row of the table
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        out["select question"].append(timed(page, lambda: page.mouse.click(box["x"] + 16, box["y"] + ROW_PX * (i + 2) + ROW_PX / 2),
                                            "select question"))
        page.get_by_role("heading", name="Question detail").wait_for()
        page.locator('[data-testid="stSidebarNavLink"]', has_text="Overview").click()
        wait_stable(page, OVERVIEW_DONE)
    page.context.close()
    return out


# ----------------------------------------------------------------------------- AppTest


def apptest_interactions(repeat: int, profile_all: bool) -> tuple[float, dict[str, list[float]], dict[str, str]]:
    from streamlit.testing.v1 import AppTest

    os.environ["LENS_BENCHMARK"] = str(SYNTHETIC)
    for k in ("LENS_RUNS", "LENS_SCORES"):
        os.environ.pop(k, None)
    at = AppTest.from_file(str(APP), default_timeout=300)
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    runs = list(at.dataframe[0].value["Run"])
    at.selectbox(key="ov_pick_field").set_value("reasoning_type").run()
    labels = list(at.selectbox(key="ov_pick_label").options)
    times: dict[str, list[float]] = {k: [] for k in ("open slice", "change slice", "change run", "select question", "change metric")}
    steps = {}

    def clock(name: str, prepare) -> None:
        prepare()
        t = time.perf_counter()
        at.run()
        times[name].append(time.perf_counter() - t)
        assert not at.exception, (name, [e.value for e in at.exception])
        steps[name] = prepare

    for i in range(repeat):
        run, label = runs[i % len(runs)], labels[i % len(labels)]
        clock("change metric", lambda: at.segmented_control(key="ov_metric").set_value(("token_f1", "anls", "accuracy")[i % 3]))

        def pick() -> None:
            at.selectbox(key="ov_pick_field").set_value("reasoning_type")
            at.selectbox(key="ov_pick_label").set_value(label)
            at.selectbox(key="ov_pick_run").set_value(run)
            at.button[0].click()
        clock("open slice", pick)
        assert at.title[0].value == "Question explorer"
        # AppTest reruns the page last named by at.switch_page, not the one the script switched to
        at.switch_page("views/questions.py")
        other_label = labels[(i + 3) % len(labels)]
        clock("change slice", lambda: at.multiselect(key="x_f.reasoning_type").set_value([other_label]))
        clock("change run", lambda: at.multiselect(key="x_runs").set_value([runs[(i + 1) % len(runs)]]))

        def select() -> None:
            key = at.dataframe[0].key
            at.session_state[key] = {"selection": {"rows": [i], "columns": [], "cells": []}}
        clock("select question", select)
        assert any(s.value == "Question detail" for s in at.subheader), "no question detail after selecting a row"
        at.switch_page("views/overview.py").run()

    profiles = {}
    for name, values in times.items():
        if profile_all or statistics.median(values) > INTERACTION_TARGET_S:
            profiles[name] = _profile(at, name, steps[name])
    return first, times, profiles


def _profile(at, name: str, prepare) -> str:
    """One more run of an interaction under cProfile: the functions with the most cumulative time."""
    if name in ("change slice", "change run", "select question"):
        at.switch_page("views/questions.py").run()
    else:
        at.switch_page("views/overview.py").run()
    if name == "select question":  # a selection needs the current table's key
        at.multiselect(key="x_f.reasoning_type").set_value([]).run()
    prepare()
    # AppTest runs the script in its own thread: profile inside the call that executes it.
    from streamlit.runtime.scriptrunner import script_runner

    prof = cProfile.Profile()
    original = script_runner.exec_func_with_error_handling

    def profiled(*a, **kw):
        prof.enable()
        try:
            return original(*a, **kw)
        finally:
            prof.disable()

    script_runner.exec_func_with_error_handling = profiled
    try:
        t = time.perf_counter()
        at.run()
        wall = time.perf_counter() - t
    finally:
        script_runner.exec_func_with_error_handling = original
    stats = pstats.Stats(prof).stats  # (file, line, function) -> (cc, ncalls, tottime, cumtime, callers)

    def where(key) -> str:
        file, line, func = key
        for prefix in (str(ROOT) + "/", "site-packages/"):
            if prefix in file:
                file = file.split(prefix, 1)[1]
        return f"{file}:{line} {func}"

    mine = re.compile(r"/(dashboard|scoring)/|pandas/core/(frame|groupby|reshape|indexing)|plotly/(basedatatypes|io)|"
                      r"streamlit/(elements/(plotly_chart|arrow|widgets)|dataframe_util|runtime/(caching|state))|pyarrow|"
                      r"json/encoder")
    cum = sorted(((v[3], v[2], v[1], k) for k, v in stats.items() if mine.search(k[0])), reverse=True)[:22]
    own = sorted(((v[2], v[3], v[1], k) for k, v in stats.items()), reverse=True)[:12]
    lines = [f"wall {1000 * wall:.0f} ms under the profiler", "cumulative ms | own ms | calls | function (project code and the libraries it calls)"]
    lines += [f"{1000 * c:10.0f} | {1000 * o:6.0f} | {n:6d} | {where(k)}" for c, o, n, k in cum]
    lines += ["own ms | cumulative ms | calls | function (top own time, anywhere)"]
    lines += [f"{1000 * o:6.0f} | {1000 * c:10.0f} | {n:6d} | {where(k)}" for o, c, n, k in own]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- direct timings


def direct_timings(repeat: int) -> dict[str, list[float]]:
    from dashboard.core.analysis import RECOMPUTED, Analysis, Run
    from dashboard.core.paths import Sources
    from dashboard.data.workspace import load_workspace
    from scoring.evaluate import evaluate

    out: dict[str, list[float]] = {"read files": [], "scoring": [], "analysis": []}
    for _ in range(repeat):
        t = time.perf_counter()
        ws = load_workspace(Sources(benchmark=SYNTHETIC))
        out["read files"].append(time.perf_counter() - t)
        t = time.perf_counter()
        results = [evaluate(ws.gold.items, pf.loaded.items, profile="xldocbench", name=pf.run) for pf in ws.predictions]
        out["scoring"].append(time.perf_counter() - t)
        t = time.perf_counter()
        an = Analysis.build([Run(r.name, RECOMPUTED, "", r) for r in results], ws.gold.items, ws.page_counts)
        for name in ("reasoning_type", "evidence_source", "domain", "difficulty", "answer_format", "doc_type", "split",
                     "length", "position"):
            an.breakdown(name)
        an.leaderboard()
        out["analysis"].append(time.perf_counter() - t)
    assert len(ws.gold.items) == 1519 and len(ws.predictions) == 13
    return out


# ----------------------------------------------------------------------------- report


def ms(x: float) -> str:
    return f"{1000 * x:,.0f} ms"


def s(x: float) -> str:
    return f"{x:.2f} s"


def main() -> None:
    if sys.argv[1:2] == ["--timed-server"]:
        return timed_server(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="times each interaction is measured")
    ap.add_argument("--cold", type=int, default=3, help="cold starts and first loads, each on a new server")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--profile", action="store_true", help="profile every interaction, not only those over target")
    args = ap.parse_args()

    if not (SYNTHETIC / "qa_single_doc.jsonl").is_file():
        make_synthetic_benchmark.generate(SYNTHETIC)
        print(f"wrote {SYNTHETIC}")
    import streamlit

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, streamlit {streamlit.__version__}, "
          f"load average {os.getloadavg()[0]:.1f}")
    rows: list[tuple[str, str, str, str, bool | None]] = []

    browser_rows: dict[str, list[float]] = {}
    floor_s: list[float] = []
    if not args.no_browser:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            cold = []
            for _ in range(args.cold):
                with server(None) as (url, up):
                    page_s, phases = first_load(browser, url)
                    cold.append(up + page_s)
                    print(f"(a) cold start, sample_runs/: {s(up + page_s)} = server ready {s(up)} + page {s(page_s)} "
                          f"({', '.join(f'{k} {s(v)}' for k, v in phases.items())})")
            rows.append(("(a) cold start → overview complete, sample_runs/ (76 q, 4 runs + 3 score-only), browser",
                         s(statistics.median(cold)), s(max(cold)), "—", None))
            firsts = []
            for k in range(args.cold):
                with server(SYNTHETIC) as (url, up):
                    page_s, phases = first_load(browser, url)
                    firsts.append(page_s)
                    print(f"(b) first load, synthetic, fresh server (ready in {s(up)}): {s(page_s)} "
                          f"({', '.join(f'{k} {s(v)}' for k, v in phases.items())})")
                    if k == args.cold - 1:
                        browser_rows = browser_interactions(browser, url, args.repeat)
            rows.append(("(b) first load, 13 runs × 1,519 q, browser, fresh server: open → overview drawn (incl. reading, scoring)",
                         s(statistics.median(firsts)), s(max(firsts)), "< 5 s", statistics.median(firsts) < FIRST_LOAD_TARGET_S))
            floor_s = floor(browser, args.repeat)
            browser.close()

    direct = direct_timings(args.repeat)
    print(f"(b) read files {[s(x) for x in direct['read files']]}, scoring 13 runs {[s(x) for x in direct['scoring']]}, "
          f"analysis tables {[s(x) for x in direct['analysis']]}")
    rows.append(("(b) scoring alone: `scoring.evaluate` over the 13 runs", s(statistics.median(direct["scoring"])),
                 s(max(direct["scoring"])), "(within the 5 s)", None))
    rows.append(("(b) reading alone: `load_workspace` (gold, documents, 13 run files)", s(statistics.median(direct["read files"])),
                 s(max(direct["read files"])), "(within the 5 s)", None))

    first, times, profiles = apptest_interactions(args.repeat, args.profile)
    print(f"(c) AppTest first run (reading + scoring, in this process): {s(first)}")
    labels = {"open slice": "open a slice (overview → explorer)", "change slice": "change the slice (explorer filter)",
              "change run": "change the run (explorer)", "select question": "select a question (explorer → detail)",
              "change metric": "change the metric (overview redrawn)"}
    for name, values in times.items():
        med = statistics.median(values)
        print(f"(c) AppTest {name}: {[ms(x) for x in values]}")
        rows.append((f"(c) {labels[name]}: server time (AppTest)", ms(med), ms(max(values)), "< 300 ms", med < INTERACTION_TARGET_S))
    for name, values in browser_rows.items():
        med = statistics.median(values)
        starts, server_s = STARTS.get(name, []), SERVER.get(name, [])
        print(f"(c) browser {name}: {[ms(x) for x in values]}; of which press -> script starts {[ms(x) for x in starts]}, "
              f"server script time {[ms(x) for x in server_s]}")
        rows.append((f"(c) {labels[name]}: press → script idle in the browser (press → script start "
                     f"{ms(statistics.median(starts))}, server script {ms(statistics.median(server_s))})",
                     ms(med), ms(max(values)), "< 300 ms", med < INTERACTION_TARGET_S))
    if floor_s:
        print(f"(c) browser, one-button app: {[ms(x) for x in floor_s]}")
        rows.append(("(c) for scale: press → idle of a one-button Streamlit app, same machine and browser",
                     ms(statistics.median(floor_s)), ms(max(floor_s)), "—", None))

    for name, text in profiles.items():
        print(f"\n--- cProfile of one AppTest run: {name} ---\n{text}")

    print(f"\n| measurement ({os.cpu_count()} cores; medians of {args.repeat} interactions, {args.cold} cold starts) "
          "| median | max | target | met |")
    print("|---|---|---|---|---|")
    for label, med, mx, target, met in rows:
        print(f"| {label} | {med} | {mx} | {target} | {'—' if met is None else ('yes' if met else '**no**')} |")


if __name__ == "__main__":
    main()

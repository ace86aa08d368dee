"""One bad input costs only itself, served (issue 35.1 and 35.7): `streamlit run` on the sample; one
session opens, by a link's `data` parameter, a copy of the sample whose folder of runs holds a prediction
file of one line whose answer is a 48 MB nested list (16 million empty lists: under the 64 MB line cap,
about 1.8 GB of objects once parsed -- the worst input left once every reader has its caps), while
another session opens the sample's Question explorer. The file is parsed in a reader process
(scoring/guard.py) under a memory limit: it is named on the Data page, the folder's other runs load, the
other session's page finishes, the server's own peak memory stays under a ceiling, and the health
endpoint, polled all along, answers every request within a few seconds (the issue promises 1 s; a loaded
two-core machine is given some slack, and the figures are printed)."""

from __future__ import annotations

import json
import shutil
import statistics
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

import guard_kit
from browser_kit import ROOT, check_clean, open_page, serve, shot, wait_idle

pytestmark = pytest.mark.browser

HEALTH_EVERY_S = 0.1
HEALTH_CEILING_S = 5.0  # the promise is 1 s; measured here: well under a second (printed)
SERVER_CEILING_MB = 1000  # the server's own peak (VmHWM): ~500 MB here; parsing the answer itself took 1.8 GB more
LOAD_GUARD_S = 240.0  # the hostile folder reads in a few seconds; 20x and more
NESTED_MB = 48


class Health(threading.Thread):
    """GET /_stcore/health every HEALTH_EVERY_S, one request at a time: each latency, each failure."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.latencies, self.failures, self.stop = base, [], [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t = time.perf_counter()
            try:
                with urllib.request.urlopen(self.base + "/_stcore/health", timeout=60) as r:
                    r.read()
                    if r.status != 200:
                        self.failures.append(f"status {r.status}")
            except OSError as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")
            self.latencies.append(time.perf_counter() - t)
            self.stop.wait(HEALTH_EVERY_S)


def _server_pid(base: str) -> int:
    """The pid of the `streamlit run` serving on `base`'s port (found by its command line)."""
    port = base.rsplit(":", 1)[1]
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--server.port" in args and args[args.index(b"--server.port") + 1] == port.encode():
            return int(proc.name)
    raise AssertionError(f"no server process on port {port}")


def _peak_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) // 1024


def _hostile_copy(root: Path) -> Path:
    folder = root / "sample-with-a-hostile-run"
    shutil.copytree(ROOT / "sample_runs", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    first = sorted((folder / "runs").glob("*.jsonl"))[0]
    qid = json.loads(first.read_text().splitlines()[0])["question_id"]
    guard_kit.nested_list_predictions(folder / "runs" / "hostile.jsonl", qid, mb=NESTED_MB)
    return folder


def test_a_session_opening_the_worst_input_costs_no_other_session_its_page(tmp_path, browser):
    roots = tmp_path / "roots"
    roots.mkdir()
    folder = _hostile_copy(roots)
    env = {"LENS_DATA_ROOTS": str(roots), "LENS_READ_MEMORY": "512M"}
    with serve(env, name="served-hostile") as (base, log):  # the session's Chromium (one sync Playwright per thread)
        server = _server_pid(base)
        health = Health(base)
        health.start()
        errors_a: list[str] = []
        errors_b: list[str] = []
        try:
            hostile = open_page(browser, base, errors_a)
            other = open_page(browser, base, errors_b)
            t0 = time.perf_counter()
            hostile.goto(f"{base}/data?data={quote(str(folder))}")
            other.goto(f"{base}/questions")
            wait_idle(other, timeout=LOAD_GUARD_S)
            other_s = time.perf_counter() - t0
            wait_idle(hostile, timeout=LOAD_GUARD_S)
            hostile_s = time.perf_counter() - t0
        finally:
            health.stop.set()
            health.join(timeout=70)
        peak = _peak_mb(server)
        lat = sorted(health.latencies)
        print(f"\nhealth: {len(lat)} requests, p50 {statistics.median(lat) * 1000:.0f} ms, "
              f"max {lat[-1] * 1000:.0f} ms, failures {len(health.failures)}; the other session's page "
              f"{other_s:.1f} s, the hostile folder's Data page {hostile_s:.1f} s; the server's peak RSS {peak} MB")
        shot(hostile, "served_hostile_data.png")
        check_clean(other, errors_b, log, "the other session's Question explorer")
        check_clean(hostile, errors_a, log, "the hostile folder's Data page")
        assert not health.failures, health.failures[:5]
        assert lat and lat[-1] < HEALTH_CEILING_S, f"the health endpoint took {lat[-1]:.1f} s"
        assert peak < SERVER_CEILING_MB, f"the server's own memory peaked at {peak} MB"
        other.get_by_role("heading", name="Question explorer").wait_for()
        problems = hostile.locator("code").filter(has_text="hostile.jsonl")
        problems.first.wait_for(state="attached")
        assert "hostile.jsonl needs more than 512 MB to read; not read" in problems.first.inner_text()
        runs = hostile.locator('[data-testid="stMetric"]').filter(has_text="Runs")  # the sample's own runs loaded
        assert int(runs.first.inner_text().split()[-1]) >= 2

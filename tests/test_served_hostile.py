"""One bad input costs only itself, served (issue 35.1 and 35.7): `streamlit run` on the sample; one
session opens, by a link's `data` parameter, an lmms-eval folder whose DocVQA run has a `target` that is a
16 MB Python literal of 8 million items -- the worst input of the issue: `ast.literal_eval` in the
server took 6.1 GB and left `/_stcore/health` unanswered for 36 s -- while another session opens the
sample's Question explorer. The reading happens in a reader process (scoring/guard.py) under a memory
limit: the hostile file is named on the Data page, the folder's good run loads, the other session's page
finishes, and the health endpoint, polled all along, answers every request within a few seconds (the
issue promises 1 s; a loaded two-core machine is given some slack, and the figures are printed)."""

from __future__ import annotations

import statistics
import threading
import time
import urllib.request
from urllib.parse import quote

import pytest

import guard_kit
from browser_kit import check_clean, launch, open_page, serve, shot, wait_idle
from scoring import guard

pytestmark = pytest.mark.browser

HEALTH_EVERY_S = 0.1
HEALTH_CEILING_S = 5.0  # the promise is 1 s; measured here: a few hundred ms at worst (printed)
LOAD_GUARD_S = 240.0  # the hostile folder reads in a few seconds; 20x and more


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


def test_a_session_opening_the_worst_input_costs_no_other_session_its_page(tmp_path):
    roots = tmp_path / "roots"
    roots.mkdir()
    folder = guard_kit.lmms_with_hostile_target(roots)
    env = {"LENS_DATA_ROOTS": str(roots), guard.MEMORY_VARIABLE: "512M"}
    with serve(env, name="served-hostile") as (base, log), launch() as browser:
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
        lat = sorted(health.latencies)
        print(f"\nhealth: {len(lat)} requests, p50 {statistics.median(lat) * 1000:.0f} ms, "
              f"max {lat[-1] * 1000:.0f} ms, failures {len(health.failures)}; the other session's page "
              f"{other_s:.1f} s, the hostile folder's Data page {hostile_s:.1f} s")
        shot(hostile, "served_hostile_data.png")
        check_clean(other, errors_b, log, "the other session's Question explorer")
        check_clean(hostile, errors_a, log, "the hostile folder's Data page")
        assert not health.failures, health.failures[:5]
        assert lat and lat[-1] < HEALTH_CEILING_S, f"the health endpoint took {lat[-1]:.1f} s"
        other.get_by_role("heading", name="Question explorer").wait_for()
        problems = hostile.locator("code").filter(has_text="20260802_101500_samples_docvqa_val.jsonl")
        problems.first.wait_for(state="attached")
        text = problems.first.inner_text()
        assert "Evil__Model-7B" in text and "target" in text  # named: refused, or its target kept as text
        hostile.get_by_text("Good/Model-7B").first.wait_for(state="attached")  # the folder's good run loaded

"""Speed of the evidence metrics on the question explorer and the overview (a script, not a test:
it prints figures and asserts nothing).

    .venv/bin/python bench/bench_evidence_explorer.py [--repeat 7] [--benchmark sample_runs]

Through streamlit.testing.v1.AppTest (server time of a script run, no browser): the explorer with
the chosen runs (by default all of them), the first run that computes the evidence metrics (every
answer located in its documents: dashboard.evidence.grounding.evidence_table), then reruns with the evidence
columns on and off, an answer-location filter change, and the overview with and without its
"Where the answers are" section (the section's share measured by hiding it behind the big-data
gate). Medians of --repeat runs, side by side with their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard.evidence import grounding  # noqa: E402

APP = str(ROOT / "dashboard" / "app.py")


def timed(at: AppTest) -> float:
    t = time.perf_counter()
    at.run()
    if at.exception:
        raise SystemExit(f"exception: {[e.value for e in at.exception]}")
    return time.perf_counter() - t


def median(at: AppTest, n: int, before=lambda: None) -> float:
    out = []
    for _ in range(n):
        before()
        out.append(timed(at))
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--benchmark", default=str(ROOT / "sample_runs"))
    ap.add_argument("--runs", nargs="*", help="runs shown in the explorer (default: all)")
    args = ap.parse_args()
    os.environ["LENS_BENCHMARK"] = args.benchmark
    for k in ("LENS_RUNS", "LENS_SCORES"):
        os.environ.pop(k, None)

    # the overview, first without the section (gate closed), then with it (this computes the metrics once)
    at = AppTest.from_file(APP, default_timeout=600)
    auto = grounding.AUTO_PAIRS
    grounding.AUTO_PAIRS = 0
    timed(at)  # load and score
    names = args.runs or [r.name for r in at.session_state["lens_context"].analysis.runs]
    pairs = len(at.session_state["lens_context"].workspace.gold.items) * len(at.session_state["lens_context"].analysis.runs)
    ov_without = median(at, args.repeat)
    grounding.AUTO_PAIRS = auto
    cold = timed(at)  # the section computes every (question, run) pair
    ov_with = median(at, args.repeat)

    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"run": names})
    timed(at)
    at.switch_page("views/questions.py")
    timed(at)
    on = median(at, args.repeat)
    at.toggle(key="x_evidence").set_value(False)
    timed(at)
    off = median(at, args.repeat)
    at.toggle(key="x_evidence").set_value(True)
    timed(at)
    flips = iter(["other_page", "not_in_document"] * args.repeat)
    loc = median(at, args.repeat, lambda: at.multiselect(key="x_location").set_value([next(flips)]))

    print(f"benchmark {args.benchmark}: {pairs} question x run pairs, explorer runs: {len(names)}")
    print(f"evidence metrics computed cold (overview rerun that computes them): {cold * 1000:.0f} ms")
    print(f"overview rerun     with section {ov_with * 1000:6.0f} ms   without {ov_without * 1000:6.0f} ms   "
          f"ratio {ov_with / ov_without:.2f}")
    print(f"explorer rerun     columns on   {on * 1000:6.0f} ms   off     {off * 1000:6.0f} ms   ratio {on / off:.2f}")
    print(f"explorer location filter change {loc * 1000:6.0f} ms (columns on)")


if __name__ == "__main__":
    main()

"""Where a page's server time goes when a user switches questions: a script, not a test.

    .venv/bin/python bench/profile_page.py [--page evidence|questions] [--switches 30] [--top 25]
                                           [--benchmark DIR] [--runs R ...] [--no-profile]

Opens the app in streamlit.testing.v1.AppTest on `--benchmark` (default sample_runs/), goes to the
page, then switches its question `--switches` times (cycling through the questions that name a
document, so the page caches see each question again after the first round, as a served app
does). Each script run is profiled with cProfile in the script thread; the script prints the
wall time per switch (first round: caches cold; later rounds: warm), the garbage collector's
pauses during the switches (gc.callbacks) and the top functions by cumulative and own time.

AppTest runs the same script and caches as the server but does not encode the ForwardMsgs for the
websocket; bench/bench_load.py measures the served app end to end.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

PAGES = {"evidence": ("views/evidence.py", "ev_question"), "questions": ("views/questions.py", None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", choices=sorted(PAGES), default="evidence")
    ap.add_argument("--switches", type=int, default=30)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--benchmark", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--runs", nargs="*", default=None, help="runs to show (default: the first two prediction files)")
    ap.add_argument("--no-profile", action="store_true", help="time only (cProfile slows Python code 1.5-2x)")
    ap.add_argument("--warm", action="store_true",
                    help="visit every question once first (not profiled), then profile --switches warm switches")
    args = ap.parse_args()

    os.environ["LENS_BENCHMARK"] = str(args.benchmark)
    for name in ("LENS_RUNS", "LENS_SCORES", "LENS_DATA_ROOTS"):
        os.environ.pop(name, None)
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    from scoring.loaders import load_gold

    prof = cProfile.Profile()
    profiling = {"on": False}
    original = script_runner.ScriptRunner._run_script

    def profiled(self, *a, **kw):  # the script thread: cProfile profiles the thread that enables it
        if not profiling["on"] or args.no_profile:
            return original(self, *a, **kw)
        prof.enable()
        try:
            return original(self, *a, **kw)
        finally:
            prof.disable()

    script_runner.ScriptRunner._run_script = profiled

    pauses: list[float] = []
    started: dict[str, float] = {}

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started["t"] = time.perf_counter()
        elif "t" in started and profiling["on"]:
            pauses.append(time.perf_counter() - started.pop("t"))

    gc.callbacks.append(on_gc)

    gold_files = [p for p in sorted(args.benchmark.glob("*.jsonl")) if p.name != "documents.jsonl"]
    gold = load_gold(gold_files).items
    qids = [q.qid for q in gold if q.documents] or [q.qid for q in gold]
    runs = args.runs if args.runs is not None else sorted(p.stem for p in (args.benchmark / "runs").glob("*.json*"))[:2]
    script, key = PAGES[args.page]
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=300)
    at.query_params.update({"sel": qids[0], "run": runs})
    t = time.perf_counter()
    at.run()
    at.switch_page(script)
    at.run()
    print(f"profile_page: {args.page!r} on {args.benchmark.name}, runs {runs}, {len(qids)} questions; "
          f"open: {time.perf_counter() - t:.2f} s; gc enabled: {gc.isenabled()}, thresholds {gc.get_threshold()}")
    if at.exception:
        raise SystemExit(f"the page failed: {at.exception[0].value}")
    cold, warm = [], []
    first = len(qids) - 1 if args.warm else 0
    for k in range(first + args.switches):
        profiling["on"] = k >= first
        qid = qids[(k + 1) % len(qids)]
        t = time.perf_counter()
        if key is not None:
            at.selectbox(key=key).set_value(qid)
        else:
            at.query_params["sel"] = qid
        at.run()
        if profiling["on"]:
            (cold if k + 1 < len(qids) else warm).append(time.perf_counter() - t)
        if at.exception:
            raise SystemExit(f"switch to {qid} failed: {at.exception[0].value}")
    profiling["on"] = False
    for name, xs in (("cold (first visit of a question)", cold), ("warm (question seen before)", warm)):
        if xs:
            print(f"  {name:36s} n={len(xs):3d}  median {statistics.median(xs) * 1000:6.0f} ms  "
                  f"mean {statistics.fmean(xs) * 1000:6.0f} ms  max {max(xs) * 1000:6.0f} ms")
    print(f"  gc pauses during the switches: {len(pauses)}, total {sum(pauses) * 1000:.0f} ms, "
          f"max {max(pauses, default=0) * 1000:.1f} ms; gc enabled after: {gc.isenabled()}")
    if args.no_profile:
        return
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats(order).print_stats(args.top)
        text = out.getvalue()
        print(text[text.find("   ncalls"):])


if __name__ == "__main__":
    main()

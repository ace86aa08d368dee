"""The Compare page as a user meets it, on a kept store: the first Compare after the overview and new pairs of
runs, each a whole page run (AppTest, one process per repetition), this checkout and optionally another, in turns.

    .venv/bin/python bench/bench_compare_page.py --campaign bench/out/campaign_20000x1000
        --cache bench/out/scale_cache/20000x1000 [--against CHECKOUT] [--pause 3] [--repeat 3]

A repetition opens the overview, waits `--pause` seconds (the user finding the Compare page: what the app
started in the background once the overview was drawn -- scipy, Compare's worker processes -- gets that long),
opens Compare (its first pair) and then picks five other runs as run A, one at a time. Printed per repetition:
the first Compare and each new pair, wall seconds and the server process's CPU seconds (the per-slice table's
rows computed in the worker processes are not in them); then the medians and maxima per side, the ratio ours /
theirs when --against is given, and the load average before and after. The store must be made first (a page
run of bench/bench_scale.py on the grid, or the app once on it); both checkouts must read it alike, or the first
run of each reads every file again. No assertion on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PICKS = (5, 17, 123, 400, 777)  # positions in run A's list (by accuracy), taken modulo its length

CHILD = """
import logging, os, sys, time
logging.disable(logging.WARNING)
code, pause = sys.argv[1], float(sys.argv[2])
sys.path.insert(0, code)
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(os.path.join(code, "dashboard", "app.py"), default_timeout=1800)
at.run()
time.sleep(pause)
def timed(step):
    t, c = time.perf_counter(), time.process_time()
    step()
    if at.exception:
        sys.exit("the page raised: " + str([e.value for e in at.exception])[:500])
    return time.perf_counter() - t, time.process_time() - c
at.switch_page("views/compare.py")
print("first", *timed(at.run))
names = at.selectbox(key="cmp_a").options
for i in {picks}:
    print("pair", *timed(lambda: at.selectbox(key="cmp_a").set_value(names[i % len(names)]).run()))
"""


def one(code: Path, args: argparse.Namespace) -> dict[str, list[tuple[float, float]]]:
    env = {**os.environ, "LENS_BENCHMARK": str(args.campaign), "LENS_CACHE_DIR": str(args.cache), "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", CHILD.format(picks=PICKS), str(code), str(args.pause)], cwd=code,
                          env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        sys.exit(f"{code}: {done.stderr[-2000:]}")
    got: dict[str, list[tuple[float, float]]] = {"first": [], "pair": []}
    for line in done.stdout.splitlines():
        what, *numbers = line.split()
        if what in got:
            got[what].append((float(numbers[0]), float(numbers[1])))
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--campaign", type=Path, required=True, help="the benchmark (bench/make_campaign.py)")
    ap.add_argument("--cache", type=Path, required=True, help="its kept store (LENS_CACHE_DIR)")
    ap.add_argument("--against", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--pause", type=float, default=3.0, help="seconds between the overview and the Compare page")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    args.campaign, args.cache = args.campaign.resolve(), args.cache.resolve()
    sides = {"ours": ROOT, **({"theirs": args.against.resolve()} if args.against else {})}
    got: dict[str, dict[str, list[tuple[float, float]]]] = {s: {"first": [], "pair": []} for s in sides}
    print(f"load average before: {os.getloadavg()[0]:.2f}; pause {args.pause:g} s")
    for r in range(args.repeat):
        for side, code in sides.items():
            res = one(code, args)
            for k, v in res.items():
                got[side][k].extend(v)
            print(f"{r + 1} {side:6} first {res['first'][0][0]:.2f} s ({res['first'][0][1]:.2f} CPU-s); new pairs "
                  + " ".join(f"{w:.2f}" for w, _ in res["pair"]) + f" s; load {os.getloadavg()[0]:.2f}", flush=True)
    med = {s: {k: statistics.median(w for w, _ in v) for k, v in d.items()} for s, d in got.items()}
    for side, d in got.items():
        print(f"{side}: first Compare median {med[side]['first']:.2f} s (max {max(w for w, _ in d['first']):.2f}); "
              f"a new pair median {med[side]['pair']:.2f} s (max {max(w for w, _ in d['pair']):.2f}), "
              f"server CPU median {statistics.median(c for _, c in d['pair']):.2f} s")
    if "theirs" in med:
        print("ratio ours / theirs: " + ", ".join(f"{k} {med['ours'][k] / med['theirs'][k]:.2f}x" for k in ("first", "pair")))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

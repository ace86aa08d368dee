"""Speed of the disagreement categories (scoring/categories.py) and of the disagreement page.

    .venv/bin/python bench/bench_categories.py [--repeat 5] [--runs 3]

1. Categorising 20,000 judgements: one run of bench/out/campaign_20000x50 (written by
   bench/make_campaign.py if absent), scored once; then, best of --repeat, `categorize` on every
   judgement (fuzzy only when category 9 needs it), `classify(with_fuzzy=True)` (the CSV and the
   page compute fuzzy for every answer), the page's per-run frame (dashboard.disagreement.
   run_categories), and the run's scoring itself for the ratio. Then --runs runs in a row, to
   extrapolate to 50 runs.
2. The page's server time on sample_runs/ (AppTest, same process): first run of the page (frames
   built), a rerun (frames cached), a category opened from the counts table, an answer's why panel.

Figures are printed, never asserted (tests never time anything).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CAMPAIGN = ROOT / "bench" / "out" / "campaign_20000x50"


def best(fn, repeat: int) -> float:
    """The fastest of `repeat` calls, in seconds."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def categorise(repeat: int, n_runs: int) -> None:
    from dashboard.disagreement.frames import run_categories
    from scoring.categories import categorize, classify
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    if not (CAMPAIGN / "runs").is_dir():
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_campaign.py"), "--questions", "20000", "--runs", "50"],
                       check=True)
    gold = load_gold([CAMPAIGN / "qa_single_doc.jsonl", CAMPAIGN / "qa_cross_doc.jsonl"]).items
    paths = sorted((CAMPAIGN / "runs").iterdir())[:max(1, n_runs)]
    preds = load_predictions(paths[0]).items
    scoring = best(lambda: evaluate(gold, preds, workers=1), max(1, repeat // 2))
    run = evaluate(gold, preds, workers=1)
    js = [r.judgement for r in run.results]
    n = len(js)
    plain = best(lambda: [categorize(j) for j in js], repeat)
    fuzzy = best(lambda: [classify(j, with_fuzzy=True) for j in js], repeat)
    frame = best(lambda: run_categories(run), repeat)
    print(f"categorise {n:,} judgements (one run of {CAMPAIGN.name}), best of {repeat}, one core:")
    print(f"  scoring the run (evaluate, one process)           {scoring:7.3f} s")
    print(f"  categorize (fuzzy only when category 9 needs it)  {plain:7.3f} s  {1e6 * plain / n:6.1f} us each  "
          f"{plain / scoring:5.2f}x the scoring time")
    print(f"  classify(with_fuzzy=True) (the CSV's columns)     {fuzzy:7.3f} s  {1e6 * fuzzy / n:6.1f} us each  "
          f"{fuzzy / scoring:5.2f}x")
    print(f"  dashboard frame (run_categories, with fuzzy)      {frame:7.3f} s  {1e6 * frame / n:6.1f} us each  "
          f"{frame / scoring:5.2f}x")
    if len(paths) > 1:
        runs = [evaluate(gold, load_predictions(p).items, workers=1) for p in paths]
        t = time.perf_counter()
        total = sum(len(run_categories(r)) for r in runs)
        dt = time.perf_counter() - t
        print(f"  {len(runs)} runs in a row: {total:,} answers in {dt:.2f} s -> 50 x 20,000 extrapolated: "
              f"{dt / total * 1_000_000:.0f} s (the page builds only the chosen runs, each once, cached)")


def page(repeat: int) -> None:
    from streamlit.testing.v1 import AppTest

    os.environ["LENS_BENCHMARK"] = str(ROOT / "sample_runs")
    for k in ("LENS_RUNS", "LENS_SCORES"):
        os.environ.pop(k, None)
    first, rerun, opened, why = [], [], [], []
    for _ in range(repeat):
        at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=120)
        at.run()  # the overview: loading and scoring, not the page's cost
        t = time.perf_counter()
        at.switch_page("views/disagreement.py").run()
        first.append(time.perf_counter() - t)
        assert not at.exception, [e.value for e in at.exception]
        t = time.perf_counter()
        at.run()
        rerun.append(time.perf_counter() - t)
        at.session_state["dis_counts"] = {"selection": {"rows": [], "columns": [], "cells": [[1, "small-9b"]]}}
        t = time.perf_counter()
        at.run()
        opened.append(time.perf_counter() - t)
        n_listed = next(len(d.value) for d in at.dataframe if list(d.value.columns[:2]) == ["run", "question_id"])
        # the answers table's key, as the page makes it (what is listed, and how many)
        key = "dis_list_" + hashlib.sha256(f"category false_refusal · run small-9b|{n_listed}".encode()).hexdigest()[:12]
        at.session_state[key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
        t = time.perf_counter()
        at.run()
        why.append(time.perf_counter() - t)
        assert not at.exception, [e.value for e in at.exception]
        assert any(m.value.startswith("**Category: `false_refusal`**") for m in at.markdown)
        import streamlit as st
        st.cache_resource.clear()
        st.cache_data.clear()

    def line(name, xs):
        print(f"  {name:52} median {1000 * statistics.median(xs):6.0f} ms   (max {1000 * max(xs):.0f} ms)")

    print(f"disagreement page on sample_runs/ (4 runs x 76 questions), AppTest server time, {repeat} sessions:")
    line("first run of the page (frames built, charts drawn)", first)
    line("rerun (frames cached)", rerun)
    line("open a category from the counts table", opened)
    line("select an answer: its why panel", why)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="campaign runs categorised in a row (extrapolation)")
    ap.add_argument("--skip-page", action="store_true")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    categorise(args.repeat, args.runs)
    if not args.skip_page:
        page(args.repeat)


if __name__ == "__main__":
    main()

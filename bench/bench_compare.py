"""Run-comparison speed: the bootstrap, the per-slice comparison and the report CLI.

    .venv/bin/python bench/bench_compare.py [--questions 1519] [--resamples 10000] [--repeat 5]

(a) `scoring.stats.paired_bootstrap` on N paired questions x R resamples (scipy.stats.bootstrap,
    vectorised, in batches of 1,000) against a plain per-resample numpy loop drawing the same
    number of resamples -- best of --repeat each, and the ratio;
(b) `dashboard.compare.deltas` (3 metrics x every slice of 7 breakdowns, McNemar, Holm) and
    `dashboard.compare.weakest` on a synthetic pair of runs over N questions;
(c) `python -m dashboard.report` on sample_runs/ (two runs; four runs), wall time of the whole
    process, as a user runs it;
(d) the same on a synthetic benchmark of the real size (1,519 questions, bench/make_synthetic_benchmark.py,
    two runs), wall and CPU time (CPU time says what the work costs when the machine is shared).
Prints figures only; no assertion on time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashboard import compare as C  # noqa: E402
from scoring.stats import paired_bootstrap  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def naive_bootstrap(a: np.ndarray, b: np.ndarray, resamples: int, seed: int = 0) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    d = a - b
    means = np.empty(resamples)
    for k in range(resamples):
        means[k] = d[rng.integers(0, len(d), len(d))].mean()
    return float(d.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def synthetic(n: int, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:05d}" for i in range(n)]
    pick = lambda labels: rng.choice(labels, n)  # noqa: E731
    questions = pd.DataFrame({
        "question_id": ids,
        "reasoning_type": pick([f"r{k}" for k in range(12)]), "domain": pick([f"d{k}" for k in range(8)]),
        "difficulty": pick(["easy", "medium", "hard", "very_hard"]), "answer_format": pick(["Str", "Int", "Float", "List", "None"]),
        "doc_type": pick([f"t{k}" for k in range(10)]), "split": pick(["single_doc", "cross_doc"]),
        "evidence_source": [tuple(rng.choice(["Text", "Table", "Chart", "Figure", "Layout"], rng.integers(1, 3), replace=False))
                            for _ in range(n)],
    }, index=ids)
    u = rng.random(n)
    rows = []
    for run, p in (("A", 0.8), ("B", 0.65)):
        acc = (rng.random(n) < p * (0.5 + u)).astype(float)
        f1 = np.clip(acc * rng.uniform(0.5, 1, n) + rng.uniform(0, 0.2, n), 0, 1)
        rows.append(pd.DataFrame({"run": run, "question_id": ids, "accuracy": acc, "token_f1": f1, "anls": f1 * 0.9,
                                  "status": "success", "prediction": "x"}))
    return questions, pd.concat(rows, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=1519)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n, r = args.questions, args.resamples
    print(f"load average before: {os.getloadavg()[0]:.2f}")

    rng = np.random.default_rng(0)
    a, b = (rng.random(n) < 0.7).astype(float), (rng.random(n) < 0.6).astype(float)
    fast = best(lambda: paired_bootstrap(a, b, resamples=r), args.repeat)
    slow = best(lambda: naive_bootstrap(a, b, r), max(1, args.repeat // 2))
    print(f"(a) paired_bootstrap, {n:,} questions x {r:,} resamples: {1000 * fast:.0f} ms "
          f"(per-resample numpy loop: {1000 * slow:.0f} ms; ratio {slow / fast:.1f}x)")
    print(f"    interval {paired_bootstrap(a, b, resamples=r)} vs loop {naive_bootstrap(a, b, r)}")

    questions, scores = synthetic(n)
    pairs = C.paired(scores, "A", "B")
    t_deltas = best(lambda: C.deltas(pairs, questions), max(1, args.repeat // 2))
    table = C.deltas(pairs, questions)
    t_weak = best(lambda: C.weakest(scores, questions, "B", runs=["A", "B"]), max(1, args.repeat // 2))
    t_flips = best(lambda: C.flip_table(pairs, questions), args.repeat)
    print(f"(b) deltas: {len(table)} rows (slices + overall) x 3 metrics, {r:,} resamples each: {t_deltas:.2f} s; "
          f"weakest slices: {t_weak:.2f} s; flip table: {1000 * t_flips:.0f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        for runs in (["longctx-ocr", "small-9b"], ["longctx-ocr", "small-9b", "agent-pipeline", "longctx-img"]):
            cmd = [sys.executable, "-m", "dashboard.report", "--benchmark", "sample_runs", "--runs", *runs,
                   "--baseline", "small-9b", "--output", str(Path(tmp) / "r.html")]
            walls = []
            for _ in range(3):
                t = time.perf_counter()
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
                walls.append(time.perf_counter() - t)
            size = (Path(tmp) / "r.html").stat().st_size / 1e6
            print(f"(c) report CLI, sample_runs, {len(runs)} runs: {min(walls):.2f} s best of 3 "
                  f"(median {sorted(walls)[1]:.2f} s), {size:.1f} MB")
        syn = Path(tmp) / "synthetic"
        subprocess.run([sys.executable, "bench/make_synthetic_benchmark.py", "--out", str(syn)], cwd=ROOT, check=True,
                       capture_output=True)
        runs = sorted(p.name.rsplit(".", 1)[0] for p in (syn / "runs").iterdir())[:2]
        cmd = [sys.executable, "-m", "dashboard.report", "--benchmark", str(syn), "--runs", *runs, "--output", str(Path(tmp) / "s.html")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"(d) report CLI, synthetic 1,519 questions, 2 runs: {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

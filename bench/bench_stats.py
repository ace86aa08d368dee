"""Time the document-level bootstrap of one comparison (scoring.stats.paired_by_document) at the
issue's size: 20,000 paired questions in 1,000 documents, 10,000 resamples -- the interval (documents
drawn with replacement, both runs' answers of a drawn document together), the sign-flip p by
document, and the secondary question-level numbers, as Compare runs computes them per metric.

    .venv/bin/python bench/bench_stats.py [--questions 20000] [--documents 1000] [--resamples 10000] [--repeat 7]

Cases: Accuracy (0/1 scores) and token F1 (scores in 0..1), each exact (every resample drawn:
`approximate=False`) and as the dashboard's tables call it (`approximate=True`); the three metrics of
one comparison in one call (`paired_by_document_rows`). The cases are interleaved (one run of each
per repetition, so a change of machine load touches them alike); printed: CPU seconds of this
process (numpy here is single-threaded) and wall seconds, median and range over --repeat, with the
load average before and after. Target (issue 25): under 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats import paired_by_document, paired_by_document_rows  # noqa: E402


def comparison(seed: int, n: int, documents: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(accuracy A, accuracy B, token F1 A, token F1 B, document of each question): documents of
    uneven size, a per-document difficulty both runs share, run A 2 points better."""
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, size=n))
    ease = rng.normal(0, 0.2, documents)[doc]
    pa, pb = np.clip(0.62 + ease, 0.02, 0.98), np.clip(0.60 + ease, 0.02, 0.98)
    acc_a, acc_b = (rng.random(n) < pa).astype(float), (rng.random(n) < pb).astype(float)
    f1_a = np.where(acc_a == 1, 1.0, rng.random(n) * 0.6)
    f1_b = np.where(acc_b == 1, 1.0, rng.random(n) * 0.6)
    return acc_a, acc_b, f1_a, f1_b, doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--documents", type=int, default=1_000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    acc_a, acc_b, f1_a, f1_b, doc = comparison(1, args.questions, args.documents)
    r = args.resamples
    cases: dict[str, Callable[[], object]] = {
        "Accuracy, exact": lambda: paired_by_document(acc_a, acc_b, doc, resamples=r),
        "Accuracy, as the dashboard (approximate=True)": lambda: paired_by_document(acc_a, acc_b, doc, resamples=r,
                                                                                   approximate=True),
        "token F1, exact": lambda: paired_by_document(f1_a, f1_b, doc, resamples=r),
        "token F1, as the dashboard (approximate=True)": lambda: paired_by_document(f1_a, f1_b, doc, resamples=r,
                                                                                  approximate=True),
        "three metrics of one comparison, as the dashboard": lambda: paired_by_document_rows(
            np.vstack([acc_a, f1_a, f1_a]), np.vstack([acc_b, f1_b, f1_b]), doc, resamples=r, approximate=True),
    }
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    wall: dict[str, list[float]] = {k: [] for k in cases}
    last: dict[str, object] = {}
    for _ in range(args.repeat):  # interleaved: one of each per round
        for label, fn in cases.items():
            c0, w0 = time.process_time(), time.perf_counter()
            last[label] = fn()
            cpu[label].append(time.process_time() - c0)
            wall[label].append(time.perf_counter() - w0)
    print(f"{args.questions:,} paired questions in {args.documents:,} documents, {r:,} resamples, "
          f"median of {args.repeat} interleaved repetitions")
    for label in cases:
        res = last[label]
        first = res[0] if isinstance(res, list) else res
        print(f"{label}: delta {100 * first.delta:+.2f} pp, 95 % interval {100 * first.low:+.2f} to {100 * first.high:+.2f} "
              f"over {first.units:,} {first.unit}s, p {first.p:.3g}")
        c, w = cpu[label], wall[label]
        print(f"    CPU {statistics.median(c):.3f} s (min {min(c):.3f}, max {max(c):.3f}); "
              f"wall {statistics.median(w):.3f} s (min {min(w):.3f}, max {max(w):.3f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

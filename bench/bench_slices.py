"""Time the weak-slice finder (scoring/slices.py) at the issue's size: 20,000 questions in 1,000
documents, 8 metadata fields, conjunctions of up to 3 conditions (several thousand candidate slices),
one run and one pair, with one planted weakness (so the folding has work to do) and without, and the
run again with more values per field (about 9,000 candidate conjunctions) and the size threshold at its floor,
and a run with two broad weaknesses (hundreds of significant slices: the folding's worst case here).

    .venv/bin/python bench/bench_slices.py [--questions 20000] [--documents 1000] [--repeat 5]

Prints, per case, the slices tested, what was found, and the CPU seconds (this process, one core:
the finder is single-threaded numpy) and wall seconds (median and range of --repeat runs), with the
load average before and after. Target: under 3 s on one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.slices import find_weak_pair_slices, find_weak_slices  # noqa: E402

DOC_FIELDS = {"domain": 6, "doc_type": 5, "length": 5}
QUESTION_FIELDS = {"reasoning_type": 7, "answer_format": 5, "difficulty": 3, "position": 3}
SOURCES = ["Text", "Table", "Chart", "Image", "Layout"]


WIDER = {"domain": 8, "doc_type": 6, "reasoning_type": 8}  # more values: about 9,000 candidate conjunctions


def candidates(fields: dict[str, list]) -> int:
    """Conjunctions of 1-3 conditions on different fields, before any threshold."""
    sizes = []
    for column in fields.values():
        values = {x for v in column for x in (v if isinstance(v, tuple) else (v,))}
        sizes.append(len(values))
    e = [1, 0, 0, 0]  # elementary symmetric sums of the value counts
    for a in sizes:
        for k in (3, 2, 1):
            e[k] += e[k - 1] * a
    return e[1] + e[2] + e[3]


def benchmark(seed: int, n: int, documents: int, planted: float, wider: bool = False
              ) -> tuple[np.ndarray, dict[str, list], np.ndarray]:
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, size=n))
    fields: dict[str, list] = {}
    sizes = {**DOC_FIELDS, **QUESTION_FIELDS, **(WIDER if wider else {})}
    for name in DOC_FIELDS:
        k = sizes[name]
        fields[name] = [f"{name}{v}" for v in rng.integers(0, k, size=documents)[doc]]
    for name in QUESTION_FIELDS:
        k = sizes[name]
        fields[name] = [f"{name}{v}" for v in rng.integers(0, k, size=n)]
    a, b = rng.integers(0, 5, size=n), rng.integers(0, 5, size=n)
    two = rng.random(n) < 0.3
    fields["evidence_source"] = [(SOURCES[x], SOURCES[y]) if t and x != y else (SOURCES[x],) for x, y, t in zip(a, b, two)]
    weak = np.array([r == "reasoning_type1" and "Chart" in s for r, s in zip(fields["reasoning_type"], fields["evidence_source"])])
    p = np.clip(0.6 + rng.normal(0, 0.15, documents)[doc] - planted * weak, 0.02, 0.98)
    return (rng.random(n) < p).astype(float), fields, doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--documents", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    y, fields, doc = benchmark(1, args.questions, args.documents, 0.3)
    y0, _, _ = benchmark(1, args.questions, args.documents, 0.0)
    yw, wide, docw = benchmark(1, args.questions, args.documents, 0.3, wider=True)
    # two broad weaknesses (a document type, a difficulty): hundreds of significant slices to fold
    broad = np.array([t == "doc_type0" or h == "difficulty2" for t, h in zip(fields["doc_type"], fields["difficulty"])])
    yb = np.where(broad & (y0 == 1) & (np.random.default_rng(2).random(y0.size) < 0.5), 0.0, y0)
    cases = {
        "run, one planted weakness": lambda: find_weak_slices(y, fields, doc),
        "run, no weakness": lambda: find_weak_slices(y0, fields, doc),
        "pair (new - old), one planted weakness": lambda: find_weak_pair_slices(y, y0, fields, doc),
        "run, one planted weakness, more values per field and --min-questions 30":
            lambda: find_weak_slices(yw, wide, docw, min_questions=30),
        "run, two broad weaknesses": lambda: find_weak_slices(yb, fields, doc),
    }
    print(f"{args.questions:,} questions, {args.documents:,} documents, {len(fields)} fields, up to 3 conditions")
    for label, fn in cases.items():
        cpu, wall = [], []
        res = None
        for _ in range(args.repeat):
            c0, w0 = time.process_time(), time.perf_counter()
            res = fn()
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        assert res is not None
        top = ", ".join(w.name for w in res.weak[:2]) if res.weak else "nothing"
        total = candidates(wide if "more values" in label else fields)
        print(f"{label}: {total:,} candidate conjunctions, {res.tested:,} tested (the rest under a threshold), "
              f"{len(res.weak)} kept ({len(res.folded)} folded), first: {top}")
        print(f"    CPU {statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f}); "
              f"wall {statistics.median(wall):.2f} s (min {min(wall):.2f}, max {max(wall):.2f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Time and measure the weak-slice finder (scoring/slices.py) at 20,000 questions in 1,000 documents:
the usual 8 fields (one run with a planted weakness, one without, pair mode, more values per field at
the size threshold's floor, two broad weaknesses: the folding's worst case), and many fields -- 60
fields of 5 values, 60 of 3, 60 of 20, 200 fields of 5 -- where the candidate space is capped
(conjunctions over the best-splitting fields, a cap on conjunctions: module docstring of
scoring/slices.py). Issue 35.3: peak memory <= 500 MB, <= 3 s at 20,000 questions.

    .venv/bin/python bench/bench_slices.py [--questions 20000] [--documents 1000] [--repeat 3] [--case NAME]

Each case runs in a process of its own (so its peak RSS is its own: `ru_maxrss` of the child, which
includes the interpreter, numpy and scipy -- the baseline of a process that only imports them is
printed too), the cases interleaved, --repeat rounds; printed per case: the slices tested, what was
found, the CPU seconds of the search (one core: the finder is single-threaded numpy) and its wall
seconds (medians and ranges), the process's peak RSS and what it held before the search (the
inputs), the search's own peak allocation (a second, traced run: tracemalloc sees numpy's arrays),
and the load average before and after.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOC_FIELDS = {"domain": 6, "doc_type": 5, "length": 5}
QUESTION_FIELDS = {"reasoning_type": 7, "answer_format": 5, "difficulty": 3, "position": 3}
SOURCES = ["Text", "Table", "Chart", "Image", "Layout"]
WIDER = {"domain": 8, "doc_type": 6, "reasoning_type": 8}  # more values: about 9,000 candidate conjunctions
MANY = {"60 fields x 5 values": (60, 5), "60 fields x 3 values": (60, 3), "60 fields x 20 values": (60, 20),
        "200 fields x 5 values": (200, 5)}
CASES = ["run, one planted weakness", "run, no weakness", "pair (new - old), one planted weakness",
         "run, more values per field, --min-questions 30", "run, two broad weaknesses", *MANY, "baseline: imports only"]


def benchmark(seed: int, n: int, documents: int, planted: float, wider: bool = False
              ) -> tuple[np.ndarray, dict[str, list], np.ndarray]:
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, size=n))
    fields: dict[str, list] = {}
    sizes = {**DOC_FIELDS, **QUESTION_FIELDS, **(WIDER if wider else {})}
    for name in DOC_FIELDS:
        fields[name] = [f"{name}{v}" for v in rng.integers(0, sizes[name], size=documents)[doc]]
    for name in QUESTION_FIELDS:
        fields[name] = [f"{name}{v}" for v in rng.integers(0, sizes[name], size=n)]
    a, b = rng.integers(0, 5, size=n), rng.integers(0, 5, size=n)
    two = rng.random(n) < 0.3
    fields["evidence_source"] = [(SOURCES[x], SOURCES[y]) if t and x != y else (SOURCES[x],) for x, y, t in zip(a, b, two)]
    weak = np.array([r == "reasoning_type1" and "Chart" in s for r, s in zip(fields["reasoning_type"], fields["evidence_source"])])
    p = np.clip(0.6 + rng.normal(0, 0.15, documents)[doc] - planted * weak, 0.02, 0.98)
    return (rng.random(n) < p).astype(float), fields, doc


def many_fields(seed: int, n: int, documents: int, count: int, values: int) -> tuple[np.ndarray, dict[str, list], np.ndarray]:
    """`count` metadata fields of `values` values each (a third set per document, the rest per
    question, some skewed), as the dashboard makes every gold key with 2-20 values a field; one
    planted weakness on two of them."""
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, size=n))
    fields: dict[str, list] = {}
    for j in range(count):
        weights = rng.dirichlet(np.full(values, 0.5 if j % 4 == 3 else 5.0))
        per = rng.choice(values, size=documents if j % 3 == 0 else n, p=weights)
        codes = per[doc] if j % 3 == 0 else per
        labels = [f"v{v}" for v in range(values)]  # shared label objects, as a loader's interned values
        fields[f"meta.key_{j:03d}"] = [labels[v] for v in codes]
    weak = (np.array(fields["meta.key_001"]) == "v0") & (np.array(fields["meta.key_002"]) == "v1")
    p = np.clip(0.6 + rng.normal(0, 0.15, documents)[doc] - 0.3 * weak, 0.02, 0.98)
    return (rng.random(n) < p).astype(float), fields, doc


def one_case(name: str, n: int, documents: int) -> dict:
    """Run one case in this process: the search's CPU and wall seconds, what it found, the peak RSS."""
    from scoring.slices import find_weak_pair_slices, find_weak_slices

    if name == "baseline: imports only":
        return {"tested": 0, "found": "", "cpu": 0.0, "wall": 0.0, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if name in MANY:
        count, values = MANY[name]
        y, fields, doc = many_fields(1, n, documents, count, values)
        run = lambda: find_weak_slices(y, fields, doc)  # noqa: E731
    else:
        y, fields, doc = benchmark(1, n, documents, 0.3)
        y0, _, _ = benchmark(1, n, documents, 0.0)
        if name == "run, one planted weakness":
            run = lambda: find_weak_slices(y, fields, doc)  # noqa: E731
        elif name == "run, no weakness":
            run = lambda: find_weak_slices(y0, fields, doc)  # noqa: E731
        elif name.startswith("pair"):
            run = lambda: find_weak_pair_slices(y, y0, fields, doc)  # noqa: E731
        elif name.startswith("run, more values"):
            yw, wide, docw = benchmark(1, n, documents, 0.3, wider=True)
            run = lambda: find_weak_slices(yw, wide, docw, min_questions=30)  # noqa: E731
        else:  # two broad weaknesses (a document type, a difficulty): hundreds of significant slices to fold
            broad = np.array([t == "doc_type0" or h == "difficulty2" for t, h in zip(fields["doc_type"], fields["difficulty"])])
            yb = np.where(broad & (y0 == 1) & (np.random.default_rng(2).random(y0.size) < 0.5), 0.0, y0)
            run = lambda: find_weak_slices(yb, fields, doc)  # noqa: E731
    gc.collect()
    held = _rss_mb()
    c0, w0 = time.process_time(), time.perf_counter()
    res = run()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del res
    gc.collect()
    tracemalloc.start()  # a second search, traced: the finder's own allocations (numpy's included)
    res = run()
    own = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {"tested": res.tested, "found": ", ".join(w.name for w in res.weak[:2]) or "nothing",
            "kept": len(res.weak), "folded": len(res.folded), "fields": len(res.fields),
            "conjunction_fields": len(res.conjunction_fields), "capped": res.capped, "cpu": cpu, "wall": wall,
            "rss_mb": peak, "held_mb": held, "own_mb": own}


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--documents", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--case", choices=CASES, help="run only this case")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one_case(args.child, args.questions, args.documents)))
        return
    cases = [args.case] if args.case else CASES
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{args.questions:,} questions, {args.documents:,} documents, up to 3 conditions")
    got: dict[str, list[dict]] = {c: [] for c in cases}
    for _ in range(args.repeat):  # interleaved: every case once per round
        for case in cases:
            out = subprocess.run([sys.executable, __file__, "--child", case, "--questions", str(args.questions),
                                  "--documents", str(args.documents)], capture_output=True, text=True, check=True)
            got[case].append(json.loads(out.stdout.strip().splitlines()[-1]))
    for case, runs in got.items():
        last = runs[-1]
        cpu = [r["cpu"] for r in runs]
        wall = [r["wall"] for r in runs]
        rss = [r["rss_mb"] for r in runs]
        own = [r.get("own_mb", 0.0) for r in runs]
        held = [r.get("held_mb", 0.0) for r in runs]
        if case == "baseline: imports only":
            print(f"{case}: peak RSS {statistics.median(rss):.0f} MB")
            continue
        print(f"{case}: {last['fields']} fields ({last['conjunction_fields']} in conjunctions), {last['tested']:,} slices "
              f"tested, {last['kept']} kept ({last['folded']} folded), first: {last['found']}"
              + (f"; {last['capped']}" if last["capped"] else ""))
        print(f"    CPU {statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f}); wall "
              f"{statistics.median(wall):.2f} s (min {min(wall):.2f}, max {max(wall):.2f}); process peak RSS "
              f"{statistics.median(rss):.0f} MB (max {max(rss):.0f}; {statistics.median(held):.0f} MB held before the "
              f"search, inputs included); the search's own peak allocation {statistics.median(own):.0f} MB")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

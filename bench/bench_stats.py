"""Time the statistics of one comparison at the issue's size: 20,000 paired questions in 1,000
documents -- one comparison's document bootstrap (scoring.stats.paired_by_document: the interval with
documents drawn with replacement, the sign-flip p by document, 10,000 resamples), and its per-slice
paired table (scoring.paired_slices.paired_table: every slice of bench_slices.py's 8 fields, three
metrics, the gate's and the Compare page's table) -- with documents as the unit, and with questions
as the unit (a gold naming no document: every question its own unit), there once with token F1 as
the bench has always drawn it (every difference its own value: index draws, the worst case) and once
with token F1 on the lattice short answers give (2 x overlap / (gold + predicted tokens), up to 6
tokens each: a few hundred distinct differences, drawn as counts).

    .venv/bin/python bench/bench_stats.py [--questions 20000] [--documents 1000] [--resamples 10000]
                                          [--repeat 7] [--against REV]

`--against REV` times the same cases with scoring/stats.py as it was at git revision REV (read with
`git show`, imported beside today's), as that code's callers called it: `approximate=True` (its
moment-matched draws) for the overall rows and for a per-slice loop of `paired_by_document_rows`
at the page's 10,000 and the gate's 2,000 resamples -- side by side in one process, and prints the
ratios. The cases are interleaved (one run of each per repetition, so a change of machine load
touches them alike); printed: CPU seconds of this process (numpy here is single-threaded) and wall
seconds, median and range over --repeat, the load average before and after. Targets (issue 36.4):
one comparison's bootstrap under 1 s; the table, like the finder, under 3 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_slices import benchmark  # noqa: E402

from scoring.paired_slices import SLICE_RESAMPLES, paired_table  # noqa: E402
from scoring.slices import conditions  # noqa: E402
from scoring.stats import Clusters, paired_by_document_rows  # noqa: E402

METRICS = ("accuracy", "token_f1", "anls")


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


def lattice_f1(accuracy: np.ndarray, seed: int) -> np.ndarray:
    """Token F1 as short answers give it: 1 when right, else 2 x overlap / (gold + predicted tokens)."""
    rng = np.random.default_rng(seed)
    n = accuracy.size
    gold, predicted = rng.integers(1, 7, n), rng.integers(1, 7, n)
    overlap = np.floor(rng.random(n) * (np.minimum(gold, predicted) + 1))
    return np.where(accuracy == 1, 1.0, 2 * overlap / (gold + predicted))


def stats_at(rev: str) -> ModuleType:
    """scoring/stats.py as it was at git revision `rev`, imported as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:scoring/stats.py"], check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(f"stats_at_{rev}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    exec(compile(source, f"{rev}:scoring/stats.py", "exec"), module.__dict__)  # noqa: S102  (our own file at REV)
    return module


def cases(args: argparse.Namespace, before: ModuleType | None) -> dict[str, Callable[[], object]]:
    acc_a, acc_b, f1_a, f1_b, doc = comparison(1, args.questions, args.documents)
    _, fields, _ = benchmark(1, args.questions, args.documents, 0.3)  # the finder bench's 8 fields
    continuous = np.vstack([acc_a, f1_a, 0.9 * f1_a]), np.vstack([acc_b, f1_b, 0.9 * f1_b])
    la, lb = lattice_f1(acc_a, 2), lattice_f1(acc_b, 3)
    on_lattice = np.vstack([acc_a, la, la]), np.vstack([acc_b, lb, lb])
    by_doc = Clusters(np.unique(doc, return_inverse=True)[1], "document", int(np.unique(doc).size))
    by_question = Clusters(np.arange(args.questions), "question", args.questions)
    r = args.resamples
    out: dict[str, Callable[[], object]] = {}
    for unit, clusters, (a, b) in (("documents as the unit", by_doc, continuous),
                                   ("questions as the unit", by_question, continuous),
                                   ("questions as the unit, lattice F1", by_question, on_lattice)):
        out[f"one comparison, 3 metrics, {unit}"] = (
            lambda c=clusters, a=a, b=b: paired_by_document_rows(a, b, c, resamples=r))
        out[f"per-slice table, 3 metrics, {unit}"] = (
            lambda c=clusters, a=a, b=b: paired_table(a, b, c, fields, metrics=METRICS, resamples=r))
        if before is None:
            continue
        conds = conditions(fields, args.questions)
        out[f"  before: one comparison, {unit}"] = (
            lambda c=clusters, a=a, b=b: before.paired_by_document_rows(a, b, c.codes, resamples=r, approximate=True))
        for label, reps in (("page", 10_000), ("gate", SLICE_RESAMPLES)):
            def old_table(c: Clusters = clusters, reps: int = reps, a: np.ndarray = a, b: np.ndarray = b) -> object:
                before.paired_by_document_rows(a, b, c.codes, resamples=r, approximate=True)
                return [before.paired_by_document_rows(a[:, pos], b[:, pos], c.codes[pos], resamples=reps, approximate=True)
                        for _, _, pos in conds]
            out[f"  before: per-slice table, {unit}, {label}'s {reps:,} resamples"] = old_table
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--documents", type=int, default=1_000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--against", metavar="REV", help="also time scoring/stats.py as it was at this git revision")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    before = stats_at(args.against) if args.against else None
    timed = cases(args, before)
    cpu: dict[str, list[float]] = {k: [] for k in timed}
    wall: dict[str, list[float]] = {k: [] for k in timed}
    last: dict[str, object] = {}
    for _ in range(args.repeat):  # interleaved: one of each per round
        for label, fn in timed.items():
            c0, w0 = time.process_time(), time.perf_counter()
            last[label] = fn()
            cpu[label].append(time.process_time() - c0)
            wall[label].append(time.perf_counter() - w0)
    print(f"{args.questions:,} paired questions in {args.documents:,} documents, {args.resamples:,} resamples "
          f"(each slice: {SLICE_RESAMPLES:,}), median of {args.repeat} interleaved repetitions")
    for label in timed:
        res = last[label]
        if hasattr(res, "slices"):
            what = f"{len(res.slices)} slices, {res.tested['accuracy']} tested"  # type: ignore[attr-defined]
        else:
            first = res[0] if isinstance(res, list) and not isinstance(res[0], list) else None
            what = "" if first is None else (f"Accuracy delta {100 * first.delta:+.2f} pp, 95 % interval "
                                             f"{100 * first.boot_low:+.2f} to {100 * first.boot_high:+.2f}, p {first.p:.3g}")
        c, w = cpu[label], wall[label]
        print(f"{label}: CPU {statistics.median(c):.3f} s (min {min(c):.3f}, max {max(c):.3f}); "
              f"wall {statistics.median(w):.3f} s   {what}")
    if before is not None:
        print("ratios, before / now (CPU medians):")
        for label in timed:
            if label.startswith("  before"):
                continue
            unit = label.split("3 metrics, ", 1)[1]
            for old in (k for k in timed if k.startswith("  before") and f"{unit}," in k + "," and
                        ("lattice" in k) == ("lattice" in unit) and ("table" in k) == ("table" in label)):
                print(f"  {old.strip()} / {label}: {statistics.median(cpu[old]) / statistics.median(cpu[label]):.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""The app's first scoring of a campaign: each question decided one by one (records' decisions sent back from
the pool, as before) against the runs scored in columns (the command line's `metrics.column_scores`, three
score columns sent back), side by side in one process.

    .venv/bin/python bench/bench_app_scoring.py [--campaign bench/out/campaign_20000x20] [--runs 10] [--repeat 3]

The campaign (bench/make_campaign.py) is read once, its runs as the app holds them (PredictionTable). Each
repetition scores the runs both ways on the shared pool (`scoring.evaluate.score_runs`, two cores), in turns
(decisions first on even repetitions, columns first on odd ones). Printed per repetition and as medians:
wall seconds, and CPU seconds of this process and every process under it (the pool's workers, read from
/proc), then the ratio columns / decisions and the load average before and after. The two ways' scores are
compared value for value (they must be equal). No assertion on time.
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

from dashboard.core.predictions import as_table  # noqa: E402
from scoring.evaluate import score_runs  # noqa: E402
from scoring.loaders import load_gold, load_predictions  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its live descendants (utime + stime, from /proc)."""
    kids: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(entry.name))
        stats[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICK
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += stats.get(p, 0.0)
        todo.extend(kids.get(p, []))
    return total


def _cpu() -> float:
    """CPU seconds of this process and its live descendants (/proc), plus its reaped children's."""
    t = os.times()
    return t.children_user + t.children_system + _tree_cpu(os.getpid())


def score(gold, runs, columns: bool) -> tuple[float, float, list]:
    def make(_: int, _plan, scored):
        if columns:
            return scored
        return tuple([d[k] for d in scored] for k in range(3))

    t0, c0 = time.perf_counter(), _cpu()
    out = [r for _, r in score_runs(gold, runs, profile="xldocbench", make=make, columns=columns)]
    return time.perf_counter() - t0, _cpu() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--campaign", type=Path, default=ROOT / "bench" / "out" / "campaign_20000x20")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gold = load_gold(sorted(str(p) for p in args.campaign.glob("qa_*.jsonl"))).items
    files = sorted((args.campaign / "runs").iterdir())[: args.runs]
    runs = [(f.stem, as_table(load_predictions(f).items)) for f in files]
    print(f"{len(runs)} runs x {len(gold):,} questions ({args.campaign}); load before {os.getloadavg()[0]:.2f}", flush=True)
    score(gold, runs[:1], True)  # the pool started and warm
    times: dict[str, list[tuple[float, float]]] = {"decisions": [], "columns": []}
    outs: dict[str, list] = {}
    for rep in range(args.repeat):
        order = ("decisions", "columns") if rep % 2 == 0 else ("columns", "decisions")
        for way in order:
            wall, cpu, out = score(gold, runs, way == "columns")
            times[way].append((wall, cpu))
            outs[way] = out
            print(f"  rep {rep + 1} {way:9s}: {wall:6.2f} s wall, {cpu:6.2f} CPU-s (load {os.getloadavg()[0]:.2f})", flush=True)
    med = {w: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for w, v in times.items()}
    for w, (wall, cpu) in med.items():
        print(f"median {w:9s}: {wall:6.2f} s wall, {cpu:6.2f} CPU-s")
    print(f"ratio columns / decisions: {med['columns'][0] / med['decisions'][0]:.2f}x wall, "
          f"{med['columns'][1] / med['decisions'][1]:.2f}x CPU; load after {os.getloadavg()[0]:.2f}")
    same = all(list(a[k]) == list(b[k]) for a, b in zip(outs["columns"], outs["decisions"]) for k in range(3))
    print(f"scores equal value for value: {same}")


if __name__ == "__main__":
    main()

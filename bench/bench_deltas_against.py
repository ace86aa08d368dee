"""Compare's per-slice deltas, this code against another checkout, side by side in one run.

    .venv/bin/python bench/bench_deltas_against.py --against CHECKOUT [--campaign bench/out/campaign_20000x2]
                                                   [--repeat 3]

CHECKOUT: a checkout of the code to compare with (e.g. `git worktree add /tmp/base <commit>`); it runs
on this checkout's virtual environment. Each repetition starts one fresh process per side, in turns
(ours, then theirs, then ours ...), as a new Compare in a new server would: the process reads the
campaign's first two runs (bench/make_campaign.py), then times `dashboard.compare.frames.deltas` with
the pair's slice fields (`pair_fields`, as the page asks, from the gold's field values the workspace reads
once -- timed apart, where the checkout has them) once -- wall and CPU seconds (two threads
share the rows, so CPU seconds say what the work costs a shared machine). Printed: every repetition,
the medians, the ratio ours / theirs, the load average before and after, and whether the two tables
are equal value for value (they must be: the numbers are the gate's). No assertion on time.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(code: Path, campaign: Path, out: Path) -> None:
    """One timed deltas in this process, with `code`'s packages first on the path."""
    sys.path.insert(0, str(code))
    import dashboard.compare.frames as C  # noqa: PLC0415  (the checkout chosen above)
    from dashboard.report.build import load  # noqa: PLC0415

    names = sorted(p.name.rsplit(".", 1)[0] for p in (campaign / "runs").iterdir())[:2]
    _, an, names = load(campaign, names)
    pairs = C.paired(an.attempted_scores(names[:2])[0], names[0], names[1])
    an.questions  # noqa: B018  (made before the clock starts, as on the page)
    once = {}
    if hasattr(an, "question_values"):  # the page's field values, read from the gold once per workspace
        times = os.times()
        t, c = time.perf_counter(), times.user + times.system
        once = {"values": an.question_values()}
        times = os.times()
        once_wall, once_cpu = time.perf_counter() - t, times.user + times.system - c
    times = os.times()
    t, c = time.perf_counter(), times.user + times.system
    table = C.deltas(pairs, an.questions, C.pair_fields(pairs, an.questions, an.gold, an.declared_pages, **once))
    times = os.times()
    wall, cpu = time.perf_counter() - t, times.user + times.system - c
    assert Path(C.__file__).resolve().is_relative_to(code.resolve()), C.__file__
    out.write_bytes(pickle.dumps({"wall": wall, "cpu": cpu, "table": table, "pairs": len(pairs),
                                  "once": (once_wall, once_cpu) if once else None}))


def in_turns(script: str, child: Callable[[Path, Path, Path], None], describe: Callable[[dict], str],
             doc: str, repeat: int = 3) -> tuple[argparse.Namespace, dict[str, list[dict]]] | None:
    """The command line of the side-by-side scripts (this one, bench/bench_compare_against.py): --against
    CHECKOUT, --campaign DIR, --repeat N. In a child (--child, started here): `child(code, campaign, out)`,
    which pickles its result to `out`; returns None. Else one fresh process of `script` per side and
    repetition, in turns (ours, then theirs, ...), each result printed with `describe`; returns the parsed
    arguments and the results per side ("ours", "theirs")."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--against", type=Path, help="a checkout of the code to compare with (required)")
    ap.add_argument("--campaign", type=Path, default=ROOT / "bench" / "out" / "campaign_20000x2")
    ap.add_argument("--repeat", type=int, default=repeat)
    ap.add_argument("--child", nargs=3, metavar=("CODE", "CAMPAIGN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]))
        return None
    if args.against is None:
        ap.error("--against CHECKOUT is required")
    if not (args.campaign / "runs").is_dir():
        sys.exit(f"no campaign at {args.campaign}: make one with "
                 "`.venv/bin/python bench/make_campaign.py --questions 20000 --runs 2`")
    args.campaign = args.campaign.resolve()  # each child runs in its checkout's folder
    sides = {"ours": ROOT, "theirs": args.against}
    got: dict[str, list[dict]] = {k: [] for k in sides}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            for name, code in sides.items():
                out = Path(tmp) / f"{name}{rep}.pkl"
                subprocess.run([sys.executable, script, "--child", str(code), str(args.campaign), str(out)],
                               cwd=code, check=True)
                got[name].append(pickle.loads(out.read_bytes()))
                print(f"  {name:6} rep {rep + 1}: {describe(got[name][-1])} (load {os.getloadavg()[0]:.2f})", flush=True)
    return args, got


def say_equal(got: dict[str, list[dict]], what: str) -> None:
    """Whether every result's "table" equals theirs value for value (they must: the numbers are the gate's), and
    the load average now."""
    same = all(r["table"].equals(got["theirs"][0]["table"]) for r in got["ours"] + got["theirs"])
    print(f"{what} are {'equal value for value' if same else 'DIFFERENT'}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _describe(r: dict) -> str:
    first = (f"; once per workspace before it, the gold's field values: {r['once'][0]:.2f} s wall, "
             f"{r['once'][1]:.2f} CPU-s" if r["once"] else "")
    return f"{r['wall']:.2f} s wall, {r['cpu']:.2f} CPU-s{first}"


def main() -> None:
    done = in_turns(__file__, child, _describe, __doc__)
    if done is None:
        return
    args, got = done
    med = {k: (statistics.median(r["wall"] for r in v), statistics.median(r["cpu"] for r in v)) for k, v in got.items()}
    first = got["ours"][0]
    print(f"per-slice deltas, {args.campaign.name}: {first['pairs']:,} paired questions, {len(first['table'])} rows "
          f"x 3 metrics; medians of {args.repeat}")
    for k, (w, c) in med.items():
        print(f"  {k:6}: {w:.2f} s wall, {c:.2f} CPU-s")
    print(f"  ratio ours / theirs: {med['ours'][0] / med['theirs'][0]:.2f}x wall, "
          f"{med['ours'][1] / med['theirs'][1]:.2f}x CPU")
    say_equal(got, "  the tables")


if __name__ == "__main__":
    main()

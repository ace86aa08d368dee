"""A restart of the app on a kept store, this code against another checkout, side by side in one run.

    .venv/bin/python bench/bench_restart_against.py --against CHECKOUT --campaign bench/out/campaign_20000x1000
                                                    [--repeat 5]

CHECKOUT: a checkout of the code to compare with (e.g. `git worktree add /tmp/base <commit>`); it runs on this
checkout's virtual environment. The campaign (bench/make_campaign.py) must have been opened once by
`bench/bench_scale.py --grid <questions>x<runs> --browser`, whose cache folder (bench/out/scale_cache/<questions>x<runs>:
the engine's store, the parsed files) both sides read; a side whose code keys the parsed gold otherwise (another
scoring package) reads it once more on its first restart, so the first repetition is printed and left out of the
medians. Each repetition starts, in turns (ours, then theirs), one process that starts the app's server
(`bench_scale.browser_restart` of that checkout: `docbench-lens serve`'s read-ahead included) and opens the
overview in headless Chromium: the seconds from the server's start until it answers, until the leaderboard is
drawn (issue 37's target at 1,000 runs: 5 s), and until the overview is complete. Printed: every repetition, the
medians, the ratios ours / theirs, and the load average before and after. No assertion on time.
"""

from __future__ import annotations

import os
import pickle
import statistics
import sys
from pathlib import Path

from bench_deltas_against import in_turns

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("server answers", "leaderboard drawn", "overview complete")


def child(code: Path, campaign: Path, out: Path) -> None:
    """One restart with `code`'s app (its bench_scale starts the server from its own checkout)."""
    sys.path[:0] = [str(code / "bench"), str(code)]
    import bench_scale  # noqa: PLC0415  (the checkout chosen above)

    cache = ROOT / "bench" / "out" / "scale_cache" / campaign.name.removeprefix("campaign_")
    up, board, _page, done = bench_scale.browser_restart(campaign, cache, 1)[0]
    out.write_bytes(pickle.dumps({"server answers": up, "leaderboard drawn": board, "overview complete": done}))


def _describe(r: dict) -> str:
    return ", ".join(f"{s} {r[s]:.2f} s" for s in STEPS)


def main() -> None:
    done = in_turns(__file__, child, _describe, __doc__, repeat=5)
    if done is None:
        return
    args, got = done
    kept = {k: v[1:] or v for k, v in got.items()}  # the first: a side may read its gold once
    med = {k: {s: statistics.median(r[s] for r in v) for s in STEPS} for k, v in kept.items()}
    print(f"restart on the kept store of {args.campaign.name}: medians of {len(kept['ours'])} (the first left out)")
    for k, m in med.items():
        over = sum(r["leaderboard drawn"] > 5.0 for r in kept[k])
        print(f"  {k:6}: {_describe(m)}; leaderboard over 5 s in {over} of {len(kept[k])}")
    print("  ratio ours / theirs: " + ", ".join(f"{s} {med['ours'][s] / med['theirs'][s]:.2f}x" for s in STEPS))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

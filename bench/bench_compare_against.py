"""A Compare of two runs as the page makes it, this code against another checkout, side by side in one run.

    .venv/bin/python bench/bench_compare_against.py --against CHECKOUT [--campaign bench/out/campaign_20000x2]
                                                    [--repeat 5]

CHECKOUT: a checkout of the code to compare with (e.g. `git worktree add /tmp/base <commit>`); it runs on
this checkout's virtual environment. Each repetition starts one fresh process per side, in turns (ours, then
theirs, ...). A process reads the campaign's first two runs (bench/make_campaign.py), imports scipy first (as
the app's warm-up does once a page is drawn: scoring/deferred.py), makes the question frame, then times the
Compare page's three steps, wall and CPU seconds (the per-slice table runs on threads, so CPU seconds say what
the work costs a shared machine -- this process's only: rows computed in the shared pool's worker processes, when it
runs idle, are not in them):
- pair + flips: `dashboard.compare.frames.paired` of the two runs' rows and the flip table over the page's fields;
- the all-questions row (the headline's intervals and tests): until `deltas(on_overall=)` hands it over (a
  checkout from before it: `frames.overall_row`, then given to `deltas`);
- the per-slice table: `frames.deltas` with the pair's slice fields, the rest of it.
Printed: every repetition, the medians, the ratios ours / theirs, the load average before and after, and whether
the two sides' per-slice tables are equal value for value. bench/bench_deltas_against.py times the per-slice
table alone. No assertion on time.
"""

from __future__ import annotations

import os
import pickle
import statistics
import sys
import time
from pathlib import Path

from bench_deltas_against import in_turns, say_equal

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("pair + flips", "all-questions row", "per-slice table", "all of it")


def _clock() -> tuple[float, float]:
    times = os.times()
    return time.perf_counter(), times.user + times.system


def child(code: Path, campaign: Path, out: Path) -> None:
    """One Compare timed in this process, with `code`'s packages first on the path."""
    sys.path.insert(0, str(code))
    import dashboard.compare.frames as C  # noqa: PLC0415  (the checkout chosen above)
    import dashboard.compare.panel as P  # noqa: PLC0415
    from dashboard.report.build import load  # noqa: PLC0415
    from scoring import deferred  # noqa: PLC0415

    assert Path(C.__file__).resolve().is_relative_to(code.resolve()), C.__file__
    deferred.stats()
    deferred.signal()
    names = sorted(p.name.rsplit(".", 1)[0] for p in (campaign / "runs").iterdir())[:2]
    _, an, names = load(campaign, names)
    a, b = names[:2]
    an.questions  # noqa: B018  (made before the clock starts, as on the page)
    values = an.question_values()
    marks = [_clock()]
    pairs = C.paired(an.rows_of([a, b]), a, b)
    C.flip_table(pairs, an.questions, P.fields_of(an.questions))
    marks.append(_clock())
    if hasattr(C, "overall_row"):  # a checkout from before `deltas(on_overall=)`
        head = C.overall_row(pairs, an.questions, P.SETTINGS)
        marks.append(_clock())
        fields = C.pair_fields(pairs, an.questions, an.gold, values=values)
        table = C.deltas(pairs, an.questions, fields, P.SETTINGS, overall=head)
    else:
        fields = C.pair_fields(pairs, an.questions, an.gold, values=values)
        table = C.deltas(pairs, an.questions, fields, P.SETTINGS, on_overall=lambda _: marks.append(_clock()))
    marks.append(_clock())
    took = {step: (marks[k + 1][0] - marks[k][0], marks[k + 1][1] - marks[k][1]) for k, step in enumerate(STEPS[:3])}
    took[STEPS[3]] = (marks[-1][0] - marks[0][0], marks[-1][1] - marks[0][1])
    out.write_bytes(pickle.dumps({"took": took, "table": table, "pairs": len(pairs)}))


def _describe(r: dict) -> str:
    return ", ".join(f"{step} {wall:.2f} s" for step, (wall, _) in r["took"].items())


def main() -> None:
    done = in_turns(__file__, child, _describe, __doc__, repeat=5)
    if done is None:
        return
    args, got = done
    print(f"Compare of two runs, {args.campaign.name}: {got['ours'][0]['pairs']:,} paired questions; medians of "
          f"{args.repeat} fresh processes a side")
    print("| step | ours | theirs | ratio (wall, CPU) |\n|---|---|---|---|")
    for step in STEPS:
        med = {k: tuple(statistics.median(r["took"][step][i] for r in v) for i in (0, 1)) for k, v in got.items()}
        print(f"| {step} | {med['ours'][0]:.2f} s ({med['ours'][1]:.2f} CPU-s) | {med['theirs'][0]:.2f} s "
              f"({med['theirs'][1]:.2f} CPU-s) | {med['ours'][0] / med['theirs'][0]:.2f}×, "
              f"{med['ours'][1] / med['theirs'][1]:.2f}× |")
    say_equal(got, "the per-slice tables")


if __name__ == "__main__":
    main()

"""`docbench-lens report` (alias `python -m dashboard.report`): the stakeholder report as one HTML file.

    docbench-lens report --benchmark DIR --runs A B [...] [--baseline NAME] [--profile NAME] --output report.html
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dashboard.compare import frames as C
from scoring.profiles import DEFAULT_PROFILE, MMLONGBENCH_PROFILE, PROFILES

EPILOG = """\
output: one self-contained HTML file (--output) that opens with no network: headline numbers with 95 %
intervals, where the chosen run is weakest and where it lost more to the baseline, the flips against
the baseline, per-slice deltas and the most telling failures with their evidence pages.

exit codes:
  0  the report was written
  1  nothing could be scored (no gold question could be read, no run could be scored), or the file
     could not be written
  2  usage: an unknown run (the message lists the available ones), a missing folder, a bad option
"""


def build_parser(prog: str = "python -m dashboard.report") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Write a self-contained HTML report comparing runs of a benchmark.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", required=True, type=Path, help="benchmark folder (gold qa_*.jsonl, docs/, runs/, results/)")
    ap.add_argument("--runs", required=True, nargs="+", metavar="RUN",
                    help="run names (prediction file names in runs/ without extension) or paths to prediction files")
    ap.add_argument("--baseline", metavar="NAME", help="the run to compare against (default: the second run)")
    ap.add_argument("--profile", choices=list(PROFILES),
                    help=f"scoring profile (default {DEFAULT_PROFILE}; {MMLONGBENCH_PROFILE} for a clone of MMLongBench-Doc)")
    ap.add_argument("--output", required=True, type=Path, help="the HTML file to write")
    ap.add_argument("--title", default="", help="the report's title")
    ap.add_argument("--failures", type=int, default=8, help="failures to show, 5 to 10 (default 8)")
    ap.add_argument("--resamples", type=int, default=C.RESAMPLES, help=f"bootstrap resamples (default {C.RESAMPLES:,})")
    ap.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    return ap


def main(argv: Sequence[str] | None = None, prog: str = "python -m dashboard.report") -> int:
    from dashboard.data.workspace import run_name  # the report's modules only when it is made (not for --help)
    from dashboard.report.build import ReportError, build_report, load, resolve

    args = build_parser(prog).parse_args(argv)
    if args.profile is None:  # the benchmark's own rule for MMLongBench-Doc's layout
        from dashboard.core.paths import Sources
        from dashboard.data.workspace import MMLONGBENCH, discover

        args.profile = MMLONGBENCH_PROFILE if discover(Sources(args.benchmark)).layout == MMLONGBENCH else DEFAULT_PROFILE
    start = time.perf_counter()

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - start:5.1f} s] {msg}", file=sys.stderr)

    try:
        wanted = list(args.runs)
        names = {run_name(Path(r)) if Path(r).is_file() else r for r in wanted}
        if args.baseline is not None and args.baseline not in names and args.baseline not in wanted:
            wanted.append(args.baseline)  # a baseline not listed in --runs joins them
        ws, an, runs = load(args.benchmark, wanted, args.profile, say)
        baseline = None
        if args.baseline is not None:
            baseline = resolve(ws, [args.baseline])[0]
        problems = [p for p in ws.discovery.problems + ws.problems]
        problems += ws.gold.problems
        for pf in ws.predictions:
            if pf.run in runs:
                problems += pf.loaded.problems
        for p in problems[:20]:
            print(f"{ws.label(p.file)}{'' if p.line is None else f':{p.line}'}: {p.severity}: {p.message}", file=sys.stderr)
        if len(problems) > 20:
            print(f"... and {len(problems) - 20} more problems in the inputs", file=sys.stderr)
        if not an.runs:
            raise ReportError("none of the runs could be scored", 1)
        page = build_report(an, runs, baseline, workspace=ws, profile=args.profile, title=args.title,
                            settings=C.Settings(resamples=max(100, args.resamples), seed=args.seed),
                            failures=args.failures, progress=say)
    except ReportError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return exc.code
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(page, encoding="utf-8")
    except OSError as exc:
        print(f"ERROR: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    say(f"wrote {args.output} ({len(page.encode('utf-8')) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

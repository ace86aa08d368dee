"""`docbench-lens score` (alias `python -m scoring`, `docbench-score`): the release evaluator's command
line, plus profiles, several runs, harness outputs, MMLongBench-Doc's files, the finder and the gate.

    python -m scoring --gold-files qa_single_doc.jsonl qa_cross_doc.jsonl \\
        --predictions run.jsonl --output report.json --per-question-csv per_question.csv

Writes the release evaluator's report layout and CSV, prints the headline percentages, lists
problems on stderr as `file:line: message` (after 20 of one kind, the rest in one line), and exits
1 with `ERROR: ...` when nothing could be scored or a prediction file yields no prediction of a gold
question (`ERROR: no prediction could be loaded from FILE`; the other files are still scored). With several --predictions, --output and --per-question-csv name folders that receive
`<run>.json` and `<run>.csv`; --categories-csv (disagreement categories per question) likewise.

One parser (scoring/options.py) holds every option; the kind of input the arguments name (--profile,
else the files) picks the program: harness outputs (an lmms-eval or VLMEvalKit file or folder as
--predictions, or a harness --profile) scoring/harness_cli.py; MMLongBench-Doc's files (`--profile
mmlongbench-doc`, or no --profile and a samples.json as the gold) scoring/mmlongbench_cli.py; a
benchmark's gold and prediction files this module. Each takes the weak-slice finder's and the
regression gate's options (scoring/gate.py) with the same outputs and exit codes (`--help` lists them:
0 pass, 1 input, 2 usage, 3 regression, 4 inconclusive, 5 a baseline sharing no question).
`subcommands` hands `docbench-lens` (dashboard/launch.py) score, its focused forms slices and gate,
and ingest (scoring/engine/cli.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from . import gate, options
from ._gc import paused_gc
from .evaluate import evaluate, extra_prediction_problems, plan
from .judge import cli as judge_cli
from .loaders import load_gold, load_predictions, reads_as_release
from .problems import summarise
from .profiles import get_profile
from .workers import usable_cores

CLI_PARALLEL_MIN = 100_000  # --categories-csv: from this many gold questions, the record path scores on every core


def build_parser(prog: str = "python -m scoring", command: str = options.SCORE) -> argparse.ArgumentParser:
    """The parser whose --help `python -m scoring` (`docbench-lens score`) shows: every option of every
    kind of input (scoring/options.py)."""
    return options.build_parser(prog, command)


def _gold_paths(args: argparse.Namespace) -> list[Path]:
    if args.gold_files:
        return [Path(f) for f in args.gold_files]
    from .formats.xldocbench import default_gold_paths

    return default_gold_paths(Path(args.data_dir) if args.data_dir else Path.cwd() / "data")


def _pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def main(argv: Sequence[str] | None = None, *, exit_when_done: bool = False, prog: str = "python -m scoring",
         command: str = options.SCORE) -> int:
    """Run the command line; return its exit code. With `exit_when_done` (`python -m scoring`),
    the process ends as soon as the outputs are written and the printing is flushed, without
    freeing the run's millions of objects one by one (a second at 1M questions): the operating
    system takes the memory back at once. `command`: SCORE, or the focused SLICES and GATE
    (`docbench-lens slices`, `docbench-lens gate`: the same path, fewer options)."""
    from . import harness_cli, mmlongbench_cli  # harness outputs; MMLongBench-Doc's own files

    args, kind = options.parse(sys.argv[1:] if argv is None else argv, prog, command)
    if kind == options.HARNESS:  # lmms-eval, VLMEvalKit, LongDocURL files or profiles
        return harness_cli.run(args)
    if kind == options.MMLONGBENCH:
        return mmlongbench_cli.run(args)
    missing = [p for p in args.predictions if not os.path.lexists(p)]
    for p in missing:  # said first: before the gold is read (whose own absence would be all that is said)
        print(f"ERROR: no such file: {p}", file=sys.stderr)
    if missing:
        return 1
    if judge_cli.wants(args) or judge_cli.refusal(args):
        print("ERROR: --judge-url re-judges answers a judge extracts from: MMLongBench-Doc's result files "
              "(--profile mmlongbench-doc) and VLMEvalKit or LongDocURL outputs; XL-DocBench's answers are scored by "
              "its rules", file=sys.stderr)
        return gate.EXIT_USAGE
    if gate.wants(args):  # the weak-slice finder and the regression gate (scoring/gate.py), the trend (trend_cli.py)
        if args.trend:
            from . import trend_cli

            return trend_cli.run(args)
        return gate.run(args)
    # no reference cycles are made between loading and writing: the collector stays off for the
    # whole run (between the paused phases it would otherwise walk millions of records)
    with paused_gc():
        return _run(args, exit_when_done)


def run(argv: Sequence[str] | None = None, prog: str | None = None, command: str = options.SCORE) -> int:
    """`python -m scoring`, the installed `docbench-score` and `docbench-lens score` (`slices`, `gate`):
    `main`, the process ending as soon as the outputs are written. The run is supervised
    (scoring/guard.py): a file that takes more than its read limits (LENS_READ_MEMORY,
    LENS_READ_BUDGET_S) is named and skipped, the rest scored."""
    from . import guard

    guard.supervise()
    if prog is None:  # `python -m scoring` runs scoring/__main__.py; `docbench-score` is itself
        name = Path(sys.argv[0]).name
        prog = "python -m scoring" if name in ("__main__.py", "") else name
    return main(argv, exit_when_done=True, prog=prog, command=command)


@dataclass(frozen=True)
class Subcommand:
    """One subcommand of `docbench-lens`: its name, the one line `docbench-lens --help` shows, its parser
    (built when asked: a program's modules are imported only when it runs or shows its help) and the
    program, given the arguments after its name and the program name its messages use."""

    name: str
    summary: str
    parser: Callable[[str], argparse.ArgumentParser]
    run: Callable[[list[str], str], int]


def subcommands(ingest_load: Callable[[argparse.Namespace], Any] | None = None) -> list[Subcommand]:
    """The subcommands scoring provides to `docbench-lens` (dashboard/launch.py): score, slices, gate and
    ingest. `ingest_load` reads and scores a benchmark's files for `ingest` (scoring/engine/cli.py's
    `Loader`: the dashboard's own reading, dashboard.data.ingest.load)."""

    def engine_parser(prog: str) -> argparse.ArgumentParser:
        from .engine.cli import build_parser as ingest_parser

        return ingest_parser(prog)

    def ingest(argv: list[str], prog: str) -> int:
        from .engine.cli import main as ingest_main

        return ingest_main(argv, load=ingest_load, prog=prog)

    return [
        Subcommand(options.SCORE, "score runs: reports, CSV, weak slices, gate, trend, judge",
                   partial(build_parser, command=options.SCORE), partial(_run_command, options.SCORE)),
        Subcommand(options.SLICES, "where one run is weak: slices tested with documents as the unit",
                   partial(build_parser, command=options.SLICES), partial(_run_command, options.SLICES)),
        Subcommand(options.GATE, "fail CI on a regression: against a baseline, or checkpoints",
                   partial(build_parser, command=options.GATE), partial(_run_command, options.GATE)),
        Subcommand("ingest", "put scored runs into the engine's store (DuckDB or a DuckLake)", engine_parser, ingest),
    ]


def _run_command(command: str, argv: list[str], prog: str) -> int:
    return run(argv, prog, command)


def _exit_now(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _output_folders(args: argparse.Namespace) -> list[Path]:
    """The folders the outputs go into (each output option names a folder when several runs)."""
    several = len(args.predictions) > 1
    out = []
    for value in (args.output, args.per_question_csv, args.categories_csv):
        if value:
            out.append(Path(value) if several else Path(value).parent)
    return out


def _unwritable(folders: list[Path]) -> str | None:
    """Why an output cannot be written into one of the folders (made here when absent), or None."""
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"cannot make the output folder {folder}: {exc.strerror or exc}"
        if not os.access(folder, os.W_OK):
            return f"cannot write into the output folder {folder}: permission denied"
    return None


def _outputs(args: argparse.Namespace, name: str) -> tuple[str | Path | None, str | Path | None]:
    """(report, per-question CSV) paths of one run."""
    several = len(args.predictions) > 1
    report = args.output and (Path(args.output) / f"{name}.json" if several else args.output)
    csv_path = args.per_question_csv and (Path(args.per_question_csv) / f"{name}.csv" if several else args.per_question_csv)
    return report, csv_path


def _run(args: argparse.Namespace, exit_when_done: bool = False) -> int:
    err = sys.stderr
    why = _unwritable(_output_folders(args))
    if why:  # said before the inputs are read, not after a million questions are scored
        print(f"ERROR: {why}", file=err)
        return 1
    names = [Path(p).stem for p in args.predictions]
    if len(set(names)) != len(names):
        print("ERROR: several prediction files share a name; each run is written as <name>.json", file=err)
        return 1
    profile = get_profile(args.profile)
    release = reads_as_release(profile)
    if _in_columns(args):
        code = _run_in_columns(args, names, profile, release)
        if code is not None:
            if exit_when_done:
                _exit_now(code)
            return code
    # the record path: --categories-csv reads every judgement record; a value nested deeper than DEEP
    gold = load_gold(_gold_paths(args), release=release)
    for p in summarise(gold.problems):
        print(p, file=err)
    if not gold.items:
        print("ERROR: no gold question could be loaded", file=err)
        return 1
    code = _score_runs(args, gold.items, names, profile)
    if exit_when_done:  # the outputs are closed; the run is still held here
        _exit_now(code)
    return code


def _score_runs(args: argparse.Namespace, gold: list, names: list[str], profile) -> int:
    """The record path's runs: each scored by `evaluate`, written by `RunResult.write_files` (and
    its categories by `write_categories_csv` when asked)."""
    err = sys.stderr
    several = len(args.predictions) > 1
    lens = profile.name != "xldocbench-1519"
    scored = failed = 0
    for pred_path, name in zip(args.predictions, names):
        preds = load_predictions(pred_path, prediction_field=args.prediction_field, release=reads_as_release(profile))
        for p in summarise(preds.problems):
            print(p, file=err)
        if preds.unreadable or not preds.items:  # nothing to score: never a report of zeros
            print(f"ERROR: no prediction could be loaded from {pred_path}", file=err)
            failed += 1
            continue
        report, csv_path = _outputs(args, name)
        the_plan = plan(gold, preds.items, ignore_missing=args.ignore_missing)
        for p in summarise(extra_prediction_problems(the_plan.extras)):
            print(p, file=err)
        if the_plan.prediction_count == len(the_plan.extras):  # every id unknown (and --ignore-missing: nothing left)
            _no_gold_id(the_plan.prediction_count, pred_path, err)
            failed += 1
            continue
        scored += 1
        try:
            run = evaluate(gold, preds.items, profile=profile, ignore_missing=args.ignore_missing, name=name,
                           prediction_field=args.prediction_field, workers=None if len(gold) >= CLI_PARALLEL_MIN else 1)
            run.write_files(report=report, csv_path=csv_path, per_question=not args.no_per_question_json, lens=lens)
            if args.categories_csv:
                from .categories import write_categories_csv  # only for this option: it imports more

                write_categories_csv(Path(args.categories_csv) / f"{name}.csv" if several else args.categories_csv, run.results)
        except OSError as exc:  # e.g. the disk filled up, or an output path is a folder
            _cannot_write(exc, pred_path, err)
            scored -= 1
            failed += 1
            continue
        _print_run(run, name, several)
    if not scored:
        print("ERROR: nothing could be scored", file=err)
        return 1
    return 1 if failed else 0


def _no_gold_id(count: int, pred_path, err) -> None:
    """What is said of a prediction file none of whose ids is a gold question's (both paths say it)."""
    print(f"note: none of the {count:,} prediction ids of {pred_path} is a gold question id", file=err)
    print(f"ERROR: no prediction could be loaded from {pred_path}", file=err)


def _cannot_write(exc: OSError, pred_path, err) -> None:
    print(f"ERROR: cannot write the outputs of {pred_path}: {exc.filename or ''}{': ' if exc.filename else ''}"
          f"{exc.strerror or exc}", file=err)


def _print_run(run, name: str, several: bool) -> None:
    if several:
        print(f"== {name}")
    o = run.overall
    print(f"Gold questions: {run.gold_count}")
    print(f"Predictions loaded: {run.prediction_count}")
    print(f"Evaluated: {o['count']}")
    print(f"Missing predictions: {len(run.missing_ids)}")
    print(f"Extra predictions: {len(run.extra_ids)}")
    print(f"Accuracy: {_pct(o['accuracy'])}")
    print(f"Token F1: {_pct(o['token_f1'])}")
    print(f"ANLS: {_pct(o['anls'])}")
    print(f"Signature: {run.signature}")


def _in_columns(args: argparse.Namespace) -> bool:
    """Whether the runs are read, scored and written in columns (`_run_in_columns`): at every size,
    but not for --categories-csv, which reads every judgement record."""
    return not args.categories_csv


def _run_in_columns(args: argparse.Namespace, names: list[str], profile, release: bool) -> int | None:
    """The gold and each prediction file read into columns, each run scored, aggregated and
    written from them (scoring/columnar.py): the outputs, problems and printing of the record
    path, without a record per question; from columnar.FORK_MIN questions, with a second core,
    scored, encoded and written in parts by forked processes (`run_columns(workers=...)`). None,
    before anything is printed, when an input holds a value nested deeper than loaders.DEEP: how
    such a value is written depends on the depth of the stack it is written from, so those runs
    take the record path, as they always have."""
    from .columnar import join, run_columns
    from .loaders import load_gold_columns, load_prediction_columns

    err = sys.stderr
    gold_res, gold = load_gold_columns(_gold_paths(args), release=release)
    loaded = [] if gold.deep else [load_prediction_columns(p, prediction_field=args.prediction_field, release=release)
                                   for p in args.predictions]
    if gold.deep or any(preds.deep for _, preds in loaded):
        return None
    for p in summarise(gold_res.problems):
        print(p, file=err)
    if not len(gold):
        print("ERROR: no gold question could be loaded", file=err)
        return 1
    several = len(args.predictions) > 1
    lens = profile.name != "xldocbench-1519"
    scored = failed = 0
    for pred_path, name, (preds_res, preds) in zip(args.predictions, names, loaded):
        for p in summarise(preds_res.problems):
            print(p, file=err)
        if preds_res.unreadable or not len(preds):  # nothing to score: never a report of zeros
            print(f"ERROR: no prediction could be loaded from {pred_path}", file=err)
            failed += 1
            continue
        joined = join(gold, preds, ignore_missing=args.ignore_missing)
        for p in summarise(extra_prediction_problems([preds.record(k) for k in joined.extras])):
            print(p, file=err)
        if joined.prediction_count == len(joined.extras):  # every id unknown (and --ignore-missing: nothing left)
            _no_gold_id(joined.prediction_count, pred_path, err)
            failed += 1
            continue
        scored += 1
        report, csv_path = _outputs(args, name)
        try:
            run = run_columns(gold, preds, joined, profile=profile, name=name, ignore_missing=args.ignore_missing,
                              prediction_field=args.prediction_field, report=report, csv_path=csv_path,
                              per_question=not args.no_per_question_json, lens=lens, workers=usable_cores())
        except OSError as exc:  # e.g. the disk filled up, or an output path is a folder
            _cannot_write(exc, pred_path, err)
            scored -= 1
            failed += 1
            continue
        _print_run(run, name, several)
    if not scored:
        print("ERROR: nothing could be scored", file=err)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

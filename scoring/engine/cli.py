"""`docbench-lens ingest`: put scored runs into the engine, from the evaluation job that made them.

    docbench-lens ingest --benchmark DIR [--runs FILE_OR_FOLDER ...] [--scores FILE ...] [--step N] [--series NAME]
                         [--profile NAME] [--lake [URL]] [--lake-data DIR] [--wait SECONDS]
    docbench-lens ingest --remove RUN[@VERSION] [--benchmark DIR] [--lake [URL]] [--lake-data DIR]
    docbench-lens ingest --list [--benchmark DIR] [--lake [URL]] [--lake-data DIR]

Every source format the app opens is read the way the app reads it and scored by the app's scoring
path (the caller hands both in as `load`: dashboard/data/ingest.py). Without --runs and --scores, every
run of the benchmark is ingested (its runs/ and results/, or a harness folder's runs). Each run is one
transaction: it is in the store whole, or not at all. A run already there (same file, profile, step)
is left unchanged without being scored again; a changed file under the same name becomes a new
version, and the older one stays until `--remove NAME@VERSION` (or `--remove NAME`: every version).

Where: DuckDB in the cache folder, unless a DuckLake is named (`--lake URL`, or LENS_LAKE_CATALOG
and LENS_LAKE_DATA). A second ingest into the same DuckDB file waits for the first (saying so).

Exit status: 0 every run ingested or unchanged (or removed); 1 some input could not be read or scored
(the others are ingested; each problem named), or the run --remove names is not in the store; 2 a usage
error; 3 the store could not be written -- the run named was not ingested and nothing of it is visible (the
runs before it were).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from scoring.profiles import HARNESS_PROFILES, PROFILES
from scoring.redact import redact
from scoring.settings import LAKE_CATALOG, LAKE_DATA

from . import queries
from .connection import WAIT_S, Engine, EngineError, target_from
from .ingest import Candidate, Questions, RunNotFound, ingest, known_identities, remove

__all__ = ["build_parser", "main", "Batch", "Loader", "LoadError", "OK", "PROBLEMS", "USAGE", "STORE"]

OK, PROBLEMS, USAGE, STORE = 0, 1, 2, 3
LAKE_FROM_SETTINGS = "settings"  # `--lake` alone: the catalog and data folder of the settings


@dataclass
class Batch:
    """What a loader found: the benchmark's questions, the runs to ingest (not yet scored) and the
    problems met (each one sentence naming its file; what could be read is still ingested)."""

    questions: Questions
    candidates: list[Candidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # errors: something named was not read (exit 1)
    notes: list[str] = field(default_factory=list)  # warnings: read anyway


class LoadError(Exception):
    """Nothing can be ingested (no gold, no such folder): one sentence."""


Loader = Callable[[argparse.Namespace], Batch]


def _step(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of training steps, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a step of 0 or more, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected 0 to 86400 seconds, got {text}")
    return value


def build_parser(prog: str = "docbench-lens ingest") -> argparse.ArgumentParser:
    profiles = [*PROFILES, *HARNESS_PROFILES]
    ap = argparse.ArgumentParser(
        prog=prog,
        description=textwrap.fill(
            "Score runs and put them into the scored runs' store (DuckDB in the cache folder, or a team's DuckLake). "
            "Each run is written whole in one transaction; the same file ingested again is a no-op; a changed "
            "file becomes a new version of its run.", 100),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"""\
exit codes:
  {OK}  done: every run ingested or unchanged (or removed, or listed)
  {PROBLEMS}  some input could not be read or scored (the rest was ingested; each problem named); with
     --remove, no such run in the store (its runs are named)
  {USAGE}  usage: an unknown option or a bad value
  {STORE}  the store could not be written: the run named is not in it, nothing of it is visible (the runs
     before it are)
""")
    ap.add_argument("--benchmark", metavar="DIR", help="the benchmark folder: gold *.jsonl, documents.jsonl, docs/, runs/, "
                                                       "results/ (or a clone of MMLongBench-Doc, or a harness's output)")
    ap.add_argument("--runs", nargs="+", action="extend", default=[], metavar="FILE_OR_FOLDER",
                    help="the runs to ingest: prediction files, folders of them, or harness outputs (default: every run "
                         "of the benchmark)")
    ap.add_argument("--scores", nargs="+", action="extend", default=[], metavar="FILE",
                    help="score files whose systems are ingested as runs of official scores (scores.jsonl, "
                         "*.report.json, *.per_question.csv)")
    ap.add_argument("--step", type=_step, metavar="N", help="the training step (checkpoint) the runs were made at")
    ap.add_argument("--series", metavar="NAME", help="the training run the checkpoints belong to")
    ap.add_argument("--profile", choices=profiles, metavar="NAME",
                    help=f"scoring profile: {', '.join(profiles)} (default: the benchmark's own -- mmlongbench-doc for a "
                         "clone of MMLongBench-Doc, a harness's own for its output, else xldocbench)")
    ap.add_argument("--task", default="", help="a harness folder's task (dataset) to ingest (default: its first)")
    ap.add_argument("--lake", nargs="?", const=LAKE_FROM_SETTINGS, metavar="URL",
                    help=f"write to a DuckLake: its catalog postgresql://user@host:port/database (alone: "
                         f"${LAKE_CATALOG.name}); a password is best left to ~/.pgpass or PGPASSWORD")
    ap.add_argument("--lake-data", metavar="DIR", help=f"the DuckLake's data folder (default: ${LAKE_DATA.name})")
    ap.add_argument("--wait", type=_seconds, default=WAIT_S, metavar="SECONDS",
                    help=f"how long to wait for another ingest writing the same DuckDB file (default {WAIT_S:g})")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--remove", metavar="RUN", help="remove a run: NAME (every version) or NAME@VERSION")
    what.add_argument("--list", action="store_true", help="list the runs in the store (of --benchmark, when given)")
    return ap


def _say(out: TextIO, text: str) -> None:
    print(text, file=out, flush=True)


def main(argv: Sequence[str] | None = None, *, load: Loader | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None, prog: str = "docbench-lens ingest") -> int:
    """Run `docbench-lens ingest` with these arguments; `load` reads and scores the benchmark's files
    (dashboard.data.ingest.load: the app's own reading and scoring)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    ap = build_parser(prog)
    try:
        args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0) and USAGE
    if not args.remove and not args.list and not args.benchmark:
        _say(err, "docbench-lens ingest: --benchmark DIR is needed (or --remove RUN, or --list)")
        return USAGE
    lake = None if args.lake in (None, LAKE_FROM_SETTINGS) else args.lake
    try:
        target = target_from(lake=lake, lake_data=args.lake_data)
        if args.lake == LAKE_FROM_SETTINGS and target.kind != "ducklake":
            raise EngineError(f"--lake without a URL reads ${LAKE_CATALOG.name}, which is not set")
    except EngineError as exc:
        _say(err, f"docbench-lens ingest: {exc}")
        return USAGE
    if lake and target.secrets:
        _say(err, f"docbench-lens ingest: note: the catalog URL carries a password, which every user of this machine can "
                  f"read on the command line (ps); prefer ~/.pgpass or PGPASSWORD, or ${LAKE_CATALOG.name}")
    engine = Engine(target)

    def waiting(text: str) -> None:
        _say(err, f"docbench-lens ingest: {text}")

    try:
        if args.list:
            return _list(engine, args, load, out, err, waiting)
        if args.remove:
            return _remove(engine, args, load, out, err, waiting)
        if load is None:
            raise LoadError("no loader: run `docbench-lens ingest`")
        batch = load(args)
    except LoadError as exc:
        _say(err, f"docbench-lens ingest: {redact(exc, target.secrets)}")
        return PROBLEMS
    except EngineError as exc:
        _say(err, f"docbench-lens ingest: {exc}")
        return STORE
    return _ingest(engine, args, batch, out, err, waiting)


def _ingest(engine: Engine, args: argparse.Namespace, batch: Batch, out: TextIO, err: TextIO,
            waiting: Callable[[str], None]) -> int:
    for problem in [*batch.problems, *batch.notes]:
        _say(err, f"docbench-lens ingest: {problem}")
    if not batch.candidates:
        _say(err, "docbench-lens ingest: no run to ingest" + (" (see above)" if batch.problems else ""))
        return PROBLEMS
    key = batch.questions.key
    done: list[str] = []
    try:
        with engine.read(wait_s=args.wait, on_wait=waiting) as con:
            known = known_identities(con, key)
    except EngineError as exc:
        _say(err, f"docbench-lens ingest: {exc}")
        return STORE
    failed = bool(batch.problems)
    for cand in batch.candidates:
        if cand.identity(key) in known:
            _say(out, f"{cand.name}: unchanged (already in {engine.shown()})")
            done.append(cand.name)
            continue
        try:
            run = cand.make()
        except (ValueError, OSError, RuntimeError) as exc:
            _say(err, f"docbench-lens ingest: {cand.name} ({cand.file_path}): not scored: {exc}")
            failed = True
            continue
        try:
            outcome = ingest(engine, batch.questions, run, wait_s=args.wait, on_wait=waiting)
        except EngineError as exc:
            before = (f"; the {len(done)} run{'s' if len(done) != 1 else ''} before it {'are' if len(done) != 1 else 'is'} in "
                      "the store") if done else ""
            _say(err, f"docbench-lens ingest: {cand.name}: NOT ingested -- {exc}. Nothing of this run is visible in the "
                      f"store{before}; run the job again to ingest it")
            return STORE
        except ValueError as exc:
            _say(err, f"docbench-lens ingest: {cand.name} ({cand.file_path}): not ingested: {exc}")
            failed = True
            continue
        _say(out, outcome.message)
        done.append(cand.name)
    return PROBLEMS if failed else OK


def _benchmark_key(args: argparse.Namespace, load: Loader | None) -> str | None:
    if not args.benchmark:
        return None
    if load is None:
        raise LoadError("no loader to read --benchmark")
    return load(_no_runs(args)).questions.key


def _no_runs(args: argparse.Namespace) -> argparse.Namespace:
    """The arguments with no run named: a loader reads the gold only (the runs are not scored)."""
    return argparse.Namespace(**{**vars(args), "runs": [], "scores": [], "gold_only": True})


def _list(engine: Engine, args: argparse.Namespace, load: Loader | None, out: TextIO, err: TextIO,
          waiting: Callable[[str], None]) -> int:
    key = _benchmark_key(args, load)
    with engine.read(wait_s=args.wait, on_wait=waiting) as con:
        rows = queries.runs(con, key, current=False)
    if not rows:
        _say(err, f"docbench-lens ingest: no run in {engine.shown()}")
        return OK
    for r in rows:
        step = "" if r["step"] is None else f" step {r['step']}"
        _say(out, f"{r['name']}@{r['version']}{step}\t{r['source']}\t{r['questions']} questions\t"
                  f"{r['ingested_at']:%Y-%m-%d %H:%M:%S}\t{r['benchmark_name'] or r['benchmark']}\t{r['file_path']}")
    return OK


def _remove(engine: Engine, args: argparse.Namespace, load: Loader | None, out: TextIO, err: TextIO,
            waiting: Callable[[str], None]) -> int:
    key = _benchmark_key(args, load)
    try:
        gone = remove(engine, args.remove, benchmark=key, wait_s=args.wait, on_wait=waiting)
    except RunNotFound as exc:
        _say(err, f"docbench-lens ingest: {exc}")
        return PROBLEMS
    for r in gone:
        _say(out, f"{r['name']}@{r['version']}: removed")
    return OK

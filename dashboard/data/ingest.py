"""`docbench-lens ingest`'s reading and scoring: the app's own. No streamlit here.

The benchmark and the runs are read by `load_workspace` (every source format the app opens: the
benchmark's own layout, a clone of MMLongBench-Doc, harness outputs, score files), each run scored by
`scoring.evaluate.score_runs(columns=True)` (the shared pool, in columns as the command line scores) and held
as the app holds it (`runs.held_run`), then handed to the engine as `scoring.engine.ingest.ScoredRun` -- no second
scoring path. The questions are coded as the app codes them (`scored.engine_questions`: the question frame's document length
and evidence position, on page counts from the PDFs or documents.jsonl).

    main(argv)                        `docbench-lens ingest ...` (scoring/engine/cli.py, with `load` below)
    load(args)                        the Batch a command line names: the benchmark's questions and its runs, not yet scored
    scored_result(ws, file, profile)  one prediction file scored and held as the app holds it
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from dashboard.core.digests import file_sha256
from dashboard.core.paths import Sources
from dashboard.core.runs import held_run, scored_in_columns
from dashboard.core.scored import engine_questions
from dashboard.data.workspace import HARNESS, MMLONGBENCH, PredictionFile, Workspace, load_workspace, responses
from scoring.engine.cli import Batch, LoadError
from scoring.engine.cli import main as cli_main
from scoring.engine.ingest import OFFICIAL, Candidate, Questions, ScoredRun, official_identity
from scoring.evaluate import RunResult, score_runs
from scoring.problems import ERROR, Problem, summarise
from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, MMLONGBENCH_PROFILE, get_profile, signature

__all__ = ["main", "load", "questions_of", "benchmark_profile", "scored_result"]


def main(argv: Sequence[str] | None = None) -> int:
    """`docbench-lens ingest ARGS` (dashboard/launch.py hands `ingest`'s arguments here)."""
    return cli_main(argv, load=load)


def benchmark_profile(ws: Workspace) -> str:
    """The profile a benchmark's files are scored by unless one is named: MMLongBench-Doc's own rule for
    its clone; a harness folder's own harness's rule when one harness wrote every run; else the default
    (the app's own choice, dashboard/shell/sidebar.own_profile)."""
    if ws.discovery.layout == MMLONGBENCH:
        return MMLONGBENCH_PROFILE
    if ws.discovery.layout == HARNESS:
        harnesses = {h.run.harness for h in ws.harness}
        if len(harnesses) == 1 and next(iter(harnesses)) in HARNESS_PROFILES:
            return next(iter(harnesses))
    return DEFAULT_PROFILE


def questions_of(ws: Workspace, name: str = "") -> Questions:
    """The workspace's questions as the engine codes them (the question frame's length and position bins;
    the fields the weak-slice finder lists alike, `Questions.finder_fields`)."""
    return engine_questions(ws.gold.items, ws.page_counts, ws.declared_pages(), name)


def _under(path: Path, targets: Sequence[Path]) -> bool:
    try:
        p = path.resolve()
    except (OSError, RuntimeError):
        p = path
    return any(p == t or p.is_relative_to(t) for t in targets)


def _problems(ws: Workspace, chosen: Sequence[PredictionFile]) -> tuple[list[str], bool]:
    """The problems of the gold, the workspace and the chosen runs' files, one line each (the first few
    of a kind, then a count), and whether any is an error."""
    found: list[Problem] = [*ws.problems, *ws.gold.problems, *ws.documents.problems]
    for pf in chosen:
        found.extend(pf.loaded.problems)
    for res in ws.scores:
        found.extend(res.problems)
    lines = [f"{p.file}{':' + str(p.line) if p.line is not None else ''}: {p.severity}: {p.message}" for p in summarise(found)]
    return lines, any(p.severity == ERROR and p.skipped for p in found)


def scored_result(ws: Workspace, pf: PredictionFile, profile: str) -> RunResult:
    """One prediction file scored as the app scores it: `score_runs` on the shared pool, in columns as the
    command line scores (a file kept as records: with its decisions), then the run held as
    dashboard/shell/scorer.py holds it (`runs.held_run`)."""
    gold, preds = ws.gold.items, pf.loaded.items

    def make(_: int, the_plan, scored):
        return held_run(gold, preds, the_plan, scored, profile=profile, name=pf.run)

    return next(score_runs(gold, [(pf.run, preds)], profile=profile, make=make, columns=scored_in_columns(preds)))[1]


def _scored(ws: Workspace, pf: PredictionFile, profile: str, questions: Questions, args: argparse.Namespace) -> ScoredRun:
    """One prediction file scored (`scored_result`), as the engine stores it."""
    return ScoredRun.from_result(scored_result(ws, pf, profile), questions, file_path=str(pf.path), file_sha256=pf.sha256,
                                 step=args.step, series=args.series, origin=pf.origin, file_rows=pf.loaded.rows_read,
                                 responses=responses(ws, pf.run))


def load(args: argparse.Namespace) -> Batch:
    """The benchmark and the runs `args` names (every run of the benchmark when none is), read by the
    app's loader; each run scored only when `Candidate.make` is called (a run already in the store is not)."""
    bench = Path(args.benchmark).expanduser()
    if not bench.exists():
        raise LoadError(f"--benchmark {args.benchmark}: no such folder")
    given = [Path(p).expanduser().absolute() for p in getattr(args, "runs", [])]
    scores = [Path(p).expanduser().absolute() for p in getattr(args, "scores", [])]
    for p in [*given, *scores]:
        if not p.exists():
            raise LoadError(f"{p}: no such file or folder")
    ws = load_workspace(Sources(bench.absolute(), runs=tuple(given), scores=tuple(scores), task=getattr(args, "task", "")))
    if not ws.gold.items:
        lines, _ = _problems(ws, [])
        raise LoadError(f"{bench}: no gold question could be read" + ("".join(f"\n  {line}" for line in lines[:20])))
    profile = get_profile(args.profile or benchmark_profile(ws)).name
    questions = questions_of(ws, bench.absolute().name)
    batch = Batch(questions)
    if getattr(args, "gold_only", False):
        return batch
    everything = not given and not scores
    targets = [p.resolve() for p in given]
    chosen = [pf for pf in ws.predictions if everything or _under(pf.path, targets)]
    lines, errors = _problems(ws, chosen)
    if errors:
        batch.problems = lines
    else:
        batch.notes = lines
    sig = signature(profile)
    for pf in chosen:
        if not pf.loaded.loaded:
            batch.problems.append(f"{pf.path}: no prediction could be read: {pf.run} is not ingested")
            continue
        batch.candidates.append(Candidate(pf.run, str(pf.path), pf.sha256, sig, args.step,
                                          partial(_scored, ws, pf, profile, questions, args)))
    names = {pf.run for pf in ws.predictions}
    score_targets = [p.resolve() for p in scores]
    for system, rows in ws.official().items():
        if system in names or not (everything or _under(Path(rows[0].file), score_targets)):
            continue
        path = Path(rows[0].file)
        sha = file_sha256(path) if path.is_file() else ""
        batch.candidates.append(Candidate(system, str(path), sha, official_identity(profile), args.step,
                                          partial(ScoredRun.from_official, system, rows, questions, profile,
                                                  file_path=str(path), file_sha256=sha, step=args.step, series=args.series),
                                          OFFICIAL))
    if errors and not batch.candidates:
        raise LoadError("nothing could be ingested:" + "".join(f"\n  {line}" for line in lines[:40]))
    return batch

"""The command line's checkpoint trend: alarms on real, lasting drops across a training run's checkpoints.

    python -m scoring --gold-files qa_single_doc.jsonl --predictions runs/ckpt-*.jsonl --trend alarms.csv \\
        [--steps steps.csv] [--gate-metric accuracy ...] [--fdr 0.05] [--min-documents 20] [--min-questions N] \\
        [--fail-on-regression --min-gap 0.02 [--inconclusive fail|pass]]

The runs are ordered by step: from --steps (a CSV with columns run, step and optionally series; `run` is a
prediction file's name without its extension) or from their file names (`checkpoint-1200`, `ckpt-0520`,
`step_3000`, `global_step3000`: scoring/steps.py). A run with no step is left out (said on stderr); runs
of two series or more are a usage error (one series per call: the CSV has no series column). Each run is
scored as the plain command line scores it and ingested at once into an embedded DuckDB in a temporary
folder (`Checkpoints`: the app's ingest path; its result is not kept), the series is read back as
runs x questions (`scoring.engine.queries.checkpoint_matrix`, what the Trends page reads), then
`scoring.trends.search` finds the alarms on the
--gate-metric metrics (one Benjamini-Hochberg family across metrics, slices and candidate checkpoints;
slices of one or two conditions on the finder's fields -- `scoring.slice_fields.slice_fields`, as
--weak-slices lists them -- each with at least --min-documents documents).

--trend OUT.csv: one row per alarm, strongest first (the drop its interval guarantees), columns
`scoring.trends.CSV_COLUMNS`: rank, slice, metric, step (the first checkpoint after the change), before,
after, gap (after - before; fractions), ci_low, ci_high (the gap's 95 % document-bootstrap interval), p,
q, documents. `slice` is written as the weak-slices CSV writes it (`reasoning_type=counting &
evidence_source=Chart`); the benchmark-wide row is `overall`. No alarm: the header only. Written by the one
CSV writer (scoring/writers.py): a text cell starting with = + - @ gets a leading apostrophe, numbers stay
numbers.

With --fail-on-regression: exit 3 (regression) when an alarm's drop is larger than --min-gap; exit 4
(inconclusive; --inconclusive pass lets it through) when the latest checkpoint is more than --min-gap
below the checkpoints before it on the whole benchmark and its documents cannot test a drop at all (too
few documents: even the smallest p they can give is not below --fdr); else 0. The other exit codes are
the command line's (1 input, 2 usage).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from . import gate
from . import steps as S
from .engine import queries as Q
from .engine.connection import EMBEDDED, Engine, EngineError, memory_target
from .engine.ingest import Questions, ScoredRun, ingest
from .registry import METRICS
from .stats import smallest_p
from .trends import BEFORE, CSV_COLUMNS, OVERALL, TrendSearch, alarm_rows
from .writers import csv_string

EXIT_PASS, EXIT_INPUT, EXIT_USAGE = gate.EXIT_PASS, gate.EXIT_INPUT, gate.EXIT_USAGE
EXIT_REGRESSION, EXIT_INCONCLUSIVE = gate.EXIT_REGRESSION, gate.EXIT_INCONCLUSIVE
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(found: TrendSearch | None) -> str:
    """The --trend CSV: the header, then one row per alarm (`scoring.trends.alarm_rows`), through the one CSV
    writer (`scoring.writers.csv_string`: numbers as numbers, text cells spreadsheet-safe)."""
    rows = alarm_rows(found) if found is not None else []
    return csv_string(([row[k] for k in CSV_COLUMNS] for row in rows), CSV_COLUMNS,
                      float_format=lambda v: format(v, ".6g"))


def order(args: argparse.Namespace, names: list[str], hints: dict[str, list[str]] | None = None
          ) -> tuple[list[S.Checkpoint], int] | int:
    """(the series' checkpoints by step, how many runs were left out), or the exit code (said)."""
    mapping = None
    if args.steps:
        read = S.read_steps_csv(args.steps)
        for p in read.problems:
            print(p, file=sys.stderr)
        if not read.rows:
            print(f"ERROR: --steps {args.steps}: no run could be read from it", file=sys.stderr)
            return EXIT_INPUT
        mapping = read.rows
        unknown = [r for r in read.rows if r not in names]
        if unknown:
            print(f"note: --steps names {len(unknown)} run(s) not given as --predictions: "
                  + ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else ""), file=sys.stderr)
    points = S.checkpoints(names, mapping, hints)
    without = [c.run for c in points if c.step is None]
    if without:
        print(f"note: {len(without)} run(s) state no checkpoint step and are left out of the trend: "
              + ", ".join(without[:10]) + (" ..." if len(without) > 10 else "")
              + " (name them checkpoint-N, ckpt-N, step_N or global_stepN, or give --steps FILE)", file=sys.stderr)
    series = S.series_of(points)
    if len(series) > 1:
        listed = "; ".join(f"{name}: {', '.join(c.run for c in members[:4])}{' ...' if len(members) > 4 else ''}"
                           for name, members in series.items())
        print(f"ERROR: the runs form {len(series)} series ({listed}); --trend takes one series per call (give the "
              "runs of one, or put them in one series with --steps FILE: run, step, series)", file=sys.stderr)
        return EXIT_USAGE
    if not series:
        print("ERROR: no run states a checkpoint step: nothing to order (give --steps FILE: run, step, series)",
              file=sys.stderr)
        return EXIT_USAGE
    members = next(iter(series.values()))
    for step, runs in S.repeated_steps(members):
        print(f"note: step {step} is stated by {len(runs)} runs ({', '.join(runs)}): each is a checkpoint, by name",
              file=sys.stderr)
    return members, len(without)


def run(args: argparse.Namespace) -> int:
    """XL-DocBench (and DocVQA-style gold): every --predictions run scored, ordered by step, the trend's
    alarms written and the exit code (module docstring)."""
    why = gate.refusal(args)
    if why:
        print(f"ERROR: {why}", file=sys.stderr)
        return EXIT_USAGE
    names = [Path(p).stem for p in args.predictions]
    if len(set(names)) != len(names):
        print("ERROR: several prediction files share a name; each run is named by its file", file=sys.stderr)
        return EXIT_USAGE
    from .profiles import get_profile

    profile = get_profile(args.profile)
    path_of = dict(zip(names, args.predictions))
    loaded: list[list] = []

    def score(name: str) -> tuple[Any, list] | int:
        if not loaded:  # the gold once, when the series is known
            gold = gate.load_gold_items(args, profile)
            if gold is None:
                return EXIT_INPUT
            loaded.append(gold)
        result = gate.score_run(args, loaded[0], path_of[name], name, profile, write=False)
        if result is None:
            return EXIT_INPUT
        if not gate.answered(result):
            print(f"ERROR: none of the prediction ids of {path_of[name]} is a gold question id", file=sys.stderr)
            return EXIT_INPUT
        return result, loaded[0]

    return order_and_score(args, names, {}, score)


def order_and_score(args: argparse.Namespace, names: list[str], hints: dict[str, list[str]],
                    score: Callable[[str], tuple[Any, list] | int]) -> int:
    """Every profile's way through --trend: the runs (`names`, with what a harness wrote of each: `hints`)
    ordered into one series, each checkpoint scored by `score(name)` -> (its `RunResult`, the gold it was
    scored against) or an exit code (the error said), then `finish` against the first checkpoint's gold."""
    placed = order(args, names, hints)
    if isinstance(placed, int):
        return placed
    series, _ = placed
    with tempfile.TemporaryDirectory(prefix="lens-trend-") as folder:
        held = Checkpoints(Path(folder))
        for c in series:
            got = score(c.run)
            if isinstance(got, int):
                return got
            try:
                held.add(*got)
            except (EngineError, ValueError) as exc:
                print(f"ERROR: {c.run}: its scores cannot be held for the trend ({exc})", file=sys.stderr)
                return EXIT_INPUT
        return finish(args, series, held)


class Checkpoints:
    """The series' checkpoints, each ingested as soon as it is scored -- the app's ingest path
    (`scoring.engine.ingest`) into an embedded DuckDB in `folder` -- so that no run's result outlives its
    ingest; read back as runs x questions (`queries.checkpoint_matrix`, the query the Trends and matrix
    pages read). The gold is the first checkpoint's: a later one's questions it lacks are left out."""

    def __init__(self, folder: Path) -> None:
        self.engine = Engine(replace(memory_target(), kind=EMBEDDED, database=folder / "trend.duckdb", folder=folder))
        self.gold: list[Any] = []
        self.questions: Questions | None = None
        self.profile: Any = None
        self.run_ids: list[int] = []

    def add(self, result: Any, gold: list[Any]) -> None:
        """Ingest one checkpoint's `scoring.evaluate.RunResult`, scored against `gold`."""
        if self.questions is None:
            self.gold, self.profile = list(gold), result.profile
            self.questions = Questions.from_gold(self.gold, name="trend")
        run = ScoredRun.from_result(result, self.questions, file_path=str(result.name),
                                    file_sha256=str(len(self.run_ids)), only_gold=True)  # one identity per checkpoint
        self.run_ids.append(ingest(self.engine, self.questions, run).run_id)

    def matrix(self, metrics: list[str]) -> dict[str, np.ndarray]:
        """Checkpoints (step order) x gold questions (gold order): each metric's scores (0 where a checkpoint
        holds no row) and `attempted` (answered or failed)."""
        with self.engine.read() as con:
            return Q.checkpoint_matrix(con, self.run_ids, np.arange(len(self.gold), dtype=np.int64), metrics)


def finish(args: argparse.Namespace, series: list[S.Checkpoint], held: Checkpoints) -> int:
    """The steps every profile shares once the checkpoints are scored and held (in step order, against
    the first one's gold): the search, the CSV, the lines printed and the exit code."""
    from .profiles import get_profile
    from .slice_fields import page_counts_beside, slice_fields
    from .stats import document_clusters
    from .trends import search

    gold = held.gold
    metrics = [m for m in METRICS if m in args.gate_metric]
    wanted = list(dict.fromkeys([*metrics, "accuracy"]))
    got = held.matrix(wanted)
    scores, answered = {m: got[m] for m in wanted}, got["attempted"]
    right = get_profile(held.profile if held.profile is not None else args.profile).right_mask(scores["accuracy"])
    clusters = document_clusters([q.document_ids for q in gold])
    steps = [int(c.step or 0) for c in series]
    data_dir = getattr(args, "data_dir", None)  # the finder's fields, as --weak-slices lists them (gate.py)
    gold_paths = getattr(args, "gold_files", None) or [(Path(data_dir) if data_dir else Path.cwd() / "data") / "qa_single_doc.jsonl"]
    fields = slice_fields(gold, page_counts_beside(gold_paths))
    found = search({m: scores[m] for m in metrics}, clusters, fields, steps,
                   runs=[c.run for c in series], answered=answered, right=right, fdr=args.fdr,
                   min_questions=args.min_questions, min_documents=args.min_documents)
    wrote = gate.write_text(args.trend, csv_text(found), "the trend (--trend)")
    print(f"trend of {len(series)} checkpoints ({', '.join(f'{c.run} @ {c.step}' for c in series[:6])}"
          f"{' ...' if len(series) > 6 else ''}): {found.summary()}")
    for a in found.alarms:
        print(f"ALARM: {a.slice} {a.metric} {a.gap * 100:+.2f} points from step {a.step} on "
              f"(95% CI [{a.ci_low * 100:+.2f}, {a.ci_high * 100:+.2f}] by document, p {_p(a.p)}, q {_p(a.q)}; "
              f"{a.before * 100:.1f}% -> {a.after * 100:.1f}% on {a.questions:,} questions in {a.documents:,} "
              f"{found.unit}s; dropped from the best so far, {a.best * 100:.1f}% at step {a.best_step})"
              + (f"; explains {len(a.explains)} more" if a.explains else ""))
    code = EXIT_PASS if wrote else EXIT_INPUT
    if not args.fail_on_regression:
        return code
    failing = [a for a in found.alarms if a.gap < -args.min_gap]
    if failing:
        print(f"FAILED: {len(failing)} lasting drop(s) larger than --min-gap {args.min_gap:g} at q < {args.fdr:g}",
              file=sys.stderr)
        return EXIT_REGRESSION
    untestable = _untestable(found, scores, answered, metrics, args)
    if untestable:
        if args.inconclusive == "pass":
            for line in untestable:
                print(f"warning: INCONCLUSIVE: {line}", file=sys.stderr)
            print(f"no lasting drop larger than --min-gap {args.min_gap:g}; {len(untestable)} drop(s) could not be "
                  "tested (--inconclusive pass lets them through)")
            return code
        for line in untestable:
            print(f"INCONCLUSIVE: {line}")
        print(f"FAILED: inconclusive: {len(untestable)} drop(s) larger than --min-gap {args.min_gap:g} that these "
              f"documents cannot test at level {args.fdr:g} (--inconclusive pass lets them through)", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    print(f"no lasting drop larger than --min-gap {args.min_gap:g} at q < {args.fdr:g}")
    return code


def _untestable(found: TrendSearch, scores: dict, answered: Any, metrics: list[str], args: argparse.Namespace) -> list[str]:
    """The drops of the latest checkpoint on the whole benchmark larger than --min-gap that its documents
    cannot test (too few: the smallest p they can give is not below the level), in words."""
    k = len(found.steps)
    least = smallest_p(found.units)
    if k < 2 or (least < args.fdr and found.units >= found.min_documents):
        return []
    shared = np.asarray(answered, dtype=bool).all(axis=0)
    out = []
    for m in metrics:
        y = np.asarray(scores[m], dtype=float)[:, shared]
        if not y.shape[1]:
            continue
        level = float(y[max(0, k - 1 - BEFORE):k - 1].mean())
        latest = float(y[k - 1].mean())
        if latest - level < -args.min_gap:
            n = f"{found.units:,} {found.unit}s"
            out.append(f"{OVERALL} {m} dropped by {(level - latest) * 100:.2f} points at step {found.steps[-1]} on {n}; "
                       f"the smallest p {n} can give is {least:.3g} (level {args.fdr:g}, {found.min_documents} "
                       f"{found.unit}s needed)")
    return out


def _p(p: float) -> str:
    return "< 1e-16" if p <= 1e-16 else f"= {p:.3g}"

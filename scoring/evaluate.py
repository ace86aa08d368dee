"""Scoring runs against gold on the record path, aggregation (spec 7) and the release report layout.

- `plan(gold, predictions)` is the join (gold order; missing, extra ids), without scoring;
- `score_runs(gold, runs, profile)` scores every run's questions in chunks on one shared pool
  (forkserver, one worker per core, started on first use and kept: scoring/workers.py) and yields
  each run's `RunResult` as soon as its chunks are back, so a caller can move a progress bar per run;
  fewer than PARALLEL_MIN questions in all, or no workers, are scored in this process;
- `evaluate(gold, predictions)` is `score_runs` of one run;
- `assemble(...)` builds the `RunResult` from decisions computed earlier (a worker's, or a cache's).

A `RunResult` holds every per-question result, the join counts and the aggregates;
`RunResult.report()` is the release evaluator's JSON object. Workers import `scoring` only: the
pool's forkserver preloads the scoring library instead of `__main__`, and tasks are submitted inside
`bare_main()`, so multiprocessing has no main script (Streamlit's CLI, an app script) to re-run in
them. Runs held in columns and their records built on demand: scoring/runner.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import IO, Any

from ._gc import paused_gc
from .aggregate import aggregate, bucket, macro_average, run_groups
from .metrics import Decision, Judgement, QuestionResult, column_scores, decide
from .model import BREAKDOWNS, GoldQuestion, Prediction
from .problems import Problem
from .profiles import Profile, get_profile, signature
from .registry import MISSING_STATUS, is_success_status
from .workers import bare_main, discard_shared_pool, shared_pool, usable_cores
from .writers import CSV_COLUMNS, ROW_SEP, csv_string, csv_text, open_for_writing, row_dicts, rows_json

__all__ = ["QuestionResult", "RunResult", "Plan", "plan", "assemble", "judged", "evaluate", "score_runs", "shutdown",
           "extra_prediction_problems", "CHUNK"]

PARALLEL_MIN = 20_000  # below this, one process is faster than starting workers
AHEAD = 4  # runs whose chunks are on the shared pool at once (score_runs)
CHUNK = 4_000  # questions per task: large enough to amortise pickling, small enough to balance two cores
Progress = Callable[[int, int], None]
Scores = tuple[list[float], list[float], list[float]]  # (accuracy, token_f1, anls) of each question, in order


def _rows(results: Sequence[QuestionResult]) -> list[dict]:
    """`[r.row() for r in results]`, with the properties it reads inlined (a million rows)."""
    js = [r.judgement for r in results]
    return row_dicts([r.question for r in results], [r.prediction for r in results],
                     [j.accuracy for j in js], [j.token_f1 for j in js], [j.anls for j in js])


def extra_prediction_problems(extras: Sequence[Prediction]) -> list[Problem]:
    """One warning per prediction of no gold question (not scored)."""
    return [Problem.warning(pr.file, pr.line, "question_id", "an id of a gold question", f"{pr.qid!r} (extra prediction, not scored)",
                            skipped=True, kind="extra predictions") for pr in extras]


@dataclass
class RunResult:
    name: str
    profile: Profile
    signature: str
    results: list[QuestionResult]
    gold_count: int
    prediction_count: int
    missing_ids: list[str]
    extra_ids: list[str]
    ignore_missing: bool = False
    problems: list[Problem] = field(default_factory=list)
    groups: tuple[str, ...] = BREAKDOWNS
    _agg: tuple[dict, dict] | None = None

    def _aggregates(self) -> tuple[dict, dict]:
        if self._agg is None:
            with paused_gc():
                self._agg = aggregate(self.results, self.groups)
        return self._agg

    @property
    def overall(self) -> dict:
        if self._agg is not None:
            return self._agg[0]
        # the leaderboard needs only this: no breakdowns computed for it
        return bucket([r.accuracy for r in self.results], [r.token_f1 for r in self.results], [r.anls for r in self.results])

    @property
    def breakdowns(self) -> dict:
        return self._aggregates()[1]

    @property
    def macro(self) -> dict:
        return macro_average(self.breakdowns)

    @property
    def failed_count(self) -> int:
        return sum(1 for r in self.results if r.prediction is not None and not is_success_status(r.status))

    def report(self, *, per_question: bool = True, lens: bool = True) -> dict:
        """The release evaluator's report object (spec 7). With `lens`, a trailing `lens` key
        adds the signature, macro averages and load problems; the release profile's CLI leaves it
        out so the file equals the release evaluator's byte for byte."""
        overall, breakdowns = self._aggregates()
        rep: dict = {
            "gold_count": self.gold_count,
            "prediction_count": self.prediction_count,
            "evaluated_count": overall["count"],
            "missing_prediction_count": len(self.missing_ids),
            "extra_prediction_count": len(self.extra_ids),
            "overall": overall,
            "breakdowns": breakdowns,
        }
        if per_question:
            with paused_gc():
                rep["per_question"] = [r.row() for r in self.results]
        if lens:
            rep["lens"] = {
                "signature": self.signature,
                "run": self.name,
                "macro": macro_average(breakdowns),
                "failed_status_count": self.failed_count,
                "problems": [str(p) for p in self.problems],
            }
        return rep

    def report_json(self, *, per_question: bool = True, lens: bool = True) -> str:
        return "".join(self.report_chunks(per_question=per_question, lens=lens))

    def _row_batches(self, size: int = 5_000) -> Iterator[list[dict]]:
        for i in range(0, len(self.results), size):
            yield _rows(self.results[i : i + size])

    def report_chunks(self, *, per_question: bool = True, lens: bool = True,
                      rows: Iterable[list[dict]] | None = None) -> Iterator[str]:
        """The text of `json.dumps(self.report(...), ensure_ascii=False, indent=2)`, piece by
        piece, a batch of per-question rows at a time: a million-question report is written
        without holding a million row dicts. `rows` lets a caller share its row batches."""
        head, sep, tail = self.report_frame(per_question=per_question, lens=lens)
        yield head
        if sep is not None:
            for k, batch in enumerate(rows if rows is not None else self._row_batches()):
                yield (sep if k else "") + rows_json(batch)
        yield tail

    def report_frame(self, *, per_question: bool = True, lens: bool = True) -> tuple[str, str | None, str]:
        """(head, separator, tail): the report's text is `head + separator.join(texts) + tail`,
        where the texts are `rows_json` of consecutive batches of the per-question rows (none
        empty); separator None when there are no rows to put there."""
        rep = self.report(per_question=False, lens=lens)
        extra = rep.pop("lens", None)
        head = json.dumps(rep, ensure_ascii=False, indent=2)[:-2]  # without the closing "\n}"
        tail = "" if extra is None else ',\n  "lens": ' + json.dumps(extra, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        if not per_question:
            return head, None, tail + "\n}"
        if not rep["evaluated_count"]:
            return head + ',\n  "per_question": []', None, tail + "\n}"
        return head + ',\n  "per_question": [\n    ', ROW_SEP, "\n  ]" + tail + "\n}"

    def write_csv(self, fh: IO[str], rows: Iterable[list[dict]] | None = None) -> None:
        """csv.DictWriter's output (header, then rows, "\r\n" line ends), without its per-row key checks;
        text cells spreadsheet-safe (writers.safe_cell)."""
        fh.write(csv_string((), CSV_COLUMNS))
        for batch in rows if rows is not None else self._row_batches():
            fh.write(csv_text(batch))

    def csv_text(self) -> str:
        buf = io.StringIO(newline="")
        self.write_csv(buf)
        return buf.getvalue()

    def write_files(self, *, report: str | Path | None = None, csv_path: str | Path | None = None,
                    per_question: bool = True, lens: bool = True) -> None:
        """The CLI's outputs: the report JSON and the per-question CSV, streamed to disk in one
        pass over the questions (each row dict is built once, for both files)."""
        with paused_gc(), contextlib.ExitStack() as stack:
            csv_fh = stack.enter_context(open_for_writing(csv_path)) if csv_path else None
            json_fh = stack.enter_context(open_for_writing(report)) if report else None
            if csv_fh is not None:
                csv_fh.write(csv_string((), CSV_COLUMNS))

            def batches() -> Iterator[list[dict]]:
                for batch in self._row_batches():
                    if csv_fh is not None:
                        csv_fh.write(csv_text(batch))
                    yield batch

            if json_fh:
                for chunk in self.report_chunks(per_question=per_question, lens=lens, rows=batches()):
                    json_fh.write(chunk)
            if csv_fh is not None and not (json_fh and per_question):  # the JSON did not pull the rows through
                for _ in batches():
                    pass


# ----------------------------------------------------------------------------- the join and the records


class Plan:
    """evaluate()'s join of one run with the gold, before scoring: the questions scored (gold
    order; without the missing ones under ignore_missing) and their predictions (None: missing),
    as two aligned lists."""

    __slots__ = ("questions", "predictions", "missing", "extras", "prediction_count")

    def __init__(self, questions: list[GoldQuestion], predictions: list[Prediction | None], missing: list[str],
                 extras: list[Prediction], prediction_count: int) -> None:
        self.questions, self.predictions = questions, predictions
        self.missing, self.extras, self.prediction_count = missing, extras, prediction_count

    @paused_gc()
    def items(self) -> list[tuple]:
        return [(None, None, q.answers, q.answer_format, q.verification_rule) if pr is None
                else (pr.text, pr.status, q.answers, q.answer_format, q.verification_rule)
                for q, pr in zip(self.questions, self.predictions)]

    def decisions(self, profile: Profile) -> list[Decision]:
        """Every planned question's decision (`metrics.decide`), in this process."""
        return _decide_chunk((profile, self.items()))


@paused_gc()
def plan(gold: Sequence[GoldQuestion], predictions: Sequence[Prediction], *, ignore_missing: bool = False) -> Plan:
    by_id = {pr.qid: pr for pr in predictions}
    questions = list(gold)
    aligned = [by_id.get(q.qid) for q in questions]
    missing = [q.qid for q, pr in zip(questions, aligned) if pr is None]
    if missing and ignore_missing:
        kept = [(q, pr) for q, pr in zip(questions, aligned) if pr is not None]
        questions, aligned = [q for q, _ in kept], [pr for _, pr in kept]
    gold_ids = {q.qid for q in gold}
    extras = [pr for pr in predictions if pr.qid not in gold_ids]
    return Plan(questions, aligned, missing, extras, len(by_id))


_ZERO, _ONE = 0.0, 1.0


def _shared(x: float) -> float:
    """0.0 and 1.0 -- most scores -- as two shared objects instead of a new float each."""
    return x if 0.0 < x < 1.0 else (_ONE if x else _ZERO)


def judged(q: GoldQuestion, pr: Prediction | None, decision: Decision, p: Profile) -> QuestionResult:
    """The record of gold question `q` answered by `pr` (None: no prediction), scored `decision`
    (`metrics.decide`'s tuple) under profile `p`."""
    acc, f1, an, rule, threshold, details = decision
    return QuestionResult(q, pr, Judgement(
        None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
        MISSING_STATUS if pr is None else pr.status, p, _shared(acc), _shared(f1), _shared(an), rule, threshold, details))


@paused_gc()
def assemble(gold: Sequence[GoldQuestion], the_plan: Plan, decisions: Sequence[Decision], *, profile: str | Profile,
             name: str = "run", ignore_missing: bool = False, prediction_field: str | None = None) -> RunResult:
    """The RunResult that evaluate() returns for this plan, from its decisions (one per planned question)."""
    if len(decisions) != len(the_plan.questions):
        raise ValueError(f"{len(decisions)} decisions for {len(the_plan.questions)} questions")
    p = get_profile(profile)
    results = [judged(q, pr, d, p) for q, pr, d in zip(the_plan.questions, the_plan.predictions, decisions)]
    return RunResult(results=results, **_run_fields(gold, the_plan, p, name, ignore_missing, prediction_field))


def _run_fields(gold: Sequence[GoldQuestion], the_plan: Plan, p: Profile, name: str, ignore_missing: bool,
                prediction_field: str | None) -> dict:
    """RunResult's fields besides the records, as evaluate() sets them."""
    return dict(
        name=name,
        profile=p,
        signature=signature(p, ignore_missing=ignore_missing, prediction_field=prediction_field),
        gold_count=len(gold),
        prediction_count=the_plan.prediction_count,
        missing_ids=list(the_plan.missing),
        extra_ids=[pr.qid for pr in the_plan.extras],
        ignore_missing=ignore_missing,
        problems=extra_prediction_problems(the_plan.extras),
        groups=run_groups(gold),
    )


# ----------------------------------------------------------------------------- the pool


def _decide_chunk(args: tuple[Profile, list[tuple]]) -> list[Decision]:
    profile, items = args
    with paused_gc():
        return [decide(text, answers, fmt, rule, status, profile) for text, status, answers, fmt, rule in items]


def _score_chunk(args: tuple[Profile, list[tuple]]) -> Scores:
    """A chunk's (Accuracy, token F1, ANLS) columns: `metrics.column_scores`, the command line's
    scoring (`columnar.score_columns`), so the app and the command line score alike."""
    profile, items = args
    if not items:
        return [], [], []
    texts, statuses, answers, formats, rules = zip(*items)
    with paused_gc():
        return column_scores(texts, statuses, answers, formats, rules, profile)


def _imported_streamlit() -> bool:
    """Run in a worker: whether it imported streamlit (it must not)."""
    return "streamlit" in sys.modules


def _pool() -> ProcessPoolExecutor | None:
    """The shared pool (scoring/workers.py); a name of its own so that tests can take it away."""
    return shared_pool()


def _discard_pool() -> None:
    discard_shared_pool()


def shutdown() -> None:
    """Stop the shared pool's workers (they are started again on the next use)."""
    discard_shared_pool()


def workers_import_streamlit() -> bool | None:
    """Whether a worker of the shared pool has streamlit imported (None: no pool). For tests and benchmarks."""
    pool = _pool()
    if pool is None:
        return None
    with bare_main():
        fut = pool.submit(_imported_streamlit)
    return fut.result(timeout=120)


def score_runs(gold: Sequence[GoldQuestion], runs: Sequence[tuple[str, Sequence[Prediction]]], *,
               profile: str | Profile = "xldocbench", ignore_missing: bool = False, prediction_field: str | None = None,
               parallel: bool = True, min_parallel: int = PARALLEL_MIN,
               progress: Callable[[int, int, int], None] | None = None, ahead: int = AHEAD,
               make: Callable[[int, Plan, Any], Any] | None = None, columns: bool = False) -> Iterator[tuple[int, Any]]:
    """Score every run (name, predictions) against `gold`; yield (index in `runs`, RunResult) per
    run as it completes, in order. The chunks of `ahead` runs at a time are on the shared pool, so
    both cores stay busy across run boundaries while only those runs' items are held (two hundred
    runs' items at once held gigabytes); fewer than `min_parallel` questions in all are scored in
    this process. `progress(run index, questions done, questions of the run)` is called as each
    chunk of the run being waited for comes back. Each result equals `evaluate(gold, predictions,
    ...)`; with `make`, `make(index, plan, decisions)` is yielded instead (the app keeps runs in columns
    and never builds the records `assemble` makes). With `columns` (and `make`), the runs are scored in
    columns, as the command line scores them (`metrics.column_scores`), and `make(index, plan, scores)`
    gets their (Accuracy, token F1, ANLS) columns: no decision record is made or sent back; a page that
    shows a run's records decides them again when it asks."""
    if columns and make is None:
        raise ValueError("scores in columns need `make`: there are no records to assemble")
    p = get_profile(profile)
    chunk_of = _score_chunk if columns else _decide_chunk
    # a few thousand questions are scored faster here than sent to workers
    pool = _pool() if parallel and len(gold) * len(runs) >= min_parallel else None
    plans: dict[int, Plan] = {}
    pending: dict[int, list[Future]] = {}
    submitted = 0

    def plan_of(k: int) -> Plan:
        return plans.pop(k, None) or plan(gold, runs[k][1], ignore_missing=ignore_missing)

    def submit(upto: int) -> None:
        nonlocal submitted, pool
        while pool is not None and submitted < min(upto, len(runs)):
            k = submitted
            plans[k] = pl = plan(gold, runs[k][1], ignore_missing=ignore_missing)
            items = pl.items()
            try:
                with bare_main():
                    pending[k] = [pool.submit(chunk_of, (p, items[j : j + CHUNK])) for j in range(0, len(items), CHUNK)]
            except (BrokenProcessPool, OSError, RuntimeError):
                _discard_pool()
                pool = None
                _cancel(pending)
            submitted += 1

    try:
        for i, (name, _) in enumerate(runs):
            submit(i + max(1, ahead))
            pl = plan_of(i)
            parts: list | None = None  # the run's chunks' results, in order
            futures = pending.pop(i, None)
            if futures is not None:
                try:
                    parts, done = [], 0
                    for f in futures:
                        parts.append(f.result())
                        done += len(parts[-1][0]) if columns else len(parts[-1])
                        if progress is not None:
                            progress(i, done, len(pl.questions))
                except (BrokenProcessPool, OSError, RuntimeError):
                    # a worker died (or the pool was shut down): score this and the rest here
                    _discard_pool()
                    pool = None
                    _cancel(pending)
                    parts = None
            if parts is None:
                items = pl.items()
                parts = []
                for k in range(0, len(items), CHUNK):
                    parts.append(chunk_of((p, items[k : k + CHUNK])))
                    if progress is not None:
                        progress(i, min(k + CHUNK, len(items)), len(items))
            scored: Any = (tuple(list(chain.from_iterable(part[m] for part in parts)) for m in range(3)) if columns
                           else list(chain.from_iterable(parts)))  # score columns, or decisions
            if make is not None:
                yield i, make(i, pl, scored)
            else:
                yield i, assemble(gold, pl, scored, profile=p, name=name, ignore_missing=ignore_missing,
                                  prediction_field=prediction_field)
    finally:  # the caller stopped early: drop the chunks not started
        _cancel(pending)


def _cancel(pending: dict[int, list[Future]]) -> None:
    for futures in pending.values():
        for f in futures:
            f.cancel()
    pending.clear()


@paused_gc()
def evaluate(
    gold: Sequence[GoldQuestion],
    predictions: Sequence[Prediction],
    *,
    profile: str | Profile = "xldocbench",
    ignore_missing: bool = False,
    name: str = "run",
    prediction_field: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> RunResult:
    """Score one run: `score_runs` of it alone -- on the shared pool from PARALLEL_MIN questions, in this
    process with `workers=1` (or on one core). `progress(done, total)` is called as its questions are scored."""
    tick = None if progress is None else (lambda _run, done, total: progress(done, total))
    parallel = (usable_cores() if workers is None else workers) > 1
    [(_, result)] = score_runs(gold, [(name, predictions)], profile=profile, ignore_missing=ignore_missing,
                               prediction_field=prediction_field, parallel=parallel, progress=tick)
    return result

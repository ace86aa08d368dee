"""Scoring a run against gold, aggregation (spec 7) and the release report layout.

`evaluate(gold, predictions)` returns a `RunResult` holding every per-question result, the
join counts, and the aggregates; `RunResult.report()` is the release evaluator's JSON object.
Long runs are scored on all cores (processes), with a progress callback.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ._gc import paused_gc
from .aggregate import aggregate, bucket, macro_average, run_groups
from .metrics import Decision, Judgement, QuestionResult, decide
from .model import BREAKDOWNS, GoldQuestion, Prediction
from .problems import Problem
from .profiles import Profile, get_profile, signature
from .registry import MISSING_STATUS, is_success_status
from .workers import bare_main, discard_shared_pool, shared_pool, usable_cores
from .writers import CSV_COLUMNS, ROW_SEP, csv_string, csv_text, open_for_writing, row_dicts, rows_json

__all__ = ["QuestionResult", "RunResult", "evaluate", "extra_prediction_problems"]

PARALLEL_MIN = 20_000  # below this, one process is faster than starting workers
Progress = Callable[[int, int], None]


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


# ----------------------------------------------------------------------------- scoring


def _score_chunk(args: tuple[Profile, list[tuple]]) -> list[Decision]:
    profile, items = args
    return [decide(text, answers, fmt, rule, status, profile) for text, status, answers, fmt, rule in items]


def _shared(x: float) -> float:
    """0.0 and 1.0 -- most scores -- as two shared objects instead of a new float each."""
    return x if 0.0 < x < 1.0 else (_ONE if x else _ZERO)


_ZERO, _ONE = 0.0, 1.0


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
    """Score one run. `progress(done, total)` is called as questions are scored."""
    p = get_profile(profile)
    by_id = {pr.qid: pr for pr in predictions}
    gold_ids = set()
    todo: list[tuple[GoldQuestion, Prediction | None]] = []
    missing: list[str] = []
    for q in gold:
        gold_ids.add(q.qid)
        pr = by_id.get(q.qid)
        if pr is None:
            missing.append(q.qid)
            if ignore_missing:
                continue
        todo.append((q, pr))
    extras = [pr for pr in predictions if pr.qid not in gold_ids]
    problems = extra_prediction_problems(extras)
    items = [
        (pr.text, pr.status, q.answers, q.answer_format, q.verification_rule) if pr is not None
        else (None, None, q.answers, q.answer_format, q.verification_rule)
        for q, pr in todo
    ]
    total = len(items)
    n_workers = workers if workers is not None else usable_cores()
    scores: list[Decision] = []
    pool = shared_pool() if n_workers > 1 and total >= PARALLEL_MIN else None
    if pool is not None:
        from concurrent.futures.process import BrokenProcessPool

        size = max(2_000, total // (n_workers * 8))
        chunks = [(p, items[i : i + size]) for i in range(0, total, size)]
        try:
            with bare_main():
                futures = [pool.submit(_score_chunk, c) for c in chunks]
            for f in futures:
                scores.extend(f.result())
                if progress:
                    progress(len(scores), total)
        except (BrokenProcessPool, OSError):
            # workers could not start or died (no processes allowed): the loop below scores what
            # is left in this process, and the next call starts a new pool
            discard_shared_pool()
        del chunks
    for i in range(len(scores), total, step := max(1, min(500, total // 50 or 1))):
        scores.extend(_score_chunk((p, items[i : i + step])))
        if progress:
            progress(len(scores), total)
    del items
    results = [
        QuestionResult(q, pr, Judgement(
            None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
            MISSING_STATUS if pr is None else pr.status, p, _shared(acc), _shared(f1), _shared(an), rule, threshold, details))
        for (q, pr), (acc, f1, an, rule, threshold, details) in zip(todo, scores)
    ]
    groups = run_groups(gold)
    return RunResult(
        name=name,
        profile=p,
        signature=signature(p, ignore_missing=ignore_missing, prediction_field=prediction_field),
        results=results,
        gold_count=len(gold),
        prediction_count=len(by_id),
        missing_ids=missing,
        extra_ids=[pr.qid for pr in extras],
        ignore_missing=ignore_missing,
        problems=problems,
        groups=groups,
    )



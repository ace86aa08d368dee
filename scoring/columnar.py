"""The command line's path in columns: one run scored, aggregated and written from the gold's and
the predictions' columns (`loaders.load_gold_columns`, `load_prediction_columns`): in one process,
or from FORK_MIN questions in parts forked on every core (`run_columns(workers=...)`).

No per-question object is built: the join is a dict of prediction ids; each distinct (prediction,
status, answers, format, rule) is judged once (`decide`, the one scoring function) and the scores
of a repeated one shared; each breakdown bucket's members are found on columns (each group's
label read once per distinct value) and summed by `aggregate.aggregate_scores`; the rows are
written a batch at a time from columns (`writers.rows_json`, `csv_columns`).
The bytes are those of `RunResult.write_files` (tests/test_columnar.py compares them on generated
inputs with every format, status and kind of damaged row).

With `workers` > 1 and at least FORK_MIN questions scored, the rows are cut into parts, each
scored, encoded and written (JSON rows and CSV lines, to a file of its own beside the output) by a
process forked for it, at most `workers` at once: a part reads the column slices it inherits
(nothing is pickled to it) and puts its three score columns into a mapping shared with this
process. This process meanwhile finds the breakdowns' members, then sums every bucket from the
whole score columns in question order (`aggregate_scores`, as in one process), appends the parts'
CSV lines in order and writes the report's head with the parts' rows after it: the same bytes
(tests/test_bulk.py compares them with one process's).

The result is a `StoredRunResult` whose records (`results`) are made only if asked for, by
reading the files again through the record path (`load_gold`, `load_predictions`, `evaluate`).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import select
import tempfile
import threading
from array import array
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import IO, Any

from ._gc import paused_gc
from .aggregate import aggregate_scores, members_of_parts, partition
from .evaluate import evaluate, extra_prediction_problems
from .loaders import ABSENT, GoldColumns, PredictionColumns
from .metrics import QuestionResult, column_scores
from .model import BREAKDOWNS, to_str, to_str_release
from .profiles import Profile, signature
from .registry import MISSING_STATUS, OVERFLOW_STATUSES, OVERFLOW_TEXT
from .runner import StoredRunResult
from .workers import die_with_parent
from .writers import CSV_COLUMNS, ROW_SEP, columns_are_safe, csv_columns, csv_string, dicts_of, open_for_writing, rows_json

__all__ = ["Joined", "join", "score_columns", "members_of", "write_columns", "run_columns", "FORK_MIN"]

BATCH = 1_000  # rows encoded per call (small enough for its text to stay in the cache)
# From this many questions scored, `run_columns(workers=N>1)` scores, encodes and writes them in
# parts forked N at a time. Below it one process spends less CPU (no fork, no copied pages: at
# 400,000 the forked parts took ~15% more CPU than one process, run_columns alone) and a run is
# short anyway; at 1M the second core is what keeps the wall time under 30 s (bench/README.md).
FORK_MIN = 300_000
PARTS_PER_WORKER = 4  # parts per worker: a part finished early frees its core for the next


class Joined:
    """A run's join with the gold, in columns: `gold_at[k]` is the gold position of the k-th
    question scored (gold order; the missing ones left out under ignore_missing) and `pred_at[k]`
    its prediction's position (None: missing)."""

    __slots__ = ("gold_at", "pred_at", "missing", "extras", "prediction_count")

    def __init__(self, gold_at: Sequence[int] | None, pred_at: list[int | None], missing: list[str], extras: list[int],
                 prediction_count: int) -> None:
        self.gold_at, self.pred_at, self.missing, self.extras = gold_at, pred_at, missing, extras
        self.prediction_count = prediction_count


def join(gold: GoldColumns, preds: PredictionColumns, *, ignore_missing: bool) -> Joined:
    """`evaluate.plan` on columns. `gold_at` is None when every gold question is scored."""
    at = preds.at if preds.at is not None else dict(zip(preds.qid, range(len(preds.qid))))
    pred_at = list(map(at.get, gold.qid))
    missing = [q for q, k in zip(gold.qid, pred_at) if k is None]
    gold_at = None
    if missing and ignore_missing:
        gold_at = [i for i, k in enumerate(pred_at) if k is not None]
        pred_at = [pred_at[i] for i in gold_at]
    matched = len(gold.qid) - len(missing)
    extras: list[int] = []
    if matched < len(at):  # some prediction id is no gold id (the gold's ids are distinct)
        gold_ids = set(gold.qid)
        extras = [k for k, q in enumerate(preds.qid) if q not in gold_ids]
    return Joined(gold_at, pred_at, missing, extras, len(at))


def _picked(col: list, at: Sequence[int] | None) -> list:
    if at is None:
        return col
    if type(at) is range:  # a part of a run whose every gold question is scored: a slice
        return col[at.start : at.stop]
    return [col[i] for i in at]


@paused_gc()
def score_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, profile: Profile
                  ) -> tuple[list[float], list[float], list[float]]:
    """(accuracy, token F1, ANLS) of each question scored, in order: `decide`'s scores
    (`metrics.column_scores`, which is `scores_of` a column at a time)."""
    at = joined.gold_at
    texts, statuses = preds.text, preds.status
    pred_at = joined.pred_at
    if None in pred_at:
        scored = [None if k is None else texts[k] for k in pred_at]
        status = [None if k is None else statuses[k] for k in pred_at]
    else:
        scored = list(map(texts.__getitem__, pred_at))  # type: ignore[arg-type]
        status = list(map(statuses.__getitem__, pred_at))  # type: ignore[arg-type]
    return column_scores(scored, status, _picked(gold.answers, at), _picked(gold.answer_format, at),
                         _picked(gold.verification_rule, at), profile)


# ----------------------------------------------------------------------------- breakdowns


def _text_fn(release: bool) -> Callable[[Any], str]:
    return to_str_release if release else to_str


def _label_reader(gold: GoldColumns, group: str) -> tuple[list, Callable[[int], list[str]]]:
    """(the value each gold question's labels in `group` are made of -- equal values (as keyed by
    `_fast_keys`), equal labels -- and the labels of the question at a position):
    `GoldQuestion.labels` on columns."""
    release, other = gold.release, gold.release_text

    def text_at(i: int) -> Callable[[Any], str]:
        return _text_fn(other.get(i, release))

    if group == "split":
        col = gold.split
        return col, lambda i: [text_at(i)(col[i]) or "unknown"]
    if group == "answer_format":
        raw, given = gold.raw_format, gold.format_given
        return ([r if g else ABSENT for r, g in zip(raw, given)],
                lambda i: [(text_at(i)(raw[i]) if given[i] else "") or "unknown"])
    if group == "question_type":
        types = gold.question_types
        return list(types), lambda i: list(types[i]) or ["unknown"]
    if group == "evidence_source":
        ev = gold.meta["evidence_sources"]

        def sources(i: int) -> list[str]:
            value = ev[i]
            if value is ABSENT or value is None:
                return ["unknown"]
            if not isinstance(value, list):
                value = [value]
            return [s or "unknown" for s in map(text_at(i), value)] or ["unknown"]

        return ev, sources
    col = gold.meta[group]

    def meta_label(i: int) -> list[str]:
        v = col[i]
        if v is ABSENT:
            v = None
        return [v if type(v) is str and v else (text_at(i)(v) or "unknown")]

    return col, meta_label


def _keys(col: list) -> list:
    """Hashable stand-ins for a column's values, equal for values with equal labels: strings as
    they are, lists of strings as tuples, anything else as (type, repr) -- so 1, 1.0 and true stay
    apart, as `aggregate.label_keys` keeps them. A tuple of strings never equals a string nor a
    (type, text) pair."""
    kinds = set(map(type, col))
    if kinds == _STR_ONLY:
        return col
    if list in kinds:
        lists = col if kinds == _LIST_ONLY else [v for v in col if type(v) is list]
        if set(map(type, chain.from_iterable(lists))) <= _STR_ONLY:
            if kinds == _LIST_ONLY:
                return list(map(tuple, col))
            return [tuple(v) if type(v) is list else (v if type(v) is str else _typed(v)) for v in col]
    return [v if type(v) is str else _typed(v) for v in col]


def _typed(value: Any) -> tuple:
    try:
        return type(value), repr(value)
    except RecursionError:  # nested too deeply for repr: a key of its own
        return type(value), id(value)


_STR_ONLY, _LIST_ONLY = {str}, {list}


def members_of(gold: GoldColumns, at: Sequence[int] | None, groups: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """`aggregate.breakdown_members` of the questions scored (gold positions `at`, None: all), in
    columns: group -> label -> ascending positions (a position twice when a question names a label
    twice). Per group the questions are partitioned by key, and the labels read once per key."""
    out = {}
    for g in groups:
        values, labels_at = _label_reader(gold, g)
        keys = values if g == "question_type" else _keys(values)
        if gold.release_text:  # a few questions write their labels otherwise: their keys apart
            keys = [(k, gold.release_text.get(i)) for i, k in enumerate(keys)]
        if at is not None:
            keys = [keys[i] for i in at]
        # each key's labels read once, at the gold position of its first question
        out[g] = members_of_parts(((idx[0] if at is None else at[idx[0]], idx) for idx in partition(keys).values()),
                                  labels_at)
    return out



# ----------------------------------------------------------------------------- the run and its files


def _row_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, acc: list[float], f1: list[float],
                 an: list[float]) -> list[list]:
    """`writers.row_columns` of the questions scored, from columns."""
    at = joined.gold_at
    texts, statuses = preds.text, preds.status
    overflow = OVERFLOW_STATUSES
    pred_at = joined.pred_at
    return [
        _picked(gold.qid, at),
        ["" if k is None else (OVERFLOW_TEXT if statuses[k] in overflow else texts[k]) for k in pred_at],
        [a[0] if a else "" for a in _picked(gold.answers, at)],
        [r if g else "Str" for r, g in zip(_picked(gold.raw_format, at), _picked(gold.format_given, at))],
        [MISSING_STATUS if k is None else statuses[k] for k in pred_at],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in acc],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in f1],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in an],
        _picked(gold.split, at),
        ["unknown" if v is ABSENT else v for v in _picked(gold.meta["domain"], at)],
        ["unknown" if v is ABSENT else v for v in _picked(gold.meta["reasoning_type"], at)],
    ]


def write_columns(run: StoredRunResult, columns: list[list], *, report: str | Path | None, csv_path: str | Path | None,
                  per_question: bool, lens: bool) -> None:
    """The report JSON and the per-question CSV of a run whose rows are `columns` (CSV_COLUMNS
    order): the bytes of `RunResult.write_files`, a batch of rows at a time."""
    with paused_gc(), contextlib.ExitStack() as stack:
        csv_fh = stack.enter_context(open_for_writing(csv_path)) if csv_path else None
        json_fh = stack.enter_context(open_for_writing(report)) if report else None
        if csv_fh is not None:
            csv_fh.write(csv_string((), CSV_COLUMNS))
        sep = None
        if json_fh is not None:
            head, sep, tail = run.report_frame(per_question=per_question, lens=lens)
            json_fh.write(head)
        _write_rows(columns, json_fh if sep is not None else None, csv_fh)
        if json_fh is not None:
            json_fh.write(tail)


def _write_rows(columns: list[list], json_fh: IO[str] | None, csv_fh: IO[str] | None) -> None:
    """Rows (`columns`, CSV_COLUMNS order) as JSON (joined by ROW_SEP) and CSV lines, BATCH at a time."""
    n = len(columns[0])
    for start in range(0, n, BATCH):
        batch = [col[start : start + BATCH] for col in columns]
        if csv_fh is not None:
            csv_fh.write(csv_columns(batch))
        if json_fh is not None:
            if start:
                json_fh.write(ROW_SEP)
            json_fh.write(rows_json(dicts_of(batch), safe=columns_are_safe(batch)))


def run_columns(gold: GoldColumns, preds: PredictionColumns, joined: Joined, *, profile: Profile, name: str,
                ignore_missing: bool, prediction_field: str | None, report: str | Path | None = None,
                csv_path: str | Path | None = None, per_question: bool = True, lens: bool = True, workers: int = 1,
                fork_min: int | None = None) -> StoredRunResult:
    """Score a joined run, write its report and CSV (when named) and return it: `evaluate` +
    `RunResult.write_files`, in columns. With `workers` > 1 and at least `fork_min` (default
    FORK_MIN) questions scored, in parts forked `workers` at a time (`_Parts`), when this process can
    fork (no other thread alive); else here. The same bytes and figures either way."""
    with paused_gc(), contextlib.ExitStack() as stack:
        n = len(joined.pred_at)
        groups = BREAKDOWNS + (("question_type",) if any(gold.question_types) else ())
        extras = [preds.record(k) for k in joined.extras]
        least = FORK_MIN if fork_min is None else fork_min
        forked = workers > 1 and n >= max(1, least) and hasattr(os, "fork") and threading.active_count() == 1
        if forked:
            # the outputs opened (truncated) first, as write_columns opens them: a path that cannot be
            # written is said before the run is scored
            csv_out = stack.enter_context(_open_binary(csv_path)) if csv_path else None
            json_out = stack.enter_context(_open_binary(report)) if report else None
            parts = _Parts(gold, preds, joined, profile, workers=workers, folder=_folder(report, csv_path, per_question),
                           want_json=bool(report) and per_question, want_csv=bool(csv_path), cleanup=stack)
            if csv_out is not None:
                csv_out.write(csv_string((), CSV_COLUMNS).encode("utf-8"))
            # the members are found here while the parts are scored; each part's CSV appended once it
            # and the ones before it are done
            members, (acc, f1, an) = parts.run(lambda: members_of(gold, joined.gold_at, groups),
                                               on_part=None if csv_out is None else lambda k: _copy_into(csv_out, parts.csv_file(k)))

            def columns() -> dict[str, list]:  # made only if asked for (the command line never asks)
                return _run_columns_of(gold, preds, joined, acc, f1, an)
        else:
            acc, f1, an = score_columns(gold, preds, joined, profile)
            rows = _row_columns(gold, preds, joined, acc, f1, an)
            members = members_of(gold, joined.gold_at, groups)

        def build() -> list[QuestionResult]:  # the records, only if asked for: read again by the record path
            return evaluate(gold.records(), preds.records(), profile=profile, ignore_missing=ignore_missing, name=name,
                            prediction_field=prediction_field, workers=1).results

        run = StoredRunResult(
            build=build,
            columns=columns if forked else _run_columns_of(gold, preds, joined, acc, f1, an, rows),
            name=name, profile=profile,
            signature=signature(profile, ignore_missing=ignore_missing, prediction_field=prediction_field),
            gold_count=len(gold), prediction_count=joined.prediction_count, missing_ids=joined.missing,
            extra_ids=[pr.qid for pr in extras], ignore_missing=ignore_missing, problems=extra_prediction_problems(extras),
            groups=groups,
        )
        run._agg = aggregate_scores(members, acc, f1, an)
        if forked:
            run.__dict__["_lens_worker_processes"] = parts.forked
            if json_out is not None:
                head, sep, tail = run.report_frame(per_question=per_question, lens=lens)
                json_out.write(head.encode("utf-8"))
                if sep is not None:
                    for k in range(len(parts.spans)):
                        if k:
                            json_out.write(sep.encode("utf-8"))
                        _copy_into(json_out, parts.json_file(k))
                json_out.write(tail.encode("utf-8"))
        elif report or csv_path:
            write_columns(run, rows, report=report, csv_path=csv_path, per_question=per_question, lens=lens)
    return run


def _run_columns_of(gold: GoldColumns, preds: PredictionColumns, joined: Joined, acc: list[float], f1: list[float],
                    an: list[float], rows: list[list] | None = None) -> dict[str, list]:
    """The run's `columns_of`: taken from its row columns (`_row_columns`) when they were made."""
    if rows is not None:
        qids, predictions, statuses = rows[0], rows[1], rows[4]
    else:
        texts, status_of, overflow = preds.text, preds.status, OVERFLOW_STATUSES
        qids = _picked(gold.qid, joined.gold_at)
        predictions = ["" if k is None else (OVERFLOW_TEXT if status_of[k] in overflow else texts[k]) for k in joined.pred_at]
        statuses = [MISSING_STATUS if k is None else status_of[k] for k in joined.pred_at]
    return {"question_id": qids, "status": statuses, "accuracy": acc, "token_f1": f1, "anls": an,
            "answered": [k is not None for k in joined.pred_at], "prediction": predictions}


# ----------------------------------------------------------------------------- forked parts


def _open_binary(path: str | Path) -> IO[bytes]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "wb")


def _folder(report: str | Path | None, csv_path: str | Path | None, per_question: bool) -> Path | None:
    """Where the part files go: beside the report (or the CSV)."""
    target = report if report and per_question else csv_path
    return Path(target).parent if target else None


def _spans(n: int, parts: int) -> list[range]:
    size = -(-n // parts) if n else 0
    return [range(i, min(n, i + size)) for i in range(0, n, size)] if n else []


def _copy_into(out: IO[bytes], path: str) -> None:
    """Append the file at `path` to `out` (in the kernel where it can)."""
    out.flush()
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        copy = getattr(os, "copy_file_range", None)
        done = 0
        if copy is not None:
            try:
                while done < size and (k := copy(src.fileno(), out.fileno(), size - done)):
                    done += k
            except OSError:  # not on this file system: copied below
                pass
        if done < size:
            src.seek(done)
            out.seek(0, os.SEEK_END)
            while chunk := src.read(1 << 22):
                out.write(chunk)


class _Parts:
    """A run's rows cut into `spans`, each scored, encoded and written by `part(k)` in one of
    `workers` forked processes (`run`), or here when no process could be forked or one failed (where
    its error, if it has one, is raised). The score columns go into `scores`, a mapping shared with
    the forked processes: accuracy, token F1 and ANLS of row i at i, n + i and 2n + i."""

    def __init__(self, gold: GoldColumns, preds: PredictionColumns, joined: Joined, profile: Profile, *, workers: int,
                 folder: Path | None, want_json: bool, want_csv: bool, cleanup: contextlib.ExitStack) -> None:
        self.gold, self.preds, self.joined, self.profile, self.workers = gold, preds, joined, profile, workers
        self.n = n = len(joined.pred_at)
        self.spans = _spans(n, PARTS_PER_WORKER * workers)
        self.shared = mmap.mmap(-1, 24 * n)  # anonymous and shared: what a forked process writes is seen here
        cleanup.callback(self.shared.close)
        self.scores = memoryview(self.shared).cast("d")
        cleanup.callback(self.scores.release)
        self.files = [(self._temp(folder, "json", cleanup) if want_json else None,
                       self._temp(folder, "csv", cleanup) if want_csv else None) for _ in self.spans]
        self.forked = 0  # parts made by forked processes
        self.running: dict[int, tuple[int, bytes]] = {}  # a process's pipe -> (its id, part numbers read in part)
        cleanup.callback(self._stop)

    def json_file(self, k: int) -> str:
        return self.files[k][0]  # type: ignore[return-value]

    def csv_file(self, k: int) -> str:
        return self.files[k][1]  # type: ignore[return-value]

    @staticmethod
    def _temp(folder: Path | None, kind: str, cleanup: contextlib.ExitStack) -> str:
        assert folder is not None
        fd, path = tempfile.mkstemp(prefix=".lens.", suffix=f".{kind}.part", dir=folder)
        os.close(fd)
        cleanup.callback(_unlink, path)
        return path

    def part(self, k: int) -> None:
        """Score, encode and write part k: its scores into `scores`, its rows into its files."""
        span, (json_path, csv_path) = self.spans[k], self.files[k]
        at = self.joined.gold_at
        sub = Joined(span if at is None else at[span.start : span.stop], self.joined.pred_at[span.start : span.stop],
                     [], [], 0)
        acc, f1, an = score_columns(self.gold, self.preds, sub, self.profile)
        n, a, b = self.n, span.start, span.stop
        self.scores[a:b], self.scores[n + a : n + b], self.scores[2 * n + a : 2 * n + b] = (
            array("d", acc), array("d", f1), array("d", an))
        if json_path is None and csv_path is None:
            return
        with contextlib.ExitStack() as stack:
            json_fh = stack.enter_context(open(json_path, "w", encoding="utf-8", newline="")) if json_path else None
            csv_fh = stack.enter_context(open(csv_path, "w", encoding="utf-8", newline="")) if csv_path else None
            _write_rows(_row_columns(self.gold, self.preds, sub, acc, f1, an), json_fh, csv_fh)

    def _fork(self, queue: int) -> bool:
        """Start a process that makes the parts whose numbers it reads from `queue` (4 bytes each) until
        none is left, writing each number to its pipe once that part is done; False when none could be
        forked."""
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return False
        if pid == 0:  # the forked process: parts until the queue is empty, then out
            code = 1
            try:
                os.close(r)
                die_with_parent()
                while len(taken := os.read(queue, 4)) == 4:
                    self.part(int.from_bytes(taken, "little"))
                    os.write(w, taken)
                code = 0
            except BaseException:  # noqa: BLE001 - its part is made again by the parent, which reports the error
                pass
            finally:
                os._exit(code)
        os.close(w)
        self.running[r] = (pid, b"")
        return True

    def run(self, meanwhile: Callable[[], Any], on_part: Callable[[int], None] | None = None) -> tuple[Any, tuple]:
        """Make every part: `workers` processes forked once, each taking the next part from a queue as
        it finishes one; then here, in order, any part no process reported done (none could be
        forked, or one failed). Return (`meanwhile()`, called here once the processes are started,
        and the score columns). `on_part(k)` is called for each part in order once it and those
        before it are done, while later ones are made."""
        count = len(self.spans)
        done = [False] * count
        told = 0
        queue, put = os.pipe()  # every part's number written at once (a pipe holds 64 KiB: 16,384 parts)
        try:
            os.write(put, b"".join(k.to_bytes(4, "little") for k in range(count)))
        finally:
            os.close(put)
        try:
            for _ in range(min(self.workers, count)):
                if not self._fork(queue):
                    break
        finally:
            os.close(queue)
        result = meanwhile()
        while self.running or told < count:
            if self.running:
                for r in select.select(list(self.running), [], [])[0]:
                    pid, pending = self.running[r]
                    got = os.read(r, 4096)
                    if got:
                        pending += got
                        whole = len(pending) - len(pending) % 4
                        for at in range(0, whole, 4):
                            done[int.from_bytes(pending[at : at + 4], "little")] = True
                            self.forked += 1
                        self.running[r] = (pid, pending[whole:])
                        continue
                    del self.running[r]  # the process ended (its queue was empty, or it failed)
                    os.close(r)
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, 0)
            else:  # every process has ended: what none made is made here, where its error is raised
                self.part(told)
                done[told] = True
            while told < count and done[told]:
                if on_part is not None:
                    on_part(told)
                told += 1
        n = self.n
        scores = self.scores
        return result, (scores[:n].tolist(), scores[n : 2 * n].tolist(), scores[2 * n :].tolist())

    def _stop(self) -> None:
        """Processes still running when the run ends early (an error here): killed and reaped."""
        for r, (pid, _) in self.running.items():
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                os.close(r)
        self.running.clear()


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)

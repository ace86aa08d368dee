"""The command line's path for large runs: score, encode and write the per-question rows in
forked workers, each holding a slice of the run, while this process computes the breakdowns.

`RunResult.write_files` builds every record, then every row, in one process: at a million
questions the rows (dicts, JSON text, CSV text) cost as much as the scoring. Here the work on
each question -- judging it, its row dict, its JSON text and its CSV line -- is done once, in
the worker that holds it, and only three score columns come back; this process joins the gold
and the predictions, computes which questions fall in which breakdown bucket meanwhile, sums
the columns in question order, writes the report's head and copies the workers' parts after it.
The bytes are those of `RunResult.write_files` (the release-agreement tests run both).

Workers are forked (they inherit the joined run; nothing is pickled to them), so this path is
for a single-threaded caller such as the CLI: with other threads alive, or one worker, the same
parts are computed in this process.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from ._gc import paused_gc
from .evaluate import (
    CSV_COLUMNS,
    RunResult,
    _rows_json,
    aggregate_scores,
    breakdown_members,
    row_dicts,
    run_groups,
)
from .loaders import load_predictions
from .metrics import decide
from .model import GoldQuestion, Prediction
from .problems import LoadResult
from .profiles import Profile
from .runner import Plan, assemble_lazily

__all__ = ["score_and_write", "read_predictions_aside", "BATCH"]

BATCH = 5_000  # rows encoded per call, as RunResult writes them
_RUN: tuple[list[GoldQuestion], list[Prediction | None], Profile] | None = None  # set before the workers fork


def _part(start: int, stop: int, json_path: str | None, csv_path: str | None) -> tuple[bytes, bytes, bytes, int]:
    """Score questions [start, stop) of the run, write their JSON rows (`_rows_json` batches
    joined as the report joins them) and CSV lines to the two files; return the score columns
    (and the process id, so a caller can tell where the part was made)."""
    assert _RUN is not None
    questions, predictions, p = _RUN
    acc, f1, an = array("d"), array("d"), array("d")
    with paused_gc(), contextlib.ExitStack() as stack:
        jfh = stack.enter_context(open(json_path, "w", encoding="utf-8", newline="")) if json_path else None
        cfh = stack.enter_context(open(csv_path, "w", encoding="utf-8", newline="")) if csv_path else None
        writer = csv.writer(cfh) if cfh else None
        for i in range(start, stop, BATCH):
            qs, prs = questions[i : min(stop, i + BATCH)], predictions[i : min(stop, i + BATCH)]
            scores = [decide(None, q.answers, q.answer_format, q.verification_rule, None, p) if pr is None
                      else decide(pr.text, q.answers, q.answer_format, q.verification_rule, pr.status, p)
                      for q, pr in zip(qs, prs)]
            a, f, n = [s[0] for s in scores], [s[1] for s in scores], [s[2] for s in scores]
            acc.extend(a)
            f1.extend(f)
            an.extend(n)
            if jfh is None and writer is None:
                continue
            rows = row_dicts(qs, prs, a, f, n)
            if jfh is not None:
                if i > start:
                    jfh.write(",\n    ")
                jfh.write(_rows_json(rows))
            if writer is not None:
                writer.writerows(row.values() for row in rows)
    return acc.tobytes(), f1.tobytes(), an.tobytes(), os.getpid()


def _spans(n: int, parts: int) -> list[tuple[int, int]]:
    size = -(-n // parts) if n else 0
    return [(i, min(n, i + size)) for i in range(0, n, size)] if n else []


def _copy_into(out: BinaryIO, path: str) -> None:
    """Append the file at `path` to `out` (in the kernel where it can)."""
    out.flush()
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        copy = getattr(os, "copy_file_range", None)
        done = 0
        if copy is not None:
            try:
                while done < size and (n := copy(src.fileno(), out.fileno(), size - done)):
                    done += n
            except OSError:  # not on this file system: copied below
                pass
        if done < size:
            src.seek(done)
            out.seek(0, os.SEEK_END)
            while chunk := src.read(1 << 22):
                out.write(chunk)


@paused_gc()
def score_and_write(gold: Sequence[GoldQuestion], the_plan: Plan, *, profile: Profile, name: str = "run",
                    ignore_missing: bool = False, prediction_field: str | None = None,
                    report: str | Path | None = None, csv_path: str | Path | None = None,
                    per_question: bool = True, lens: bool = True, workers: int = 2) -> RunResult:
    """Score the planned run and write its report and CSV (either may be None) with the bytes of
    `RunResult.write_files`; return the run (scores as columns, records built only if asked for)."""
    global _RUN
    qs, prs = the_plan.questions, the_plan.predictions
    n = len(qs)
    fork = workers > 1 and threading.active_count() == 1 and hasattr(os, "fork") and n >= 2 * BATCH
    spans = _spans(n, 4 * workers if fork else 1)
    want_json = bool(report) and per_question
    tmp_dir = Path(report if want_json else csv_path).parent if (want_json or csv_path) else None  # type: ignore[arg-type]
    parts: list[tuple[str | None, str | None]] = []
    with contextlib.ExitStack() as cleanup:
        def temp(kind: str) -> str:
            assert tmp_dir is not None
            tmp_dir.mkdir(parents=True, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=f".{name}.", suffix=f".{kind}.part", dir=tmp_dir)
            os.close(fd)
            cleanup.callback(_unlink, path)
            return path

        for _ in spans:
            parts.append((temp("json") if want_json else None, temp("csv") if csv_path else None))
        groups = run_groups(gold)
        members = None
        _RUN = (qs, prs, profile)
        try:
            columns = None
            if fork:
                from concurrent.futures import ProcessPoolExecutor
                from concurrent.futures.process import BrokenProcessPool
                from multiprocessing import get_context

                try:
                    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
                        futures = [pool.submit(_part, a, b, j, c) for (a, b), (j, c) in zip(spans, parts)]
                        members = breakdown_members(qs, groups)  # meanwhile, in this process
                        columns = [f.result() for f in futures]
                except (BrokenProcessPool, OSError):  # no processes allowed here: the parts are made below
                    columns = None
            if columns is None:
                columns = [_part(a, b, j, c) for (a, b), (j, c) in zip(spans, parts)]
        finally:
            _RUN = None
        if members is None:
            members = breakdown_members(qs, groups)
        acc, f1, an = (_joined([col[k] for col in columns]) for k in range(3))  # type: ignore[misc]
        run = assemble_lazily(gold, the_plan, _rescore, acc, f1, an, profile=profile, name=name,
                              ignore_missing=ignore_missing, prediction_field=prediction_field)
        run._agg = aggregate_scores(members, acc, f1, an)
        run.__dict__["_lens_worker_processes"] = len({col[3] for col in columns} - {os.getpid()})
        if csv_path:
            header = io.StringIO(newline="")
            csv.writer(header).writerow(CSV_COLUMNS)
            Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
            with open(csv_path, "wb") as out:
                out.write(header.getvalue().encode("utf-8"))
                for _, c in parts:
                    _copy_into(out, c)  # type: ignore[arg-type]
        if report:
            head, sep, tail = run.report_frame(per_question=per_question, lens=lens)
            Path(report).parent.mkdir(parents=True, exist_ok=True)
            with open(report, "wb") as out:
                out.write(head.encode("utf-8"))
                if sep is not None:
                    first = True
                    for j, _ in parts:
                        if j and os.path.getsize(j):
                            if not first:
                                out.write(sep.encode("utf-8"))
                            _copy_into(out, j)
                            first = False
                out.write(tail.encode("utf-8"))
    return run


def _joined(parts: list[bytes]) -> list[float]:
    """The parts' score columns (array("d") bytes) as one list, in order."""
    out: list[float] = []
    for b in parts:
        out += array("d", b).tolist()
    return out


def _rescore() -> list:
    """The records' decisions were not kept: `assemble_lazily` scores the run again if they are asked for."""
    raise ValueError("decisions not kept")


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


# ----------------------------------------------------------------------------- reading beside the gold

ASIDE_MIN_BYTES = 1 << 20  # a smaller prediction file is read faster than a process starts


def _columns_of_predictions(path: str, prediction_field: str | None) -> tuple:
    """In a forked process: `load_predictions`, its records sent back as columns (pickling a
    million records one by one would cost what reading them does)."""
    with paused_gc():
        res = load_predictions(path, prediction_field=prediction_field)
        items = res.items
        fixed = ([p.qid for p in items], [p.text for p in items], [p.status for p in items], [p.file for p in items],
                 [p.line for p in items], [p.has_status for p in items])
        evidence = [(k, p.evidence_pages, p.evidence) for k, p in enumerate(items) if p.evidence_pages or p.evidence]
        res.items = []
        return res, fixed, evidence


def _rebuilt(sent: tuple) -> LoadResult[Prediction]:
    res, (qids, texts, statuses, files, lines, has_status), evidence = sent
    with paused_gc():
        res.items = list(map(Prediction, qids, texts, statuses, files, lines, has_status))
        for k, pages, ev in evidence:
            res.items[k].evidence_pages, res.items[k].evidence = pages, ev
    return res


def read_predictions_aside(path: str | Path, *, prediction_field: str | None = None) -> Callable[[], LoadResult[Prediction]]:
    """Start reading a prediction file in a forked process, so that it is read while this process
    reads the gold; return the function that gives its `load_predictions` result (read here if the
    process could not be used). Small files, and callers with other threads alive, read it here
    when asked."""
    def here() -> LoadResult[Prediction]:
        return load_predictions(path, prediction_field=prediction_field)

    try:
        big = os.path.getsize(path) >= ASIDE_MIN_BYTES
    except OSError:
        big = False
    if not (big and hasattr(os, "fork") and threading.active_count() == 1):
        return here
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    try:
        pool = ProcessPoolExecutor(max_workers=1, mp_context=get_context("fork"))
        future = pool.submit(_columns_of_predictions, str(path), prediction_field)
    except (OSError, ValueError):
        return here

    def result() -> LoadResult[Prediction]:
        try:
            return _rebuilt(future.result())
        except Exception:  # the process died or could not send its result: read the file here
            return here()
        finally:
            pool.shutdown(wait=True)

    return result


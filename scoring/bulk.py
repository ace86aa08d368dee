"""The command line's path for large runs: the run is scored, encoded and written a part at a
time by processes forked for the parts, while this process reads the gold and computes the
breakdowns.

`RunResult.write_files` builds every record, then every row, in one process: at a million
questions the rows (dicts, JSON text, CSV text) cost as much as the scoring. Here the work on
each question -- judging it, its row dict, its JSON text, its CSV line and its breakdown
buckets -- is done once, in the process that holds its part, and only score columns come back:
the part's three, and its values in each bucket (`_part`, `_Parts`). This process reads the gold
meanwhile; it joins each finished part's bucket values to the earlier parts' (summed once, in
question order: the sums of `aggregate`), appends its CSV lines, and at the end writes the
report's head and copies the parts' JSON rows after it (`_finish`). It walks no question after
a part is forked: a forked process shares its parent's pages, and each page the parent then
writes to (a reference count is a write) is copied. The bytes are those of `RunResult.write_files` (the
release-agreement tests and tests/test_bulk.py compare them).

`score_and_write` does this for a run already joined. The CLI starts earlier (`Streamed`): the
prediction file is read by a forked process while the gold is read here (`Aside`), and
`load_gold` hands over its questions in chunks, each joined and started as a part as soon as
the predictions are in.

Processes are forked (they inherit their part; nothing is pickled to them), so this is for a
single-threaded caller such as the CLI: with other threads alive, no fork, or one worker, the
same parts are made in this process.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from ._gc import paused_gc
from .aggregate import bucket, label_keys, labels_of, run_groups
from .evaluate import RunResult
from .loaders import estimated_rows, load_predictions
from .metrics import decide
from .model import BREAKDOWNS, GoldQuestion, Prediction
from .problems import LoadResult
from .profiles import Profile
from .runner import Plan, assemble_lazily
from .workers import die_with_parent
from .writers import CSV_COLUMNS, batch_is_safe, csv_columns, csv_string, dicts_of, row_columns, rows_json

__all__ = ["score_and_write", "read_predictions_aside", "Aside", "Streamed", "BATCH"]

BATCH = 5_000  # rows encoded per call, as RunResult writes them
_RUN: tuple[list[GoldQuestion], list[Prediction | None], Profile] | None = None  # set before the workers fork
ALL_GROUPS = BREAKDOWNS + ("question_type",)  # every group run_groups can name


def _part(start: int, stop: int, json_path: str | None, csv_path: str | None) -> tuple[bytes, bytes, bytes, int, dict]:
    """Score questions [start, stop) of the run, write their JSON rows (`rows_json` batches
    joined as the report joins them) and CSV lines to the two files; return the score columns,
    the process id (so a caller can tell where the part was made) and the part's values in each
    breakdown bucket (every group `run_groups` can name: the caller keeps those of its run)."""
    assert _RUN is not None
    questions, predictions, p = _RUN
    acc, f1, an = array("d"), array("d"), array("d")
    with paused_gc(), contextlib.ExitStack() as stack:
        jfh = stack.enter_context(open(json_path, "w", encoding="utf-8", newline="")) if json_path else None
        cfh = stack.enter_context(open(csv_path, "w", encoding="utf-8", newline="")) if csv_path else None
        for i in range(start, stop, BATCH):
            qs, prs = questions[i : min(stop, i + BATCH)], predictions[i : min(stop, i + BATCH)]
            scores = [decide(None, q.answers, q.answer_format, q.verification_rule, None, p) if pr is None
                      else decide(pr.text, q.answers, q.answer_format, q.verification_rule, pr.status, p)
                      for q, pr in zip(qs, prs)]
            a, f, n = [s[0] for s in scores], [s[1] for s in scores], [s[2] for s in scores]
            acc.extend(a)
            f1.extend(f)
            an.extend(n)
            if jfh is None and cfh is None:
                continue
            columns = row_columns(qs, prs, a, f, n)
            if jfh is not None:
                if i > start:
                    jfh.write(",\n    ")
                jfh.write(rows_json(dicts_of(columns), safe=batch_is_safe(qs, a + f + n)))
            if cfh is not None:
                cfh.write(csv_columns(columns))
    # the part's share of every breakdown bucket: its values there, in question order (the
    # caller joins the parts' shares in part order, so each bucket sums in question order)
    return acc.tobytes(), f1.tobytes(), an.tobytes(), os.getpid(), bucket_shares(questions[start:stop], acc, f1, an)


_OWN_FIELDS = frozenset({"split", "answer_format", "question_type"})  # groups read from the question, not its metadata
_FEW_LABELS = 64  # up to this many labels in a group, each label's positions are found by one pass over the codes


def bucket_shares(questions: list[GoldQuestion], acc: array, f1: array, an: array,
                  groups: Sequence[str] = ALL_GROUPS) -> dict[str, dict[str, tuple[bytes, bytes, bytes]]]:
    """group -> label -> the three score columns' values at `breakdown_members(questions)[group][label]`
    (ascending positions; a position twice when a question names a label twice), as arrays' bytes.

    Computed on columns. Each question gets a code: the first position of a question with an
    equal key in the group (`label_keys`: equal keys, equal labels) -- for metadata groups the
    keys are read once per distinct metadata dict (the loader shares equal ones). Labels are read
    once per code; each label's positions are then taken with numpy, by one pass over the codes
    (few labels) or by a stable sort of every (question, label) pair (many). A third of the time
    of the position lists, and O(n log n) however many labels a group has."""
    import numpy as np

    n = len(questions)
    cols = [np.frombuffer(c, dtype=np.float64) for c in (acc, f1, an)]
    metas = [q.metadata for q in questions]
    by_meta: dict[int, int] = {}  # id of a metadata dict -> the first position holding it
    meta_codes = np.fromiter(map(by_meta.setdefault, map(id, metas), range(n)), dtype=np.intp, count=n)
    meta_firsts = list(by_meta.values())
    out: dict[str, dict[str, tuple[bytes, bytes, bytes]]] = {}

    def values_at(idx: np.ndarray) -> tuple[bytes, bytes, bytes]:
        return cols[0][idx].tobytes(), cols[1][idx].tobytes(), cols[2][idx].tobytes()

    for g in groups:
        first: dict = {}  # key -> the first position found holding it
        if g in _OWN_FIELDS:
            codes = np.fromiter(map(first.setdefault, label_keys(questions, metas, g), range(n)), dtype=np.intp, count=n)
        else:
            keys = label_keys([questions[f] for f in meta_firsts], [metas[f] for f in meta_firsts], g)
            table = np.zeros(n, dtype=np.intp)
            table[meta_firsts] = list(map(first.setdefault, keys, meta_firsts))
            codes = table[meta_codes]
        labels_of_code = {f: labels_of(questions[f], g) for f in first.values()}
        named: dict[str, dict[int, int]] = {}  # label -> code -> how many times that code's questions name it
        for f, labels in labels_of_code.items():
            for label in labels:
                times = named.setdefault(label, {})
                times[f] = times.get(f, 0) + 1
        positions = np.arange(n)
        shares = out[g] = {}
        if len(named) <= _FEW_LABELS:
            for label, times in named.items():
                per_code = np.zeros(n, dtype=np.intp)
                per_code[list(times)] = list(times.values())
                shares[label] = values_at(np.repeat(positions, per_code[codes]))
            continue
        label_ids = {label: k for k, label in enumerate(named)}
        # many labels: every (question, label) pair laid out in question order, then sorted by label
        count = np.zeros(n, dtype=np.intp)  # at a code: how many labels its questions name
        start = np.zeros(n, dtype=np.intp)  # ... and where they begin in `flat`
        flat: list[int] = []
        for f, labels in labels_of_code.items():
            start[f], count[f] = len(flat), len(labels)
            flat += [label_ids[label] for label in labels]
        per_question = count[codes]
        owner = np.repeat(positions, per_question)
        nth = np.arange(len(owner)) - np.repeat(np.cumsum(per_question) - per_question, per_question)
        label_of_pair = np.asarray(flat, dtype=np.intp)[start[codes][owner] + nth]
        order = np.argsort(label_of_pair, kind="stable")
        owner = owner[order]
        bounds = np.searchsorted(label_of_pair[order], np.arange(len(label_ids) + 1))
        for label, k in label_ids.items():
            shares[label] = values_at(owner[bounds[k] : bounds[k + 1]])
    return out


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


def _part_process(send, n: int, json_path: str | None, csv_path: str | None) -> None:
    """A forked process's work: `_part` on the part it inherited, its result sent back (or, if it
    failed, None: the part is then made again in the parent, where the error is reported)."""
    die_with_parent()
    try:
        result = _part(0, n, json_path, csv_path)
    except BaseException:  # noqa: BLE001 - reported by the parent, which makes the part again
        result = None
    try:
        send.send(result)
    finally:
        send.close()


class _Parts:
    """The parts of one run, in order: each scored, encoded and written by `_part` in a process
    forked as soon as its questions are known (at most `workers` at once), or in this process when
    processes cannot be used (another thread alive, no fork, one worker)."""

    def __init__(self, profile: Profile, *, name: str, folder: Path | None, want_json: bool, want_csv: bool,
                 workers: int, cleanup: contextlib.ExitStack) -> None:
        self.profile, self.name, self.folder = profile, name, folder
        self.want_json, self.want_csv, self.workers, self.cleanup = want_json, want_csv, workers, cleanup
        self.fork = workers > 1 and hasattr(os, "fork") and threading.active_count() == 1
        self.parts: list[dict] = []
        self.waiting: list[dict] = []  # added, not started yet (every process busy)

    def add(self, qs: list[GoldQuestion], prs: list[Prediction | None]) -> None:
        part = {"qs": qs, "prs": prs, "files": (self._temp("json") if self.want_json else None,
                                                self._temp("csv") if self.want_csv else None),
                "proc": None, "conn": None, "result": None}
        self.parts.append(part)
        self.waiting.append(part)
        self.start_waiting()

    def extend_waiting(self, qs: list[GoldQuestion], prs: list[Prediction | None]) -> bool:
        """Add these questions to the end of the last part, if it has not started; say whether they were."""
        if not (self.waiting and self.waiting[-1] is self.parts[-1]):
            return False
        self.parts[-1]["qs"] = self.parts[-1]["qs"] + qs
        self.parts[-1]["prs"] = self.parts[-1]["prs"] + prs
        return True

    def _temp(self, kind: str) -> str:
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f".{self.name}.", suffix=f".{kind}.part", dir=self.folder)
        os.close(fd)
        self.cleanup.callback(_unlink, path)
        return path

    def start_waiting(self) -> None:
        """Collect what finished processes sent, then start waiting parts in free slots."""
        for part in self.parts:
            if part["conn"] is not None and part["result"] is None and part["conn"].poll():
                self._receive(part)
        busy = sum(1 for p in self.parts if p["conn"] is not None and p["result"] is None)
        while self.fork and self.waiting and busy < self.workers:
            self._start(self.waiting.pop(0))
            busy += 1

    def _start(self, part: dict) -> None:
        global _RUN
        from multiprocessing import get_context

        import numpy  # noqa: F401 - imported once here, inherited by every part (bucket_shares)

        ctx = get_context("fork")
        _RUN = (part["qs"], part["prs"], self.profile)
        try:
            receive, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_part_process, args=(send, len(part["qs"]), *part["files"]), daemon=True)
            proc.start()
            send.close()
        except (OSError, ValueError):  # no processes here: this part and the rest are made in this process
            self.fork = False
            self.waiting.insert(0, part)
            return
        finally:
            _RUN = None
        part["proc"], part["conn"] = proc, receive

    def _receive(self, part: dict) -> None:
        try:
            part["result"] = part["conn"].recv()
        except (EOFError, OSError):  # the process died
            part["result"] = None
        part["conn"].close()
        part["proc"].join()
        part["conn"] = None
        if part["result"] is None:
            part["result"] = self._here(part)

    def _here(self, part: dict) -> tuple:
        global _RUN
        _RUN = (part["qs"], part["prs"], self.profile)
        try:
            return _part(0, len(part["qs"]), *part["files"])
        finally:
            _RUN = None

    def results(self, on_part: Callable[[int, tuple], None] | None = None) -> list[tuple]:
        """Every part's result, in order: waits for the processes, starting waiting parts as
        slots free up, and makes here what could not be forked. `on_part(k, result)` is called for
        each part in order as soon as it and the parts before it are done, while later ones work."""
        from multiprocessing.connection import wait

        told = 0

        def tell() -> None:
            nonlocal told
            while on_part is not None and told < len(self.parts) and self.parts[told]["result"] is not None:
                on_part(told, self.parts[told]["result"])
                told += 1

        while True:
            self.start_waiting()
            tell()
            running = [p["conn"] for p in self.parts if p["conn"] is not None and p["result"] is None]
            if not running:
                break
            wait(running)
        for part in self.parts:
            if part["result"] is None:
                part["result"] = self._here(part)
        tell()
        self.waiting.clear()
        return [p["result"] for p in self.parts]

    def abort(self) -> None:
        for part in self.parts:
            if part["conn"] is not None and part["result"] is None:
                part["proc"].kill()
                part["proc"].join()
                part["conn"].close()
                part["conn"] = None
        self.waiting.clear()


def _folder(report: str | Path | None, csv_path: str | Path | None, per_question: bool) -> Path | None:
    """Where the part files go: beside the report (or the CSV)."""
    target = report if report and per_question else csv_path
    return Path(target).parent if target else None


@paused_gc()
def score_and_write(gold: Sequence[GoldQuestion], the_plan: Plan, *, profile: Profile, name: str = "run",
                    ignore_missing: bool = False, prediction_field: str | None = None,
                    report: str | Path | None = None, csv_path: str | Path | None = None,
                    per_question: bool = True, lens: bool = True, workers: int = 2) -> RunResult:
    """Score the planned run and write its report and CSV (either may be None) with the bytes of
    `RunResult.write_files`; return the run (scores as columns, records built only if asked for)."""
    qs, prs = the_plan.questions, the_plan.predictions
    with contextlib.ExitStack() as cleanup:
        parts = _Parts(profile, name=name, folder=_folder(report, csv_path, per_question), want_json=bool(report) and per_question,
                       want_csv=bool(csv_path), workers=workers, cleanup=cleanup)
        n_parts = 4 * workers if parts.fork and len(qs) >= 2 * BATCH else 1
        for a, b in _spans(len(qs), n_parts):
            parts.add(qs[a:b], prs[a:b])
        return _finish(gold, the_plan, parts, profile=profile, name=name, ignore_missing=ignore_missing,
                       prediction_field=prediction_field, report=report, csv_path=csv_path, per_question=per_question, lens=lens)


def _finish(gold: Sequence[GoldQuestion], the_plan: Plan, parts: _Parts, *, profile: Profile, name: str, ignore_missing: bool,
            prediction_field: str | None, report: str | Path | None, csv_path: str | Path | None, per_question: bool,
            lens: bool) -> RunResult:
    """The run from its parts: each part taken as it is done (in order), its scores and bucket
    values gathered, its CSV lines appended to the CSV. Then the report's head, and the parts'
    rows after it."""
    buckets = _Buckets(run_groups(gold))
    files = [p["files"] for p in parts.parts]
    with contextlib.ExitStack() as stack:
        csv_out = None
        if csv_path:
            Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
            csv_out = stack.enter_context(open(csv_path, "wb"))
            csv_out.write(csv_string((), CSV_COLUMNS).encode("utf-8"))

        def take(k: int, result: tuple) -> None:
            buckets.add(result)
            if csv_out is not None:
                _copy_into(csv_out, files[k][1])

        columns = parts.results(on_part=take)
    acc, f1, an = buckets.columns()
    run = assemble_lazily(gold, the_plan, _rescore, acc, f1, an, profile=profile, name=name,
                          ignore_missing=ignore_missing, prediction_field=prediction_field, columns_later=True)
    run._agg = (bucket(acc, f1, an), buckets.breakdowns())
    run.__dict__["_lens_worker_processes"] = len({col[3] for col in columns} - {os.getpid()})
    if report:
        head, sep, tail = run.report_frame(per_question=per_question, lens=lens)
        Path(report).parent.mkdir(parents=True, exist_ok=True)
        with open(report, "wb") as out:
            out.write(head.encode("utf-8"))
            if sep is not None:
                first = True
                for j, _ in files:
                    if j and os.path.getsize(j):
                        if not first:
                            out.write(sep.encode("utf-8"))
                        _copy_into(out, j)
                        first = False
            out.write(tail.encode("utf-8"))
    return run


class _Buckets:
    """The breakdowns of `aggregate_scores`, gathered a part at a time (in order): each part
    brings its values in each bucket, in question order, so that a bucket's values joined part
    after part are in question order, as `_bucket_at` reads them, and are summed once at the
    end: the same sums."""

    def __init__(self, groups: Sequence[str]) -> None:
        self.groups = groups
        self.acc, self.f1, self.an = array("d"), array("d"), array("d")
        self.values: dict[str, dict[str, tuple[array, array, array]]] = {g: {} for g in groups}

    def add(self, result: tuple) -> None:
        for col, b in zip((self.acc, self.f1, self.an), result[:3]):
            col.frombytes(b)
        shares = result[4]
        for g in self.groups:
            values = self.values[g]
            for label, share in shares[g].items():
                if label not in values:
                    values[label] = (array("d"), array("d"), array("d"))
                for col, b in zip(values[label], share):
                    col.frombytes(b)

    def columns(self) -> tuple[list[float], list[float], list[float]]:
        return self.acc.tolist(), self.f1.tolist(), self.an.tolist()

    def breakdowns(self) -> dict:
        return {g: {label: bucket(*self.values[g][label]) for label in sorted(self.values[g])} for g in self.groups}


def _rescore() -> list:
    """The records' decisions were not kept: `assemble_lazily` scores the run again if they are asked for."""
    raise ValueError("decisions not kept")


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


# ----------------------------------------------------------------------------- reading beside the gold

ASIDE_MIN_BYTES = 1 << 20  # a smaller prediction file is read faster than a process starts


def _columns_of_predictions(path: str, prediction_field: str | None, release: bool = False) -> tuple:
    """In a forked process: `load_predictions`, its records sent back as packed columns (pickling
    a million records one by one would cost what reading them does, and even a list of a million
    strings costs a second: pickle remembers every object it wrote)."""
    with paused_gc():
        res = load_predictions(path, prediction_field=prediction_field, release=release)
        items = res.items
        fixed = (_packed([p.qid for p in items]), _packed([p.text for p in items]), _coded([p.status for p in items]),
                 _coded([p.file for p in items]), _packed_ints([p.line for p in items]))
        evidence = [(k, p.evidence_pages, p.evidence) for k, p in enumerate(items) if p.evidence_pages or p.evidence]
        res.items = []
        return res, fixed, evidence


_SEP = "\x00"


def _packed(strings: list[str]) -> tuple:
    """Strings as one string joined by NUL (split back in C), or as the list when one holds a NUL."""
    try:
        joined = _SEP.join(strings)
    except TypeError:  # not all strings
        return ("list", strings)
    if joined.count(_SEP) == len(strings) - 1:  # none holds a NUL (and the list is not empty)
        return ("joined", joined)
    return ("list", strings)


def _unpacked(packed: tuple) -> list:
    kind, value = packed
    return value if kind == "list" else value.split(_SEP)


def _coded(values: list[str]) -> tuple[list[str], array]:
    """Strings with few distinct ones (statuses, file names): the distinct ones and each value's index among them."""
    index: dict[str, int] = {}
    codes = array("I", [index.setdefault(v, len(index)) for v in values])
    return list(index), codes


def _uncoded(coded: tuple[list[str], array]) -> list[str]:
    distinct, codes = coded
    return list(map(distinct.__getitem__, codes))


def _packed_ints(values: list) -> tuple:
    """Line numbers as an array, or as the list when one is not a 64-bit integer (None: a JSON list file)."""
    try:
        return ("array", array("q", values))
    except (TypeError, OverflowError):
        return ("list", values)


def _rebuilt(sent: tuple) -> LoadResult[Prediction]:
    res, (qids, texts, statuses, files, lines), evidence = sent
    with paused_gc():
        columns = (_unpacked(qids), _unpacked(texts), _uncoded(statuses), _uncoded(files),
                   lines[1] if lines[0] == "list" else lines[1].tolist())
        res.items = list(map(Prediction, *columns))
        for k, pages, ev in evidence:
            res.items[k].evidence_pages, res.items[k].evidence = pages, ev
    return res


class Aside:
    """A prediction file being read by a forked process (or, for a small file or a caller with
    other threads alive, read here when asked): `done()` says whether its records are ready,
    calling it returns the `load_predictions` result. No thread is started here, so that the
    caller can still fork its own workers."""

    def __init__(self, path: str | Path, prediction_field: str | None, release: bool = False) -> None:
        self.path, self.field, self.release = path, prediction_field, release
        self.proc = self.conn = None
        try:
            big = os.path.getsize(path) >= ASIDE_MIN_BYTES
        except OSError:
            big = False
        if big and hasattr(os, "fork") and threading.active_count() == 1:
            from multiprocessing import get_context

            ctx = get_context("fork")
            try:
                receive, send = ctx.Pipe(duplex=False)
                self.proc = ctx.Process(target=_send_predictions, args=(send, str(path), prediction_field, release), daemon=True)
                self.proc.start()
                send.close()
                self.conn = receive
            except (OSError, ValueError):
                self.proc = self.conn = None

    def done(self) -> bool:
        return self.conn is None or self.conn.poll()

    def __call__(self) -> LoadResult[Prediction]:
        if self.conn is not None:
            try:
                sent = self.conn.recv()
                if sent is not None:
                    return _rebuilt(sent)
            except (EOFError, OSError):  # the process died: the file is read here
                pass
            finally:
                self.conn.close()
                self.conn = None
                if self.proc is not None:
                    self.proc.join()
        return load_predictions(self.path, prediction_field=self.field, release=self.release)


def _send_predictions(send, path: str, prediction_field: str | None, release: bool = False) -> None:
    die_with_parent()
    try:
        sent = _columns_of_predictions(path, prediction_field, release)
    except BaseException:  # noqa: BLE001 - read again in the parent, which reports what is wrong
        sent = None
    try:
        send.send(sent)
    finally:
        send.close()


def read_predictions_aside(path: str | Path, *, prediction_field: str | None = None, release: bool = False) -> Aside:
    """Start reading a prediction file in a forked process, so that it is read while this process
    reads the gold (see `Aside`); `release` as in `load_predictions`."""
    return Aside(path, prediction_field, release)


class Streamed:
    """One run scored while its gold is still being read. Hand `gold_chunk` to `load_gold` as
    its `on_chunk`: once the predictions (read `aside`) are in, each new chunk of questions is
    joined with them and its part started in a forked process, so that scoring overlaps reading.
    Then `predictions()`, `plan(gold)` (evaluate's join, equal to `runner.plan`) and `finish(...)`
    (or `abort()`), inside `with`: the part files are removed on leaving it."""

    def __init__(self, aside: Aside, *, profile: Profile, name: str, ignore_missing: bool, report: str | Path | None,
                 csv_path: str | Path | None, per_question: bool, workers: int) -> None:
        self.aside, self.profile, self.name, self.ignore_missing = aside, profile, name, ignore_missing
        self.report, self.csv_path, self.per_question = report, csv_path, per_question
        self.cleanup = contextlib.ExitStack()
        self.parts = _Parts(profile, name=name, folder=_folder(report, csv_path, per_question),
                            want_json=bool(report) and per_question, want_csv=bool(csv_path), workers=workers,
                            cleanup=self.cleanup)
        self.preds: LoadResult[Prediction] | None = None
        self.by_id: dict[str, Prediction] | None = None
        self.joined = 0
        self.questions: list[GoldQuestion] = []
        self.aligned: list[Prediction | None] = []
        self.missing: list[str] = []
        self.matched = 0  # gold questions joined with a prediction
        self.chunk = 0

    def __enter__(self) -> Streamed:
        return self

    def __exit__(self, *exc) -> None:
        self.parts.abort()
        self.cleanup.close()

    def chunk_size(self, gold_paths: Sequence[str | Path]) -> int:
        """Questions per part: about four parts per worker, from the gold files' sizes and the
        length of their first lines."""
        estimate = estimated_rows(gold_paths)
        self.chunk = max(2 * BATCH, min(125_000, estimate // (4 * max(1, self.parts.workers))))
        return self.chunk

    def gold_chunk(self, items: list[GoldQuestion], start: int, end: int) -> None:
        if self.preds is None and self.aside.done():
            self.predictions()
        if self.by_id:
            self._join(items, end)
        self.parts.start_waiting()

    def predictions(self) -> LoadResult[Prediction]:
        if self.preds is None:
            self.preds = self.aside()
            # nothing to score (an unreadable or empty file): no part is started; the caller reports it
            self.by_id = {pr.qid: pr for pr in self.preds.items} if self.preds.items and not self.preds.unreadable else {}
        return self.preds

    def _join(self, items: list[GoldQuestion], end: int, *, last: bool = False) -> None:
        assert self.by_id is not None
        get = self.by_id.get
        while self.joined < end:
            stop = min(end, self.joined + (self.chunk or end))
            qs = items[self.joined : stop]
            prs = [get(q.qid) for q in qs]
            self.joined = stop
            missing = [q.qid for q, pr in zip(qs, prs) if pr is None]
            self.missing += missing
            self.matched += len(qs) - len(missing)
            if missing and self.ignore_missing:
                kept = [(q, pr) for q, pr in zip(qs, prs) if pr is not None]
                qs, prs = [q for q, _ in kept], [pr for _, pr in kept]
            self.questions += qs
            self.aligned += prs
            # a small rest of the gold joins the last part if that has not started (rather than
            # waiting alone for a free process at the end)
            if qs and not (last and stop == end and len(qs) < self.chunk // 2 and self.parts.extend_waiting(qs, prs)):
                self.parts.add(qs, prs)

    def plan(self, gold: Sequence[GoldQuestion]) -> Plan:
        """evaluate's join of the whole run (the rest of the gold joined here)."""
        preds = self.predictions()
        if self.by_id:
            self._join(list(gold) if not isinstance(gold, list) else gold, len(gold), last=True)
        else:  # nothing to score: the join runner.plan makes, without parts
            from .runner import plan

            return plan(gold, preds.items, ignore_missing=self.ignore_missing)
        extras: list[Prediction] = []
        if self.matched < len(self.by_id):  # some prediction id is no gold id (the gold's ids are distinct)
            gold_ids = {q.qid for q in gold}
            extras = [pr for pr in preds.items if pr.qid not in gold_ids]
        return Plan(self.questions, self.aligned, self.missing, extras, len(self.by_id))

    def finish(self, gold: Sequence[GoldQuestion], the_plan: Plan, *, prediction_field: str | None, lens: bool) -> RunResult:
        return _finish(gold, the_plan, self.parts, profile=self.profile, name=self.name, ignore_missing=self.ignore_missing,
                       prediction_field=prediction_field, report=self.report, csv_path=self.csv_path,
                       per_question=self.per_question, lens=lens)

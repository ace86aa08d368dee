"""The cache folder's Parquet entries, shared by every session and by restarts: prediction files as the
loader parsed them (`PredictionStore`, below), the gold as its reader parsed it (`GoldStore`), the benchmark's
questions as the engine codes them (`QuestionsStore`), and -- through `EntryFolder` -- the evidence pages' located
answers (dashboard/evidence/locating.py). No streamlit here. (Scored runs are not kept here: they are in
the engine, scoring/engine/, as `docbench-lens ingest` puts them.)

Entries live in

    $LENS_CACHE_DIR/<folder>/<key>.parquet        (else $XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens)

named by a hex digest of what they depend on, and are written atomically (a temporary file in the same
folder, then a rename), with page checksums. Several app servers (or sessions) may share one cache
folder: an entry one of them wrote is read by the others; two of them writing the same entry at once
publish one -- the first to finish wins (a hard link, which fails when the name exists), the other keeps
the winner's and drops its own copy; an entry already there that does not read back is replaced. No
reader ever sees a part-written file. Nothing is trusted on read: an entry that cannot be read, has
another schema, another key or row count in its metadata, or values that do not parse, is a miss (and
removed), and is made again. A cache folder (`predictions/`, `engine/`, `uploads/`) that is a symbolic
link is never read or written -- entries would land outside the cache root -- and the app runs without
that cache (`cache_problems` says why, for the Data page).

Entries whose key no longer matches anything (a prediction file changed or gone, the reading code changed)
would stay for ever, so each folder is swept once a process (`EntryFolder.sweep`): an entry nobody has used
for `digests.UNUSED_DAYS` is removed, and a temporary file a killed writer left for over a day. Using an entry marks
it (its modification time, set at most once a day), so another server sharing the folder -- even one running
other code, with keys of its own -- keeps what it uses. A swept entry that was still wanted is made again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

# orjson reads and writes the `details` column several times faster; json gives the same values
from orjson import loads as _loads

import scoring
from dashboard.core.digests import file_sha256, imports_sha256, mark_used, sweep, symlinked
from dashboard.core.predictions import PredictionTable, as_table, box_of, evidence_json, evidence_of
from dashboard.core.settings import cache_root
from scoring import guard
from scoring._gc import paused_gc
from scoring.model import DocRef, EvidenceItem, GoldQuestion
from scoring.problems import LoadResult

_KEY = re.compile(r"[0-9a-f]{64}")
_LOG = logging.getLogger(__name__)
T = TypeVar("T")
_WARNED: set[str] = set()


def _is_entry(name: str) -> bool:
    return name.endswith(".parquet") and _KEY.fullmatch(name[:-len(".parquet")]) is not None


def _refuse(folder: Path) -> bool:
    """True (and said once in the log) when `folder` is a symlink and so must not be used."""
    if not symlinked(folder):
        return False
    if str(folder) not in _WARNED:
        _WARNED.add(str(folder))
        _LOG.warning("%s is a symbolic link: the cache there is not used (delete the link to use it again)", folder)
    return True


def cache_problems(root: Path | None = None) -> list[str]:
    """Sentences for the Data page: the cache folders that are symbolic links and so not used."""
    root = Path(root) if root is not None else cache_root()
    out = []
    for name, what in (("engine", "scored runs (the engine's DuckDB file)"), ("predictions", "parsed prediction files"),
                       ("gold", "parsed gold files"), ("questions", "the benchmarks' coded questions"), ("uploads", "uploads")):
        if symlinked(root / name):
            again = {"engine": "every run is scored again at each start, held in memory",
                     "predictions": "every run is read again", "gold": "the gold is read again at each start",
                     "questions": "the questions are coded again at each start",
                     "uploads": "uploads are refused"}[name]
            out.append(f"The cache folder {root / name} is a symbolic link, so the cache of {what} is not used "
                       f"({again}). Remove the link to use it again.")
    return out




# ----------------------------------------------------------------------------- keys

FILES_SHA_CHUNK = 1 << 20


def files_sha256(paths: Sequence[Path]) -> str:
    """sha256 over the files' bytes, in order (each file's length first, so the split between
    files counts), each read FILES_SHA_CHUNK bytes at a time: a harness's samples file of 2 GB (a
    gold file of the harness layout) was read whole into the server, 2.3 GB at its peak. Nothing is
    remembered here: a file's digest that should survive a rerun or a restart is the documents
    layer's `ocr.file_sha256` (remembered by the file's identity in the cache folder)."""
    h = hashlib.sha256()
    buf = bytearray(FILES_SHA_CHUNK)
    view = memoryview(buf)
    for p in paths:
        with open(p, "rb", buffering=0) as fh:
            h.update(os.fstat(fh.fileno()).st_size.to_bytes(8, "big"))  # the length as read whole (unless it grows meanwhile)
            while n := fh.readinto(buf):
                h.update(view[:n])
    return h.hexdigest()


def scorer_sha256() -> str:
    """sha256 of the scoring package's source: a change to the scoring code (a fixed rule) rescores,
    even when the profile signature stays the same."""
    global _SCORER
    if _SCORER is None:
        _SCORER = _sources_sha256(_SCORING.glob("*.py"))
    return _SCORER


def _sources_sha256(paths: Iterable[Path]) -> str:
    """sha256 of source files of the scoring package, each named by its path inside the package, in order."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(_SCORING)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


_SCORING = Path(scoring.__file__).resolve().parent  # the scoring code: scorer_sha256 and reader_sha256 read it
_SCORER: str | None = None
_READER: str | None = None
_CODE_LOCK = threading.Lock()


def reader_sha256() -> str:
    """sha256 of the code that parses a prediction file: scoring.loaders and the modules of scoring it
    imports, transitively (`imports_sha256`). A parsed file's entry depends on that code only: a change
    to the scoring rules, the runner or the engine leaves it valid, and a restart at 1,000 runs does not
    parse 3.7 GB of prediction files again (about 350 s here) for it."""
    global _READER
    with _CODE_LOCK:  # the workspace's reader threads ask at once: worked out once, not once per thread
        if _READER is None:
            _READER = imports_sha256("scoring.loaders", _SCORING.parent)
        return _READER


# ----------------------------------------------------------------------------- entries


class EntryFolder:
    """A folder of Parquet entries named by their key under the cache root: atomic writes (a reader
    sees a whole entry or none), and bad entries removed: PredictionStore (the scored runs are in the engine)."""

    SUBFOLDER = ""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self.folder = self.root / self.SUBFOLDER
        self.hits = self.misses = self.rejected = 0  # counters, for the app and the benchmarks
        self.published = self.lost_races = 0  # entries this store named; writes that found the winner's entry there
        self._counting = threading.Lock()  # entries are read by several threads at once (the workspace's readers)

    def _count(self, **by: int) -> None:
        with self._counting:
            for name, k in by.items():
                setattr(self, name, getattr(self, name) + k)

    def path(self, key: str) -> Path:
        """The entry's file; the key must be a hex digest, so the path never leaves the folder."""
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.folder / f"{key}.parquet"

    def _valid(self, path: Path, key: str) -> bool:
        """Whether the entry at `path` reads back whole: each folder's own `_read(path, key)` checks it."""
        try:
            self._read(path, key)
        except (OSError, ValueError, TypeError, KeyError, pa.ArrowException):
            return False
        return True

    def _read(self, path: Path, key: str) -> Any:
        """The entry at `path` read and checked (ValueError and Arrow's errors when it is not what was written)."""
        raise ValueError("a folder without entries of its own")

    def _put(self, key: str, build: Callable[[], pa.Table | None]) -> Path | None:
        """Write the table `build()` makes as the entry `key`; None when the folder is refused, or when the values
        cannot be kept exactly (`build` returns None, or raises on them: a lone surrogate in a text, an integer
        beyond 64 bits) -- read or made again next time."""
        if _refuse(self.folder):
            return None
        try:
            table = build()
        except (pa.ArrowException, ValueError, TypeError, OverflowError):  # UnicodeError is a ValueError
            return None
        return None if table is None else self._write(self.path(key), table)

    def _write(self, target: Path, table: pa.Table) -> Path | None:
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".parquet")
            with os.fdopen(fd, "wb") as fh:
                # no fsync: a torn file after a crash fails the checks on read and is recomputed
                # lz4: a restart reads every entry, and lz4 decodes a prediction file's entry in 5 ms
                # where zstd took 12.6 (0.99 MB on disk against 0.59); entries written with zstd read as well
                pq.write_table(table, fh, compression="lz4", write_page_checksum=True)
            self._publish(tmp, target)
            return target
        except OSError:
            return None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _publish(self, tmp: str, target: Path) -> None:
        """Give the written file its name, unless another writer (a second app server) got there
        first with an entry that reads back: then theirs is kept and `tmp` removed (the caller's
        `finally`). A name held by an entry that does not read back is replaced."""
        key = target.stem
        try:
            os.link(tmp, target)  # atomic, and fails when the name exists
            self.published += 1
            return
        except FileExistsError:
            if not target.is_symlink() and self._valid(target, key):
                self.lost_races += 1  # the winner's entry stays; both hold the same scores (same key)
                return
        except OSError:  # a file system without hard links: an atomic rename (the last writer's whole entry)
            pass
        os.replace(tmp, target)
        self.published += 1

    @staticmethod
    def _used(path: Path, now: float | None = None) -> None:
        """Mark the entry as used now, unless it was marked within the day (`digests.mark_used`)."""
        mark_used(path, now)

    def sweep(self, now: float | None = None, *, once: bool = True) -> int:
        """Remove the entries unused for UNUSED_DAYS and the temporary files older than a day; how many
        went. `once`: only the first call of the process for this folder sweeps (a restart's start)."""
        if _refuse(self.folder):  # said once in the log
            return 0
        return sweep(self.folder, _is_entry, now, once=once)

    def _reject(self, path: Path, exc: BaseException | None) -> None:
        self._count(rejected=1)
        try:
            path.unlink()
        except OSError:
            pass

    def _entry(self, key: str, read: Callable[[Path], T], *, counted: bool = True) -> T | None:
        """`read(path)` of the entry named `key`, or None: there is none (a miss), or it does not read
        back -- removed, and a miss. With `counted=False` (an entry read again for a run already
        loaded from it) nothing is counted and a bad entry is left where it is."""
        path = self.path(key)
        if _refuse(self.folder) or path.is_symlink() or not path.is_file():
            if counted:
                self._count(misses=1)
            return None
        try:
            got: T | None = read(path)
        except (OSError, ValueError, TypeError, KeyError, pa.ArrowException) as exc:  # orjson's error is a ValueError
            if not counted:
                return None
            got = None
            self._reject(path, exc)
        if counted:
            self._count(**({"misses": 1} if got is None else {"hits": 1}))
        if got is not None:
            self._used(path)
        return got


# ----------------------------------------------------------------------------- parsed prediction files
#
# A second kind of entry in the same cache folder: one prediction file as the loader read it -- its
# predictions as columns, its load problems and counts in the metadata -- so that a restart reads
# Parquet instead of parsing JSON. Its name is the key
#
#     sha256("lens-predictions/<PREDICTION_FORMAT>" NUL reader_sha256() NUL sha256(file's bytes)
#            NUL the file's path as the loader names it)
#
# (the path is part of it because the loader writes it into every record and problem). Entries live
# in $LENS_CACHE_DIR/predictions/<key>.parquet and are checked like the scored rows: schema, key,
# format, row count, no nulls where the loader never leaves one, unique ids, evidence and problems
# that parse into what the loader builds. Anything else is a miss (and removed): the file is read again.

PREDICTION_FORMAT = 3  # 3: no has_status column (the field was never read)
PREDICTION_SCHEMA = pa.schema([
    ("question_id", pa.string()),
    ("text", pa.string()),
    ("status", pa.string()),
    ("line", pa.int64()),  # null: a row of a JSON document (no line)
    ("evidence_pages", pa.list_(pa.int64())),  # [] when none
    ("evidence", pa.string()),  # null: none; else a JSON array of [page, document_id, bbox or null]
])
_PRED_NOT_NULL = ("question_id", "text", "status", "evidence_pages")


def prediction_key(prediction_sha256: str, path: str) -> str:
    text = "\0".join((f"lens-predictions/{PREDICTION_FORMAT}", reader_sha256(), prediction_sha256, path))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _problem_list(problems) -> list:
    return [[p.file, p.line, p.field, p.expected, p.got, p.severity, p.skipped, p.kind] for p in problems]


def _problems_back(values) -> list:
    from scoring.problems import ERROR, WARNING, Problem

    if type(values) is not list:
        raise ValueError("problems are not a list")
    out = []
    for v in values:
        if type(v) is not list or len(v) != 8:
            raise ValueError("a problem that is not 8 fields")
        file, line, fld, expected, got, severity, skipped, kind = v
        if not (isinstance(file, str) and (line is None or type(line) is int) and (fld is None or isinstance(fld, str))
                and isinstance(expected, str) and isinstance(got, str) and severity in (ERROR, WARNING)
                and type(skipped) is bool and isinstance(kind, str)):
            raise ValueError("a problem with fields of another type")
        out.append(Problem(file, line, fld, expected, got, severity, skipped, kind))
    return out


def _load_meta(res) -> str:
    return json.dumps({"problems": _problem_list(res.problems), "files": list(res.files), "rows_read": res.rows_read,
                       "skipped": res.skipped, "blank_lines": res.blank_lines, "unreadable": list(res.unreadable)},
                      ensure_ascii=True, allow_nan=False)


def _load_back(text: bytes):
    """A load's problems, files and counts (`items` empty) from an entry's `lens.load` metadata, as `_load_meta`
    wrote it; ValueError when it has another shape."""
    load: Any = json.loads(text)
    if type(load) is not dict:
        raise ValueError("load metadata is not an object")
    counts: list[Any] = [load.get(k) for k in ("rows_read", "skipped", "blank_lines")]  # checked below
    if any(type(c) is not int or c < 0 for c in counts):
        raise ValueError("counts that are not numbers")
    files: Any = load.get("files")  # checked below
    unreadable: Any = load.get("unreadable")
    if any(type(v) is not list or any(not isinstance(s, str) for s in v) for v in (files, unreadable)):
        raise ValueError("file lists of another shape")
    return LoadResult(items=[], problems=_problems_back(load.get("problems")), files=files, rows_read=counts[0],
                      skipped=counts[1], blank_lines=counts[2], unreadable=unreadable)


def _parse_memo(texts: list, convert) -> list:
    """Each distinct JSON text parsed once (equal values share one read-only tuple); None stays ()."""
    memo: dict[str, object] = {}
    out: list[object] = []
    for s in texts:
        if s is None:
            out.append(())
            continue
        v = memo.get(s)
        if v is None:
            try:
                parsed = _loads(s)
            except ValueError:
                parsed = json.loads(s)
            v = memo[s] = convert(parsed)
        out.append(v)
    return out


class PredictionStore(EntryFolder):
    """The parsed prediction files under `root`/predictions (EntryFolder's rules)."""

    SUBFOLDER = "predictions"

    def put(self, key: str, res) -> Path | None:
        """Write one file's LoadResult[Prediction]; None when it cannot be cached (read again next time)."""
        items = res.items

        def table() -> pa.Table:
            return pa.table({
                "question_id": pa.array([p.qid for p in items], pa.string()),
                "text": pa.array([p.text for p in items], pa.string()),
                "status": pa.array([p.status for p in items], pa.string()),
                "line": pa.array([p.line for p in items], pa.int64()),
                "evidence_pages": pa.array([p.evidence_pages for p in items], pa.list_(pa.int64())),
                "evidence": pa.array([evidence_json(p.evidence) for p in items], pa.string()),
            }, schema=PREDICTION_SCHEMA).replace_schema_metadata({
                "lens.format": str(PREDICTION_FORMAT), "lens.key": key, "lens.rows": str(len(items)),
                "lens.load": _load_meta(res)})

        return self._put(key, table)

    def facts(self, key: str, file: str = ""):
        """(the LoadResult's problems and counts without its rows -- `items` empty --, how many rows it
        loaded) read from the entry's metadata alone (its footer: no column is read), or None when there is
        no entry or its metadata is not what `put` wrote. The rows themselves are read, and checked, by `get`
        when a page needs them."""
        path = self.path(key)
        if _refuse(self.folder) or path.is_symlink() or not path.is_file():
            return None
        try:
            meta = pq.read_schema(path).metadata or {}
            if meta.get(b"lens.format") != str(PREDICTION_FORMAT).encode() or meta.get(b"lens.key") != key.encode():
                return None
            rows = int(meta.get(b"lens.rows", b"-1"))
            if rows < 0:
                return None
            res = _load_back(meta[b"lens.load"])
            self._used(path)
            return res, rows
        except (OSError, ValueError, TypeError, KeyError, pa.ArrowException):
            return None

    def get(self, key: str, file: str, counted: bool = True):
        """The LoadResult as the loader returned it for `file`, or None (no entry, or a bad one: removed).
        `counted=False`: an entry a reader process has just written, neither a hit nor a miss."""
        def read(path: Path):
            with paused_gc():
                return self._read(path, key, file)

        return self._entry(key, read, counted=counted)

    @staticmethod
    def _read(path: Path, key: str, file: str = ""):
        table = _checked_table(path, key, PREDICTION_SCHEMA, PREDICTION_FORMAT)
        n = table.num_rows
        for name in _PRED_NOT_NULL:
            if table.column(name).null_count:
                raise ValueError(f"nulls in {name}")
        if n and len(pc.unique(table.column("question_id"))) != n:  # unique: half count_distinct's time
            raise ValueError("an id twice")
        res = _load_back((table.schema.metadata or {})[b"lens.load"])  # its shape is checked there
        pages = table.column("evidence_pages")
        if pages.null_count or any(chunk.values.null_count for chunk in pages.chunks):
            raise ValueError("nulls in evidence_pages")
        evidence = table.column("evidence")
        if evidence.null_count < n:  # checked as the records would read it; the records are built on demand
            _parse_memo(pc.drop_null(evidence).to_pylist(), evidence_of)
        res.items = cast(list, PredictionTable(table.column("question_id"), table.column("text"), table.column("status"), file,
                                               table.column("line"), table.column("evidence_pages"), evidence))
        return res


def load_predictions_cached(path: Path, prediction_sha256: str, store: PredictionStore | None = None):
    """scoring.loaders.load_predictions(path), read from the cache when the file's bytes (its sha256,
    computed by the caller) were read before; else loaded and written to it -- unless the file changed
    while it was read (then it is not cached). A file that is not small is parsed and written to the
    cache by a reader process (scoring/guard.py), and its entry read here."""
    from scoring.loaders import load_predictions

    if not prediction_sha256:
        return load_predictions(path)
    store = store if store is not None else PredictionStore()
    key = prediction_key(prediction_sha256, str(path))
    res = store.get(key, str(path))
    if res is not None:
        return res
    if guard.here([path], bounded=True):  # a small file, or this process reads where it can be killed
        res, _ = _parse_and_put(Path(path), prediction_sha256, store)
    else:
        # parsed where it can be killed (scoring/guard.py) by a process that writes the cache entry itself:
        # only the entry comes back (read as a restart reads it), not a pickle of every record
        got = guard.job(_parse_and_put_there, Path(path), prediction_sha256, store.root, paths=[path], bounded=True,
                        failed=lambda problem: LoadResult(problems=[problem], unreadable=[str(path)]))
        res = store.get(key, str(path), counted=False) if got is None else got
        if res is None:  # written, and gone since: read once more (where it can be killed), not cached
            res = load_predictions(path)
    res.items = cast(list, as_table(res.items))  # held as columns, as a cached file is
    return res


def _parse_and_put(path: Path, prediction_sha256: str, store: PredictionStore) -> tuple[LoadResult, bool]:
    """`load_predictions(path)`, and whether it was written to the cache under the file's sha256: not when
    the file changed while it was read, nor when it was refused (over the read limits: a fact of the
    settings, not of its bytes)."""
    from scoring.loaders import load_predictions

    res = load_predictions(path)
    if not _keepable(res, [(path, prediction_sha256)]):
        return res, False
    with paused_gc():
        return res, store.put(prediction_key(prediction_sha256, str(path)), res) is not None


def _keepable(res, files: Sequence[tuple[str | Path, str]]) -> bool:
    """Whether a load may be kept under these (file, sha256): nothing refused (over the read limits: a fact of the
    settings, not of the bytes), and every file still those bytes -- read again, never remembered: did one change
    while it was read?"""
    if any(p.kind == guard.REFUSED_KIND for p in res.problems):
        return False
    try:
        return all(file_sha256(Path(p)) == sha for p, sha in files)
    except OSError:
        return False


def _parse_and_put_there(path: Path, prediction_sha256: str, root: Path) -> LoadResult | None:
    """`_parse_and_put` in a reader process: None when the entry was written (the caller reads it), else
    the LoadResult (pickled back)."""
    res, written = _parse_and_put(path, prediction_sha256, PredictionStore(root))
    return None if written else res


def _checked_table(path: Path, key: str, schema, fmt: int):
    """A cache entry read back (page checksums verified), refused with ValueError unless its schema,
    format, key and row count are the ones written."""
    # use_threads=False: an entry is small, and handing its columns to Arrow's pool cost more than it
    # saved (a prediction entry 15.3 -> 9.3 ms); the callers read several entries at once instead
    # ParquetFile, not read_table: read_table goes through pyarrow.dataset (imported on first use, and
    # a dataset made per entry), a fifth of reading 200 prediction entries at a restart
    with pq.ParquetFile(path, page_checksum_verification=True) as pf:
        table = pf.read(use_threads=False)
    meta = table.schema.metadata or {}
    if not table.schema.equals(schema, check_metadata=False):
        raise ValueError("another schema")
    if meta.get(b"lens.format") != str(fmt).encode() or meta.get(b"lens.key") != key.encode():
        raise ValueError("another key or format")
    if meta.get(b"lens.rows") != str(table.num_rows).encode():
        raise ValueError("row count differs from the metadata")
    return table


# ----------------------------------------------------------------------------- parsed gold files
#
# A third kind of entry: a benchmark's gold as its reader parsed it (every question's record, the load's
# problems and counts), so that a restart does not parse the gold again -- at 20,000 questions the reader
# took 1.3-1.7 s in its guarded child process, the largest single step before the leaderboard; the entry
# reads back in about 0.3 s. Its name is the key
#
#     sha256("lens-gold/<GOLD_FORMAT>" NUL the scoring package's code (`_gold_code`) NUL the format's module
#            NUL each gold file's path NUL its sha256)
#
# (paths: the records name their file). One row per question: its record's fields as a JSON array (the
# documents and evidence items as nested arrays). An entry is written only when it reads back equal to
# what the reader returned (a value JSON cannot hold -- NaN, a lone surrogate, an integer past 64 bits --
# leaves that gold uncached), only when no file was unreadable or refused and none changed while read; and
# every value is checked for its type when read: anything else is a miss (removed), and the gold is read again.

GOLD_FORMAT = 1
GOLD_SCHEMA = pa.schema([("record", pa.binary())])


def _gold_code() -> str:
    """sha256 of every source file of the scoring package: what a gold reader may run. Not the readers' own
    import closure (`imports_sha256`): working that out parses 26 files (0.1-0.15 s, on the restart's path),
    and re-reading the gold after any change to scoring costs one parse, once."""
    global _GOLD_CODE
    with _CODE_LOCK:
        if _GOLD_CODE is None:
            _GOLD_CODE = _sources_sha256(_SCORING.rglob("*.py"))
        return _GOLD_CODE


_GOLD_CODE: str | None = None


def gold_key(reader: str, files: Sequence[tuple[str, str]]) -> str:
    """The entry's name for the gold files (path, sha256) as module `reader` parses them."""
    text = "\0".join((f"lens-gold/{GOLD_FORMAT}", _gold_code(), reader, *(x for f in files for x in f)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _gold_state(q) -> list:
    state = [getattr(q, name) for name in _GOLD_FIELDS]
    state[_DOCS] = [[d.document_id, d.url, d.evidence_pages,
                     [[e.locator, e.pages, e.quote, e.source_type, e.bbox] for e in d.evidence_items]] for d in q.documents]
    return state


def _strs(v: Any) -> tuple:
    if type(v) is not list or any(type(s) is not str for s in v):
        raise ValueError("not a list of texts")
    return tuple(v)


def _ints(v: Any) -> tuple:
    if type(v) is not list or any(type(i) is not int for i in v):
        raise ValueError("not a list of integers")
    return tuple(v)


_new = object.__new__


def _gold_back(state: Any):
    """A gold record from its entry's array, every value checked for the type the reader gives it."""
    if type(state) is not list or len(state) != len(_GOLD_FIELDS):
        raise ValueError("a record of another length")
    (qid, question, answers, answer_format, rule, split, metadata, documents, file, line, question_types, image,
     raw_format, format_given, gold_problem, release_text) = state
    if not all(type(s) is str for s in (qid, question, answer_format, rule, file, image, gold_problem)) \
            or type(metadata) is not dict or type(documents) is not list or (line is not None and type(line) is not int) \
            or type(format_given) is not bool or type(release_text) is not bool:
        raise ValueError("a record with fields of another type")
    docs = []
    for d in documents:
        if type(d) is not list or len(d) != 4 or type(d[0]) is not str or type(d[1]) is not str or type(d[3]) is not list:
            raise ValueError("a document of another shape")
        items = []
        for e in d[3]:
            if type(e) is not list or len(e) != 5 or not all(type(s) is str for s in (e[0], e[2], e[3])):
                raise ValueError("an evidence item of another shape")
            item = _new(EvidenceItem)  # a frozen record's __init__ sets each field through object.__setattr__: its state at once
            item.__setstate__((e[0], _ints(e[1]), e[2], e[3], box_of(e[4])))  # type: ignore[attr-defined]
            items.append(item)
        doc = _new(DocRef)
        doc.__setstate__((d[0], d[1], _ints(d[2]), tuple(items)))  # type: ignore[attr-defined]  # scoring.model.quick_state
        docs.append(doc)
    return GoldQuestion(qid, question, _strs(answers), answer_format, rule, split, metadata, tuple(docs), file, line,
                        _strs(question_types), image, raw_format, format_given, gold_problem, release_text)


_GOLD_FIELDS = tuple(f.name for f in fields(GoldQuestion))
_DOCS = _GOLD_FIELDS.index("documents")


class GoldStore(EntryFolder):
    """The parsed gold files under `root`/gold (EntryFolder's rules)."""

    SUBFOLDER = "gold"

    def put(self, key: str, res) -> Path | None:
        """Write a gold LoadResult; None when it cannot be kept exactly (read again next time)."""
        from orjson import dumps

        def table() -> pa.Table | None:
            with paused_gc():
                records = [dumps(_gold_state(q)) for q in res.items]
                if [_gold_back(_loads(r)) for r in records] != res.items:  # what JSON cannot hold exactly
                    return None
            return pa.table({"record": pa.array(records, pa.binary())}, schema=GOLD_SCHEMA).replace_schema_metadata({
                "lens.format": str(GOLD_FORMAT), "lens.key": key, "lens.rows": str(len(records)), "lens.load": _load_meta(res)})

        return self._put(key, table)

    def get(self, key: str):
        """The gold LoadResult as the reader returned it, or None (no entry, or a bad one: removed)."""
        def read(path: Path):
            with paused_gc():
                return self._read(path, key)

        return self._entry(key, read)

    @staticmethod
    def _read(path: Path, key: str):
        table = _checked_table(path, key, GOLD_SCHEMA, GOLD_FORMAT)
        column = table.column("record")
        if column.null_count:
            raise ValueError("nulls in record")
        res = _load_back((table.schema.metadata or {})[b"lens.load"])
        res.items = [_gold_back(_loads(r)) for r in column.to_pylist()]
        return res


def read_gold_cached(fmt, paths: Sequence[Path], store: GoldStore | None = None):
    """`fmt.read_gold(paths)` (fmt: a gold format's module, e.g. scoring.formats.xldocbench), read from the cache when
    these files' bytes were read before by the same code; else read and written to it -- unless a file changed while
    it was read, could not be read, or was refused over the read limits (a fact of the settings, not of the bytes)."""
    from dashboard.core.digests import FileDigests

    store = store if store is not None else GoldStore()
    store.sweep()  # once a process: entries no server has used for a month go
    digests = FileDigests(store.root)
    try:
        before = [(str(p), digests.sha256(Path(p))) for p in paths]
    except OSError:
        return fmt.read_gold(paths)  # the reader says what cannot be read
    key = gold_key(fmt.__name__, before)
    res = store.get(key)
    if res is not None:
        return res
    res = fmt.read_gold(paths)
    if not res.unreadable and _keepable(res, before):
        store.put(key, res)
    return res


# ----------------------------------------------------------------------------- the benchmark's questions as the engine codes them
#
# A fourth kind of entry: `dashboard.core.scored.engine_questions(gold, page_counts, declared_pages, name)` -- the key
# the engine files a benchmark's runs under, each question's breakdown fields coded, its documents and cluster -- so
# that a restart does not work them out again (0.5 s of a 20,000-question restart's 4.8 s before the leaderboard, on
# the thread the first page waits for). Its name is the key
#
#     sha256("lens-questions/<QUESTIONS_FORMAT>" NUL the scoring package's code NUL dashboard/core/scored.py's code
#            NUL the benchmark's name NUL the page counts and declared pages (JSON) NUL every gold record (JSON))
#
# -- the gold's records as parsed (or as corrected: a corrected gold is other records), not its files, hashed in
# 0.07 s at 20,000 questions. (JSON writes a float NaN as null: a gold whose records differ only there would share
# a key, but every record names its file, and a file's format decides which of the two its missing values are;
# a value JSON cannot hold at all leaves the questions uncached.) One row per question: id, question, gold, documents, cluster code, and a column per
# coded field (`code:<field>`); the name, key, unit, label dictionaries and the finder's fields in the metadata.
# Every value is checked when read (types, no nulls, each code within its dictionary): anything else is a miss.

QUESTIONS_FORMAT = 1
_QUESTIONS_BASE = pa.schema([("id", pa.string()), ("question", pa.string()), ("gold", pa.string()),
                             ("documents", pa.list_(pa.string())), ("doc", pa.int32())])
_CODE = "code:"


def questions_key(gold: Sequence[GoldQuestion], page_counts: dict, declared_pages: dict, name: str) -> str:
    """The entry's name for the questions `engine_questions` makes of these arguments."""
    from orjson import OPT_NON_STR_KEYS, dumps

    h = hashlib.sha256("\0".join((f"lens-questions/{QUESTIONS_FORMAT}", _gold_code(), _scored_code(), name)).encode(
        "utf-8", "surrogatepass"))
    h.update(b"\0" + dumps([sorted(page_counts.items()), sorted(declared_pages.items())], option=OPT_NON_STR_KEYS))
    for q in gold:
        h.update(b"\0" + dumps(_gold_state(q)))
    return h.hexdigest()


def _scored_code() -> str:
    global _SCORED_CODE
    with _CODE_LOCK:
        if _SCORED_CODE is None:
            _SCORED_CODE = hashlib.sha256((Path(__file__).parent / "scored.py").read_bytes()).hexdigest()
        return _SCORED_CODE


_SCORED_CODE: str | None = None


class QuestionsStore(EntryFolder):
    """The benchmarks' questions as the engine codes them, under `root`/questions (EntryFolder's rules)."""

    SUBFOLDER = "questions"

    def put(self, key: str, questions) -> Path | None:
        """Write a `scoring.engine.ingest.Questions`; None when it cannot be kept (made again next time)."""
        from scoring.engine.schema import LIST_FIELDS

        def table() -> pa.Table:
            columns = {"id": pa.array(questions.ids, pa.string()), "question": pa.array(questions.question, pa.string()),
                       "gold": pa.array(questions.gold, pa.string()),
                       "documents": pa.array(questions.documents, pa.list_(pa.string())),
                       "doc": pa.array(questions.doc, pa.int32())}
            for f, codes in questions.codes.items():
                columns[_CODE + f] = questions.list_array(f) if f in LIST_FIELDS else pa.array(codes, pa.int16())
            head = {"name": questions.name, "key": questions.key, "unit": questions.unit,
                    "dictionary": questions.dictionary, "finder_fields": list(questions.finder_fields)}
            return pa.table(columns).replace_schema_metadata({
                "lens.format": str(QUESTIONS_FORMAT), "lens.key": key, "lens.rows": str(len(questions)),
                "lens.questions": json.dumps(head)})

        return self._put(key, table)

    def get(self, key: str):
        """The Questions as written, or None (no entry, or a bad one: removed)."""
        return self._entry(key, lambda path: self._read(path, key))

    @staticmethod
    def _read(path: Path, key: str):
        from scoring.engine.ingest import Questions
        from scoring.engine.schema import FIELDS, LIST_FIELDS
        from scoring.stats import document_clusters

        with pq.ParquetFile(path, page_checksum_verification=True) as pf:
            table = pf.read(use_threads=False)
        meta = table.schema.metadata or {}
        if meta.get(b"lens.format") != str(QUESTIONS_FORMAT).encode() or meta.get(b"lens.key") != key.encode() \
                or meta.get(b"lens.rows") != str(table.num_rows).encode():
            raise ValueError("another key, format or row count")
        head = _loads(meta[b"lens.questions"])
        if type(head) is not dict or set(head) != {"name", "key", "unit", "dictionary", "finder_fields"} \
                or not all(type(head[k]) is str for k in ("name", "key", "unit")) or type(head["dictionary"]) is not dict \
                or type(head["finder_fields"]) is not list:
            raise ValueError("a head of another shape")
        dictionary = head["dictionary"]
        coded = [n[len(_CODE):] for n in table.column_names[len(_QUESTIONS_BASE):]]
        if not table.schema.remove_metadata().equals(pa.schema([*_QUESTIONS_BASE, *(
                pa.field(_CODE + f, pa.list_(pa.int16()) if f in LIST_FIELDS else pa.int16()) for f in coded)])) \
                or set(coded) != set(dictionary) or not set(coded) <= set(FIELDS) \
                or not set(head["finder_fields"]) <= set(coded):
            raise ValueError("another schema")
        if any(table.column(n).null_count for n in table.column_names) or pc.list_flatten(table.column("documents")).null_count:
            raise ValueError("nulls")
        codes: dict[str, Any] = {}
        for f in coded:
            labels = dictionary[f]
            if type(labels) is not list or not all(type(s) is str for s in labels):
                raise ValueError("a dictionary of another shape")
            column = table.column(_CODE + f).combine_chunks()
            flat = column.flatten() if f in LIST_FIELDS else column
            if flat.null_count or (len(flat) and (pc.min(flat).as_py() < 0 or pc.max(flat).as_py() >= len(labels))):
                raise ValueError("a code outside its dictionary")
            if f in LIST_FIELDS:
                offsets, values = column.offsets.to_numpy(), flat.to_numpy()
                codes[f] = [values[offsets[i]:offsets[i + 1]].copy() for i in range(len(column))]
            else:
                codes[f] = column.to_numpy().copy()
        ids, documents = table.column("id").to_pylist(), table.column("documents").to_pylist()
        clusters = document_clusters(documents)  # each question's cluster, as engine_questions numbers them (0.01 s)
        doc = table.column("doc").to_numpy().astype(np.int32)
        if len(set(ids)) != len(ids) or head["unit"] != clusters.unit or not np.array_equal(doc, clusters.codes):
            raise ValueError("ids repeated, or clusters other than the documents give")
        return Questions(head["name"], head["key"], ids, table.column("question").to_pylist(), table.column("gold").to_pylist(),
                         documents, doc, head["unit"], dictionary, codes, tuple(head["finder_fields"]))


def engine_questions_cached(gold: Sequence[GoldQuestion], page_counts: dict, declared_pages: dict, name: str = "",
                            store: QuestionsStore | None = None):
    """`dashboard.core.scored.engine_questions(...)`, read from the cache when the same code made them of the same
    records, page counts and name; else made and written to it."""
    from dashboard.core.scored import engine_questions

    store = store if store is not None else QuestionsStore()
    store.sweep()
    try:
        key = questions_key(gold, page_counts, declared_pages, name)
    except (TypeError, ValueError, OverflowError):  # a value JSON cannot hold (an integer past 64 bits): not kept
        return engine_questions(gold, page_counts, declared_pages, name)
    got = store.get(key)
    if got is None:
        got = engine_questions(gold, page_counts, declared_pages, name)
        store.put(key, got)
    return got

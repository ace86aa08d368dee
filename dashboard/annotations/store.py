"""The annotations store: every read and write of one annotations database -- one SQLite file (one
user, the default) or one PostgreSQL database (a team's app servers), shared by every session and
process. SQLAlchemy Core speaks both dialects. The top of the annotations' database layers:

    errors -> location, records -> schema -> unavailable -> damage -> store

(each imports only those before it): where the database lives (location.py), the records and
their validation (records.py), the schema and its Alembic migrations (schema.py, migrations/),
why a database cannot be used (unavailable.py), damaged rows (damage.py).

SQLite: each call opens its own connection and closes it (Streamlit sessions are threads), in WAL
mode with a busy timeout; every write is one `BEGIN IMMEDIATE` transaction. PostgreSQL: a small
pool of connections (checked before use, so a restarted server is found again), every write one
transaction holding transaction-level advisory locks: the one record it writes (a note, correction
or slice: writes of different records run side by side), or everything (the vocabulary, an
import). Saving a note, correction or saved slice names the revision it was edited from
(`expected_revision`, 0 for "there was none"): when the stored revision differs, nothing is
written and `Conflict` carries the stored one (records.check_revision) -- across app servers as
well, since the check is made inside the writer's transaction.

A database that cannot be used never gives a traceback: `store.problem` is an
`AnnotationsUnavailable` whose `message` is one sentence naming the file or URL, reads still work
when it can be read (and return nothing when it cannot), and every write raises that same
exception. A server that is away, refuses the login or lost its connection is tried again when
`problem` is next read (at most every `retry_interval` seconds), so the app finds it again without a
restart; `reopen()` tries at once. A zero-byte file is an empty database (SQLite's own reading):
it is made a fresh one in place -- it holds nothing that could be lost -- and read as empty when
opened read-only. Every row read goes through damage.py: a damaged one is left out and named in
the `bad` list a read is given (`notes(..., bad=[])`, `corrections`, `saved_slices`); a save over a
damaged row replaces it.

A large import (`merge`) is written in batches (each holding the lock about IMPORT_HOLD), each its own write
transaction; a save of this process waiting for the lock goes before the next batch, and on
SQLite the import pauses `import_pause` between batches so that a writer of another process finds
the lock free (its busy wait tries at most every 0.1 s). `progress(done, total)` follows it.

Saved slices (issue 25, section 3) -- a named filter set of the explorer, or a slice the finder
discovered, kept per benchmark beside the notes and shared by every session:

    store.save_slice(benchmark, name, definition={"reasoning_type": ["counting"], "evidence_source": ["Chart"]},
                     author="Ana", note="counting over charts", expected_revision=0) -> SavedSlice
    store.saved_slices(benchmark) -> [SavedSlice, ...]          by name
    store.saved_slice(benchmark, name) -> SavedSlice | None
    store.delete_slice(benchmark, name, expected_revision=k) -> bool

Export and import carry saved slices as records of kind "slice" (dashboard/annotations/exchange.py).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from dashboard.core import settings

from .damage import (
    CORRECTION_COLUMNS,
    NOTE_COLUMNS,
    SLICE_COLUMNS,
    Leniency,
    correction_of,
    corrections_of,
    note_rows,
    notes_of,
    slice_of,
    slices_of,
    tolerant,
)
from .errors import AnnotationsUnavailable, InvalidInput
from .location import ServerLocation, UnusableLocation, resolve_location, shown_url
from .records import (
    DEFAULT_TAGS,
    MAX_ANSWER,
    MAX_SLICES,
    MAX_VOCABULARY,
    Correction,
    Note,
    SavedSlice,
    check_revision,
    clean_author,
    clean_definition,
    clean_key,
    clean_slice_name,
    clean_tag,
    clean_tags,
    clean_text,
    definition_text,
    later,
    make_correction,
    make_note,
    make_slice,
    now_iso,
)
from .schema import (
    HEAD_REVISION,
    REVISIONS,
    SCHEMA_VERSION,
    ForeignTables,
    NewerSchema,
    corrections_t,
    metadata,
    migrate,
    note_tags_t,
    notes_t,
    slices_t,
    vocabulary_t,
)
from .unavailable import RETRIED, driver_words, file_problem, server_problem

__all__ = ["AnnotationStore", "MergeCounts", "DEFAULT_BUSY_TIMEOUT", "DEFAULT_RETRY_INTERVAL", "IMPORT_BATCH", "IMPORT_HOLD",
           "IMPORT_FIRST_BATCH", "IMPORT_PAUSE", "WRITER_WAIT", "CONNECT_TIMEOUT"]

DEFAULT_BUSY_TIMEOUT = 10.0  # seconds a write waits for another writer before giving up
DEFAULT_RETRY_INTERVAL = 5.0  # seconds between two attempts to reach a server that was away
IMPORT_BATCH: int | None = None  # records an import writes in one transaction; None: sized to hold the lock ~IMPORT_HOLD
IMPORT_HOLD = 0.2  # seconds an import's batch aims to hold the write lock (others' saves get in between batches)
IMPORT_FIRST_BATCH = 1_000  # the first batch of a sized import
IMPORT_PAUSE = 0.12  # seconds an import on SQLite pauses between batches (SQLite's busy wait tries at most every 0.1 s)
WRITER_WAIT = 5.0  # seconds an import waits, at most, for a save of this process to take the lock
CONNECT_TIMEOUT = 3  # seconds to reach a PostgreSQL server (a page waits this long when it is away)
_LOCK_KEY = 0x4C454E53  # "LENS": the writers' advisory lock (PostgreSQL), shared by one record's write, alone otherwise
_RECORD_LOCK_SPACE = 0x4C45  # the first half of one record's advisory lock (the second: a hash of its key)


@dataclass(slots=True)
class MergeCounts:
    """What `AnnotationStore.merge` did: records added, updated and left unchanged, tags added to the vocabulary."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    tags_added: list[str] = field(default_factory=list)


class AnnotationStore:
    """Every read and write of one annotations database (a file path, or a URL: see
    `resolve_location`). Holds no connection between calls (PostgreSQL: a pool): share it between
    threads freely. `problem` is None when writes work, else why not (reads then work when
    `readable`); reading `problem` tries a server that was away again (see the module's docstring)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                 busy_timeout: float = DEFAULT_BUSY_TIMEOUT, read_only: bool = False,
                 clock: Callable[[], datetime] | None = None, retry_interval: float | None = None) -> None:
        self.busy_timeout = busy_timeout
        self.retry_interval = DEFAULT_RETRY_INTERVAL if retry_interval is None else retry_interval
        self._clock = clock or (lambda: datetime.now(UTC))
        self._problem: AnnotationsUnavailable | None = None
        self._retry_at = 0.0
        self._retry_lock = threading.Lock()
        self._read_only = read_only
        self.readable = True
        self._read_uri: str | None = None
        self._engine: Engine | None = None
        self._read_engine: Engine | None = None
        self.leniency = Leniency()  # SQLite text that is not UTF-8 was met: read such values as bytes from now on
        self.import_batch = IMPORT_BATCH
        self.import_pause = IMPORT_PAUSE
        self._gate = threading.Condition()  # writes of one record waiting for the lock (an import lets them in)
        self._waiting = 0
        try:
            where = resolve_location(path, env)
        except InvalidInput as exc:
            shown = shown_url(str(path) if path else settings.DATABASE_URL.value(env))
            self.path: Path | ServerLocation | UnusableLocation = UnusableLocation(shown)
            self.dialect = "none"
            self.readable = False
            self._problem = AnnotationsUnavailable(self.path, "error", f"The annotations database cannot be used: {exc}")
            return
        self.path = where
        self.dialect = "postgresql" if isinstance(where, ServerLocation) else "sqlite"
        if read_only:
            self._fall_back(AnnotationsUnavailable(self.path, "read_only", (
                f"The annotations {'database' if self.dialect == 'postgresql' else 'file'} {self.path} was opened read-only: "
                "notes cannot be saved.")))
        else:
            self._open()

    # -- opening

    @property
    def problem(self) -> AnnotationsUnavailable | None:
        """Why writes do not work (None: they do). A server's problem (away, refusing) is tried again
        here, at most every `retry_interval` seconds, so the app recovers without a restart."""
        p = self._problem
        if (p is not None and self.dialect == "postgresql" and p.reason in RETRIED and not self._read_only
                and time.monotonic() >= self._retry_at and self._retry_lock.acquire(blocking=False)):
            try:
                self._retry_at = time.monotonic() + self.retry_interval
                self.reopen()
            finally:
                self._retry_lock.release()
        return self._problem

    @problem.setter
    def problem(self, value: AnnotationsUnavailable | None) -> None:
        self._problem = value

    @property
    def writable(self) -> bool:
        return self.problem is None

    def reopen(self) -> None:
        """Try again after a problem (the file was unlocked, moved aside or made writable; the
        server is back)."""
        if self.dialect == "none":
            return
        self._problem, self.readable, self._read_uri = None, True, None
        self._open()

    def dispose(self) -> None:
        """Close a server's pooled connections (the store stays usable: they are opened again)."""
        for engine in (self._engine, self._read_engine):
            if engine is not None:
                engine.dispose()

    def _sqlite_engine(self, connect: Callable[[], sqlite3.Connection]) -> Engine:
        engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:  # pysqlite's own BEGIN is switched off (isolation_level=None)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("lens_write") else "BEGIN")

        return engine

    def _connect_file(self) -> sqlite3.Connection:
        assert isinstance(self.path, Path)
        con = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA foreign_keys = ON")
        return self.leniency.prepare(con)

    def _connect_read_only(self, uri: str) -> sqlite3.Connection:
        con = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        return self.leniency.prepare(con)

    def _server_engine(self) -> Engine:
        assert isinstance(self.path, ServerLocation)
        return sa.create_engine(self.path.url, pool_pre_ping=True, pool_size=4, max_overflow=28, pool_timeout=60,
                                connect_args={"connect_timeout": CONNECT_TIMEOUT, "application_name": "docbench-lens"})

    def _open(self) -> None:
        if self.dialect == "postgresql":
            self._open_server()
        else:
            self._open_file()

    def _open_file(self) -> None:
        assert isinstance(self.path, Path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not self.path.is_file():
                raise OSError(21, "not a file", str(self.path))
            con = self._connect_file()
        except (OSError, sqlite3.Error) as exc:
            self._fall_back(file_problem(self.path, exc, "opening it"))
            return
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            done = version == SCHEMA_VERSION and con.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone() is not None
        except sqlite3.Error as exc:
            self._fall_back(file_problem(self.path, exc, "opening it"))
            return
        finally:
            con.close()
        if self._engine is None:
            self._engine = self._sqlite_engine(self._connect_file)
        if done:
            return
        try:
            with self._engine.connect() as conn:
                conn.execution_options(lens_write=True)
                with conn.begin():
                    migrate(conn)
        except (SQLAlchemyError, sqlite3.Error, NewerSchema, ForeignTables) as exc:
            self._fall_back(file_problem(self.path, exc, "opening it"))

    def _open_server(self) -> None:
        assert isinstance(self.path, ServerLocation)
        if self._engine is None:
            try:
                self._engine = self._server_engine()
            except (SQLAlchemyError, NoSuchModuleError, ImportError) as exc:
                self.readable = False
                self._problem = AnnotationsUnavailable(self.path, "error", (
                    f"The annotations database {self.path} needs the PostgreSQL driver ({self.path.scrub(driver_words(exc))}): "
                    "pip install 'docbench-lens[server]'."))
                return
        current: str | None = None
        try:
            with self._engine.connect() as conn:
                if sa.inspect(conn).has_table("alembic_version"):
                    current = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
                conn.rollback()
                if current != HEAD_REVISION:
                    if current is not None and current not in REVISIONS:
                        raise NewerSchema(current)
                    with self._write_transaction(conn):
                        migrate(conn)
                may = conn.execute(sa.text(
                    "SELECT bool_and(has_table_privilege(t, 'INSERT,UPDATE,DELETE')) FROM unnest(CAST(:names AS text[])) t"),
                    {"names": [t.name for t in metadata.sorted_tables]}).scalar()
                conn.rollback()
        except (SQLAlchemyError, NewerSchema, ForeignTables) as exc:
            problem = server_problem(self.path, exc, "opening it")
            self._problem = problem
            self.readable = problem.reason in ("newer", "denied") and current is not None and current in REVISIONS
            self._retry_at = time.monotonic() + self.retry_interval
            if isinstance(exc, NewerSchema):
                self.readable = False  # its tables may no longer be what these queries read
            return
        if not may:
            self._problem = AnnotationsUnavailable(self.path, "denied", (
                f"The annotations database {self.path} may only be read with this login ({self.path.url.username}): "
                "notes are read-only."))
            self._retry_at = time.monotonic() + self.retry_interval

    def _fall_back(self, problem: AnnotationsUnavailable) -> None:
        """Read-only: find a way to read the database as it is, if there is one."""
        self._problem = problem
        self.readable = False
        if self.dialect == "postgresql":
            if self._engine is None:
                try:
                    self._engine = self._server_engine()
                except (SQLAlchemyError, ImportError):
                    return  # no driver: nothing can be read (the problem says it was opened read-only)
            self.readable = True  # read_only=True: read with the pool; a failing read says why
            return
        assert isinstance(self.path, Path)
        if not self.path.is_file():
            return
        try:
            if self.path.stat().st_size == 0:  # an empty file holds no annotations: read as none (nothing to fail on)
                self.readable = True
                return
        except OSError:
            return
        base = self.path.resolve().as_uri()
        for uri in (f"{base}?mode=ro", f"{base}?immutable=1"):
            try:
                con = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None)
                try:
                    if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                        return  # older (not migrated) or newer: not read by this version's queries
                    con.execute("SELECT count(*) FROM notes").fetchone()
                finally:
                    con.close()
            except sqlite3.Error:
                continue
            self._read_uri, self.readable = uri, True
            self._read_engine = self._sqlite_engine(functools.partial(self._connect_read_only, uri))
            return

    # -- connections

    def _unavailable(self, exc: BaseException, doing: str) -> AnnotationsUnavailable:
        """The sentence for a failed call; a server's connection or login failure also makes the
        store read-only until it is reached again (see `problem`)."""
        if isinstance(self.path, ServerLocation):
            problem = server_problem(self.path, exc, doing)
            if problem.reason in ("unreachable", "refused", "missing"):
                self._problem = problem
                self.readable = False
                self._retry_at = time.monotonic() + self.retry_interval
                if self._engine is not None:
                    self._engine.dispose()  # connections to a server that went away are not reused
            return problem
        assert isinstance(self.path, Path)
        return file_problem(self.path, exc, doing)

    @contextmanager
    def _write_transaction(self, conn: Connection, record: str | None = None) -> Iterator[Connection]:
        """One write transaction on `conn`, during which nobody else changes what it reads, so that a
        revision read inside it is still the stored one at commit. SQLite: BEGIN IMMEDIATE (one
        writer at a time). PostgreSQL: transaction-level advisory locks, waited for at most
        busy_timeout -- a write of one `record` (a note, correction or slice, named by its key) takes
        the writers' lock shared and that record's lock alone, so writes of different records run
        side by side; a write of many (the vocabulary, an import, a migration) takes the writers'
        lock alone."""
        conn.execution_options(lens_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = {max(1, int(self.busy_timeout * 1000))}")
                if record is None:
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
                else:
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock_shared(:k), pg_advisory_xact_lock(:space, hashtext(:record))"),
                                 {"k": _LOCK_KEY, "space": _RECORD_LOCK_SPACE, "record": record})
            yield conn

    @contextmanager
    def _reading(self) -> Iterator[Connection | None]:
        """A connection to read with (None when the database cannot be read: the read returns nothing)."""
        self.problem  # noqa: B018 -- a server that was away is tried again here
        engine = self._read_engine or self._engine
        if not self.readable or engine is None:
            yield None
            return
        try:
            conn = engine.connect()
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise self._unavailable(exc, "reading the notes") from None
        try:
            yield conn
        except (SQLAlchemyError, sqlite3.Error) as exc:
            self.leniency.check(exc, self.dialect)  # Undecodable: @tolerant reads again
            raise self._unavailable(exc, "reading the notes") from None
        finally:
            try:
                conn.close()
            except SQLAlchemyError:
                pass

    @contextmanager
    def _writing(self, doing: str = "saving", record: tuple[str, ...] | None = None) -> Iterator[Connection]:
        """One write transaction; AnnotationsUnavailable when refused (a copy of `problem` when the
        store is read-only)."""
        p = self.problem
        if p is not None or self._engine is None:
            p = p or AnnotationsUnavailable(self.path, "error", f"The annotations database {self.path} is not open.")
            raise AnnotationsUnavailable(p.path, p.reason, p.message)
        waiting = record is not None  # one record's write: an import running in this process lets it in first
        if waiting:
            self._writer_waits(True)
        try:
            try:
                conn = self._engine.connect()
            except (SQLAlchemyError, sqlite3.Error) as exc:
                raise self._unavailable(exc, doing) from None
            try:
                with self._write_transaction(conn, None if record is None else "\x1f".join(record)):
                    if waiting:  # the lock is held: an import waiting for this writer goes on (and waits for the commit)
                        self._writer_waits(False)
                        waiting = False
                    yield conn
            except (SQLAlchemyError, sqlite3.Error) as exc:
                self.leniency.check(exc, self.dialect)  # Undecodable: @tolerant writes again
                raise self._unavailable(exc, doing) from None
            finally:
                try:
                    conn.close()
                except SQLAlchemyError:
                    pass
        finally:
            if waiting:
                self._writer_waits(False)

    def _now(self, after: str | None = None) -> str:
        stamp = now_iso(self._clock())
        return later(after) if after is not None and stamp <= after else stamp

    def _text_order(self, column: Any) -> Any:
        """`column` ordered byte-wise (SQLite's default; PostgreSQL's is the server's locale)."""
        return column.collate("C") if self.dialect == "postgresql" else column

    # -- reading

    def _select_notes(self, *where: Any) -> Any:
        """Notes as damage.note_rows reads them (their tags as one comma-separated text), by question and run."""
        return sa.select(*NOTE_COLUMNS).where(*where).order_by(self._text_order(notes_t.c.question_id), self._text_order(notes_t.c.run))

    @tolerant
    def note(self, benchmark: str, question_id: str, run: str = "") -> Note | None:
        """The note (None: none, or a damaged row, which a save replaces)."""
        with self._reading() as con:
            if con is None:
                return None
            found = self._note_in(con, (benchmark, question_id, run))
            return found[1] if found else None

    @tolerant
    def notes(self, benchmark: str, *, question_id: str | None = None, run: str | None = None,
              bad: list[str] | None = None) -> list[Note]:
        """The benchmark's notes (optionally of one question and/or one run; run "" = question
        notes), ordered by question id, then run. A damaged row (a value of the wrong type, a time
        not as stored) is left out, and named in `bad` when given."""
        where = [notes_t.c.benchmark == benchmark]
        if question_id is not None:
            where.append(notes_t.c.question_id == question_id)
        if run is not None:
            where.append(notes_t.c.run == run)
        with self._reading() as con:
            if con is None:
                return []
            return notes_of(con.execute(self._select_notes(*where)).all(), bad)

    def _correction_in(self, con: Connection, key: tuple[str, str]) -> Correction | None:
        return correction_of(con.execute(sa.select(*CORRECTION_COLUMNS).where(
            corrections_t.c.benchmark == key[0], corrections_t.c.question_id == key[1])).first())

    @tolerant
    def correction(self, benchmark: str, question_id: str) -> Correction | None:
        with self._reading() as con:
            if con is None:
                return None
            return self._correction_in(con, (benchmark, question_id))

    @tolerant
    def corrections(self, benchmark: str, *, bad: list[str] | None = None) -> list[Correction]:
        """The benchmark's corrections by question id (damaged rows left out, named in `bad`)."""
        with self._reading() as con:
            if con is None:
                return []
            return corrections_of(con.execute(sa.select(*CORRECTION_COLUMNS).where(corrections_t.c.benchmark == benchmark)
                                              .order_by(self._text_order(corrections_t.c.question_id))), bad)

    @tolerant
    def vocabulary(self) -> list[str]:
        """The tags offered, in their order (the defaults when the database cannot be read)."""
        with self._reading() as con:
            if con is None:
                return list(DEFAULT_TAGS)
            return list(con.execute(sa.select(vocabulary_t.c.tag).order_by(
                vocabulary_t.c.position, self._text_order(vocabulary_t.c.tag))).scalars())

    @tolerant
    def tag_usage(self, benchmark: str | None = None) -> dict[str, int]:
        """How many notes carry each tag (of one benchmark, or of all)."""
        t, n = note_tags_t, notes_t
        query = sa.select(t.c.tag, sa.func.count()).select_from(t.join(n, n.c.id == t.c.note_id))
        if benchmark is not None:
            query = query.where(n.c.benchmark == benchmark)
        with self._reading() as con:
            if con is None:
                return {}
            return {tag: int(k) for tag, k in con.execute(query.group_by(t.c.tag).order_by(self._text_order(t.c.tag)))}

    @tolerant
    def benchmarks(self) -> dict[str, int]:
        """Every benchmark identity with annotations, and how many (notes + corrections) it has:
        notes filed under an older identity (the gold changed) show up here."""
        both = sa.union_all(sa.select(notes_t.c.benchmark), sa.select(corrections_t.c.benchmark)).subquery()
        query = sa.select(both.c.benchmark, sa.func.count()).group_by(both.c.benchmark).order_by(self._text_order(both.c.benchmark))
        with self._reading() as con:
            if con is None:
                return {}
            return {b: int(k) for b, k in con.execute(query)}

    # -- notes

    def _note_in(self, con: Connection, key: tuple[str, str, str]) -> tuple[int, Note | None] | None:
        """(id, the note) stored under `key`; the note None for a damaged row (a save replaces it)."""
        found = note_rows(con.execute(self._select_notes(
            notes_t.c.benchmark == key[0], notes_t.c.question_id == key[1], notes_t.c.run == key[2])).all())
        return (found[0][0], found[0][2]) if found else None

    @staticmethod
    def _unknown_tags(con: Connection, tags: tuple[str, ...]) -> list[str]:
        known = set(con.execute(sa.select(vocabulary_t.c.tag)).scalars())
        return [t for t in tags if t not in known]

    @staticmethod
    def _set_tags(con: Connection, note_id: int, tags: Iterable[str], *, replace: bool) -> None:
        if replace:
            con.execute(sa.delete(note_tags_t).where(note_tags_t.c.note_id == note_id))
        rows = [{"note_id": note_id, "tag": t} for t in tags]
        if rows:
            con.execute(sa.insert(note_tags_t), rows)

    @tolerant
    def save_note(self, benchmark: str, question_id: str, run: str = "", *, text: str, tags: Iterable[str] = (),
                  author: str, expected_revision: int | None) -> Note:
        """Create or change a note; `expected_revision` is the revision the editor started from (0:
        there was no note; None: overwrite whatever is there). Returns the stored note (unchanged
        and not rewritten when text and tags are the same). Raises Conflict, InvalidInput (an empty
        author, text too long, a tag not in the vocabulary) or AnnotationsUnavailable."""
        key = (clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), clean_key(run, "run", empty=True))
        text, tag_set, author = clean_text(text), clean_tags(tags), clean_author(author)
        with self._writing("saving the note", ("note", *key)) as con:
            unknown = self._unknown_tags(con, tag_set)
            if unknown:
                raise InvalidInput(f"not in the tag vocabulary: {', '.join(unknown)} (add them to the vocabulary first)")
            found = self._note_in(con, key)
            current = found[1] if found else None
            check_revision(current, expected_revision)
            if found and current is not None:
                if current.text == text and current.tags == tag_set:
                    return current
                note = Note(*key, text, tag_set, author, current.created, self._now(current.updated), current.revision + 1)
                con.execute(sa.update(notes_t).where(notes_t.c.id == found[0]).values(
                    text=note.text, author=note.author, updated=note.updated, revision=note.revision))
                self._set_tags(con, found[0], tag_set, replace=True)
            else:
                if found:  # a damaged row under this key: replaced by the new note
                    con.execute(sa.delete(note_tags_t).where(note_tags_t.c.note_id == found[0]))
                    con.execute(sa.delete(notes_t).where(notes_t.c.id == found[0]))
                stamp = self._now()
                note = Note(*key, text, tag_set, author, stamp, stamp, 1)
                self._set_tags(con, self._insert_note(con, note), tag_set, replace=False)
            return note

    @staticmethod
    def _insert_note(con: Connection, note: Note) -> int:
        result = con.execute(sa.insert(notes_t).values(
            benchmark=note.benchmark, question_id=note.question_id, run=note.run, text=note.text, author=note.author,
            created=note.created, updated=note.updated, revision=note.revision))
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0])

    @tolerant
    def delete_note(self, benchmark: str, question_id: str, run: str = "", *, expected_revision: int | None) -> bool:
        """Delete a note (Conflict when it changed since `expected_revision`); False when there was none."""
        with self._writing("deleting the note", ("note", benchmark, question_id, run)) as con:
            found = self._note_in(con, (benchmark, question_id, run))
            check_revision(found[1] if found else None, expected_revision)
            if not found:
                return False
            con.execute(sa.delete(note_tags_t).where(note_tags_t.c.note_id == found[0]))
            con.execute(sa.delete(notes_t).where(notes_t.c.id == found[0]))
            return True

    # -- corrections

    @tolerant
    def save_correction(self, benchmark: str, question_id: str, *, answer: str = "", exclude: bool = False, author: str,
                        expected_revision: int | None) -> Correction:
        """Set a question's corrected gold answer, or mark it excluded (`exclude=True`, answer
        ignored). Same revision rule, and errors, as `save_note`."""
        key = (clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"))
        action = "exclude" if exclude else "answer"
        answer = "" if exclude else clean_text(answer, "the corrected answer", MAX_ANSWER)
        if not exclude and not answer:
            raise InvalidInput("a corrected answer cannot be empty (mark the question excluded instead)")
        author = clean_author(author)
        with self._writing("saving the correction", ("correction", *key)) as con:
            current = self._correction_in(con, key)
            check_revision(current, expected_revision)
            if current is not None:
                if (current.action, current.answer) == (action, answer):
                    return current
                fixed = Correction(*key, action, answer, author, current.created, self._now(current.updated), current.revision + 1)
                con.execute(sa.update(corrections_t).where(corrections_t.c.benchmark == key[0], corrections_t.c.question_id == key[1])
                            .values(action=action, answer=answer, author=author, updated=fixed.updated, revision=fixed.revision))
                return fixed
            stamp = self._now()
            fixed = Correction(*key, action, answer, author, stamp, stamp, 1)
            con.execute(sa.delete(corrections_t).where(corrections_t.c.benchmark == key[0], corrections_t.c.question_id == key[1]))
            self._insert_correction(con, fixed)
            return fixed

    @staticmethod
    def _insert_correction(con: Connection, c: Correction) -> None:
        con.execute(sa.insert(corrections_t).values(
            benchmark=c.benchmark, question_id=c.question_id, action=c.action, answer=c.answer, author=c.author,
            created=c.created, updated=c.updated, revision=c.revision))

    @tolerant
    def delete_correction(self, benchmark: str, question_id: str, *, expected_revision: int | None) -> bool:
        with self._writing("deleting the correction", ("correction", benchmark, question_id)) as con:
            current = self._correction_in(con, (benchmark, question_id))
            check_revision(current, expected_revision)
            if current is None:
                return False
            con.execute(sa.delete(corrections_t).where(corrections_t.c.benchmark == benchmark, corrections_t.c.question_id == question_id))
            return True

    # -- saved slices

    def _slice_in(self, con: Connection, key: tuple[str, str]) -> SavedSlice | None:
        return slice_of(con.execute(sa.select(*SLICE_COLUMNS).where(slices_t.c.benchmark == key[0], slices_t.c.name == key[1])).first())

    @tolerant
    def saved_slice(self, benchmark: str, name: str) -> SavedSlice | None:
        with self._reading() as con:
            if con is None:
                return None
            return self._slice_in(con, (benchmark, name))

    @tolerant
    def saved_slices(self, benchmark: str, *, bad: list[str] | None = None) -> list[SavedSlice]:
        """The benchmark's saved slices, by name (damaged rows left out, named in `bad`)."""
        with self._reading() as con:
            if con is None:
                return []
            return slices_of(con.execute(sa.select(*SLICE_COLUMNS).where(slices_t.c.benchmark == benchmark)
                                         .order_by(self._text_order(slices_t.c.name))), bad)

    @tolerant
    def save_slice(self, benchmark: str, name: str, *, definition: Mapping[str, Iterable[str]], author: str, note: str = "",
                   expected_revision: int | None) -> SavedSlice:
        """Save a slice under `name` (a new one: expected_revision 0; a change: the revision it was
        read at). Same revision rule, and errors, as `save_note`; at most MAX_SLICES per benchmark."""
        key = (clean_key(benchmark, "benchmark"), clean_slice_name(name))
        spec, author, note = clean_definition(definition), clean_author(author), clean_text(note, "the slice's note")
        with self._writing("saving the slice", ("slice", *key)) as con:
            current = self._slice_in(con, key)
            check_revision(current, expected_revision)
            if current is not None:
                if (current.definition, current.note) == (spec, note):
                    return current
                saved = SavedSlice(*key, spec, author, note, current.created, self._now(current.updated), current.revision + 1)
                con.execute(sa.update(slices_t).where(slices_t.c.benchmark == key[0], slices_t.c.name == key[1]).values(
                    definition=definition_text(spec), author=author, note=note, updated=saved.updated, revision=saved.revision))
                return saved
            count = con.execute(sa.select(sa.func.count()).select_from(slices_t).where(slices_t.c.benchmark == key[0])).scalar()
            if int(count or 0) >= MAX_SLICES:
                raise InvalidInput(f"a benchmark keeps at most {MAX_SLICES:,} saved slices")
            stamp = self._now()
            saved = SavedSlice(*key, spec, author, note, stamp, stamp, 1)
            con.execute(sa.delete(slices_t).where(slices_t.c.benchmark == key[0], slices_t.c.name == key[1]))  # a damaged row
            self._insert_slice(con, saved)
            return saved

    @staticmethod
    def _insert_slice(con: Connection, s: SavedSlice) -> None:
        con.execute(sa.insert(slices_t).values(benchmark=s.benchmark, name=s.name, definition=definition_text(s.definition),
                                               author=s.author, note=s.note, created=s.created, updated=s.updated, revision=s.revision))

    @tolerant
    def delete_slice(self, benchmark: str, name: str, *, expected_revision: int | None) -> bool:
        """Delete a saved slice (Conflict when it changed since `expected_revision`); False when there was none."""
        with self._writing("deleting the slice", ("slice", benchmark, name)) as con:
            current = self._slice_in(con, (benchmark, name))
            check_revision(current, expected_revision)
            if current is None:
                return False
            con.execute(sa.delete(slices_t).where(slices_t.c.benchmark == benchmark, slices_t.c.name == name))
            return True

    # -- the vocabulary

    @staticmethod
    def _vocabulary_end(con: Connection) -> tuple[int, int]:
        """(how many tags, the next free position)."""
        count, last = con.execute(sa.select(sa.func.count(), sa.func.max(vocabulary_t.c.position))).one()
        return int(count), (last if last is not None else -1) + 1

    @staticmethod
    def _has_tag(con: Connection, tag: str) -> bool:
        return con.execute(sa.select(vocabulary_t.c.tag).where(vocabulary_t.c.tag == tag)).first() is not None

    @tolerant
    def add_tag(self, tag: str) -> str:
        """Add a tag at the end of the vocabulary (no change when it is there); returns its clean name."""
        name = clean_tag(tag)
        with self._writing("adding the tag") as con:
            count, position = self._vocabulary_end(con)
            if self._has_tag(con, name):
                return name
            if count >= MAX_VOCABULARY:
                raise InvalidInput(f"the vocabulary holds at most {MAX_VOCABULARY} tags")
            con.execute(sa.insert(vocabulary_t).values(tag=name, position=position))
        return name

    def _touch_tagged(self, con: Connection, tag: str) -> list[int]:
        """The ids of the notes carrying `tag`, each given a new revision and time (their tags change)."""
        rows = con.execute(sa.select(notes_t.c.id, notes_t.c.updated).select_from(
            notes_t.join(note_tags_t, note_tags_t.c.note_id == notes_t.c.id)).where(note_tags_t.c.tag == tag)).all()
        for note_id, updated in rows:
            con.execute(sa.update(notes_t).where(notes_t.c.id == note_id).values(revision=notes_t.c.revision + 1, updated=self._now(updated)))
        return [r[0] for r in rows]

    @tolerant
    def rename_tag(self, old: str, new: str) -> int:
        """Rename a tag in the vocabulary (keeping its place) and on every note; returns how many
        notes changed. InvalidInput when `old` is unknown or `new` exists already."""
        old, new = clean_tag(old), clean_tag(new)
        if old == new:
            return 0
        with self._writing("renaming the tag") as con:
            if not self._has_tag(con, old):
                raise InvalidInput(f"there is no tag {old!r} to rename")
            if self._has_tag(con, new):
                raise InvalidInput(f"the tag {new!r} exists already")
            con.execute(sa.update(vocabulary_t).where(vocabulary_t.c.tag == old).values(tag=new))
            ids = self._touch_tagged(con, old)
            con.execute(sa.update(note_tags_t).where(note_tags_t.c.tag == old).values(tag=new))
            return len(ids)

    @tolerant
    def remove_tag(self, tag: str) -> int:
        """Remove a tag from the vocabulary and from every note carrying it (ask first: see
        `tag_usage`); returns how many notes changed."""
        name = clean_tag(tag)
        with self._writing("removing the tag") as con:
            if not self._has_tag(con, name):
                raise InvalidInput(f"there is no tag {name!r} to remove")
            con.execute(sa.delete(vocabulary_t).where(vocabulary_t.c.tag == name))
            ids = self._touch_tagged(con, name)
            con.execute(sa.delete(note_tags_t).where(note_tags_t.c.tag == name))
            return len(ids)

    # -- merging (import)

    @staticmethod
    def _merged(record: Any, stored: Any) -> Any:
        """What a merge keeps of `record` (an import's) over `stored`: None when the stored one stays
        (its `updated` is as late or later), else the record with created = the earlier of both and
        revision = stored + 1."""
        if stored is None:
            return record
        if record.updated <= stored.updated:
            return None
        return replace(record, created=min(record.created, stored.created), revision=stored.revision + 1)

    def _merge_notes(self, con: Connection, notes: list[Note], counts: MergeCounts) -> None:
        """Every stored note of the import's benchmarks read once; then one bulk insert, one bulk
        update and the tags of both (a record seen twice in one import merges with the first)."""
        state: dict[Any, tuple[int | None, Note | None]] = {}
        for benchmark in sorted({n.benchmark for n in notes}):
            qids = sorted({n.question_id for n in notes if n.benchmark == benchmark})
            for start in range(0, len(qids), 500):  # only the batch's questions: an import of 250,000 notes is read once, in parts
                rows = con.execute(self._select_notes(notes_t.c.benchmark == benchmark,
                                                      notes_t.c.question_id.in_(qids[start:start + 500]))).all()
                for stored_id, key, note in note_rows(rows):
                    state[key] = (stored_id, note)  # note None: a damaged row, replaced by the import's record
        inserts: dict[tuple[str, str, str], Note] = {}
        updates: dict[int, Note] = {}
        for n in notes:
            found = state.get(n.key)
            note_id, stored = (found[0], found[1]) if found else (None, None)
            kept = self._merged(n, stored)
            if kept is None:
                counts.unchanged += 1
                continue
            state[n.key] = (note_id, kept)
            if note_id is None:
                inserts[n.key] = kept
            else:
                updates[note_id] = kept
            if stored is None:
                counts.added += 1
            else:
                counts.updated += 1
        if updates:
            con.execute(sa.update(notes_t).where(notes_t.c.id == sa.bindparam("note_id")).values(
                text=sa.bindparam("new_text"), author=sa.bindparam("new_author"), created=sa.bindparam("new_created"),
                updated=sa.bindparam("new_updated"), revision=sa.bindparam("new_revision")),
                [{"note_id": k, "new_text": n.text, "new_author": n.author, "new_created": n.created, "new_updated": n.updated,
                  "new_revision": n.revision} for k, n in updates.items()])
            ids = list(updates)
            for start in range(0, len(ids), 500):
                con.execute(sa.delete(note_tags_t).where(note_tags_t.c.note_id.in_(ids[start:start + 500])))
        tag_rows = [{"note_id": k, "tag": t} for k, n in updates.items() for t in n.tags]
        if inserts:
            fresh = list(inserts.values())
            result = con.execute(sa.insert(notes_t).returning(notes_t.c.id, sort_by_parameter_order=True), [
                {"benchmark": n.benchmark, "question_id": n.question_id, "run": n.run, "text": n.text, "author": n.author,
                 "created": n.created, "updated": n.updated, "revision": n.revision} for n in fresh])
            tag_rows += [{"note_id": note_id, "tag": t} for note_id, n in zip(result.scalars().all(), fresh, strict=True) for t in n.tags]
        if tag_rows:
            con.execute(sa.insert(note_tags_t), tag_rows)

    def _merge_rows(self, con: Connection, records: list[Any], counts: MergeCounts, table: sa.Table, columns: tuple,
                    read: Callable[[Sequence[Any]], Any], values: Callable[[Any], dict[str, Any]]) -> None:
        """Corrections or saved slices (keyed by benchmark and their second key column), merged as notes are."""
        second = columns[1]
        state: dict[Any, tuple[bool, Any]] = {}
        for benchmark in sorted({r.key[0] for r in records}):
            seconds = sorted({r.key[1] for r in records if r.key[0] == benchmark})
            for start in range(0, len(seconds), 500):
                for row in con.execute(sa.select(*columns).where(table.c.benchmark == benchmark, second.in_(seconds[start:start + 500]))):
                    state[(row[0], row[1])] = (True, read(row))  # None: damaged, replaced
        inserts: dict[tuple[str, str], Any] = {}
        updates: dict[tuple[str, str], Any] = {}
        for r in records:
            was_stored, stored = state.get(r.key, (False, None))
            kept = self._merged(r, stored)
            if kept is None:
                counts.unchanged += 1
                continue
            state[r.key] = (was_stored, kept)
            (updates if was_stored else inserts)[r.key] = kept
            if stored is None:
                counts.added += 1
            else:
                counts.updated += 1
        common = lambda r: {**values(r), "author": r.author, "created": r.created, "updated": r.updated, "revision": r.revision}
        if inserts:
            con.execute(sa.insert(table), [{"benchmark": r.key[0], second.name: r.key[1], **common(r)} for r in inserts.values()])
        if updates:
            names = list(common(next(iter(updates.values()))))
            con.execute(sa.update(table).where(table.c.benchmark == sa.bindparam("key_0"), second == sa.bindparam("key_1"))
                        .values({n: sa.bindparam(f"new_{n}") for n in names}),
                        [{"key_0": r.key[0], "key_1": r.key[1], **{f"new_{n}": v for n, v in common(r).items()}} for r in updates.values()])

    def _writer_waits(self, waiting: bool) -> None:
        """A write of one record is waiting for the lock (True) or has it (False): an import lets it in first."""
        with self._gate:
            self._waiting += 1 if waiting else -1
            self._gate.notify_all()

    def _let_writers_in(self) -> None:
        """Between two batches of an import: wait until every write of this process that is waiting for
        the lock has begun (at most WRITER_WAIT seconds, so an import is never stopped for good)."""
        with self._gate:
            self._gate.wait_for(lambda: self._waiting <= 0, timeout=WRITER_WAIT)

    @tolerant
    def merge(self, notes: Iterable[Note], corrections: Iterable[Correction] = (), slices: Iterable[SavedSlice] = (), *,
              progress: Callable[[int, int], None] | None = None, batch: int | None = None) -> MergeCounts:
        """Merge records (of an import): a record not stored is added (with its revision), one whose
        `updated` is later than the stored one replaces it (revision = stored + 1, `created` the
        earlier of both), any other leaves the stored one as it is (a damaged stored row is replaced).
        Tags not in the vocabulary are added to it first.

        In batches of `batch` records (`import_batch`; None: each sized from the last one's time to
        hold the lock about IMPORT_HOLD seconds), each one write transaction, so that other
        writers get in between: a save of this process waiting for the lock goes before the next
        batch; on SQLite the import also pauses `import_pause` seconds between batches, longer than
        SQLite's longest wait between two tries, so a writer of another process finds the lock free
        (PostgreSQL queues waiting writers in order). `progress(done, total)` is called after each
        batch. An import stopped part-way (the database went away) keeps what its batches stored:
        importing the same file again completes it (the records already stored are unchanged)."""
        counts = MergeCounts()
        notes = [make_note(n.benchmark, n.question_id, n.run, text=n.text, tags=n.tags, author=n.author,
                           created=n.created, updated=n.updated, revision=n.revision) for n in notes]
        corrections = [make_correction(c.benchmark, c.question_id, action=c.action, answer=c.answer, author=c.author,
                                       created=c.created, updated=c.updated, revision=c.revision) for c in corrections]
        slices = [make_slice(s.benchmark, s.name, definition=s.definition, author=s.author, note=s.note,
                             created=s.created, updated=s.updated, revision=s.revision) for s in slices]
        fixed = batch or self.import_batch  # None: each batch sized from the last one's time, to hold the lock ~IMPORT_HOLD
        size = max(1, fixed or IMPORT_FIRST_BATCH)
        total, done, analyzed = len(notes) + len(corrections) + len(slices), 0, 500
        needed = sorted({t for n in notes for t in n.tags})
        if needed:
            with self._writing("importing") as con:
                new_tags = self._unknown_tags(con, tuple(needed))
                if new_tags:
                    count, start = self._vocabulary_end(con)
                    if count + len(new_tags) > MAX_VOCABULARY:
                        raise InvalidInput(f"the import needs {len(new_tags)} new tags; the vocabulary holds at most {MAX_VOCABULARY}")
                    con.execute(sa.insert(vocabulary_t), [{"tag": t, "position": start + i} for i, t in enumerate(new_tags)])
                    counts.tags_added = new_tags
        steps: list[tuple[str, list[Any]]] = [("notes", notes), ("corrections", corrections), ("slices", slices)]
        for kind, records in steps:
            start = 0
            while start < len(records):
                if done:
                    self._let_writers_in()
                    if self.dialect == "sqlite" and self.import_pause > 0:
                        time.sleep(self.import_pause)
                part = records[start:start + size]
                start += len(part)
                began = time.perf_counter()
                with self._writing("importing") as con:
                    if kind == "notes":
                        self._merge_notes(con, part, counts)
                    elif kind == "corrections":
                        self._merge_rows(con, part, counts, corrections_t, CORRECTION_COLUMNS, correction_of,
                                         lambda c: {"action": c.action, "answer": c.answer})
                    else:
                        self._merge_rows(con, part, counts, slices_t, SLICE_COLUMNS, slice_of,
                                         lambda s: {"definition": definition_text(s.definition), "note": s.note})
                if not fixed:  # the next batch sized to hold the lock about IMPORT_HOLD seconds (within 100 .. 50,000 records)
                    took = max(time.perf_counter() - began, 1e-3)
                    size = int(min(50_000, max(100, len(part) * IMPORT_HOLD / took)))
                done += len(part)
                if done >= analyzed * 2:  # the tables doubled: PostgreSQL's plans are made again from fresh statistics
                    analyzed = done
                    self._analyze()
                if progress is not None:
                    progress(done, total)
        return counts

    def _analyze(self) -> None:
        """PostgreSQL: fresh statistics for the tables an import fills (without them a table that grew
        from nothing is read whole for each batch's lookups, and each batch holds the lock longer)."""
        if self.dialect != "postgresql" or self._engine is None:
            return
        try:
            with self._engine.connect() as conn:
                conn.exec_driver_sql("ANALYZE notes, note_tags, corrections, saved_slices")
                conn.commit()
        except SQLAlchemyError:
            pass  # only a plan's speed depends on it

"""The annotations database: one SQLite file shared by every session and process.

Each call opens its own connection and closes it (Streamlit sessions are threads; a connection is
never shared), in WAL mode with a busy timeout; every write is one `BEGIN IMMEDIATE` transaction.
Saving a note or correction names the revision it was edited from (`expected_revision`, 0 for
"there was none"): when the stored revision differs, nothing is written and `Conflict` carries the
stored one, so the page can say who saved what in between.

A file that cannot be used never gives a traceback: the store opens read-only, `store.problem` is an
`AnnotationsUnavailable` whose `message` is a sentence naming the file, reads still work when the file
can be read (and return nothing when it cannot), and every write raises that same exception.

Schema (`PRAGMA user_version` = SCHEMA_VERSION = 2; older files are migrated step by step):

    notes(id INTEGER PRIMARY KEY, benchmark, question_id, run, text, author, created, updated,
          revision, UNIQUE(benchmark, question_id, run))     run '' = a note on the question (the gold)
    note_tags(note_id -> notes.id ON DELETE CASCADE, tag, PRIMARY KEY(note_id, tag))
    vocabulary(tag PRIMARY KEY, position)                      the tags offered, in their order
    corrections(benchmark, question_id, action 'answer'|'exclude', answer, author, created, updated,
                revision, PRIMARY KEY(benchmark, question_id))

Times are UTC, ISO 8601 with microseconds and a `Z` (`2024-05-01T12:00:00.000000Z`), so that they
sort as text. Version 1 (SCHEMA_V1 below) kept tags as one comma-separated column, had no revisions
and no vocabulary, and wrote an exclusion as a NULL answer.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dashboard.core import settings

__all__ = [
    "SCHEMA_VERSION", "SCHEMA_V1", "DEFAULT_TAGS", "FILE_NAME", "APP_DIR",
    "MAX_TEXT", "MAX_TAG", "MAX_TAGS", "MAX_AUTHOR", "MAX_KEY", "MAX_ANSWER", "MAX_VOCABULARY",
    "Note", "Correction", "MergeCounts", "Conflict", "AnnotationsUnavailable", "InvalidInput",
    "AnnotationStore", "default_path", "resolve_path", "now_iso", "parse_time",
    "clean_text", "clean_tag", "clean_tags", "clean_author", "clean_key", "make_note", "make_correction",
]

SCHEMA_VERSION = 2
FILE_NAME = "annotations.sqlite3"
APP_DIR = "docbench-lens"
DEFAULT_TAGS = (
    "wrong_page_retrieved", "reading_or_ocr_error", "reasoning_error", "extraction_error", "format_only",
    "hallucination", "refused_wrongly", "gold_wrong", "question_ambiguous",
)
DEFAULT_BUSY_TIMEOUT = 10.0  # seconds a write waits for another writer before giving up

# caps on everything a user (or an imported file) can put in
MAX_TEXT = 10_000  # note text, characters
MAX_TAG = 64  # one tag name
MAX_TAGS = 32  # tags on one note
MAX_AUTHOR = 100
MAX_KEY = 1_000  # benchmark identity, question id, run name
MAX_ANSWER = 2_000  # a corrected gold answer
MAX_VOCABULARY = 200

_TAG = re.compile(r"[a-z0-9][a-z0-9_\-]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters but tab and line feed
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


# ----------------------------------------------------------------------------- where the file lives


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """`annotations.sqlite3` in the user data folder (dashboard.core.settings.data_dir):
    $LENS_DATA_DIR, else $XDG_DATA_HOME/docbench-lens, else ~/.local/share/docbench-lens."""
    return settings.data_dir(env) / FILE_NAME


def resolve_path(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The explicit path (the app's `--annotations PATH`) when given, else `default_path(env)`."""
    if path is not None and str(path) != "":
        return Path(path).expanduser()
    return default_path(env)


# ----------------------------------------------------------------------------- errors


class InvalidInput(ValueError):
    """A value a user gave that cannot be stored; `str(exc)` is a sentence for the user."""


class AnnotationsUnavailable(Exception):
    """The annotations file cannot be used (for this write, or at all). `message` is a sentence for
    the user naming the file; `reason` is one of corrupt, locked, unwritable, newer, read_only,
    foreign, error."""

    def __init__(self, path: Path, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.message = message


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown_time(stamp: str) -> str:
    return stamp[:16].replace("T", " ") + " UTC" if len(stamp) >= 16 else stamp


class Conflict(Exception):
    """A save that was not made because the stored note (or correction) is no longer the revision
    the editor started from. `current` is what is stored now (None: it was deleted); `message` says
    who saved what, and when."""

    def __init__(self, current: Note | Correction | None, expected_revision: int) -> None:
        self.current = current
        self.expected_revision = expected_revision
        what = "correction" if isinstance(current, Correction) else "note"
        if current is None:
            self.message = f"This {what} was deleted by someone else while you were editing it; your change was not saved."
        else:
            said = current.text if isinstance(current, Note) else current.describe()
            tags = f" [{', '.join(current.tags)}]" if isinstance(current, Note) and current.tags else ""
            verb = "wrote this" if expected_revision == 0 else "changed this"
            self.message = (f"{current.author} {verb} {what} at {_shown_time(current.updated)} while you were editing it; "
                            f"your change was not saved. Their {what}: “{_excerpt(said)}”{tags}")
        super().__init__(self.message)


# ----------------------------------------------------------------------------- records and validation


@dataclass(frozen=True, slots=True)
class Note:
    """A note on an answer (`run` = the run's name) or on a question (`run` = "": the gold itself)."""

    benchmark: str
    question_id: str
    run: str
    text: str
    tags: tuple[str, ...]
    author: str
    created: str
    updated: str
    revision: int = 1

    @property
    def kind(self) -> str:
        return "answer" if self.run else "question"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.benchmark, self.question_id, self.run)


@dataclass(frozen=True, slots=True)
class Correction:
    """A gold correction: `action` "answer" (the gold answer is `answer`) or "exclude"."""

    benchmark: str
    question_id: str
    action: str
    answer: str
    author: str
    created: str
    updated: str
    revision: int = 1

    @property
    def exclude(self) -> bool:
        return self.action == "exclude"

    @property
    def key(self) -> tuple[str, str]:
        return (self.benchmark, self.question_id)

    def describe(self) -> str:
        return "exclude this question" if self.exclude else f"the gold answer is {self.answer}"


@dataclass(slots=True)
class MergeCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    tags_added: list[str] = field(default_factory=list)


def now_iso(moment: datetime | None = None) -> str:
    """A UTC time as stored: `2024-05-01T12:00:00.000000Z`."""
    moment = moment or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(_TIME_FORMAT)


def parse_time(value: object, what: str = "time") -> str:
    """An ISO 8601 time (`Z`, an offset, or none = UTC) in the stored form; InvalidInput otherwise."""
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-01T12:00:00Z")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-01T12:00:00Z, not {_excerpt(value, 40)!r}") from None
    return now_iso(moment)


def _later(stamp: str) -> str:
    """One microsecond after a stored time."""
    return now_iso(datetime.strptime(stamp, _TIME_FORMAT).replace(tzinfo=UTC) + timedelta(microseconds=1))


def _plain(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text")
    return value


def clean_text(value: object, what: str = "note text", limit: int = MAX_TEXT) -> str:
    """Free text: line ends made `\\n`, control characters (but tab and line feed) removed, outer
    white space stripped, at most `limit` characters."""
    text = _CONTROL.sub("", _plain(value, what).replace("\r\n", "\n").replace("\r", "\n")).strip()
    if len(text) > limit:
        raise InvalidInput(f"{what} is {len(text):,} characters long; at most {limit:,} can be saved")
    return text


def clean_tag(value: object) -> str:
    """A tag name: lower case, white space made `_`, letters a-z, digits, `_` and `-`, at most 64."""
    text = "_".join(_plain(value, "a tag").strip().lower().split())
    if not text:
        raise InvalidInput("a tag cannot be empty")
    if len(text) > MAX_TAG:
        raise InvalidInput(f"the tag {_excerpt(text, 40)!r} is {len(text)} characters long; at most {MAX_TAG} are allowed")
    if not _TAG.fullmatch(text):
        raise InvalidInput(f"the tag {_excerpt(text, 40)!r} may only hold letters a-z, digits, '_' and '-' (and start with a letter or digit)")
    return text


def clean_tags(values: Iterable[object]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise InvalidInput("tags must be a list of tag names")
    tags = sorted({clean_tag(v) for v in values})
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"a note can carry at most {MAX_TAGS} tags, not {len(tags)}")
    return tuple(tags)


def clean_author(value: object) -> str:
    text = " ".join(_CONTROL.sub("", _plain(value, "the author's name")).split())
    if not text:
        raise InvalidInput("type your name first: every note records who wrote it")
    if len(text) > MAX_AUTHOR:
        raise InvalidInput(f"the author's name is {len(text)} characters long; at most {MAX_AUTHOR} are allowed")
    return text


def clean_key(value: object, what: str, *, empty: bool = False) -> str:
    """A benchmark identity, question id or run name: text without control characters, at most
    MAX_KEY characters, outer white space stripped (as the loaders strip ids); empty only when allowed."""
    text = _plain(value, what).strip()
    if _CONTROL.search(text) or "\n" in text or "\t" in text:
        raise InvalidInput(f"{what} must not hold control characters or line breaks")
    if not text and not empty:
        raise InvalidInput(f"{what} cannot be empty")
    if len(text) > MAX_KEY:
        raise InvalidInput(f"{what} is {len(text):,} characters long; at most {MAX_KEY:,} are allowed")
    return text


def _revision(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**62:
        raise InvalidInput("revision must be a whole number of at least 1")
    return value


def make_note(benchmark: object, question_id: object, run: object, *, text: object, tags: Iterable[object], author: object,
              created: object, updated: object, revision: object = 1) -> Note:
    """A validated Note (InvalidInput naming the first bad field otherwise)."""
    return Note(clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), clean_key(run, "run", empty=True),
                clean_text(text), clean_tags(tags), clean_author(author), parse_time(created, "created"),
                parse_time(updated, "updated"), _revision(revision))


def make_correction(benchmark: object, question_id: object, *, action: object, answer: object, author: object,
                    created: object, updated: object, revision: object = 1) -> Correction:
    """A validated Correction: action "answer" with a non-empty answer, or "exclude" (answer "")."""
    if action not in ("answer", "exclude"):
        raise InvalidInput(f"action must be 'answer' or 'exclude', not {_excerpt(str(action), 40)!r}")
    text = clean_text(answer, "the corrected answer", MAX_ANSWER)
    if action == "answer" and not text:
        raise InvalidInput("a corrected answer cannot be empty (mark the question excluded instead)")
    return Correction(clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), str(action),
                      "" if action == "exclude" else text, clean_author(author), parse_time(created, "created"),
                      parse_time(updated, "updated"), _revision(revision))


# ----------------------------------------------------------------------------- schema

SCHEMA_V1 = """
CREATE TABLE notes (
    benchmark TEXT NOT NULL, question_id TEXT NOT NULL, run TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL,
    PRIMARY KEY (benchmark, question_id, run));
CREATE TABLE corrections (
    benchmark TEXT NOT NULL, question_id TEXT NOT NULL, answer TEXT,
    author TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,
    PRIMARY KEY (benchmark, question_id));
"""

_NOTES_V2 = """
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    benchmark TEXT NOT NULL,
    question_id TEXT NOT NULL,
    run TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    UNIQUE (benchmark, question_id, run));
CREATE TABLE note_tags (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)) WITHOUT ROWID;
CREATE INDEX note_tags_by_tag ON note_tags(tag);
CREATE TABLE vocabulary (tag TEXT PRIMARY KEY, position INTEGER NOT NULL);
CREATE TABLE corrections (
    benchmark TEXT NOT NULL,
    question_id TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('answer', 'exclude')),
    answer TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    PRIMARY KEY (benchmark, question_id));
"""


def _script(con: sqlite3.Connection, sql: str) -> None:
    """Run DDL statements one by one (executescript would commit the open transaction)."""
    for statement in sql.split(";"):
        if statement.strip():
            con.execute(statement)


def _seed_vocabulary(con: sqlite3.Connection, tags: Iterable[str]) -> None:
    con.executemany("INSERT OR IGNORE INTO vocabulary(tag, position) VALUES (?, ?)", [(t, i) for i, t in enumerate(tags)])


def _create(con: sqlite3.Connection) -> None:
    _script(con, _NOTES_V2)
    _seed_vocabulary(con, DEFAULT_TAGS)


def _stamp_or_keep(value: str) -> str:
    try:
        return parse_time(value)
    except InvalidInput:
        return value


def _migrate_1_to_2(con: sqlite3.Connection) -> None:
    """Tags out of the comma-separated column into note_tags (invalid names dropped), a revision
    on every note and correction, the vocabulary (the defaults, then every other tag in use), and
    an exclusion as action 'exclude' instead of a NULL answer."""
    con.execute("ALTER TABLE notes RENAME TO notes_v1")
    con.execute("ALTER TABLE corrections RENAME TO corrections_v1")
    _script(con, _NOTES_V2)
    used: set[str] = set()
    rows = con.execute("SELECT benchmark, question_id, run, text, tags, author, created, updated FROM notes_v1").fetchall()
    for benchmark, qid, run, text, tags, author, created, updated in rows:
        cur = con.execute(
            "INSERT INTO notes(benchmark, question_id, run, text, author, created, updated, revision) VALUES (?,?,?,?,?,?,?,1)",
            (benchmark, qid, run or "", text or "", author or "(unknown)", _stamp_or_keep(created), _stamp_or_keep(updated)))
        names: set[str] = set()
        for raw in (tags or "").split(","):
            try:
                names.add(clean_tag(raw))
            except InvalidInput:
                continue
        con.executemany("INSERT INTO note_tags(note_id, tag) VALUES (?, ?)", [(cur.lastrowid, t) for t in sorted(names)])
        used |= names
    con.execute("""INSERT INTO corrections(benchmark, question_id, action, answer, author, created, updated, revision)
                   SELECT benchmark, question_id, CASE WHEN answer IS NULL THEN 'exclude' ELSE 'answer' END,
                          COALESCE(answer, ''), CASE WHEN author = '' THEN '(unknown)' ELSE author END, created, created, 1
                   FROM corrections_v1""")
    con.execute("DROP TABLE notes_v1")
    con.execute("DROP TABLE corrections_v1")
    _seed_vocabulary(con, list(DEFAULT_TAGS) + sorted(used - set(DEFAULT_TAGS)))


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _migrate_1_to_2}  # from version k to k + 1


class _Foreign(Exception):
    pass


class _Newer(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


# ----------------------------------------------------------------------------- the store


def _classify(path: Path, exc: BaseException, doing: str) -> AnnotationsUnavailable:
    text = str(exc).lower()
    if isinstance(exc, _Newer):
        return AnnotationsUnavailable(path, "newer", (
            f"The annotations file {path} was written by a newer version of DocBench Lens (schema {exc.version}; "
            f"this version knows up to {SCHEMA_VERSION}): notes are read-only here."))
    if isinstance(exc, _Foreign):
        return AnnotationsUnavailable(path, "foreign", (
            f"The file {path} is an SQLite database of some other program, not an annotations file: notes are "
            "read-only. Give another file with --annotations PATH."))
    if "locked" in text or "busy" in text:
        return AnnotationsUnavailable(path, "locked", (
            f"The annotations file {path} is locked by another program, so {doing} did not happen; "
            "try again in a moment."))
    if "not a database" in text or "malformed" in text or "encrypted" in text or "corrupt" in text:
        return AnnotationsUnavailable(path, "corrupt", (
            f"The annotations file {path} is damaged or not a database ({exc}): notes are read-only and cannot "
            "be saved. Move the file aside (a new one is then made) or give another with --annotations PATH."))
    if isinstance(exc, OSError) or "readonly" in text or "read-only" in text or "unable to open" in text or "disk i/o" in text:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return AnnotationsUnavailable(path, "unwritable", (
            f"The annotations file {path} cannot be written ({detail}): notes are read-only. "
            "Give a writable place with --annotations PATH or LENS_DATA_DIR."))
    return AnnotationsUnavailable(path, "error", f"The annotations file {path} could not be used ({exc}), so {doing} did not happen.")


class AnnotationStore:
    """Every read and write of one annotations file. Holds no connection: share it between threads
    freely. `problem` is None when writes work, else why not (reads then work when `readable`)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                 busy_timeout: float = DEFAULT_BUSY_TIMEOUT, read_only: bool = False,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.path = resolve_path(path, env)
        self.busy_timeout = busy_timeout
        self._clock = clock or (lambda: datetime.now(UTC))
        self.problem: AnnotationsUnavailable | None = None
        self.readable = True
        self._read_uri: str | None = None
        if read_only:
            self._fall_back(AnnotationsUnavailable(self.path, "read_only", f"The annotations file {self.path} was opened read-only: notes cannot be saved."))
        else:
            self._open()

    # -- opening

    @property
    def writable(self) -> bool:
        return self.problem is None

    def reopen(self) -> None:
        """Try again after a problem (the file was unlocked, moved aside or made writable)."""
        self.problem, self.readable, self._read_uri = None, True, None
        self._open()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        con.execute("PRAGMA foreign_keys = ON")
        return con

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not self.path.is_file():
                raise OSError(21, "not a file", str(self.path))
            con = self._connect()
        except (OSError, sqlite3.Error) as exc:
            self._fall_back(_classify(self.path, exc, "opening it"))
            return
        try:
            self._prepare(con)
        except (sqlite3.Error, _Newer, _Foreign) as exc:
            self._fall_back(_classify(self.path, exc, "opening it"))
        finally:
            con.close()

    def _prepare(self, con: sqlite3.Connection) -> None:
        """WAL mode, then the schema created or migrated in one transaction (unless current)."""
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            con.execute("PRAGMA journal_mode = WAL")
        if version == SCHEMA_VERSION:
            return
        con.execute("BEGIN IMMEDIATE")
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]  # another process may have done it meanwhile
            if version > SCHEMA_VERSION:
                raise _Newer(version)
            if version == 0:
                names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
                if names:
                    raise _Foreign()
                _create(con)
            else:
                for step in range(version, SCHEMA_VERSION):
                    MIGRATIONS[step](con)
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _fall_back(self, problem: AnnotationsUnavailable) -> None:
        """Read-only: find a way to read the file as it is, if there is one."""
        self.problem = problem
        self.readable = False
        if not self.path.is_file():
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
            return

    # -- connections

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        """A connection to read with (None when the file cannot be read: the read returns nothing)."""
        if not self.readable:
            yield None
            return
        try:
            if self._read_uri:
                con = sqlite3.connect(self._read_uri, uri=True, timeout=self.busy_timeout, isolation_level=None)
            else:
                con = self._connect()
        except sqlite3.Error as exc:
            raise _classify(self.path, exc, "reading the notes") from None
        try:
            yield con
        except sqlite3.Error as exc:
            raise _classify(self.path, exc, "reading the notes") from None
        finally:
            con.close()

    @contextmanager
    def _writing(self, doing: str = "saving") -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT); AnnotationsUnavailable when refused."""
        if self.problem is not None:
            p = self.problem
            raise AnnotationsUnavailable(p.path, p.reason, p.message)
        try:
            con = self._connect()
        except sqlite3.Error as exc:
            raise _classify(self.path, exc, doing) from None
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _classify(self.path, exc, doing) from None
        finally:
            con.close()

    def _now(self, after: str | None = None) -> str:
        stamp = now_iso(self._clock())
        return _later(after) if after is not None and stamp <= after else stamp

    # -- reading

    _NOTE_SQL = ("SELECT n.id, n.benchmark, n.question_id, n.run, n.text, n.author, n.created, n.updated, n.revision, "
                 "(SELECT group_concat(tag, ',') FROM note_tags t WHERE t.note_id = n.id) FROM notes n")

    @staticmethod
    def _note(row: tuple) -> Note:
        tags = tuple(sorted(row[9].split(","))) if row[9] else ()
        return Note(row[1], row[2], row[3], row[4], tags, row[5], row[6], row[7], row[8])

    @staticmethod
    def _correction(row: tuple) -> Correction:
        return Correction(*row)

    _CORRECTION_SQL = "SELECT benchmark, question_id, action, answer, author, created, updated, revision FROM corrections"

    def note(self, benchmark: str, question_id: str, run: str = "") -> Note | None:
        with self._reading() as con:
            if con is None:
                return None
            row = con.execute(self._NOTE_SQL + " WHERE benchmark = ? AND question_id = ? AND run = ?",
                              (benchmark, question_id, run)).fetchone()
            return self._note(row) if row else None

    def notes(self, benchmark: str, *, question_id: str | None = None, run: str | None = None) -> list[Note]:
        """The benchmark's notes (optionally of one question and/or one run; run "" = question
        notes), ordered by question id, then run."""
        sql, args = self._NOTE_SQL + " WHERE n.benchmark = ?", [benchmark]
        if question_id is not None:
            sql, args = sql + " AND n.question_id = ?", args + [question_id]
        if run is not None:
            sql, args = sql + " AND n.run = ?", args + [run]
        with self._reading() as con:
            if con is None:
                return []
            return [self._note(r) for r in con.execute(sql + " ORDER BY n.question_id, n.run", args)]

    def correction(self, benchmark: str, question_id: str) -> Correction | None:
        with self._reading() as con:
            if con is None:
                return None
            row = con.execute(self._CORRECTION_SQL + " WHERE benchmark = ? AND question_id = ?", (benchmark, question_id)).fetchone()
            return self._correction(row) if row else None

    def corrections(self, benchmark: str) -> list[Correction]:
        with self._reading() as con:
            if con is None:
                return []
            return [self._correction(r) for r in con.execute(self._CORRECTION_SQL + " WHERE benchmark = ? ORDER BY question_id", (benchmark,))]

    def vocabulary(self) -> list[str]:
        """The tags offered, in their order (the defaults when the file cannot be read)."""
        with self._reading() as con:
            if con is None:
                return list(DEFAULT_TAGS)
            return [r[0] for r in con.execute("SELECT tag FROM vocabulary ORDER BY position, tag")]

    def tag_usage(self, benchmark: str | None = None) -> dict[str, int]:
        """How many notes carry each tag (of one benchmark, or of all)."""
        sql = "SELECT t.tag, count(*) FROM note_tags t JOIN notes n ON n.id = t.note_id"
        args: tuple = ()
        if benchmark is not None:
            sql, args = sql + " WHERE n.benchmark = ?", (benchmark,)
        with self._reading() as con:
            if con is None:
                return {}
            return dict(con.execute(sql + " GROUP BY t.tag ORDER BY t.tag", args).fetchall())

    def benchmarks(self) -> dict[str, int]:
        """Every benchmark identity with annotations, and how many (notes + corrections) it has:
        notes filed under an older identity (the gold changed) show up here."""
        with self._reading() as con:
            if con is None:
                return {}
            rows = con.execute("SELECT benchmark, count(*) FROM (SELECT benchmark FROM notes UNION ALL "
                               "SELECT benchmark FROM corrections) GROUP BY benchmark ORDER BY benchmark").fetchall()
            return dict(rows)

    # -- notes

    def _note_in(self, con: sqlite3.Connection, key: tuple[str, str, str]) -> tuple[int, Note] | None:
        row = con.execute(self._NOTE_SQL + " WHERE n.benchmark = ? AND n.question_id = ? AND n.run = ?", key).fetchone()
        return (row[0], self._note(row)) if row else None

    def _unknown_tags(self, con: sqlite3.Connection, tags: tuple[str, ...]) -> list[str]:
        known = {r[0] for r in con.execute("SELECT tag FROM vocabulary")}
        return [t for t in tags if t not in known]

    def save_note(self, benchmark: str, question_id: str, run: str = "", *, text: str, tags: Iterable[str] = (),
                  author: str, expected_revision: int | None) -> Note:
        """Create or change a note; `expected_revision` is the revision the editor started from (0:
        there was no note; None: overwrite whatever is there). Returns the stored note (unchanged
        and not rewritten when text and tags are the same). Raises Conflict, InvalidInput (an empty
        author, text too long, a tag not in the vocabulary) or AnnotationsUnavailable."""
        key = (clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), clean_key(run, "run", empty=True))
        text, tag_set, author = clean_text(text), clean_tags(tags), clean_author(author)
        with self._writing("saving the note") as con:
            unknown = self._unknown_tags(con, tag_set)
            if unknown:
                raise InvalidInput(f"not in the tag vocabulary: {', '.join(unknown)} (add them to the vocabulary first)")
            found = self._note_in(con, key)
            current = found[1] if found else None
            if expected_revision is not None and expected_revision != (current.revision if current else 0):
                raise Conflict(current, expected_revision)
            if found and current is not None:
                if current.text == text and current.tags == tag_set:
                    return current
                note = Note(*key, text, tag_set, author, current.created, self._now(current.updated), current.revision + 1)
                con.execute("UPDATE notes SET text = ?, author = ?, updated = ?, revision = ? WHERE id = ?",
                            (note.text, note.author, note.updated, note.revision, found[0]))
                note_id = found[0]
            else:
                stamp = self._now()
                note = Note(*key, text, tag_set, author, stamp, stamp, 1)
                note_id = self._insert_note(con, note)
            con.execute("DELETE FROM note_tags WHERE note_id = ?", (note_id,))
            con.executemany("INSERT INTO note_tags(note_id, tag) VALUES (?, ?)", [(note_id, t) for t in tag_set])
            return note

    @staticmethod
    def _insert_note(con: sqlite3.Connection, note: Note) -> int:
        cur = con.execute("INSERT INTO notes(benchmark, question_id, run, text, author, created, updated, revision) "
                          "VALUES (?,?,?,?,?,?,?,?)", (*note.key, note.text, note.author, note.created, note.updated, note.revision))
        assert cur.lastrowid is not None
        return cur.lastrowid

    def delete_note(self, benchmark: str, question_id: str, run: str = "", *, expected_revision: int | None) -> bool:
        """Delete a note (Conflict when it changed since `expected_revision`); False when there was none."""
        with self._writing("deleting the note") as con:
            found = self._note_in(con, (benchmark, question_id, run))
            if expected_revision is not None and expected_revision != (found[1].revision if found else 0):
                raise Conflict(found[1] if found else None, expected_revision)
            if not found:
                return False
            con.execute("DELETE FROM notes WHERE id = ?", (found[0],))
            return True

    # -- corrections

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
        with self._writing("saving the correction") as con:
            row = con.execute(self._CORRECTION_SQL + " WHERE benchmark = ? AND question_id = ?", key).fetchone()
            current = self._correction(row) if row else None
            if expected_revision is not None and expected_revision != (current.revision if current else 0):
                raise Conflict(current, expected_revision)
            if current is not None:
                if (current.action, current.answer) == (action, answer):
                    return current
                fixed = Correction(*key, action, answer, author, current.created, self._now(current.updated), current.revision + 1)
                con.execute("UPDATE corrections SET action = ?, answer = ?, author = ?, updated = ?, revision = ? "
                            "WHERE benchmark = ? AND question_id = ?", (action, answer, author, fixed.updated, fixed.revision, *key))
                return fixed
            stamp = self._now()
            fixed = Correction(*key, action, answer, author, stamp, stamp, 1)
            self._insert_correction(con, fixed)
            return fixed

    @staticmethod
    def _insert_correction(con: sqlite3.Connection, c: Correction) -> None:
        con.execute("INSERT INTO corrections(benchmark, question_id, action, answer, author, created, updated, revision) "
                    "VALUES (?,?,?,?,?,?,?,?)", (*c.key, c.action, c.answer, c.author, c.created, c.updated, c.revision))

    def delete_correction(self, benchmark: str, question_id: str, *, expected_revision: int | None) -> bool:
        with self._writing("deleting the correction") as con:
            row = con.execute(self._CORRECTION_SQL + " WHERE benchmark = ? AND question_id = ?", (benchmark, question_id)).fetchone()
            current = self._correction(row) if row else None
            if expected_revision is not None and expected_revision != (current.revision if current else 0):
                raise Conflict(current, expected_revision)
            if current is None:
                return False
            con.execute("DELETE FROM corrections WHERE benchmark = ? AND question_id = ?", (benchmark, question_id))
            return True

    # -- the vocabulary

    def add_tag(self, tag: str) -> str:
        """Add a tag at the end of the vocabulary (no change when it is there); returns its clean name."""
        name = clean_tag(tag)
        with self._writing("adding the tag") as con:
            count, last = con.execute("SELECT count(*), max(position) FROM vocabulary").fetchone()
            if con.execute("SELECT 1 FROM vocabulary WHERE tag = ?", (name,)).fetchone():
                return name
            if count >= MAX_VOCABULARY:
                raise InvalidInput(f"the vocabulary holds at most {MAX_VOCABULARY} tags")
            con.execute("INSERT INTO vocabulary(tag, position) VALUES (?, ?)", (name, (last if last is not None else -1) + 1))
        return name

    def _touch_tagged(self, con: sqlite3.Connection, tag: str) -> list[int]:
        """The ids of the notes carrying `tag`, each given a new revision and time (their tags change)."""
        ids = [r[0] for r in con.execute("SELECT note_id FROM note_tags WHERE tag = ?", (tag,))]
        for note_id in ids:
            updated = con.execute("SELECT updated FROM notes WHERE id = ?", (note_id,)).fetchone()[0]
            con.execute("UPDATE notes SET revision = revision + 1, updated = ? WHERE id = ?", (self._now(updated), note_id))
        return ids

    def rename_tag(self, old: str, new: str) -> int:
        """Rename a tag in the vocabulary (keeping its place) and on every note; returns how many
        notes changed. InvalidInput when `old` is unknown or `new` exists already."""
        old, new = clean_tag(old), clean_tag(new)
        if old == new:
            return 0
        with self._writing("renaming the tag") as con:
            if not con.execute("SELECT 1 FROM vocabulary WHERE tag = ?", (old,)).fetchone():
                raise InvalidInput(f"there is no tag {old!r} to rename")
            if con.execute("SELECT 1 FROM vocabulary WHERE tag = ?", (new,)).fetchone():
                raise InvalidInput(f"the tag {new!r} exists already")
            con.execute("UPDATE vocabulary SET tag = ? WHERE tag = ?", (new, old))
            ids = self._touch_tagged(con, old)
            con.execute("UPDATE note_tags SET tag = ? WHERE tag = ?", (new, old))
            return len(ids)

    def remove_tag(self, tag: str) -> int:
        """Remove a tag from the vocabulary and from every note carrying it (ask first: see
        `tag_usage`); returns how many notes changed."""
        name = clean_tag(tag)
        with self._writing("removing the tag") as con:
            if not con.execute("SELECT 1 FROM vocabulary WHERE tag = ?", (name,)).fetchone():
                raise InvalidInput(f"there is no tag {name!r} to remove")
            con.execute("DELETE FROM vocabulary WHERE tag = ?", (name,))
            ids = self._touch_tagged(con, name)
            con.execute("DELETE FROM note_tags WHERE tag = ?", (name,))
            return len(ids)

    # -- merging (import)

    def merge(self, notes: Iterable[Note], corrections: Iterable[Correction] = ()) -> MergeCounts:
        """Merge records (of an import) in one transaction: a record not stored is added (with its
        revision), one whose `updated` is later than the stored one replaces it (revision = stored
        + 1, `created` the earlier of both), any other leaves the stored one as it is. Tags not in
        the vocabulary are added to it."""
        counts = MergeCounts()
        notes = [make_note(n.benchmark, n.question_id, n.run, text=n.text, tags=n.tags, author=n.author,
                           created=n.created, updated=n.updated, revision=n.revision) for n in notes]
        corrections = [make_correction(c.benchmark, c.question_id, action=c.action, answer=c.answer, author=c.author,
                                       created=c.created, updated=c.updated, revision=c.revision) for c in corrections]
        with self._writing("importing") as con:
            needed = sorted({t for n in notes for t in n.tags})
            new_tags = self._unknown_tags(con, tuple(needed))
            if new_tags:
                count, last = con.execute("SELECT count(*), max(position) FROM vocabulary").fetchone()
                if count + len(new_tags) > MAX_VOCABULARY:
                    raise InvalidInput(f"the import needs {len(new_tags)} new tags; the vocabulary holds at most {MAX_VOCABULARY}")
                start = (last if last is not None else -1) + 1
                con.executemany("INSERT INTO vocabulary(tag, position) VALUES (?, ?)", [(t, start + i) for i, t in enumerate(new_tags)])
                counts.tags_added = new_tags
            for n in notes:
                found = self._note_in(con, n.key)
                if found is None:
                    note_id = self._insert_note(con, n)
                    counts.added += 1
                elif n.updated > found[1].updated:
                    note_id = found[0]
                    con.execute("UPDATE notes SET text = ?, author = ?, created = ?, updated = ?, revision = ? WHERE id = ?",
                                (n.text, n.author, min(n.created, found[1].created), n.updated, found[1].revision + 1, note_id))
                    con.execute("DELETE FROM note_tags WHERE note_id = ?", (note_id,))
                    counts.updated += 1
                else:
                    counts.unchanged += 1
                    continue
                con.executemany("INSERT INTO note_tags(note_id, tag) VALUES (?, ?)", [(note_id, t) for t in n.tags])
            for c in corrections:
                row = con.execute(self._CORRECTION_SQL + " WHERE benchmark = ? AND question_id = ?", c.key).fetchone()
                if row is None:
                    self._insert_correction(con, c)
                    counts.added += 1
                elif c.updated > row[6]:
                    con.execute("UPDATE corrections SET action = ?, answer = ?, author = ?, created = ?, updated = ?, revision = ? "
                                "WHERE benchmark = ? AND question_id = ?",
                                (c.action, c.answer, c.author, min(c.created, row[5]), c.updated, row[7] + 1, *c.key))
                    counts.updated += 1
                else:
                    counts.unchanged += 1
        return counts

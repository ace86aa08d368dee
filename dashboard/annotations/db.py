"""The annotations database: one SQLite file (one user, the default) or one PostgreSQL database (a
team's app servers), shared by every session and process. SQLAlchemy Core speaks both dialects;
Alembic keeps the schema's versions (dashboard/annotations/migrations).

Where it lives (`resolve_location`): the app's `--annotations PATH_OR_URL`, else `LENS_DATABASE_URL`
(`sqlite:///PATH` or `postgresql://user[:password]@host[:port]/database`, read with psycopg 3), else
`annotations.sqlite3` in the user data folder (`LENS_DATA_DIR`). Messages name a server's URL
without its password (`shown_url`); the password is never printed or logged.

SQLite: each call opens its own connection and closes it (Streamlit sessions are threads), in WAL
mode with a busy timeout; every write is one `BEGIN IMMEDIATE` transaction. PostgreSQL: a small
pool of connections (checked before use, so a restarted server is found again), every write one
transaction holding transaction-level advisory locks: the one record it writes (a note, correction
or slice: writes of different records run side by side), or everything (the vocabulary, an import). Saving a note, correction or saved slice names the revision it was edited from
(`expected_revision`, 0 for "there was none"): when the stored revision differs, nothing is
written and `Conflict` carries the stored one, so the page can say who saved what in between --
across app servers as well, since the check is made inside the writer's transaction.

A database that cannot be used never gives a traceback: `store.problem` is an
`AnnotationsUnavailable` whose `message` is one sentence naming the file or URL, reads still work
when it can be read (and return nothing when it cannot), and every write raises that same
exception. A server that is away, refuses the login or lost its connection is tried again when
`problem` is next read (at most every `retry_interval` seconds), so the app finds it again without a
restart; `reopen()` tries at once.

Damaged rows (an SQLite file edited by hand or by another tool: bytes in a text column, text that
is not UTF-8, a revision stored as text, a time that is not a time): every read leaves such a row
out and names it in the `bad` list it is given (`notes(..., bad=[])`, `corrections`,
`saved_slices`), so a page never gets a value it cannot draw and an export holds every good row; a
save over a damaged row replaces it. A zero-byte file is an empty database (SQLite's own reading):
it is made a fresh one in place -- it holds nothing that could be lost -- and read as empty when
opened read-only.

A large import (`merge`) is written in batches (each holding the lock about IMPORT_HOLD), each its own write
transaction; a save of this process waiting for the lock goes before the next batch, and on
SQLite the import pauses `import_pause` between batches so that a writer of another process finds
the lock free (its busy wait tries at most every 0.1 s). `progress(done, total)` follows it.

Schema (Alembic revisions r1 -> r2 -> r3; SQLite files also carry `PRAGMA user_version` =
SCHEMA_VERSION = 3, as files written before Alembic did: 1 and 2 map to r1 and r2):

    notes(id INTEGER PRIMARY KEY, benchmark, question_id, run, text, author, created, updated,
          revision, UNIQUE(benchmark, question_id, run))     run '' = a note on the question (the gold)
    note_tags(note_id -> notes.id ON DELETE CASCADE, tag, PRIMARY KEY(note_id, tag))
    vocabulary(tag PRIMARY KEY, position)                      the tags offered, in their order
    corrections(benchmark, question_id, action 'answer'|'exclude', answer, author, created, updated,
                revision, PRIMARY KEY(benchmark, question_id))
    saved_slices(benchmark, name, definition, author, note, created, updated, revision,
                 PRIMARY KEY(benchmark, name))                definition: JSON {field: [values]}

Times are UTC, ISO 8601 with microseconds and a `Z` (`2024-05-01T12:00:00.000000Z`), so that they
sort as text. Version 1 (SCHEMA_V1 below) kept tags as one comma-separated column, had no revisions
and no vocabulary, and wrote an exclusion as a NULL answer. Text is ordered byte-wise on both
dialects (PostgreSQL: COLLATE "C"), so lists come back in the same order.

Saved slices (issue 25, section 3) -- a named filter set of the explorer, or a slice the finder
discovered, kept per benchmark beside the notes and shared by every session:

    store.save_slice(benchmark, name, definition={"reasoning_type": ["counting"], "evidence_source": ["Chart"]},
                     author="Ana", note="counting over charts", expected_revision=0) -> SavedSlice
    store.saved_slices(benchmark) -> [SavedSlice, ...]          by name
    store.saved_slice(benchmark, name) -> SavedSlice | None
    store.delete_slice(benchmark, name, expected_revision=k) -> bool

A definition maps a field name (`clean_field`: a-z, 0-9, `_`) to the values it keeps (a question
is in the slice when, for every field, its value is one of them); it is stored as JSON text with
sorted keys. `SavedSlice.questions(rows)` applies it to dicts of field values. Export and import
carry saved slices as records of kind "slice" (dashboard/annotations/exchange.py).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from dashboard.core import settings
from dashboard.core.redact import is_secret_name, redact, redact_url

__all__ = [
    "SCHEMA_VERSION", "SCHEMA_V1", "HEAD_REVISION", "REVISIONS", "DEFAULT_TAGS", "FILE_NAME", "APP_DIR", "MIGRATIONS_DIR",
    "MAX_TEXT", "MAX_TAG", "MAX_TAGS", "MAX_AUTHOR", "MAX_KEY", "MAX_ANSWER", "MAX_VOCABULARY",
    "MAX_SLICE_NAME", "MAX_SLICE_FIELDS", "MAX_SLICE_VALUES", "MAX_SLICES",
    "Note", "Correction", "SavedSlice", "MergeCounts", "Conflict", "AnnotationsUnavailable", "InvalidInput",
    "ServerLocation", "AnnotationStore", "default_path", "resolve_path", "resolve_location", "location_key", "shown_url",
    "now_iso", "parse_time", "clean_text", "clean_tag", "clean_tags", "clean_author", "clean_key", "clean_field",
    "clean_definition", "clean_slice_name", "alembic_config", "make_note", "make_correction", "make_slice", "metadata",
]

SCHEMA_VERSION = 3  # PRAGMA user_version of an SQLite file at HEAD_REVISION
HEAD_REVISION = "r3"  # the newest Alembic revision (tests check it against migrations/versions)
REVISIONS = ("r1", "r2", "r3")  # every revision this code knows, oldest first
_USER_VERSION_REVISION = {1: "r1", 2: "r2", 3: "r3"}  # files written before Alembic: PRAGMA user_version -> revision
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
FILE_NAME = "annotations.sqlite3"
APP_DIR = "docbench-lens"
DEFAULT_TAGS = (
    "wrong_page_retrieved", "reading_or_ocr_error", "reasoning_error", "extraction_error", "format_only",
    "hallucination", "refused_wrongly", "gold_wrong", "question_ambiguous",
)
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

# caps on everything a user (or an imported file) can put in
MAX_TEXT = 10_000  # note text, characters
MAX_TAG = 64  # one tag name
MAX_TAGS = 32  # tags on one note
MAX_AUTHOR = 100
MAX_KEY = 1_000  # benchmark identity, question id, run name
MAX_ANSWER = 2_000  # a corrected gold answer
MAX_VOCABULARY = 200
MAX_SLICE_NAME = 200  # a saved slice's name
MAX_SLICE_FIELDS = 16  # fields in one definition
MAX_SLICE_VALUES = 500  # values of one field
MAX_SLICES = 1_000  # saved slices of one benchmark

_TAG = re.compile(r"[a-z0-9][a-z0-9_\-]*")
_FIELD = re.compile(r"[a-z][a-z0-9_]{0,63}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters but tab and line feed
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


# ----------------------------------------------------------------------------- where the database lives


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """`annotations.sqlite3` in the user data folder (dashboard.core.settings.data_dir):
    $LENS_DATA_DIR, else $XDG_DATA_HOME/docbench-lens, else ~/.local/share/docbench-lens."""
    return settings.data_dir(env) / FILE_NAME


def resolve_path(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The explicit path (the app's `--annotations PATH`) when given, else `default_path(env)`."""
    if path is not None and str(path) != "":
        return Path(path).expanduser()
    return default_path(env)


def shown_url(url: str | URL) -> str:
    """A database URL as messages show it: without its password or any query parameter (as the
    user spells the dialect, `postgresql://`, not the driver SQLAlchemy is given); a URL's text
    without any credential (dashboard.core.redact.redact_url: no password, `?password=***`)."""
    if isinstance(url, URL):
        bare = URL.create(url.get_backend_name(), username=url.username, host=url.host, port=url.port, database=url.database)
        return bare.render_as_string(hide_password=False)
    return redact_url(url)


class ServerLocation:
    """A database server's URL: `str()` is `shown_url` (no password); `url` is the SQLAlchemy URL
    with the psycopg driver (password included: never print it). `exists()` is True, as for a file
    the store may read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.shown = shown_url(text)
        self.secrets: tuple[str, ...] = ()
        try:
            url = make_url(text)
        except (ArgumentError, ValueError):
            raise InvalidInput(f"{self.shown} is not a database URL (postgresql://user@host:port/database)") from None
        # the password and every secret query value (?password=, ?sslpassword=, ?passfile=...): masked in any text
        self.secrets = (url.password or "", *(v for name, value in url.query.items() if is_secret_name(name)
                                              for v in ((value,) if isinstance(value, str) else value)))
        if url.get_backend_name() != "postgresql":
            raise InvalidInput(f"{self.shown}: only sqlite:///PATH and postgresql://user@host:port/database are supported")
        if not url.database:
            raise InvalidInput(f"{self.shown} names no database (postgresql://user@host:port/database)")
        self.url = url.set(drivername="postgresql+psycopg")
        self.shown = shown_url(self.url)
        self.password = url.password or ""

    def exists(self) -> bool:
        return True

    def scrub(self, text: str) -> str:
        """`text` without any credential (dashboard.core.redact.redact): URLs in it without their
        password and secret parameters, and this URL's password and secret values replaced by ***."""
        return redact(text, self.secrets)

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"ServerLocation({self.shown!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerLocation) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class UnusableLocation:
    """Where a database URL that cannot be used points (another scheme, no database...): `str()` is
    the URL as messages show it (`shown_url`), whole -- a Path would fold its "//"; nothing is there."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def exists(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"UnusableLocation({self.shown!r})"


def _location(text: str) -> Path | ServerLocation:
    """A `--annotations` value or LENS_DATABASE_URL: `sqlite:///PATH` -> that file, `postgresql://...`
    -> the server, anything without `://` -> a file path. InvalidInput for another scheme."""
    if "://" not in text:
        return Path(text).expanduser()
    scheme = text.split("://", 1)[0].lower()
    if scheme in ("sqlite", "sqlite+pysqlite"):
        rest = text.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise InvalidInput(f"{shown_url(text)}: an SQLite URL is sqlite:///PATH (sqlite:////abs/path for an absolute one)")
        return Path(rest[1:]).expanduser()
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return ServerLocation("postgresql" + text[len(scheme):] if scheme == "postgres" else text)
    raise InvalidInput(f"{shown_url(text)}: only sqlite:///PATH and postgresql://user@host:port/database are supported")


def resolve_location(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path | ServerLocation:
    """Where the annotations live: the explicit path or URL (`--annotations`) when given, else
    LENS_DATABASE_URL (settings.DATABASE_URL), else `default_path(env)`. InvalidInput (a sentence
    without the password) for a URL that is neither sqlite:/// nor postgresql://."""
    if path is not None and str(path) != "":
        return _location(os.fspath(path))
    url = settings.DATABASE_URL.value(env).strip()
    if url:
        return _location(url)
    return default_path(env)


def location_key(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> str:
    """What `AnnotationStore(...)` is given to open the database `resolve_location` names, as text
    (a file's path, or the server's URL with its password: a cache key, never shown). A URL that
    cannot be used is returned as it is: the store then says why."""
    try:
        where = resolve_location(path, env)
    except InvalidInput:
        return os.fspath(path) if path is not None and str(path) != "" else settings.DATABASE_URL.value(env).strip()
    return where.text if isinstance(where, ServerLocation) else str(where)


# ----------------------------------------------------------------------------- errors


class InvalidInput(ValueError):
    """A value a user gave that cannot be stored; `str(exc)` is a sentence for the user."""


class AnnotationsUnavailable(Exception):
    """The annotations database cannot be used (for this write, or at all). `message` is a sentence
    for the user naming the file or the server's URL (never its password); `reason` is one of
    corrupt, locked, unwritable, newer, read_only, foreign, error (a file) or unreachable, refused,
    missing, denied, locked, newer, foreign, error (a server)."""

    def __init__(self, path: Path | ServerLocation | UnusableLocation, reason: str, message: str) -> None:
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

    def __init__(self, current: Note | Correction | SavedSlice | None, expected_revision: int) -> None:
        self.current = current
        self.expected_revision = expected_revision
        what = "correction" if isinstance(current, Correction) else "saved slice" if isinstance(current, SavedSlice) else "note"
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


@dataclass(frozen=True, slots=True)
class SavedSlice:
    """A named slice of a benchmark's questions: `definition` maps a field to the values it keeps
    (keys sorted, values sorted and distinct), with who saved it, a note, times and revision."""

    benchmark: str
    name: str
    definition: dict[str, tuple[str, ...]]
    author: str
    note: str
    created: str
    updated: str
    revision: int = 1

    @property
    def key(self) -> tuple[str, str]:
        return (self.benchmark, self.name)

    def describe(self) -> str:
        return " & ".join(f"{f} in {{{', '.join(v)}}}" if len(v) > 1 else f"{f}={v[0]}" for f, v in self.definition.items())

    def matches(self, row: Mapping[str, object]) -> bool:
        """Whether a question (its field values; a list for a multi-label field) is in the slice."""
        for name, values in self.definition.items():
            got = row.get(name)
            got_values = [str(g) for g in got] if isinstance(got, (list, tuple, set)) else [str(got)]
            if not set(got_values) & set(values):
                return False
        return True

    def questions(self, rows: Iterable[Mapping[str, object]], id_field: str = "question_id") -> list[str]:
        """The ids of the rows in the slice, in their order."""
        return [str(r.get(id_field)) for r in rows if self.matches(r)]


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
        return now_iso(moment)
    except ValueError:
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-01T12:00:00Z, not {_shown(value, 40)}") from None
    except OverflowError:  # year 9999 with a negative offset, year 1 with a positive one: outside what UTC can hold
        raise InvalidInput(f"{what} {_shown(value, 40)} is outside the years 1 to 9999 once made UTC") from None


def _later(stamp: str) -> str:
    """One microsecond after a stored time (the same time at the very end of year 9999)."""
    try:
        return now_iso(datetime.strptime(stamp, _TIME_FORMAT).replace(tzinfo=UTC) + timedelta(microseconds=1))
    except (OverflowError, ValueError):
        return stamp


def _shown(value: str, limit: int) -> str:
    """A value quoted for a message: its excerpt, with characters that are not valid Unicode text
    (a lone surrogate) written as \\u escapes, so the message can always be printed and stored."""
    return ascii(_excerpt(value, limit)) if not _is_unicode(value) else repr(_excerpt(value, limit))


def _is_unicode(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate, which no database or page can hold)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text")
    if not _is_unicode(value):
        bad = next(i for i, c in enumerate(value) if 0xD800 <= ord(c) <= 0xDFFF)
        raise InvalidInput(f"{what} holds a lone surrogate (\\u{ord(value[bad]):04x} at character {bad + 1}), which is not Unicode text")
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


def clean_field(value: object) -> str:
    """A field name of a slice definition: a-z, 0-9 and `_`, starting with a letter, at most 64."""
    text = _plain(value, "a field name").strip()
    if not _FIELD.fullmatch(text):
        raise InvalidInput(f"the field {_excerpt(text, 40)!r} must be a name of a-z, 0-9 and '_' (such as reasoning_type)")
    return text


def clean_slice_name(value: object) -> str:
    """A saved slice's name: text as a key (no control characters), 1 to MAX_SLICE_NAME characters."""
    text = clean_key(value, "the slice's name")
    if len(text) > MAX_SLICE_NAME:
        raise InvalidInput(f"the slice's name is {len(text):,} characters long; at most {MAX_SLICE_NAME} are allowed")
    return text


def clean_definition(value: object) -> dict[str, tuple[str, ...]]:
    """A slice definition: {field: [values]} with 1 to MAX_SLICE_FIELDS fields, each 1 to
    MAX_SLICE_VALUES values (text, at most MAX_KEY characters); keys and values sorted."""
    if not isinstance(value, Mapping) or not value:
        raise InvalidInput("a slice needs at least one field and its values, such as {\"reasoning_type\": [\"counting\"]}")
    if len(value) > MAX_SLICE_FIELDS:
        raise InvalidInput(f"a slice has at most {MAX_SLICE_FIELDS} fields, not {len(value)}")
    out: dict[str, tuple[str, ...]] = {}
    for name, values in value.items():
        key = clean_field(name)
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidInput(f"the values of {key} must be a list of text")
        kept = sorted({clean_key(v, f"a value of {key}") for v in values})
        if not kept or len(kept) > MAX_SLICE_VALUES:
            raise InvalidInput(f"{key} needs 1 to {MAX_SLICE_VALUES} values, not {len(kept)}")
        out[key] = tuple(kept)
    return dict(sorted(out.items()))


def _definition_text(definition: Mapping[str, Sequence[str]]) -> str:
    return json.dumps({k: list(v) for k, v in definition.items()}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _definition_of(text: str) -> dict[str, tuple[str, ...]]:
    try:
        return clean_definition(json.loads(text))
    except (ValueError, InvalidInput):
        return {}


def make_slice(benchmark: object, name: object, *, definition: object, author: object, note: object, created: object,
               updated: object, revision: object = 1) -> SavedSlice:
    """A validated SavedSlice (InvalidInput naming the first bad field otherwise)."""
    return SavedSlice(clean_key(benchmark, "benchmark"), clean_slice_name(name), clean_definition(definition), clean_author(author),
                      clean_text(note, "the slice's note"), parse_time(created, "created"), parse_time(updated, "updated"),
                      _revision(revision))


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
"""  # what the first version wrote (PRAGMA user_version = 1); migrations/versions/r1_schema_v1.py creates the same

# The schema at HEAD_REVISION, as the queries below see it (the migrations create it; tests compare both).
metadata = sa.MetaData()
notes_t = sa.Table(
    "notes", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark", sa.Text, nullable=False),
    sa.Column("question_id", sa.Text, nullable=False),
    sa.Column("run", sa.Text, nullable=False, server_default=""),
    sa.Column("text", sa.Text, nullable=False, server_default=""),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("benchmark", "question_id", "run"),
)
note_tags_t = sa.Table(
    "note_tags", metadata,
    sa.Column("note_id", sa.Integer, sa.ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tag", sa.Text, primary_key=True),
)
vocabulary_t = sa.Table(
    "vocabulary", metadata,
    sa.Column("tag", sa.Text, primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),
)
corrections_t = sa.Table(
    "corrections", metadata,
    sa.Column("benchmark", sa.Text, primary_key=True),
    sa.Column("question_id", sa.Text, primary_key=True),
    sa.Column("action", sa.Text, nullable=False),
    sa.Column("answer", sa.Text, nullable=False, server_default=""),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
)
slices_t = sa.Table(
    "saved_slices", metadata,
    sa.Column("benchmark", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("definition", sa.Text, nullable=False),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
)


class _Foreign(Exception):
    pass


class _Newer(Exception):
    def __init__(self, version: int | str) -> None:
        super().__init__(version)
        self.version = version


def _sqlite_user_version(conn: Connection) -> int:
    return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)


def alembic_config(conn: Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = conn
    return cfg


def _migrate(conn: Connection) -> None:
    """Inside the open write transaction: create the schema, or bring it to HEAD_REVISION with
    Alembic (a file written before Alembic is first stamped with the revision its user_version
    names). _Newer for a revision this code does not know, _Foreign for someone else's tables."""
    from alembic import command

    sqlite = conn.dialect.name == "sqlite"
    tables = set(sa.inspect(conn).get_table_names())
    current: str | None = None
    if "alembic_version" in tables:
        current = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    if sqlite:
        version = _sqlite_user_version(conn)
        if version > SCHEMA_VERSION:
            raise _Newer(version)
        if current is None and version:
            current = _USER_VERSION_REVISION[version]
            command.stamp(alembic_config(conn), current)
    if current is None and tables - {"alembic_version"}:
        raise _Foreign()
    if current is not None and current not in REVISIONS:
        raise _Newer(current)
    if current != HEAD_REVISION:
        command.upgrade(alembic_config(conn), HEAD_REVISION)
    if sqlite:
        conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")


# ----------------------------------------------------------------------------- why a database cannot be used

_RETRIED = frozenset({"unreachable", "refused", "missing", "denied", "error"})  # a server's problems tried again


def _detail(exc: BaseException) -> str:
    """The driver's own words, first line, without SQLAlchemy's statement and parameters."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = (getattr(orig, "strerror", None) if isinstance(orig, OSError) else None) or str(orig) or type(orig).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else type(orig).__name__
    first = re.sub(r"^(connection failed: )?connection to server at .*? failed: ", "", first)
    return _excerpt(first.removeprefix("FATAL:").strip(), 160)


def _classify_file(path: Path, exc: BaseException, doing: str) -> AnnotationsUnavailable:
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = str(orig).lower()
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
            f"The annotations file {path} is damaged or not a database ({orig}): notes are read-only and cannot "
            "be saved. Move the file aside (a new one is then made) or give another with --annotations PATH."))
    if isinstance(orig, OSError) or "readonly" in text or "read-only" in text or "unable to open" in text or "disk i/o" in text:
        detail = orig.strerror if isinstance(orig, OSError) and orig.strerror else str(orig)
        return AnnotationsUnavailable(path, "unwritable", (
            f"The annotations file {path} cannot be written ({detail}): notes are read-only. "
            "Give a writable place with --annotations PATH or LENS_DATA_DIR."))
    return AnnotationsUnavailable(path, "error", f"The annotations file {path} could not be used ({orig}), so {doing} did not happen.")


def _classify_server(where: ServerLocation, exc: BaseException, doing: str) -> AnnotationsUnavailable:
    """One sentence naming the server's URL (never its password) and what to do."""
    if isinstance(exc, _Newer):
        return AnnotationsUnavailable(where, "newer", (
            f"The annotations database {where} was brought to a newer schema by a newer version of DocBench Lens "
            f"(revision {exc.version}; this version knows up to {HEAD_REVISION}): notes are read-only here."))
    if isinstance(exc, _Foreign):
        return AnnotationsUnavailable(where, "foreign", (
            f"The database {where} holds tables of some other program, not annotations: notes are read-only. "
            "Give an empty database in LENS_DATABASE_URL."))
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    state = str(getattr(orig, "sqlstate", "") or "")
    detail = where.scrub(_detail(exc))
    said = detail.lower()
    if not state:  # a refused connection carries no SQLSTATE: read the server's words
        if "password authentication failed" in said or "no password supplied" in said or "no pg_hba.conf entry" in said:
            state = "28P01"
        elif re.search(r"database \S+ does not exist", said):
            state = "3D000"
        elif "permission denied" in said:
            state = "42501"
    if state in ("28P01", "28000"):
        reason, says = "refused", f"refused the login ({detail}): check the user and password in LENS_DATABASE_URL"
    elif state == "3D000":
        reason, says = "missing", f"does not exist on that server ({detail}): create it (createdb) or fix LENS_DATABASE_URL"
    elif state in ("42501", "25006"):
        reason, says = "denied", f"does not let this login do that ({detail}), so {doing} did not happen: notes are read-only"
    elif state in ("55P03", "40P01", "57014"):
        reason, says = "locked", f"was busy with other writers, so {doing} did not happen; try again in a moment"
    elif state.startswith(("08", "57P")) or not state and isinstance(orig, (sa.exc.OperationalError, OSError)) \
            or type(orig).__name__ in ("OperationalError", "InterfaceError"):
        reason, says = "unreachable", (f"cannot be reached ({detail}), so {doing} did not happen: notes are read-only "
                                       "until it is back, and it is tried again on the next page")
    else:
        reason, says = "error", f"could not be used ({detail}), so {doing} did not happen"
    return AnnotationsUnavailable(where, reason, f"The annotations database {where} {says}.")


# ----------------------------------------------------------------------------- damaged rows (an SQLite file edited by hand or by a bad tool)

_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
_TAG_LIST = re.compile(r"[a-z0-9][a-z0-9_\-]*(?:,[a-z0-9][a-z0-9_\-]*)*")
_WANT = {"text": "text", "time": "a time such as 2024-05-01T12:00:00.000000Z", "revision": "a whole number of at least 1",
         "tags": "tag names", "action": "answer or exclude", "definition": "a JSON object of fields and their values"}


class _Undecodable(Exception):
    """An SQLite text value that is not UTF-8: read again with a tolerant text factory."""


def _lenient_text(raw: bytes) -> str | bytes:
    """SQLite's text as str, or its bytes when they are not UTF-8 (then the row is named as damaged)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(raw)


def _described(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(bytes(value)):,} bytes"
    if value is None:
        return "nothing"
    if isinstance(value, (bool, int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {_shown(value, 40)}"
    return f"a {type(value).__name__}"


def _iso_time(text: str) -> bool:
    try:
        parse_time(text)
    except InvalidInput:
        return False
    return True


def _fits(want: str, value: object) -> bool:
    if want == "text":
        return type(value) is str
    if want == "time":  # as stored now, or any ISO 8601 time (a file migrated from version 1 keeps its own)
        return type(value) is str and (len(value) == 27 and _STAMP.fullmatch(value) is not None or _iso_time(value))
    if want == "revision":
        return type(value) is int and value >= 1
    if want == "tags":
        return value is None or type(value) is str and _TAG_LIST.fullmatch(value) is not None
    if want == "action":
        return value in ("answer", "exclude")
    return type(value) is str and bool(_definition_of(value))  # definition


# (column, what it must hold) of each kind's row, as the store selects it
_NOTE_SPEC = (("id", "revision"), ("benchmark", "text"), ("question_id", "text"), ("run", "text"), ("text", "text"),
              ("author", "text"), ("created", "time"), ("updated", "time"), ("revision", "revision"), ("tags", "tags"))
_CORRECTION_SPEC = (("benchmark", "text"), ("question_id", "text"), ("action", "action"), ("answer", "text"), ("author", "text"),
                    ("created", "time"), ("updated", "time"), ("revision", "revision"))
_SLICE_SPEC = (("benchmark", "text"), ("name", "text"), ("definition", "definition"), ("author", "text"), ("note", "text"),
               ("created", "time"), ("updated", "time"), ("revision", "revision"))


def _damage(spec: tuple[tuple[str, str], ...], row: Sequence[Any]) -> str | None:
    """What is wrong with a stored row (None: nothing), as `column holds X, not Y`."""
    for (name, want), value in zip(spec, row, strict=False):
        if not _fits(want, value):
            return f"{name} holds {_described(value)}, not {_WANT[want]}"
    return None


def _row_name(kind: str, row: Sequence[Any], keys: tuple[int, ...]) -> str:
    shown = [_shown(v, 60) if isinstance(v, str) else _described(v) for v in (row[k] for k in keys)]
    return f"{kind} " + ", ".join(shown)


def _note_ok(r: Sequence[Any]) -> bool:
    """A note row without damage (`_damage(_NOTE_SPEC, r) is None`), the common case checked
    quickly -- 20,000 notes are read on every overview: times in the shape this code stores them
    (their digits not read); any other row is read fully by `_damage`."""
    c, u = r[6], r[7]
    if (type(r[1]) is str and type(r[2]) is str and type(r[3]) is str and type(r[4]) is str and type(r[5]) is str
            and type(r[8]) is int and r[8] >= 1 and (r[9] is None or type(r[9]) is str)
            and type(c) is str and len(c) == 27 and c[26] == "Z" and c[10] == "T" and c[19] == "."
            and type(u) is str and len(u) == 27 and u[26] == "Z" and u[10] == "T" and u[19] == "."):
        return True
    return _damage(_NOTE_SPEC, r) is None


def _tolerant_retry(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a read or write again, once, with SQLite text that is not UTF-8 read as bytes (then named
    as a damaged row) instead of failing the whole query."""
    @functools.wraps(method)
    def wrapper(self: AnnotationStore, *args: Any, **kw: Any) -> Any:
        try:
            return method(self, *args, **kw)
        except _Undecodable:
            self._lenient = True
            return method(self, *args, **kw)
    return wrapper


# ----------------------------------------------------------------------------- the store


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
        self._lenient = False  # SQLite text that is not UTF-8 was met: read such values as bytes from now on
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
        if (p is not None and self.dialect == "postgresql" and p.reason in _RETRIED and not self._read_only
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
        if self._lenient:
            con.text_factory = _lenient_text
        return con

    def _connect_read_only(self, uri: str) -> sqlite3.Connection:
        con = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        if self._lenient:
            con.text_factory = _lenient_text
        return con

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
            self._fall_back(_classify_file(self.path, exc, "opening it"))
            return
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                con.execute("PRAGMA journal_mode = WAL")
            done = version == SCHEMA_VERSION and con.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone() is not None
        except sqlite3.Error as exc:
            self._fall_back(_classify_file(self.path, exc, "opening it"))
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
                    _migrate(conn)
        except (SQLAlchemyError, sqlite3.Error, _Newer, _Foreign) as exc:
            self._fall_back(_classify_file(self.path, exc, "opening it"))

    def _open_server(self) -> None:
        assert isinstance(self.path, ServerLocation)
        if self._engine is None:
            try:
                self._engine = self._server_engine()
            except (SQLAlchemyError, NoSuchModuleError, ImportError) as exc:
                self.readable = False
                self._problem = AnnotationsUnavailable(self.path, "error", (
                    f"The annotations database {self.path} needs the PostgreSQL driver ({self.path.scrub(_detail(exc))}): "
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
                        raise _Newer(current)
                    with self._write_transaction(conn):
                        _migrate(conn)
                may = conn.execute(sa.text(
                    "SELECT bool_and(has_table_privilege(t, 'INSERT,UPDATE,DELETE')) FROM unnest(CAST(:names AS text[])) t"),
                    {"names": [t.name for t in metadata.sorted_tables]}).scalar()
                conn.rollback()
        except (SQLAlchemyError, _Newer, _Foreign) as exc:
            problem = _classify_server(self.path, exc, "opening it")
            self._problem = problem
            self.readable = problem.reason in ("newer", "denied") and current is not None and current in REVISIONS
            self._retry_at = time.monotonic() + self.retry_interval
            if isinstance(exc, _Newer):
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
            problem = _classify_server(self.path, exc, doing)
            if problem.reason in ("unreachable", "refused", "missing"):
                self._problem = problem
                self.readable = False
                self._retry_at = time.monotonic() + self.retry_interval
                if self._engine is not None:
                    self._engine.dispose()  # connections to a server that went away are not reused
            return problem
        assert isinstance(self.path, Path)
        return _classify_file(self.path, exc, doing)

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
            if self._undecodable(exc):
                raise _Undecodable() from None
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
                if self._undecodable(exc):
                    raise _Undecodable() from None
                raise self._unavailable(exc, doing) from None
            finally:
                try:
                    conn.close()
                except SQLAlchemyError:
                    pass
        finally:
            if waiting:
                self._writer_waits(False)

    def _undecodable(self, exc: BaseException) -> bool:
        """An SQLite text value that is not UTF-8 failed the query (tried again leniently, once)."""
        orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
        return self.dialect == "sqlite" and not self._lenient and "could not decode" in str(orig).lower()

    def _now(self, after: str | None = None) -> str:
        stamp = now_iso(self._clock())
        return _later(after) if after is not None and stamp <= after else stamp

    def _text_order(self, column: Any) -> Any:
        """`column` ordered byte-wise (SQLite's default; PostgreSQL's is the server's locale)."""
        return column.collate("C") if self.dialect == "postgresql" else column

    @staticmethod
    def _check_revision(current: Note | Correction | SavedSlice | None, expected_revision: int | None) -> None:
        """The optimistic revision rule, for every kind of record: Conflict when the editor started
        from another revision than the stored one (0: there was none; None: no check)."""
        if expected_revision is not None and expected_revision != (current.revision if current else 0):
            raise Conflict(current, expected_revision)

    # -- reading

    def _select_notes(self, *where: Any) -> Any:
        """Notes with their tags as one comma-separated text (a tag holds no comma): SQLite's
        group_concat, PostgreSQL's string_agg."""
        n, t = notes_t, note_tags_t
        tags = sa.select(sa.func.aggregate_strings(t.c.tag, ",")).where(t.c.note_id == n.c.id).scalar_subquery()
        return (sa.select(n.c.id, n.c.benchmark, n.c.question_id, n.c.run, n.c.text, n.c.author, n.c.created, n.c.updated,
                          n.c.revision, tags)
                .where(*where).order_by(self._text_order(n.c.question_id), self._text_order(n.c.run)))

    @staticmethod
    def _note_rows(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[tuple[int, Any, Note | None]]:
        """Rows of `_select_notes` as (id, key, Note), the Note None for a damaged row (named in `bad`)."""
        out: list[tuple[int, Any, Note | None]] = []
        for r in rows:
            if _note_ok(r):
                out.append((r[0], (r[1], r[2], r[3]), Note(r[1], r[2], r[3], r[4], tuple(sorted(r[9].split(","))) if r[9] else (),
                                                          r[5], r[6], r[7], r[8])))
                continue
            if bad is not None:
                bad.append(f"{_row_name('note', r, (2, 3))} (row {r[0]}): {_damage(_NOTE_SPEC, r)}")
            out.append((r[0], (r[1], r[2], r[3]), None))
        return out

    @staticmethod
    def _notes_of(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[tuple[int, Note]]:
        """Rows of `_select_notes` as (id, Note); damaged rows left out (and named in `bad`)."""
        out = []
        for r in rows:
            if _note_ok(r):
                out.append((r[0], Note(r[1], r[2], r[3], r[4], tuple(sorted(r[9].split(","))) if r[9] else (),
                                       r[5], r[6], r[7], r[8])))
            elif bad is not None:
                bad.append(f"{_row_name('note', r, (2, 3))} (row {r[0]}): {_damage(_NOTE_SPEC, r)}")
        return out

    @staticmethod
    def _correction(row: Sequence[Any]) -> Correction:
        return Correction(*row)

    @staticmethod
    def _good(kind: str, spec: tuple[tuple[str, str], ...], rows: Iterable[Sequence[Any]], bad: list[str] | None,
              make: Callable[[Sequence[Any]], Any]) -> list[Any]:
        """Rows made into records; a damaged one left out and named in `bad`."""
        out = []
        for r in rows:
            why = _damage(spec, r)
            if why is None:
                out.append(make(r))
            elif bad is not None:
                bad.append(f"{_row_name(kind, r, (1,))}: {why}")
        return out

    _CORRECTION_COLUMNS = (corrections_t.c.benchmark, corrections_t.c.question_id, corrections_t.c.action, corrections_t.c.answer,
                           corrections_t.c.author, corrections_t.c.created, corrections_t.c.updated, corrections_t.c.revision)

    @_tolerant_retry
    def note(self, benchmark: str, question_id: str, run: str = "") -> Note | None:
        """The note (None: none, or a damaged row, which a save replaces)."""
        with self._reading() as con:
            if con is None:
                return None
            found = self._note_in(con, (benchmark, question_id, run))
            return found[1] if found else None

    @_tolerant_retry
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
            return [n for _, n in self._notes_of(con.execute(self._select_notes(*where)).all(), bad)]

    def _correction_in(self, con: Connection, key: tuple[str, str]) -> Correction | None:
        row = con.execute(sa.select(*self._CORRECTION_COLUMNS).where(
            corrections_t.c.benchmark == key[0], corrections_t.c.question_id == key[1])).first()
        return self._correction(row) if row and _damage(_CORRECTION_SPEC, row) is None else None

    @_tolerant_retry
    def correction(self, benchmark: str, question_id: str) -> Correction | None:
        with self._reading() as con:
            if con is None:
                return None
            return self._correction_in(con, (benchmark, question_id))

    @_tolerant_retry
    def corrections(self, benchmark: str, *, bad: list[str] | None = None) -> list[Correction]:
        """The benchmark's corrections by question id (damaged rows left out, named in `bad`)."""
        with self._reading() as con:
            if con is None:
                return []
            rows = con.execute(sa.select(*self._CORRECTION_COLUMNS).where(corrections_t.c.benchmark == benchmark)
                               .order_by(self._text_order(corrections_t.c.question_id)))
            return self._good("correction", _CORRECTION_SPEC, rows, bad, self._correction)

    @_tolerant_retry
    def vocabulary(self) -> list[str]:
        """The tags offered, in their order (the defaults when the database cannot be read)."""
        with self._reading() as con:
            if con is None:
                return list(DEFAULT_TAGS)
            return list(con.execute(sa.select(vocabulary_t.c.tag).order_by(
                vocabulary_t.c.position, self._text_order(vocabulary_t.c.tag))).scalars())

    @_tolerant_retry
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

    @_tolerant_retry
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
        found = self._note_rows(con.execute(self._select_notes(
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

    @_tolerant_retry
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
            self._check_revision(current, expected_revision)
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

    @_tolerant_retry
    def delete_note(self, benchmark: str, question_id: str, run: str = "", *, expected_revision: int | None) -> bool:
        """Delete a note (Conflict when it changed since `expected_revision`); False when there was none."""
        with self._writing("deleting the note", ("note", benchmark, question_id, run)) as con:
            found = self._note_in(con, (benchmark, question_id, run))
            self._check_revision(found[1] if found else None, expected_revision)
            if not found:
                return False
            con.execute(sa.delete(note_tags_t).where(note_tags_t.c.note_id == found[0]))
            con.execute(sa.delete(notes_t).where(notes_t.c.id == found[0]))
            return True

    # -- corrections

    @_tolerant_retry
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
            self._check_revision(current, expected_revision)
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

    @_tolerant_retry
    def delete_correction(self, benchmark: str, question_id: str, *, expected_revision: int | None) -> bool:
        with self._writing("deleting the correction", ("correction", benchmark, question_id)) as con:
            current = self._correction_in(con, (benchmark, question_id))
            self._check_revision(current, expected_revision)
            if current is None:
                return False
            con.execute(sa.delete(corrections_t).where(corrections_t.c.benchmark == benchmark, corrections_t.c.question_id == question_id))
            return True

    # -- saved slices

    @staticmethod
    def _slice(row: Sequence[Any]) -> SavedSlice:
        return SavedSlice(row[0], row[1], _definition_of(row[2]), row[3], row[4], row[5], row[6], row[7])

    _SLICE_COLUMNS = (slices_t.c.benchmark, slices_t.c.name, slices_t.c.definition, slices_t.c.author, slices_t.c.note,
                      slices_t.c.created, slices_t.c.updated, slices_t.c.revision)

    def _slice_in(self, con: Connection, key: tuple[str, str]) -> SavedSlice | None:
        row = con.execute(sa.select(*self._SLICE_COLUMNS).where(slices_t.c.benchmark == key[0], slices_t.c.name == key[1])).first()
        return self._slice(row) if row and _damage(_SLICE_SPEC, row) is None else None

    @_tolerant_retry
    def saved_slice(self, benchmark: str, name: str) -> SavedSlice | None:
        with self._reading() as con:
            if con is None:
                return None
            return self._slice_in(con, (benchmark, name))

    @_tolerant_retry
    def saved_slices(self, benchmark: str, *, bad: list[str] | None = None) -> list[SavedSlice]:
        """The benchmark's saved slices, by name (damaged rows left out, named in `bad`)."""
        with self._reading() as con:
            if con is None:
                return []
            rows = con.execute(sa.select(*self._SLICE_COLUMNS).where(slices_t.c.benchmark == benchmark)
                               .order_by(self._text_order(slices_t.c.name)))
            return self._good("saved slice", _SLICE_SPEC, rows, bad, self._slice)

    @_tolerant_retry
    def save_slice(self, benchmark: str, name: str, *, definition: Mapping[str, Iterable[str]], author: str, note: str = "",
                   expected_revision: int | None) -> SavedSlice:
        """Save a slice under `name` (a new one: expected_revision 0; a change: the revision it was
        read at). Same revision rule, and errors, as `save_note`; at most MAX_SLICES per benchmark."""
        key = (clean_key(benchmark, "benchmark"), clean_slice_name(name))
        spec, author, note = clean_definition(definition), clean_author(author), clean_text(note, "the slice's note")
        with self._writing("saving the slice", ("slice", *key)) as con:
            current = self._slice_in(con, key)
            self._check_revision(current, expected_revision)
            if current is not None:
                if (current.definition, current.note) == (spec, note):
                    return current
                saved = SavedSlice(*key, spec, author, note, current.created, self._now(current.updated), current.revision + 1)
                con.execute(sa.update(slices_t).where(slices_t.c.benchmark == key[0], slices_t.c.name == key[1]).values(
                    definition=_definition_text(spec), author=author, note=note, updated=saved.updated, revision=saved.revision))
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
        con.execute(sa.insert(slices_t).values(benchmark=s.benchmark, name=s.name, definition=_definition_text(s.definition),
                                               author=s.author, note=s.note, created=s.created, updated=s.updated, revision=s.revision))

    @_tolerant_retry
    def delete_slice(self, benchmark: str, name: str, *, expected_revision: int | None) -> bool:
        """Delete a saved slice (Conflict when it changed since `expected_revision`); False when there was none."""
        with self._writing("deleting the slice", ("slice", benchmark, name)) as con:
            current = self._slice_in(con, (benchmark, name))
            self._check_revision(current, expected_revision)
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

    @_tolerant_retry
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

    @_tolerant_retry
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

    @_tolerant_retry
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
                for stored_id, key, note in self._note_rows(rows):
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
                    make: Callable[[Sequence[Any]], Any], values: Callable[[Any], dict[str, Any]]) -> None:
        """Corrections or saved slices (keyed by benchmark and their second key column), merged as notes are."""
        second = columns[1]
        state: dict[Any, tuple[bool, Any]] = {}
        spec = _CORRECTION_SPEC if table is corrections_t else _SLICE_SPEC
        for benchmark in sorted({r.key[0] for r in records}):
            seconds = sorted({r.key[1] for r in records if r.key[0] == benchmark})
            for start in range(0, len(seconds), 500):
                for row in con.execute(sa.select(*columns).where(table.c.benchmark == benchmark, second.in_(seconds[start:start + 500]))):
                    state[(row[0], row[1])] = (True, make(row) if _damage(spec, row) is None else None)  # None: damaged, replaced
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

    @_tolerant_retry
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
                        self._merge_rows(con, part, counts, corrections_t, self._CORRECTION_COLUMNS, self._correction,
                                         lambda c: {"action": c.action, "answer": c.answer})
                    else:
                        self._merge_rows(con, part, counts, slices_t, self._SLICE_COLUMNS, self._slice,
                                         lambda s: {"definition": _definition_text(s.definition), "note": s.note})
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

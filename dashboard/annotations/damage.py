"""Damaged rows: an SQLite file edited by hand or by another tool (bytes in a text column, text that
is not UTF-8, a revision stored as text, a time that is not a time). Every row the store reads
becomes a record here, or is left out and named in the `bad` list the caller gives
(`store.notes(..., bad=[])`, `corrections`, `saved_slices`), so a page never gets a value it cannot
draw and an export holds every good row; a single lookup reads a damaged row as None, so a save
over it replaces it.

The layer the store calls for every row it reads:
- `NOTE_COLUMNS`, `CORRECTION_COLUMNS`, `SLICE_COLUMNS`: what the store selects of each kind, one
  column per entry of NOTE_SPEC, CORRECTION_SPEC, SLICE_SPEC (what that column must hold);
- `note_rows`, `notes_of`, `correction_of`, `corrections_of`, `slice_of`, `slices_of`: rows made
  records, damaged ones left out (or None) and named;
- `Leniency` and `tolerant`: SQLite text that is not UTF-8 fails the whole query; a store method
  marked `@tolerant` is run again, once, with such text read as bytes (its row then named here).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from .errors import InvalidInput, quoted
from .records import Correction, Note, SavedSlice, definition_of, parse_time
from .schema import corrections_t, note_tags_t, notes_t, slices_t
from .unavailable import driver_error

__all__ = [
    "NOTE_SPEC", "CORRECTION_SPEC", "SLICE_SPEC", "NOTE_COLUMNS", "CORRECTION_COLUMNS", "SLICE_COLUMNS",
    "damage", "note_ok", "note_rows", "notes_of", "correction_of", "corrections_of", "slice_of", "slices_of",
    "Undecodable", "Leniency", "tolerant",
]

_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
_TAG_LIST = re.compile(r"[a-z0-9][a-z0-9_\-]*(?:,[a-z0-9][a-z0-9_\-]*)*")
_WANT = {"text": "text", "time": "a time such as 2024-05-01T12:00:00.000000Z", "revision": "a whole number of at least 1",
         "tags": "tag names", "action": "answer or exclude", "definition": "a JSON object of fields and their values"}

Spec = tuple[tuple[str, str], ...]

# (column, what it must hold) of each kind's row, in the order the store selects it (the *_COLUMNS below)
NOTE_SPEC: Spec = (("id", "revision"), ("benchmark", "text"), ("question_id", "text"), ("run", "text"), ("text", "text"),
                   ("author", "text"), ("created", "time"), ("updated", "time"), ("revision", "revision"), ("tags", "tags"))
CORRECTION_SPEC: Spec = (("benchmark", "text"), ("question_id", "text"), ("action", "action"), ("answer", "text"),
                         ("author", "text"), ("created", "time"), ("updated", "time"), ("revision", "revision"))
SLICE_SPEC: Spec = (("benchmark", "text"), ("name", "text"), ("definition", "definition"), ("author", "text"), ("note", "text"),
                    ("created", "time"), ("updated", "time"), ("revision", "revision"))

# A note's tags as one comma-separated text (a tag holds no comma): SQLite's group_concat, PostgreSQL's string_agg.
_TAGS = (sa.select(sa.func.aggregate_strings(note_tags_t.c.tag, ",")).where(note_tags_t.c.note_id == notes_t.c.id)
         .scalar_subquery())
NOTE_COLUMNS = tuple(_TAGS if name == "tags" else notes_t.c[name] for name, _ in NOTE_SPEC)
CORRECTION_COLUMNS = tuple(corrections_t.c[name] for name, _ in CORRECTION_SPEC)
SLICE_COLUMNS = tuple(slices_t.c[name] for name, _ in SLICE_SPEC)


# ----------------------------------------------------------------------------- what is wrong with a row


def _described(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(bytes(value)):,} bytes"
    if value is None:
        return "nothing"
    if isinstance(value, (bool, int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {quoted(value, 40)}"
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
    return type(value) is str and bool(definition_of(value))  # definition


def damage(spec: Spec, row: Sequence[Any]) -> str | None:
    """What is wrong with a stored row (None: nothing), as `column holds X, not Y`."""
    for (name, want), value in zip(spec, row, strict=False):
        if not _fits(want, value):
            return f"{name} holds {_described(value)}, not {_WANT[want]}"
    return None


def _row_name(kind: str, row: Sequence[Any], keys: tuple[int, ...]) -> str:
    shown = [quoted(v, 60) if isinstance(v, str) else _described(v) for v in (row[k] for k in keys)]
    return f"{kind} " + ", ".join(shown)


def note_ok(r: Sequence[Any]) -> bool:
    """A note row without damage (`damage(NOTE_SPEC, r) is None`), the common case checked
    quickly -- 20,000 notes are read on every overview: times in the shape this code stores them
    (their digits not read); any other row is read fully by `damage`."""
    c, u = r[6], r[7]
    if (type(r[1]) is str and type(r[2]) is str and type(r[3]) is str and type(r[4]) is str and type(r[5]) is str
            and type(r[8]) is int and r[8] >= 1 and (r[9] is None or type(r[9]) is str)
            and type(c) is str and len(c) == 27 and c[26] == "Z" and c[10] == "T" and c[19] == "."
            and type(u) is str and len(u) == 27 and u[26] == "Z" and u[10] == "T" and u[19] == "."):
        return True
    return damage(NOTE_SPEC, r) is None


# ----------------------------------------------------------------------------- rows made records


def _note(r: Sequence[Any]) -> Note:
    return Note(r[1], r[2], r[3], r[4], tuple(sorted(r[9].split(","))) if r[9] else (), r[5], r[6], r[7], r[8])


def _name_note(r: Sequence[Any], bad: list[str] | None) -> None:
    if bad is not None:
        bad.append(f"{_row_name('note', r, (2, 3))} (row {r[0]}): {damage(NOTE_SPEC, r)}")


def note_rows(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[tuple[int, tuple[str, str, str], Note | None]]:
    """Rows of NOTE_COLUMNS as (id, key, Note), the Note None for a damaged row (named in `bad`):
    what a save or an import replaces."""
    out: list[tuple[int, tuple[str, str, str], Note | None]] = []
    for r in rows:
        if note_ok(r):
            out.append((r[0], (r[1], r[2], r[3]), _note(r)))
        else:
            _name_note(r, bad)
            out.append((r[0], (r[1], r[2], r[3]), None))
    return out


def notes_of(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[Note]:
    """Rows of NOTE_COLUMNS as Notes; damaged rows left out (and named in `bad`)."""
    out = []
    for r in rows:
        if note_ok(r):
            out.append(_note(r))
        else:
            _name_note(r, bad)
    return out


R = TypeVar("R")


def _good(kind: str, spec: Spec, rows: Iterable[Sequence[Any]], bad: list[str] | None,
          make: Callable[[Sequence[Any]], R]) -> list[R]:
    """Rows made into records; a damaged one left out and named in `bad`."""
    out = []
    for r in rows:
        why = damage(spec, r)
        if why is None:
            out.append(make(r))
        elif bad is not None:
            bad.append(f"{_row_name(kind, r, (1,))}: {why}")
    return out


def _correction(row: Sequence[Any]) -> Correction:
    return Correction(*row)


def _slice(row: Sequence[Any]) -> SavedSlice:
    return SavedSlice(row[0], row[1], definition_of(row[2]), row[3], row[4], row[5], row[6], row[7])


def correction_of(row: Sequence[Any] | None) -> Correction | None:
    """A row of CORRECTION_COLUMNS as a Correction (None: no row, or a damaged one)."""
    return _correction(row) if row and damage(CORRECTION_SPEC, row) is None else None


def corrections_of(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[Correction]:
    """Rows of CORRECTION_COLUMNS as Corrections; damaged rows left out (and named in `bad`)."""
    return _good("correction", CORRECTION_SPEC, rows, bad, _correction)


def slice_of(row: Sequence[Any] | None) -> SavedSlice | None:
    """A row of SLICE_COLUMNS as a SavedSlice (None: no row, or a damaged one)."""
    return _slice(row) if row and damage(SLICE_SPEC, row) is None else None


def slices_of(rows: Iterable[Sequence[Any]], bad: list[str] | None = None) -> list[SavedSlice]:
    """Rows of SLICE_COLUMNS as SavedSlices; damaged rows left out (and named in `bad`)."""
    return _good("saved slice", SLICE_SPEC, rows, bad, _slice)


# ----------------------------------------------------------------------------- text that is not UTF-8


class Undecodable(Exception):
    """An SQLite text value that is not UTF-8 failed a query: run it again with `Leniency` on."""


def _lenient_text(raw: bytes) -> str | bytes:
    """SQLite's text as str, or its bytes when they are not UTF-8 (then the row is named as damaged)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(raw)


class Leniency:
    """Whether a store's SQLite connections read text that is not UTF-8 as bytes: off until such a
    value is met (`check`), then on for good (`prepare` sets each new connection's text factory)."""

    def __init__(self) -> None:
        self.on = False

    def prepare(self, con: sqlite3.Connection) -> sqlite3.Connection:
        if self.on:
            con.text_factory = _lenient_text
        return con

    def check(self, exc: BaseException, dialect: str) -> None:
        """Undecodable when `exc` is SQLite failing on text that is not UTF-8 (and leniency is off)."""
        if dialect == "sqlite" and not self.on and "could not decode" in str(driver_error(exc)).lower():
            raise Undecodable() from None


class _Lenient(Protocol):
    leniency: Leniency


F = TypeVar("F", bound=Callable[..., Any])


def tolerant(method: F) -> F:
    """Run a store's read or write again, once, with SQLite text that is not UTF-8 read as bytes
    (then named as a damaged row) instead of failing the whole query."""
    @functools.wraps(method)
    def wrapper(self: _Lenient, *args: Any, **kw: Any) -> Any:
        try:
            return method(self, *args, **kw)
        except Undecodable:
            self.leniency.on = True
            return method(self, *args, **kw)
    return wrapper  # type: ignore[return-value]

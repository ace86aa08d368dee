"""The annotations' records and the validation of everything a user (or an imported file) puts in:

- `Note` (on an answer: `run` = the run's name; on a question: `run` = "", the gold itself),
  `Correction` (a question's corrected gold answer, or its exclusion) and `SavedSlice` (a named filter
  set of the explorer, or a slice the finder discovered: `definition` maps a field to the values it
  keeps), each with who saved it, when, and its revision;
- `make_note`, `make_correction`, `make_slice`: a record from untrusted values (InvalidInput naming
  the first bad field), and the `clean_*` rules they apply, within the caps MAX_*;
- times: UTC, ISO 8601 with microseconds and a `Z` (`2024-05-01T12:00:00.000000Z`, `now_iso`,
  `parse_time`), so that they sort as text;
- the revision rule (`check_revision`): a save names the revision it was edited from (0: there was
  none); when the stored one differs, nothing is written and `Conflict` carries the stored record,
  so the page can say who saved what in between.

A definition (`clean_field`: a-z, 0-9, `_`) is stored as JSON text with sorted keys
(`definition_text`); `SavedSlice.questions(rows)` applies it to dicts of field values.

Pure Python above errors.py (no SQLAlchemy: the pages that only draw notes load none of the database).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .errors import InvalidInput, excerpt, is_unicode, quoted

__all__ = [
    "DEFAULT_TAGS", "MAX_TEXT", "MAX_TAG", "MAX_TAGS", "MAX_AUTHOR", "MAX_KEY", "MAX_ANSWER", "MAX_VOCABULARY",
    "MAX_SLICE_NAME", "MAX_SLICE_FIELDS", "MAX_SLICE_VALUES", "MAX_SLICES",
    "Note", "Correction", "SavedSlice", "Conflict", "check_revision",
    "now_iso", "parse_time", "later", "clean_text", "clean_tag", "clean_tags", "clean_author", "clean_key", "clean_revision",
    "clean_field", "clean_definition", "clean_slice_name", "definition_text", "definition_of",
    "make_note", "make_correction", "make_slice",
]

DEFAULT_TAGS = (  # the tag vocabulary a new database offers, in its order
    "wrong_page_retrieved", "reading_or_ocr_error", "reasoning_error", "extraction_error", "format_only",
    "hallucination", "refused_wrongly", "gold_wrong", "question_ambiguous",
)

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
                            f"your change was not saved. Their {what}: “{excerpt(said)}”{tags}")
        super().__init__(self.message)


def check_revision(current: Note | Correction | SavedSlice | None, expected_revision: int | None) -> None:
    """The optimistic revision rule, for every kind of record: Conflict when the editor started
    from another revision than the stored one (0: there was none; None: no check)."""
    if expected_revision is not None and expected_revision != (current.revision if current else 0):
        raise Conflict(current, expected_revision)


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
        raise InvalidInput(f"{what} must be an ISO 8601 time such as 2024-05-01T12:00:00Z, not {quoted(value, 40)}") from None
    except OverflowError:  # year 9999 with a negative offset, year 1 with a positive one: outside what UTC can hold
        raise InvalidInput(f"{what} {quoted(value, 40)} is outside the years 1 to 9999 once made UTC") from None


def later(stamp: str) -> str:
    """One microsecond after a stored time (the same time at the very end of year 9999)."""
    try:
        return now_iso(datetime.strptime(stamp, _TIME_FORMAT).replace(tzinfo=UTC) + timedelta(microseconds=1))
    except (OverflowError, ValueError):
        return stamp


def _plain(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text")
    if not is_unicode(value):
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
        raise InvalidInput(f"the tag {excerpt(text, 40)!r} is {len(text)} characters long; at most {MAX_TAG} are allowed")
    if not _TAG.fullmatch(text):
        raise InvalidInput(f"the tag {excerpt(text, 40)!r} may only hold letters a-z, digits, '_' and '-' (and start with a letter or digit)")
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


def clean_revision(value: object) -> int:
    """A revision: a whole number from 1 to 2**62."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**62:
        raise InvalidInput("revision must be a whole number of at least 1")
    return value


def clean_field(value: object) -> str:
    """A field name of a slice definition: a-z, 0-9 and `_`, starting with a letter, at most 64."""
    text = _plain(value, "a field name").strip()
    if not _FIELD.fullmatch(text):
        raise InvalidInput(f"the field {excerpt(text, 40)!r} must be a name of a-z, 0-9 and '_' (such as reasoning_type)")
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


def definition_text(definition: Mapping[str, Sequence[str]]) -> str:
    """A definition as stored: JSON, keys sorted, no spaces."""
    return json.dumps({k: list(v) for k, v in definition.items()}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def definition_of(text: str) -> dict[str, tuple[str, ...]]:
    """A stored definition read back ({}: not one, which damage.py names as a damaged row)."""
    try:
        return clean_definition(json.loads(text))
    except (ValueError, InvalidInput):
        return {}


def make_slice(benchmark: object, name: object, *, definition: object, author: object, note: object, created: object,
               updated: object, revision: object = 1) -> SavedSlice:
    """A validated SavedSlice (InvalidInput naming the first bad field otherwise)."""
    return SavedSlice(clean_key(benchmark, "benchmark"), clean_slice_name(name), clean_definition(definition), clean_author(author),
                      clean_text(note, "the slice's note"), parse_time(created, "created"), parse_time(updated, "updated"),
                      clean_revision(revision))


def make_note(benchmark: object, question_id: object, run: object, *, text: object, tags: Iterable[object], author: object,
              created: object, updated: object, revision: object = 1) -> Note:
    """A validated Note (InvalidInput naming the first bad field otherwise)."""
    return Note(clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), clean_key(run, "run", empty=True),
                clean_text(text), clean_tags(tags), clean_author(author), parse_time(created, "created"),
                parse_time(updated, "updated"), clean_revision(revision))


def make_correction(benchmark: object, question_id: object, *, action: object, answer: object, author: object,
                    created: object, updated: object, revision: object = 1) -> Correction:
    """A validated Correction: action "answer" with a non-empty answer, or "exclude" (answer "")."""
    if action not in ("answer", "exclude"):
        raise InvalidInput(f"action must be 'answer' or 'exclude', not {excerpt(str(action), 40)!r}")
    text = clean_text(answer, "the corrected answer", MAX_ANSWER)
    if action == "answer" and not text:
        raise InvalidInput("a corrected answer cannot be empty (mark the question excluded instead)")
    return Correction(clean_key(benchmark, "benchmark"), clean_key(question_id, "question_id"), str(action),
                      "" if action == "exclude" else text, clean_author(author), parse_time(created, "created"),
                      parse_time(updated, "updated"), clean_revision(revision))

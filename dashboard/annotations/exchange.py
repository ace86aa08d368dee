"""Export and import of one benchmark's annotations, as JSONL or CSV.

One record per line (JSONL) or row (CSV), in the order kind, question id, run. Fields:

    kind         "note", "correction" or "slice" (a saved slice)
    benchmark    the benchmark identity (`identity.benchmark_identity`) the record is filed under
    question_id  the gold question's id
    run          the run's name for a note on an answer; "" for a note on the question (and corrections)
    text         note: the free text (at most 10,000 characters)
    tags         note: the tags, a JSON list (CSV: one cell, names separated by ";")
    action       correction: "answer" (the gold answer is `answer`) or "exclude"
    answer       correction: the corrected gold answer ("" when excluded)
    name         slice: its name
    definition   slice: the fields and the values each keeps, a JSON object {"field": ["value", ...]}
                 (CSV: that JSON text in one cell)
    note         slice: the note saved with it
    author       who wrote it
    created      when it was first written (ISO 8601, UTC)
    updated      when it was last changed (ISO 8601, UTC)
    revision     how many times it was saved (optional on import: 1)

JSONL lines carry their kind's fields only; CSV has every column, its text cells safe to open in a
spreadsheet (scoring.writers.safe_cell: one single quote before a cell that begins like a formula,
removed again on import).
A record without `benchmark` (or with it empty) is taken as this benchmark's; one of another
benchmark is skipped. Importing merges by key (benchmark, question id, run, kind; a slice: benchmark,
name) and time: a record
not stored is added, one whose `updated` is later than the stored one's replaces it, any other
(equal or older) leaves the stored one. A bad line is reported as a `scoring.problems.Problem`
(file:line, and the field) and skipped -- a line nested too deep to read, text that is not Unicode
(a lone surrogate), a time outside the years 1 to 9999 once made UTC included: the rest is
imported. The file is bounded (MAX_IMPORT_BYTES, lines of MAX_LINE_BYTES, CSV cells of the csv
module's field limit); the records are stored in batches (`AnnotationStore.merge`), so other
sessions' saves get in while a large file is imported, and `progress(done, total)` follows them.

Export reads what can be read: a damaged row of the database (bytes in a text column, a revision
stored as text, a time stored as a number) is left out and named (`records(..., bad=[])`,
`export(...)[2]`), never failing the whole export; RECOVER says what to do then.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scoring.problems import Problem
from scoring.writers import csv_string, restore_cell

from .errors import InvalidInput
from .records import (
    MAX_ANSWER,
    MAX_AUTHOR,
    MAX_KEY,
    MAX_TAG,
    MAX_TAGS,
    MAX_TEXT,
    Correction,
    Note,
    SavedSlice,
    clean_author,
    clean_definition,
    clean_key,
    clean_slice_name,
    clean_tags,
    clean_text,
    parse_time,
)
from .store import AnnotationStore

__all__ = [
    "FIELDS", "RECOVER", "MAX_IMPORT_BYTES", "MAX_LINE_BYTES", "ImportResult", "Parsed",
    "records", "to_jsonl", "to_csv", "export", "write_export",
    "parse", "import_bytes", "import_file", "format_of",
]

RECOVER = ("To recover: keep this export (it holds every row that could be read), move the database file aside, "
           "open the app again (a new, empty database is made) and import the export; the rows named above are lost "
           "unless you copy them out of the old file by hand.")
FIELDS = ("kind", "benchmark", "question_id", "run", "text", "tags", "action", "answer", "author", "created", "updated", "revision",
          "name", "definition", "note")  # a slice's columns last: a CSV of notes and corrections reads as before
MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 256 * 1024  # a note of 10,000 characters, every one \\u-escaped, is ~60 KB
TAG_SEPARATOR = ";"

_EXPECTED = {
    "kind": "note, correction or slice",
    "benchmark": "this benchmark's identity",
    "question_id": f"a question id (text, at most {MAX_KEY:,} characters)",
    "run": f"a run name (text, at most {MAX_KEY:,} characters; empty for a question)",
    "text": f"text of at most {MAX_TEXT:,} characters",
    "tags": f"a list of at most {MAX_TAGS} tags (a-z, 0-9, _ and -, at most {MAX_TAG} characters each)",
    "action": "answer or exclude",
    "answer": f"a corrected answer of 1 to {MAX_ANSWER:,} characters",
    "name": "a slice's name (text, at most 200 characters)",
    "definition": 'a JSON object of fields and their values, such as {"reasoning_type": ["counting"]}',
    "note": f"text of at most {MAX_TEXT:,} characters",
    "author": f"an author's name of 1 to {MAX_AUTHOR} characters",
    "created": "an ISO 8601 time",
    "updated": "an ISO 8601 time",
    "revision": "a whole number of at least 1",
}


# ----------------------------------------------------------------------------- export


def records(store: AnnotationStore, benchmark: str, bad: list[str] | None = None) -> list[dict[str, Any]]:
    """Every annotation of `benchmark` as export records: notes, then corrections, each by question id
    and run, then saved slices by name. Damaged rows are left out and named in `bad`."""
    out: list[dict[str, Any]] = []
    for n in store.notes(benchmark, bad=bad):
        out.append({"kind": "note", "benchmark": n.benchmark, "question_id": n.question_id, "run": n.run, "text": n.text,
                    "tags": list(n.tags), "author": n.author, "created": n.created, "updated": n.updated, "revision": n.revision})
    for c in store.corrections(benchmark, bad=bad):
        out.append({"kind": "correction", "benchmark": c.benchmark, "question_id": c.question_id, "run": "", "action": c.action,
                    "answer": c.answer, "author": c.author, "created": c.created, "updated": c.updated, "revision": c.revision})
    for s in store.saved_slices(benchmark, bad=bad):
        out.append({"kind": "slice", "benchmark": s.benchmark, "question_id": "", "run": "", "name": s.name,
                    "definition": {k: list(v) for k, v in s.definition.items()}, "note": s.note, "author": s.author,
                    "created": s.created, "updated": s.updated, "revision": s.revision})
    return out


def to_jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def to_csv(rows: Iterable[dict[str, Any]]) -> str:
    """The records as CSV (every column), text cells spreadsheet-safe (scoring.writers.safe_cell: a
    note `=HYPERLINK(...)` is written `'=HYPERLINK(...)`); importing the file removes that quote again."""

    def cells_of(r: dict[str, Any]) -> list:
        cells = {**r, "tags": TAG_SEPARATOR.join(r.get("tags", ()))}
        if "definition" in r:
            cells["definition"] = json.dumps(r["definition"], ensure_ascii=False, sort_keys=True)
        return ["" if cells.get(f) is None else cells.get(f, "") for f in FIELDS]

    return csv_string(map(cells_of, rows), FIELDS)


def export(store: AnnotationStore, benchmark: str, *, fmt: str = "jsonl", bad: list[str] | None = None) -> tuple[str, int]:
    """(the file's text, the number of records) in `fmt` "jsonl" or "csv": a download's content.
    Damaged rows are left out and named in `bad`."""
    rows = records(store, benchmark, bad)
    return (to_csv(rows) if fmt == "csv" else to_jsonl(rows)), len(rows)


def write_export(store: AnnotationStore, benchmark: str, output: str | os.PathLike[str], *, fmt: str = "jsonl",
                 bad: list[str] | None = None) -> int:
    """Write the export to `output` (whole or not at all: a temporary file renamed); the record count.
    OSError when the place cannot be written; damaged rows named in `bad`."""
    text, count = export(store, benchmark, fmt=fmt, bad=bad)
    target = Path(output)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


# ----------------------------------------------------------------------------- import


@dataclass(slots=True)
class Parsed:
    """What a file held: the valid records, and a problem for each line skipped (or warned about)."""

    notes: list[Note] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)
    slices: list[SavedSlice] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0  # records read (blank lines not counted)
    skipped: int = 0
    size: int = 0  # bytes
    unreadable: bool = False  # the file could not be read at all (nothing was imported)


@dataclass(slots=True)
class ImportResult:
    file: str
    size: int = 0  # bytes
    lines: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    tags_added: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unreadable: bool = False

    @property
    def imported(self) -> int:
        return self.added + self.updated

    def counts(self) -> dict[str, int]:
        return {"added": self.added, "updated": self.updated, "unchanged": self.unchanged, "skipped": self.skipped}

    def summary(self) -> str:
        size = f"{self.size:,} bytes"
        tags = f"; new tags: {', '.join(self.tags_added)}" if self.tags_added else ""
        if self.unreadable:
            return f"{self.file}: not imported ({size})"
        return (f"{self.file}: {self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
                f"{self.skipped} skipped ({size}, {self.lines} records){tags}")


class _Bad(Exception):
    def __init__(self, name: str, got: str) -> None:
        super().__init__(name)
        self.field = name
        self.got = got


def _got(value: Any) -> str:
    if isinstance(value, str):
        bad = next((i for i, c in enumerate(value) if 0xD800 <= ord(c) <= 0xDFFF), None)
        if bad is not None:  # not Unicode text: said with \\u escapes, so the message itself can be printed and shown
            return f"text holding a lone surrogate (\\u{ord(value[bad]):04x} at character {bad + 1})"
        return f"text of {len(value):,} characters" if len(value) > 60 else json.dumps(value, ensure_ascii=False)
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return f"a {type(value).__name__}"


def _check(name: str, fn: Callable[..., Any], value: Any, *args: Any, **kw: Any) -> Any:
    try:
        return fn(value, *args, **kw)
    except InvalidInput as exc:
        outside = "outside the years" in str(exc)
        raise _Bad(name, _got(value) + (", outside the years 1 to 9999 once made UTC" if outside else "")) from None
    except (ValueError, TypeError, OverflowError, RecursionError, UnicodeError):  # never a traceback for one bad value
        raise _Bad(name, _got(value)) from None


def _record(obj: dict[str, Any], benchmark: str, csv_row: bool) -> Note | Correction | SavedSlice:
    """A validated record of `benchmark`; _Bad naming the first bad field otherwise."""
    def get(name: str, default: Any = "") -> Any:
        value = obj.get(name)
        return default if value is None or (csv_row and value == "") else value

    kind = get("kind")
    if kind not in ("note", "correction", "slice"):
        raise _Bad("kind", _got(obj.get("kind")))
    own = _check("benchmark", clean_key, get("benchmark"), "benchmark", empty=True) or benchmark
    if own != benchmark:
        raise _Bad("benchmark", f"{_got(own)}, another benchmark's (this one is {benchmark})")
    if kind == "slice":
        return _slice_record(benchmark, get, csv_row)
    qid = _check("question_id", clean_key, get("question_id"), "question_id")
    run = _check("run", clean_key, get("run"), "run", empty=True)
    author = _check("author", clean_author, get("author"))
    created = _check("created", parse_time, get("created"))
    updated = _check("updated", parse_time, get("updated"))
    revision = _revision_of(get("revision", 1), csv_row)
    if kind == "note":
        tags = get("tags", [])
        if csv_row and isinstance(tags, str):
            tags = [t for t in (s.strip() for s in tags.split(TAG_SEPARATOR)) if t]
        if not isinstance(tags, list):
            raise _Bad("tags", _got(tags))
        return Note(benchmark, qid, run, _check("text", clean_text, get("text")), _check("tags", clean_tags, tags),
                    author, created, updated, revision)
    if run:
        raise _Bad("run", f"{_got(run)} (a correction is of a question: no run)")
    action = get("action")
    if action not in ("answer", "exclude"):
        raise _Bad("action", _got(action))
    answer = _check("answer", clean_text, get("answer"), "the corrected answer", MAX_ANSWER)
    if action == "answer" and not answer:
        raise _Bad("answer", "nothing")
    return Correction(benchmark, qid, action, "" if action == "exclude" else answer, author, created, updated, revision)


def _revision_of(revision: Any, csv_row: bool) -> int:
    if csv_row and isinstance(revision, str) and revision.strip().isdigit():
        revision = int(revision)
    if isinstance(revision, bool) or not isinstance(revision, int) or not 1 <= revision <= 2**62:
        raise _Bad("revision", _got(revision))
    return revision


def _slice_record(benchmark: str, get: Callable[..., Any], csv_row: bool) -> SavedSlice:
    name = _check("name", clean_slice_name, get("name"))
    definition = get("definition", None)
    if csv_row and isinstance(definition, str):
        try:
            definition = json.loads(definition)
        except (ValueError, RecursionError):
            raise _Bad("definition", _got(definition)) from None
    spec = _check("definition", clean_definition, definition)
    note = _check("note", clean_text, get("note"), "the slice's note")
    author = _check("author", clean_author, get("author"))
    created = _check("created", parse_time, get("created"))
    updated = _check("updated", parse_time, get("updated"))
    return SavedSlice(benchmark, name, spec, author, note, created, updated, _revision_of(get("revision", 1), csv_row))


def format_of(name: str, head: bytes = b"") -> str:
    """"csv" for a `.csv` name, "jsonl" for `.jsonl`/`.json`; else from the first byte ({ = JSONL)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    return "jsonl" if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{" else "csv"


def _jsonl_rows(fh: IO[bytes], name: str, out: Parsed) -> Iterator[tuple[int, Any]]:
    number = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:  # the rest of that line, unread
                more = fh.readline(64 * 1024)
                if not more or more.endswith(b"\n"):
                    break
            out.lines += 1
            out.skipped += 1
            out.problems.append(Problem.error(name, number, None, f"a line of at most {MAX_LINE_BYTES // 1024} KiB", "a longer line",
                                              kind="lines too long"))
            continue
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        if not raw.strip():
            continue
        out.lines += 1
        try:
            yield number, json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            out.skipped += 1
            out.problems.append(Problem.error(name, number, None, "UTF-8 text", f"byte {exc.object[exc.start]:#04x} at column {exc.start + 1}"))
        except json.JSONDecodeError as exc:
            out.skipped += 1
            out.problems.append(Problem.error(name, number, None, "a JSON object", f"invalid JSON ({exc.msg} at column {exc.colno})"))
        except RecursionError:
            out.skipped += 1
            depth = _depth(raw)
            out.problems.append(Problem.error(name, number, None, "a JSON object of notes",
                                              f"JSON nested {depth:,} levels deep, deeper than can be read"))


def _depth(raw: bytes) -> int:
    """How deep the brackets of a JSON line nest (strings not told apart: a message's figure)."""
    depth = deepest = 0
    for b in raw:
        if b in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif b in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _csv_rows(fh: IO[bytes], name: str, out: Parsed) -> Iterator[tuple[int, Any]]:
    data = fh.read(MAX_IMPORT_BYTES + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        out.unreadable = True
        out.problems.append(Problem.error(name, line, None, "UTF-8 text", f"byte {data[exc.start]:#04x} (nothing imported)"))
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        header = []
    header = [h.strip().lower() for h in header]
    if "kind" not in header or "question_id" not in header:
        out.unreadable = True
        out.problems.append(Problem.error(name, 1, None, f"a header row naming the columns ({', '.join(FIELDS)})",
                                          _got(",".join(header)) if header else "no header"))
        return
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            out.lines += 1
            out.skipped += 1
            out.problems.append(Problem.error(name, start, None, "a CSV row", f"unreadable CSV ({exc})"))
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in cells):
            continue
        out.lines += 1
        if len(cells) > len(header):
            out.problems.append(Problem.warning(name, line, None, f"{len(header)} cells", f"{len(cells)} (the extra ones ignored)"))
        yield line, dict(zip(header, map(restore_cell, cells)))  # the quote our export put before a formula-like cell


def parse(fh: IO[bytes], name: str, benchmark: str, *, fmt: str = "jsonl", size: int = 0,
          question_ids: Iterable[str] | None = None) -> Parsed:
    """Read records from a binary file object (JSONL or CSV) without storing them. With
    `question_ids`, a record of a question not among them gets a warning (it is kept)."""
    out = Parsed(size=size)
    known = set(question_ids) if question_ids is not None else None
    rows = _csv_rows(fh, name, out) if fmt == "csv" else _jsonl_rows(fh, name, out)
    for line, obj in rows:
        if not isinstance(obj, dict):
            out.skipped += 1
            out.problems.append(Problem.error(name, line, None, "a JSON object", _got(obj)))
            continue
        try:
            rec = _record(obj, benchmark, fmt == "csv")
        except _Bad as bad:
            out.skipped += 1
            out.problems.append(Problem.error(name, line, bad.field, _EXPECTED[bad.field], bad.got))
            continue
        except (ValueError, TypeError, OverflowError, RecursionError, UnicodeError) as exc:  # never a traceback: the line is named
            out.skipped += 1
            out.problems.append(Problem.error(name, line, None, "an annotation record", f"one that could not be read ({type(exc).__name__})"))
            continue
        if isinstance(rec, SavedSlice):
            out.slices.append(rec)
            continue
        if known is not None and rec.question_id not in known:
            out.problems.append(Problem.warning(name, line, "question_id", "a question of this benchmark's gold",
                                                f"{_got(rec.question_id)}, not in it (kept)", kind="annotations of unknown questions"))
        if isinstance(rec, Note):
            out.notes.append(rec)
        else:
            out.corrections.append(rec)
    return out


def _merged(store: AnnotationStore, name: str, parsed: Parsed, progress: Callable[[int, int], None] | None = None) -> ImportResult:
    result = ImportResult(file=name, size=parsed.size, lines=parsed.lines, skipped=parsed.skipped,
                          problems=list(parsed.problems), unreadable=parsed.unreadable)
    if parsed.unreadable or not (parsed.notes or parsed.corrections or parsed.slices):
        return result
    counts = store.merge(parsed.notes, parsed.corrections, parsed.slices, progress=progress)
    result.added, result.updated, result.unchanged, result.tags_added = counts.added, counts.updated, counts.unchanged, counts.tags_added
    return result


def _too_big(name: str, size: int) -> ImportResult:
    return ImportResult(file=name, size=size, unreadable=True, problems=[Problem.error(
        name, None, None, f"a file of at most {MAX_IMPORT_BYTES // (1024 * 1024)} MiB", f"{size:,} bytes (nothing imported)")])


def import_bytes(store: AnnotationStore, benchmark: str, data: bytes, name: str, *, fmt: str | None = None,
                 question_ids: Iterable[str] | None = None, progress: Callable[[int, int], None] | None = None) -> ImportResult:
    """Import an uploaded file's bytes (the Data panel); `progress(done, total)` after each batch
    stored. Raises AnnotationsUnavailable when the database cannot be written (InvalidInput when
    the vocabulary would overflow)."""
    if len(data) > MAX_IMPORT_BYTES:
        return _too_big(name, len(data))
    parsed = parse(io.BytesIO(data), name, benchmark, fmt=fmt or format_of(name, data[:64]), size=len(data), question_ids=question_ids)
    return _merged(store, name, parsed, progress)


def import_file(store: AnnotationStore, benchmark: str, path: str | os.PathLike[str], *, fmt: str | None = None,
                question_ids: Iterable[str] | None = None, progress: Callable[[int, int], None] | None = None) -> ImportResult:
    """Import a file (JSONL or CSV, from `fmt` or its name and first bytes). A file that cannot
    be opened or is too big is `unreadable` with one problem; errors as `import_bytes`."""
    name = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_IMPORT_BYTES:
                return _too_big(name, size)
            head = fh.read(64)
            fh.seek(0)
            parsed = parse(fh, name, benchmark, fmt=fmt or format_of(name, head), size=size, question_ids=question_ids)
    except OSError as exc:
        return ImportResult(file=name, unreadable=True, problems=[Problem.error(name, None, None, "a readable file", exc.strerror or str(exc))])
    return _merged(store, name, parsed, progress)

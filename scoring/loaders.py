"""Loaders for every input of spec sections 1, 2 and E.

Each returns a `LoadResult`: the items it could load, and one `Problem` per thing that was wrong,
with file, line and field. Nothing raises on user data and nothing is dropped silently: the
counts (rows read, loaded, skipped, blank lines) add up.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, repeat
from pathlib import Path
from sys import intern
from typing import IO, Any

from . import guard
from ._gc import paused_gc
from .limits import DOCUMENT_MAX_BYTES, JSONL_HUGE_LINE, JSONL_MAX_LINE, WIDE_TEXT_MAX_BYTES
from .model import (
    DocRef,
    DocumentRecord,
    EvidenceItem,
    GoldQuestion,
    PredictedEvidence,
    Prediction,
    ScoreRow,
    id_text_release,
    to_str,
    to_str_release,
)
from .problems import LoadResult, Problem, kind_of, short_value
from .profiles import Profile, get_profile
from .reading import NotRegular, Overlong, TooLarge, bounded_lines, open_regular, read_capped, read_upto, skip_hole
from .registry import METRICS
from .text import MAX_EDIT_CHARS

__all__ = [
    "ID_FIELDS",
    "PREDICTION_FIELDS",
    "KNOWN_FORMATS",
    "KNOWN_RULES",
    "load_gold",
    "load_documents",
    "load_predictions",
    "load_scores",
    "load_summary",
    "read_json_lines",
    "reads_as_release",
]

ID_FIELDS = ("question_id", "global_qa_id", "global_id", "id")
PREDICTION_FIELDS = ("prediction", "model_answer", "answer", "response", "output")
KNOWN_FORMATS = ("Str", "Int", "Float", "None", "Bool", "Boolean", "Percentage", "single_choice")
KNOWN_RULES = ("casefold_exact_match", "numeric_tolerance", "percentage_exact", "choice_exact_match", "exact_match")
RELEASE_PROFILE = "xldocbench-1519"


def reads_as_release(profile: str | Profile | None) -> bool:
    """Whether a profile's inputs are read as the public release reads them (scoring/README.md
    section 1d): values and ids written as its text, lines ended by universal newlines -- the
    `release` argument of `load_gold` and `load_predictions`. Only the release profile does; it
    is a property of reading the files, decided by the profile's name (which the signature
    carries), not a scoring setting."""
    return get_profile(profile).name == RELEASE_PROFILE


HUGE_LINE = JSONL_HUGE_LINE  # a line this long loads, with a warning
MAX_LINE = JSONL_MAX_LINE  # a line longer than this is skipped (read past, never held)


# ----------------------------------------------------------------------------- raw reading


def _cannot_open(name: str, exc: OSError, res: LoadResult) -> None:
    if isinstance(exc, NotRegular) and exc.what == "a folder":
        got = "a directory"
    elif isinstance(exc, (NotRegular, TooLarge)):
        got = exc.strerror or str(exc)  # a FIFO, a device, a socket (never opened); a file too large to read whole
    else:
        got = {FileNotFoundError: "no such file", IsADirectoryError: "a directory"}.get(type(exc), exc.strerror or str(exc))
    res.problems.append(Problem.error(name, None, None, "a readable file", got))
    res.unreadable.append(name)


# Byte-order marks of the encodings read besides UTF-8 (UTF-32 first: its LE mark begins with UTF-16's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
         (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"), (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"))


WIDE_SNIFF = 16  # bytes looked at to recognise UTF-16 or UTF-32 text without a byte-order mark


def _wide_encoding(head: bytes) -> tuple[str, int, str] | None:
    """(codec, BOM length, name) of a UTF-16 or UTF-32 file, from its first bytes: a byte-order
    mark, or -- without one -- ASCII text with NUL bytes between the characters."""
    for bom, codec, label in _BOMS:
        if head.startswith(bom):
            return codec, len(bom), label
    # without a BOM: every character of the first bytes is ASCII text with the NUL bytes of the
    # wider encoding around it, and one of them is more than white space
    for width, codec, label in ((4, "utf-32-le", "UTF-32"), (4, "utf-32-be", "UTF-32"),
                                (2, "utf-16-le", "UTF-16"), (2, "utf-16-be", "UTF-16")):
        units = [head[i:i + width] for i in range(0, len(head) - len(head) % width, width)]
        if len(units) < 2:
            continue
        big = codec.endswith("be")
        chars = [u[-1] if big else u[0] for u in units]
        nuls = [u[:-1] if big else u[1:] for u in units]
        if all(not any(n) for n in nuls) and all(_textish(c) for c in chars) and any(0x20 < c < 0x7F for c in chars):
            return codec, 0, label
    return None


def _textish(byte: int) -> bool:
    """An ASCII character that starts JSON text: printable, or a tab or line end."""
    return 0x20 <= byte < 0x7F or byte in (0x09, 0x0A, 0x0D)


def _to_utf8(data: bytes, name: str, res: LoadResult) -> bytes:
    """UTF-16/UTF-32 text re-encoded as UTF-8 (with a warning saying how it was read); a UTF-8
    byte-order mark dropped (with a warning); other bytes unchanged."""
    if data.startswith(codecs.BOM_UTF8):
        res.problems.append(Problem.warning(name, 1, None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)"))
        return data[3:]
    wide = _wide_encoding(data[:WIDE_SNIFF])
    if wide is None:
        return data
    codec, bom, label = wide
    text = data[bom:].decode(codec, errors="replace")
    how = "" if bom else " without a byte-order mark"
    res.problems.append(Problem.warning(name, None, None, "UTF-8 text", f"{label} text{how} (read as {label}; "
                                        "save the file as UTF-8 to silence this)", kind="files not in UTF-8"))
    return text.encode("utf-8", errors="replace")


def _read_bytes(path: Path, res: LoadResult) -> bytes | None:
    """The file's bytes as UTF-8 without a BOM; None (and a problem) when it cannot be read, is
    larger than DOCUMENT_MAX_BYTES (it is read whole) or is empty. An empty file is a warning: for
    JSONL it is an empty list of records."""
    name = str(path)
    res.files.append(name)
    try:
        data = read_capped(path, DOCUMENT_MAX_BYTES)
    except OSError as exc:
        _cannot_open(name, exc, res)
        return None
    data = _to_utf8(data, name, res)
    if not data.strip():
        res.problems.append(Problem.warning(name, None, None, "at least one record", "an empty file"))
        return None
    return data


def _decode(raw: bytes, name: str, line: int | None, res: LoadResult) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 4]
        res.problems.append(
            Problem.warning(name, line, None, "UTF-8 text", f"byte {bad[:1].hex()} at offset {exc.start} (replaced by U+FFFD)",
                            kind="lines that are not UTF-8")
        )
        return raw.decode("utf-8", errors="replace")


def _without_lone_surrogates(value: Any) -> Any:
    """`value` with every lone UTF-16 surrogate (a JSON `\\ud800` escape without its pair) in its
    strings replaced by U+FFFD: such a string cannot be written as UTF-8 or sent to a browser."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


LONE_SURROGATE = "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)"


try:
    from orjson import dumps as _orjson_dumps
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover
    _orjson_loads, _orjson_dumps = json.loads, None  # type: ignore[assignment]


def _loads(text: str | bytes) -> Any:
    """json.loads's value, parsed by orjson (C, several times faster) when orjson reads the text.
    What orjson refuses and json may accept or words differently -- NaN, integers beyond 64 bits,
    lone surrogates, deep nesting, syntax errors -- goes to json.loads, and so does any text with a
    run of 19 digits (a possible integer beyond 64 bits), so values and messages are json's."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if _DIGIT_RUN in raw.translate(_DIGITS_ONLY):  # a run of 19 ASCII digits, in C (a regex took ~15 us a line)
        return json.loads(text)  # orjson reads an integer beyond 64 bits as a float; json keeps it exact
    try:
        return _orjson_loads(text)
    except ValueError:  # orjson.JSONDecodeError
        return json.loads(text)


_LONG_DIGITS, _LONG_DIGITS_B = re.compile(r"\d{19}"), re.compile(rb"\d{19}")
# every ASCII digit -> b"0", every other byte -> b" ": a run of 19 digits is then a plain substring search
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_DIGIT_RUN = b"0" * 19


def _parse(text: str | bytes) -> tuple[Any, str | None, int]:
    """(value, None, 0) or (None, why it is not JSON, line of the fault) -- or (value,
    LONE_SURROGATE, 0) when the value was read but a string in it had to be repaired. Never
    raises: besides syntax errors, nesting deeper than the parser's stack and integers of more
    than 4,300 digits are refused as what they are."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg} at column {exc.colno})", exc.lineno
    except RecursionError:
        return None, "JSON nested too deeply to read", 1
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        if "integer string conversion" in str(exc):
            return None, "invalid JSON (an integer of more than 4,300 digits)", 1
        return None, f"invalid JSON ({str(exc)[:100]})", 1
    if (b"\\ud" in text or b"\\uD" in text) if isinstance(text, bytes) else ("\\ud" in text or "\\uD" in text):
        try:
            repaired = _without_lone_surrogates(value)
        except RecursionError:
            return None, "JSON nested too deeply to read", 1
        if repaired != value:
            return repaired, LONE_SURROGATE, 0
    return value, None, 0


def _wide_whole(fh: IO[bytes], name: str, res: LoadResult) -> bytes | None:
    """A UTF-16/UTF-32 file re-encoded as UTF-8, read whole when at most WIDE_TEXT_MAX_BYTES; None
    (and a problem) when larger."""
    size = os.fstat(fh.fileno()).st_size
    if size > WIDE_TEXT_MAX_BYTES:
        res.problems.append(Problem.error(name, None, None, f"UTF-16/UTF-32 text of at most {WIDE_TEXT_MAX_BYTES:,} bytes "
                                          "(it is decoded whole)", f"{size:,} bytes: not read (save it as UTF-8)"))
        res.unreadable.append(name)
        return None
    return _to_utf8(read_upto(fh, size, WIDE_TEXT_MAX_BYTES), name, res)


def _too_long(name: str, number: int, size: int, ended: bool, res: LoadResult) -> None:
    """A line longer than MAX_LINE, read past: skipped and named (the caller counts it as read)."""
    res.skipped += 1
    tail = "" if ended else ", to the end of the file (no line end: a sparse or zero-filled file?)"
    res.problems.append(Problem.error(name, number, None, f"a line under {MAX_LINE >> 20} MiB", f"{size:,} bytes{tail}",
                                      kind="lines too long to read"))


_SKIPPED = object()  # _line_value's answer for a line reported and skipped


def _line_value(raw: bytes, number: int, name: str, res: LoadResult) -> Any:
    """One non-blank JSONL line (as read, its line end included): its value, or _SKIPPED when it
    was reported and skipped (counted in `res.skipped`)."""
    size = len(raw)
    if size > HUGE_LINE:
        if size > MAX_LINE:
            res.skipped += 1
            res.problems.append(Problem.error(name, number, None, f"a line under {MAX_LINE >> 20} MiB", f"{size:,} bytes",
                                              kind="lines too long to read"))
            return _SKIPPED
        res.problems.append(Problem.warning(name, number, None, "a line under 1 MiB", f"{size:,} bytes",
                                            kind="very long lines"))
    if _DIGIT_RUN not in raw.translate(_DIGITS_ONLY) and b"\\ud" not in raw and b"\\uD" not in raw:
        # the usual line: orjson reads the bytes as they are (it checks the UTF-8 too);
        # anything it refuses takes the path below, which words the problem
        try:
            return _orjson_loads(raw)
        except ValueError:
            pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode(raw, name, number, res)
    value, why, _ = _parse(text)
    if why == LONE_SURROGATE:
        res.problems.append(Problem.warning(name, number, None, "text that can be written as UTF-8", why))
    elif why is not None:
        res.skipped += 1
        res.problems.append(Problem.error(name, number, None, "a JSON value", why, kind="lines that are not JSON"))
        return _SKIPPED
    return value


BLOCK = 1 << 16  # bytes read at a time by json_line_blocks: a block's values are used while in the cache, and
# its buffers are small enough for malloc to reuse (16 MiB blocks cost ~60,000 page faults, 0.2 s of system time, on 41 MB)


def read_json_lines(path: Path, res: LoadResult, *, universal: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for each non-blank JSONL line; report the rest (in `res`:
    its problems, rows read, blank lines and rows skipped). Lines end at "\n" (a lone "\r" is white
    space inside a line), or with `universal` also at a lone "\r"; a line longer than MAX_LINE is read
    past, never held. The one JSON-lines reader: `json_line_blocks`, a value at a time."""
    for numbers, values in json_line_blocks(path, res, universal=universal):
        yield from zip(numbers, values)


def json_line_blocks(path: Path, res: LoadResult, *, universal: bool = False
                     ) -> Iterator[tuple[Sequence[int], list[Any]]]:
    """`read_json_lines` a block at a time: (line numbers, values) of the non-blank lines read,
    with the same problems and counts. The file is read BLOCK bytes at a time (cut at a line end)
    and split in C; a block without a run of 19 digits, a `\\u` surrogate escape, a long line or
    (under `universal`) a lone CR is parsed by orjson in one pass over its lines -- which succeeds
    only when every line is a JSON value, so none is blank -- and its lines are numbered in a row.
    Any other block, and any block orjson refuses a line of, is read line by line (`_line_value`
    words each problem) and handed over a line at a time, so that a caller's problems about a row
    come in line order with the reader's. A UTF-8 BOM is dropped (with a warning); a UTF-16/32 file
    is decoded whole and its lines end at every line end; a line over MAX_LINE is read past."""
    name = str(path)
    res.files.append(name)
    try:
        fh = open_regular(path)
    except OSError as exc:
        _cannot_open(name, exc, res)
        return
    loads = _orjson_loads
    number = blank = rows = 0
    with fh:
        head = fh.read(WIDE_SNIFF)
        fh.seek(0)
        wide = not head.startswith(codecs.BOM_UTF8) and _wide_encoding(head) is not None
        if wide:  # decoded whole, and its lines split at every line end
            whole = _wide_whole(fh, name, res)
            blocks: Iterator[bytes] = iter([whole] if whole is not None else [])
        else:
            blocks = iter(lambda: fh.read(BLOCK), b"")
        split_cr = universal or wide
        pending: list[bytes] = []  # the start of a line not ended yet, as read (joined once: a long line is no quadratic copy)
        held = 0  # bytes in `pending`
        skipping = -1  # bytes of an over-long line read past so far (-1: none being read past)
        for block in blocks:
            if skipping >= 0:  # inside a line longer than MAX_LINE: read past to its end, never held
                end = block.find(b"\n")
                if end < 0:
                    skipping += len(block) + skip_hole(fh)
                    continue
                number += 1
                rows += 1
                _too_long(name, number, skipping + end + 1, True, res)
                skipping = -1
                block = block[end + 1:]
                if not block:
                    continue
            cut = block.rfind(b"\n") + 1
            if not cut:
                pending.append(block)
                held += len(block)
                if held > MAX_LINE:  # this line will not be read: stop holding it
                    skipping = held
                    pending, held = [], 0
                continue
            data = b"".join([*pending, block[:cut]]) if pending else block[:cut]
            pending = [block[cut:]] if cut < len(block) else []
            held = len(block) - cut
            if number == 0 and data.startswith(codecs.BOM_UTF8):
                res.problems.append(Problem.warning(name, 1, None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)"))
                data = data[3:]
            plain = _DIGIT_RUN not in data.translate(_DIGITS_ONLY) and b"\\ud" not in data and b"\\uD" not in data
            odd = split_cr and b"\r" in data and data.count(b"\r") != data.count(b"\r\n")  # a lone CR somewhere
            lines = data.split(b"\n")
            lines.pop()  # after the last line end
            del data
            if plain and not odd and lines and max(map(len, lines)) < HUGE_LINE:
                try:
                    values = list(map(loads, lines))
                except ValueError:  # a blank line, or one orjson refuses: line by line below
                    pass
                else:
                    rows += len(values)
                    yield range(number + 1, number + 1 + len(values)), values
                    number += len(values)
                    continue
            for raw in lines:  # each line handed over as it is read: its row's problems follow its own
                number += 1
                if odd and b"\r" in raw.rstrip(b"\r") and len(raw) < MAX_LINE:  # lone CRs end lines here too
                    # (before the blank test: "\r " is two blank lines)
                    number -= 1
                    for sub in (raw + b"\n").splitlines(keepends=True):
                        number += 1
                        if not sub or sub.isspace():
                            blank += 1
                            continue
                        rows += 1
                        value = _line_value(sub, number, name, res)
                        if value is not _SKIPPED:
                            yield (number,), [value]
                    continue
                if not raw or raw.isspace():
                    blank += 1
                    continue
                rows += 1
                if plain and len(raw) < HUGE_LINE:
                    try:
                        value = loads(raw)
                    except ValueError:
                        pass
                    else:
                        yield (number,), [value]
                        continue
                value = _line_value(raw + b"\n", number, name, res)
                if value is not _SKIPPED:
                    yield (number,), [value]
        if skipping >= 0:  # the file ended inside an over-long line
            number += 1
            rows += 1
            _too_long(name, number, skipping, False, res)
        rest = b"".join(pending)
        if rest:  # the last line, without a line end
            if number == 0 and rest.startswith(codecs.BOM_UTF8):
                res.problems.append(Problem.warning(name, 1, None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)"))
                rest = rest[3:]
            split = split_cr and b"\r" in rest.rstrip(b"\r\n") and len(rest) <= MAX_LINE
            for sub in rest.splitlines(keepends=True) if split else [rest]:
                number += 1
                if not sub or sub.isspace():
                    blank += 1
                    continue
                rows += 1
                if len(sub) > MAX_LINE:  # named as a line the file ends inside
                    _too_long(name, number, len(sub), False, res)
                    continue
                value = _line_value(sub, number, name, res)
                if value is not _SKIPPED:
                    yield (number,), [value]
    res.rows_read += rows
    if not rows:
        res.problems.append(Problem.warning(name, None, None, "at least one record", "an empty file"))
    else:
        res.blank_lines += blank


PRETTY_JSON_LIMIT = DOCUMENT_MAX_BYTES  # a .jsonl file larger than this is never tried as one JSON document


def _pretty_document(path: Path) -> tuple[bool, Any]:
    """(True, document) when a JSONL-named file holds one JSON document spread over several lines
    (a pretty-printed list or object), else (False, None). Only the first line is read unless it
    opens such a document and is not a JSON value by itself."""
    try:
        with open_regular(path) as fh:
            head = fh.read(WIDE_SNIFF)
            fh.seek(0)
            if not head.startswith(codecs.BOM_UTF8) and _wide_encoding(head) is not None:
                return False, None
            first = b""
            for raw in bounded_lines(fh, HUGE_LINE):
                if isinstance(raw, Overlong):
                    return False, None  # longer than a first line of such a document is
                if raw.strip():
                    first = raw.strip().removeprefix(codecs.BOM_UTF8).strip()
                    break
            if first[:1] not in (b"[", b"{") or len(first) > HUGE_LINE:
                return False, None
            if _parse(first)[1] in (None, LONE_SURROGATE):  # a JSON value on its own: a real JSONL file
                return False, None
            if os.fstat(fh.fileno()).st_size > PRETTY_JSON_LIMIT:
                return False, None
            fh.seek(0)
            data = fh.read(PRETTY_JSON_LIMIT + 1).removeprefix(codecs.BOM_UTF8)
    except OSError:
        return False, None
    value, why, _ = _parse(data)
    return (why in (None, LONE_SURROGATE) and isinstance(value, (list, dict))), value


def _pretty_note(name: str, doc: Any, res: LoadResult) -> None:
    shape = f"a list of {len(doc)}" if isinstance(doc, list) else "an object"
    res.problems.append(Problem.warning(name, None, None, "one JSON value per line (JSONL)",
                                        f"one JSON document over several lines ({shape}); read as JSON"))


def _jsonl_rows(path: Path, res: LoadResult, *, universal: bool = False) -> Iterator[tuple[int | None, Any]]:
    """read_json_lines, or -- for a file holding one pretty-printed JSON list or object -- its
    elements (or the object) without line numbers, with a note."""
    pretty, doc = _pretty_document(path)
    if not pretty:
        yield from read_json_lines(path, res, universal=universal)
        return
    name = str(path)
    res.files.append(name)
    _pretty_note(name, doc, res)
    rows = doc if isinstance(doc, list) else [doc]
    res.rows_read += len(rows)
    for row in rows:
        yield None, row


def _read_json_document(path: Path, res: LoadResult) -> Any:
    name = str(path)
    data = _read_bytes(path, res)
    if data is None:
        if name not in res.unreadable:  # an empty file is no JSON document
            res.unreadable.append(name)
        return None
    text = _decode(data, name, None, res)
    value, why, line = _parse(text)
    if why == LONE_SURROGATE:
        res.problems.append(Problem.warning(name, None, None, "text that can be written as UTF-8", why))
    elif why is not None:
        res.problems.append(Problem.error(name, line, None, "a JSON document", why))
        res.unreadable.append(name)
        return None
    return value


def _first_id(row: dict, fields: tuple[str, ...] = ID_FIELDS, id_text: Callable[[Any], str] = to_str) -> str:
    for key in fields:
        value = id_text(row.get(key)).strip()
        if value:
            return value
    return ""


def _object_rows(rows: Iterator[tuple[int | None, Any]], name: str, res: LoadResult,
                 id_text: Callable[[Any], str] = to_str) -> Iterator[tuple[int | None, dict, str]]:
    """(line, row, question id) of each row that is an object with an id; the rest are reported
    and counted as skipped -- at their line, or, in a JSON list (no lines), by their index `[k]`."""
    for k, (line, row) in enumerate(rows):
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, line, None if line is not None else f"[{k}]", "a JSON object", kind_of(row),
                                              kind="rows that are not JSON objects"))
            continue
        qid = row.get("question_id")  # the usual id field, a string: no other field looked at
        if type(qid) is not str or not (qid := qid.strip()):
            qid = _first_id(row, id_text=id_text)
        if not qid:
            res.skipped += 1
            res.problems.append(Problem.error(name, line, "question_id" if line is not None else f"[{k}].question_id",
                                              f"one of {', '.join(ID_FIELDS)}", "none of them", kind="rows without an id"))
            continue
        yield line, row, qid


# ----------------------------------------------------------------------------- gold


def _int_list(value: Any) -> tuple[int, ...]:
    if isinstance(value, bool):
        return ()
    if isinstance(value, int):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
    return ()


def _bbox(value: Any) -> tuple[float, float, float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
    ):
        x0, y0, x1, y1 = (float(v) for v in value)
        if x1 > x0 and y1 > y0:
            return (x0, y0, x1, y1)
    return None


def _doc_ref(obj: Any, name: str, line: int | None, where: str, res: LoadResult) -> DocRef | None:
    if not isinstance(obj, dict):
        res.problems.append(Problem.warning(name, line, where, "an object", kind_of(obj)))
        return None
    items = []
    raw_items = obj.get("evidence_items") or []
    if not isinstance(raw_items, list):
        res.problems.append(Problem.warning(name, line, f"{where}.evidence_items", "a list", kind_of(raw_items)))
        raw_items = []
    for k, it in enumerate(raw_items):
        if not isinstance(it, dict):
            res.problems.append(Problem.warning(name, line, f"{where}.evidence_items[{k}]", "an object", kind_of(it)))
            continue
        bbox = _bbox(it.get("bbox"))
        if it.get("bbox") is not None and bbox is None:
            res.problems.append(
                Problem.warning(name, line, f"{where}.evidence_items[{k}].bbox", "[x0, y0, x1, y1] in points with x1>x0, y1>y0", short_value(it.get("bbox")))
            )
        items.append(
            EvidenceItem(
                locator=to_str(it.get("locator")),
                pages=_int_list(it.get("pages")),
                quote=to_str(it.get("quote")),
                source_type=to_str(it.get("source_type")),
                bbox=bbox,
            )
        )
    pages = obj.get("evidence_pages")
    if pages is not None and not isinstance(pages, list):
        res.problems.append(Problem.warning(name, line, f"{where}.evidence_pages", "a list of page numbers", kind_of(pages)))
    elif isinstance(pages, list) and any(not isinstance(p, int) or isinstance(p, bool) or p < 1 for p in pages):
        res.problems.append(
            Problem.warning(name, line, f"{where}.evidence_pages", "1-based page numbers", short_value(pages))
        )
    return DocRef(
        document_id=to_str(obj.get("document_id")).strip(),
        url=to_str(obj.get("url")),
        evidence_pages=tuple(p for p in _int_list(pages) if p >= 1),
        evidence_items=tuple(items),
    )


def _shared_metadata(metadata: dict, shared: dict) -> dict:
    """Questions that carry the same metadata share one dict (a benchmark has few distinct
    combinations of domain, type, difficulty and sources): a third less memory at 1M questions.
    Metadata dicts are read-only from here on. The key holds each value's type, since 0, 0.0
    and False (and 1, 1.0, True) are equal as dict keys but print differently."""
    if _orjson_dumps is not None:
        # the compact JSON text as key (~1 us, against ~7 us for the tuple below): it tells 0, 0.0
        # and false apart and keeps the key order; NaN and infinities (written as null) and what
        # orjson refuses take the tuple key
        try:
            text = _orjson_dumps(metadata)
        except TypeError:
            text = None
        if text is not None and b"null" not in text:
            return shared.setdefault(text, metadata)
    try:
        key = tuple((k, type(v), tuple((type(x), x) for x in v) if type(v) is list else v) for k, v in metadata.items())
        return shared.setdefault(key, metadata)
    except TypeError:  # an unhashable value (a nested object): keep this one as it is
        return metadata


_KNOWN_FORMATS, _KNOWN_RULES = frozenset(KNOWN_FORMATS), frozenset(KNOWN_RULES)


def _checked_format(answer: dict, raw_fmt: Any, name: str, line: int | None, res: LoadResult) -> tuple[str, str]:
    """(format, rule) of an answer object, with a warning for each unknown one."""
    fmt = to_str(raw_fmt) or "Str"
    rule = to_str(answer.get("verification_rule"))
    if fmt not in KNOWN_FORMATS:
        res.problems.append(
            Problem.warning(name, line, "answer.format", f"one of {', '.join(KNOWN_FORMATS[:4])}", f"{short_value(fmt)} (scored by the fallback rule)")
        )
    if rule and rule not in KNOWN_RULES:
        res.problems.append(Problem.warning(name, line, "answer.verification_rule", f"one of {', '.join(KNOWN_RULES)}", short_value(rule)))
    return fmt, rule


def _gold_record(row: dict, name: str, line: int | None, res: LoadResult, shared: dict,
                 release: bool = False) -> GoldQuestion | None:
    if "questionId" in row and "answers" in row:  # DocVQA-style record (spec D)
        return _docvqa_record(row, name, line, res)
    # each field's common, well-formed case first (a string id, an answer object with a known
    # string format and rule): no checks to report; anything else takes the checking path
    qid = row.get("question_id")
    text = to_str_release if release else to_str
    if type(qid) is not str or not (qid := qid.strip()):
        qid = _first_id(row, id_text=id_text_release if release else to_str)
        if not qid:
            res.problems.append(Problem.error(name, line, "question_id", f"one of {', '.join(ID_FIELDS)}", "none of them",
                                              kind="rows without an id"))
            return None
    answer = row.get("answer")
    if type(answer) is dict:
        raw_fmt = answer.get("format", "Str")
        rule = answer.get("verification_rule", "")
        if type(raw_fmt) is str and raw_fmt in _KNOWN_FORMATS and type(rule) is str and (not rule or rule in _KNOWN_RULES):
            fmt = raw_fmt
        else:
            fmt, rule = _checked_format(answer, raw_fmt, name, line, res)
    else:
        if "answer" not in row:
            res.problems.append(Problem.warning(name, line, "answer", "an answer object", "no answer field (gold is empty)"))
        if not isinstance(answer, dict):
            answer = {"value": answer}
        raw_fmt = answer.get("format", "Str")
        fmt, rule = _checked_format(answer, raw_fmt, name, line, res)
    metadata = row.get("metadata")
    if type(metadata) is dict:
        metadata = _shared_metadata(metadata, shared)
    elif metadata is None:
        metadata = {}
    elif isinstance(metadata, dict):
        metadata = _shared_metadata(metadata, shared)
    else:
        res.problems.append(Problem.warning(name, line, "metadata", "an object", kind_of(metadata)))
        metadata = {}
    docs: list[DocRef] = []
    if "document" in row:
        ref = _doc_ref(row.get("document"), name, line, "document", res)
        if ref:
            docs.append(ref)
    if "documents" in row:
        value = row.get("documents")
        if isinstance(value, list):
            for k, d in enumerate(value):
                ref = _doc_ref(d, name, line, f"documents[{k}]", res)
                if ref:
                    docs.append(ref)
        else:
            res.problems.append(Problem.warning(name, line, "documents", "a list of document objects", kind_of(value)))
    value = answer.get("value")
    unusable = "" if type(value) is str else _unusable_gold(row, answer, value, name, line, res)
    if type(value) is str and len(value) > MAX_EDIT_CHARS:
        _long_text(name, line, "answer.value", len(value), res)
    return GoldQuestion(
        qid=qid,
        question=to_str(row.get("question")),
        answers=(text(value),),
        answer_format=intern(fmt),
        verification_rule=intern(rule),
        split=_split(row, release),
        metadata=metadata,
        documents=tuple(docs),
        file=name,
        line=line,
        raw_format=intern(raw_fmt) if type(raw_fmt) is str else raw_fmt,
        format_given="format" in answer,
        gold_problem=unusable,
        release_text=release,
    )


def _split(row: dict, release: bool) -> Any:
    """The gold's split: task_type as read (any JSON value), "unknown" when absent; under the
    release profile its text as the release writes it (`True`, "" for null, `["a", "b"]`)."""
    value = row.get("task_type", "unknown")
    if type(value) is str:
        return intern(value)
    return to_str_release(value) if release else value


def _long_text(name: str, line: int | None, where: str, size: int, res: LoadResult) -> None:
    res.problems.append(Problem.warning(
        name, line, where, f"a text under {MAX_EDIT_CHARS:,} characters",
        f"{size:,} characters (its ANLS and similarity are 1 against an identical text, else 0: no edit distance "
        "is computed beyond that length)", kind="texts too long for the edit distance"))


def _unusable_gold(row: dict, answer: dict, value: Any, name: str, line: int | None, res: LoadResult) -> str:
    """Why a gold answer value cannot be a right answer ("" when it can): null or absent (it would
    be the empty gold, which only an empty prediction matches), or a number that is not finite
    (NaN would be the gold text "nan"). The question is loaded, marked with the reason
    (`GoldQuestion.gold_problem`) and named in a warning; an absent `answer` field is warned
    about by the caller already."""
    if value is None:
        if "answer" not in row:
            return "no gold answer"
        where = "answer" if row.get("answer") is None else "answer.value"
        got = "null" if where == "answer" or "value" in answer else "no value field"
        res.problems.append(Problem.warning(name, line, where, "a gold answer", f"{got} (scored as the empty gold)",
                                            kind="questions without a gold answer"))
        return "no gold answer"
    if isinstance(value, float) and not math.isfinite(value):
        res.problems.append(Problem.warning(name, line, "answer.value", "a gold answer",
                                            f"{value!r} (not a number; scored as the text {to_str(value)!r})",
                                            kind="questions without a gold answer"))
        return f"gold answer is {value!r}"
    return ""


def _docvqa_record(row: dict, name: str, line: int | None, res: LoadResult) -> GoldQuestion | None:
    qid = to_str(row.get("questionId")).strip()
    if not qid:
        res.problems.append(Problem.error(name, line, "questionId", "a question id", kind_of(row.get("questionId"))))
        return None
    answers = row.get("answers")
    if isinstance(answers, str):
        try:  # some exports keep the list as a JSON string: "[\"0.28\"]"
            parsed = json.loads(answers)
            answers = parsed if isinstance(parsed, list) else [answers]
        except json.JSONDecodeError:
            answers = [answers]
    if not isinstance(answers, list) or not answers:
        res.problems.append(Problem.error(name, line, "answers", "a non-empty list of acceptable answers", kind_of(answers)))
        return None
    qtypes = row.get("question_types") or []
    if not isinstance(qtypes, list):
        qtypes = [qtypes]
    doc_id = to_str(row.get("docId"))
    return GoldQuestion(
        qid=qid,
        question=to_str(row.get("question")),
        answers=tuple(to_str(a) for a in answers),
        answer_format="Str",
        verification_rule="anls",
        split=row.get("split", row.get("data_split", "unknown")),
        metadata={k: row[k] for k in ("docId", "ucsf_document_id", "ucsf_document_page_no") if k in row},
        documents=(DocRef(document_id=doc_id),) if doc_id else (),
        file=name,
        line=line,
        question_types=tuple(to_str(q) for q in qtypes),
        image=to_str(row.get("image")) if isinstance(row.get("image"), str) else "",
    )


def _json_record_list(path: Path, res: LoadResult) -> list | None:
    """A `.json` file holding one JSON list of records (or {"data": [...]}, as DocVQA exports
    are): that list. A `.jsonl` file holding one pretty-printed JSON list (or one record) is read
    the same way, with a note. Anything else is None and is read as JSONL."""
    if path.suffix.lower() != ".json":
        pretty, doc = _pretty_document(path)
        if not pretty:
            return None
        _pretty_note(str(path), doc, res)
        if isinstance(doc, dict) and not isinstance(doc.get("data"), list):
            return [doc]
    else:
        try:
            data = read_capped(path, DOCUMENT_MAX_BYTES)
        except OSError:
            return None  # read (and named) as JSONL: a FIFO, a file too large to read whole
        doc, why, _ = _parse(data.removeprefix(codecs.BOM_UTF8))
        if why not in (None, LONE_SURROGATE):
            return None
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    return doc if isinstance(doc, list) else None


@paused_gc()
def load_gold(paths: Sequence[str | Path] | str | Path, *, release: bool = False) -> LoadResult[GoldQuestion]:
    """Gold question files (release schema, gold_sample.jsonl-style, or DocVQA records), read as
    JSONL whatever the extension (spec 1b), except a `.json` file that is one JSON list of
    records, as DocVQA exports are. With `release` (profile xldocbench-1519), values
    become text as the public release writes them (`to_str_release`, `id_text_release`) and lines
    end as in the release's text files (universal newlines)."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not guard.here(paths, bounded=True):  # read where it can be killed (scoring/guard.py)
        return guard.job(load_gold, paths, release=release, paths=paths, bounded=True, failed=_unread)
    res: LoadResult[GoldQuestion] = LoadResult()
    seen: dict[str, tuple[str, int | None]] = {}
    shared: dict[tuple, dict] = {}
    for p in paths:
        path = Path(p)
        name = str(path)
        with guard.reading(path, bounded=True) as refused:
            if refused is not None:
                _refused(refused, res)
                continue
            records = _json_record_list(path, res)
            if records is not None:
                res.files.append(name)
                res.rows_read += len(records)
                rows: Iterator[tuple[int | None, Any]] = ((None, r) for r in records)
            else:
                rows = read_json_lines(path, res, universal=release)
            for line, row in rows:
                q = _gold_of(row, name, line, res, shared, release, seen)
                if q is None:
                    continue
                res.items.append(q)
    return res


def _refused(problem: Problem, res: LoadResult) -> None:
    """A file over the read limits (scoring/guard.py): named, not read."""
    res.problems.append(problem)
    res.unreadable.append(problem.file)


def _unread(problem: Problem) -> LoadResult:
    """What a loader gives for files it could not read at all (their reader stopped: scoring/guard.py)."""
    res: LoadResult = LoadResult()
    _refused(problem, res)
    return res


# ----------------------------------------------------------------------------- documents


def load_documents(path: str | Path) -> LoadResult[DocumentRecord]:
    """documents.jsonl: one record per document (id, url, page count, file, pdf type)."""
    return guard.read(_load_documents, path, bounded=True, refused=_unread)


@paused_gc()
def _load_documents(path: str | Path) -> LoadResult[DocumentRecord]:
    res: LoadResult[DocumentRecord] = LoadResult()
    path = Path(path)
    name = str(path)
    seen: set[str] = set()
    for line, row in _jsonl_rows(path, res):
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, line, None, "a JSON object", kind_of(row), kind="rows that are not JSON objects"))
            continue
        doc_id = to_str(row.get("document_id")).strip()
        if not doc_id:
            res.skipped += 1
            res.problems.append(Problem.error(name, line, "document_id", "a document id", kind_of(row.get("document_id"))))
            continue
        if doc_id in seen:
            res.skipped += 1
            res.problems.append(Problem.error(name, line, "document_id", "an id not used before", short_value(doc_id)))
            continue
        seen.add(doc_id)
        meta = row.get("public_metadata")
        public: dict = meta if isinstance(meta, dict) else {}
        pc = row.get("page_count")
        if pc is not None and (not isinstance(pc, int) or isinstance(pc, bool) or pc < 1):
            res.problems.append(Problem.warning(name, line, "page_count", "a positive integer", kind_of(pc)))
            pc = None
        res.items.append(
            DocumentRecord(
                document_id=doc_id,
                url=to_str(row.get("url") or public.get("url")),
                page_count=pc,
                file=to_str(row.get("file") or row.get("path")),
                pdf_type=to_str(row.get("pdf_type")).strip().lower(),
            )
        )
    return res


# ----------------------------------------------------------------------------- predictions


def _prediction_text(row: Any, prediction_field: str | None, text: Callable[[Any], str] = to_str) -> tuple[str, str | None]:
    """(text, field used) -- spec 1c."""
    if not isinstance(row, dict):
        return text(row), None
    if prediction_field:
        return text(row.get(prediction_field)), prediction_field if prediction_field in row else None
    for key in PREDICTION_FIELDS:
        if key in row:
            value = row[key]
            if key == "answer" and isinstance(value, dict):
                return text(value.get("value")), key
            return text(value), key
    return "", None


def _predicted_evidence(row: dict, name: str, line: int | None, res: LoadResult) -> tuple[tuple[int, ...], tuple[PredictedEvidence, ...]]:
    pages = _int_list(row.get("evidence_pages"))
    ev: list[PredictedEvidence] = []
    raw = row.get("evidence")
    if isinstance(raw, list):
        for k, e in enumerate(raw):
            if isinstance(e, dict) and isinstance(e.get("page"), int) and not isinstance(e.get("page"), bool) and e["page"] >= 1:
                ev.append(PredictedEvidence(page=e["page"], document_id=to_str(e.get("document_id")), bbox=_bbox(e.get("bbox"))))
            else:
                res.problems.append(
                    Problem.warning(name, line, f"evidence[{k}]", "{page: 1-based int, document_id?, bbox?}", kind_of(e))
                )
    return tuple(p for p in pages if p >= 1), tuple(ev)


def _prediction(qid: str, row: Any, name: str, line: int | None, field: str | None, res: LoadResult,
                release: bool = False) -> Prediction:
    if field is None and type(row) is dict:
        # the usual row -- {"question_id", "prediction": string, "status"?: string} -- without the checks below
        text = row.get("prediction")
        if type(text) is str and len(text) <= MAX_EDIT_CHARS and "evidence_pages" not in row and "evidence" not in row:
            s = row.get("status")
            if s is None or type(s) is str:
                return Prediction(qid=qid, text=text, status=s or "success", file=name, line=line,
                                  evidence_pages=(), evidence=())
    as_text = to_str_release if release else to_str
    text, used = _prediction_text(row, field, as_text)
    if len(text) > MAX_EDIT_CHARS:
        _long_text(name, line, field or "prediction", len(text), res)
    status = "success"
    pages: tuple[int, ...] = ()
    ev: tuple[PredictedEvidence, ...] = ()
    if isinstance(row, dict):
        s = row.get("status")
        if s is not None and s != "":
            status = as_text(s)
        if used is None:
            wanted = field or " / ".join(PREDICTION_FIELDS)
            found = ", ".join(short_value(k, 40) for k in list(row)[:12]) + (", …" if len(row) > 12 else "")
            res.problems.append(Problem.warning(name, line, field or "prediction", f"a prediction field ({wanted})",
                                                f"none, the row has {found or 'no field'} (scored as an empty answer)",
                                                kind="rows without a prediction field"))
        if "evidence_pages" in row or "evidence" in row:
            pages, ev = _predicted_evidence(row, name, line, res)
    return Prediction(qid=qid, text=text, status=status, file=name, line=line, evidence_pages=pages, evidence=ev)


def load_predictions(path: str | Path, *, prediction_field: str | None = None, release: bool = False) -> LoadResult[Prediction]:
    """A prediction file in any shape of spec 1c. Duplicate ids: the later row replaces the
    earlier one, as the release evaluator does, and a warning names both lines. With `release`,
    values and ids become text and lines end as in the public release (see `load_gold`). Read where
    it can be killed (scoring/guard.py)."""
    return guard.read(_load_predictions, path, prediction_field=prediction_field, release=release, bounded=True,
                      refused=_unread)


@paused_gc()
def _load_predictions(path: str | Path, *, prediction_field: str | None = None, release: bool = False) -> LoadResult[Prediction]:
    res: LoadResult[Prediction] = LoadResult()
    path = Path(path)
    name = str(path)
    by_id: dict[str, Prediction] = {}

    def add(pred: Prediction) -> None:
        if pred.qid in by_id:
            first = by_id[pred.qid]
            res.problems.append(
                Problem.warning(name, pred.line, "question_id", "each id once", f"{short_value(pred.qid)} again (replaces "
                                + (f"line {first.line})" if first.line is not None else "the earlier row)"),
                                kind="repeated prediction ids")
            )
            res.skipped += 1
        by_id[pred.qid] = pred

    def add_list(rows: Iterator[tuple[int | None, Any]]) -> None:
        for line, row, qid in _object_rows(rows, name, res, id_text_release if release else to_str):
            add(_prediction(qid, row, name, line, prediction_field, res, release))

    doc: Any = None
    if path.suffix.lower() == ".jsonl":
        pretty, doc = _pretty_document(path)
        if pretty:
            res.files.append(name)
            _pretty_note(name, doc, res)
        else:
            add_list(read_json_lines(path, res, universal=release))
    else:
        pretty, doc = True, _read_json_document(path, res)
    if pretty:
        if isinstance(doc, list):
            res.rows_read += len(doc)
            add_list((None, r) for r in doc)
        elif isinstance(doc, dict):
            mapping = doc["items"] if isinstance(doc.get("items"), dict) else doc
            res.rows_read += len(mapping)
            for key, row in mapping.items():
                add(_prediction(key, row, name, None, prediction_field, res, release))
        elif doc is not None:
            res.problems.append(Problem.error(name, None, None, "a list of objects, {\"items\": {...}} or an id -> answer mapping", kind_of(doc)))
            res.unreadable.append(name)
    res.items = list(by_id.values())
    return res


# ----------------------------------------------------------------------------- score files



def _score_value(row: dict, key: str, name: str, line: int | None, where: str, res: LoadResult) -> float | None:
    value = row.get(key)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        res.problems.append(Problem.error(name, line, f"{where}{key}", "a number in 0..1", kind_of(row.get(key))))
        return None
    return float(value)


def _score_row(qid: str, system: str, row: dict, name: str, line: int | None, where: str, res: LoadResult) -> ScoreRow | None:
    acc, f1, an = (_score_value(row, k, name, line, where, res) for k in METRICS)
    if acc is None or f1 is None or an is None:
        return None
    pred = row.get("prediction")
    return ScoreRow(
        qid=qid, system=system, accuracy=acc, token_f1=f1, anls=an,
        prediction=to_str(pred) if pred is not None else None,
        status=to_str(row.get("status")) or None, file=name, line=line,
    )


def _system_name(path: Path) -> str:
    stem = path.name
    for suffix in (".per_question.csv", ".report.json", ".csv", ".json", ".jsonl"):
        if stem.lower().endswith(suffix):
            return stem[: -len(suffix)]
    return path.stem


def _csv_records(text: str, name: str, res: LoadResult) -> tuple[list[str], Iterator[tuple[int, dict | None]]]:
    """(header, (line, row dict) per record) of a CSV text, as csv.DictReader reads it, except
    that one stray quote costs only its own line. Records are read strictly (a quoted field must
    be followed by a comma or a line end); a record the strict reader refuses, or one that runs
    over several lines (a quoted field holding line breaks) into another number of fields than
    the header, is a quote opened on its first line and never closed there: that line is
    reported (the field named) and skipped (row None), and reading starts again on the next
    line, so the lines the field swallowed are read as the records they are. A line that is
    malformed but complete on its own (`"a"b`, balanced quotes) is read as csv reads it
    leniently. Linear: every line is read at most three times."""
    lines = list(io.StringIO(text, newline=""))  # split at \r\n, \n or \r, line ends kept
    header = next(csv.reader(lines[:1]), [])
    pos = 1  # index in `lines` of the next line to read

    def feed() -> Iterator[str]:
        nonlocal pos
        while pos < len(lines):
            pos += 1
            yield lines[pos - 1]

    def alone(line: str) -> list[str] | None:
        try:
            return next(csv.reader([line]), [])
        except csv.Error:
            return None

    def row_of(cells: list[str]) -> dict[str, str | None]:
        row: dict[str, str | None] = dict(zip(header, cells))
        if len(cells) < len(header):
            row.update(dict.fromkeys(header[len(cells):]))
        return row

    def records() -> Iterator[tuple[int, dict | None]]:
        nonlocal pos
        reader = csv.reader(feed(), strict=True)
        while pos < len(lines):
            start = pos
            why = None
            try:
                cells = next(reader, None)
            except csv.Error as exc:
                cells, why = None, str(exc)
            if cells is None and why is None:
                return
            if cells == []:  # a blank line, as DictReader skips it
                res.blank_lines += 1
                continue
            if why is None and (pos - start == 1 or len(cells) == len(header)):  # type: ignore[arg-type]
                yield start + 1, row_of(cells)  # type: ignore[arg-type]
                continue
            # refused, or a field that swallowed lines: judge the first line on its own
            line = lines[start]
            cells = alone(line)
            pos = start + 1  # read again from the next line, with a new reader
            reader = csv.reader(feed(), strict=True)
            if cells is not None and len(cells) == len(header) and line.count('"') % 2 == 0:
                yield start + 1, row_of(cells)
                continue
            if cells is not None and line.count('"') % 2 == 1:
                column = header[len(cells) - 1] if 0 < len(cells) <= len(header) else None
                res.problems.append(Problem.error(
                    name, start + 1, column, "a quote that closes on its line",
                    f"a quoted field opened and never closed ({short_value(line.rstrip(chr(13) + chr(10)))})",
                    kind="CSV lines with an unclosed quote"))
            else:
                res.problems.append(Problem.error(name, start + 1, None, "a CSV record", why or "a malformed record"))
            yield start + 1, None

    return header, records()


@paused_gc()
def load_scores(path: str | Path) -> LoadResult[ScoreRow]:
    """Official per-question scores: the release report JSON (with `per_question`), its CSV, and
    multi-system files in long form ({question_id, system, ...} per row) or nested form
    ({question_id, scores: {system: {...}}}). The shape is detected; rows that fit none are named.
    Read where it can be killed (scoring/guard.py)."""
    return guard.read(_load_scores, path, bounded=True, refused=_unread)


def _load_scores(path: str | Path) -> LoadResult[ScoreRow]:
    res: LoadResult[ScoreRow] = LoadResult()
    path = Path(path)
    name = str(path)
    seen: set[tuple[str, str]] = set()

    def keep(row: ScoreRow | None, line: int | None) -> None:
        if row is None:
            res.skipped += 1
            return
        key = (row.system, row.qid)
        if key in seen:
            res.skipped += 1
            res.problems.append(Problem.error(name, line, "question_id", "one row per question and system", f"{short_value(row.qid)} for {short_value(row.system)} again"))
            return
        seen.add(key)
        res.items.append(row)

    suffix = path.suffix.lower()
    if suffix == ".csv":
        data = _read_bytes(path, res)
        if data is None:
            return res
        header, records = _csv_records(_decode(data, name, None, res), name, res)
        missing = [c for c in ("question_id", *METRICS) if c not in header]
        if missing:
            found = ", ".join(short_value(c, 40) for c in list(header)[:12]) + (", …" if len(header) > 12 else "")
            res.problems.append(Problem.error(name, 1, "header", "columns question_id, accuracy, token_f1, anls",
                                              f"missing {', '.join(missing)} (the header has {found or 'no column'})"))
            return res
        system = _system_name(path)
        for line, row in records:
            res.rows_read += 1
            if row is None:  # a record that could not be read: reported by _csv_records
                res.skipped += 1
                continue
            qid = (row.get("question_id") or "").strip()
            if not qid:
                res.skipped += 1
                res.problems.append(Problem.error(name, line, "question_id", "a question id", "an empty cell"))
                continue
            keep(_score_row(qid, system, row, name, line, "", res), line)
        return res

    if suffix == ".json":
        doc = _read_json_document(path, res)
        if isinstance(doc, dict) and isinstance(doc.get("per_question"), list):
            system = _system_name(path)
            res.rows_read += len(doc["per_question"])
            for k, row in enumerate(doc["per_question"]):
                if not isinstance(row, dict) or not to_str(row.get("question_id")).strip():
                    res.skipped += 1
                    res.problems.append(Problem.error(name, None, f"per_question[{k}]", "an object with question_id", kind_of(row)))
                    continue
                keep(_score_row(to_str(row["question_id"]).strip(), system, row, name, None, f"per_question[{k}].", res), None)
        elif doc is not None:
            res.problems.append(Problem.error(name, None, None, "a report with a per_question list", kind_of(doc) + " without per_question"))
        return res

    for row_line, row, qid in _object_rows(_jsonl_rows(path, res), name, res):
        line = row_line  # type: ignore[assignment]  # the CSV branch above binds an int
        if isinstance(row.get("scores"), dict):
            nested = row["scores"]
            if not nested:
                res.problems.append(Problem.warning(name, line, "scores", "at least one system", "an empty object"))
            for system, sub in nested.items():
                if not isinstance(sub, dict):
                    res.problems.append(Problem.error(name, line, f"scores.{system}", "an object with accuracy, token_f1, anls", kind_of(sub)))
                    continue
                keep(_score_row(qid, str(system), sub, name, line, f"scores.{system}.", res), line)
        elif "system" in row and all(k in row for k in METRICS):
            system = to_str(row.get("system")).strip()
            if not system:
                res.skipped += 1
                res.problems.append(Problem.error(name, line, "system", "a system name", kind_of(row.get("system"))))
                continue
            keep(_score_row(qid, system, row, name, line, "", res), line)
        elif all(k in row for k in METRICS):  # one system per file: named after the file
            keep(_score_row(qid, _system_name(path), row, name, line, "", res), line)
        else:
            res.skipped += 1
            res.problems.append(
                Problem.error(name, line, None, "{question_id, system, accuracy, token_f1, anls} or {question_id, scores: {system: {...}}}", "an object with keys " + ", ".join(sorted(row)[:8]))
            )
    return res


def load_summary(path: str | Path) -> LoadResult[dict]:
    """summary.json: {"systems": {name: {accuracy, token_f1, anls, count?}}} or a list of
    {system, accuracy, ...}. Items are {system, accuracy, token_f1, anls, count}. Read where it can be
    killed (scoring/guard.py)."""
    return guard.read(_load_summary, path, bounded=True, refused=_unread)


def _load_summary(path: str | Path) -> LoadResult[dict]:
    res: LoadResult[dict] = LoadResult()
    path = Path(path)
    name = str(path)
    doc = _read_json_document(path, res)
    if doc is None:
        return res
    systems = doc.get("systems") if isinstance(doc, dict) else doc
    if isinstance(systems, dict):
        entries = [dict(v, system=k) if isinstance(v, dict) else v for k, v in systems.items()]
    elif isinstance(systems, list):
        entries = systems
    else:
        res.problems.append(Problem.error(name, None, "systems", "an object or list of systems", kind_of(systems)))
        return res
    for k, e in enumerate(entries):
        res.rows_read += 1
        if not isinstance(e, dict) or not to_str(e.get("system")).strip():
            res.skipped += 1
            res.problems.append(Problem.error(name, None, f"systems[{k}]", "an object with a system name", kind_of(e)))
            continue
        vals = [_score_value(e, key, name, None, f"systems.{e['system']}.", res) for key in METRICS]
        if any(v is None for v in vals):
            res.skipped += 1
            continue
        count = e.get("count")
        res.items.append({"system": to_str(e["system"]), "accuracy": vals[0], "token_f1": vals[1], "anls": vals[2],
                          "count": count if isinstance(count, int) else None})
    return res


# ----------------------------------------------------------------------------- columns (the command line's path)

META_KEYS = ("domain", "reasoning_type", "difficulty", "doc_type", "evidence_sources")  # what a run's rows and breakdowns read


class Absent:
    """A metadata key the gold did not have (the row writes "unknown"; a label reads null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = Absent()


DEEP = 32  # a list or object nested deeper than this is "deep" (see `deeper_than`)
_SCALARS = (str, int, float, bool, type(None), Absent)


def deeper_than(value: Any, limit: int = DEEP) -> bool:
    """Whether a JSON value holds lists or objects nested more than `limit` levels (walked without
    recursion). How such a value is written -- its text, or a placeholder when the writer runs out
    of stack -- depends on how deep in the stack it is written, so the command line reads a run
    holding one by the record path, where the output has always been made (see `GoldColumns.deep`)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, tuple)):
            items = v
        elif isinstance(v, dict):
            items = [*v.keys(), *v.values()]
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((x, depth + 1) for x in items if isinstance(x, (list, tuple, dict)))
    return False


class GoldColumns:
    """Gold questions as columns (lists in gold order): what scoring a run, its rows and its
    breakdowns read -- id, answers, format and rule, the split, the raw answer format, whether the
    format was given, the metadata values of `META_KEYS` (`ABSENT` when the key is missing), DocVQA
    question types -- and, for a question read by the full record path, whether its labels are
    written as the release writes values. No `GoldQuestion` is built for a well-formed row;
    `records()` reads the files again through `load_gold` when records are wanted."""

    def __init__(self, paths: Sequence[str | Path], release: bool) -> None:
        self.paths, self.release = [Path(p) for p in paths], release
        self.qid: list[str] = []
        self.answers: list[tuple[str, ...]] = []
        self.answer_format: list[str] = []
        self.verification_rule: list[str] = []
        self.split: list[Any] = []
        self.raw_format: list[Any] = []
        self.format_given: list[bool] = []
        self.meta: dict[str, list[Any]] = {k: [] for k in META_KEYS}
        self.question_types: list[tuple[str, ...]] = []
        self.release_text: dict[int, bool] = {}  # positions whose labels are written otherwise than `release` says
        self.deep = False  # a value written into a label or a row is nested deeper than DEEP (`deeper_than`)

    def __len__(self) -> int:
        return len(self.qid)

    def add_record(self, q: GoldQuestion) -> None:
        if q.release_text != self.release:
            self.release_text[len(self.qid)] = q.release_text
        self.qid.append(q.qid)
        self.answers.append(q.answers)
        self.answer_format.append(q.answer_format)
        self.verification_rule.append(q.verification_rule)
        self.split.append(q.split)
        self.raw_format.append(q.raw_format)
        self.format_given.append(q.format_given)
        for k, col in self.meta.items():
            col.append(q.metadata.get(k, ABSENT))
        self.question_types.append(q.question_types)

    def find_deep(self) -> bool:
        """Set and return `deep`: whether a split, raw format or metadata value is nested deeper than DEEP."""
        scalars = set(_SCALARS)
        for col in (self.split, self.raw_format, *self.meta.values()):
            kinds = set(map(type, col))
            if kinds <= scalars:
                continue
            nested = [v for v in col if type(v) is list or type(v) is dict]
            if kinds - scalars == {list} and set(map(type, chain.from_iterable(nested))) <= scalars:
                continue  # lists of scalars (evidence sources)
            if any(deeper_than(v) for v in nested):
                self.deep = True
        return self.deep

    def records(self) -> list[GoldQuestion]:
        """The questions as `load_gold` reads them (the files read again)."""
        return load_gold(self.paths, release=self.release).items


def _docs_quiet(row: dict) -> bool:
    """Whether a row's `document` / `documents` are read without a problem (else the row takes the record path, which reports it)."""
    scratch: LoadResult = LoadResult()
    if "document" in row:
        _doc_ref(row.get("document"), "", None, "document", scratch)
    if "documents" in row:
        value = row.get("documents")
        if not isinstance(value, list):
            return False
        for k, d in enumerate(value):
            _doc_ref(d, "", None, f"documents[{k}]", scratch)
    return not scratch.problems


@paused_gc()
def load_gold_columns(paths: Sequence[str | Path] | str | Path, *, release: bool = False
                      ) -> tuple[LoadResult[GoldQuestion], GoldColumns]:
    """`load_gold` as columns: the same questions, problems and counts (`res.items` stays empty;
    the questions are the columns). A well-formed row -- a string id, an answer object with a
    string value and a known string format and rule, metadata an object or absent, documents that
    read without a problem -- goes to the columns straight from its JSON object; any other row is
    built by the record path (`_gold_record`), which reports what is wrong with it, in line order."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not guard.here(paths, bounded=True):  # read where it can be killed (scoring/guard.py)
        return guard.job(load_gold_columns, paths, release=release, paths=paths, bounded=True,
                         failed=lambda problem: (_unread(problem), GoldColumns(paths, release)))
    res: LoadResult[GoldQuestion] = LoadResult()
    cols = GoldColumns(paths, release)
    seen: dict[str, tuple[str, int | None]] = {}
    shared: dict = {}
    for p in paths:
        path = Path(p)
        name = str(path)
        with guard.reading(path, bounded=True) as refused:
            if refused is not None:
                _refused(refused, res)
                continue
            records = _json_record_list(path, res)
            if records is not None:
                res.files.append(name)
                res.rows_read += len(records)
                blocks: Iterator[tuple[Sequence[int | None], list[Any]]] = iter([([None] * len(records), records)])
            else:
                blocks = json_line_blocks(path, res, universal=release)
            for numbers, values in blocks:
                _gold_rows(numbers, values, name, release, seen, shared, cols, res)
    cols.find_deep()
    return res, cols


def _usual_gold(row: Any) -> tuple[str, str, str, str, dict | None, bool] | None:
    """A well-formed gold row's (question id, answer value, format, rule, metadata, whether the format
    was given): what `_gold_row` and `_gold_rows` put into the columns straight from the object. None
    for any other row, which the record path (`_gold_of`) reads and reports."""
    if type(row) is not dict:
        return None
    qid = row.get("question_id")
    answer = row.get("answer")
    if not (type(qid) is str and type(answer) is dict and (qid := qid.strip()) and "questionId" not in row):
        return None
    raw_fmt = answer.get("format", "Str")
    rule = answer.get("verification_rule", "")
    value = answer.get("value")
    metadata = row.get("metadata")
    if (type(raw_fmt) is str and raw_fmt in _KNOWN_FORMATS and type(rule) is str
            and (not rule or rule in _KNOWN_RULES) and type(value) is str and len(value) <= MAX_EDIT_CHARS
            and (type(metadata) is dict or metadata is None)
            and (("document" not in row and "documents" not in row) or _docs_quiet(row))):
        return qid, value, raw_fmt, rule, metadata, "format" in answer
    return None


def _gold_rows(numbers: Sequence[int | None], values: list[Any], name: str, release: bool,
               seen: dict[str, tuple[str, int | None]], shared: dict, cols: GoldColumns, res: LoadResult) -> None:
    """`_gold_row` of each row, its usual case (`_usual_gold`, a string split, an id not seen before)
    kept as one tuple of the row's fields and put into the columns together (before any other row
    goes in by `_gold_row`, and at the end)."""
    absent = ABSENT
    empty: dict[str, Any] = {}
    kept: list[tuple] = []
    keep = kept.append
    usual_of = _usual_gold
    for line, row in zip(numbers, values):
        usual = usual_of(row)
        if usual is not None:
            qid, value, raw_fmt, rule, m, given = usual
            split = row.get("task_type", "unknown")
            if type(split) is str and qid not in seen:
                seen[qid] = (name, line)
                if m is None:
                    m = empty
                d, r, k, t = (m.get("domain", absent), m.get("reasoning_type", absent), m.get("difficulty", absent),
                              m.get("doc_type", absent))
                keep((qid, (value,), intern(raw_fmt), intern(rule), intern(split), given,
                      intern(d) if type(d) is str and len(d) < 64 else d,
                      intern(r) if type(r) is str and len(r) < 64 else r,
                      intern(k) if type(k) is str and len(k) < 64 else k,
                      intern(t) if type(t) is str and len(t) < 64 else t,
                      m.get("evidence_sources", absent)))
                continue
        if kept:
            _put_gold(cols, kept)
            kept = []
            keep = kept.append
        _gold_row(row, name, line, release, seen, shared, cols, res)
    if kept:
        _put_gold(cols, kept)


def _put_gold(cols: GoldColumns, kept: list[tuple]) -> None:
    """The rows `_gold_rows` kept, into the columns (as `_gold_row` puts one)."""
    qid, answers, fmt, rule, split, given, *meta = zip(*kept)
    cols.qid += qid
    cols.answers += answers
    cols.answer_format += fmt
    cols.verification_rule += rule
    cols.split += split
    cols.raw_format += fmt
    cols.format_given += given
    for key, col in zip(META_KEYS, meta):
        cols.meta[key] += col
    cols.question_types += repeat((), len(qid))



def _gold_row(row: Any, name: str, line: int | None, release: bool, seen: dict[str, tuple[str, int | None]], shared: dict,
              cols: GoldColumns, res: LoadResult) -> None:
    """One gold row into the columns: a well-formed row (`_usual_gold`) straight from its object, any
    other by `_gold_record` (which reports what is wrong), as `load_gold` reads it."""
    usual = _usual_gold(row)
    if usual is not None:
        qid, value, raw_fmt, rule, metadata, given = usual
        if qid in seen:
            _repeated_gold(name, line, qid, seen, res)
            return
        seen[qid] = (name, line)
        cols.qid.append(qid)
        cols.answers.append((value,))
        raw_fmt, rule = intern(raw_fmt), intern(rule)
        cols.answer_format.append(raw_fmt)
        cols.verification_rule.append(rule)
        split = row.get("task_type", "unknown")
        cols.split.append(intern(split) if type(split) is str else _split(row, release))
        cols.raw_format.append(raw_fmt)
        cols.format_given.append(given)
        m = metadata if metadata is not None else {}
        for key, col in cols.meta.items():
            v = m.get(key, ABSENT)
            col.append(intern(v) if type(v) is str and len(v) < 64 else v)
        cols.question_types.append(())
        return
    # anything else: the record path, which reports what is wrong
    if not cols.deep and deeper_than(row):
        cols.deep = True
    q = _gold_of(row, name, line, res, shared, release, seen)
    if q is not None:
        cols.add_record(q)


def _gold_of(row: Any, name: str, line: int | None, res: LoadResult, shared: dict[tuple, dict], release: bool,
             seen: dict[str, tuple[str, int | None]]) -> GoldQuestion | None:
    """One gold row as `load_gold` takes it: its question, or None with the row counted as skipped
    and its problem said (not a JSON object, a record that cannot be read, an id used before);
    a question kept is remembered in `seen` by its file and line."""
    if not isinstance(row, dict):
        res.skipped += 1
        res.problems.append(Problem.error(name, line, None, "a JSON object", kind_of(row), kind="rows that are not JSON objects"))
        return None
    q = _gold_record(row, name, line, res, shared, release)
    if q is None:
        res.skipped += 1
        return None
    if q.qid in seen:
        _repeated_gold(name, line, q.qid, seen, res)
        return None
    seen[q.qid] = (name, line)  # formatted only for a repeated id
    return q


def _repeated_gold(name: str, line: int | None, qid: str, seen: dict[str, tuple[str, int | None]], res: LoadResult) -> None:
    res.skipped += 1
    res.problems.append(Problem.error(name, line, "question_id", "an id not used before",
                                      f"{short_value(qid)}, first at {seen[qid][0]}:{seen[qid][1]}", kind="repeated question ids"))


class PredictionColumns:
    """Predictions as columns (lists in file order, each id once: a repeated id's later row
    replaces the earlier in its place, as `load_predictions` keeps them): id, text, status, line,
    and the file they were read from."""

    def __init__(self, path: str | Path, prediction_field: str | None, release: bool) -> None:
        self.path, self.prediction_field, self.release = Path(path), prediction_field, release
        self.file = str(path)
        self.qid: list[str] = []
        self.text: list[str] = []
        self.status: list[str] = []
        self.line: list[int | None] = []
        self.deep = False  # a row read by the record path holds a value nested deeper than DEEP (`deeper_than`)
        self.at: dict[str, int] | None = None  # id -> position, when the reader made it

    def __len__(self) -> int:
        return len(self.qid)

    def record(self, k: int) -> Prediction:
        """The k-th prediction as a record (without predicted evidence, which the columns do not keep)."""
        return Prediction(qid=self.qid[k], text=self.text[k], status=self.status[k], file=self.file, line=self.line[k])

    def records(self) -> list[Prediction]:
        """The predictions as `load_predictions` reads them (the file read again)."""
        return load_predictions(self.path, prediction_field=self.prediction_field, release=self.release).items


def load_prediction_columns(path: str | Path, *, prediction_field: str | None = None, release: bool = False
                            ) -> tuple[LoadResult[Prediction], PredictionColumns]:
    """`load_predictions` as columns: the same predictions, problems and counts (`res.items`
    stays empty). A JSONL row {question_id: string, prediction: string, status?: string or null}
    goes to the columns straight from its JSON object; any other row takes `_prediction`, which
    reports what is wrong; a JSON document, a pretty-printed JSONL file or a --prediction-field is
    read by `load_predictions` and put into columns. Read where it can be killed (scoring/guard.py)."""
    return guard.read(_load_prediction_columns, path, prediction_field=prediction_field, release=release, bounded=True,
                      refused=lambda problem: (_unread(problem), PredictionColumns(path, prediction_field, release)))


@paused_gc()
def _load_prediction_columns(path: str | Path, *, prediction_field: str | None = None, release: bool = False
                             ) -> tuple[LoadResult[Prediction], PredictionColumns]:
    cols = PredictionColumns(path, prediction_field, release)
    path = Path(path)
    name = str(path)
    if prediction_field is not None or path.suffix.lower() != ".jsonl" or _pretty_document(path)[0]:
        res = load_predictions(path, prediction_field=prediction_field, release=release)
        cols.deep = any(len(pr.text) > 2 * DEEP and deeper_than(_parse(pr.text)[0]) for pr in res.items
                        if pr.text[:1] in ("[", "{"))
        for pr in res.items:
            cols.qid.append(pr.qid)
            cols.text.append(pr.text)
            cols.status.append(pr.status)
            cols.line.append(pr.line)
        res.items = []
        return res, cols
    res = LoadResult()
    at: dict[str, int] = {}
    most = MAX_EDIT_CHARS
    kept: list[tuple] = []
    keep = kept.append
    for numbers, values in json_line_blocks(path, res, universal=release):
        for line, row in zip(numbers, values):
            # `_prediction_row`'s usual case written out: a well-formed row whose id is new, kept
            # as a tuple and put into the columns with the others (before any other row goes in)
            if type(row) is dict:
                qid = row.get("question_id")
                text = row.get("prediction")
                if (type(qid) is str and type(text) is str and (qid := qid.strip()) and len(text) <= most
                        and "evidence_pages" not in row and "evidence" not in row and qid not in at):
                    s = row.get("status")
                    if s is None or type(s) is str:
                        at[qid] = len(at)
                        keep((qid, text, intern(s) if s else "success", line))
                        continue
            if kept:
                _put_predictions(cols, kept)
                kept = []
                keep = kept.append
            _prediction_row(row, name, line, release, cols, at, res)
    if kept:
        _put_predictions(cols, kept)
    cols.at = at
    return res, cols


def _put_predictions(cols: PredictionColumns, kept: list[tuple]) -> None:
    qid, text, status, line = zip(*kept)
    cols.qid += qid
    cols.text += text
    cols.status += status
    cols.line += line


def _prediction_row(row: Any, name: str, line: int, release: bool, cols: PredictionColumns, at: dict[str, int],
                    res: LoadResult) -> None:
    """One prediction row into the columns, as `load_predictions` reads it (`_object_rows`,
    `_prediction` and its repeated-id rule)."""
    if type(row) is dict:
        qid = row.get("question_id")
        text = row.get("prediction")
        if (type(qid) is str and type(text) is str and (qid := qid.strip()) and len(text) <= MAX_EDIT_CHARS
                and "evidence_pages" not in row and "evidence" not in row):
            s = row.get("status")
            if s is None or type(s) is str:
                _put(cols, at, qid, text, intern(s) if s else "success", line, name, res)
                return
    # anything else: `_object_rows` and `_prediction`, which report what is wrong
    if not cols.deep and deeper_than(row):
        cols.deep = True
    for _, obj, qid in _object_rows(iter(((line, row),)), name, res, id_text_release if release else to_str):
        pred = _prediction(qid, obj, name, line, None, res, release)
        _put(cols, at, pred.qid, pred.text, pred.status, pred.line, name, res)


def _put(cols: PredictionColumns, at: dict[str, int], qid: str, text: str, status: str, line: int | None, name: str,
         res: LoadResult) -> None:
    k = at.get(qid)
    if k is None:
        at[qid] = len(cols.qid)
        cols.qid.append(qid)
        cols.text.append(text)
        cols.status.append(status)
        cols.line.append(line)
    else:
        _replaced(name, qid, line, cols.line[k], res)
        cols.text[k], cols.status[k], cols.line[k] = text, status, line


def _replaced(name: str, qid: str, line: int | None, first_line: int | None, res: LoadResult) -> None:
    """`load_predictions`' warning for a repeated id (the later row replaces the earlier one)."""
    res.problems.append(
        Problem.warning(name, line, "question_id", "each id once", f"{short_value(qid)} again (replaces "
                        + (f"line {first_line})" if first_line is not None else "the earlier row)"),
                        kind="repeated prediction ids")
    )
    res.skipped += 1

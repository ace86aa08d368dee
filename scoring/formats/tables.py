"""Tables as a harness read them back: VLMEvalKit writes `.xlsx` with xlsxwriter and reads every
table with pandas' defaults. What pandas then hands to the harness's scoring is what these
readers return, without pandas (scoring/ never imports it):

- a blank cell, and a cell holding exactly one of pandas' missing-value strings (`None`, `N/A`,
  `NA`, `nan`, `NULL`, `#N/A`, …) is missing: here `math.nan`, which the harness turns into the
  text `nan` with `str()`;
- a formula cell (xlsxwriter writes an answer starting with `=` as a formula unless told not to)
  reads as its cached value, `0` from xlsxwriter;
- a number whose value is integral reads as an int; a numeric column with a missing cell reads as
  floats (`1` becomes `1.0`); a column holding any text keeps its ints as ints; a date-formatted
  number reads as the text of the date openpyxl makes of it;
- fully blank rows are dropped (pandas' `skip_blank_lines`); a header cell left blank is
  `Unnamed: <k>`, a repeated header `name.1`.

Every cell that changed on the way gets a note (`Cell.note`), so a row can say why the harness
scored `nan`. `.xlsx` is read by streaming its sheet's XML once, in chunks (regular expressions for
the parts xlsxwriter and openpyxl write, the streamed XML parser otherwise), giving what openpyxl's
read-only reader gives -- but bounded: openpyxl pads every row up to the sheet's declared dimension
and reads shared strings without a cap, so it is never used. Every dimension is capped while
reading (scoring/limits.py): what a cap cuts is said in `Table.remarks` (the rows before it are
kept). Nothing in a workbook is executed."""

from __future__ import annotations

import codecs
import contextlib
import csv
import datetime
import io
import math
import os
import re
import struct
import xml.etree.ElementTree as ET
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .. import guard
from ..limits import (
    EXCEL_MAX_COLUMNS,
    EXCEL_MAX_ROWS,
    JSON_TABLE_MAX_BYTES,
    MAX_SHEET_ROWS,
    MAX_TABLE_CELLS,
    MAX_TABLE_ROWS,
    TABLE_MAX_LINE,
    TABLE_MAX_REMARKS,
    XLSX_CHUNK,
    XLSX_MAX_META_BYTES,
    XLSX_MAX_PART_BYTES,
    XLSX_MAX_ROW_XML,
    XLSX_MAX_SHARED_CHARS,
    XLSX_MAX_SHARED_FORMULAS,
    XLSX_MAX_SHARED_STRINGS,
    ZIP_MAX_ENTRIES,
    ZIP_MAX_RATIO,
    ZIP_RATIO_FROM_BYTES,
)
from ..reading import NotRegular, TooLarge, open_regular, read_capped

__all__ = ["NA_STRINGS", "Table", "Remark", "CUT_KIND", "is_na", "read_table", "read_xlsx", "read_delimited", "EXCEL_CELL_LIMIT"]

# pandas' default missing-value strings (pandas._libs.parsers STR_NA_VALUES)
NA_STRINGS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                        "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
EXCEL_CELL_LIMIT = 32_767  # xlsxwriter cuts longer strings to this many characters
_ESCAPED = re.compile(r"_x[0-9A-Fa-f]{4}_")


def is_na(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


@dataclass(slots=True)
class Table:
    """Rows as dicts by column name, each with its sheet row (the header is row 1) or file line,
    and per row the notes of the cells that changed on the way (column -> note); the remarks say
    what was not read (a cell beyond column XFD, the rows after a cut) with their sheet row."""

    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)
    error: str = ""  # why the table could not be read at all
    remarks: list[Remark] = field(default_factory=list)  # cells not read, and where a cap cut the table (CUT_KIND)
    remark_counts: dict[str, int] = field(default_factory=dict)  # remarks of each kind, listed or not


def _header(values: list[Any]) -> list[str]:
    out: list[str] = []
    seen: dict[str, int] = {}
    for k, v in enumerate(values):
        name = f"Unnamed: {k}" if v is None or (isinstance(v, str) and v == "") else (
            str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        else:
            seen[name] = 0
        out.append(name)
    return out


def _infer(table: Table, *, from_text: bool) -> None:
    """pandas' column types: all-integral numbers stay ints unless a cell is missing (then floats);
    ints and floats together become floats; text anywhere keeps each cell as it is. From a
    delimited file (`from_text`) cells are text first, and a column whose every cell reads as a
    number becomes numbers."""
    for col in table.columns:
        values = [r.get(col, math.nan) for r in table.rows]
        present = [v for v in values if not is_na(v)]
        if from_text:
            if not present or not all(isinstance(v, str) for v in present):
                continue
            try:
                nums: list[int | float] = [int(v) for v in present]
                kind: type = int
            except ValueError:
                try:
                    nums = [float(v) for v in present]
                    kind = float
                except ValueError:
                    continue
            it = iter(nums)
            has_na = len(present) != len(values)
            for r in table.rows:
                v = r.get(col, math.nan)
                if not is_na(v):
                    n = next(it)
                    r[col] = float(n) if (has_na or kind is float) else n
            continue
        if not present or any(isinstance(v, (str, bool)) or not isinstance(v, (int, float)) for v in present):
            continue
        has_na = len(present) != len(values)
        if has_na or any(isinstance(v, float) for v in present):
            for r in table.rows:
                v = r.get(col, math.nan)
                if isinstance(v, int) and not isinstance(v, bool):
                    r[col] = float(v)


def _cell(value: Any, data_type: str) -> tuple[Any, str]:
    """(what pandas reads, the note when that is not the cell's text)."""
    if value is None:
        return math.nan, "blank cell read as missing (the harness scores the text 'nan')"
    if data_type == "e":
        return math.nan, f"error cell {value!s} read as missing"
    if isinstance(value, bool):
        return value, ""
    if isinstance(value, float):
        return (int(value), "") if value.is_integer() else (value, "")
    if isinstance(value, int):
        return value, ""
    if isinstance(value, str):
        if value in NA_STRINGS:
            return math.nan, f"the text {value!r} read as missing (the harness scores the text 'nan')"
        notes = []
        if len(value) >= EXCEL_CELL_LIMIT:
            notes.append(f"{len(value):,} characters: cut at Excel's {EXCEL_CELL_LIMIT:,}-character cell limit when written")
        if _ESCAPED.search(value):
            notes.append("holds _xHHHH_ escapes (control characters escaped when written)")
        return value, "; ".join(notes)
    return str(value), ""  # dates and times: their text


def read_xlsx(path: Path) -> Table:
    """The first sheet as pandas' `read_excel` gives it (see the module text), read in one streamed
    pass over the sheet's XML with every dimension capped while reading (scoring/limits.py): the
    zip's directory and each part's declared sizes are checked before anything is inflated, shared
    strings are kept up to a count and a size, a cell reference beyond column XFD is named and not
    read, rows are never padded (a sheet's declared `dimension` is not looked at), at most
    MAX_TABLE_ROWS rows and MAX_TABLE_CELLS cells are kept. A cut keeps the rows before it and says
    so (`Table.remarks`); a workbook that cannot be read at all says why (`Table.error`)."""
    out = Table()
    try:
        fh = open_regular(path)
    except OSError as exc:
        out.error = _os_reason(exc)
        return out
    with fh:
        try:
            why = _zip_directory_too_large(fh)
            if why:
                out.error = why
                return out
            with zipfile.ZipFile(fh) as z:
                _read_book(z, out)
        except _Refused as exc:
            out.error = str(exc)
        except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as exc:
            out.error = f"not a readable .xlsx workbook ({_zip_reason(exc)})"
        except (ET.ParseError, ValueError, KeyError) as exc:  # the workbook's own parts, parsed whole
            out.error = f"not a readable .xlsx workbook ({type(exc).__name__}: {str(exc)[:200]})"
    if out.error:
        out.columns, out.rows, out.lines, out.notes = [], [], [], []
        return out
    if not out.columns and not out.error:
        cut = next((r for r in out.remarks if r.kind == CUT_KIND), None)
        out.error = f"no header row read: {cut.got}" if cut is not None else "an empty sheet (no header row)"
    _finish(out)
    _infer(out, from_text=False)
    return out


CUT_KIND = "tables cut short"


class Remark(NamedTuple):
    """Something a table reader says about a cell or a row (a Problem's parts, without the file)."""

    line: int | None  # the sheet row (the header is row 1) or the file's line
    expected: str
    got: str
    kind: str


class _Refused(Exception):
    """A workbook not read at all: its message says why (a zip bomb, too many entries, ...)."""


class _Cut(Exception):
    """Reading stops here: rows read before are kept. (sheet row or None, expected, got)."""

    def __init__(self, line: int | None, expected: str, got: str) -> None:
        super().__init__(got)
        self.line, self.expected, self.got = line, expected, got


class _Unsupported(Exception):
    """What the regular expressions leave to the streamed XML parser (a prefixed namespace, a
    cell without its reference first, CDATA, ...)."""


REMARKS_KEPT = TABLE_MAX_REMARKS


def _remark(out: Table, line: int | None, expected: str, got: str, kind: str) -> None:
    n = out.remark_counts.get(kind, 0) + 1
    out.remark_counts[kind] = n
    if n <= REMARKS_KEPT:
        out.remarks.append(Remark(line, expected, got, kind))


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, (NotRegular, TooLarge)):
        return exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    return exc.strerror or str(exc)


def _zip_reason(exc: BaseException) -> str:
    text = str(exc)
    if text == "File is not a zip file":
        return "no zip directory at its end: a file cut short, or not a workbook"
    if isinstance(exc, EOFError) or "truncated" in text.lower() or "Bad CRC" in text:
        return f"the file is cut short or damaged: {type(exc).__name__}: {text[:200]}"
    return f"{type(exc).__name__}: {text[:200]}"


def _size(n: int) -> str:
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):,.1f} {unit}"
    return f"{n:,} bytes"


def _zip_directory_too_large(fh: Any) -> str:
    """Why the zip's directory is not read ("" when it may be): more than ZIP_MAX_ENTRIES entries, as
    its end record says (read from the last 64 KB before zipfile builds an object per entry)."""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    tail_len = min(size, (1 << 16) + 22 + 20)
    fh.seek(size - tail_len)
    tail = fh.read(tail_len)
    fh.seek(0)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 12 > len(tail):
        return ""  # not a zip: zipfile says so
    entries = struct.unpack("<H", tail[at + 10:at + 12])[0]
    if entries == 0xFFFF and at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":  # ZIP64: the count is in its record
        offset = struct.unpack("<Q", tail[at - 12:at - 4])[0]
        if offset < size:
            fh.seek(offset)
            record = fh.read(56)
            fh.seek(0)
            if record[:4] == b"PK\x06\x06" and len(record) == 56:
                entries = struct.unpack("<Q", record[32:40])[0]
    if entries > ZIP_MAX_ENTRIES:
        return (f"a zip of {entries:,} entries, more than the {ZIP_MAX_ENTRIES:,} a workbook is read with "
                "(a workbook holds a few dozen): not read")
    return ""


def _checked(z: zipfile.ZipFile, name: str, cap: int) -> zipfile.ZipInfo:
    """The part's entry, after its declared sizes are checked (nothing is inflated yet): _Refused when
    it would inflate to more than `cap` bytes, or more than ZIP_MAX_RATIO times its stored size (a zip
    bomb), or is compressed otherwise than stored or deflated (bzip2 and LZMA inflate without a bound
    per read). zipfile never gives more bytes than the declared size."""
    info = z.getinfo(name)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _Refused(f"{name} is compressed with method {info.compress_type} (a workbook part is stored or deflated): "
                       "not read")
    if info.file_size > cap:
        raise _Refused(f"{name} would inflate to {_size(info.file_size)}, more than the {_size(cap)} a workbook part "
                       "is read up to: not read")
    stored = max(info.compress_size, 1)
    if info.file_size >= ZIP_RATIO_FROM_BYTES and info.file_size > ZIP_MAX_RATIO * stored:
        raise _Refused(f"{name} would inflate from {_size(stored)} to {_size(info.file_size)} "
                       f"({info.file_size // stored:,} times; a workbook part is read up to {ZIP_MAX_RATIO} times): "
                       "a zip bomb? not read")
    return info


def _small_part(z: zipfile.ZipFile, name: str) -> bytes:
    _checked(z, name, XLSX_MAX_META_BYTES)
    return z.read(name)


def _first_sheet(z: zipfile.ZipFile, names: set[str]) -> tuple[str, bool]:
    """(the first sheet's part name, whether dates count from 1904)."""
    book = ET.fromstring(_small_part(z, "xl/workbook.xml"))
    pr = book.find(_NS + "workbookPr")
    flag = pr.get("date1904") if pr is not None else None
    date1904 = flag is not None and flag not in ("false", "f", "0", "")  # as openpyxl reads the attribute
    sheet = book.find(f"{_NS}sheets/{_NS}sheet")
    if sheet is None:
        raise _Refused("a workbook without a sheet")
    rid = sheet.get(_REL_NS + "id")
    rels = ET.fromstring(_small_part(z, "xl/_rels/workbook.xml.rels"))
    for rel in rels.iter(_PKG_REL + "Relationship"):
        if rel.get("Id") == rid:
            target = rel.get("Target", "")
            name = target.lstrip("/") if target.startswith("/") else "xl/" + target
            if name not in names:
                raise _Refused(f"the first sheet's part {name} is not in the workbook")
            return name, date1904
    raise _Refused("the first sheet's part is not named in xl/_rels/workbook.xml.rels")


def _date_format(code: str | None) -> bool:
    """openpyxl's test of a number format for a date or time (its first section, quoted text and
    bracketed locales left out)."""
    if code is None:
        return False
    code = _STRIP_FORMAT.sub("", code.split(";")[0])
    return _DATE_LETTER.search(code) is not None


def _styles(z: zipfile.ZipFile, names: set[str]) -> tuple[frozenset[int], frozenset[int]]:
    """(cell styles that show a date or time, those that show a duration): the cell style indices
    whose number format openpyxl reads numbers under as datetimes / timedeltas."""
    if "xl/styles.xml" not in names:
        return frozenset(), frozenset()
    styles = ET.fromstring(_small_part(z, "xl/styles.xml"))
    custom: dict[int, str] = {}
    fmts = styles.find(_NS + "numFmts")
    for fmt in (fmts.iter(_NS + "numFmt") if fmts is not None else ()):
        try:
            custom[int(fmt.get("numFmtId", ""))] = fmt.get("formatCode", "")
        except ValueError:
            continue
    dates: set[int] = set()
    durations: set[int] = set()
    xfs = styles.find(_NS + "cellXfs")
    for idx, xf in enumerate(xfs.findall(_NS + "xf") if xfs is not None else ()):
        try:
            nid = int(xf.get("numFmtId", "0"))
        except ValueError:
            nid = 0
        code = custom[nid] if nid in custom else _BUILTIN_DATE_FORMATS.get(nid)
        if _date_format(code):
            dates.add(idx)
        if code is not None and _DURATION.search(code.split(";")[0]):
            durations.add(idx)
    return frozenset(dates), frozenset(durations)


# openpyxl's built-in number formats that are dates or times (ids 14-22, 45-47); other built-in ids are not
_BUILTIN_DATE_FORMATS = {14: "mm-dd-yy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 18: "h:mm AM/PM", 19: "h:mm:ss AM/PM",
                         20: "h:mm", 21: "h:mm:ss", 22: "m/d/yy h:mm", 45: "mm:ss", 46: "[h]:mm:ss", 47: "mmss.0"}
_STRIP_FORMAT = re.compile(r'".*?"|\[(?!hh?\]|mm?\]|ss?\])[^\]]*\]')
_DATE_LETTER = re.compile(r"(?<![_\\])[dmhysDMHYS]")
_DURATION = re.compile(r"\[hh?\](:mm(:ss(\.0*)?)?)?|\[mm?\](:ss(\.0*)?)?|\[ss?\](\.0*)?", re.I)
_WINDOWS_EPOCH = datetime.datetime(1899, 12, 30)
_MAC_EPOCH = datetime.datetime(1904, 1, 1)


def _from_excel(value: float, date1904: bool, duration: bool) -> Any:
    """A date-formatted number as openpyxl reads it: a timedelta, a time (below one day) or a datetime;
    OverflowError or ValueError out of range."""
    if duration:
        td = datetime.timedelta(days=value)
        if td.microseconds:
            td = datetime.timedelta(seconds=td.total_seconds() // 1, microseconds=round(td.microseconds, -3))
        return td
    day, fraction = divmod(value, 1)
    diff = datetime.timedelta(milliseconds=round(fraction * 86400 * 1000))
    if 0 <= value < 1 and diff.days == 0:
        minutes, seconds = divmod(diff.seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return datetime.time(hours, minutes, seconds, diff.microseconds)
    if 0 < value < 60 and not date1904:
        day += 1
    return (_MAC_EPOCH if date1904 else _WINDOWS_EPOCH) + datetime.timedelta(days=day) + diff


_ISO = re.compile(r"(?P<date>(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2}))?T?(?P<time>(?P<hour>\d{2}):(?P<minute>\d{2})"
                  r"(:(?P<second>\d{2})(?P<microsecond>\.\d{1,3})?)?)?Z?")


def _from_iso(text: str) -> Any:
    """A `t="d"` cell's ISO 8601 text as openpyxl reads it (a datetime, a date or a time); ValueError otherwise."""
    m = _ISO.match(text)
    if not m or not any(m.groups()):
        raise ValueError(f"not an ISO 8601 date: {text[:40]!r}")
    n = {k: int(m.group(k) or 0) for k in ("year", "month", "day", "hour", "minute", "second")}
    micro = int(float(m.group("microsecond")) * 1_000_000) if m.group("microsecond") else 0
    if not m.group("date"):
        return datetime.time(n["hour"], n["minute"], n["second"], micro)
    if not m.group("time"):
        return datetime.date(n["year"], n["month"], n["day"])
    return datetime.datetime(n["year"], n["month"], n["day"], n["hour"], n["minute"], n["second"], micro)


def _read_book(z: zipfile.ZipFile, out: Table) -> None:
    names = set(z.namelist())
    sheet, date1904 = _first_sheet(z, names)
    dates, durations = _styles(z, names)
    _checked(z, sheet, XLSX_MAX_PART_BYTES)
    strings = _Strings()
    if "xl/sharedStrings.xml" in names:
        _checked(z, "xl/sharedStrings.xml", XLSX_MAX_PART_BYTES)
        _read_strings(z, "xl/sharedStrings.xml", strings)
    cells = _Cells(strings, dates, durations, date1904, out)
    try:
        _assemble(out, _regex_rows(z, sheet, cells))
    except _Unsupported:
        _reset(out)
        _assemble(out, _xml_rows(z, sheet, _Cells(strings, dates, durations, date1904, out)))


def _reset(out: Table) -> None:
    out.columns, out.rows, out.lines, out.notes, out.remarks = [], [], [], [], []
    out.remark_counts.clear()


def _decoded(z: zipfile.ZipFile, name: str) -> Iterator[str]:
    """The part's text, XLSX_CHUNK inflated bytes at a time (UTF-8; _Unsupported for another encoding)."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    with z.open(name) as fh:
        first = True
        while chunk := fh.read(XLSX_CHUNK):
            if first:
                head = chunk[:200].lower()
                if b"encoding=" in head and b"utf-8" not in head:
                    raise _Unsupported("another encoding than UTF-8")
                first = False
            try:
                yield decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                raise _Unsupported("not UTF-8") from exc
        yield decoder.decode(b"", final=True)


class _Strings:
    """The workbook's shared strings, kept up to XLSX_MAX_SHARED_STRINGS strings and
    XLSX_MAX_SHARED_CHARS characters; `cut` says why the rest is not (a cell naming one of them cuts
    its table there)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.chars = 0
        self.cut = ""

    def add(self, text: str) -> bool:
        """Keep one more string; False (and `cut` set) when a cap is reached."""
        if len(self.items) >= XLSX_MAX_SHARED_STRINGS:
            self.cut = f"more than {XLSX_MAX_SHARED_STRINGS:,} shared strings"
            return False
        self.chars += len(text)
        if self.chars > XLSX_MAX_SHARED_CHARS:
            self.cut = f"more than {XLSX_MAX_SHARED_CHARS:,} characters of shared strings"
            return False
        self.items.append(text.replace("x005F_", "") if "x005F_" in text else text)
        return True


def _read_strings(z: zipfile.ZipFile, name: str, strings: _Strings) -> None:
    """The shared strings part into `strings`: regular expressions over chunks cut before an `<si`,
    or (for what they do not take) the streamed XML parser, each stopping at the caps. A part cut
    short keeps the strings before the cut (a cell naming a later one cuts its table)."""
    try:
        _regex_strings(z, name, strings)
    except _Unsupported:
        strings.items.clear()
        strings.chars = 0
        strings.cut = ""
        _xml_strings(z, name, strings)


def _regex_strings(z: zipfile.ZipFile, name: str, strings: _Strings) -> None:
    buf = ""
    try:
        for text in _decoded(z, name):
            buf += text
            end = buf.find("</sst>")
            if end >= 0:
                _regex_string_piece(buf[:end], strings)
                return
            cut = buf.rfind("<si")
            if cut <= 0:
                if len(buf) > XLSX_MAX_ROW_XML:
                    strings.cut = f"a shared string of more than {XLSX_MAX_ROW_XML:,} characters of XML"
                    return
                continue
            if not _regex_string_piece(buf[:cut], strings):
                return
            buf = buf[cut:]
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        strings.cut = f"the shared strings part is cut short or damaged ({type(exc).__name__})"
        return
    strings.cut = "the shared strings part is cut short (no </sst>)"


def _regex_string_piece(piece: str, strings: _Strings) -> bool:
    found = _SI_RE.findall(piece)
    if len(found) != piece.count("<si>") + piece.count("<si/>") + piece.count("<si "):
        raise _Unsupported("a shared string these expressions do not read")
    for plain, body in found:
        if plain or not body:
            text = _xml_text(plain) if "&" in plain or "\r" in plain else plain
        else:
            text = "".join(_xml_text(t or "") for t in _T_RE.findall(_RPH_RE.sub("", body) if "<rPh" in body else body))
        if not strings.add(text):
            return False
    return True


class _TooLong(Exception):
    """More than XLSX_MAX_ROW_XML bytes of a part passed without the element read ending."""


def _elements(z: zipfile.ZipFile, name: str, container: str, tag: str) -> Iterator[Any]:
    """The `tag` elements of a part, each as it ends, streamed through the XML parser XLSX_CHUNK bytes
    at a time and dropped from the tree once read (so that the tree never grows); _TooLong when more
    than XLSX_MAX_ROW_XML bytes pass without one ending. The parser's and the zip's errors propagate."""
    parser: Any = ET.XMLPullParser(events=("start", "end"))
    parent: Any = None
    fed = 0
    with z.open(name) as fh:
        while chunk := fh.read(XLSX_CHUNK):
            parser.feed(chunk)
            fed += len(chunk)
            for event, node in parser.read_events():
                if event == "start":
                    if parent is None and node.tag == container:
                        parent = node
                    continue
                if node.tag != tag:
                    continue
                fed = 0
                yield node
                node.clear()
                if parent is not None:
                    with contextlib.suppress(ValueError):
                        parent.remove(node)
            if fed > XLSX_MAX_ROW_XML:
                raise _TooLong
        parser.close()


def _xml_strings(z: zipfile.ZipFile, name: str, strings: _Strings) -> None:
    try:
        for node in _elements(z, name, _NS + "sst", _NS + "si"):
            if not strings.add(_text_of(node)):
                return
    except _TooLong:
        strings.cut = f"a shared string of more than {XLSX_MAX_ROW_XML:,} bytes of XML"
    except (ET.ParseError, zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError) as exc:
        strings.cut = f"the shared strings part is cut short or not well-formed ({type(exc).__name__}: {str(exc)[:80]})"


_BLANK = (None, "n", None)


class _Cells:
    """What each cell of the sheet reads as: (value, openpyxl data type, formula text or None), the
    conversions openpyxl makes (shared strings, numbers, booleans, dates), and the remarks about
    cells that cannot be read (each named, the cell read as missing)."""

    def __init__(self, strings: _Strings, dates: frozenset[int], durations: frozenset[int], date1904: bool,
                 out: Table) -> None:
        self.strings = strings.items
        self.strings_cut = strings.cut
        self.dates = dates
        self.durations = durations
        self.date1904 = date1904
        self.out = out
        self.columns: dict[str, int] = {}
        self.shared_formulas: dict[str, str] = {}
        self.beyond_rows = False

    def column(self, letters: str, r: int) -> int | None:
        """The 0-based column of a reference's letters; None (the cell named and not read) beyond XFD."""
        k = self.columns.get(letters)
        if k is not None:
            return k
        if len(letters) > 3:
            k = EXCEL_MAX_COLUMNS
        else:
            k = 0
            for ch in letters:
                k = k * 26 + ord(ch) - 64
            k -= 1
        if k >= EXCEL_MAX_COLUMNS or k < 0:
            self.beyond(r, letters if len(letters) <= 12 else letters[:12] + "…")
            return None
        self.columns[letters] = k  # at most EXCEL_MAX_COLUMNS of them
        return k

    def beyond(self, r: int, column: str) -> None:
        _remark(self.out, r, f"a cell within Excel's last column XFD ({EXCEL_MAX_COLUMNS:,} columns)",
                f"a cell at column {column} (not read)", "cells beyond column XFD")

    def row_number(self, r: int) -> None:
        if r > EXCEL_MAX_ROWS and not self.beyond_rows:
            self.beyond_rows = True
            _remark(self.out, r, f"sheet rows within Excel's last row {EXCEL_MAX_ROWS:,}",
                    f"row {r:,} and after (read as rows of the table all the same)", "rows beyond Excel's last row")

    def value(self, r: int, t: str, style: str | None, v: str | None) -> tuple[Any, str]:
        """A cell's value and data type from its type, style and `<v>` text."""
        if v is None:
            return None, "n"
        try:
            if t == "n":
                number = _number(v)
                if style is not None and self.dates and style.isdigit() and int(style) in self.dates:
                    try:
                        return _from_excel(number, self.date1904, int(style) in self.durations), "d"
                    except (OverflowError, ValueError):
                        return "#VALUE!", "e"
                return number, "n"
            if t == "s":
                k = int(v)
                if 0 <= k < len(self.strings):
                    return self.strings[k], "s"
                if self.strings_cut and k >= len(self.strings):
                    raise _Cut(r, "shared strings within the caps",
                               f"a cell naming shared string #{k:,}; the workbook has {self.strings_cut}, and only the "
                               f"first {len(self.strings):,} are kept: rows before sheet row {r:,} are read, the rest is not")
                _remark(self.out, r, "a shared string the workbook holds",
                        f"shared string #{k:,} of {len(self.strings):,} (read as missing)", "cells that cannot be read")
                return None, "n"
            if t == "b":
                return bool(int(v)), "b"
            if t == "str":
                return v, "s"
            if t == "e":
                return v, "e"
            if t == "d":
                try:
                    return _from_iso(v), "d"
                except ValueError:
                    return v, "s"
            return v, t  # a type openpyxl does not convert: its text
        except ValueError:
            _remark(self.out, r, f"a cell of type {t} as its text says", f"{v[:40]!r} (read as missing)",
                    "cells that cannot be read")
            return None, "n"

    def formula(self, f_attrs: str | None, kind: str | None, si: str | None, text: str | None) -> str:
        """The formula text a note quotes ("=..."); a shared formula's dependents quote its first cell's."""
        if kind == "shared" and si is not None:
            if text:
                if len(self.shared_formulas) < XLSX_MAX_SHARED_FORMULAS:
                    self.shared_formulas[si] = text
                return "=" + text
            return "=" + self.shared_formulas.get(si, "")
        return "=" + (text or "")


def _regex_rows(z: zipfile.ZipFile, name: str, cells: _Cells) -> Iterator[tuple[int, dict[int, tuple[Any, str, str | None]]]]:
    """The rows of a sheet part written as xlsxwriter and openpyxl write it (default namespace, each
    cell with its reference first, no CDATA), read with regular expressions over chunks of at most
    XLSX_CHUNK inflated bytes cut before a `<row`; _Unsupported for anything else (the streamed XML
    parser reads it then), _Cut where the sheet stops being readable."""
    buf = ""
    started = False
    state = _RowState()
    try:
        for text in _decoded(z, name):
            buf += text
            if not started:
                at = buf.find("<sheetData")
                if at < 0:
                    if len(buf) > XLSX_MAX_ROW_XML:
                        raise _Unsupported("no sheetData element near the start")
                    continue
                close = buf.find(">", at)
                if close < 0:
                    continue
                if buf[close - 1] == "/":  # <sheetData/>: no rows
                    return
                started = True
                buf = buf[close + 1:]
            end = buf.find("</sheetData>")
            if end >= 0:
                yield from _regex_piece(buf[:end], cells, state)
                return
            cut = buf.rfind("<row")
            if cut <= 0:
                if len(buf) > XLSX_MAX_ROW_XML:
                    raise _Cut(state.last + 1, f"a sheet row of at most {XLSX_MAX_ROW_XML:,} characters of XML",
                               f"more after sheet row {state.last:,}: rows up to it are read, the rest is not")
                continue
            yield from _regex_piece(buf[:cut], cells, state)
            buf = buf[cut:]
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise _Cut(state.last + 1, "a complete sheet",
                   f"the sheet's part is cut short or damaged ({type(exc).__name__}) after sheet row {state.last:,}: "
                   "rows up to it are read, the rest is not") from None
    if not started:
        raise _Unsupported("no sheetData element")
    raise _Cut(state.last + 1, "a complete sheet",
               f"the sheet's XML is cut short after sheet row {state.last:,} (a truncated file): "
               "rows up to it are read, the rest is lost")


class _RowState:
    __slots__ = ("last", "seen")

    def __init__(self) -> None:
        self.last = 0  # the last sheet row read
        self.seen = 0  # <row> elements looked at, blank ones included


# xlsxwriter's and openpyxl's order of a cell's attributes (r, s, t) caught by the expression; any other taken from the rest
_CELL_RE = re.compile(r'<c r="([A-Z]+)(\d+)"(?: s="(\d+)")?(?: t="(\w+)")?([^>]*?)(?:/>|>(.*?)</c>)', re.S)
_STYLE_RE = re.compile(r'\bs="(\d+)"')
_FLOAT_RE = re.compile(r"-?\d+\.\d+(?:[Ee][-+]?\d+)?")  # what xlsxwriter writes for a float (float() reads it)
_F_ATTR_RE = re.compile(r'\b(t|si)="([^"]*)"')


def _regex_piece(data: str, cells: _Cells, state: _RowState) -> Iterator[tuple[int, dict[int, tuple[Any, str, str | None]]]]:
    if "<![CDATA[" in data or _TAG_RE.search(data):
        raise _Unsupported("CDATA or an element these expressions do not know")
    found = _CELL_RE.findall(data)
    if len(found) != data.count("<c ") + data.count("<c>") + data.count("<c/>"):
        raise _Unsupported("a cell without its reference first")
    state.seen += data.count("<row")
    if state.seen > MAX_SHEET_ROWS:
        raise _Cut(state.last + 1, f"a sheet of at most {MAX_SHEET_ROWS:,} rows (blank ones included)",
                   f"more: rows up to sheet row {state.last:,} are read, the rest is not")
    row: dict[int, tuple[Any, str, str | None]] = {}
    current = -1
    last_k = -1
    strings, dates, columns = cells.strings, cells.dates, cells.columns
    for letters, number, style_attr, type_attr, attrs, body in found:
        if len(number) > 15:
            raise _Unsupported("a row number of more than 15 digits")
        r = int(number)
        if r != current:
            if r < current:
                raise _Unsupported("rows out of order")
            if current >= 0:
                yield current, row
            row = {}
            current = r
            state.last = r
            last_k = -1
            cells.row_number(r)
        k = columns.get(letters)
        if k is None:
            k = cells.column(letters, r)
            if k is None:
                continue
        if k <= last_k:
            raise _Unsupported("cells out of order")
        last_k = k
        t = type_attr or "n"
        style = style_attr or None
        if attrs:
            if 't="' in attrs:
                m = _TYPE_RE.search(attrs)
                t = m.group(1) if m else t
            if 's="' in attrs:
                m = _STYLE_RE.search(attrs)
                style = m.group(1) if m else style
        formula = None
        if not body:
            v = None
        elif body.startswith("<v>") and body.endswith("</v>") and "<" not in body[3:-4]:
            v = body[3:-4] or None
            if v is not None and ("&" in v or "\r" in v):
                v = _xml_text(v)
        else:
            if "<f" in body:
                fm = _F_RE.search(body)
                if fm is not None:
                    fa = dict(_F_ATTR_RE.findall(fm.group(1)))
                    formula = cells.formula(fm.group(1), fa.get("t"), fa.get("si"), _xml_text(fm.group(2) or "") or None)
            vm = _V_RE.search(body) if "<v" in body else None
            v = (_xml_text(vm.group(1)) or None) if vm is not None else None
            if t == "inlineStr":
                row[k] = (("".join(_xml_text(x or "") for x in _T_RE.findall(_RPH_RE.sub("", body)))
                           if "<is" in body else None), "s", formula)
                continue
        if t == "inlineStr":
            row[k] = (None, "n", formula)
            continue
        if v is not None and t == "s" and v.isascii() and v.isdigit() and int(v) < len(strings):  # the usual cells
            row[k] = (strings[int(v)], "s", formula)
        elif v is not None and t == "n" and not dates and _FLOAT_RE.fullmatch(v):
            row[k] = (float(v), "n", formula)
        else:
            value, dtype = cells.value(r, t, style, v)
            row[k] = (value, dtype, formula)
    if current >= 0:
        yield current, row


def _xml_rows(z: zipfile.ZipFile, name: str, cells: _Cells) -> Iterator[tuple[int, dict[int, tuple[Any, str, str | None]]]]:
    """The rows of any sheet part, streamed through the XML parser XLSX_CHUNK bytes at a time: each
    row read when it ends and dropped from the tree; a row of more than XLSX_MAX_ROW_XML bytes, XML
    that is not well-formed or ends early cut the sheet there (_Cut)."""
    row_tag, cell_tag, v_tag, f_tag, is_tag = _NS + "row", _NS + "c", _NS + "v", _NS + "f", _NS + "is"
    state = _RowState()
    try:
        for node in _elements(z, name, _NS + "sheetData", row_tag):
            state.seen += 1
            if state.seen > MAX_SHEET_ROWS:
                raise _Cut(state.last + 1, f"a sheet of at most {MAX_SHEET_ROWS:,} rows (blank ones included)",
                           f"more: rows up to sheet row {state.last:,} are read, the rest is not")
            r = _row_number(node.get("r"), state.last)
            state.last = r
            cells.row_number(r)
            row: dict[int, tuple[Any, str, str | None]] = {}
            k = -1
            for c in node.iter(cell_tag):
                ref = c.get("r")
                if ref:
                    m = _REF_RE.match(ref)
                    if m is None:
                        _remark(cells.out, r, "a cell reference such as B7", f"{ref[:20]!r} (the cell is not read)",
                                "cells that cannot be read")
                        continue
                    col = cells.column(m.group(1).upper(), r)
                    if col is None:
                        continue
                    k = col
                else:
                    k += 1
                    if k >= EXCEL_MAX_COLUMNS:
                        cells.beyond(r, "after XFD")
                        continue
                t = c.get("t", "n")
                f = c.find(f_tag)
                formula = cells.formula(None, f.get("t"), f.get("si"), f.text) if f is not None else None
                if t == "inlineStr":
                    node_is = c.find(is_tag)
                    row[k] = (_text_of(node_is) if node_is is not None else None, "s" if node_is is not None else "n",
                              formula)
                    continue
                value, dtype = cells.value(r, t, c.get("s"), c.findtext(v_tag) or None)
                row[k] = (value, dtype, formula)
            yield r, row
    except _TooLong:
        raise _Cut(state.last + 1, f"a sheet row of at most {XLSX_MAX_ROW_XML:,} bytes of XML",
                   f"more after sheet row {state.last:,}: rows up to it are read, the rest is not") from None
    except ET.ParseError as exc:
        short = "no element found" in str(exc) or "unclosed token" in str(exc)
        raise _Cut(state.last + 1, "a complete, well-formed sheet",
                   (f"the sheet's XML is cut short after sheet row {state.last:,} (a truncated file)" if short else
                    f"XML that is not well-formed after sheet row {state.last:,} ({str(exc)[:80]})")
                   + ": rows up to it are read, the rest is lost") from None
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise _Cut(state.last + 1, "a complete sheet",
                   f"the sheet's part is cut short or damaged ({type(exc).__name__}) after sheet row {state.last:,}: "
                   "rows up to it are read, the rest is not") from None


_REF_RE = re.compile(r"\$?([A-Za-z]+)\$?\d+$")


def _row_number(text: str | None, last: int) -> int:
    if not text:
        return last + 1
    try:
        return int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if value.is_integer():
            return int(value)
    raise _Cut(last + 1, "a row number", f"{text[:20]!r} after sheet row {last:,}: rows up to it are read, the rest is not")


def _assemble(out: Table, rows: Iterator[tuple[int, dict[int, tuple[Any, str, str | None]]]]) -> None:
    """Rows of (sheet row number, {column index: (value, openpyxl data type, formula)}) into the table:
    the first non-empty row is the header; blank rows are skipped as pandas skips them. Stops at
    MAX_TABLE_ROWS rows or MAX_TABLE_CELLS cells (rows x header columns), and where the reader
    cuts the sheet (_Cut): the rows before are kept and a remark says what was not read."""
    header: list[str] = []
    cap = MAX_TABLE_ROWS
    try:
        for r, cells in rows:
            if not any(cell[0] is not None for cell in cells.values()):
                continue  # a blank row: pandas skips it
            if not header:
                width = max(k for k, cell in cells.items() if cell[0] is not None) + 1
                header = _header([cells.get(k, _BLANK)[0] for k in range(width)])
                out.columns = header
                cap = _row_cap(width)
                continue
            if len(out.rows) >= cap:
                _rows_cut(out, r, cap, "sheet row")
                break
            values: dict[str, Any] = {}
            notes: dict[str, str] = {}
            for k, name in enumerate(header):
                value, dtype, formula = cells.get(k, _BLANK)
                read, note = _cell(value, dtype)
                if formula is not None:
                    note = f"written as a formula ({formula[:40]}): read as its cached value {read!r}"
                values[name] = read
                if note:
                    notes[name] = note
            out.rows.append(values)
            out.lines.append(r)
            out.notes.append(notes or _NO_NOTES)
    except _Cut as cut:
        _remark(out, cut.line, cut.expected, cut.got, CUT_KIND)
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()


def _row_cap(columns: int) -> int:
    """The rows kept of a table of this many columns: MAX_TABLE_ROWS, fewer when rows x columns would
    pass MAX_TABLE_CELLS."""
    return min(MAX_TABLE_ROWS, max(1, MAX_TABLE_CELLS // max(1, columns)))


def _rows_cut(out: Table, at: int, cap: int, unit: str) -> None:
    """The remark of a table cut at `cap` rows, the first row not read at `at` ("sheet row" or "line")."""
    why = (f"more than {cap:,} rows" if cap == MAX_TABLE_ROWS else
           f"more than {cap:,} rows of {len(out.columns):,} columns ({MAX_TABLE_CELLS:,} cells)")
    _remark(out, at, f"a table of at most {cap:,} rows",
            f"{why}: the first {cap:,} ({unit}s {out.lines[0]:,} to {out.lines[-1]:,}) are read, "
            f"the rest, from {unit} {at:,} on, is not", CUT_KIND)


_NO_NOTES: dict[str, str] = {}  # shared by the rows without a note (never written to)
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def _number(text: str) -> int | float:
    # openpyxl's reading of a numeric cell: a float when the text has a point or an exponent, else an int
    if "." in text or "E" in text or "e" in text:
        return float(text)
    return int(text)


def _text_of(node: Any) -> str:
    """The text of a shared or inline string: its <t>, or its rich-text runs' <t> (phonetic runs left out)."""
    t = node.find(_NS + "t")
    if t is not None:
        return t.text or ""
    return "".join(r.findtext(_NS + "t") or "" for r in node.findall(_NS + "r"))


_V_RE = re.compile(r"<v>(.*?)</v>", re.S)
_F_RE = re.compile(r"<f\b([^>]*?)(?:/>|>(.*?)</f>)", re.S)
_T_RE = re.compile(r"<t\b[^>]*?(?:/>|>(.*?)</t>)", re.S)
_SI_RE = re.compile(r'<si><t(?: xml:space="preserve")?>([^<]*)</t></si>|<si>(.*?)</si>|<si/>', re.S)
_RPH_RE = re.compile(r"<rPh\b.*?</rPh>", re.S)
_ENTITY_RE = re.compile(r"&(#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_TAG_RE = re.compile(r"<(?!/?(?:c|v|f|is|t|r|rPr|rPh|phoneticPr|row|sheetData)\b)[A-Za-z]", re.S)
_TYPE_RE = re.compile(r'\bt="(\w+)"')


def _entity(m: re.Match[str]) -> str:
    name = m.group(1)
    if name[0] == "#":
        if len(name) > 12:  # beyond any character: an XML parser refuses it
            return "\ufffd"
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    return _ENTITIES[name]


def _xml_text(raw: str) -> str:
    """Element text as an XML parser gives it: line ends normalised, then character references resolved."""
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    return _ENTITY_RE.sub(_entity, raw) if "&" in raw else raw


def read_delimited(path: Path, *, delimiter: str) -> Table:
    """A CSV or TSV table as pandas' `read_csv` gives it (missing strings, numeric columns), read a
    line at a time: a physical line longer than TABLE_MAX_LINE characters, a record the csv module
    refuses (a field over its limit) or more than MAX_TABLE_ROWS rows stop the reading there, and the
    rows before are kept with a remark saying what was not read."""
    out = Table()
    what = "TSV" if delimiter == "\t" else "CSV"
    try:
        raw = open_regular(path)
    except OSError as exc:
        out.error = _os_reason(exc)
        return out
    reader = None
    try:
        with io.TextIOWrapper(raw, encoding="utf-8", newline="") as fh:
            reader = csv.reader(_text_lines(fh), delimiter=delimiter)
            header: list[str] | None = None
            cap = MAX_TABLE_ROWS
            for row in reader:
                line = reader.line_num
                if header is None:
                    if not row:
                        continue
                    header = _header(row)
                    out.columns = header
                    cap = _row_cap(len(header))
                    continue
                if not row or all(c == "" for c in row) and len(row) <= 1:
                    continue
                if len(out.rows) >= cap:
                    _rows_cut(out, line, cap, "line")
                    break
                values: dict[str, Any] = {}
                notes: dict[str, str] = {}
                for k, name in enumerate(header):
                    text = row[k] if k < len(row) else ""
                    if text in NA_STRINGS:
                        values[name] = math.nan
                        notes[name] = (f"the text {text!r} read as missing" if text else "empty cell read as missing") + \
                            " (the harness scores the text 'nan')"
                    else:
                        values[name] = text
                out.rows.append(values)
                out.lines.append(line)
                out.notes.append(notes or _NO_NOTES)
    except _Cut as cut:
        _remark(out, cut.line if cut.line is not None else (reader.line_num + 1 if reader else None), cut.expected,
                cut.got if out.rows else cut.got.split(":")[0], CUT_KIND)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        if not out.rows:
            out.error = f"not a readable {what} table ({exc})"
            out.columns = []
            return out
        line = reader.line_num if reader is not None else 0
        _remark(out, line, f"a readable {what} record", f"{str(exc)[:120]}: the {len(out.rows):,} rows before line "
                f"{line:,} are read, the rest is not", CUT_KIND)
    if not out.columns and not out.error:
        cut_ = next((r for r in out.remarks if r.kind == CUT_KIND), None)
        out.error = f"no header row read: {cut_.got}" if cut_ is not None else "an empty file (no header row)"
    _finish(out)
    _infer(out, from_text=True)
    return out


def _text_lines(fh: io.TextIOWrapper) -> Iterator[str]:
    """The lines of a text file as the csv module asks for them, each at most TABLE_MAX_LINE characters
    (never more held): a longer one stops the table there (_Cut)."""
    number = 0
    while line := fh.readline(TABLE_MAX_LINE + 1):
        number += 1
        if len(line) > TABLE_MAX_LINE:
            raise _Cut(None, f"a line of at most {TABLE_MAX_LINE:,} characters",
                       f"a longer line (physical line {number:,}; a file without line ends?): rows before it are read, "
                       "the rest is not")
        yield line


def read_json_records(path: Path) -> Table:
    """A `.json` prediction table (`PRED_FORMAT=json`): a list of records, `NaN` tokens as missing.
    Parsed whole, so only up to JSON_TABLE_MAX_BYTES."""
    import json

    out = Table()
    try:
        data = json.loads(read_capped(path, JSON_TABLE_MAX_BYTES).decode("utf-8"))
    except OSError as exc:
        out.error = _os_reason(exc)
        return out
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        out.error = f"not JSON ({exc})"
        return out
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        out.error = "a JSON list of records"
        return out
    if len(data) > MAX_TABLE_ROWS:
        _remark(out, None, f"a table of at most {MAX_TABLE_ROWS:,} rows",
                f"{len(data):,} records: the first {MAX_TABLE_ROWS:,} are read, the rest is not", CUT_KIND)
        del data[MAX_TABLE_ROWS:]
    cols: dict[str, None] = {}
    for k, rec in enumerate(data):
        for key in rec:
            cols.setdefault(str(key), None)
        out.rows.append({str(key): (math.nan if v is None else v) for key, v in rec.items()})
        out.lines.append(k)
        out.notes.append({str(key): "null read as missing" for key, v in rec.items() if v is None})
    out.columns = list(cols)
    return out


def _finish(out: Table) -> None:
    """One remark per kind for the remarks past REMARKS_KEPT, counting them."""
    for kind, n in out.remark_counts.items():
        if n > REMARKS_KEPT:
            out.remarks.append(Remark(None, "…", f"{n - REMARKS_KEPT:,} more {kind} (not listed)", kind))


def read_table(path: Path) -> Table:
    """The table a prediction or evaluation file holds (by its extension), read where it can be killed
    (scoring/guard.py): a file over the read limits is a table whose `error` says so."""
    with guard.reading(path, bounded=path.suffix.lower() != ".xlsx") as refused:
        if refused is not None:
            out = Table()
            out.error = refused.got
            return out
        return _read_table(path)


def _read_table(path: Path) -> Table:
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        return read_xlsx(path)
    if suffix == ".tsv":
        return read_delimited(path, delimiter="\t")
    if suffix == ".csv":
        return read_delimited(path, delimiter=",")
    if suffix == ".json":
        return read_json_records(path)
    out = Table()
    out.error = f"not a table this reader knows ({suffix or 'no extension'})"
    return out

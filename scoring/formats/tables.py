"""Tables as a harness read them back: VLMEvalKit writes `.xlsx` with xlsxwriter and reads every
table with pandas' defaults. What pandas then hands to the harness's scoring is what these
readers return, without pandas (scoring/ never imports it):

- a blank cell, and a cell holding exactly one of pandas' missing-value strings (`None`, `N/A`,
  `NA`, `nan`, `NULL`, `#N/A`, …) is missing: here `math.nan`, which the harness turns into the
  text `nan` with `str()`;
- a formula cell (xlsxwriter writes an answer starting with `=` as a formula unless told not to)
  reads as its cached value, `0` from xlsxwriter;
- a number whose value is integral reads as an int; a numeric column with a missing cell reads as
  floats (`1` becomes `1.0`); a column holding any text keeps its ints as ints;
- fully blank rows are dropped (pandas' `skip_blank_lines`); a header cell left blank is
  `Unnamed: <k>`, a repeated header `name.1`.

Every cell that changed on the way gets a note (`Cell.note`), so a row can say why the harness
scored `nan`. `.xlsx` is read by streaming its sheet's XML once (openpyxl, read-only, for what that
reader does not handle); nothing in a workbook is executed."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import guard

__all__ = ["NA_STRINGS", "Table", "is_na", "read_table", "read_xlsx", "read_delimited", "EXCEL_CELL_LIMIT"]

# pandas' default missing-value strings (pandas._libs.parsers STR_NA_VALUES)
NA_STRINGS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                        "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
EXCEL_CELL_LIMIT = 32_767  # xlsxwriter cuts longer strings to this many characters
MAX_ROWS = 2_000_000
_ESCAPED = re.compile(r"_x[0-9A-Fa-f]{4}_")


def is_na(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


@dataclass(slots=True)
class Table:
    """Rows as dicts by column name, each with its sheet row (the header is row 1) or file line,
    and per row the notes of the cells that changed on the way (column -> note)."""

    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)
    error: str = ""  # why the table could not be read at all


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
    """The first sheet as pandas' `read_excel` gives it (see the module text). The sheet's XML is read
    once, streamed (`_stream_xlsx`: cell values, types and formulas in one pass); a workbook that holds
    what that reader does not handle (date-formatted cells, shared formulas, a sheet it cannot find) is
    read with openpyxl, in read-only mode, as before."""
    streamed = _stream_xlsx(path)
    if streamed is not None:
        return streamed
    out = Table()
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - a dependency
        out.error = "openpyxl is not installed (pip install openpyxl)"
        return out
    try:
        formulas = _formula_cells(path, openpyxl)
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # zip, XML or openpyxl errors: the file is not a readable workbook
        out.error = f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})"
        return out
    try:
        ws = wb.worksheets[0] if wb.worksheets else None
        if ws is None:
            out.error = "a workbook without a sheet"
            return out
        rows = ((r, [(c.value, getattr(c, "data_type", "n")) for c in row]) for r, row in enumerate(ws.iter_rows(), start=1))
        _assemble(out, rows, formulas)
    except Exception as exc:  # a damaged sheet part
        out.error = f"the sheet could not be read ({type(exc).__name__}: {exc})"
    finally:
        wb.close()
    if not out.columns and not out.error:
        out.error = "an empty sheet (no header row)"
    _infer(out, from_text=False)
    return out


def _assemble(out: Table, rows: Any, formulas: dict[tuple[int, int], str]) -> None:
    """Rows of (sheet row number, [(value, openpyxl data type), ...]) into the table: the first
    non-empty row is the header; blank rows are skipped as pandas skips them."""
    header: list[str] | None = None
    for r, cells in rows:
        while cells and cells[-1][0] is None:
            cells.pop()
        if header is None:
            if not cells:
                continue
            header = _header([v for v, _ in cells])
            out.columns = header
            continue
        if not cells:
            continue  # a blank row: pandas skips it
        if len(out.rows) >= MAX_ROWS:
            out.error = f"more than {MAX_ROWS:,} rows; the rest is not read"
            break
        values: dict[str, Any] = {}
        notes: dict[str, str] = {}
        for k, name in enumerate(header):
            value, dtype = cells[k] if k < len(cells) else (None, "n")
            read, note = _cell(value, dtype)
            if (r, k) in formulas:
                note = f"written as a formula ({formulas[(r, k)][:40]}): read as its cached value {read!r}"
            values[name] = read
            if note:
                notes[name] = note
        out.rows.append(values)
        out.lines.append(r)
        out.notes.append(notes)


_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_DATE_FORMATS = frozenset({*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)})  # built-in date/time formats
_COLUMN = re.compile(r"[A-Z]+")


class _Unsupported(Exception):
    """What the streaming reader leaves to openpyxl."""


def _column(ref: str) -> int:
    m = _COLUMN.match(ref)
    if not m:
        raise _Unsupported("a cell reference without a column")
    k = 0
    for ch in m.group(0):
        k = k * 26 + ord(ch) - 64
    return k - 1


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


def _first_sheet(z: Any) -> str:
    import xml.etree.ElementTree as ET

    book = ET.fromstring(z.read("xl/workbook.xml"))
    sheet = book.find(f"{_NS}sheets/{_NS}sheet")
    if sheet is None:
        raise _Unsupported("no sheet")
    rid = sheet.get(_REL_NS + "id")
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    for rel in rels.iter(_PKG_REL + "Relationship"):
        if rel.get("Id") == rid:
            target = rel.get("Target", "")
            return target.lstrip("/") if target.startswith("/") else "xl/" + target
    raise _Unsupported("the first sheet's part is not named")


def _date_styles(z: Any) -> bool:
    """Whether any cell style applies a date or time format (openpyxl turns such numbers into dates)."""
    import xml.etree.ElementTree as ET

    if "xl/styles.xml" not in z.namelist():
        return False
    styles = ET.fromstring(z.read("xl/styles.xml"))
    custom = {}
    for fmt in styles.iter(_NS + "numFmt"):
        code = re.sub(r'"[^"]*"|\\.|\[[^]]*\]', "", fmt.get("formatCode", "")).lower()
        custom[int(fmt.get("numFmtId", "0"))] = any(ch in code for ch in "dmyhs")
    xfs = styles.find(_NS + "cellXfs")
    for xf in (xfs if xfs is not None else ()):
        nid = int(xf.get("numFmtId", "0"))
        if nid in _DATE_FORMATS or custom.get(nid, False):
            return True
    return False


_V_RE = re.compile(r"<v>(.*?)</v>", re.S)
_F_RE = re.compile(r"<f\b([^>]*?)(?:/>|>(.*?)</f>)", re.S)
_T_RE = re.compile(r"<t\b[^>]*?(?:/>|>(.*?)</t>)", re.S)
_SI_RE = re.compile(r'<si><t(?: xml:space="preserve")?>([^<]*)</t></si>|<si>(.*?)</si>|<si/>', re.S)
_RPH_RE = re.compile(r"<rPh\b.*?</rPh>", re.S)
_ENTITY_RE = re.compile(r"&(#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_TAG_RE = re.compile(r"<(?!/?(?:c|v|f|is|t|r|rPr|rPh|phoneticPr|row|sheetData)\b)[A-Za-z]", re.S)
REGEX_MAX_BYTES = 256 * 1024 * 1024  # a sheet part larger than this is parsed in a stream, not read whole


def _entity(m: re.Match[str]) -> str:
    name = m.group(1)
    if name[0] == "#":
        return chr(int(name[2:], 16) if name[1] in "xX" else int(name[1:]))
    return _ENTITIES[name]


def _xml_text(raw: str) -> str:
    """Element text as an XML parser gives it: line ends normalised, then character references resolved."""
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    return _ENTITY_RE.sub(_entity, raw) if "&" in raw else raw


def _regex_strings(text: str) -> list[str]:
    out = []
    for plain, body in _SI_RE.findall(text):
        if plain or not body:
            out.append(_xml_text(plain) if "&" in plain or "\r" in plain else plain)
        else:
            out.append("".join(_xml_text(t or "") for t in _T_RE.findall(_RPH_RE.sub("", body) if "<rPh" in body else body)))
    # openpyxl's reading of shared strings drops every `x005F_` (the escape of a literal `_xHHHH_`)
    return [x.replace("x005F_", "") if "x005F_" in x else x for x in out]


_CELL_R_RE = re.compile(r'<c r="([A-Z]+)(\d+)"(?:[^>]*?\bt="(\w+)")?[^>]*?(?:/>|>(.*?)</c>)', re.S)
_TYPE_RE = re.compile(r'\bt="(\w+)"')


def _regex_sheet(text: str, strings: list[str]) -> tuple[list[tuple[int, list[tuple[Any, str]]]], dict[tuple[int, int], str]]:
    """The rows of a sheet part written as xlsxwriter and openpyxl write it (default namespace, each cell
    with its reference first, no CDATA), read with regular expressions in one pass; _Unsupported for
    anything else (the streamed XML parser reads it then)."""
    start, end = text.find("<sheetData"), text.rfind("</sheetData>")
    if start < 0:
        raise _Unsupported("no sheetData element")
    data = text[start:end] if end > start else ""
    if "<![CDATA[" in data or _TAG_RE.search(data, data.find(">") + 1):
        raise _Unsupported("CDATA or an element this reader does not know")
    found = _CELL_R_RE.findall(data)
    if len(found) != data.count("<c ") + data.count("<c>") + data.count("<c/>"):
        raise _Unsupported("a cell without its reference first")
    rows: list[tuple[int, list[tuple[Any, str]]]] = []
    formulas: dict[tuple[int, int], str] = {}
    columns: dict[str, int] = {}
    cells: list[tuple[Any, str]] = []
    current = -1
    for letters, number, kind_of_cell, body in found:
        r = int(number)
        if r != current:
            if r < current:
                raise _Unsupported("rows out of order")
            cells = []
            rows.append((r, cells))
            current = r
        k = columns.get(letters)
        if k is None:
            k = columns[letters] = _column(letters)
        if k < len(cells):
            raise _Unsupported("cells out of order")
        while len(cells) < k:
            cells.append((None, "n"))
        t = kind_of_cell or "n"
        v: str | None
        if body.startswith("<v>") and body.endswith("</v>") and "<" not in body[3:-4]:
            v = body[3:-4] or None
            if v is not None and ("&" in v or "\r" in v):
                v = _xml_text(v)
        else:
            if "<f" in body:
                fm = _F_RE.search(body)
                if fm is not None:
                    kind = _TYPE_RE.search(fm.group(1))
                    if kind is not None and kind.group(1) in ("shared", "array", "dataTable"):
                        raise _Unsupported("a shared or array formula")
                    formulas[(r, k)] = "=" + _xml_text(fm.group(2) or "")
            vm = _V_RE.search(body) if "<v" in body else None
            v = (_xml_text(vm.group(1)) or None) if vm is not None else None
            if t == "inlineStr":
                cells.append(("".join(_xml_text(x or "") for x in _T_RE.findall(_RPH_RE.sub("", body))) if "<is" in body
                              else None, "s"))
                continue
        if v is None:
            cells.append((None, "n"))
        elif t == "s":
            cells.append((strings[int(v)], "s"))
        elif t == "n":
            cells.append((_number(v), "n"))
        elif t == "str" or t == "inlineStr":
            cells.append((v, "s"))
        elif t == "b":
            cells.append((bool(int(v)), "b"))
        elif t == "e":
            cells.append((v, "e"))
        else:
            raise _Unsupported(f"cell type {t}")
    return rows, formulas


def _read_part(z: Any, name: str) -> str | None:
    """A package part as text when it is UTF-8 and small enough to read whole; None otherwise."""
    info = z.getinfo(name)
    if info.file_size > REGEX_MAX_BYTES:
        return None
    raw = z.read(name)
    head = raw[:200].lower()
    if b"encoding=" in head and b"utf-8" not in head:
        return None
    return raw.decode("utf-8-sig")


def _stream_xlsx(path: Path) -> Table | None:
    """The first sheet read straight from its XML in one streamed pass (values, types, formulas),
    giving what openpyxl's read-only reader gives; None when the workbook needs openpyxl (date
    formats, shared formulas, an unusual package). Nothing in the workbook is executed."""
    import xml.etree.ElementTree as ET
    import zipfile

    out = Table()
    try:
        with zipfile.ZipFile(path) as z:
            if _date_styles(z):
                return None
            sheet = _first_sheet(z)
            names = set(z.namelist())
            shared = _read_part(z, "xl/sharedStrings.xml") if "xl/sharedStrings.xml" in names else ""
            part = _read_part(z, sheet)
            if shared is not None and part is not None:
                try:
                    rows_, formulas_ = _regex_sheet(part, _regex_strings(shared))
                except _Unsupported:
                    pass
                else:
                    _assemble(out, iter(rows_), formulas_)
                    if not out.columns and not out.error:
                        out.error = "an empty sheet (no header row)"
                    _infer(out, from_text=False)
                    return out
            strings: list[str] = []
            if "xl/sharedStrings.xml" in names:
                with z.open("xl/sharedStrings.xml") as fh:
                    for _, node in ET.iterparse(fh):
                        if node.tag == _NS + "si":
                            strings.append(_text_of(node).replace("x005F_", ""))
                            node.clear()
            formulas: dict[tuple[int, int], str] = {}
            rows: list[tuple[int, list[tuple[Any, str]]]] = []
            row_tag, cell_tag, v_tag, f_tag, is_tag = _NS + "row", _NS + "c", _NS + "v", _NS + "f", _NS + "is"
            last = 0
            with z.open(sheet) as fh:
                for _, node in ET.iterparse(fh):
                    if node.tag != row_tag:
                        continue
                    r = int(node.get("r") or last + 1)
                    last = r
                    cells: list[tuple[Any, str]] = []
                    for c in node.iter(cell_tag):
                        ref = c.get("r")
                        k = _column(ref) if ref else len(cells)
                        while len(cells) < k:
                            cells.append((None, "n"))
                        t = c.get("t", "n")
                        f = c.find(f_tag)
                        if f is not None:
                            if f.get("t") in ("shared", "array", "dataTable"):
                                raise _Unsupported("a shared or array formula")
                            formulas[(r, k)] = "=" + (f.text or "")
                        v = c.findtext(v_tag) or None
                        if t == "inlineStr":
                            node_is = c.find(is_tag)
                            cells.append((_text_of(node_is) if node_is is not None else None, "s"))
                        elif v is None:
                            cells.append((None, "n"))
                        elif t == "s":
                            cells.append((strings[int(v)], "s"))
                        elif t == "str":
                            cells.append((v, "s"))
                        elif t == "b":
                            cells.append((bool(int(v)), "b"))
                        elif t == "e":
                            cells.append((v, "e"))
                        elif t == "n":
                            cells.append((_number(v), "n"))
                        else:
                            raise _Unsupported(f"cell type {t}")
                    node.clear()
                    rows.append((r, cells))
    except _Unsupported:
        return None
    except (OSError, KeyError, IndexError, ValueError, zipfile.BadZipFile, ET.ParseError, RuntimeError):
        return None  # openpyxl reads it again and says what is wrong
    _assemble(out, iter(rows), formulas)
    if not out.columns and not out.error:
        out.error = "an empty sheet (no header row)"
    _infer(out, from_text=False)
    return out


def _has_formulas(path: Path) -> bool:
    """Whether any worksheet part of the workbook holds a formula element (`<f>`), read in chunks:
    a workbook without one (VLMEvalKit since 2026-07) is parsed once, not twice."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if not (name.startswith("xl/worksheets/") and name.endswith(".xml")):
                    continue
                tail = b""
                with z.open(name) as fh:
                    while chunk := fh.read(1 << 20):
                        data = tail + chunk
                        if b"<f>" in data or b"<f " in data or b"<x:f" in data:
                            return True
                        tail = data[-8:]
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError):
        return True  # let openpyxl say what is wrong
    return False


def _formula_cells(path: Path, openpyxl: Any) -> dict[tuple[int, int], str]:
    """(sheet row, column index) -> formula text of the first sheet's formula cells."""
    if not _has_formulas(path):
        return {}
    wb = openpyxl.load_workbook(path, read_only=True, data_only=False, keep_links=False)
    found: dict[tuple[int, int], str] = {}
    try:
        if wb.worksheets:
            for r, row in enumerate(wb.worksheets[0].iter_rows(), start=1):
                for k, c in enumerate(row):
                    if getattr(c, "data_type", "") == "f":
                        found[(r, k)] = str(c.value)
    finally:
        wb.close()
    return found


def read_delimited(path: Path, *, delimiter: str) -> Table:
    """A CSV or TSV table as pandas' `read_csv` gives it (missing strings, numeric columns)."""
    out = Table()
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            header: list[str] | None = None
            for row in reader:
                line = reader.line_num
                if header is None:
                    if not row:
                        continue
                    header = _header(row)
                    out.columns = header
                    continue
                if not row or all(c == "" for c in row) and len(row) <= 1:
                    continue
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
                out.notes.append(notes)
                if len(out.rows) >= MAX_ROWS:
                    out.error = f"more than {MAX_ROWS:,} rows; the rest is not read"
                    break
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        out.error = f"not a readable {'TSV' if delimiter == chr(9) else 'CSV'} table ({exc})"
        return out
    if not out.columns and not out.error:
        out.error = "an empty file (no header row)"
    _infer(out, from_text=True)
    return out


def read_json_records(path: Path) -> Table:
    """A `.json` prediction table (`PRED_FORMAT=json`): a list of records, `NaN` tokens as missing."""
    import json

    out = Table()
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        out.error = f"not JSON ({exc})"
        return out
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        out.error = "a JSON list of records"
        return out
    cols: dict[str, None] = {}
    for k, rec in enumerate(data):
        for key in rec:
            cols.setdefault(str(key), None)
        out.rows.append({str(key): (math.nan if v is None else v) for key, v in rec.items()})
        out.lines.append(k)
        out.notes.append({str(key): "null read as missing" for key, v in rec.items() if v is None})
    out.columns = list(cols)
    return out


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

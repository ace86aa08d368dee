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
scored `nan`. `.xlsx` is read with openpyxl in read-only mode; nothing in a workbook is executed."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    """The first sheet as pandas' `read_excel` gives it (see the module text)."""
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
        header: list[str] | None = None
        for r, row in enumerate(ws.iter_rows(), start=1):
            cells = [(c.value, getattr(c, "data_type", "n")) for c in row]
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
    except Exception as exc:  # a damaged sheet part
        out.error = f"the sheet could not be read ({type(exc).__name__}: {exc})"
    finally:
        wb.close()
    if header is None and not out.error:
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

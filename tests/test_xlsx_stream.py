"""The streamed .xlsx reader (scoring/formats/tables.py: one pass over the sheet's XML, regular
expressions first, the streamed XML parser next) gives exactly what the openpyxl read-only reader
gives, quirks included: formulas written for answers starting with `=`, blank and missing-value
cells, a cell cut at 32,767 characters, control characters escaped as `_xHHHH_` and a literal
`_xHHHH_` escaped again, entities, line ends, ints and floats. Workbooks written with xlsxwriter as
VLMEvalKit writes them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from scoring.formats import tables

ROWS = [["index", "question", "answer", "prediction", "score", "flag", "", "x"],
        [0, "q0", "['a', 'b']", "=SUM(1,2)", 1.0, True, None, "http://example.invalid/x"],
        [1, "q1", "None", "", 0.0, False, "z", "  spaced  "],
        [2, "q\x01ctl", "N/A", "x" * 40000, 0.5, None, None, 3],
        [],
        [4, "nan", "[\"q'uote\", 'd\"q']", "#N/A", 2, None, None, 2.5],
        [5, None, None, None, None, None, None, None],
        [6, "é ü 漢字", "=", "=A1", 1e20, None, None, -0.0],
        [7, "a & b <c> \"q\"", "line1\r\nline2\rx", " lead", 1.5e-7, "&amp;", "_x0001_", "x\ty"]]


def _write(path: Path, **options) -> Path:
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(path), {"strings_to_urls": True, **options})
    ws = wb.add_worksheet()
    for r, row in enumerate(ROWS):
        for c, v in enumerate(row):
            if v is not None:
                ws.write(r, c, v)
    wb.close()
    return path


def _openpyxl(path: Path) -> tables.Table:
    """The table openpyxl's read-only reader gives (values with data_only, formulas from a second
    pass), built by the same table assembly: the oracle the streamed reader is held to."""
    import openpyxl

    formulas: dict[tuple[int, int], str] = {}
    wb = openpyxl.load_workbook(path, read_only=True, data_only=False, keep_links=False)
    for r, row in enumerate(wb.worksheets[0].iter_rows(), start=1):
        for k, c in enumerate(row):
            if getattr(c, "data_type", "") == "f":
                formulas[(r, k)] = str(c.value)
    wb.close()
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    rows = ((r, {k: (c.value, getattr(c, "data_type", "n"), formulas.get((r, k))) for k, c in enumerate(row)})
            for r, row in enumerate(wb.worksheets[0].iter_rows(), start=1))
    out = tables.Table()
    tables._assemble(out, rows)
    wb.close()
    tables._infer(out, from_text=False)
    return out


def _plain(t: tables.Table) -> tuple:
    rows = [{k: "NaN" if isinstance(v, float) and math.isnan(v) else (type(v).__name__, v) for k, v in r.items()} for r in t.rows]
    return t.columns, rows, t.lines, t.notes, t.error


@pytest.mark.parametrize("options", [{}, {"strings_to_formulas": False}, {"constant_memory": True}])
@pytest.mark.parametrize("regex", [True, False])
def test_streamed_reader_reads_what_openpyxl_reads(tmp_path, monkeypatch, options, regex):
    path = _write(tmp_path / "t.xlsx", **options)
    if not regex:  # the streamed XML parser, as for a sheet the regular expressions do not take
        def refuse(*_):
            raise tables._Unsupported("test")
            yield
        monkeypatch.setattr(tables, "_regex_rows", refuse)
    fast = tables.read_xlsx(path)
    assert not fast.error and not fast.remarks
    assert _plain(fast) == _plain(_openpyxl(path))
    # a literal `_x0001_` is written `_x005F_x0001_`; openpyxl drops `x005F_` from shared strings, not inline ones
    literal = "_x005F_x0001_" if options.get("constant_memory") else "_x0001_"
    assert fast.rows[6]["Unnamed: 6"] == literal and fast.rows[2]["question"] == "q_x0001_ctl"
    assert fast.rows[6]["answer"] == "line1_x000D_\nline2_x000D_x" and fast.rows[0]["score"] == 1 and type(fast.rows[0]["score"]) is float


DATE_FORMATS = ["yyyy-mm-dd", "mm-dd-yy", "h:mm:ss", "[h]:mm:ss", "[mm]:ss", "mm:ss", "d-mmm-yy h:mm AM/PM",
                '"Day" 0', "[Red]0.00", "[$-409]dddd, mmmm dd, yyyy", "0.00%", "@", "yyyy-mm-dd;@", "0;[h]"]
DATE_VALUES = [0, 0.25, 0.99999999, 1, 59, 60, 61, 45000.5, 45000.123456789, -1, 1e7, 2958465.9999999, 3e6, 12.5]


@pytest.mark.parametrize("date_1904", [False, True])
@pytest.mark.parametrize("regex", [True, False])
def test_date_formatted_numbers_read_as_openpyxl_reads_them(tmp_path, monkeypatch, date_1904, regex):
    """Dates, times and durations under built-in and custom formats (and numbers under formats that
    only look like dates), in both epochs, out-of-range serials included: the text of what openpyxl
    makes of each, without openpyxl (whose reader trusts the sheet's declared dimension)."""
    import datetime
    import warnings

    import xlsxwriter

    path = tmp_path / "d.xlsx"
    wb = xlsxwriter.Workbook(str(path), {"date_1904": date_1904})
    ws = wb.add_worksheet()
    ws.write_row(0, 0, ["index", *DATE_FORMATS])
    styles = [wb.add_format({"num_format": f}) for f in DATE_FORMATS]
    builtin = [wb.add_format({"num_format": n}) for n in (14, 22, 45, 46, 47, 30)]
    ws.write_row(0, len(DATE_FORMATS) + 1, [f"builtin{n}" for n in (14, 22, 45, 46, 47, 30)])
    for r, value in enumerate(DATE_VALUES, start=1):
        ws.write(r, 0, r)
        for k, style in enumerate(styles + [None] + builtin, start=1):
            if style is not None:
                ws.write_number(r, k, value, style)
    wb.close()
    if not regex:
        def refuse(*_):
            raise tables._Unsupported("test")
            yield
        monkeypatch.setattr(tables, "_regex_rows", refuse)
    fast = tables.read_xlsx(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns of serials outside the dates it knows
        oracle = _openpyxl(path)
    assert _plain(fast) == _plain(oracle)
    epoch = datetime.datetime(1904, 1, 1) if date_1904 else datetime.datetime(1899, 12, 30)
    assert fast.rows[7]["yyyy-mm-dd"] == str(epoch + datetime.timedelta(days=45000.5))  # row 8: 45000.5
    assert fast.rows[1]["h:mm:ss"] == "06:00:00" and fast.rows[1]["[h]:mm:ss"] == "6:00:00"
    assert fast.rows[13]["\"Day\" 0"] == 12.5 and fast.rows[13]["0.00%"] == 12.5  # formats that are not dates

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


def _openpyxl(path: Path, monkeypatch) -> tables.Table:
    with monkeypatch.context() as m:
        m.setattr(tables, "_stream_xlsx", lambda p: None)
        return tables.read_xlsx(path)


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
        monkeypatch.setattr(tables, "_regex_sheet", refuse)
    fast = tables._stream_xlsx(path)
    assert fast is not None
    assert _plain(fast) == _plain(_openpyxl(path, monkeypatch))
    # a literal `_x0001_` is written `_x005F_x0001_`; openpyxl drops `x005F_` from shared strings, not inline ones
    literal = "_x005F_x0001_" if options.get("constant_memory") else "_x0001_"
    assert fast.rows[6]["Unnamed: 6"] == literal and fast.rows[2]["question"] == "q_x0001_ctl"
    assert fast.rows[6]["answer"] == "line1_x000D_\nline2_x000D_x" and fast.rows[0]["score"] == 1 and type(fast.rows[0]["score"]) is float


def test_a_date_formatted_workbook_is_left_to_openpyxl(tmp_path):
    import datetime

    import xlsxwriter

    path = tmp_path / "d.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    ws.write_row(0, 0, ["index", "when"])
    ws.write(1, 0, 1)
    ws.write_datetime(1, 1, datetime.datetime(2026, 7, 1), wb.add_format({"num_format": "yyyy-mm-dd"}))
    wb.close()
    assert tables._stream_xlsx(path) is None
    assert tables.read_xlsx(path).rows[0]["when"] == "2026-07-01 00:00:00"

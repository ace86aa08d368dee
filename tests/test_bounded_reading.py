"""Issue 35 items 2 and 6: every dimension of a file a harness or a user left is capped while reading,
and the smaller messages are honest. Each hostile input is generated here, of bounded size on disk
(a 2 KB workbook claiming a billion cells, a sparse file costing no disk), beside good runs; each
test asserts the file is named with the reason, the rest of the folder is kept, and -- where the
input could take memory -- the reading's peak memory, measured in a fresh process whose address
space is limited (tests/hostile_kit.py `peak`), stays under a ceiling."""

from __future__ import annotations

import json
import os
import socket
import zipfile
from pathlib import Path

import pytest
import xlsxwriter

from hostile_kit import (
    HEADER,
    SHEET_HEAD,
    SHEET_TAIL,
    dimension_xlsx,
    far_column_xlsx,
    inline_row,
    lmms_folder,
    lmms_line,
    many_rows_xlsx,
    peak,
    sparse,
    strings_bomb_xlsx,
    truncated_sheet_xlsx,
    write_xlsx,
)
from scoring import cli, loaders, reading
from scoring.formats import base, open_source, tables
from scoring.problems import LoadResult

ADDRESS = 768 << 20  # the reading's whole address space (Python and scoring's imports need about 250 MB of it)
HEADROOM_MB = 120  # what a bounded reading may add to the peak of reading a good three-row table (see _ceiling)
HANG = 300.0  # a hang guard far above the second or two each reading takes
_BASELINE: list[float] = []


def _ceiling() -> float:
    """The peak resident memory a reading of a hostile file may reach: that of the same child reading a
    good three-row table (Python, scoring's imports: about 250 MB, more or less by what the machine's
    libraries map) plus HEADROOM_MB. Measured once, in a child like the others: a fixed number failed
    when the imports alone came to 320 MB in a full run. The unbounded readings these tests catch take
    gigabytes."""
    if not _BASELINE:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            good = good_table(Path(folder) / "m" / "m_DocVQA_VAL.xlsx")
            rc, mb, out = peak(OPEN.format(path=str(good)), limit=ADDRESS, timeout=HANG)
        assert rc == 0, out
        _BASELINE.append(mb)
    return _BASELINE[0] + HEADROOM_MB


def good_table(path: Path, rows: int = 3) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    ws.write_row(0, 0, HEADER)
    for r in range(1, rows + 1):
        ws.write_row(r, 0, [r, f"q{r}", f"['a{r}']", f"a{r}"])
    wb.close()
    return path


def xml_path(monkeypatch) -> None:
    """Sheets read by the streamed XML parser, as those the regular expressions do not take are."""
    def refuse(*_):
        raise tables._Unsupported("test")
        yield

    monkeypatch.setattr(tables, "_regex_rows", refuse)


def work_dir(tmp_path: Path, make) -> Path:
    """A VLMEvalKit work dir: model `bad` holding the hostile table, model `good` a good one."""
    work = tmp_path / "work"
    (work / "bad").mkdir(parents=True)
    make(work / "bad" / "bad_DocVQA_VAL.xlsx")
    good_table(work / "good" / "good_DocVQA_VAL.xlsx")
    return work


OPEN = """
import json, sys
from scoring.formats import open_source
src = open_source(sys.argv[1] if len(sys.argv) > 1 else {path!r})
print(json.dumps({{"runs": {{r.name: len(r.rows) for r in src.runs}},
                  "problems": [[p.file, p.line, p.kind, p.expected, p.got] for p in src.problems]}}))
"""


def open_in_child(path: Path) -> tuple[dict, float]:
    """open_source(path) in a fresh process under ADDRESS: (what it read, its peak RSS in MB)."""
    rc, mb, out = peak(OPEN.format(path=str(path)), limit=ADDRESS, timeout=HANG)
    assert rc == 0, out
    return json.loads(out.strip().splitlines()[-1]), mb


def problems_of(found: dict, file_end: str) -> list[list]:
    return [p for p in found["problems"] if p[0].endswith(file_end)]


# ----------------------------------------------------------------------------- xlsx


def test_a_cell_at_column_zzzzzzzzz_is_named_not_padded(tmp_path):
    found, mb = open_in_child(work_dir(tmp_path, far_column_xlsx))
    assert found["runs"] == {"bad/DocVQA_VAL": 3, "good/DocVQA_VAL": 3}  # the bad table's other cells and rows kept
    (p,) = problems_of(found, "bad_DocVQA_VAL.xlsx")
    assert p[1] == 3 and "column ZZZZZZZZZ" in p[4] and "XFD" in p[3]
    assert mb < _ceiling()


def test_a_sheets_declared_dimension_is_never_trusted(tmp_path):
    """A 2 KB sheet claiming A1:XFD1048576 with a date style (which sent it to openpyxl's read-only
    reader: a million padded rows of 16,384 cells) reads as the four rows it holds."""
    found, mb = open_in_child(work_dir(tmp_path, dimension_xlsx))
    assert found["runs"] == {"bad/DocVQA_VAL": 3, "good/DocVQA_VAL": 3} and found["problems"] == []
    assert mb < _ceiling()
    table = tables.read_xlsx(dimension_xlsx(tmp_path / "d.xlsx"))
    assert table.rows[1]["index"] == "2023-03-15 00:00:00"  # the date-styled number, as openpyxl turns it into a date
    assert table.lines == [2, 3, 1_048_576]


def test_a_shared_strings_bomb_is_refused_before_inflating(tmp_path):
    found, mb = open_in_child(work_dir(tmp_path, lambda p: strings_bomb_xlsx(p, 64 << 20)))
    assert found["runs"] == {"good/DocVQA_VAL": 3}
    (p,) = problems_of(found, "bad_DocVQA_VAL.xlsx")
    assert "xl/sharedStrings.xml would inflate from" in p[4] and "times" in p[4] and "zip bomb" in p[4]
    assert mb < _ceiling()


def test_a_part_over_the_absolute_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "XLSX_MAX_PART_BYTES", 1 << 20)
    table = tables.read_xlsx(many_rows_xlsx(tmp_path / "t.xlsx", 20_000))
    assert table.rows == [] and "would inflate to" in table.error and "1.0 MB a workbook part is read up to" in table.error


def test_shared_strings_past_their_cap_cut_the_table_where_one_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "XLSX_MAX_SHARED_STRINGS", 6)
    path = tmp_path / "s.xlsx"
    wb = xlsxwriter.Workbook(str(path))  # shared strings, in the order first written
    ws = wb.add_worksheet()
    ws.write_row(0, 0, HEADER)
    for r in range(1, 5):
        ws.write_row(r, 0, [r, f"q{r}", "a", "p"])
    wb.close()
    table = tables.read_xlsx(path)
    # strings: index question answer prediction q1 a | p q2 ...: row 2 (sheet row 2) names p, the 7th
    assert table.columns == list(HEADER) and table.rows == [] and not table.error
    (cut,) = [r for r in table.remarks if r.kind == tables.CUT_KIND]
    assert cut.line == 2 and "more than 6 shared strings" in cut.got and "rows before sheet row 2 are read" in cut.got


def test_a_table_over_the_row_cap_keeps_the_first_rows_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "MAX_TABLE_ROWS", 1_000)
    work = work_dir(tmp_path, lambda p: many_rows_xlsx(p, 3_000))
    src = open_source(work)
    runs = {r.name: len(r.rows) for r in src.runs}
    assert runs == {"bad/DocVQA_VAL": 1_000, "good/DocVQA_VAL": 3}  # today: the whole table skipped
    (cut,) = [p for p in src.problems if p.kind == tables.CUT_KIND]
    assert cut.severity == "warning" and cut.line == 1_002
    assert cut.got == ("more than 1,000 rows: the first 1,000 (sheet rows 2 to 1,001) are read, the rest, "
                       "from sheet row 1,002 on, is not")


def test_exactly_the_row_cap_is_no_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "MAX_TABLE_ROWS", 50)
    t = tables.read_xlsx(many_rows_xlsx(tmp_path / "t.xlsx", 50))
    assert len(t.rows) == 50 and not t.remarks and not t.error
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("a,b\n" + "".join(f"{k},x\n" for k in range(50)), encoding="utf-8")
    t = tables.read_delimited(csv_path, delimiter=",")
    assert len(t.rows) == 50 and not t.remarks and not t.error
    csv_path.write_text("a,b\n" + "".join(f"{k},x\n" for k in range(51)), encoding="utf-8")
    t = tables.read_delimited(csv_path, delimiter=",")
    assert len(t.rows) == 50 and not t.error and "from line 52 on" in t.remarks[0].got


def test_rows_times_columns_are_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "MAX_TABLE_CELLS", 40)  # 4 columns: 10 rows
    t = tables.read_xlsx(many_rows_xlsx(tmp_path / "t.xlsx", 30))
    assert len(t.rows) == 10 and "rows of 4 columns (40 cells)" in t.remarks[0].got


@pytest.mark.parametrize("regex", [True, False])
def test_a_truncated_sheet_is_named_truncated(tmp_path, monkeypatch, regex):
    if not regex:
        xml_path(monkeypatch)
    work = work_dir(tmp_path, truncated_sheet_xlsx)
    src = open_source(work)
    assert {r.name: len(r.rows) for r in src.runs} == {"bad/DocVQA_VAL": 2, "good/DocVQA_VAL": 3}
    (p,) = [p for p in src.problems if p.file.endswith("bad_DocVQA_VAL.xlsx")]
    assert "cut short after sheet row 3 (a truncated file)" in p.got and "empty sheet" not in p.got
    # cut before its header: not an "empty sheet" either
    cut = write_xlsx(tmp_path / "c.xlsx", SHEET_HEAD.replace("{dimension}", "A1:D9") + '<row r="1"><c r="A1" t="inl')
    assert tables.read_xlsx(cut).error.startswith("no header row read: the sheet's XML is cut short")


def test_a_cut_zip_is_named_damaged(tmp_path):
    path = good_table(tmp_path / "g.xlsx", rows=200)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert tables.read_xlsx(path).error == ("not a readable .xlsx workbook (no zip directory at its end: a file cut short, "
                                            "or not a workbook)")


def test_cells_beyond_xfd_are_named_in_the_xml_path_too(tmp_path, monkeypatch):
    xml_path(monkeypatch)
    t = tables.read_xlsx(far_column_xlsx(tmp_path / "f.xlsx"))
    assert len(t.rows) == 3 and [r.kind for r in t.remarks] == ["cells beyond column XFD"]


def test_a_zip_of_too_many_entries_or_another_compression_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "ZIP_MAX_ENTRIES", 50)
    path = good_table(tmp_path / "g.xlsx")
    with zipfile.ZipFile(path, "a") as z:
        for k in range(60):
            z.writestr(f"junk/{k}.xml", "x")
    assert "a zip of 7" in tables.read_xlsx(path).error and "entries" in tables.read_xlsx(path).error
    rows = SHEET_HEAD.replace("{dimension}", "A1:D2") + inline_row(1, HEADER) + inline_row(2, (1, "q", "a", "p")) + SHEET_TAIL
    bz = write_xlsx(tmp_path / "bz.xlsx", rows, compression=zipfile.ZIP_BZIP2)
    assert "compressed with method 12" in tables.read_xlsx(bz).error


def test_a_csv_field_over_the_limit_keeps_the_rows_before(tmp_path):
    path = tmp_path / "m_DocVQA_VAL.tsv"
    path.write_text("index\tquestion\tanswer\tprediction\n1\tq\ta\tp\n2\tq\ta\t" + "x" * 200_000 + "\n3\tq\ta\tp\n",
                    encoding="utf-8")
    t = tables.read_delimited(path, delimiter="\t")
    assert len(t.rows) == 1 and not t.error and "field larger than field limit" in t.remarks[0].got


def test_a_sparse_tsv_is_read_up_to_the_line_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "TABLE_MAX_LINE", 1 << 20)
    path = sparse(tmp_path / "t.tsv", 1 << 30, head=b"index\tq\n1\tx\n")
    t = tables.read_delimited(path, delimiter="\t")
    assert len(t.rows) == 1 and "a longer line (physical line 3" in t.remarks[0].got


# ----------------------------------------------------------------------------- lines


def test_a_2_gb_sparse_samples_file_is_read_past_line_by_line(tmp_path):
    samples = lmms_folder(tmp_path / "out", [])
    sparse(samples, 2 << 30, head=lmms_line(0).encode())
    found, mb = open_in_child(tmp_path / "out")
    assert found["runs"] == {"m/docvqa_val": 1}
    (p,) = problems_of(found, samples.name)
    assert p[1] == 2 and p[2] == "lines too long to read" and p[4].startswith(f"{(2 << 30) - len(lmms_line(0)):,} bytes")
    assert "no line end" in p[4]
    assert mb < _ceiling()  # today: the file read whole (4.1 GB)


def test_a_2_gb_sparse_longdocurl_file_is_read_past_line_by_line(tmp_path):
    line = json.dumps({"question_id": "q1", "score_v3": 1, "pred": "a", "answer": "a", "detailed_response": "a"}) + "\n"
    f = sparse(tmp_path / "results_m.jsonl", 2 << 30, head=line.encode())
    found, mb = open_in_child(f)
    assert found["runs"] == {"m": 1}
    assert [p[2] for p in found["problems"]] == ["lines too long to read"]
    assert mb < _ceiling()


def test_harness_files_stop_after_the_line_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "HARNESS_MAX_LINES", 3)
    lmms_folder(tmp_path / "out", [lmms_line(k) for k in range(5)])
    src = open_source(tmp_path / "out")
    assert len(src.runs[0].rows) == 3
    (cut,) = [p for p in src.problems if p.kind == "files cut short"]
    assert cut.line == 4 and "lines 1 to 3 are read, the rest, from line 4 on" in cut.got


@pytest.mark.parametrize("reader", ["record", "columns"])
def test_a_sparse_jsonl_prediction_file_is_read_past(tmp_path, reader):
    f = sparse(tmp_path / "run.jsonl", 2 << 30, head=b'{"question_id": "q1", "prediction": "a"}\n')
    load = "load_predictions" if reader == "record" else "load_prediction_columns"
    code = f"""
from scoring import loaders
got = loaders.{load}({str(f)!r})
res = got[0] if isinstance(got, tuple) else got
print(res.rows_read, res.skipped, [(p.line, p.kind, p.got) for p in res.problems])
"""
    rc, mb, out = peak(code, limit=ADDRESS, timeout=HANG)
    assert rc == 0, out
    assert out.startswith("2 1 [(2, 'lines too long to read', '2,147,483,6") and "no line end" in out
    assert mb < _ceiling()


CONTENT = [b'{"question_id": "a", "prediction": "1"}\n', b"\n", b'{"question_id": "b", "prediction": "' + b"x" * 300 + b'"}\n',
           b'{"question_id": "c", "prediction": "3"}\r\n', b'{"question_id": "d", "prediction": "' + b"y" * 70 + b'"}\n',
           b'{"question_id": "e", "prediction": "5"}\r{"question_id": "f", "prediction": "6"}\n', b"z" * 700]


# what the line-by-line and the block reader both gave, when there were two (issue 36 kept one)
OVER_LONG = {
    False: ([(1, "a"), (4, "c"), (5, "d")],
            [(3, "error", "339 bytes", "lines too long to read"), (5, "warning", "109 bytes", "very long lines"),
             (6, "error", "invalid JSON (Extra data at column 41)", "lines that are not JSON"),
             (7, "error", "700 bytes, to the end of the file (no line end: a sparse or zero-filled file?)", "lines too long to read")],
            (6, 1, 3)),
    True: ([(1, "a"), (4, "c"), (5, "d"), (6, "e"), (7, "f")],
           [(3, "error", "339 bytes", "lines too long to read"), (5, "warning", "109 bytes", "very long lines"),
            (8, "error", "700 bytes, to the end of the file (no line end: a sparse or zero-filled file?)", "lines too long to read")],
           (7, 1, 2)),
}


@pytest.mark.parametrize("universal", [False, True])
@pytest.mark.parametrize("block", [16, 64, 1 << 16])
def test_the_jsonl_reader_reads_past_over_long_lines(tmp_path, monkeypatch, universal, block):
    """A line over MAX_LINE is read past (never held) and named with its size, at any block size: one
    longer than a block, one cut by the end of the file; a line over HUGE_LINE but under MAX_LINE loads."""
    monkeypatch.setattr(loaders, "MAX_LINE", 120)
    monkeypatch.setattr(loaders, "HUGE_LINE", 100)
    monkeypatch.setattr(loaders, "BLOCK", block)
    f = tmp_path / "p.jsonl"
    f.write_bytes(b"".join(CONTENT))
    res: LoadResult = LoadResult()
    got = list(loaders.read_json_lines(f, res, universal=universal))
    assert len(CONTENT[2]) == 339
    assert ([(n, v["question_id"]) for n, v in got], [(p.line, p.severity, p.got, p.kind) for p in res.problems],
            (res.rows_read, res.blank_lines, res.skipped)) == OVER_LONG[universal]


def test_a_huge_utf16_file_is_named_not_decoded_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "WIDE_TEXT_MAX_BYTES", 1000)
    f = tmp_path / "p.jsonl"
    f.write_bytes(("\n".join(json.dumps({"question_id": f"q{k}", "prediction": "a"}) for k in range(100))).encode("utf-16"))
    res = loaders.load_predictions(f)
    assert res.items == [] and "not read (save it as UTF-8)" in res.problems[0].got


# ----------------------------------------------------------------------------- Python literals


def test_a_16_mb_target_literal_is_kept_as_text_and_named(tmp_path):
    big = "[" + "1," * 8_000_000 + "]"  # the issue's: 16 MB, 8 million items (6.1 GB to parse)
    lmms_folder(tmp_path / "out", [lmms_line(0, target=big), lmms_line(1)])
    found, mb = open_in_child(tmp_path / "out")
    assert found["runs"] == {"m/docvqa_val": 2}
    (p,) = [p for p in found["problems"] if p[2] == "targets too large to parse"]
    assert p[1] == 1 and "16,000,002 characters, more than the 100,000" in p[4] and "kept as text" in p[4]
    assert mb < _ceiling()


def test_literals_are_parsed_only_under_their_caps():
    assert reading.read_literal("['a', \"b,c\", [1, 2]]") == (True, ["a", "b,c", [1, 2]])
    many = "[" + ",".join(["1"] * 10_001) + "]"
    assert reading.read_literal(many) == (False, None) and "items" in reading.literal_refusal(many)
    assert reading.read_literal("['" + "," * 20_000 + "']")[0]  # commas inside a string are no items
    assert reading.read_literal("[" * 101 + "]" * 101) == (False, None)
    assert "characters" in reading.literal_refusal("[" + "1," * 60_000 + "]")
    assert reading.literal_refusal("[1, 2]") == ""
    from scoring.harness_rules import vlm_answers

    answers, note = vlm_answers(many)
    assert answers == [many] and "not a Python literal" in note  # a VLMEvalKit list cell over the caps: its text


# ----------------------------------------------------------------------------- folders


def test_a_folder_of_60000_files_is_listed_once_for_every_format(tmp_path, monkeypatch):
    model = tmp_path / "work" / "m"
    good_table(model / "T20260101-000000" / "m_DocVQA_VAL.xlsx")
    os.symlink("T20260101-000000/m_DocVQA_VAL.xlsx", model / "m_DocVQA_VAL.xlsx")
    for k in range(60_000):
        (model / f"m_DocVQA_VAL_{k:05d}.pkl").touch()
    listed: list[str] = []
    scandir = os.scandir

    def counting(path):
        listed.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(base.os, "scandir", counting)
    heard: list[int] = []
    src = open_source(tmp_path / "work", progress=lambda n, where: heard.append(n))
    assert [r.name for r in src.runs] == ["m/DocVQA_VAL"] and len(src.runs[0].rows) == 3
    assert listed.count(str(model)) == 1  # three formats recognise and load: once (it was six times)
    assert heard[:2] == [5_000, 10_000] and heard[-1] == 60_000


def test_a_folder_over_the_entry_cap_is_cut_and_the_cut_named(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "WALK_MAX_ENTRIES", 10)
    for k in range(9):
        (tmp_path / "a" / f"f{k}.txt").parent.mkdir(exist_ok=True)
        (tmp_path / "a" / f"f{k}.txt").touch()
        (tmp_path / "b" / f"f{k}.txt").parent.mkdir(exist_ok=True)
        (tmp_path / "b" / f"f{k}.txt").touch()
    w = base.walk(tmp_path)
    assert sorted(p.name for p in w.files) == [f"f{k}.txt" for k in range(9)]  # a/ listed whole, b/ not
    (p,) = w.problems
    assert p.kind == "folders cut short" and p.got == ("more: the first 10 in name order are read, the rest, from b on, "
                                                       "is not")
    for k in range(15):  # one folder larger than the cap: never listed beyond it, and not claimed to be in name order
        (tmp_path / "c" / f"g{k:02d}.txt").parent.mkdir(exist_ok=True)
        (tmp_path / "c" / f"g{k:02d}.txt").touch()
    w = base.walk(tmp_path / "c")
    assert len(w.files) == 10 and "the order the file system gives them" in w.problems[0].got


def test_fifos_and_sockets_named_like_result_files_are_named_never_opened(tmp_path):
    out = tmp_path / "out"
    lmms_folder(out, [lmms_line(0)])
    model = out / "model"
    os.mkfifo(model / "20260101_000000_samples_infovqa_val.jsonl")
    os.mkfifo(model / "results_x.jsonl")
    (out / "v" / "m").mkdir(parents=True)
    os.mkfifo(out / "v" / "m" / "m_DocVQA_VAL.xlsx")
    os.mkfifo(out / "v" / "m" / "m_InfoVQA_VAL.tsv")
    good_table(out / "v" / "g" / "g_DocVQA_VAL.xlsx")  # two harnesses in the folder: each walks it, each FIFO is said once
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(model / "sock_samples.jsonl"))
        found, _ = open_in_child(out)  # a FIFO opened would wait for a writer: the hang guard ends the test
    assert found["runs"] == {"m/docvqa_val": 1, "g/DocVQA_VAL": 3}
    named = sorted((p[0].rsplit("/", 1)[-1], p[4]) for p in found["problems"] if p[2] == "FIFOs, devices and sockets")
    assert named == [("20260101_000000_samples_infovqa_val.jsonl", "a FIFO (named pipe): never opened, not read"),
                     ("m_DocVQA_VAL.xlsx", "a FIFO (named pipe): never opened, not read"),
                     ("m_InfoVQA_VAL.tsv", "a FIFO (named pipe): never opened, not read"),
                     ("results_x.jsonl", "a FIFO (named pipe): never opened, not read"),
                     ("sock_samples.jsonl", "a socket: never opened, not read")]


def test_a_fifo_given_to_the_loaders_is_named_not_waited_on(tmp_path):
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    code = f"""
from scoring import loaders
from scoring.formats import tables
print(loaders.load_predictions({str(fifo)!r}).problems[0].got)
print(tables.read_table(__import__("pathlib").Path({str(fifo.with_suffix(".tsv"))!r})).error)
"""
    os.mkfifo(fifo.with_suffix(".tsv"))
    rc, _, out = peak(code, limit=ADDRESS, timeout=HANG)
    assert rc == 0 and out.splitlines()[:2] == ["a FIFO (named pipe), not a file: not read"] * 2, out


def test_a_two_link_symlink_loop_is_named_a_loop(tmp_path):
    model = lmms_folder(tmp_path / "out", [lmms_line(0)]).parent
    os.symlink("20260102_000000_samples_docvqa_val.jsonl", model / "20260103_000000_samples_docvqa_val.jsonl")
    os.symlink("20260103_000000_samples_docvqa_val.jsonl", model / "20260102_000000_samples_docvqa_val.jsonl")
    os.symlink("nowhere.jsonl", model / "20260104_000000_samples_docvqa_val.jsonl")
    src = open_source(tmp_path / "out")
    assert len(src.runs) == 1
    kinds = sorted((p.file.rsplit("/", 1)[-1][:8], p.kind) for p in src.problems)
    assert kinds == [("20260102", "symlink loops"), ("20260103", "symlink loops"), ("20260104", "dangling links")]
    assert all("a symlink loop" in p.got for p in src.problems if p.kind == "symlink loops")
    one = base.single(model / "20260102_000000_samples_docvqa_val.jsonl")
    assert one.files == {} and "a symlink loop" in one.problems[0].got


# ----------------------------------------------------------------------------- honest smaller messages


def test_scores_that_are_not_numbers_in_0_1_are_named(tmp_path):
    lines = [lmms_line(0, anls=0.5)] + [lmms_line(k, anls=v) for k, v in enumerate(
        [float("nan"), float("inf"), "x", True, -5, 1.5], start=1)]
    lines.insert(3, '{"doc_id": 7, "target": "[\'a\']", "filtered_resps": ["a"], "anls": 1e400, "input": "q7"}\n')
    lmms_folder(tmp_path / "out", lines)
    src = open_source(tmp_path / "out")
    (run,) = src.runs
    assert [r.official for r in run.rows] == [0.5, None, None, None, None, None, None, None]
    named = [(p.line, p.got) for p in src.problems if p.kind == "scores that are not numbers in 0..1"]
    assert named == [(2, "NaN (no official score)"), (3, "Infinity (or a number beyond 1.8e308) (no official score)"),
                     (4, "Infinity (or a number beyond 1.8e308) (no official score)"),
                     (5, "string 'x' (no official score)"), (6, "boolean true (no official score)"),
                     (7, "number -5 (out of 0..1) (no official score)"), (8, "number 1.5 (out of 0..1) (no official score)")]
    assert all(p.expected == "a number in 0..1" and p.field == "anls" for p in src.problems
               if p.kind == "scores that are not numbers in 0..1")


def test_mmlongbench_scores_that_are_not_numbers_are_named(tmp_path):
    def line(k, score):
        return lmms_line(k, mmlongbench_doc_acc={"score": score}, input=f"q{k}")
    lmms_folder(tmp_path / "out", [line(0, 1.0), line(1, "NaN"), line(2, None)], task="mmlongbench_doc")
    src = open_source(tmp_path / "out")
    assert [r.official for r in src.runs[0].rows] == [1.0, None, None]
    assert [(p.line, p.field, p.got) for p in src.problems if p.kind == "scores that are not numbers in 0..1"] == [
        (2, "mmlongbench_doc_acc.score", "string 'NaN' (no official score)"), (3, "mmlongbench_doc_acc.score",
                                                                              "null (no official score)")]


def test_predictions_naming_a_path_that_does_not_exist(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/ here: the gold's absence was all that was said
    assert cli.main(["--predictions", str(tmp_path / "nope.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err == f"ERROR: no such file: {tmp_path / 'nope.jsonl'}\n"


@pytest.mark.parametrize("regex", [True, False])
def test_cells_that_cannot_be_read_are_named_and_their_rows_kept(tmp_path, monkeypatch, regex):
    if not regex:
        xml_path(monkeypatch)
    bad = ('<row r="2"><c r="A2"><v>1.2.3</v></c><c r="B2" t="s"><v>²</v></c><c r="C2" t="s"><v>99</v></c>'
           '<c r="D2" t="b"><v>x</v></c></row>')
    sheet = SHEET_HEAD.replace("{dimension}", "A1:D3") + inline_row(1, HEADER) + bad + inline_row(3, (3, "q", "a", "p")) + SHEET_TAIL
    shared = ('<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
              '<si><t>only</t></si></sst>')
    t = tables.read_xlsx(write_xlsx(tmp_path / "c.xlsx", sheet, shared=shared))
    # row 2's four cells each named and read as missing (so the row is blank, and skipped as pandas skips it); row 3 kept
    assert not t.error and t.lines == [3] and t.rows[0] == {"index": 3, "question": "q", "answer": "a", "prediction": "p"}
    assert [(r.line, r.got) for r in t.remarks] == [(2, "'1.2.3' (read as missing)"), (2, "'²' (read as missing)"),
                                                   (2, "shared string #99 of 1 (read as missing)"), (2, "'x' (read as missing)")]


def test_the_command_line_says_a_long_listing_on_a_terminal(tmp_path, monkeypatch):
    import io
    import sys

    from scoring import harness_cli

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(base, "WALK_PROGRESS_EVERY", 2)
    lmms_folder(tmp_path / "out", [lmms_line(0)])
    for k in range(5):
        (tmp_path / "out" / "model" / f"log{k}.txt").touch()
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert harness_cli.main(["--predictions", str(tmp_path / "out")]) == 0
    said = err.getvalue()
    assert f"\rlisting {tmp_path / 'out'}: 2 entries\rlisting {tmp_path / 'out'}: 4 entries" in said
    assert "entries\n" in said  # the progress line is ended before anything else is said


def test_gold_sniffers_never_wait_on_a_fifo_nor_hold_a_sparse_line(tmp_path):
    """Which benchmark a folder is (its gold files' first lines) is asked of FIFOs and sparse files too."""
    fifo = tmp_path / "qa_single_doc.jsonl"
    os.mkfifo(fifo)
    big = sparse(tmp_path / "qa_cross_doc.jsonl", 2 << 30)
    samples = tmp_path / "samples.json"
    os.mkfifo(samples)
    code = f"""
from pathlib import Path
from scoring.formats import docvqa, mmlongbench_doc, xldocbench
print(xldocbench.looks_like_gold(Path({str(fifo)!r})), docvqa._docvqa_file(Path({str(fifo)!r})),
      xldocbench.looks_like_gold(Path({str(big)!r})), docvqa._docvqa_file(Path({str(big)!r})),
      mmlongbench_doc.recognise(Path({str(samples)!r})))
"""
    rc, mb, out = peak(code, limit=ADDRESS, timeout=HANG)
    assert rc == 0 and out.splitlines()[0] == "True False True False False", out
    assert mb < _ceiling()

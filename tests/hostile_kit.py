"""Hostile inputs of bounded size on disk (issue 35), written by hand: workbooks that claim far more
than they hold (a cell at column ZZZZZZZZZ, a dimension of A1:XFD1048576, a shared-strings part that
inflates a thousand times), sparse files, FIFOs, symlink loops; and `peak`, which runs a reading in a
fresh process under an address-space limit (RLIMIT_AS) and reports its peak resident memory, so a
test can assert that the reading stays under a ceiling without risking the machine."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

HEADER = ("index", "question", "answer", "prediction")

_CT = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
       '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
       '<Default Extension="xml" ContentType="application/xml"/>'
       '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
       '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
       '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
       '{shared}</Types>')
_SHARED_CT = ('<Override PartName="/xl/sharedStrings.xml" '
              'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')
_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
         '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
         'Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
             '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
             'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
             '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
            'Target="worksheets/sheet1.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" '
            'Target="styles.xml"/>{shared}</Relationships>')
_SHARED_REL = ('<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" '
               'Target="sharedStrings.xml"/>')
_STYLES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
           '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
           '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
           '<borders count="1"><border/></borders>'
           '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
           '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
           '<xf numFmtId="{date}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
           '</styleSheet>')
SHEET_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
              '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
              'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
              '<dimension ref="{dimension}"/><sheetData>')
SHEET_TAIL = '</sheetData></worksheet>'


def column_letters(k: int) -> str:
    """The letters of 0-based column k (0 -> A, 16383 -> XFD)."""
    out = ""
    k += 1
    while k:
        k, rem = divmod(k - 1, 26)
        out = chr(65 + rem) + out
    return out


def inline_row(r: int, values: Iterable[object], first_column: int = 0) -> str:
    """A sheet row of inline strings and numbers, each cell with its reference."""
    cells = []
    for k, v in enumerate(values, start=first_column):
        ref = f"{column_letters(k)}{r}"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            cells.append(f'<c r="{ref}"><v>{v}</v></c>')
        else:
            cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{v}</t></is></c>')
    return f'<row r="{r}">' + "".join(cells) + "</row>"


def write_xlsx(path: Path, sheet: str | Iterable[bytes], *, shared: str | Iterable[bytes] | None = None,
               date_style: bool = False, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    """A workbook of one sheet whose XML is `sheet` (text, or bytes chunks streamed into the zip so
    that a large part is never held), with an optional sharedStrings part; `date_style` makes style
    1 a date format (built-in 14), which openpyxl turns numbers into dates for."""
    with zipfile.ZipFile(path, "w", compression, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", _CT.replace("{shared}", _SHARED_CT if shared is not None else ""))
        z.writestr("_rels/.rels", _RELS)
        z.writestr("xl/workbook.xml", _WORKBOOK)
        z.writestr("xl/_rels/workbook.xml.rels", _WB_RELS.replace("{shared}", _SHARED_REL if shared is not None else ""))
        z.writestr("xl/styles.xml", _STYLES.replace("{date}", "14" if date_style else "0"))
        for name, part in (("xl/worksheets/sheet1.xml", sheet), ("xl/sharedStrings.xml", shared)):
            if part is None:
                continue
            if isinstance(part, str):
                z.writestr(name, part)
                continue
            with z.open(name, "w", force_zip64=True) as fh:
                for chunk in part:
                    fh.write(chunk)
    return path


def far_column_xlsx(path: Path) -> Path:
    """A 1.7 KB VLMEvalKit-like table with one cell at column ZZZZZZZZZ (about 5.4e12): a reader that
    pads each row up to its last cell's column needs terabytes."""
    rows = inline_row(1, HEADER) + inline_row(2, (0, "q0", "a0", "p0")) + \
        '<row r="3"><c r="A3"><v>1</v></c><c r="B3" t="inlineStr"><is><t>q1</t></is></c>' \
        '<c r="ZZZZZZZZZ3" t="inlineStr"><is><t>far</t></is></c></row>' + inline_row(4, (2, "q2", "a2", "p2"))
    return write_xlsx(path, SHEET_HEAD.replace("{dimension}", "A1:D4") + rows + SHEET_TAIL)


def dimension_xlsx(path: Path) -> Path:
    """A 2 KB table whose sheet claims A1:XFD1048576 and has a date style (openpyxl's read-only reader
    then pads a million rows of 16,384 cells), with a last cell at XFD1048576."""
    rows = inline_row(1, HEADER) + inline_row(2, (0, "q0", "a0", "p0")) + \
        '<row r="3"><c r="A3" s="1"><v>45000</v></c><c r="B3" t="inlineStr"><is><t>q1</t></is></c></row>' + \
        '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>last</t></is></c></row>'
    return write_xlsx(path, SHEET_HEAD.replace("{dimension}", "A1:XFD1048576") + rows + SHEET_TAIL, date_style=True)


def strings_bomb_xlsx(path: Path, inflated: int) -> Path:
    """A table whose sharedStrings.xml inflates to `inflated` bytes from a few hundred KB (one string
    repeated): the sheet names strings 0-3 and a row of them."""
    one = b"<si><t>" + b"x" * 1000 + b"</t></si>"
    count = max(4, inflated // len(one))

    def chunks() -> Iterator[bytes]:
        yield (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="http://schemas.openxmlformats.org/'
               b'spreadsheetml/2006/main" count="%d" uniqueCount="%d">' % (count, count))
        yield b"<si><t>index</t></si><si><t>question</t></si><si><t>answer</t></si><si><t>prediction</t></si>"
        block = one * 1024
        left = count - 4
        while left > 0:
            n = min(1024, left)
            yield block if n == 1024 else one * n
            left -= n
        yield b"</sst>"

    sheet = SHEET_HEAD.replace("{dimension}", "A1:D2") + \
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c>' \
        '<c r="D1" t="s"><v>3</v></c></row>' + inline_row(2, (0, "q0", "a0", "p0")) + SHEET_TAIL
    return write_xlsx(path, sheet, shared=chunks())


def many_rows_xlsx(path: Path, rows: int) -> Path:
    """A table of `rows` data rows of four cells (inline strings), streamed into the zip."""

    def chunks() -> Iterator[bytes]:
        yield SHEET_HEAD.replace("{dimension}", f"A1:D{rows + 1}").encode() + inline_row(1, HEADER).encode()
        batch = []
        for r in range(2, rows + 2):
            batch.append(f'<row r="{r}"><c r="A{r}"><v>{r - 2}</v></c><c r="B{r}" t="inlineStr"><is><t>q</t></is></c>'
                         f'<c r="C{r}" t="inlineStr"><is><t>a</t></is></c><c r="D{r}" t="inlineStr"><is><t>p</t></is></c></row>')
            if len(batch) == 10_000:
                yield "".join(batch).encode()
                batch = []
        yield ("".join(batch) + SHEET_TAIL).encode()

    return write_xlsx(path, chunks())


def truncated_sheet_xlsx(path: Path) -> Path:
    """A table whose sheet XML stops inside its fourth row (a file cut while it was written)."""
    rows = inline_row(1, HEADER) + inline_row(2, (0, "q0", "a0", "p0")) + inline_row(3, (1, "q1", "a1", "p1"))
    return write_xlsx(path, SHEET_HEAD.replace("{dimension}", "A1:D9") + rows + '<row r="4"><c r="A4"><v>2</v></c><c r="B4" t="inl')


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of `size` bytes that costs no disk: `head`, then a hole (NUL bytes when read)."""
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def lmms_line(doc_id: int, **fields: object) -> str:
    obj = {"doc_id": doc_id, "target": "['a']", "filtered_resps": ["a"], "anls": 1.0,
           "input": f"q{doc_id}\nAnswer the question using a single word or phrase."}
    obj.update(fields)
    return json.dumps(obj) + "\n"


def lmms_folder(root: Path, lines: Iterable[str], *, date: str = "20260101_000000", task: str = "docvqa_val") -> Path:
    """An lmms-eval model folder: a results file and one samples file holding `lines`."""
    model = root / "model"
    model.mkdir(parents=True, exist_ok=True)
    (model / f"{date}_results.json").write_text(json.dumps(
        {"results": {task: {"alias": task, "anls,none": 1.0}}, "config": {"model_args": "pretrained=m"}, "model_name": "m"}))
    with open(model / f"{date}_samples_{task}.jsonl", "w") as fh:
        fh.writelines(lines)
    return model / f"{date}_samples_{task}.jsonl"


ADDRESS_LIMIT = 3 << 30  # the reading's whole address space: its peak resident memory stays well under this


def peak(code: str, *, limit: int = ADDRESS_LIMIT, timeout: float = 600.0, cwd: Path | None = None) -> tuple[int, float, str]:
    """Run `code` (Python) in a fresh interpreter whose address space is limited to `limit` bytes;
    (exit code, peak resident memory in MB, what it printed). The child prints its own peak
    (`ru_maxrss`) last, so no other process's memory is counted. `timeout` is a hang guard."""
    wrapped = code + "\nimport resource as _r\nprint('PEAK_KB', _r.getrusage(_r.RUSAGE_SELF).ru_maxrss)\n"

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limited, env=env, cwd=cwd)
    kb = 0
    lines = done.stdout.splitlines()
    if lines and lines[-1].startswith("PEAK_KB "):
        kb = int(lines.pop().split()[1])
    return done.returncode, kb / 1024, "\n".join(lines) + ("\n" + done.stderr if done.stderr else "")

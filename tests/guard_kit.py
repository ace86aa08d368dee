"""What the read guard's tests and bench/bench_load.py feed the readers (scoring/guard.py, issue 35.1):
test-only readers that allocate without bound, hang or crash (for the mechanism), and hostile files of
bounded size on disk for the real readers -- a JSON-lines prediction whose answer is a 24 MB nested
list (about 900 MB of objects), an lmms-eval samples file whose `target` is a 16 MB Python literal of
8 million items (6 GB for `ast.literal_eval`), workbooks of a few kilobytes that claim a cell at
column ZZZZZZZZZ or a sheet of A1:XFD1048576, a shared-strings part that inflates a thousand times,
and a sparse 2 GB samples file that costs no disk. `peak_of` runs Python code in a fresh process and
returns its own peak resident memory, so that a test can put a ceiling on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from scoring import guard

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- test-only readers


def hog(path: Path) -> None:
    """Allocates 16 MB after 16 MB until it is stopped."""
    held = []
    while True:
        held.append(bytearray(16 << 20))


def hang(path: Path) -> None:
    """Never returns (and uses its CPU)."""
    while True:
        pass


def hog_in_bracket(path: Path) -> None:
    """`hog` inside a bracket (in a worker process of ours: it limits itself)."""
    with guard.reading(path):
        hog(path)


def crash(path: Path) -> None:
    """Dies as a C library that fails an allocation does."""
    os.kill(os.getpid(), signal.SIGSEGV)


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


READERS = {".hog": hog, ".hang": hang, ".crash": crash, ".txt": text}


def read_folder(folder: Path) -> tuple[dict[str, str], list]:
    """Every file of `folder` by the reader its extension names, each inside a bracket: (what was read by
    file name, the Problems of the files refused)."""
    out: dict[str, str] = {}
    problems = []
    for path in sorted(Path(folder).iterdir()):
        with guard.reading(path) as refused:
            if refused is not None:
                problems.append(refused)
                continue
            out[path.name] = READERS[path.suffix](path)
    return out, problems


def hostile_folder(root: Path, good: int = 3, **bad: int) -> Path:
    """A folder of `good` text files (a.txt ...) and, per reader name in `bad` (hog=1, hang=1, crash=1), that
    many files read by it."""
    folder = root / "files"
    folder.mkdir()
    for k in range(good):
        (folder / f"{chr(97 + k)}.txt").write_text(f"file {k}\n")
    for name, n in bad.items():
        for k in range(n):
            (folder / f"{name}{k}.{name}").write_text("x")
    return folder


# ----------------------------------------------------------------------------- hostile files for the real readers

NESTED_MB = 24  # the JSON-lines answer: 24 MB of `[],` -- 8.4 million empty lists, ~900 MB once parsed


def nested_list_predictions(path: Path, qid: str, mb: int = NESTED_MB) -> Path:
    """A prediction file of one line whose `prediction` is a list of `mb` MB of empty lists."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"question_id": qid})[:-1] + ', "prediction": [')
        fh.write("[]," * (mb * (1 << 20) // 3))
        fh.write("[]]}\n")
    return path


LITERAL_ITEMS = 8_000_000  # the lmms-eval target: "[0,0,...]" of 8 million items, 16 MB


def _lmms_run(folder: Path, model: str, lines: list[dict]) -> None:
    folder.mkdir(parents=True)
    results = {"results": {"docvqa_val": {"alias": "docvqa_val", "anls,none": 0.5, "anls_stderr,none": "N/A"}},
               "config": {"model": "qwen2_vl", "model_args": f"pretrained={model}"}, "lmms_eval_version": "0.7.2",
               "date": "20260802_101500", "model_name": model, "model_name_sanitized": model.replace("/", "__")}
    (folder / "20260802_101500_results.json").write_text(json.dumps(results))
    with open(folder / "20260802_101500_samples_docvqa_val.jsonl", "w") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in lines)


def lmms_with_hostile_target(root: Path, items: int = LITERAL_ITEMS) -> Path:
    """An lmms-eval output folder (DocVQA) with a good model's run and an evil model's run whose line for
    a question of its own has a `target` that is a Python literal list of `items` zeros (16 MB):
    `ast.literal_eval` takes 6 GB for it."""
    folder = root / "lmms-eval"
    lines = [{"doc_id": k, "target": str([f"answer {k}"]), "filtered_resps": f"answer {k}", "anls": 1.0,
              "input": f"What is item {k}?"} for k in range(20)]
    _lmms_run(folder / "Good__Model-7B", "Good/Model-7B", lines)
    hostile = {"doc_id": 99, "target": "[" + "0," * (items - 1) + "0]", "filtered_resps": "0", "anls": 0.0,
               "input": "What is the hostile item?"}
    _lmms_run(folder / "Evil__Model-7B", "Evil/Model-7B", [hostile, *lines])
    return folder


def sparse_samples(root: Path, size: int = 2 << 30) -> Path:
    """An lmms-eval folder whose samples file is `size` bytes of NULs after one line: no disk used."""
    folder = root / "sparse-lmms"
    _lmms_run(folder / "Sparse__Model-7B", "Sparse/Model-7B", [{"doc_id": 0, "target": "['1']", "filtered_resps": "1",
                                                                "anls": 1.0, "input": "Q?"}])
    with open(next((folder / "Sparse__Model-7B").glob("*_samples_*")), "r+b") as fh:
        fh.truncate(size)
    return folder


_CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
       '<Default Extension="xml" ContentType="application/xml"/>'
       '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
       '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
       '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
       '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
       '</Types>')
_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
         'Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
             'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
             '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
            'Target="worksheets/sheet1.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
            '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" '
            'Target="sharedStrings.xml"/></Relationships>')
_STYLES = ('<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           '<fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders>'
           '<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="2"><xf/>'
           '<xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>')  # style 1: a date (openpyxl's path)
_HEAD = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
         '<dimension ref="{dim}"/><sheetData>')
_ROW1 = ('<row r="1"><c r="A1" t="inlineStr"><is><t>index</t></is></c><c r="B1" t="inlineStr"><is><t>question</t></is></c>'
         '<c r="C1" t="inlineStr"><is><t>answer</t></is></c><c r="D1" t="inlineStr"><is><t>prediction</t></is></c>'
         '<c r="E1" t="inlineStr"><is><t>answer_format</t></is></c><c r="F1" t="inlineStr"><is><t>evidence_sources</t></is></c>'
         '<c r="G1" t="inlineStr"><is><t>evidence_pages</t></is></c></row>')


def _xlsx(path: Path, dim: str, rows: str, shared: str = "") -> Path:
    strings = shared or '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0"/>'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CT)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("xl/workbook.xml", _WORKBOOK)
        z.writestr("xl/_rels/workbook.xml.rels", _WB_RELS)
        z.writestr("xl/styles.xml", _STYLES)
        z.writestr("xl/sharedStrings.xml", strings)
        z.writestr("xl/worksheets/sheet1.xml", _HEAD.format(dim=dim) + _ROW1 + rows + "</sheetData></worksheet>")
    return path


def vlmevalkit_model(root: Path, model: str = "Evil-VLM") -> Path:
    """A VLMEvalKit model folder (MMLongBench_DOC) to put one hostile prediction table in."""
    folder = root / "vlmevalkit" / model
    folder.mkdir(parents=True)
    return folder


def far_column_xlsx(folder: Path) -> Path:
    """1.7 KB: one cell at column ZZZZZZZZZ (about 5.4e12): a reader that pads rows pads it that far."""
    model = folder.name
    return _xlsx(folder / f"{model}_MMLongBench_DOC.xlsx", "A1:ZZZZZZZZZ2",
                 '<row r="2"><c r="A2"><v>1</v></c><c r="ZZZZZZZZZ2"><v>1</v></c></row>')


def dimension_xlsx(folder: Path) -> Path:
    """2 KB: a declared dimension of A1:XFD1048576 and a date style (what sends a sheet to openpyxl)."""
    model = folder.name
    return _xlsx(folder / f"{model}_MMLongBench_DOC.xlsx", "A1:XFD1048576",
                 '<row r="2"><c r="A2" s="1"><v>45000</v></c></row>')


def strings_bomb_xlsx(folder: Path, inflated: int = 250 << 20) -> Path:
    """A few hundred KB whose shared-strings part inflates to `inflated` bytes (one string of spaces)."""
    model = folder.name
    shared = ('<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>'
              + " " * inflated + "</t></si></sst>")
    return _xlsx(folder / f"{model}_MMLongBench_DOC.xlsx", "A1:G2",
                 '<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="s"><v>0</v></c></row>', shared=shared)


# ----------------------------------------------------------------------------- measuring


def peak_of(code: str, env: dict[str, str] | None = None, timeout: float = 300.0) -> tuple[int, str]:
    """Run `code` with this Python in a fresh process (cwd: the repository); (its own peak resident
    memory in MB, what it printed). The hang guard is `timeout` seconds. The peak is VmHWM of the process's
    own address space: Linux carries ru_maxrss across exec, so getrusage would report the test process's
    size at the fork (971 MB late in a full run) as this process's peak."""
    probe = code + ("\nimport sys as _s\n"
                    "_hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
                    "print('PEAK_KB', _hwm.split()[1], file=_s.stderr)\n")
    full = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode:
        raise AssertionError(f"the measured process failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    kb = next(int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("PEAK_KB"))
    return kb // 1024, proc.stdout


def run_measured(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 300.0
                 ) -> tuple[subprocess.CompletedProcess, int, float]:
    """A command run to its end in a fresh process tree; (the result, the largest peak resident memory of
    any process of it that was waited for -- the CLI and its supervised child -- in MB, wall seconds)."""
    full = {**os.environ, **(env or {})}
    code = ("import resource, subprocess, sys, json\n"
            "p = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)\n"
            "sys.stdout.write(json.dumps([p.returncode, p.stdout, p.stderr, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n")
    t = time.monotonic()
    outer = subprocess.run([sys.executable, "-c", code, json.dumps(cmd)], cwd=ROOT, env=full, capture_output=True,
                           text=True, timeout=timeout)
    wall = time.monotonic() - t
    code_, out, err, kb = json.loads(outer.stdout)
    return subprocess.CompletedProcess(cmd, code_, out, err), kb // 1024, wall


def memory_env(memory: str = "256M", budget: str = "60") -> dict[str, str]:
    return {guard.MEMORY_VARIABLE: memory, guard.BUDGET_VARIABLE: budget}

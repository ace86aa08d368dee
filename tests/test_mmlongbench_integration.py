"""MMLongBench-Doc wired in end to end, on sample_runs/mmlongbench (sample_runs/_mmlongbench.py):
the CLI (`python -m scoring --profile mmlongbench-doc`), the dashboard's discovery and every page,
the evidence and report command lines. The evaluator itself is pinned in tests/test_mmlongbench.py."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.mmlongbench import load_results, load_samples, rescored_rows, show_results

ROOT = Path(__file__).resolve().parent.parent
MM = ROOT / "sample_runs" / "mmlongbench"
SAMPLES = MM / "data" / "samples.json"
RESULTS = sorted((MM / "results").glob("res_*.json"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(args, cwd, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def test_the_sample_is_there_and_covers_the_quirks():
    gold = load_samples(SAMPLES)
    assert 30 <= len(gold.items) <= 50 and not gold.errors
    assert {q.raw_format for q in gold.items} == {"Int", "Float", "Str", "List", "None"}
    assert [p.name for p in RESULTS] == ["res_docowl-8b.json", "res_gpt-4o.json"]
    pdfs = {p.name for p in (MM / "data" / "documents").glob("*.pdf")}
    named = {q.metadata["doc_id"] for q in gold.items}
    assert named - pdfs == {"national_park_guidebook.pdf"}  # the missing PDF


def test_regenerating_the_sample_is_byte_identical(tmp_path):
    done = run([str(ROOT / "sample_runs" / "_mmlongbench.py"), "--out", str(tmp_path)], ROOT)
    assert done.returncode == 0, done.stderr
    fresh = tmp_path / "mmlongbench"
    committed = {p.relative_to(MM): p.read_bytes() for p in MM.rglob("*") if p.is_file()}
    made = {p.relative_to(fresh): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    assert committed == made


@pytest.fixture(scope="module")
def cli_outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mm_cli")
    runs = {}
    for path in RESULTS:
        name = path.stem.removeprefix("res_")
        done = run(["-m", "scoring", "--profile", "mmlongbench-doc", "--gold-files", str(SAMPLES), "--predictions", str(path),
                    "--output-txt", str(out / f"res_{name}.txt"), "--per-question-csv", str(out / f"res_{name}.csv"),
                    "--output", str(out / f"{name}.json")], out)
        runs[name] = done
    return out, runs


def test_cli_text_report_is_show_results_of_the_rows(cli_outputs):
    out, runs = cli_outputs
    gold = load_samples(SAMPLES)
    for path in RESULTS:
        name = path.stem.removeprefix("res_")
        assert runs[name].returncode == 0, runs[name].stderr
        assert "Traceback" not in runs[name].stderr
        res = load_results(path, gold)
        # the file's own scores are eval_score's (one row changed on purpose in docowl-8b): recomputing
        # them through the CLI gives show_results of the rows with our scores, byte for byte
        from scoring.mmlongbench import judge_question

        by_id = {q.qid: q for q in gold.items}
        scores = {p.qid: judge_question(by_id[p.qid], res.extras[p.qid].pred).score for p in res.items}
        assert (out / f"res_{name}.txt").read_bytes() == show_results(rescored_rows(res, scores)).encode("utf-8")
        assert (out / f"res_{name}.txt").read_bytes().count(b"\r") == 0


def test_cli_text_report_equals_the_files_own_scores_where_they_agree(cli_outputs):
    out, _ = cli_outputs
    res = load_results(MM / "results" / "res_gpt-4o.json", load_samples(SAMPLES))
    assert (out / "res_gpt-4o.txt").read_text(encoding="utf-8") == show_results(res.rows)


def test_cli_csv_columns_and_rows(cli_outputs):
    out, _ = cli_outputs
    rows = list(csv.DictReader(io.StringIO((out / "res_docowl-8b.csv").read_text(encoding="utf-8"))))
    assert {"question_id", "doc_id", "answer_format", "answer", "pred", "score", "token_f1", "anls"} <= set(rows[0])
    assert len(rows) == len(load_samples(SAMPLES).items)
    by_id = {r["question_id"]: r for r in rows}
    assert by_id["mmlongbench_0039"]["status"] == "missing"  # the row not evaluated yet
    assert by_id["mmlongbench_0016"]["fallback_rule"] == "pred_not_literal"
    assert by_id["mmlongbench_0018"]["extraction_miss"] == "1"  # "fourteen" extracted from "We evaluate 14 models"
    assert float(by_id["mmlongbench_0036"]["score"]) != float(by_id["mmlongbench_0036"]["official_score"])


def test_cli_names_fallback_rows_on_stderr_and_never_runs_model_text(cli_outputs):
    out, runs = cli_outputs
    err = runs["docowl-8b"].stderr
    for qid, rule in (("mmlongbench_0013", "float_gold_not_number"), ("mmlongbench_0016", "pred_not_literal"),
                      ("mmlongbench_0017", "pred_not_literal")):
        assert f"{qid}: scored by fallback rule {rule}" in err
    assert "mmlongbench_0014: scored by fallback rule empty_lists" in runs["gpt-4o"].stderr
    assert not (out / "lens_pwned.txt").exists()  # [open('lens_pwned.txt', 'w')] was read, never executed
    assert "[39].pred" in err and "not evaluated yet" in err


def test_cli_report_json(cli_outputs):
    out, runs = cli_outputs
    rep = json.loads((out / "gpt-4o.json").read_text(encoding="utf-8"))
    assert rep["profile"] == "mmlongbench-doc"
    assert f"Acc (MMLongBench-Doc): {rep['acc'] * 100:.2f}%" in runs["gpt-4o"].stdout
    assert set(rep["breakdowns"]) == {"page_category", "evidence_source", "doc_type", "evidence_page_count"}
    pages = rep["breakdowns"]["page_category"]
    # overlaps as the evaluator counts them: the unanswerable question with one evidence page is in both
    assert pages["unanswerable"]["count"] == 4 and pages["single-page"]["count"] == 35
    assert [f["rule"] for f in rep["fallback"]] == ["float_gold_not_number", "empty_lists"]


def test_cli_bad_input_is_an_error_line_not_a_traceback(tmp_path):
    bad = tmp_path / "samples.json"
    bad.write_text("{not json", encoding="utf-8")
    done = run(["-m", "scoring", "--profile", "mmlongbench-doc", "--gold-files", str(bad), "--predictions", str(RESULTS[0])],
               tmp_path)
    assert done.returncode == 1 and "ERROR: no gold question could be loaded" in done.stderr
    assert f"{bad}:" in done.stderr and "Traceback" not in done.stderr
    done = run(["-m", "scoring", "--profile=mmlongbench-doc", "--gold-files", str(SAMPLES), "--predictions",
                str(tmp_path / "nope.json")], tmp_path)
    assert done.returncode == 1 and "ERROR: no prediction could be loaded" in done.stderr and "Traceback" not in done.stderr

"""LongDocURL's own results (`results_<model>.jsonl`, dengc2023/LongDocURL `eval/eval_open_lvlms.py`):
the sample plus `detailed_response`, `pred` and `score_v3`, appended in completion order, joined on
`question_id` (scoring/formats/longdocurl.py). Fixtures written here in that shape."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from scoring import cli
from scoring.formats import detect, longdocurl, open_source


def sample(k: int, answer, fmt: str, pred, score: float) -> dict:
    return {"question_id": f"free_gemini15_pro_4055915_42_71_{k}", "doc_no": "4055915", "total_pages": 71,
            "start_end_idx": [42, 71], "question_type": "extract", "question": f"Question {k}?", "answer": answer,
            "detailed_evidences": "<box>(0.1, 0.2, 0.3, 0.4)</box>", "evidence_pages": [43 + k],
            "evidence_sources": ["Table"], "answer_format": fmt, "task_tag": "Understanding",
            "images": [f"/mnt/authors/pdf_pngs/4000-4999/4055/4055915_{43 + k}.png"],
            "pdf_path": "/mnt/authors/pdfs/4000-4999/4055915.pdf",
            "detailed_response": f"Looking at page {43 + k} ...", "pred": pred, "score_v3": score}


LINES = [sample(0, 12, "Integer", 12, 1.0), sample(1, ["a", "b"], "List", ["a"], 0.5), sample(2, "Paris", "String", "Fail to extract", 0.0)]


def write(path: Path, lines: list[dict], tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines) + tail, encoding="utf-8")
    return path


def test_results_file_and_folder(tmp_path):
    f = write(tmp_path / "evaluation_results" / "open_lvlms" / "results_qwen2vl_7b.jsonl", LINES[::-1])  # completion order
    write(tmp_path / "evaluation_results" / "api" / "results_gpt4o.jsonl", LINES[:1])
    assert detect(f) is longdocurl and detect(tmp_path / "evaluation_results") is longdocurl
    src = open_source(tmp_path / "evaluation_results")
    assert sorted(r.name for r in src.runs) == ["gpt4o", "qwen2vl_7b"]
    run = next(r for r in src.runs if r.name == "qwen2vl_7b")
    assert [x.official for x in run.rows] == [0.0, 0.5, 1.0]
    qs = {q.qid: q for q in src.gold["LongDocURL"]}
    q1 = qs["free_gemini15_pro_4055915_42_71_1"]
    assert q1.answers == ('["a","b"]',) and q1.answer_raw == ["a", "b"] and q1.evidence_pages == (44,)
    assert src.documents == ["4055915.pdf"]
    assert run.rows[1].prediction == '["a"]' and run.rows[0].prediction == "Fail to extract"


def test_bad_lines_each_named_rest_loaded(tmp_path):
    f = tmp_path / "results_m.jsonl"
    f.write_text(json.dumps(LINES[0]) + "\n{oops\n" + json.dumps(LINES[0]) + "\n" + json.dumps({"pred": 1}) + "\n"
                 + json.dumps({**LINES[1], "score_v3": "high"}) + "\n" + json.dumps(LINES[2])[:30], encoding="utf-8")
    src = open_source(f)
    lines = {(p.line, p.kind or p.expected) for p in src.problems}
    assert (2, "a JSON object") in lines and (3, "duplicate lines") in lines and (4, "a non-empty string") in lines
    assert (5, "scores that are not numbers in 0..1") in lines and (6, "a JSON object") in lines
    (run,) = src.runs
    assert [x.line for x in run.rows] == [1, 5] and run.rows[1].official is None


def test_cli_lists_official_scores(tmp_path, capsys):
    f = write(tmp_path / "results_m.jsonl", LINES)
    report, table = tmp_path / "r.json", tmp_path / "q.csv"
    assert cli.main(["--predictions", str(f), "--output", str(report), "--per-question-csv", str(table)]) == 0
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["official_score"] for r in rows] == ["1.0", "0.5", "0.0"] and [r["score"] for r in rows] == ["", "", ""]
    assert json.loads(report.read_text())["reported"] == {}
    assert "no profile reproduces longdocurl" in capsys.readouterr().err


def test_nan_scores_are_no_scores_and_the_report_stays_json(tmp_path):
    f = tmp_path / "results_m.jsonl"
    f.write_text(json.dumps(LINES[0]).replace('"score_v3": 1.0', '"score_v3": NaN') + "\n", encoding="utf-8")
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(f), "--output", str(report)]) == 0
    assert json.loads(report.read_text())["runs"][0]["per_question"][0]["official_score"] is None


def test_other_options_of_the_benchmark_cli_are_named_and_ignored(tmp_path, capsys):
    f = write(tmp_path / "results_m.jsonl", LINES)
    assert cli.main(["--predictions", str(f), "--ignore-missing", "--data-dir", "x"]) == 0
    assert "note: ignored for harness files: --ignore-missing --data-dir x" in capsys.readouterr().err

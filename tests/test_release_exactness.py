"""Issue 18 item 9: profile xldocbench-1519 reads and writes values as the public release does, on
the four points where it differed (tests/data/release_text_vectors.jsonl): JSON separators of lists
and objects, the split column's text, ids that are objects or lists, CR-only line ends. The default
profile keeps its own forms (scoring/README.md section 1d), checked here too."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import csv_kit
import reference_release as ref
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

ROOT = Path(__file__).resolve().parents[1]
VECTORS = [json.loads(line) for line in (ROOT / "tests" / "data" / "release_text_vectors.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]


def _files(tmp: Path, v: dict) -> tuple[Path, Path]:
    end = v.get("line_end", "\n")
    gold, pred = tmp / "gold.jsonl", tmp / "preds.jsonl"
    # two records per file, so that a line end that is not read as one merges them into one bad line
    other_gold = {"question_id": "zz_other", "task_type": "single_doc", "answer": {"value": "y", "format": "Str"}}
    gold.write_bytes((json.dumps(v["gold_line"], ensure_ascii=False) + end + json.dumps(other_gold) + end).encode())
    pred.write_bytes((json.dumps(v["prediction_line"], ensure_ascii=False) + end
                      + json.dumps({"question_id": "zz_other", "prediction": "y"}) + end).encode())
    return gold, pred


def _release_run(tmp: Path, v: dict):
    gold_file, pred_file = _files(tmp, v)
    gold = load_gold(gold_file, release=True)
    preds = load_predictions(pred_file, release=True)
    assert not [p for p in gold.problems + preds.problems if p.severity == "error"], gold.problems + preds.problems
    return evaluate(gold.items, preds.items, profile="xldocbench-1519", workers=1), gold_file, pred_file


@pytest.mark.parametrize("v", VECTORS, ids=[f"{v['point']}-{k}" for k, v in enumerate(VECTORS)])
def test_release_vector(tmp_path, v):
    run, gold_file, pred_file = _release_run(tmp_path, v)
    rows = run.report(lens=False)["per_question"]
    assert rows[0] == v["expected_row"], v["why"]
    assert len(rows) == 2 and rows[1]["accuracy"] == 1.0  # the second record was read as its own line
    for group, labels in v.get("expected_labels", {}).items():
        assert run.results[0].question.labels(group) == labels
        assert all(label in run.breakdowns[group] for label in labels)
    # the reference reimplementation of the release agrees, row and report alike
    want = ref.evaluate_files([gold_file], pred_file)
    assert want["per_question"][0] == v["expected_row"]
    assert run.report(lens=False) == want
    assert run.csv_text() == csv_kit.release_csv_made_safe(want)  # the release's CSV, text cells spreadsheet-safe


def test_cli_release_profile_writes_the_release_bytes(tmp_path):
    """Every vector in one pair of files, through `python -m scoring --profile xldocbench-1519`:
    the report equals the reference's bytes, the CSV too but for one quote before a text cell that begins
    like a formula (scoring.writers.safe_cell; the split column as text in both)."""
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    gold.write_text("".join(json.dumps(v["gold_line"]) + "\n" for v in VECTORS), encoding="utf-8")
    pred.write_text("".join(json.dumps(v["prediction_line"]) + "\n" for v in VECTORS), encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "scoring", "--profile", "xldocbench-1519", "--gold-files", str(gold),
                           "--predictions", str(pred), "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    want = ref.evaluate_files([gold], pred)
    assert (out / "r.json").read_text(encoding="utf-8") == ref.report_json_text(want)
    assert (out / "r.csv").read_bytes() == csv_kit.release_csv_made_safe(want).encode("utf-8")
    csv_kit.quoted_cells((out / "r.csv").read_bytes().decode("utf-8"), ref.csv_text(want))  # differs by those quotes alone
    splits = [row["split"] for row in csv.DictReader(io.StringIO((out / "r.csv").read_text(encoding="utf-8"), newline=""))]
    assert splits[3:6] == ["True", "", '{"a": [1], "b": 2}']
    assert [r["split"] for r in json.loads((out / "r.json").read_text())["per_question"]][3:6] == ["True", "", '{"a": [1], "b": 2}']


def test_list_gold_changes_scores_only_under_the_release_profile(tmp_path):
    """The issue's example: gold ["a","b"] against the prediction text ["a", "b"] -- release 1/1/1;
    the default profile keeps compact JSON, so there it is 0 / 0 / 0.9."""
    v = VECTORS[0]
    gold_file, pred_file = _files(tmp_path, v)
    run = evaluate(load_gold(gold_file).items, load_predictions(pred_file).items, profile="xldocbench", workers=1)
    r = run.results[0]
    assert r.question.gold_answer == '["a","b"]'
    assert (r.accuracy, r.token_f1, round(r.anls, 6)) == (0.0, 0.0, 0.9)
    release, _, _ = _release_run(tmp_path, v)
    assert (release.results[0].accuracy, release.results[0].token_f1, release.results[0].anls) == (1.0, 1.0, 1.0)


def test_default_profile_keeps_its_forms(tmp_path):
    """Outside the release profile: the split stays the raw value, an object id its compact JSON,
    and a lone CR is no line end (the CR-only file is one bad line, named)."""
    by_point = {v["point"]: v for v in VECTORS}
    v = next(v for v in VECTORS if v["gold_line"].get("task_type") is True)
    gold_file, _ = _files(tmp_path, v)
    assert load_gold(gold_file).items[0].split is True
    v = next(v for v in VECTORS if v["point"] == "ids")
    gold_file, _ = _files(tmp_path, v)
    assert load_gold(gold_file).items[0].qid == '{"n":1}'
    gold_file, _ = _files(tmp_path, by_point["newlines"])
    res = load_gold(gold_file)
    assert res.items == [] and res.problems[0].line == 1 and "invalid JSON" in res.problems[0].got

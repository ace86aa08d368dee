"""`python -m scoring ... --trend OUT.csv [--steps FILE]` (scoring/trend_cli.py): the runs ordered by
step, one CSV row per real, lasting drop with exactly the contract's columns, the header alone when there
is none, and the exit codes of the gate (3 a drop larger than --min-gap with --fail-on-regression, 4 a
drop the documents cannot test, 2 usage, 1 input) -- on the bundled campaign sample (ten checkpoints, one
planted lasting drop in reasoning_type=aggregation from ckpt-0740), on lmms-eval folders whose model
arguments name the checkpoints, and on small benchmarks built here."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scoring import trend_cli
from scoring.trends import CSV_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGN = ROOT / "sample_runs" / "campaign"
GOLD = CAMPAIGN / "qa_single_doc.jsonl"
SERIES = sorted(p for p in (CAMPAIGN / "runs").glob("ckpt-*.jsonl"))
HEADER = "rank,slice,metric,step,before,after,gap,ci_low,ci_high,p,q,documents"


def scoring(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scoring", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_campaign_series_alarms_at_the_planted_drop(tmp_path):
    out = tmp_path / "alarms.csv"
    res = scoring("--gold-files", GOLD, "--predictions", *sorted((CAMPAIGN / "runs").glob("*.jsonl")), "--trend", out)
    assert res.returncode == 0, res.stderr
    assert out.read_text(encoding="utf-8").splitlines()[0] == HEADER and CSV_COLUMNS == HEADER.split(",")
    got = rows(out)
    assert got and [r["rank"] for r in got] == [str(k) for k in range(1, len(got) + 1)]
    top = got[0]
    assert (top["slice"], top["step"], top["documents"]) == ("reasoning_type=aggregation", "740", "40")
    assert {r["metric"] for r in got} == {"accuracy", "token_f1", "anls"}  # the --gate-metric metrics
    assert all(r["slice"] == "reasoning_type=aggregation" and r["step"] == "740" for r in got)
    gap, low, high = float(top["gap"]), float(top["ci_low"]), float(top["ci_high"])
    assert low <= gap <= high < 0 and float(top["after"]) - float(top["before"]) == pytest.approx(gap, abs=1e-5)
    assert 0 < float(top["p"]) <= float(top["q"]) < 0.05
    # the runs that state no step are left out, and said so
    assert "rag-baseline" in res.stderr and "left out of the trend" in res.stderr
    assert "trend of 10 checkpoints (ckpt-0100 @ 100" in res.stdout and "ALARM: reasoning_type=aggregation" in res.stdout
    assert "dropped from the best so far" in res.stdout


def test_fail_on_regression_exits_3_on_a_drop_larger_than_min_gap(tmp_path):
    out = tmp_path / "a.csv"
    res = scoring("--gold-files", GOLD, "--predictions", *SERIES, "--trend", out, "--fail-on-regression",
                  "--gate-metric", "accuracy")
    assert res.returncode == 3, res.stderr
    assert "FAILED: 1 lasting drop(s) larger than --min-gap 0.02" in res.stderr
    res = scoring("--gold-files", GOLD, "--predictions", *SERIES, "--trend", out, "--fail-on-regression",
                  "--gate-metric", "accuracy", "--min-gap", "0.6")  # the drop is 50 points
    assert res.returncode == 0, res.stderr
    assert len(rows(out)) == 1 and "no lasting drop larger than --min-gap 0.6" in res.stdout


def test_no_alarm_writes_the_header_only(tmp_path):
    out = tmp_path / "a.csv"
    before_the_drop = [p for p in SERIES if p.stem < "ckpt-0740"]
    res = scoring("--gold-files", GOLD, "--predictions", *before_the_drop, "--trend", out, "--fail-on-regression")
    assert res.returncode == 0, res.stderr
    assert out.read_text(encoding="utf-8") == HEADER + "\n"
    assert "no lasting drop beyond chance" in res.stdout


def test_steps_from_a_mapping_file(tmp_path):
    steps = tmp_path / "steps.csv"
    # the planted checkpoints moved before the others: no lasting drop at the end any more
    lines = ["run,step,series"] + [f"{p.stem},{(9 if p.stem >= 'ckpt-0740' else 99) * 1000 + k},main"
                                   for k, p in enumerate(SERIES)]
    steps.write_text("\n".join(lines) + "\nvision-13b,,\n", encoding="utf-8")
    out = tmp_path / "a.csv"
    res = scoring("--gold-files", GOLD, "--predictions", *SERIES, CAMPAIGN / "runs" / "vision-13b.jsonl",
                  "--trend", out, "--steps", steps, "--gate-metric", "accuracy")
    assert res.returncode == 0, res.stderr
    assert "ckpt-0740 @ 9006" in res.stdout and all(r["step"] != "740" for r in rows(out))


def test_two_series_a_baseline_or_steps_alone_are_usage_errors(tmp_path):
    out = tmp_path / "a.csv"
    two = tmp_path / "runs"
    two.mkdir()
    for name in ("run7-ckpt-0100", "run7-ckpt-0200", "run8-ckpt-0100"):
        shutil.copy(SERIES[0], two / f"{name}.jsonl")
    res = scoring("--gold-files", GOLD, "--predictions", *sorted(two.iterdir()), "--trend", out)
    assert res.returncode == 2 and "form 2 series" in res.stderr and "run7" in res.stderr and not out.exists()
    res = scoring("--gold-files", GOLD, "--predictions", *SERIES, "--trend", out, "--baseline", SERIES[0])
    assert res.returncode == 2 and "--baseline" in res.stderr
    res = scoring("--gold-files", GOLD, "--predictions", SERIES[0], "--steps", tmp_path / "x.csv")
    assert res.returncode == 2 and "--steps orders the runs of --trend" in res.stderr
    res = scoring("--gold-files", GOLD, "--predictions", CAMPAIGN / "runs" / "vision-13b.jsonl", "--trend", out)
    assert res.returncode == 2 and "no run states a checkpoint step" in res.stderr
    res = scoring("--help")
    assert "--trend CSV" in res.stdout and "--steps FILE" in res.stdout and "what the trend tests" in res.stdout


def test_an_unwritable_output_or_unreadable_run_is_one_sentence(tmp_path):
    res = scoring("--gold-files", GOLD, "--predictions", *SERIES[:3], "--trend", tmp_path)
    assert res.returncode == 1 and "cannot write the trend (--trend)" in res.stderr and "Traceback" not in res.stderr
    broken = tmp_path / "ckpt-0300.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    res = scoring("--gold-files", GOLD, "--predictions", SERIES[0], SERIES[1], broken, "--trend", tmp_path / "a.csv")
    assert res.returncode == 1 and "no prediction could be loaded" in res.stderr and "Traceback" not in res.stderr


def small_benchmark(tmp_path: Path, accuracies: list[float], documents: int = 6) -> tuple[Path, list[Path]]:
    """A benchmark of `documents` documents x 10 questions and one checkpoint per accuracy (the first
    questions right, the rest wrong)."""
    gold = tmp_path / "gold.jsonl"
    records = [{"question_id": f"q{d}_{i}", "question": f"Value {d} {i}?",
                "answer": {"value": str(100 + i), "format": "Int", "verification_rule": "numeric_tolerance"},
                "document": {"document_id": f"doc{d}", "evidence_pages": [1]},
                "metadata": {"domain": "finance", "reasoning_type": "lookup" if i % 2 else "counting"}}
               for d in range(documents) for i in range(10)]
    gold.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    runs = []
    for k, acc in enumerate(accuracies):
        path = tmp_path / f"checkpoint-{(k + 1) * 100}.jsonl"
        right = round(acc * len(records))
        path.write_text("".join(json.dumps({"question_id": r["question_id"],
                                            "prediction": r["answer"]["value"] if j < right else "0"}) + "\n"
                                for j, r in enumerate(records)), encoding="utf-8")
        runs.append(path)
    return gold, runs


def test_a_drop_too_few_documents_can_test_is_inconclusive(tmp_path):
    gold, runs = small_benchmark(tmp_path, [0.8, 0.8, 0.8, 0.4])
    out = tmp_path / "a.csv"
    res = scoring("--gold-files", gold, "--predictions", *runs, "--trend", out, "--fail-on-regression")
    assert res.returncode == 4, res.stdout + res.stderr
    assert "INCONCLUSIVE: overall accuracy dropped by 40.00 points at step 400 on 6 documents" in res.stdout
    assert out.read_text(encoding="utf-8") == HEADER + "\n"
    res = scoring("--gold-files", gold, "--predictions", *runs, "--trend", out, "--fail-on-regression",
                  "--inconclusive", "pass")
    assert res.returncode == 0 and "warning: INCONCLUSIVE" in res.stderr
    (tmp_path / "steady").mkdir()
    gold, runs = small_benchmark(tmp_path / "steady", [0.8] * 4)
    res = scoring("--gold-files", gold, "--predictions", *runs, "--trend", out, "--fail-on-regression")
    assert res.returncode == 0, res.stdout + res.stderr


def test_text_cells_are_neutralised_and_numbers_stay_numbers():
    from types import SimpleNamespace

    alarm = SimpleNamespace(slice="=HYPERLINK(1) & domain=x", metric="accuracy", step=740, before=0.6, after=0.1,
                            gap=-0.5, ci_low=-0.6, ci_high=-0.4, p=1e-20, q=0.01, documents=40)
    text = trend_cli.csv_text(SimpleNamespace(alarms=[alarm]))  # type: ignore[arg-type]
    row = text.splitlines()[1]
    assert row.startswith("1,'=HYPERLINK(1) & domain=x,accuracy,740,0.6,0.1,-0.5,-0.6,-0.4,1e-16,0.01,40")


def lmms_checkpoint(out: Path, step: int, wrong: int) -> None:
    """A copy of the sample's lmms-eval run as checkpoint `step` of run7 (its model arguments say so), with
    the first `wrong` answers replaced."""
    src = ROOT / "sample_runs" / "harness" / "lmms-eval" / "Qwen__Qwen2.5-VL-7B-Instruct"
    folder = out / f"run7__checkpoint-{step}"
    folder.mkdir(parents=True)
    results = json.loads((src / "20260801_101500_results.json").read_text(encoding="utf-8"))
    results["config"]["model_args"] = f"pretrained=/ckpt/run7/checkpoint-{step},dtype=bfloat16"
    results["model_name"] = f"/ckpt/run7/checkpoint-{step}"
    results["model_name_sanitized"] = folder.name
    (folder / "20260801_101500_results.json").write_text(json.dumps(results), encoding="utf-8")
    lines = (src / "20260801_101500_samples_mmlongbench_doc.jsonl").read_text(encoding="utf-8").splitlines()
    changed = []
    for k, line in enumerate(lines):
        row = json.loads(line)
        if k < wrong:
            row["filtered_resps"] = "no idea"
        changed.append(json.dumps(row))
    (folder / "20260801_101500_samples_mmlongbench_doc.jsonl").write_text("\n".join(changed) + "\n", encoding="utf-8")


def test_lmms_eval_checkpoints_are_ordered_by_their_model_arguments(tmp_path):
    for step, wrong in ((300, 0), (100, 0), (200, 0)):
        lmms_checkpoint(tmp_path / "outputs", step, wrong)
    out = tmp_path / "a.csv"
    res = scoring("--predictions", tmp_path / "outputs", "--trend", out)
    assert res.returncode == 0, res.stderr
    assert out.read_text(encoding="utf-8") == HEADER + "\n"
    line = next(x for x in res.stdout.splitlines() if x.startswith("trend of 3 checkpoints"))
    assert line.index("@ 100") < line.index("@ 200") < line.index("@ 300")


def test_the_checkpoints_held_in_the_engine_are_the_runs_columns(tmp_path):
    """--trend holds each checkpoint in an embedded DuckDB as soon as it is scored (trend_cli.Checkpoints:
    the app's ingest, read back by queries.checkpoint_matrix) and drops its result: what it reads back is
    exactly what the runs' own columns held (scoring.trends.checkpoint_scores, the reference) -- every
    metric, answered, in step order, over the first checkpoint's gold; a later checkpoint scored against a
    larger gold (a harness series) keeps only that gold's questions -- and the search and the CSV are the
    same, byte for byte."""
    import numpy as np

    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions
    from scoring.registry import METRICS
    from scoring.slices import question_fields
    from scoring.stats import document_clusters
    from scoring.trends import checkpoint_scores, search

    gold = list(load_gold([GOLD]).items)
    half = gold[: len(gold) // 2]
    picked = [SERIES[0], SERIES[6], SERIES[5], SERIES[-1]]  # not in file order: step order is the caller's

    def scored(path: Path, against: list) -> object:
        return evaluate(against, load_predictions(path).items, profile="xldocbench", ignore_missing=True, workers=1)

    first = scored(picked[0], half)
    later = [scored(p, gold) for p in picked[1:]]
    held = trend_cli.Checkpoints(tmp_path / "held")
    held.add(first, half)
    for result in later:
        held.add(result, gold)
    got = held.matrix(list(METRICS))
    want, answered = checkpoint_scores([first, *later], [q.qid for q in half], list(METRICS))
    for m in METRICS:
        assert got[m].dtype == np.float64 and np.array_equal(got[m], want[m]), m
    assert np.array_equal(got["attempted"], answered) and answered.any()
    assert not np.array_equal(want["accuracy"][1], want["accuracy"][2])  # the order of the checkpoints shows
    steps = [100, 200, 300, 400]
    clusters = document_clusters([q.document_ids for q in half])
    right = first.profile.right_mask(want["accuracy"])

    def alarms_csv(scores, done) -> str:
        found = search({"accuracy": scores["accuracy"]}, clusters, question_fields(half), steps, runs=[p.stem for p in picked],
                       answered=done, right=right)
        return trend_cli.csv_text(found)

    assert alarms_csv(got, got["attempted"]) == alarms_csv(want, answered)

"""`python -m scoring ... --weak-slices` and the regression gate (`--baseline --compare-json
--fail-on-regression`), on generated gold and prediction files: the JSON's keys, exit 3 with a
planted regression and 0 without, the weak-slice CSV's columns and its top slice."""

from __future__ import annotations

import csv
import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOMAINS = ["finance", "science", "legal"]
REASONING = ["counting", "lookup", "comparison", "arithmetic"]
SOURCES = ["Chart", "Text", "Table"]
METRIC_KEYS = {"delta", "ci", "p", "unit", "units"}


def write_gold(tmp: Path, documents: int = 160, per_doc: int = 20, seed: int = 5) -> tuple[Path, list[dict]]:
    rnd = random.Random(seed)
    rows = []
    for d in range(documents):
        domain = DOMAINS[d % 3]
        for k in range(per_doc):
            qid = f"q{d:04d}_{k:02d}"
            rows.append({"question_id": qid, "task_type": "single_doc", "question": "How many?",
                         "answer": {"value": str(100 + len(rows)), "format": "Int", "verification_rule": "numeric_tolerance"},
                         "document": {"document_id": f"doc{d:04d}", "evidence_pages": [1]},
                         "metadata": {"domain": domain, "reasoning_type": rnd.choice(REASONING),
                                      "evidence_sources": [rnd.choice(SOURCES)], "difficulty": rnd.choice(["easy", "hard"])}})
    path = tmp / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, rows


def write_run(tmp: Path, name: str, rows: list[dict], seed: int, weak=lambda r: False, drop: float = 0.0) -> Path:
    """Right with chance 0.7 (shifted per document), except where `weak` holds: there a right answer
    is made wrong with chance `drop`. The same seed gives the same answers elsewhere."""
    rnd = random.Random(seed)
    shift = {}
    out = []
    for r in rows:
        doc = r["document"]["document_id"]
        shift.setdefault(doc, random.Random(doc).uniform(-0.15, 0.15))
        right = rnd.random() < 0.7 + shift[doc]
        flip = rnd.random() < drop
        if right and weak(r) and flip:
            right = False
        value = r["answer"]["value"]
        out.append({"question_id": r["question_id"], "prediction": value if right else str(int(value) * 7 + 3)})
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in out), encoding="utf-8")
    return path


def counting_over_charts(r: dict) -> bool:
    return r["metadata"]["reasoning_type"] == "counting" and r["metadata"]["evidence_sources"] == ["Chart"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gate")
    gold, rows = write_gold(tmp)
    return {"tmp": tmp, "gold": gold,
            "old": write_run(tmp, "old", rows, seed=1),
            "same": write_run(tmp, "same", rows, seed=1),  # the same answers: no difference at all
            "noisy": write_run(tmp, "noisy", rows, seed=2),  # fresh draws at the same skill: no real difference
            "worse": write_run(tmp, "worse", rows, seed=1, weak=counting_over_charts, drop=0.8)}


def _gate(files, new: str, out: Path, *extra: str) -> int:
    return main(["--gold-files", str(files["gold"]), "--predictions", str(files[new]), "--baseline", str(files["old"]),
                 "--compare-json", str(out), "--fail-on-regression", *extra])


def test_a_planted_regression_fails_the_gate(files, capsys):
    out = files["tmp"] / "worse.json"
    assert _gate(files, "worse", out) == 3
    printed = capsys.readouterr()
    assert "REGRESSION: reasoning_type=counting accuracy" in printed.out
    assert "FAILED" in printed.err
    got = json.loads(out.read_text(encoding="utf-8"))
    assert list(got)[:3] == ["overall", "slices", "weak_slices"]
    assert set(got["overall"]) == {"accuracy", "token_f1", "anls"}
    for m in ("accuracy", "token_f1", "anls"):
        assert set(got["overall"][m]) == METRIC_KEYS
        assert got["overall"][m]["unit"] == "document" and got["overall"][m]["units"] == 160
        assert len(got["overall"][m]["ci"]) == 2
    acc = got["overall"]["accuracy"]
    assert acc["ci"][0] <= acc["delta"] <= acc["ci"][1] < 0
    rows = {r["slice"]: r for r in got["slices"]}
    assert {"domain=finance", "reasoning_type=counting", "evidence_source=Chart", "difficulty=easy"} <= set(rows)
    counting = rows["reasoning_type=counting"]
    assert set(counting) == {"slice", "field", "value", "questions", "accuracy", "token_f1", "anls"}
    assert set(counting["accuracy"]) == METRIC_KEYS | {"q"}
    assert counting["accuracy"]["delta"] < -0.1 and counting["accuracy"]["q"] < 0.05
    assert rows["domain=finance"]["accuracy"]["units"] == 54  # documents 0, 3, ..., 159
    # pair mode: where the new run lost more than elsewhere
    top = got["weak_slices"][0]
    assert top["slice"] == "reasoning_type=counting & evidence_source=Chart" and top["rank"] == 1
    assert top["gap"] < 0 and top["ci_high"] < 0 and top["q"] < 0.05 and top["documents"] >= 20


def test_no_regression_passes(files, capsys):
    for new in ("same", "noisy"):
        out = files["tmp"] / f"{new}.json"
        assert _gate(files, new, out) == 0, capsys.readouterr().out
        got = json.loads(out.read_text(encoding="utf-8"))
        assert "REGRESSION" not in capsys.readouterr().out
        if new == "same":
            assert got["overall"]["accuracy"] == {"delta": 0.0, "ci": [0.0, 0.0], "p": 1.0, "unit": "document", "units": 160}
            assert got["weak_slices"] == []


def test_min_gap_decides(files):
    # the counting slice lost ~0.8 x 0.7 / 3 of its answers over charts; a gate tolerating 50 points passes
    assert _gate(files, "worse", files["tmp"] / "tolerant.json", "--min-gap", "0.5") == 0
    # without --fail-on-regression the comparison is written and the exit code is 0
    assert main(["--gold-files", str(files["gold"]), "--predictions", str(files["worse"]), "--baseline",
                 str(files["old"]), "--compare-json", str(files["tmp"] / "plain.json")]) == 0


def test_weak_slices_csv(files, capsys):
    out = files["tmp"] / "weak.csv"
    code = main(["--gold-files", str(files["gold"]), "--predictions", str(files["worse"]), "--weak-slices", str(out),
                 "--min-documents", "15"])
    assert code == 0
    with out.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert reader.fieldnames[:9] == ["rank", "slice", "n", "documents", "gap", "ci_low", "ci_high", "p", "q"]
    assert {"excess_failures", "score_slice", "score_rest", "explains"} <= set(reader.fieldnames)
    assert rows[0]["rank"] == "1" and rows[0]["slice"] == "reasoning_type=counting & evidence_source=Chart"
    r = rows[0]
    assert float(r["gap"]) == pytest.approx(float(r["score_slice"]) - float(r["score_rest"]), abs=2e-6)
    assert float(r["excess_failures"]) == pytest.approx(-int(r["n"]) * float(r["gap"]), rel=1e-5)
    assert float(r["q"]) < 0.05 and int(r["documents"]) >= 15
    printed = capsys.readouterr().out
    assert "slices tested" in printed and ">= 15 documents" in printed
    # a tolerant threshold on the old run (no planted weakness): header only, "not enough evidence"
    empty = files["tmp"] / "none.csv"
    assert main(["--gold-files", str(files["gold"]), "--predictions", str(files["old"]), "--weak-slices", str(empty),
                 "--fdr-method", "by"]) == 0
    assert empty.read_text(encoding="utf-8").splitlines() == [",".join(
        ["rank", "slice", "n", "documents", "gap", "ci_low", "ci_high", "p", "q", "excess_failures", "score_slice",
         "score_rest", "explains", "explained_slices"])]
    assert "not enough evidence" in capsys.readouterr().out


def test_refusals(files, capsys):
    assert main(["--gold-files", str(files["gold"]), "--predictions", str(files["worse"]),
                 "--compare-json", str(files["tmp"] / "x.json")]) == 2
    assert "need --baseline" in capsys.readouterr().err
    assert main(["--gold-files", str(files["gold"]), "--predictions", str(files["worse"]), str(files["old"]),
                 "--weak-slices", str(files["tmp"] / "x.csv")]) == 2


def test_python_m_scoring_exits_3(files):
    """The gate as a CI step runs it: the process's exit status is 3."""
    out = files["tmp"] / "sub.json"
    done = subprocess.run([sys.executable, "-m", "scoring", "--gold-files", str(files["gold"]), "--predictions",
                           str(files["worse"]), "--baseline", str(files["old"]), "--compare-json", str(out),
                           "--fail-on-regression", "--gate-metric", "accuracy"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 3, done.stderr
    assert "REGRESSION: reasoning_type=counting accuracy" in done.stdout
    assert not math.isnan(json.loads(out.read_text(encoding="utf-8"))["overall"]["accuracy"]["delta"])


# ----------------------------------------------------------------------------- the decision, edge by edge


def _comparison(slice_p: float, slice_q: float | None, delta: float = -0.3) -> dict:
    """A comparison object as `compare` writes it: no overall drop, one slice that dropped by 30 points."""
    flat = {"delta": 0.0, "ci": [-0.01, 0.01], "p": 1.0, "unit": "document", "units": 200}
    cut = {"delta": delta, "ci": [-0.4, -0.2], "p": slice_p, "q": slice_q, "unit": "document", "units": 25}
    return {"overall": {m: dict(flat) for m in ("accuracy", "token_f1", "anls")},
            "slices": [{"slice": "domain=finance", "field": "domain", "value": "finance", "questions": 300,
                        **{m: dict(cut) for m in ("accuracy", "token_f1", "anls")}}]}


def test_a_slice_is_decided_on_its_q_never_its_p():
    from scoring.gate import decide

    def regressions(comparison, **options):
        return decide(comparison, **options)["regressions"]

    # p 0.001 alone would fail it; among many slices its q is 0.3: not a regression
    assert regressions(_comparison(0.001, 0.3), min_gap=0.02, level=0.05) == []
    assert decide(_comparison(0.001, 0.3), min_gap=0.02, level=0.05)["verdict"] == "pass"
    failing = regressions(_comparison(0.2, 0.01), min_gap=0.02, level=0.05, metrics=["accuracy"])
    assert failing == ["domain=finance accuracy -30.00 points [-40.00, -20.00], q = 0.01 (300 questions, 25 documents)"]
    # a slice too small to be tested has no q and never fails, whatever its p
    assert regressions(_comparison(1e-9, None), min_gap=0.02, level=0.05) == []


def test_the_overall_metrics_are_adjusted_together_by_bh():
    from scoring.gate import decide

    comparison = _comparison(1.0, 1.0, delta=0.0)
    for m, p in zip(("accuracy", "token_f1", "anls"), (0.03, 0.04, 0.2)):
        comparison["overall"][m] |= {"delta": -0.1, "p": p}
    # BH over 0.03, 0.04, 0.2: q = 0.06, 0.06, 0.2 -- none below 0.05, and 200 documents could have shown it
    gate = decide(comparison, min_gap=0.02, level=0.05)
    assert gate["overall_q"] == pytest.approx({"accuracy": 0.06, "token_f1": 0.06, "anls": 0.2})
    assert gate["verdict"] == "pass" and gate["inconclusive"] == []
    # the gate on Accuracy alone: a family of one, q = p = 0.03
    gate = decide(comparison, min_gap=0.02, level=0.05, metrics=["accuracy"])
    assert gate["verdict"] == "regression" and gate["regressions"][0].startswith("overall accuracy -10.00 points")


def test_a_refused_metric_is_inconclusive():
    from scoring.gate import decide

    comparison = _comparison(1.0, 1.0, delta=0.0)
    comparison["overall"]["anls"] = {"delta": None, "ci": [None, None], "p": None, "unit": "document", "units": 200,
                                     "refused": "1 of 10 paired questions have a NaN score"}
    gate = decide(comparison, min_gap=0.02, level=0.05)
    assert gate["verdict"] == "inconclusive" and gate["inconclusive"] == ["anls not tested: 1 of 10 paired questions have a NaN score"]


def _rare_gold(tmp: Path) -> Path:
    """40 documents of 6 questions; difficulty "hard" only in documents 0-4 (too few to test)."""
    from gate_kit import xl_gold

    path = xl_gold(tmp, 40, 6)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["metadata"]["difficulty"] = "hard" if int(r["document"]["document_id"][4:]) < 5 else "easy"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_slices_with_too_few_documents_stay_out_of_the_fdr_family(tmp_path):
    from scipy import stats as sps

    from gate_kit import xl_run

    gold = _rare_gold(tmp_path)
    old = xl_run(tmp_path, "old", 40, 6)
    new = xl_run(tmp_path, "new", 40, 6, right=lambda d, k: (d + k) % 3 != 0)  # a third lost, everywhere
    out = tmp_path / "c.json"
    assert main(["--gold-files", str(gold), "--predictions", str(new), "--baseline", str(old), "--compare-json", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    rows = {r["slice"]: r for r in got["slices"]}
    assert rows["difficulty=hard"]["accuracy"]["units"] == 5
    for m in ("accuracy", "token_f1", "anls"):
        assert rows["difficulty=hard"][m]["q"] is None and rows["difficulty=hard"][m]["ci"] == [None, None]
        tested = [r for r in got["slices"] if r[m]["q"] is not None]
        assert {r["slice"] for r in tested} == set(rows) - {"difficulty=hard"}
        assert [r[m]["q"] for r in tested] == pytest.approx(list(sps.false_discovery_control([r[m]["p"] for r in tested])))


def test_no_p_is_printed_or_written_as_zero(tmp_path, capsys):
    """1,100 documents all lost: the exact p 2/2^1100 underflows to 0.0 -- printed "< 1e-16", written 1e-16."""
    from gate_kit import xl_gold, xl_run

    gold = xl_gold(tmp_path, 1_100, 1)
    old = xl_run(tmp_path, "old", 1_100, 1)
    new = xl_run(tmp_path, "new", 1_100, 1, right=lambda d, k: False)
    out, weak = tmp_path / "c.json", tmp_path / "w.csv"
    assert main(["--gold-files", str(gold), "--predictions", str(new), "--baseline", str(old), "--compare-json", str(out),
                 "--fail-on-regression", "--gate-metric", "accuracy"]) == 3
    printed = capsys.readouterr().out
    assert "accuracy: -100.00 points vs baseline" in printed and "p < 1e-16" in printed
    # never "p = 0" nor "p = 0.000"; ANLS's fractional sums take Monte Carlo sign vectors: p = 1/(10,000 + 1)
    assert not re.search(r"\b[pq] = 0(\.0*)?(?![\d.])", printed), printed
    assert "anls: -99.76 points vs baseline" in printed and "p = 0.0001;" in printed
    text = out.read_text(encoding="utf-8")
    assert not re.search(r'"[pq]": 0(\.0+)?[,\n]', text)
    assert json.loads(text)["overall"]["accuracy"]["p"] == 1e-16
    # the finder's own p and q (a t test on a run right nowhere but one domain) are never written 0 either
    lone = xl_run(tmp_path, "lone", 1_100, 1, right=lambda d, k: d % 2 == 1)
    assert main(["--gold-files", str(gold), "--predictions", str(lone), "--weak-slices", str(weak)]) == 0
    printed = capsys.readouterr().out
    with weak.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(float(r["p"]) > 0 and float(r["q"]) > 0 for r in rows)
    assert "q < 1e-16" in printed and not re.search(r"\bq = 0(\.0*)?\b", printed)

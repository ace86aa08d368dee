"""dashboard.compare: flips on sample_runs/ against a checked-in file, deltas, ranks, weakest slices."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.compare import frames as C
from dashboard.core.analysis import RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.core.workspace import load_workspace
from scoring.evaluate import evaluate
from scoring.stats import holm, mcnemar_exact

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests/fixtures/expected/flips_sample_runs.json"


@pytest.fixture(scope="module")
def sample() -> Analysis:
    ws = load_workspace(Sources(ROOT / "sample_runs"))
    runs = [Run(pf.run, RECOMPUTED, str(pf.path), evaluate(ws.gold.items, pf.loaded.items, profile="xldocbench", name=pf.run))
            for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts)


def test_flip_counts_on_sample_runs_match_the_checked_in_file(sample):
    expected = json.loads(EXPECTED.read_text())["pairs"]
    assert len(expected) == 6
    for pair, fields in expected.items():
        a, b = pair.split(" vs ")
        table = C.flip_table(C.paired(sample.scores, a, b), sample.questions)
        got: dict = {}
        for row in table.itertuples(index=False):
            got.setdefault(row.field, {})[row.label] = dict(zip(C.FLIPS, row[3:7]))
            assert row.questions == sum(row[3:7])
        assert got == fields, pair
    overall = expected["longctx-ocr vs small-9b"]["overall"]["all questions"]
    assert sum(overall.values()) == 77


def tiny():
    """Six questions, two fields; A right on q1-q4, B right on q1, q5; continuous F1/ANLS."""
    ids = [f"q{i}" for i in range(1, 7)]
    questions = pd.DataFrame({
        "question_id": ids,
        "domain": ["law", "law", "law", "med", "med", None],
        "evidence_source": [("Table",), ("Table", "Text"), ("Text",), (), ("Table",), ("Chart",)],
        "document": ["d1", "d1", "d2", "d2", "d3", "d3"],
    }, index=ids)
    acc = {"A": [1, 1, 1, 1, 0, 0], "B": [1, 0, 0, 0, 1, 0], "C": [0, 0, 0, 0, 0, 1]}
    f1 = {"A": [1, .8, .6, .5, .2, 0], "B": [1, .4, .2, .1, .9, .1], "C": [.1, .1, .1, .1, .1, 1]}
    rows = [{"run": r, "question_id": q, "accuracy": float(acc[r][k]), "token_f1": f1[r][k], "anls": f1[r][k],
             "status": "success", "prediction": f"{r}{k}"} for r in acc for k, q in enumerate(ids)]
    return questions, pd.DataFrame(rows)


def test_paired_flips_and_slices():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    assert pairs["flip"].tolist() == ["both right", "only A", "only A", "only A", "only B", "both wrong"]
    table = C.flip_table(pairs, questions, ["domain", "evidence_source"]).set_index(["field", "label"])
    assert table.loc[("overall", "all questions"), list(C.FLIPS)].tolist() == [1, 3, 1, 1]
    assert table.loc[("domain", "unknown"), "both wrong"] == 1
    assert table.loc[("evidence_source", "Table"), list(C.FLIPS)].tolist() == [1, 1, 1, 0]  # q1, q2, q5
    assert table.loc[("evidence_source", "unknown"), "only A"] == 1  # q4 has no source
    cell = C.flip_questions(pairs, questions, "evidence_source", "Text", "only A")
    assert list(cell.index) == ["q2", "q3"]
    assert list(C.flip_questions(pairs, questions, "overall", "all questions", None).index) == list(questions.index)


def test_deltas_hand_computed():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    d = C.deltas(pairs, questions, ["domain"], C.Settings(resamples=2000, seed=1)).set_index(["field", "label"])
    top = d.loc[("overall", "all questions")]
    assert top["questions"] == 6 and top["small"]
    assert top["accuracy_delta"] == pytest.approx((4 - 2) / 6)
    assert top["token_f1_delta"] == pytest.approx(np.mean([0, .4, .4, .4, -.7, -.1]))
    assert top["accuracy_low"] <= top["accuracy_delta"] <= top["accuracy_high"]
    assert (top["only_a"], top["only_b"]) == (3, 1)
    assert top["p_mcnemar"] == pytest.approx(mcnemar_exact(3, 1)) == pytest.approx(0.625)
    assert top["p_holm"] == top["p_mcnemar"]
    law = d.loc[("domain", "law")]
    assert law["accuracy_a"] == 1.0 and law["accuracy_b"] == pytest.approx(1 / 3) and law["only_a"] == 2
    slices = d.drop(index=("overall", "all questions"))
    assert slices["p_holm"].tolist() == pytest.approx(holm(slices["p_mcnemar"].tolist()))
    again = C.deltas(pairs, questions, ["domain"], C.Settings(resamples=2000, seed=1))
    pd.testing.assert_frame_equal(again.set_index(["field", "label"]), d)


def test_ranks_per_slice():
    questions, scores = tiny()
    long = C.slice_scores(scores, questions, ["A", "B", "C"], "accuracy", ["domain"])
    got = long.set_index(["field", "label", "run"])
    assert got.loc[("overall", "all questions", "A"), "rank"] == 1
    assert got.loc[("overall", "all questions", "B"), "rank"] == 2
    assert got.loc[("domain", "unknown", "C"), "rank"] == 1
    assert got.loc[("domain", "unknown", "A"), "rank"] == got.loc[("domain", "unknown", "B"), "rank"] == 2  # tie
    wide = C.rank_table(long).set_index(["field", "label"])
    assert wide.loc[("domain", "med"), ["A", "B", "C"]].tolist() == [1, 1, 3]
    assert wide.loc[("domain", "law"), "questions"] == 3


def test_weakest_slices_against_own_overall_and_best_run():
    questions, scores = tiny()
    s = C.Settings(resamples=1000)
    own = C.weakest(scores, questions, "A", "accuracy", fields=["domain"], settings=s)
    # A overall 4/6; law 1.0 (gap -1/3), med 0.5 (gap 1/6, weight 2/6), unknown 0 (gap 2/3, weight 2/3)
    assert own["label"].tolist() == ["unknown", "med", "law"]
    assert own["weight"].tolist() == pytest.approx([2 / 3, 2 / 6, -1.0])
    assert own.loc[0, "gap_low"] <= own.loc[0, "gap"] <= own.loc[0, "gap_high"]
    best = C.weakest(scores, questions, "A", "accuracy", against=C.BEST, fields=["domain"], settings=s).set_index("label")
    assert best.loc["unknown", "reference_run"] == "C" and best.loc["unknown", "gap"] == pytest.approx(1.0)
    assert best.loc["med", "reference_run"] == "B" and best.loc["med", "gap"] == pytest.approx(0.0)
    assert C.weakest(scores, questions, "nobody").empty


def test_telling_failures_put_regressions_first():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    weak = C.weakest(scores, questions, "A", fields=["domain"], settings=C.Settings(resamples=500))
    told = C.telling_failures(pairs, questions, weak, k=5)
    assert list(told.index) == ["q5", "q6"]  # A wrong: q5 (B right), q6 (both wrong)
    assert told.loc["q6", "why"] == ["domain: unknown"]


def test_slice_keys():
    assert C.parse_slice("domain:law:x") == ("domain", "law:x")
    assert C.parse_slice("nonsense") is None and C.parse_slice("") is None
    assert C.slice_key("domain", "law") == "domain:law"


def test_run_intervals_hold_the_mean():
    _, scores = tiny()
    iv = C.run_intervals(scores, ["A", "B"], C.Settings(resamples=500)).set_index("run")
    assert iv.loc["A", "accuracy"] == pytest.approx(4 / 6)
    assert iv.loc["A", "accuracy_low"] <= 4 / 6 <= iv.loc["A", "accuracy_high"]

"""One definition of a right answer (issue 29, section 2): scoring.profiles decides it per profile,
and the categories, the dashboard's score frame (its `right` column, right_runs) and the
disagreement scatter all read that one definition. Under MMLongBench-Doc, whose Accuracy is the
evaluator's partial score, an answer scored 0.8 is right everywhere; under the all-or-nothing
profiles only Accuracy 1 is."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from dashboard.disagreement import frames as dg
from dashboard.disagreement.charts import pair_scatter
from scoring.categories import classify
from scoring.evaluate import evaluate
from scoring.metrics import judge
from scoring.mmlongbench_rule import eval_score
from scoring.model import GoldQuestion, ScoreRow
from scoring.profiles import MMLONGBENCH_PROFILE, PROFILES, RIGHT_AT, get_profile, is_right
from scoring.registry import PASS_THRESHOLDS

ROOT = Path(__file__).resolve().parent.parent
MM = ROOT / "sample_runs" / "mmlongbench"
RIGHT_FAMILY = {"fragile_pass", "right_but_verbose", "right_other_format", "right_all_agree"}
WRONG_FAMILY = {"same_words_other_order", "probably_right_scored_wrong", "unit_or_scale_slip", "numeric_near_miss",
                "partially_right", "wrong_but_string_credit", "wrong_all_agree"}


@pytest.mark.parametrize("name, right_at", [("xldocbench", 1.0), ("xldocbench-1519", 1.0), ("docvqa", 1.0),
                                            (MMLONGBENCH_PROFILE, 0.5)])
def test_right_at_per_profile(name, right_at):
    p = get_profile(name)
    assert p.right_at == right_at
    assert p.is_right(1.0) and not p.is_right(0.0) and not p.is_right(None) and not p.is_right(math.nan)
    assert p.is_right(right_at) and not p.is_right(right_at - 0.01)
    assert p.is_right(right_at - 1e-12)  # a mean of floats a hair under the mark is still right
    assert list(p.right_mask([0.0, 0.8, 1.0, math.nan])) == [False, right_at <= 0.8, True, False]


def test_a_fractional_accuracy_is_right_only_where_accuracy_is_partial():
    assert is_right(0.8, MMLONGBENCH_PROFILE) and not is_right(0.49, MMLONGBENCH_PROFILE)
    assert not is_right(0.8, "xldocbench") and not is_right(0.8)  # the default profile: all or nothing
    assert set(PROFILES) >= set(RIGHT_AT)  # RIGHT_AT names real profiles only
    assert "accuracy" not in PASS_THRESHOLDS  # no second threshold for Accuracy anywhere
    assert get_profile(MMLONGBENCH_PROFILE).right_rule == "Accuracy ≥ 0.5"
    assert get_profile("xldocbench").right_rule == "Accuracy 1"


@pytest.mark.parametrize("gold, pred, fmt, score", [
    ("Kevin", "Kevan", "Str", 0.8),  # ANLS 1 - 1/5: the evaluator gives credit -> right
    ("ModelX", "Model X", "Str", 1 - 1 / 7),
    ("Paris", "Lyon", "Str", 0.0),  # ANLS 0.2 is cut to 0 -> wrong
    ("abcd", "abxy", "Str", 0.0),  # ANLS exactly 0.5 is not above the cut: 0
    ("5", "5.0", "Int", 1.0),
    ("['a', 'b']", "['a', 'c']", "List", 0.0),
])
def test_right_is_the_evaluators_credit(gold, pred, fmt, score):
    """MMLongBench-Doc's evaluator either gives no credit (0) or more than 0.5: right from 0.5 is
    'the evaluator accepted the answer'."""
    got = eval_score(gold, pred, fmt)
    assert got == pytest.approx(score)
    assert is_right(got, MMLONGBENCH_PROFILE) == (got > 0)


def test_categories_read_the_same_definition():
    j = judge("Kevan", ["Kevin"], "Str", profile=MMLONGBENCH_PROFILE)
    assert j.accuracy == pytest.approx(0.8)
    cats = set(classify(j).categories)
    assert cats & RIGHT_FAMILY and not cats & WRONG_FAMILY  # right, never "partially right" or "wrong"
    j0 = judge("Lyon", ["Paris"], "Str", profile=MMLONGBENCH_PROFILE)
    assert j0.accuracy == 0.0 and set(classify(j0).categories) & WRONG_FAMILY
    # the same record and score read under an all-or-nothing profile: 0.8 is not right there
    jx = replace(j, profile=get_profile("xldocbench"))
    assert jx.accuracy == pytest.approx(0.8)
    assert not set(classify(jx).categories) & RIGHT_FAMILY and set(classify(jx).categories) & WRONG_FAMILY


@pytest.fixture(scope="module")
def mm_analysis() -> Analysis:
    ws = load_workspace(Sources(benchmark=MM))
    runs = [Run(pf.run, RECOMPUTED, "", evaluate(ws.gold.items, pf.loaded.items, profile=MMLONGBENCH_PROFILE,
                                                  name=pf.run)) for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts)


def test_score_frame_right_column_on_fractional_accuracy(mm_analysis):
    s = mm_analysis.rows_of(mm_analysis.run_names).set_index(["run", "question_id"])
    assert s["right"].dtype == bool
    # the sample's docowl-8b answers "Model X" for "ModelX" (0.857) and "45 min" for "45 minutes" (0.6)
    assert s.loc[("docowl-8b", "mmlongbench_0025"), "accuracy"] == pytest.approx(6 / 7)
    assert s.loc[("docowl-8b", "mmlongbench_0025"), "right"]
    assert s.loc[("docowl-8b", "mmlongbench_0030"), "accuracy"] == pytest.approx(0.6)
    assert s.loc[("docowl-8b", "mmlongbench_0030"), "right"]
    assert "docowl-8b" in mm_analysis.right_runs("mmlongbench_0025")
    fractional = s[(s["accuracy"] > 0) & (s["accuracy"] < 1)]
    assert len(fractional) == 4 and fractional["right"].all()
    assert (s["right"] == (s["accuracy"] >= 0.5)).all()


def test_categories_and_analysis_agree_on_every_answer(mm_analysis):
    frame = dg.category_frame(dg.run_categories(mm_analysis.result_of(r)) for r in mm_analysis.run_names)
    scores = mm_analysis.rows_of(mm_analysis.run_names)
    both = frame.merge(scores[["run", "question_id", "right"]], on=["run", "question_id"], suffixes=("_cat", "_an"))
    assert len(both) == len(scores) > 0
    assert (both["right_cat"] == both["right_an"]).all()
    right_cats = both["categories"].map(lambda cs: bool(set(cs) & RIGHT_FAMILY))
    assert (right_cats == both["right_an"]).all()
    # and the scatter colours by the same column: its "Accuracy ≥ 0.5" trace holds exactly the right answers
    pts, _ = dg.scatter_points(frame, mm_analysis.run_names, "token_f1", "anls")
    fig = pair_scatter(pts, "token_f1", "anls", profile=MMLONGBENCH_PROFILE)
    sizes = {t.name: len(t.x) for t in fig.data}
    assert sizes == {"Accuracy ≥ 0.5": int(both["right_an"].sum()), "Accuracy < 0.5": int((~both["right_an"]).sum())}


def test_an_official_run_is_read_under_the_profile_in_force():
    rows = [ScoreRow(qid="q1", system="sys", accuracy=0.8, token_f1=0.5, anls=0.8, status="success", prediction="x"),
            ScoreRow(qid="q2", system="sys", accuracy=0.3, token_f1=0.0, anls=0.0, status="success", prediction="y")]
    run = Run("sys", OFFICIAL, "", None, rows)
    gold = [GoldQuestion(q, "?", ("x",), "Str", "", "single_doc", {}) for q in ("q1", "q2")]

    def right(profile=None) -> dict:
        an = Analysis.build([run], gold, {}, profile)  # the run ingested into the engine under that profile
        return an.rows_of(["sys"]).set_index("question_id")["right"].to_dict()

    assert right(MMLONGBENCH_PROFILE) == {"q1": True, "q2": False}
    assert right() == {"q1": False, "q2": False}  # no profile: the default's rule
    empty = Analysis.build([], gold, {}).rows_of([])
    assert "right" in empty.columns and empty["right"].dtype == bool


def test_metric_help_says_what_accuracy_is_under_the_profile():
    mm = " ".join(get_profile(MMLONGBENCH_PROFILE).accuracy_help)
    assert "not all or nothing" in mm.lower() and "partial credit" in mm.lower() and "right from 0.5" in mm
    assert "all or nothing per question" not in mm.lower()
    for name in ("xldocbench", "xldocbench-1519", "docvqa"):
        assert "all or nothing" in " ".join(get_profile(name).accuracy_help).lower()


def test_right_runs_reads_the_profiles_right_not_the_accuracy():
    """0.8 is right under MMLongBench-Doc's profile, 1.0 read by it too; under the default only 1.0 is right:
    the engine's `is_right` (the profile's one definition), not a threshold of its own."""
    gold = [GoldQuestion("q", "?", ("x",), "Str", "", "single_doc", {})]
    runs = [Run(n, OFFICIAL, "", None, [ScoreRow(qid="q", system=n, accuracy=a, token_f1=a, anls=a)])
            for n, a in (("a", 0.8), ("b", 0.4), ("c", 1.0))]
    assert Analysis.build(runs, gold, {}, MMLONGBENCH_PROFILE).right_runs("q") == {"a", "c"}
    assert Analysis.build(runs, gold, {}).right_runs("q") == {"c"}


def test_overview_explains_accuracy_as_the_profile_scores_it(monkeypatch, tmp_path):
    from app_kit import app_on

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    at = app_on(monkeypatch, MM, None, timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(c.value for c in at.caption if "**Accuracy**" in c.value)
    assert "Partial credit, not all or nothing" in text and "All or nothing per question" not in text, text

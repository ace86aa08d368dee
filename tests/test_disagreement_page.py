"""The metric disagreement page through AppTest on sample_runs/, and its pure helpers
(dashboard/disagreement/frames.py) and the why panel on hand-built judgements."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.disagreement import frames as dg
from dashboard.disagreement.charts import category_bars, pair_scatter, points_of
from scoring.categories import CATEGORY_IDS, CATEGORY_LABELS, categorize
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions
from scoring.metrics import judge
from scoring.model import GoldQuestion, Prediction

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
EXPECTED = json.loads((ROOT / "tests" / "fixtures" / "expected" / "categories_sample_runs.json").read_text())
PAGE = "views/disagreement.py"
HOSTILE = "<b>bold</b> <script>alert(1)</script> **stars** [link](http://example.invalid) `tick`"


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def open_page(monkeypatch):
    def start(params: dict | None = None, bench: Path = SAMPLE) -> AppTest:
        at = app_on(monkeypatch, bench, params, timeout=60)
        at.switch_page(PAGE).run()
        assert_clean(at)
        return at
    return start


def frame_titled(at: AppTest, first_column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if len(d.value.columns) and d.value.columns[0] == first_column)


def answers(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if list(d.value.columns[:3]) == ["run", "question_id", "category"])


# ----------------------------------------------------------------------------- the page


def test_counts_per_run_match_the_checked_in_file(open_page):
    at = open_page()
    assert at.title[0].value == "Metric disagreement"
    counts = frame_titled(at, "category").set_index("category")
    assert list(counts.index) == [CATEGORY_LABELS[c] for c in CATEGORY_IDS]  # in words, in the contract's order
    counts.index = list(CATEGORY_IDS)
    for run, expected in EXPECTED["runs"].items():
        assert {c: int(n) for c, n in counts[run].items() if n} == expected["primary"]
    # every category is defined in one sentence on the page, in words, with the id the exports use
    defs = frame_titled(at, "Category")
    assert list(defs["Category"]) == [CATEGORY_LABELS[c] for c in CATEGORY_IDS] and all(defs["Definition"].str.endswith("."))
    assert list(defs["Id"]) == list(CATEGORY_IDS)
    # the "any" count mode
    at.radio(key="dis_mode_w").set_value("any").run()
    assert_clean(at)
    counts = frame_titled(at, "category").set_index("category")
    counts.index = list(CATEGORY_IDS)
    assert {c: int(n) for c, n in counts["small-9b"].items() if n} == EXPECTED["runs"]["small-9b"]["any"]
    assert at.query_params["dis_mode"] == "any"


def test_selecting_a_count_opens_that_categorys_answers(open_page):
    at = open_page({"run": ["small-9b", "longctx-ocr"]})
    assert len(answers(at)) == 2 * 77  # nothing chosen yet: every answer of the chosen runs
    row = list(CATEGORY_IDS).index("false_refusal")
    at.session_state["dis_counts"] = {"selection": {"rows": [], "columns": [], "cells": [[row, "small-9b"]]}}
    at.run()
    assert_clean(at)
    table = answers(at)
    assert len(table) == EXPECTED["runs"]["small-9b"]["primary"]["false_refusal"]
    assert set(table["run"]) == {"small-9b"} and set(table["category"]) == {"False refusal"}
    assert at.query_params["cat"] == "false_refusal" and at.query_params["dis_run"] == "small-9b"
    # the URL alone restores it
    again = open_page({"run": ["small-9b", "longctx-ocr"], "cat": "false_refusal", "dis_run": "small-9b"})
    assert answers(again)["question_id"].tolist() == table["question_id"].tolist()
    # a slice cell: category x label over the chosen runs
    slices = frame_titled(at, "label")
    assert "wrong_all_agree" not in slices.columns  # the categories in words
    label = slices.index[slices["Wrong all agree"] > 0][0]
    n = int(slices.loc[label, "Wrong all agree"])
    at.session_state["dis_slices_reasoning_type"] = {
        "selection": {"rows": [], "columns": [], "cells": [[int(label), "Wrong all agree"]]}}
    at.run()
    assert_clean(at)
    table = answers(at)
    assert len(table) == n and set(table["category"]) == {"Wrong all agree"}
    assert at.query_params["cat"] == "wrong_all_agree"
    assert at.query_params["dis_slice"] == slices.loc[label, "label"]


def test_scatter_selection_opens_its_points(open_page):
    at = open_page({"run": "longctx-ocr"})
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # the per-run bars and the scatter
    fig = json.loads(charts[1].proto.spec)
    assert fig["layout"]["xaxis"]["title"]["text"].startswith("Token F1")
    assert fig["layout"]["yaxis"]["title"]["text"].startswith("ANLS")
    points = [cd for t in fig["data"] if t.get("type") == "scatter" and "customdata" in t for cd in t["customdata"]]
    assert len(points) == 77 and {p[0] for p in points} == {"longctx-ocr"}
    # a box selection of three points opens exactly those answers
    chosen = sorted(p[1] for p in points)[:3]
    at.session_state["dis_scatter_token_f1 / anls"] = {"selection": {
        "points": [{"customdata": ["longctx-ocr", q, "", 0, 0]} for q in chosen],
        "point_indices": [0, 1, 2], "box": [{"x": [0, 1], "y": [0, 1]}], "lasso": []}}
    at.run()
    assert_clean(at)
    assert sorted(answers(at)["question_id"]) == chosen
    assert any(c.value.startswith("3 answers selected in the scatter") for c in at.caption)
    # the answers listed are ringed in the scatter (not before: then every point was listed)
    assert not any(t.get("name") == "listed below" for t in fig["data"])
    at.run()
    fig = json.loads(at.get("plotly_chart")[1].proto.spec)
    ring = next(t for t in fig["data"] if t.get("name") == "listed below")
    xs = ring["x"]
    n_ring = len(base64.b64decode(xs["bdata"])) // 8 if isinstance(xs, dict) else len(xs)  # float64s
    assert n_ring == 3


def test_deep_link_to_an_answer_shows_why(open_page):
    at = open_page({"run": "agent-pipeline", "cat": "fragile_pass", "dis_run": "agent-pipeline",
                    "dis_q": "adubench_single_000034"})
    codes = [c.value for c in at.code]
    # the diffs, as text: the verbose answer's extra words marked as only in the prediction
    assert "[-based on document answer is -]no[-.-]" in codes and "[-based on the document, the answer is **-]no[-**.-]" in codes
    assert any(m.value.startswith("**Category: Fragile pass**") for m in at.markdown)
    tokens = frame_titled(at, "Tokens")
    assert tokens["Tokens"].tolist() == ["shared", "missing (gold only)", "extra (prediction only)"]
    # "no." keeps its full stop after normalisation, so it is not the gold's "no": F1 0 for a right answer
    assert tokens["Which"].tolist() == ["—", "no", "answer · based · document · is · no. · on"]
    assert at.query_params["dis_q"] == "adubench_single_000034"
    # on to the question explorer, on that question and run
    at.button(key="dis_open_explorer").click().run()
    assert_clean(at)
    assert at.title[0].value == "Question explorer"
    assert at.query_params["sel"] == "adubench_single_000034" and at.query_params["run"] == "agent-pipeline"
    assert any(h.value == "Question detail" for h in at.subheader)


def test_sensitivity_section_lists_profile_changes(open_page):
    at = open_page({"run": "longctx-ocr"})
    head = frame_titled(at, "Profile").set_index("Profile")
    gold = load_gold([SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]).items
    preds = load_predictions(SAMPLE / "runs" / "longctx-ocr.jsonl").items
    base, other = evaluate(gold, preds), evaluate(gold, preds, profile="xldocbench-1519")
    assert head.loc["xldocbench (current)", "Accuracy (%)"] == pytest.approx(100 * base.overall["accuracy"])
    assert head.loc["xldocbench-1519", "Accuracy (%)"] == pytest.approx(100 * other.overall["accuracy"])
    changed = {r.qid for r, o in zip(base.results, other.results) if r.accuracy != o.accuracy}
    table = frame_titled(at, "question_id")
    assert set(table["question_id"]) == changed and changed
    assert head.loc["xldocbench-1519", "Gained"] + head.loc["xldocbench-1519", "Lost"] == len(changed)
    board = frame_titled(at, "Run").set_index("Run")
    assert board.loc["longctx-ocr", "Accuracy (%) xldocbench-1519"] == pytest.approx(100 * other.overall["accuracy"])
    assert "Rank change xldocbench-1519" in board.columns


def test_answerability_rates(open_page):
    at = open_page({"run": "small-9b"})
    rates = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["run", "unanswerable"]).set_index("run")
    exp = EXPECTED["runs"]["small-9b"]["any"]
    assert rates.loc["small-9b", "unanswerable"] == 8 and rates.loc["small-9b", "answerable"] == 69
    assert rates.loc["small-9b", "invented"] == exp["invented_answer"]
    assert rates.loc["small-9b", "false refusals (%)"] == pytest.approx(100 * exp["false_refusal"] / 69)


def test_page_without_scored_runs_says_what_to_do(open_page, tmp_path):
    (tmp_path / "qa_single_doc.jsonl").write_text((SAMPLE / "qa_single_doc.jsonl").read_text())
    at = open_page(bench=tmp_path)
    assert any("Nothing to analyse yet" in i.value for i in at.info)


# ----------------------------------------------------------------------------- the why panel: text, never HTML


def test_why_panel_shows_hostile_prediction_as_text(monkeypatch):
    def script():
        from dashboard.disagreement.why_panel import show_why
        from scoring.metrics import judge as _judge
        show_why(_judge("<b>bold</b> <script>alert(1)</script> **stars** [link](http://example.invalid) `tick`",
                        ["bold stars"]), key="t")

    at = AppTest.from_function(script, default_timeout=30).run()
    assert_clean(at)
    codes = [c.value for c in at.code]
    assert codes[:2] == [text for _, text in dg.why_diffs(judge(HOSTILE, ["bold stars"]))]
    assert codes[0].startswith("[-<b>-]bold")
    assert "<script>alert(1)</script>" in codes[0] and "[link](http://example.invalid) `tick`" in codes[0]
    for m in at.markdown:
        assert "<script>" not in m.value and "<b>" not in m.value and "http://example.invalid" not in m.value
    for c in at.caption:
        assert "<script>" not in c.value
    trace = at.dataframe[0].value.set_index("Step")["Value"]
    assert trace["Prediction as scored"] == HOSTILE
    assert trace["Rule that decided"] == dg.RULE_LABELS["no_match"]


# ----------------------------------------------------------------------------- pure helpers


def small_frame() -> tuple[pd.DataFrame, pd.DataFrame]:
    qs = [GoldQuestion("q1", "?", ("Paris",), "Str", "", "single", {"domain": "geo"}),
          GoldQuestion("q2", "?", ("100",), "Int", "", "single", {"domain": "fin"}),
          GoldQuestion("q3", "?", ("Not answerable",), "None", "", "single", {"domain": "fin"})]
    preds = {"a": [Prediction("q1", "Paris", "success"), Prediction("q2", "115", "success"),
                   Prediction("q3", "Lyon", "success")],
             "b": [Prediction("q1", "Not answerable", "success"), Prediction("q2", "1.0e2", "success")]}
    parts = [dg.run_categories(evaluate(qs, p, name=n)) for n, p in preds.items()]
    from dashboard.core.analysis import question_frame
    return dg.category_frame(parts), question_frame(qs, {})


def test_counts_slices_select_and_exports():
    frame, questions = small_frame()
    assert frame[["run", "question_id", "category"]].values.tolist() == [
        ["a", "q1", "right_all_agree"], ["a", "q2", "numeric_near_miss"], ["a", "q3", "invented_answer"],
        ["b", "q1", "false_refusal"], ["b", "q2", "right_other_format"], ["b", "q3", "failed_or_missing"]]
    c = dg.counts(frame, ["b", "a"])
    assert list(c.index) == ["b", "a"] and c.sum(axis=1).tolist() == [3, 3]
    assert c.loc["a", "numeric_near_miss"] == 1 and c.loc["b", "failed_or_missing"] == 1
    s = dg.slice_counts(frame, questions, ["a", "b"], "domain")
    assert s.loc["fin", "questions"] == 4 and s.loc["geo", "false_refusal"] == 1 and s.loc["fin", "false_refusal"] == 0
    rows = dg.select(frame, questions, ["a", "b"], "false_refusal")
    assert rows["question_id"].tolist() == ["q1"]
    assert dg.select(frame, questions, ["a", "b"], "", "domain", "fin")["question_id"].tolist() == ["q2", "q3", "q2", "q3"]
    t = dg.table(rows, questions)
    assert t.loc[0, "gold"] == "Paris" and t.loc[0, "categories"] == "false_refusal"
    j = json.loads(dg.counts_json(frame, ["a", "b"], "xldocbench"))
    assert j["runs"]["a"]["questions"] == 3 and j["runs"]["b"]["primary"]["false_refusal"] == 1
    assert list(j["categories"]) == list(CATEGORY_IDS)
    ans = dg.answerability(frame, questions, ["a", "b"]).set_index("run")
    assert ans.loc["a", "invented (%)"] == 100 and ans.loc["b", "false refusals (%)"] == 50
    assert ans.loc["b", "unanswerable"] == 1 and ans.loc["b", "invented"] == 0  # missing: not invented


def test_scatter_points_are_jittered_deterministically_and_named():
    frame, _ = small_frame()
    pts, total = dg.scatter_points(frame, ["a", "b"], "token_f1", "anls")
    again, _ = dg.scatter_points(frame, ["a", "b"], "token_f1", "anls")
    assert total == 6 and pts.equals(again)
    assert ((pts["x"] - pts["x_raw"]).abs() <= dg.JITTER + 1e-12).all()
    assert (pts["x"] != pts["x_raw"]).any()
    capped, total = dg.scatter_points(frame, ["a", "b"], "token_f1", "anls", cap=4)
    assert len(capped) == 4 and total == 6
    fig = pair_scatter(pts, "token_f1", "anls")
    assert {t.name for t in fig.data} == {"Accuracy 1", "Accuracy 0"}
    assert fig.layout.xaxis.title.text == "Token F1 (0–1, jittered)"

    class Ev:
        class selection:
            points = [{"customdata": ["&lt;run&gt;", "q1", "x", 0, 0]}, {"x": 1}]
    assert points_of(Ev) == [["<run>", "q1"]]
    bars = category_bars(dg.counts(frame, ["a", "b"]))
    assert all(t.customdata[0][1] in CATEGORY_IDS for t in bars.data)


def test_why_helpers():
    j = judge("Smith John", ["John Smith"])
    tokens, note = dg.token_overlap(j)
    assert tokens["Count"].tolist() == [2, 0, 0] and "P = 2/2" in note
    j = judge("The answer is Paris, France", ["Paris"])
    tokens, note = dg.token_overlap(j)
    assert tokens["Which"].tolist() == ["paris", "—", "france"]
    diffs = dg.why_diffs(judge("12 15", ["12"], "Int"))
    assert diffs[0][1] == "12{+ 15+}".replace("{+ 15+}", "[- 15-]")
    assert categorize(judge("12 15", ["12"], "Int"))[0] == "right_other_format"
    same = dg.why_diffs(judge("75 mg or 50 mg", ["50 mg or 75 mg"]))
    assert len(same) == 1 and same[0][0].endswith("the same")
    multi = dg.why_diffs(judge("b", ["a", "b"], profile="docvqa"))
    assert len(multi) == 2 and multi[1][1] == "b"


def test_question_explorer_detail_has_the_why_panel(open_page):
    at = open_page({"run": "small-9b", "sel": "adubench_single_000003"})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    assert at.expander and any(e.label.startswith("Why these scores") for e in at.expander)
    before = [c.value for c in at.code]
    assert not any("{+" in c or "[-" in c for c in before)  # closed: nothing drawn
    at.session_state["why_open_small-9b"] = True
    at.run()
    assert_clean(at)
    codes = [c.value for c in at.code]
    # "United Kingdom and Germany" for "Germany and United Kingdom": same words, Accuracy 0
    assert any(m.value.startswith("**Category: Same words other order**") for m in at.markdown)
    assert len(codes) == len(before) + 1 and "{+" in codes[-1]  # one diff: ANLS and normalised strings agree
    tokens = frame_titled(at, "Tokens")
    assert tokens["Count"].tolist() == [4, 0, 0]


def test_profile_leaderboard_ranks():
    gold = load_gold([SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]).items
    scored = {}
    for name in ("longctx-ocr", "small-9b", "agent-pipeline"):
        path = next(p for p in (SAMPLE / "runs").iterdir() if p.name.startswith(name + "."))
        preds = load_predictions(path).items
        scored[name] = {prof: evaluate(gold, preds, profile=prof) for prof in ("xldocbench", "xldocbench-1519")}
    board = dg.profile_leaderboard(scored, "xldocbench").set_index("Run")
    acc = {r: 100 * s["xldocbench"].overall["accuracy"] for r, s in scored.items()}
    assert list(board.index) == sorted(acc, key=lambda r: -acc[r])
    assert board["Rank xldocbench"].tolist() == [1, 2, 3]
    for r in scored:
        assert board.loc[r, "Accuracy (%) xldocbench-1519"] == pytest.approx(100 * scored[r]["xldocbench-1519"].overall["accuracy"])
        assert board.loc[r, "Rank change xldocbench-1519"] == board.loc[r, "Rank xldocbench"] - board.loc[r, "Rank xldocbench-1519"]


def test_with_no_runs_in_the_link_the_page_opens_on_the_leaderboards_first_four(monkeypatch):
    """Not the prediction files' first four by name: on sample_runs/campaign (13 runs) the two differ."""
    at = app_on(monkeypatch, SAMPLE / "campaign", timeout=120)
    board = [r for r in at.session_state["lens_context"].analysis.leaderboard()["Run"]]
    at.switch_page(PAGE).run()
    assert_clean(at)
    chosen = at.multiselect(key="dis_runs").value
    recomputed = [r.name for r in at.session_state["lens_context"].analysis.runs if r.recomputed]
    assert chosen == [r for r in board if r in recomputed][:4]
    assert chosen != recomputed[:4]  # the case this guards: the files' order is another one

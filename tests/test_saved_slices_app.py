"""Saved slices in the app (issue 25, section 3) and the finder on Compare runs, the report and the
presentation (25.2): a filter set saved in the explorer with who saved it, then a breakdown field of
the overview, of Compare's per-slice table and of the finder; opened again by its URL; the pair-mode
"where did A get worse" on Compare; the finder's top slices (or "not enough evidence") in the report
and the presentation. The benchmark: 1,600 questions in 80 documents with one planted weakness
(counting questions over charts), from tests/test_gate_cli.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.annotations.identity import benchmark_identity
from dashboard.annotations.location import FILE_NAME
from dashboard.annotations.records import SavedSlice
from dashboard.annotations.store import AnnotationStore
from dashboard.compare import frames as C
from dashboard.core.links import View, from_params, to_params
from dashboard.report.build import build_report, load
from dashboard.weak import frames as W
from dashboard.weak import panel as weak_panel
from dashboard.weak import saved as S
from scoring.loaders import load_gold
from scoring.slices import gap_test
from test_gate_cli import counting_over_charts, write_gold, write_run

NAME = "counting charts"


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("savedbench")
    gold, rows = write_gold(folder, documents=80)
    gold.rename(folder / "qa_single_doc.jsonl")
    (folder / "runs").mkdir()
    write_run(folder / "runs", "worse", rows, seed=1, weak=counting_over_charts, drop=0.8)
    write_run(folder / "runs", "old", rows, seed=1)
    return folder


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    """A database of this test's own (LENS_DATA_DIR)."""
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    return tmp_path


def identity(bench: Path) -> str:
    return benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)


def planted(bench: Path) -> int:
    gold = load_gold([bench / "qa_single_doc.jsonl"]).items
    return sum(q.meta("reasoning_type") == "counting" and q.labels("evidence_source") == ["Chart"] for q in gold)


def accuracies(bench: Path) -> dict[str, np.ndarray]:
    """Each run's Accuracy per question (gold order), scored here."""
    from scoring.evaluate import evaluate
    from scoring.loaders import load_predictions

    gold = load_gold([bench / "qa_single_doc.jsonl"]).items
    return {name: np.array([r.accuracy for r in evaluate(gold, load_predictions(bench / "runs" / f"{name}.jsonl").items,
                                                       profile="xldocbench", workers=1).results]) for name in ("worse", "old")}


def values(data) -> list[float]:
    """A plotly trace's numbers: a list, or numpy's typed array as plotly writes it (dtype + base64)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)


def planted_mask(bench: Path) -> np.ndarray:
    gold = load_gold([bench / "qa_single_doc.jsonl"]).items
    return np.array([q.meta("reasoning_type") == "counting" and q.labels("evidence_source") == ["Chart"] for q in gold])


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(monkeypatch, bench: Path, page: str, params: dict | None = None) -> AppTest:
    at = app_on(monkeypatch, bench, params, timeout=120)
    at.switch_page(page).run()
    return ok(at)


def save_in_explorer(monkeypatch, bench: Path, data: Path) -> SavedSlice:
    at = open_page(monkeypatch, bench, "views/questions.py",
                   {"run": "worse", "f.reasoning_type": "counting", "f.evidence_source": "Chart", "accuracy": "0-0"})
    assert any("Not kept in a saved slice" in c.value and "score ranges" in c.value for c in at.caption)
    at.text_input(key="ann_name_x_saved").input("Ana")
    at.text_input(key="saved_name_x_saved").input(NAME)
    at.text_area(key="saved_note_x_saved").input("planted: counting over charts")
    ok(at.button(key="saved_go_x_saved").click().run())
    assert any(NAME in s.value for s in at.success)
    (saved,) = AnnotationStore(data / FILE_NAME).saved_slices(identity(bench))
    return saved


# ----------------------------------------------------------------------------- pure


def test_membership_breakdown_and_view_by_hand():
    q = pd.DataFrame({"question_id": ["q1", "q2", "q3", "q4"], "reasoning_type": ["counting", "lookup", "counting", None],
                      "evidence_source": [("Chart",), ("Table", "Chart"), ("Text",), ("Chart",)],
                      "meta.topic": ["a", "b", "a", "a"]}).set_index("question_id", drop=False)
    charts = SavedSlice("b", "charts", {"evidence_source": ("Chart",)}, "Ana", "", "t", "t")
    tagged = SavedSlice("b", "topic a, bad", {"meta_topic": ("a",), "tag": ("bad",)}, "Bo", "", "t", "t")
    nested = SavedSlice("b", "lookup charts", {"saved_slice": ("charts",), "reasoning_type": ("lookup",)}, "Cy", "", "t", "t")
    tags = S.question_tags([type("N", (), {"question_id": "q3", "run": "r", "tags": ("bad",)})()], q.index)
    member = S.membership(q, [charts, tagged, nested], tags)
    assert member.tolist() == [("charts",), ("charts", "lookup charts"), ("topic a, bad",), ("charts",)]
    scores = pd.DataFrame({"run": ["r"] * 4, "question_id": ["q1", "q2", "q3", "q4"], "accuracy": [1.0, 0.0, 1.0, 0.0],
                           "token_f1": [0.5, 0.0, 1.0, 0.0], "anls": [1.0, 0.0, 1.0, 1.0]})
    frame = S.breakdown(scores, q, [charts, tagged, nested], tags).set_index("label")
    assert frame.loc["charts", "count"] == 3 and frame.loc["charts", "accuracy"] == pytest.approx(1 / 3)
    assert frame.loc["charts", "token_f1"] == pytest.approx(0.5 / 3) and frame.loc["lookup charts", "count"] == 1
    # a saved slice is a field of Compare's slices: each name a label, one saved slice enough
    with_field = S.with_fields(q, [charts])
    assert S.SAVED_FIELD == C.SAVED_FIELD
    assert [(f, lab, list(ids)) for f, lab, ids in C.slices(with_field, [C.SAVED_FIELD], overall=False)] == [
        ("saved_slice", "charts", ["q1", "q2", "q4"])]
    # the explorer's view of a slice, and back to its definition
    view = S.view_of(View(runs=["r"], search="x", ranges={"accuracy": (0, 0)}), tagged)
    assert (view.filters, view.tags, view.saved, view.search, view.ranges) == ({"meta.topic": ["a"]}, ["bad"], "topic a, bad", "", {})
    assert S.definition_from_view(view) == ({"meta_topic": ["a"], "tag": ["bad"]}, []) and S.same_filters(view, tagged)
    odd = View(filters={"meta.Odd Key": ["1"], "domain": ["x"]}, status=["failed"])
    assert S.definition_from_view(odd) == ({"domain": ["x"]}, ["meta.Odd Key", "status"])


def test_the_links_carry_a_saved_slice_and_the_weak_page():
    view = View(runs=["a"], saved="counting & charts", weak={"wk_run": "a", "wk_base": "b", "wk_metric": "anls"})
    params = to_params(view)
    assert params["slice"] == "counting & charts" and (params["wk_run"], params["wk_base"], params["wk_metric"]) == ("a", "b", "anls")
    back = from_params({k: v if isinstance(v, list) else [v] for k, v in params.items()})
    assert back.saved == view.saved and back.weak == view.weak and back.runs == ["a"]
    assert "slice" not in to_params(View())


# ----------------------------------------------------------------------------- the app


def test_a_saved_filter_set_is_a_field_of_the_overview_compare_and_the_finder(monkeypatch, bench, data):
    saved = save_in_explorer(monkeypatch, bench, data)
    assert saved.author == "Ana" and saved.note == "planted: counting over charts"
    assert saved.definition == {"evidence_source": ("Chart",), "reasoning_type": ("counting",)}  # the score range is not kept
    n = planted(bench)

    overview = open_page(monkeypatch, bench, "views/overview.py", {"tab": "saved_slice"})
    assert "Saved slice" in [t.label for t in overview.tabs]
    acc = accuracies(bench)
    mask = planted_mask(bench)
    bars = next(json.loads(c.proto.spec) for c in overview.get("plotly_chart") if "by saved slice" in c.proto.spec)
    by_run = {t["customdata"][0][0]: t for t in bars["data"]}
    for run in ("worse", "old"):  # one bar per run: the run's Accuracy (%) on the saved slice's questions
        assert values(by_run[run]["y"]) == pytest.approx([100 * acc[run][mask].mean()])
        assert by_run[run]["customdata"][0][1:] == ["saved_slice", NAME, n]

    compare = open_page(monkeypatch, bench, "views/compare.py", {"a": "worse", "b": "old"})
    table = next(d.value for d in compare.dataframe if "Δ (pp)" in d.value.columns)
    row = table[table["Slice"] == f"Saved slice: {NAME}"].iloc[0]
    assert row["Questions"] == n and row["Δ (pp)"] == pytest.approx(100 * (acc["worse"][mask] - acc["old"][mask]).mean())
    assert "Saved slice" in compare.selectbox(key="cmp_field").options

    weak_panel.SEARCHES.discard_where(lambda key: True)
    weak = open_page(monkeypatch, bench, "views/weak.py")
    weak.selectbox(key="weak_run").set_value("worse").run()
    ok(weak.button(key="weak_go").click().run())
    kept = [list(c) for c in next(d.value for d in weak.dataframe if "Conditions" in d.value.columns)["Conditions"]]
    folded = next((d.value for d in weak.dataframe if "Folded under" in d.value.columns), pd.DataFrame(columns=["Slice"]))
    names = [" & ".join(c) for c in kept] + list(folded["Slice"]) + list(folded.get("Folded under", []))
    assert any(f"Saved slice: {NAME}" in x for x in names)  # the saved slice is one of the finder's conditions


def test_a_saved_slice_opens_by_url_and_is_listed_and_deleted(monkeypatch, bench, data):
    save_in_explorer(monkeypatch, bench, data)
    at = open_page(monkeypatch, bench, "views/questions.py", {"run": "worse", "slice": NAME})
    assert at.multiselect(key="x_f.reasoning_type").value == ["counting"]
    assert at.multiselect(key="x_f.evidence_source").value == ["Chart"]
    assert any(c.value.startswith(f"**{planted(bench)} of 1600 questions**") for c in at.caption)
    assert at.query_params["slice"] in (NAME, [NAME])  # kept in the URL while the filters are the slice's
    listed = next(d.value for d in at.dataframe if "Saved by" in d.value.columns)
    assert listed.iloc[0]["Name"] == NAME and listed.iloc[0]["Questions"] == planted(bench) and listed.iloc[0]["Saved by"] == "Ana"
    ok(at.multiselect(key="x_f.reasoning_type").set_value([]).run())
    assert "slice" not in at.query_params  # the filters changed: the link no longer names the slice
    ok(at.button(key="saved_delete_x_saved").click().run())
    assert AnnotationStore(data / FILE_NAME).saved_slices(identity(bench)) == []
    missing = open_page(monkeypatch, bench, "views/questions.py", {"slice": "nope"})
    assert any("No saved slice named" in w.value for w in missing.warning)


def test_compare_pair_mode_where_a_got_worse_links_to_the_weak_page(monkeypatch, bench, data):
    weak_panel.SEARCHES.discard_where(lambda key: True)
    at = open_page(monkeypatch, bench, "views/compare.py", {"a": "worse", "b": "old"})
    assert not any("Conditions" in d.value.columns for d in at.dataframe)  # on request only
    ok(at.button(key="cmp_pair_go").click().run())
    top = next(d.value for d in at.dataframe if "Conditions" in d.value.columns).iloc[0]  # the worse table first
    assert list(top["Conditions"]) == ["Reasoning type: counting", "Evidence source: Chart"]
    assert top["Documents"] >= 20 and top["q"] < 0.05
    gold = load_gold([bench / "qa_single_doc.jsonl"]).items
    score, mask = accuracies(bench), planted_mask(bench)
    t = gap_test(score["worse"] - score["old"], [q.document_ids[0] for q in gold], mask)
    # the gap as the one-slice test gives it; its interval adjusted for the search: wider, still below 0
    gap, low, high = (float(x.replace("−", "-")) for x in top[W.INTERVAL].strip("]").replace("[", "").replace(",", "").split())
    assert gap == pytest.approx(100 * t.gap, abs=0.05) and low < 100 * t.ci_low and 100 * t.ci_high < high < 0
    assert len(weak_panel.SEARCHES) == 2  # worse against old, and old against worse (where A got better)
    ok(at.button(key="cmp_pair_open_worse").click().run())
    assert at.title[0].value == "Weak slices"
    assert (at.selectbox(key="weak_run").value, at.selectbox(key="weak_base").value) == ("worse", "old")
    table = next(d.value for d in at.dataframe if "Conditions" in d.value.columns)  # shown at once: the search is kept
    assert list(table.iloc[0]["Conditions"]) == ["Reasoning type: counting", "Evidence source: Chart"]
    assert at.query_params["wk_base"] in ("old", ["old"])


# ----------------------------------------------------------------------------- report and presentation


def test_the_report_shows_the_finders_top_slices_with_intervals(bench):
    ws, an, runs = load(bench, ["worse", "old"])
    saved = [SavedSlice("b", NAME, {"evidence_source": ("Chart",), "reasoning_type": ("counting",)}, "Ana", "", "t", "t")]
    page = build_report(an, runs, "old", workspace=ws, saved=saved)
    assert "Where worse is weakest" in page and "Where worse is weaker than on its other questions" in page
    assert "Where worse lost more to old than elsewhere" in page
    assert "Reasoning type: counting &amp; Evidence source: Chart" in page or f"Saved slice: {NAME}" in page
    assert "adjusted for the search" in page and "slices tested" in page
    assert f"Saved slice: {NAME}" in page  # the per-slice table has the saved slice as a field


def test_the_report_and_the_presentation_say_not_enough_evidence(monkeypatch, mini_bench):
    ws, an, runs = load(mini_bench, [r.stem for r in sorted((mini_bench / "runs").glob("*.json*"))][:2])
    page = build_report(an, runs, workspace=ws)
    assert "<b>Not enough evidence</b> for the finder: each slice needs 20 documents; this benchmark has" in page
    at = open_page(monkeypatch, mini_bench, "views/present.py")
    assert any("Not enough evidence" in m.value and "each slice needs 20 documents" in m.value for m in at.markdown)


def test_the_presentation_names_the_top_slice_with_its_interval(monkeypatch, bench):
    at = open_page(monkeypatch, bench, "views/present.py", {"a": "worse", "b": "old"})
    assert any("5 / 5" == c.value for c in at.caption)
    text = next(m.value for m in at.markdown if "lost most to" in m.value)
    assert "Reasoning type" in text and "adjusted for the search" in text and "slices tested" in text and "q " in text


def test_a_slice_the_finder_found_is_saved_from_the_weak_page(monkeypatch, bench, data):
    weak_panel.SEARCHES.discard_where(lambda key: True)
    at = open_page(monkeypatch, bench, "views/weak.py", {"wk_run": "worse"})
    assert at.selectbox(key="weak_run").value == "worse"  # the link's run
    ok(at.button(key="weak_go").click().run())
    assert at.selectbox(key="weak_save_pick").value == "reasoning_type=counting & evidence_source=Chart"
    at.text_input(key="ann_name_weak_saved").input("Bo")
    assert at.text_input(key="saved_name_weak_saved").value == "Reasoning type: counting & Evidence source: Chart"
    ok(at.button(key="saved_go_weak_saved").click().run())
    (saved,) = AnnotationStore(data / FILE_NAME).saved_slices(identity(bench))
    assert (saved.name, saved.author) == ("Reasoning type: counting & Evidence source: Chart", "Bo")
    assert saved.definition == {"evidence_source": ("Chart",), "reasoning_type": ("counting",)}
    # the saved slice is a field now: another search (asked for again), where the same name is refused
    ok(at.run())
    assert at.button(key="weak_go")
    ok(at.button(key="weak_go").click().run())
    at.text_input(key="saved_name_weak_saved").input(saved.name)
    ok(at.button(key="saved_go_weak_saved").click().run())
    assert any("is saved already" in e.value for e in at.error)
    assert AnnotationStore(data / FILE_NAME).saved_slices(identity(bench))[0].revision == 1

"""The evidence metrics on the question explorer (a run's columns, the answer-location filter in the
link) and on the overview ("Where the answers are": a click opens the explorer on that slice), through
streamlit.testing.v1.AppTest on sample_runs/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from dashboard.evidence import grounding
from dashboard.evidence.locate import question_paths
from dashboard.explorer.frames import flat_column, run_column

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
RUN = "longctx-ocr"
WRONG_PAGE = "adubench_single_000024"  # longctx-ocr answers "prior preventive failure", printed only on page 4


@pytest.fixture(scope="module")
def metrics():
    """The evidence table computed outside the app, from the same files."""
    ws = load_workspace(Sources(SAMPLE))
    preds = {pf.run: {p.qid: p for p in pf.loaded.items} for pf in ws.predictions}
    return grounding.evidence_table(ws.gold.items, preds, lambda q: question_paths(
        q, ws.locations, ws.discovery.benchmark, ws.discovery.docs_dir))


def located(metrics, runs, where) -> set[str]:
    rows = metrics[metrics["run"].isin(runs)]
    return {q for q, loc in zip(rows["question_id"], rows["answer_location"])
            if (loc if isinstance(loc, str) else grounding.NOT_SEARCHED) in where}


@pytest.fixture
def open_app(monkeypatch):
    def start(params: dict, page: str | None = None) -> AppTest:
        at = app_on(monkeypatch, SAMPLE, params, timeout=120)
        if page:
            at.switch_page(page)
            at.run()
        clean(at)
        return at
    return start


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def explorer(at: AppTest):
    table = at.dataframe[0].value
    assert table.columns.nlevels == 2
    return table.set_axis([flat_column(c) for c in table.columns], axis=1).set_index("question_id")


def ids(at: AppTest) -> set[str]:
    return set(explorer(at).index)


def test_explorer_shows_each_runs_evidence_columns(open_app, metrics):
    at = open_app({"run": [RUN, "small-9b"]}, "views/questions.py")
    headers = list(at.dataframe[0].value.columns)
    for run in (RUN, "small-9b"):  # under the run's group, right after its own columns
        start = headers.index((run, "Status")) + 1
        assert headers[start:start + 4] == [(run, "Pages P"), (run, "Pages R"), (run, "Ground."), (run, "Location")]
    table = explorer(at)
    assert table.loc[WRONG_PAGE, run_column(RUN, "Answer location")] == "only on other pages"
    mine = metrics[metrics["run"] == RUN].set_index("question_id")
    assert mine.loc[WRONG_PAGE, "answer_location"] == "other_page"
    for qid in table.index:
        if qid not in mine.index:
            continue
        want = mine.loc[qid]
        assert table.loc[qid, run_column(RUN, "Answer location")] == grounding.location_label(want["answer_location"])
        for key, label in (("evidence_precision", "Page precision"), ("evidence_recall", "Page recall"),
                           ("grounding", "Grounding")):
            got = table.loc[qid, run_column(RUN, label)]
            if pd.isna(want[key]):
                assert pd.isna(got)
            else:
                assert got == pytest.approx(want[key])
    assert table[run_column(RUN, "Page recall")].notna().any()  # longctx-ocr cites pages
    assert at.toggle(key="x_evidence").value is True  # small data: on by default


def test_answer_location_filter_and_its_link(open_app, metrics):
    at = open_app({"run": RUN}, "views/questions.py")
    at.multiselect(key="x_location").set_value(["other_page"]).run()
    clean(at)
    want = located(metrics, [RUN], {"other_page"})
    assert WRONG_PAGE in want and ids(at) == want
    assert at.query_params["loc"] == "other_page"
    line = next(re.sub(r"\\(.)", r"\1", c.value) for c in at.caption if re.search(r"\d+ of \d+ questions", c.value))
    assert line.startswith(f"**{len(want)} of 77 questions**") and "answer location: only on other pages" in line
    # any chosen run: a second run and a second location widen it
    at.multiselect(key="x_runs").set_value([RUN, "small-9b"])
    at.multiselect(key="x_location").set_value(["other_page", "not_searched"]).run()
    clean(at)
    assert ids(at) == located(metrics, [RUN, "small-9b"], {"other_page", "not_searched"})
    assert at.query_params["loc"] == ["other_page", "not_searched"]

    # the link alone restores the filter
    again = open_app({"run": RUN, "loc": "not_in_document"}, "views/questions.py")
    assert again.multiselect(key="x_location").value == ["not_in_document"]
    assert ids(again) == located(metrics, [RUN], {"not_in_document"})


def test_overview_where_the_answers_are_and_a_click_opens_the_explorer(open_app, metrics):
    at = open_app({})
    assert "Where the answers are" in [h.value for h in at.subheader]
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Where each run" in c.proto.spec)
    assert spec["layout"]["xaxis"]["title"]["text"] == "Share of the run's answers (%)"
    segments = {(cd[0], cd[2]): cd[3] for t in spec["data"] for cd in t["customdata"]}
    for where in grounding.LOCATION_ORDER:
        n = len(located(metrics, [RUN], {where}))
        assert segments.get((RUN, where), 0) == n
    rates = next(d.value for d in at.dataframe if "answer_only_on_other_page" in d.value.columns).set_index("run")
    want = grounding.run_rates(metrics).set_index("run")
    for col in ("evidence_precision", "evidence_recall", "answer_only_on_other_page", "answer_not_in_document"):
        assert rates.loc[RUN, col] == pytest.approx(want.loc[RUN, col])

    at.session_state["ov_locations"] = {"selection": {
        "points": [{"customdata": [RUN, "answer_location", "other_page", segments[(RUN, "other_page")]]}],
        "point_indices": [0], "box": [], "lasso": []}}
    at.run()
    clean(at)
    assert at.title[0].value == "Question explorer"
    assert at.multiselect(key="x_runs").value == [RUN]
    assert at.multiselect(key="x_location").value == ["other_page"]
    assert ids(at) == located(metrics, [RUN], {"other_page"})
    assert at.query_params["loc"] == "other_page" and at.query_params["run"] == RUN


def test_big_data_computes_on_request(open_app, metrics, monkeypatch):
    monkeypatch.setattr(grounding, "AUTO_PAIRS", 10)  # sample_runs: 77 questions × 7 runs
    at = open_app({"run": RUN}, "views/questions.py")
    assert at.toggle(key="x_evidence").value is False
    assert (RUN, "Location") not in list(at.dataframe[0].value.columns)
    assert any("Evidence columns are off" in c.value for c in at.caption)
    at.toggle(key="x_evidence").set_value(True).run()
    clean(at)
    assert (RUN, "Location") in list(at.dataframe[0].value.columns)

    ov = open_app({})
    assert not any("Where each run" in c.proto.spec for c in ov.get("plotly_chart"))
    ov.button(key="ov_locate").click().run()
    clean(ov)
    assert any("Where each run" in c.proto.spec for c in ov.get("plotly_chart"))
    # the answer-location filter works from a link even with the columns off
    link = open_app({"run": RUN, "loc": "other_page"}, "views/questions.py")
    assert (RUN, "Location") not in list(link.dataframe[0].value.columns)
    assert ids(link) == located(metrics, [RUN], {"other_page"})


def test_overview_opens_a_location_from_the_keyboard(open_app, metrics):
    at = open_app({})
    at.selectbox(key="ov_loc_run").set_value("small-9b")
    at.selectbox(key="ov_loc_where").set_value("not_in_document")
    at.button(key="ov_loc_open").click().run()
    clean(at)
    assert at.title[0].value == "Question explorer" and at.multiselect(key="x_runs").value == ["small-9b"]
    assert ids(at) == located(metrics, ["small-9b"], {"not_in_document"})
    assert at.query_params["loc"] == "not_in_document"

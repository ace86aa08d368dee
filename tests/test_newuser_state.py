"""What a new user tripped over (issue 18), where it is state: through streamlit.testing.v1.AppTest on
sample_runs/ (and the mini benchmark).

- the Evidence page's page, zoom and layers are in the link, and a link restores them (page 55 shows 55);
- the Evidence page opens on the runs the question explorer opens on (the best by the leaderboard);
- the fuzzy score is named by what it measures, never "seed 001";
- no explorer header cell repeats its group's name ("Question" over "Question");
- opening a slice hands the explorer's URL to st.switch_page (one history entry; the browser test
  tests/test_browser_newuser.py counts them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.links import from_params
from dashboard.disagreement.frames import FUZZY_LABEL, SCORE_LABELS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
CROSS = "adubench_cross_000001"  # its first document, doc_000004, has 55 pages (p. 55 is a scanned page)
RUN = "longctx-img"


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def page_input(at: AppTest):
    return next(n for n in at.number_input if n.label.startswith("Page (of "))


def zoom_slider(at: AppTest):
    return next(s for s in at.select_slider if s.label == "Zoom")


def layers(at: AppTest):
    return next(b for b in at.button_group if b.label == "Layers")


def link(at: AppTest) -> dict[str, list[str]]:
    """The page's URL query after the run, every value as a list (AppTest gives one value as a str)."""
    return {k: [v] if isinstance(v, str) else list(v) for k, v in at.query_params.items()}


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@pytest.fixture
def evidence(monkeypatch):
    def start(params: dict, bench: Path = SAMPLE) -> AppTest:
        at = app_on(monkeypatch, bench, params, timeout=120)
        at.switch_page("views/evidence.py")
        return at.run()
    return start


# ----------------------------------------------------------------------------- the Evidence page's link


def test_a_deep_link_restores_page_zoom_and_layers(evidence):
    at = evidence({"sel": CROSS, "run": [RUN], "page": "55", "zoom": "200", "layer": ["Gold boxes", f"{RUN}: answer"]})
    clean(at)
    assert page_input(at).value == 55  # it showed 1 (the OCR engineer's link to the scanned page)
    assert zoom_slider(at).value == 2.0
    assert layers(at).value == ["Gold boxes", f"{RUN}: answer"]
    shown = unescape("\n".join(c.value for c in at.caption))
    assert "doc_000004 · page 55 of 55 · not an evidence page" in shown
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"Gold evidence"' not in fig  # a layer left out of the link is not drawn
    # and the URL keeps saying so
    params = link(at)
    assert params["page"] == ["55"] and params["zoom"] == ["200"]
    assert params["layer"] == ["Gold boxes", f"{RUN}: answer"]


def test_what_the_user_sets_goes_into_the_link_and_back(evidence):
    at = evidence({"sel": CROSS, "run": [RUN]})
    clean(at)
    assert page_input(at).value == 11  # the first evidence page by default, and the link stays short
    assert not {"page", "zoom", "layer"} & set(at.query_params)
    page_input(at).set_value(30).run()
    zoom_slider(at).set_value(0.75).run()
    layers(at).set_value([f"{RUN}: answer"]).run()
    clean(at)
    params = link(at)
    assert params["page"] == ["30"] and params["zoom"] == ["75"] and params["layer"] == [f"{RUN}: answer"]
    view = from_params(params)
    assert (view.page, view.zoom, view.layers, view.question) == (30, 75, [f"{RUN}: answer"], CROSS)
    # every layer off is a link of its own (`layer=`), not the default
    layers(at).set_value([]).run()
    clean(at)
    assert link(at)["layer"] == [""] and from_params(link(at)).layers == []
    # back to the defaults: the link forgets them
    page_input(at).set_value(11).run()
    zoom_slider(at).set_value(1.5).run()
    layers(at).set_value(["Gold evidence", "Gold boxes", "Gold answer", f"{RUN}: answer",
                          f"{RUN}: cited evidence"]).run()
    clean(at)
    assert not {"page", "zoom", "layer"} & set(at.query_params)


def test_another_question_opens_on_its_own_first_evidence_page(evidence):
    at = evidence({"sel": CROSS, "run": [RUN], "page": "55"})
    clean(at)
    assert page_input(at).value == 55
    at.selectbox(key="ev_question").set_value("adubench_single_000024").run()
    clean(at)
    assert page_input(at).value == 24  # its first evidence page, not page 55 of the link
    assert "page" not in at.query_params


def test_a_page_beyond_the_document_falls_back_to_the_evidence_page(evidence):
    at = evidence({"sel": CROSS, "run": [RUN], "page": "999", "zoom": "333", "layer": "no such layer"})
    clean(at)
    assert page_input(at).value == 11 and zoom_slider(at).value == 1.5 and layers(at).value == []


# ----------------------------------------------------------------------------- the same runs by default


def test_the_evidence_page_opens_on_the_explorers_runs(monkeypatch):
    at = app_on(monkeypatch, SAMPLE, {}, timeout=120)
    at.switch_page("views/questions.py").run()
    clean(at)
    explorer = at.multiselect(key="x_runs").value
    at2 = app_on(monkeypatch, SAMPLE, {}, timeout=120)
    at2.switch_page("views/evidence.py").run()
    clean(at2)
    chosen = at2.multiselect(key="ev_runs").value
    assert chosen == explorer
    # the best four by the leaderboard's Accuracy among the runs with answers, not the first two by name
    assert chosen == ["longctx-ocr", "agent-pipeline", "longctx-img", "small-9b"]
    assert chosen != sorted(chosen)[:2]


# ----------------------------------------------------------------------------- the fuzzy score's name


def test_the_fuzzy_score_says_what_it_measures(monkeypatch):
    assert SCORE_LABELS["fuzzy"] == FUZZY_LABEL and "seed" not in FUZZY_LABEL.lower()
    at = app_on(monkeypatch, SAMPLE, {"run": ["longctx-ocr"], "dis_pair": "anls / fuzzy", "dis_q": "adubench_single_000024",
                                      "dis_run": "longctx-ocr"}, timeout=180)
    at.switch_page("views/disagreement.py").run()
    clean(at)
    texts = [c.value for c in at.caption] + [m.value for m in at.markdown] + [
        str(c.proto) for c in at.get("plotly_chart")] + [str(d.proto) for d in at.dataframe]
    every = unescape("\n".join(texts))
    assert "seed 001" not in every.lower() and "seed-001" not in every.lower()
    assert "Fuzzy match" in every and "token-set" in every  # the definitions under the categories
    assert re.search(r"Fuzzy match \(string similarity\): \d\.\d{3}", every)  # the selected answer's "why"
    scatter = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]  # the metric-pair scatter, ANLS × fuzzy
    assert scatter["yaxis"]["title"]["text"] == f"{FUZZY_LABEL} (0–1, jittered)"
    assert scatter["title"]["text"] == "Fuzzy match against ANLS, coloured by Accuracy"
    answers = next(d for d in at.dataframe if "fuzzy" in d.value.columns)
    assert FUZZY_LABEL in str(answers.proto)  # the table's header


# ----------------------------------------------------------------------------- explorer headers


def test_no_explorer_header_repeats_its_group(monkeypatch):
    at = app_on(monkeypatch, SAMPLE, {"run": ["longctx-ocr"]}, timeout=120)
    at.switch_page("views/questions.py").run()
    clean(at)
    columns = list(at.dataframe[0].value.columns)
    assert ("Question", "Text") in columns and ("Question", "Gold") in columns
    assert [c for c in columns if c[0] == c[1]] == []
    assert len(set(columns)) == len(columns)


# ----------------------------------------------------------------------------- a slice opens with its URL


def test_a_slice_opens_with_its_own_link(monkeypatch, mini_bench):
    from dashboard.shell import viewstate

    calls = []
    real = viewstate.st.switch_page

    def spy(page, **kwargs):
        calls.append(kwargs.get("query_params"))
        return real(page, **kwargs)

    monkeypatch.setattr(viewstate.st, "switch_page", spy)
    at = app_on(monkeypatch, mini_bench, {"metric": "anls"})
    clean(at)
    at.selectbox(key="ov_pick_field").set_value("domain").run()
    at.selectbox(key="ov_pick_label").set_value("legal_regulation")
    at.selectbox(key="ov_pick_run").set_value("beta")
    at.button(key="ov_show").click().run()
    clean(at)
    assert at.title[0].value == "Question explorer"
    wanted = {"run": "beta", "f.domain": ["legal_regulation"], "metric": "anls"}
    # the explorer's link went with the switch, so the explorer's own sync writes nothing more
    assert calls and calls[-1] is not None
    as_lists = {k: [v] if isinstance(v, str) else list(v) for k, v in calls[-1].items()}
    assert as_lists == {k: [v] if isinstance(v, str) else v for k, v in wanted.items()}
    assert link(at) == as_lists  # what the explorer shows is what went with the switch

"""The Weak slices page through AppTest: on a generated benchmark with one planted weakness the search,
run on request, ranks that slice first -- in words, with its gap, its interval adjusted for the search
(wider than the one-slice test's, wholly below 0), documents and q -- draws the forest plot, folds the
slices it explains, and links to exactly its questions in the explorer; a benchmark with fewer documents
than a slice needs says so at once ("each slice needs 20 documents; this benchmark has 6") and offers
the campaign sample."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.links import from_params
from dashboard.weak import panel as weak_panel
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions
from scoring.slices import gap_test
from test_gate_cli import counting_over_charts, write_gold, write_run

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("weakbench")
    gold, rows = write_gold(folder, documents=80)
    gold.rename(folder / "qa_single_doc.jsonl")
    (folder / "qa_cross_doc.jsonl").write_text("", encoding="utf-8")
    (folder / "runs").mkdir()
    write_run(folder / "runs", "worse", rows, seed=1, weak=counting_over_charts, drop=0.8)
    write_run(folder / "runs", "old", rows, seed=1)  # the same answers but for the planted drop
    return folder


def planted_scores(folder: Path, name: str = "worse") -> tuple[np.ndarray, list[str], np.ndarray]:
    """The run's Accuracy per question, each question's document and the planted slice's mask."""
    gold = load_gold([folder / "qa_single_doc.jsonl"]).items
    run = evaluate(gold, load_predictions(folder / "runs" / f"{name}.jsonl").items, profile="xldocbench", workers=1)
    rows = run.results
    mask = np.array([r.question.meta("reasoning_type") == "counting" and r.question.labels("evidence_source") == ["Chart"]
                     for r in rows])
    return np.array([r.accuracy for r in rows]), [r.question.document_ids[0] for r in rows], mask


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def open_page(monkeypatch, folder: Path, params: dict | None = None, page: str = "views/weak.py") -> AppTest:
    at = app_on(monkeypatch, folder, params, timeout=90)
    at.switch_page(page).run()
    assert_clean(at)
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_planted_weakness_ranked_first_and_linked(monkeypatch, bench):
    weak_panel.SEARCHES.discard_where(lambda key: True)
    at = open_page(monkeypatch, bench)
    assert at.title[0].value == "Weak slices"
    assert at.selectbox(key="weak_run").value == "old"  # the best run first
    assert not at.dataframe and "on request" in at.info[0].value  # nothing is computed before the button
    at.selectbox(key="weak_run").set_value("worse").run()
    at.button(key="weak_go").click().run()
    assert_clean(at)
    shown = metrics(at)
    tested = int(shown["Slices tested"].replace(",", ""))
    assert tested > 50 and shown["Weak slices"] == "1"
    assert any(f"{tested:,} slices tested" in c.value and "20 documents" in c.value for c in at.caption)
    table = next(d.value for d in at.dataframe if "Conditions" in d.value.columns)
    top = table.iloc[0]
    assert list(top["Conditions"]) == ["Reasoning type: counting", "Evidence source: Chart"]  # in words
    assert top["Rank"] == 1 and top["Documents"] >= 20 and top["q"] < 0.05 and top["Gap (pp)"] < -20
    assert top["Excess failures"] == pytest.approx(-top["Questions"] * top["Gap (pp)"] / 100)
    # the same numbers as the finder's test on the scored run, by hand: slice against the rest, documents as clusters
    t = gap_test(*planted_scores(bench))
    assert top["Gap (pp)"] == pytest.approx(100 * t.gap) and top["Questions"] == t.n_a
    # the interval is the one adjusted for the search: wider than the one as if named in advance, still below 0
    shown = top["Gap (pp), interval adjusted for the search"]
    gap, low, high = (float(x.replace("−", "-")) for x in shown.replace("[", "").replace("]", "").replace(",", "").split())
    assert gap == pytest.approx(100 * t.gap, abs=0.05)
    assert low < 100 * t.ci_low - 0.5 and 100 * t.ci_high + 0.5 < high < 0
    assert any("adjusted for the search" in c.value and "1 \\- R q \\/ m" in c.value for c in at.caption)
    assert top["Explains"] >= 2
    assert at.get("plotly_chart")  # the forest plot

    # the row's link opens the explorer on that run and exactly these conditions
    link = urlsplit(top["Open in explorer"])
    assert link.path == "questions"
    view = from_params(parse_qs(link.query))
    assert view.runs == ["worse"] and view.filters == {"reasoning_type": ["counting"], "evidence_source": ["Chart"]}
    explorer = open_page(monkeypatch, bench, {k: v for k, v in parse_qs(link.query).items()}, "views/questions.py")
    assert any(c.value.startswith(f"**{top['Questions']} of 1600 questions**") for c in explorer.caption)


def test_the_search_is_kept_for_the_same_scores_and_settings(monkeypatch, bench):
    weak_panel.SEARCHES.discard_where(lambda key: True)
    at = open_page(monkeypatch, bench)
    at.selectbox(key="weak_run").set_value("worse").run()
    at.button(key="weak_go").click().run()
    assert len(weak_panel.SEARCHES) == 1
    again = open_page(monkeypatch, bench)  # a new session: shown at once, no button
    again.selectbox(key="weak_run").set_value("worse").run()
    assert metrics(again)["Weak slices"] == "1" and len(weak_panel.SEARCHES) == 1
    # other settings are another search: stricter thresholds, asked for again
    again.number_input(key="weak_min_d").set_value(70).run()
    assert_clean(again)
    assert not again.metric and again.button(key="weak_go")
    again.button(key="weak_go").click().run()
    assert_clean(again)
    assert len(weak_panel.SEARCHES) == 2 and any("70 documents" in c.value for c in again.caption)


def test_pair_mode_where_the_run_got_worse(monkeypatch, bench):
    at = open_page(monkeypatch, bench)
    at.selectbox(key="weak_run").set_value("worse").run()
    at.selectbox(key="weak_base").set_value("old").run()
    at.button(key="weak_go").click().run()
    assert_clean(at)
    assert any("paired difference run − baseline" in c.value for c in at.caption)
    top = next(d.value for d in at.dataframe if "Conditions" in d.value.columns).iloc[0]
    assert list(top["Conditions"]) == ["Reasoning type: counting", "Evidence source: Chart"]
    new, _, mask = planted_scores(bench)
    old, _, _ = planted_scores(bench, "old")
    d = new - old  # 0 outside the planted slice: the gap is the slice's mean difference
    assert top["Gap (pp)"] == pytest.approx(100 * (d[mask].mean() - d[~mask].mean())) and d[~mask].max() == 0
    view = from_params(parse_qs(urlsplit(top["Open in explorer"]).query))
    assert view.runs == ["worse", "old"]  # both runs side by side in the explorer


def test_too_few_documents_says_why_at_once_and_offers_the_campaign(monkeypatch, mini_bench):
    """Issue 34.4: a benchmark too small for the finder says why -- each slice needs 20 documents, this
    one has fewer -- before anything is searched (no button), and offers the bundled campaign sample:
    as a link where its folder opens on this server (the sample is the benchmark), else in words."""
    at = open_page(monkeypatch, mini_bench)
    assert not [b for b in at.button if b.key == "weak_go"]  # nothing to search
    said = at.info[0].value
    assert said.startswith("Not enough evidence for the finder here: each slice needs 20 documents; this benchmark has ")
    assert not any("Conditions" in d.value.columns for d in at.dataframe)
    assert any("sample_runs/campaign" in c.value for c in at.caption)  # not a data root here: said how to open it
    on_sample = open_page(monkeypatch, ROOT / "sample_runs")
    said = on_sample.info[0].value
    assert "each slice needs 20 documents; this benchmark has 6" in said
    link = next(m.value for m in on_sample.markdown if "open the bundled campaign sample" in m.value)
    target = link.split("](", 1)[1].split(")", 1)[0]
    assert target.startswith("weak?") and from_params(parse_qs(urlsplit(target).query)).data.endswith("campaign")
    # with fewer documents asked of a slice, the search is offered again
    on_sample.number_input(key="weak_min_d").set_value(5).run()
    assert on_sample.button(key="weak_go")

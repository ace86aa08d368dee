"""The Trends page, the question x run matrix, the Data page's checkpoint steps, the presentation's trend
slide and the report's trend section, through AppTest on the bundled campaign sample (ten checkpoints,
one planted lasting drop in reasoning_type=aggregation from ckpt-0740) and on the default sample (no
series): what each shows, the links between them and what the URL keeps."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.links import View, from_params, to_params
from dashboard.trends import frames as F

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
CAMPAIGN = SAMPLE / "campaign"
SLICE = "reasoning_type=aggregation"


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def open_page(monkeypatch, page: str, params: dict | None = None, bench: Path = CAMPAIGN) -> AppTest:
    at = app_on(monkeypatch, bench, params, timeout=240)
    at.switch_page(page).run()
    assert_clean(at)
    return at


def param(at: AppTest, key: str) -> list[str]:
    value = at.query_params.get(key, [])
    return [value] if isinstance(value, str) else list(value)


def table(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_trends_show_the_planted_lasting_drop_and_link_to_its_questions(monkeypatch):
    at = open_page(monkeypatch, "views/trends.py")
    assert at.selectbox(key="tr_series").value == "checkpoints"
    alarm = " ".join(e.value for e in at.error)
    assert "aggregation" in alarm and "step 740" in alarm and "stayed down" in alarm and "best so far" in alarm
    alarms = table(at, "Open in matrix")
    top = alarms.iloc[0]
    assert (top["Slice"], int(top["From step"]), top["First run after"]) == (SLICE, 740, "ckpt-0740")
    assert (int(top["Documents"]), round(top["Before (%)"], 1), round(top["After (%)"], 1)) == (40, 60.0, 10.0)
    assert 0 < top["q"] < 0.05 and top["Lost questions"] > 0
    link = urlsplit(top["Open in matrix"])
    view = from_params({k: v for k, v in parse_qs(link.query).items()})
    assert link.path == "matrix" and view.filters == {"reasoning_type": ["aggregation"]}
    assert view.matrix == {"mx_series": "checkpoints", "mx_sort": "forgotten", "mx_at": "740"}
    # the chart opens on the alarm's slice; every slice's trend is listed with a sparkline of its scores
    assert at.selectbox(key="tr_slice").value == SLICE
    every = table(at, "Trend (%)")
    row = every[every["Slice"] == SLICE].iloc[0]
    assert len(row["Trend (%)"]) == 10 and row["Alarm"] == "lasting drop from step 740"
    assert every.iloc[0]["Slice"] == "overall"
    assert param(at, "tr_series") == ["checkpoints"]


def test_the_link_keeps_the_series_slice_and_metric(monkeypatch):
    at = open_page(monkeypatch, "views/trends.py", {"tr_series": "checkpoints", "tr_slice": "overall", "tr_metric": "anls"})
    assert at.selectbox(key="tr_metric").value == "anls" and at.selectbox(key="tr_slice").value == "overall"
    at.selectbox(key="tr_slice").set_value("reasoning_type=counting").run()
    assert_clean(at)
    assert param(at, "tr_slice") == ["reasoning_type=counting"] and param(at, "tr_metric") == ["anls"]
    at.selectbox(key="tr_slice").set_value(SLICE).run()  # the default (the first alarm's slice): left out of the link
    assert_clean(at)
    assert param(at, "tr_slice") == [] and param(at, "tr_series") == ["checkpoints"]


def test_no_series_says_how_to_make_one_and_offers_the_campaign(monkeypatch):
    at = open_page(monkeypatch, "views/trends.py", bench=SAMPLE)
    text = " ".join(i.value for i in at.info)
    assert "No series of checkpoints" in text and "steps.csv" in text
    assert any("bundled campaign sample" in m.value and "trends?" in m.value for m in at.markdown)


def test_the_matrix_opened_from_an_alarm_shows_the_questions_it_lost(monkeypatch):
    view = F.matrix_view("checkpoints", ((("reasoning_type", "aggregation")),), 740)
    at = open_page(monkeypatch, "views/matrix.py", to_params(view))
    assert any("a lasting drop from step 740 lost" in w.value for w in at.warning)
    grid = table(at, "Flips")
    runs = [c for c in grid.columns if c.startswith("ckpt-")]
    assert runs == sorted(runs) and len(runs) == 10  # ordered by step
    assert len(grid) > 0 and all(grid["ckpt-0630"] == "✓") and all(grid["ckpt-0740"] == "✗")
    assert all(grid["ckpt-1070"] == "✗")
    summary = next(c.value for c in at.caption if "questions ×" in c.value)
    assert f"{len(grid)} of 408 questions" in summary.replace("\\", "")


def test_a_cell_opens_the_question_with_both_answers(monkeypatch):
    at = open_page(monkeypatch, "views/matrix.py")
    grid = table(at, "Flips")
    qid = grid.iloc[0]["Question"]
    at = open_page(monkeypatch, "views/matrix.py", {"mx_q": qid, "mx_run": "ckpt-0740"})
    assert any(s.value == "The question" for s in at.subheader)
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "ckpt-0630 (step 630)" in shown and "ckpt-0740 (step 740)" in shown
    assert len(at.code) >= 2  # the two answers, as plain text
    assert param(at, "mx_q") == [qid]


def test_the_matrix_pages_orders_and_shows_documents(monkeypatch):
    at = open_page(monkeypatch, "views/matrix.py", {"mx_sort": "flips", "mx_page": "3"})
    assert at.number_input(key="mx_page_no").value == 3
    grid = table(at, "Flips")
    assert len(grid) == 50 and list(grid["Flips"]) == sorted(grid["Flips"], reverse=True)
    at = open_page(monkeypatch, "views/matrix.py", {"mx_by": "documents", "f.domain": "legal_regulation"})
    docs = table(at, "Document")
    assert len(docs) == 8 and all("/" in v for v in docs["ckpt-0100"])  # right / answered per document


def test_steps_set_by_hand_are_kept_in_the_link_and_change_the_series(monkeypatch):
    at = open_page(monkeypatch, "views/data.py", {"step": ["5000:vision-13b", "-:ckpt-1070"]})
    steps = table(at, "From")
    by = steps.set_index("Run")
    assert int(by.loc["vision-13b", "Step"]) == 5000 and by.loc["vision-13b", "From"] == "set here"
    assert by.loc["ckpt-1070", "Step"] is None or str(by.loc["ckpt-1070", "Step"]) == "<NA>"
    assert by.loc["ckpt-0520", "From"] == "name"
    assert param(at, "step") == ["5000:vision-13b", "-:ckpt-1070"]
    at.switch_page("views/trends.py").run()
    assert_clean(at)
    assert "10 checkpoints" in next(c.value for c in at.caption if "checkpoints" in c.value)


def test_a_steps_csv_in_the_benchmark_folder_is_read_with_its_problems(monkeypatch, tmp_path):
    import shutil

    bench = tmp_path / "campaign"
    shutil.copytree(CAMPAIGN, bench, ignore=shutil.ignore_patterns("docs"))
    (bench / "steps.csv").write_text("run,step,series\nvision-13b,1,side\nsmall-3b,2,side\nrag-baseline,3,side\n"
                                     "ckpt-0100,ten,\n", encoding="utf-8")
    at = open_page(monkeypatch, "views/data.py", bench=bench)
    assert any("steps.csv:5" in w.value.replace("\\", "") for w in at.warning)
    by = table(at, "From").set_index("Run")
    assert by.loc["small-3b", "Series"] == "side" and by.loc["small-3b", "From"] == "steps.csv"
    at.switch_page("views/trends.py").run()
    assert_clean(at)
    options = at.selectbox(key="tr_series").options
    assert len(options) == 2 and any("side (3 checkpoints" in o for o in options)


def test_the_presentation_and_the_report_get_the_open_series(monkeypatch, tmp_path):
    at = open_page(monkeypatch, "views/present.py", {"a": "ckpt-0520", "b": "ckpt-0410", "tr_series": "checkpoints"})
    assert any(c.value == "6 / 6" for c in at.caption)
    assert any("dropped" in m.value and "aggregation" in m.value for m in at.markdown)
    at = open_page(monkeypatch, "views/present.py", {"a": "ckpt-0520", "b": "ckpt-0410"})
    assert any(c.value == "5 / 5" for c in at.caption) and not any(c.value == "6 / 6" for c in at.caption)

    from dashboard.report import build as report

    runs = [f"ckpt-{s:04d}" for s in (100, 200, 300, 410, 520, 630, 740, 850, 960, 1070)]
    ws, an, names = report.load(CAMPAIGN, runs)
    found = F.trend_search(an, runs, [int(r.split("-")[1]) for r in runs], "accuracy", an.questions)
    section = F.report_section("<b>run7</b>", found, "accuracy")
    page = report.build_report(an, ["ckpt-0520", "ckpt-0410"], "ckpt-0410", workspace=ws, failures=0, trend=section)
    assert "Checkpoint trend: &lt;b&gt;run7&lt;/b&gt;" in page and "<b>run7</b>" not in page
    assert SLICE in page and "-50.0 [-63.5, -36.5]" in page and "biased upward" in page
    assert page.count("Plotly.newPlot(") >= 2
    plain = report.build_report(an, ["ckpt-0520", "ckpt-0410"], "ckpt-0410", workspace=ws, failures=0)
    assert "Checkpoint trend" not in plain


@pytest.mark.parametrize("values", [["12:run"], ["12@run7:run"], ["-:run"], ["x:run", "3:"]])
def test_step_overrides_read_back(values):
    view = View(steps=values)
    back = from_params(to_params(view))
    assert back.steps == [v for v in values if ":" in v]
    parsed = F.overrides(back.steps)
    if values == ["12@run7:run"]:
        assert parsed == {"run": (12, "run7")}
    if values == ["-:run"]:
        assert parsed == {"run": (None, "")}
    if values == ["x:run", "3:"]:
        assert parsed == {}
    assert F.override_value("a:b", 3, "s:x") == "3@s-x:a:b" and F.parse_override("3@s-x:a:b") == ("a:b", 3, "s-x")


def test_an_edit_of_the_steps_table_becomes_an_override_in_the_link():
    from scoring import steps as S

    points = S.checkpoints(["ckpt-0100", "ckpt-0200", "vision-13b"])
    before = F.steps_table(points)
    after = before.copy()
    after.loc[after["Run"] == "vision-13b", ["Step", "Series"]] = [5000, "side:x"]
    after.loc[after["Run"] == "ckpt-0200", "Step"] = None
    got = F.edited_steps(before, after, ["7:other"])
    assert got == ["7:other", "-:ckpt-0200", "5000@side-x:vision-13b"]
    assert F.edited_steps(before, before.copy(), got) == got  # no edit: the overrides stay as they were
    again = F.steps_table(S.checkpoints(["ckpt-0100", "ckpt-0200", "vision-13b"], overrides=F.overrides(got)))
    assert again.set_index("Run").loc["vision-13b", "From"] == "set here"

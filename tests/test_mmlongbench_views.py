"""MMLongBench-Doc in the dashboard's tables (issue 19 leftovers), on sample_runs/mmlongbench: the
leaderboard's Acc and F1 as the benchmark defines them (equal to its own text report, written by
`python -m scoring --output-txt`), the page categories counted as its report counts them (a question
in each category that applies), and the not-yet-evaluated row named as such."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard.core.analysis import BENCH_F1, PAGE_CATEGORY, RECOMPUTED, Analysis, Run
from dashboard.core.links import View
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from dashboard.explorer.frames import filter_questions
from scoring.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
MM = ROOT / "sample_runs" / "mmlongbench"
SAMPLES = MM / "data" / "samples.json"
RESULTS = sorted((MM / "results").glob("res_*.json"))
CATEGORY_LINE = re.compile(r"^(Single-page|Cross-page|Unanswerable) \| Accuracy: \S+ \| Question Number: (\d+)$", re.M)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, str]:
    """Run name -> the text report the benchmark's show_results writes (our CLI, byte for byte)."""
    out = tmp_path_factory.mktemp("mm_txt")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    texts = {}
    for path in RESULTS:
        name = path.stem.removeprefix("res_")
        txt = out / f"res_{name}.txt"
        subprocess.run([sys.executable, "-m", "scoring", "--profile", "mmlongbench-doc", "--gold-files", str(SAMPLES),
                        "--predictions", str(path), "--output-txt", str(txt)], cwd=out, env=env, capture_output=True,
                       timeout=120, check=True)
        texts[name] = txt.read_text()
    return texts


def _overall(text: str, what: str) -> float:
    return float(re.search(rf"^Overall {what}: (\S+) \|", text, re.M).group(1))


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    ws = load_workspace(Sources(benchmark=MM))
    runs = [Run(pf.run, RECOMPUTED, "", evaluate(ws.gold.items, pf.loaded.items, profile="mmlongbench-doc"))
            for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts)


def test_leaderboard_has_the_benchmarks_acc_and_f1_equal_to_its_report(analysis, reports):
    board = analysis.leaderboard().set_index("Run")
    # issue 34: under the mmlongbench-doc profile Accuracy IS the benchmark's Acc (both over the questions the
    # run attempted): shown once, beside the benchmark's own F1 (no second Acc column equal to the first)
    assert list(board.columns[:6]) == ["Source", "Questions", "Accuracy (%)", "Token F1 (%)", "ANLS (%)", "Shared Acc (%)"]
    assert board.columns[6] == BENCH_F1 and not any("Acc (benchmark" in c for c in board.columns)
    for name, text in reports.items():
        # as the release rounds an overall mean (6 decimals of the fraction)
        assert board.loc[name, "Accuracy (%)"] == pytest.approx(100 * _overall(text, "Acc"), abs=5e-5)
        assert board.loc[name, BENCH_F1] == pytest.approx(100 * _overall(text, "F1-score"), abs=1e-9)
    # the row docowl-8b's file holds without `pred` (not evaluated yet) is not attempted: the benchmark leaves it
    # out of its Acc, and so does Accuracy (%); the two runs are compared on the 40 questions both attempted
    assert board.loc["docowl-8b", "Attempted"] == 40 and board.loc["docowl-8b", "Missing"] == 1
    assert board.loc["gpt-4o", "Shared Acc (%)"] == pytest.approx(analysis.mean_on(
        "gpt-4o", "accuracy", analysis.attempted("docowl-8b")) * 100)


def test_page_categories_are_counted_as_the_report_counts_them(analysis, reports):
    assert PAGE_CATEGORY in analysis.questions.columns
    both = analysis.questions[analysis.questions[PAGE_CATEGORY].map(len) > 1]
    assert len(both) >= 1  # the sample has a single-page unanswerable question: counted in both categories
    table = analysis.breakdown(PAGE_CATEGORY)
    for name, text in reports.items():
        expected = {label.lower(): int(n) for label, n in CATEGORY_LINE.findall(text)}
        assert expected and sum(expected.values()) > len(analysis.questions)  # the overlap is in the report too
        # issue 34: a breakdown counts the questions the run attempted; the report counts docowl-8b's row that
        # has no `pred` (not evaluated yet) in its category too
        for k in np.flatnonzero(~analysis.attempted(name)):
            for label in analysis.questions[PAGE_CATEGORY].iloc[k]:
                expected[label] -= 1
        got = table[table["run"] == name].set_index("label")["count"].to_dict()
        assert got == expected, name


def test_a_page_category_slice_opens_its_questions_in_the_explorer(analysis):
    wanted = analysis.questions[analysis.questions[PAGE_CATEGORY].map(lambda c: "unanswerable" in c)]
    view = View(runs=list(analysis.run_names), filters={PAGE_CATEGORY: ["unanswerable"]})
    got = filter_questions(analysis.questions, analysis.rows_of(analysis.run_names), view)
    assert list(got.index) == list(wanted.index) and len(got) == 4


def test_other_benchmarks_have_neither_column():
    ws = load_workspace(Sources(benchmark=ROOT / "sample_runs"))
    pf = ws.predictions[0]
    an = Analysis.build([Run(pf.run, RECOMPUTED, "", evaluate(ws.gold.items, pf.loaded.items))], ws.gold.items,
                        ws.page_counts)
    assert PAGE_CATEGORY not in an.questions.columns
    assert BENCH_F1 not in an.leaderboard().columns


@pytest.fixture
def mm_app(monkeypatch, tmp_path):
    from app_kit import app_on

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    return lambda params=None: app_on(monkeypatch, MM, params, timeout=60)


def test_overview_shows_the_columns_the_categories_and_why_a_row_is_missing(mm_app, reports):
    at = mm_app()
    assert not at.exception, [e.value for e in at.exception]
    board = at.dataframe[0].value.set_index("Run")
    for name, text in reports.items():
        assert board.loc[name, BENCH_F1] == pytest.approx(100 * _overall(text, "F1-score"), abs=1e-9)
    assert board.loc["docowl-8b", "Problems"] == "1 row not evaluated (no `pred`)"
    assert "ids unknown" not in " ".join(str(m.value) for m in at.warning)
    assert "Page category" in [t.label for t in at.tabs] and "Split" not in [t.label for t in at.tabs]


def test_fields_the_gold_never_fills_get_no_chart_and_are_named(mm_app, analysis):
    """MMLongBench-Doc has no reasoning type, domain or difficulty: no heatmap or tab of `unknown`
    alone, and a caption names what is not charted; the evidence-source heatmap stays."""
    assert not analysis.informative("reasoning_type") and analysis.informative("evidence_source")
    at = mm_app()
    assert not at.exception, [e.value for e in at.exception]
    tabs = [t.label for t in at.tabs]
    assert "Domain" not in tabs and "Difficulty" not in tabs and "Document type" in tabs
    note = [c.value for c in at.caption if "Not charted" in c.value]
    assert note and "Reasoning type" in note[0] and "Domain" in note[0], [c.value for c in at.caption]
    keys = [str(getattr(e, "key", "")) for e in at.get("plotly_chart")]
    assert not any("reasoning_type" in k for k in keys) and any("evidence_source" in k for k in keys), keys

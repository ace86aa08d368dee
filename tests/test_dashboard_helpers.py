"""The dashboard's pure helpers (no streamlit): discovery, document lookup, links, tables, charts."""

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run, evidence_position, length_bucket, top_runs
from dashboard.core.escape import clip_text, clipped, md_escape
from dashboard.core.links import View, from_params, to_params
from dashboard.core.paths import DEFAULT_BENCHMARK, Sources, inside, locate_document, sources_from, stage_upload
from dashboard.data.frames import repro_frame, skipped_rows
from dashboard.data.workspace import discover, load_workspace
from dashboard.explorer.frames import explorer_frame, filter_questions, flat_column, grouped, run_column, with_run_columns
from dashboard.overview import charts
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions, load_scores

Q = "adubench_single_{:06d}".format


def gold_and_runs(bench: Path, profile: str = "xldocbench", ignore_missing: bool = False):
    gold = load_gold([bench / "qa_single_doc.jsonl", bench / "qa_cross_doc.jsonl"]).items
    alpha = evaluate(gold, load_predictions(bench / "runs/alpha.jsonl").items, profile=profile, name="alpha",
                     ignore_missing=ignore_missing)
    beta = evaluate(gold, load_predictions(bench / "runs/beta.json").items, profile=profile, name="beta",
                    ignore_missing=ignore_missing)
    return gold, alpha, beta


@pytest.fixture
def analysis(mini_bench):
    ws = load_workspace(Sources(mini_bench))
    gold, alpha, beta = gold_and_runs(mini_bench)
    gamma = ws.official()["gamma"]
    runs = [Run("alpha", RECOMPUTED, "runs/alpha.jsonl", alpha, ws.official()["alpha"]),
            Run("beta", RECOMPUTED, "runs/beta.json", beta), Run("gamma", OFFICIAL, "results/scores.jsonl", None, gamma)]
    return Analysis.build(runs, gold, ws.page_counts)


# ----------------------------------------------------------------------------- sources and discovery


def test_sources_arguments_win_over_environment(tmp_path):
    env = {"LENS_BENCHMARK": "/env/bench", "LENS_RUNS": os.pathsep.join(["/env/a.jsonl", "/env/b.json"])}
    src = sources_from(["--benchmark", str(tmp_path), "--runs", "x.jsonl", "y.json", "--scores", "s.jsonl"], env)
    assert src.benchmark == tmp_path
    assert src.runs == (Path("x.jsonl"), Path("y.json"))
    assert src.scores == (Path("s.jsonl"),)
    from_env = sources_from(["-k", "pytest-args", "tests/"], env)
    assert from_env.benchmark == Path("/env/bench")
    assert from_env.runs == (Path("/env/a.jsonl"), Path("/env/b.json"))
    assert sources_from([], {}).benchmark == DEFAULT_BENCHMARK


def test_discover_finds_gold_runs_and_score_files(mini_bench):
    disc = discover(Sources(mini_bench))
    assert [p.name for p in disc.gold] == ["qa_single_doc.jsonl", "qa_cross_doc.jsonl"]
    assert disc.documents == mini_bench / "documents.jsonl"
    assert [p.name for p in disc.predictions] == ["alpha.jsonl", "beta.json"]
    assert [p.relative_to(mini_bench).as_posix() for p in disc.scores] == [
        "results/official/alpha.per_question.csv", "results/scores.jsonl"]
    assert [p.name for p in disc.summaries] == ["summary.json"]
    assert disc.problems == []


def test_discover_reports_a_missing_folder(tmp_path):
    disc = discover(Sources(tmp_path / "nope"))
    assert [(p.expected, p.got) for p in disc.problems] == [
        ("a benchmark folder", "no such folder"), ("gold question files (*.jsonl)", "none found")]


# ----------------------------------------------------------------------------- documents


def test_document_file_field_cannot_leave_the_docs_folder(mini_bench, tmp_path):
    docs = mini_bench / "docs"
    assert (mini_bench / "qa_single_doc.jsonl").is_file()  # the target exists: only containment refuses it
    loc = locate_document("doc_x", "../qa_single_doc.jsonl", "", docs)
    assert loc.path is None and loc.refused == "../qa_single_doc.jsonl"
    assert locate_document("doc_x", "/etc/passwd", "", docs).path is None
    assert locate_document("doc_x", "", "https://h/..%2F..%2Fqa_single_doc.jsonl", docs).path is None
    assert locate_document("../qa_single_doc", "", "", docs).path is None  # a hostile document id
    link_root = tmp_path / "docs"
    link_root.mkdir()
    (link_root / "escape.pdf").symlink_to(mini_bench / "documents.jsonl")
    assert inside(link_root, "escape.pdf") is None


def test_document_lookup_order(mini_bench):
    docs = mini_bench / "docs"
    assert locate_document("doc_000002", "reports/annual.pdf", "", docs).how == "file field"
    assert locate_document("doc_000001", "", "https://h/x.pdf", docs).path == (docs / "doc_000001.pdf").resolve()
    by_url = locate_document("doc_000003", "../qa_single_doc.jsonl", "https://example.org/c/third.pdf", docs)
    assert (by_url.path, by_url.how, by_url.refused) == ((docs / "third.pdf").resolve(), "url file name", "../qa_single_doc.jsonl")
    assert locate_document("doc_000004", "", "https://example.org/d/clinical.pdf", docs).path is None


def test_workspace_reports_the_refused_path_and_reads_page_counts(mini_bench):
    ws = load_workspace(Sources(mini_bench))
    refused = [p for p in ws.problems if p.field == "doc_000003.file"]
    assert len(refused) == 1 and refused[0].severity == "error"
    assert ws.page_counts == {"doc_000001": 12, "doc_000002": 3, "doc_000003": 6, "doc_000004": 300}
    assert ws.locations["doc_000004"].path is None
    assert [pf.run for pf in ws.predictions] == ["alpha", "beta"]
    assert sorted(ws.official()) == ["alpha", "gamma"]
    assert ws.label(str(mini_bench / "runs/alpha.jsonl")) == "runs/alpha.jsonl"


def test_stage_upload_keeps_only_the_base_name(tmp_path):
    path = stage_upload("../../evil/run.jsonl", b'{"question_id": "q"}\n', tmp_path)
    assert path.name == "run.jsonl" and path.is_relative_to(tmp_path)
    assert path.read_bytes() == b'{"question_id": "q"}\n'
    assert stage_upload("..", b"x", tmp_path).name == "upload"


# ----------------------------------------------------------------------------- links


def test_link_round_trip():
    view = View(runs=["alpha", "beta"], profile="xldocbench-1519", filters={"domain": ["legal_regulation", "x y"]},
                ranges={"accuracy": (0, 0), "anls": (20, 80)}, status=["missing"], search="total & more",
                question="adubench_single_000006", data="/srv/bench", match="any", metric="anls", tab="domain",
                hide_loaded=True)
    params = to_params(view)
    assert params["f.domain"] == ["legal_regulation", "x y"] and params["accuracy"] == "0-0"
    assert (params["match"], params["metric"], params["tab"], params["loaded"]) == ("any", "anls", "domain", "hide")
    assert from_params(params) == view
    assert to_params(View()) == {}
    assert from_params({"metric": "bleu", "match": "any"}) == View()  # unknown metric; "any" without a range
    # the overview's chart pick: absent (the default pick), some runs, or none at all
    for picked in (["beta", "alpha"], []):
        assert from_params(to_params(View(charts=picked))) == View(charts=picked)
    assert to_params(View(charts=[])) == {"chart": [""]} and from_params({"chart": ["a", "a"]}).charts == ["a"]


def test_link_decoding_ignores_junk():
    view = from_params({"profile": "nope", "accuracy": "x-3", "anls": "90-10", "run": ["a", "a", ""], "f.": ["z"]})
    assert view == View(runs=["a"], ranges={"anls": (10, 90)})


@given(st.lists(st.text(min_size=1), max_size=3, unique=True), st.text(), st.integers(0, 100), st.integers(0, 100))
def test_link_round_trip_property(runs, search, lo, hi):
    rng = (min(lo, hi), max(lo, hi))
    view = View(runs=runs, search=search, ranges={"token_f1": rng} if rng != (0, 100) else {})
    assert from_params(to_params(view)) == view


# ----------------------------------------------------------------------------- tables


def test_buckets():
    assert [length_bucket(n) for n in (None, 3, 50, 51, 501)] == ["unknown", "1–10 pages", "11–50 pages", "51–200 pages", "over 500 pages"]
    assert [length_bucket(n) for n in (0, 10, 11, 200, 201, 500, 500.5)] == [  # each limit is in its own bin
        "unknown", "1–10 pages", "11–50 pages", "51–200 pages", "201–500 pages", "201–500 pages", "over 500 pages"]
    assert [evidence_position(p, 12) for p in (1, 4, 5, 8, 9, 12, 13)] == [
        "first third", "first third", "middle third", "middle third", "last third", "last third", "unknown"]


def test_question_frame(analysis):
    q = analysis.questions
    assert list(q.index) == [Q(i) for i in range(1, 9)] + ["adubench_cross_000001", "adubench_cross_000002"]
    assert q.loc[Q(2), "position"] == "last third" and q.loc[Q(1), "position"] == "first third"
    assert q.loc[Q(7), "length"] == "201–500 pages"
    assert q.loc["adubench_cross_000001", "page_count"] == 15  # 12 + 3 pages of its two documents
    assert q.loc[Q(4), "evidence_source"] == ("unknown",)
    assert q.loc[Q(1), "meta.doc_type_coarse"] == "long_form"


def test_leaderboard_matches_the_scoring_package(analysis, mini_bench):
    # issue 34: a run is scored on the questions it attempted (answered or failed): the scoring package
    # with --ignore-missing (alpha misses one of the 10 questions, beta none)
    _, alpha, beta = gold_and_runs(mini_bench, ignore_missing=True)
    board = analysis.leaderboard().set_index("Run")
    for run in (alpha, beta):
        for metric, col in (("accuracy", "Accuracy (%)"), ("token_f1", "Token F1 (%)"), ("anls", "ANLS (%)")):
            assert board.loc[run.name, col] == pytest.approx(100 * run.overall[metric], abs=1e-6)
    assert board.loc["gamma", "Accuracy (%)"] == pytest.approx(60.0)
    assert board.loc["gamma", "Source"] == OFFICIAL
    assert board.loc["alpha", ["Attempted", "Answered", "Missing", "Failed"]].tolist() == [9, 8, 1, 1]
    assert board.loc["alpha", "Signature"] == alpha.signature and "missing:ignored" in alpha.signature
    assert board.loc["beta", "Signature"] == gold_and_runs(mini_bench)[2].signature  # none missing: its own


@pytest.mark.parametrize("group", ["domain", "reasoning_type", "evidence_source", "answer_format", "split"])
def test_breakdowns_match_the_scoring_package(analysis, mini_bench, group):
    _, alpha, _ = gold_and_runs(mini_bench, ignore_missing=True)  # issue 34: over the questions it attempted
    mine = analysis.breakdown(group)
    mine = mine[mine["run"] == "alpha"].set_index("label")
    assert sorted(mine.index) == sorted(alpha.breakdowns[group])
    for label, bucket in alpha.breakdowns[group].items():
        assert mine.loc[label, "count"] == bucket["count"]
        assert mine.loc[label, "accuracy"] == pytest.approx(bucket["accuracy"], abs=1e-6)
        assert mine.loc[label, "anls"] == pytest.approx(bucket["anls"], abs=1e-6)


def test_filters(analysis):
    qs, scores = analysis.questions, analysis.rows_of(analysis.run_names)
    ids = lambda view: list(filter_questions(qs, scores, view).index)  # noqa: E731
    assert ids(View(filters={"domain": ["legal_regulation"]})) == [Q(3), Q(4)]
    assert ids(View(filters={"evidence_source": ["Text"], "difficulty": ["very_hard"]})) == [Q(2)]
    assert ids(View(runs=["alpha"], ranges={"accuracy": (0, 0)})) == [Q(4), Q(7)]
    assert ids(View(runs=["alpha", "beta"], ranges={"accuracy": (100, 100)})) == [Q(1), Q(5), "adubench_cross_000001"]
    assert ids(View(runs=["alpha"], status=["missing", "error"])) == [Q(4), Q(7)]
    assert ids(View(runs=["beta"], search="<SCRIPT>")) == [Q(6)]
    assert ids(View(runs=["alpha"], search="<script>")) == []  # only the chosen runs' predictions are searched
    assert ids(View(search="rotterdam")) == [Q(3)]
    assert ids(View(search=" ADUBENCH_SINGLE_000004 ")) == [Q(4)]  # question ids are searched too
    assert ids(View(search="single_00000")) == [Q(i) for i in range(1, 10) if i <= 8]
    # Score ranges: every chosen run inside (default), or any of them.
    every = ids(View(runs=["alpha", "beta"], ranges={"accuracy": (0, 0)}))
    anyone = ids(View(runs=["alpha", "beta"], ranges={"accuracy": (0, 0)}, match="any"))
    alpha_zero, beta_zero = ids(View(runs=["alpha"], ranges={"accuracy": (0, 0)})), ids(View(runs=["beta"], ranges={"accuracy": (0, 0)}))
    assert set(anyone) == set(alpha_zero) | set(beta_zero) and set(every) < set(anyone)
    assert every == [q for q in alpha_zero if q in beta_zero or q not in set(analysis.rows_of(analysis.run_names)[analysis.rows_of(analysis.run_names)["run"] == "beta"]["question_id"])]
    # any: one run must satisfy every range at once
    both = View(runs=["alpha", "beta"], ranges={"accuracy": (100, 100), "anls": (0, 50)}, match="any")
    scores = analysis.rows_of(analysis.run_names)[analysis.rows_of(analysis.run_names)["run"].isin(["alpha", "beta"])]
    expected = scores[(scores["accuracy"] == 1.0) & (scores["anls"] <= 0.5)]["question_id"]
    assert ids(both) == [q for q in qs.index if q in set(expected)]


def test_explorer_frame(analysis, mini_bench):
    _, alpha, _ = gold_and_runs(mini_bench)
    table = explorer_frame(analysis.questions, analysis.rows_of(analysis.run_names), ["alpha", "gamma"])
    assert list(table.columns[:4]) == ["question_id", "question", "gold", run_column("alpha", "accuracy")]
    row = table.set_index("question_id").loc[Q(3)]
    expected = next(r for r in alpha.results if r.qid == Q(3))
    assert row[run_column("alpha", "token_f1")] == pytest.approx(expected.token_f1)
    assert row[run_column("alpha", "prediction")] == "Rotterdam, NL"
    assert row[run_column("gamma", "anls")] == pytest.approx(0.9)
    assert row["evidence_source"] == "Text"


def test_grouped_explorer_columns(analysis):
    table = explorer_frame(analysis.questions, analysis.rows_of(analysis.run_names), ["alpha", "gamma"])
    shown = grouped(table, ["alpha", "gamma"])
    assert shown.columns.nlevels == 2
    assert list(shown.columns[:8]) == [("Question", "Id"), ("Question", "Text"), ("Question", "Gold"),
                                       ("alpha", "Acc"), ("alpha", "F1"), ("alpha", "ANLS"), ("alpha", "Prediction"),
                                       ("alpha", "Status")]
    assert ("gamma", "ANLS") in shown.columns and ("Metadata", "Format") in shown.columns
    assert [flat_column(c) for c in shown.columns] == list(table.columns)
    assert shown[("alpha", "F1")].tolist() == table[run_column("alpha", "token_f1")].tolist()
    assert analysis.display_rows(["alpha", "gamma"])[1] is False  # no long answer: nothing cut


def test_long_text_is_clipped_for_display():
    long = "x" * 5000
    assert clip_text("short") == "short" and clip_text(None) is None
    cut = clip_text(long, 100)
    assert cut.startswith("x" * 50) and cut.endswith("… [5,000 characters, cut for display]") and len(cut) <= 100
    assert clip_text(cut, 100) == cut  # not cut twice
    frame = pd.DataFrame({"a": ["ok", long], "n": [1, 2]})
    shown = clipped(frame, 100)
    assert shown["a"].tolist() == ["ok", cut] and frame["a"][1] == long  # the original is untouched
    assert clipped(pd.DataFrame({"a": ["ok"]}), 100)["a"].tolist() == ["ok"]
    # an Arrow-backed text column with gaps and its own index keeps its type, index and missing values
    arrow = pd.DataFrame({"a": pd.Series([long, None, "ok", long + "y"], index=["q3", "q1", "q2", "q0"],
                                         dtype="string[pyarrow]")})
    shown = clipped(arrow, 100)
    assert shown["a"].dtype == arrow["a"].dtype and list(shown.index) == ["q3", "q1", "q2", "q0"]
    assert shown["a"].iloc[0] == cut and pd.isna(shown["a"].iloc[1]) and shown["a"].iloc[2] == "ok"
    assert shown["a"].iloc[3] == clip_text(long + "y", 100) and arrow["a"].iloc[0] == long
    for dtype in ("str", object):  # pandas' default text type, and plain objects
        frame = pd.DataFrame({"a": pd.Series([long, None, "ok"], index=[5, 3, 9], dtype=dtype)})
        shown = clipped(frame, 100)
        assert shown["a"].dtype == frame["a"].dtype and list(shown.index) == [5, 3, 9]
        assert shown["a"].iloc[0] == cut and pd.isna(shown["a"].iloc[1]) and shown["a"].iloc[2] == "ok"


def test_top_runs_and_skipped_rows(analysis, broken_bench):
    board = analysis.leaderboard()
    assert top_runs(board, "accuracy", 1) == [board.sort_values("Accuracy (%)", ascending=False)["Run"].iloc[0]]
    best_anls = board.sort_values("ANLS (%)", ascending=False)["Run"].iloc[0]
    assert top_runs(board, "anls", 1, keep=("beta",)) == [r for r in board["Run"] if r in {best_anls, "beta"}]
    ws = load_workspace(Sources(broken_bench))
    skipped = skipped_rows(ws)
    assert skipped == {"broken": "3 rows skipped, ids unknown"}


def test_reproducibility_names_the_profile_that_matches(mini_bench):
    official = load_scores(mini_bench / "results/official/alpha.per_question.csv").items
    _, alpha, _ = gold_and_runs(mini_bench)
    diff = repro_frame(alpha, official)
    assert list(diff["question_id"]) == [Q(4), Q(5), Q(6)]
    assert diff.set_index("question_id").loc[Q(4), "Δ Accuracy"] == -1.0  # status "error": 0 here, scored by the release
    _, alpha_1519, _ = gold_and_runs(mini_bench, "xldocbench-1519")
    assert repro_frame(alpha_1519, official).empty


def test_md_escape_shows_text_literally():
    text = "![x](http://example.org/x.png) <script>alert(1)</script> **bold** `code`"
    escaped = md_escape(text)
    assert re.sub(r"\\(.)", r"\1", escaped).replace("\u200b", "") == text  # the same text, read back
    assert re.fullmatch(r"(?:\\[^\w\s]|[\w\s\u200b])*", escaped)  # every punctuation mark is escaped
    assert "http" not in escaped  # no autolink: a zero-width space breaks the scheme


# ----------------------------------------------------------------------------- charts


def test_heatmap_is_a_clickable_scatter_with_titles(analysis):
    fig = charts.heatmap(analysis.breakdown("reasoning_type"), "reasoning_type", "accuracy", ["gamma", "alpha", "beta"],
                         loaded={"gamma"})
    trace = fig.data[0]
    assert trace.type == "scatter" and trace.marker.opacity == 0  # invisible points: hover and click
    assert fig.layout.title.text == "Accuracy (%) by run and reasoning type"
    assert fig.layout.xaxis.title.text == "Reasoning type" and fig.layout.yaxis.title.text == "Run"
    assert fig.layout.hoverdistance == -1  # a click anywhere picks the nearest cell
    cells = {(c[0], c[2]): v for c, v in zip(trace.customdata, trace.marker.color)}
    assert cells[("beta", "comparison")] == pytest.approx(200 / 3)
    assert cells[("gamma", "unanswerable")] == pytest.approx(100.0)
    # Rows in the order given (the leaderboard's), top to bottom; the loaded run marked.
    assert list(fig.layout.yaxis.categoryarray) == ["beta", "alpha", "gamma *"]
    assert "* scores loaded" in fig.layout.title.subtitle.text


def test_heatmap_cells_show_n_and_fade_small_ones(analysis):
    frame = analysis.breakdown("reasoning_type")
    fig = charts.heatmap(frame, "reasoning_type", "accuracy", ["alpha", "beta"])
    layers = [t for t in fig.data if t.type == "heatmap"]
    assert len(layers) == 3 and all(t.showscale is False and t.hoverinfo == "skip" for t in layers)
    faded = layers[2]
    assert faded.colorscale != layers[0].colorscale
    drawn = {}
    for layer in layers:
        for r, row in zip(layer.y, layer.text):
            for lab, text in zip(layer.x, row):
                if text:
                    assert (r, lab) not in drawn  # one layer per cell
                    drawn[(r, lab)] = (text, layer is faded)
    rows = frame[frame["run"].isin(["alpha", "beta"])]
    assert len(drawn) == len(rows)
    for r, lab, n, acc in zip(rows["run"], rows["label"], rows["count"], rows["accuracy"]):
        assert drawn[(r, lab)] == (f"{100 * acc:.1f}<br>n={n}", n < charts.FEW)
    hover = fig.data[0].hovertemplate
    assert "Questions: %{customdata[3]}" in hover


def test_heatmap_fades_only_cells_under_five_questions():
    frame = pd.DataFrame({"run": ["r", "r", "s"], "label": ["a", "b", "a"], "count": [4, 5, 40], "accuracy": [1.0, 1.0, 0.2]})
    solid_dark, solid_light, faded = charts.heatmap(frame, "domain", "accuracy", ["r", "s"]).data[1:]
    grid = lambda layer: [list(row) for row in layer.text]  # noqa: E731
    assert grid(faded) == [["100.0<br>n=4", ""], ["", ""]]
    assert grid(solid_dark) == [["", "100.0<br>n=5"], ["", ""]]
    assert grid(solid_light) == [["", ""], ["20.0<br>n=40", ""]]
    assert (solid_dark.textfont.color, solid_light.textfont.color) == ("#FFFFFF", "#0B1F33")


def test_heatmap_with_many_columns_keeps_n_for_the_hover():
    labels = [f"type_{k:02d}" for k in range(charts.N_COLUMNS + 3)]
    frame = pd.DataFrame({"run": "r", "label": labels, "count": 7, "accuracy": 0.875})
    fig = charts.heatmap(frame, "reasoning_type", "accuracy", ["r"])
    assert {t for layer in fig.data[1:] for row in layer.text for t in row if t} == {"88"}
    assert [c[3] for c in fig.data[0].customdata] == [7] * len(labels)


def test_bars_have_titles_units_and_slices(analysis):
    fig = charts.bars(analysis.breakdown("domain"), "domain", "anls", ["alpha", "beta"])
    assert [t.name for t in fig.data] == ["alpha", "beta"]
    assert fig.layout.title.text == "ANLS (%) by domain"
    assert fig.layout.yaxis.title.text == "ANLS (%)" and fig.layout.xaxis.title.text == "Domain"
    assert tuple(fig.data[1].customdata[0][:3]) == ("beta", "domain", "finance_business")


def test_bars_keep_the_natural_order_of_ranges():
    labels = ["201–500 pages", "11–50 pages", "unknown", "51–200 pages", "over 500 pages"]
    frame = pd.DataFrame({"run": "r", "label": labels, "count": 1, "accuracy": 0.5})
    fig = charts.bars(frame, "length", "accuracy", ["r"])
    assert list(fig.layout.xaxis.categoryarray) == ["11–50 pages", "51–200 pages", "201–500 pages", "over 500 pages",
                                                    "unknown"]
    assert charts.label_order("position", ["last third", "first third"]) == ["first third", "last third"]
    assert charts.label_order("domain", ["b", "a"]) == ["a", "b"]


def test_chart_labels_are_not_html():
    frame = pd.DataFrame({"run": ["<b>x</b>"], "label": ["<i>y</i>"], "count": [1], "accuracy": [0.5]})
    bar = charts.bars(frame, "domain", "accuracy", ["<b>x</b>"]).data[0]
    assert (bar.name, tuple(bar.x)) == ("&lt;b&gt;x&lt;/b&gt;", ("&lt;i&gt;y&lt;/i&gt;",))
    assert tuple(bar.customdata[0][:3]) == ("<b>x</b>", "domain", "<i>y</i>")  # the slice keeps the raw label


def test_slice_of_a_selection_event():
    event = {"selection": {"points": [{"x": "legal", "customdata": ["beta", "domain", "legal_regulation", 2]}]}}
    assert charts.slice_of(event) == ("beta", "domain", "legal_regulation")
    assert charts.slice_of({"selection": {"points": []}}) is None
    assert charts.slice_of(None) is None


def test_answer_location_filter_link_round_trip_and_slice():
    view = View(runs=["a b"], location=["other_page", "not_searched"], filters={"domain": ["x"]})
    params = to_params(view)
    assert params["loc"] == ["other_page", "not_searched"]
    assert from_params(params) == view
    assert from_params({"loc": ["other_page", "other_page", ""]}).location == ["other_page"]
    opened = view.with_slice("r", "answer_location", "not_in_document")
    assert (opened.runs, opened.location, opened.filters) == (["r"], ["not_in_document"], {})
    back = opened.with_slice(None, "domain", "finance")  # a metadata slice leaves no location filter behind
    assert (back.runs, back.location, back.filters) == (["r"], [], {"domain": ["finance"]})


def test_evidence_columns_join_under_their_run(analysis):
    frame = explorer_frame(analysis.questions, analysis.rows_of(analysis.run_names), ["alpha", "beta"])
    extra = pd.DataFrame({run_column(r, label): [0.5, "only on other pages"][k == 3] for r in ("beta", "alpha")
                          for k, label in enumerate(("Page precision", "Page recall", "Grounding", "Answer location"))},
                         index=[Q(1)])
    joined = with_run_columns(frame, extra, ["alpha", "beta"])
    shown = grouped(joined, ["alpha", "beta"])
    heads = list(shown.columns)
    at = heads.index(("alpha", "Status"))
    assert heads[at + 1:at + 6] == [("alpha", "Pages P"), ("alpha", "Pages R"), ("alpha", "Ground."), ("alpha", "Location"),
                                    ("beta", "Acc")]
    assert [flat_column(c) for c in shown.columns] == list(joined.columns)
    row = joined.set_index("question_id")
    assert row.loc[Q(1), run_column("beta", "Answer location")] == "only on other pages"
    assert pd.isna(row.loc[Q(2), run_column("alpha", "Page precision")])  # no metrics: empty cells
    assert len(joined) == len(frame)


def test_field_options_are_the_sorted_string_forms_of_the_values():
    from dashboard.core.analysis import field_options

    frame = pd.DataFrame({
        "domain": pd.Series(["law", "finance", None, "law"], dtype="string[pyarrow]"),
        "difficulty": pd.Series(["hard", 3, True, None], dtype=object),  # raw metadata: mixed values
        "evidence_source": pd.Series([["Table", "Text"], ["Image"], [], None], dtype=object),
    })
    assert field_options(frame) == {"domain": ["finance", "law"], "difficulty": ["3", "True", "hard"],
                                    "evidence_source": ["Image", "Table", "Text"]}


def test_display_scores_cut_only_answers_too_long_to_copy():
    from dashboard.core.analysis import OFFICIAL, Analysis, Run
    from dashboard.core.escape import COPY_CHARS, TABLE_CHARS
    from scoring.model import GoldQuestion, ScoreRow

    huge, medium = "h" * (COPY_CHARS + 1), "m" * (TABLE_CHARS + 50)
    gold = [GoldQuestion(q, "?", ("x",), "Str", "", "single_doc", {}) for q in ("q1", "q2", "q3")]
    rows = [ScoreRow(q, "a", 0.0, 0.0, 0.0, prediction=p) for q, p in zip(("q1", "q2", "q3"), (huge, medium, "ok"))]
    an = Analysis.build([Run("a", OFFICIAL, "", None, rows), Run("b", OFFICIAL, "", None, [
        ScoreRow(r.qid, "b", 0.0, 0.0, 0.0, prediction=r.prediction) for r in rows[1:]])], gold, {})
    shown, cut = an.display_rows(["a"])
    assert cut and an.display_rows(["a"])[0] is shown  # computed once
    assert shown["prediction"].tolist() == [clip_text(huge, TABLE_CHARS), medium, "ok"]  # the table cuts the medium one
    assert an.rows_of(["a"])["prediction"].iloc[0] == huge
    calm, cut = an.display_rows(["b"])
    assert not cut and calm["prediction"].tolist() == [medium, "ok"]

"""Every page through streamlit.testing.v1.AppTest, on tests/fixtures/mini_bench (set through the
LENS_BENCHMARK environment variable: AppTest cannot pass command-line arguments)."""

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.analysis import OFFICIAL
from dashboard.explorer.frames import flat_column, run_column
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

Q = "adubench_single_{:06d}".format


@pytest.fixture
def open_app(monkeypatch):
    def start(bench: Path, params: dict | None = None) -> AppTest:
        return app_on(monkeypatch, bench, params)
    return start


def expected(bench: Path, run: str, profile: str = "xldocbench", ignore_missing: bool = False):
    gold = load_gold(sorted(bench.glob("qa_*.jsonl"), key=lambda p: "cross" in p.name)).items
    preds = next(p for p in (bench / "runs").iterdir() if p.stem == run)
    return evaluate(gold, load_predictions(preds).items, profile=profile, name=run, ignore_missing=ignore_missing)


def on_board(bench: Path, run: str, profile: str = "xldocbench"):
    """The scoring package's numbers of a run as the leaderboard gives them (issue 34): over the questions the
    run attempted, the command line's --ignore-missing."""
    return expected(bench, run, profile, ignore_missing=True)


def board(at: AppTest):
    return at.dataframe[0].value.set_index("Run")


def explorer(at: AppTest):
    """The explorer table with explorer_frame's column names (the page groups them under two header rows)."""
    table = at.dataframe[0].value
    assert table.columns.nlevels == 2
    return table.set_axis([flat_column(c) for c in table.columns], axis=1)


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_overview_leaderboard_profile_and_slice(open_app, mini_bench):
    at = open_app(mini_bench)
    assert_clean(at)
    assert at.title[0].value == "Overview"
    lb = board(at)
    assert sorted(lb.index) == ["alpha", "beta", "gamma"]
    for run in ("alpha", "beta"):
        res = on_board(mini_bench, run)
        assert lb.loc[run, "Accuracy (%)"] == pytest.approx(100 * res.overall["accuracy"])
        assert lb.loc[run, "ANLS (%)"] == pytest.approx(100 * res.overall["anls"])
    assert lb.loc["gamma", "Source"] == OFFICIAL and lb.loc["gamma", "Accuracy (%)"] == pytest.approx(60.0)

    at.selectbox(key="profile").set_value("xldocbench-1519").run()
    assert_clean(at)
    release = on_board(mini_bench, "alpha", "xldocbench-1519")
    assert release.overall["accuracy"] != on_board(mini_bench, "alpha").overall["accuracy"]
    assert board(at).loc["alpha", "Accuracy (%)"] == pytest.approx(100 * release.overall["accuracy"])
    assert board(at).loc["alpha", "Signature"] == release.signature
    assert at.query_params["profile"] == "xldocbench-1519"

    at.selectbox(key="ov_pick_field").set_value("domain").run()
    at.selectbox(key="ov_pick_label").set_value("legal_regulation")
    at.selectbox(key="ov_pick_run").set_value("beta")
    at.button[0].click().run()
    assert_clean(at)
    assert at.title[0].value == "Question explorer"
    table = explorer(at).set_index("question_id")
    assert list(table.index) == [Q(3), Q(4)]
    beta = {r.qid: r for r in expected(mini_bench, "beta", "xldocbench-1519").results}
    for qid in table.index:
        assert table.loc[qid, run_column("beta", "accuracy")] == beta[qid].accuracy
        assert table.loc[qid, run_column("beta", "token_f1")] == pytest.approx(beta[qid].token_f1)
    assert run_column("alpha", "accuracy") not in table.columns
    assert at.query_params["f.domain"] == "legal_regulation" and at.query_params["run"] == "beta"


def test_question_explorer_deep_link_filters_and_detail(open_app, mini_bench):
    at = open_app(mini_bench, {"run": ["alpha", "beta"], "f.domain": "technical_engineering",
                               "sel": Q(6), "profile": "xldocbench-1519"})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    table = explorer(at).set_index("question_id")
    assert list(table.index) == [Q(5), Q(6), "adubench_cross_000002"]
    alpha = {r.qid: r for r in expected(mini_bench, "alpha", "xldocbench-1519").results}
    assert table.loc[Q(6), run_column("alpha", "accuracy")] == alpha[Q(6)].accuracy == 0.0  # "12 15" reads as 1215
    assert table.loc[Q(5), run_column("alpha", "prediction")] == "2.5e2"

    # The selected question's detail: predictions as plain text, the Accuracy trace.
    codes = [c.value for c in at.code]
    assert "12 15" in codes and "<script>alert(1)</script> ![x](http://example.org/x.png)" in codes
    assert not any("<script>" in m.value or "![x]" in m.value for m in at.markdown)
    trace = at.dataframe[1].value.set_index("Step")["Value"]
    assert trace["Rule that decided"] == "Numbers compared (relative error)"  # the rule in words (numeric_tolerance)
    assert trace["Number read from the prediction"] == "1215 → 1215"
    q6 = alpha[Q(6)]
    assert [m.value for m in at.metric][:3] == [f"{100 * q6.accuracy:.1f}%", f"{100 * q6.token_f1:.1f}%", f"{100 * q6.anls:.1f}%"]

    at.multiselect(key="x_runs").set_value(["beta"])
    at.text_input(key="x_search").set_value("script").run()
    assert_clean(at)
    assert list(explorer(at)["question_id"]) == [Q(6)]
    assert at.query_params["q"] == "script" and at.query_params["run"] == "beta"
    csv = at.get("download_button")[0].proto.url
    assert csv  # the CSV of the filtered table is served


def test_question_explorer_status_and_score_range(open_app, mini_bench):
    at = open_app(mini_bench, {"run": "alpha"})
    at.switch_page("views/questions.py").run()
    at.multiselect(key="x_status").set_value(["missing"]).run()
    assert_clean(at)
    assert list(explorer(at)["question_id"]) == [Q(7)]
    at.multiselect(key="x_status").set_value([])
    at.slider(key="x_r.accuracy").set_value((0, 0)).run()
    assert list(explorer(at)["question_id"]) == [Q(4), Q(7)]
    assert at.query_params["accuracy"] == "0-0"


def test_data_page_lists_documents_joins_and_reproducibility(open_app, mini_bench):
    at = open_app(mini_bench)
    at.switch_page("views/data.py").run()
    assert_clean(at)
    assert at.title[0].value == "Data"
    errors = [unescape(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("documents.jsonl: 1 error")
    problems = at.code[0].value
    assert "documents.jsonl — error: doc_000003.file: expected a path inside the docs folder" in problems
    docs = at.dataframe[1].value.set_index("Document")
    assert docs["Found"].to_dict() == {"doc_000001": True, "doc_000002": True, "doc_000003": True, "doc_000004": False}
    assert docs.loc["doc_000003", "File"] == "docs/third.pdf"
    join = at.dataframe[2].value.set_index("Run")
    assert join.loc["alpha", ["Matched", "Missing", "Extra (not scored)", "Failed statuses"]].tolist() == [9, 1, 1, "error: 1"]
    warning = unescape(at.warning[0].value)
    assert warning.startswith("alpha: 3 of 10 questions differ from the official scores")
    assert any("With profile xldocbench-1519: 0 of 10 differ" in c.value for c in at.caption)
    assert list(at.dataframe[3].value["question_id"]) == [Q(4), Q(5), Q(6)]


def test_malformed_files_are_listed_and_the_rest_works(open_app, broken_bench):
    at = open_app(broken_bench)
    assert_clean(at)
    lb = board(at)
    assert sorted(lb.index) == ["alpha", "beta", "broken", "gamma"]  # bare_string.json has nothing to score
    alpha = on_board(broken_bench, "alpha")
    assert alpha.gold_count == 11  # the one good row of qa_broken.jsonl joins the gold
    assert lb.loc["alpha", "Accuracy (%)"] == pytest.approx(100 * alpha.overall["accuracy"])
    assert lb.loc["broken", "Answered"] == 1

    at.switch_page("views/data.py").run()
    assert_clean(at)
    errors = " ".join(unescape(e.value) for e in at.error)
    for name in ("qa_broken.jsonl", "runs/broken.jsonl", "runs/bare_string.json"):
        assert name in errors
    # a file of which nothing loaded: one true sentence, in the error (issue 29.4), no second one beside it
    assert any("runs/bare_string.json" in unescape(e.value) and "nothing in it could be loaded" in unescape(e.value)
               for e in at.error)
    assert not any("bare_string.json" in unescape(w.value) for w in at.warning)
    problems = at.code[0].value
    assert "qa_broken.jsonl:2 — error: expected a JSON value, got invalid JSON" in problems
    assert "qa_broken.jsonl:3 — error: expected a JSON object, got a list of 2" in problems
    assert "qa_broken.jsonl:4 — error: question_id: expected one of" in problems
    assert "runs/broken.jsonl:3 — error: expected a JSON object, got number 42" in problems
    assert "runs/bare_string.json — error: expected a list of objects" in problems
    files = at.dataframe[0].value.set_index("File")
    assert files.loc["runs/broken.jsonl", ["Rows read", "Loaded", "Skipped"]].tolist() == [4, 1, 3]


def test_uploaded_prediction_file_joins_the_leaderboard(open_app, mini_bench):
    body = (mini_bench / "runs/beta.json").read_bytes()
    at = open_app(mini_bench)
    at.file_uploader(key="up_runs").set_value(("delta.json", body, "application/json")).run()
    assert_clean(at)
    lb = board(at)
    beta = expected(mini_bench, "beta")
    assert lb.loc["delta", "Accuracy (%)"] == pytest.approx(100 * beta.overall["accuracy"])
    at.switch_page("views/data.py").run()
    files = at.dataframe[0].value
    assert "upload: delta.json" in list(files["File"])


# ----------------------------------------------------------------------------- daily-use fixes (issue 11)


def count_line(at: AppTest) -> str:
    return next(unescape(c.value) for c in at.caption if re.search(r"\d+ of \d+ questions", c.value))


def test_search_finds_a_question_by_id_and_says_what_it_searched(open_app, mini_bench):
    at = open_app(mini_bench, {"run": "alpha", "q": Q(4)})  # the search comes from the link
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    assert list(explorer(at)["question_id"]) == [Q(4)]
    line = count_line(at)
    assert line.startswith("**1 of 10 questions**") and Q(4) in line
    assert "question ids, questions, gold answers and the chosen runs' predictions" in line
    assert "question id" in at.text_input(key="x_search").proto.help
    at.text_input(key="x_search").set_value("SINGLE_000006").run()  # any case, part of an id
    assert list(explorer(at)["question_id"]) == [Q(6)]
    assert count_line(at).startswith("**1 of 10 questions**")
    at.text_input(key="x_search").set_value("").run()
    assert count_line(at).startswith("**10 of 10 questions**") and "search" not in count_line(at)


def test_score_ranges_hold_for_every_or_any_chosen_run(open_app, mini_bench):
    alpha = {r.qid: r.accuracy for r in expected(mini_bench, "alpha").results}
    beta = {r.qid: r.accuracy for r in expected(mini_bench, "beta").results}
    at = open_app(mini_bench, {"run": ["alpha", "beta"], "accuracy": "0-0"})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    every = list(explorer(at)["question_id"])
    assert every and all(alpha.get(q, 0) == 0 and beta.get(q, 0) == 0 for q in every)
    assert at.expander[0].proto.expanded is False  # filters start collapsed: the table is above the fold
    assert "Accuracy 0–0 %" in count_line(at) and "every chosen run" in count_line(at)
    at.segmented_control(key="x_match").set_value("any").run()
    assert_clean(at)
    anyone = list(explorer(at)["question_id"])
    assert set(anyone) == {q for q in alpha if alpha[q] == 0 or beta.get(q, 1) == 0} and set(every) < set(anyone)
    assert at.query_params["match"] == "any" and at.query_params["accuracy"] == "0-0"
    # a third run widens "any" and narrows "every"
    at.multiselect(key="x_runs").set_value(["alpha", "beta", "gamma"]).run()
    assert set(explorer(at)["question_id"]) >= set(anyone)
    at.segmented_control(key="x_match").set_value("every").run()
    assert set(explorer(at)["question_id"]) <= set(every) and "match" not in at.query_params


def test_loaded_scores_are_badged_and_can_be_hidden(open_app, mini_bench):
    at = open_app(mini_bench)
    assert_clean(at)
    badges = [m.value for m in at.markdown if "badge[" in m.value]
    assert badges == [":orange-badge[gamma · loaded]"]
    warning = unescape(" ".join(w.value for w in at.warning))
    assert "1 run marked *loaded*" in warning and "xldocbench" in warning and "profile is unknown" in warning
    # alpha has both predictions and official scores: they disagree under this profile, and the page says so
    assert "Loaded scores differ from the ones recomputed under xldocbench for alpha (3 of 10 questions)" in warning
    at.selectbox(key="profile").set_value("xldocbench-1519").run()
    assert not [w for w in at.warning if "Loaded scores differ" in unescape(w.value)]  # the file was made with this one
    at.selectbox(key="profile").set_value("xldocbench").run()
    heat = at.get("plotly_chart")[0].proto.spec
    assert '"gamma *"' in heat and "scores loaded (profile unknown)" in heat
    at.toggle(key="ov_hide_loaded").set_value(True).run()
    assert_clean(at)
    assert "gamma" not in list(board(at).index) and sorted(board(at).index) == ["alpha", "beta"]
    assert at.query_params["loaded"] == "hide"
    assert "gamma" not in at.get("plotly_chart")[0].proto.spec
    assert not [w for w in at.warning if "loaded" in w.value]


def test_overview_metric_and_tab_are_in_the_link(open_app, mini_bench):
    at = open_app(mini_bench, {"metric": "anls", "tab": "difficulty"})
    assert_clean(at)
    assert at.segmented_control(key="ov_metric").value == "anls"
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert len(specs) == 4  # two heatmaps, the open tab's bars only, and where the answers are
    assert "ANLS (%) by run and reasoning type" in specs[0] and "ANLS (%) by difficulty" in specs[2]
    assert "Where each run" in specs[3]
    assert at.query_params["metric"] == "anls" and at.query_params["tab"] == "difficulty"
    at.segmented_control(key="ov_metric").set_value("token_f1").run()
    assert_clean(at)
    assert at.query_params["metric"] == "token_f1" and at.query_params["tab"] == "difficulty"
    assert "Token F1 (%) by difficulty" in at.get("plotly_chart")[2].proto.spec
    at.segmented_control(key="ov_metric").set_value("accuracy").run()
    assert "metric" not in at.query_params  # the default leaves the link short


def test_a_link_naming_a_run_that_is_not_loaded_says_so(open_app, mini_bench):
    at = open_app(mini_bench, {"run": ["alpha", "delta"]})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    warning = unescape(at.warning[0].value)
    assert "The link names 1 run that is not loaded: delta" in warning and "uploaded again" in warning
    assert at.multiselect(key="x_runs").value == ["alpha"]
    at.button(key="dismiss_missing_runs").click().run()
    assert not [w for w in at.warning if "delta" in w.value]


def test_question_detail_has_one_tab_per_run_and_the_gold_evidence(open_app, mini_bench):
    at = open_app(mini_bench, {"run": ["alpha", "beta", "gamma"], "sel": Q(1)})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    labels = [unescape(t.label) for t in at.tabs]
    alpha, beta = (next(r for r in expected(mini_bench, n).results if r.qid == Q(1)) for n in ("alpha", "beta"))
    assert labels == [f"alpha · {100 * alpha.accuracy:.0f}", f"beta · {100 * beta.accuracy:.0f}", "gamma · 100"]
    assert "quoted text" in [c.value for c in at.code]
    assert any(unescape(c.value) == "doc_000001 · page 2 · Table" for c in at.caption)
    assert [len(t.get("metric")) for t in at.tabs] == [4, 4, 4]  # Accuracy, Token F1, ANLS, status in each
    assert "Scores loaded, not recomputed: no trace." in [c.value for c in at.tabs[2].caption]


def test_skipped_rows_are_marked_on_the_leaderboard(open_app, broken_bench):
    at = open_app(broken_bench)
    assert_clean(at)
    lb = board(at)
    assert lb.loc["broken", "Problems"] == "3 rows skipped, ids unknown" and lb.loc["alpha", "Problems"] == ""
    assert any("broken: of the file's rows, 3 rows could not be read (their question ids are unknown" in unescape(w.value)
               for w in at.warning)
    # the runs' problems and the gold's dropped rows (qa_broken.jsonl) each link to the Data page
    assert [p.proto.page.endswith("data.py") or "Data" in p.proto.label for p in at.get("page_link")] == [True, True]


def test_an_upload_with_problems_shows_a_toast(open_app, mini_bench):
    at = open_app(mini_bench)
    at.file_uploader(key="up_runs").set_value(("delta.jsonl", b'{"question_id": "%s", "prediction": "x"}\n42\n' % Q(1).encode(),
                                               "application/json")).run()
    assert_clean(at)
    toasts = [unescape(t.value) for t in at.toast]
    assert toasts == ["upload: delta.jsonl: 1 row skipped, 1 error, 0 warnings. The Data page lists them."]
    at.run()
    assert not at.toast  # once per file


def test_a_huge_answer_is_cut_for_display_and_explained_on_a_prefix(open_app, mini_bench, tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(mini_bench, bench)
    huge = "250 " + "word " * 60_000
    (bench / "runs" / "beta.json").unlink()
    (bench / "runs" / "alpha.jsonl").write_text(json.dumps({"question_id": Q(5), "prediction": huge}) + "\n")
    at = open_app(bench, {"run": "alpha", "sel": Q(5)})
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    cell = explorer(at).set_index("question_id").loc[Q(5), run_column("alpha", "prediction")]
    assert len(cell) < 500 and f"{len(huge):,} characters" in cell
    answer = next(c.value for c in at.code if c.value.startswith("250 word"))
    assert len(answer) < 2_100
    captions = [c.value for c in at.caption]
    assert f"Showing the first 2,000 of {len(huge):,} characters." in captions
    assert any(c.startswith(f"Explained on the first 10,000 of {len(huge):,} characters") for c in captions)
    assert any(b.proto.label.startswith("Download all") for b in at.get("download_button"))


def test_chart_runs_follow_the_pick_and_the_leaderboard_keeps_all(open_app, mini_bench):
    at = open_app(mini_bench)
    order = list(board(at).index)
    assert at.multiselect(key="ov_runs").value == order  # three runs: all of them, in leaderboard order
    heat = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert heat["layout"]["yaxis"]["categoryarray"] == [r + (" *" if r == "gamma" else "") for r in reversed(order)]
    at.multiselect(key="ov_runs").set_value(["beta"]).run()
    assert_clean(at)
    assert sorted(board(at).index) == ["alpha", "beta", "gamma"]
    heat = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert {c[0] for c in heat["data"][0]["customdata"]} == {"beta"}
    at.segmented_control(key="ov_metric").set_value("anls").run()  # the pick outlives a metric change
    assert at.multiselect(key="ov_runs").value == ["beta"]
    assert at.query_params["chart"] in ("beta", ["beta"])  # and travels with a link
    at.selectbox(key="ov_pick_field").set_value("domain").run()
    at.selectbox(key="ov_pick_label").set_value("legal_regulation")
    next(b for b in at.button if b.label == "Show these questions").click().run()
    assert_clean(at)
    assert at.title[0].value == "Question explorer" and at.multiselect(key="x_runs").value == ["beta"]
    # a link that takes every run out of the charts keeps them out (the picker is not refilled)
    at = open_app(mini_bench, {"chart": ""})
    assert_clean(at)
    assert at.multiselect(key="ov_runs").value == []
    assert any("Pick at least one run" in i.value for i in at.info)


def test_a_load_is_moved_out_of_the_collectors_sight(open_app, mini_bench):
    """After a load what it made is frozen (gc.freeze): a full collection in a serving process no
    longer walks it (bench: 0.6 s a collection at 50 runs x 20,000 questions). And a load builds no
    record per question: runs are held in columns (dashboard/core/runs.py), their records built
    only when a page asks for them."""
    import gc

    from dashboard.shell import cache, context

    gc.unfreeze()
    cache._analysis_of.clear()  # built anew here, not taken from an earlier test's load
    try:
        at = open_app(mini_bench)
        assert_clean(at)
        an = at.session_state[context.CONTEXT].analysis
        run = an.runs[0]
        assert "_lens_compact" in run.result.__dict__ and "_lens_results" not in run.result.__dict__
        assert gc.get_freeze_count() > 0 and gc.is_tracked(run)
        tracked = gc.get_objects()
        assert not any(o is run for o in tracked) and not any(o is run.result for o in tracked)
    finally:
        gc.unfreeze()


def test_explorer_opens_on_the_best_runs_when_the_link_names_none(open_app, mini_bench, tmp_path):
    """Six runs, run_k right on its first k questions: the explorer opens on the four best, in
    leaderboard order, not on the first four files."""
    bench = tmp_path / "bench"
    shutil.copytree(mini_bench, bench, ignore=shutil.ignore_patterns("malformed", "runs", "results"))
    gold = [json.loads(line) for f in ("qa_single_doc.jsonl", "qa_cross_doc.jsonl")
            for line in (bench / f).read_text(encoding="utf-8").splitlines() if line.strip()]
    (bench / "runs").mkdir()
    for k in range(6):
        rows = [{"question_id": g["question_id"], "prediction": g["answer"]["value"] if i < k * 2 else "no idea"}
                for i, g in enumerate(gold)]
        (bench / "runs" / f"run_{k}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    at = open_app(bench)
    assert_clean(at)
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    assert at.multiselect(key="x_runs").value == ["run_5", "run_4", "run_3", "run_2"]


def test_explorer_default_runs_have_answers_to_read(open_app):
    """sample_runs/ ranks a run of loaded scores (no answers) among its best: the explorer opens
    on the best runs that have answers."""
    at = open_app(Path(__file__).resolve().parent.parent / "sample_runs")
    assert_clean(at)
    at.switch_page("views/questions.py").run()
    assert_clean(at)
    assert at.multiselect(key="x_runs").value == ["longctx-ocr", "agent-pipeline", "longctx-img", "small-9b"]


def test_the_board_caption_counts_a_thousand_runs_instead_of_naming_them():
    """Under the leaderboard, the questions each run is scored on: a few runs are named; the largest group
    of many is counted (1,000 runs were named in one paragraph), and missing answers name at most NAMED runs."""
    import pandas as pd

    from dashboard.overview.panel import NAMED, board_text

    runs = [f"run{i:04d}" for i in range(1000)]
    board = pd.DataFrame({"Run": runs, "Questions": [20_000] * 999 + [19_796], "Missing": [0] * 990 + [5] * 10})
    text = board_text(board)
    assert "20,000 questions: 999 runs; 19,796 questions: run0999." in text
    assert "run0500" not in text
    named = ", ".join(f"run{i:04d} 5" for i in range(990, 990 + NAMED))
    assert f"Missing (no row: not counted): {named} and {10 - NAMED:,} more runs." in text
    few = pd.DataFrame({"Run": ["a", "b", "c"], "Questions": [40, 1082, 1082], "Missing": [0, 0, 0]})
    assert board_text(few).endswith("--ignore-missing): 40 questions: a; 1,082 questions: b, c.")
    one = pd.DataFrame({"Run": runs[:20], "Questions": [500] * 20, "Missing": [0] * 20})
    assert board_text(one) == "Scored on the 500 questions each run attempted."

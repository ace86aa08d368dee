"""Every page through streamlit.testing.v1.AppTest, on tests/fixtures/mini_bench (set through the
LENS_BENCHMARK environment variable: AppTest cannot pass command-line arguments)."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.tables import OFFICIAL, flat_column, run_column
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
Q = "adubench_single_{:06d}".format


@pytest.fixture
def open_app(monkeypatch):
    def start(bench: Path, params: dict | None = None) -> AppTest:
        monkeypatch.setenv("LENS_BENCHMARK", str(bench))
        monkeypatch.delenv("LENS_RUNS", raising=False)
        monkeypatch.delenv("LENS_SCORES", raising=False)
        at = AppTest.from_file(APP, default_timeout=30)
        at.query_params.update(params or {})
        return at.run()
    return start


def expected(bench: Path, run: str, profile: str = "xldocbench"):
    gold = load_gold(sorted(bench.glob("qa_*.jsonl"), key=lambda p: "cross" in p.name)).items
    preds = next(p for p in (bench / "runs").iterdir() if p.stem == run)
    return evaluate(gold, load_predictions(preds).items, profile=profile, name=run)


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
        res = expected(mini_bench, run)
        assert lb.loc[run, "Accuracy (%)"] == pytest.approx(100 * res.overall["accuracy"])
        assert lb.loc[run, "ANLS (%)"] == pytest.approx(100 * res.overall["anls"])
    assert lb.loc["gamma", "Source"] == OFFICIAL and lb.loc["gamma", "Accuracy (%)"] == pytest.approx(60.0)

    at.selectbox(key="profile").set_value("xldocbench-1519").run()
    assert_clean(at)
    release = expected(mini_bench, "alpha", "xldocbench-1519")
    assert release.overall["accuracy"] != expected(mini_bench, "alpha").overall["accuracy"]
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
    assert trace["Rule that decided"] == "numeric_tolerance"
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
    alpha = expected(broken_bench, "alpha")
    assert alpha.gold_count == 11  # the one good row of qa_broken.jsonl joins the gold
    assert lb.loc["alpha", "Accuracy (%)"] == pytest.approx(100 * alpha.overall["accuracy"])
    assert lb.loc["broken", "Answered"] == 1

    at.switch_page("views/data.py").run()
    assert_clean(at)
    errors = " ".join(unescape(e.value) for e in at.error)
    for name in ("qa_broken.jsonl", "runs/broken.jsonl", "runs/bare_string.json"):
        assert name in errors
    assert "runs/bare_string.json: no prediction could be loaded" in unescape(at.warning[0].value)
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

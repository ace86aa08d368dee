"""The Compare runs and Presentation pages through AppTest on tests/fixtures/mini_bench: headline
numbers, a slice selection, a flip cell, a question side by side, deep links, the many-runs view."""

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.compare import frames as C
from dashboard.core.textdiff import char_diff, diff_text
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

Q = "adubench_single_{:06d}".format


@pytest.fixture
def open_app(monkeypatch, mini_bench):
    def start(params: dict | None = None, page: str = "views/compare.py") -> AppTest:
        at = app_on(monkeypatch, mini_bench, params, timeout=60)
        at.switch_page(page).run()
        assert_clean(at)
        return at
    return start


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def scored(bench: Path, run: str):
    gold = load_gold([bench / "qa_single_doc.jsonl", bench / "qa_cross_doc.jsonl"]).items
    path = next(p for p in (bench / "runs").iterdir() if p.stem == run)
    return {r.qid: r for r in evaluate(gold, load_predictions(path).items, profile="xldocbench", name=run).results}


def frame(at: AppTest, key: str = "", column: str = ""):
    """The table of a selectable st.dataframe by its key, or the first table with that column."""
    if key:
        return next(d for d in at.dataframe if d.proto.id and (d.proto.id.endswith("-" + key) or f"-{key}_" in d.proto.id)).value
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_headline_slice_flip_and_question(open_app, mini_bench):
    at = open_app({"a": "alpha", "b": "beta"})
    assert at.title[0].value == "Compare runs"
    alpha, beta = scored(mini_bench, "alpha"), scored(mini_bench, "beta")
    # the questions both runs answered: alpha has no answer to one of them (issue 29: it is in no pair)
    shared = [q for q in alpha if q in beta and alpha[q].prediction is not None and beta[q].prediction is not None]
    assert len(shared) == len(alpha) - 1
    for metric, shown in zip(C.METRICS, at.metric):
        delta = sum(getattr(alpha[q], metric) - getattr(beta[q], metric) for q in shared) / len(shared)
        assert shown.value == f"{100 * delta:+.1f} pp"
    only_a = sum(alpha[q].accuracy >= 0.5 > beta[q].accuracy for q in shared)
    only_b = sum(beta[q].accuracy >= 0.5 > alpha[q].accuracy for q in shared)
    assert f"only **alpha** is right on **{only_a}**, only **beta** on **{only_b}**" in at.markdown[0].value
    # documents are the unit (a question's first document): too few to tell, said instead of an interval
    docs = len({alpha[q].question.document_ids[0] for q in shared})
    assert docs == 3
    assert f"in {docs} documents" in at.markdown[0].value and "too few documents to tell" in at.markdown[0].value
    assert all(f"too few documents to tell ({docs} documents" in c.value for c in at.caption[:3])
    assert any(c.value.startswith("Question-level McNemar p") for c in at.caption)

    # slice selection: the questions of one domain, then one flip cell of it
    at.selectbox(key="cmp_slice_pick").set_value("domain:legal_regulation").run()
    assert_clean(at)
    assert at.query_params["cmp_slice"] == "domain:legal_regulation"
    listed = frame(at, "cmp_q_table")
    assert list(listed["question_id"]) == [Q(3), Q(4)]
    for _, row in listed.iterrows():
        q = row["question_id"]
        assert row["outcome"] == C.flip_of(alpha[q].accuracy, beta[q].accuracy)
        assert row["A answer"] == alpha[q].effective and row["B answer"] == beta[q].effective
    outcome = listed.set_index("question_id").loc[Q(4), "outcome"]
    at.segmented_control(key="cmp_flip_pick").set_value(outcome).run()
    assert list(frame(at, "cmp_q_table")["question_id"]) == [q for q in (Q(3), Q(4))
                                                             if C.flip_of(alpha[q].accuracy, beta[q].accuracy) == outcome]
    assert at.query_params["cmp_flip"] == outcome

    # the question side by side: both answers as plain text and their character diff
    at.selectbox(key="cmp_q_pick").set_value(Q(4)).run()
    assert_clean(at)
    assert at.query_params["cmp_q"] == Q(4)
    codes = [c.value for c in at.code]
    assert alpha[Q(4)].effective in codes and beta[Q(4)].effective in codes
    assert diff_text(char_diff(alpha[Q(4)].effective, beta[Q(4)].effective)) in codes
    assert any(s.value == "Question detail" for s in at.subheader)

    # the slice table follows the breakdown chosen, with the flips per slice
    at.selectbox(key="cmp_field").set_value("domain").run()
    deltas = frame(at, column="Δ (pp)").set_index("Slice")
    legal = deltas.loc["Domain: legal_regulation"]
    assert legal["Questions"] == 2 and legal["Few"] == "⚠ too few documents to tell"
    assert 1 <= legal["Documents"] <= 2 and pd.isna(legal["Low (pp)"]) and pd.isna(legal["q"])
    assert {"Detectable (pp)", "McNemar p (questions)"} <= set(deltas.columns)
    assert legal["Δ (pp)"] == pytest.approx(100 * sum(alpha[q].accuracy - beta[q].accuracy for q in (Q(3), Q(4))) / 2)


def test_deep_link_restores_the_cell_and_question(open_app, mini_bench):
    at = open_app({"a": "beta", "b": "alpha", "cmp_slice": "domain:legal_regulation", "cmp_q": Q(3)})
    assert at.selectbox(key="cmp_a").value == "beta" and at.selectbox(key="cmp_b").value == "alpha"
    assert at.selectbox(key="cmp_slice_pick").value == "domain:legal_regulation"
    assert at.selectbox(key="cmp_q_pick").value == Q(3)
    assert list(frame(at, "cmp_q_table")["question_id"]) == [Q(3), Q(4)]
    assert at.query_params["a"] == "beta" and at.query_params["cmp_q"] == Q(3)
    # a link to a slice these runs do not have falls back to every question
    at2 = open_app({"a": "alpha", "b": "beta", "cmp_slice": "domain:nowhere"})
    assert at2.selectbox(key="cmp_slice_pick").value == "overall:all questions"


def test_many_runs_tab_and_presentation(open_app, mini_bench):
    at = open_app({"cmp_tab": "all", "cmp_run": "beta"})
    assert any(s.value == "Where a run is weakest" for s in at.subheader)
    assert at.selectbox(key="cmp_run").value == "beta"
    ranks = frame(at, column="gamma").set_index("Slice")
    assert set(ranks.columns) >= {"alpha", "beta", "gamma"}
    # issue 34: the runs are ranked on the questions they all attempted (alpha has no answer to one of the 10)
    assert ranks.loc["All questions", "Questions"] == 9
    assert sorted(ranks.loc["All questions", ["alpha", "beta", "gamma"]]) == [1, 2, 3]
    # where a run is weak: the finder's answer, and on ten questions the reason it cannot test a slice
    assert any("each slice needs 20 documents; this benchmark has" in i.value for i in at.info)
    at.segmented_control(key="cmp_all_metric").set_value("anls").run()
    assert_clean(at)
    assert any("each slice needs 20 documents" in i.value for i in at.info)

    present = open_app({"a": "alpha", "b": "beta"}, page="views/present.py")
    assert present.title[0].value == "alpha against beta"
    assert [c.value for c in present.caption][:5] == ["1 / 5", "2 / 5", "3 / 5", "4 / 5", "5 / 5"]  # 5: the finder
    assert "percentage points ahead of" in present.markdown[0].value


def test_report_is_built_and_offered_for_download(open_app):
    at = open_app({"a": "alpha", "b": "beta"})
    assert at.multiselect(key="cmp_report_runs").value == ["alpha", "beta"]
    next(b for b in at.button if b.label == "Build the report").click().run()
    assert_clean(at)
    assert [d.proto.label for d in at.get("download_button")][-1] == "Download HTML"
    page = at.session_state["cmp_report"][1].decode("utf-8")
    assert page.count("Plotly.newPlot(") == 3  # runs, flips, deltas: no slice of ten questions to plot
    assert "alpha (A) against baseline beta (B)" in page


def test_a_flip_table_cell_opens_its_questions(open_app, mini_bench):
    at = open_app({"a": "alpha", "b": "beta"})
    alpha, beta = scored(mini_bench, "alpha"), scored(mini_bench, "beta")
    flips = frame(at, "cmp_flip_table")
    assert {"Documents", "p (documents)", "McNemar p (questions)"} <= set(flips.columns)
    row = list(flips["Slice"]).index("Domain: legal_regulation")
    outcome = C.flip_of(alpha[Q(3)].accuracy, beta[Q(3)].accuracy)
    assert flips.loc[row, outcome] >= 1
    # what a click on that cell sends: its row position and column name
    at.session_state["cmp_flip_table"] = {"selection": {"rows": [], "columns": [], "cells": [[row, outcome]]}}
    at.run()
    assert_clean(at)
    assert at.selectbox(key="cmp_slice_pick").value == "domain:legal_regulation"
    assert at.segmented_control(key="cmp_flip_pick").value == outcome
    expected = [q for q in (Q(3), Q(4)) if C.flip_of(alpha[q].accuracy, beta[q].accuracy) == outcome]
    assert list(frame(at, "cmp_q_table")["question_id"]) == expected
    assert len(expected) == flips.loc[row, outcome]
    assert at.query_params["cmp_slice"] == "domain:legal_regulation" and at.query_params["cmp_flip"] == outcome


def test_a_question_row_opens_it_and_another_slice_starts_unselected(open_app):
    at = open_app({"a": "alpha", "b": "beta"})
    at.selectbox(key="cmp_slice_pick").set_value("domain:legal_regulation").run()
    table = next(d for d in at.dataframe if "-cmp_q_table_" in d.proto.id)
    assert list(table.value["question_id"]) == [Q(3), Q(4)]
    key = table.proto.id.split("-", 2)[2]
    at.session_state[key] = {"selection": {"rows": [1], "columns": [], "cells": []}}  # a click on the second row
    at.run()
    assert_clean(at)
    assert at.selectbox(key="cmp_q_pick").value == Q(4) and at.query_params["cmp_q"] == Q(4)
    assert any(s.value == "Question detail" for s in at.subheader)
    at.selectbox(key="cmp_q_pick").set_value(Q(3)).run()  # the picker wins over the older row selection
    assert at.selectbox(key="cmp_q_pick").value == Q(3) and at.query_params["cmp_q"] == Q(3)
    at.selectbox(key="cmp_slice_pick").set_value("domain:finance_business").run()
    assert_clean(at)
    assert at.selectbox(key="cmp_q_pick").value is None and "cmp_q" not in at.query_params
    assert not any(s.value == "Question detail" for s in at.subheader)


def write_documents_bench(root: Path, docs: int = 30) -> Path:
    """`docs` documents (no PDFs: the gold's document ids are the unit whether or not the file is there)
    of two questions; A right on every question, B on the first question of every document and on
    both of the first five: A is ahead on 25 documents, by one question each. Difficulty: 24 documents
    'hard' (a slice that is tested), 6 'easy' (too few)."""
    (root / "runs").mkdir(parents=True)
    qids = [(d, k) for d in range(docs) for k in range(2)]
    with open(root / "qa_single_doc.jsonl", "w", encoding="utf-8") as f:
        for d, k in qids:
            f.write(json.dumps({
                "question_id": f"q{d:02d}_{k}", "task_type": "single_doc", "question": f"question {d} {k}",
                "answer": {"value": f"answer{d}x{k}", "format": "Str", "verification_rule": "exact_match"},
                "document": {"document_id": f"doc{d:02d}", "evidence_pages": [1], "evidence_page_numbering": "pdf_index"},
                "metadata": {"domain": "law" if d % 2 else "med", "difficulty": "hard" if d < 24 else "easy"},
            }) + "\n")
    for run, right in (("ahead", lambda d, k: True), ("behind", lambda d, k: k == 0 or d < 5)):
        with open(root / "runs" / f"{run}.jsonl", "w", encoding="utf-8") as f:
            for d, k in qids:
                f.write(json.dumps({"question_id": f"q{d:02d}_{k}", "prediction": f"answer{d}x{k}" if right(d, k) else "no"}) + "\n")
    return root


def test_enough_documents_give_an_interval_and_a_test_by_document(monkeypatch, tmp_path):
    bench = write_documents_bench(tmp_path / "bench")
    at = app_on(monkeypatch, bench, {"a": "ahead", "b": "behind"}, timeout=60)
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    assert at.metric[0].value == "+41.7 pp"  # 25 of 60 questions
    # 25 documents one way, 5 tied: the sign-flip p = 2 / 2^25 (exact)
    assert "On **60** shared questions in 30 documents" in at.markdown[0].value
    assert "by document, p < 0.001" in at.markdown[0].value and "**the Accuracy difference is unlikely to be chance.**" in at.markdown[0].value
    assert at.caption[0].value.startswith("95 % interval +") and "pp over 30 documents" in at.caption[0].value
    at.selectbox(key="cmp_field").set_value("difficulty").run()
    table = frame(at, column="Δ (pp)").set_index("Slice")
    hard, easy = table.loc["Difficulty: hard"], table.loc["Difficulty: easy"]
    assert hard["Documents"] == 24 and hard["Few"] == "" and hard["Low (pp)"] > 0 and hard["q"] < 0.05
    assert easy["Documents"] == 6 and easy["Few"] == "⚠ too few documents to tell" and pd.isna(easy["Low (pp)"])
    assert any("Benjamini-Hochberg across the 1 slice with at least 20 documents" in c.value for c in at.caption)


def test_mmlongbench_question_header_leaves_out_unknown_fields(monkeypatch):
    """Issue 29.3: MMLongBench-Doc leaves reasoning type, domain and difficulty 'unknown': the question
    header does not read '· unknown ·', and no Compare slice is one of those fields."""
    root = Path(__file__).resolve().parent.parent / "sample_runs" / "mmlongbench"
    at = app_on(monkeypatch, root, {"a": "gpt-4o", "b": "docowl-8b", "cmp_q": "mmlongbench_0001"}, timeout=120)
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    assert any(s.value == "Question detail" for s in at.subheader)
    header = next(c.value for c in at.caption if c.value.startswith("mmlongbench\\_0001"))
    assert "unknown" not in header and header.count(" · ") == 2  # id · answer format · document
    slices = set(frame(at, column="Δ (pp)")["Slice"])
    assert not any(s.startswith(("Reasoning type", "Domain", "Difficulty")) for s in slices)



def test_the_pairs_tables_are_written_only_when_a_download_is_pressed(open_app, monkeypatch):
    """The pair's questions are 20,000 rows at 20,000 questions, and writing their CSV and JSON took about a second of
    every run of the page: the page offers the tables' files without writing any, and a press writes one (each
    download button's data is a function, which gives the table's file)."""
    from streamlit.elements.widgets.button import ButtonMixin

    from dashboard.compare import panel as P

    written: list[int] = []
    real_csv, real_json = P.frame_csv, P.json_records
    monkeypatch.setattr(P, "frame_csv", lambda frame: written.append(len(frame)) or real_csv(frame))
    monkeypatch.setattr(P, "json_records", lambda frame: written.append(len(frame)) or real_json(frame))
    offered: dict[str, object] = {}
    original = ButtonMixin.download_button

    def keep(self, label, data, file_name=None, *args, **kwargs):
        if str(kwargs.get("key", "")).startswith("cmp_dl"):
            offered[kwargs["key"]] = data
        return original(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(ButtonMixin, "download_button", keep)
    open_app({"a": "alpha", "b": "beta"})
    assert {"cmp_dl_deltas_csv", "cmp_dl_flips_json", "cmp_dl_questions_csv"} <= set(offered), sorted(offered)
    assert all(callable(data) for data in offered.values()) and written == []  # nothing written by the page's run
    text = offered["cmp_dl_questions_csv"]().decode("utf-8")  # type: ignore[operator]
    assert text.startswith("question_id,outcome,") and written == [len(text.splitlines()) - 1]
    assert json.loads(offered["cmp_dl_flips_json"]())[0]["field"] == C.OVERALL_FIELD  # type: ignore[operator]


def test_a_rerun_of_the_pair_recomputes_nothing_the_pair_alone_decides(open_app, monkeypatch):
    """Every click on Compare reruns the page. The pair's flip table, the finder's scope and key of the pair and the
    question frame's digest depend on the analysis alone (its runs' scores and its own question frame never change),
    so a rerun takes them from the analysis (`Analysis.remember`): at 20,000 questions they were 0.9 s of each
    1.5 s rerun. (The first run may find them kept already: the analysis is shared with earlier tests of this
    process; a rerun without the memo computes each of them again, whatever came before.) Another pair has its own:
    it asks the analysis under keys of its own (whether an earlier test of this process already asked them or not,
    so the check does not depend on the tests' order)."""
    from dashboard.compare import panel as P
    from dashboard.core.analysis import Analysis
    from dashboard.weak import frames as W

    calls: dict[str, int] = {"flips": 0, "scope": 0, "scores": 0, "fields": 0, "slices": 0}

    def counted(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(P.C, "flip_table", counted("flips", P.C.flip_table))
    monkeypatch.setattr(W, "scope", counted("scope", W.scope))
    monkeypatch.setattr(W, "scores_key", counted("scores", W.scores_key))
    monkeypatch.setattr(W, "fields_digest", counted("fields", W.fields_digest))
    monkeypatch.setattr(P.C, "slices", counted("slices", P.C.slices))
    asked: list[object] = []
    real_remember = Analysis.remember

    def remember(self, key, build, questions=None):
        asked.append(key)
        return real_remember(self, key, build, questions)

    monkeypatch.setattr(Analysis, "remember", remember)
    at = open_app({"a": "alpha", "b": "beta"})
    first = dict(calls)
    shown = frame(at, "cmp_flip_table")
    at.segmented_control(key="cmp_flip_pick").set_value("only A").run()
    assert_clean(at)
    assert calls == first  # the rerun took every one of them from the analysis
    assert frame(at, "cmp_flip_table").equals(shown)
    beta_keys = set(map(repr, asked))
    asked.clear()
    at.selectbox(key="cmp_b").set_value("gamma").run()
    assert_clean(at)
    assert not frame(at, "cmp_flip_table").equals(shown)  # another pair: its own table, not alpha and beta's
    gamma_only = {k for k in map(repr, asked) if k not in beta_keys}
    for name in ("flips", "scope", "scores key"):  # its own flips, finder's scope and scores, under keys of its own
        assert any(k.startswith(f"('{name}', ") and "'gamma'" in k for k in gamma_only), (name, gamma_only)
    assert calls["fields"] == first["fields"] and calls["slices"] == first["slices"]  # the question frame's, kept



def test_the_pairs_table_is_made_once_on_its_own_thread_and_made_again_after_a_failure(monkeypatch, mini_bench):
    """The per-slice table is made on a thread of its own while the page draws the flips and the finder's answers
    (`panel.pair_job`), then shown where it belongs, under the headline. A rerun of the pair takes the job's table
    (one build); a build that failed is shown as the page's error, and the next run starts it again."""
    from dashboard.compare import panel as P
    from dashboard.core.bounded import Bounded

    monkeypatch.setattr(P, "PAIR_JOBS", Bounded(64))
    builds: list[str] = []
    real = P.C.deltas

    def deltas(*args, **kwargs):
        builds.append("build")
        if len(builds) == 1:
            raise RuntimeError("the slices went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(P.C, "deltas", deltas)
    at = app_on(monkeypatch, mini_bench, {"a": "alpha", "b": "beta"}, timeout=60)
    at.switch_page("views/compare.py").run()
    assert [e.value for e in at.exception] and "the slices went away" in at.exception[0].value and builds == ["build"]
    at.run()
    assert_clean(at)
    assert builds == ["build", "build"]
    titles = [h.value for h in at.subheader]
    assert titles.index("Headline") < titles.index("By slice") < titles.index("Where did A get worse, and where better")\
        < titles.index("What flipped (Accuracy)")  # drawn last, shown where it belongs
    at.segmented_control(key="cmp_flip_pick").set_value("only A").run()
    assert_clean(at)
    assert builds == ["build", "build"]  # the rerun took the job's table

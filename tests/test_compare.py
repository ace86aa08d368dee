"""dashboard.compare: flips on sample_runs/ against a checked-in file, deltas, ranks, the slices that hold, telling failures."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dashboard.compare import frames as C
from dashboard.core.analysis import RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from scoring.evaluate import evaluate
from scoring.stats import mcnemar_exact

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests/fixtures/expected/flips_sample_runs.json"


@pytest.fixture(scope="module")
def sample() -> Analysis:
    ws = load_workspace(Sources(ROOT / "sample_runs"))
    runs = [Run(pf.run, RECOMPUTED, str(pf.path), evaluate(ws.gold.items, pf.loaded.items, profile="xldocbench", name=pf.run))
            for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts)


def test_flip_counts_on_sample_runs_match_the_checked_in_file(sample):
    expected = json.loads(EXPECTED.read_text())["pairs"]
    assert len(expected) == 6
    for pair, fields in expected.items():
        a, b = pair.split(" vs ")
        table = C.flip_table(C.paired(sample.rows_of(sample.run_names), a, b), sample.questions)
        got: dict = {}
        for row in table.itertuples(index=False):
            got.setdefault(row.field, {})[row.label] = dict(zip(C.FLIPS, row[3:7]))
            assert row.questions == sum(row[3:7])
        assert got == fields, pair
    overall = expected["longctx-ocr vs small-9b"]["overall"]["all questions"]
    assert sum(overall.values()) == 77


def tiny():
    """Six questions, two fields; A right on q1-q4, B right on q1, q5; continuous F1/ANLS."""
    ids = [f"q{i}" for i in range(1, 7)]
    questions = pd.DataFrame({
        "question_id": ids,
        "domain": ["law", "law", "law", "med", "med", None],
        "evidence_source": [("Table",), ("Table", "Text"), ("Text",), (), ("Table",), ("Chart",)],
        "document": ["d1", "d1", "d2", "d2", "d3", "d3"],
    }, index=ids)
    acc = {"A": [1, 1, 1, 1, 0, 0], "B": [1, 0, 0, 0, 1, 0], "C": [0, 0, 0, 0, 0, 1]}
    f1 = {"A": [1, .8, .6, .5, .2, 0], "B": [1, .4, .2, .1, .9, .1], "C": [.1, .1, .1, .1, .1, 1]}
    rows = [{"run": r, "question_id": q, "accuracy": float(acc[r][k]), "token_f1": f1[r][k], "anls": f1[r][k],
             "status": "success", "prediction": f"{r}{k}"} for r in acc for k, q in enumerate(ids)]
    return questions, pd.DataFrame(rows)


def test_paired_flips_and_slices():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    assert pairs["flip"].tolist() == ["both right", "only A", "only A", "only A", "only B", "both wrong"]
    table = C.flip_table(pairs, questions, ["domain", "evidence_source"]).set_index(["field", "label"])
    assert table.loc[("overall", "all questions"), list(C.FLIPS)].tolist() == [1, 3, 1, 1]
    assert table.loc[("domain", "unknown"), "both wrong"] == 1
    assert table.loc[("evidence_source", "Table"), list(C.FLIPS)].tolist() == [1, 1, 1, 0]  # q1, q2, q5
    assert table.loc[("evidence_source", "unknown"), "only A"] == 1  # q4 has no source
    cell = C.flip_questions(pairs, questions, "evidence_source", "Text", "only A")
    assert list(cell.index) == ["q2", "q3"]
    assert list(C.flip_questions(pairs, questions, "overall", "all questions", None).index) == list(questions.index)


def listed(questions: pd.DataFrame, pairs: pd.DataFrame, names: list[str]) -> dict[str, list]:
    """Fields as `deltas` takes them (one value per pair, as scoring.slice_fields lists them), from a
    hand-made question frame's columns."""
    return {n: questions[n].reindex(pairs.index).tolist() for n in names}


def test_deltas_hand_computed():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    d = C.deltas(pairs, questions, listed(questions, pairs, ["domain"]),
                 C.Settings(resamples=2000, seed=1)).set_index(["field", "label"])
    top = d.loc[("overall", "all questions")]
    assert top["questions"] == 6 and top["small"]
    assert top["accuracy_delta"] == pytest.approx((4 - 2) / 6)
    assert top["token_f1_delta"] == pytest.approx(np.mean([0, .4, .4, .4, -.7, -.1]))
    # three documents: too few to tell -- no interval, but the smallest detectable gap
    assert (top["documents"], top["unit"], top["too_few"]) == (3, "document", True)
    assert np.isnan(top["accuracy_low"]) and np.isnan(top["accuracy_high"])
    assert top["accuracy_detectable"] > abs(top["accuracy_delta"])
    # Accuracy d = 0 1 | 1 1 | -1 0 by document (d1: q1 q2, d2: q3 q4, d3: q5 q6): sums 1, 2, -1, T = 2;
    # T* = +-1 +-2 +-1 in {4, 2, 0, -2, 2, 0, -2, -4}: |T*| >= 2 in 6 of 8 -> p = 0.75
    assert top["p"] == top["accuracy_p"] == pytest.approx(0.75)
    assert (top["only_a"], top["only_b"]) == (3, 1)
    assert top["p_mcnemar"] == pytest.approx(mcnemar_exact(3, 1)) == pytest.approx(0.625)
    assert top["q"] == top["p"]  # the overall row: a family of one
    law = d.loc[("domain", "law")]
    assert law["accuracy_a"] == 1.0 and law["accuracy_b"] == pytest.approx(1 / 3) and law["only_a"] == 2
    slices = d.drop(index=("overall", "all questions"))
    assert "unknown" not in slices.index.get_level_values("label")  # q6 names no domain: in no domain slice
    assert slices["too_few"].all() and slices["q"].isna().all()  # no slice has 20 documents: none is tested
    again = C.deltas(pairs, questions, listed(questions, pairs, ["domain"]), C.Settings(resamples=2000, seed=1))
    pd.testing.assert_frame_equal(again.set_index(["field", "label"]), d)


def test_ranks_per_slice():
    questions, scores = tiny()
    long = C.slice_scores(scores, questions, ["A", "B", "C"], "accuracy", ["domain"])
    got = long.set_index(["field", "label", "run"])
    assert got.loc[("overall", "all questions", "A"), "rank"] == 1
    assert got.loc[("overall", "all questions", "B"), "rank"] == 2
    assert got.loc[("domain", "unknown", "C"), "rank"] == 1
    assert got.loc[("domain", "unknown", "A"), "rank"] == got.loc[("domain", "unknown", "B"), "rank"] == 2  # tie
    wide = C.rank_table(long).set_index(["field", "label"])
    assert wide.loc[("domain", "med"), ["A", "B", "C"]].tolist() == [1, 1, 3]
    assert wide.loc[("domain", "law"), "questions"] == 3


def test_telling_failures_put_regressions_first():
    questions, scores = tiny()
    pairs = C.paired(scores, "A", "B")
    # A's weak slices as the finder gives them to the report: (label, question ids, excess failures)
    told = C.telling_failures(pairs, questions, [("Domain: unknown", ["q5", "q6"], 2.0)], k=5)
    assert list(told.index) == ["q5", "q6"]  # A wrong: q5 (B right), q6 (both wrong)
    assert told.loc["q6", "why"] == ["Domain: unknown"]
    assert C.telling_failures(pairs, questions, [], k=5).loc["q6", "why"] == []


def test_holding_slices_are_the_largest_differences_first_by_size():
    """The report and the Presentation name the slices whose difference holds (q, interval off 0),
    the largest by size first: the Presentation listed "the largest" as the most positive first."""
    table = pd.DataFrame({"field": ["overall", "domain", "domain", "domain", "domain"],
                          "label": ["all questions", "a", "b", "c", "d"],
                          "q": [0.001, 0.01, 0.02, 0.01, 0.2],
                          "accuracy_delta": [-0.05, 0.10, -0.30, 0.20, -0.50],
                          "accuracy_low": [-0.08, 0.02, -0.40, 0.05, -0.9], "accuracy_high": [-0.02, 0.2, -0.2, 0.3, 0.1]})
    held = C.holding_slices(table)
    assert held["label"].tolist() == ["b", "c", "a"]  # |−30| > |+20| > |+10|; d fails q, overall is no slice


def test_slice_keys():
    assert C.parse_slice("domain:law:x") == ("domain", "law:x")
    assert C.parse_slice("nonsense") is None and C.parse_slice("") is None
    assert C.slice_key("domain", "law") == "domain:law"


def test_run_intervals_hold_the_mean():
    _, scores = tiny()
    iv = C.run_intervals(scores, ["A", "B"], C.Settings(resamples=500)).set_index("run")
    assert iv.loc["A", "accuracy"] == pytest.approx(4 / 6)
    assert (iv.loc["A", "documents"], iv.loc["A", "unit"]) == (6, "question")  # no question frame: questions
    assert np.isnan(iv.loc["A", "accuracy_low"])  # 6 < 20 units: no interval
    questions, scores = many()
    iv = C.run_intervals(scores, ["A", "B"], C.Settings(resamples=500), questions).set_index("run")
    assert (iv.loc["A", "documents"], iv.loc["A", "unit"]) == (30, "document")
    assert iv.loc["A", "accuracy_low"] <= iv.loc["A", "accuracy"] <= iv.loc["A", "accuracy_high"]


# ----------------------------------------------------------------------------- documents as the unit


def many(docs: int = 30, per: int = 4):
    """`docs` documents of `per` questions; `domain` splits them by document, `split` has one value
    (no slice), `doc_type` two. A is right on every question of the first 10 documents and on the even
    questions elsewhere; B on the even questions everywhere."""
    ids = [f"q{d:02d}_{k}" for d in range(docs) for k in range(per)]
    questions = pd.DataFrame({
        "question_id": ids,
        "domain": ["law" if int(q[1:3]) % 2 else "med" for q in ids],
        "split": ["test"] * len(ids),
        "doc_type": ["report" if int(q[1:3]) < 20 else "slides" for q in ids],
        "document": [f"doc{q[1:3]}" for q in ids],
        "cluster": [f"doc{q[1:3]}" for q in ids],
    }, index=ids)
    a = [1.0 if int(q[1:3]) < 10 or int(q[-1]) % 2 == 0 else 0.0 for q in ids]
    b = [1.0 if int(q[-1]) % 2 == 0 else 0.0 for q in ids]
    rows = [{"run": r, "question_id": q, "accuracy": v, "token_f1": v, "anls": v, "status": "success", "prediction": ""}
            for r, vals in (("A", a), ("B", b)) for q, v in zip(ids, vals)]
    return questions, pd.DataFrame(rows)


def test_deltas_by_document_on_enough_documents():
    questions, scores = many()
    pairs = C.paired(scores, "A", "B")
    d = C.deltas(pairs, questions, listed(questions, pairs, ["domain", "split", "doc_type"]),
                 C.Settings(resamples=2000)).set_index(["field", "label"])
    assert "split" not in d.index.get_level_values("field")  # one value: no slice
    top = d.loc[("overall", "all questions")]
    # d = 1 on the 2 odd questions of the first 10 documents: 20 of 120 -> delta 1/6; document sums 2 (x10), 0 (x20)
    assert top["accuracy_delta"] == pytest.approx(20 / 120)
    assert (top["documents"], top["too_few"]) == (30, False)
    assert top["accuracy_low"] > 0 and top["accuracy_low"] <= top["accuracy_delta"] <= top["accuracy_high"]
    assert top["p"] == pytest.approx(2 / 2 ** 10)  # ten documents all +2: only all-+ and all-- as extreme
    assert top["p_mcnemar"] == pytest.approx(mcnemar_exact(20, 0))  # 2 / 2^20: questions taken as independent
    report = d.loc[("doc_type", "report")]  # 20 documents: tested
    slides = d.loc[("doc_type", "slides")]  # 10 documents: too few
    assert not report["too_few"] and slides["too_few"] and np.isnan(slides["q"])
    tested = d[(d.index.get_level_values("field") != "overall") & ~d["too_few"]]
    assert len(tested) == C.tested_count(d.reset_index()) == 1 + 0  # report only (law, med: 15 documents each)
    assert tested["q"].tolist() == pytest.approx(list(sps.false_discovery_control(tested["p"].tolist())))
    assert C.verdict(top) == "real" and C.verdict(slides) == "too few"


def test_flip_table_tests_flips_by_document():
    questions, scores = many()
    flips = C.flip_table(C.paired(scores, "A", "B"), questions, ["domain"]).set_index(["field", "label"])
    top = flips.loc[("overall", "all questions")]
    assert (top["documents"], top["unit"]) == (30, "document")
    assert top["p"] == pytest.approx(2 / 2 ** 10) and top["p_mcnemar"] == pytest.approx(mcnemar_exact(20, 0))


# ----------------------------------------------------------------------------- issue 29.2: flips


def test_a_question_run_b_lacks_is_in_no_pair():
    ids = ["q1", "q2", "q3", "q4"]
    questions = pd.DataFrame({"question_id": ids, "domain": ["x", "x", "y", "y"], "document": ["d"] * 4}, index=ids)
    rows = [{"run": "A", "question_id": q, "accuracy": v, "token_f1": v, "anls": v, "status": "success", "prediction": "a"}
            for q, v in zip(ids, [1.0, 1.0, 0.0, 1.0])]
    rows += [{"run": "B", "question_id": q, "accuracy": v, "token_f1": v, "anls": v, "status": st, "prediction": ""}
             for q, v, st in zip(ids, [1.0, 0.0, 0.0, 0.0], ["success", "success", "success", "missing"])]
    pairs = C.paired(pd.DataFrame(rows), "A", "B")
    assert list(pairs.index) == ["q1", "q2", "q3"]  # B has no answer to q4
    top = C.flip_table(pairs, questions, ["domain"]).iloc[0]
    assert (top["questions"], top["only A"], top["both right"], top["both wrong"]) == (3, 1, 1, 1)  # was 4 and 2


def test_flips_read_the_right_column_when_the_frame_has_one():
    ids = ["q1", "q2", "q3"]
    acc_a, acc_b = [0.8, 0.6, 0.3], [0.4, 0.6, 1.0]
    rows = [{"run": r, "question_id": q, "accuracy": v, "token_f1": v, "anls": v, "status": "success", "prediction": ""}
            for r, vals in (("A", acc_a), ("B", acc_b)) for q, v in zip(ids, vals)]
    scores = pd.DataFrame(rows)
    # without `right`: Accuracy >= 0.5 is right (fractional Accuracy: 0.8 and 0.6 right, 0.4 and 0.3 wrong)
    assert C.paired(scores, "A", "B")["flip"].tolist() == ["only A", "both right", "only B"]
    # with it (a profile whose right answer is Accuracy 1): 0.8 and 0.6 are wrong
    scores["right"] = scores["accuracy"] >= 1.0
    assert C.paired(scores, "A", "B")["flip"].tolist() == ["both wrong", "both wrong", "only B"]


def test_a_pair_job_hands_over_its_headline_row_while_its_table_is_still_being_made():
    """`PairJob` makes the table on a thread of its own: the all-questions row is there as soon as it is drawn,
    while the table is not yet made (the table waits for the test here: states, not moments); the table is then
    `deltas`' own. A failure is raised where the row or the table is asked, and the job says it failed."""
    import threading

    questions, scores = many()
    pairs = C.paired(scores, "A", "B")
    fields = listed(questions, pairs, ["domain", "split"])
    settings = C.Settings(resamples=500)
    release = threading.Event()

    def build(on_overall):
        table = C.deltas(pairs, questions, fields, settings, on_overall=on_overall)
        assert release.wait(timeout=120)
        return table

    job = C.PairJob(build)
    head = job.head()
    assert not job.ready() and not job.failed()
    pd.testing.assert_frame_equal(C.overall_frame(head, pairs), C.deltas(pairs, questions, fields, settings).iloc[:1],
                                  check_exact=True)
    release.set()
    pd.testing.assert_frame_equal(job.table(), C.deltas(pairs, questions, fields, settings), check_exact=True)
    assert job.ready() and not job.failed()

    def broken(on_overall):
        raise ValueError("no scores")

    bad = C.PairJob(broken)
    with pytest.raises(ValueError, match="no scores"):
        bad.head()
    with pytest.raises(ValueError, match="no scores"):
        bad.table()
    assert bad.failed()

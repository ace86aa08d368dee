"""Aggregation, computed by hand: overall and bucket means weight every question once; the macro
average weights every bucket once (the mean of the bucket means), so a large bucket cannot drown a
small one. A count-weighted "macro" would equal the overall mean, and these numbers tell them apart."""

import pytest

from scoring.aggregate import macro_average
from scoring.evaluate import evaluate
from scoring.model import GoldQuestion, Prediction

RIGHT, WRONG = "paris", "zzzzz"  # gold "paris": all three metrics 1, or all three 0


def question(i: int, domain: str, sources: list[str]) -> GoldQuestion:
    return GoldQuestion(f"q{i}", "Capital?", ("paris",), "Str", "casefold_exact_match", "single_doc",
                        {"domain": domain, "evidence_sources": sources})


# domain "finance": 4 questions, 3 right -> 0.75;  domain "legal": 1 question, wrong -> 0
# evidence_source: "Table" q1 q2 (right, right) -> 1.0;  "Text" q1 q3 q4 q5 (right, right, wrong, wrong) -> 0.5
GOLD = [question(1, "finance", ["Table", "Text"]), question(2, "finance", ["Table"]), question(3, "finance", ["Text"]),
        question(4, "finance", ["Text"]), question(5, "legal", ["Text"])]
ANSWERS = {"q1": RIGHT, "q2": RIGHT, "q3": RIGHT, "q4": WRONG, "q5": WRONG}


@pytest.fixture(scope="module")
def run():
    preds = [Prediction(qid, text, "success") for qid, text in ANSWERS.items()]
    return evaluate(GOLD, preds, profile="xldocbench", workers=1)


def test_overall_and_buckets_weight_questions(run):
    assert run.overall == {"count": 5, "accuracy": 0.6, "token_f1": 0.6, "anls": 0.6}
    assert run.breakdowns["domain"] == {
        "finance": {"count": 4, "accuracy": 0.75, "token_f1": 0.75, "anls": 0.75},
        "legal": {"count": 1, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0},
    }
    sources = run.breakdowns["evidence_source"]
    assert (sources["Table"]["count"], sources["Table"]["accuracy"]) == (2, 1.0)
    assert (sources["Text"]["count"], sources["Text"]["accuracy"]) == (4, 0.5)


def test_macro_average_is_the_mean_of_bucket_means(run):
    macro = run.macro
    # (0.75 + 0) / 2; a count-weighted mean would give (3 + 0) / 5 = 0.6
    assert macro["domain"] == {"groups": 2, "accuracy": 0.375, "token_f1": 0.375, "anls": 0.375}
    # (1.0 + 0.5) / 2; weighted by bucket size (2 + 2) / 6 = 0.666667
    assert macro["evidence_source"]["accuracy"] == 0.75
    # one bucket: the macro average is that bucket's mean
    assert macro["split"] == {"groups": 1, "accuracy": 0.6, "token_f1": 0.6, "anls": 0.6}
    assert run.report(per_question=False)["lens"]["macro"] == macro


def test_macro_average_skips_empty_buckets_and_groups():
    breakdowns = {
        "domain": {"a": {"count": 2, "accuracy": 0.5, "token_f1": 0.25, "anls": 1.0},
                   "b": {"count": 0, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0},
                   "c": {"count": 8, "accuracy": 0.0, "token_f1": 0.75, "anls": 0.5}},
        "split": {},
    }
    assert macro_average(breakdowns) == {
        "domain": {"groups": 2, "accuracy": 0.25, "token_f1": 0.5, "anls": 0.75},
        "split": {"groups": 0, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0},
    }

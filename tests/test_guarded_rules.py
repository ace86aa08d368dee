"""Rules that a changed line used to slip past every dashboard unit test (each was changed on purpose in
a copy, and nothing failed): the exact pass that ignores spaces and hyphens, the leaderboard's order of
tied runs past numpy's insertion-sort size, and the round trip of every field of a link."""

from __future__ import annotations

import dataclasses

import pymupdf
import pytest

from dashboard.core.analysis import OFFICIAL, Analysis, Run, top_runs
from dashboard.core.links import COMPARE_KEYS, DISAGREE_KEYS, View, from_params, to_params
from dashboard.documents.pdf import clear_caches
from dashboard.evidence.locate import EXACT, locate_in_document
from scoring.model import GoldQuestion, ScoreRow

# ----------------------------------------------------------------------------- the exact pass without spaces and hyphens


@pytest.fixture
def hyphenated(tmp_path):
    path = tmp_path / "h.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "It is a well-known result of the hyper-")
    page.insert_text((72, 90), "parameter search, tabulated in the annex.")
    doc.save(path)
    doc.close()
    clear_caches()
    return path


@pytest.mark.parametrize("quote", ["well known result", "wellknown result", "well - known", "hyperparameter search"])
def test_a_quote_differing_only_in_spaces_and_hyphens_is_found_exactly(hyphenated, quote):
    loc = locate_in_document(hyphenated, 1, quote)
    assert loc.method == EXACT, (quote, loc)  # not the fuzzy pass: that one would also find it, as `fuzzy`
    assert loc.rects


# ----------------------------------------------------------------------------- ties on the leaderboard


def official(name: str, accuracy: float, qids: list[str]) -> Run:
    return Run(name, OFFICIAL, f"results/{name}.jsonl", None, [ScoreRow(q, name, accuracy, accuracy, accuracy) for q in qids])


@pytest.mark.parametrize("n_runs", [17, 50])
def test_tied_runs_keep_the_order_they_were_given_in_at_scale(n_runs):
    """numpy's default sort is stable below 17 items (insertion sort) and not beyond: the order of
    ties is only pinned by a test with more runs than that."""
    qids = ["q1", "q2"]
    scores = [0.5 if k % 3 else 1.0 for k in range(n_runs)]  # many ties at 50 %, some at 100 %
    runs = [official(f"run{k:02d}", s, qids) for k, s in enumerate(scores)]
    board = Analysis.build(runs, [GoldQuestion(q, "?", ("1",), "Int", "", "single_doc", {}) for q in qids], {}).leaderboard()
    expected = [r.name for r in runs if r.name in {f"run{k:02d}" for k, s in enumerate(scores) if s == 1.0}] + \
               [r.name for r in runs if r.name in {f"run{k:02d}" for k, s in enumerate(scores) if s == 0.5}]
    assert list(board["Run"]) == expected
    assert top_runs(board, "accuracy", n=n_runs) == expected


# ----------------------------------------------------------------------------- link round trips


def every_field_set() -> View:
    """A view whose every field differs from the default view's."""
    return View(
        runs=["b", "a"], profile="xldocbench-1519", filters={"domain": ["finance"], "meta.region": ["EU", "US"]},
        ranges={"accuracy": (0, 0), "anls": (20, 80)}, status=["missing", "failed"], location=["other_page"],
        search="total revenue", question="q7", data="/srv/bench", match="any", metric="anls", charts=["a"],
        tab="domain", hide_loaded=True, compare={k: f"v-{k}" for k in COMPARE_KEYS},
        disagree={k: f"w-{k}" for k in DISAGREE_KEYS},
        **{f.name: value for f, value in _extra_fields()},
    )


def _extra_fields():
    """Fields added to View after this test was written get a non-default value of their type here,
    or the test below fails naming them."""
    known = {"runs", "profile", "filters", "ranges", "status", "location", "search", "question", "data", "match",
             "metric", "charts", "tab", "hide_loaded", "compare", "disagree"}
    for f in dataclasses.fields(View):
        if f.name in known:
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # type: ignore[misc]
        value = EXTRA_VALUES.get(f.name)
        if value is None:
            raise AssertionError(f"View.{f.name} (default {default!r}) has no value in EXTRA_VALUES: add one")
        yield f, value


EXTRA_VALUES: dict[str, object] = {"tags": ["reasoning_error", "(untagged)"], "noted": True, "corrected": True,
                                   "page": 55, "zoom": 200, "layers": ["Gold boxes", "a: answer"], "bench": "docvqa_val",
                                   "evals": ["ModelA/DocVQA_VAL@T20260301-090000"], "saved": "counting over charts",
                                   "weak": {"wk_run": "a", "wk_base": "b", "wk_metric": "anls"},
                                   "steps": ["1200:run-a", "-:baseline"],
                                   "trend": {"tr_series": "run-a", "tr_slice": "domain=finance", "tr_metric": "anls"},
                                   "matrix": {"mx_series": "run-a", "mx_by": "document", "mx_sort": "flips",
                                              "mx_page": "2", "mx_q": "q7", "mx_run": "run-a@740", "mx_at": "740"}}


def test_every_field_of_a_view_survives_its_link():
    view = every_field_set()
    default = View()
    unset = [f.name for f in dataclasses.fields(View) if getattr(view, f.name) == getattr(default, f.name)]
    assert unset == []  # the round trip below proves something for every field
    assert from_params(to_params(view)) == view


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(View)])
def test_each_field_alone_survives_its_link(name):
    view = dataclasses.replace(View(), **{name: getattr(every_field_set(), name)})
    if name == "match":  # "any" only means something with a score range; alone it reads back as "every"
        view = dataclasses.replace(view, ranges={"accuracy": (0, 50)})
    assert from_params(to_params(view)) == view


# ----------------------------------------------------------------------------- the two grounding rules


def test_the_papers_and_the_released_grounding_rules_differ_where_they_should():
    from dashboard.evidence.grounding import box_matches, box_matches_released

    gold = (0.0, 0.0, 10.0, 10.0)
    small_inside = (0.0, 0.0, 4.0, 4.0)  # covers 16 % of the gold, is 100 % inside it
    assert not box_matches(small_inside, gold) and box_matches_released(small_inside, gold)
    huge_around = (0.0, 0.0, 30.0, 30.0)  # covers all of the gold, but the gold is 11 % of it
    assert not box_matches(huge_around, gold) and box_matches_released(huge_around, gold)
    half = (0.0, 0.0, 10.0, 5.0)  # 50 % of the gold, all of it inside: both accept
    assert box_matches(half, gold) and box_matches_released(half, gold)
    apart = (20.0, 20.0, 30.0, 30.0)
    assert not box_matches(apart, gold) and not box_matches_released(apart, gold)
    assert not box_matches_released((0.0, 0.0, 0.0, 5.0), gold)  # an empty box matches nothing

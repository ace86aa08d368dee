"""scoring/slices.py: the weak-slice finder. The gap and its cluster-robust variance on a table worked
by hand; the vectorised scan against the one-slice test; a planted weakness found as one slice that
explains the slices containing or overlapping it; nothing found in most seeds without one; the
thresholds; pair mode."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.slices import find_weak_pair_slices, find_weak_slices, gap_test, question_fields
from scoring.stats import document_clusters
from slice_kit import synthetic

# doc A: slice y=0, slice y=1, rest y=1 | B: slice 0, rest 1 | C: rest 1, rest 0 | D: slice 1, rest 1
DOCS = ["A", "A", "A", "B", "B", "C", "C", "D", "D"]
IN_SLICE = [1, 1, 0, 1, 0, 0, 0, 1, 0]
Y = [0, 1, 1, 0, 1, 1, 0, 1, 1]


def test_gap_and_cluster_robust_variance_by_hand():
    # slice mean 2/4 = 0.5, rest mean 4/5 = 0.8: gap -0.3
    # u_g = sum_slice(y - 0.5)/4 - sum_rest(y - 0.8)/5 per document:
    #   A: 0/4 - 0.2/5 = -0.04   B: -0.5/4 - 0.2/5 = -0.165   C: 0 - (0.2 - 0.8)/5 = 0.12   D: 0.5/4 - 0.2/5 = 0.085
    sum_u2 = 0.04 ** 2 + 0.165 ** 2 + 0.12 ** 2 + 0.085 ** 2  # 0.05045
    var = 4 / 3 * 8 / 7 * sum_u2  # G/(G-1) * (N-1)/(N-2)
    t = gap_test(Y, DOCS, np.array(IN_SLICE, dtype=bool))
    assert t.gap == pytest.approx(-0.3)
    assert (t.mean_a, t.mean_b, t.n_a, t.n_b) == (pytest.approx(0.5), pytest.approx(0.8), 4, 5)
    assert t.se ** 2 == pytest.approx(var, rel=1e-12)
    assert t.se ** 2 == pytest.approx(0.0768761904761905, rel=1e-9)
    assert t.df == 2  # min(3 documents with slice questions, 4 with others) - 1
    # Student's t with 2 df has the closed form F(x) = 1/2 + x / (2 sqrt(2 + x^2))
    x = -0.3 / math.sqrt(var)
    assert t.p == pytest.approx(0.5 + x / (2 * math.sqrt(2 + x * x)), rel=1e-9)
    half = 4.302652729911275 * math.sqrt(var)  # t_{0.975, 2}
    assert (t.ci_low, t.ci_high) == (pytest.approx(-0.3 - half), pytest.approx(-0.3 + half))


def test_the_sandwich_of_the_regression_gives_the_same_variance():
    y = np.array(Y, dtype=float)
    s = np.array(IN_SLICE, dtype=float)
    X = np.column_stack([np.ones_like(s), s])
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ y
    e = y - X @ beta
    meat = np.zeros((2, 2))
    for d in set(DOCS):
        rows = [i for i, x in enumerate(DOCS) if x == d]
        score = X[rows].T @ e[rows]
        meat += np.outer(score, score)
    V = 4 / 3 * 8 / 7 * bread @ meat @ bread
    t = gap_test(Y, DOCS, s.astype(bool))
    assert beta[1] == pytest.approx(t.gap)
    assert V[1, 1] == pytest.approx(t.se ** 2, rel=1e-12)


def test_the_vectorised_scan_equals_the_one_slice_test():
    y, fields, docs, _ = synthetic(3, n=3_000, documents=150, planted=0.2)
    res = find_weak_slices(y, fields, docs, min_questions=30, min_documents=20)
    assert res.tested > 500
    rng = np.random.default_rng(0)
    for s in rng.choice(res.all_slices, size=40, replace=False):
        mask = np.ones(y.size, dtype=bool)
        for f, v in s.conditions:
            mask &= np.array([v in x if isinstance(x, tuple) else x == v for x in fields[f]])
        t = gap_test(y, docs, mask)
        assert (s.n, s.documents, s.df) == (int(mask.sum()), len(set(docs[mask])), t.df)
        assert s.gap == pytest.approx(t.gap, abs=1e-12)
        assert s.se == pytest.approx(t.se, rel=1e-9)
        assert s.p == pytest.approx(t.p, rel=1e-7, abs=1e-300)
        assert s.excess_failures == pytest.approx(-s.n * s.gap)


def _planted(seed: int):
    y, fields, docs, mask = synthetic(seed, n=20_000, documents=1_000, planted=0.3)
    return y, fields, docs, mask, find_weak_slices(y, fields, docs)


@pytest.mark.parametrize("seed", [0, 1])
def test_one_planted_weakness_is_one_slice_on_top(seed):
    y, fields, docs, mask, res = _planted(seed)
    top = res.weak[0]
    assert top.name == "reasoning_type=counting & evidence_source=chart"
    assert top.documents > 400 and top.ci_high < -0.2 and top.q < 1e-20
    # the slices that contain or overlap it are folded under it, not listed beside it
    assert len(top.explains) >= 30
    assert "reasoning_type=counting" in top.explains and "evidence_source=chart" in top.explains
    folded = {s.name: s.folded_under for s in res.folded}
    assert all(under in {w.name for w in res.weak} for under in folded.values())
    # whatever else is kept shares little with the planted weakness (chance findings elsewhere)
    for other in res.weak[1:]:
        m = np.ones(y.size, dtype=bool)
        for f, v in other.conditions:
            m &= np.array([v in x if isinstance(x, tuple) else x == v for x in fields[f]])
        assert (m & mask).sum() < 0.25 * m.sum()
    assert len(res.weak) <= 3


@pytest.mark.parametrize("seed", [0, 3])
def test_a_weakness_nested_in_a_broader_one_keeps_both(seed):
    """Counting questions weak everywhere, counting over charts weaker still: two findings, neither
    folded under the other (the narrower one is weaker than the rest of the broader one)."""
    y, fields, docs, mask = synthetic(seed, n=20_000, documents=1_000, planted=0.3)
    counting = np.array([r == "counting" for r in fields["reasoning_type"]])
    rng = np.random.default_rng(100 + seed)
    y = np.where(counting & (y == 1) & (rng.random(y.size) < 0.25), 0.0, y)
    res = find_weak_slices(y, fields, docs)
    names = [s.name for s in res.weak]
    assert names[:2] == ["reasoning_type=counting", "reasoning_type=counting & evidence_source=chart"]
    inner = res.weak[1]
    assert gap_test(y, docs, mask, counting & ~mask).p < 1e-10  # weaker than the rest of counting
    assert inner.ci_high < res.weak[0].ci_low  # and its gap to the rest of the run is larger
    assert len(res.weak[0].explains) >= 30 and len(inner.explains) >= 20


def test_no_weakness_finds_nothing_in_most_seeds():
    found = 0
    for seed in range(20):
        y, fields, docs, _ = synthetic(500 + seed, n=6_000, documents=300)
        res = find_weak_slices(y, fields, docs)
        found += bool(res.weak)
        if not res.weak:
            assert "not enough evidence" in res.summary()
    assert found <= 2  # each seed: P(any discovery) <= 0.05 under BH at q = 0.05


def test_by_is_stricter_than_bh():
    y, fields, docs, _, bh = _planted(0)
    by = find_weak_slices(y, fields, docs, method="by")
    assert by.tested == bh.tested
    assert by.significant <= bh.significant
    assert all(b.q >= a.q for a, b in zip(bh.all_slices, by.all_slices))


def test_thresholds_are_honoured():
    y, fields, docs, _ = synthetic(7, n=4_000, documents=200, planted=0.2)
    default = find_weak_slices(y, fields, docs)
    assert default.min_questions == 30  # max(30, 0.5 % of 4,000 = 20)
    assert all(s.n >= 30 and s.documents >= 20 for s in default.all_slices)
    strict = find_weak_slices(y, fields, docs, min_questions=200, min_documents=60)
    assert strict.min_questions == 200 and strict.min_documents == 60
    assert strict.all_slices and all(s.n >= 200 and s.documents >= 60 for s in strict.all_slices)
    assert strict.tested < default.tested
    big = synthetic(7, n=20_000, documents=1_000)
    assert find_weak_slices(big[0], big[1], big[2], max_conditions=1).min_questions == 100  # 0.5 % of 20,000
    # conjunctions of at most max_conditions conditions, on different fields
    assert max(len(s.conditions) for s in default.all_slices) == 3
    assert all(len({f for f, _ in s.conditions}) == len(s.conditions) for s in default.all_slices)
    assert max(len(s.conditions) for s in find_weak_slices(y, fields, docs, max_conditions=2).all_slices) == 2


def test_a_field_with_one_value_is_not_a_field_and_multi_valued_fields_count_each_value():
    y, fields, docs, _ = synthetic(8, n=3_000, documents=150)
    fields = dict(fields, reasoning_type=["unknown"] * len(y))
    res = find_weak_slices(y, fields, docs)
    assert "reasoning_type" in res.skipped_fields and "reasoning_type" not in res.fields
    chart = next(s for s in res.all_slices if s.conditions == (("evidence_source", "chart"),))
    assert chart.n == sum("chart" in s for s in fields["evidence_source"])


def test_same_set_under_a_longer_name_is_tested_once():
    y, fields, docs, _ = synthetic(9, n=3_000, documents=150)
    fields = dict(fields, shelf=["A" if d == "finance" else "B" for d in fields["domain"]])  # shelf A == finance
    names = {s.name for s in find_weak_slices(y, fields, docs).all_slices}
    assert "domain=finance" in names and "shelf=A" in names
    assert "domain=finance & shelf=A" not in names


def test_pair_mode_finds_where_the_new_run_got_worse():
    old, fields, docs, mask = synthetic(11, n=20_000, documents=1_000)
    rng = np.random.default_rng(11)
    new = old.copy()
    flip = mask & (old == 1) & (rng.random(old.size) < 0.5)  # the new checkpoint loses half its right answers there
    new[flip] = 0.0
    res = find_weak_pair_slices(new, old, fields, document_clusters([str(d) for d in docs]))
    assert res.mode == "pair" and res.unit == "document" and res.units == 1_000
    assert res.weak[0].name == "reasoning_type=counting & evidence_source=chart"
    assert res.weak[0].gap == pytest.approx((new - old)[mask].mean() - (new - old)[~mask].mean())
    same = find_weak_pair_slices(old, old, fields, docs)
    assert not same.weak and same.tested == res.tested


def test_question_fields_from_gold():
    from scoring.model import GoldQuestion

    def q(i, meta):
        return GoldQuestion(f"q{i}", "?", ("1",), "Int", "numeric_tolerance", "single_doc", meta, raw_format="Int")

    gold = [q(0, {"reasoning_type": "counting", "evidence_sources": ["Chart", "Text"]}), q(1, {"domain": "finance"})]
    f = question_fields(gold, extra={"tag": [None, ("hard",)]})
    assert f["reasoning_type"] == ["counting", "unknown"]
    assert f["evidence_source"] == [("Chart", "Text"), ("unknown",)]
    assert f["domain"] == ["unknown", "finance"] and f["answer_format"] == ["Int", "Int"]
    assert f["tag"] == [None, ("hard",)] and "page_category" not in f


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        find_weak_slices([1.0, math.nan], {"f": ["a", "b"]}, ["d1", "d2"])
    with pytest.raises(ValueError):
        find_weak_slices([1.0, 0.0], {"f": ["a"]}, ["d1", "d2"])
    with pytest.raises(ValueError):
        find_weak_slices([1.0, 0.0], {"f": ["a", "b"]}, ["d1", "d2"], method="holm")

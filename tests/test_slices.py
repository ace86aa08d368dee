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


# ----------------------------------------------------------------------------- the rest's documents


def test_a_slice_whose_rest_holds_one_document_is_not_tested():
    """The docstring's rule (MIN_SIDE_DOCUMENTS): every question but those of one document is in the
    slice -- the rest is one document, the t test would have no degree of freedom -- so it is neither
    tested nor counted among the slices tested (it used to be, with p = 1)."""
    rng = np.random.default_rng(3)
    docs = np.repeat(np.arange(40), 10)
    y = (rng.random(docs.size) < 0.6).astype(float)
    fields = {"side": ["most" if d != 0 else "one" for d in docs],  # the rest of "most" is document 0 alone
              "half": ["a" if d < 20 else "b" for d in docs],
              "two": ["many" if d > 1 else "pair" for d in docs]}  # the rest of "many": documents 0 and 1
    res = find_weak_slices(y, fields, docs, min_questions=5, min_documents=1, max_conditions=1)
    names = {s.name for s in res.all_slices}
    assert "side=most" not in names and "two=many" in names
    assert {"half=a", "half=b"} <= names
    assert res.tested == len(res.all_slices) == len(names)
    assert all(s.df >= 1 for s in res.all_slices)


# ----------------------------------------------------------------------------- found slices' intervals


def _fcr_design(seed: int, effect: float = 0.07, n: int = 1_600, documents: int = 160):
    """Questions in documents, two document-level and three question-level fields; the true chance
    of a right answer is 0.6 minus `effect` on reasoning0 and on domain1, plus a document shift of mean 0.
    Returns the scores, fields, documents and each question's true mean."""
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, n))
    fields = {k: [f"{k}{x}" for x in rng.integers(0, v, documents)[doc]] for k, v in {"domain": 4, "doc_type": 3}.items()}
    fields |= {k: [f"{k}{x}" for x in rng.integers(0, v, n)] for k, v in {"reasoning": 4, "format": 3, "difficulty": 3}.items()}
    mu = 0.6 - effect * (np.array(fields["reasoning"]) == "reasoning0") - effect * (np.array(fields["domain"]) == "domain1")
    p = np.clip(mu + rng.normal(0, 0.1, documents)[doc], 0.02, 0.98)
    return (rng.random(n) < p).astype(float), fields, doc, mu


def test_found_slices_intervals_cover_the_truth_at_the_nominal_rate_and_agree_with_the_decision():
    """Seeded simulation with a known truth (the true gap of a slice: the mean of the questions' true
    chances in it minus the rest's). Across the slices found (significant at q < 0.05), the share whose
    interval misses the truth -- the false-coverage rate, 0 for a simulation that finds nothing -- is at
    most 5 % for the adjusted intervals; the intervals as if named in advance miss far more often (the
    test can fail). Every slice found has its adjusted interval wholly below 0."""
    sims, found = 300, 0
    miss_adjusted, miss_named = [], []
    for seed in range(sims):
        y, fields, docs, mu = _fcr_design(seed)
        res = find_weak_slices(y, fields, docs, min_questions=30, min_documents=20, max_conditions=2)
        chosen = res.weak + res.folded
        a = b = 0
        for s in chosen:
            mask = np.ones(y.size, dtype=bool)
            for f, v in s.conditions:
                mask &= np.array(fields[f]) == v
            truth = mu[mask].mean() - mu[~mask].mean()
            assert s.adjusted and s.ci_high < 0 and s.q < 0.05  # the decision and the interval agree
            assert s.ci_low <= s.ci_low_named and s.ci_high_named <= s.ci_high  # adjusted: wider
            a += not s.ci_low <= truth <= s.ci_high
            b += not s.ci_low_named <= truth <= s.ci_high_named
        found += len(chosen)
        miss_adjusted.append(a / max(1, len(chosen)))
        miss_named.append(b / max(1, len(chosen)))
    assert found > 150  # enough slices found for the rates to mean something
    coverage_adjusted, coverage_named = 1 - np.mean(miss_adjusted), 1 - np.mean(miss_named)
    assert coverage_adjusted >= 0.95
    assert coverage_named < 0.92


def test_the_adjusted_level_is_r_q_over_m_and_named_slices_keep_theirs():
    y, fields, docs, _ = synthetic(0, n=6_000, documents=300, planted=0.3)
    res = find_weak_slices(y, fields, docs)
    r, m = res.significant, res.tested
    assert res.adjusted_tail == pytest.approx(r * 0.05 / m)
    top = res.weak[0]
    half = top.ci_high - top.gap
    from scipy import stats

    assert half == pytest.approx(stats.t.ppf(1 - r * 0.05 / m, top.df) * top.se)
    assert top.gap - top.ci_low == pytest.approx(half)
    by = find_weak_slices(y, fields, docs, method="by")
    assert by.adjusted_tail == pytest.approx(by.significant * 0.05 / (m * sum(1 / i for i in range(1, m + 1))))
    # a field named before looking: its one-condition slices keep the interval at 95 %
    named = find_weak_slices(y, fields, docs, named=("reasoning_type",))
    counting = next(s for s in named.weak + named.folded if s.conditions == (("reasoning_type", "counting"),))
    assert not counting.adjusted and (counting.ci_low, counting.ci_high) == (counting.ci_low_named, counting.ci_high_named)
    # slices not found keep the unadjusted interval
    assert all(not s.adjusted and s.ci_high == s.ci_high_named for s in res.all_slices if s.q >= 0.05)


# ----------------------------------------------------------------------------- bounded


def _many_fields(count: int, values: int, n: int = 6_000, documents: int = 300, seed: int = 1):
    rng = np.random.default_rng(seed)
    doc = np.sort(rng.integers(0, documents, n))
    labels = [f"v{v}" for v in range(values)]
    fields = {f"meta.key_{j:03d}": [labels[v] for v in rng.integers(0, values, n)] for j in range(count)}
    return (rng.random(n) < 0.6).astype(float), fields, doc


def test_the_candidate_space_is_capped_at_any_number_of_fields_and_says_so():
    y, fields, docs = _many_fields(60, 5)
    res = find_weak_slices(y, fields, docs, min_questions=30)
    assert len(res.fields) == 60 and len(res.conjunction_fields) == 16
    singles = sum(1 for s in res.all_slices if len(s.conditions) == 1)
    assert singles == 300  # every testable condition of every field
    assert res.tested - singles <= 20_000 and res.capped.startswith("the search stopped at the cap of 20,000 conjunctions")
    # conjunctions only of the fields that split the questions best
    assert {f for s in res.all_slices if len(s.conditions) > 1 for f, _ in s.conditions} <= set(res.conjunction_fields)
    text = res.fields_text()
    assert "conjunctions over the 16 fields that split the questions best (of 60; the cap is 16)" in text
    assert "the cap of 20,000 conjunctions" in text
    small = find_weak_slices(y, fields, docs, min_questions=30, max_fields=4, max_slices=50)
    assert len(small.conjunction_fields) == 4 and small.tested - 300 == 50
    # the ranking is by how evenly the field splits the questions (not by the outcome): a field with one
    # large value and four small ones ranks below the even ones
    skew = dict(fields, **{"meta.key_000": ["v0" if i % 10 else "v1" for i in range(y.size)]})
    ranked = find_weak_slices(y, skew, docs, min_questions=30).ranked_fields
    assert ranked[-1] == "meta.key_000"


def test_the_worker_leaves_done_to_the_waiting_process(monkeypatch):
    """The worker's progress travels on a queue apart from its result and can arrive after it, so
    "done" is said by the process that waited once the result is in, never sent by the worker
    (when it was, the page's last message was sometimes "folding ..." instead)."""
    from scoring import slice_worker
    from scoring.slices import prepare

    class Sent(list):
        def put(self, item):
            self.append(item)

    sent = Sent()
    monkeypatch.setattr(slice_worker, "_QUEUE", sent)
    y, fields, docs, _ = synthetic(0, n=2_000, documents=100, planted=0.3)
    slice_worker._search(7, prepare(y, fields, docs))
    assert sent and {job for job, _, _ in sent} == {7}
    assert all(fraction < 1.0 for _, fraction, _ in sent) and "done" not in [what for _, _, what in sent]


def test_the_search_runs_in_a_worker_and_a_search_out_of_memory_is_named():
    from scoring.slice_worker import SearchFailed, search_bounded

    y, fields, docs, _ = synthetic(0, n=6_000, documents=300, planted=0.3)
    said: list[str] = []
    res = search_bounded(y, fields, docs, progress=lambda f, what: said.append(what))
    here = find_weak_slices(y, fields, docs)
    assert [s.name for s in res.weak] == [s.name for s in here.weak] and res.tested == here.tested
    assert res.weak[0].ci_high == here.weak[0].ci_high
    assert said[0] == "reading the conditions" and said[-1] == "done" and said.count("done") == 1
    with pytest.raises(SearchFailed, match="needs more than 5 MB"):
        search_bounded(y, fields, docs, memory_mb=5)
    assert search_bounded(y, fields, docs).tested == here.tested  # the next search starts a new worker

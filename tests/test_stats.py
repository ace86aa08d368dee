"""scoring.stats against hand-computed values, the two ways of drawing a bootstrap (multinomial counts
and index draws) against the textbook bootstrap, and a coverage simulation of the bootstrap interval."""

import math
from itertools import product

import numpy as np
import pytest

from scoring import stats
from scoring.stats import mcnemar_exact, paired_bootstrap

# ----------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize("only_a, only_b, expected", [
    (0, 0, 1.0),                      # nothing discordant
    (1, 0, 1.0),                      # 2 * P(X <= 0 | n=1) = 2 * 1/2, capped at 1
    (0, 5, 2 / 32),                   # 2 * (1/2)^5
    (5, 0, 2 / 32),                   # symmetric
    (1, 9, 2 * (1 + 10) / 1024),      # 2 * (C(10,0) + C(10,1)) / 2^10 = 0.021484375
    (2, 8, 2 * (1 + 10 + 45) / 1024),  # 0.109375
    (3, 3, 1.0),
    (0, 10, 2 / 1024),
])
def test_mcnemar_exact_small_tables(only_a, only_b, expected):
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_matches_the_binomial_sum():
    for a, b in product(range(0, 13), repeat=2):
        n, k = a + b, min(a, b)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n if n else 0.5
        assert mcnemar_exact(a, b) == pytest.approx(min(1.0, 2 * tail), rel=1e-9), (a, b)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


# ----------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_reproducible_for_a_seed():
    rng = np.random.default_rng(7)
    a, b = rng.random(300), rng.random(300)
    first = paired_bootstrap(a, b, resamples=2000, seed=11)
    assert paired_bootstrap(a, b, resamples=2000, seed=11) == first
    assert paired_bootstrap(a, b, resamples=2000, seed=12) != first
    delta, low, high = first
    assert delta == pytest.approx(float(np.mean(a - b)))
    assert low < delta < high


def test_bootstrap_hand_checked_cases():
    assert paired_bootstrap([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)
    assert paired_bootstrap([1.0], [0.0]) == (1.0, 1.0, 1.0)
    assert all(math.isnan(v) for v in paired_bootstrap([], []))
    # two questions, differences 1 and 0: every resample mean is 0, 0.5 or 1
    delta, low, high = paired_bootstrap([1, 1], [0, 1], resamples=4000, seed=0)
    assert (delta, low, high) == (0.5, 0.0, 1.0)
    with pytest.raises(ValueError):
        paired_bootstrap([1, 0], [1])


def test_bootstrap_interval_narrows_with_more_questions():
    rng = np.random.default_rng(5)
    widths = []
    for n in (50, 800):
        a, b = (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.5).astype(float)
        _, low, high = paired_bootstrap(a, b, resamples=2000, seed=0)
        widths.append(high - low)
    assert widths[1] < widths[0] / 2


def test_bootstrap_95_interval_covers_the_true_difference():
    """200 simulated pairs of runs on 150 questions: per question a difficulty u, run A right with
    probability 0.9u, run B with 0.7u (correlated, as real runs are), plus a token-F1-like score for a
    third of them. The true mean difference is known; the 95 % interval must hold it in >= 90 % of runs."""
    rng = np.random.default_rng(2026)
    n, hits = 150, 0
    for k in range(200):
        u = rng.random(n)
        shared = rng.random(n)
        a = (shared < 0.9 * u).astype(float)
        b = (shared < 0.7 * u).astype(float) * (rng.random(n) < 0.95)
        if k % 3 == 0:  # continuous scores
            a, b = a * rng.uniform(0.5, 1.0, n), b * rng.uniform(0.5, 1.0, n)
            true = 0.9 * 0.5 * 0.75 - 0.7 * 0.5 * 0.95 * 0.75
        else:
            true = 0.9 * 0.5 - 0.7 * 0.5 * 0.95
        _, low, high = paired_bootstrap(a, b, resamples=2000, seed=k)
        hits += low <= true <= high
    assert hits >= 180, hits


def _exact_means(d: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The textbook bootstrap: n indices drawn per resample."""
    rng = np.random.default_rng(seed)
    return np.array([d[rng.integers(0, d.size, d.size)].mean() for _ in range(resamples)])


def _quantiles_in_sd(fast: np.ndarray, exact: np.ndarray) -> np.ndarray:
    q = [0.025, 0.5, 0.975]
    return np.abs(np.quantile(fast, q) - np.quantile(exact, q)) / exact.std()


def _question_means(d: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """What `paired_bootstrap` draws: every question its own unit."""
    return stats.cluster_bootstrap_means(d, np.ones(d.size), resamples, np.random.default_rng(seed))


def test_few_values_draw_counts_with_the_bootstrap_distribution():
    """Accuracy-like differences in {-1, 0, 1}: multinomial counts; mean and spread of the resample
    means are the bootstrap's (variance = population variance / n), quantiles agree with index draws."""
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, 0.0, 1.0], 400, p=[0.1, 0.7, 0.2])
    fast = _question_means(d, 20_000, 0)
    assert fast.mean() == pytest.approx(d.mean(), abs=3 * d.std() / math.sqrt(400 * 20_000))
    assert fast.std() == pytest.approx(d.std() / math.sqrt(400), rel=0.03)
    assert np.all(_quantiles_in_sd(fast, _exact_means(d, 20_000, 1)) < 0.08)
    assert set(np.round(fast * 400)) <= set(range(-400, 401))  # every resample mean is k / n


def test_many_values_are_the_textbook_bootstrap_draw_for_draw():
    """Token-F1-like differences (hundreds of distinct values): n indices drawn per resample, in the
    generator's order -- the very numbers of the textbook loop with the same seed, and its interval."""
    rng = np.random.default_rng(4)
    n = 1200
    d = (rng.random(n) < 0.4) * rng.random(n) ** 3 - (rng.random(n) < 0.2) * rng.random(n)
    assert stats.MULTINOMIAL_COST * np.unique(d).size > n  # counts would cost more
    drawn = _question_means(d, 3_000, 0)
    textbook = np.random.default_rng(0).integers(0, n, size=(3_000, n), dtype=np.int64)
    assert drawn == pytest.approx(d[textbook].mean(axis=1), abs=1e-12)
    delta, low, high = paired_bootstrap(d, np.zeros(n), resamples=3_000, seed=0)
    assert (low, high) == pytest.approx(tuple(np.quantile(drawn, [0.025, 0.975])))
    assert paired_bootstrap(d, np.zeros(n), seed=5) == paired_bootstrap(d, np.zeros(n), seed=5)
    assert paired_bootstrap(d, np.zeros(n), seed=5) != paired_bootstrap(d, np.zeros(n), seed=6)


def test_large_bootstrap_95_interval_covers_the_true_difference():
    """The coverage simulation again on 3,000 questions (token F1: index draws): >= 90 % of 100
    intervals hold the true difference."""
    rng = np.random.default_rng(77)
    n, hits = 3000, 0
    true = 0.9 * 0.5 * 0.75 - 0.7 * 0.5 * 0.95 * 0.75
    for k in range(100):
        u, shared = rng.random(n), rng.random(n)
        a = (shared < 0.9 * u) * rng.uniform(0.5, 1.0, n)
        b = (shared < 0.7 * u) * (rng.random(n) < 0.95) * rng.uniform(0.5, 1.0, n)
        _, low, high = paired_bootstrap(a, b, resamples=1000, seed=k)
        hits += low <= true <= high
    assert hits >= 90, hits


# ----------------------------------------------------------------------------- edges: NaN, p = 0, too few documents


@pytest.mark.parametrize("documents", [10, 40])
def test_a_nan_score_is_refused_and_named_never_a_p(documents):
    # one NaN among the paired scores used to come out as p = 0.0 "exact" (10 documents) or 1e-4 (40)
    a = np.ones(documents)
    b = np.zeros(documents)
    a[3] = np.nan
    r = stats.paired_by_document(a, b, np.arange(documents))
    assert r.p is None and r.refused and not r.significant
    assert f"1 of {documents} paired questions have a NaN score (1 in the first run, 0 in the second)" in r.refused
    assert r.refused in r.method and math.isnan(r.delta) and math.isnan(r.low)
    assert (r.units, r.questions) == (documents, documents)
    b[5] = np.nan  # both runs: counted once per question, named per run
    assert "2 of" in stats.paired_by_document(a, b, np.arange(documents)).refused
    rows = stats.paired_by_document_rows(np.vstack([a, np.ones(documents)]), np.vstack([b, np.zeros(documents)]),
                                         np.arange(documents))
    assert rows[0].p is None and rows[1].p == pytest.approx(2 / 2 ** documents) and rows[1].refused == ""


def test_the_sign_flip_test_raises_on_a_nan_sum():
    with pytest.raises(ValueError, match="1 of 3 document sums are not finite"):
        stats.sign_flip_p([1.0, math.nan, -2.0])


def test_no_p_is_ever_zero():
    # 3,000 documents all one way: 2/2^3000 underflows; the exact sum, McNemar and the normal tail gave 0.0
    p, exact = stats.sign_flip_p([1] * 3000)
    assert exact and p > 0
    assert stats.mcnemar_exact(0, 3000) > 0
    # fractional sums all one way: no random sign vector reaches |T| (chance 2/2^3000): (1 + 0) / (1 + R)
    p, exact = stats.sign_flip_p(np.random.default_rng(0).normal(1, 0.1, 3000), resamples=999)
    assert not exact and p == 1 / 1000
    assert stats.sign_flip_p([1] * 60)[0] == pytest.approx(2 / 2 ** 60, rel=1e-12)  # as before where nothing underflows


def test_smallest_p_of_n_documents():
    assert stats.smallest_p(5) == 0.0625 == stats.sign_flip_p([1] * 5)[0]
    assert stats.smallest_p(6) == 0.03125
    assert stats.smallest_p(1) == stats.smallest_p(0) == 1.0
    assert stats.smallest_p(40, resamples=9_999) == pytest.approx(1e-4)


def test_twenty_documents_are_enough_and_nineteen_too_few():
    rng = np.random.default_rng(3)
    for documents, too_few in ((20, False), (19, True), (21, False)):
        docs = np.repeat(np.arange(documents), 3)
        a, b = rng.random(docs.size), rng.random(docs.size)
        r = stats.paired_by_document(a, b, docs, resamples=500)
        assert r.too_few is too_few and r.units == documents, documents
        assert math.isnan(r.low) is too_few and math.isnan(r.high) is too_few
        assert r.boot_low <= r.delta <= r.boot_high  # computed either way, for those who ask

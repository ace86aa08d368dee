"""The statistics' shortcuts give scipy's own floats (scoring/stats.py): McNemar's exact p without
binomtest's binary search (`_binomial_half_p`), and the exact sign-flip test's binomial kernels
remembered per document count (`_half_binomial_pmf`). Equal means ==, not close: the gate's
compare.json and the golden files hold these p as written."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from scoring import stats as S


def test_mcnemar_p_is_binomtests_float_for_every_count_up_to_60():
    for n in range(1, 61):
        for k in range(0, n // 2 + 1):
            assert S._binomial_half_p(k, n) == st.binomtest(k, n, 0.5).pvalue, (k, n)


@pytest.mark.parametrize("seed", [0, 1])
def test_mcnemar_p_is_binomtests_float_for_sampled_large_counts(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(61, 1_000_000))
        # the tails that matter (a handful of discordant questions), the middle, and just below the mode
        for k in {int(rng.integers(0, 30)), int(rng.integers(0, n // 2 + 1)), n // 2 - int(rng.integers(0, 3)), (n - 1) // 2}:
            assert S._binomial_half_p(k, n) == st.binomtest(k, n, 0.5).pvalue, (k, n)


def test_mcnemar_exact_keeps_its_order_and_edges():
    assert S.mcnemar_exact(0, 0) == 1.0
    assert S.mcnemar_exact(7, 7) == 1.0
    assert S.mcnemar_exact(3, 11) == S.mcnemar_exact(11, 3) == st.binomtest(3, 14, 0.5).pvalue
    assert S._binomial_half_p(9, 12) == st.binomtest(9, 12, 0.5).pvalue  # above the mode: binomtest itself


def test_the_sign_flip_kernel_is_scipys_pmf_and_cannot_be_changed():
    for c in (1, 2, 5, 40, 333):
        kernel = S._half_binomial_pmf(c)
        assert np.array_equal(kernel, st.binom.pmf(np.arange(c + 1), c, 0.5))
        with pytest.raises(ValueError):
            kernel[0] = 1.0
    # the exact test over documents with sums of several sizes is the same float as with the kernels made afresh
    sums = np.array([1, -1, 2, 1, 1, 3, -2, 1, 1, -1, 2, 1] * 7, dtype=float)
    before = S.sign_flip_p(sums)
    S._half_binomial_pmf.cache_clear()
    assert S.sign_flip_p(sums) == before

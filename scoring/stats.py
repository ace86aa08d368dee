"""Is a difference between two runs real? Paired statistics over the questions both runs answered.
Pure: numpy and scipy only (no pandas, no streamlit).

    mcnemar_exact(only_a, only_b)      two-sided exact McNemar p on the discordant Accuracy counts
    paired_bootstrap(a, b)             mean of a - b with a percentile interval from resampling questions
    paired_bootstrap_rows(A, B)        the same for each row of two k x n arrays (k metrics)
    holm(pvalues)                      Holm-adjusted p-values (family-wise error), in the input order
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import stats as _stats

BATCH = 1_000  # resamples drawn at once: bounds memory to BATCH x questions floats


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar test: under "no difference", each of the n = only_a + only_b
    discordant questions is won by A or B with probability 1/2, so the p-value is the two-sided
    binomial test of min(only_a, only_b) successes in n trials (scipy.stats.binomtest).
    1.0 when there is no discordant question."""
    only_a, only_b = int(only_a), int(only_b)
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_a} and {only_b}")
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(min(1.0, _stats.binomtest(min(only_a, only_b), n, 0.5).pvalue))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """(delta, low, high): delta = mean(a - b) over paired questions (a[i] and b[i] are the two runs'
    scores on question i), and the percentile interval of that mean over `resamples` resamples of the
    questions with replacement (scipy.stats.bootstrap, method "percentile"). The same seed gives the
    same interval. No question: (nan, nan, nan); all differences equal: (d, d, d)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be paired 1-d sequences, got shapes {x.shape} and {y.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    d = x - y
    if d.size == 0:
        return (math.nan, math.nan, math.nan)
    delta = float(d.mean())
    if d.size == 1 or bool(np.all(d == d[0])):
        return (delta, delta, delta)  # every resample has the same mean
    res = _stats.bootstrap((d,), np.mean, n_resamples=int(resamples), batch=BATCH, vectorized=True,
                           confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    # the percentile interval of a mean always holds the sample mean up to float rounding
    return (delta, min(low, delta), max(high, delta))


def paired_bootstrap_rows(a_rows: Sequence[Sequence[float]], b_rows: Sequence[Sequence[float]], *, resamples: int = 10_000,
                          seed: int = 0, confidence: float = 0.95) -> list[tuple[float, float, float]]:
    """`paired_bootstrap` of each row of two k x n arrays (k metrics over the same n questions), with
    the same seed for every row. One scipy call per row: resampling all rows together along the last
    axis was measured slower (bench/bench_compare.py)."""
    x = np.atleast_2d(np.asarray(a_rows, dtype=float))
    y = np.atleast_2d(np.asarray(b_rows, dtype=float))
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"a_rows and b_rows must have the same k x n shape, got {x.shape} and {y.shape}")
    return [paired_bootstrap(x[i], y[i], resamples=resamples, seed=seed, confidence=confidence) for i in range(x.shape[0])]


def holm(pvalues: Iterable[float]) -> list[float]:
    """Holm's step-down adjustment: sort the m p-values ascending, multiply the k-th smallest
    (k = 1..m) by m - k + 1, carry the running maximum forward, cap at 1, and return them in the input
    order. NaN entries stay NaN and do not count towards m."""
    p = [float(v) for v in pvalues]
    order = sorted((i for i, v in enumerate(p) if not math.isnan(v)), key=lambda i: p[i])
    m = len(order)
    out = [math.nan] * len(p)
    running = 0.0
    for k, i in enumerate(order):
        if not 0.0 <= p[i] <= 1.0:
            raise ValueError(f"p-values must be in [0, 1], got {p[i]}")
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out

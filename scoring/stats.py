"""Is a difference between two runs real? Paired statistics over the questions both runs answered.
Pure: numpy and scipy only (no pandas, no streamlit).

    mcnemar_exact(only_a, only_b)      two-sided exact McNemar p on the discordant Accuracy counts
    paired_bootstrap(a, b)             mean of a - b with a percentile interval from resampling questions
    bootstrap_means(d, B, rng)         the B resample means behind it (exact draws; moment-matched for large n on request)
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


EXACT_LIMIT = 200  # up to this many values off the most frequent one, resample means are drawn exactly
MAX_SKEW, MAX_KURTOSIS = 0.1, 0.05  # of the resample mean: beyond, the expansion is not trusted (exact draws)
FEW_VALUES = 4  # differences with at most this many distinct values (Accuracy: -1, 0, 1) are drawn as counts


def _check(x: np.ndarray, y: np.ndarray, confidence: float) -> None:
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be paired 1-d sequences, got shapes {x.shape} and {y.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def bootstrap_means(d: np.ndarray, resamples: int, rng: np.random.Generator, *, approximate: bool = False) -> np.ndarray:
    """`resamples` means of n = len(d) values drawn from d with replacement (the bootstrap
    distribution of the mean), drawn the cheapest way that keeps it:

    - few distinct values (<= FEW_VALUES, e.g. Accuracy differences in {-1, 0, 1}): a resample is
      fully described by how often each distinct value is drawn, so the counts are drawn from the
      multinomial(n, value frequencies) -- the same distribution as drawing n indices, in O(values)
      per resample instead of O(n);
    - at most EXACT_LIMIT values differ from the most frequent one v0 (every slice of up to
      EXACT_LIMIT questions, and larger ones where the runs mostly agree; and any slice whose
      resample mean is far from normal, see below): how many of the n draws
      fall off v0 is binomial(n, n1/n), and those are drawn uniformly among the n1 other values --
      exactly the bootstrap, in O(n1) per resample instead of O(n);
    - only with `approximate=True` (the dashboard's per-slice tables; `paired_bootstrap` draws
      exactly unless asked), more than EXACT_LIMIT values off v0 (token F1, ANLS on large slices): drawing n indices per
      resample costs B x n (10,000 x 20,000 = 2e8 per slice and metric, tens of seconds). The
      bootstrap mean is then a sum of n i.i.d. draws from the sample, with more than 200 of them off
      v0 on average, whose quantiles the Cornish-Fisher expansion gives from the sample's mean,
      variance, skewness and excess kurtosis (population moments of d, as the bootstrap uses) with
      an error O(n1^-3/2) in standard-deviation units. Checked against exact draws (200,000 each) on
      skewed token-F1-like differences with only 80-90 values off v0: the 2.5 % and 97.5 % points
      agree within 0.02 SD, below the Monte Carlo error of a 2.5 % percentile of 10,000 resamples
      (about 0.03 SD); tests/test_stats.py checks it. So each resample mean is a standard normal
      draw passed through that expansion: same seed, same draws; O(B) per slice. Only when the
      resample mean is near-normal by its own moments (|skewness| <= MAX_SKEW, |excess kurtosis| <=
      MAX_KURTOSIS): a few large differences among many small ones make the bootstrap distribution
      lumpy, with a high kurtosis, and then the n indices are drawn after all (exact, O(n)).
    """
    n = d.size
    B = int(resamples)
    values, counts = np.unique(d, return_counts=True)
    if values.size <= FEW_VALUES:
        draws = rng.multinomial(n, counts / n, size=B)
        return draws @ values / n
    v0 = values[int(np.argmax(counts))]
    other = d[d != v0]
    n1 = other.size
    mean = float(d.mean())
    c = d - mean
    c2 = c * c
    var = float(c2.mean())
    sd = math.sqrt(var)
    skew = float(np.dot(c2, c)) / n / sd ** 3 / math.sqrt(n)  # of the mean of n draws
    kurt = (float(np.dot(c2, c2)) / n / var ** 2 - 3.0) / n
    if not approximate or n1 <= EXACT_LIMIT or abs(skew) > MAX_SKEW or abs(kurt) > MAX_KURTOSIS:
        out = np.empty(B)
        step = max(1, min(BATCH, 2_000_000 // max(1, n1)))
        for start in range(0, B, step):
            k = min(step, B - start)
            off = rng.binomial(n, n1 / n, size=k)  # draws that fall off v0, per resample
            picked = other[rng.integers(0, n1, size=int(off.sum()), dtype=np.int32)]
            sums = np.zeros(k)
            some = off > 0  # segment sums; a resample with no draw off v0 sums to 0
            if some.any():
                sums[some] = np.add.reduceat(picked, (np.cumsum(off) - off)[some])
            out[start:start + k] = (v0 * (n - off) + sums) / n
        return out
    z = rng.standard_normal(B)
    z2 = z * z
    w = z * (1 + (z2 - 3) * kurt / 24 - (2 * z2 - 5) * skew * skew / 36) + (z2 - 1) * skew / 6
    return mean + sd / math.sqrt(n) * w


def paired_bootstrap(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, resamples: int = 10_000,
                     seed: int = 0, confidence: float = 0.95, approximate: bool = False) -> tuple[float, float, float]:
    """(delta, low, high): delta = mean(a - b) over paired questions (a[i] and b[i] are the two runs'
    scores on question i), and the percentile interval of that mean over `resamples` resamples of the
    questions with replacement (drawn by `bootstrap_means`; linear-interpolated percentiles, as
    scipy.stats.bootstrap's "percentile" method). The same seed gives the same interval. No question:
    (nan, nan, nan); all differences equal: (d, d, d). Every resample is drawn from the questions
    (exactly, by counts where that is the same distribution); `approximate=True` lets a large slice
    with continuous differences use the moment-matched draw of `bootstrap_means` instead."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    _check(x, y, confidence)
    d = x - y
    if d.size == 0:
        return (math.nan, math.nan, math.nan)
    delta = float(d.mean())
    if d.size == 1 or bool(np.all(d == d[0])):
        return (delta, delta, delta)  # every resample has the same mean
    means = bootstrap_means(d, resamples, np.random.default_rng(seed), approximate=approximate)
    alpha = (1 - confidence) / 2
    low, high = (float(v) for v in np.quantile(means, [alpha, 1 - alpha]))
    # the percentile interval of a mean always holds the sample mean up to float rounding
    return (delta, min(low, delta), max(high, delta))


def paired_bootstrap_rows(a_rows: Sequence[Sequence[float]] | np.ndarray, b_rows: Sequence[Sequence[float]] | np.ndarray,
                          *, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, approximate: bool = False
                          ) -> list[tuple[float, float, float]]:
    """`paired_bootstrap` of each row of two k x n arrays (k metrics over the same n questions), with
    the same seed for every row (so each row equals its single call)."""
    x = np.atleast_2d(np.asarray(a_rows, dtype=float))
    y = np.atleast_2d(np.asarray(b_rows, dtype=float))
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"a_rows and b_rows must have the same k x n shape, got {x.shape} and {y.shape}")
    return [paired_bootstrap(x[i], y[i], resamples=resamples, seed=seed, confidence=confidence, approximate=approximate)
            for i in range(x.shape[0])]


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

"""Is a difference between two runs real? Paired statistics over the questions both runs answered.
Pure: numpy and scipy only (no pandas, no streamlit).

    mcnemar_exact(only_a, only_b)      two-sided exact McNemar p on the discordant Accuracy counts
    paired_bootstrap(a, b)             mean of a - b with a percentile interval from resampling questions

Documents as the unit (questions come in documents: a model that cannot read one scan misses all its
questions together, so question-level resampling calls a handful of documents "significant"):

    document_clusters(document_ids)    one cluster code per question (its first document), the unit and its count
    paired_by_document(a, b, clusters) delta, document-bootstrap interval, sign-flip p by document, unit,
                                       units, and McNemar's question-level p kept as secondary (`Paired`)
    paired_by_document_rows(A, B, c)   the same for each row of two k x n arrays (k metrics)
    cluster_bootstrap_means(...)       the resample means behind every interval here
    cluster_robust_se(d, clusters)     the CR1 standard error of a mean with documents as clusters
    detectable_gap(d, clusters)        the smallest gap detectable at 80 % power and the given confidence
    sign_flip_p(sums)                  the document-level test behind `paired_by_document`'s p
    sign_flip_tail(T, sum S^2, ...)    its normal-tail approximation, for the checkpoint trends' many tests at once
    smallest_p(units)                  the smallest p that test can give on this many documents

Plain ways of drawing only (bench/bench_stats.py measures them against the targets): an interval is
the percentile interval of the bootstrap -- units (documents, or questions) drawn with replacement, by
index, or as multinomial counts of the distinct units where that is the same distribution and
cheaper; a p is the sign-flip test -- exact when the document sums are integers (0/1 Accuracy: by
convolution) or few (every sign vector), Monte Carlo sign vectors otherwise. No comparison here takes
a moment expansion or a normal tail (`sign_flip_tail` is the checkpoint trends' screen, refined exactly
where it could decide).

Edges: a NaN score never yields a p (`paired_by_document` refuses the comparison and says why in
`Paired.refused`; `sign_flip_p` raises), and no p is ever 0: an exact p is at least the smallest the
test can give (2/2^k for k documents that differ, or the smallest positive float where that
underflows), a Monte Carlo p at least 1/(resamples + 1).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import deferred
from .registry import MIN_DOCUMENTS  # fewer units than this: "too few documents to tell" (no interval is shown)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar test: under "no difference", each of the n = only_a + only_b
    discordant questions is won by A or B with probability 1/2, so the p-value is the two-sided
    binomial test of min(only_a, only_b) successes in n trials (scipy.stats.binomtest).
    1.0 when there is no discordant question."""
    return _mcnemar(int(only_a), int(only_b))


@functools.lru_cache(maxsize=4096)
def _mcnemar(only_a: int, only_b: int) -> float:
    """`mcnemar_exact` of two ints, remembered: Compare asks it of the same counts twice per slice (the
    Accuracy result's question-level p and the flip table's), and scipy's binomtest takes milliseconds."""
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_a} and {only_b}")
    n = only_a + only_b
    if n == 0:
        return 1.0
    return _floored(float(_binomial_half_p(min(only_a, only_b), n)), n)


SYMMETRIC_UP_TO = 2_000_000  # discordant questions up to which `_binomial_half_p` takes binomtest's tails directly


def _binomial_half_p(k: int, n: int) -> float:
    """scipy.stats.binomtest(k, n, 0.5).pvalue for k <= n / 2, the same float, without its search.

    binomtest's two-sided p is P(X <= k) + P(X >= y), y the first count above the mode whose pmf is at
    most pmf(k) * (1 + 1e-7), found by a binary search of about log2(n) pmf calls (milliseconds: most of
    a Compare's flip table). At p = 1/2 the pmf is symmetric, so y = n - k: pmf(n - k) = pmf(k), while
    pmf(n - k - 1) / pmf(k) = (n - k) / (k + 1) is at least 1 + 1 / (k + 1) -- far above the tolerance
    while k stays below 10^6 (n <= SYMMETRIC_UP_TO; above, binomtest itself). The two tails are then
    binomtest's own calls (`binom.cdf(k)` + `binom.sf(n - k - 1)`); tests/test_stats_fast_paths.py
    checks the floats equal binomtest's for every k of every n up to 60 and for sampled larger n."""
    st = deferred.stats()
    if 2 * k == n:
        return 1.0
    if n > SYMMETRIC_UP_TO or 2 * k > n:
        return float(st.binomtest(k, n, 0.5).pvalue)
    return min(1.0, float(st.binom.cdf(k, n, 0.5) + st.binom.sf(n - k - 1, n, 0.5)))


@functools.lru_cache(maxsize=1024)
def _half_binomial_pmf(c: int) -> np.ndarray:
    """binom.pmf(0..c, c, 1/2) (read-only), remembered: the exact sign-flip test asks it of the same few
    document counts for every slice of every pair, and each scipy call costs a fraction of a millisecond
    however short the array."""
    pmf = deferred.stats().binom.pmf(np.arange(c + 1), c, 0.5)
    pmf.flags.writeable = False
    return pmf


def smallest_p(units: int, *, resamples: int | None = None) -> float:
    """The smallest two-sided p the sign-flip test (`sign_flip_p`) can give on `units` documents:
    2/2^units, reached only when every document moved the same way (with one question per
    document, McNemar's exact test, the same). With `resamples` random sign vectors (the Monte
    Carlo test) it is never below 1/(resamples + 1) either. 1.0 for fewer than 2 documents.

    5 documents: 2/32 = 0.0625 -- no drop, however large, reaches p < 0.05 on 5 documents."""
    units = int(units)
    exact = 1.0 if units < 2 else math.ldexp(1.0, 1 - units)
    return max(exact, 1.0 / (int(resamples) + 1)) if resamples else exact


def _floored(p: float, k: int) -> float:
    """p never below what k documents (or discordant questions) that differ can give, nor 0: the
    exact tail sums underflow to 0 where the true p is below ~1e-308, and the normal tail
    approximation can reach 0 first. Raising a p is conservative: it stays a valid p."""
    return max(p, smallest_p(k), math.ulp(0.0))


def _check(x: np.ndarray, y: np.ndarray, confidence: float) -> None:
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be paired 1-d sequences, got shapes {x.shape} and {y.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def paired_bootstrap(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, resamples: int = 10_000,
                     seed: int = 0, confidence: float = 0.95) -> tuple[float, float, float]:
    """(delta, low, high): delta = mean(a - b) over paired questions (a[i] and b[i] are the two runs'
    scores on question i), and the percentile interval of that mean over `resamples` resamples of the
    questions with replacement (`cluster_bootstrap_means` with every question its own unit;
    linear-interpolated percentiles, as scipy.stats.bootstrap's "percentile" method). The same seed
    gives the same interval. No question: (nan, nan, nan); all differences equal: (d, d, d)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    _check(x, y, confidence)
    d = x - y
    if d.size == 0:
        return (math.nan, math.nan, math.nan)
    delta = float(d.mean())
    if d.size == 1 or bool(np.all(d == d[0])):
        return (delta, delta, delta)  # every resample has the same mean
    low, high = _percentiles(cluster_bootstrap_means(d, np.ones(d.size), resamples, np.random.default_rng(seed)),
                             confidence, delta)
    return (delta, low, high)


def _percentiles(means: np.ndarray, confidence: float, delta: float) -> tuple[float, float]:
    """The percentile interval of resample means at `confidence`; it always holds the sample's own mean
    (up to float rounding)."""
    alpha = (1 - confidence) / 2
    low, high = (float(v) for v in np.quantile(means, [alpha, 1 - alpha]))
    return min(low, delta), max(high, delta)


# ----------------------------------------------------------------------------- documents as the unit

POWER = 0.80  # the power `detectable_gap` is computed for
DOCUMENT, QUESTION = "document", "question"
EXACT_FLIPS = 16  # at most this many documents with a non-zero sum: every sign vector is enumerated
EXACT_SUM_LIMIT = 200_000  # integer document sums whose absolute total is at most this: the sign-flip p is exact
EXACT_LIMIT = 200  # the checkpoint trends refine their normal-tail p exactly up to this many documents moved
MULTINOMIAL_COST = 25  # a multinomial count costs about as much as 25 index draws: counts when cheaper
DRAWS_PER_BATCH = 2_000_000  # random numbers drawn at once by the sign-flip test (bounds memory)
SIGN_PIECE = 24_000  # of which at most this many are looked up at once (the buffers stay under 256 KB)
# cluster indices drawn at once by the index bootstrap (at most 256 KB of them): the draws and gathers
# stay in the CPU's cache, and a batch's arrays stay near the app's fixed malloc threshold
# (dashboard/core/predictions.py: 256 KB), above which each is a fresh mapping, faulted in page by page:
# 2,000 resamples of 2,500 documents took 97 ms at 2**18 under those thresholds, 21 ms at 2**15 (the
# gather also goes into one buffer per call). The numbers are the same at any size: Generator.integers
# gives one stream however it is split.
BOOTSTRAP_DRAWS = 1 << 15
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(float)  # 256 x 8, high bit first


class Clusters(NamedTuple):
    """Per-question cluster codes 0..units-1 (in order of first appearance), the unit they stand for
    ("document", or "question" when no question names a document) and how many units there are."""
    codes: np.ndarray
    unit: str
    units: int


def document_clusters(document_ids: Sequence[Sequence[str] | str | None]) -> Clusters:
    """The cluster of each question, from the documents its gold names (`GoldQuestion.document_ids`,
    whether or not the PDF is present). The rule:

    - a question's cluster is the FIRST document its gold names (a question over several documents
      is put with its first one, so every question is in exactly one cluster and a document's
      questions stay together);
    - a question that names no document is its own cluster (one unit of its own);
    - only when NO question names a document does the unit become "question" (every question its own
      cluster), and the result says so in `unit`.

    A plain string is taken as one document id; None or an empty list as no document."""
    keys: list[object] = []
    named = False
    for i, ids in enumerate(document_ids):
        first = ids if isinstance(ids, str) else (next(iter(ids), None) if ids is not None else None)
        if first is None or first == "":
            keys.append(("question", i))  # its own cluster: a key no document id can equal
        else:
            keys.append(("document", str(first)))
            named = True
    codes_of: dict[object, int] = {}
    codes = np.fromiter((codes_of.setdefault(k, len(codes_of)) for k in keys), dtype=np.int64, count=len(keys))
    return Clusters(codes, DOCUMENT if named else QUESTION, len(codes_of))


def _codes(clusters: Clusters | Sequence[object] | np.ndarray, n: int) -> tuple[np.ndarray, str, int]:
    """(codes 0..G-1, unit, G) from a `Clusters` or from any per-question labels (unit "document")."""
    if isinstance(clusters, Clusters):
        codes, unit = np.asarray(clusters.codes, dtype=np.int64), clusters.unit
    else:
        labels = np.asarray(clusters)
        if labels.ndim != 1:
            raise ValueError(f"clusters must be one label per question, got shape {labels.shape}")
        _, codes = np.unique(labels, return_inverse=True)
        codes, unit = codes.astype(np.int64).ravel(), DOCUMENT
    if codes.shape != (n,):
        raise ValueError(f"clusters must hold one code per question: {codes.shape[0]} codes for {n} questions")
    # renumber to the codes present (a slice of a benchmark holds only some of its documents)
    _, codes = np.unique(codes, return_inverse=True)
    codes = codes.ravel()
    return codes, unit, int(codes.max()) + 1 if n else 0


def _cluster_sums(d: np.ndarray, codes: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(sum of d, number of questions) per cluster."""
    return np.bincount(codes, weights=d, minlength=g), np.bincount(codes, minlength=g).astype(float)


def cluster_robust_se(d: Sequence[float] | np.ndarray, clusters: Clusters | Sequence[object] | np.ndarray) -> float:
    """The cluster-robust (CR1) standard error of the mean of d with one cluster per document:

        SE^2 = G / (G - 1) * sum_g (sum_{i in g} (d_i - dbar))^2 / N^2

    (N questions in G clusters; the sandwich variance of a mean, with the small-sample factor
    G/(G-1)). With one question per cluster it is the usual sd/sqrt(N) (population sd, times
    sqrt(N/(N-1))). nan with fewer than 2 clusters."""
    x = np.asarray(d, dtype=float)
    codes, _, g = _codes(clusters, x.size)
    return _cr1(x, codes, g)


def _cr1(x: np.ndarray, codes: np.ndarray, g: int) -> float:
    """`cluster_robust_se` of x over clusters already numbered 0..g-1."""
    if g < 2:
        return math.nan
    sums, sizes = _cluster_sums(x, codes, g)
    dbar = float(x.mean())
    resid = sums - sizes * dbar
    return math.sqrt(g / (g - 1) * float(np.dot(resid, resid)) / x.size ** 2)


def detectable_gap(d: Sequence[float] | np.ndarray, clusters: Clusters | Sequence[object] | np.ndarray, *,
                   confidence: float = 0.95, power: float = POWER) -> float:
    """The smallest true difference (same scale as d) that a two-sided test at `confidence` would
    find with probability `power` on this many documents and this spread:

        (t_{1 - alpha/2, G-1} + t_{power, G-1}) * SE

    (the usual sample-size formula with Student's t on G - 1 degrees of freedom), where SE is the
    larger of the CR1 standard error (`cluster_robust_se`) and the question-level one (sd/sqrt(N),
    ddof 1): a slice whose documents happen to agree with each other shows no spread between
    documents to judge from, and a design effect below 1 is not relied on. inf with fewer than 2
    clusters; 0 only when every difference is equal (the runs agree on every question)."""
    if not 0 < confidence < 1 or not 0 < power < 1:
        raise ValueError(f"confidence and power must be in (0, 1), got {confidence} and {power}")
    x = np.asarray(d, dtype=float)
    codes, _, g = _codes(clusters, x.size)
    return _gap(x, codes, g, confidence, power)


def _gap(x: np.ndarray, codes: np.ndarray, g: int, confidence: float, power: float) -> float:
    """`detectable_gap` of x over clusters already numbered 0..g-1."""
    se = _cr1(x, codes, g)
    if math.isnan(se):
        return math.inf
    se = max(se, float(x.std(ddof=1)) / math.sqrt(x.size))
    return float(_t_sum(confidence, power, g - 1) * se)


@functools.lru_cache(maxsize=4096)
def _t_sum(confidence: float, power: float, df: int) -> float:
    """t_{1 - alpha/2, df} + t_{power, df} (`detectable_gap`; the same for every metric of a slice)."""
    return deferred.stats().t.ppf(1 - (1 - confidence) / 2, df) + deferred.stats().t.ppf(power, df)


def _multinomial_plan(sums: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(distinct (sum, size) pairs as a 2-column array, their frequencies) when drawing counts over them
    is cheaper than drawing G indices (`cluster_bootstrap_means`), else None."""
    g = sums.size
    # one complex value per cluster: np.unique sorts complex numbers by real, then imaginary part --
    # the row order of np.unique(axis=0) on the (sum, size) columns, at a fraction of its cost
    pairs, freq = np.unique(sums + 1j * sizes, return_counts=True)
    if MULTINOMIAL_COST * pairs.size <= max(g, 2 * MULTINOMIAL_COST):
        return np.column_stack([pairs.real, pairs.imag]), freq
    return None


def _index_means(boths: Sequence[np.ndarray], resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The index bootstrap of each of `boths` (per cluster: sum + 1j * size, all over the same G
    clusters) from ONE stream of drawn indices: each result equals its own call with a generator in
    the state of `rng` (the stream does not depend on how the draws are batched)."""
    g = boths[0].size
    B = int(resamples)
    outs = [np.empty(B) for _ in boths]
    step = max(1, min(B, BOOTSTRAP_DRAWS // g))
    gathered = np.empty((step, g), dtype=complex)  # reused by every batch: no fresh mapping per batch
    for start in range(0, B, step):
        k = min(step, B - start)
        idx = rng.integers(0, g, size=(k, g), dtype=np.int64)
        for both, out in zip(boths, outs):
            # one gather brings a drawn cluster's sum (real part) and size (imaginary part); "clip" never
            # clips (every index is below g) but, unlike "raise", writes straight into `gathered`
            drawn = np.take(both, idx, out=gathered[:k], mode="clip").sum(axis=1)
            out[start:start + k] = drawn.real / drawn.imag
    return outs


def cluster_bootstrap_means(sums: np.ndarray, sizes: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """`resamples` ratio means sum(d)/count of G clusters drawn with replacement from the G clusters
    (each given by its sum of differences and its number of questions; both runs' questions of a
    drawn document come together, since the sum is of the paired differences).

    Drawn from per-cluster sums and counts, never from questions: a resample is fully described by
    how often each cluster is drawn. Clusters with the same (sum, size) are interchangeable, so when
    there are fewer than G / MULTINOMIAL_COST distinct ones (Accuracy differences over documents of a
    few sizes; token F1 differences over questions, which take few distinct values), the counts are
    drawn from multinomial(G, their frequencies) -- the same distribution, in O(distinct) per
    resample; otherwise G cluster indices are drawn per resample and their sums and sizes gathered
    (O(G), not O(N)).

    With one question per unit (`paired_bootstrap`; a gold naming no document) this is the
    question bootstrap; Accuracy differences (-1, 0, 1) are then drawn as counts."""
    return cluster_bootstrap_means_many([(sums, sizes)], resamples, rng)[0]


def cluster_bootstrap_means_many(columns: Sequence[tuple[np.ndarray, np.ndarray]], resamples: int,
                                 rng: np.random.Generator | int) -> list[np.ndarray]:
    """`cluster_bootstrap_means` of each (sums, sizes) -- several metrics over the SAME G clusters --
    each equal to its own call with a fresh generator: `rng` is a seed (every column starts from
    `np.random.default_rng(seed)`) or, for a single column, a generator. The columns drawn by index
    share one stream of drawn indices (the same indices their own calls would draw), so k metrics
    cost one draw and k gathers instead of k of each."""
    if not isinstance(rng, np.random.Generator):
        seed = rng
        fresh = lambda: np.random.default_rng(seed)  # noqa: E731
    elif len(columns) == 1:
        fresh = lambda: rng  # noqa: E731
    else:
        raise ValueError("several columns need a seed, not a generator (each starts from the same state)")
    outs: list[np.ndarray | None] = [None] * len(columns)
    by_index: list[int] = []
    B = int(resamples)
    for i, (sums, sizes) in enumerate(columns):
        plan = _multinomial_plan(sums, sizes)
        if plan is None:
            by_index.append(i)
            continue
        pairs, freq = plan
        w = fresh().multinomial(sums.size, freq / sums.size, size=B).astype(float)
        outs[i] = (w @ pairs[:, 0]) / (w @ pairs[:, 1])
    if by_index:
        boths = [columns[i][0] + 1j * columns[i][1] for i in by_index]
        for i, means in zip(by_index, _index_means(boths, B, fresh())):
            outs[i] = means
    return outs  # type: ignore[return-value]


def sign_flip_p(sums: Sequence[float] | np.ndarray, *, resamples: int = 10_000, seed: int = 0) -> tuple[float, bool]:
    """(p, exact): the two-sided sign-flip randomization test of the per-document sums of the paired
    differences. Under "no difference" the two runs' labels are exchangeable within a document, so
    swapping A and B on a whole document (flipping the sign of its sum) leaves the distribution of
    T = sum of the document sums unchanged; p = P(|T*| >= |T|) over the 2^G sign vectors.

    - Integer sums (0/1 Accuracy; absolute total <= EXACT_SUM_LIMIT): exact, by convolving each
      distinct |sum| v's contribution v * (2K - c), K ~ binomial(c, 1/2) over its c documents.
      With one question per document this is McNemar's exact test.
    - At most EXACT_FLIPS documents with a non-zero sum: exact, over all 2^G sign vectors.
    - Otherwise (token F1, ANLS, a fractional Accuracy): `resamples` random sign vectors,
      p = (1 + #{|T*| >= |T|}) / (1 + resamples) -- never 0, at least 1/(resamples + 1); seeded. A
      vector is one random byte per 8 documents, and each byte's sum of the sums it puts on the +
      side is read from a table of the 256 (O(G / 8) per vector, not O(G)).

    Never 0 (`_floored`: an exact p is at least `smallest_p` of the documents that differ). A sum
    that is NaN (a NaN score) has no sign: ValueError naming how many."""
    s = np.asarray(sums, dtype=float)
    bad = int(np.count_nonzero(~np.isfinite(s)))
    if bad:
        raise ValueError(f"{bad} of {s.size} document sums are not finite numbers (a NaN or infinite score): "
                         "a sign-flip test needs every score")
    s = s[s != 0]  # a document with sum 0 adds nothing under any sign
    t = abs(float(s.sum()))
    if not s.size or t == 0:
        return 1.0, True
    mags = np.abs(s)
    rounded = np.rint(mags)
    if np.all(np.abs(mags - rounded) < 1e-9) and float(rounded.sum()) <= EXACT_SUM_LIMIT:
        values, counts = np.unique(rounded.astype(np.int64), return_counts=True)
        pmf = np.ones(1)
        for v, c in zip(values.tolist(), counts.tolist()):
            kernel = np.zeros(2 * c * v + 1)
            kernel[:: 2 * v] = _half_binomial_pmf(c)
            small = min(pmf.size, kernel.size) < 256
            pmf = np.convolve(pmf, kernel) if small else deferred.signal().fftconvolve(pmf, kernel)
        pmf = np.clip(pmf, 0.0, None)
        m = (pmf.size - 1) // 2  # pmf[j] = P(T* = j - m)
        tt = int(round(t))
        p = float(pmf[: m - tt + 1].sum() + pmf[m + tt:].sum())
        return _floored(min(1.0, p / float(pmf.sum())), s.size), True
    if s.size <= EXACT_FLIPS:
        k = s.size
        signs = ((np.arange(2 ** k)[:, None] >> np.arange(k)) & 1) * 2.0 - 1.0
        tol = 1e-9 * max(1.0, t)
        return float(np.count_nonzero(np.abs(signs @ s) >= t - tol)) / 2 ** k, True
    rng = np.random.default_rng(seed)
    R = int(resamples)
    groups = (s.size + 7) // 8
    padded = np.zeros(8 * groups)
    padded[: s.size] = s
    # one random bit per (vector, document), 8 documents a byte (the high bit first): T* = sum(+s) - sum(-s)
    # = 2 * plus - sum(s), plus = the sum of each byte's table entry: table[j, byte] = the sums of group j
    # whose bits the byte sets
    table = (padded.reshape(groups, 8) @ _BYTE_BITS.T).ravel()
    offsets = np.arange(groups, dtype=np.int32) * 256
    hits = 0
    step = max(1, min(R, DRAWS_PER_BATCH // groups))
    # each batch of `step` vectors is drawn in pieces of a few rows into two buffers made once, small enough to
    # come from the heap (not a fresh mapping faulted in page by page, above the app's malloc threshold); a
    # piece is a multiple of 4 rows, so the bytes drawn are the batch's own (Generator.integers draws 4 bytes
    # of one 32-bit number at a time and drops the rest of it at the end of a call)
    piece = min(step, max(4, SIGN_PIECE // groups // 4 * 4))
    codes = np.empty((piece, groups), dtype=np.int32)
    values = np.empty((piece, groups))
    tol = 1e-9 * max(1.0, t)
    total = float(s.sum())
    for start in range(0, R, step):
        k = min(step, R - start)
        for at in range(0, k, piece):
            m = min(piece, k - at)
            np.add(rng.integers(0, 256, size=(m, groups), dtype=np.uint8), offsets, out=codes[:m])
            plus = np.take(table, codes[:m], out=values[:m], mode="clip").sum(axis=1)  # "clip" never clips
            hits += int(np.count_nonzero(np.abs(2 * plus - total) >= t - tol))
    return (1 + hits) / (1 + R), False


def sign_flip_tail(total: float | np.ndarray, sum_sq: float | np.ndarray, sum_fourth: float | np.ndarray,
                   nonzero: int | np.ndarray) -> np.ndarray:
    """The sign-flip test's two-sided p by its normal tail with the Edgeworth kurtosis term, for one or
    many tests at once (arrays broadcast): T* = sum of the document sums S_g with random signs has mean
    0, variance sum S^2 and excess kurtosis -2 sum S^4 / (sum S^2)^2, so P(|T*| >= |T|) ~
    2 (1 - Phi(z) + phi(z) k (z^3 - 3z) / 24), z = |T| / sqrt(sum S^2) -- the checkpoint trends'
    (scoring/trends.py) screen of every slice and candidate at once, which it refines exactly where a
    p could decide (`sign_flip_p` itself never approximates).
    Floored as the exact test is (`_floored`: never below what `nonzero` documents that differ can give);
    1 where no document moved (sum S^2 = 0)."""
    t = np.abs(np.asarray(total, dtype=float))
    var = np.asarray(sum_sq, dtype=float)
    moved = var > 0
    safe = np.where(moved, var, 1.0)
    z = t / np.sqrt(safe)
    kurt = -2.0 * np.asarray(sum_fourth, dtype=float) / safe ** 2
    tail = deferred.stats().norm.sf(z) + deferred.stats().norm.pdf(z) * kurt * (z ** 3 - 3 * z) / 24
    p = np.clip(2 * tail, 0.0, 1.0)
    k = np.asarray(nonzero, dtype=float)
    floor = np.where(k < 2, 1.0, np.exp2(np.minimum(0.0, 1.0 - k)))
    return np.where(moved & (t > 0), np.maximum(np.maximum(p, floor), math.ulp(0.0)), 1.0)


@dataclass(frozen=True)
class Paired:
    """A paired comparison of two runs with documents as the unit (the headline) and the
    question-level numbers other tools report (secondary).

    delta            mean of a - b over the questions (= sum of the document sums / questions)
    low, high        percentile interval of the document (cluster) bootstrap: nan when too_few
    p                two-sided sign-flip randomization test of the document sums (see `paired_by_document`)
    unit, units      "document" (or "question" when the gold names no document) and how many
    questions        how many paired questions
    se               cluster-robust (CR1) standard error of delta
    detectable       smallest gap detectable at 80 % power and `confidence` (`detectable_gap`)
    too_few          fewer than MIN_DOCUMENTS units: say "too few documents to tell", not an interval
    method           what was computed, in words
    boot_low/_high   the cluster bootstrap interval even when too_few (for those who ask)
    p_question       McNemar's exact p on discordant questions (0/1 scores only; else nan)
    refused          why no test was made ("" when one was): a NaN score among the paired ones --
                     then p is None and every number nan, never a p computed over a NaN
    """
    delta: float
    low: float
    high: float
    p: float | None
    unit: str
    units: int
    questions: int
    se: float
    detectable: float
    too_few: bool
    method: str
    boot_low: float
    boot_high: float
    p_question: float
    exact: bool
    refused: str = ""

    @property
    def significant(self) -> bool:
        """The interval (by documents) excludes 0 and there are enough documents: the only case in
        which a page may call the difference real."""
        return not self.too_few and not math.isnan(self.low) and (self.low > 0 or self.high < 0)


def _nan_paired(unit: str, method: str, *, units: int = 0, questions: int = 0, refused: str = "") -> Paired:
    nan = math.nan
    return Paired(nan, nan, nan, None if refused else nan, unit, units, questions, nan, math.inf, True, method, nan, nan,
                  nan, not refused, refused)


def nan_scores(a: np.ndarray, b: np.ndarray) -> str:
    """Why two paired score arrays cannot be tested ("" when they can): how many scores are NaN
    (or infinite), in each run."""
    bad_a, bad_b = int(np.count_nonzero(~np.isfinite(a))), int(np.count_nonzero(~np.isfinite(b)))
    if not bad_a and not bad_b:
        return ""
    both = int(np.count_nonzero(~np.isfinite(a) | ~np.isfinite(b)))
    return (f"{both} of {a.size} paired questions have a NaN score ({bad_a} in the first run, {bad_b} in the second): "
            "no p without every score")


def paired_by_document(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                       clusters: Clusters | Sequence[object] | np.ndarray, *, resamples: int = 10_000,
                       confidence: float = 0.95, seed: int = 0, min_units: int = MIN_DOCUMENTS) -> Paired:
    """Run A against run B over paired questions (a[i], b[i] the two runs' scores on question i),
    with documents as the unit: `clusters` is a `Clusters` from `document_clusters`, or one label per
    question (taken as document ids).

    - delta: mean of a - b over the questions (the ratio estimator sum(d) / N).
    - Interval: the paired cluster bootstrap -- documents drawn with replacement, each drawn document
      bringing both runs' scores on all its questions; each resample's delta is sum(d)/count over the
      drawn questions; percentile interval at `confidence` (`cluster_bootstrap_means`). With fewer
      than `min_units` documents no interval is given (low, high nan; too_few True): a bootstrap over
      a handful of documents is too narrow to trust.
    - p: a sign-flip randomization test of the document sums (= permuting the run labels within
      documents): exact for 0/1 scores, Monte Carlo otherwise (`sign_flip_p`). Chosen over a
      cluster-robust (CR1) t test because it needs no normal approximation: its level holds at any
      number of documents and any mix of document sizes under the null that the runs are
      interchangeable on each document, where the CR1 t test over-rejects with few or unequal
      clusters -- the regime of the per-slice tables; and with one question per document it is
      McNemar's exact test, so the question-level and document-level numbers differ only by the unit.
    - Kept, secondary: McNemar's exact p on the discordant questions (0/1 scores), what other tools
      report. The same seed gives the same result. No question: nan everywhere.

    A NaN (or infinite) score among the pairs: no test at all -- `refused` says how many, p is None and
    every number nan (a sign-flip count over a NaN sum would otherwise read as p = 0)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    _check(x, y, confidence)
    return paired_by_document_rows(x[None, :], y[None, :], clusters, resamples=resamples, confidence=confidence,
                                   seed=seed, min_units=min_units)[0]


def paired_by_document_rows(a_rows: Sequence[Sequence[float]] | np.ndarray, b_rows: Sequence[Sequence[float]] | np.ndarray,
                            clusters: Clusters | Sequence[object] | np.ndarray, *, resamples: int = 10_000,
                            confidence: float = 0.95, seed: int = 0, min_units: int = MIN_DOCUMENTS) -> list[Paired]:
    """`paired_by_document` of each row of two k x n arrays (k metrics over the same n questions and
    clusters), with the same seed for every row, so each row equals its single call: the rows' clusters
    are numbered once and the rows whose bootstrap draws document indices share the drawn indices
    (`cluster_bootstrap_means_many`)."""
    x = np.atleast_2d(np.asarray(a_rows, dtype=float))
    y = np.atleast_2d(np.asarray(b_rows, dtype=float))
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"a_rows and b_rows must have the same k x n shape, got {x.shape} and {y.shape}")
    _check(x[:0].ravel(), y[:0].ravel(), confidence)  # the confidence (the shapes are checked above)
    codes, unit, g = _codes(clusters, x.shape[1])
    boot = f"{unit} bootstrap ({int(resamples):,} resamples)"
    done: list[Paired | None] = [None] * x.shape[0]
    pending: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, float]] = []  # (row, d, sums, sizes, delta)
    for i in range(x.shape[0]):
        if x.shape[1] == 0:
            done[i] = _nan_paired(unit, boot)
            continue
        why = nan_scores(x[i], y[i])
        if why:
            done[i] = _nan_paired(unit, f"not tested: {why}", units=g, questions=x.shape[1], refused=why)
            continue
        d = x[i] - y[i]
        sums, sizes = _cluster_sums(d, codes, g)
        pending.append((i, d, sums, sizes, float(d.mean())))
    drawn = [j for j, (_, d, _, _, _) in enumerate(pending) if not bool(np.all(d == d[0]))]
    means = cluster_bootstrap_means_many([(pending[j][2], pending[j][3]) for j in drawn], resamples, seed) if drawn else []
    means_of = dict(zip(drawn, means))
    for j, (i, d, sums, _sizes, delta) in enumerate(pending):
        p, exact = sign_flip_p(sums, resamples=resamples, seed=seed)
        how = "exact" if exact else f"{int(resamples):,} sign vectors"
        method = f"{boot}; sign-flip test of {unit} sums ({how})"
        blo, bhi = _percentiles(means_of[j], confidence, delta) if j in means_of else (delta, delta)
        binary = bool(np.all((x[i] == 0) | (x[i] == 1)) and np.all((y[i] == 0) | (y[i] == 1)))
        p_question = mcnemar_exact(int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))) if binary else math.nan
        se = _cr1(d, codes, g) if g >= 2 else math.nan
        gap = _gap(d, codes, g, confidence, POWER) if g >= 2 else math.inf
        too_few = g < min_units
        low, high = (math.nan, math.nan) if too_few else (blo, bhi)
        done[i] = Paired(delta, low, high, p, unit, g, d.size, se, gap, too_few, method, blo, bhi, p_question, exact)
    return done  # type: ignore[return-value]

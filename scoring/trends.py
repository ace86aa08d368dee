"""Checkpoint trends per slice, and alarms only on real, lasting drops. Pure: numpy and scipy.

    checkpoint_scores(results, gold_ids, metrics)   runs held in memory: each checkpoint's per-question scores
                                                    (the app and --trend read the same from the engine:
                                                    scoring.engine.queries.checkpoint_matrix; this is its reference)
    slice_defs(fields, codes, ...)                  the benchmark and every slice of one or two conditions
    search(scores, clusters, fields, steps, ...)    every slice's trend and the alarms (`TrendSearch`)
    alarm_rows(found) / CSV_COLUMNS                 the alarms as the command line's --trend CSV rows

The data come in as arrays: checkpoints (in step order) x questions (in gold order). Everything else is
computed from per-document sums of those arrays (`_Slice`), so the same statistics can later run on sums
an analytical engine returns.

Trend of a slice
----------------
The slice's score at each checkpoint (its mean over the questions every checkpoint answered), with a 95 %
interval by document: the cluster-robust (CR1) standard error of a mean with documents as clusters, t with
G - 1 degrees of freedom (G documents). A noise band: how much the score moves between neighbouring
checkpoints when nothing happens, sigma = median |score(k+1) - score(k)| / (0.6745 sqrt 2) (the median
keeps a real step out of it); drawn around a running median of three checkpoints, which is for the eye
only -- no test reads a smoothed score.

The alarm rule (a real, lasting drop)
-------------------------------------
For a slice and a candidate checkpoint k (the first checkpoint after a change; at least one checkpoint
before it and at least MIN_AFTER from it on, the latest included), "before" is each question's mean over
the up to BEFORE checkpoints just before k (the recent level, so that an earlier rise does not hide a
drop). Three paired tests on the same questions, documents as the unit -- the sign-flip test of the
per-document sums of the per-question differences (`scoring.stats.sign_flip_p`: whole documents swapped
between the two sides) -- each against "before":

  1. the mean of checkpoints k..latest is lower (the drop, whose size and interval are reported);
  2. the mean of the first half of them (k and the next, up to ceil(n / 2) of the n checkpoints from k on)
     is lower: the change is at k, not later;
  3. the mean of the second half (the latest ones) is lower: it stays down.

Each p is one-sided (a drop: half the two-sided sign-flip p, the test's distribution being symmetric).
The candidate's p is the largest of the three (an intersection-union test: "all three" holds at the
level each one does, so no adjustment among them), and 1 unless all three differences are drops.
Benjamini-Hochberg q across every (slice, candidate) tested -- and across metrics when several are asked
for -- and a slice alarms once, at the candidate with q < fdr and the largest drop (then the smallest p):
a candidate before the change dilutes the drop with undropped checkpoints, one after it with dropped
ones in "before". Only slices with at least `min_documents` documents and `min_questions` questions
are tested (the finder's thresholds). So a gentle improvement (no drop), noise (no drop beyond
chance across the family) and one bad checkpoint followed by recovery -- or a dip of a few checkpoints
that recovered, as long as it lies within one half of a candidate's checkpoints: the other half does not
drop -- raise nothing. A score is never smoothed before a test.

"Dropped from the best so far" is said of an alarm only: the best of many noisy checkpoints is biased
upward, so the gap to it is never tested nor reported alone; an alarm reports the tested drop and names
the best checkpoint before it.

Redundant alarms fold, as the weak-slice finder's do (each test at the change point of the alarm it
decides; between nested slices at the level fdr / the metric's alarms, between overlapping ones at fdr):
 - a slice that dropped only because of a slice inside it (the rest of it did not drop) folds under it;
 - a slice inside an alarmed slice that did not drop more than the rest of it (`scoring.slices.gap_test`
   on the per-question differences, documents as clusters) folds under it;
 - of overlapping slices, one whose questions outside the alarms already kept did not drop folds under
   the one it shares most questions with.

p values: the normal tail with its kurtosis term for every test at once (`scoring.stats.sign_flip_tail`);
exact (every sign vector, or the exact convolution of whole-number sums) where a candidate could decide something -- its approximate p
within a factor REFINE_MARGIN of the Benjamini-Hochberg cut-off the approximations give -- and few
documents moved (at most EXACT_LIMIT, where the tail is least to be trusted) and the sums allow it
cheaply (Accuracy on a benchmark of hundreds of questions). BH is then applied to the refined family.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import deferred
from .registry import MIN_DOCUMENTS
from .slices import MIN_QUESTIONS, MIN_SHARE, SEP, gap_test
from .stats import (
    EXACT_FLIPS,
    EXACT_LIMIT,
    Clusters,
    cluster_bootstrap_means,
    sign_flip_p,
    sign_flip_tail,
)

OVERALL = "overall"  # the benchmark-wide row's name (the --trend CSV's `slice` column)
BEFORE = 3  # checkpoints just before a candidate change that make "before"
MIN_AFTER = 2  # checkpoints from a change on, the latest included: a drop seen once is not yet lasting
REFINE = 0.1  # approximate p at or below this are computed exactly where they can be (`_drop_p`)
REFINE_MARGIN = 10  # in the family: approximations within this factor of the BH cut-off are computed exactly
EXACT_TOTAL = 20_000  # whole-number document sums up to this absolute total: the exact convolution
FDR = 0.05
RESAMPLES = 10_000  # the drop's document-bootstrap interval
CSV_COLUMNS = ["rank", "slice", "metric", "step", "before", "after", "gap", "ci_low", "ci_high", "p", "q", "documents"]
P_FLOOR = 1e-16


# ----------------------------------------------------------------------------- data access


def checkpoint_scores(results: Sequence[Any], gold_ids: Sequence[str], metrics: Sequence[str]
                      ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The data access of runs held in memory: ({metric: checkpoints x questions scores}, answered
    checkpoints x questions) over `gold_ids` (the columns' order), from each run's columns
    (`scoring.runner.compact_columns`: a `RunResult`). The app's runs and the command line's --trend
    (scoring/trend_cli.py) are in the engine, read by `scoring.engine.queries.checkpoint_matrix`, which
    returns the same: this is its reference (tests, bench/bench_trends.py).
    A question a run did not answer (or does not hold) is not answered there; its score is 0."""
    from .runner import column_list, compact_columns

    k, n = len(results), len(gold_ids)
    out = {m: np.zeros((k, n)) for m in metrics}
    answered = np.zeros((k, n), dtype=bool)
    at: dict[str, int] | None = None
    ids_list = list(gold_ids)
    placed: dict[int, tuple[Any, np.ndarray]] = {}  # runs of one gold share their ids' array: looked up once
    for row, result in enumerate(results):
        c = compact_columns(result)
        raw = c["question_id"]
        hit = placed.get(id(raw))
        if hit is not None and hit[0] is raw:
            pos = hit[1]
        else:
            ids = column_list(raw)
            if ids == ids_list:
                pos = np.arange(n)
            else:
                at = at if at is not None else {q: i for i, q in enumerate(ids_list)}
                pos = np.fromiter((at.get(str(q), -1) for q in ids), dtype=np.int64, count=len(ids))
            placed[id(raw)] = (raw, pos)
        done = np.asarray(column_list(c["answered"]) if not hasattr(c["answered"], "dtype") else c["answered"], dtype=bool)
        keep = pos >= 0
        answered[row, pos[keep]] = done[keep]
        for m in metrics:
            values = np.asarray(c[m] if hasattr(c[m], "dtype") else column_list(c[m]), dtype=float)
            out[m][row, pos[keep]] = values[keep]
    return out, answered


# ----------------------------------------------------------------------------- slices


@dataclass(frozen=True)
class SliceDef:
    """A slice: its conditions ((field, value), ...; none for the benchmark) and its questions
    (positions in the questions' order, ascending)."""

    conditions: tuple[tuple[str, str], ...]
    members: np.ndarray

    @property
    def name(self) -> str:
        """`field=value & field=value` as the weak-slices CSV writes it; OVERALL for the benchmark."""
        return SEP.join(f"{f}={v}" for f, v in self.conditions) if self.conditions else OVERALL


def _labels(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(str(v) for v in value if v is not None)
    return (str(value),)


def conditions_of(fields: Mapping[str, Sequence[Any]], n: int) -> list[SliceDef]:
    """Every condition field = value that splits the questions (a multi-valued field puts a question
    in the slice of each of its values), fields in the order given, values sorted."""
    out = []
    for name, column in fields.items():
        values = list(column)
        if len(values) != n:
            raise ValueError(f"field {name!r} has {len(values)} values for {n} questions")
        found: dict[str, np.ndarray] = {}
        if all(v is None or isinstance(v, str) for v in values):  # one label or none: grouped in numpy
            named = np.array([v is not None for v in values], dtype=bool)
            if named.any():
                labels = np.array([v for v in values if v is not None], dtype=object).astype(str)
                uniq, inverse = np.unique(labels, return_inverse=True)
                where = np.flatnonzero(named)
                order = np.argsort(inverse.ravel(), kind="stable")
                bounds = np.searchsorted(inverse.ravel()[order], np.arange(uniq.size + 1))
                for k in range(uniq.size):
                    found[str(uniq[k])] = where[np.sort(order[bounds[k]:bounds[k + 1]])]
        else:
            members: dict[str, list[int]] = {}
            for i, v in enumerate(values):
                for label in set(_labels(v)):
                    members.setdefault(label, []).append(i)
            found = {label: np.asarray(idx, dtype=np.int64) for label, idx in members.items()}
        for label in sorted(found):
            idx = found[label].astype(np.int64)
            if 0 < idx.size < n:
                out.append(SliceDef(((name, label),), idx))
    return out


def _documents(codes: np.ndarray, members: np.ndarray) -> int:
    return int(np.unique(codes[members]).size) if members.size else 0


def slice_defs(fields: Mapping[str, Sequence[Any]], codes: np.ndarray, *, min_questions: int, min_documents: int,
               max_conditions: int = 2) -> list[SliceDef]:
    """The benchmark, then every condition, then every conjunction of two conditions on different fields,
    each holding at least `min_questions` questions in `min_documents` documents; a slice holding exactly
    the questions of one listed before it is the same slice under a longer name, left out."""
    n = codes.size
    everything = SliceDef((), np.arange(n, dtype=np.int64))
    singles = [s for s in conditions_of(fields, n)
               if s.members.size >= min_questions and _documents(codes, s.members) >= min_documents]
    out = [everything, *singles]
    if max_conditions >= 2:
        masks = []
        for s in singles:
            m = np.zeros(n, dtype=bool)
            m[s.members] = True
            masks.append(m)
        for i, a in enumerate(singles):
            for j in range(i + 1, len(singles)):
                b = singles[j]
                if a.conditions[0][0] == b.conditions[0][0]:
                    continue
                both = np.flatnonzero(masks[i] & masks[j])
                if both.size >= min_questions and _documents(codes, both) >= min_documents:
                    out.append(SliceDef(a.conditions + b.conditions, both))
    seen: dict[tuple[int, bytes], int] = {}
    kept: list[SliceDef] = []
    for s in out:
        key = (s.members.size, s.members.tobytes())
        if key in seen:
            continue
        seen[key] = len(kept)
        kept.append(s)
    return kept


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Trend:
    """One slice's score per checkpoint (fractions), its interval by document, the smoothed line (for the
    eye only) and the noise band's sigma (`noise`, a fraction); `tested`: the slice was in the alarms'
    family (enough documents and questions)."""

    slice: str
    conditions: tuple[tuple[str, str], ...]
    questions: int
    documents: int
    score: np.ndarray
    low: np.ndarray
    high: np.ndarray
    smooth: np.ndarray
    noise: float
    tested: bool


@dataclass(frozen=True)
class Alarm:
    """A real, lasting drop (module docstring). `index`: the checkpoint (position in the series) that is
    the first after the change, `step` its step; before / after / gap (after - before) fractions with the
    gap's document-bootstrap interval; `p` the largest of the three tests' p (`p_mean`, `p_first`,
    `p_last`: the mean, the first half's, the second half's), `q` across the family; `best_step`, `best`: the
    best checkpoint before the change;
    `forgotten`: the questions (positions in the questions' order) right at the checkpoint before the
    change and wrong at it and at the latest; `explains`: the alarms folded under this one."""

    slice: str
    conditions: tuple[tuple[str, str], ...]
    metric: str
    index: int
    step: int
    before: float
    after: float
    gap: float
    ci_low: float
    ci_high: float
    p: float
    q: float
    p_mean: float
    p_first: float
    p_last: float
    documents: int
    questions: int
    best_step: int
    best: float
    forgotten: tuple[int, ...] = ()
    explains: tuple[str, ...] = ()
    folded_under: str = ""

    @property
    def guaranteed(self) -> float:
        """The drop the interval still guarantees (points as a fraction, at least 0)."""
        return max(0.0, -self.ci_high) if math.isfinite(self.ci_high) else 0.0


@dataclass
class TrendSearch:
    """Every slice's trend and the alarms, for one series. `trends[metric]`: the benchmark first, then
    the slices listed (`SliceDef` order). `alarms`: the kept alarms, strongest first (the drop its
    interval guarantees, then q); `folded`: the alarms folded under them. `tests`: (slice, candidate)
    pairs tested, the family's size."""

    runs: list[str]
    steps: list[int]
    metrics: list[str]
    trends: dict[str, list[Trend]]
    alarms: list[Alarm]
    folded: list[Alarm]
    tests: int
    slices_tested: int
    candidates: int
    questions: int
    left_out: int
    units: int
    unit: str
    fdr: float
    min_questions: int
    min_documents: int
    family: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)  # every test's p (the BH family)
    ranges: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)  # numeric fields' ranges

    def raw_values(self, name: str, value: str) -> list[str]:
        """The values of field `name` a condition stands for (a numeric range's values; else itself)."""
        return list(self.ranges.get(name, {}).get(value, (value,)))

    def summary(self) -> str:
        """One line: what was tested and what was found, with the unit."""
        k = len(self.steps)
        head = (f"{k} checkpoints, {self.questions:,} questions in {self.units:,} {self.unit}s"
                + (f" ({self.left_out:,} left out: not answered by every checkpoint)" if self.left_out else ""))
        if self.candidates == 0:
            return head + f": a lasting drop needs {1 + MIN_AFTER} checkpoints or more (not enough evidence)"
        if not self.tests:
            return head + (f": no slice has the {self.min_documents} {self.unit}s a test needs (not enough evidence)")
        tested = (f"{self.slices_tested:,} slices x {self.candidates} candidate checkpoints tested"
                  f"{' x ' + str(len(self.metrics)) + ' metrics' if len(self.metrics) > 1 else ''} "
                  f"({self.tests:,} tests; Benjamini-Hochberg q < {self.fdr:g})")
        if not self.alarms:
            return f"{head}; {tested}: no lasting drop beyond chance (not enough evidence of one)"
        return (f"{head}; {tested}: {len(self.alarms)} lasting drop(s)"
                + (f", {len(self.folded)} more folded under them" if self.folded else ""))

    def trend(self, metric: str, name: str) -> Trend | None:
        return next((t for t in self.trends.get(metric, []) if t.slice == name), None)


# ----------------------------------------------------------------------------- the statistics


def smoothed(score: np.ndarray) -> np.ndarray:
    """A running median of three (the ends: of two), for display only."""
    x = np.asarray(score, dtype=float)
    if x.size < 3:
        return x.copy()
    out = np.empty_like(x)
    out[1:-1] = np.median(np.stack([x[:-2], x[1:-1], x[2:]]), axis=0)
    out[0], out[-1] = (x[0] + x[1]) / 2, (x[-2] + x[-1]) / 2
    return out


def noise_sigma(score: np.ndarray) -> float:
    """The checkpoint-to-checkpoint noise of a score: median |neighbour difference| / (0.6745 sqrt 2); nan
    with fewer than two checkpoints."""
    x = np.asarray(score, dtype=float)
    if x.size < 2:
        return math.nan
    return float(np.median(np.abs(np.diff(x)))) / (0.6744897501960817 * math.sqrt(2))


@dataclass
class _Slice:
    """A slice's per-document cumulative sums: A[j, g] = sum over checkpoints before j of the scores of
    its questions in document g; `sizes[g]` its questions there. Every number of the slice comes from these."""

    definition: SliceDef
    A: np.ndarray
    sizes: np.ndarray
    members: np.ndarray  # positions in document order
    docs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # each column's document code

    @property
    def n(self) -> float:
        return float(self.sizes.sum())


def _slice_sums(cum: np.ndarray, doc: np.ndarray, members: np.ndarray, definition: SliceDef) -> _Slice:
    """The slice's `_Slice` from the per-question cumulative sums `cum` (questions in document order x
    checkpoints + 1: a member's row is one contiguous read)."""
    d = doc[members]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]]) if d.size else np.zeros(0, dtype=np.int64)
    A = (np.ascontiguousarray(np.add.reduceat(cum[members], starts, axis=0).T) if d.size
         else np.zeros((cum.shape[1], 0)))
    sizes = np.diff(np.r_[starts, d.size]).astype(float)
    return _Slice(definition, A, sizes, members, d[starts])


def _without(big: _Slice, small: _Slice) -> _Slice:
    """The questions of `big` not in `small` (which lies inside it), from their per-document sums (the sums
    are linear: no question is read again); documents left with no question are dropped."""
    at = np.searchsorted(big.docs, small.docs)
    A = big.A.copy()
    A[:, at] -= small.A
    sizes = big.sizes.copy()
    sizes[at] -= small.sizes
    keep = sizes > 0
    members = np.setdiff1d(big.members, small.members, assume_unique=True)
    return _Slice(SliceDef((), members), A[:, keep], sizes[keep], members, big.docs[keep])


def _trend(s: _Slice, tested: bool, confidence: float = 0.95) -> Trend:
    P = np.diff(s.A, axis=0)  # checkpoints x documents: each checkpoint's document sums
    g, n = s.sizes.size, s.n
    score = P.sum(axis=1) / n if n else np.full(P.shape[0], math.nan)
    if g >= 2:
        resid = P - score[:, None] * s.sizes[None, :]
        se = np.sqrt(g / (g - 1) * (resid * resid).sum(axis=1)) / n
        half = float(deferred.stats().t.ppf(0.5 + confidence / 2, g - 1)) * se
        low, high = np.clip(score - half, 0.0, None), score + half
    else:
        low = high = np.full_like(score, math.nan)
    return Trend(s.definition.name, s.definition.conditions, int(n), g, score, low, high, smoothed(score),
                 noise_sigma(score), tested)


def _candidates(k: int) -> np.ndarray:
    """Checkpoint positions that can be the first after a lasting change: one before, MIN_AFTER from it on."""
    return np.arange(1, k - MIN_AFTER + 1, dtype=np.int64) if k >= 1 + MIN_AFTER else np.zeros(0, dtype=np.int64)


def _differences(s: _Slice, cands: np.ndarray, before: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate and document, the sums of the three tests' paired differences, each scaled by a positive
    whole number so that 0/1 scores give whole numbers (the sign-flip test is unchanged by a positive scale):
    (mean of k..latest - before) x w n, (mean of the first half - before) x w h1, (mean of the second half -
    before) x w h2, with w checkpoints before, n = h1 + h2 from k on (h1 = ceil(n / 2)); and w n."""
    A = s.A
    K = A.shape[0] - 1
    w = np.minimum(cands, before)
    n = K - cands
    h1 = (n + 1) // 2
    mid = cands + h1
    base = A[cands] - A[cands - w]  # candidates x documents: the before window's sums
    wf = w[:, None].astype(float)

    def against(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        return (A[stop] - A[start]) * wf - base * (stop - start)[:, None].astype(float)

    return against(cands, np.full_like(cands, K)), against(cands, mid), against(mid, np.full_like(cands, K)), \
        wf[:, 0] * n


def _approximate(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(two-sided sign-flip p by the normal tail, documents that moved) of each row of per-document sums."""
    s2 = sums * sums
    nonzero = np.count_nonzero(np.abs(sums) > 1e-9, axis=1)
    return sign_flip_tail(sums.sum(axis=1), s2.sum(axis=1), (s2 * s2).sum(axis=1), nonzero), nonzero


def _exact(row: np.ndarray, seed: int) -> float | None:
    """The exact two-sided sign-flip p of one row of per-document sums, where it is cheap: at most
    EXACT_FLIPS documents moved (every sign vector), or whole-number sums of absolute total at most
    EXACT_TOTAL (the convolution); else None."""
    row = row[np.abs(row) > 1e-9]
    whole = np.allclose(row, np.rint(row), atol=1e-6)
    if row.size <= EXACT_FLIPS or (whole and float(np.abs(np.rint(row)).sum()) <= EXACT_TOTAL):
        return sign_flip_p(np.rint(row) if whole else row, seed=seed)[0]
    return None


@dataclass
class _Scan:
    """One (metric, slice)'s candidates: p of each of the three tests and the combined p."""

    metric: str
    slice: _Slice
    trend: Trend
    p: np.ndarray  # combined, per candidate (1 where not all three are drops)
    parts: np.ndarray  # candidates x 3: p of the mean, the first half, the second half
    drop: np.ndarray  # per candidate: mean of k..latest minus before (a fraction; negative: a drop)
    cands: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    drops: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # all three are drops
    two: np.ndarray = field(default_factory=lambda: np.ones((0, 3)))  # two-sided p of the three tests
    moved: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))  # documents that moved


def _scan(s: _Slice, cands: np.ndarray, before: int, seed: int, metric: str, trend: Trend,
          refine_below: float = 2 * REFINE) -> _Scan:
    """The three one-sided tests of every candidate (a drop: half the two-sided sign-flip p, the test's
    distribution being symmetric) by the normal tail, and exactly (`_refine`) where the largest of a
    candidate's three two-sided approximations is at most `refine_below`."""
    if not cands.size:
        return _Scan(metric, s, trend, np.ones(0), np.ones((0, 3)), np.zeros(0), cands)
    sums = _differences(s, cands, before)
    mean, scale = sums[0], sums[3]
    drops = (mean.sum(axis=1) < -1e-9) & (sums[1].sum(axis=1) < -1e-9) & (sums[2].sum(axis=1) < -1e-9)
    two = np.ones((cands.size, 3))
    rows = np.flatnonzero(drops)
    moved = np.zeros((cands.size, 3), dtype=np.int64)
    for j in range(3):
        if rows.size:
            two[rows, j], moved[rows, j] = _approximate(sums[j][rows])
    found = _Scan(metric, s, trend, np.ones(cands.size), np.ones((cands.size, 3)), mean.sum(axis=1) / scale / max(s.n, 1.0),
                  cands, drops, two, moved)
    _refine(found, sums, np.flatnonzero(drops & (two.max(axis=1) <= refine_below)), seed)
    return found


def _refine(sc: _Scan, sums: Sequence[np.ndarray], rows: np.ndarray, seed: int, at: int = 0) -> None:
    """The candidates `rows` of a scan (rows of `sums`; candidate `at + row`) computed exactly where few
    documents moved (at most EXACT_LIMIT: where the tail is least to be trusted) and the sums allow it
    cheaply (`_exact`); then every candidate's one-sided parts and combined p set from the two-sided ones
    (never 0)."""
    for r in rows.tolist():
        c = at + r
        if sc.drops[c] and sc.moved[c].min() <= EXACT_LIMIT:
            for j in range(3):
                exact = _exact(sums[j][r], seed)
                if exact is not None:
                    sc.two[c, j] = exact
    sc.parts = np.where(sc.drops[:, None], np.maximum(sc.two / 2, math.ulp(0.0)), 1.0)
    sc.p = sc.parts.max(axis=1)


def _refined(scans: list[_Scan], fdr: float, before: int, seed: int) -> np.ndarray:
    """Every test's p (the family), exact where it could decide something: Benjamini-Hochberg on the
    approximations gives the cut-off (the largest p it lets through, or fdr / tests when none); the
    candidates whose approximation is within a factor REFINE_MARGIN of it are computed exactly where they
    can be (`_refine`). A p far from the cut-off, above or below, decides the same whatever its last digits."""
    if not scans:
        return np.zeros(0)
    approx = np.concatenate([sc.p for sc in scans])
    if not approx.size:
        return approx
    q = _bh(approx)
    cut = max(float(approx[q < fdr].max()) if (q < fdr).any() else 0.0, fdr / approx.size)
    for sc in scans:
        p = sc.parts.max(axis=1)
        rows = np.flatnonzero(sc.drops & (p <= REFINE_MARGIN * cut) & (p >= cut / REFINE_MARGIN))
        if rows.size:
            _refine(sc, _differences(sc.slice, sc.cands, before), rows, seed)
    return np.concatenate([sc.p for sc in scans])


def _picked(scans: list[_Scan], fdr: float) -> list[tuple[_Scan, int, float]]:
    """(scan, candidate, q) of every slice that alarms (`_pick`)."""
    q_all = _bh(np.concatenate([sc.p for sc in scans]))
    start = 0
    raw = []
    for sc in scans:
        qs = q_all[start:start + sc.p.size]
        start += sc.p.size
        c = _pick(sc.p, qs, sc.drop, fdr)
        if c is not None:
            raw.append((sc, c, float(qs[c])))
    return raw


def _reported(alarms: list[Alarm], raw: list[tuple[_Scan, int, float]], scans: list[_Scan], before: int,
              seed: int) -> tuple[list[Alarm], np.ndarray]:
    """The kept alarms as reported, and the family's p: each kept alarm's three tests computed exactly where
    they can be (the normal tail can be far below the exact p in the extremes: a p to decide with, near
    the cut-off, where the family is exact already, not one to report), q recomputed over the family with
    them, and the drop's interval."""
    where = {(a.slice, a.metric): (sc, c) for a, (sc, c, _) in zip(_by_raw(raw), raw)}
    for a in alarms:
        sc, c = where[(a.slice, a.metric)]
        _refine(sc, _differences(sc.slice, sc.cands[c:c + 1], before), np.array([0]), seed, at=c)
    family = np.concatenate([sc.p for sc in scans])
    q_all = _bh(family)
    offset = {}
    start = 0
    for sc in scans:
        offset[id(sc)] = start
        start += sc.p.size
    out = []
    for a in alarms:
        sc, c = where[(a.slice, a.metric)]
        pm, pf, pl = (float(x) for x in sc.parts[c])
        reported = replace(a, p=float(sc.p[c]), q=float(q_all[offset[id(sc)] + c]), p_mean=pm, p_first=pf, p_last=pl)
        out.append(_interval(reported, sc.slice, before, seed))
    return out, family


def _by_raw(raw: list[tuple[_Scan, int, float]]) -> list[SimpleNamespace]:
    return [SimpleNamespace(slice=sc.slice.definition.name, metric=sc.metric) for sc, _, _ in raw]


def _bh(p: np.ndarray) -> np.ndarray:
    return np.asarray(deferred.stats().false_discovery_control(p, method="bh"), dtype=float) if p.size else p


def search(scores: Mapping[str, np.ndarray], clusters: Clusters | np.ndarray, fields: Any,
           steps: Sequence[int], *, runs: Sequence[str] = (), answered: np.ndarray | None = None,
           right: np.ndarray | None = None, fdr: float = FDR, min_questions: int | None = None,
           min_documents: int = MIN_DOCUMENTS, max_conditions: int = 2, before: int = BEFORE, seed: int = 0,
           slices: Sequence[SliceDef] | None = None, fold: bool = True) -> TrendSearch:
    """Every slice's trend and the alarms of one series (module docstring).

    `scores`: metric -> checkpoints x questions (checkpoints in step order, `steps`); `clusters`: each
    question's document (`scoring.stats.document_clusters`, or codes); `fields`: the finder's fields
    (`scoring.slice_fields.slice_fields`: a FieldSet, whose numeric ranges the result keeps; saved slices
    among them), or field -> one value per question; `answered`: checkpoints x questions, the
    trends and tests use the questions every checkpoint answered; `right`: checkpoints x questions, the
    profile's right answers (an alarm's `forgotten` questions); `slices`: the slices to use instead of
    enumerating them (`slice_defs`, positions in the questions' order)."""
    metrics = list(scores)
    if not metrics:
        raise ValueError("no metric given")
    first = np.asarray(scores[metrics[0]], dtype=float)
    if first.ndim != 2:
        raise ValueError(f"scores must be checkpoints x questions, got shape {first.shape}")
    k, n_all = first.shape
    if len(steps) != k:
        raise ValueError(f"{len(steps)} steps for {k} checkpoints")
    for m in metrics:
        arr = np.asarray(scores[m], dtype=float)
        if arr.shape != first.shape:
            raise ValueError(f"scores of {m!r} have shape {arr.shape}, not {first.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"scores of {m!r} must be finite numbers (a NaN score cannot be tested)")
    if not 0 < fdr < 1:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    raw_codes = np.asarray(getattr(clusters, "codes", clusters))
    unit = getattr(clusters, "unit", "document")
    if raw_codes.shape != (n_all,):
        raise ValueError(f"clusters must hold one entry per question: {raw_codes.shape} for {n_all} questions")
    shared = np.ones(n_all, dtype=bool) if answered is None else np.asarray(answered, dtype=bool).all(axis=0)
    keep = np.flatnonzero(shared)
    n = keep.size
    _, codes = np.unique(raw_codes[keep], return_inverse=True) if n else (None, np.zeros(0, dtype=np.int64))
    codes = np.asarray(codes, dtype=np.int64).ravel()
    min_q = int(min_questions) if min_questions is not None else max(MIN_QUESTIONS, math.ceil(MIN_SHARE * n))
    ranges: dict[str, dict[str, tuple[str, ...]]] = dict(getattr(fields, "ranges", {}) or {})
    fields = getattr(fields, "columns", fields)  # a `scoring.slice_fields.FieldSet`, or field -> values
    kept_fields: dict[str, list[Any]] = {}
    for name, col in fields.items():
        values = list(col)
        kept_fields[name] = values if n == n_all else [values[i] for i in keep.tolist()]
    if slices is None:
        defs = slice_defs(kept_fields, codes, min_questions=min_q, min_documents=min_documents,
                          max_conditions=max_conditions)
    else:  # given over every question: taken to the shared ones
        where = np.full(n_all, -1, dtype=np.int64)
        where[keep] = np.arange(n)
        defs = []
        for d in slices:
            at = where[np.asarray(d.members, dtype=np.int64)]
            defs.append(SliceDef(d.conditions, np.sort(at[at >= 0])))
    order = np.argsort(codes, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    doc = codes[order]
    cands = _candidates(k)
    found_trends: dict[str, list[Trend]] = {}
    scans: list[_Scan] = []
    cums: dict[str, np.ndarray] = {}
    for m in metrics:
        y = np.asarray(scores[m], dtype=float)[:, keep][:, order]
        cum = cums[m] = np.zeros((n, k + 1))  # questions x checkpoints + 1: a question's sums in a row
        np.cumsum(y.T, axis=1, out=cum[:, 1:])
        found_trends[m] = []
        for d in defs:
            s = _slice_sums(cum, doc, np.sort(rank[d.members]), d)
            tested = s.definition.members.size >= (1 if not d.conditions else min_q) and s.sizes.size >= min_documents
            trend = _trend(s, tested)
            found_trends[m].append(trend)
            if tested:
                scans.append(_scan(s, cands, before, seed, m, trend, refine_below=0.0))
    tests = sum(sc.p.size for sc in scans)
    alarms: list[Alarm] = []
    folded: list[Alarm] = []
    family = _refined(scans, fdr, before, seed)
    if tests:
        raw = _picked(scans, fdr)
        right_kept = None if right is None else np.asarray(right, dtype=bool)[:, keep]
        made = [_alarm(sc, int(cands[c]), c, q, steps, before, seed, right_kept, keep, order) for sc, c, q in raw]
        alarms, folded = _fold(made, raw, cums, before, seed, fdr, doc) if fold else (made, [])
        alarms, family = _reported(alarms, raw, scans, before, seed)
        alarms.sort(key=lambda a: (-a.guaranteed, a.q, a.p, a.slice, a.metric))
    return TrendSearch(runs=list(runs), steps=[int(s) for s in steps], metrics=metrics, trends=found_trends,
                       alarms=alarms, folded=folded, tests=tests, slices_tested=len({id(sc.slice.definition) for sc in scans}),
                       candidates=int(cands.size), questions=n, left_out=n_all - n, units=int(np.unique(codes).size),
                       unit=unit, fdr=fdr, min_questions=min_q, min_documents=min_documents, family=family,
                       ranges=ranges)


def _pick(p: np.ndarray, q: np.ndarray, drop: np.ndarray, fdr: float) -> int | None:
    """The candidate a slice alarms at: of those with q < fdr, the one with the largest drop, then the
    smallest p (a candidate before the change counts undropped checkpoints after it, one after the change
    dropped ones before it: both dilute the drop, while their p, on thousands of questions, can be smaller
    still); None when no candidate passes."""
    passing = np.flatnonzero(q < fdr)
    if not passing.size:
        return None
    return int(min(passing.tolist(), key=lambda c: (drop[c], p[c], c)))


def _alarm(sc: _Scan, k: int, c: int, q: float, steps: Sequence[int], before: int, seed: int,
           right: np.ndarray | None, keep: np.ndarray, order: np.ndarray) -> Alarm:
    s = sc.slice
    A = s.A
    K = A.shape[0] - 1
    w = min(k, before)
    n = s.n
    before_sum = A[k] - A[k - w]
    after_sum = A[K] - A[k]
    diff = after_sum / (K - k) - before_sum / w  # per document: sums of the per-question differences
    b, a = float(before_sum.sum()) / (w * n), float(after_sum.sum()) / ((K - k) * n)
    lo = hi = math.nan  # the interval: `_interval`, for the alarms kept
    score = sc.trend.score
    best = int(np.argmax(score[:k]))
    forgotten: tuple[int, ...] = ()
    if right is not None:
        members = keep[order[s.members]]  # the slice's questions, as positions in the questions' order
        r = right[:, order[s.members]]
        lost = r[k - 1] & ~r[k] & ~r[K - 1]
        forgotten = tuple(int(x) for x in np.sort(members[lost]))
    pm, pf, pl = (float(x) for x in sc.parts[c])
    del diff
    return Alarm(s.definition.name, s.definition.conditions, sc.metric, k, int(steps[k]), b, a, a - b,
                 lo, hi, float(sc.p[c]), q, pm, pf, pl, int(s.sizes.size), int(n),
                 int(steps[best]), float(score[best]), forgotten)


def _interval(a: Alarm, s: _Slice, before: int, seed: int) -> Alarm:
    """The alarm with its drop's 95 % document-bootstrap interval (documents drawn with replacement, each
    bringing the per-question differences of all its questions: `scoring.stats.cluster_bootstrap_means`)."""
    A, k = s.A, a.index
    K = A.shape[0] - 1
    w = min(k, before)
    diff = (A[K] - A[k]) / (K - k) - (A[k] - A[k - w]) / w  # per document: sums of the per-question differences
    if s.sizes.size >= 2 and np.any(diff != diff[0]):
        means = cluster_bootstrap_means(diff, s.sizes, RESAMPLES, np.random.default_rng(seed))
        lo, hi = (float(v) for v in np.quantile(means, [0.025, 0.975]))
    else:
        lo = hi = a.gap
    return replace(a, ci_low=min(lo, a.gap), ci_high=max(hi, a.gap))


def _drop_p(s: _Slice, k: int, before: int, seed: int) -> float:
    """The combined p of the three tests at candidate k for a slice (1 unless all three are drops)."""
    return float(_scan(s, np.array([k]), before, seed, "", _EMPTY_TREND).p[0])


_EMPTY_TREND = Trend("", (), 0, 0, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), math.nan, False)


def _subset(doc: np.ndarray, cum: np.ndarray, members: np.ndarray) -> _Slice:
    return _slice_sums(cum, doc, members, SliceDef((), members))


def _fold(made: list[Alarm], raw: list[tuple[_Scan, int, float]], cums: Mapping[str, np.ndarray], before: int,
          seed: int, level: float, doc: np.ndarray) -> tuple[list[Alarm], list[Alarm]]:
    """The alarms kept and those folded under them (module docstring), per metric, at each alarm's change point."""
    edge: dict[int, int] = {}
    for metric in dict.fromkeys(a.metric for a in made):
        idx = [i for i, a in enumerate(made) if a.metric == metric]
        if len(idx) >= 2:
            slices = {i: raw[i][0].slice for i in idx}
            # a nested decision is made once per pair of alarms: at level / alarms, so that among many
            # alarms of one cause none stays by chance as "weaker still" (the finder's nested bar)
            edge.update(_fold_edges(made, idx, slices, cums[metric], doc, before, seed, level / len(idx), level))
    top: dict[int, int] = {}
    for i in range(len(made)):
        j, seen = i, {i}
        while j in edge and edge[j] not in seen:
            j = edge[j]
            seen.add(j)
        top[i] = j
    kept = [i for i in range(len(made)) if top[i] == i]
    under: dict[int, list[str]] = {i: [] for i in kept}
    for i in range(len(made)):
        if top[i] != i and top[i] in under:
            under[top[i]].append(made[i].slice)
    out = [replace(made[i], explains=tuple(under[i])) for i in kept]
    folded = [replace(made[i], folded_under=made[top[i]].slice) for i in range(len(made)) if top[i] != i and top[i] in under]
    return out, folded


def _inside(small: np.ndarray, big: np.ndarray) -> bool:
    """Whether the sorted positions `small` are a strict subset of the sorted positions `big`."""
    if not small.size < big.size or (small.size and (small[0] < big[0] or small[-1] > big[-1])):
        return False
    at = np.searchsorted(big, small)
    return bool(np.all(big[np.minimum(at, big.size - 1)] == small))


def _fold_edges(made: list[Alarm], idx: list[int], slices: Mapping[int, _Slice], cum: np.ndarray, doc: np.ndarray,
                before: int, seed: int, nested: float, level: float) -> dict[int, int]:
    """Which alarm of one metric folds under which (alarm -> the one it folds under), by the three rules."""
    edge: dict[int, int] = {}
    sets = {i: slices[i].members for i in idx}
    near = {i: [j for j in idx if j != i] for i in idx}
    # 1. a slice that dropped only because of a slice inside it
    for i in idx:
        best, best_p = -1, -1.0
        for j in near[i]:
            if not _inside(sets[j], sets[i]):
                continue
            rest = _without(slices[i], slices[j])
            p = _drop_p(rest, made[i].index, before, seed) if rest.sizes.size else 1.0
            if p > nested and p > best_p:
                best, best_p = j, p
        if best >= 0:
            edge[i] = best
    # 2. a slice inside an alarmed one that did not drop more than the rest of it
    for i in idx:
        if i in edge:
            continue
        for j in sorted(near[i], key=lambda j: sets[j].size):
            if j in edge or not _inside(sets[i], sets[j]):
                continue
            y = _per_question_drop(cum, made[j].index, before)
            in_a = np.zeros(y.size, dtype=bool)
            in_a[sets[i]] = True
            in_b = np.zeros(y.size, dtype=bool)
            in_b[np.setdiff1d(sets[j], sets[i], assume_unique=True)] = True
            if in_b.any() and gap_test(y, doc, in_a, in_b).p > nested:
                edge[i] = j
                break
    # 3. overlapping slices: nothing of its own beyond the alarms kept
    accepted: list[int] = []
    for i in sorted((i for i in idx if i not in edge), key=lambda i: (made[i].p, sets[i].size)):
        shared = {j: np.intersect1d(sets[i], sets[j], assume_unique=True).size for j in accepted if j in near[i]}
        overlapping = [j for j, c in shared.items() if c]
        if overlapping:
            outside = np.setdiff1d(sets[i], np.concatenate([sets[j] for j in overlapping]))
            p = _drop_p(_subset(doc, cum, outside), made[i].index, before, seed) if outside.size else 1.0
            if p > level:
                edge[i] = max(overlapping, key=lambda j: (shared[j], -made[j].p))
                continue
        accepted.append(i)
    return edge


def _per_question_drop(cum: np.ndarray, k: int, before: int) -> np.ndarray:
    """Each question's mean after k (to the latest) minus its mean over the before window."""
    K = cum.shape[1] - 1
    w = min(k, before)
    return (cum[:, K] - cum[:, k]) / (K - k) - (cum[:, k] - cum[:, k - w]) / w


# ----------------------------------------------------------------------------- the CSV


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def alarm_rows(found: TrendSearch) -> list[dict[str, Any]]:
    """The kept alarms as rows of CSV_COLUMNS, strongest first (p and q never 0: floored at P_FLOOR)."""
    rows = []
    for rank, a in enumerate(found.alarms, 1):
        rows.append({"rank": rank, "slice": a.slice, "metric": a.metric, "step": a.step, "before": _num(a.before),
                     "after": _num(a.after), "gap": _num(a.gap), "ci_low": _num(a.ci_low), "ci_high": _num(a.ci_high),
                     "p": max(a.p, P_FLOOR), "q": max(a.q, P_FLOOR), "documents": a.documents})
    return rows


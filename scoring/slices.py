"""Where is a run weak, and is it real? A search over conjunctions of metadata conditions, tested with
documents as the unit, with false-discovery control and redundant slices folded away.
Pure: numpy and scipy only (no pandas, no streamlit).

    find_weak_slices(outcome, fields, clusters)       slices of one run whose score is below the rest's
    find_weak_pair_slices(new, old, fields, clusters)  slices where the new run lost more than elsewhere
    prepare(...) / run_search(prepared)               the same in two steps (scoring/slice_worker.py runs
                                                      the second in a worker process with a memory limit)
    question_fields(gold)                             the breakdown fields of gold questions, as `fields`
                                                      (the finder's full list: scoring/slice_fields.py)
    conditions(fields, n)                             its slices of one condition, with their questions
    gap_test(y, clusters, in_a, in_b)                 the two-group test behind every number (one pair)

The search
----------
A *condition* is `field = value`; a question is in it when its field has that value (a multi-valued
field such as evidence_source puts a question in the slice of each of its values). A *slice* is a
conjunction of 1 to `max_conditions` (default 3) conditions on different fields. A condition that
holds for every question is no slice, and a field left without a condition (one value everywhere,
e.g. all "unknown") is not a field (`SliceSearch.skipped_fields`). A slice is tested only when it
holds at least `min_questions` questions (default max(30, 0.5 % of the questions)) AND at least
`min_documents` documents (default 20), and each side -- the slice and the rest of the run -- holds at
least 2 documents (MIN_SIDE_DOCUMENTS: the t test has min(G_S, G_rest) - 1 degrees of freedom, none
with one document): a slice whose rest is one document is not tested and not counted among the
slices tested. Both thresholds only shrink as conditions are added, so the search stops extending a
conjunction that misses them. A conjunction holding exactly the questions of one of its parents (an
added condition that every question of the parent meets) is the same slice under a longer name: it
is not tested again.

The candidate space is capped, whatever the number of fields and values (issue 35.3): every testable
condition of every field is a candidate (fields x values, linear), but conjunctions are made only of
the `max_fields` (MAX_CONJUNCTION_FIELDS, 16) fields that split the questions best -- ranked by the
entropy of their testable conditions' shares, -sum s log s, which the outcome does not enter (so the
choice does not look at where the run is weak) -- the best-ranked combinations first, and the search
stops at `max_slices` (MAX_CONJUNCTIONS, 20,000) conjunctions or `max_members` (MAX_MEMBERS) questions
held by all candidates together. `SliceSearch.fields_text()` names the fields tested, those left out
of conjunctions and what a cap stopped; the scan runs over chunks of SCAN_CHUNK positions. At 20,000
questions this bounds a search to about 1.5 CPU-s and 300 MB of peak RSS (bench/bench_slices.py, 8 to 200
fields).

The test (one slice)
--------------------
Outcome y per question: a run's score on it (run mode) or the paired difference new - old (pair
mode). The effect of slice S is the gap between S and the REST of the run (not the overall mean):
gap = mean(y | S) - mean(y | not S), the slope of the OLS regression of y on the indicator of S.
Its variance is cluster-robust (CR1) with documents as clusters (a question's cluster is the first
document its gold names; a question naming none is its own cluster):

    u_g  = sum_{i in g, S} (y_i - ybar_S) / n_S  -  sum_{i in g, not S} (y_i - ybar_rest) / n_rest
    SE^2 = G/(G-1) * (N-1)/(N-2) * sum_g u_g^2

(the sandwich for the slope of a regression on one indicator, Stata's small-sample factor). The
statistic gap/SE is referred to Student's t with min(G_S, G_rest) - 1 degrees of freedom (G_S:
documents holding a question of S; G_rest: documents holding a question outside S), not G - 1: with
the slice in few documents the CR1 variance rests on those few, and G - 1 would over-reject.
p is ONE-sided (H1: the slice is weaker, gap < 0); the interval is two-sided at `confidence`.
"Excess failures" = n_S x (-gap): how many more failures (Accuracy) or score points the slice has
than the same questions would have at the rest's level; positive for a weak slice.

All candidate slices are computed together: the questions are ordered by document once; each
slice's members (sorted positions) are concatenated, so (slice, document) keys come out sorted and
`np.add.reduceat` gives the per-document sums of y and counts of every slice in one pass; documents
a slice does not touch enter through precomputed totals (sum T_g^2, sum T_g N_g, sum N_g^2), so a
slice's variance costs O(its documents).

Multiplicity: Benjamini-Hochberg at `fdr` (default 0.05) over every slice tested
(`scipy.stats.false_discovery_control`), or Benjamini-Yekutieli (`method="by"`, valid under any
dependence; the slices overlap, so their tests are dependent). A slice is *significant* when q < fdr.

Intervals of found slices: a significant slice was chosen because its gap looked large, so the
interval computed as if it had been named in advance is too narrow and its gap too far from 0 (in a
simulation at modest power the naive 95 % interval of the slices found covered the truth in 76.5 %
of cases). A found slice's interval is the false-coverage-rate adjusted one of Benjamini and
Yekutieli (2005): with R slices selected out of m tested, each end holds at level 1 - R q / m
(`adjusted_tail`; q / sum_{i<=m} 1/i in place of q under "by", as its q-values), so that across the
slices found the share whose interval misses its true gap is at most q. Each end is one-sided like
the test, so the interval's upper end lies below 0 exactly when the slice's q is below fdr: the
decision and the interval agree. `Slice.ci_low`/`ci_high` are these (`adjusted` True);
`ci_low_named`/`ci_high_named` keep the interval at `confidence` as if named in advance, shown only
for a slice that was (`named`: a one-condition slice of a field the caller names, the dashboard's
saved slices). Slices not found keep the unadjusted interval. tests/test_slices.py checks the
coverage of both by simulation with a known truth.

Redundancy: which slice explains which
--------------------------------------
A parent of a slice is the slice with one of its conditions left out. "Still weak" below means a
one-sided p (same kind of test, documents as clusters) at most a bar (both bars are `fold_alpha`
when it is given):

- for a slice against a slice that contains it or that it contains (rules 1 and 2, and rule 4 for a
  slice inside an accepted one), the NESTED bar: the smaller of the discoveries' cut-off (the largest
  p among the significant slices: what BH/BY let through) and fdr / (number of significant slices).
  A broad weakness makes hundreds of significant slices inside it, so hundreds of such decisions; a
  nominal 0.05 -- or the discoveries' cut-off, which grows with them -- would keep some of them by
  chance as "weaker still";
- for a slice that merely overlaps accepted ones (rule 4 otherwise), the discoveries' cut-off: a
  slice whose own effect, beyond those it overlaps, would still be a discovery stays one.

Among significant slices:

1. Child rule (a weakness its parent already explains). Child C of a significant parent P is tested
   against the rest of P: C against P without C. If C is not still weaker there, P explains C: C is
   folded under P (under the parent with the largest such p when several do).
2. Parent rule (a parent weak only because of one child). For a significant slice P, each of its
   significant children C (except one already folded under P by rule 1) is removed: the remainder
   P without C is tested against the questions in neither P nor C. The best child is the one leaving
   the least evidence (largest p). If that remainder is not still weak, P is weak only because of C:
   P is folded under C.
3. Folding is followed to its end (C under P under C' ...). The edges cannot loop in practice (rule 1
   goes up only from a slice rule 1 folds, rule 2 never down to a slice rule 1 folded under that
   parent); should a loop ever form, the best-ranked slice on it is kept.
4. Overlap rule (rules 1-2 see only parents and children, and a weakness of three conditions has
   overlapping slices whose common child would need four). The slices still kept, taken by p
   (smallest first), are accepted one by one. A slice S overlapping accepted slices K1..Km is tested
   for a weakness of its own beyond them: OLS of y on an intercept and the indicators of K1..Km and
   S (CR1 by document, S's coefficient, one-sided). If S is not still weak there, it is explained by
   the accepted slices it overlaps and is folded under the one it shares most questions with. (For S
   inside one K this is rule 1's test, S against the rest of K: a weakness nested in a broader one --
   counting weak, counting over charts weaker still -- keeps both; for S partly in K it asks whether S
   without K is weak, and several weaknesses S straddles are accounted for together.)
Every folded slice is listed under the kept slice it leads to, which "explains k others".

So with one planted weakness (counting questions over charts), "counting" and "chart" fold under
"counting & chart" (without it neither is weak: rule 2), "counting & chart & domain=X" folds under it
(within counting & chart, domain X is no weaker: rule 1), "counting & domain=X" folds under
"counting & domain=X & chart" (rule 2) and from there under "counting & chart" (rule 1), and
"chart & position=first third & doc_type=paper" (whose child with counting has four conditions) folds
under "counting & chart" by rule 4.

Ranking: kept slices by the excess failures the (adjusted) interval still guarantees, n_S x (-ci_high)
(largest first; a big slice with a small, uncertain gap does not outrank a sharp smaller one), then by p.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import deferred
from .registry import MIN_DOCUMENTS

MIN_QUESTIONS = 30
MIN_SHARE = 0.005  # of the questions: the minimum slice size is max(MIN_QUESTIONS, MIN_SHARE x N)
FDR = 0.05
METHODS = ("bh", "by")
SEP = " & "
MIN_SIDE_DOCUMENTS = 2  # documents each side of a test needs (t with min(G_slice, G_rest) - 1 >= 1 df)
MAX_CONJUNCTION_FIELDS = 16  # conjunctions are made of the fields that split the questions best, this many
MAX_CONJUNCTIONS = 20_000  # candidate conjunctions of 2-3 conditions at most
MAX_MEMBERS = 16_000_000  # questions held by all candidate slices together (int32 positions: 64 MB)

Value = Any  # a label (str), None (no value), or a list/tuple/set of labels (multi-valued field)


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Slice:
    """One tested slice. `conditions`: ((field, value), ...) in the order of the fields given."""

    conditions: tuple[tuple[str, str], ...]
    n: int
    documents: int
    gap: float
    ci_low: float
    ci_high: float
    se: float
    df: int
    p: float
    q: float
    score_slice: float
    score_rest: float
    explains: tuple[str, ...] = ()  # names of the significant slices folded under this one
    folded_under: str = ""  # the kept slice this one is folded under ("" when kept or not significant)
    adjusted: bool = False  # ci_low/ci_high adjusted for the search (a found slice); else as if named in advance
    ci_low_named: float = math.nan  # the interval at `confidence` as if the slice had been named in advance
    ci_high_named: float = math.nan

    @property
    def name(self) -> str:
        """`field=value & field=value`."""
        return slice_name(self.conditions)

    @property
    def label(self) -> str:
        """The conditions in words: `Answer format: Int & Evidence pages: 3–5`."""
        from .slice_fields import describe

        return describe(self.conditions)

    @property
    def excess_failures(self) -> float:
        """n x (score of the rest - score of the slice): positive for a weak slice."""
        return -self.n * self.gap

    @property
    def guaranteed_excess(self) -> float:
        """n x (-ci_high), at least 0: the excess failures the interval still guarantees."""
        return max(0.0, -self.n * self.ci_high)


@dataclass
class SliceSearch:
    """The finder's answer. `weak`: the kept significant slices, ranked (see the module docstring);
    `folded`: the significant slices folded under one of them; `tested`: how many slices were tested
    (the multiplicity BH/BY corrected for)."""

    weak: list[Slice]
    folded: list[Slice]
    tested: int
    questions: int
    units: int
    unit: str
    min_questions: int
    min_documents: int
    fdr: float
    method: str
    mode: str  # "run" or "pair"
    fields: tuple[str, ...]
    skipped_fields: tuple[str, ...]
    table: dict[str, Any] = field(default_factory=dict, repr=False)  # every slice tested, as arrays (`all_slices`)
    untestable_fields: tuple[str, ...] = ()  # fields none of whose values holds the questions and documents a test needs
    conjunction_fields: tuple[str, ...] = ()  # the fields conjunctions were made of (the best-splitting, capped)
    ranked_fields: tuple[str, ...] = ()  # the testable fields, best-splitting first
    capped: str = ""  # what the cap on conjunctions left untested, in words ("" for nothing)
    max_conditions: int = 3
    max_fields: int = MAX_CONJUNCTION_FIELDS
    max_slices: int = MAX_CONJUNCTIONS
    adjusted_tail: float = math.nan  # R q / m: the error each end of a found slice's interval is allowed
    confidence: float = 0.95  # the level of an interval as if named in advance
    ranges: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)  # FieldSet.ranges
    left_out: dict[str, str] = field(default_factory=dict, repr=False)  # FieldSet.left_out

    @property
    def significant(self) -> int:
        return len(self.weak) + len(self.folded)

    @property
    def all_slices(self) -> list[Slice]:
        """Every slice tested, in the order enumerated (built from `table` when asked for: the search
        hands back arrays, cheap to keep and to send from a worker process)."""
        t = self.table
        if not t:
            return []
        return [Slice(c, int(t["n"][i]), int(t["documents"][i]), float(t["gap"][i]), float(t["ci_low"][i]),
                      float(t["ci_high"][i]), float(t["se"][i]), int(t["df"][i]), float(t["p"][i]), float(t["q"][i]),
                      float(t["score_slice"][i]), float(t["score_rest"][i]), (), "", bool(t["adjusted"][i]),
                      float(t["ci_low_named"][i]), float(t["ci_high_named"][i])) for i, c in enumerate(t["conditions"])]

    @property
    def adjusted_level(self) -> float:
        """The level each end of a found slice's interval holds at: 1 - R q / m (nan: nothing found)."""
        return 1.0 - self.adjusted_tail

    def raw_values(self, name: str, value: str) -> list[str]:
        """The field's values a condition stands for: a numeric range's values, else the value itself."""
        return list(self.ranges.get(name, {}).get(value, (value,)))

    def interval_text(self) -> str:
        """How a found slice's interval was made, in words with its level (empty when nothing was found)."""
        if not self.significant:
            return ""
        how = "" if self.method == "bh" else " / H(m)"
        return (f"adjusted for the search (false-coverage rate, Benjamini-Yekutieli): each end at level 1 - R q / m{how} "
                f"= 1 - {self.significant:,} x {self.fdr:g} / {self.tested:,}{how} = {_level_text(self.adjusted_level)}, "
                f"so a slice found weak has its whole interval below 0")

    def fields_text(self) -> str:
        """Which fields were tested, in words, and the cap on conjunctions (no user text but field names)."""
        from .slice_fields import field_label

        tested = [f for f in self.fields if f not in self.untestable_fields]
        out = f"fields tested ({len(tested)}): " + ", ".join(field_label(f) for f in tested)
        if self.skipped_fields:
            out += "; one value for every question: " + ", ".join(field_label(f) for f in self.skipped_fields)
        if self.untestable_fields:
            out += (f"; no value holds {self.min_questions:,} questions in {self.min_documents:,} {self.unit}s: "
                    + ", ".join(field_label(f) for f in self.untestable_fields))
        if self.left_out:
            out += "; not fields: " + ", ".join(f"{field_label(f)} ({why})" for f, why in self.left_out.items())
        if self.max_conditions > 1 and len(self.ranked_fields) > len(self.conjunction_fields):
            out += (f"; conjunctions over the {len(self.conjunction_fields)} fields that split the questions best "
                    f"(of {len(self.ranked_fields)}; the cap is {self.max_fields})")
        if self.capped:
            out += f"; {self.capped}"
        return out

    def summary(self) -> str:
        """One line: what was tested and what was found, with the unit."""
        how = "Benjamini-Hochberg" if self.method == "bh" else "Benjamini-Yekutieli"
        head = (f"{self.tested:,} slices tested ({self.questions:,} questions in {self.units:,} {self.unit}s; "
                f"each slice >= {self.min_questions} questions and >= {self.min_documents} {self.unit}s; "
                f"{how} q < {self.fdr:g})")
        if not self.tested:
            return head + ": no slice is large enough to be tested (not enough evidence)"
        if not self.weak:
            return head + ": no slice is weaker than the rest beyond chance (not enough evidence)"
        return head + f": {len(self.weak)} weak slice(s), {len(self.folded)} more folded under them"


def _level_text(level: float) -> str:
    """99.96 %: enough digits to tell the level from 100 %."""
    if math.isnan(level):
        return "-"
    digits = max(1, min(6, -math.floor(math.log10(max(1e-12, 100 * (1 - level))))))
    return f"{100 * level:.{digits}f} %"


def slice_name(conditions: Sequence[tuple[str, str]]) -> str:
    return SEP.join(f"{f}={v}" for f, v in conditions)


# ----------------------------------------------------------------------------- the test


def _t_numbers(gap: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(one-sided p of gap < 0, ci_low, ci_high) for arrays; se == 0 gives an exact verdict."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = df >= 1
        dff = np.where(ok, df, 1).astype(float)
        t = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.where(gap < 0, -np.inf, np.where(gap > 0, np.inf, 0.0)))
        p = deferred.stats().t.cdf(t, dff)
        p = np.where((se == 0) & (gap == 0), 1.0, p)
        half = deferred.stats().t.ppf(0.5 + confidence / 2, dff) * se
        p = np.where(ok, p, np.nan)
        return p, np.where(ok, gap - half, np.nan), np.where(ok, gap + half, np.nan)


@dataclass(frozen=True)
class GapTest:
    gap: float
    se: float
    df: int
    p: float  # one-sided, gap < 0
    ci_low: float
    ci_high: float
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float


def _cluster_codes(clusters: Any, n: int) -> np.ndarray:
    """Codes 0..G-1 from a `scoring.stats.Clusters` (its `.codes`), integer codes or any labels."""
    raw = getattr(clusters, "codes", clusters)
    arr = np.asarray(raw)
    if arr.shape != (n,):
        raise ValueError(f"clusters must hold one entry per question: got shape {arr.shape} for {n} questions")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    _, codes = np.unique(arr if arr.dtype.kind in "iub" else arr.astype(str), return_inverse=True)
    return codes.ravel().astype(np.int64)


def _two_group(y: np.ndarray, doc: np.ndarray, g: int, ia: np.ndarray, ib: np.ndarray, confidence: float) -> GapTest:
    """Group a (positions ia) against group b (positions ib, disjoint): OLS slope of y on the
    indicator of a over a and b, CR1 by document, t with min(G_a, G_b) - 1 df, one-sided p (a weaker)."""
    na, nb = ia.size, ib.size
    if na == 0 or nb == 0:
        return GapTest(math.nan, math.nan, 0, 1.0, math.nan, math.nan, na, nb, math.nan, math.nan)
    ya, yb = y[ia], y[ib]
    ma, mb = float(ya.mean()), float(yb.mean())
    da, db = doc[ia], doc[ib]
    ca, cb = np.bincount(da, minlength=g), np.bincount(db, minlength=g)
    u = np.bincount(da, weights=ya - ma, minlength=g) / na - np.bincount(db, weights=yb - mb, minlength=g) / nb
    clusters = int(np.count_nonzero((ca + cb) > 0))
    n = na + nb
    factor = clusters / (clusters - 1) * (n - 1) / (n - 2) if clusters > 1 and n > 2 else math.nan
    se = math.sqrt(factor * float(u @ u)) if not math.isnan(factor) else math.nan
    df = min(int(np.count_nonzero(ca)), int(np.count_nonzero(cb))) - 1
    gap = ma - mb
    if math.isnan(se):
        return GapTest(gap, se, df, 1.0, math.nan, math.nan, na, nb, ma, mb)
    p, lo, hi = _t_numbers(np.array([gap]), np.array([se]), np.array([df]), confidence)
    pv = float(p[0])
    return GapTest(gap, se, df, 1.0 if math.isnan(pv) else pv, float(lo[0]), float(hi[0]), na, nb, ma, mb)


def gap_test(y: Sequence[float] | np.ndarray, clusters: Any, in_a: Sequence[bool] | np.ndarray,
             in_b: Sequence[bool] | np.ndarray | None = None, *, confidence: float = 0.95) -> GapTest:
    """The finder's test for one slice: questions in_a against in_b (default: every other question),
    gap = mean_a - mean_b, CR1 standard error by document, t with min(G_a, G_b) - 1 df, one-sided p
    of "a is weaker" and a two-sided interval at `confidence`."""
    yy = np.asarray(y, dtype=float)
    codes = _cluster_codes(clusters, yy.size)
    a = np.asarray(in_a, dtype=bool)
    b = ~a if in_b is None else np.asarray(in_b, dtype=bool) & ~a
    g = int(codes.max()) + 1 if codes.size else 0
    return _two_group(yy, codes, g, np.flatnonzero(a), np.flatnonzero(b), confidence)


# ----------------------------------------------------------------------------- fields


@dataclass
class _Conditions:
    """Every condition field = value that splits the questions, as sorted positions (questions in
    document order), and the fields kept and skipped."""

    field: list[str]
    value: list[str]
    members: list[np.ndarray]  # int32 positions, sorted
    kept: list[str]
    skipped: list[str]


def _labels_of(v: Value) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,)
    if isinstance(v, (list, tuple, set, frozenset)):
        return tuple(dict.fromkeys(str(x) for x in v if x is not None))
    return (str(v),)


def _encode(column: Sequence[Value], rank: np.ndarray) -> dict[str, np.ndarray]:
    """label -> sorted positions (in document order) of the questions holding it. Distinct values
    are found by hashing (C speed), so a field costs O(questions), not O(questions x values)."""
    try:
        index = {v: i for i, v in enumerate(dict.fromkeys(column))}
    except TypeError:  # an unhashable value (a list): as a tuple
        column = [tuple(v) if isinstance(v, (list, set, frozenset)) else v for v in column]
        index = {v: i for i, v in enumerate(dict.fromkeys(column))}
    codes = np.fromiter(map(index.__getitem__, column), dtype=np.int64, count=len(column))
    label_id: dict[str, int] = {}
    per_code = [[label_id.setdefault(lab, len(label_id)) for lab in _labels_of(v)] for v in index]
    if not label_id:
        return {}
    counts = np.fromiter((len(x) for x in per_code), dtype=np.int64, count=len(per_code))
    flat = np.fromiter((x for xs in per_code for x in xs), dtype=np.int64, count=int(counts.sum()))
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rep = counts[codes]  # labels per question
    questions = np.repeat(rank, rep)
    first = np.repeat(offsets[codes], rep)
    within = np.arange(int(rep.sum())) - np.repeat(np.cumsum(rep) - rep, rep)
    labs = flat[first + within]
    order = np.lexsort((questions, labs))
    labs, questions = labs[order], questions[order]
    cuts = np.flatnonzero(np.diff(labs)) + 1
    names = list(label_id)
    return {names[int(labs[s])]: part.astype(np.int32) for s, part in zip(np.concatenate([[0], cuts]), np.split(questions, cuts))}


def _condition_members(fields: Mapping[str, Sequence[Value]], order: np.ndarray) -> _Conditions:
    """Every condition field = value with its questions (positions in `order`), the fields kept and
    the fields skipped (no condition that splits the questions)."""
    n = order.size
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    out = _Conditions([], [], [], [], [])
    for name, column in fields.items():
        found = _field_conditions(name, column, rank)
        for value, pos in found:
            out.field.append(name)
            out.value.append(value)
            out.members.append(pos)
        (out.kept if found else out.skipped).append(name)
    return out


def _field_conditions(name: str, column: Sequence[Value], rank: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """One field's conditions: (value, positions) in value order, but a value held by every question or none."""
    n = rank.size
    if len(column) != n:
        raise ValueError(f"field {name!r} has {len(column)} values for {n} questions")
    return [(value, pos) for value, pos in sorted(_encode(column, rank).items()) if pos.size not in (0, n)]


def each_condition(fields: Mapping[str, Sequence[Value]] | Any, n: int) -> Iterator[tuple[str, str, np.ndarray]]:
    """Every condition field = value that splits these n questions -- the finder's slices of one
    condition, by the finder's rule (a value held by some but not every question; a multi-valued
    field puts a question in the slice of each of its values) -- as (field, value, positions of its
    questions, ascending), in field order and each field's values sorted. `fields` as
    `find_weak_slices` takes them. A field is encoded when the one before it is used up, so the
    per-slice paired table (scoring/paired_slices.py) starts on a field's slices while the next is read."""
    rank = np.arange(int(n))
    for name, column in getattr(fields, "columns", fields).items():
        for value, pos in _field_conditions(name, column, rank):
            yield name, value, pos


def conditions(fields: Mapping[str, Sequence[Value]] | Any, n: int) -> list[tuple[str, str, np.ndarray]]:
    """`each_condition`, as a list."""
    return list(each_condition(fields, n))


def question_fields(gold: Sequence[Any], extra: Mapping[str, Sequence[Value]] | None = None) -> dict[str, list[Value]]:
    """The breakdown fields of gold questions (`scoring.model.GoldQuestion`) with the product's names
    (split, reasoning_type, evidence_source, answer_format, domain, difficulty, doc_type, page_category
    when the gold has it), then `extra`: `scoring.slice_fields.slice_fields` without the other metadata
    keys. The finder's fields on the command line and the dashboard are `slice_fields`' in full."""
    from .slice_fields import slice_fields

    return slice_fields(gold, extra=extra, metadata=False).columns


# ----------------------------------------------------------------------------- the search


def _docs_of(sorted_docs: np.ndarray) -> int:
    return 0 if not sorted_docs.size else 1 + int(np.count_nonzero(sorted_docs[1:] != sorted_docs[:-1]))


@dataclass
class _Space:
    """The candidate slices: condition indices (in field order) and sorted positions, the fields
    ranked and the ones conjunctions are made of, and what a cap left out (words, "" for nothing)."""

    keys: list[tuple[int, ...]]
    members: list[np.ndarray]
    ranked: list[str]
    conjunction_fields: list[str]
    untestable: list[str]
    capped: str


def _enumerate(conds: _Conditions, doc: np.ndarray, min_q: int, min_d: int, max_conditions: int,
               max_fields: int, max_slices: int, max_members: int) -> _Space:
    """The candidates: every testable condition (both thresholds met) of every field; then
    conjunctions of 2..max_conditions conditions on different fields among the `max_fields` fields
    that split the questions best (the entropy of their testable conditions' shares: many even
    slices first), the best-ranked combinations first, until `max_slices` candidates or
    `max_members` positions in all are reached. A conjunction holding exactly the questions of one of
    its parents is its parent under a longer name: not a candidate."""
    n = doc.size
    order_of = {f: i for i, f in enumerate(conds.kept)}
    testable: list[int] = []
    for k, idx in enumerate(conds.members):
        if idx.size >= min_q and idx.size < n and _docs_of(doc[idx]) >= min_d:
            testable.append(k)
    score: dict[str, float] = {}
    for k in testable:
        share = conds.members[k].size / n
        score[conds.field[k]] = score.get(conds.field[k], 0.0) - share * math.log(share)
    ranked = sorted(score, key=lambda f: (-score[f], order_of[f]))
    untestable = [f for f in conds.kept if f not in score]
    chosen = ranked[:max_fields] if max_conditions > 1 else []
    position = {f: i for i, f in enumerate(chosen)}
    keys: list[tuple[int, ...]] = [(k,) for k in testable]
    members: list[np.ndarray] = [conds.members[k] for k in testable]
    total = sum(m.size for m in members)
    size_of: dict[tuple[int, ...], int] = {(k,): conds.members[k].size for k in testable}
    singles = sorted((k for k in testable if conds.field[k] in position), key=lambda k: (position[conds.field[k]], k))
    masks: dict[int, np.ndarray] = {}
    for k in singles:
        mask = np.zeros(n, dtype=bool)
        mask[conds.members[k]] = True
        masks[k] = mask
    frontier: list[tuple[tuple[int, ...], np.ndarray]] = [((k,), conds.members[k]) for k in singles]
    # the singles of later-ranked fields start at after[field position]
    after = [next((j for j, c in enumerate(singles) if position[conds.field[c]] > p), len(singles)) for p in range(len(chosen))]
    conj = 0
    capped = ""
    for level in range(2, max_conditions + 1):
        nxt: list[tuple[tuple[int, ...], np.ndarray]] = []
        for key, idx in frontier:
            for c in singles[after[position[conds.field[key[-1]]]]:]:
                sub = idx[masks[c][idx]]
                if sub.size < min_q or _docs_of(doc[sub]) < min_d:
                    continue
                new = (*key, c)
                size_of[new] = sub.size
                # a parent with the same size holds the same questions: the same slice, a longer name
                if any(size_of.get(new[:j] + new[j + 1:], -1) == sub.size for j in range(len(new))):
                    continue
                if conj >= max_slices or total + sub.size > max_members:
                    what = f"{max_slices:,} conjunctions" if conj >= max_slices else f"{max_members:,} questions in all slices"
                    capped = f"the search stopped at the cap of {what}: some conjunctions of {level} conditions were not tested"
                    break
                canonical = tuple(sorted(new, key=lambda x: (order_of[conds.field[x]], x)))
                keys.append(canonical)
                members.append(sub)
                nxt.append((new, sub))
                total += sub.size
                conj += 1
            if capped:
                break
        frontier = nxt
        if capped:
            break
    return _Space(keys, members, ranked, chosen, untestable, capped)


SCAN_CHUNK = 2_000_000  # positions per vectorised pass of the scan (bounds its temporary arrays)


def _scan(y: np.ndarray, doc: np.ndarray, g: int, members: list[np.ndarray], confidence: float) -> dict[str, np.ndarray]:
    """Gap, CR1 SE, df, p and interval of every slice against its rest, vectorised over chunks of
    slices (module docstring)."""
    k = len(members)
    sizes = np.fromiter((m.size for m in members), dtype=np.int64, count=k)
    keys = ("gap", "se", "score_slice", "score_rest")
    out: dict[str, np.ndarray] = {"n": sizes, **{x: np.zeros(k) for x in keys},
                                  "documents": np.zeros(k, dtype=np.int64), "rest_documents": np.zeros(k, dtype=np.int64)}
    T = np.bincount(doc, weights=y, minlength=g)
    N = np.bincount(doc, minlength=g).astype(float)
    start = 0
    while start < k:
        stop, held = start, 0
        while stop < k and (stop == start or held + sizes[stop] <= SCAN_CHUNK):
            held += int(sizes[stop])
            stop += 1
        part = _scan_part(y, doc, g, members[start:stop], sizes[start:stop], T, N)
        for x, v in part.items():
            out[x][start:stop] = v
        start = stop
    df = np.minimum(out["documents"], out["rest_documents"]) - 1
    p, lo, hi = _t_numbers(out["gap"], out["se"], df, confidence)
    out.update(df=df, p=np.where(np.isnan(p), 1.0, p), ci_low=lo, ci_high=hi)
    return out


def _scan_part(y: np.ndarray, doc: np.ndarray, g: int, members: list[np.ndarray], sizes: np.ndarray,
               T: np.ndarray, N: np.ndarray) -> dict[str, np.ndarray]:
    n = y.size
    k = len(members)
    idx = np.concatenate(members)
    sl = np.repeat(np.arange(k, dtype=np.int64), sizes)
    key = sl * g + doc[idx]  # nondecreasing: slices in order, each slice's members in document order
    starts = np.concatenate([[0], np.flatnonzero(key[1:] != key[:-1]) + 1])
    sums = np.add.reduceat(y[idx], starts)
    cnts = np.diff(np.append(starts, idx.size)).astype(float)
    ps, pd_ = sl[starts], doc[idx][starts]
    del idx, sl, key
    total = float(y.sum())
    n1 = sizes.astype(float)
    n0 = n - n1
    s1 = np.bincount(ps, weights=sums, minlength=k)
    m1 = s1 / n1
    m0 = (total - s1) / n0
    a = sums - cnts * m1[ps]
    b = (T[pd_] - sums) - (N[pd_] - cnts) * m0[ps]
    touched = np.bincount(ps, weights=(a / n1[ps] - b / n0[ps]) ** 2, minlength=k)
    # documents the slice does not touch: u_g = -(T_g - N_g m0) / n0
    rest_t = np.bincount(ps, weights=(T[pd_] - N[pd_] * m0[ps]) ** 2, minlength=k)
    all_t = float(T @ T) - 2 * m0 * float(T @ N) + m0 ** 2 * float(N @ N)
    untouched = np.clip(all_t - rest_t, 0.0, None) / n0 ** 2
    g1 = np.bincount(ps, minlength=k)
    full = np.bincount(ps, weights=(cnts == N[pd_]).astype(float), minlength=k)  # documents wholly in the slice
    factor = g / (g - 1) * (n - 1) / (n - 2) if g > 1 and n > 2 else math.nan
    return {"gap": m1 - m0, "se": np.sqrt(factor * (touched + untouched)), "score_slice": m1, "score_rest": m0,
            "documents": g1, "rest_documents": g - full.astype(np.int64)}


def _harmonic(m: int) -> float:
    return float(np.sum(1.0 / np.arange(1, m + 1))) if m else 1.0


def adjusted_tail(selected: int, tested: int, fdr: float, method: str = "bh") -> float:
    """The error each end of a found slice's interval is allowed (Benjamini & Yekutieli 2005, the
    false-coverage-rate adjustment): R q / m, over the harmonic sum of m under "by" (as its q)."""
    if not selected or not tested:
        return math.nan
    return selected * fdr / (tested * (_harmonic(tested) if method == "by" else 1.0))


@dataclass
class Prepared:
    """A search read and checked, ready to run here or in a worker process (`run_search`): the
    outcome and the document codes in document order, the conditions with their questions, and
    the options. Its size is that of the input (no candidate slice yet)."""

    y: np.ndarray
    doc: np.ndarray
    g: int
    conds: _Conditions
    min_q: int
    min_d: int
    unit: str
    ranges: dict[str, dict[str, tuple[str, ...]]]
    left_out: dict[str, str]
    options: dict[str, Any]


def prepare(outcome: Sequence[float] | np.ndarray, fields: Mapping[str, Sequence[Value]] | Any, clusters: Any, *,
            fdr: float = FDR, method: str = "bh", min_questions: int | None = None,
            min_documents: int = MIN_DOCUMENTS, max_conditions: int = 3, confidence: float = 0.95,
            fold_alpha: float | None = None, unit: str | None = None, mode: str = "run",
            named: Collection[str] = (), max_fields: int = MAX_CONJUNCTION_FIELDS,
            max_slices: int = MAX_CONJUNCTIONS, max_members: int = MAX_MEMBERS) -> Prepared:
    """`find_weak_slices`' arguments checked and its conditions read (the work that grows only with
    the input); `run_search` does the rest."""
    y0 = np.asarray(outcome, dtype=float)
    if y0.ndim != 1:
        raise ValueError(f"outcome must be one value per question, got shape {y0.shape}")
    if not np.all(np.isfinite(y0)):
        raise ValueError("outcome must be finite for every question")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0 < fdr < 1:
        raise ValueError(f"fdr must be in (0, 1), got {fdr}")
    if max_conditions < 1:
        raise ValueError("max_conditions must be >= 1")
    columns = getattr(fields, "columns", fields)
    n = y0.size
    codes = _cluster_codes(clusters, n)
    order = np.argsort(codes, kind="stable")
    return Prepared(
        y=y0[order], doc=codes[order], g=int(codes.max()) + 1 if n else 0, conds=_condition_members(columns, order),
        min_q=int(min_questions) if min_questions is not None else max(MIN_QUESTIONS, math.ceil(MIN_SHARE * n)),
        min_d=max(MIN_SIDE_DOCUMENTS, int(min_documents)), unit=unit or getattr(clusters, "unit", None) or "document",
        ranges=dict(getattr(fields, "ranges", {}) or {}), left_out=dict(getattr(fields, "left_out", {}) or {}),
        options=dict(fdr=fdr, method=method, min_documents=int(min_documents), max_conditions=max_conditions,
                     confidence=confidence, fold_alpha=fold_alpha, mode=mode, named=tuple(named), max_fields=max_fields,
                     max_slices=max_slices, max_members=max_members))


def find_weak_slices(outcome: Sequence[float] | np.ndarray, fields: Mapping[str, Sequence[Value]] | Any, clusters: Any, *,
                     progress: Callable[[float, str], object] | None = None, **options: Any) -> SliceSearch:
    """Search the slices of one run whose outcome (per-question score) is below the rest's; see the
    module docstring for the search, its caps, the test, the multiplicity control, the intervals of
    found slices and the folding rules. Options (`prepare`): fdr, method ("bh" or "by"),
    min_questions, min_documents, max_conditions, confidence, fold_alpha, unit, mode, named,
    max_fields, max_slices, max_members.

    `fields`: field name -> one value per question (a label, None for no value, or a list/tuple of
    labels for a multi-valued field), or a `scoring.slice_fields.FieldSet`. `clusters`: a
    `scoring.stats.Clusters`, or one document label or code per question. `unit` names the cluster
    unit in the summary (default: the Clusters' unit or "document"). `named`: fields whose slices
    were named before looking (the dashboard's saved slices): a slice of one condition on such a
    field keeps its unadjusted interval. `progress(fraction, what)`, when given, is called as the
    search goes (conditions read, slices enumerated, tested, folded)."""
    if progress is not None:
        progress(0.0, "reading the conditions")
    return run_search(prepare(outcome, fields, clusters, **options), progress)


def run_search(prep: Prepared, progress: Callable[[float, str], object] | None = None) -> SliceSearch:
    """The search of a `prepare`d input: candidates, tests, false-discovery control, intervals, folding."""
    o = prep.options
    fdr, method, confidence, mode = o["fdr"], o["method"], o["confidence"], o["mode"]
    max_conditions, max_fields, max_slices, fold_alpha = o["max_conditions"], o["max_fields"], o["max_slices"], o["fold_alpha"]
    y, doc, g, conds, min_q, min_d = prep.y, prep.doc, prep.g, prep.conds, prep.min_q, prep.min_d
    n, unit_name, ranges, left_out, named = y.size, prep.unit, prep.ranges, prep.left_out, o["named"]
    min_documents = o["min_documents"]

    def say(fraction: float, what: str) -> None:
        if progress is not None:
            progress(fraction, what)

    say(0.15, f"enumerating conjunctions of {len(conds.field)} conditions")
    space = _enumerate(conds, doc, min_q, min_d, max_conditions, max_fields, max_slices, o["max_members"])
    say(0.5, f"testing {len(space.keys):,} slices")
    r = _scan(y, doc, g, space.members, confidence)
    # a slice whose rest holds fewer than MIN_SIDE_DOCUMENTS documents has no test (t with < 1 df): not tested
    keep = np.flatnonzero(r["rest_documents"] >= MIN_SIDE_DOCUMENTS)
    if keep.size < len(space.keys):
        r = {x: v[keep] for x, v in r.items()}
        keys = [space.keys[i] for i in keep]
        members = [space.members[i] for i in keep]
    else:
        keys, members = space.keys, space.members
    k = len(keys)
    q = np.asarray(deferred.stats().false_discovery_control(r["p"], method=method), dtype=float) if k else np.zeros(0)
    conditions = [tuple((conds.field[c], conds.value[c]) for c in key) for key in keys]
    sig = [i for i in range(k) if q[i] < fdr]
    # found slices: intervals adjusted for the search, each end at 1 - R q / m (module docstring)
    tail = adjusted_tail(len(sig), k, fdr, method)
    named_set = set(named)
    lo, hi = r["ci_low"].copy(), r["ci_high"].copy()
    adjusted = np.zeros(k, dtype=bool)
    found = np.array([i for i in sig if not (len(conditions[i]) == 1 and conditions[i][0][0] in named_set)], dtype=np.int64)
    if found.size:
        df = np.maximum(r["df"][found], 1).astype(float)
        half = deferred.stats().t.ppf(1.0 - tail, df) * r["se"][found]
        lo[found], hi[found] = r["gap"][found] - half, r["gap"][found] + half
        adjusted[found] = True
    shown = dict(r, ci_low=lo, ci_high=hi)
    base = dict(tested=k, questions=n, units=g, unit=unit_name, min_questions=min_q, min_documents=int(min_documents),
                fdr=fdr, method=method, mode=mode, fields=tuple(conds.kept), skipped_fields=tuple(conds.skipped),
                untestable_fields=tuple(space.untestable), conjunction_fields=tuple(space.conjunction_fields),
                ranked_fields=tuple(space.ranked), capped=space.capped, max_conditions=max_conditions,
                max_fields=max_fields, max_slices=max_slices, adjusted_tail=tail, confidence=confidence,
                ranges=ranges, left_out=left_out)

    def make(i: int, explains: tuple[str, ...] = (), under: str = "") -> Slice:
        return Slice(conditions[i], int(r["n"][i]), int(r["documents"][i]), float(r["gap"][i]), float(lo[i]),
                     float(hi[i]), float(r["se"][i]), int(r["df"][i]), float(r["p"][i]), float(q[i]),
                     float(r["score_slice"][i]), float(r["score_rest"][i]), explains, under, bool(adjusted[i]),
                     float(r["ci_low"][i]), float(r["ci_high"][i]))

    say(0.8, f"folding {len(sig):,} significant slices")
    # the bars a slice must pass to stay a weakness of its own (module docstring, "Redundancy")
    cut = max((float(r["p"][i]) for i in sig), default=0.0)  # the discoveries' own: what BH/BY let through
    nested = fold_alpha if fold_alpha is not None else min(cut, fdr / max(1, len(sig)))
    overlap = fold_alpha if fold_alpha is not None else cut
    rep = _fold(sig, keys, members, y, doc, g, shown, confidence, nested, overlap)
    kept = [i for i in sig if rep[i] == i]
    under: dict[int, list[int]] = {i: [] for i in kept}
    for i in sig:
        if rep[i] != i:
            under[rep[i]].append(i)
    names = {i: slice_name(conditions[i]) for i in sig}
    weak = [make(i, tuple(names[j] for j in sorted(under[i], key=lambda j: r["p"][j]))) for i in kept]
    weak.sort(key=lambda s: (-s.guaranteed_excess, s.p, s.name))
    folded = sorted((make(i, under=names[rep[i]]) for i in sig if rep[i] != i), key=lambda s: (s.p, s.name))
    table: dict[str, Any] = {x: r[x] for x in ("n", "documents", "gap", "se", "df", "p", "score_slice", "score_rest")}
    table.update(q=q, ci_low=lo, ci_high=hi, adjusted=adjusted, ci_low_named=r["ci_low"], ci_high_named=r["ci_high"],
                 conditions=conditions)
    say(1.0, "done")
    return SliceSearch(weak=weak, folded=folded, table=table, **base)  # type: ignore[arg-type]


def _fold(sig: list[int], keys: list[tuple[int, ...]], members: list[np.ndarray], y: np.ndarray, doc: np.ndarray,
          g: int, r: dict[str, np.ndarray], confidence: float, alpha: float, overlap_alpha: float) -> dict[int, int]:
    """The kept slice each significant slice leads to (itself when kept): rules 1-3 of the module docstring."""
    index = {keys[i]: i for i in sig}
    n = y.size
    parents: dict[int, list[int]] = {}
    children: dict[int, list[int]] = {i: [] for i in sig}
    for i in sig:
        key = keys[i]
        ps = [index[key[:j] + key[j + 1:]] for j in range(len(key)) if len(key) > 1 and key[:j] + key[j + 1:] in index]
        parents[i] = ps
        for p in ps:
            children[p].append(i)
    up: dict[int, int] = {}
    for c in sig:  # rule 1: folded under the parent that explains it best
        best, best_p = -1, -1.0
        for p in parents[c]:
            rest = np.setdiff1d(members[p], members[c], assume_unique=True)
            t = _two_group(y, doc, g, members[c], rest, confidence)
            if t.p > alpha and t.p > best_p:
                best, best_p = p, t.p
        if best >= 0:
            up[c] = best
    down: dict[int, int] = {}
    everyone = np.ones(n, dtype=bool)
    for p in sig:  # rule 2: folded under the child it is weak only because of
        best, best_p = -1, -1.0
        for c in children[p]:
            if up.get(c) == p:
                continue
            remainder = np.setdiff1d(members[p], members[c], assume_unique=True)
            outside = everyone.copy()
            outside[members[p]] = False
            outside[members[c]] = False
            t = _two_group(y, doc, g, remainder, np.flatnonzero(outside), confidence)
            if t.p > alpha and t.p > best_p:
                best, best_p = c, t.p
        if best >= 0:
            down[p] = best
    edge = {**up, **down}  # a slice folded by both rules: rule 2 (towards the child that explains it)
    rank_key = {i: (-max(0.0, -float(r["n"][i]) * float(r["ci_high"][i])), float(r["p"][i])) for i in sig}
    walked: dict[int, int] = {}
    for start in list(edge):  # break any loop at its best-ranked slice
        path: list[int] = []
        j = start
        while j in edge and j not in walked:
            walked[j] = start
            path.append(j)
            j = edge[j]
        if j in edge and walked.get(j) == start:
            edge.pop(min(path[path.index(j):], key=lambda x: rank_key[x]))
    rep = _follow(sig, edge)
    # rule 4: a kept slice weak only through the accepted slices it overlaps (jointly)
    accepted: list[int] = []
    for i in sorted((i for i in sig if rep[i] == i), key=lambda x: (float(r["p"][x]), x)):
        shared = {k: np.intersect1d(members[i], members[k], assume_unique=True).size for k in accepted}
        overlapping = [k for k in accepted if shared[k]]
        inside = any(shared[k] == members[i].size for k in overlapping)  # a nested decision, as rule 1's
        if overlapping and _partial_p(y, doc, g, [members[k] for k in overlapping], members[i]) > (
                alpha if inside else overlap_alpha):
            edge[i] = max(overlapping, key=lambda k: (shared[k], -float(r["p"][k])))
        else:
            accepted.append(i)
    return _follow(sig, edge)


def _partial_p(y: np.ndarray, doc: np.ndarray, g: int, covariates: list[np.ndarray], target: np.ndarray) -> float:
    """One-sided p that slice `target` is weaker once the slices `covariates` are accounted for: OLS of
    y on an intercept, the covariates' indicators and the target's, CR1 variance by document (Stata's
    factor G/(G-1) (N-1)/(N-k)), the target's coefficient referred to t with min(G_target, G_other) - 1
    df. 1.0 when the target is a combination of the covariates (nothing of its own to test)."""
    n = y.size
    X = np.zeros((n, len(covariates) + 2))
    X[:, 0] = 1.0
    for j, idx in enumerate([*covariates, target], start=1):
        X[idx, j] = 1.0
    xtx = X.T @ X
    if np.linalg.matrix_rank(xtx) < X.shape[1]:
        return 1.0
    bread = np.linalg.inv(xtx)
    beta = bread @ (X.T @ y)
    e = y - X @ beta
    scores = np.column_stack([np.bincount(doc, weights=X[:, j] * e, minlength=g) for j in range(X.shape[1])])
    k = X.shape[1]
    factor = g / (g - 1) * (n - 1) / (n - k) if g > 1 and n > k else math.nan
    var = factor * float((bread @ (scores.T @ scores) @ bread)[-1, -1])
    in_target = np.bincount(doc[target], minlength=g) > 0
    outside = np.bincount(doc, minlength=g) - np.bincount(doc[target], minlength=g) > 0
    df = min(int(in_target.sum()), int(outside.sum())) - 1
    if not (var > 0) or df < 1:
        return 1.0 if not beta[-1] < 0 or df < 1 else 0.0
    return float(deferred.stats().t.cdf(beta[-1] / math.sqrt(var), df))


def _follow(sig: list[int], edge: dict[int, int]) -> dict[int, int]:
    """Where each slice's folding edges end (edges hold no loop)."""
    rep: dict[int, int] = {}
    for i in sig:
        path = []
        j = i
        while j in edge and j not in rep:
            path.append(j)
            j = edge[j]
        end = rep.get(j, j)
        for x in path:
            rep[x] = end
        rep.setdefault(i, end)
    return rep


def find_weak_pair_slices(new: Sequence[float] | np.ndarray, old: Sequence[float] | np.ndarray,
                          fields: Mapping[str, Sequence[Value]] | Any, clusters: Any, **options: Any) -> SliceSearch:
    """Pair mode: "where did the new run get worse?" The outcome is the paired difference new - old
    on each question, and a slice's gap is its mean difference minus the rest's: a slice where the
    new run lost more (or gained less) than on the other questions. Same search, test, thresholds and
    folding as `find_weak_slices` (options are passed on)."""
    a = np.asarray(new, dtype=float)
    b = np.asarray(old, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"new and old must be paired, got shapes {a.shape} and {b.shape}")
    return find_weak_slices(a - b, fields, clusters, mode="pair", **options)

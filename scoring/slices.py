"""Where is a run weak, and is it real? A search over conjunctions of metadata conditions, tested with
documents as the unit, with false-discovery control and redundant slices folded away.
Pure: numpy and scipy only (no pandas, no streamlit).

    find_weak_slices(outcome, fields, clusters)       slices of one run whose score is below the rest's
    find_weak_pair_slices(new, old, fields, clusters)  slices where the new run lost more than elsewhere
    question_fields(gold)                             the breakdown fields of gold questions, as `fields`
    gap_test(y, clusters, in_a, in_b)                 the two-group test behind every number (one pair)

The search
----------
A *condition* is `field = value`; a question is in it when its field has that value (a multi-valued
field such as evidence_source puts a question in the slice of each of its values). A *slice* is a
conjunction of 1 to `max_conditions` (default 3) conditions on different fields. A condition that
holds for every question is no slice, and a field left without a condition (one value everywhere,
e.g. all "unknown") is not a field (`SliceSearch.skipped_fields`). A slice is tested only when it
holds at least `min_questions` questions (default max(30, 0.5 % of the questions)) AND at least
`min_documents` documents (default 20), and the rest of the run holds at least 2 documents. Both
thresholds only shrink as conditions are added, so the search stops extending a conjunction that
misses them. A conjunction holding exactly the questions of one of its parents (an added condition
that every question of the parent meets) is the same slice under a longer name: it is not tested again.

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

Ranking: kept slices by the excess failures the interval still guarantees, n_S x (-ci_high)
(largest first; a big slice with a small, uncertain gap does not outrank a sharp smaller one), then by p.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as _stats

MIN_QUESTIONS = 30
MIN_SHARE = 0.005  # of the questions: the minimum slice size is max(MIN_QUESTIONS, MIN_SHARE x N)
MIN_DOCUMENTS = 20
FDR = 0.05
METHODS = ("bh", "by")
SEP = " & "

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

    @property
    def name(self) -> str:
        """`field=value & field=value`."""
        return slice_name(self.conditions)

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
    all_slices: list[Slice] = field(default_factory=list, repr=False)

    @property
    def significant(self) -> int:
        return len(self.weak) + len(self.folded)

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
        p = _stats.t.cdf(t, dff)
        p = np.where((se == 0) & (gap == 0), 1.0, p)
        half = _stats.t.ppf(0.5 + confidence / 2, dff) * se
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


def _condition_masks(fields: Mapping[str, Sequence[Value]], order: np.ndarray
                     ) -> tuple[list[tuple[str, str, np.ndarray]], list[str], list[str]]:
    """Every condition field = value as a boolean mask (questions in `order`), the fields kept and
    the fields skipped (no condition that splits the questions)."""
    n = order.size
    out: list[tuple[str, str, np.ndarray]] = []
    kept: list[str] = []
    skipped: list[str] = []
    for name, column in fields.items():
        values = list(column)
        if len(values) != n:
            raise ValueError(f"field {name!r} has {len(values)} values for {n} questions")
        members: dict[str, list[int]] = {}
        for i, v in enumerate(values):
            if v is None:
                continue
            labels = (v,) if isinstance(v, str) else tuple(v) if isinstance(v, (list, tuple, set, frozenset)) else (v,)
            for lab in set(labels):
                if lab is None:
                    continue
                members.setdefault(str(lab), []).append(i)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        conds = []
        for value in sorted(members):
            pos = rank[np.asarray(members[value], dtype=np.int64)]
            if pos.size in (0, n):
                continue  # holds for every question (or none): no slice
            mask = np.zeros(n, dtype=bool)
            mask[pos] = True
            conds.append((name, value, mask))
        if conds:
            kept.append(name)
            out.extend(conds)
        else:
            skipped.append(name)
    return out, kept, skipped


def question_fields(gold: Sequence[Any], extra: Mapping[str, Sequence[Value]] | None = None) -> dict[str, list[Value]]:
    """The breakdown fields of gold questions (`scoring.model.GoldQuestion`) with the product's names:
    split, reasoning_type, evidence_source (multi-valued), answer_format, domain, difficulty, doc_type,
    and page_category (multi-valued) when the gold carries it; then `extra` (e.g. the dashboard's
    document length and evidence-position bins, saved slices, tags), each one value per question."""
    out: dict[str, list[Value]] = {
        "split": [q.labels("split")[0] for q in gold],
        "reasoning_type": [q.meta("reasoning_type") for q in gold],
        "evidence_source": [tuple(q.labels("evidence_source")) for q in gold],
        "answer_format": [q.labels("answer_format")[0] for q in gold],
        "domain": [q.meta("domain") for q in gold],
        "difficulty": [q.meta("difficulty") for q in gold],
        "doc_type": [q.meta("doc_type") for q in gold],
    }
    if any("page_category" in q.metadata for q in gold):
        out["page_category"] = [tuple(q.metadata.get("page_category") or ()) if isinstance(
            q.metadata.get("page_category"), (list, tuple)) else q.metadata.get("page_category") for q in gold]
    for name, column in (extra or {}).items():
        out[name] = list(column)
    return out


# ----------------------------------------------------------------------------- the search


def _docs_of(sorted_docs: np.ndarray) -> int:
    return 0 if not sorted_docs.size else 1 + int(np.count_nonzero(sorted_docs[1:] != sorted_docs[:-1]))


def _enumerate(conds: list[tuple[str, str, np.ndarray]], field_rank: dict[str, int], doc: np.ndarray,
               min_q: int, min_d: int, max_conditions: int) -> tuple[list[tuple[int, ...]], list[np.ndarray]]:
    """Every conjunction (condition indices, ascending field order) that meets both thresholds and is
    not its parent's set under a longer name, with its members (sorted positions)."""
    n = doc.size
    keys: list[tuple[int, ...]] = []
    members: list[np.ndarray] = []
    size_of: dict[tuple[int, ...], int] = {}
    frontier: list[tuple[tuple[int, ...], np.ndarray]] = []
    fr = [field_rank[c[0]] for c in conds]
    for k, (_, _, mask) in enumerate(conds):
        idx = np.flatnonzero(mask)
        if idx.size < min_q or idx.size >= n or _docs_of(doc[idx]) < min_d:
            continue
        size_of[(k,)] = idx.size
        keys.append((k,))
        members.append(idx)
        frontier.append(((k,), idx))
    singles = [key[0] for key, _ in frontier]
    for _level in range(2, max_conditions + 1):
        nxt: list[tuple[tuple[int, ...], np.ndarray]] = []
        for key, idx in frontier:
            last = fr[key[-1]]
            for c in singles:
                if fr[c] <= last:
                    continue
                sub = idx[conds[c][2][idx]]
                if sub.size < min_q or _docs_of(doc[sub]) < min_d:
                    continue
                new = (*key, c)
                size_of[new] = sub.size
                # a parent with the same size holds the same questions: the same slice, a longer name
                if any(size_of.get(new[:j] + new[j + 1:], -1) == sub.size for j in range(len(new))):
                    continue
                keys.append(new)
                members.append(sub)
                nxt.append((new, sub))
        frontier = nxt
    return keys, members


def _scan(y: np.ndarray, doc: np.ndarray, g: int, members: list[np.ndarray], confidence: float) -> dict[str, np.ndarray]:
    """Gap, CR1 SE, df, p and interval of every slice against its rest, vectorised (module docstring)."""
    n = y.size
    k = len(members)
    sizes = np.fromiter((m.size for m in members), dtype=np.int64, count=k)
    if k == 0:
        empty = np.zeros(0)
        return {"n": sizes, "documents": sizes, "gap": empty, "se": empty, "df": sizes, "p": empty, "ci_low": empty,
                "ci_high": empty, "score_slice": empty, "score_rest": empty}
    idx = np.concatenate(members)
    sl = np.repeat(np.arange(k, dtype=np.int64), sizes)
    key = sl * g + doc[idx]  # nondecreasing: slices in order, each slice's members in document order
    starts = np.concatenate([[0], np.flatnonzero(key[1:] != key[:-1]) + 1])
    sums = np.add.reduceat(y[idx], starts)
    cnts = np.diff(np.append(starts, idx.size)).astype(float)
    ps, pd_ = sl[starts], doc[idx][starts]
    T = np.bincount(doc, weights=y, minlength=g)
    N = np.bincount(doc, minlength=g).astype(float)
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
    g0 = g - full.astype(np.int64)
    factor = g / (g - 1) * (n - 1) / (n - 2) if g > 1 and n > 2 else math.nan
    se = np.sqrt(factor * (touched + untouched))
    gap = m1 - m0
    df = np.minimum(g1, g0) - 1
    p, lo, hi = _t_numbers(gap, se, df, confidence)
    return {"n": sizes, "documents": g1, "gap": gap, "se": se, "df": df, "p": np.where(np.isnan(p), 1.0, p),
            "ci_low": lo, "ci_high": hi, "score_slice": m1, "score_rest": m0, "rest_documents": g0}


def find_weak_slices(outcome: Sequence[float] | np.ndarray, fields: Mapping[str, Sequence[Value]], clusters: Any, *,
                     fdr: float = FDR, method: str = "bh", min_questions: int | None = None,
                     min_documents: int = MIN_DOCUMENTS, max_conditions: int = 3, confidence: float = 0.95,
                     fold_alpha: float | None = None, unit: str | None = None, mode: str = "run",
                     progress: Callable[[float, str], object] | None = None) -> SliceSearch:
    """Search the slices of one run whose outcome (per-question score) is below the rest's; see the
    module docstring for the search, the test, the multiplicity control and the folding rules.

    `fields`: field name -> one value per question (a label, None for no value, or a list/tuple of
    labels for a multi-valued field). `clusters`: a `scoring.stats.Clusters`, or one document label or
    code per question. `unit` names the cluster unit in the summary (default: the Clusters' unit or
    "document"). `progress(fraction, what)`, when given, is called as the search goes (conditions
    read, slices enumerated, tested, folded)."""
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
    n = y0.size
    codes = _cluster_codes(clusters, n)
    unit_name = unit or getattr(clusters, "unit", None) or "document"
    g = int(codes.max()) + 1 if n else 0
    min_q = int(min_questions) if min_questions is not None else max(MIN_QUESTIONS, math.ceil(MIN_SHARE * n))
    order = np.argsort(codes, kind="stable")
    doc = codes[order]
    y = y0[order]
    def say(fraction: float, what: str) -> None:
        if progress is not None:
            progress(fraction, what)

    say(0.0, "reading the conditions")
    conds, kept_fields, skipped = _condition_masks(fields, order)
    field_rank = {f: i for i, f in enumerate(kept_fields)}
    say(0.15, f"enumerating conjunctions of {len(conds)} conditions")
    keys, members = _enumerate(conds, field_rank, doc, min_q, int(min_documents), max_conditions)
    say(0.5, f"testing {len(keys):,} slices")
    r = _scan(y, doc, g, members, confidence)
    k = len(keys)
    if k:
        q = np.asarray(_stats.false_discovery_control(r["p"], method=method), dtype=float)
    else:
        q = np.zeros(0)
    base = dict(tested=k, questions=n, units=g, unit=unit_name, min_questions=min_q, min_documents=int(min_documents),
                fdr=fdr, method=method, mode=mode, fields=tuple(kept_fields), skipped_fields=tuple(skipped))
    conditions = [tuple((conds[c][0], conds[c][1]) for c in key) for key in keys]

    def make(i: int, explains: tuple[str, ...] = (), under: str = "") -> Slice:
        return Slice(conditions[i], int(r["n"][i]), int(r["documents"][i]), float(r["gap"][i]), float(r["ci_low"][i]),
                     float(r["ci_high"][i]), float(r["se"][i]), int(r["df"][i]), float(r["p"][i]), float(q[i]),
                     float(r["score_slice"][i]), float(r["score_rest"][i]), explains, under)

    sig = [i for i in range(k) if q[i] < fdr]
    say(0.8, f"folding {len(sig):,} significant slices")
    # the bars a slice must pass to stay a weakness of its own (module docstring, "Redundancy")
    cut = max((float(r["p"][i]) for i in sig), default=0.0)  # the discoveries' own: what BH/BY let through
    nested = fold_alpha if fold_alpha is not None else min(cut, fdr / max(1, len(sig)))
    overlap = fold_alpha if fold_alpha is not None else cut
    rep = _fold(sig, keys, members, y, doc, g, r, confidence, nested, overlap)
    kept = [i for i in sig if rep[i] == i]
    under: dict[int, list[int]] = {i: [] for i in kept}
    for i in sig:
        if rep[i] != i:
            under[rep[i]].append(i)
    names = {i: slice_name(conditions[i]) for i in sig}
    weak = [make(i, tuple(names[j] for j in sorted(under[i], key=lambda j: r["p"][j]))) for i in kept]
    weak.sort(key=lambda s: (-s.guaranteed_excess, s.p, s.name))
    folded = sorted((make(i, under=names[rep[i]]) for i in sig if rep[i] != i), key=lambda s: (s.p, s.name))
    all_slices = [make(i) for i in range(k)]
    say(1.0, "done")
    return SliceSearch(weak=weak, folded=folded, all_slices=all_slices, **base)  # type: ignore[arg-type]


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
    return float(_stats.t.cdf(beta[-1] / math.sqrt(var), df))


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
                          fields: Mapping[str, Sequence[Value]], clusters: Any, **options: Any) -> SliceSearch:
    """Pair mode: "where did the new run get worse?" The outcome is the paired difference new - old
    on each question, and a slice's gap is its mean difference minus the rest's: a slice where the
    new run lost more (or gained less) than on the other questions. Same search, test, thresholds and
    folding as `find_weak_slices` (options are passed on)."""
    a = np.asarray(new, dtype=float)
    b = np.asarray(old, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"new and old must be paired, got shapes {a.shape} and {b.shape}")
    return find_weak_slices(a - b, fields, clusters, mode="pair", **options)

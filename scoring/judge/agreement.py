"""How far two raters of the same answers agree: a judge against the rules, against another judge,
against people. Pure (numpy).

    confusion(a, b, labels)             k x k counts: rows a's label, columns b's
    cohen_kappa(a, b)                   Cohen's kappa of two label sequences (nan when chance agreement is 1)
    agreement(a, b, documents)          `Agreement`: n, agree, kappa, its interval with DOCUMENTS as the unit
    by_decile(a, b, lengths, docs)      agreement per decile of a length (the response's: verbosity)
    by_label(a, b, labels_of, docs)     agreement per label of a slice field (a question in each of its labels)

Cohen's kappa = (p_o - p_e) / (1 - p_e), p_o the share of answers on which the two agree and p_e the
share expected by chance from each rater's own label frequencies. It is undefined (nan) when p_e = 1
(both raters gave one and the same label to every answer): there is no disagreement chance could
explain, and no number is claimed.

The interval resamples documents, not answers (questions come in documents: a judge that misreads
one document's tables misreads all its questions together): B resamples of the documents drawn with
replacement, each drawing all its answers; kappa of each resample from the summed per-document
confusion tables; the percentile interval (2.5 %, 97.5 % at 95 %). Resamples where kappa is undefined
are left out; with fewer than MIN_UNITS documents (a percentile interval over a handful of documents
claims more than they hold), or when more than half the resamples are undefined, there is no interval
(nan) -- "not enough evidence". Seeded: the same inputs give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Agreement", "confusion", "cohen_kappa", "kappa_of_table", "agreement", "by_decile", "by_label", "RESAMPLES"]

RESAMPLES = 2_000
MIN_UNITS = 10  # documents (or answers) an interval needs
DRAWS_PER_BATCH = 2_000_000


@dataclass(frozen=True)
class Agreement:
    n: int  # answers both raters labelled
    agree: int  # answers they gave the same label
    kappa: float  # nan: undefined (one label only)
    low: float  # the interval by document (nan: not enough documents)
    high: float
    units: int  # documents (or answers when none names a document)
    unit: str  # "document" or "question"
    labels: tuple[Hashable, ...] = ()
    table: tuple[tuple[int, ...], ...] = ()  # confusion: rows the first rater, columns the second
    extra: dict = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else math.nan


def confusion(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError(f"two raters of different lengths: {len(a)} and {len(b)}")
    labels = list(labels) if labels is not None else sorted(set(a) | set(b), key=str)
    index = {lab: i for i, lab in enumerate(labels)}
    out = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(a, b):
        out[index[x], index[y]] += 1
    return out


def kappa_of_table(table: np.ndarray) -> float:
    """Cohen's kappa of a k x k confusion table (nan when empty or when chance agreement is 1)."""
    t = np.asarray(table, dtype=float)
    n = t.sum()
    if n <= 0:
        return math.nan
    po = np.trace(t) / n
    pe = float(np.dot(t.sum(axis=1), t.sum(axis=0))) / (n * n)
    if pe >= 1.0 - 1e-12:
        return math.nan
    return float((po - pe) / (1.0 - pe))


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    return kappa_of_table(confusion(a, b))


def _kappas(tables: np.ndarray) -> np.ndarray:
    """Kappa of each of B tables (B x k x k); nan where undefined."""
    n = tables.sum(axis=(1, 2))
    po = np.trace(tables, axis1=1, axis2=2) / np.where(n > 0, n, 1)
    pe = np.einsum("bi,bi->b", tables.sum(axis=2), tables.sum(axis=1)) / np.where(n > 0, n * n, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (po - pe) / (1.0 - pe)
    k[(n <= 0) | (pe >= 1.0 - 1e-12)] = np.nan
    return k


def agreement(a: Sequence[Hashable], b: Sequence[Hashable], documents: Sequence[str | None] | None = None, *,
              labels: Sequence[Hashable] | None = None, resamples: int = RESAMPLES, confidence: float = 0.95,
              seed: int = 0) -> Agreement:
    """Agreement of two raters of the same answers, kappa's interval by document (module text). A
    document of None or "" is an answer's own unit; with no document named at all the unit is "question"."""
    n = len(a)
    labels = list(labels) if labels is not None else sorted(set(a) | set(b), key=str)
    table = confusion(a, b, labels)
    agree = int(np.trace(table))
    kappa = kappa_of_table(table)
    docs = list(documents) if documents is not None else [None] * n
    if len(docs) != n:
        raise ValueError(f"{len(docs)} documents for {n} answers")
    named = any(d for d in docs)
    keys = [("d", d) if d else ("q", i) for i, d in enumerate(docs)]
    codes_of: dict[object, int] = {}
    codes = np.fromiter((codes_of.setdefault(k, len(codes_of)) for k in keys), dtype=np.int64, count=n)
    g = len(codes_of)
    low = high = math.nan
    if g >= MIN_UNITS and n:
        k = len(labels)
        index = {lab: i for i, lab in enumerate(labels)}
        cell = np.fromiter((index[x] * k + index[y] for x, y in zip(a, b)), dtype=np.int64, count=n)
        per_doc = np.zeros((g, k * k))
        np.add.at(per_doc, (codes, cell), 1.0)
        rng = np.random.default_rng(seed)
        ks = np.empty(resamples)
        step = max(1, min(resamples, DRAWS_PER_BATCH // g))
        for start in range(0, resamples, step):
            m = min(step, resamples - start)
            counts = rng.multinomial(g, np.full(g, 1.0 / g), size=m).astype(float)  # how often each document is drawn
            ks[start:start + m] = _kappas((counts @ per_doc).reshape(m, k, k))
        valid = ks[~np.isnan(ks)]
        if valid.size * 2 >= resamples:
            alpha = (1 - confidence) / 2
            low, high = (float(x) for x in np.quantile(valid, [alpha, 1 - alpha]))
    return Agreement(n, agree, kappa, low, high, g, "document" if named else "question", tuple(labels),
                     tuple(tuple(int(x) for x in row) for row in table))


def by_decile(a: Sequence[Hashable], b: Sequence[Hashable], lengths: Sequence[int],
              documents: Sequence[str | None] | None = None, *, parts: int = 10, **kw) -> list[tuple[int, int, Agreement]]:
    """(shortest, longest length, Agreement) per decile of `lengths` (answers of equal length kept
    together, so a decile may hold more or fewer than a tenth; fewer parts when there are few answers)."""
    n = len(a)
    if not n:
        return []
    order = sorted(range(n), key=lambda i: lengths[i])
    out = []
    start = 0
    for part in range(1, parts + 1):
        end = round(part * n / parts)
        if end <= start:
            continue
        while end < n and lengths[order[end]] == lengths[order[end - 1]]:
            end += 1
        idx = order[start:end]
        docs = [documents[i] for i in idx] if documents is not None else None
        out.append((lengths[idx[0]], lengths[idx[-1]], agreement([a[i] for i in idx], [b[i] for i in idx], docs, **kw)))
        start = end
        if start >= n:
            break
    return out


def by_label(a: Sequence[Hashable], b: Sequence[Hashable], labels_of: Sequence[Sequence[str]],
             documents: Sequence[str | None] | None = None, **kw) -> dict[str, Agreement]:
    """Agreement per label of a slice field (an answer under each of its labels), labels in first-seen order."""
    groups: dict[str, list[int]] = {}
    for i, labels in enumerate(labels_of):
        for lab in dict.fromkeys(labels):
            groups.setdefault(lab, []).append(i)
    return {lab: agreement([a[i] for i in idx], [b[i] for i in idx],
                           [documents[i] for i in idx] if documents is not None else None, **kw)
            for lab, idx in groups.items()}


def pairs(first: Mapping[str, Hashable], second: Mapping[str, Hashable]) -> tuple[list[str], list[Hashable], list[Hashable]]:
    """(the keys both hold, in the first's order, their labels in each)."""
    keys = [k for k in first if k in second]
    return keys, [first[k] for k in keys], [second[k] for k in keys]

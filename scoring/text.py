"""String handling shared by every metric: value stringification, answer normalisation,
edit distance and normalised Levenshtein similarity (spec sections 1c, 4, 5)."""

from __future__ import annotations

import json
import re

from rapidfuzz.distance import Levenshtein

__all__ = [
    "to_str",
    "strip_prefixes",
    "normalize_answer",
    "edit_distance",
    "similarity",
    "similarity_at_least",
    "tokens",
]

ANSWER_PREFIXES = ("the answer is", "answer:", "answer is")
_NOT_KEPT = re.compile(r"[^\w\s.\-%]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def to_str(value: object) -> str:
    """The release evaluator's string form of a value (spec 1c): null -> "", scalars -> str(),
    lists and objects -> compact JSON with sorted keys and non-ASCII kept."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def strip_prefixes(lowered: str) -> str:
    """Cut 'the answer is', 'answer:', 'answer is' in that fixed order, each checked once (spec 4.2)."""
    for prefix in ANSWER_PREFIXES:
        if lowered.startswith(prefix):
            lowered = lowered[len(prefix):].strip()
    return lowered


def normalize_answer(text: str) -> str:
    """Spec section 4: lower-case, strip prefixes, delete punctuation, drop articles, fold spaces."""
    s = strip_prefixes(text.strip().lower())
    s = _NOT_KEPT.sub("", s)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def tokens(normalised: str) -> frozenset[str]:
    return frozenset(normalised.split())


def edit_distance(a: str, b: str) -> int:
    """Plain Levenshtein distance (insert, delete, substitute each cost 1) on code points."""
    return Levenshtein.distance(a, b)


def similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity of the stripped, lower-cased strings (spec 5)."""
    a = a.strip().lower()
    b = b.strip().lower()
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    longer = max(len(a), len(b))
    return 1.0 - Levenshtein.distance(a, b) / longer


def similarity_at_least(a: str, b: str, threshold: float) -> float:
    """The similarity when it is >= threshold, else 0.0 -- with a distance cut-off so that long,
    dissimilar strings cost O(cutoff * n) instead of O(n * m). Same value as `similarity` when kept."""
    a = a.strip().lower()
    b = b.strip().lower()
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0 if threshold > 0.0 else 0.0
    longer = max(len(a), len(b))
    # sim >= t  <=>  d <= (1 - t) * longer; allow one more so float rounding at the edge is
    # decided by the exact formula below, never by the cut-off.
    cutoff = int((1.0 - threshold) * longer) + 1
    if abs(len(a) - len(b)) > cutoff:
        return 0.0
    d = Levenshtein.distance(a, b, score_cutoff=cutoff)
    if d > cutoff:
        return 0.0
    sim = 1.0 - d / longer
    return sim if sim >= threshold else 0.0

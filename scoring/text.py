"""String handling shared by every metric: answer normalisation, edit distance and normalised
Levenshtein similarity (spec sections 4, 5). A value's text as read (spec 1c: `to_str`) is part of
the records, in scoring/model.py."""

from __future__ import annotations

import re

from rapidfuzz.distance import Levenshtein

__all__ = [
    "strip_prefixes",
    "normalize_answer",
    "normalize_answer_plain",
    "edit_distance",
    "levenshtein_similarity",
    "similarity",
    "MAX_EDIT_CHARS",
]

ANSWER_PREFIXES = ("the answer is", "answer:", "answer is")
# Longest text (in code points, after strip and lower-case) whose edit distance is computed: about
# 15-50 ms per pair at this length, where a 5 MB pair would take hours (issue 18). A longer text has
# similarity 1 with an identical text and 0 with any other -- the only departure from the release
# evaluator, which never finishes on such a pair. The loaders warn at the row (file:line) of every
# gold answer or prediction longer than this (scoring/README.md section 6).
MAX_EDIT_CHARS = 20_000
_NOT_KEPT = re.compile(r"[^\w\s.\-%]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def strip_prefixes(lowered: str) -> str:
    """Cut 'the answer is', 'answer:', 'answer is' in that fixed order, each checked once (spec 4.2)."""
    for prefix in ANSWER_PREFIXES:
        if lowered.startswith(prefix):
            lowered = lowered[len(prefix):].strip()
    return lowered


# The ASCII characters _NOT_KEPT deletes, read from the pattern itself (so the two cannot differ).
_ASCII_NOT_KEPT = bytes(c for c in range(128) if _NOT_KEPT.fullmatch(chr(c)))
_ARTICLE_WORDS = frozenset(("a", "an", "the"))


def normalize_answer(text: str) -> str:
    """Spec section 4: lower-case, strip prefixes, delete punctuation, drop articles, fold spaces.

    `normalize_answer_plain` is the definition. For ASCII text (most answers) the same result
    is reached in C: the punctuation deleted by `bytes.translate`, and -- when no '.', '-' or '%'
    is left, so that every whitespace-separated word is made of word characters only and a word
    boundary can only fall at its ends -- the articles dropped as whole words. Other text uses an
    equivalent article pattern the engine can scan faster. Half the time of the two regular
    expressions or less (tests/test_rule_edges.py compares the two on random text)."""
    s = strip_prefixes(text.strip().lower())
    if not s.isascii():
        return _articles_folded(_NOT_KEPT.sub("", s))
    s = s.encode("ascii").translate(None, _ASCII_NOT_KEPT).decode("ascii")
    if "." in s or "-" in s or "%" in s:
        return _articles_folded(s)
    words = s.split()
    if _ARTICLE_WORDS.isdisjoint(words):
        return " ".join(words)
    return " ".join([w for w in words if w not in _ARTICLE_WORDS])


# _ARTICLES written to start with a letter, so that the regular-expression engine skips to the
# next 'a' or 't' instead of trying every position; the word boundary before the article is
# checked behind it: the same matches, in half the time on long answers.
_ARTICLES_FAST = re.compile(r"(?:a(?<!\wa)n?|the(?<!\wthe))\b")


def _articles_folded(s: str) -> str:
    return " ".join(_ARTICLES_FAST.sub(" ", s).split())


def normalize_answer_plain(text: str) -> str:
    """`normalize_answer` as spec section 4 writes it: the reference its fast path is tested against."""
    s = strip_prefixes(text.strip().lower())
    s = _NOT_KEPT.sub("", s)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def edit_distance(a: str, b: str) -> int:
    """Plain Levenshtein distance (insert, delete, substitute each cost 1) on code points."""
    return Levenshtein.distance(a, b)


def levenshtein_similarity(a: str, b: str, *, at_least: float = 0.0, strict: bool = False) -> float:
    """1 - edit distance / length of the longer string, of `a` and `b` exactly as given (callers
    strip and lower-case); 1.0 when both are empty, 0.0 when one is. Returns 0.0 when the
    similarity is below `at_least` (or equal to it, with `strict`). The one normalised-Levenshtein
    routine of the project: Accuracy's entity rule, both ANLS variants and the traces use it.

    A distance cut-off keeps long, dissimilar strings at O(cutoff * n) instead of O(n * m), and
    lengths whose difference alone puts the similarity below `at_least` (d >= |len(a) - len(b)|)
    give 0 without computing; the kept value is computed by the exact formula, so it equals the
    plain computation. Strings longer than MAX_EDIT_CHARS: 1.0 when equal, else 0.0."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    longer = max(len(a), len(b))
    if longer > MAX_EDIT_CHARS:  # bounded work per pair: identical, or 0 (see MAX_EDIT_CHARS)
        return 1.0 if a == b else 0.0
    if at_least > 0.0:
        # sim >= t  <=>  d <= (1 - t) * longer; one more so float rounding at the edge is decided
        # by the exact comparison below, never by the cut-off.
        cutoff = int((1.0 - at_least) * longer) + 1
        if abs(len(a) - len(b)) > cutoff:
            return 0.0
        d = Levenshtein.distance(a, b, score_cutoff=cutoff)
        if d > cutoff:
            return 0.0
    else:
        d = Levenshtein.distance(a, b)
    sim = 1.0 - d / longer
    if sim < at_least or (strict and sim == at_least):
        return 0.0
    return sim


def similarity(a: str, b: str, *, at_least: float = 0.0) -> float:
    """Normalised Levenshtein similarity of the stripped, lower-cased strings (spec 5), 0.0 below
    `at_least`."""
    return levenshtein_similarity(a.strip().lower(), b.strip().lower(), at_least=at_least)


def drop_parenthesised(s: str) -> str:
    """Remove each `(...)` group (up to the first `)` after its `(`) and the white space right
    before it, scanning left to right -- the effect of substituting `\\s*\\([^)]*\\)` by nothing,
    computed in one pass (the regular expression itself is quadratic on long runs of spaces or
    of `(`). A `(` with no `)` after it is kept, and so is everything after it."""
    parts: list[str] = []
    i = 0
    while True:
        opening = s.find("(", i)
        if opening < 0:
            break
        closing = s.find(")", opening + 1)
        if closing < 0:
            break
        parts.append(s[i:opening].rstrip())  # str.rstrip strips exactly re's \s (str.isspace)
        i = closing + 1
    parts.append(s[i:])
    return "".join(parts)

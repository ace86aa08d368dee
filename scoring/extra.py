"""Diagnostic metrics beside the three headline ones, behind one dispatcher:

    score("bleu_4", prediction, ["gold one", "gold two"])  -> best over the golds, in 0..1

- `exact_match`: stripped strings equal.
- `bleu_4`: modified n-gram precision (n = 1..4, counts clipped by the reference), add-one
  smoothing on every precision, unigrams included (as our seed article defines it; see bleu_4),
  geometric mean, brevity penalty.
- `bleu_4_sacrebleu`: sacrebleu's default sentence BLEU (13a tokenizer, case kept, exp
  smoothing, effective order), written out plainly here: sacrebleu is not a dependency.
- `rouge_l`: longest-common-subsequence F-measure (beta = 1) on tokens; two empty texts score 1.
- `fuzzy`: the field-typed fuzzy score of seed 001 -- max of rapidfuzz token_sort / token_set /
  partial ratio on normalised text, with its containment branch (a normalised shorter string of
  more than FUZZY_CONTAINED_MIN_CHARS = 20 characters inside the longer one, with a length ratio
  above FUZZY_CONTAINED_MIN_RATIO = 0.3, scores 85 + 15 x ratio out of 100).
- `token_f1`, `anls`: the headline definitions (spec 6), best over the golds.

Tokenizer for BLEU and ROUGE-L: `re.findall(r"\\w+", text.lower())` -- a contract, not a knob.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from .metrics import anls as _anls
from .metrics import token_f1 as _token_f1
from .text import normalize_answer

__all__ = ["METRIC_NAMES", "score", "exact_match", "bleu_4", "bleu_4_sacrebleu", "rouge_l", "fuzzy", "tokenize",
           "tokenize_13a", "normalize_fuzzy"]

BLEU_MAX_N = 4  # BLEU-4: n-grams of 1..4 tokens
FUZZY_CONTAINED_MIN_CHARS = 20  # the containment branch needs a shorter string longer than this
FUZZY_CONTAINED_MIN_RATIO = 0.3  # ... and a length ratio (shorter / longer) above this
FUZZY_CONTAINED_BASE, FUZZY_CONTAINED_SPAN = 85, 15  # it scores BASE + SPAN x ratio, out of RATIO_SCALE
RATIO_SCALE = 100  # rapidfuzz ratios are percentages

_TOKEN = re.compile(r"\w+")
_FUZZY_DROP = re.compile(r"[()\[\]{}\"'`]")
_FUZZY_MAP = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-"})


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def exact_match(prediction: str, gold: str) -> float:
    return 1.0 if prediction.strip() == gold.strip() else 0.0


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu_4(prediction: str, gold: str) -> float:
    """BLEU-4 of one prediction against one gold, in 0..1.

    Smoothing: add one to the numerator and the denominator of every n-gram precision, unigrams
    included -- the definition of our seed article, kept so that its figures stay reproducible.
    It differs from Lin & Och's method 1 and from sacrebleu, which leave unigrams unsmoothed: here
    two texts sharing no word still score above 0 (`bleu_4("cat", "dog")` = (1/2)^(1/4) = 0.84,
    the unigram precision (0+1)/(1+1) and three empty higher orders (0+1)/(0+1)). For the score
    the MT literature reports, use `bleu_4_sacrebleu`. Two empty texts score 1, one empty text 0."""
    cand, ref = tokenize(prediction), tokenize(gold)
    if not cand or not ref:
        return 1.0 if not cand and not ref else 0.0
    log_sum = 0.0
    for n in range(1, BLEU_MAX_N + 1):
        c_grams, r_grams = _ngrams(cand, n), _ngrams(ref, n)
        clipped = sum(min(count, r_grams[g]) for g, count in c_grams.items())
        total = sum(c_grams.values())
        log_sum += math.log((clipped + 1) / (total + 1))
    c, r = len(cand), len(ref)
    bp = 1.0 if c >= r else math.exp(1 - r / c)
    return bp * math.exp(log_sum / BLEU_MAX_N)


# sacrebleu's 13a tokenizer (mteval-v13a.pl): each pattern is one character class or a pair of
# them, so every substitution is a single linear pass.
_13A = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # punctuation and symbols
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless after a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless before a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # a dash after a digit
)


def tokenize_13a(text: str) -> list[str]:
    """sacrebleu's default ("13a") tokenization, case kept."""
    line = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} "
    for pattern, repl in _13A:
        line = pattern.sub(repl, line)
    return line.split()


def bleu_4_sacrebleu(prediction: str, gold: str) -> float:
    """sacrebleu's `sentence_bleu(prediction, [gold]).score / 100` with its defaults: 13a
    tokens, case kept, n-grams of 1..4 clipped by the reference, "exp" smoothing (the k-th order
    with no match counts 1 / (2^k x its n-gram count), k = 1, 2, ... over the orders without a
    match), effective order (orders the prediction has no n-gram of are left out of the mean),
    brevity penalty exp(1 - r/c) when shorter. An empty prediction scores 0."""
    hyp, ref = tokenize_13a(prediction), tokenize_13a(gold)
    if not hyp:
        return 0.0
    logs = []
    smooth = 1.0
    for n in range(1, BLEU_MAX_N + 1):
        h_grams = _ngrams(hyp, n)
        total = sum(h_grams.values())
        if total == 0:
            break
        r_grams = _ngrams(ref, n)
        correct = sum(min(count, r_grams[g]) for g, count in h_grams.items())
        if correct == 0:
            smooth *= 2
            logs.append(math.log(1.0 / (smooth * total)))
        else:
            logs.append(math.log(correct / total))
    c, r = len(hyp), len(ref)
    bp = 1.0 if c >= r else math.exp(1 - r / c)
    return bp * math.exp(sum(logs) / len(logs))


def rouge_l(prediction: str, gold: str) -> float:
    """ROUGE-L F-measure (beta = 1) of the token lists: LCS / length for precision and recall.

    Two empty texts score 1, one empty text 0: two answers with no word at all agree, as token
    F1 scores an empty gold against an empty prediction (spec 6), and the definition would
    otherwise divide 0 by 0. The LCS is rapidfuzz's `LCSseq` over the token lists (bit-parallel,
    O(n * m / 64)); tests/test_metrics.py checks it against the plain dynamic programme."""
    cand, ref = tokenize(prediction), tokenize(gold)
    if not cand or not ref:
        return 1.0 if not cand and not ref else 0.0
    lcs = LCSseq.similarity(cand, ref)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(cand), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


def normalize_fuzzy(text: str) -> str:
    """Lower-case, fold typographic quotes and dashes, drop brackets and quotes, fold spaces. For
    ASCII text NFKC and the quote/dash map change nothing, so they are skipped there."""
    if text.isascii():
        return " ".join(_FUZZY_DROP.sub("", text.lower()).split())
    text = unicodedata.normalize("NFKC", text).translate(_FUZZY_MAP).lower()
    return " ".join(_FUZZY_DROP.sub("", text).split())


def fuzzy(prediction: str, gold: str) -> float:
    if prediction == gold:
        return 1.0
    a, b = normalize_fuzzy(gold), normalize_fuzzy(prediction)
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) > FUZZY_CONTAINED_MIN_CHARS and shorter in longer:
        ratio = len(shorter) / len(longer)
        if ratio > FUZZY_CONTAINED_MIN_RATIO:
            return (FUZZY_CONTAINED_BASE + ratio * FUZZY_CONTAINED_SPAN) / RATIO_SCALE
    return max(fuzz.token_sort_ratio(a, b), fuzz.token_set_ratio(a, b), fuzz.partial_ratio(a, b)) / RATIO_SCALE


def _token_f1_pair(prediction: str, gold: str) -> float:
    return _token_f1(normalize_answer(prediction), normalize_answer(gold))


METRICS: dict[str, Callable[[str, str], float]] = {
    "exact_match": exact_match,
    "bleu_4": bleu_4,
    "bleu_4_sacrebleu": bleu_4_sacrebleu,
    "rouge_l": rouge_l,
    "fuzzy": fuzzy,
    "token_f1": _token_f1_pair,
    "anls": _anls,
}
METRIC_NAMES = tuple(METRICS)


def score(metric_name: str, prediction: str, golds: Sequence[str]) -> float:
    """The best score of `prediction` over `golds` (0.0 for an empty list)."""
    try:
        fn = METRICS[metric_name]
    except KeyError:
        raise ValueError(f"unknown metric {metric_name!r}; choose one of {', '.join(METRIC_NAMES)}") from None
    if isinstance(golds, str):
        golds = [golds]
    return max((fn(prediction, g) for g in golds), default=0.0)

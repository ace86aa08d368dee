"""scoring.extra (issues 18 and 22): sacrebleu-compatible sentence BLEU on hand-computed examples,
ROUGE-L's LCS through rapidfuzz equal to the plain dynamic programme, and the documented edge
values of bleu_4 and rouge_l."""

from __future__ import annotations

import math
import random

import pytest
from rapidfuzz.distance import LCSseq

from scoring.extra import bleu_4, bleu_4_sacrebleu, rouge_l, score, tokenize, tokenize_13a


def plain_lcs(a: list[str], b: list[str]) -> int:
    """The dynamic programme rouge_l used before rapidfuzz (the reference)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_lcsseq_takes_token_lists_and_equals_the_plain_lcs():
    rnd = random.Random(7)
    words = ["a", "b", "c", "the", "cat", "1", "é", "", "a b"]
    for _ in range(3000):
        a = [rnd.choice(words) for _ in range(rnd.randint(0, 30))]
        b = [rnd.choice(words) for _ in range(rnd.randint(0, 30))]
        assert LCSseq.similarity(a, b) == plain_lcs(a, b), (a, b)
    # longer than one 64-bit block, and tuples of hashables too
    a = [rnd.choice(words) for _ in range(500)]
    b = [rnd.choice(words) for _ in range(300)]
    assert LCSseq.similarity(a, b) == plain_lcs(a, b)
    assert LCSseq.similarity([(1, 2), (3,)], [(3,), (1, 2), (3,)]) == 2


def test_rouge_l_on_random_texts_equals_the_formula_with_the_plain_lcs():
    rnd = random.Random(8)
    for _ in range(500):
        p = " ".join(rnd.choice(["the", "cat", "sat", "on", "mat", "dog"]) for _ in range(rnd.randint(1, 15)))
        g = " ".join(rnd.choice(["the", "cat", "sat", "on", "mat", "bird"]) for _ in range(rnd.randint(1, 15)))
        c, r = tokenize(p), tokenize(g)
        lcs = plain_lcs(c, r)
        want = 0.0 if lcs == 0 else 2 * (lcs / len(c)) * (lcs / len(r)) / (lcs / len(c) + lcs / len(r))
        assert rouge_l(p, g) == pytest.approx(want, abs=1e-12)


def test_documented_edges():
    assert rouge_l("", "") == 1.0 and rouge_l("", "x") == 0.0 and rouge_l("x", "") == 0.0
    assert round(bleu_4("cat", "dog"), 2) == 0.84  # (1/2)^(1/4): unigrams smoothed too (the seed article)
    assert bleu_4("", "") == 1.0


def test_tokenize_13a():
    assert tokenize_13a("Hello, world.") == ["Hello", ",", "world", "."]
    assert tokenize_13a("1,000.5 USD") == ["1,000.5", "USD"]  # a comma or period between digits stays
    assert tokenize_13a("3-4 (x) a-b") == ["3", "-", "4", "(", "x", ")", "a-b"]  # a dash only after a digit
    assert tokenize_13a("a &amp; b") == ["a", "&", "b"]


@pytest.mark.parametrize("pred,gold,want", [
    ("the cat sat on the mat", "the cat sat on the mat", 1.0),
    # one unigram, no match: exp smoothing 100 / (2 x 1) = 50; no bigram: effective order 1
    ("cat", "dog", 0.5),
    # precisions 2/2, 1/1, no trigram (effective order 2); brevity exp(1 - 3/2)
    ("the cat", "the cat sat", math.exp(1 - 3 / 2)),
    # 13a: Hello , world . (case kept): 1/4; bigrams 0 of 3 -> 1/(2*3); trigrams 0 of 2 -> 1/(4*2); 4-gram 0 of 1 -> 1/8
    ("Hello, world.", "hello world", (1 / 4 * 1 / 6 * 1 / 8 * 1 / 8) ** 0.25),
    # 1,000.5 kept whole; USD != usd: 1/2; one bigram, no match: 1/(2*1); effective order 2
    ("1,000.5 USD", "1,000.5 usd", (1 / 2 * 1 / 2) ** 0.5),
    ("", "anything", 0.0),
])
def test_bleu_4_sacrebleu_hand_computed(pred, gold, want):
    assert bleu_4_sacrebleu(pred, gold) == pytest.approx(want, rel=1e-12)
    assert score("bleu_4_sacrebleu", pred, [gold, "zzz"]) == pytest.approx(max(want, bleu_4_sacrebleu(pred, "zzz")))


def test_bleu_variants_differ_where_documented():
    assert bleu_4_sacrebleu("cat", "dog") == 0.5 != round(bleu_4("cat", "dog"), 2)

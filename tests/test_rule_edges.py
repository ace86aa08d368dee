"""Hand-computed rows at the edges of two rules, under both XL-DocBench profiles (their number
readers agree on plain decimals):

- the numeric rule's relative tolerance is inclusive: |pred - gold| / |gold| = 0.05 passes and
  anything above fails. The numbers are chosen so that the division is exact in binary floating
  point (5/100, 1/20, 2/40 give the double nearest 0.05, which is the tolerance itself);
- a gold of 0 is matched by |pred| < 1e-6, strictly;
- normalisation deletes the articles a, an, the as whole words only.

ANLS by hand: 1 - edit distance / longer length of the raw lower-cased strings, 0 below 0.5.
"""

import random

import pytest

from scoring.metrics import judge
from scoring.text import normalize_answer, normalize_answer_plain

PROFILES = ["xldocbench", "xldocbench-1519"]

# (prediction, gold, accuracy, relative error, anls)
TOLERANCE = [
    ("105", "100", 1.0, 5 / 100, 1 - 1 / 3),        # exactly 5 %: kept; '105' vs '100' one substitution
    ("105.00001", "100", 0.0, None, 0.0),            # 5.00001 %
    ("95", "100", 1.0, 5 / 100, 0.0),                # 5 % below; '95' vs '100': distance 3 of 3
    ("94.99999", "100", 0.0, None, 0.0),
    ("21", "20", 1.0, 1 / 20, 0.5),                  # '21' vs '20': distance 1 of 2, exactly 0.5 is kept
    ("19", "20", 1.0, 1 / 20, 0.0),
    ("18.99999", "20", 0.0, None, 0.0),
    ("-42", "-40", 1.0, 2 / 40, 1 - 1 / 3),          # relative to |gold|
    ("about 21 units", "20", 1.0, 1 / 20, 0.0),      # the first number of the answer
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("pred,gold,acc,rel,anls", TOLERANCE)
def test_relative_tolerance_is_inclusive(pred, gold, acc, rel, anls, profile):
    j = judge(pred, [gold], "Int", "numeric_tolerance", profile=profile)
    assert (j.decided_by, j.threshold) == ("numeric_tolerance", 0.05)
    assert j.accuracy == acc
    if rel is not None:
        assert j.relative_error == rel == 0.05  # exact, not approximately
    else:
        assert j.relative_error > 0.05
    assert j.token_f1 == 0.0 or pred == gold
    assert j.anls == pytest.approx(anls, abs=1e-12)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("pred,acc", [("0.0000009", 1.0), ("-0.0000009", 1.0), ("0.000001", 0.0), ("0", 1.0), ("0.5", 0.0)])
def test_zero_gold_needs_a_prediction_below_one_millionth(pred, acc, profile):
    j = judge(pred, ["0"], "Float", "numeric_tolerance", profile=profile)
    assert (j.decided_by, j.threshold, j.accuracy) == ("numeric_gold_zero", 1e-6, acc)


@pytest.mark.parametrize("text,normalised", [
    ("theatre", "theatre"),               # 'the' inside a word stays
    ("anthem", "anthem"),
    ("Thea", "thea"),
    ("the_end", "the_end"),               # '_' is a word character: no word boundary
    ("a1", "a1"),
    ("an apple", "apple"),
    ("A", ""),                            # a bare option letter normalises to nothing
    ("thE", ""),                          # after lower-casing
    ("The Hague", "hague"),
    ("A cat, an owl and THE end", "cat owl and end"),
    ("an-apple", "-apple"),               # '-' is kept and is no word character
    ("a.b", ".b"),
])
def test_articles_are_removed_as_whole_words(text, normalised):
    assert normalize_answer(text) == normalised
    assert normalize_answer_plain(text) == normalised


# pieces that meet every branch of the fast path: articles and near-articles, the kept '.', '-',
# '%' and '_', deleted punctuation, ASCII whitespace str.split and \s both know (\x1c-\x1f), the
# answer prefixes, and non-ASCII letters, digits, spaces and punctuation (the regular-expression path)
PIECES = ["a", "an", "the", "A", "An", "THE", "thE", "then", "anthem", "x", "42", "3.5", "_", ".", "-", "%", ",", "!",
          "'", '"', "(", ")", "/", ":", " ", "  ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x00", "\x7f",
          "the answer is", "Answer:", "answer is", "é", "É", "ß", "٣", "\u00a0", "\u3000", "\u2014", "，", "İ"]


@pytest.mark.parametrize("seed", range(4))
def test_fast_normalisation_equals_the_definition(seed):
    rng = random.Random(seed)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(5_000)]
    texts += [chr(c) for c in range(160)] + [f"a{chr(c)}the" for c in range(160)]
    mismatched = [t for t in texts if normalize_answer(t) != normalize_answer_plain(t)]
    assert not mismatched, [(t, normalize_answer(t), normalize_answer_plain(t)) for t in mismatched[:5]]
    assert sum(t.isascii() for t in texts) > 2_000  # the fast path was taken often


# (prediction, gold, accuracy, token_f1, anls, rule)
ARTICLES = [
    ("Hague", "The Hague", 1.0, 1.0, 5 / 9, "containment"),          # 'hague' in 'hague'; raw distance 4 of 9
    ("the theatre", "theatre", 1.0, 1.0, 7 / 11, "containment"),     # distance 4 of 11
    ("apple", "an apple", 1.0, 1.0, 5 / 8, "containment"),           # distance 3 of 8
    ("", "A", 1.0, 1.0, 0.0, "both_empty"),                          # both normalise to '': similarity 1; raw '' vs 'a': 0
    ("theatre", "the", 0.0, 0.0, 0.0, "no_match"),                   # gold normalises to '': no containment, F1 0; raw 3/7 < 0.5
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("pred,gold,acc,f1,anls,rule", ARTICLES)
def test_article_rows_by_hand(pred, gold, acc, f1, anls, rule, profile):
    j = judge(pred, [gold], "Str", "casefold_exact_match", profile=profile)
    assert (j.accuracy, j.token_f1, j.decided_by) == (acc, f1, rule)
    assert j.anls == pytest.approx(anls, abs=1e-12)

"""Why the three metrics agree or disagree on one answer: disagreement categories (issue 9).

    categorize(judgement)          -> ("fragile_pass", "right_all_agree")   every category that applies
    primary(judgement)             -> "fragile_pass"                         the first of them
    category_row(qid, judgement)   -> the row of `python -m scoring --categories-csv`

The category ids and their order are a contract (they appear in exports). A metric *passes* when
the answer is right by Accuracy (`Profile.is_right`: Accuracy 1, or on MMLongBench-Doc, whose
Accuracy is a partial score, at least 0.5 -- scoring.profiles.RIGHT_AT says why), token F1 >= 0.5,
ANLS >= 0.5 (scoring.registry.PASS_THRESHOLDS). "Accuracy 1" below reads "right by Accuracy" and
"Accuracy 0" "not right" under a profile with partial scores. Each question x run
carries every category that applies -- at least one -- listed in the order of CATEGORIES; the
first is its primary category. Everything is read from the `scoring.metrics.Judgement` record:
the scores, the rule that decided Accuracy (`decided_by`) with its `threshold` and `details`, the
normalised strings and the profile's settings.

How the issue's words are read here (tests/test_categories.py pins each one):

- *failed status*: `not scoring.registry.is_success_status(status)`; a question without a
  prediction has status "missing", which is not a success status. When the status alone decided
  the scores (profiles that score failed predictions 0: `decided_by` "missing" or
  "failed_status"), no text was scored, so `failed_or_missing` is the only category and `fuzzy`
  is 0. Under `xldocbench-1519`, which scores a failed prediction's text, the text's categories
  follow `failed_or_missing`.
- *failure marker*: an answer that is `scoring.registry.FAILURE_MARKERS` (`Fail to answer`, which
  MMLongBench-Doc writes when its extractor gave nothing) and is not right is `failed_or_missing`
  (with `extraction_miss` when the gold is in the raw response) and nothing else: it is neither a
  refusal nor an invented answer.
- *answerable*: the gold's answer format does not map to "unanswerable"
  (`scoring.metrics.answer_type(format, rule)`; this is the Judgement's `answer_type` except under
  DocVQA, where that says "anls" for every question).
- *refusal phrase*: one of `scoring.metrics.REFUSAL_PHRASES` inside the normalised prediction --
  the test the Accuracy rule of unanswerable questions makes. `invented_answer` needs a non-empty
  normalised prediction without one (an empty answer invents nothing).
- *numeric question*: answer type "numeric" or "percentage". Relative errors use the numbers the
  Judgement read (its `details`, read by the profile's own number reader); when the reader found
  no number on either side the entity rule decided and the numeric categories do not apply.
- *fragile pass*: Accuracy 1 decided by `containment` of a normalised gold of at most two
  characters; by `similarity` (or its `both_empty` branch: both sides normalise to "", e.g. gold
  "A" -- an article -- so any answer without letters or with only articles passes); by
  `boolean_polarity` where the polarity word that decided is only part of a longer word
  ("incorrect" contains "correct", "not" contains "no"), on the prediction's or the gold's side;
  or by the numeric rule with a prediction not equal to the gold (within the tolerance, or within
  the zero bound of a zero gold).
- *verbose*: the normalised prediction has at least twice as many tokens as the normalised gold,
  and at least three more.
- *probably right, scored wrong*: ANLS >= 0.8 or `fuzzy` >= 0.9, where `fuzzy` is
  `scoring.extra.fuzzy` (the seed-001 score) of the scored text (after the overflow substitution
  and DocVQA's ANSWER: extraction) against the gold, best over the acceptable answers under DocVQA.
- *unit or scale slip*: within the profile's tolerance of gold x 10^k for k in +-2, +-3, +-6.
- Under `docvqa` (several acceptable answers) Accuracy is exact match after lower-casing and
  space folding, so no pass is fragile; F1, ANLS and fuzzy are the best over the answers; the
  profile reads no numbers, so `unit_or_scale_slip` and `numeric_near_miss` never apply and every
  question counts as non-numeric for `probably_right_scored_wrong` and `wrong_but_string_credit`.

Cost: the tests run cheapest first; `fuzzy` (rapidfuzz) is computed only when Accuracy is 0 on a
non-numeric question whose ANLS is below 0.8 (or when the CSV asks for it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from .extra import normalize_fuzzy
from .metrics import FALSE_WORDS, REFUSAL_PHRASES, TRUE_WORDS, Judgement, answer_type
from .mmlongbench_rule import extraction_miss
from .model import quick_state
from .registry import PASS_THRESHOLDS, is_failure_marker, is_success_status
from .text import normalize_answer

__all__ = [
    "CATEGORIES", "CATEGORY_IDS", "CATEGORY_LABELS", "CSV_COLUMNS", "SCALE_POWERS", "NEAR_MISS_LIMIT",
    "PROBABLY_RIGHT_ANLS", "PROBABLY_RIGHT_FUZZY", "Categorized", "categorize", "primary", "classify",
    "fuzzy_score", "seed_fuzzy", "category_row", "write_categories_csv", "answerable", "is_numeric", "refusal_phrase",
]

# id -> one sentence; the order is the contract's (the primary category is the first that applies)
CATEGORIES: dict[str, str] = {
    "failed_or_missing": "No prediction for the question, the run reported a failed status, or the answer is a "
                         "benchmark's failure marker (MMLongBench-Doc's `Fail to answer`: nothing was extracted).",
    "extraction_miss": "The extracted answer scored 0, yet the gold (read as its format reads it) occurs in the "
                       "model's raw response: the answer extraction, not the model, likely failed (only where a "
                       "response exists, as in MMLongBench-Doc result files).",
    "false_refusal": "An answerable question answered with a refusal phrase (e.g. \"not answerable\").",
    "invented_answer": "An unanswerable question answered with something other than a refusal phrase.",
    "fragile_pass": "Accuracy 1, but decided by a weak rule: containment of a gold of at most two characters, "
                    "the similarity threshold, a yes/no word found inside a longer word (\"incorrect\"), or a "
                    "number within the tolerance but not equal.",
    "right_but_verbose": "Accuracy 1, but token F1 or ANLS fails because the answer is long: at least twice the "
                         "gold's tokens and at least three more.",
    "right_other_format": "Accuracy 1, but token F1 or ANLS fails on a short answer written another way "
                          "(1,250 vs 1250, Yes vs True, (B) vs B).",
    "right_all_agree": "Accuracy, token F1 and ANLS all pass.",
    "same_words_other_order": "Accuracy 0, yet the answer has exactly the gold's tokens (token F1 = 1), in "
                              "another order.",
    "probably_right_scored_wrong": "Accuracy 0 on a non-numeric question, yet the answer is nearly the gold "
                                   "(ANLS ≥ 0.8 or fuzzy ≥ 0.9): likely a scoring-rule miss.",
    "unit_or_scale_slip": "Numeric question, Accuracy 0, but the answer is the gold times 10^k (k = ±2, ±3, ±6) "
                          "within the tolerance: a unit or scale slip.",
    "numeric_near_miss": "Numeric question, Accuracy 0, relative error above the tolerance but at most 20 %.",
    "partially_right": "Accuracy 0, with part of the gold's tokens (0.5 ≤ token F1 < 1).",
    "wrong_but_string_credit": "Accuracy 0, yet token F1 or ANLS passes on string overlap alone (21 for 23 "
                               "gets ANLS 0.5).",
    "wrong_all_agree": "All three metrics fail, and nothing above applies.",
}
CATEGORY_IDS: tuple[str, ...] = tuple(CATEGORIES)
CATEGORY_LABELS: dict[str, str] = {c: c.replace("_", " ").capitalize() for c in CATEGORY_IDS}
CSV_COLUMNS = ("question_id", "category", "categories", "accuracy", "token_f1", "anls", "fuzzy", "decision")

SCALE_POWERS = (2, -2, 3, -3, 6, -6)
NEAR_MISS_LIMIT = 0.20
PROBABLY_RIGHT_ANLS = 0.8
PROBABLY_RIGHT_FUZZY = 0.9
FRAGILE_CONTAINMENT_CHARS = 2
_F1_PASS, _ANLS_PASS = PASS_THRESHOLDS["token_f1"], PASS_THRESHOLDS["anls"]
_NUMERIC = frozenset({"numeric", "percentage"})
_EPS = 1e-9


def answerable(j: Judgement) -> bool:
    return answer_type(j.answer_format, j.verification_rule) != "unanswerable"


def is_numeric(j: Judgement) -> bool:
    """A numeric question under a profile that reads numbers (not DocVQA)."""
    return not j.profile.multi_answer and answer_type(j.answer_format, j.verification_rule) in _NUMERIC


def refusal_phrase(normalised_prediction: str) -> str | None:
    return next((p for p in REFUSAL_PHRASES if p in normalised_prediction), None)


def fuzzy_score(j: Judgement, *, at_least: float = 0.0) -> float:
    """`scoring.extra.fuzzy` of the scored text against the gold (best over DocVQA's answers);
    0.0 when the status alone decided (no text was scored). With `at_least`, any value below it
    may come back as 0.0 (rapidfuzz's score cut-off: faster when only a threshold matters)."""
    if not j.scored:
        return 0.0
    text = j.scored_text
    golds = j.answers if j.profile.multi_answer else j.answers[:1]
    return max((seed_fuzzy(text, g, at_least=at_least) for g in golds), default=0.0)


@lru_cache(maxsize=65_536)
def _normalized_gold(gold: str) -> str:
    """normalize_answer of a gold value, memoised: the same gold recurs in every run."""
    return normalize_answer(gold)


@lru_cache(maxsize=65_536)
def _fuzzy_norm_cached(text: str) -> str:
    return normalize_fuzzy(text)


def seed_fuzzy(prediction: str, gold: str, *, at_least: float = 0.0) -> float:
    """scoring.extra.fuzzy, the same value computed faster: the ASCII path of the normalisation,
    the gold's normalisation memoised (a gold recurs in every run), and rapidfuzz's token_ratio
    (the max of token_sort_ratio and token_set_ratio in one call). tests/test_categories.py checks
    it equals scoring.extra.fuzzy."""
    if prediction == gold:
        return 1.0
    a, b = (_fuzzy_norm_cached(gold) if len(gold) <= 200 else normalize_fuzzy(gold)), normalize_fuzzy(prediction)
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    if len(shorter) > 20 and shorter in longer:
        ratio = len(shorter) / len(longer)
        if ratio > 0.3:
            return (85 + ratio * 15) / 100
    cut = 100 * at_least
    best = fuzz.token_ratio(a, b, score_cutoff=cut)
    return max(best, fuzz.partial_ratio(a, b, score_cutoff=max(cut, best))) / 100


def _word_part(normalised: str, words: Iterable[str]) -> bool | None:
    """For the polarity words found in `normalised` (as substrings, the way the rule looks):
    True when none of them is a whole token, False when one is, None when none is found."""
    found = [w for w in words if w in normalised]
    if not found:
        return None
    tokens = set(normalised.split())
    return not any(w in tokens for w in found)


def _boolean_fragile(p_norm: str, g_norm: str) -> bool:
    for text in (p_norm, g_norm):
        part = _word_part(text, TRUE_WORDS)  # the rule looks for a true word first
        if part is None:
            part = _word_part(text, FALSE_WORDS)
        if part:
            return True
    return False


def _exact(j: Judgement, g_norm: str, p_norm: str) -> bool:
    """An exact match: equal after normalisation (when that leaves any text), or equal texts
    ignoring case and surrounding blanks (a gold `A` normalises to nothing, as an article)."""
    if p_norm:
        return p_norm == g_norm
    gold = j.gold.strip().casefold()
    return bool(gold) and j.scored_text.strip().casefold() == gold


def _fragile(j: Judgement, g_norm: str, p_norm: str) -> bool:
    rule = j.decided_by
    if _exact(j, g_norm, p_norm):  # `B` = `B`, `A` = `A`: never fragile, whatever the rule
        return False
    if rule == "containment":
        return len(g_norm) <= FRAGILE_CONTAINMENT_CHARS
    if rule in ("similarity", "both_empty"):
        return True
    if rule == "boolean_polarity":
        return _boolean_fragile(p_norm, g_norm)
    read = j.numbers_read
    if read is not None:
        return read.prediction[0] != read.gold[0]
    return False


def _numbers(j: Judgement) -> tuple[float, float] | None:
    """(prediction, gold) values the numeric rule read, or None when it read none."""
    read = j.numbers_read
    return None if read is None else (read.prediction[0], read.gold[0])


def _scale_slip(pv: float, gv: float, tol: float) -> bool:
    for k in SCALE_POWERS:
        target = gv * 10.0 ** k
        if abs(pv - target) <= tol * abs(target) + _EPS * abs(target):
            return True
    return False


@quick_state
@dataclass(frozen=True, slots=True)
class Categorized:
    categories: tuple[str, ...]
    fuzzy: float | None  # computed only when a category needed it (see classify)

    @property
    def primary(self) -> str:
        return self.categories[0]


def classify(j: Judgement, *, with_fuzzy: bool = False, response: object = None) -> Categorized:
    """The categories of one judgement, and `fuzzy` when it was computed (always with `with_fuzzy`).
    `response`: the model's raw answer when the run has one beside the scored (extracted) text --
    only then can `extraction_miss` apply (scoring.mmlongbench_rule.extraction_miss)."""
    fz: float | None = fuzzy_score(j) if with_fuzzy else None
    failed = j.prediction is None or not is_success_status(j.status)
    if not j.scored:  # the status decided: nothing else was looked at
        return Categorized(("failed_or_missing",), 0.0 if with_fuzzy else None)
    acc_pass = j.profile.is_right(j.accuracy)
    marker = not acc_pass and is_failure_marker(j.prediction)  # `Fail to answer`: nothing was extracted
    out: list[str] = ["failed_or_missing"] if failed or marker else []
    if response is not None and j.accuracy == 0:
        if extraction_miss(j.gold, j.answer_format, response, j.accuracy):
            out.append("extraction_miss")
    if marker:  # not a refusal, not an invented answer, not a wrong one: no answer
        return Categorized(_ordered(out), fz)
    f1, an = j.token_f1, j.anls
    f1_pass, anls_pass = f1 >= _F1_PASS - _EPS, an >= _ANLS_PASS - _EPS
    p_norm = j.normalized_prediction
    g_norm = j.normalized_gold if j.profile.multi_answer else _normalized_gold(j.gold)
    refusal = refusal_phrase(p_norm)
    if answerable(j):
        if refusal is not None:
            out.append("false_refusal")
    elif refusal is None and p_norm:
        out.append("invented_answer")
    numeric = is_numeric(j)
    if acc_pass:
        if not j.profile.multi_answer and _fragile(j, g_norm, p_norm):
            out.append("fragile_pass")
        if f1_pass and anls_pass:
            out.append("right_all_agree")
        else:
            np_, ng = len(p_norm.split()), len(g_norm.split())
            out.append("right_but_verbose" if np_ >= 2 * ng and np_ >= ng + 3 else "right_other_format")
        return Categorized(_ordered(out), fz)
    # not right (Accuracy 0, or under a partial score below the profile's right_at)
    same = f1 >= 1.0 - _EPS
    if same:
        out.append("same_words_other_order")
    probably = False
    if not numeric:
        if an >= PROBABLY_RIGHT_ANLS - _EPS:
            probably = True
        else:
            probably = (fz if fz is not None else fuzzy_score(j, at_least=PROBABLY_RIGHT_FUZZY)) >= PROBABLY_RIGHT_FUZZY - _EPS
        if probably:
            out.append("probably_right_scored_wrong")
    nums = _numbers(j) if numeric else None
    if nums is not None and nums[1] != 0:
        pv, gv = nums
        tol = j.profile.numeric_tolerance or 0.0
        if _scale_slip(pv, gv, tol):
            out.append("unit_or_scale_slip")
        rel = abs(pv - gv) / abs(gv)
        if tol < rel <= NEAR_MISS_LIMIT + _EPS:
            out.append("numeric_near_miss")
    partial = _F1_PASS - _EPS <= f1 < 1.0 - _EPS
    if partial:
        out.append("partially_right")
    if (f1_pass or anls_pass) and (numeric or not (same or probably or partial)):
        out.append("wrong_but_string_credit")
    if not out:
        out.append("wrong_all_agree")
    return Categorized(_ordered(out), fz)


_RANK = {c: i for i, c in enumerate(CATEGORY_IDS)}


def _ordered(found: list[str]) -> tuple[str, ...]:
    return tuple(sorted(found, key=_RANK.__getitem__))


def categorize(j: Judgement) -> tuple[str, ...]:
    """Every category that applies to the judgement, in contract order (the primary first)."""
    return classify(j).categories


def primary(j: Judgement | Categorized | tuple[str, ...]) -> str:
    """The primary category of a judgement (or of its categories)."""
    if isinstance(j, Categorized):
        return j.primary
    if isinstance(j, tuple):
        return j[0]
    return classify(j).categories[0]


def category_row(question_id: str, j: Judgement) -> list:
    """One row of the categories CSV, in CSV_COLUMNS order: scores rounded to 6 decimals like the
    per-question CSV; `categories` joined by ';'; `decision` is the rule that decided Accuracy."""
    c = classify(j, with_fuzzy=True)
    return [question_id, c.primary, ";".join(c.categories), round(j.accuracy, 6), round(j.token_f1, 6),
            round(j.anls, 6), round(c.fuzzy or 0.0, 6), j.decided_by]


def write_categories_csv(path, results) -> int:
    """Write the categories CSV of `results` -- (question_id, Judgement) pairs or objects with `qid`
    and `judgement` (scoring.evaluate.QuestionResult) -- to `path` (folders created); returns the
    number of rows. Line ends and quoting as the per-question CSV (csv module defaults)."""
    from pathlib import Path

    from .writers import write_csv

    def rows():
        for item in results:
            qid, j = (item.qid, item.judgement) if hasattr(item, "judgement") else item
            yield category_row(qid, j)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        return write_csv(fh, rows(), CSV_COLUMNS)

"""MMLongBench-Doc's rule: the released evaluator's score of one answer (`eval_score`,
`judge_mmlongbench`), its Acc and F1 over a run (`acc_and_f1`), and whether an extraction missed
a gold answer the raw response holds (`extraction_miss`). Reading the benchmark's files is
scoring/mmlongbench.py; its text report, scoring/mmlongbench_report.py.

The rules below were learned by reading the benchmark's evaluator (`eval/eval_score.py` and
`run_api.py` of mayubo2333/MMLongBench-Doc) and are written here in our own terms. Wherever the
evaluator returns a value, `eval_score` returns the same value. Where it would raise, or would
run model text through Python's `eval`, nothing is executed: the row gets a score from one of
the documented fallback rules (`FALLBACK_RULES`), and `judge_mmlongbench` names the rule in its
`note` so the dashboard can show it by question id.

How the evaluator scores one answer (gold `gt`, extracted prediction `pred`, format `fmt`):

* cleaning (`clean_string`): text form, lower case, strip; every parenthesised group `(...)` is
  removed together with the white space before it; one quote character at each end is removed;
  leading `$` and trailing `%` characters are removed. (Its lines meant to cut `mile`, `miles`,
  `million` have no effect: their results are discarded.)
* `Int`: `int(gt) == int(float(pred))` -- a decimal prediction is truncated (`5.9` scores for
  `5`). When either conversion fails the prediction is replaced by `""` and the *unconverted*
  gold is compared with it, so an empty gold scores 1 whatever the answer.
* `Float`: both sides cleaned and read with `float()`; equal when the prediction is within 1 %
  (relative) of the gold, the gold / 100 or the gold * 100, or equal to one of them after rounding
  both to the shorter number of decimals of the two (at least 2, 3 for a number printed without a
  `.`).
* `Str` and `None`: the cleaned gold is "exact-match" text (a URL, a `.py`/`ipynb` name, text
  starting `page`, a telephone-like or date-like number, a.m./p.m., an e-mail address): 1 when the
  cleaned strings are equal. Otherwise ANLS: 1 - distance / length, with the length of the longer
  *upper-cased* string, kept only when strictly above 0.5.
* any other format (`List`, but also unknown ones): text starting with `[` is read as a Python
  literal, anything that is not a list becomes a one-element list; lists of different lengths
  score 0. Otherwise the cleaned elements of each side are sorted; when the first gold element
  reads as a float or is exact-match text the two sides must be equal joined with `-`, else the
  score is the minimum ANLS of the pairs in sorted order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

from .limits import LITERAL_MAX_CHARS, LITERAL_MAX_DEPTH, LITERAL_MAX_ITEMS
from .model import GoldQuestion, quick_state
from .reading import read_literal
from .text import drop_parenthesised

__all__ = [
    "FORMATS",
    "NOT_ANSWERABLE",
    "FALLBACK_RULES",
    "MMJudgement",
    "clean_string",
    "is_exact_match_text",
    "release_anls",
    "float_matches",
    "judge_mmlongbench",
    "eval_score",
    "judge_question",
    "acc_and_f1",
    "extraction_miss",
]

FORMATS = ("Int", "Float", "Str", "List", "None")
NOT_ANSWERABLE = "Not answerable"

# The rules for the rows the released evaluator cannot score without raising or executing text.
FALLBACK_RULES: dict[str, str] = {
    "gold_not_literal": "format List (or unknown): the gold starts with '[' but is not a Python literal "
                        f"(or is longer than {LITERAL_MAX_CHARS:,} characters, has more than {LITERAL_MAX_ITEMS:,} items or is nested "
                        f"deeper than {LITERAL_MAX_DEPTH}); "
                        "the release would eval it. Scored 0.",
    "pred_not_literal": "format List (or unknown): the prediction starts with '[' but is not a Python literal "
                        f"(or is longer than {LITERAL_MAX_CHARS:,} characters, has more than {LITERAL_MAX_ITEMS:,} items or is nested "
                        f"deeper than {LITERAL_MAX_DEPTH}); "
                        "the release would eval it (and raise, or run it). Scored 0.",
    "empty_lists": "format List (or unknown): gold and prediction are both empty lists; the release raises "
                   "IndexError. Scored 1 (two empty lists are equal joined with '-', the rule it would apply).",
    "float_gold_not_number": "format Float: the gold does not read as a number; the release raises ValueError. "
                             "Scored by the Str rule (cleaned strings: exact-match text must be equal, else ANLS above 0.5).",
}


# ----------------------------------------------------------------------------- cleaning


def clean_string(value: Any) -> str:
    """The evaluator's cleaning of one answer (see the module text)."""
    s = str(value).lower().strip()
    s = drop_parenthesised(s).strip()
    if s[:1] in ("'", '"'):
        s = s[1:]
    if s[-1:] in ("'", '"'):
        s = s[:-1]
    s = s.strip().lstrip("$").strip()
    return s.strip().rstrip("%").strip()


# One anchored match each, no quantified group over a class it overlaps: linear time.
_PHONE_LIKE = re.compile(r"\d+(?:[-\s]\d+)?")
_DATE_LIKE = re.compile(r"\d{4}[-\s]\d{2}(?:[-\s]\d{2})?")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_EMAIL_DOMAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _is_email(s: str) -> bool:
    """`local@domain.tld` as the evaluator's pattern accepts it, checked without backtracking: one
    `@`, a non-empty local part of letters, digits and `._%+-`, a domain of letters, digits, `.`
    and `-` whose last `.` has at least one character before it and two or more ASCII letters
    (only) after it."""
    at = s.find("@")
    if at <= 0 or s.find("@", at + 1) >= 0:
        return False
    local, domain = s[:at], s[at + 1:]
    if not _EMAIL_LOCAL.issuperset(local) or not _EMAIL_DOMAIN.issuperset(domain):
        return False
    dot = domain.rfind(".")
    tld = domain[dot + 1:]
    return dot >= 1 and len(tld) >= 2 and _ASCII_LETTERS.issuperset(tld)


def is_exact_match_text(s: str) -> bool:
    """Whether cleaned gold text is compared for equality instead of by ANLS."""
    return (
        "https://" in s
        or s.endswith(".py")
        or s.endswith("ipynb")
        or s.startswith("page")
        or "a.m." in s
        or "p.m." in s
        or _PHONE_LIKE.fullmatch(s) is not None
        or _DATE_LIKE.fullmatch(s) is not None
        or _is_email(s)
    )


def _reads_as_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- the measures


def release_anls(gold: str, pred: str) -> float:
    """The evaluator's ANLS of two (already cleaned) strings: 1 - d / L where d is the Levenshtein
    distance of the strings as given and L the length of the longer one *after upper-casing*
    (`ß` counts 2); 1.0 when L is 0; 0.0 unless strictly above 0.5. Not `scoring.metrics.anls`,
    which keeps 0.5 itself and measures the strings as they are. A distance cut-off keeps long,
    dissimilar strings cheap; the kept value is the exact formula."""
    length = max(len(gold.upper()), len(pred.upper()))
    if length == 0:
        return 1.0
    cutoff = length // 2 + 1  # a distance above this gives 1 - d/L < 0.5
    if abs(len(gold) - len(pred)) > cutoff:
        return 0.0
    d = Levenshtein.distance(gold, pred, score_cutoff=cutoff)
    if d > cutoff:
        return 0.0
    value = 1.0 - float(d) / float(length)
    return value if value > 0.5 else 0.0


def _decimals(x: float) -> int:
    text = str(x)
    return len(text.split(".")[-1]) if "." in text else 3


def float_matches(gold: float, pred: float) -> bool:
    """The evaluator's number comparison for `Float` (percentages allowed, 1 % tolerance): the
    prediction matches gold / 100, gold or gold * 100 within a relative 1 %, or equals one of them
    once both are rounded to the fewer decimals of the two printed numbers (at least 2)."""
    for target in (gold / 100, gold, gold * 100):
        try:
            if math.isclose(target, pred, rel_tol=0.01):
                return True
            digits = max(min(_decimals(pred), _decimals(target)), 2)
            if round(pred, digits) == round(target, digits):
                return True
        except (ValueError, OverflowError, TypeError):
            continue
    return False


@quick_state
@dataclass(frozen=True, slots=True)
class MMJudgement:
    """One answer's score under the released evaluator, and the fallback rule (a key of
    FALLBACK_RULES) when the evaluator itself would have raised or executed text."""

    score: float
    note: str | None = None

    @property
    def explanation(self) -> str:
        return FALLBACK_RULES.get(self.note or "", "")


def _judge_int(gt: Any, pred: Any) -> MMJudgement:
    try:
        g, p = int(gt), int(float(pred))
    except Exception:  # the evaluator's bare except: the prediction becomes "", gt stays as it was
        return MMJudgement(1.0 if gt == "" else 0.0)
    return MMJudgement(1.0 if g == p else 0.0)


def _judge_text(gt: Any, pred: Any) -> float:
    g, p = clean_string(gt), clean_string(pred)
    if is_exact_match_text(g):
        return 1.0 if g == p else 0.0
    return release_anls(g, p)


def _judge_float(gt: Any, pred: Any) -> MMJudgement:
    try:
        g = float(clean_string(gt))
    except ValueError:
        # The evaluator then reads the raw gold once more (strip, trailing %) and raises if that fails.
        try:
            float(str(gt).strip().rstrip("%").strip())
        except ValueError:
            return MMJudgement(_judge_text(gt, pred), "float_gold_not_number")
        return MMJudgement(0.0)  # the prediction was replaced by "", which is no number
    try:
        p = float(clean_string(pred))
    except ValueError:
        return MMJudgement(0.0)
    return MMJudgement(1.0 if float_matches(g, p) else 0.0)


def _as_list(value: Any, note: str) -> tuple[list[Any] | None, str | None]:
    if isinstance(value, str) and value.startswith("["):
        ok, value = read_literal(value)
        if not ok:
            return None, note
    return (value if isinstance(value, list) else [value]), None


def _judge_list(gt: Any, pred: Any) -> MMJudgement:
    golds, note = _as_list(gt, "gold_not_literal")
    if golds is None:
        return MMJudgement(0.0, note)
    preds, note = _as_list(pred, "pred_not_literal")
    if preds is None:
        return MMJudgement(0.0, note)
    if len(golds) != len(preds):
        return MMJudgement(0.0)
    if not golds:
        return MMJudgement(1.0, "empty_lists")
    g = sorted(clean_string(v) for v in golds)
    p = sorted(clean_string(v) for v in preds)
    if _reads_as_float(g[0]) or is_exact_match_text(g[0]):
        return MMJudgement(1.0 if "-".join(g) == "-".join(p) else 0.0)
    return MMJudgement(min(release_anls(a, b) for a, b in zip(g, p)))


def judge_mmlongbench(gt: Any, pred: Any, answer_format: Any) -> MMJudgement:
    """The released evaluator's score of `pred` against `gt` under `answer_format` (values as read
    from JSON: str, numbers, booleans, null, lists, objects), with the fallback note where it applies.
    Never raises and never executes anything."""
    if answer_format == "Int":
        return _judge_int(gt, pred)
    if answer_format == "Float":
        return _judge_float(gt, pred)
    if answer_format in ("Str", "None"):
        return MMJudgement(_judge_text(gt, pred))
    return _judge_list(gt, pred)


def eval_score(gt: Any, pred: Any, answer_type: Any) -> float:
    """The released `eval_score(gt, pred, answer_type)` (fallback rules where it raises or evals)."""
    return judge_mmlongbench(gt, pred, answer_type).score


def judge_question(question: GoldQuestion, pred: Any) -> MMJudgement:
    """`judge_mmlongbench` of a question loaded by `load_samples` (its gold value as read)."""
    gold = question.metadata.get("answer", question.gold_answer)
    return judge_mmlongbench(gold, pred, question.raw_format if question.format_given else "Str")


# ----------------------------------------------------------------------------- Acc and F1


def _has_score(row: Mapping[str, Any]) -> bool:
    return isinstance(row.get("score"), (int, float))  # bool included: the evaluator's sum() adds them


def acc_and_f1(rows: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """The released `eval_acc_and_f1` over benchmark-shaped rows (`answer`, `pred`, `score`).

    Rows with a numeric `score` are the evaluated ones (none: 0.0, 0.0); the evaluator takes every
    row with a `score` key and raises on a non-numeric one, which here counts as not evaluated.
    Acc is the mean score of the evaluated rows.
    Recall = the summed scores of answerable rows (`answer` is not exactly "Not answerable") over
    the number of answerable rows; precision = that same sum over the number of rows whose `pred`
    is not exactly "Not answerable"; F1 = 2PR / (P + R), 0.0 when P + R is not above 0 -- and 0.0
    when either count is 0 or an evaluated row lacks `answer` or `pred` (the evaluator's bare
    except). Sums are Python's built-in sum in row order, as there (so the last bits follow the
    interpreter: Python 3.12 changed sum() of floats to a compensated sum)."""
    evaluated = [r for r in rows if _has_score(r)]
    if not evaluated:
        return 0.0, 0.0
    acc = sum(r["score"] for r in evaluated) / len(evaluated)
    try:
        answerable = [r for r in evaluated if r["answer"] != NOT_ANSWERABLE]
        gained = sum(r["score"] for r in answerable)
        recall = gained / len(answerable)
        precision = gained / len([r for r in evaluated if r["pred"] != NOT_ANSWERABLE])
        f1 = 2 * recall * precision / (recall + precision) if (recall + precision) > 0.0 else 0.0
    except Exception:  # KeyError (no answer or pred), ZeroDivisionError (an empty count): the evaluator's bare except
        f1 = 0.0
    return acc, f1


# ----------------------------------------------------------------------------- extraction misses


_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:,\d{3})*(?:\.\d+)?")  # no two quantifiers can share a character
_NUMBER_MAX = 40  # longer digit runs are not read as numbers
_WORD_SEARCH_MAX = 1000  # a longer gold is looked for as a plain substring


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER.finditer(text):
        token = m.group()
        if len(token) <= _NUMBER_MAX:
            out.append(float(token.replace(",", "")))
    return out


def _occurs(needle: str, hay: str) -> bool:
    """`needle` (lower case) in `hay` (lower case), not glued to a letter or digit where the needle
    itself starts or ends with one (gold `yes` is not found in `yesterday`)."""
    if not needle:
        return False
    if len(needle) > _WORD_SEARCH_MAX:
        return needle in hay
    left = r"(?<!\w)" if re.match(r"\w", needle[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", needle[-1]) else ""
    return re.search(left + re.escape(needle) + right, hay) is not None


def extraction_miss(gold: Any, answer_format: Any, response: Any, pred_score: float | None) -> bool:
    """True when the extracted `pred` scored 0 although the gold answer, read as its format reads
    it, occurs in the raw `response`: for Int a number of the response equal to int(gold); for
    Float a number the evaluator's comparison accepts (1 %, percentages); for Str and None the
    cleaned gold, case-insensitively and not inside a longer word; for List (and unknown formats)
    every element of the gold list so (numbers as numbers). Linear in the response's length."""
    if pred_score is None or pred_score != 0 or not isinstance(response, str) or not response:
        return False
    hay = response.lower()
    if answer_format == "Int":
        try:
            target = int(gold)
        except Exception:
            return False
        return any(v == target for v in _numbers(response))
    if answer_format == "Float":
        try:
            g = float(clean_string(gold))
        except ValueError:
            return False
        return any(float_matches(g, v) for v in _numbers(response))
    if answer_format in ("Str", "None"):
        return _occurs(clean_string(gold), hay)
    elements, _ = _as_list(gold, "")
    if elements is None:
        elements = [gold]
    wanted = [e for e in (clean_string(v) for v in elements) if e]
    if not wanted:
        return False
    found = set(_numbers(response)) if any(_reads_as_float(e) for e in wanted) else set()
    for e in wanted:
        if _reads_as_float(e) and _NUMBER.fullmatch(e):
            if float(e.replace(",", "")) not in found:
                return False
        elif not _occurs(e, hay):
            return False
    return True

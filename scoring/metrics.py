"""Judging one answer: Accuracy, token F1 and ANLS under a profile, and the record of why.

`judge(...)` is the only scoring function. It returns a `Judgement` (after jiwer: one call, one
record): the inputs, the text that was scored, every measure, the rule that decided Accuracy with
its threshold, and the values that rule read (numbers, relative error, similarity, matched phrase
or letters). Derived views -- normalised strings, token overlap, a reason sentence, the trace --
are properties computed from the record on request, so the record stays cheap enough to build
for every question of a million-row run, and the trace can never disagree with the score.

`decide(...)` is the same computation returning a plain tuple, for worker processes that send
results back to the parent (the parent rebuilds the record with `Judgement.from_decision`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import harness_rules as hr
from .mmlongbench_rule import FALLBACK_RULES, judge_mmlongbench
from .model import GoldQuestion, Prediction
from .numbers import read_number, release_number
from .profiles import HARNESS_PROFILE_NAMES, LMMS_EVAL_PROFILE, OWN_ACCURACY_PROFILES, Profile, get_profile
from .registry import DEFAULT_STATUS, MISSING_STATUS, OVERFLOW_STATUSES, OVERFLOW_TEXT, is_success_status
from .text import levenshtein_similarity, normalize_answer, strip_prefixes

__all__ = [
    "ANSWER_TYPES",
    "REFUSAL_PHRASES",
    "TRUE_WORDS",
    "FALSE_WORDS",
    "ZERO_GOLD_TOLERANCE",
    "Judgement",
    "QuestionResult",
    "answer_type",
    "effective_prediction",
    "token_f1",
    "anls",
    "judge",
    "decide",
    "scores_of",
]

ANSWER_TYPES = {
    "Str": "entity",
    "Int": "numeric",
    "Float": "numeric",
    "None": "unanswerable",
    "Bool": "boolean",
    "Boolean": "boolean",
    "Percentage": "percentage",
}
REFUSAL_PHRASES = (
    "not answerable",
    "unanswerable",
    "cannot be determined",
    "cannot be answered",
    "not enough information",
    "context_overflow",
)
TRUE_WORDS = ("yes", "true", "correct")
FALSE_WORDS = ("no", "false", "incorrect")
_DEFAULT = get_profile(None)
ZERO_GOLD_TOLERANCE = 1e-6  # a gold of exactly 0 is matched by |prediction| below this
_CHOICE = re.compile(r"\b([A-D])\b")
# `ANSWER: text` on one line ([^\S\n] is white space other than a line end)
_ANSWER_LINE = re.compile(r"^[^\S\n]*answer[^\S\n]*:[^\S\n]*(.*?)[^\S\n]*$", re.IGNORECASE | re.MULTILINE)

# Rule codes (Judgement.decided_by) decided by the status alone
MISSING, FAILED = "missing", "failed_status"
# ... and by MMLongBench-Doc's own eval_score (profile mmlongbench-doc); the fallback's details name its rule
MMLONGBENCH, MMLONGBENCH_FALLBACK = "mmlongbench_eval_score", "mmlongbench_fallback"
# ... and by a harness's own rule (profiles lmms-eval and vlmevalkit: scoring/harness_rules.py)
HARNESS_RULE = "harness_rule"
_MMLONGBENCH_RULES = {
    "Int": "Int: int(gold) equals int(float(prediction)), a decimal prediction truncated",
    "Float": "Float: the prediction within 1 % of the gold, gold / 100 or gold x 100, or equal once rounded",
    "Str": "Str: cleaned strings; exact-match text (URL, date, phone, e-mail, 'page…') must be equal, else ANLS kept above 0.5",
}


def answer_type(answer_format: str, verification_rule: str = "") -> str:
    """Spec 3: the mapped type; the rule is only consulted for formats outside the map, and its
    text is compared as written (`numeric` or `tolerance`, lower case)."""
    fmt = answer_format or "Str"
    if fmt in ANSWER_TYPES:
        return ANSWER_TYPES[fmt]
    if "numeric" in verification_rule or "tolerance" in verification_rule:
        return "numeric"
    return fmt.lower()


def effective_prediction(text: str, status: str, profile: Profile) -> str:
    """The text that is scored: CONTEXT_OVERFLOW for overflow statuses (spec 1c); with a
    multi-answer profile (DocVQA), the text of the last `ANSWER: ...` line when there is one."""
    if status in OVERFLOW_STATUSES:
        return OVERFLOW_TEXT
    if profile.multi_answer:
        lines = _ANSWER_LINE.findall(text)
        if lines:
            return lines[-1]
    return text


def token_f1(p_norm: str, g_norm: str) -> float:
    """Set-based token F1 on normalised strings (spec 6)."""
    return _f1_of_sets(set(p_norm.split()), set(g_norm.split()))


def _f1_of_sets(pred: set[str], gold: set[str]) -> float:
    """`token_f1` of two word sets (the command line's column path keeps each gold's set)."""
    if not gold:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    shared = len(gold & pred)
    if shared == 0:
        return 0.0
    precision = shared / len(pred)
    recall = shared / len(gold)
    return 2 * precision * recall / (precision + recall)


def _docvqa_norm(text: str) -> str:
    return " ".join(text.strip().lower().split())


def _polarity(normalised: str) -> bool | None:
    if any(w in normalised for w in TRUE_WORDS):
        return True
    if any(w in normalised for w in FALSE_WORDS):
        return False
    return None


def _numbers(pred_eff: str, gold: str, p_norm: str, g_norm: str, profile: Profile):
    if profile.number_reader == "release":
        return release_number(p_norm), release_number(g_norm)
    return (
        read_number(strip_prefixes(pred_eff.strip().lower())),
        read_number(strip_prefixes(gold.strip().lower())),
    )


# (accuracy, token_f1, anls, decided_by, threshold, details): what a worker sends back
Decision = tuple[float, float, float, str, "float | None", tuple]


def _accuracy(pred_eff: str, gold: str, p_norm: str, g_norm: str, atype: str, profile: Profile
              ) -> tuple[float, str, float | None, tuple]:
    """Spec 5 (with C.1's number reader when the profile says so): (score, rule, threshold, details)."""
    if atype == "unanswerable":
        for phrase in REFUSAL_PHRASES:
            if phrase in p_norm:
                return 1.0, "refusal_phrase", None, (phrase,)
        return 0.0, "no_refusal_phrase", None, ()
    if atype == "boolean":
        pv = _polarity(p_norm)
        if pv is None:
            return 0.0, "boolean_unreadable", None, ()
        gv = _polarity(g_norm) is True
        return (1.0 if pv == gv else 0.0), "boolean_polarity", None, (pv, gv)
    if atype in ("numeric", "percentage"):
        pn, gn = _numbers(pred_eff, gold, p_norm, g_norm, profile)
        if pn is not None and gn is not None:
            pv, gv = pn[0], gn[0]
            if gv == 0:
                return (1.0 if abs(pv) < ZERO_GOLD_TOLERANCE else 0.0), "numeric_gold_zero", ZERO_GOLD_TOLERANCE, (pn, gn)
            rel = abs(pv - gv) / abs(gv)
            tol = profile.numeric_tolerance
            return (1.0 if rel <= tol else 0.0), "numeric_tolerance", tol, (pn, gn, rel)
        numbers: tuple = (pn, gn)
    elif atype == "single_choice":
        pm = _CHOICE.search(pred_eff.upper())
        gm = _CHOICE.search(gold.upper())
        if pm and gm:
            return (1.0 if pm.group(1) == gm.group(1) else 0.0), "choice_letter", None, (pm.group(1), gm.group(1))
        numbers = ()
    else:
        numbers = ()
    # entity rule, and the fallback of every other type; `numbers` keeps what a numeric question read
    if g_norm and g_norm in p_norm:
        return 1.0, "containment", None, numbers
    t: float = profile.similarity_threshold  # type: ignore[assignment]  # set on every single-answer profile
    sim = levenshtein_similarity(p_norm, g_norm, at_least=t)
    if sim >= t:
        return 1.0, ("both_empty" if not p_norm and not g_norm else "similarity"), t, numbers + (sim,) if numbers else (sim,)
    return 0.0, "no_match", t, numbers


def anls(pred: str, gold: str, profile: Profile | None = None) -> float:
    """Spec 6 (profile default: xldocbench): similarity of the raw strings (stripped, lower-cased), kept when the normalised
    distance is at most the profile's ANLS threshold (strictly below it when the profile does not
    keep the threshold)."""
    profile = profile or _DEFAULT
    floor = 1.0 - profile.anls_threshold
    return levenshtein_similarity(pred.strip().lower(), gold.strip().lower(), at_least=floor,
                                  strict=not profile.anls_keeps_threshold)


def _decide_docvqa(pred: str, answers: Sequence[str], profile: Profile) -> Decision:
    """Spec D: exact match with any acceptable answer; F1 and ANLS the best over the answers."""
    pn = _docvqa_norm(pred)
    normed = [_docvqa_norm(a) for a in answers]
    acc = 1.0 if pn in normed else 0.0
    p_norm = normalize_answer(pred)
    f1 = max((token_f1(p_norm, normalize_answer(a)) for a in answers), default=0.0)
    floor = 1.0 - profile.anls_threshold
    best = max((levenshtein_similarity(pn, a, at_least=floor, strict=not profile.anls_keeps_threshold) for a in normed),
               default=0.0)
    if acc:
        return acc, f1, best, "exact_answer", None, (answers[normed.index(pn)],)
    return acc, f1, best, "no_exact_answer", None, ()


def _answered(prediction: str | None, status: str | None, profile: Profile) -> tuple[str, str] | str:
    """The (text, status) an answer is scored with -- a missing one as "" with MISSING_STATUS, an
    absent status as DEFAULT_STATUS -- or, when the profile scores it 0 without reading it, the
    rule that says why (MISSING, FAILED)."""
    if prediction is None:
        if profile.failed_status_zero:
            return MISSING
        prediction, status = "", MISSING_STATUS
    elif not status:
        status = DEFAULT_STATUS
    if profile.failed_status_zero and not is_success_status(status):
        return FAILED
    return prediction, status


def decide(prediction: str | None, answers: Sequence[str], answer_format: str, verification_rule: str,
           status: str | None, profile: Profile) -> Decision:
    """The scores of one answer as a tuple (see `judge`, which wraps this in a record)."""
    answered = _answered(prediction, status, profile)
    if isinstance(answered, str):
        return 0.0, 0.0, 0.0, answered, None, ()
    pred = effective_prediction(*answered, profile)
    if profile.multi_answer:
        return _decide_docvqa(pred, answers, profile)
    gold = answers[0] if answers else ""
    p_norm = normalize_answer(pred)
    g_norm = normalize_answer(gold)
    if profile.name in HARNESS_PROFILE_NAMES:  # a harness's own per-task score is Accuracy
        acc, note = _harness_accuracy(pred, answers, answer_format, verification_rule, profile.name)
        return acc, token_f1(p_norm, g_norm), anls(pred, gold, profile), HARNESS_RULE, None, (note,) if note else ()
    if profile.name in OWN_ACCURACY_PROFILES:  # the benchmark's own score is Accuracy; F1 and ANLS as below
        m = judge_mmlongbench(gold, pred, answer_format)
        rule = MMLONGBENCH_FALLBACK if m.note else MMLONGBENCH
        return m.score, token_f1(p_norm, g_norm), anls(pred, gold, profile), rule, None, (m.note,) if m.note else ()
    acc, rule, threshold, details = _accuracy(pred, gold, p_norm, g_norm, answer_type(answer_format, verification_rule), profile)
    return acc, token_f1(p_norm, g_norm), anls(pred, gold, profile), rule, threshold, details


_ZEROS = (0.0, 0.0, 0.0)


def scores_of(items: Sequence[tuple], profile: Profile) -> list[tuple[float, float, float]]:
    """`[decide(text, answers, fmt, rule, status, profile)[:3] for text, status, answers, fmt, rule
    in items]` -- the three scores, not the rule's record -- with the work shared across items:
    every distinct text normalised once, each gold's lower-cased form and word set made once, each
    (format, rule) typed once. Profiles with a rule of their own (multi-answer,
    harness, MMLongBench-Doc) call `decide` item by item."""
    if profile.multi_answer or profile.name in HARNESS_PROFILE_NAMES or profile.name in OWN_ACCURACY_PROFILES:
        return [decide(text, answers, fmt, rule, status, profile)[:3] for text, status, answers, fmt, rule in items]
    plan: list[tuple[str, str, str, str] | None] = []  # (scored text, gold, format, rule); None: zero by its status
    for text, status, answers, fmt, rule in items:
        answered = _answered(text, status, profile)
        if isinstance(answered, str):
            plan.append(None)
            continue
        plan.append((effective_prediction(*answered, profile), answers[0] if answers else "", fmt, rule))
    norm = {t: normalize_answer(t) for t in {t for p in plan if p is not None for t in p[:2]}}
    types: dict[tuple[str, str], str] = {}
    lows: dict[str, str] = {}
    word_sets: dict[str, set[str]] = {}
    floor = 1.0 - profile.anls_threshold
    strict = not profile.anls_keeps_threshold
    out: list[tuple[float, float, float]] = []
    for p in plan:
        if p is None:
            out.append(_ZEROS)
            continue
        pred, gold, fmt, rule = p
        p_norm, g_norm = norm[pred], norm[gold]
        atype = types.get((fmt, rule))
        if atype is None:
            atype = types[fmt, rule] = answer_type(fmt, rule)
        acc = _accuracy(pred, gold, p_norm, g_norm, atype, profile)[0]
        if p_norm == g_norm:
            f1 = 1.0  # token_f1 of equal strings
        else:
            g_words = word_sets.get(g_norm)
            if g_words is None:
                g_words = word_sets[g_norm] = set(g_norm.split())
            f1 = _f1_of_sets(set(p_norm.split()), g_words)
        g_low = lows.get(gold)
        if g_low is None:
            g_low = lows[gold] = gold.strip().lower()
        out.append((acc, f1, levenshtein_similarity(pred.strip().lower(), g_low, at_least=floor, strict=strict)))
    return out



def _harness_accuracy(pred: str, answers: Sequence[str], answer_format: str, verification_rule: str,
                      harness: str) -> tuple[float, str]:
    """A harness's own per-question score (lmms-eval, VLMEvalKit) of one answer: DocVQA-style
    questions (verification rule `anls`) by the harness's ANLS, the others by its MMLongBench-Doc rule."""
    if verification_rule == "anls":
        if harness == LMMS_EVAL_PROFILE:
            return float(hr.lmms_anls(list(answers), pred.strip())), ""
        return hr.vlm_docvqa_score([hr.vlm_anls_distance(a, pred) for a in answers]), ""
    gold = answers[0] if answers else ""
    if harness == LMMS_EVAL_PROFILE:
        return float(hr.lmms_mmlongbench_score(gold, pred.strip(), answer_format)), ""
    score, note = hr.vlm_mmlongbench_score(gold, pred, math.nan if answer_format == "None" else answer_format)
    return float(score), note


class NumbersRead(NamedTuple):
    """What a numeric rule read: each side's (value, text) and, under the tolerance rule, the relative error."""

    prediction: tuple[float, str]
    gold: tuple[float, str]
    relative_error: float | None


NUMERIC_RULES = frozenset({"numeric_tolerance", "numeric_gold_zero"})


@dataclass(slots=True, eq=False)
class Judgement:
    """Everything that decided one answer's scores: inputs, the scored text, all measures, the
    rule that decided Accuracy with its threshold and the values it read."""

    # inputs
    prediction: str | None  # as read; None = no prediction for the question
    answers: tuple[str, ...]  # the gold value first; DocVQA lists every acceptable answer
    answer_format: str
    verification_rule: str
    status: str  # as read ("missing" when there is no prediction, "success" when absent)
    profile: Profile
    # measures
    accuracy: float
    token_f1: float
    anls: float
    # the Accuracy rule
    decided_by: str
    threshold: float | None  # tolerance, similarity threshold or zero bound of that rule
    details: tuple  # numbers read (value, text), relative error, similarity, phrase or letters

    @classmethod
    def from_decision(cls, decision: Decision, prediction: str | None, answers: Sequence[str], answer_format: str,
                      verification_rule: str, status: str | None, profile: Profile) -> Judgement:
        acc, f1, an, rule, threshold, details = decision
        st = MISSING_STATUS if prediction is None else (status or DEFAULT_STATUS)
        return cls(prediction, tuple(answers), answer_format, verification_rule, st, profile,
                   acc, f1, an, rule, threshold, details)

    # ------------------------------------------------------------------ derived, on request

    @property
    def gold(self) -> str:
        return self.answers[0] if self.answers else ""

    @property
    def scored_text(self) -> str:
        """The text that was scored (after the overflow substitution and ANSWER: extraction)."""
        return effective_prediction(self.prediction or "", self.status, self.profile)

    @property
    def reported_prediction(self) -> str:
        """The prediction of the release's per-question row: overflow substituted, nothing else."""
        if self.prediction is None:
            return ""
        return OVERFLOW_TEXT if self.status in OVERFLOW_STATUSES else self.prediction

    @property
    def answer_type(self) -> str:
        return "anls" if self.profile.multi_answer else answer_type(self.answer_format, self.verification_rule)

    @property
    def scored(self) -> bool:
        """False when the status alone decided (missing or failed): no rule read the text."""
        return self.decided_by not in (MISSING, FAILED)

    @property
    def normalized_prediction(self) -> str:
        text = self.scored_text
        return _docvqa_norm(text) if self.profile.multi_answer else normalize_answer(text)

    @property
    def normalized_gold(self) -> str:
        return _docvqa_norm(self.gold) if self.profile.multi_answer else normalize_answer(self.gold)

    @property
    def numbers_read(self) -> NumbersRead | None:
        """The values the numeric rule that decided read (`details` by name), or None when another rule decided."""
        if self.decided_by not in NUMERIC_RULES:
            return None
        d = self.details
        return NumbersRead(d[0], d[1], d[2] if self.decided_by == "numeric_tolerance" else None)

    @property
    def fallback_rule(self) -> str:
        """The MMLongBench-Doc fallback rule that scored the answer (`details` by name), '' when none did."""
        return self.details[0] if self.decided_by == MMLONGBENCH_FALLBACK else ""

    def _numbers(self) -> tuple[Any, Any]:
        read = self.numbers_read
        if read is not None:
            return read.prediction, read.gold
        if self.answer_type in ("numeric", "percentage") and self.scored:
            return _numbers(self.scored_text, self.gold, normalize_answer(self.scored_text),
                            normalize_answer(self.gold), self.profile)
        return None, None

    @property
    def prediction_number(self) -> tuple[float, str] | None:
        return self._numbers()[0]

    @property
    def gold_number(self) -> tuple[float, str] | None:
        return self._numbers()[1]

    @property
    def relative_error(self) -> float | None:
        read = self.numbers_read
        if read is not None and read.relative_error is not None:
            return read.relative_error
        pn, gn = self._numbers()
        if pn is None or gn is None or gn[0] == 0:
            return None
        return abs(pn[0] - gn[0]) / abs(gn[0])

    @property
    def similarity(self) -> float:
        """Normalised Levenshtein similarity of the normalised prediction and gold (the entity
        rule's measure), whatever rule decided; for DocVQA the best over the answers."""
        if self.profile.multi_answer:
            pn = self.normalized_prediction
            return max((levenshtein_similarity(pn, _docvqa_norm(a)) for a in self.answers), default=0.0)
        return levenshtein_similarity(self.normalized_prediction, self.normalized_gold)

    @property
    def shared_tokens(self) -> list[str]:
        return sorted(set(self.normalized_prediction.split()) & set(self.normalized_gold.split()))

    @property
    def prediction_only_tokens(self) -> list[str]:
        return sorted(set(self.normalized_prediction.split()) - set(self.normalized_gold.split()))

    @property
    def gold_only_tokens(self) -> list[str]:
        return sorted(set(self.normalized_gold.split()) - set(self.normalized_prediction.split()))

    @property
    def notes(self) -> list[str]:
        out = []
        if self.prediction is not None and self.scored_text != self.prediction:
            out.append(f"status {self.status!r}: the prediction is replaced by {OVERFLOW_TEXT}"
                       if self.status in OVERFLOW_STATUSES else "the last 'ANSWER:' line is scored")
        if self.decided_by == MMLONGBENCH_FALLBACK:
            out.append(f"fallback rule {self.fallback_rule}: the release evaluator would raise or eval here")
        elif self.scored and self.answer_type in ("numeric", "percentage") and self.decided_by != MMLONGBENCH:
            pn, gn = self._numbers()
            if pn is None or gn is None:
                side = "prediction" if pn is None else "gold"
                out.append(f"no number read from the {side} ({self.profile.number_reader} reader): the entity rule decides")
        return out

    @property
    def reason(self) -> str:
        """One sentence: why Accuracy is what it is."""
        p, d, t = self.profile, self.details, self.threshold
        rule = self.decided_by
        if rule == MISSING:
            return f"no prediction for this question: all metrics 0 (profile {p.name})"
        if rule == FAILED:
            return f"status {self.status!r} is a failed status: all metrics 0 (profile {p.name})"
        if rule == HARNESS_RULE:
            how = "ANLS (0.5 kept)" if self.verification_rule == "anls" else f"its MMLongBench-Doc rule for {self.answer_format}"
            return f"{p.name}'s own score, {how}: score {self.accuracy:g}" + (f" ({d[0]})" if d else "")
        if rule in (MMLONGBENCH, MMLONGBENCH_FALLBACK):
            if d:
                return f"MMLongBench-Doc fallback rule {d[0]}: {FALLBACK_RULES.get(d[0], '')} Score {self.accuracy:g}"
            how = _MMLONGBENCH_RULES.get(self.answer_format, _MMLONGBENCH_RULES["Str"] if self.answer_format == "None" else
                                         "List: same length, cleaned elements sorted; numbers and exact-match text equal "
                                         "joined with '-', else the minimum ANLS of the pairs")
            return f"MMLongBench-Doc eval_score, {how}: score {self.accuracy:g}"
        if rule == "exact_answer":
            return f"prediction equals acceptable answer {d[0]!r}"
        if rule == "no_exact_answer":
            return f"no acceptable answer equals {self.normalized_prediction!r} (after strip, lower-case, space folding)"
        if rule == "refusal_phrase":
            return f"unanswerable question: refusal phrase {d[0]!r} found in the normalised prediction"
        if rule == "no_refusal_phrase":
            return "unanswerable question: none of the refusal phrases (" + ", ".join(REFUSAL_PHRASES) + ") found"
        if rule == "boolean_unreadable":
            return "boolean question: no yes/true/correct or no/false/incorrect in the prediction"
        if rule == "boolean_polarity":
            return f"boolean question: prediction reads as {'yes' if d[0] else 'no'}, gold as {'yes' if d[1] else 'no'}"
        if rule == "numeric_gold_zero":
            return f"gold is 0: |{d[0][0]:g}| {'<' if self.accuracy else '≥'} {t:g}"
        if rule == "numeric_tolerance":
            return f"numbers {d[0][0]:g} vs {d[1][0]:g}: relative error {d[2]:.2%} {'≤' if self.accuracy else '>'} {t:.0%}"
        if rule == "choice_letter":
            return f"option letters {d[0]} vs {d[1]}"
        g_norm = self.normalized_gold
        if rule == "containment":
            return f"normalised gold {g_norm!r} is contained in the normalised prediction"
        if rule == "similarity":
            return f"similarity {d[-1]:.3f} ≥ {t:g}"
        if rule == "both_empty":
            return "both normalised strings are empty: similarity 1"
        sim = self.similarity
        if g_norm:
            return f"normalised gold {g_norm!r} not contained and similarity {sim:.3f} < {t:g}"
        return f"gold normalises to an empty string, so containment is skipped; similarity {sim:.3f} < {t:g}"

    def trace(self) -> list[tuple[str, str]]:
        """The Accuracy trace as (step, value) text rows, for people."""

        def num(n: tuple[float, str] | None) -> str:
            return "—" if n is None else f"{n[1]} → {n[0]:g}"

        rows = [
            ("Prediction as scored", self.scored_text if self.prediction is not None else "(no prediction)"),
            ("Status", self.status),
            ("Answer type", self.answer_type),
            ("Normalised prediction", self.normalized_prediction),
            ("Normalised gold", self.normalized_gold),
        ]
        if self.answer_type in ("numeric", "percentage"):
            rel = self.relative_error
            rows += [("Number read from the prediction", num(self.prediction_number)),
                     ("Number read from the gold", num(self.gold_number)),
                     ("Relative error", "—" if rel is None else f"{rel:.2%}")]
        rows += [
            ("Similarity", f"{self.similarity:.3f}"),
            ("Shared tokens", " ".join(self.shared_tokens) or "—"),
            ("Rule that decided", self.decided_by),
            ("Threshold", "—" if self.threshold is None else f"{self.threshold:g}"),
            ("Reason", self.reason),
            ("Notes", "; ".join(self.notes) or "—"),
        ]
        return rows


@dataclass(slots=True)
class QuestionResult:
    """One gold question of a run: the question, its prediction row (None when missing) and the
    judgement of the answer. Scores and the rule are read from the judgement."""

    question: GoldQuestion
    prediction: Prediction | None
    judgement: Judgement

    @property
    def qid(self) -> str:
        return self.question.qid

    @property
    def accuracy(self) -> float:
        return self.judgement.accuracy

    @property
    def token_f1(self) -> float:
        return self.judgement.token_f1

    @property
    def anls(self) -> float:
        return self.judgement.anls

    @property
    def status(self) -> str:
        return self.judgement.status

    @property
    def decided_by(self) -> str:
        return self.judgement.decided_by

    @property
    def effective(self) -> str:
        """The prediction as the release reports it (after the overflow substitution)."""
        return self.judgement.reported_prediction

    def row(self) -> dict:
        """The release per-question row (spec 7), scores rounded to 6 decimals."""
        q, j = self.question, self.judgement
        return {
            "question_id": q.qid,
            "prediction": j.reported_prediction,
            "gold_answer": q.gold_answer,
            "answer_format": q.row_format,
            "status": j.status,
            "accuracy": round(j.accuracy, 6),
            "token_f1": round(j.token_f1, 6),
            "anls": round(j.anls, 6),
            "split": q.split,
            "domain": q.raw_meta("domain"),
            "reasoning_type": q.raw_meta("reasoning_type"),
        }


def judge(
    prediction: str | None,
    answers: Sequence[str],
    answer_format: str = "Str",
    verification_rule: str = "",
    *,
    status: str | None = None,
    profile: str | Profile = "xldocbench",
) -> Judgement:
    """Judge one answer. `prediction=None` means the question has no prediction (status
    `missing`); `answers` lists the gold value first (DocVQA: every acceptable answer)."""
    p = get_profile(profile)
    return Judgement.from_decision(decide(prediction, answers, answer_format, verification_rule, status, p),
                                   prediction, answers, answer_format, verification_rule, status, p)


def column_scores(texts: Sequence[str | None], statuses: Sequence[str | None], answers: Sequence[Sequence[str]],
                  formats: Sequence[str], rules: Sequence[str], profile: Profile
                  ) -> tuple[list[float], list[float], list[float]]:
    """`scores_of(list(zip(texts, statuses, answers, formats, rules)), profile)` as three columns
    (Accuracy, token F1, ANLS): the same scores, with the work done a column at a time -- each
    distinct status read once, each distinct text normalised and lower-cased once, each (format,
    rule) typed once, Accuracy's entity rule (most questions) without a call per question."""
    if profile.multi_answer or profile.name in HARNESS_PROFILE_NAMES or profile.name in OWN_ACCURACY_PROFILES:
        scores = scores_of(list(zip(texts, statuses, answers, formats, rules)), profile)
        return [s[0] for s in scores], [s[1] for s in scores], [s[2] for s in scores]
    # the scored text of each question (`_answered`, `effective_prediction`), None: 0 by its status
    kinds: dict[str | None, str | None] = {}
    for s in set(statuses):
        answered = _answered("", s, profile)
        kinds[s] = None if isinstance(answered, str) else effective_prediction("\x00", answered[1], profile)
    missing = _answered(None, None, profile)
    missing_text = None if isinstance(missing, str) else effective_prediction("", missing[1], profile)
    scored: list[str | None] = [
        missing_text if t is None else (t if k == "\x00" else k)
        for t, k in zip(texts, map(kinds.__getitem__, statuses))
    ]
    golds = [a[0] if a else "" for a in answers]
    types = {k: answer_type(*k) for k in set(zip(formats, rules))}
    distinct: set[str] = {t for t in scored if t is not None}
    distinct.update(golds)
    norm = {t: normalize_answer(t) for t in distinct}
    low = {t: t.strip().lower() for t in distinct}
    words: dict[str, set[str]] = {}  # each gold's word set
    t_sim: float = profile.similarity_threshold  # type: ignore[assignment]  # set on every single-answer profile
    floor = 1.0 - profile.anls_threshold
    strict = not profile.anls_keeps_threshold
    same_kept = not (strict and floor >= 1.0)  # equal texts' similarity, 1, is kept (not at a strict threshold of 1)
    own_rule = _OWN_RULE_TYPES
    acc: list[float] = []
    f1: list[float] = []
    an: list[float] = []
    for pred, gold, atype in zip(scored, golds, map(types.__getitem__, zip(formats, rules))):
        if pred is None:
            acc.append(0.0)
            f1.append(0.0)
            an.append(0.0)
            continue
        p_norm, g_norm = norm[pred], norm[gold]
        if p_norm == g_norm:
            f1.append(1.0)  # token_f1 of equal strings
            if atype in own_rule:
                acc.append(_accuracy(pred, gold, p_norm, g_norm, atype, profile)[0])
            else:  # the entity rule: contained, or (both empty) similar
                acc.append(1.0 if p_norm or levenshtein_similarity(p_norm, g_norm, at_least=t_sim) >= t_sim else 0.0)
        else:
            if atype in own_rule:
                acc.append(_accuracy(pred, gold, p_norm, g_norm, atype, profile)[0])
            elif g_norm and g_norm in p_norm:  # the entity rule (`_accuracy`'s last part)
                acc.append(1.0)
            else:
                acc.append(1.0 if levenshtein_similarity(p_norm, g_norm, at_least=t_sim) >= t_sim else 0.0)
            g_words = words.get(g_norm)
            if g_words is None:
                g_words = words[g_norm] = set(g_norm.split())
            if not g_words:
                f1.append(0.0)  # `_f1_of_sets`: no gold word, some predicted word (the strings differ)
            else:
                p_words = p_norm.split()
                # no word shared (or none predicted): 0, without the prediction's set
                f1.append(0.0 if g_words.isdisjoint(p_words) else _f1_of_sets(set(p_words), g_words))
        p_low, g_low = low[pred], low[gold]
        an.append(1.0 if p_low == g_low and p_low and same_kept else
                  levenshtein_similarity(p_low, g_low, at_least=floor, strict=strict))
    return acc, f1, an


# the answer types `_accuracy` decides by a rule of their own before (or instead of) the entity rule
_OWN_RULE_TYPES = frozenset({"unanswerable", "boolean", "numeric", "percentage", "single_choice"})

"""The three headline metrics -- Accuracy, token F1, ANLS -- per profile, and the trace that says
which rule decided Accuracy.

`score_answer` is the fast path used for whole runs: it returns the three scores and a short
decision code. `explain_answer` recomputes the same thing with everything a person needs to see
why (normalised strings, numbers read, similarity, token overlap); it is only called on request.
Both run the same functions, so the trace can never disagree with the score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from rapidfuzz.distance import Levenshtein

from .numbers import read_number, release_number
from .profiles import Profile, get_profile
from .text import normalize_answer, similarity, similarity_at_least, strip_prefixes

__all__ = [
    "ANSWER_TYPES",
    "REFUSAL_PHRASES",
    "SUCCESS_STATUSES",
    "OVERFLOW_STATUSES",
    "answer_type",
    "effective_prediction",
    "token_f1",
    "anls",
    "score_answer",
    "explain_answer",
    "Explanation",
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
SUCCESS_STATUSES = frozenset({"success", "ok", "completed"})
OVERFLOW_STATUSES = frozenset({"context_overflow", "vision_unsupported"})
OVERFLOW_TEXT = "CONTEXT_OVERFLOW"
MISSING = "missing"
_CHOICE = re.compile(r"\b([A-D])\b")
_ANSWER_LINE = re.compile(r"^\s*answer\s*:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def answer_type(answer_format: str, verification_rule: str = "") -> str:
    """Spec 3: the mapped type; the rule is only consulted for formats outside the map."""
    fmt = answer_format or "Str"
    if fmt in ANSWER_TYPES:
        return ANSWER_TYPES[fmt]
    rule = verification_rule.lower()
    if "numeric" in rule or "tolerance" in rule:
        return "numeric"
    return fmt.lower()


def effective_prediction(text: str, status: str, profile: Profile) -> str:
    """The text that is scored: CONTEXT_OVERFLOW for overflow statuses (spec 1c); for DocVQA,
    the text of the last `ANSWER: ...` line when there is one (spec D)."""
    if status in OVERFLOW_STATUSES:
        return OVERFLOW_TEXT
    if profile.multi_answer:
        lines = _ANSWER_LINE.findall(text)
        if lines:
            return lines[-1]
    return text


def is_failed(status: str, profile: Profile) -> bool:
    return profile.failed_status_zero and status.lower() not in SUCCESS_STATUSES


def token_f1(p_norm: str, g_norm: str) -> float:
    """Set-based token F1 on normalised strings (spec 6)."""
    gold = set(g_norm.split())
    pred = set(p_norm.split())
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


def anls(prediction: str, gold: str) -> float:
    """Spec 6: similarity of the raw strings (stripped, lower-cased), kept when >= 0.5."""
    return similarity_at_least(prediction, gold, 0.5)


def _docvqa_norm(text: str) -> str:
    return " ".join(text.strip().lower().split())


def _docvqa_anls(p: str, g: str) -> float:
    """1 - NL when NL < 0.5, else 0 (spec D: a distance of exactly 0.5 scores 0)."""
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    longer = max(len(p), len(g))
    cutoff = (longer - 1) // 2  # d < longer / 2  <=>  d <= (longer - 1) // 2
    d = Levenshtein.distance(p, g, score_cutoff=cutoff)
    if d > cutoff:
        return 0.0
    nl = d / longer
    return 1.0 - nl if nl < 0.5 else 0.0


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


def _accuracy(pred_eff: str, gold: str, p_norm: str, g_norm: str, atype: str, profile: Profile) -> tuple[float, str, tuple]:
    """Spec 5 (with C.1's number reader when the profile says so): (score, decision, details)."""
    if atype == "unanswerable":
        for phrase in REFUSAL_PHRASES:
            if phrase in p_norm:
                return 1.0, "refusal_phrase", (phrase,)
        return 0.0, "no_refusal_phrase", ()
    if atype == "boolean":
        pv = _polarity(p_norm)
        if pv is None:
            return 0.0, "boolean_unreadable", ()
        gv = _polarity(g_norm) is True
        return (1.0 if pv == gv else 0.0), "boolean_polarity", (pv, gv)
    if atype in ("numeric", "percentage"):
        pn, gn = _numbers(pred_eff, gold, p_norm, g_norm, profile)
        if pn is not None and gn is not None:
            pv, gv = pn[0], gn[0]
            if gv == 0:
                return (1.0 if abs(pv) < 1e-6 else 0.0), "numeric_gold_zero", (pn, gn)
            rel = abs(pv - gv) / abs(gv)
            return (1.0 if rel <= profile.numeric_tolerance else 0.0), "numeric_tolerance", (pn, gn, rel)
    elif atype == "single_choice":
        pm = _CHOICE.search(pred_eff.upper())
        gm = _CHOICE.search(gold.upper())
        if pm and gm:
            return (1.0 if pm.group(1) == gm.group(1) else 0.0), "choice_letter", (pm.group(1), gm.group(1))
    # entity rule, and the fallback of every other type
    if g_norm and g_norm in p_norm:
        return 1.0, "containment", ()
    sim = similarity_at_least(p_norm, g_norm, profile.similarity_threshold)
    if sim >= profile.similarity_threshold:
        return 1.0, ("both_empty" if not p_norm and not g_norm else "similarity"), (sim,)
    return 0.0, "no_match", ()


def score_answer(
    prediction: str | None,
    answers: Sequence[str],
    answer_format: str = "Str",
    verification_rule: str = "",
    *,
    status: str | None = None,
    profile: str | Profile = "xldocbench",
) -> tuple[float, float, float, str]:
    """(accuracy, token_f1, anls, decision) for one question. `prediction=None` means the
    question has no prediction (status `missing`)."""
    p = get_profile(profile)
    if prediction is None:
        prediction, status = "", MISSING
    elif not status:
        status = "success"
    if status == MISSING and p.failed_status_zero:
        return 0.0, 0.0, 0.0, "missing"
    if is_failed(status, p):
        return 0.0, 0.0, 0.0, "failed_status"
    pred = effective_prediction(prediction, status, p)
    if p.multi_answer:
        return _score_docvqa(pred, answers)
    gold = answers[0] if answers else ""
    p_norm = normalize_answer(pred)
    g_norm = normalize_answer(gold)
    acc, decision, _ = _accuracy(pred, gold, p_norm, g_norm, answer_type(answer_format, verification_rule), p)
    return acc, token_f1(p_norm, g_norm), anls(pred, gold), decision


def _score_docvqa(pred: str, answers: Sequence[str]) -> tuple[float, float, float, str]:
    pn = _docvqa_norm(pred)
    normed = [_docvqa_norm(a) for a in answers]
    acc = 1.0 if pn in normed else 0.0
    p_norm = normalize_answer(pred)
    f1 = max((token_f1(p_norm, normalize_answer(a)) for a in answers), default=0.0)
    best = max((_docvqa_anls(pn, a) for a in normed), default=0.0)
    return acc, f1, best, ("exact_answer" if acc else "no_exact_answer")


# ----------------------------------------------------------------------------- explanation


@dataclass
class Explanation:
    """Everything that decided one question's scores (jiwer-style: inputs, intermediates, all measures)."""

    profile: str
    raw_prediction: str | None
    effective_prediction: str
    status: str
    gold_answers: list[str]
    answer_format: str
    verification_rule: str
    answer_type: str
    normalized_prediction: str
    normalized_gold: str
    accuracy: float
    token_f1: float
    anls: float
    decided_by: str
    reason: str
    prediction_number: str | None = None
    gold_number: str | None = None
    relative_error: float | None = None
    similarity: float = 0.0
    shared_tokens: list[str] = field(default_factory=list)
    prediction_only_tokens: list[str] = field(default_factory=list)
    gold_only_tokens: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _fmt_num(n: tuple[float, str] | None) -> str | None:
    if n is None:
        return None
    value, text = n
    return f"{text} → {value:g}"


def explain_answer(
    prediction: str | None,
    answers: Sequence[str],
    answer_format: str = "Str",
    verification_rule: str = "",
    *,
    status: str | None = None,
    profile: str | Profile = "xldocbench",
) -> Explanation:
    p = get_profile(profile)
    raw = prediction
    acc, f1, an, decision = score_answer(prediction, answers, answer_format, verification_rule, status=status, profile=p)
    if prediction is None:
        prediction, status = "", MISSING
    elif not status:
        status = "success"
    pred = effective_prediction(prediction, status, p)
    gold = answers[0] if answers else ""
    atype = "anls" if p.multi_answer else answer_type(answer_format, verification_rule)
    p_norm, g_norm = normalize_answer(pred), normalize_answer(gold)
    ex = Explanation(
        profile=p.name, raw_prediction=raw, effective_prediction=pred, status=status,
        gold_answers=list(answers), answer_format=answer_format or "Str", verification_rule=verification_rule,
        answer_type=atype, normalized_prediction=p_norm, normalized_gold=g_norm,
        accuracy=acc, token_f1=f1, anls=an, decided_by=decision, reason="",
        similarity=similarity(pred, gold),
    )
    pt, gt = set(p_norm.split()), set(g_norm.split())
    ex.shared_tokens = sorted(pt & gt)
    ex.prediction_only_tokens = sorted(pt - gt)
    ex.gold_only_tokens = sorted(gt - pt)
    if pred != prediction:
        ex.notes.append(
            f"status {status!r}: the prediction is replaced by {OVERFLOW_TEXT}" if status in OVERFLOW_STATUSES
            else "the last 'ANSWER:' line is scored"
        )
    if decision == "missing":
        ex.reason = f"no prediction for this question: all metrics 0 (profile {p.name})"
        return ex
    if decision == "failed_status":
        ex.reason = f"status {status!r} is a failed status: all metrics 0 (profile {p.name})"
        return ex
    if p.multi_answer:
        normed = [_docvqa_norm(a) for a in answers]
        pn = _docvqa_norm(pred)
        ex.normalized_prediction = pn
        ex.similarity = max((1 - Levenshtein.normalized_distance(pn, a) if (pn or a) else 1.0 for a in normed), default=0.0)
        ex.reason = (f"prediction equals acceptable answer {answers[normed.index(pn)]!r}" if acc
                     else f"no acceptable answer equals {pn!r} (after strip, lower-case, space folding)")
        return ex
    if atype in ("numeric", "percentage"):
        pn, gn = _numbers(pred, gold, p_norm, g_norm, p)
        ex.prediction_number, ex.gold_number = _fmt_num(pn), _fmt_num(gn)
        if pn is None or gn is None:
            side = "prediction" if pn is None else "gold"
            ex.notes.append(f"no number read from the {side} ({p.number_reader} reader): the entity rule decides")
    _, _, details = _accuracy(pred, gold, p_norm, g_norm, atype, p)
    tol = p.numeric_tolerance
    reasons = {
        "refusal_phrase": lambda: f"unanswerable question: refusal phrase {details[0]!r} found in the normalised prediction",
        "no_refusal_phrase": lambda: "unanswerable question: none of the refusal phrases (" + ", ".join(REFUSAL_PHRASES) + ") found",
        "boolean_unreadable": lambda: "boolean question: no yes/true/correct or no/false/incorrect in the prediction",
        "boolean_polarity": lambda: f"boolean question: prediction reads as {'yes' if details[0] else 'no'}, gold as {'yes' if details[1] else 'no'}",
        "numeric_gold_zero": lambda: f"gold is 0: |{details[0][0]:g}| {'<' if acc else '≥'} 1e-6",
        "numeric_tolerance": lambda: f"numbers {details[0][0]:g} vs {details[1][0]:g}: relative error {details[2]:.2%} {'≤' if acc else '>'} {tol:.0%}",
        "choice_letter": lambda: f"option letters {details[0]} vs {details[1]}",
        "containment": lambda: f"normalised gold {g_norm!r} is contained in the normalised prediction",
        "similarity": lambda: f"similarity {details[0]:.3f} ≥ {p.similarity_threshold:g}",
        "both_empty": lambda: "both normalised strings are empty: similarity 1",
        "no_match": lambda: (f"normalised gold {g_norm!r} not contained and similarity {similarity(p_norm, g_norm):.3f} < {p.similarity_threshold:g}"
                             if g_norm else f"gold normalises to an empty string, so containment is skipped; similarity {similarity(p_norm, g_norm):.3f} < {p.similarity_threshold:g}"),
    }
    ex.reason = reasons[decision]()
    if decision == "numeric_tolerance":
        ex.relative_error = details[2]
    return ex

"""Every score-affecting field of a Profile drives some score, and the signature names it.

A field read only by `signature()` would let a report claim rules that were not applied (an ANLS
threshold of 0.9 that changes no score). For each field of each built-in profile, the field is
changed to another legal value and the scores of a fixed set of cases must change, and so must
the signature."""

from dataclasses import fields, replace

import pytest

from scoring.metrics import judge
from scoring.profiles import PROFILES, Profile, signature

# (prediction, answers, format, rule, status): each case sits at the edge of one setting
CASES = [
    ("2.5e2", ["250"], "Int", "numeric_tolerance", None),            # number reader: 2.5 vs 250
    ("616", ["616"], "Int", "numeric_tolerance", "error"),           # failed status
    ("ANSWER: 0.28", ["0.29", "0.28"], "Str", "", None),             # several acceptable answers, ANSWER: line
    ("35.4", ["36.3"], "Float", "numeric_tolerance", None),          # relative error 2.5 %
    ("Violeta Prigozhina", ["Violetta Prigozhin"], "Str", "", None),  # similarity 0.889
    ("abcd", ["abxy"], "Str", "", None),                             # ANLS distance exactly 0.5
    ("abcdefghij", ["abcdefgxyz"], "Str", "", None),                 # ANLS distance 0.3
]
NOT_SCORED = {"name", "description"}  # identify a profile; the signature carries the name
ALTERNATIVES = {
    "number_reader": lambda v: "release" if v == "hardened" else "hardened",
    "failed_status_zero": lambda v: not v,
    "multi_answer": lambda v: not v,
    "numeric_tolerance": lambda v: 0.01,
    "similarity_threshold": lambda v: 0.9,
    "anls_threshold": lambda v: 0.2,
    "anls_keeps_threshold": lambda v: not v,
}


def scores(profile: Profile) -> list[tuple[float, float, float]]:
    out = []
    for pred, answers, fmt, rule, status in CASES:
        j = judge(pred, answers, fmt, rule, status=status, profile=profile)
        out.append((j.accuracy, j.token_f1, j.anls))
    return out


def test_every_field_is_covered():
    assert {f.name for f in fields(Profile)} == NOT_SCORED | set(ALTERNATIVES)


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("field_name", sorted(ALTERNATIVES))
def test_changing_a_field_changes_scores_and_signature(name, field_name):
    base = PROFILES[name]
    if getattr(base, field_name) is None:  # a setting this profile does not use cannot be set
        with pytest.raises(ValueError, match="does not use"):
            replace(base, **{field_name: ALTERNATIVES[field_name]("hardened")})
        return
    change = {field_name: ALTERNATIVES[field_name](getattr(base, field_name))}
    if field_name == "multi_answer":  # the single-answer settings go (or come) with it
        single = {"number_reader": "hardened", "numeric_tolerance": 0.05, "similarity_threshold": 0.8}
        change |= {k: None for k in single} if change["multi_answer"] else single
    changed = replace(base, **change)
    assert scores(changed) != scores(base), f"{field_name} of {name} changes no score"
    assert signature(changed) != signature(base), f"{field_name} of {name} is not in the signature"


def test_anls_threshold_applies():
    strict = replace(PROFILES["xldocbench"], anls_threshold=0.1)
    assert judge("abcdefghij", ["abcdefghiz"], profile=strict).anls == pytest.approx(0.9)   # distance 0.1: kept
    assert judge("abcdefghij", ["abcdefghyz"], profile=strict).anls == 0.0                   # distance 0.2
    assert judge("abcdefghij", ["abcdefghyz"], profile="xldocbench").anls == pytest.approx(0.8)


def test_custom_profile_reaches_worker_processes():
    """A profile that is not registered by name still scores in the process pool."""
    from scoring.evaluate import evaluate
    from scoring.model import GoldQuestion, Prediction

    gold = [GoldQuestion(f"q{i}", "?", ("abcdefghij",), "Str", "", "single", {}) for i in range(40)]
    preds = [Prediction(f"q{i}", "abcdefghyz", "success") for i in range(40)]
    strict = replace(PROFILES["xldocbench"], anls_threshold=0.1)
    run = evaluate(gold, preds, profile=strict, workers=2)
    assert {r.anls for r in run.results} == {0.0}
    assert "anls:0.1+" in run.signature


@pytest.mark.parametrize("bad", [dict(anls_threshold=1.5), dict(number_reader="roman"), dict(numeric_tolerance=None)])
def test_invalid_profiles_are_refused(bad):
    with pytest.raises(ValueError):
        replace(PROFILES["xldocbench"], **bad)

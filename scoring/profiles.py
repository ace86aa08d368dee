"""Scoring profiles: every score-affecting setting is declared here once, and a signature string
records them (the way sacrebleu's signature does), so a number never travels without its rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import __version__

if TYPE_CHECKING:  # numpy is imported where it is used: the command line never needs it
    import numpy as np

__all__ = ["Profile", "PROFILES", "DEFAULT_PROFILE", "NUMBER_READERS", "RIGHT_AT", "RIGHT_EPS", "get_profile",
           "is_right", "signature"]


NUMBER_READERS = ("release", "hardened")
# Settings of the single-answer rules (spec sections 5 and C); a multi-answer profile (DocVQA)
# scores by exact match and ANLS only, so it leaves them unset rather than carry dead values.
SINGLE_ANSWER_SETTINGS = ("number_reader", "numeric_tolerance", "similarity_threshold")
# Profiles whose Accuracy is a benchmark's own per-question score (scoring.metrics.decide hands the
# answer to that benchmark's module): the single-answer settings are not used, so they stay unset.
MMLONGBENCH_PROFILE = "mmlongbench-doc"
OWN_ACCURACY_PROFILES = frozenset({MMLONGBENCH_PROFILE})
# The harnesses' own scoring, reproduced per task from the answer text (scoring/harness_rules.py,
# scoring/README.md "Harness profiles"): they score harness files only (scoring/harness_cli.py),
# so they live in HARNESS_PROFILES, not in PROFILES (the benchmark profiles every view offers).
LMMS_EVAL_PROFILE = "lmms-eval"
VLMEVALKIT_PROFILE = "vlmevalkit"
HARNESS_PROFILE_NAMES = frozenset({LMMS_EVAL_PROFILE, VLMEVALKIT_PROFILE})

# What a "right answer" is: the one definition every count of right and wrong answers reads (the
# categories, the flip table, the evidence page's marks, the scatter's colours), per profile.
# An answer is right when its Accuracy is at least `right_at` (less RIGHT_EPS, for sums of floats).
#
# XL-DocBench (both profiles) and DocVQA: Accuracy is all or nothing (0 or 1), so right means 1.
#
# MMLongBench-Doc: Accuracy is the evaluator's own per-question score (scoring.mmlongbench_rule.eval_score),
# which is partial. Its evaluator has no notion of "correct" beside the score: its Acc is the mean of
# the scores and its F1 sums them. But the score itself makes the decision: Int and Float answers
# and exact-match texts score 0 or 1; other texts score their ANLS *only when strictly above 0.5*
# (0 otherwise), and a list the least ANLS of its pairs under that same cut. So an answer the
# evaluator accepts scores above 0.5 and one it rejects scores 0: nothing it computes lies in
# (0, 0.5]. Right = a score of at least 0.5 is exactly "the evaluator gave it credit" on its own
# scores (gold "Kevin", answer "Kevan": 0.8, right), and treats a score read from a
# result file the way the token F1 and ANLS pass marks do (scoring.registry.PASS_THRESHOLDS, 0.5).
RIGHT_EPS = 1e-9
RIGHT_AT: dict[str, float] = {MMLONGBENCH_PROFILE: 0.5}  # profiles not named here: 1.0 (all or nothing)
_ACCURACY_HELP_ALL_OR_NOTHING = ("One rule per answer format: numbers within a relative tolerance, yes/no, lists and "
                                 "strings after normalisation.",
                                 "All or nothing per question (0 or 1): it rewards the right answer.")
_ACCURACY_HELP: dict[str, tuple[str, str]] = {
    "docvqa": ("Exact match against any of the acceptable answers, after lower-casing and folding spaces.",
               "All or nothing per question (0 or 1): it rewards the right answer."),
    MMLONGBENCH_PROFILE: ("MMLongBench-Doc's own per-question score: integers, decimals (within 1 %) and exact-match "
                          "texts 0 or 1; other texts their ANLS when above 0.5, else 0; lists the least ANLS of "
                          "their elements.",
                          "Partial credit, not all or nothing: a near answer earns part of it (Kevan for Kevin: "
                          "0.8). An answer counts as right from 0.5: every answer the evaluator credits scores above it."),
    LMMS_EVAL_PROFILE: ("lmms-eval's own per-line score: DocVQA/InfoVQA its ANLS (lower-cased, spaces folded, exactly 0.5 "
                        "kept, below it 0); MMLongBench-Doc its acc (the first number for Int/Float, exactly 'not "
                        "answerable' for None, literal lists).",
                        "Partial credit on ANLS tasks: a near spelling earns part of it. Its mean is lmms-eval's own "
                        "reported number (results.json, a fraction: here ×100)."),
    VLMEVALKIT_PROFILE: ("VLMEvalKit's own per-row score: DocVQA/InfoVQA its ANLS (exactly 0.5 kept); MMLongBench_DOC "
                         "the eval_score of the judge's extracted answer.",
                         "Partial credit: a near answer earns part of it. Its mean is VLMEvalKit's own Overall / "
                         "overall_acc."),
}


@dataclass(frozen=True)
class Profile:
    """Every setting that changes a score, and nothing else (besides the name and description).
    Each one is read by scoring.metrics and written into the signature; tests/test_profiles.py
    checks that changing any of them changes some score."""

    name: str
    description: str
    failed_status_zero: bool  # spec C.2: failed or missing predictions score 0 on all metrics
    multi_answer: bool = False  # spec D: a list of acceptable answers, exact match, ANSWER: extraction
    number_reader: str | None = "hardened"  # "release": spec 5; "hardened": spec C.1
    numeric_tolerance: float | None = 0.05  # relative error accepted by the numeric rule
    similarity_threshold: float | None = 0.8  # entity rule: normalised similarity accepted
    anls_threshold: float = 0.5  # ANLS is 0 beyond this normalised edit distance
    anls_keeps_threshold: bool = True  # B: a distance exactly at the threshold is kept; D: it scores 0

    def __post_init__(self) -> None:
        unset = [k for k in SINGLE_ANSWER_SETTINGS if getattr(self, k) is None]
        own = self.multi_answer or self.name in OWN_ACCURACY_PROFILES or self.name in HARNESS_PROFILE_NAMES
        if own and len(unset) != len(SINGLE_ANSWER_SETTINGS):
            kind = "a multi-answer profile" if self.multi_answer else "a profile scored by its benchmark's own rule"
            raise ValueError(f"profile {self.name!r}: {kind} does not use "
                             f"{', '.join(k for k in SINGLE_ANSWER_SETTINGS if k not in unset)}; leave them unset")
        if not own and unset:
            raise ValueError(f"profile {self.name!r}: {', '.join(unset)} must be set")
        if self.number_reader is not None and self.number_reader not in NUMBER_READERS:
            raise ValueError(f"profile {self.name!r}: number_reader must be one of {', '.join(NUMBER_READERS)}")
        for key in ("numeric_tolerance", "similarity_threshold", "anls_threshold"):
            value = getattr(self, key)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"profile {self.name!r}: {key} must lie in [0, 1], got {value!r}")

    # Not fields: what counts as right decides no score (the signature records the scores' rules),
    # it reads them. Keyed by name, like OWN_ACCURACY_PROFILES.
    @property
    def right_at(self) -> float:
        """The Accuracy from which an answer counts as right under this profile (RIGHT_AT)."""
        return RIGHT_AT.get(self.name, 1.0)

    @property
    def right_rule(self) -> str:
        """How a right answer reads under this profile: "Accuracy 1" or "Accuracy ≥ 0.5"."""
        return "Accuracy 1" if self.right_at >= 1.0 else f"Accuracy ≥ {self.right_at:g}"

    @property
    def wrong_rule(self) -> str:
        """How a wrong answer reads: "Accuracy 0" or "Accuracy < 0.5"."""
        return "Accuracy 0" if self.right_at >= 1.0 else f"Accuracy < {self.right_at:g}"

    @property
    def accuracy_help(self) -> tuple[str, str]:
        """What Accuracy is under this profile, in two sentences (what it checks, what it rewards)."""
        return _ACCURACY_HELP.get(self.name, _ACCURACY_HELP_ALL_OR_NOTHING)

    def is_right(self, accuracy: float | None) -> bool:
        """Whether one answer scored `accuracy` is right under this profile (None or NaN: not right)."""
        return accuracy is not None and accuracy >= self.right_at - RIGHT_EPS  # NaN compares False

    def right_mask(self, accuracy: Any) -> np.ndarray:
        """`is_right` of every value of a sequence or array of Accuracy values, as a boolean array."""
        import numpy as np

        return np.asarray(accuracy, dtype=float) >= self.right_at - RIGHT_EPS


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "xldocbench",
            "XL-DocBench as documented: release rules plus the hardened number reader; failed or missing predictions score 0",
            number_reader="hardened",
            failed_status_zero=True,
        ),
        Profile(
            "xldocbench-1519",
            "the public 1,519-question release's evaluate.py, bit for bit, quirks included",
            number_reader="release",
            failed_status_zero=False,
        ),
        Profile(
            "docvqa",
            "DocVQA: ANLS over a list of acceptable answers, ANSWER: line extraction",
            failed_status_zero=True,
            multi_answer=True,
            number_reader=None,
            numeric_tolerance=None,
            similarity_threshold=None,
            anls_keeps_threshold=False,
        ),
        Profile(
            MMLONGBENCH_PROFILE,
            "MMLongBench-Doc: Accuracy is its evaluator's per-question score (eval_score, not 0/1), token F1 and "
            "ANLS of pred as elsewhere; missing predictions score 0",
            failed_status_zero=True,
            number_reader=None,
            numeric_tolerance=None,
            similarity_threshold=None,
        ),
    )
}
DEFAULT_PROFILE = "xldocbench"

HARNESS_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            LMMS_EVAL_PROFILE,
            "lmms-eval's own task scoring: docvqa/infovqa anls (lower-cased, 0.5 kept, a fraction), mmlongbench_doc "
            "acc and F1 (first number, exact 'not answerable', literal lists)",
            failed_status_zero=False,
            number_reader=None,
            numeric_tolerance=None,
            similarity_threshold=None,
        ),
        Profile(
            VLMEVALKIT_PROFILE,
            "VLMEvalKit's own dataset scoring: DocVQA/InfoVQA ANLS x100 Overall (0.5 kept), MMLongBench_DOC eval_score "
            "of the judge's extracted pred, acc and F1 as its _score.csv",
            failed_status_zero=False,
            number_reader=None,
            numeric_tolerance=None,
            similarity_threshold=None,
        ),
    )
}


def get_profile(name: str | Profile | None) -> Profile:
    if isinstance(name, Profile):
        return name
    key = name or DEFAULT_PROFILE
    try:
        return PROFILES[key]
    except KeyError:
        if key in HARNESS_PROFILES:
            return HARNESS_PROFILES[key]
        raise ValueError(f"unknown profile {key!r}; choose one of {', '.join(PROFILES)}") from None


def is_right(accuracy: float | None, profile: str | Profile | None = None) -> bool:
    """Whether an answer scored `accuracy` is right under `profile` (default: DEFAULT_PROFILE)."""
    return get_profile(profile).is_right(accuracy)


def signature(profile: str | Profile, *, ignore_missing: bool = False, prediction_field: str | None = None) -> str:
    """e.g. `profile:xldocbench|numbers:hardened|failed:zero|tol:0.05|sim:0.8|anls:0.5+|answers:one|missing:scored|field:auto|lens:0.1.0`"""
    p = get_profile(profile)
    parts = [f"profile:{p.name}"]
    if p.number_reader is not None:
        parts.append(f"numbers:{p.number_reader}")
    parts.append(f"failed:{'zero' if p.failed_status_zero else 'scored'}")
    if p.numeric_tolerance is not None:
        parts.append(f"tol:{p.numeric_tolerance:g}")
    if p.similarity_threshold is not None:
        parts.append(f"sim:{p.similarity_threshold:g}")
    parts += [
        f"anls:{p.anls_threshold:g}{'+' if p.anls_keeps_threshold else ''}",
        f"answers:{'any' if p.multi_answer else 'one'}",
        f"missing:{'ignored' if ignore_missing else 'scored'}",
        f"field:{prediction_field or 'auto'}",
        f"lens:{__version__}",
    ]
    return "|".join(parts)

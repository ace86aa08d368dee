"""Scoring profiles: every score-affecting setting is declared here once, and a signature string
records them (the way sacrebleu's signature does), so a number never travels without its rules."""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__

__all__ = ["Profile", "PROFILES", "DEFAULT_PROFILE", "NUMBER_READERS", "get_profile", "signature"]


NUMBER_READERS = ("release", "hardened")
# Settings of the single-answer rules (spec sections 5 and C); a multi-answer profile (DocVQA)
# scores by exact match and ANLS only, so it leaves them unset rather than carry dead values.
SINGLE_ANSWER_SETTINGS = ("number_reader", "numeric_tolerance", "similarity_threshold")
# Profiles whose Accuracy is a benchmark's own per-question score (scoring.metrics.decide hands the
# answer to that benchmark's module): the single-answer settings are not used, so they stay unset.
MMLONGBENCH_PROFILE = "mmlongbench-doc"
OWN_ACCURACY_PROFILES = frozenset({MMLONGBENCH_PROFILE})


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
        own = self.multi_answer or self.name in OWN_ACCURACY_PROFILES
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


def get_profile(name: str | Profile | None) -> Profile:
    if isinstance(name, Profile):
        return name
    key = name or DEFAULT_PROFILE
    try:
        return PROFILES[key]
    except KeyError:
        raise ValueError(f"unknown profile {key!r}; choose one of {', '.join(PROFILES)}") from None


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

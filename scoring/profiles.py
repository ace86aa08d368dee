"""Scoring profiles: every score-affecting setting is declared here once, and a signature string
records them (the way sacrebleu's signature does), so a number never travels without its rules."""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__

__all__ = ["Profile", "PROFILES", "DEFAULT_PROFILE", "get_profile", "signature"]


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    number_reader: str  # "release": spec B.5; "hardened": spec C.1
    failed_status_zero: bool  # spec C.2: failed or missing predictions score 0 on all metrics
    multi_answer: bool = False  # spec D: a list of acceptable answers, ANSWER: extraction
    numeric_tolerance: float = 0.05
    similarity_threshold: float = 0.8  # entity rule
    anls_threshold: float = 0.5
    anls_keeps_threshold: bool = True  # B: similarity exactly 0.5 is kept; D: distance exactly 0.5 scores 0


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
            number_reader="hardened",
            failed_status_zero=True,
            multi_answer=True,
            anls_keeps_threshold=False,
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
    """e.g. `profile:xldocbench|numbers:hardened|failed:zero|tol:0.05|sim:0.8|anls:0.5+|missing:scored|field:auto|lens:0.1.0`"""
    p = get_profile(profile)
    parts = [
        f"profile:{p.name}",
        f"numbers:{p.number_reader}",
        f"failed:{'zero' if p.failed_status_zero else 'scored'}",
        f"tol:{p.numeric_tolerance:g}",
        f"sim:{p.similarity_threshold:g}",
        f"anls:{p.anls_threshold:g}{'+' if p.anls_keeps_threshold else ''}",
        f"answers:{'any' if p.multi_answer else 'one'}",
        f"missing:{'ignored' if ignore_missing else 'scored'}",
        f"field:{prediction_field or 'auto'}",
        f"lens:{__version__}",
    ]
    return "|".join(parts)

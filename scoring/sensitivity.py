"""Evaluator sensitivity: a run rescored under other profiles, and the questions whose Accuracy
changes -- how much the leaderboard would move if the scoring rule changed. Pure Python.

    comparisons = sensitivity(run, ["xldocbench-1519"])      # run: a scoring.evaluate.RunResult
    comparisons[0].changes        -> [Change(qid, 1.0, 0.0, "numeric_tolerance", "numeric_tolerance"), ...]
    comparisons[0].headline()     -> {"xldocbench": {...overall...}, "xldocbench-1519": {...}}
    comparisons[0].counts_by("reasoning_type") -> {"arithmetic": {"questions": 9, "gained": 0, "lost": 1}, ...}

The other profile scores exactly the run's questions and prediction rows (same ignore-missing
choice), through `scoring.evaluate.evaluate`, so its numbers are the ones `python -m scoring
--profile <other>` would print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .evaluate import RunResult, evaluate
from .mmlongbench import QID_PREFIX
from .model import GoldQuestion, quick_state
from .profiles import MMLONGBENCH_PROFILE, PROFILES, Profile, get_profile

__all__ = ["Change", "ProfileComparison", "rescore", "compare", "sensitivity", "applicable_profiles", "looks_docvqa"]


@quick_state
@dataclass(frozen=True, slots=True)
class Change:
    qid: str
    base_accuracy: float
    other_accuracy: float
    base_rule: str
    other_rule: str

    @property
    def direction(self) -> str:
        """"gained" when the other profile accepts the answer and the base did not, else "lost"."""
        return "gained" if self.other_accuracy > self.base_accuracy else "lost"


@dataclass
class ProfileComparison:
    base: RunResult
    other: RunResult
    changes: list[Change]

    @property
    def profiles(self) -> tuple[str, str]:
        return self.base.profile.name, self.other.profile.name

    def headline(self) -> dict[str, dict]:
        """Profile name -> overall bucket (count, accuracy, token_f1, anls: fractions)."""
        return {self.base.profile.name: self.base.overall, self.other.profile.name: self.other.overall}

    @property
    def gained(self) -> int:
        return sum(1 for c in self.changes if c.direction == "gained")

    @property
    def lost(self) -> int:
        return sum(1 for c in self.changes if c.direction == "lost")

def rescore(run: RunResult, profile: str | Profile, *, progress: Callable[[int, int], None] | None = None) -> RunResult:
    """The run's questions and prediction rows scored under another profile."""
    gold: list[GoldQuestion] = [r.question for r in run.results]
    preds = [r.prediction for r in run.results if r.prediction is not None]
    return evaluate(gold, preds, profile=profile, ignore_missing=run.ignore_missing, name=run.name, progress=progress)


def compare(base: RunResult, other: RunResult) -> ProfileComparison:
    """The questions of `base` whose Accuracy differs in `other` (matched by question id)."""
    theirs = {r.qid: r for r in other.results}
    changes = []
    for r in base.results:
        o = theirs.get(r.qid)
        if o is not None and o.accuracy != r.accuracy:
            changes.append(Change(r.qid, r.accuracy, o.accuracy, r.decided_by, o.decided_by))
    return ProfileComparison(base, other, changes)


def looks_docvqa(gold: Iterable[GoldQuestion]) -> bool:
    """DocVQA-shaped gold: questions with several acceptable answers or DocVQA question types."""
    return any(len(q.answers) > 1 or q.question_types for q in gold)


def applicable_profiles(base: str | Profile, gold: Sequence[GoldQuestion]) -> list[str]:
    """The profiles to compare a run with: every other profile, `docvqa` only for DocVQA-shaped gold,
    `mmlongbench-doc` only for MMLongBench-Doc's (question ids of scoring.mmlongbench.qid_for)."""
    name = get_profile(base).name
    docvqa = looks_docvqa(gold)
    mmlb = any(q.qid.startswith(QID_PREFIX) for q in gold[:1])
    return [p for p, prof in PROFILES.items()
            if p != name and (docvqa or not prof.multi_answer) and (mmlb or p != MMLONGBENCH_PROFILE)]


def sensitivity(run: RunResult, profiles: Iterable[str | Profile] | None = None) -> list[ProfileComparison]:
    """`run` compared with itself rescored under each profile (default: applicable_profiles)."""
    if profiles is None:
        profiles = applicable_profiles(run.profile, [r.question for r in run.results])
    return [compare(run, rescore(run, p)) for p in profiles]

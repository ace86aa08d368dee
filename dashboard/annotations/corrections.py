"""Gold corrections applied to the gold questions, for rescoring every run "with gold corrections".

`apply_corrections(questions, corrections)` is pure and deterministic: a corrected answer replaces
the question's gold answer (all of them, for a DocVQA question that listed several) and keeps the
question's answer format and verification rule, so the answer is read -- and scored -- as that
format; an "exclude" drops the question. `corrections_key(corrections)` is a digest of what the
corrections say (not who made them or when), for the scoring cache's key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from scoring.metrics import FALSE_WORDS, TRUE_WORDS, answer_type
from scoring.model import GoldQuestion
from scoring.numbers import read_number
from scoring.text import normalize_answer

from .records import Correction

__all__ = ["CorrectionSummary", "apply_corrections", "corrections_key", "check_answer"]

_CHOICE = re.compile(r"\b([A-D])\b")


@dataclass(frozen=True, slots=True)
class CorrectionSummary:
    corrected: tuple[str, ...]  # question ids whose gold answer was replaced
    excluded: tuple[str, ...]  # question ids dropped
    unknown: tuple[str, ...]  # corrections of question ids not in the gold (ignored)
    unreadable: tuple[tuple[str, str], ...]  # (question id, why): applied, but not readable as the question's format

    @property
    def changed(self) -> bool:
        return bool(self.corrected or self.excluded)

    def __str__(self) -> str:
        parts = [f"{len(self.corrected)} gold answer{'s' * (len(self.corrected) != 1)} corrected",
                 f"{len(self.excluded)} question{'s' * (len(self.excluded) != 1)} excluded"]
        if self.unknown:
            parts.append(f"{len(self.unknown)} correction{'s' * (len(self.unknown) != 1)} of questions not in this gold ignored")
        if self.unreadable:
            parts.append(f"{len(self.unreadable)} corrected answer{'s' * (len(self.unreadable) != 1)} not readable as the question's format")
        return ", ".join(parts)


def check_answer(question: GoldQuestion, answer: str) -> str | None:
    """Why `answer` cannot be read as `question`'s answer format (None when it can): a numeric or
    percentage question needs a number, a boolean one yes/no (true/false), a single-choice one a
    letter A-D. Any text is a string answer."""
    atype = answer_type(question.answer_format, question.verification_rule)
    lowered = answer.strip().lower()
    if atype in ("numeric", "percentage") and read_number(lowered) is None:
        return f"a {question.answer_format} question needs a number, and {answer!r} has none"
    if atype == "boolean" and not any(w in normalize_answer(answer) for w in TRUE_WORDS + FALSE_WORDS):
        return f"a {question.answer_format} question needs yes or no, and {answer!r} is neither"
    if atype == "single_choice" and not _CHOICE.search(answer.upper()):
        return f"a single-choice question needs a letter A-D, and {answer!r} has none"
    return None


def _latest(corrections: Iterable[Correction]) -> dict[str, Correction]:
    """One correction per question id (the latest `updated` when several are given)."""
    by_id: dict[str, Correction] = {}
    for c in corrections:
        kept = by_id.get(c.question_id)
        if kept is None or (c.updated, c.action, c.answer) > (kept.updated, kept.action, kept.answer):
            by_id[c.question_id] = c
    return by_id


def apply_corrections(questions: Sequence[GoldQuestion], corrections: Iterable[Correction]
                      ) -> tuple[list[GoldQuestion], CorrectionSummary]:
    """The corrected gold, in the gold's order (the questions given are not changed), and what was done."""
    by_id = _latest(corrections)
    out: list[GoldQuestion] = []
    corrected: list[str] = []
    excluded: list[str] = []
    unreadable: list[tuple[str, str]] = []
    seen: set[str] = set()
    for q in questions:
        seen.add(q.qid)
        c = by_id.get(q.qid)
        if c is None:
            out.append(q)
        elif c.exclude:
            excluded.append(q.qid)
        else:
            answer = c.answer.strip()
            why = check_answer(q, answer)
            if why:
                unreadable.append((q.qid, why))
            out.append(replace(q, answers=(answer,)))
            corrected.append(q.qid)
    unknown = tuple(sorted(qid for qid in by_id if qid not in seen))
    return out, CorrectionSummary(tuple(corrected), tuple(excluded), unknown, tuple(unreadable))


def corrections_key(corrections: Iterable[Correction]) -> str:
    """sha256 hex of the (question id, action, answer) of the corrections that apply, sorted: equal
    for equal corrections whatever their order, authors or times; "" when there are none."""
    by_id = _latest(corrections)
    if not by_id:
        return ""
    items = sorted((qid, c.action, c.answer.strip() if not c.exclude else "") for qid, c in by_id.items())
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()

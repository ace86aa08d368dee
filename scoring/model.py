"""Plain records for what the loaders read, and the text of a value as read (spec 1c). Metadata
stays as read; accessors give the release evaluator's labels (spec section 7).

The ground floor of `scoring`: this module imports nothing else of the package (tests/test_architecture.py),
so every reader, rule and report can build on it without a circle. A question's judgement and the
result that pairs them are the rules' output, one floor up (`scoring.metrics.Judgement`, `QuestionResult`)."""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, fields
from typing import Any, TypeVar

__all__ = ["BREAKDOWNS", "quick_state", "to_str", "to_str_release", "id_text_release", "EvidenceItem", "DocRef", "GoldQuestion",
           "PredictedEvidence", "Prediction", "ScoreRow", "DocumentRecord"]

BREAKDOWNS = ("split", "domain", "reasoning_type", "answer_format", "difficulty", "doc_type", "evidence_source")

C = TypeVar("C", bound=type)


def quick_state(cls: C) -> C:
    """A frozen slotted dataclass pickled as the tuple of its fields, with their names worked out once. The
    records a guarded reader returns come back to the app pickled (scoring/guard.py), and the state methods
    `dataclass(frozen=True, slots=True)` writes call `fields()` on every object: the documents and evidence
    items of 20,000 gold questions took 0.7 s to pickle and 1.0 s to unpickle (the collector running). (A slotted dataclass that is
    not frozen keeps Python's own pickling, which is faster still: it has no method of this kind.)"""
    names = tuple(f.name for f in fields(cls))
    get = operator.attrgetter(*names) if len(names) > 1 else (lambda self: tuple(getattr(self, n) for n in names))
    put = object.__setattr__  # also sets the fields of a frozen record

    def __getstate__(self):  # noqa: N807
        return get(self)

    def __setstate__(self, state) -> None:  # noqa: N807
        for name, value in zip(names, state):
            put(self, name, value)

    setattr(cls, "__getstate__", __getstate__)  # noqa: B010  (setattr: a class's methods, set after it is made)
    setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls


def to_str(value: object) -> str:
    """The release evaluator's string form of a value (spec 1c): null -> "", scalars -> str(),
    lists and objects -> compact JSON with sorted keys and non-ASCII kept."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, dict, tuple)):
        try:
            return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, TypeError, ValueError):  # nested too deeply (or unsortable keys): never raises
            return _unprintable(value)
    return str(value)


def _unprintable(value: object) -> str:
    """The text of a value json cannot write (nested too deeply): its repr, or a placeholder."""
    try:
        return repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to write>"


def to_str_release(value: object) -> str:
    """Profile xldocbench-1519's string form of a value, the public release's (issue 18): as
    `to_str`, except that lists and objects are written with json's default separators, a space
    after each `,` and `:` (`["a", "b"]`, `{"k": 1}`), keys sorted, non-ASCII kept."""
    if isinstance(value, (list, dict, tuple)):
        try:
            return json.dumps(value, sort_keys=True, ensure_ascii=False)
        except (RecursionError, TypeError, ValueError):  # nested too deeply (or unsortable keys): never raises
            return _unprintable(value)
    return to_str(value)


def id_text_release(value: object) -> str:
    """The release's text of an id field (issue 18): Python's `str()` of the value (`{'a': 1}` for
    an object, `['x']` for a list), "" for null."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except RecursionError:
        return repr(type(value))


@quick_state
@dataclass(frozen=True, slots=True)
class EvidenceItem:
    locator: str
    pages: tuple[int, ...]
    quote: str
    source_type: str
    bbox: tuple[float, float, float, float] | None = None


@quick_state
@dataclass(frozen=True, slots=True)
class DocRef:
    document_id: str
    url: str = ""
    evidence_pages: tuple[int, ...] = ()
    evidence_items: tuple[EvidenceItem, ...] = ()


@dataclass(slots=True)
class GoldQuestion:
    qid: str
    question: str
    answers: tuple[str, ...]  # the gold value first; DocVQA records may list several
    answer_format: str  # the format that decides the answer type: string form, "Str" when absent, null or empty (spec 3)
    verification_rule: str
    split: Any  # task_type as read (any JSON value); "unknown" when the key is absent
    metadata: dict[str, Any]
    documents: tuple[DocRef, ...] = ()
    file: str = ""
    line: int | None = None
    question_types: tuple[str, ...] = ()  # DocVQA
    image: str = ""  # DocVQA page image
    # answer.format as written: the per-question row echoes it ("" stays "", null stays null) and
    # "Str" only when the key is absent (spec 7); the breakdown label is its string form, or
    # "unknown" when that is empty (absent, null or "") -- see `row_format` and `labels`.
    raw_format: Any = "Str"
    format_given: bool = True  # False when the gold had no answer.format key
    # why the gold answer cannot be matched by a right answer ("" when it can): "no gold answer"
    # (null or absent value) or "gold answer is nan" (a non-finite number); the loader also
    # reports it at the question's file:line. Such a question is kept and scored as the release does.
    gold_problem: str = ""
    release_text: bool = False  # labels written as the public release writes values (profile xldocbench-1519)

    def text(self, value: Any) -> str:
        """A value's text as this question's labels write it (spec 1c, or the release's form)."""
        return to_str_release(value) if self.release_text else to_str(value)

    @property
    def row_format(self) -> Any:
        """The per-question row's answer_format: the raw value, "Str" only when the key is absent."""
        return self.raw_format if self.format_given else "Str"

    @property
    def format_label(self) -> str:
        """The answer_format breakdown label: the string form of the raw value, or "unknown"."""
        return (self.text(self.raw_format) if self.format_given else "") or "unknown"

    @property
    def gold_answer(self) -> str:
        return self.answers[0] if self.answers else ""

    def meta(self, key: str) -> str:
        """Breakdown label: string form of metadata[key], or 'unknown' when empty (spec 7)."""
        return self.text(self.metadata.get(key)) or "unknown"

    def raw_meta(self, key: str) -> Any:
        """Per-question row value: the raw metadata value (null stays null), 'unknown' only when
        the key is absent (spec 7)."""
        return self.metadata.get(key, "unknown")

    @property
    def evidence_sources(self) -> list[str]:
        value = self.metadata.get("evidence_sources")
        if value is None:
            return []
        if not isinstance(value, list):
            value = [value]
        return [self.text(v) for v in value]

    def labels(self, group: str) -> list[str]:
        """The bucket labels of this question in one breakdown group (evidence_source may give several)."""
        if group == "split":
            return [self.text(self.split) or "unknown"]
        if group == "answer_format":
            return [self.format_label]
        if group == "evidence_source":
            return [s or "unknown" for s in self.evidence_sources] or ["unknown"]
        if group == "question_type":
            return list(self.question_types) or ["unknown"]
        return [self.meta(group)]

    @property
    def evidence_pages(self) -> dict[str, tuple[int, ...]]:
        return {d.document_id: d.evidence_pages for d in self.documents if d.evidence_pages}

    @property
    def document_ids(self) -> list[str]:
        return [d.document_id for d in self.documents]


@quick_state
@dataclass(frozen=True, slots=True)
class PredictedEvidence:
    page: int
    document_id: str = ""
    bbox: tuple[float, float, float, float] | None = None


@dataclass(slots=True)
class Prediction:
    qid: str
    text: str  # the prediction as read (before status substitution)
    status: str  # "success" when absent
    file: str = ""
    line: int | None = None
    evidence_pages: tuple[int, ...] = ()
    evidence: tuple[PredictedEvidence, ...] = ()


@dataclass(slots=True)
class ScoreRow:
    """One official (not recomputed) score of one system on one question."""

    qid: str
    system: str
    accuracy: float
    token_f1: float
    anls: float
    prediction: str | None = None
    status: str | None = None
    file: str = ""
    line: int | None = None


@dataclass(slots=True)
class DocumentRecord:
    document_id: str
    url: str = ""
    page_count: int | None = None
    file: str = ""  # `file` or `path` field: relative to <benchmark>/docs
    pdf_type: str = ""  # XL-DocBench's `pdf_type`, lower-cased ("scanned": every page is read by OCR)

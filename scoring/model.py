"""Plain records for what the loaders read. Metadata stays as read; accessors give the
release evaluator's labels (spec section 7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .metrics import Judgement
from .text import to_str, to_str_release

BREAKDOWNS = ("split", "domain", "reasoning_type", "answer_format", "difficulty", "doc_type", "evidence_source")


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    locator: str
    pages: tuple[int, ...]
    quote: str
    source_type: str
    bbox: tuple[float, float, float, float] | None = None


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

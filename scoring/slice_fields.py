"""The fields the weak-slice finder tests, listed once for the command line and the dashboard.

    slice_fields(gold, page_counts=None, extra=None) -> FieldSet

A *field* is a way of splitting the questions: each question has one value (a label), none, or
several (a multi-valued field such as evidence_source puts a question in the slice of each of its
values). The command line (`scoring.gate`, `--weak-slices`) and the dashboard (the Weak slices page,
Compare's "All runs", the Presentation and the report, through `dashboard.weak.frames.inputs`) call
`slice_fields` on the same gold, so they test the same fields and say which (`SliceSearch.fields_text`).

What is a field
---------------
1. The benchmark's breakdowns: split, reasoning_type, evidence_source (multi-valued), answer_format,
   domain, difficulty, doc_type; page_category (multi-valued) when the gold carries it.
2. Document length and evidence position (`length_bucket`, `evidence_position`) when the benchmark's
   documents.jsonl declares page counts -- the command line reads it beside the gold files
   (`page_counts_beside`), the dashboard from its workspace (`Analysis.declared_pages`): the page counts
   both can read, so both list the same fields (the dashboard's overview also counts a PDF's pages;
   the command line reads no PDF). Without them both name the two fields as left out.
3. Every other gold metadata key holding a scalar:
   - numbers (every value an int or a float, not a boolean) are cut into at most NUMERIC_BINS ranges
     of about equal numbers of questions, labelled by the values they hold ("3–5"; "3" when a range
     holds one value);
   - other values are labels when the key has 2 to MAX_VALUES distinct ones ("True", "report");
   - a key whose every question has its own value (an identifier) and a text key with more than
     MAX_VALUES values (free text) are left out, and `FieldSet.left_out` says why.
4. `extra`: fields the caller adds (the dashboard's saved slices and the triage notes' tags), one value
   per question (a tuple for several).
A field whose values are all the same (every question "unknown") splits nothing: it is kept in the
listing and the finder names it as skipped.

Human labels: `FieldSet.label(field)` ("Answer format", "Evidence pages") and `FieldSet.describe`
("Answer format: Int & Evidence pages: 3–5"): what a page, the report and the command line print.
Machine names stay `field=value` (`scoring.slices.Slice.name`, the CSV's `slice` column), the
numeric fields' values being their ranges (`meta.evidence_page_count=3–5`); `FieldSet.raw_values`
gives the values a range holds (the explorer filters on them).
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .model import GoldQuestion, to_str

META = "meta."  # another gold metadata key as a field: `meta.<key>` (the dashboard's question frame's column)
MAX_VALUES = 20  # a text metadata key with more distinct values is free text or an id: not a field
NUMERIC_BINS = 4  # a numeric metadata key is cut into at most this many ranges
UNKNOWN = "unknown"
RANGE_DASH = "–"

# the breakdown metadata keys read by GoldQuestion.meta / labels (not listed again as `meta.<key>`)
STANDARD_METADATA = frozenset({"domain", "reasoning_type", "difficulty", "doc_type", "evidence_sources"})
PAGE_CATEGORY = "page_category"  # MMLongBench-Doc: single-page / cross-page / unanswerable
LENGTH, POSITION = "length", "position"
LENGTH_BUCKETS = ((10, "1–10 pages"), (50, "11–50 pages"), (200, "51–200 pages"), (500, "201–500 pages"))
LONGEST = "over 500 pages"
_LENGTH_LIMITS = tuple(limit for limit, _ in LENGTH_BUCKETS)  # ascending
_LENGTH_LABELS = (*(label for _, label in LENGTH_BUCKETS), LONGEST)
POSITIONS = ("first third", "middle third", "last third")

FIELD_LABELS = {
    "split": "Split",
    "domain": "Domain",
    "reasoning_type": "Reasoning type",
    "difficulty": "Difficulty",
    "doc_type": "Document type",
    "answer_format": "Answer format",
    "evidence_source": "Evidence source",
    LENGTH: "Document length",
    POSITION: "Evidence position",
    PAGE_CATEGORY: "Page category",
    "saved_slice": "Saved slice",
    "tag": "Tag",
}
META_LABELS = {"evidence_page_count": "Evidence pages", "n_context_documents": "Context documents",
               "n_evidence_documents": "Evidence documents"}


def field_label(name: str) -> str:
    """A field's name in words: "Answer format", "Evidence pages", "Doc type coarse"."""
    if name in FIELD_LABELS:
        return FIELD_LABELS[name]
    key = name.removeprefix(META)
    return META_LABELS.get(key) or key.replace("_", " ").strip().capitalize() or name


# ----------------------------------------------------------------------------- document length, evidence position


def length_bucket(pages: int | None) -> str:
    """The document-length label of a question's context (its documents' pages together)."""
    if not pages:
        return UNKNOWN
    return _LENGTH_LABELS[bisect_left(_LENGTH_LIMITS, pages)]  # the first bin whose limit is >= pages


def evidence_position(first_page: int | None, page_count: int | None) -> str:
    """Which third of the document holds the first gold evidence page."""
    if not first_page or not page_count or first_page > page_count:
        return UNKNOWN
    return POSITIONS[min(2, (first_page - 1) * 3 // page_count)]


def context_pages(q: GoldQuestion, page_counts: Mapping[str, int | None]) -> int | None:
    """The pages of all the question's documents, None unless every one is known."""
    counts = [page_counts.get(d.document_id) for d in q.documents]
    known = [c for c in counts if c]
    return sum(known) if counts and len(known) == len(counts) else None


def question_position(q: GoldQuestion, page_counts: Mapping[str, int | None]) -> str:
    """`evidence_position` of the question's first document naming evidence pages."""
    ref = next((d for d in q.documents if d.evidence_pages), None)
    return evidence_position(min(ref.evidence_pages), page_counts.get(ref.document_id)) if ref else UNKNOWN


def length_and_position(q: GoldQuestion, page_counts: Mapping[str, int | None]) -> tuple[str, str]:
    """A question's document-length bin (`length_bucket` of its `context_pages`) and evidence-position bin
    (`question_position`): the question frame's `length` and `position`, and the engine's codes of them."""
    return length_bucket(context_pages(q, page_counts)), question_position(q, page_counts)


def page_counts_beside(gold_paths: Iterable[str | Path]) -> dict[str, int | None] | None:
    """Page counts from documents.jsonl in the folder of the first gold file (None when there is
    none, or it names no page count): what the command line knows of document length, and what
    the dashboard's finder uses too (`Analysis.declared_pages`)."""
    from .loaders import load_documents

    for path in gold_paths:
        docs = Path(path).parent / "documents.jsonl"
        if not docs.is_file():
            return None
        counts = {d.document_id: d.page_count for d in load_documents(docs).items}
        return counts if any(counts.values()) else None
    return None


# ----------------------------------------------------------------------------- the listing


@dataclass
class FieldSet:
    """The fields of a set of questions, in order: `columns` (name -> one value per question, what
    `scoring.slices.find_weak_slices` takes), `ranges` (a binned field -> its range label -> the raw
    values in it, as text), `left_out` (a metadata key that is no field -> why)."""

    columns: dict[str, list[Any]]
    ranges: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    def label(self, name: str) -> str:
        return field_label(name)

    def describe(self, conditions: Sequence[tuple[str, str]]) -> str:
        """Conditions in words: "Answer format: Int & Evidence pages: 3–5"."""
        return describe(conditions)

    def raw_values(self, name: str, value: str) -> list[str]:
        """The values of field `name` that condition `value` stands for (a range's values; else itself)."""
        return list(self.ranges.get(name, {}).get(value, (value,)))


def describe(conditions: Sequence[tuple[str, str]]) -> str:
    """Conditions in words: "Answer format: Int & Evidence pages: 3–5"."""
    return " & ".join(f"{field_label(f)}: {v}" for f, v in conditions)


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def numeric_ranges(values: Sequence[float | None], bins: int = NUMERIC_BINS) -> tuple[list[str | None], dict[str, tuple[str, ...]]]:
    """Each value's range label (None stays None) and each label's values as the question frame
    writes them (`to_str`): the distinct values in order, cut where the count of questions so far
    crosses k/bins of them, so each range holds about as many questions (a value is never split). A
    range of one value is that value."""
    counts = Counter(v for v in values if v is not None)
    distinct = sorted(counts)
    total = sum(counts.values())
    bin_of: dict[float, int] = {}
    before = 0
    for v in distinct:
        bin_of[v] = min(bins - 1, before * bins // max(1, total))
        before += counts[v]
    members: dict[int, list[float]] = {}
    for v in distinct:
        members.setdefault(bin_of[v], []).append(v)
    label_of: dict[int, str] = {}
    for b, vs in members.items():
        lo, hi = _number_text(vs[0]), _number_text(vs[-1])
        label_of[b] = lo if lo == hi else f"{lo}{RANGE_DASH}{hi}"
    labels = [None if v is None else label_of[bin_of[v]] for v in values]
    raw = {label_of[b]: tuple(to_str(v) for v in vs) for b, vs in members.items()}
    return labels, raw


def _metadata_field(raw: list[Any]) -> tuple[list[Any] | None, dict[str, tuple[str, ...]], str]:
    """(values, ranges, why not) of one metadata key over the questions (raw values, None: absent)."""
    present = [v for v in raw if v is not None and v != ""]
    if not present:
        return None, {}, ""
    if any(isinstance(v, (list, dict, tuple)) for v in present):
        return None, {}, ""  # lists and objects are not labels (the question frame leaves them out too)
    if all(_is_number(v) for v in present):
        distinct = len(set(present))
        if distinct == len(raw) and distinct > MAX_VALUES:
            return None, {}, "every question its own value"
        labels, ranges = numeric_ranges([v if _is_number(v) else None for v in raw])
        return labels, {k: vs for k, vs in ranges.items() if vs != (k,)}, ""
    text = [None if v is None or v == "" else to_str(v) for v in raw]
    distinct = len(set(t for t in text if t is not None))
    if distinct > MAX_VALUES:
        return None, {}, ("every question its own value" if distinct == len(raw) else f"more than {MAX_VALUES} values")
    return text, {}, ""


@dataclass(frozen=True)
class QuestionValues:
    """What `slice_fields` reads from each question's gold, read once for a whole gold: the breakdowns'
    (and length's and position's) values, page_category's, and every other metadata key's raw value and
    where it is present. `fields(ids)` is `slice_fields` of those questions' gold, in that order --
    equal column for column, so a page asking the fields of many subsets of one gold (each pair of runs
    on Compare) reads the gold once. What depends on the subset is worked out per subset: which
    metadata keys occur and in what order, their ranges and whether they are fields, whether
    page_category occurs."""

    gold: Sequence[GoldQuestion]
    columns: dict[str, list[Any]]
    left_out: dict[str, str]
    page_category: list[Any]
    has_page_category: np.ndarray
    metadata: dict[str, list[Any]]  # key -> raw value per question, the keys in the order the whole gold meets them

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """Question id -> position in the gold (made when a subset is first asked: `slice_fields` needs none)."""
        return {q.qid: i for i, q in enumerate(self.gold)}

    @functools.cached_property
    def present(self) -> dict[str, np.ndarray]:
        """Metadata key -> where a question holds it (a subset's keys and their order; made on first need)."""
        return {key: np.fromiter((key in q.metadata for q in self.gold), dtype=bool, count=len(self.gold))
                for key in self.metadata}

    def positions(self, ids: Iterable[str]) -> np.ndarray:
        """The positions in the gold of these question ids (KeyError for one not in it)."""
        return np.fromiter((self.index[str(i)] for i in ids), dtype=np.int64)

    def fields(self, ids: Iterable[str] | None = None, extra: Mapping[str, Sequence[Any]] | None = None) -> FieldSet:
        """`slice_fields(<the gold of ids, in order>, page_counts, extra)` (ids None: the whole gold)."""
        pos = np.arange(len(self.gold)) if ids is None else self.positions(ids)
        at = pos.tolist()

        def take(column: list[Any]) -> list[Any]:
            return list(column) if ids is None else [column[i] for i in at]

        cols = {name: take(column) for name, column in self.columns.items()}
        if pos.size and bool(self.has_page_category[pos].any()):
            cols[PAGE_CATEGORY] = take(self.page_category)
        out = FieldSet(cols, left_out=dict(self.left_out))
        for key in (self.metadata if ids is None else self._keys(pos)):
            values, ranges, why = _metadata_field(take(self.metadata[key]))
            name = META + key
            if values is not None:
                cols[name] = values
                if ranges:
                    out.ranges[name] = ranges
            elif why:
                out.left_out[name] = why
        for name, column in (extra or {}).items():
            cols[name] = list(column)
        return out

    def _keys(self, pos: np.ndarray) -> list[str]:
        """The metadata keys present among the questions at `pos`, in the order `slice_fields` meets them:
        by the first of those questions holding each, then by that question's own order of keys."""
        first: list[tuple[int, int, str]] = []
        for key, present in self.present.items():
            where = present[pos]
            if where.any():
                k = int(where.argmax())
                first.append((k, list(self.gold[int(pos[k])].metadata).index(key), key))
        return [key for *_, key in sorted(first)]


def question_values(gold: Sequence[GoldQuestion], page_counts: Mapping[str, int | None] | None = None,
                    *, metadata: bool = True) -> QuestionValues:
    """Each question's field values, read once (`QuestionValues`); `metadata=False` as in `slice_fields`."""
    gold = list(gold)
    cols: dict[str, list[Any]] = {
        "split": [q.labels("split")[0] for q in gold],
        "reasoning_type": [q.meta("reasoning_type") for q in gold],
        "evidence_source": [tuple(q.labels("evidence_source")) for q in gold],
        "answer_format": [q.labels("answer_format")[0] for q in gold],
        "domain": [q.meta("domain") for q in gold],
        "difficulty": [q.meta("difficulty") for q in gold],
        "doc_type": [q.meta("doc_type") for q in gold],
    }
    no_pages: dict[str, str] = {}
    if page_counts and any(page_counts.values()):
        cols[LENGTH] = [length_bucket(context_pages(q, page_counts)) for q in gold]
        cols[POSITION] = [question_position(q, page_counts) for q in gold]
    else:
        no_pages = {LENGTH: "no page counts in documents.jsonl", POSITION: "no page counts in documents.jsonl"}
    has_category = np.fromiter((PAGE_CATEGORY in q.metadata for q in gold), dtype=bool, count=len(gold))
    category = [tuple(v) if isinstance(v := q.metadata.get(PAGE_CATEGORY), (list, tuple)) else (v if v else ())
                for q in gold] if has_category.any() else []
    raw: dict[str, list[Any]] = {}
    if metadata:
        keys = dict.fromkeys(k for q in gold for k in q.metadata if k not in STANDARD_METADATA and k != PAGE_CATEGORY)
        for key in keys:
            raw[key] = [q.metadata.get(key) for q in gold]
    return QuestionValues(gold, cols, no_pages, category, has_category, raw)


def slice_fields(gold: Sequence[GoldQuestion], page_counts: Mapping[str, int | None] | None = None,
                 extra: Mapping[str, Sequence[Any]] | None = None, *, metadata: bool = True) -> FieldSet:
    """The finder's fields of these questions (module docstring), one value per question in their
    order. `page_counts` (document id -> pages) adds length and position; `extra` adds the caller's
    fields; `metadata=False` leaves out the other metadata keys (the breakdowns only). Reading a whole
    gold once for many subsets of it: `question_values(gold, page_counts).fields(ids, extra)`."""
    return question_values(gold, page_counts, metadata=metadata).fields(None, extra)

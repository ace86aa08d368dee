"""The boxes drawn on one evidence page, by layer, and the notes that go with them. No streamlit.

Layers (colours from Okabe & Ito's colour-blind-safe palette, dashboard/evidence/render.py):
  gold evidence   the gold quotes located on the page (exact or fuzzy text search)
  gold boxes      explicit `bbox` of gold evidence items (points, or 0–1 fractions of the page)
  gold answer     occurrences of the gold answer(s) on the page
  <run>: answer   occurrences of a run's answer on the page
  <run>: cited    a run's cited boxes on the page (dashed), and a dashed frame when it cites the page
  OCR words       the words OCR read on a page without a text layer (dashboard/documents/ocr.py), off by default
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.documents import ocr
from dashboard.documents.pagetext import PageText
from dashboard.documents.pdf import DocumentError, page_text
from dashboard.evidence.locate import EXACT, NOT_FOUND, Location, answer_boxes, answered, locate_quote
from dashboard.evidence.render import GOLD_ANSWER, GOLD_BOX, GOLD_EVIDENCE, RUN_COLOURS, Box, from_normalised, looks_normalised
from scoring.model import DocRef, GoldQuestion, Prediction

GOLD_QUOTES, GOLD_BOXES, GOLD_ANSWERS = "Gold evidence", "Gold boxes", "Gold answer"
OCR_WORDS, OCR_COLOUR = "OCR words", "#7F7F7F"  # grey: outlines, not a finding


def short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Layer:
    name: str
    colour: str
    dashed: bool = False
    run: str = ""


def answer_layer(run: str) -> str:
    return f"{run}: answer"


def cited_layer(run: str) -> str:
    return f"{run}: cited evidence"


def run_colour(runs: Sequence[str], run: str) -> str:
    return RUN_COLOURS[list(runs).index(run) % len(RUN_COLOURS)] if run in runs else RUN_COLOURS[-1]


def layers(runs: Sequence[str]) -> list[Layer]:
    out = [Layer(GOLD_QUOTES, GOLD_EVIDENCE), Layer(GOLD_BOXES, GOLD_BOX), Layer(GOLD_ANSWERS, GOLD_ANSWER)]
    for run in runs:
        c = run_colour(runs, run)
        out += [Layer(answer_layer(run), c, run=run), Layer(cited_layer(run), c, dashed=True, run=run)]
    return out + [Layer(OCR_WORDS, OCR_COLOUR)]


def gold_pages(ref: DocRef) -> list[int]:
    return sorted({*ref.evidence_pages, *(p for it in ref.evidence_items for p in it.pages)})


@dataclass
class QuoteNote:
    quote: str
    page: int
    location: Location


@dataclass
class PageLayers:
    boxes: list[Box] = field(default_factory=list)
    quotes: list[QuoteNote] = field(default_factory=list)
    cited_here: list[str] = field(default_factory=list)  # runs citing this page
    has_text: bool = True
    width: float = 0.0
    height: float = 0.0
    ocr: bool = False  # the page's text was read by OCR
    ocr_words: int = 0


def _points(box, pt: PageText):
    return from_normalised(box, pt.width, pt.height) if looks_normalised(box) else box


def page_layers(q: GoldQuestion, ref: DocRef, path: Path, page: int, runs: Sequence[str],
                preds: Mapping[str, Prediction | None], wanted: set[str] | None = None) -> PageLayers:
    """Every box of every wanted layer (all when `wanted` is None) on one page of one document of
    question q. Raises DocumentError for a page the document does not have."""
    pt = page_text(path, page)
    out = PageLayers(has_text=pt.has_text, width=pt.width, height=pt.height, ocr=ocr.was_ocr(path, page))
    on = (lambda name: True) if wanted is None else (lambda name: name in wanted)
    if out.ocr:
        words = ocr.page_words(path, page)
        out.ocr_words = len(words)
        if on(OCR_WORDS):
            out.boxes += [Box(r, OCR_COLOUR, f"OCR read “{short(w, 40)}”", OCR_WORDS, fill=False) for r, w in words]
    first = q.documents[0].document_id if q.documents else ""
    for k, it in enumerate(ref.evidence_items):
        pages = list(it.pages) or list(ref.evidence_pages)
        if page not in pages:
            continue
        if it.quote.strip():
            loc = locate_quote(pt, it.quote)
            out.quotes.append(QuoteNote(it.quote, page, loc))
            if on(GOLD_QUOTES):
                how = "exact text match" if loc.method == EXACT else f"fuzzy match, score {loc.score:.2f}"
                for r in loc.rects:
                    out.boxes.append(Box(r, GOLD_EVIDENCE, f"Gold evidence {k + 1} ({it.source_type or 'text'}, {how}): "
                                                          f"“{short(it.quote)}”", GOLD_QUOTES))
        if it.bbox is not None and on(GOLD_BOXES):
            out.boxes.append(Box(_points(it.bbox, pt), GOLD_BOX,
                                 f"Gold box {k + 1} ({it.source_type or 'region'}): {short(it.locator or it.quote or 'no label')}",
                                 GOLD_BOXES))
    if on(GOLD_ANSWERS):
        for ans in dict.fromkeys(q.answers):
            for found, k, n, r in answer_boxes(pt, ans):
                out.boxes.append(Box(r, GOLD_ANSWER, f"Gold answer{element_label(k, n)}: “{short(found)}”", GOLD_ANSWERS))
    for run in runs:
        pred = preds.get(run)
        colour = run_colour(runs, run)
        if on(answer_layer(run)):
            for found, k, n, r in answer_boxes(pt, answered(pred)):
                out.boxes.append(Box(r, colour, f"{run}: answer{element_label(k, n)} “{short(found)}”", answer_layer(run)))
        if pred is None:
            continue
        cites_page = page in pred.evidence_pages and ref.document_id == first
        cites_page |= any(e.page == page and (e.document_id or first) == ref.document_id for e in pred.evidence)
        if cites_page:
            out.cited_here.append(run)
        if on(cited_layer(run)):
            for e in pred.evidence:
                if e.page == page and (e.document_id or first) == ref.document_id and e.bbox is not None:
                    out.boxes.append(Box(_points(e.bbox, pt), colour, f"{run}: cited box", cited_layer(run), dashed=True))
            if cites_page:
                inset = 3.0
                out.boxes.append(Box((inset, inset, pt.width - inset, pt.height - inset), colour,
                                     f"{run} cites page {page}", cited_layer(run), dashed=True, fill=False))
    return out


def element_label(k: int, n: int) -> str:
    """", element 2 of 3" for an element of a list answer; "" for an answer that is not a list."""
    return f", element {k} of {n}" if n > 1 else ""


def quote_message(note: QuoteNote) -> str:
    loc = note.location
    if loc.method == EXACT:
        return f"p. {note.page}: located exactly — “{short(note.quote)}”"
    if loc.method == NOT_FOUND:
        return f"p. {note.page}: not located — “{short(note.quote)}” ({loc.message or 'no match'})"
    extra = f"; {loc.message}" if loc.message else ""
    return f"p. {note.page}: located by fuzzy alignment, score {loc.score:.2f}{extra} — “{short(note.quote)}”"


__all__ = ["DocumentError", "GOLD_ANSWERS", "GOLD_BOXES", "GOLD_QUOTES", "OCR_WORDS", "Layer", "PageLayers", "QuoteNote",
           "answer_layer", "cited_layer", "gold_pages", "layers", "page_layers", "quote_message", "run_colour"]

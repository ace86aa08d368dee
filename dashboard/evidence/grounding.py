"""Evidence metrics per (question, run). No streamlit here.

* evidence_precision / evidence_recall: the pages a run cites (`evidence_pages`, and the pages of
  its `evidence` boxes) against the gold evidence pages, as (document, page) pairs. A run's
  `evidence_pages` without a document refer to the question's first document. Both are None when
  the run cites no page for the question (it reports no evidence); recall is None when the gold
  has no evidence page.
* grounding: the fraction of the gold's explicit boxes (`bbox` of evidence items) matched by a
  cited box on the same page, where a cited box matches a gold box when the intersection covers at
  least 0.5 of the gold box's own area and at least 0.2 of the cited box's own area (intersection
  over each box's area, not IoU). These are the ParseBench paper's thresholds as our seed article
  describes them; ParseBench's released code instead accepts a match when the larger of the two
  ratios is at least 0.3, which `box_matches_released` offers. None when the gold has no box, or
  the run cites no box at all.
* answer_location: evidence_page, other_page (the answer is in the document, only on pages that are
  not evidence pages: a wrong-page answer), in_document (found, in a question whose gold names no
  evidence page, as DocVQA's: counted as found, never as wrong-page), not_in_document (not found
  verbatim where the gold answer is written, or on a question the documents hold no answer to:
  invented), computed (not found verbatim, nor is the gold: computed from the page -- one rule for
  every answer, dashboard.evidence.locate.not_found_verdict), no_document (the document is missing);
  refused (a refusal: not searched) and extraction_failed (the benchmark's failure marker `Fail to
  answer`, or -- where the raw responses and the right answers are given -- a wrong answer not in
  the document while the gold occurs in the raw response), each its own outcome, never "not in the
  document"; None when the answer was not searched for another reason (an empty or failed answer,
  a choice letter A-D, a page image without text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dashboard.documents.pagetext import Rect
from dashboard.documents.pdf import DocumentError, page_text
from dashboard.evidence.locate import AnswerLocation, answered, gold_lazily, locate_answer
from dashboard.evidence.render import from_normalised, looks_normalised
from scoring.model import GoldQuestion, Prediction

GOLD_COVERED, CITED_INSIDE = 0.5, 0.2  # the paper's thresholds, as our seed article describes them
RELEASED_MAX_IOA = 0.3  # ParseBench's released code: max of the two intersection-over-area ratios
COLUMNS = ["question_id", "run", "evidence_precision", "evidence_recall", "grounding", "answer_location",
           "answer_pages_evidence", "answer_pages_elsewhere"]
LOCATIONS = ("evidence_page", "in_document", "other_page", "not_in_document", "computed", "no_document", "refused",
             "extraction_failed")
SEARCHED = ("evidence_page", "in_document", "other_page", "not_in_document", "computed")  # the answers a rate is over


def area(r: Rect) -> float:
    return max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1])


def intersection(a: Rect, b: Rect) -> float:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def box_matches(cited: Rect, gold: Rect, gold_covered: float = GOLD_COVERED, cited_inside: float = CITED_INSIDE) -> bool:
    """The ParseBench paper's rule (as our seed describes it): the intersection covers >= 0.5 of the
    gold box and >= 0.2 of the cited box."""
    inter = intersection(cited, gold)
    ag, ac = area(gold), area(cited)
    if ag <= 0 or ac <= 0:
        return False
    return inter / ag >= gold_covered and inter / ac >= cited_inside


def box_matches_released(cited: Rect, gold: Rect, at_least: float = RELEASED_MAX_IOA) -> bool:
    """ParseBench's released code's rule: the larger of intersection / gold area and intersection /
    cited area is at least 0.3."""
    inter = intersection(cited, gold)
    ag, ac = area(gold), area(cited)
    if ag <= 0 or ac <= 0:
        return False
    return max(inter / ag, inter / ac) >= at_least


PageBox = tuple[str, int, Rect]  # (document id, 1-based page, box in points)


def grounding(cited: list[PageBox], gold: list[PageBox]) -> float | None:
    """Fraction of gold boxes matched by at least one cited box on the same document page."""
    if not gold or not cited:
        return None
    hit = sum(1 for d, p, g in gold if any(cd == d and cp == p and box_matches(c, g) for cd, cp, c in cited))
    return hit / len(gold)


def precision_recall(cited: set[tuple[str, int]], gold: set[tuple[str, int]]) -> tuple[float | None, float | None]:
    both = len(cited & gold)
    return (both / len(cited) if cited else None, both / len(gold) if gold else None)


def gold_pages(q: GoldQuestion) -> set[tuple[str, int]]:
    return {(d.document_id, p) for d in q.documents for p in (*d.evidence_pages, *(p for it in d.evidence_items for p in it.pages))}


def cited_pages(q: GoldQuestion, pred: Prediction | None) -> set[tuple[str, int]]:
    if pred is None:
        return set()
    first = q.documents[0].document_id if q.documents else ""
    return {(first, p) for p in pred.evidence_pages} | {(e.document_id or first, e.page) for e in pred.evidence}


def _points(box: Rect, doc: str, page: int, paths: Mapping[str, Path | None]) -> Rect | None:
    """A box in points: as given, or a 0–1 box scaled by the page's size (None if the page is unknown)."""
    if not looks_normalised(box):
        return box
    path = paths.get(doc)
    if path is None:
        return None
    try:
        pt = page_text(path, page)
    except (DocumentError, OSError):
        return None
    return from_normalised(box, pt.width, pt.height)


def gold_boxes(q: GoldQuestion, paths: Mapping[str, Path | None]) -> list[PageBox]:
    out = []
    for d in q.documents:
        for it in d.evidence_items:
            if it.bbox is not None:
                for p in it.pages or d.evidence_pages[:1]:
                    b = _points(it.bbox, d.document_id, p, paths)
                    if b is not None:
                        out.append((d.document_id, p, b))
    return out


def cited_boxes(q: GoldQuestion, pred: Prediction | None, paths: Mapping[str, Path | None]) -> list[PageBox]:
    if pred is None:
        return []
    first = q.documents[0].document_id if q.documents else ""
    out = []
    for e in pred.evidence:
        if e.bbox is not None:
            b = _points(e.bbox, e.document_id or first, e.page, paths)
            if b is not None:
                out.append((e.document_id or first, e.page, b))
    return out


@dataclass
class EvidenceRow:
    question_id: str
    run: str
    evidence_precision: float | None
    evidence_recall: float | None
    grounding: float | None
    answer_location: str | None
    answer_pages_evidence: list[int]
    answer_pages_elsewhere: list[int]
    location: AnswerLocation | None = None


def evidence_row(q: GoldQuestion, run: str, pred: Prediction | None, paths: Mapping[str, Path | None], *,
                 right: bool | None = None, response: object = None,
                 gold: str | Callable[[], str] | None = None) -> EvidenceRow:
    """`right`, `response` and `gold`: as locate_answer takes them (whether the answer is right; the raw
    response beside it; where the question's gold is, dashboard.evidence.locate.gold_where)."""
    cited = cited_pages(q, pred)
    # a run that cites no page at all does not report evidence: neither precision nor recall
    p, r = precision_recall(cited, gold_pages(q)) if cited else (None, None)
    boxes = cited_boxes(q, pred, paths)
    g = grounding(boxes, gold_boxes(q, paths)) if boxes else None
    loc = locate_answer(answered(pred), q, dict(paths), right=right, response=response, gold=gold)
    return EvidenceRow(q.qid, run, p, r, g, loc.location, loc.flat("evidence"), loc.flat("other"), loc)


def evidence_table(questions: list[GoldQuestion], runs: Mapping[str, Mapping[str, Prediction]],
                   paths: Callable[[GoldQuestion], Mapping[str, Path | None]],
                   progress: Callable[[int, int], object] | None = None, *,
                   right: Mapping[str, set[str]] | None = None,
                   responses: Mapping[str, Mapping[str, object] | None] | None = None) -> pd.DataFrame:
    """One row per (question, run) that has a prediction: the columns of COLUMNS. `runs` maps a run
    name to its predictions by question id; `paths(q)` gives a question's document files. Optional:
    `right` maps a run to the ids of its right answers (the score frame's `right` column) and
    `responses` a run to its raw responses by id (MMLongBench-Doc): with both, a wrong answer whose
    gold is in its response is located as extraction_failed, not as not_in_document."""
    rows = []
    total = len(questions) * max(1, len(runs))
    done = 0
    for q in questions:
        where = paths(q)
        gold = gold_lazily(q, dict(where))  # the one rule's input: searched once for all runs, if needed
        for run, preds in runs.items():
            done += 1
            pred = preds.get(q.qid)
            if pred is None:
                continue
            mine = (responses or {}).get(run)
            row = evidence_row(q, run, pred, where, right=None if right is None or run not in right else q.qid in right[run],
                               response=mine.get(q.qid) if mine else None, gold=gold)
            rows.append({c: getattr(row, c) for c in COLUMNS})
            if progress and done % 20 == 0:
                progress(done, total)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.astype({"evidence_precision": "Float64", "evidence_recall": "Float64", "grounding": "Float64"})


def run_rates(table: pd.DataFrame) -> pd.DataFrame:
    """Per run: mean page precision and recall, mean grounding (over questions where defined), and
    the rates of answers only on a non-evidence page, nowhere in the document (invented) and not
    written in it where the gold is not either (computed), over the answers that were searched in a
    document."""
    rows = []
    for run, part in table.groupby("run", sort=False):
        searched = part[part["answer_location"].isin(SEARCHED)]
        n = len(searched)
        rows.append({
            "run": run, "questions": len(part),
            "evidence_precision": part["evidence_precision"].mean(skipna=True),
            "evidence_recall": part["evidence_recall"].mean(skipna=True),
            "grounding": part["grounding"].mean(skipna=True),
            "grounded_questions": int(part["grounding"].notna().sum()),
            "answers_searched": n,
            "answer_on_evidence_page": (searched["answer_location"] == "evidence_page").mean() if n else None,
            "answer_only_on_other_page": (searched["answer_location"] == "other_page").mean() if n else None,
            "answer_not_in_document": (searched["answer_location"] == "not_in_document").mean() if n else None,
            "answer_computed": (searched["answer_location"] == "computed").mean() if n else None,
            "answer_found_no_evidence_page": (searched["answer_location"] == "in_document").mean() if n else None,
        })
    cols = ["run", "questions", "evidence_precision", "evidence_recall", "grounding", "grounded_questions",
            "answers_searched", "answer_on_evidence_page", "answer_only_on_other_page", "answer_not_in_document",
            "answer_computed", "answer_found_no_evidence_page"]
    return pd.DataFrame(rows, columns=cols)


def pages_listed(table: pd.DataFrame) -> pd.DataFrame:
    """The evidence table for reading and CSV: the page lists of answer_pages_evidence and
    answer_pages_elsewhere as "4, 7" text (empty for none)."""
    def listed(pages) -> str:
        return ", ".join(map(str, pages))

    return table.assign(answer_pages_evidence=table["answer_pages_evidence"].map(listed),
                        answer_pages_elsewhere=table["answer_pages_elsewhere"].map(listed))


EXPLORER_LABELS = {"evidence_precision": "Page precision", "evidence_recall": "Page recall", "grounding": "Grounding",
                   "answer_location": "Answer location"}
NOT_SEARCHED = "not_searched"  # the location key of an answer that was not searched (answer_location None)
LOCATION_LABELS = {"evidence_page": "on an evidence page", "in_document": "in the document (no evidence page named)",
                   "other_page": "only on other pages",
                   "not_in_document": "not in the document", "computed": "computed from the page",
                   "no_document": "document missing",
                   "refused": "a refusal (not searched)", "extraction_failed": "extraction failed"}
LOCATION_ORDER = (*LOCATIONS, NOT_SEARCHED)  # the explorer filter's options and the overview's segments, in order
AUTO_PAIRS = 2_000  # more (question, run) pairs than this: the pages compute the metrics on request only


def location_label(key: str | None) -> str:
    """The words for an answer-location key (None or NOT_SEARCHED: "not searched")."""
    key = location_key(key)
    return "not searched" if key == NOT_SEARCHED else LOCATION_LABELS.get(key, key)


def location_key(value) -> str:
    """The key of a table's answer_location value: None (not searched) becomes NOT_SEARCHED."""
    return value if isinstance(value, str) and value else NOT_SEARCHED


def explorer_columns(table: pd.DataFrame, runs: list[str], column=lambda run, label: f"{run} · {label}") -> pd.DataFrame:
    """questions × runs: for each run, its page precision, page recall, grounding and answer
    location (as words; "not searched" for an answer that was not searched, empty where the run has
    no prediction), indexed by question id -- to join onto the explorer table. `column` names a
    column from (run, label); the explorer's `tables.run_column(run, label)` fits."""
    out = pd.DataFrame(index=pd.Index(table["question_id"].unique(), name=None))
    for run in runs:
        part = table[table["run"] == run].set_index("question_id")
        for key, label in EXPLORER_LABELS.items():
            if key == "answer_location":
                words = part[key].map(location_label).astype(object)
                out[column(run, label)] = words.reindex(out.index)
            else:
                out[column(run, label)] = part[key].reindex(out.index).astype("Float64")
    return out


def location_breakdown(table: pd.DataFrame) -> pd.DataFrame:
    """Per (run, answer location): the number of questions and their ids -- the overview's bars or
    heatmap cells, with what a click opens. Answers not searched are labelled "not searched".
    Columns: run, label, count, question_ids, location (the key: LOCATION_ORDER), share (count over
    the run's answers, 0..1); runs in order of appearance, locations in LOCATION_ORDER."""
    cols = ["run", "label", "count", "question_ids", "location", "share"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    t = table.assign(location=table["answer_location"].map(location_key))
    out = t.groupby(["run", "location"], sort=False).agg(count=("question_id", "size"), question_ids=("question_id", list))
    out = out.reset_index()
    out["label"] = out["location"].map(location_label)
    out["share"] = out["count"] / out.groupby("run")["count"].transform("sum")
    runs = list(dict.fromkeys(table["run"]))
    out["_r"] = out["run"].map(runs.index)
    out["_l"] = out["location"].map(lambda k: LOCATION_ORDER.index(k) if k in LOCATION_ORDER else len(LOCATION_ORDER))
    return out.sort_values(["_r", "_l"], kind="stable")[cols].reset_index(drop=True)


def located_ids(table: pd.DataFrame, runs: list[str], locations: list[str]) -> set[str]:
    """The question ids where at least one of `runs` has its answer at one of `locations` (keys of
    LOCATION_ORDER): the explorer's "Answer location (any chosen run)" filter."""
    mine = table[table["run"].isin(runs)]
    keys = mine["answer_location"].map(location_key)
    return set(mine.loc[keys.isin(set(locations)).to_numpy(), "question_id"])

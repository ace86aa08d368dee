"""Evidence location, rendering and metrics (dashboard/evidence/locate.py, pagerender.py, layers.py,
grounding.py) and the `python -m dashboard.evidence` command line.

Hostile PDFs (line breaks, hyphenation, ligatures, curly quotes, a rotated page, a CropBox offset,
mixed page sizes) are generated at test time by tests/fixtures/evidence/make_fixtures.py.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from dashboard.documents import ocr as ocr_reader
from dashboard.documents import pdf
from dashboard.evidence import locate as ev
from dashboard.evidence.__main__ import main as evidence_main
from dashboard.evidence.grounding import (
    COLUMNS,
    area,
    box_matches,
    evidence_table,
    grounding,
    intersection,
    precision_recall,
    run_rates,
)
from dashboard.evidence.layers import GOLD_ANSWERS, GOLD_QUOTES, answer_layer, cited_layer, page_layers
from dashboard.evidence.render import (
    GOLD_EVIDENCE,
    MAX_PIXELS,
    RUN_COLOURS,
    Box,
    capped_zoom,
    draw_overlay,
    from_normalised,
    render_page,
    to_pixels,
)
from scoring.loaders import load_gold, load_predictions
from scoring.model import DocRef, EvidenceItem, GoldQuestion, PredictedEvidence, Prediction

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "evidence"
sys.path.insert(0, str(FIXTURES))
import make_fixtures as mf  # noqa: E402


@pytest.fixture(scope="module")
def fx(tmp_path_factory) -> dict[str, Path]:
    return mf.build(tmp_path_factory.mktemp("evidence"))


@pytest.fixture(scope="module")
def sample_gold() -> dict[str, GoldQuestion]:
    return {q.qid: q for q in load_gold(sorted(SAMPLE.glob("qa_*.jsonl"), key=lambda p: "cross" in p.name)).items}


def sample_paths(q: GoldQuestion) -> dict[str, Path | None]:
    return {d.document_id: SAMPLE / "docs" / f"{d.document_id}.pdf" for d in q.documents}


def close(a, b, tol: float = 0.05) -> bool:
    return len(a) == len(b) and all(max(abs(x - y) for x, y in zip(r, s)) <= tol for r, s in zip(sorted(a), sorted(b)))


def search_for(path: Path, page: int, text: str) -> list[tuple]:
    """PyMuPDF's own rectangles of `text` on the page: in its text layer, or, on a page without one
    (the sample's picture of a certificate), in the text Tesseract reads there at the locator's dpi."""
    with pymupdf.open(path) as doc:
        p = doc[page - 1]
        ocr = len(p.get_text().strip()) < 8
        tp = p.get_textpage_ocr(language=ocr_reader.LANGUAGE, dpi=ocr_reader.DPI, full=True) if ocr else None
        return [tuple(r) for r in p.search_for(text, textpage=tp)]


def union(rects):
    return (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects), max(r[3] for r in rects))


def inside(r, outer, tol: float = 1.0) -> bool:
    return r[0] >= outer[0] - tol and r[1] >= outer[1] - tol and r[2] <= outer[2] + tol and r[3] <= outer[3] + tol


# ----------------------------------------------------------------------------- quotes


def test_sample_quotes_equal_pymupdf_search_for(sample_gold):
    """Every gold quote of sample_runs/ is located exactly, with PyMuPDF's own rectangles."""
    rows = [r for q in sample_gold.values() for r in ev.gold_rows(q, sample_paths(q))]
    assert len(rows) >= 100
    for r in rows:
        assert r["method"] == "exact", r
        expected = search_for(SAMPLE / "docs" / f"{r['document_id']}.pdf", r["page"], r["quote"])
        assert close([tuple(x) for x in r["rects"]], expected), (r, expected)


@pytest.mark.parametrize("case", ["break", "hyphen", "ligature", "curly", "elided", "elided_dots"])
def test_hostile_quotes_located_exactly(fx, case):
    pt = ev.page_text(fx["hostile"], 1)
    loc = ev.locate_quote(pt, mf.QUOTES[case])
    assert loc.method == ev.EXACT and loc.score == 1.0, loc
    group = "elided" if case.startswith("elided") else case
    printed = [r for _, _, text in mf.LINES[group] for r in search_for(fx["hostile"], 1, text)]
    assert loc.rects and all(inside(r, union(printed), tol=4) for r in loc.rects), (loc.rects, printed)  # one glyph
    lines = {round(r[1]) for r in loc.rects}
    assert len(lines) == len(mf.LINES[group]), loc.rects  # one rectangle per printed line the quote spans


def test_quote_with_a_dropped_letter_is_located_fuzzily(fx):
    pt = ev.page_text(fx["hostile"], 1)
    loc = ev.locate_quote(pt, mf.QUOTES["typo"])
    assert loc.method == ev.FUZZY and 0.9 <= loc.score < 1.0, loc
    (line,) = search_for(fx["hostile"], 1, mf.LINES["typo"][0][2])
    assert len(loc.rects) == 1 and inside(loc.rects[0], line) and loc.rects[0][2] - loc.rects[0][0] > 0.8 * (line[2] - line[0])


def test_ligature_and_curly_quote_characters_are_really_in_the_text_layer(fx):
    """The fixture is hostile for real: PyMuPDF's text has U+FB01/U+FB03 and curly quotes, so a plain
    substring search for the straight-quoted, ligature-free quote fails."""
    with pymupdf.open(fx["hostile"]) as doc:
        text = doc[0].get_text()
    assert "\ufb01" in text and "\ufb03" in text and "\u201c" in text
    assert mf.QUOTES["ligature"] not in text and 'named it "Project Falcon"' not in text


def test_unlocatable_quote_says_so_with_its_best_score(fx):
    loc = ev.locate_in_document(fx["hostile"], 1, "Zebras migrate across the savannah every spring season")
    assert loc.method == ev.NOT_FOUND and loc.rects == []
    assert 0.0 < loc.score < ev.FUZZY_MIN and f"{loc.score:.2f}" in loc.message, loc


def test_quote_parts_split_on_ellipsis():
    assert ev.quote_parts("a b … c d") == ["a b", "c d"]
    assert ev.quote_parts("a b ... c d") == ["a b", "c d"]
    assert ev.quote_parts("plain quote") == ["plain quote"]


def test_missing_document_and_page_beyond_give_messages(fx):
    loc = ev.locate_in_document(None, 1, "anything")
    assert loc.method == ev.NO_DOCUMENT and loc.message
    loc = ev.locate_in_document(fx["hostile"], 99, "anything")
    assert loc.method == ev.NOT_FOUND and "beyond the document (2 pages)" in loc.message
    with pytest.raises(ev.DocumentError, match="beyond"):
        render_page(fx["hostile"], 99)
    bad = fx["hostile"].parent / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    loc = ev.locate_in_document(bad, 1, "anything")
    assert loc.method == ev.NOT_FOUND and "cannot be opened" in loc.message


# ----------------------------------------------------------------------------- geometry and pixels


def dark_bbox(png: bytes) -> tuple[int, int, int, int]:
    img = Image.open(io.BytesIO(png)).convert("L")
    return Image.eval(img, lambda v: 255 if v < 128 else 0).getbbox()


def rgb_at(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(png)).convert("RGB").getpixel((int(x), int(y)))


def hex_rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


@pytest.mark.parametrize("page", sorted(mf.GEOMETRY_PAGES))
@pytest.mark.parametrize("zoom", [1.0, 2.0])
def test_boxes_line_up_on_rotated_cropped_and_mixed_size_pages(fx, page, zoom):
    """The located marker equals search_for, and mapped onto the rendered image it covers exactly
    the dark pixels of the printed text (rotation 90°, CropBox offset, A6, landscape A3)."""
    pt = ev.page_text(fx["geometry"], page)
    loc = ev.locate_quote(pt, mf.MARKER)
    expected = search_for(fx["geometry"], page, mf.MARKER)
    assert loc.method == ev.EXACT and close(loc.rects, expected, 0.05)
    r = render_page(fx["geometry"], page, zoom)
    with pymupdf.open(fx["geometry"]) as doc:
        p = doc[page - 1]
        assert (r.width, r.height) == (round(p.rect.width * zoom), round(p.rect.height * zoom))
        assert r.rotation == p.rotation
    px = to_pixels(loc.rects[0], r.matrix)
    text = dark_bbox(r.png)
    tol = 2 * zoom + 1
    assert inside(text, px, tol), (text, px)
    assert (text[2] - text[0]) * (text[3] - text[1]) > 0.5 * (px[2] - px[0]) * (px[3] - px[1])


def test_rendered_overlay_has_the_layer_colour_in_the_box_and_none_far_away(fx):
    r = render_page(fx["hostile"], 1, 1.5)
    box = Box(mf.FIGURE_BOX, GOLD_EVIDENCE, "figure", GOLD_QUOTES)
    png = draw_overlay(r, [box])
    x0, y0, x1, y1 = to_pixels(mf.FIGURE_BOX, r.matrix)
    colour = hex_rgb(GOLD_EVIDENCE)
    assert rgb_at(png, x0 - 2, (y0 + y1) / 2) == colour  # the outline
    assert rgb_at(png, (x0 + x1) / 2, y1 + 2) == colour
    fill = rgb_at(png, (x0 + x1) / 2, (y0 + y1) / 2)  # a translucent fill of the same hue over white
    assert fill != (255, 255, 255) and fill[1] > fill[0] and fill[1] > fill[2]
    for x, y in ((5, 5), (x0 - 40, y0 - 40), (r.width - 5, r.height - 5)):
        assert rgb_at(png, x, y) == (255, 255, 255)
    assert Image.open(io.BytesIO(png)).size == (r.width, r.height)


def test_rotated_overlay_colour_sits_on_the_text(fx):
    r = render_page(fx["geometry"], 1, 1.0)
    (rect,) = ev.locate_quote(ev.page_text(fx["geometry"], 1), mf.MARKER).rects
    colour = RUN_COLOURS[0]
    png = draw_overlay(r, [Box(rect, colour, "marker", "m")])
    x0, y0, x1, y1 = to_pixels(rect, r.matrix)
    assert y1 - y0 > x1 - x0  # rotated 90°: the text runs down the image
    assert rgb_at(png, x0 - 2, (y0 + y1) / 2) == hex_rgb(colour)
    assert rgb_at(png, r.width / 4, r.height / 2) == (255, 255, 255)


def test_image_document_renders_and_normalised_boxes_map_to_its_pixels(fx):
    r = render_page(fx["image"], 1, 1.0)
    assert r.page_count == 1
    w_pt, h_pt = r.points
    box = tuple(v / s for v, s in zip(mf.IMAGE_BOX, (*mf.IMAGE_SIZE, *mf.IMAGE_SIZE)))
    px = to_pixels(from_normalised(box, w_pt, h_pt), r.matrix)
    dark = dark_bbox(r.png)
    assert inside(dark, px, 2) and inside(px, dark, 2), (dark, px)
    pt = ev.page_text(fx["image"], 1)
    assert not pt.has_text
    assert "no text layer" in ev.locate_quote(pt, "anything").message


def test_render_is_capped_in_pixels(tmp_path):
    doc = pymupdf.open()
    doc.new_page(width=14000, height=14000)
    doc.save(tmp_path / "huge.pdf")
    doc.close()
    zoom, capped = capped_zoom(14000, 14000, 3.0)
    assert capped and (14000 * zoom) ** 2 <= MAX_PIXELS * 1.001
    r = render_page(tmp_path / "huge.pdf", 1, 3.0)
    assert r.capped and r.width * r.height <= MAX_PIXELS * 1.01


def test_two_threads_rendering_at_once_each_get_their_own_page(fx):
    expected = {p: render_page(fx["geometry"], p, 1.0).png for p in (1, 2, 3, 4)}
    got: dict[int, list[bytes]] = {1: [], 3: [], 2: [], 4: []}
    errors = []

    def work(pages):
        try:
            for _ in range(6):
                for p in pages:
                    got[p].append(render_page(fx["geometry"], p, 1.0).png)
                    pdf.clear_caches()
                    ev.page_text(fx["geometry"], p)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(pages,)) for pages in ((1, 3), (2, 4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(png == expected[p] for p, pngs in got.items() for png in pngs) and all(len(v) == 6 for v in got.values())


# ----------------------------------------------------------------------------- answers


def question(doc_id: str = "d1", pages=(1,), items=(), gold: str = "gold") -> GoldQuestion:
    return GoldQuestion("q1", "?", (gold,), "Str", "casefold_exact_match", "single_doc", {},
                        documents=(DocRef(doc_id, evidence_pages=tuple(pages), evidence_items=tuple(items)),))


def test_numbers_are_matched_as_numbers(fx):
    pt = ev.page_text(fx["hostile"], 1)
    printed = search_for(fx["hostile"], 1, "1,250")
    for answer in ("1250", "1,250", "1,250.0", "The answer is 1250."):
        assert close(ev.answer_rects(pt, answer), printed), answer
    assert ev.answer_rects(pt, "1251") == []
    assert ev.answer_rects(pt, "1,250 units") and ev.answer_rects(pt, "1,250 kilograms") == []


def test_answer_on_another_page_nowhere_or_without_document(fx):
    q = question(pages=(1,))
    paths = {"d1": fx["hostile"]}
    loc = ev.locate_answer(mf.WRONG_PAGE_ANSWER, q, paths)
    assert (loc.location, loc.flat("other"), loc.flat("evidence")) == (ev.OTHER_PAGE, [2], [])
    assert loc.message == "appears on page 2, not on the evidence pages"
    loc = ev.locate_answer("Project Falcon", q, paths)
    assert loc.location == ev.EVIDENCE_PAGE and loc.flat("evidence") == [1] and loc.in_document
    # an answer found nowhere, on a look-up question (its gold, Project Falcon, is on page 1): invented
    loc = ev.locate_answer("Zanzibar lighthouse keeper", question(pages=(1,), gold="Project Falcon"), paths, right=False)
    assert loc.location == ev.NOT_IN_DOCUMENT and loc.in_document is False and "appears nowhere in the document" in loc.message
    # ... on a question whose gold is not written in the document either: computed, not red
    loc = ev.locate_answer("Zanzibar lighthouse keeper", q, paths, right=False)
    assert loc.location == ev.COMPUTED and loc.in_document is False and "invented" not in loc.message
    loc = ev.locate_answer("Project Falcon", q, {"d1": None})
    assert loc.location == ev.NO_DOCUMENT and loc.in_document is None
    for refusal in ("Not answerable", "**Not answerable** - the document does not contain this information."):
        got = ev.locate_answer(refusal, q, paths)  # a refusal is its own outcome (issue 29), never "not in the document"
        assert got.location == ev.REFUSED and got.in_document is None and not got.searched
    for other in ("", "B"):  # nothing to look for: not searched
        assert ev.locate_answer(other, q, paths).location is None


def test_wrong_page_and_invented_answers_of_the_sample(sample_gold):
    """The pinned evidence cases of sample_runs/ (EVIDENCE_CASES in _runs.py)."""
    preds = {p.qid: p for p in load_predictions(SAMPLE / "runs" / "longctx-ocr.jsonl").items}
    q = sample_gold["adubench_single_000024"]
    row = ev.answer_row(q, "longctx-ocr", preds[q.qid], sample_paths(q))
    assert row["answer_pages_elsewhere"] == [4] and row["answer_pages_evidence"] == [] and row["in_document"] is True
    assert row["message"] == "appears on page 4, not on the evidence pages"
    assert preds[q.qid].evidence_pages == (4,)
    # 306 for a counterfactual whose gold (102) is computed, written nowhere: computed from the page, as the
    # gold is (612 participants / 2), never "invented" (the one rule, locate.not_found_verdict)
    q = sample_gold["adubench_single_000023"]
    row = ev.answer_row(q, "longctx-ocr", preds[q.qid], sample_paths(q))
    assert row["in_document"] is False and row["location"] == ev.COMPUTED and "invented" not in row["message"]


def test_answer_candidates_strip_wrappers():
    assert ev.answer_candidates("- **Answer:** 33.9\n- **Evidence:** page 10") == ["33.9"]
    assert ev.answer_candidates("Based on the document, the answer is **EUR 27,600**.") == ["EUR 27,600"]
    assert ev.answer_candidates("A) The paraffin had run out") == ["The paraffin had run out"]
    assert ev.answer_candidates("N/A") == [] and ev.answer_candidates("B") == []
    assert ev.answer_candidates("7") == ["7"]  # a digit is a number, searched as one (issue 18 item 7)


# ----------------------------------------------------------------------------- layers


def test_page_layers_draw_every_layer_and_honour_toggles(fx):
    item = EvidenceItem("p1", (1,), mf.QUOTES["curly"], "Text", bbox=mf.FIGURE_BOX)
    norm = EvidenceItem("p1", (1,), "", "Figure", bbox=(0.5, 0.5, 0.9, 0.6))
    q = GoldQuestion("q1", "?", ("Project Falcon",), "Str", "casefold_exact_match", "single_doc", {},
                     documents=(DocRef("d1", evidence_pages=(1,), evidence_items=(item, norm)),))
    pred = Prediction("q1", "1,250", "success", evidence_pages=(1,),
                      evidence=(PredictedEvidence(1, "d1", (299.0, 421.0, 519.0, 561.0)),))
    drawn = page_layers(q, q.documents[0], fx["hostile"], 1, ["run-a"], {"run-a": pred})
    layers = {b.layer for b in drawn.boxes}
    assert layers == {GOLD_QUOTES, "Gold boxes", GOLD_ANSWERS, answer_layer("run-a"), cited_layer("run-a")}
    normalised = [b for b in drawn.boxes if b.layer == "Gold boxes" and b.rect != mf.FIGURE_BOX]
    assert normalised and normalised[0].rect == pytest.approx((297.5, 421.0, 535.5, 505.2))
    assert drawn.cited_here == ["run-a"]
    only = page_layers(q, q.documents[0], fx["hostile"], 1, ["run-a"], {"run-a": pred}, wanted={GOLD_ANSWERS})
    assert {b.layer for b in only.boxes} == {GOLD_ANSWERS}
    assert [n.location.method for n in drawn.quotes] == ["exact"]


# ----------------------------------------------------------------------------- metrics


def test_box_matching_after_parsebench():
    gold = (0.0, 0.0, 10.0, 10.0)
    assert box_matches((0, 0, 10, 10), gold)
    assert box_matches((0, 0, 5, 10), gold)  # covers exactly half of the gold box
    assert not box_matches((0, 0, 4, 10), gold)  # 0.4 of the gold box
    assert not box_matches((0, 0, 50, 50), gold)  # covers it all, but only 0.04 of the cited box is inside
    assert box_matches((0, 0, 22, 22), gold)  # 100 / 484 = 0.207 of the cited box inside
    assert not box_matches((0, 0, 23, 23), gold)  # 100 / 529 = 0.189
    assert not box_matches((20, 20, 30, 30), gold) and not box_matches((0, 0, 0, 10), gold)
    assert intersection((0, 0, 4, 4), (2, 2, 6, 6)) == 4 and area((0, 0, 3, 2)) == 6


def test_grounding_and_page_precision_recall_by_hand():
    gold = [("d", 1, (0, 0, 10, 10)), ("d", 2, (0, 0, 10, 10))]
    assert grounding([("d", 1, (0, 0, 10, 10))], gold) == 0.5
    assert grounding([("d", 3, (0, 0, 10, 10))], gold) == 0.0  # right box, wrong page
    assert grounding([("d", 1, (0, 0, 10, 10)), ("d", 2, (1, 1, 9, 9))], gold) == 1.0
    assert grounding([], gold) is None and grounding([("d", 1, (0, 0, 1, 1))], []) is None
    assert precision_recall({("d", 1), ("d", 5)}, {("d", 1), ("d", 2), ("d", 3)}) == (0.5, 1 / 3)
    assert precision_recall(set(), {("d", 1)}) == (None, 0.0)
    assert precision_recall({("d", 1)}, set()) == (0.0, None)


def test_evidence_table_on_the_sample(sample_gold):
    preds = {p.qid: p for p in load_predictions(SAMPLE / "runs" / "longctx-ocr.jsonl").items}
    qs = [sample_gold[k] for k in ("adubench_single_000002", "adubench_single_000023", "adubench_single_000024")]
    table = evidence_table(qs, {"longctx-ocr": preds}, sample_paths)
    assert list(table.columns) == COLUMNS and len(table) == 3
    rows = table.set_index("question_id")
    assert rows.loc["adubench_single_000024", "answer_location"] == "other_page"
    assert rows.loc["adubench_single_000024", "evidence_precision"] == 0.0
    assert rows.loc["adubench_single_000023", "answer_location"] == "computed"
    two = rows.loc["adubench_single_000002"]
    assert two["answer_location"] == "evidence_page" and two["evidence_recall"] == 1.0 and two["grounding"] == 1.0
    rates = run_rates(table).set_index("run").loc["longctx-ocr"]
    assert rates["answer_only_on_other_page"] == pytest.approx(1 / 3) and rates["answer_computed"] == pytest.approx(1 / 3)
    assert rates["answer_not_in_document"] == 0


# ----------------------------------------------------------------------------- command line


def make_bench(tmp: Path, fx: dict[str, Path]) -> Path:
    bench = tmp / "bench"
    (bench / "docs").mkdir(parents=True)
    shutil.copy(fx["hostile"], bench / "docs" / "hostile.pdf")
    items = [{"locator": "p1", "pages": [1], "quote": mf.QUOTES["ligature"], "source_type": "Text"},
             {"locator": "p1", "pages": [1], "quote": mf.QUOTES["typo"], "source_type": "Text"},
             {"locator": "p9", "pages": [9], "quote": "a page the PDF lacks", "source_type": "Text"},
             {"locator": "none", "pages": [1], "quote": "", "source_type": "Text"}]
    gold = [
        {"question_id": "q1", "question": "?", "answer": {"value": "Project Falcon", "format": "Str"},
         "document": {"document_id": "hostile", "evidence_pages": [1], "evidence_items": items}},
        {"question_id": "q2", "question": "?", "answer": {"value": "x", "format": "Str"},
         "document": {"document_id": "absent", "evidence_pages": [3],
                      "evidence_items": [{"locator": "p3", "pages": [3], "quote": "somewhere", "source_type": "Text"}]}},
    ]
    (bench / "qa_single_doc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))
    (bench / "runs").mkdir()
    (bench / "runs" / "r1.jsonl").write_text(
        json.dumps({"question_id": "q1", "prediction": mf.WRONG_PAGE_ANSWER}) + "\n"
        + json.dumps({"question_id": "q2", "prediction": "Project Falcon"}) + "\n")
    return bench


def test_command_line_writes_boxes_and_answer_locations(tmp_path, fx):
    bench = make_bench(tmp_path, fx)
    out, answers = tmp_path / "boxes.jsonl", tmp_path / "answers.jsonl"
    res = subprocess.run([sys.executable, "-m", "dashboard.evidence", "--benchmark", str(bench), "--output", str(out),
                          "--runs", str(bench / "runs"), "--answers-output", str(answers)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "absent" in res.stderr  # the missing document is named
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["question_id"], r["page"], r["method"]) for r in rows] == [
        ("q1", 1, "exact"), ("q1", 1, "fuzzy"), ("q1", 9, "not_found"), ("q2", 3, "no_document")]
    for r in rows:
        assert {"question_id", "document_id", "page", "quote", "rects", "method", "score"} <= set(r)
        assert 0.0 <= r["score"] <= 1.0
    assert close([tuple(x) for x in rows[0]["rects"]], ev.locate_quote(ev.page_text(fx["hostile"], 1),
                                                                          mf.QUOTES["ligature"]).rects)
    assert rows[0]["score"] == 1.0 and rows[1]["score"] >= 0.9 and "beyond" in rows[2]["message"]
    got = {r["question_id"]: r for r in map(json.loads, answers.read_text().splitlines())}
    assert set(got["q1"]) >= {"question_id", "run", "answer", "answer_pages_evidence", "answer_pages_elsewhere", "in_document"}
    assert (got["q1"]["run"], got["q1"]["answer_pages_evidence"], got["q1"]["answer_pages_elsewhere"],
            got["q1"]["in_document"]) == ("r1", [], [2], True)
    assert got["q2"]["in_document"] is None and got["q2"]["location"] == "no_document"


def test_command_line_main_is_importable_and_reports_a_missing_folder(tmp_path, capsys):
    assert evidence_main(["--benchmark", str(tmp_path / "nope"), "--output", str(tmp_path / "o.jsonl")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_explorer_columns_and_location_breakdown(sample_gold):
    from dashboard.evidence.grounding import explorer_columns, location_breakdown

    preds = {p.qid: p for p in load_predictions(SAMPLE / "runs" / "longctx-ocr.jsonl").items}
    qs = [sample_gold[k] for k in ("adubench_single_000023", "adubench_single_000024", "adubench_single_000067")]
    table = evidence_table(qs, {"longctx-ocr": preds}, sample_paths)
    cols = explorer_columns(table, ["longctx-ocr"])
    assert list(cols.columns) == [f"longctx-ocr · {x}" for x in ("Page precision", "Page recall", "Grounding", "Answer location")]
    assert cols.loc["adubench_single_000024", "longctx-ocr · Answer location"] == "only on other pages"
    assert cols.loc["adubench_single_000023", "longctx-ocr · Answer location"] == "computed from the page"
    slices = location_breakdown(table).set_index("label")
    assert slices.loc["only on other pages", "question_ids"] == ["adubench_single_000024"]
    assert slices.loc["not searched", "count"] == 1  # "A": a choice letter is not searched


def test_an_encrypted_pdf_is_a_message_not_an_exception(tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    doc.save(tmp_path / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="pw")
    doc.close()
    with pytest.raises(ev.DocumentError, match="encrypted"):
        render_page(tmp_path / "locked.pdf", 1)
    loc = ev.locate_in_document(tmp_path / "locked.pdf", 1, "secret")
    assert loc.method == ev.NOT_FOUND and "encrypted" in loc.message


def test_long_documents_read_by_worker_processes_give_the_same_text(fx, monkeypatch):
    pdf.clear_caches()
    inline = ev.doc_text(fx["geometry"])
    pdf.clear_caches()
    monkeypatch.setattr(pdf, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(pdf, "CHUNK_PAGES", 1)
    seen = []
    parallel = ev.doc_text(fx["geometry"], progress=lambda d, t: seen.append((d, t)))
    assert parallel.pages == inline.pages and parallel.numbers == inline.numbers and len(parallel.pages) == 4
    assert pdf._pool() is None or seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    pdf.clear_caches()

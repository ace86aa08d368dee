"""OCR of pages without a text layer (dashboard/documents/ocr.py) and its use by the evidence code:
word boxes against where the words were drawn, quotes and numbers found on image pages, the disk
cache (a second request does no OCR), Tesseract missing, huge and corrupt pages, the per-request cap,
the "OCR words" layer and the sample benchmark's image page and DocVQA images."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from dashboard.documents import ocr, pdf
from dashboard.documents.pagetext import PageText
from dashboard.evidence.layers import OCR_WORDS, layers, page_layers
from dashboard.evidence.locate import EVIDENCE_PAGE, EXACT, NOT_IN_DOCUMENT, answer_rects, locate_answer, locate_quote
from scoring.model import DocRef, EvidenceItem, GoldQuestion

ROOT = Path(__file__).resolve().parent.parent

LINES = [  # (x, baseline y, text, font size) in points on a 612 x 792 page
    (72, 120, "Pressure test certificate PTC-7731", 20),
    (72, 170, "The unit passed the hydrostatic test at 24.5 bar", 13),
    (72, 200, "Inspector: Margit Lindholm", 13),
    (72, 230, "Total fee due 1,250.00 EUR", 13),
]


def drawn_page(lines=LINES, width=612, height=792):
    """A PDF page with these lines as real text: (page bytes as PNG at 150 dpi, the words' boxes)."""
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    for x, y, text, size in lines:
        page.insert_text((x, y), text, fontname="helv", fontsize=size)
    words = [(tuple(w[:4]), w[4]) for w in page.get_text("words")]
    png = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
    doc.close()
    return png, words


def image_pdf(path: Path, pngs: list[bytes], width=612, height=792, text_pages: dict[int, str] | None = None) -> Path:
    """A PDF whose pages are pictures of text (no text layer), and optionally real text pages."""
    doc = pymupdf.open()
    for k, png in enumerate(pngs, start=1):
        page = doc.new_page(width=width, height=height)
        if text_pages and k in text_pages:
            page.insert_text((72, 100), text_pages[k], fontname="helv", fontsize=11)
        else:
            page.insert_image(page.rect, stream=png)
    doc.save(path)
    doc.close()
    return path


def question(doc: str, answers=("x",), quote: str = "") -> GoldQuestion:
    items = (EvidenceItem(locator="Page 1", pages=(1,), quote=quote, source_type="Text"),) if quote else ()
    return GoldQuestion(qid="q1", question="?", answers=tuple(answers), answer_format="Str",
                        verification_rule="casefold_exact_match", split="single_doc", metadata={},
                        documents=(DocRef(doc, evidence_pages=(1,), evidence_items=items),))


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    """Each test: its own cache folder, no memory of earlier reads."""
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    ocr.clear()
    pdf.clear_caches()
    yield
    ocr.clear()
    pdf.clear_caches()


@pytest.fixture(scope="module")
def drawn():
    return drawn_page()


def test_tesseract_is_installed():
    """CI installs tesseract-ocr and tesseract-ocr-eng (.ci/run): a machine without them fails here."""
    assert shutil.which("tesseract"), "tesseract-ocr is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)"
    assert ocr.available("eng")


def _iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def test_word_boxes_are_where_the_words_were_drawn(tmp_path, drawn):
    png, words = drawn
    path = image_pdf(tmp_path / "scan.pdf", [png])
    pt = pdf.page_text(path, 1)
    assert pt.has_text and ocr.was_ocr(path, 1)
    read = ocr.page_words(path, 1)
    assert len(read) >= len(words) - 1
    misses = []
    for rect, text in words:
        hit = [r for r, w in read if w == text and _iou(r, rect) >= 0.5]
        cx, cy = (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2
        inside = [r for r, w in read if w == text and r[0] <= cx <= r[2] and r[1] <= cy <= r[3]]
        if not hit or not inside:
            misses.append(text)
    assert not misses, f"words not read where they were drawn: {misses}"


def test_quote_and_numeric_answer_on_an_image_page(tmp_path, drawn):
    png, words = drawn
    path = image_pdf(tmp_path / "scan.pdf", [png])
    pt = pdf.page_text(path, 1)
    loc = locate_quote(pt, "The unit passed the hydrostatic test at 24.5 bar")
    assert loc.method == EXACT and loc.rects
    box = dict((w, r) for r, w in words)["hydrostatic"]
    assert any(_iou((r[0], r[1], r[2], r[3]), (r[0], box[1], r[2], box[3])) > 0.5 and r[0] <= box[0] + 2
               for r in loc.rects)
    rects = answer_rects(pt, "1250")  # written 1,250.00 on the page
    assert len(rects) == 1
    x0, y0, x1, y1 = rects[0]
    drawn_box = dict((w, r) for r, w in words)["1,250.00"]
    assert _iou(rects[0], drawn_box) > 0.5, (rects[0], drawn_box)
    q = question("scan", ["1,250"])
    got = locate_answer("EUR 1,250", q, {"scan": path})
    assert got.location == EVIDENCE_PAGE and got.evidence_pages == {"scan": [1]}
    assert locate_answer("Margit Lindholm", q, {"scan": path}).location == EVIDENCE_PAGE
    assert locate_answer("Kasimir Oberholt", q, {"scan": path}).location == NOT_IN_DOCUMENT


def test_a_page_with_a_text_layer_is_not_read_by_ocr(tmp_path, monkeypatch, drawn):
    png, _ = drawn
    path = image_pdf(tmp_path / "mixed.pdf", [png, png], text_pages={1: "A real text layer with enough characters."})
    calls = []
    real = ocr.read_pages_by_ocr
    monkeypatch.setattr(ocr, "read_pages_by_ocr", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    assert "real text layer" in pdf.page_text(path, 1).text and not ocr.was_ocr(path, 1)
    dt = pdf.doc_text(path)
    assert calls == [[2]], calls  # only the image page, once
    assert "real text layer" in dt.pages[0] and "hydrostatic" in dt.pages[1] and 24.5 in dt.numbers[1]


def test_needs_ocr_decisions():
    def raw(chars: int, image=None):
        blocks = [{"type": 0, "lines": [{"spans": [{"chars": [{"c": "x", "bbox": (0, 0, 1, 1)}] * chars}]}]}]
        if image:
            blocks.append({"type": 1, "bbox": image})
        return {"blocks": blocks}

    assert not ocr.needs_ocr(raw(200), 612, 792)
    assert ocr.needs_ocr(raw(0), 612, 792) and ocr.needs_ocr(raw(ocr.MIN_CHARS - 1), 612, 792)
    assert ocr.needs_ocr(raw(12, (0, 0, 612, 792)), 612, 792)  # a page number over a scan
    assert not ocr.needs_ocr(raw(12, (0, 0, 100, 100)), 612, 792)  # a short caption beside a small figure
    assert not ocr.needs_ocr(raw(900, (0, 0, 612, 792)), 612, 792)  # a scan with its own text layer
    assert ocr.needs_ocr(raw(900), 612, 792, image_document=True)
    assert ocr.needs_ocr(raw(900), 612, 792, scanned=True)


def load_documents_rows(rows: list[dict]) -> list:
    import json
    import tempfile

    from scoring.loaders import load_documents

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "documents.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return load_documents(path).items


def test_scanned_pdf_type_forces_ocr_of_every_page(tmp_path, drawn):
    png, _ = drawn
    path = image_pdf(tmp_path / "scanned.pdf", [png, png], text_pages={1: "Unrelated text layer of the first page here."})
    assert not ocr.was_ocr(path, 1) and "unrelated" in pdf.page_text(path, 1).text
    pdf.clear_caches()

    rec = load_documents_rows([{"document_id": "d", "pdf_type": " Scanned "}])[0]  # read as the loader reads it
    assert rec.pdf_type == "scanned"

    class Loc:
        path = tmp_path / "scanned.pdf"

    ocr.register_scanned(ocr.scanned_paths([rec], {"d": Loc()}))
    assert ocr.is_scanned(path)
    pt = pdf.page_text(path, 1)
    assert ocr.was_ocr(path, 1) and "unrelated" in pt.text


def test_a_page_is_read_once_then_served_from_the_disk_cache(tmp_path, monkeypatch, drawn):
    png, _ = drawn
    path = image_pdf(tmp_path / "scan.pdf", [png])
    calls = []
    real = ocr.read_pages_by_ocr
    monkeypatch.setattr(ocr, "read_pages_by_ocr", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    first = pdf.page_text(path, 1).text
    assert calls == [[1]]
    entries = list((tmp_path / "cache" / "ocr").rglob("*.json"))
    assert len(entries) == 1 and entries[0].name == f"{ocr.file_sha256(path)}-p1-d{ocr.DPI}-eng.json"
    ocr.clear()  # a restart: memory gone, the disk cache stays
    pdf.clear_caches()
    assert pdf.page_text(path, 1).text == first and ocr.page_words(path, 1)
    assert pdf.doc_text(path).pages[0] == first
    assert calls == [[1]], "the second request read the page by OCR again"
    # an entry that fails its checks is not trusted: the page is read again
    entries[0].write_text(entries[0].read_text(encoding="utf-8").replace("hydrostatic", "hydroSTATIC"), encoding="utf-8")
    ocr.clear()
    pdf.clear_caches()
    assert pdf.page_text(path, 1).text == first
    assert calls == [[1], [1]]


def test_tesseract_missing_gives_the_message_and_no_exception(tmp_path, monkeypatch, drawn, capsys):
    png, _ = drawn
    path = image_pdf(tmp_path / "scan.pdf", [png])
    monkeypatch.setattr(ocr, "tessdata_dir", lambda language=ocr.LANGUAGE: None)
    pt = pdf.page_text(path, 1)
    assert not pt.has_text
    state = ocr.status(path)
    assert state.missing and ocr.NO_TESSERACT in state.message and "tesseract-ocr" in state.message
    assert ocr.any_missing([path])
    q = question("scan", ["24.5"])
    loc = locate_answer("24.5 bar", q, {"scan": path})
    assert loc.location in (NOT_IN_DOCUMENT, None)
    assert locate_quote(pt, "hydrostatic test").message.startswith("the page has no text layer")
    # the page is not kept: once Tesseract is there, it is read
    monkeypatch.undo()
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    ocr.clear()
    assert pdf.page_text(path, 1).has_text


def test_the_command_line_says_ocr_and_warns_without_tesseract(tmp_path, monkeypatch, drawn, capsys):
    from dashboard.evidence.__main__ import main

    png, _ = drawn
    bench = tmp_path / "bench"
    image_pdf((bench / "docs").mkdir(parents=True) or bench / "docs" / "doc_1.pdf", [png])
    (bench / "documents.jsonl").write_text(json.dumps({"document_id": "doc_1", "pdf_type": "native_digital"}) + "\n")
    gold = {"question_id": "q1", "question": "What pressure?", "answer": {"value": "24.5", "format": "Float",
                                                                          "verification_rule": "numeric_tolerance"},
            "document": {"document_id": "doc_1", "evidence_pages": [1],
                         "evidence_items": [{"pages": [1], "quote": "passed the hydrostatic test"}]}}
    (bench / "qa.jsonl").write_text(json.dumps(gold) + "\n")
    (bench / "runs").mkdir()
    (bench / "runs" / "r.jsonl").write_text(json.dumps({"question_id": "q1", "prediction": "24.5 bar"}) + "\n")
    out, ans = tmp_path / "boxes.jsonl", tmp_path / "answers.jsonl"
    assert main(["--benchmark", str(bench), "--output", str(out), "--runs", str(bench / "runs"),
                 "--answers-output", str(ans)]) == 0
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["method"] == "exact" and row["ocr"] is True
    (arow,) = [json.loads(x) for x in ans.read_text().splitlines()]
    assert arow["location"] == EVIDENCE_PAGE and arow["ocr"] is True
    ocr.clear()
    pdf.clear_caches()
    monkeypatch.setattr(ocr, "tessdata_dir", lambda language=ocr.LANGUAGE: None)
    capsys.readouterr()
    assert main(["--benchmark", str(bench), "--output", str(out)]) == 0
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["method"] == "not_found" and row["ocr"] is False
    err = capsys.readouterr().err
    assert ocr.NO_TESSERACT in err and "Traceback" not in err


def test_a_huge_page_is_refused_and_named_and_costs_only_itself(tmp_path, drawn):
    png, _ = drawn
    doc = pymupdf.open()
    doc.new_page(width=14400, height=14400).insert_text((72, 72), ".", fontsize=8)  # 200 x 200 inches
    page = doc.new_page(width=612, height=792)
    page.insert_image(page.rect, stream=png)
    path = tmp_path / "huge.pdf"
    doc.save(path)
    doc.close()
    assert pdf.page_text(path, 1).text == "."  # its text layer as it is, not read by OCR
    assert not ocr.was_ocr(path, 1)
    state = ocr.status(path)
    assert "page 1 of huge.pdf" in state.problems[1] and "megapixels" in state.problems[1]
    assert pdf.page_text(path, 2).has_text  # the next page is still read
    assert "page 1 of huge.pdf" in ocr.status(path).message


def test_an_oversized_embedded_image_is_refused(tmp_path, monkeypatch, drawn):
    png, _ = drawn
    path = image_pdf(tmp_path / "big.pdf", [png])
    monkeypatch.setattr(ocr, "MAX_IMAGE_PIXELS", 1_000_000)  # the drawn image is 1275 x 1650 px
    assert not pdf.page_text(path, 1).has_text
    msg = ocr.status(path).problems[1]
    assert "page 1 of big.pdf" in msg and "1275 × 1650 px" in msg


def test_a_corrupt_image_page_is_named_not_raised(tmp_path):
    good = (ROOT / "sample_runs" / "docvqa" / "docs" / "quay_memo.png").read_bytes()
    path = tmp_path / "broken.png"
    path.write_bytes(good[:3000])  # a PNG cut short
    empty = PageText(1, 612, 440, 0, [], [], "", [], "", [], False)
    assert ocr.ocr_page_text(path, 1, empty) is empty  # what page_text falls back to
    msg = ocr.status(path).problems[1]
    assert msg.startswith("page 1 of broken.png cannot be read by OCR") and str(tmp_path) not in msg
    q = question("b")
    assert locate_answer("Berth 5", q, {"b": path}).location is None  # not searched, not "invented"


def test_pages_read_per_request_are_capped(tmp_path, monkeypatch, drawn):
    png, _ = drawn
    path = image_pdf(tmp_path / "deck.pdf", [png] * 3)
    monkeypatch.setattr(ocr, "MAX_PAGES", 2)
    ticks = []
    first = pdf.doc_text(path, progress=lambda d, t: ticks.append((d, t)))
    assert [bool(p) for p in first.pages] == [True, True, False]
    assert ocr.status(path).unread == {3} and "not read yet" in ocr.status(path).message
    assert ticks and ticks[-1] == (2, 2)
    second = pdf.doc_text(path)
    assert all(second.pages) and not ocr.status(path).unread
    assert pdf.doc_text(path) is second  # complete: kept


def test_ocr_words_layer(tmp_path, drawn):
    png, words = drawn
    path = image_pdf(tmp_path / "scan.pdf", [png])
    assert OCR_WORDS in [la.name for la in layers(["r"])]
    q = question("s", ["24.5"])
    ref = q.documents[0]
    on = page_layers(q, ref, path, 1, [], {}, {OCR_WORDS})
    ocr_boxes = [b for b in on.boxes if b.layer == OCR_WORDS]
    assert on.ocr and len(ocr_boxes) == on.ocr_words >= len(words) - 1
    assert all(not b.fill for b in ocr_boxes) and any("hydrostatic" in b.label for b in ocr_boxes)
    off = page_layers(q, ref, path, 1, [], {}, {"Gold answer"})
    assert not [b for b in off.boxes if b.layer == OCR_WORDS] and [b for b in off.boxes if b.layer == "Gold answer"]


def test_docvqa_sample_answers_are_located_on_its_page_images(tmp_path):
    out = tmp_path / "b.jsonl"
    ans = tmp_path / "a.jsonl"
    res = subprocess.run([sys.executable, "-m", "dashboard.evidence", "--benchmark", "sample_runs/docvqa", "--output",
                          str(out), "--runs", "sample_runs/docvqa/runs", "--answers-output", str(ans)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows = {r["question_id"]: r for r in map(json.loads, ans.read_text().splitlines())}
    assert len(rows) == 15
    found = {q for q, r in rows.items() if r["in_document"]}
    # the run's right answers are on their page; its misreadings (WQ-2201, 29.52, 4812) are not
    assert {"61001", "61002", "61004", "61008", "61009", "61011", "61014"} <= found
    assert {q for q, r in rows.items() if r["in_document"] is False} == {"61007", "61010", "61012"}
    assert all(r["ocr"] for q, r in rows.items() if q in found)


def test_the_sample_scanned_page_words_quote_and_answer(monkeypatch):
    """sample_runs/docs/doc_000004.pdf p. 55 is the generator's picture of text: every word OCR reads
    is where _documents.scanned_page drew it; the gold quote and the gold answer are found on it."""
    from dashboard.evidence.locate import gold_rows
    from scoring.loaders import load_gold

    monkeypatch.syspath_prepend(str(ROOT / "sample_runs"))
    import _documents

    path = ROOT / "sample_runs" / "docs" / "doc_000004.pdf"
    with pymupdf.open(path) as doc:
        w, h = doc[54].rect.width, doc[54].rect.height
    _, drawn_words = _documents.scanned_page(w, h)
    pt = pdf.page_text(path, 55)
    assert ocr.was_ocr(path, 55) and not ocr.was_ocr(path, 54)
    read = ocr.page_words(path, 55)
    misses = [t for *box, t in drawn_words if not any(wd == t and _iou(r, box) >= 0.5 for r, wd in read)]
    assert len(misses) <= 1, misses  # at most one word misread out of ~60
    gold = {g.qid: g for g in load_gold([ROOT / "sample_runs" / "qa_single_doc.jsonl"]).items}
    q = gold["adubench_single_000069"]
    (row,) = gold_rows(q, {"doc_000004": path})
    assert row["method"] == EXACT and row["page"] == 55
    assert answer_rects(pt, "24.5 bar")
    assert locate_answer("24.5", q, {"doc_000004": path}).evidence_pages == {"doc_000004": [55]}

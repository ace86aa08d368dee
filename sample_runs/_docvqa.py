"""A small DocVQA-style benchmark in sample_runs/docvqa/: five generated page images (an invoice,
a memo, a lab report, a receipt, a meeting agenda), 15 questions in the DocVQA record shape
(`questionId`, `question`, `answers` with several acceptable forms, `docId`, `image`,
`question_types`, `data_split`) and one run. The images have no text layer, as scanned pages.

Pages are laid out with PyMuPDF (base-14 fonts) and rendered to grayscale PNG at 100 dpi: the
same MuPDF writes the same bytes. Layout positions are fixed; nothing is random.
"""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf

DPI = 100
RUN = "docvqa-ocr"

# docId: (file stem, title, [(x, y, text, fontname, size)], [(x0, y0, x1, y1) ruled boxes])
PAGES = {
    52001: ("harbour_invoice", "Invoice INV-20931, Harbour Supplies Ltd", [
        (60, 80, "HARBOUR SUPPLIES LTD", "hebo", 20), (60, 100, "14 Quay Road, Portmere PM3 8QT", "helv", 10),
        (420, 80, "INVOICE", "hebo", 22), (420, 104, "No. INV-20931", "helv", 11), (420, 120, "Date: 12 March 2019", "helv", 11),
        (60, 170, "Bill to: Carrow Point Marine Services", "helv", 11),
        (60, 230, "Description", "hebo", 11), (330, 230, "Qty", "hebo", 11), (400, 230, "Unit price", "hebo", 11),
        (500, 230, "Amount", "hebo", 11),
        (60, 255, "Mooring rope, 24 mm", "helv", 11), (330, 255, "10", "helv", 11), (400, 255, "$45.00", "helv", 11),
        (500, 255, "$450.00", "helv", 11),
        (60, 278, "Fender, cylindrical", "helv", 11), (330, 278, "4", "helv", 11), (400, 278, "$200.00", "helv", 11),
        (500, 278, "$800.00", "helv", 11),
        (400, 320, "Total due", "hebo", 12), (500, 320, "$1,250.00", "hebo", 12),
        (60, 380, "Payment within 30 days. Thank you for your business.", "heit", 10),
    ], [(55, 215, 560, 290), (395, 305, 560, 328)]),
    52002: ("quay_memo", "Memorandum on berth maintenance", [
        (60, 80, "MEMORANDUM", "hebo", 22),
        (60, 130, "To:", "hebo", 11), (120, 130, "All harbour staff", "helv", 11),
        (60, 150, "From:", "hebo", 11), (120, 150, "R. Okafor, Operations Manager", "helv", 11),
        (60, 170, "Date:", "hebo", 11), (120, 170, "June 4, 1998", "helv", 11),
        (60, 190, "Subject:", "hebo", 11), (120, 190, "Closure of Berth 7 for maintenance", "helv", 11),
        (60, 240, "Berth 7 will be closed from 15 June to 29 June for resurfacing.", "helv", 11),
        (60, 258, "Vessels are to use Berth 5 during the closure.", "helv", 11),
        (60, 276, "Questions to extension 4417.", "helv", 11),
    ], [(55, 210, 560, 212)]),
    52003: ("lab_report", "Water quality laboratory report", [
        (60, 80, "NORTHGATE ANALYTICAL LABORATORY", "hebo", 16), (60, 100, "Report No. WQ-2210", "helv", 11),
        (60, 140, "Sample", "hebo", 11), (220, 140, "pH", "hebo", 11), (300, 140, "Nitrate (mg/L)", "hebo", 11),
        (430, 140, "Result", "hebo", 11),
        (60, 165, "Inlet A", "helv", 11), (220, 165, "7.2", "helv", 11), (300, 165, "12.4", "helv", 11),
        (430, 165, "Pass", "helv", 11),
        (60, 188, "Inlet B", "helv", 11), (220, 188, "6.1", "helv", 11), (300, 188, "51.0", "helv", 11),
        (430, 188, "Fail", "helv", 11),
        (60, 211, "Outfall", "helv", 11), (220, 211, "7.8", "helv", 11), (300, 211, "8.9", "helv", 11),
        (430, 211, "Pass", "helv", 11),
        (60, 260, "Analyst: Dr. M. Lindqvist", "helv", 11), (60, 278, "Date received: 02/11/2021", "helv", 11),
    ], [(55, 125, 520, 218)]),
    52004: ("cafe_receipt", "Receipt, The Lamp Room Cafe", [
        (150, 70, "THE LAMP ROOM CAFE", "hebo", 16), (170, 90, "Carrow Point Harbour", "helv", 10),
        (80, 130, "2 x Fish soup", "cour", 11), (330, 130, "14.00", "cour", 11),
        (80, 148, "1 x Crab sandwich", "cour", 11), (330, 148, "8.50", "cour", 11),
        (80, 166, "3 x Tea", "cour", 11), (330, 166, "6.75", "cour", 11),
        (80, 196, "TOTAL", "cobo", 12), (330, 196, "29.25", "cobo", 12),
        (80, 226, "Paid: VISA ****4821", "cour", 10), (80, 244, "08/07/2022  13:42", "cour", 10),
    ], [(70, 180, 400, 182)]),
    52005: ("board_agenda", "Agenda of the Harbour Board meeting", [
        (60, 80, "HARBOUR BOARD", "hebo", 18), (60, 102, "Agenda - Meeting of 21 January 2020, 10:00", "helv", 11),
        (60, 120, "Venue: Committee Room 2, Harbour House", "helv", 11),
        (60, 170, "1.", "helv", 11), (85, 170, "Apologies for absence", "helv", 11),
        (60, 190, "2.", "helv", 11), (85, 190, "Minutes of the previous meeting", "helv", 11),
        (60, 210, "3.", "helv", 11), (85, 210, "Dredging contract - award", "helv", 11),
        (60, 230, "4.", "helv", 11), (85, 230, "Budget 2020/21", "helv", 11),
        (60, 250, "5.", "helv", 11), (85, 250, "Any other business", "helv", 11),
        (60, 300, "Chair: Cllr. A. Pennington", "heit", 11),
    ], []),
}

QUESTIONS = [
    # (questionId, docId, question, answers, question_types)
    (61001, 52001, "What is the invoice number?", ["INV-20931", "INV 20931", "20931"], ["form"]),
    (61002, 52001, "What is the total amount due?", ["$1,250.00", "1,250.00", "$1250", "1250"], ["table/list", "form"]),
    (61003, 52001, "How many fenders were ordered?", ["4", "four"], ["table/list"]),
    (61004, 52002, "Who is the memo from?", ["R. Okafor", "R. Okafor, Operations Manager", "Okafor"], ["form", "layout"]),
    (61005, 52002, "What is the date of the memo?", ["June 4, 1998", "4 June 1998", "june 4 1998"], ["form"]),
    (61006, 52002, "Which berth should vessels use during the closure?", ["Berth 5", "5"], ["free_text"]),
    (61007, 52003, "What is the report number?", ["WQ-2210", "WQ 2210"], ["form"]),
    (61008, 52003, "What is the nitrate level of Inlet B?", ["51.0", "51.0 mg/L", "51"], ["table/list"]),
    (61009, 52003, "Which sample failed?", ["Inlet B", "inlet b"], ["table/list"]),
    (61010, 52004, "What is the total on the receipt?", ["29.25", "29.25 total"], ["table/list"]),
    (61011, 52004, "How much did the crab sandwich cost?", ["8.50", "8.5"], ["table/list"]),
    (61012, 52004, "What are the last four digits of the card?", ["4821"], ["form"]),
    (61013, 52005, "When is the board meeting?", ["21 January 2020", "21 January 2020, 10:00", "January 21, 2020"], ["layout"]),
    (61014, 52005, "What is item 3 on the agenda?", ["Dredging contract - award", "Dredging contract award",
                                                      "Dredging contract"], ["table/list", "layout"]),
    (61015, 52005, "Who chairs the meeting?", ["Cllr. A. Pennington", "A. Pennington", "Pennington"], ["layout"]),
]

# The run: right answers in several forms, near misses (ANLS partial credit), wrong values, a
# final `ANSWER:` line after reasoning, and one refusal.
PREDICTIONS = {
    61001: "INV-20931",
    61002: "$1,250",
    61003: "4",
    61004: "R. Okafor",
    61005: "June 4 1998",
    61006: "Berth 7",
    61007: "WQ-2201",
    61008: "The table lists Inlet B with a nitrate level of 51.0 mg/L.\nANSWER: 51.0",
    61009: "Inlet B",
    61010: "29.52",
    61011: "8.50",
    61012: "4812",
    61013: "21 Jan 2020",
    61014: "Dredging contract",
    61015: "Not answerable",
}


def render_page(doc_id: int) -> bytes:
    _, _, texts, boxes = PAGES[doc_id]
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=440)
    for x0, y0, x1, y1 in boxes:
        page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), color=(0.3, 0.3, 0.3), width=0.8)
    for x, y, text, font, size in texts:
        page.insert_text((x, y), text, fontname=font, fontsize=size)
    pix = page.get_pixmap(dpi=DPI, colorspace=pymupdf.csGRAY, alpha=False)
    data = pix.tobytes("png")
    doc.close()
    return data


def jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def build(out: Path, write) -> None:
    """Write docvqa/docs/*.png, documents.jsonl, qa_docvqa.jsonl and runs/docvqa-ocr.jsonl under `out`
    with `write(path, text)`; PNG bytes are written directly."""
    folder = out / "docvqa"
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    records = []
    for doc_id, (stem, title, _, _) in PAGES.items():
        (folder / "docs" / f"{stem}.png").write_bytes(render_page(doc_id))
        records.append({"document_id": str(doc_id), "title": title, "file": f"{stem}.png", "page_count": 1,
                        "doc_type": "scanned_page", "domain": "docvqa_sample"})
    write(folder / "documents.jsonl", jsonl(records))
    gold = [{"questionId": qid, "question": q, "question_types": types, "docId": doc_id,
             "ucsf_document_id": f"lens{doc_id}", "ucsf_document_page_no": "1", "answers": answers,
             "data_split": "val", "image": f"docs/{PAGES[doc_id][0]}.png"}
            for qid, doc_id, q, answers, types in QUESTIONS]
    write(folder / "qa_docvqa.jsonl", jsonl(gold))
    write(folder / "runs" / f"{RUN}.jsonl", jsonl({"question_id": str(qid), "answer": PREDICTIONS[qid]} for qid, *_ in QUESTIONS))

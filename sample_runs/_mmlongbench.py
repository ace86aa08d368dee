#!/usr/bin/env python
"""The MMLongBench-Doc-shaped sample: sample_runs/mmlongbench/ (called by make_sample.py, or alone).

    python sample_runs/_mmlongbench.py                 # regenerate sample_runs/mmlongbench in place
    python sample_runs/_mmlongbench.py --out /tmp/x    # into /tmp/x/mmlongbench

The folder looks like a clone of the benchmark after a model run: `data/samples.json` (the fields
of the release, `evidence_pages` and `evidence_sources` as Python-literal strings), its own PDFs in
`data/documents/` (one document named by the questions is left out on purpose: a missing PDF), and
two result files `results/res_<model>.json` as `run_api.py` writes them (`response`,
`extracted_res`, `pred`, `score`). Every answer format and every quirk of the evaluator is covered:
Int truncation (`42.9` for 42) and a comma number (`7,310`), Float percentages (`0.125` for
12.5 %), exact-match text (URL, e-mail, date, telephone, `a.m.`, `.py`, `page …`), Str ANLS below
1, lists in another order, of another length, with numbers, an empty gold list answered `[]`, a
prediction starting with `[` that is not a Python literal (one would create a file if it were
executed), Not answerable (also with one evidence page: single-page and unanswerable at once),
extraction misses (the gold is in the response, the extracted `pred` scores 0), a row not yet
evaluated (no `pred`), two rows out of order, and one official score that differs from the
recomputed one (the reproducibility check's example). The `score` values are the project's own
`eval_score` (fallback rules where the release raises), except that one.

Deterministic: no clock, no randomness; PDFs saved with fixed metadata and no new id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FOLDER = "mmlongbench"
RUNS = ("gpt-4o", "docowl-8b")
MISSING_PDF = "national_park_guidebook.pdf"
CHANGED_OFFICIAL = (1, 36)  # (run index, sample index): the official score written differs from eval_score

TEXT, LAYOUT, TABLE, CHART, FIGURE = ("Pure-text (Plain-text)", "Generalized-text (Layout)", "Table", "Chart", "Figure")

# document -> (doc_type, pages: each a list of lines)
DOCUMENTS: dict[str, tuple[str, list[list[str]]]] = {
    "acme_annual_report_2023.pdf": ("Financial report", [
        ["Acme Holdings Annual Report 2023", "Headquarters: Rotterdam", "Website: https://www.acme-holdings.example.com"],
        ["Financial highlights", "Revenue grew to 1,482 million euros in 2023.", "Operating margin was 12.5%.",
         "Number of employees: 7310"],
        ["Store network", "Stores opened in 2023: 42", "Region     Stores", "North      18"],
        ["Shareholder returns", "Dividend per share: 0.85 euros", "Net profit: 96.4 million euros",
         "South      24", "Net profit was 6.5% of revenue."],
        ["Board of directors", "Maria Jensen (Chair)", "Tom Okafor", "Lena Fischer", "No board member resigned in 2023."],
        ["Contact", "investor.relations@acme-holdings.example.com", "Annual meeting: 2024-05-14", "Phone: 020-5551234"],
    ]),
    "llm_eval_paper.pdf": ("Academic paper", [
        ["Long-Context Evaluation of Document Models", "A. Author, B. Author",
         "Code: https://github.com/example/longdoc"],
        ["1 Setup", "We evaluate 14 models on 3 datasets.", "Training used 8 GPUs."],
        ["Table 1: accuracy", "ModelX   41.3", "ModelY   38.9", "ModelX performs best."],
        ["Figure 2", "Accuracy drops by 7.5 points beyond 100 pages."],
        ["Appendix", "The datasets are DocVQA, ChartQA and InfoVQA.", "Script: evaluate.py"],
    ]),
    "harbour_city_brochure.pdf": ("Brochure", [
        ["Visit Harbour City", "Open daily 9 a.m. to 6 p.m."],
        ["Museums: Maritime Museum, Art Hall", "Ticket price: $12 (adults)"],
        ["Ferry departures per day: 16", "The boat tour lasts 45 minutes"],
        ["Tourist office: see the map on page 4", "Visitors in 2022: 2.3 million"],
    ]),
    "widget_tutorial_slides.pdf": ("Tutorial/Workshop", [
        ["Widget Workshop 2024"],
        ["Step 1: install the widget-cli tool"],
        ["Supported platforms: Linux, macOS, Windows"],
        ["The default port is 8080"],
        ["Q&A session"],
    ]),
    MISSING_PDF: ("Guidebook", []),  # named by questions, never written: the missing PDF
}

A, P, C, W, G = ("acme_annual_report_2023.pdf", "llm_eval_paper.pdf", "harbour_city_brochure.pdf",
                 "widget_tutorial_slides.pdf", MISSING_PDF)
NA = "Not answerable"

# (doc, pages, sources, question, answer, format, run a: pred [, response], run b: pred [, response])
QUESTIONS: list[tuple] = [
    (A, [2], [TEXT], "How many employees did Acme have?", "7310", "Int", "7310", "7,310"),
    (A, [3], [TABLE], "How many stores did Acme open in 2023?", "42", "Int", "42.9", "43"),
    (A, [2], [TEXT], "What was the operating margin?", "12.5%", "Float", "12.5", "0.125"),
    (A, [2], [TEXT], "What was the revenue in 2023, in million euros?", "1482", "Float",
     ("1482 million", "Revenue grew to 1,482 million euros in 2023."), "1482"),
    (A, [4], [TEXT], "What was the dividend per share in euros?", "0.85", "Float", "0.85", "0.9"),
    (A, [5], [LAYOUT], "Who sits on the board of directors?", "['Maria Jensen', 'Tom Okafor', 'Lena Fischer']", "List",
     "['Tom Okafor', 'Maria Jensen', 'Lena Fischer']", "['Maria Jensen', 'Tom Okafor']"),
    (A, [6], [LAYOUT], "What is the investor relations e-mail address?", "investor.relations@acme-holdings.example.com",
     "Str", "investor.relations@acme-holdings.example.com", "investor-relations@acme-holdings.example.com"),
    (A, [6], [TEXT], "When is the annual meeting?", "2024-05-14", "Str", "2024-05-14", "14 May 2024"),
    (A, [1], [LAYOUT], "What is Acme's website?", "https://www.acme-holdings.example.com", "Str",
     "https://www.acme-holdings.example.com", "www.acme-holdings.example.com"),
    (A, [1], [TEXT], "Where are Acme's headquarters?", "Rotterdam", "Str", "Rotterdam",
     ("Rotterdam, Netherlands", "The headquarters are in Rotterdam, in the Netherlands.")),
    (A, [3, 4], [TABLE], "How many stores are in the North and in the South regions?", "[18, 24]", "List",
     "[24, 18]", "[18, 25]"),
    (A, [], [], "What was Acme's revenue in 2019?", NA, "None", NA, "1,200 million"),
    (A, [6], [TEXT], "What is the investor phone number?", "020-5551234", "Str", "020-5551234", "020 5551234"),
    (A, [4], [TEXT], "What was the net profit?", "96.4 million", "Float", "96.4 million", "96.4"),
    (A, [5], [TEXT], "Which board members resigned in 2023?", "[]", "List", "[]", "['Tom Okafor']"),
    (A, [2, 4], [TEXT, TABLE], "What share of revenue was net profit?", "6.5%", "Float", "6.5", "0.065"),
    (P, [5], [TEXT], "Which datasets are used?", "['DocVQA', 'ChartQA', 'InfoVQA']", "List",
     "['DocVQA', 'ChartQA', 'InfoVQA']",
     ("[DocVQA, ChartQA, InfoVQA]", "The datasets are DocVQA, ChartQA and InfoVQA.")),
    (P, [3], [TABLE], "Which models are compared in Table 1?", "['ModelX', 'ModelY']", "List",
     "['ModelY', 'ModelX']", ("[open('lens_pwned.txt', 'w')]", "I cannot tell.")),
    (P, [2], [TEXT], "How many models are evaluated?", "14", "Int", "14",
     ("fourteen", "We evaluate 14 models on 3 datasets.")),
    (P, [2], [TEXT], "How many datasets are used?", "3", "Int", "3.0", "3"),
    (P, [3], [TABLE], "What accuracy does the best model reach?", "41.3", "Float", "41.3%", "40.1"),
    (P, [4], [CHART], "By how many points does accuracy drop beyond 100 pages?", "7.5", "Float", "7.5", "75"),
    (P, [1], [LAYOUT], "Where is the code?", "https://github.com/example/longdoc", "Str",
     "https://github.com/example/longdoc", "https://github.com/example/longdoc (code)"),
    (P, [5], [TEXT], "Which script runs the evaluation?", "evaluate.py", "Str", "evaluate.py", "eval.py"),
    (P, [], [], "How many GPUs were used for inference?", NA, "None", NA, NA),
    (P, [2, 3], [TEXT, TABLE], "Which model performs best?", "ModelX", "Str", "ModelX", "Model X"),
    (C, [1], [LAYOUT], "When is Harbour City open?", "9 a.m. to 6 p.m.", "Str", "9 a.m. to 6 p.m.", "9am-6pm"),
    (C, [2], [TEXT], "How much is an adult ticket in dollars?", "12", "Int",
     ("$12", "Adult tickets cost $12."), "12"),
    (C, [2], [TEXT], "Which museums are there?", "['Maritime Museum', 'Art Hall']", "List",
     "['Maritime Museum', 'Art Hall']", "['Maritime museum', 'Art Hall', 'Aquarium']"),
    (C, [3], [TEXT], "How many ferries depart per day?", "16", "Int", "16", NA),
    (C, [3], [TEXT], "How long is the boat tour?", "45 minutes", "Str", "45 minutes", "45 min"),
    (C, [4], [TEXT], "How many visitors came in 2022, in millions?", "2.3", "Float",
     ("2.3 million", "About 2.3 million visitors came in 2022."), ("2,300,000", "2,300,000 visitors")),
    (C, [4], [LAYOUT], "Where is the map of the tourist office?", "page 4", "Str", "page 4", "Page 4"),
    (C, [], [], "What is the parking fee?", NA, "None", NA, "$5"),
    (W, [3], [LAYOUT], "Which platforms are supported?", "['Linux', 'macOS', 'Windows']", "List",
     "['Windows', 'Linux', 'macOS']", ("Linux, macOS, Windows", "Linux, macOS and Windows are supported.")),
    (W, [4], [TEXT], "What is the default port?", "8080", "Int", "8080", "8000"),
    (W, [2], [TEXT], "Which tool is installed in step 1?", "widget-cli", "Str", "widget-cli", "the widget-cli tool"),
    (W, [1], [LAYOUT], "In which year is the workshop held?", "2024", "Int", "2024", "2023"),
    (G, [3], [TEXT], "Which lodge is open all year?", "Pine Valley Lodge", "Str", "Pine Valley Lodge", "Pine Valley Inn"),
    (G, [5], [FIGURE], "How many trails start at the visitor centre?", "3", "Int", "3", "4"),
    (G, [2], [TEXT], "What does the night permit cost?", NA, "None", NA, NA),
]
NOT_EVALUATED = (1, 39)  # (run index, sample index): a row run_api.py wrote without `pred` yet
SWAPPED = (1, (2, 3))  # (run index, (i, j)): two rows of that result file in each other's place


def samples() -> list[dict]:
    out = []
    for doc, pages, sources, question, answer, fmt, *_ in QUESTIONS:
        out.append({"doc_id": doc, "doc_type": DOCUMENTS[doc][0], "question": question, "answer": answer,
                    "evidence_pages": str(pages), "evidence_sources": str(sources), "answer_format": fmt})
    return out


def _pred(value) -> tuple[str, str]:
    return value if isinstance(value, tuple) else (value, f"Based on the document, the answer is {value}.")


def results(k: int) -> list[dict]:
    from scoring.mmlongbench_rule import eval_score

    rows = []
    for i, (sample, q) in enumerate(zip(samples(), QUESTIONS)):
        pred, response = _pred(q[6 + k])
        row = dict(sample)
        row["response"] = response
        if (k, i) == NOT_EVALUATED:
            rows.append(row)
            continue
        row["extracted_res"] = f"Extracted answer: {pred}\nAnswer format: {sample['answer_format']}"
        row["pred"] = pred
        score = eval_score(sample["answer"], pred, sample["answer_format"])
        row["score"] = (0.5 if score != 0.5 else 0.0) if (k, i) == CHANGED_OFFICIAL else score
        rows.append(row)
    if k == SWAPPED[0]:
        a, b = SWAPPED[1]
        rows[a], rows[b] = rows[b], rows[a]
    return rows


def _pdf(path: Path, pages: list[list[str]]) -> None:
    import pymupdf

    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page(width=420, height=595)
        y = 60.0
        for k, line in enumerate(lines):
            page.insert_text((40, y), line, fontname="helv", fontsize=16 if k == 0 else 11)
            y += 30 if k == 0 else 20
    doc.set_metadata({"creator": "sample_runs/_mmlongbench.py", "producer": "PyMuPDF", "title": path.stem,
                      "creationDate": "D:20240301120000Z", "modDate": "D:20240301120000Z",
                      "subject": "", "keywords": "", "trapped": "", "author": ""})
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=4, deflate=True, no_new_id=True)
    doc.close()


def _json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=4) + "\n", encoding="utf-8", newline="\n")


def build(out: Path) -> Path:
    """Write the folder `out/mmlongbench` (replacing its generated files) and return it."""
    folder = Path(out) / FOLDER
    _json(folder / "data" / "samples.json", samples())
    for name, (_, pages) in DOCUMENTS.items():
        if pages:
            _pdf(folder / "data" / "documents" / name, pages)
    for k, run in enumerate(RUNS):
        _json(folder / "results" / f"res_{run}.json", results(k))
    return folder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE), help="the folder that receives mmlongbench/ (default: sample_runs)")
    folder = build(Path(ap.parse_args(argv).out))
    print(f"wrote {folder}: {len(QUESTIONS)} questions, {sum(1 for _, p in DOCUMENTS.values() if p)} PDFs "
          f"({MISSING_PDF} left out), {len(RUNS)} result files")


if __name__ == "__main__":
    main()

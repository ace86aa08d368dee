"""Write a synthetic benchmark of XL-DocBench's real size, for timing the dashboard.

    .venv/bin/python bench/make_synthetic_benchmark.py [--out bench/out/synthetic] [--seed 1519]

Writes into the folder (a benchmark folder as the dashboard reads it, spec part E):
  qa_single_doc.jsonl   1,354 single-document questions (release schema: `document`)
  qa_cross_doc.jsonl    165 cross-document questions (`documents`, 2-4 documents each)
  documents.jsonl       240 document records with page_count (5 to 1,400 pages)
  runs/*.jsonl|json     13 prediction runs of varied quality, in three of the accepted shapes
No docs/ folder: the documents are reported missing, which disables only page rendering.

Gold records carry the release metadata (domain, difficulty, reasoning_type, doc_type,
doc_type_coarse, evidence_sources, evidence_annotation_status, is_unanswerable,
n_context_documents, n_evidence_documents) and evidence pages with evidence items. Answers
are Str names and phrases (casefold_exact_match), option letters (choice_exact_match), Int
and Float (numeric_tolerance), percentages (percentage_exact) and "Not answerable".

Each run has its own skill; a question's chance of being answered right falls with its
difficulty, its document length and its reasoning type, so the heatmaps have structure.
Wrong answers are near misses, wrong numbers, refusals, unrelated text; right ones come plain,
re-cased, prefixed ("Answer: ...") or inside a long explanation. Some runs miss questions or
report failed statuses (error, timeout, context_overflow). Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "synthetic"
N_SINGLE, N_CROSS, N_DOCS = 1354, 165, 240

DOMAINS = {  # domain: (doc_type, doc_type_coarse, weight, title pattern)
    "finance_business": ("annual_report", "report", 26, "{org} Annual Report {year}"),
    "legal_regulation": ("regulation", "legal", 18, "Regulation ({org}) {year}/{n}"),
    "technical_engineering": ("technical_manual", "manual", 18, "{org} {model} Installation and Operation Manual"),
    "medical_clinical": ("clinical_protocol", "protocol", 17, "{org} Clinical Study Protocol {model}"),
    "scientific_academic": ("research_paper", "paper", 13, "{org} Working Paper {year}-{n}"),
    "narrative_literature": ("novel", "book", 8, "The {noun} of {org}"),
}
REASONING = {"reference_chain": 20, "temporal": 15, "comparison": 12, "aggregation": 11, "ranking": 7,
             "counterfactual": 7, "compliance": 7, "set_difference": 5, "reconciliation": 5, "coverage": 3}
REASONING_HARDNESS = {"reference_chain": 0.05, "temporal": 0.0, "comparison": 0.02, "aggregation": 0.12, "ranking": 0.08,
                      "counterfactual": 0.18, "compliance": 0.10, "set_difference": 0.15, "reconciliation": 0.20,
                      "coverage": 0.14, "unanswerable": 0.0}
SOURCES = {"Table": 38, "Text": 34, "Chart": 10, "Layout": 10, "Figure": 8}
# (kind, format, verification_rule, weight)
KINDS = [("name", "Str", "casefold_exact_match", 14), ("phrase", "Str", "casefold_exact_match", 23),
         ("choice", "Str", "choice_exact_match", 5), ("int", "Int", "numeric_tolerance", 33),
         ("float", "Float", "numeric_tolerance", 7), ("percent", "Float", "percentage_exact", 8)]
UNANSWERABLE_SHARE = 0.10

ORGS = ["Northwind Harbour", "Halden", "Kestrel Thermal", "Riverine Union", "Arvo Mining", "Lumen Grid", "Castellan",
        "Brightwater", "Oakridge", "Vesta Logistics", "Marlow & Finch", "Tessaly", "Corvin", "Helio Pharma", "Ostara"]
FIRST = ["Rahul", "Hannah", "Pieter", "Marta", "José", "Ingrid", "Kwame", "Li", "Sofia", "Jürgen", "Amara", "Tomasz"]
LAST = ["Menon", "Achterberg", "Novak", "Okafor", "García", "Lindqvist", "Tanaka", "Dubois", "Rossi", "Kowalski"]
ADJ = ["total", "net", "operating", "annual", "maximum", "minimum", "average", "cumulative", "planned", "reported"]
NOUNS = ["revenue", "margin", "pressure limit", "dose", "participants", "segment", "vessels", "warehousing",
         "heat exchanger", "placebo arm", "dividend", "tax rate", "inspection", "article", "capacity", "cohort",
         "turbine", "subsidiary", "liability", "amendment", "sample size", "chapter", "harbour", "fleet"]
UNITS = ["EUR million", "bar", "mg", "participants", "days", "units", "kg", "%", "vessels"]
REFUSALS = ["Not answerable", "The document does not provide this information.", "I cannot find this in the document.",
            "Unknown", "N/A"]
FILLER = ("the report states that the figure is given in the table on the page and the value was compared with the "
          "previous year according to the notes while the section describes how the amounts were calculated").split()

# name, skill (0-1), verbose share, missing share, failed share, shape
RUNS = [
    ("longctx-ocr-72b", 0.82, 0.05, 0.000, 0.005, "jsonl"),
    ("longctx-img-72b", 0.74, 0.05, 0.000, 0.010, "jsonl"),
    ("agent-pipeline-v2", 0.70, 0.45, 0.010, 0.040, "jsonl"),
    ("rag-dense-32b", 0.66, 0.10, 0.000, 0.000, "jsonl"),
    ("rag-bm25-32b", 0.58, 0.10, 0.000, 0.000, "jsonl"),
    ("simpledoc-gpt", 0.63, 0.20, 0.000, 0.010, "list"),
    ("mdocagent", 0.55, 0.30, 0.020, 0.030, "jsonl"),
    ("qwen-35b-img", 0.52, 0.08, 0.000, 0.020, "jsonl"),
    ("longctx-ocr-8b", 0.45, 0.05, 0.000, 0.060, "jsonl"),
    ("small-9b", 0.38, 0.05, 0.000, 0.000, "id_answer"),
    ("vision-7b", 0.33, 0.05, 0.030, 0.010, "jsonl"),
    ("ocr-only-3b", 0.25, 0.02, 0.000, 0.080, "jsonl"),
    ("random-baseline", 0.08, 0.00, 0.000, 0.000, "jsonl"),
]
FAILED = ["error", "timeout", "context_overflow"]


def _documents(rng: random.Random) -> list[dict]:
    docs = []
    names = list(DOMAINS)
    weights = [DOMAINS[d][2] for d in names]
    for i in range(1, N_DOCS + 1):
        domain = rng.choices(names, weights)[0]
        doc_type, _, _, title = DOMAINS[domain]
        # page counts spread over the length buckets: 1-10, 11-50, 51-200, 201-500, over 500
        pages = rng.choice([rng.randint(5, 10), rng.randint(11, 50), rng.randint(51, 200), rng.randint(51, 200),
                            rng.randint(201, 500), rng.randint(201, 500), rng.randint(501, 1400)])
        org = rng.choice(ORGS)
        doc_id = f"doc_{i:06d}"
        host = org.lower().replace(" & ", "-").replace(" ", "-") + ".example"
        docs.append({
            "document_id": doc_id, "url": f"https://www.{host}/library/{doc_id}.pdf",
            "title": title.format(org=org, year=rng.randint(2015, 2024), n=rng.randint(1, 400),
                                  model=f"{rng.choice('HKMVX')}X-{rng.randint(1, 9)}00", noun=rng.choice(NOUNS).title()),
            "domain": domain, "page_count": pages, "file_size_bytes": pages * rng.randint(9_000, 60_000),
            "source_host": "www." + host, "doc_type": doc_type,
            "pdf_type": rng.choice(["native_digital", "native_digital", "scanned"]), "public_metadata": {"language": "en"},
        })
    return docs


def _gold_value(rng: random.Random, kind: str) -> str:
    if kind == "name":
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    if kind == "phrase":
        words = [rng.choice(ADJ)] + [rng.choice(NOUNS) for _ in range(rng.randint(0, 3))]
        return " and ".join(words) if rng.random() < 0.2 else " ".join(words)
    if kind == "choice":
        return rng.choice("ABCD")
    if kind == "int":
        v = rng.choice([rng.randint(0, 40), rng.randint(41, 2000), rng.randint(2001, 900_000)])
        return f"{v:,}" if v >= 10_000 and rng.random() < 0.3 else str(v)
    if kind == "float":
        return f"{rng.uniform(0, 900):.{rng.randint(1, 2)}f}"
    return f"{rng.uniform(0, 100):.1f}%"  # percent


def _evidence(rng: random.Random, doc: dict, sources: list[str], n_pages: int) -> dict:
    pages = sorted(rng.sample(range(1, doc["page_count"] + 1), min(n_pages, doc["page_count"])))
    items = [{"locator": f"Page {p}", "pages": [p], "quote": " ".join(rng.sample(FILLER, 5)),
              "source_type": rng.choice(sources), "evidence_kind": "supporting_excerpt",
              "page_numbering": "annotator_supplied", "mentioned_elements": [f"Table {rng.randint(1, 30)}"]} for p in pages]
    return {"document_id": doc["document_id"], "url": doc["url"], "evidence_pages": pages,
            "evidence_page_numbering": "pdf_index", "evidence_items": items}


def _question(rng: random.Random, reasoning: str, doc: dict) -> str:
    year = rng.randint(2015, 2024)
    subject = f"the {rng.choice(ADJ)} {rng.choice(NOUNS)}"
    templates = {
        "temporal": f"In which year did {subject} of {doc['title']} first exceed its {year} level?",
        "comparison": f"Which is larger in {doc['title']}: {subject} or the {rng.choice(NOUNS)} in {year}?",
        "aggregation": f"What is the sum of {subject} over all segments listed in {doc['title']} for {year}?",
        "counterfactual": f"If {subject} had grown at the {year} rate, what would it have been one year later?",
        "ranking": f"Which {rng.choice(NOUNS)} ranks third by {subject} in {doc['title']}?",
        "unanswerable": f"What was {subject} reported for {year + 12} in {doc['title']}?",
    }
    return templates.get(reasoning, f"According to {doc['title']}, what is {subject} referred to in section "
                                    f"{rng.randint(1, 20)}.{rng.randint(1, 9)} for {year}?")


def _gold(rng: random.Random, docs: list[dict]) -> tuple[list[dict], list[dict]]:
    kinds, kind_w = KINDS, [k[3] for k in KINDS]
    reasons, reason_w = list(REASONING), list(REASONING.values())
    source_names, source_w = list(SOURCES), list(SOURCES.values())
    out: dict[str, list[dict]] = {"single_doc": [], "cross_doc": []}
    for split, n in (("single_doc", N_SINGLE), ("cross_doc", N_CROSS)):
        for i in range(1, n + 1):
            chosen = rng.sample(docs, 1 if split == "single_doc" else rng.randint(2, 4))
            unanswerable = rng.random() < UNANSWERABLE_SHARE
            reasoning = "unanswerable" if unanswerable else rng.choices(reasons, reason_w)[0]
            if unanswerable:
                fmt, rule, value, sources = "None", "exact_match", "Not answerable", []
            else:
                kind, fmt, rule, _ = rng.choices(kinds, kind_w)[0]
                value = _gold_value(rng, kind)
                sources = sorted(set(rng.choices(source_names, source_w, k=rng.randint(1, 2))))
            refs = []
            for k, doc in enumerate(chosen):
                with_evidence = not unanswerable and (k == 0 or rng.random() < 0.7)
                ref = _evidence(rng, doc, sources or ["Text"], rng.randint(1, 3) if with_evidence else 0)
                refs.append(ref)
            domain = chosen[0]["domain"]
            doc_type, coarse = (DOMAINS[domain][:2]) if split == "single_doc" else ("mixed", "mixed")
            record = {
                "question_id": f"adubench_{'single' if split == 'single_doc' else 'cross'}_{i:06d}",
                "task_type": split,
                "question": _question(rng, reasoning, chosen[0]),
                "answer": {"value": value, "format": fmt, "verification_rule": rule},
            }
            if split == "single_doc":
                record["document"] = refs[0]
            else:
                record["documents"] = refs
            record["metadata"] = {
                "domain": domain, "difficulty": "very_hard" if rng.random() < 0.4 else "hard",
                "reasoning_type": reasoning, "doc_type": doc_type, "doc_type_coarse": coarse,
                "evidence_sources": sources,
                "evidence_annotation_status": "not_answerable" if unanswerable else "has_evidence",
                "is_unanswerable": unanswerable, "n_context_documents": len(refs),
                "n_evidence_documents": sum(1 for r in refs if r["evidence_pages"]),
            }
            out[split].append(record)
    return out["single_doc"], out["cross_doc"]


def _typo(rng: random.Random, text: str) -> str:
    chars = list(text)
    i = rng.randrange(len(chars))
    chars[i] = rng.choice("aeioulnrst") if chars[i].isalpha() else chars[i] + rng.choice("0123456789")
    return "".join(chars)


def _wrong(rng: random.Random, gold: str, fmt: str) -> str:
    r = rng.random()
    if fmt in ("Int", "Float"):
        digits = gold.replace(",", "").rstrip("%")
        v = float(digits) * rng.choice([0.5, 0.9, 1.08, 1.5, 2.0, 10.0]) + rng.choice([-1, 1, 3])
        text = f"{v:.{0 if fmt == 'Int' else 1}f}"
        return text + ("%" if gold.endswith("%") else "") if r < 0.8 else f"{text} {rng.choice(UNITS)}"
    if fmt == "None":
        return rng.choice([str(rng.randint(1, 500)), f"{rng.choice(FIRST)} {rng.choice(LAST)}", f"in {rng.randint(2030, 2040)}"])
    if r < 0.35:
        return _typo(rng, gold)
    if r < 0.55:
        return rng.choice(REFUSALS)
    if r < 0.75 and gold in "ABCD":
        return rng.choice([x for x in "ABCD" if x != gold])
    return " ".join(rng.choice(NOUNS) for _ in range(rng.randint(1, 4)))


def _right(rng: random.Random, gold: str, fmt: str) -> str:
    r = rng.random()
    if r < 0.55:
        return gold
    if r < 0.70:
        return gold.upper() if fmt != "None" else gold.lower()
    if r < 0.85:
        return rng.choice(["Answer: ", "The answer is ", "**Answer:** "]) + gold
    return f"{gold} ({rng.choice(['Table', 'page', 'section'])} {rng.randint(1, 40)})"


def _verbose(rng: random.Random, core: str) -> str:
    body = " ".join(rng.choice(FILLER) for _ in range(rng.randint(25, 160)))
    return f"Based on the document, the answer is {core}. {body.capitalize()}."


def _length_penalty(pages: int) -> float:
    return 0.0 if pages <= 50 else 0.05 if pages <= 200 else 0.12 if pages <= 500 else 0.22


def _runs(rng: random.Random, gold: list[dict], docs: dict[str, dict]) -> dict[str, tuple[str, list[dict]]]:
    runs = {}
    for name, skill, verbose, missing, failed, shape in RUNS:
        rows = []
        for q in gold:
            if rng.random() < missing:
                continue
            refs = [q["document"]] if "document" in q else q["documents"]
            pages = sum(docs[r["document_id"]]["page_count"] for r in refs)
            meta, ans = q["metadata"], q["answer"]
            p = skill - (0.12 if meta["difficulty"] == "very_hard" else 0.0) - _length_penalty(pages) \
                - REASONING_HARDNESS[meta["reasoning_type"]] * (1.2 - skill) - (0.06 if "documents" in q else 0.0)
            status = rng.choice(FAILED) if rng.random() < failed else "success"
            if status == "context_overflow":
                text = ""
            elif ans["format"] == "None":  # a refusal is right here; weak runs answer anyway
                text = rng.choice(REFUSALS[:3]) if rng.random() < 0.3 + 0.6 * skill else _wrong(rng, ans["value"], "None")
            else:
                text = _right(rng, ans["value"], ans["format"]) if rng.random() < max(0.02, p) else _wrong(rng, ans["value"], ans["format"])
            if text and rng.random() < verbose:
                text = _verbose(rng, text)
            evidence = sorted({pg for r in refs for pg in r["evidence_pages"]})[:3] or [rng.randint(1, 5)]
            rows.append({"question_id": q["question_id"], "prediction": text, "status": status, "evidence_pages": evidence})
        runs[name] = (shape, rows)
    return runs


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def generate(out: Path = OUT, seed: int = 1519) -> Path:
    rng = random.Random(seed)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for old in (out / "runs").iterdir():
        old.unlink()
    docs = _documents(rng)
    single, cross = _gold(rng, docs)
    _write_jsonl(out / "documents.jsonl", docs)
    _write_jsonl(out / "qa_single_doc.jsonl", single)
    _write_jsonl(out / "qa_cross_doc.jsonl", cross)
    for name, (shape, rows) in _runs(rng, single + cross, {d["document_id"]: d for d in docs}).items():
        if shape == "list":  # a JSON list with `model_answer`
            data = [{"question_id": r["question_id"], "model_answer": r["prediction"], "status": r["status"],
                     "evidence_pages": r["evidence_pages"]} for r in rows]
            (out / "runs" / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        elif shape == "id_answer":  # JSONL with `id` and `answer`, no status
            _write_jsonl(out / "runs" / f"{name}.jsonl", [{"id": r["question_id"], "answer": r["prediction"]} for r in rows])
        else:
            _write_jsonl(out / "runs" / f"{name}.jsonl", rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=1519)
    args = ap.parse_args()
    out = generate(args.out, args.seed)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out}: {N_SINGLE} + {N_CROSS} questions, {N_DOCS} documents, {len(RUNS)} runs ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

"""Checks of the embedded sample benchmark (sample_runs/): gold against the PDFs, README counts,
byte-for-byte regeneration, score files against the project's own scoring CLI, coverage."""

from __future__ import annotations

import collections
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

ROOT = Path(__file__).resolve().parent.parent
SR = ROOT / "sample_runs"
GOLD_FILES = ["qa_single_doc.jsonl", "qa_cross_doc.jsonl"]
RUNS = ["longctx-ocr.jsonl", "longctx-img.json", "small-9b.jsonl", "agent-pipeline.json"]
EXTRA_SYSTEMS = ["simpledoc-gpt", "mdocagent", "qwen-35b-img"]
METRICS = ("accuracy", "token_f1", "anls")


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def gold() -> list[dict]:
    return [r for f in GOLD_FILES for r in read_jsonl(SR / f)]


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    return {d["document_id"]: d for d in read_jsonl(SR / "documents.jsonl")}


def doc_objects(rec: dict) -> list[dict]:
    return rec["documents"] if "documents" in rec else [rec["document"]]


def run_py(args, cwd=ROOT, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    res = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, f"{args} failed:\n{res.stdout}\n{res.stderr}"
    return res


# ----------------------------------------------------------------------------- gold vs PDFs


def test_documents_jsonl_matches_pdfs(documents):
    assert len(documents) == 6
    for doc_id, d in documents.items():
        assert re.fullmatch(r"doc_\d{6}", doc_id)
        pdf = SR / "docs" / f"{doc_id}.pdf"
        assert pdf.is_file(), pdf
        assert d["file_size_bytes"] == pdf.stat().st_size, doc_id
        with pymupdf.open(pdf) as doc:
            assert d["page_count"] == doc.page_count, doc_id
        assert set(d) == {"document_id", "url", "title", "domain", "page_count", "file_size_bytes",
                          "source_host", "doc_type", "pdf_type", "public_metadata"}
        assert d["public_metadata"]["language"]
    assert sorted(d["domain"] for d in documents.values()) == sorted(
        ["finance_business", "medical_clinical", "legal_regulation", "technical_engineering",
         "scientific_academic", "narrative_literature"])
    pages = [d["page_count"] for d in documents.values()]
    assert all(20 <= p <= 120 for p in pages) and max(pages) >= 100


def test_every_quote_is_on_its_evidence_page(gold, documents):
    misses = []
    opened = {d: pymupdf.open(SR / "docs" / f"{d}.pdf") for d in documents}
    try:
        for rec in gold:
            for d in doc_objects(rec):
                pdf = opened[d["document_id"]]
                for it in d["evidence_items"]:
                    (p,) = it["pages"]
                    page = pdf[p - 1]
                    hits = page.search_for(it["quote"])
                    if not hits and not page.get_text().strip():  # an image-only page: its quote is read by OCR
                        hits = page.search_for(it["quote"], textpage=page.get_textpage_ocr(dpi=150, full=True))
                    if not hits:
                        misses.append((rec["question_id"], d["document_id"], p, it["quote"]))
                    if "bbox" in it:
                        box = pymupdf.Rect(it["bbox"])
                        assert box in page.rect and not box.is_empty, (rec["question_id"], it["bbox"])
                        assert it["source_type"] in ("Chart", "Figure")
                        inside = [g for g in page.get_drawings() if g["rect"].intersects(box)]
                        assert len(inside) >= 5, f"{rec['question_id']}: no vector drawing in bbox"
    finally:
        for doc in opened.values():
            doc.close()
    assert not misses, f"quotes not found on their page: {misses}"


def test_the_sample_has_an_image_only_page_with_a_question_on_it(gold, documents):
    """The manual's last page is a scanned certificate (a picture of text, no text layer): only OCR
    reads it, and one question's answer and quote are on it."""
    with pymupdf.open(SR / "docs" / "doc_000004.pdf") as doc:
        assert documents["doc_000004"]["page_count"] == doc.page_count == 55
        scans = [k + 1 for k, p in enumerate(doc) if not p.get_text().strip() and p.get_images()]
        assert scans == [55]
    (q,) = [r for r in gold if any(55 in d["evidence_pages"] for d in doc_objects(r)
                                   if d["document_id"] == "doc_000004")]
    assert q["question_id"] == "adubench_single_000069" and q["answer"]["value"] == "24.5"


def test_evidence_pages_exist_and_agree_with_items(gold, documents):
    for rec in gold:
        for d in doc_objects(rec):
            n = documents[d["document_id"]]["page_count"]
            item_pages = sorted({p for it in d["evidence_items"] for p in it["pages"]})
            assert d["evidence_pages"] == item_pages, rec["question_id"]
            assert all(1 <= p <= n for p in d["evidence_pages"]), (rec["question_id"], d["evidence_pages"], n)
            for it in d["evidence_items"]:
                assert it["locator"] == f"Page {it['pages'][0]}"
            assert d["url"] == documents[d["document_id"]]["url"]
            assert d["evidence_page_numbering"] == "pdf_index"


def test_gold_schema_is_the_release_schema(gold):
    top_single = {"question_id", "task_type", "question", "answer", "document", "metadata"}
    top_cross = {"question_id", "task_type", "question", "answer", "documents", "metadata"}
    doc_keys = {"document_id", "url", "evidence_pages", "evidence_page_numbering", "evidence_items"}
    item_keys = {"locator", "pages", "quote", "source_type", "evidence_kind", "page_numbering",
                 "mentioned_elements"}
    meta_keys = {"domain", "difficulty", "reasoning_type", "doc_type", "doc_type_coarse", "evidence_sources",
                 "evidence_annotation_status", "is_unanswerable", "n_context_documents", "n_evidence_documents"}
    ids = [r["question_id"] for r in gold]
    assert len(ids) == len(set(ids))
    for r in gold:
        cross = r["task_type"] == "cross_doc"
        assert set(r) == (top_cross if cross else top_single), r["question_id"]
        assert re.fullmatch(rf"adubench_{'cross' if cross else 'single'}_\d{{6}}", r["question_id"])
        assert set(r["answer"]) == {"value", "format", "verification_rule"}
        assert isinstance(r["answer"]["value"], str)
        assert set(r["metadata"]) == meta_keys
        m = r["metadata"]
        for d in doc_objects(r):
            assert set(d) == doc_keys
            for it in d["evidence_items"]:
                assert set(it) - {"bbox"} == item_keys
        unans = r["answer"]["format"] == "None"
        assert m["is_unanswerable"] is unans
        assert m["evidence_annotation_status"] == ("not_answerable" if unans else "has_evidence")
        if unans:
            assert r["answer"] == {"value": "Not answerable", "format": "None", "verification_rule": "exact_match"}
            assert m["evidence_sources"] == [] and m["reasoning_type"] == "unanswerable"
            assert all(not d["evidence_items"] and not d["evidence_pages"] for d in doc_objects(r))
        else:
            sources = {it["source_type"] for d in doc_objects(r) for it in d["evidence_items"]}
            assert set(m["evidence_sources"]) == sources, r["question_id"]
        assert m["n_context_documents"] == len(doc_objects(r))
        assert m["n_evidence_documents"] == sum(1 for d in doc_objects(r) if d["evidence_items"])


# ----------------------------------------------------------------------------- coverage


def test_coverage(gold):
    assert 60 <= len(gold) <= 90
    fmt_rule = collections.Counter((r["answer"]["format"], r["answer"]["verification_rule"]) for r in gold)
    assert {("Str", "casefold_exact_match"), ("Int", "numeric_tolerance"), ("Float", "numeric_tolerance"),
            ("Float", "percentage_exact"), ("None", "exact_match"), ("Str", "choice_exact_match")} == set(fmt_rule)
    pct = [r["answer"]["value"] for r in gold if r["answer"]["verification_rule"] == "percentage_exact"]
    assert any(v.endswith("%") for v in pct) and any(not v.endswith("%") for v in pct)
    assert any(re.fullmatch(r"\d+,\d", v) for v in pct), "a decimal-comma percentage gold"
    for r in gold:
        if r["answer"]["verification_rule"] == "choice_exact_match":
            assert r["answer"]["value"] in "ABCD" and len(r["answer"]["value"]) == 1
            assert all(f"{c}) " in r["question"] for c in "ABCD")
    assert {r["answer"]["value"] for r in gold if r["answer"]["verification_rule"] == "choice_exact_match"} == set("ABCD")
    reasoning = {r["metadata"]["reasoning_type"] for r in gold}
    assert len(reasoning) >= 8 and "unanswerable" in reasoning
    assert reasoning <= {"comparison", "reference_chain", "ranking", "coverage", "temporal", "compliance",
                         "aggregation", "set_difference", "reconciliation", "counterfactual", "unanswerable"}
    sources = {s for r in gold for s in r["metadata"]["evidence_sources"]}
    assert sources == {"Text", "Table", "Chart", "Figure", "Layout"}
    assert {r["metadata"]["difficulty"] for r in gold} == {"hard", "very_hard"}
    assert len({r["metadata"]["domain"] for r in gold}) == 6
    cross = [r for r in gold if r["task_type"] == "cross_doc"]
    assert len(cross) >= 6
    assert all(2 <= len(r["documents"]) <= 3 for r in cross)
    assert any(r["metadata"]["n_evidence_documents"] < r["metadata"]["n_context_documents"]
               and not r["metadata"]["is_unanswerable"] for r in cross), "a context-only document"
    multi = [r for r in gold for d in doc_objects(r) if len(d["evidence_pages"]) in (2, 3)]
    assert len(multi) >= 5
    assert sum(1 for r in gold for d in doc_objects(r) for it in d["evidence_items"] if "bbox" in it) >= 3


def test_evidence_spread_over_document_thirds(gold, documents):
    thirds = collections.Counter()
    for r in gold:
        for d in doc_objects(r):
            n = documents[d["document_id"]]["page_count"]
            for p in d["evidence_pages"]:
                thirds[min(2, 3 * (p - 1) // n)] += 1
    assert all(thirds[k] >= 5 for k in range(3)), thirds


def test_total_size_under_5mb():
    total = sum(p.stat().st_size for p in SR.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert total < 5 * 1024 * 1024, total


# ----------------------------------------------------------------------------- README counts


def parse_readme_tables(text: str) -> dict[str, dict[str, int]]:
    block = text[text.index("<!-- counts:start"):text.index("<!-- counts:end -->")]
    tables: dict[str, dict[str, int]] = {}
    key = None
    for line in block.splitlines():
        m = re.fullmatch(r"\| (\w+) \| questions \|", line.strip())
        if m:
            key = m.group(1)
            tables[key] = {}
            continue
        m = re.fullmatch(r"\| (.+?) \| (\d+) \|", line.strip())
        if m and key:
            tables[key][m.group(1)] = int(m.group(2))
    total = int(re.search(r"Total questions: \*\*(\d+)\*\*", block).group(1))
    tables["total"] = {"all": total}
    return tables


def test_readme_counts_match_gold(gold):
    tables = parse_readme_tables((SR / "README.md").read_text(encoding="utf-8"))
    expected = {
        "format": collections.Counter(r["answer"]["format"] for r in gold),
        "verification_rule": collections.Counter(r["answer"]["verification_rule"] for r in gold),
        "reasoning_type": collections.Counter(r["metadata"]["reasoning_type"] for r in gold),
        "evidence_source": collections.Counter(s for r in gold for s in (r["metadata"]["evidence_sources"] or ["(none)"])),
        "domain": collections.Counter(r["metadata"]["domain"] for r in gold),
        "difficulty": collections.Counter(r["metadata"]["difficulty"] for r in gold),
        "task_type": collections.Counter(r["task_type"] for r in gold),
        "total": {"all": len(gold)},
    }
    assert set(tables) == set(expected)
    for k, c in expected.items():
        assert tables[k] == dict(c), k


# ----------------------------------------------------------------------------- regeneration


def files_under(folder: Path, parts) -> dict[str, bytes]:
    out = {}
    for part in parts:
        p = folder / part
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    out[str(f.relative_to(folder))] = f.read_bytes()
        else:
            out[part] = p.read_bytes()
    return out


def test_regeneration_is_byte_identical(tmp_path):
    run_py([str(SR / "make_sample.py"), "--out", str(tmp_path), "--only", "docs,gold,runs"], timeout=120)
    parts = ["docs", "runs", "documents.jsonl", *GOLD_FILES]
    committed, fresh = files_under(SR, parts), files_under(tmp_path, parts)
    assert sorted(committed) == sorted(fresh)
    differ = [k for k in committed if committed[k] != fresh[k]]
    assert not differ, f"regenerated files differ: {differ}"


def test_regenerated_scores_are_byte_identical(tmp_path):
    """The scores part: the CLI run by make_sample.py reproduces results/ exactly."""
    run_py([str(SR / "make_sample.py"), "--out", str(tmp_path), "--only", "docs,gold,runs,scores"], timeout=300)
    committed, fresh = files_under(SR, ["results"]), files_under(tmp_path, ["results"])
    assert sorted(committed) == sorted(fresh)
    differ = [k for k in committed if committed[k] != fresh[k]]
    assert not differ, f"results differ from a fresh CLI run (rerun make_sample.py --only scores): {differ}"


# ----------------------------------------------------------------------------- scores vs CLI


@pytest.fixture(scope="module")
def cli_reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli")
    run_py(["-m", "scoring", "--gold-files", *[str(SR / g) for g in GOLD_FILES],
            "--predictions", *[str(SR / "runs" / r) for r in RUNS],
            "--output", str(out / "reports"), "--per-question-csv", str(out / "csv")])
    run_py(["-m", "scoring", "--gold-files", *[str(SR / g) for g in GOLD_FILES],
            "--predictions", str(SR / "runs" / "longctx-ocr.jsonl"), "--profile", "xldocbench-1519",
            "--output", str(out / "official.json"), "--per-question-csv", str(out / "official.csv")])

    def report(stem):
        (p,) = [p for p in (out / "reports").iterdir() if p.name.split(".")[0] == stem]
        return json.loads(p.read_text(encoding="utf-8"))

    return {"default": {Path(r).stem: report(Path(r).stem) for r in RUNS},
            "official": json.loads((out / "official.json").read_text(encoding="utf-8")),
            "official_csv": (out / "official.csv").read_text(encoding="utf-8")}


def test_scores_jsonl_agrees_with_cli(cli_reports, gold):
    rows = read_jsonl(SR / "results" / "scores.jsonl")
    assert all(set(r) == {"question_id", "system", "accuracy", "token_f1", "anls", "prediction"} for r in rows)
    by = {(r["question_id"], r["system"]): r for r in rows}
    assert len(by) == len(rows)
    systems = {r["system"] for r in rows}
    assert len(systems) >= 6 and set(EXTRA_SYSTEMS) <= systems
    gold_ids = {r["question_id"] for r in gold}
    for name, rep in cli_reports["default"].items():
        assert name in systems
        for q in rep["per_question"]:
            row = by[(q["question_id"], name)]
            for m in METRICS:
                assert row[m] == pytest.approx(q[m], abs=1e-6), (name, q["question_id"], m)
            assert row["prediction"] == q["prediction"]
        assert {qid for (qid, s) in by if s == name} == gold_ids


def test_summary_agrees_with_cli(cli_reports):
    summary = json.loads((SR / "results" / "summary.json").read_text(encoding="utf-8"))
    assert summary["profile"] == "xldocbench"
    assert summary["signature"]
    assert summary["scored_system_count"] == len(summary["systems"]) >= 6
    for name, rep in cli_reports["default"].items():
        for k in ("count", *METRICS):
            assert summary["systems"][name][k] == pytest.approx(rep["overall"][k], abs=1e-6), (name, k)
    rows = read_jsonl(SR / "results" / "scores.jsonl")
    for name, s in summary["systems"].items():
        mine = [r for r in rows if r["system"] == name]
        assert s["count"] == len(mine)
        for m in METRICS:
            assert s[m] == pytest.approx(sum(r[m] for r in mine) / len(mine), abs=1e-6)


def test_official_report_agrees_with_release_profile(cli_reports):
    committed = json.loads((SR / "results" / "official" / "longctx-ocr.report.json").read_text(encoding="utf-8"))
    fresh = cli_reports["official"]
    assert committed["overall"] == fresh["overall"]
    assert [(q["question_id"], q["prediction"], *[q[m] for m in METRICS]) for q in committed["per_question"]] == \
           [(q["question_id"], q["prediction"], *[q[m] for m in METRICS]) for q in fresh["per_question"]]
    csv_rows = list(csv.DictReader(io.StringIO(
        (SR / "results" / "official" / "longctx-ocr.per_question.csv").read_text(encoding="utf-8"))))
    fresh_rows = list(csv.DictReader(io.StringIO(cli_reports["official_csv"])))
    assert csv_rows == fresh_rows


def test_release_profile_differs_from_default_somewhere(cli_reports):
    """The app's reproducibility check needs questions where the two profiles disagree."""
    default = {q["question_id"]: q for q in cli_reports["default"]["longctx-ocr"]["per_question"]}
    diff = [q["question_id"] for q in cli_reports["official"]["per_question"]
            if any(q[m] != default[q["question_id"]][m] for m in METRICS)]
    assert diff


# ----------------------------------------------------------------------------- run files


def test_run_files_have_the_promised_shapes(gold):
    gold_ids = {r["question_id"] for r in gold}
    ocr = read_jsonl(SR / "runs" / "longctx-ocr.jsonl")
    assert {r["question_id"] for r in ocr} == gold_ids and all("prediction" in r for r in ocr)
    assert sum("evidence_pages" in r for r in ocr) > len(ocr) * 0.7
    with_bbox = [r for r in ocr if "evidence" in r]
    assert with_bbox and all(len(e["bbox"]) == 4 and isinstance(e["page"], int)
                             for r in with_bbox for e in r["evidence"])
    img = json.loads((SR / "runs" / "longctx-img.json").read_text(encoding="utf-8"))
    assert isinstance(img, list) and all("model_answer" in r for r in img)
    assert sum("evidence_pages" in r for r in img) > len(img) * 0.7
    small = read_jsonl(SR / "runs" / "small-9b.jsonl")
    assert all("answer" in r for r in small)
    assert any(isinstance(r["answer"], dict) and "value" in r["answer"] for r in small)
    assert any(isinstance(r["answer"], str) for r in small)
    agent = json.loads((SR / "runs" / "agent-pipeline.json").read_text(encoding="utf-8"))
    items = agent["items"]
    assert isinstance(items, dict) and all("response" in v for v in items.values())
    assert len(gold_ids - set(items)) == 2 and set(items) <= gold_ids
    statuses = collections.Counter(v.get("status") for v in items.values())
    assert statuses["context_overflow"] >= 1 and statuses["error"] >= 1
    texts = [v["response"] for v in items.values()]
    assert any("<script>" in t for t in texts)
    assert any(re.search(r"!\[[^\]]*\]\(http://example\.invalid/", t) for t in texts)
    assert any("**" in t for t in texts) and any(t.startswith("- ") for t in texts)


# ----------------------------------------------------------------------------- disagreement categories


def test_readme_category_table_matches_the_scorer(gold):
    """sample_runs/README.md's table of primary disagreement categories per run is what
    scoring/categories.py finds (profile xldocbench), and every category has at least two examples."""
    from scoring.categories import CATEGORY_IDS, categorize
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    text = (SR / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- categories:start -->"):text.index("<!-- categories:end -->")]
    lines = [line for line in block.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[0] == "category" and header[-1] == "all"
    runs = header[1:-1]
    table = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0].strip("`")] = [int(x) for x in cells[1:]]
    # extraction_miss needs a raw response beside the answer, which XL-DocBench runs do not have
    assert list(table) == [c for c in CATEGORY_IDS if c != "extraction_miss"]
    items = load_gold([SR / f for f in GOLD_FILES]).items
    for k, run in enumerate(runs):
        path = next(p for p in (SR / "runs").iterdir() if p.name.rsplit(".", 1)[0] == run)
        res = evaluate(items, load_predictions(path).items, profile="xldocbench", name=run)
        found = collections.Counter(categorize(r.judgement)[0] for r in res.results)
        assert {c: v[k] for c, v in table.items()} == {c: found.get(c, 0) for c in table}, run
        assert not found.get("extraction_miss"), run
    assert sorted(runs) == sorted(p.name.rsplit(".", 1)[0] for p in (SR / "runs").iterdir() if p.is_file())
    for c, v in table.items():
        assert v[-1] == sum(v[:-1]) and v[-1] >= 2, c

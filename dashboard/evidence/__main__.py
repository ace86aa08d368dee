"""`docbench-lens evidence` (alias `python -m dashboard.evidence`): the Evidence page's location work on a
whole benchmark.

    docbench-lens evidence --benchmark DIR --output boxes.jsonl [--runs FILE_OR_DIR ... --answers-output answers.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from dashboard.core.paths import DocLocation, Sources
from dashboard.data.workspace import load_workspace, prediction_files
from dashboard.documents import ocr, pdf
from dashboard.evidence.locate import answer_row, gold_rows, missing_message, question_paths
from scoring.model import GoldQuestion


def _benchmark_paths(bench: Path) -> tuple[list[GoldQuestion], dict[str, DocLocation], Path, list[str]]:
    """The benchmark as the app reads it (dashboard.data.workspace: any layout it knows, documents
    located and checked, `pdf_type: scanned` documents registered for OCR), and its problems as lines.
    A document the load check found unusable is still read here, so that each of its rows says why
    (this PDF is damaged: ...) instead of "document not found"."""
    ws = load_workspace(Sources(benchmark=bench))
    located = {doc_id: replace(loc, path=loc.file) if loc.path is None and loc.unusable and loc.file else loc
               for doc_id, loc in ws.locations.items()}
    notes = [f"{p.file}:{p.line or ''} {p.message}" if p.line else f"{p.file}: {p.message}"
             for p in (*ws.discovery.problems, *ws.problems, *ws.gold.problems, *ws.documents.problems)
             if p.kind != "missing PDFs"]
    ocr.register_scanned(ocr.scanned_paths(ws.documents.items, ws.locations))
    return ws.gold.items, located, ws.discovery.docs_dir or bench / "docs", notes


def _gold_rows(q: GoldQuestion, paths: dict[str, Path | None]) -> list[dict]:
    """gold_rows, and for a failure it did not foresee one row per document saying so: one question's
    (one document's) problem never ends the run."""
    try:
        return gold_rows(q, paths)
    except Exception as exc:  # reported in the rows, never a traceback
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        return [{"question_id": q.qid, "document_id": ref.document_id, "page": None, "quote": "", "rects": [],
                 "method": "error", "score": 0.0, "item": None, "locator": "", "message": why} for ref in q.documents]


def _answer_row(q: GoldQuestion, run: str, pred, paths: dict[str, Path | None]) -> dict:
    """answer_row, and for a failure it did not foresee a row whose message says so."""
    try:
        return answer_row(q, run, pred, paths)
    except Exception as exc:  # reported in the row, never a traceback
        return {"question_id": q.qid, "run": run, "answer": pred.text if pred is not None else "",
                "answer_pages_evidence": [], "answer_pages_elsewhere": [], "in_document": None, "location": "error",
                "documents": {}, "message": f"{type(exc).__name__}: {str(exc)[:200]}"}


EPILOG = """\
outputs (JSON lines):
  --output          one row per gold evidence item with a quote, per page: question_id, document_id,
                    page, quote, rects ([x0, y0, x1, y1] in PDF points), method (how the quote
                    was found, or why not), score (0-1), item, locator, message, ocr
  --answers-output  one row per question x run: question_id, run, answer, answer_pages_evidence,
                    answer_pages_elsewhere, in_document, location, documents, message, ocr

exit codes:
  0  the rows were written (a quote or document not found is a row that says why)
  1  no such benchmark folder, or no gold question in it
  2  usage: an unknown option or a bad value (--runs without --answers-output)
"""


def build_parser(prog: str = "python -m dashboard.evidence") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Locate gold evidence quotes (and runs' answers) on the pages of a "
                                                       "benchmark's documents.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", required=True, help="benchmark folder (gold *.jsonl, documents.jsonl, docs/)")
    ap.add_argument("--output", required=True, help="JSONL: one row per evidence item with a quote and page")
    ap.add_argument("--runs", nargs="+", action="extend", default=[], help="prediction files or folders")
    ap.add_argument("--answers-output", help="JSONL: one row per question × run with the answer's location")
    ap.add_argument("--parallel-min-pages", type=int, default=pdf.PARALLEL_MIN_PAGES, metavar="N",
                    help=f"documents of at least N pages are read by worker processes (default {pdf.PARALLEL_MIN_PAGES})")
    return ap


def main(argv: Sequence[str] | None = None, prog: str = "python -m dashboard.evidence") -> int:
    from dashboard.data.workspace import run_name
    from scoring.loaders import load_predictions
    from scoring.mmlongbench import load_results
    from scoring.mmlongbench import run_name as result_run_name

    ap = build_parser(prog)
    args = ap.parse_args(argv)
    pdf.PARALLEL_MIN_PAGES = max(1, args.parallel_min_pages)
    bench = Path(args.benchmark)
    if not bench.is_dir():
        print(f"ERROR: {bench}: no such folder", file=sys.stderr)
        return 1
    if args.runs and not args.answers_output:
        ap.error("--runs needs --answers-output")
    questions, locations, docs_dir, notes = _benchmark_paths(bench)
    for n in notes:
        print(f"warning: {n}", file=sys.stderr)
    if not questions:
        print(f"ERROR: no gold questions in {bench}", file=sys.stderr)
        return 1
    paths = {q.qid: question_paths(q, locations, bench, docs_dir) for q in questions}
    for doc_id, loc in locations.items():
        if loc.path is None and not any(paths[q.qid].get(doc_id) for q in questions if doc_id in q.document_ids):
            print(f"warning: {missing_message(doc_id, docs_dir, loc.how)}", file=sys.stderr)
    counts: dict[str, int] = {}
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for q in questions:
            for row in _gold_rows(q, paths[q.qid]):
                where = paths[q.qid].get(row["document_id"])
                row["ocr"] = where is not None and row["page"] is not None and ocr.was_ocr(where, row["page"])
                counts[row["method"]] = counts.get(row["method"], 0) + 1
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{out}: {sum(counts.values())} rows ({', '.join(f'{k} {v}' for k, v in sorted(counts.items())) or 'none'})")
    if args.answers_output:
        files = [f for p in args.runs for f in prediction_files(Path(p))]
        where = Path(args.answers_output)
        where.parent.mkdir(parents=True, exist_ok=True)
        tally: dict[str, int] = {}
        with open(where, "w", encoding="utf-8", newline="\n") as fh:
            mmlongbench = any(q.qid.startswith("mmlongbench_") for q in questions[:1])
            for f in files:
                loaded = load_results(f, questions) if mmlongbench else load_predictions(f)
                for p in loaded.problems:
                    print(f"warning: {p.file}:{p.line or ''} {p.message}", file=sys.stderr)
                preds = {p.qid: p for p in loaded.items}
                run = result_run_name(f) if mmlongbench else run_name(f)
                for q in questions:
                    row = _answer_row(q, run, preds.get(q.qid), paths[q.qid])
                    row["ocr"] = any(ocr.status(p).pages for p in paths[q.qid].values() if p is not None)
                    tally[str(row["location"])] = tally.get(str(row["location"]), 0) + 1
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{where}: {sum(tally.values())} rows ({', '.join(f'{k} {v}' for k, v in sorted(tally.items()))})")
    if pdf.PARALLEL_READS:
        print(f"{len(pdf.PARALLEL_READS)} document{'s' if len(pdf.PARALLEL_READS) != 1 else ''} read by worker processes",
              file=sys.stderr)
    if ocr.any_missing(p for ps in paths.values() for p in ps.values() if p is not None):
        print(f"warning: pages without a text layer were not searched: {ocr.NO_TESSERACT} ({ocr.INSTALL_HINT})",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

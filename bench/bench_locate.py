"""Locating every answer on a benchmark of image-only slide decks (dashboard/evidence/locating.py,
the overview's and the explorer's "Locate answers" on large data), cold cache against warm.

    .venv/bin/python bench/bench_locate.py [--decks 8] [--pages 12] [--text-docs 2] [--runs 3]

A generated benchmark in a temporary folder: `--decks` image-only 16:9 decks of `--pages` slides
each (each slide drawn with text, rendered at 150 dpi and inserted as a picture, so Tesseract has
work), `--text-docs` PDFs with a text layer (40 pages each), three questions a document, `--runs`
runs answering them (right, on another page, invented). Locating runs as the app runs it: one
background job reading the documents one at a time (the documents of the first question in view
first), then the evidence table of every (question, run).

Figures printed: wall and CPU seconds (this process, and the OCR worker processes, counted once
they exit), the load average before and after, the time until the documents in view are read,
and the progress line's estimate of the time left when a quarter and half of the OCR pages were
read against the time it then actually took. "cold": a fresh cache folder, nothing in memory;
"warm": the process's memory emptied (a restart), the disk caches (ocr/, doctext/) kept.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-locate-")

import pymupdf  # noqa: E402

from dashboard.documents import ocr, pdf  # noqa: E402
from dashboard.evidence import locating  # noqa: E402
from dashboard.evidence.grounding import evidence_table  # noqa: E402
from dashboard.evidence.progress import describe  # noqa: E402
from scoring.model import DocRef, GoldQuestion, Prediction  # noqa: E402

SLIDE_W, SLIDE_H = 720, 405


FIRST = ("Ada", "Boris", "Chiara", "Dalia", "Emil", "Farah", "Goran", "Hana", "Ivo", "Junko", "Kofi", "Lena", "Mikael",
         "Nadia")
LAST = ("Okafor", "Petrova", "Quist", "Rahman", "Sandoval", "Tanaka", "Ueda", "Varga")


def lead(d: int, k: int) -> str:
    """A project lead's name for page k of document d (the answer of its questions)."""
    return f"{FIRST[k % len(FIRST)]} {LAST[d % len(LAST)]}"


def make_deck(path: Path, d: int, pages: int) -> Path:
    """An image-only deck: each slide drawn with text, rendered at 150 dpi and inserted as a picture."""
    out = pymupdf.open()
    for k in range(1, pages + 1):
        src = pymupdf.open()
        s = src.new_page(width=SLIDE_W, height=SLIDE_H)
        s.insert_text((40, 60), f"Harbour programme {d} review {k}", fontname="hebo", fontsize=24)
        for j, b in enumerate([f"Berth {k} throughput rose to {1000 + 37 * k:,} containers",
                               f"Dredging budget EUR {k * 1.5:.1f} million", f"Project lead: {lead(d, k)}"]):
            s.insert_text((60, 120 + 44 * j), "- " + b, fontname="helv", fontsize=18)
        png = s.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
        src.close()
        page = out.new_page(width=SLIDE_W, height=SLIDE_H)
        page.insert_image(page.rect, stream=png)
    out.save(path)
    out.close()
    return path


def make_text(path: Path, d: int, pages: int) -> Path:
    out = pymupdf.open()
    for k in range(1, pages + 1):
        page = out.new_page()
        page.insert_text((72, 72), f"Annual report {d}, section {k}", fontsize=14)
        page.insert_text((72, 110), f"Project lead: {lead(d, k)}; budget EUR {k * 2.5:.1f} million", fontsize=11)
    out.save(path)
    out.close()
    return path


def benchmark(folder: Path, decks: int, pages: int, text_docs: int, runs: int):
    paths: dict[str, Path] = {}
    questions: list[GoldQuestion] = []
    for d in range(decks + text_docs):
        doc_id = f"doc{d:03d}"
        n = pages if d < decks else 40
        paths[doc_id] = (make_deck if d < decks else make_text)(folder / f"{doc_id}.pdf", d, n)
        for k in (2, n // 2, n):
            questions.append(GoldQuestion(qid=f"{doc_id}-{k}", question="Who leads the project?",
                                          answers=(lead(d, k),), answer_format="Str",
                                          verification_rule="casefold_exact_match", split="single_doc", metadata={},
                                          documents=(DocRef(doc_id, evidence_pages=(k,)),)))
    preds: dict[str, dict[str, Prediction]] = {}
    for r in range(runs):
        mine = {}
        for j, q in enumerate(questions):
            d, k = q.qid.split("-")
            text = [q.answers[0], lead(int(d[3:]), max(1, int(k) - 1)), "Captain Nemo"][(j + r) % 3]
            mine[q.qid] = Prediction(q.qid, text, "success")
        preds[f"run{r}"] = mine
    return paths, questions, preds


def workers_cpu() -> float:
    """CPU seconds of the OCR worker processes (forkserver children, not ours: read from /proc) and
    of the Tesseract processes they waited for."""
    pool = ocr._POOL
    total = 0.0
    for pid in list(getattr(pool, "_processes", None) or {}):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime + workers_cpu()


def restart() -> None:
    ocr.shutdown()
    ocr.clear()
    pdf.clear_caches()


def locate(label: str, paths: dict[str, Path], questions: list[GoldQuestion], preds, in_view: Path) -> dict:
    docs = list(paths.values())
    first = [in_view]  # the question in view: the last deck (read first, not in gold order)
    load0 = os.getloadavg()[0]
    c0 = cpu()
    t0 = time.perf_counter()
    loc = locating.start((label, str(docs[0])), docs, first,
                         lambda: evidence_table(questions, preds, lambda q: {r.document_id: paths[r.document_id]
                                                                               for r in q.documents}))
    job = loc.job
    assert job is not None
    seen: float | None = None
    checks: list[tuple[float, float | None, int]] = []  # (elapsed, estimate, OCR pages read)
    marks = []
    tick = threading.Event()
    while not job.finished.is_set():
        t = loc.tally()
        now = time.perf_counter() - t0
        if seen is None and loc.readings.get(first[0]) is not None and loc.readings[first[0]].finished:
            seen = now
        if t.ocr_expected and not marks and t.ocr_read >= t.ocr_expected / 4:
            marks.append(("a quarter", now, loc.seconds_left(), describe(t, loc.seconds_left())))
        elif len(marks) == 1 and t.ocr_read >= t.ocr_expected / 2:
            marks.append(("half", now, loc.seconds_left(), describe(t, loc.seconds_left())))
        checks.append((now, loc.seconds_left(), t.ocr_read))
        tick.wait(0.2)  # a benchmark's poll, as the page polls
    wall = time.perf_counter() - t0
    assert not job.failed, job.error
    table = job.value
    c1 = cpu()  # before the workers exit (their CPU is read from /proc)
    restart()
    load1 = os.getloadavg()[0]
    t = loc.tally()
    located = table["answer_location"].value_counts().to_dict()  # type: ignore[union-attr]
    print(f"{label}: {wall:.1f} s wall; CPU {c1[0] - c0[0]:.1f} s here + {c1[1] - c0[1]:.1f} s OCR workers; "
          f"load {load0:.1f} -> {load1:.1f}; documents in view read after {wall if seen is None else seen:.1f} s; "
          f"{t.docs_total} documents, {t.pages_total} pages, {t.ocr_found} without a text layer; "
          f"{len(table)} answers located {located}")
    for name, at, est, line in marks:
        actual = wall - at
        print(f"  at {name} of the OCR pages ({at:.1f} s): estimate {'none' if est is None else f'{est:.1f} s'}, "
              f"actually {actual:.1f} s left -- \"{line}\"")
    return {"wall": wall}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decks", type=int, default=8)
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--text-docs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-locate-docs-"))
    paths, questions, preds = benchmark(folder, args.decks, args.pages, args.text_docs, args.runs)
    print(f"{args.decks} image-only decks x {args.pages} slides + {args.text_docs} text PDFs x 40 pages, "
          f"{len(questions)} questions x {args.runs} runs; OCR at {ocr.DPI} dpi on {ocr._workers()} workers; "
          f"cache {ocr.cache_dir()}")
    last_deck = paths[f"doc{args.decks - 1:03d}"]
    cold = locate("cold (fresh cache)", paths, questions, preds, last_deck)
    warm = locate("warm (restart, disk caches kept)", paths, questions, preds, last_deck)
    print(f"warm / cold wall: {warm['wall'] / cold['wall']:.3f}")


if __name__ == "__main__":
    main()

"""Whole-document text (dashboard/documents/pdf.py doc_text) and the overview's first draw.

    .venv/bin/python bench/bench_doctext.py [--pages 1000] [--repeat 5] [--no-overview]

Figures printed (a fresh cache folder under a temporary directory; "restart" means the process's
memory caches emptied -- pdf.clear_caches(), ocr.clear() -- the disk cache kept):

  a generated text PDF of --pages pages: doc_text first read (worker processes started beforehand),
  again from memory, again after a restart (from <cache>/doctext/, the file's sha256 included), and
  the ratios of the three
  the overview (AppTest) on a copy of sample_runs/ whose doc_000003.pdf is padded to --pages pages,
  the evidence metrics not computed: when everything but "Where the answers are" is drawn (the
  failure-modes section, the page's last, has returned) and when the script ends (the section
  filled) -- as the page does now, and as it did before (the section computed in its place, which
  the bench reproduces by computing it inside evidence_metrics_ready); then the same after a
  restart (document text on disk, metrics and text not in memory).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
CACHE = Path(tempfile.mkdtemp(prefix="bench-doctext-"))
os.environ["LENS_CACHE_DIR"] = str(CACHE)

import pymupdf  # noqa: E402

from dashboard.documents import ocr, pdf  # noqa: E402

WORDS = ("inspection torque bearing housing clearance lubricant schedule valve pressure rated assembly "
         "maintenance interval coupling alignment seal gasket flange bolt").split()


def make_manual(path: Path, pages: int, first: Path | None = None) -> Path:
    """A text PDF of `pages` pages (about 40 lines of words and figures each); `first`: its pages
    come first, the rest padded."""
    doc = pymupdf.open()
    if first is not None:
        doc.insert_pdf(pymupdf.open(first))
    while doc.page_count < pages:
        k = doc.page_count + 1
        page = doc.new_page()
        lines = [f"Section {k}.{j} " + " ".join(WORDS[(k * 7 + j * 3 + i) % len(WORDS)] for i in range(9))
                 + f" {k * 13 + j:,}.{j} Nm" for j in range(40)]
        page.insert_text((50, 50), "\n".join(lines), fontsize=8)
    doc.save(path)
    doc.close()
    return path


def restart() -> None:
    pdf.clear_caches()
    ocr.clear()


def timed(fn, repeat: int, before=None) -> list[float]:
    out = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:9.1f} ms (max {max(xs) * 1000:.1f})"


def doctext(pages: int, repeat: int, work: Path) -> None:
    manual = make_manual(work / "manual.pdf", pages)
    pdf.warm_up()
    print(f"== doc_text of a {pages}-page text PDF ({manual.stat().st_size / 1e6:.1f} MB)")

    def clear_all() -> None:
        restart()
        shutil.rmtree(pdf.doctext_dir(), ignore_errors=True)

    first = timed(lambda: pdf.doc_text(manual), repeat, clear_all)
    memory = timed(lambda: pdf.doc_text(manual), max(repeat, 20))
    disk = timed(lambda: pdf.doc_text(manual), repeat, restart)
    sha = timed(lambda: ocr.file_sha256(manual), repeat, ocr.clear)
    entry = next(pdf.doctext_dir().glob("*.json"))
    m1, m2, m3 = (statistics.median(x) for x in (first, memory, disk))
    print(f"first read (PDF, worker processes)  {ms(first)}")
    print(f"in memory                           {ms(memory)}")
    print(f"after a restart (disk)              {ms(disk)}   of which the file's sha256 {ms(sha)}")
    print(f"disk entry {entry.stat().st_size / 1e6:.2f} MB; first : disk : memory = "
          f"{m1 / m3:.0f} : 1 : {m2 / m3:.2g} (first read {m1 / m3:.1f}x the disk hit)")


def overview(pages: int, work: Path) -> None:
    import pytest

    from app_kit import app_on  # noqa: E402  (tests/app_kit.py: AppTest on a benchmark folder)
    from dashboard.annotations import panel as annotations_panel
    from dashboard.evidence import panel as evidence_panel

    big = make_manual(work / "doc_000003.pdf", pages, first=ROOT / "sample_runs" / "docs" / "doc_000003.pdf")
    marks: dict[str, float] = {}
    real_modes, real_ready = annotations_panel.failure_modes, evidence_panel.evidence_metrics_ready

    def modes(*args, **kwargs):
        out = real_modes(*args, **kwargs)
        marks.setdefault("drawn", time.perf_counter())
        return out

    def old_ready(ctx) -> bool:  # the old page: the section computed where it stands, before the rest
        evidence_panel.evidence_metrics(ctx)
        return True

    annotations_panel.failure_modes = modes
    copies = iter(range(100))

    def run(label: str, ready=real_ready, cold: bool = True) -> None:
        bench = work / f"bench{next(copies)}"
        shutil.copytree(ROOT / "sample_runs", bench)
        shutil.copy(big, bench / "docs" / "doc_000003.pdf")
        os.utime(bench / "docs" / "doc_000003.pdf", ns=(1, 1))  # the same file every time (its text's key)
        restart()
        if cold:
            shutil.rmtree(pdf.doctext_dir(), ignore_errors=True)
        evidence_panel.evidence_metrics_ready = ready
        marks.clear()
        with pytest.MonkeyPatch.context() as mp:
            t = time.perf_counter()
            at = app_on(mp, bench, timeout=600)
            end = time.perf_counter()
        evidence_panel.evidence_metrics_ready = real_ready
        assert not at.exception, [e.value for e in at.exception]
        print(f"{label:46s} the rest drawn {marks['drawn'] - t:6.2f} s   section filled {end - t:6.2f} s")

    print(f"== overview (AppTest, sample_runs/ with doc_000003.pdf padded to {pages} pages), metrics not computed")
    run("warm-up (imports, scoring cache)")
    for k in range(2):  # alternated, so that neither gains from running second
        now = lambda: run("now: document text not on disk", cold=True)  # noqa: E731
        before = lambda: run("before: the section computed in its place", ready=old_ready, cold=True)  # noqa: E731
        for one in ((now, before) if k == 0 else (before, now)):
            one()
    run("now, after a restart: document text on disk", cold=False)
    run("before, after a restart: document text on disk", ready=old_ready, cold=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-overview", action="store_true")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    work = Path(tempfile.mkdtemp(prefix="bench-doctext-work-"))
    try:
        doctext(args.pages, args.repeat, work)
        if not args.no_overview:
            overview(args.pages, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(CACHE, ignore_errors=True)
        pdf.stop_workers()


if __name__ == "__main__":
    main()

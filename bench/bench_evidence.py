"""Evidence viewer speed on a generated long PDF (default 2,000 pages, A4, ~45 lines of text each).

    .venv/bin/python bench/bench_evidence.py [--pages 2000] [--repeat 5]

The PDF is written once to bench/out/long-<pages>.pdf (git-ignored) and reused. Figures (median,
and max, of --repeat runs; "cold" means the text and page caches emptied first):

  first render of a page (PNG at 150 %)            target < 300 ms
  the same page again, through evidence.panel's cache target <  30 ms
  locate a quote on its page, page text not cached  target <  50 ms  (and with the page text cached)
  whole-document answer search, first time          target <   2 s  (read by worker processes: cold, when
                                                    the workers are still to start; warm, as after the
                                                    Evidence page has started them; and in one process)
  the same search with the document's text cached   target <  50 ms
  two sessions (threads) rendering at once: each gets its own page (checked byte for byte), and
  the wall time against the same renders one after the other
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pymupdf  # noqa: E402

from dashboard.documents import pdf  # noqa: E402
from dashboard.evidence import locate as ev  # noqa: E402
from dashboard.evidence.render import render_page  # noqa: E402
from scoring.model import DocRef, GoldQuestion  # noqa: E402

OUT = ROOT / "bench" / "out"
WORDS = ("harbour quay vessel berth cargo tonnage contract tariff dredging pilotage survey ballast crane gantry "
         "container terminal freight schedule manifest customs clearance inspection maintenance budget revenue "
         "margin forecast capacity throughput segment operating review board committee regulation annex article").split()
QUOTE_PAGE, QUOTE = 1234, "The quarterly inspection of the north breakwater found 17 cracked armour units."
ANSWER_PAGE, ANSWER = 1789, "Kestrel Point Lighthouse"


def make_pdf(pages: int) -> Path:
    path = OUT / f"long-{pages}.pdf"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random("bench-evidence")
    doc = pymupdf.open()
    t = time.perf_counter()
    for k in range(1, pages + 1):
        page = doc.new_page(width=595, height=842)
        lines = []
        for _ in range(45):
            lines.append(" ".join(rng.choice(WORDS) for _ in range(11)).capitalize() + f" {rng.randint(10, 9999):,}.")
        if k == QUOTE_PAGE:
            lines[20] = QUOTE
        if k == ANSWER_PAGE:
            lines[30] = f"Supplies for the {ANSWER} are delivered monthly."
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 800), "\n".join(lines), fontname="helv", fontsize=9)
        page.insert_text((290, 820), str(k), fontname="helv", fontsize=8)
    doc.save(path, garbage=3, deflate=True)
    doc.close()
    print(f"generated {path.relative_to(ROOT)}: {pages} pages, {path.stat().st_size / 1e6:.1f} MB in "
          f"{time.perf_counter() - t:.1f} s")
    return path


def timed(fn, repeat: int, before=None) -> list[float]:
    out = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def line(name: str, ms: list[float], target: float | None) -> None:
    med, worst = statistics.median(ms), max(ms)
    mark = "" if target is None else (" ✓" if med < target else " ✗")
    goal = f"target < {target:,.0f} ms" if target else ""
    print(f"{name:58s} {med:9.1f} ms  (max {worst:8.1f})  {goal}{mark}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    path = make_pdf(args.pages)
    from dashboard.evidence import panel as cache

    mtime = path.stat().st_mtime_ns
    pages = iter(range(100, 100 + 10 * args.repeat, 10))
    line("first render of a page (PNG, zoom 1.5)", timed(lambda: render_page(path, next(pages), 1.5), args.repeat), 300)
    cache.page_png(str(path), mtime, 77, 1.5)
    line("cached render (dashboard.evidence.panel.page_png)", timed(lambda: cache.page_png(str(path), mtime, 77, 1.5), args.repeat), 30)

    def locate():
        loc = ev.locate_in_document(path, QUOTE_PAGE, QUOTE)
        assert loc.method == ev.EXACT, loc

    line("locate a quote, page text not cached", timed(locate, args.repeat, pdf.clear_caches), 50)
    line("locate a quote, page text cached", timed(locate, args.repeat), 50)

    def fuzzy():
        loc = ev.locate_in_document(path, QUOTE_PAGE, QUOTE.replace("breakwater", "breakwter"))
        assert loc.method == ev.FUZZY, loc

    line("locate a quote with a typo (fuzzy), page text cached", timed(fuzzy, args.repeat), 50)
    q = GoldQuestion("q", "?", ("x",), "Str", "", "single_doc", {}, documents=(DocRef("long", evidence_pages=(5,)),))

    def search():
        loc = ev.locate_answer(ANSWER, q, {"long": path})
        assert loc.location == ev.OTHER_PAGE and loc.flat("other") == [ANSWER_PAGE], loc

    line(f"answer search, first time, workers not started ({args.pages} pages)", timed(search, 1, pdf.clear_caches), 2000)
    pdf.warm_up()  # as the Evidence page does when it opens
    line(f"answer search, first time, workers started ({args.pages} pages)", timed(search, max(2, args.repeat // 2),
                                                                             pdf.clear_caches), 2000)
    saved, pdf.PARALLEL_MIN_PAGES = pdf.PARALLEL_MIN_PAGES, 10 ** 9
    line("answer search, first time, in one process (for comparison)", timed(search, 1, pdf.clear_caches), None)
    pdf.PARALLEL_MIN_PAGES = saved
    search()
    line("whole-document answer search, text cached", timed(search, args.repeat), 50)

    def number_search():
        loc = ev.locate_answer("1,234,567", q, {"long": path})
        assert loc.location == ev.COMPUTED, loc  # the gold "x" cannot be looked for: computed or invented untold

    line("whole-document number search (not there), text cached", timed(number_search, args.repeat), 50)

    # two sessions at once
    mine = {p: render_page(path, p, 1.5).png for p in (300, 301, 302, 303, 304, 305)}
    t = time.perf_counter()
    for p in mine:
        render_page(path, p, 1.5)
    serial = time.perf_counter() - t
    got: dict[int, bytes] = {}

    def session(ps):
        for p in ps:
            got[p] = render_page(path, p, 1.5).png

    threads = [threading.Thread(target=session, args=(ps,)) for ps in ((300, 302, 304), (301, 303, 305))]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    both = time.perf_counter() - t
    ok = all(got[p] == mine[p] for p in mine)
    print(f"{'two sessions rendering 3 pages each at once':58s} {both * 1000:9.1f} ms  (one after the other "
          f"{serial * 1000:.1f} ms, ratio {both / serial:.2f}); each got its own pages: {ok}")
    if not ok:
        raise SystemExit("a session got another session's page")


if __name__ == "__main__":
    main()

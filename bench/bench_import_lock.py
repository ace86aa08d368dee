"""A large annotations import beside other writers (issue 29, section 5): how long another
session's save waits while --notes notes are imported, and what the batches cost the import.

    .venv/bin/python bench/bench_import_lock.py [--notes 250000] [--batch 5000] [--every 0.2] [--postgres URL]

An SQLite file in a temporary folder (and, with --postgres URL, an empty PostgreSQL database). Two
writers save a note every --every seconds while `merge` imports the notes, each save's time taken:
one in this process sharing the import's store (another session of the same app server) and one in
a child process with a store of its own (the command line importing while the app runs). Prints
the import's time and each writer's saves p50 / p95 / max; no assertion on time. Times in ms.

Figures (2 shared cores, load average 4-5, 250,000 notes, batches sized to hold the lock ~0.2 s;
PostgreSQL 15 from tests/pg_kit.py with fsync on). Before (one transaction) the issue measured
17 s for the import and saves waiting up to 6.9 s.

    SQLite      import 17.3 s   same process p50 108 / p95 258 / max 344   other process p50 58 / p95 342 / max 442
    PostgreSQL  import 38.0 s   same process p50 117 / p95 271 / max 403   other process p50 118 / p95 289 / max 400

(Without fresh statistics between batches, PostgreSQL read the growing table whole for each
batch's lookups: 30,000 notes took 18.9 s and saves waited up to 1.4 s; with ANALYZE each time the
import doubled, 5.1 s and 0.17 s.)
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashboard.annotations.records import Note  # noqa: E402
from dashboard.annotations.store import AnnotationStore  # noqa: E402

BENCH = "bench-import-lock"


def saves(store: AnnotationStore, who: str, every: float, stop, out: list[float]) -> None:
    """Save a new note every `every` seconds until `stop` is set; each save's time in ms into `out`."""
    i = 0
    while not stop.is_set():
        started = time.perf_counter()
        store.save_note(BENCH, f"{who}-{i}", "", text=f"saved during the import {i}", author=who, expected_revision=0)
        out.append((time.perf_counter() - started) * 1000)
        i += 1
        stop.wait(every)


def child(where: str, every: float, stop, queue) -> None:
    out: list[float] = []
    saves(AnnotationStore(where), "other-process", every, stop, out)
    queue.put(out)


def figures(times: list[float]) -> str:
    if not times:
        return "no save"
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{len(times)} saves, p50 {statistics.median(times):.0f}, p95 {p95:.0f}, max {max(times):.0f}"


def run(where: str, label: str, count: int, batch: int, every: float) -> None:
    store = AnnotationStore(where)
    store.import_batch = batch or None
    notes = [Note(BENCH, f"imp-{i:06d}", "run", f"imported note {i}", ("reasoning_error",), "Importer",
                  "2024-05-01T12:00:00.000000Z", "2024-05-01T12:00:00.000000Z", 1) for i in range(count)]
    ctx = multiprocessing.get_context("spawn")
    stop_child, queue = ctx.Event(), ctx.Queue()
    other = ctx.Process(target=child, args=(where, every, stop_child, queue), daemon=True)
    other.start()
    time.sleep(2.0)  # the child has imported its modules and saved once
    stop_here, here = threading.Event(), []
    thread = threading.Thread(target=saves, args=(store, "same-process", every, stop_here, here), daemon=True)
    thread.start()
    started = time.perf_counter()
    counts = store.merge(notes)
    took = time.perf_counter() - started
    stop_here.set()
    stop_child.set()
    thread.join(60)
    there = queue.get(timeout=120)
    other.join(60)
    print(f"{label}: imported {counts.added:,} notes in {took:.1f} s (batches of {batch or 'about 0.2 s'}, pause {store.import_pause * 1000:.0f} ms "
          f"on SQLite)")
    print(f"  a session of the same server: {figures(here)}")
    print(f"  another process:              {figures(there)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=250_000)
    ap.add_argument("--batch", type=int, default=0, help="records per batch (0: sized by time, the default)")
    ap.add_argument("--every", type=float, default=0.2)
    ap.add_argument("--postgres", metavar="URL")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(str(Path(tmp) / "a.sqlite3"), "SQLite", args.notes, args.batch, args.every)
    if args.postgres:
        run(args.postgres, "PostgreSQL", args.notes, args.batch, args.every)


if __name__ == "__main__":
    main()

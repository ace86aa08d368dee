"""The annotations database on PostgreSQL beside SQLite (issue 28): per call, p50 and p95.

    .venv/bin/python bench/bench_database.py [--postgres URL] [--calls 300] [--writers 20] [--per-writer 30]
                                             [--notes 20000]

For each dialect (an SQLite file in a temporary folder; a PostgreSQL database: --postgres URL, an
empty database the user may create tables in, else a throwaway server started from Debian's
binaries by tests/pg_kit.py with fsync and synchronous commit on, and removed afterwards):

(a) one writer: `save_note` of --calls new notes (two tags each), then `notes(benchmark,
    question_id=q)` -- reading a question's notes, as the question detail does -- of --calls
    random questions;
(b) --writers threads at once, each saving --per-writer new notes, sharing the store as the app's
    sessions do: every call's time (waiting for the other writers included) and the writes per second;
(c) with --notes notes in the database (added by one import, `merge`): `notes(benchmark)` and
    `tag_usage(benchmark)`, what the overview's failure-mode counts read, best of 5.

Prints figures only; no assertion on time. Times in milliseconds.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashboard.annotations.records import DEFAULT_TAGS, Note  # noqa: E402
from dashboard.annotations.store import AnnotationStore  # noqa: E402

BENCH = "bench-database"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(what: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"{what:<46} p50 {pct(ms, 0.5):7.2f}  p95 {pct(ms, 0.95):7.2f}  (n={len(ms)})"


def one_writer(store: AnnotationStore, calls: int, rng: random.Random) -> dict[str, list[float]]:
    saves, reads = [], []
    for i in range(calls):
        tags = rng.sample(DEFAULT_TAGS, 2)
        t = time.perf_counter()
        store.save_note(BENCH, f"q{i}", "run-a", text=f"note {i}: the model read page {i % 40}", tags=tags, author="bench",
                        expected_revision=0)
        saves.append(time.perf_counter() - t)
    for _ in range(calls):
        q = f"q{rng.randrange(calls)}"
        t = time.perf_counter()
        store.notes(BENCH, question_id=q)
        reads.append(time.perf_counter() - t)
    return {"save_note, 1 writer": saves, "notes of one question, 1 reader": reads}


def many_writers(store: AnnotationStore, writers: int, per_writer: int) -> tuple[list[float], float]:
    times: list[float] = []
    lock = threading.Lock()

    def work(k: int) -> None:
        mine = []
        for i in range(per_writer):
            t = time.perf_counter()
            store.save_note(BENCH, f"w{k}-q{i}", "run-b", text=f"writer {k} note {i}", tags=["reasoning_error"], author=f"w{k}",
                            expected_revision=0)
            mine.append(time.perf_counter() - t)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times, len(times) / (time.perf_counter() - start)


def big_reads(store: AnnotationStore, notes: int, rng: random.Random) -> dict[str, float]:
    stamp = "2024-05-01T12:00:00.000000Z"
    batch = [Note("bench-big", f"q{i:05d}", f"run-{i % 4}", f"note {i}", tuple(sorted(rng.sample(DEFAULT_TAGS, rng.randint(0, 3)))),
                  "bench", stamp, stamp) for i in range(notes)]
    t = time.perf_counter()
    store.merge(batch)
    out = {"import (merge) of the notes, s": time.perf_counter() - t}
    for name, fn in (("notes(benchmark)", lambda: store.notes("bench-big")), ("tag_usage(benchmark)", lambda: store.tag_usage("bench-big"))):
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        out[name] = best
    return out


@contextlib.contextmanager
def postgres_url(given: str | None) -> Iterator[tuple[str, str]]:
    """(a URL to fresh databases' server, a factory hint) -- the given one, else a throwaway server."""
    if given:
        yield given, "given"
        return
    sys.path.insert(0, str(ROOT / "tests"))
    import pg_kit

    with pg_kit.running(durable=True) as server:  # fsync on, as SQLite's commits are
        yield server.fresh_database("bench"), "throwaway"


def measure(store: AnnotationStore, args: argparse.Namespace, label: str) -> None:
    rng = random.Random(28)
    print(f"\n== {label}")
    for what, values in one_writer(store, args.calls, rng).items():
        print(line(what, values))
    times, rate = many_writers(store, args.writers, args.per_writer)
    print(line(f"save_note, {args.writers} writers at once", times) + f"  {rate:,.0f} writes/s")
    for what, value in big_reads(store, args.notes, rng).items():
        print(f"{what + f' ({args.notes:,} notes)':<46} {value * 1000:9.1f} ms" if not what.endswith(", s")
              else f"{what:<46} {value:9.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--postgres", help="postgresql://user:password@host:port/database (an empty database)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--writers", type=int, default=20)
    ap.add_argument("--per-writer", type=int, default=30)
    ap.add_argument("--notes", type=int, default=20_000)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}; {args.calls} calls, {args.writers} writers x {args.per_writer}, {args.notes:,} notes")
    with tempfile.TemporaryDirectory() as folder:
        measure(AnnotationStore(Path(folder) / "bench.sqlite3"), args, "SQLite (a file, WAL)")
    with postgres_url(args.postgres) as (url, how):
        store = AnnotationStore(url)
        if store.problem is not None:
            sys.exit(store.problem.message)
        measure(store, args, f"PostgreSQL ({how} server, {store.path})")
        store.dispose()


if __name__ == "__main__":
    main()

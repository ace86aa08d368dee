"""Run ids and the rows a query reads: the same store filled twice -- once with random 63-bit run ids (the
engine's ids before this bench was written), once with rising ids (`scoring.engine.ingest.new_run_id`) --
then the queries Compare asks of two runs timed against both, side by side.

    .venv/bin/python bench/bench_engine_ids.py [--runs 1000] [--questions 20000] [--repeat 5] [--out DIR]

The stores hold only the `scores` and `doc_sums` tables (the engine's schema, scoring/engine/schema.py),
each run appended in one INSERT as ingest appends it, with random metrics; filling takes about a minute per
1,000 x 20,000 store. DuckDB keeps a [min, max] of run_id per row group (122,880 rows: six runs of 20,000).
With random ids every row group's range spans nearly all ids, so `run_id IN (a, b)` reads them all; with
rising ids a row group holds a narrow range and the others are skipped.

Each repetition opens each store read-only in turn (interleaved: random, rising; the order alternates) and
runs `queries.rows(texts=False)` and `queries.document_sums` for a pair of runs far apart and a pair side
by side; printed: medians of wall and CPU seconds, the rows DuckDB scanned (EXPLAIN ANALYZE), the ratio,
the load average before and after. Memory per store from a fresh process that opens it and reads both
pairs' rows: its resident memory before and after, and what DuckDB holds then. Prints figures only.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.engine import queries as Q  # noqa: E402
from scoring.engine.ingest import new_run_id  # noqa: E402
from scoring.engine.schema import TABLES, columns  # noqa: E402


def fill(path: Path, kind: str, runs: int, n: int) -> None:
    con = duckdb.connect(str(path))
    for table in ("scores", "doc_sums", "runs", "removals", "texts"):
        con.execute(f"CREATE TABLE {table} ({TABLES[table]})")
    rng = np.random.default_rng(7)
    names = columns("scores")
    docs = (np.arange(n) // 20).astype(np.int32)
    for _ in range(runs):
        rid = secrets.randbits(63) if kind == "random" else new_run_id()
        acc = (rng.random(n) < 0.6).astype(np.float64)
        cols = {"run_id": np.full(n, rid, np.int64), "q": np.arange(n, dtype=np.int32), "doc": docs, "accuracy": acc,
                "token_f1": rng.random(n), "anls": rng.random(n), "is_right": acc > 0.5, "attempted": np.ones(n, bool),
                "failed": np.zeros(n, bool), "status": pa.array(["ok"] * n)}
        table = pa.table({c: cols.get(c, pa.nulls(n, pa.int16())) for c in names if c in cols})
        con.register("t", table)
        con.execute(f"INSERT INTO scores ({', '.join(table.column_names)}) SELECT * FROM t")
        con.unregister("t")
        con.execute("INSERT INTO doc_sums SELECT run_id, doc, count(*), sum(accuracy), sum(token_f1), sum(anls), "
                    "sum(is_right::INTEGER) FROM scores WHERE run_id = ? GROUP BY run_id, doc", [rid])
    con.close()


def pairs_of(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int]]:
    ids = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM doc_sums ORDER BY run_id").fetchall()]  # (not scores: that would read every row group)
    k = len(ids)
    return [(ids[k // 10], ids[9 * k // 10]), (ids[k // 2], ids[k // 2 + 1])]


def ask(con: duckdb.DuckDBPyConnection, pair: tuple[int, int]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    Q.rows(con, list(pair), texts=False)
    Q.document_sums(con, *pair)
    return time.perf_counter() - w, time.process_time() - c


def scanned(con: duckdb.DuckDBPyConnection, pair: tuple[int, int]) -> int:
    plan = con.execute("EXPLAIN ANALYZE SELECT q, accuracy FROM scores WHERE run_id IN (?, ?)", list(pair)).fetchall()[0][1]
    found = re.findall(r"TABLE_SCAN.*?([\d,]+) rows", plan, flags=re.S)
    return int(found[-1].replace(",", "")) if found else -1


def _rss_mb() -> int:
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) >> 10


def child(path: str) -> None:
    """One store opened read-only, both pairs' rows read (`queries.rows`): the process's resident memory
    before and after, and what DuckDB holds then (duckdb_memory(): the blocks it read stay cached)."""
    con = duckdb.connect(path, read_only=True)
    pairs = pairs_of(con)
    before = _rss_mb()
    for pair in pairs:
        Q.rows(con, list(pair), texts=False)
    held = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()[0] or 0
    print(before, _rss_mb(), int(held) >> 20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--questions", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    out = args.out or Path(tempfile.mkdtemp(prefix="lens-ids-"))
    out.mkdir(parents=True, exist_ok=True)
    kinds = ("random", "rising")
    paths = {k: out / f"{k}-{args.runs}x{args.questions}.duckdb" for k in kinds}
    for k in kinds:
        if not paths[k].exists():
            t = time.perf_counter()
            fill(paths[k], k, args.runs, args.questions)
            print(f"filled {paths[k].name} in {time.perf_counter() - t:.0f} s")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    times: dict[tuple[str, int], list[tuple[float, float]]] = {(k, i): [] for k in kinds for i in range(2)}
    rows = {}
    for rep in range(args.repeat):
        for k in (kinds if rep % 2 == 0 else kinds[::-1]):
            con = duckdb.connect(str(paths[k]), read_only=True)
            for i, pair in enumerate(pairs_of(con)):
                times[(k, i)].append(ask(con, pair))
                rows[(k, i)] = scanned(con, pair)
            con.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{args.runs} runs x {args.questions:,} questions; Q.rows + Q.document_sums of two runs; medians of {args.repeat}")
    for i, what in enumerate(("runs far apart", "runs side by side")):
        med = {k: (statistics.median(t[0] for t in times[(k, i)]), statistics.median(t[1] for t in times[(k, i)])) for k in kinds}
        print(f"  {what:18s} random ids {med['random'][0]:.3f} s wall {med['random'][1]:.3f} CPU-s, {rows[('random', i)]:,} rows scanned"
              f" | rising ids {med['rising'][0]:.3f} s wall {med['rising'][1]:.3f} CPU-s, {rows[('rising', i)]:,} rows scanned"
              f" | ratio rising/random wall {med['rising'][0] / med['random'][0]:.3f}")
    for k in kinds:
        got = subprocess.run([sys.executable, __file__, "--child", str(paths[k])], capture_output=True, text=True, check=True).stdout
        before, after, held = (int(x) for x in got.split())
        print(f"  a fresh process reading both pairs' rows, {k} ids: resident {before} -> {after} MB, DuckDB holding {held} MB")


if __name__ == "__main__":
    main()

"""The engine (scoring/engine/): ingest throughput, bytes per row on disk, and two questions the pages ask --
the leaderboard and a Compare's per-document sums -- from the engine against the app's in-memory path,
side by side.

    .venv/bin/python bench/bench_engine.py [--questions 20000] [--runs 20] [--repeat 7] [--out DIR]

(a) ingest: a generated campaign (bench/make_campaign.py, --runs x --questions) read by
    `docbench-lens ingest`'s loader; each run scored by the app's path (the shared pool), then written
    by `scoring.engine.ingest.ingest` into an embedded DuckDB file: CPU seconds of the writes (this
    process: DuckDB's threads included) and rows per CPU-second; scoring's wall time apart;
(b) on disk: the DuckDB file's bytes per scored row after the last run (texts and summaries included),
    and the file's size per table;
(c) the leaderboard: `queries.leaderboard` on a new read connection (a restart: opening the file, then
    the query) against `Analysis.leaderboard()` over the runs held in memory (a new Analysis each time,
    as after a profile change; the runs already scored: the app's warm state) -- interleaved repetitions,
    medians of wall and CPU time, their ratio;
(d) a Compare's per-document sums of two runs: `queries.document_sums` against the in-memory path
    (`compare.frames.paired` on the score frame, its clusters, numpy sums per document), the same way.
The load average is printed before and after. Prints figures only; no assertion on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import make_campaign  # noqa: E402

from dashboard.compare import frames as C  # noqa: E402
from dashboard.core.analysis import RECOMPUTED, Analysis, Run  # noqa: E402
from dashboard.core.paths import Sources  # noqa: E402
from dashboard.data.ingest import load, scored_result  # noqa: E402
from dashboard.data.workspace import load_workspace  # noqa: E402
from scoring.engine import queries as Q  # noqa: E402
from scoring.engine.connection import EMBEDDED, Engine, Target  # noqa: E402
from scoring.engine.ingest import ingest  # noqa: E402


def timed(fn) -> tuple[float, float, object]:
    """(wall s, CPU s of this process, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def side_by_side(name: str, a_name: str, a, b_name: str, b, repeat: int) -> None:
    """`repeat` interleaved calls of a and b: medians of wall and CPU time, and their ratio."""
    a(), b()  # warm both (imports, first allocations)
    times: dict[str, list[tuple[float, float]]] = {a_name: [], b_name: []}
    for _ in range(repeat):
        for label, fn in ((a_name, a), (b_name, b)):
            w, c, _ = timed(fn)
            times[label].append((w, c))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    print(f"  {name}: median of {repeat} interleaved")
    for label in (a_name, b_name):
        print(f"    {label:44} wall {1000 * med[label][0]:8.1f} ms   CPU {1000 * med[label][1]:8.1f} ms")
    wa, ca = med[a_name]
    wb, cb = med[b_name]
    print(f"    ratio {b_name} / {a_name}: wall {wb / wa:.2f}x, CPU {cb / max(ca, 1e-9):.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", type=Path, help="the campaign folder (default bench/out/campaign_<q>x<r>)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    bench = make_campaign.ensure(args.questions, args.runs, args.out)
    ns = argparse.Namespace(benchmark=str(bench), runs=[], scores=[], step=None, series=None, profile=None, task="")
    w, c, batch = timed(lambda: load(ns))
    print(f"(a) {bench.name}: read by the ingest loader in {w:.1f} s wall, {c:.1f} CPU-s; {len(batch.candidates)} runs")

    folder = Path(tempfile.mkdtemp(prefix="lens-bench-engine-"))
    engine = Engine(Target(EMBEDDED, database=folder / "lens.duckdb", folder=folder))
    scored, ids = [], {}
    score_wall = write_wall = write_cpu = 0.0
    rows = 0
    for cand in batch.candidates:
        w, _, run = timed(cand.make)
        score_wall += w
        w, c, outcome = timed(lambda run=run: ingest(engine, batch.questions, run))
        write_wall += w
        write_cpu += c
        rows += len(run)
        ids[cand.name] = outcome.run_id
        scored.append(run)
    print(f"    scored {len(scored)} runs ({rows:,} rows) in {score_wall:.1f} s wall (the app's scoring path, shared pool)")
    print(f"    engine writes: {write_wall:.1f} s wall, {write_cpu:.1f} CPU-s -> {rows / max(write_cpu, 1e-9):,.0f} rows per "
          f"CPU-second ({rows / max(write_wall, 1e-9):,.0f} rows per wall second)")

    with engine.write() as con:
        con.execute("CHECKPOINT")
        sizes = {t: n for t, n in con.execute(
            "SELECT table_name, estimated_size FROM duckdb_tables() ORDER BY table_name").fetchall()}
    size = (folder / "lens.duckdb").stat().st_size
    print(f"(b) on disk: {size / 1e6:.1f} MB for {rows:,} scored rows = {size / rows:.0f} bytes per row "
          f"(texts and summaries included); rows per table: " + ", ".join(f"{t} {n:,}" for t, n in sizes.items()))

    # the in-memory state the app holds: the same runs, scored the same way, as Analysis reads them
    ws = load_workspace(Sources(bench.absolute()))
    runs = [Run(pf.run, RECOMPUTED, str(pf.path), scored_result(ws, pf, "xldocbench")) for pf in ws.predictions]
    gold, pages = ws.gold.items, ws.page_counts
    key = batch.questions.key

    def memory_board():
        return Analysis.build(runs, gold, pages, "xldocbench").leaderboard()

    def engine_board():
        with engine.read() as con:
            return Q.leaderboard(con, key)

    assert len(memory_board()) == len(engine_board())
    print("(c) the leaderboard")
    side_by_side("leaderboard", "in memory (Analysis.leaderboard)", memory_board, "engine (new connection + query)",
                 engine_board, args.repeat)

    an = Analysis.build(runs, gold, pages, "xldocbench")
    a, b = runs[1].name, runs[2].name

    def memory_sums():
        pairs = C.paired(an.attempted_scores([a, b])[0], a, b)  # the two runs' rows (DuckDB in memory since the score frame went)
        codes, _ = C.cluster_codes(an.questions, pairs.index)
        _, codes = np.unique(codes, return_inverse=True)
        d = pairs["accuracy_a"].to_numpy(float) - pairs["accuracy_b"].to_numpy(float)
        return np.bincount(codes, weights=d), np.bincount(codes)

    def engine_sums():
        with engine.read() as con:
            return Q.document_sums(con, ids[a], ids[b])

    mem, eng = memory_sums(), engine_sums()
    assert np.allclose(mem[0], eng["accuracy"]) and np.array_equal(mem[1], eng["n"])
    print(f"(d) a Compare's per-document sums ({a} vs {b}: {int(eng['n'].sum()):,} paired questions, "
          f"{len(eng['n']):,} documents; the score frame already built in memory)")
    side_by_side("document sums", "in memory (paired + clusters + sums)", memory_sums, "engine (new connection + query)",
                 engine_sums, args.repeat)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

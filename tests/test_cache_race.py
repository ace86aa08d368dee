"""Several app servers sharing one LENS_CACHE_DIR (issue 28), and so one engine -- the DuckDB file in its
`engine/` folder (scoring/engine/, dashboard/shell/scorer.py): two servers opening the same benchmark at the
same moment both score its runs, and each run lands in the engine once (the second writer waits for the
first, then finds the run there and leaves it: `ingest` says "unchanged"); both show the same leaderboard;
a third server started after them reads the engine and scores nothing. Each server is a process of its own
running the app (AppTest); what it scored is written to a marker file, one line per run."""

from __future__ import annotations

import multiprocessing
import shutil
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
APP = str(ROOT / "dashboard" / "app.py")
HANG_GUARD = 240.0  # seconds: only so that a hang fails instead of blocking the suite


def server(bench: str, cache: str, marker: str, barrier, out) -> None:
    """One app server opening `bench`: every run it scores is written to `marker`; with `barrier`, each
    run's ingest waits until the other server has scored that run too, so that both write it at once."""
    import os

    os.environ.update({"LENS_BENCHMARK": bench, "LENS_CACHE_DIR": cache})
    for name in ("LENS_RUNS", "LENS_SCORES", "LENS_DATA_ROOTS", "LENS_LAKE_CATALOG", "LENS_LAKE_DATA"):
        os.environ.pop(name, None)
    from streamlit.testing.v1 import AppTest

    from dashboard.shell import scorer

    real_ingest = scorer.ingest
    outcomes: list[str] = []

    def ingest(engine, questions, run, **kw):
        with open(marker, "a", encoding="utf-8") as fh:
            fh.write(f"{run.name}\n")
        if barrier is not None:
            barrier.wait(HANG_GUARD)
        got = real_ingest(engine, questions, run, **kw)
        outcomes.append(got.status)
        return got

    scorer.ingest = ingest
    at = AppTest.from_file(APP, default_timeout=HANG_GUARD).run()
    board = at.dataframe[0].value if not at.exception and at.dataframe else None
    out.put({"exception": [e.value for e in at.exception], "outcomes": outcomes,
             "board": None if board is None else board[["Run", "Accuracy (%)", "Token F1 (%)", "ANLS (%)"]].to_dict("list")})


def run_servers(count: int, bench: Path, cache: Path, marker: Path, barrier) -> list[dict]:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=server, args=(str(bench), str(cache), str(marker), barrier, out), daemon=True)
             for _ in range(count)]
    for p in procs:
        p.start()
    results = [out.get(timeout=HANG_GUARD) for _ in procs]
    for p in procs:
        p.join(HANG_GUARD)
        assert p.exitcode == 0
    return results


@pytest.fixture(autouse=True)
def plain_main(monkeypatch):
    """A spawned process imports the parent's __main__ again; after an AppTest in the same session
    that is the app's script, so the children are given an empty one instead."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


def _visible(cache: Path) -> list[tuple[str, str]]:
    from scoring.engine.connection import EMBEDDED, Engine, Target

    engine = Engine(Target(EMBEDDED, database=cache / "engine" / "lens.duckdb", folder=cache / "engine"))
    with engine.read() as con:
        return sorted(con.execute("SELECT name, identity FROM runs WHERE run_id NOT IN (SELECT run_id FROM removals)")
                      .fetchall())


def test_two_servers_scoring_the_same_runs_at_once_store_each_once_and_a_third_reads_them(tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("docs", "results", "*.py", "__pycache__", "campaign",
                                                                 "mmlongbench", "docvqa", "harness", "annotations"))
    names = sorted(p.name.rsplit(".", 1)[0] for p in (bench / "runs").iterdir())
    cache, marker = tmp_path / "cache", tmp_path / "scored.txt"
    ctx = multiprocessing.get_context("spawn")
    first = run_servers(2, bench, cache, marker, ctx.Barrier(2))
    assert all(not r["exception"] for r in first), first
    assert sorted(marker.read_text().splitlines()) == sorted(names * 2)  # both scored every run: they started together
    assert sorted(first[0]["outcomes"] + first[1]["outcomes"]) == sorted(["ingested"] * len(names) + ["unchanged"] * len(names))
    visible = _visible(cache)
    assert [n for n, _ in visible] == names and len({i for _, i in visible}) == len(names)  # each run once
    assert first[0]["board"] == first[1]["board"] and first[0]["board"] is not None

    third = run_servers(1, bench, cache, marker, None)[0]
    assert not third["exception"] and third["outcomes"] == []  # read from the engine: nothing scored
    assert sorted(marker.read_text().splitlines()) == sorted(names * 2)
    assert third["board"] == first[0]["board"] and _visible(cache) == visible

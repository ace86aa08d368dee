"""Helpers of the engine's tests (scoring/engine/): the app's in-memory numbers for a benchmark, computed
by today's code (`dashboard.core.analysis.Analysis` over runs scored as dashboard/shell/scorer.py scores
them), and the same benchmark ingested into an engine through `docbench-lens ingest`'s loader."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import IO

from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.data.ingest import benchmark_profile, load, scored_result
from dashboard.data.workspace import Workspace, load_workspace
from scoring.engine.connection import EMBEDDED, Engine, Target
from scoring.engine.ingest import ingest

HANG = 600  # s: hang guards, far beyond what any step of these tests takes
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
BENCH = ROOT / "bench"


def generated_campaign(out: Path, questions: int = 400, runs: int = 20) -> Path:
    """A generated benchmark of `runs` runs (bench/make_campaign.py: the same arguments, the same bytes)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    import make_campaign

    return make_campaign.ensure(questions, runs, out)


def app_runs(ws: Workspace, profile: str) -> list[Run]:
    """The runs as the app holds them (dashboard/shell/scorer.scored_runs without its caches): each
    prediction file scored on the shared pool and kept in columns, then the official-only systems."""
    official = ws.official()
    out: list[Run] = []
    for pf in ws.predictions:
        if pf.loaded.loaded:
            out.append(Run(pf.run, RECOMPUTED, ws.label(str(pf.path)), scored_result(ws, pf, profile),
                           official.get(pf.run, []), pf.origin, pf.loaded.rows_read))
    names = {r.name for r in out}
    for system, rows in official.items():
        if system not in names:
            out.append(Run(system, OFFICIAL, ws.label(rows[0].file), None, rows))
    return out


def reference(bench: Path) -> tuple[Workspace, str, Analysis]:
    """(workspace, profile, Analysis): today's in-memory numbers for the benchmark."""
    ws = load_workspace(Sources(bench.absolute()))
    profile = benchmark_profile(ws)
    return ws, profile, Analysis.build(app_runs(ws, profile), ws.gold.items, ws.page_counts, profile, ws.declared_pages())


def args(bench: Path, **kw) -> argparse.Namespace:
    base = dict(benchmark=str(bench), runs=[], scores=[], step=None, series=None, profile=None, task="", lake=None,
                lake_data=None, wait=600.0, remove=None, list=False)
    return argparse.Namespace(**(base | kw))


def embedded(path: Path) -> Engine:
    return Engine(Target(EMBEDDED, database=path, folder=path.parent))


def ingest_all(engine: Engine, bench: Path, **kw) -> tuple[str, dict[str, int]]:
    """Every run of the benchmark ingested (the CLI's loader, the Python API): (benchmark key, name -> run_id)."""
    batch = load(args(bench, **kw))
    ids = {}
    for cand in batch.candidates:
        outcome = ingest(engine, batch.questions, cand.make())
        ids[cand.name] = outcome.run_id
    return batch.questions.key, ids


def line_with(stream: IO[str], wanted: str, timeout: float = HANG) -> str:
    """The lines a child process writes to `stream` up to the first one holding `wanted` (the state
    waited for), or all it wrote before it closed the stream; a hang guard of `timeout` seconds."""
    seen: list[str] = []
    done = threading.Event()

    def read() -> None:
        for line in stream:
            seen.append(line)
            if wanted in line:
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(timeout), f"no line with {wanted!r} in {timeout} s: {''.join(seen)}"
    return "".join(seen)

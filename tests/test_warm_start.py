"""The server reads the configured benchmark ahead (dashboard/session/server.py): what `warm` builds is what the first
visit asks for, under the same cache keys -- so that visit reads, scores and builds nothing again. Each case
runs in a process of its own (fresh caches), with counters on the workspace's read, the engine's ingest and
the analysis' build; a warm that built under any other key (another profile, task or source) leaves the visit
to read again, and the counters say so. Then `python -m dashboard.session.server` (what `docbench-lens serve` runs)
says on its console that the benchmark is ready, and a broken setting costs the warm only itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
APP = str(ROOT / "dashboard" / "app.py")
HANG_GUARD = 240.0  # seconds: only so that a hang fails instead of blocking the suite


def _visit_after_warm() -> dict:
    from streamlit.testing.v1 import AppTest

    from dashboard.core import analysis
    from dashboard.session import server
    from dashboard.shell import cache as shell_cache
    from dashboard.shell import scorer

    counts = {"workspace read": 0, "runs ingested": 0, "analysis built": 0}

    def counted(name, real):
        def wrapper(*a, **kw):
            counts[name] += 1
            return real(*a, **kw)
        return wrapper

    shell_cache.load_workspace = counted("workspace read", shell_cache.load_workspace)
    scorer.ingest = counted("runs ingested", scorer.ingest)
    import gc

    from dashboard.annotations import identity

    real_identity, frozen = identity.benchmark_identity, []
    identity.benchmark_identity = lambda gold: frozen.append(gc.get_freeze_count()) or real_identity(gold)
    real_build = analysis.Analysis.build.__func__
    analysis.Analysis.build = classmethod(counted("analysis built", real_build))
    said: list[str] = []
    warmed = server.warm([], say=lambda text, **_: said.append(text))
    after_warm = dict(counts)
    at = AppTest.from_file(APP, default_timeout=HANG_GUARD).run()
    profile = at.selectbox(key="profile").value
    board = at.dataframe[0].value if not at.exception and at.dataframe else None
    return {"warmed": warmed, "said": said, "after_warm": after_warm, "after_visit": dict(counts), "profile": profile, "frozen": frozen,
            "exception": [str(e.value) for e in at.exception], "board_rows": None if board is None else len(board)}


def child(kind: str) -> None:
    """The body of a fresh process (`_in_fresh_process`): its result as one JSON line."""
    result = _visit_after_warm() if kind == "visit" else _two_at_once()
    print("RESULT " + json.dumps(result), flush=True)


def _in_fresh_process(kind: str, bench: Path, cache: Path) -> dict:
    """`child(kind)` in a plain new interpreter, as the server is: not a multiprocessing child, which the readers'
    guard treats as supervised (scoring/guard.py `guarded`) and reads in, with the address-space limit of a file's
    bracket on the whole process -- another thread's allocation then failed (seen in CI)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LENS_RUNS", "LENS_SCORES", "LENS_DATA_ROOTS", "LENS_LAKE_CATALOG", "LENS_LAKE_DATA")}
    env.update({"LENS_BENCHMARK": str(bench), "LENS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)})
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); import test_warm_start; test_warm_start.child({kind!r})"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=2 * HANG_GUARD)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines and proc.returncode == 0, f"the child failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return json.loads(lines[-1].removeprefix("RESULT "))


@pytest.mark.parametrize("folder,profile", [
    ("", "xldocbench"),  # the sample itself: the default profile
    ("mmlongbench", "mmlongbench-doc"),  # a clone of MMLongBench-Doc: its own rule, picked before the first run
    ("harness/lmms-eval", "lmms-eval"),  # a harness's folder: its rule, picked by a rerun of the first visit
])
def test_the_first_visit_finds_what_the_warm_built(tmp_path, folder, profile):
    got = _in_fresh_process("visit", SAMPLE / folder, tmp_path / "cache")
    assert got["warmed"] is True, got["said"]
    assert got["exception"] == []
    assert got["after_warm"]["workspace read"] == 1 and got["after_warm"]["analysis built"] == 1
    assert got["after_warm"]["runs ingested"] >= 1  # a fresh cache folder: every run scored by the warm
    assert got["profile"] == profile
    # the workspace left the collector's full scans before what is made from it (cache.workspace: gc.freeze)
    assert len(got["frozen"]) == 1 and got["frozen"][0] > 0, got["frozen"]
    assert got["board_rows"] and got["board_rows"] >= 1
    assert got["after_visit"] == got["after_warm"], "the first visit read, scored or built again: the warm's keys differ"
    assert len(got["said"]) == 1 and "ready for the first visit" in got["said"][0] and f"({profile})" in got["said"][0]


def _two_at_once() -> dict:
    """Two threads building the same first view at once (the server's warm and a first visit): the first scores,
    the second waits for it -- its ingest held until the second is seen waiting -- and scores nothing."""
    import threading

    from dashboard.core.paths import Sources
    from dashboard.session import load
    from dashboard.shell import scorer

    waiting = threading.Event()
    ingested: list[str] = []
    real_ingest, real_wait = scorer.ingest, scorer._wait_for_other

    def ingest(engine, questions, run, **kw):
        assert waiting.wait(HANG_GUARD), "the second thread never waited for the first's scoring"
        ingested.append(run.name)
        return real_ingest(engine, questions, run, **kw)

    def wait_for_other(lock):
        waiting.set()
        real_wait(lock)

    scorer.ingest, scorer._wait_for_other = ingest, wait_for_other
    got: list[str] = []
    bench = Path(os.environ["LENS_BENCHMARK"])
    threads = [threading.Thread(target=lambda: got.append(load.warm(Sources(benchmark=bench)))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD)
    return {"profiles": got, "ingested": ingested}


def test_two_threads_building_the_same_view_score_each_run_once(tmp_path):
    got = _in_fresh_process("two", SAMPLE, tmp_path / "cache")
    assert got["profiles"] == ["xldocbench", "xldocbench"]
    assert len(got["ingested"]) >= 4 and len(set(got["ingested"])) == len(got["ingested"])  # each run once


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "dashboard.session.server", "run", APP, "--server.headless", "true",
                                 "--server.port", str(port), "--server.address", "127.0.0.1",
                                 "--browser.gatherUsageStats", "false"],
                                cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return proc, f"http://127.0.0.1:{port}"


def _wait_for(proc: subprocess.Popen, log: Path, text: str) -> str:
    """The server's console once it holds `text` (a state, not a moment; HANG_GUARD only against a hang)."""
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        seen = log.read_text(errors="replace")
        if text in seen:
            return seen
        assert proc.poll() is None, f"the server exited ({proc.returncode}):\n{seen[-3000:]}"
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{log.read_text(errors='replace')[-3000:]}")


def _base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env.update({"LENS_BENCHMARK": str(SAMPLE), "LENS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)})
    return env


def test_the_server_reads_the_benchmark_ahead_and_says_so(tmp_path):
    log = tmp_path / "server.log"
    proc, url = _server(_base_env(tmp_path), log)
    try:
        seen = _wait_for(proc, log, "ready for the first visit")
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as resp:  # the server is up beside it
            assert resp.status == 200
        assert f"{SAMPLE} read and scored (xldocbench)" in seen
        assert "missing ScriptRunContext" not in seen and "Traceback" not in seen
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_broken_setting_costs_the_warm_only_itself(tmp_path):
    """A database URL that cannot be used: the warm gives up in one sentence without its password, the server serves."""
    env = _base_env(tmp_path)
    env.update({"LENS_LAKE_CATALOG": "postgresql://ana:S3cret-pw@127.0.0.1:1/lake", "LENS_LAKE_DATA": str(tmp_path / "lake")})
    log = tmp_path / "server.log"
    proc, url = _server(env, log)
    try:
        seen = _wait_for(proc, log, "the first visit reads it.")
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as resp:
            assert resp.status == 200
        assert "was not read ahead (EngineError: the DuckLake postgresql://ana@127.0.0.1:1/lake" in seen  # the engine's own reason
        assert "S3cret" not in seen and "Traceback" not in seen
    finally:
        proc.terminate()
        proc.wait(timeout=30)

"""Memory after an uploaded run is swept (issue 29.5): the runs scored from it leave the scored-run
store with its workspace (a 190 MB run's scored rows stayed: bench/bench_upload_memory.py), the
memory is given back (a collection, malloc_trim), and a run not from the upload stays."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from dashboard.core.paths import Sources, new_session_folder, session_uploads, sweep_uploads
from dashboard.shell import cache

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


def _swept(token: str) -> list[str]:
    old = time.time() - 3600
    os.utime(session_uploads(token), (old, old))
    swept: list[str] = []
    sweep_uploads(keep="someone-else", alive=lambda t: False, removed_names=swept)
    return swept


def test_a_swept_uploaded_run_takes_its_scored_rows_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    given: list[int] = []
    monkeypatch.setattr(cache, "give_back", lambda: given.append(1))
    token = new_session_folder()
    folder = session_uploads(token) / "0"
    folder.mkdir(parents=True)
    run = Path(shutil.copy(SAMPLE / "runs" / "small-9b.jsonl", folder / "uploaded-run.jsonl"))
    key = ("upload-memory", token)
    ws = cache.workspace(key, Sources(benchmark=SAMPLE, runs=(run,)))
    (uploaded,) = [pf for pf in ws.predictions if pf.path == run]
    (own,) = [pf for pf in ws.predictions if pf.path.name == "small-9b.jsonl"]  # the benchmark's: same bytes
    assert own.sha256 == uploaded.sha256 and own.run != uploaded.run
    mine = (("gold",), uploaded.sha256, uploaded.run, "xldocbench")
    other = (("gold",), own.sha256, own.run, "xldocbench")
    cache.remember(mine, "rows of the upload")  # type: ignore[arg-type]
    cache.remember(other, "rows of another run")  # type: ignore[arg-type]

    assert cache.evict_uploads(_swept(token)) == 1
    assert cache.scored(mine) is None and cache.scored(other) == "rows of another run"
    assert given == [1]
    assert cache.evict_uploads([token]) == 0 and given == [1]  # nothing left: nothing to give back


def test_before_issue_29_the_scored_rows_stayed(tmp_path, monkeypatch):
    """`release=False` (bench/bench_upload_memory.py --before): the workspace goes, its scored run stays."""
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "give_back", lambda: (_ for _ in ()).throw(AssertionError("given back")))
    token = new_session_folder()
    folder = session_uploads(token) / "0"
    folder.mkdir(parents=True)
    run = Path(shutil.copy(SAMPLE / "runs" / "small-9b.jsonl", folder / "kept-run.jsonl"))
    ws = cache.workspace(("upload-memory-before", token), Sources(benchmark=SAMPLE, runs=(run,)))
    (pf,) = [pf for pf in ws.predictions if pf.path == run]
    mine = (("gold",), pf.sha256, pf.run, "xldocbench")
    cache.remember(mine, "rows of the upload")  # type: ignore[arg-type]
    assert cache.evict_uploads(_swept(token), release=False) == 1
    assert cache.scored(mine) == "rows of the upload"


def test_give_back_runs_where_there_is_no_glibc(monkeypatch):
    import ctypes

    def no_libc(name, *a, **k):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    cache.give_back()  # no exception: the collection ran, the trim was skipped


def _first_scoring(tmp_path, monkeypatch, capacity: int) -> tuple[int, int]:
    """The sample's runs put into a new engine (dashboard.shell.scorer.scored_runs: its four prediction files
    scored, three systems of official scores only) with the shell's memory of runs for `capacity`: (scored
    runs it holds after, prediction files scored)."""
    from dashboard.data.workspace import fingerprint
    from dashboard.shell import scorer

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "RUN_CAPACITY", capacity)
    cache.runs_memory().clear()
    ws = cache.workspace(("first-scoring", capacity), Sources(benchmark=SAMPLE))
    runs, store, _ = scorer.scored_runs(ws, fingerprint(ws.discovery.gold), "xldocbench")
    held = sum(1 for pf in ws.predictions if cache.scored((fingerprint(ws.discovery.gold), pf.sha256, pf.run, "xldocbench")))
    assert len(store.ids) == 7
    return held, sum(1 for pf in ws.predictions if pf.loaded.loaded)


def test_a_few_runs_scored_at_once_are_kept_and_a_campaigns_are_not(tmp_path, monkeypatch):
    """A first scoring of at most RUN_CAPACITY runs keeps each scored run for the page that shows it next;
    one of more keeps none (100 runs: 150 MB of the server's peak was the last 16 held while it scored the
    rest): a page rebuilds the few runs it shows from the engine, with the same scores."""
    held, scored = _first_scoring(tmp_path / "few", monkeypatch, 16)
    assert scored == 4 and held == 4
    held, scored = _first_scoring(tmp_path / "many", monkeypatch, 3)
    assert scored == 4 and held == 0

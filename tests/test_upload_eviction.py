"""Memory after uploads (issue 17 item 5): a workspace read from a session's uploads, and the
analyses built on it, leave the cache when that session's upload folder is swept; others stay."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from dashboard.core.analysis import Analysis
from dashboard.core.paths import Sources, new_session_folder, session_uploads, sweep_uploads, upload_folders_of
from dashboard.shell import cache

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


def _uploaded(tmp_path, monkeypatch) -> tuple[str, Sources]:
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    token = new_session_folder()
    folder = session_uploads(token) / "0"
    folder.mkdir(parents=True)
    gold = shutil.copy(SAMPLE / "qa_single_doc.jsonl", folder / "qa_single_doc.jsonl")
    return token, Sources(benchmark=SAMPLE, gold=(Path(gold),))


def test_upload_folders_of_names_only_the_session_folders(tmp_path, monkeypatch):
    token, src = _uploaded(tmp_path, monkeypatch)
    assert upload_folders_of(src) == {token}
    assert upload_folders_of(Sources(benchmark=SAMPLE)) == frozenset()


def test_a_swept_upload_takes_its_workspace_and_analyses_out_of_the_cache(tmp_path, monkeypatch):
    token, src = _uploaded(tmp_path, monkeypatch)
    up_key, plain_key = ("upload", token), ("plain", str(tmp_path))
    ws = cache.workspace(up_key, src)
    plain = cache.workspace(plain_key, Sources(benchmark=SAMPLE))
    assert cache.workspace(up_key, src) is ws  # cached
    an = cache.analysis((up_key, "gold", "xldocbench", ()), lambda: Analysis.build([], ws.gold.items, {}))
    an_plain = cache.analysis((plain_key, "gold", "xldocbench", ()), lambda: Analysis.build([], plain.gold.items, {}))

    old = time.time() - 3600  # closed an hour ago: swept
    os.utime(session_uploads(token), (old, old))
    swept: list[str] = []
    assert sweep_uploads(keep="someone-else", alive=lambda t: False, removed_names=swept) == 1
    assert swept == [token] and not session_uploads(token).exists()
    assert cache.evict_uploads(swept) == 1

    assert cache.workspace(plain_key, Sources(benchmark=SAMPLE)) is plain  # not from an upload: kept
    assert cache.analysis((plain_key, "gold", "xldocbench", ()), lambda: None) is an_plain
    assert cache.analysis((up_key, "gold", "xldocbench", ()), lambda: "rebuilt") == "rebuilt"  # dropped
    assert an is not None
    assert cache.evict_uploads(swept) == 0  # nothing left to drop


def test_the_cached_workspace_and_analysis_are_keyed_by_a_digest_of_plain_values(tmp_path, monkeypatch):
    """Streamlit hashes a cached function's arguments at every call; the workspace's and the analysis's keys name
    every file and run, so they are handed over as one digest (`cache.digest`): equal keys built apart give the same
    digest and the same cached workspace, a key differing in one mtime another digest, and a value whose repr might
    change between calls (a set, a list, a dict, an object) is refused rather than keyed by it."""
    import pytest

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    files = tuple((str(SAMPLE / f"run{i}.jsonl"), 1000 + i, 17 * i) for i in range(2000))
    key = (("bench", ("a",), (), (), "None", (), ""), files)
    twin = (("bench", ("a",), (), (), "None", (), ""), tuple((p, s, m) for p, s, m in files))
    assert cache.digest(key) == cache.digest(twin) and len(cache.digest(key)) == 64
    moved = (key[0], files[:-1] + ((files[-1][0], files[-1][1], files[-1][2] + 1),))
    assert cache.digest(moved) != cache.digest(key)
    assert cache.digest((SAMPLE, 1.5, True, None)) == cache.digest((Path(str(SAMPLE)), 1.5, True, None))
    import numpy as np

    assert cache.digest((np.int64(3),)) == cache.digest((np.int64(3),)) != cache.digest((np.int64(4),))
    for bad in ({1, 2}, [1], {"a": 1}, object(), frozenset()):
        with pytest.raises(TypeError):
            cache.digest(("x", (bad,)))
    ws = cache.workspace(("digest-test", key), Sources(benchmark=SAMPLE))
    assert cache.workspace(("digest-test", twin), Sources(benchmark=SAMPLE)) is ws

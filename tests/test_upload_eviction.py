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

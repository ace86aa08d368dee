"""Several app servers sharing one LENS_CACHE_DIR (issue 28): two processes scoring the same run at
the same moment publish exactly one valid cache entry (never a torn file; the loser reads the
winner's), both get the same result, and a third process reads that entry without scoring at all
(the scorer's calls are counted in a marker file, one line per call)."""

from __future__ import annotations

import multiprocessing
import sys
import types
from pathlib import Path

import pytest

from dashboard.core import store as S

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
GOLD = [SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]
RUN = sorted((SAMPLE / "runs").iterdir())[1]
HANG_GUARD = 120.0  # seconds: only so that a hang fails instead of blocking the suite


def server(root: str, marker: str, barrier, out) -> None:
    """One 'app server' asked for the run: the cache, else scoring (counted in `marker`, and held at
    `barrier` until the other server has scored too, so that both publish at once)."""
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    gold, preds = load_gold(GOLD).items, load_predictions(RUN).items
    store = S.ScoreStore(Path(root))
    key = S.run_key(S.files_sha256(GOLD), S.files_sha256([RUN]), "xldocbench")

    def score():
        with open(marker, "a", encoding="utf-8") as fh:
            fh.write("scored\n")
        result = evaluate(gold, preds, name=RUN.stem)
        if barrier is not None:
            barrier.wait(HANG_GUARD)
        return result

    result = S.scored_run(store, key, gold, preds, "xldocbench", RUN.stem, score)
    out.put({"accuracy": [r.accuracy for r in result.results], "anls": [r.anls for r in result.results],
             "ids": [r.qid for r in result.results], "published": store.published, "lost": store.lost_races,
             "hits": store.hits})


def run_servers(count: int, root: Path, marker: Path, barrier) -> list[dict]:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=server, args=(str(root), str(marker), barrier, out), daemon=True) for _ in range(count)]
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


@pytest.mark.parametrize("rounds", [3])
def test_two_servers_scoring_one_run_at_once_publish_one_entry_and_a_third_reads_it(tmp_path, rounds):
    for k in range(rounds):  # a race decided differently each time must still leave one valid entry
        root, marker = tmp_path / f"cache{k}", tmp_path / f"scored{k}.txt"
        ctx = multiprocessing.get_context("spawn")
        first = run_servers(2, root, marker, ctx.Barrier(2))
        assert marker.read_text().splitlines() == ["scored", "scored"]  # both scored: they missed the cache together
        assert sorted((r["published"], r["lost"]) for r in first) == [(0, 1), (1, 0)]  # one won; the loser kept the winner's
        assert first[0]["accuracy"] == first[1]["accuracy"] and first[0]["anls"] == first[1]["anls"]
        assert first[0]["ids"] == first[1]["ids"] and len(first[0]["ids"]) == 77
        files = sorted(p.name for p in (root / "scored").iterdir())
        assert len(files) == 1 and files[0].endswith(".parquet") and not files[0].startswith(".tmp")  # no torn or stray file
        key = files[0].removesuffix(".parquet")
        assert S.ScoreStore(root).get(key) is not None  # whole and valid: its checks pass
        third = run_servers(1, root, marker, None)[0]
        assert marker.read_text().splitlines() == ["scored", "scored"]  # read from the cache, not scored again
        assert (third["hits"], third["published"]) == (1, 0)
        assert third["accuracy"] == first[0]["accuracy"] and third["anls"] == first[0]["anls"]


def test_an_entry_that_does_not_read_back_is_replaced_not_kept(tmp_path):
    """The loser keeps the winner's entry only when it reads back: a torn file under the name is replaced."""
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    gold, preds = load_gold(GOLD).items, load_predictions(RUN).items
    key = S.run_key(S.files_sha256(GOLD), S.files_sha256([RUN]), "xldocbench")
    store = S.ScoreStore(tmp_path)
    result = evaluate(gold, preds, name=RUN.stem)
    store.folder.mkdir(parents=True)
    store.path(key).write_bytes(b"PAR1 torn")
    assert S.save_run(store, key, result) == store.path(key)
    assert (store.published, store.lost_races) == (1, 0)
    assert S.load_run(S.ScoreStore(tmp_path), key, gold, preds, "xldocbench", RUN.stem) is not None
    assert [p.name for p in store.folder.iterdir()] == [f"{key}.parquet"]

"""The disk cache cannot be steered (issue 17, item 7): a cache folder replaced by a symbolic link is
neither written through nor read from -- the parsed prediction files', the uploads', and the engine's
(its DuckDB file: the runs are then held in memory for the server's life) -- the app runs without that
cache and the Data page says why."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.core import store as S
from dashboard.core.paths import UploadError, stage_upload
from scoring.loaders import load_predictions

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
GOLD = [SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]
RUN = sorted((SAMPLE / "runs").iterdir())[1]


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _linked(tmp_path: Path, folder: str) -> tuple[Path, Path]:
    """A cache root whose `folder` is a symbolic link to a folder outside it: (the root, that outside folder)."""
    root, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / folder).symlink_to(outside, target_is_directory=True)
    return root, outside


def test_symlinked_predictions_folder_is_not_used(tmp_path):
    root, outside = _linked(tmp_path, "predictions")
    store = S.PredictionStore(root)
    sha = hashlib.sha256(RUN.read_bytes()).hexdigest()  # as the workspace computes it
    res = S.load_predictions_cached(RUN, sha, store)
    assert res.items == load_predictions(RUN).items  # read from the file, as without a cache
    assert files_under(outside) == []
    assert store.get(S.prediction_key(sha, str(RUN)), str(RUN)) is None
    assert any("parsed prediction files" in p for p in S.cache_problems(root))


def test_symlinked_gold_folder_is_not_used(tmp_path):
    from scoring.formats import xldocbench

    root, outside = _linked(tmp_path, "gold")
    store = S.GoldStore(root)
    for _ in range(2):
        assert S.read_gold_cached(xldocbench, GOLD, store).items == xldocbench.read_gold(GOLD).items
    assert files_under(outside) == [] and store.hits == 0
    assert any("parsed gold files" in p for p in S.cache_problems(root))


def test_symlinked_questions_folder_is_not_used(tmp_path):
    from dashboard.core.scored import engine_questions
    from scoring.formats import xldocbench

    root, outside = _linked(tmp_path, "questions")
    store = S.QuestionsStore(root)
    gold = xldocbench.read_gold(GOLD).items
    for _ in range(2):
        assert S.engine_questions_cached(gold, {}, {}, "x", store).key == engine_questions(gold, {}, {}, "x").key
    assert files_under(outside) == [] and store.hits == 0
    assert any("coded questions" in p for p in S.cache_problems(root))


def test_symlinked_upload_folder_refuses_uploads(tmp_path, monkeypatch):
    root, outside = _linked(tmp_path, "uploads")
    monkeypatch.setenv("LENS_CACHE_DIR", str(root))
    with pytest.raises(UploadError, match="symbolic link"):
        stage_upload("run.jsonl", b'{"question_id": "q", "prediction": "x"}\n', root / "uploads" / ("a" * 32))
    assert files_under(outside) == []


def test_app_names_a_symlinked_cache_folder_on_the_data_page(monkeypatch, mini_bench, tmp_path):
    root, outside = _linked(tmp_path, "engine")
    at = app_on(monkeypatch, mini_bench, env={"LENS_CACHE_DIR": str(root)})
    assert not at.exception
    board = at.dataframe[0].value
    assert set(board["Run"]) >= {"alpha", "beta"}  # the runs were scored (into DuckDB in memory)
    at.switch_page("views/data.py").run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("symbolic link" in w and "engine" in w and "scored again" in w for w in warnings), warnings
    assert files_under(outside) == []  # nothing written through the link
    assert "in memory" in " ".join(c.value for c in at.caption)

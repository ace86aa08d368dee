"""The disk cache cannot be steered (issue 17, item 7): a cache folder replaced by a symbolic link is
neither written through nor read from (the app runs without that cache and the Data page says why),
and an entry rewritten with its metadata kept but other scores fails its checksum and is recomputed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app_kit import app_on
from dashboard.core import store as S
from dashboard.core.paths import UploadError, stage_upload
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
GOLD = [SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]
RUN = sorted((SAMPLE / "runs").iterdir())[1]


@pytest.fixture(scope="module")
def gold():
    return load_gold(GOLD).items


def key_of(path: Path) -> str:
    return S.run_key(S.files_sha256(GOLD), S.files_sha256([path]), "xldocbench")


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def scored(gold):
    preds = load_predictions(RUN).items
    return preds, evaluate(gold, preds, name=RUN.stem)


def test_symlinked_scored_folder_is_neither_written_nor_read(tmp_path, gold):
    root, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    preds, result = scored(gold)
    # an intact entry outside the cache, reached through the link, is not read either
    S.save_run(S.ScoreStore(outside.parent / "elsewhere"), key_of(RUN), result)
    (outside / f"{key_of(RUN)}.parquet").write_bytes(
        (outside.parent / "elsewhere" / "scored" / f"{key_of(RUN)}.parquet").read_bytes())
    (root / "scored").symlink_to(outside, target_is_directory=True)
    store = S.ScoreStore(root)
    before = files_under(outside)
    assert S.save_run(store, key_of(RUN), result) is None
    assert files_under(outside) == before  # nothing written through the link
    assert S.load_run(store, key_of(RUN), gold, preds, "xldocbench", RUN.stem) is None
    assert store.misses == 1 and store.hits == 0
    problems = S.cache_problems(root)
    assert len(problems) == 1 and str(root / "scored") in problems[0] and "symbolic link" in problems[0]


def test_symlinked_predictions_folder_is_not_used(tmp_path):
    root, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "predictions").symlink_to(outside, target_is_directory=True)
    store = S.PredictionStore(root)
    sha = hashlib.sha256(RUN.read_bytes()).hexdigest()  # as the workspace computes it
    res = S.load_predictions_cached(RUN, sha, store)
    assert res.items == load_predictions(RUN).items  # read from the file, as without a cache
    assert files_under(outside) == []
    assert store.get(S.prediction_key(sha, str(RUN)), str(RUN)) is None
    assert any("parsed prediction files" in p for p in S.cache_problems(root))


def test_symlinked_entry_file_is_not_read(tmp_path, gold):
    preds, result = scored(gold)
    real = S.save_run(S.ScoreStore(tmp_path / "other"), key_of(RUN), result)
    store = S.ScoreStore(tmp_path / "cache")
    store.folder.mkdir(parents=True)
    store.path(key_of(RUN)).symlink_to(real)
    assert S.load_run(store, key_of(RUN), gold, preds, "xldocbench", RUN.stem) is None


def test_symlinked_upload_folder_refuses_uploads(tmp_path, monkeypatch):
    root, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "uploads").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("LENS_CACHE_DIR", str(root))
    with pytest.raises(UploadError, match="symbolic link"):
        stage_upload("run.jsonl", b'{"question_id": "q", "prediction": "x"}\n', root / "uploads" / ("a" * 32))
    assert files_under(outside) == []


@pytest.mark.parametrize("column", ["accuracy", "token_f1", "anls"])
def test_scores_changed_with_metadata_kept_are_recomputed(tmp_path, gold, column):
    preds, result = scored(gold)
    store = S.ScoreStore(tmp_path)
    target = S.save_run(store, key_of(RUN), result)
    table = pq.read_table(target)
    assert pa.compute.min(table.column(column)).as_py() < 1.0  # so that 1.0 everywhere is a change
    forged = table.set_column(table.schema.get_field_index(column), column,
                              pa.array([1.0] * table.num_rows, pa.float64()))
    pq.write_table(forged.replace_schema_metadata(table.schema.metadata), target)  # every check but the checksum holds
    fresh = S.ScoreStore(tmp_path)
    assert S.load_run(fresh, key_of(RUN), gold, preds, "xldocbench", RUN.stem) is None
    assert fresh.rejected == 1 and not target.exists()


def test_an_entry_without_its_checksum_is_recomputed(tmp_path, gold):
    preds, result = scored(gold)
    target = S.save_run(S.ScoreStore(tmp_path), key_of(RUN), result)
    table = pq.read_table(target)
    meta = {k: v for k, v in table.schema.metadata.items() if k != b"lens.scores"}
    pq.write_table(table.replace_schema_metadata(meta), target)
    assert S.load_run(S.ScoreStore(tmp_path), key_of(RUN), gold, preds, "xldocbench", RUN.stem) is None


def test_intact_entry_still_hits(tmp_path, gold):
    preds, result = scored(gold)
    S.save_run(S.ScoreStore(tmp_path), key_of(RUN), result)
    fresh = S.ScoreStore(tmp_path)
    again = S.load_run(fresh, key_of(RUN), gold, preds, "xldocbench", RUN.stem)
    assert again is not None and fresh.hits == 1
    assert again.report_json() == result.report_json()


def test_checksum_depends_on_key_and_every_score(tmp_path):
    cols = [[0.0, 0.5, 1.0], [0.25, 0.5, 0.75], [1.0, 0.0, 0.5]]
    base = S.scores_checksum("a" * 64, cols)
    assert base == S.scores_checksum("a" * 64, [pa.chunked_array([pa.array(c, pa.float64())]) for c in cols])
    assert base != S.scores_checksum("b" * 64, cols)
    for i in range(3):
        changed = [list(c) for c in cols]
        changed[i][1] = 1.0
        assert S.scores_checksum("a" * 64, changed) != base
    # the split between columns counts
    assert S.scores_checksum("a" * 64, [[0.5, 0.5], [0.5]]) != S.scores_checksum("a" * 64, [[0.5], [0.5, 0.5]])


def test_app_names_a_symlinked_cache_folder_on_the_data_page(monkeypatch, mini_bench, tmp_path):
    root, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "scored").symlink_to(outside, target_is_directory=True)
    at = app_on(monkeypatch, mini_bench, env={"LENS_CACHE_DIR": str(root)})
    assert not at.exception
    at.switch_page("views/data.py").run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("symbolic link" in w and "scored" in w for w in warnings), warnings
    assert files_under(outside) == []  # the runs were scored, nothing written through the link

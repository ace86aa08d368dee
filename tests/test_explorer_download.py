"""The question explorer's CSV download holds the filtered table: its columns, its rows in table
order, and every run's scores and prediction as scored by the scoring package.

AppTest keeps a download's bytes in the media file storage of the run (the element only carries a
URL), so the storage's `load_and_get_id` is wrapped to keep what the page hands it."""

import csv
import io
from pathlib import Path

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from app_kit import app_on
from dashboard.explorer.frames import run_column
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

Q = "adubench_single_{:06d}".format


@pytest.fixture
def downloads(monkeypatch):
    """{file name: bytes} of every file a page offers for download."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def keep(self, path_or_data, mimetype, kind, filename=None):
        if isinstance(path_or_data, bytes) and filename:
            seen[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    return seen


def scored(bench: Path, run: str, profile: str) -> dict:
    gold = load_gold([bench / "qa_single_doc.jsonl", bench / "qa_cross_doc.jsonl"]).items
    preds = next(p for p in (bench / "runs").iterdir() if p.stem == run)
    return {r.qid: r for r in evaluate(gold, load_predictions(preds).items, profile=profile, name=run).results}


def test_csv_download_holds_the_filtered_table(mini_bench, monkeypatch, downloads):
    at = app_on(monkeypatch, mini_bench, {"run": ["alpha", "beta"], "f.domain": "technical_engineering",
                                          "profile": "xldocbench-1519"}, timeout=60)
    at.switch_page("views/questions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [b.label for b in at.get("download_button")][:1] == ["Download this table as CSV"]

    text = downloads["questions.csv"].decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["question_id"] for r in rows] == [Q(5), Q(6), "adubench_cross_000002"]  # the table's rows, in order
    header = text.splitlines()[0].split(",")
    assert header[:3] == ["question_id", "question", "gold"]
    for run in ("alpha", "beta"):
        assert [run_column(run, c) for c in ("accuracy", "token_f1", "anls", "prediction", "status")] == \
            header[header.index(run_column(run, "accuracy")):][:5]
        results = scored(mini_bench, run, "xldocbench-1519")
        for row in rows:
            r = results[row["question_id"]]
            assert float(row[run_column(run, "accuracy")]) == r.accuracy
            assert float(row[run_column(run, "token_f1")]) == pytest.approx(r.token_f1, abs=1e-12)
            assert float(row[run_column(run, "anls")]) == pytest.approx(r.anls, abs=1e-12)
            assert row[run_column(run, "prediction")] == r.effective
            assert row[run_column(run, "status")] == r.status
    by_id = {r["question_id"]: r for r in rows}
    assert by_id[Q(6)][run_column("beta", "prediction")] == "<script>alert(1)</script> ![x](http://example.org/x.png)"
    assert by_id[Q(5)][run_column("alpha", "prediction")] == "2.5e2"

    # narrowing the table narrows the file
    at.text_input(key="x_search").set_value("script").run()
    assert [r["question_id"] for r in csv.DictReader(io.StringIO(downloads["questions.csv"].decode("utf-8")))] == [Q(6)]

"""`python -m dashboard.annotations` run as a subprocess on the repository's sample benchmark
(sample_runs/, read only): export, import, the problems on stderr, the exit codes, no traceback."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.annotations.__main__ import _gold_of
from dashboard.annotations.identity import benchmark_identity
from dashboard.annotations.store import AnnotationStore

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
HANG_GUARD = 120  # seconds; a run takes about one


def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LENS_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "dashboard.annotations", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def sample_identity() -> str:
    gold = _gold_of(SAMPLE)
    assert len(gold.items) == 77 and not gold.errors
    return benchmark_identity(gold.items)


def seed(path: Path, identity: str) -> AnnotationStore:
    store = AnnotationStore(path)
    gold = _gold_of(SAMPLE).items
    store.save_note(identity, gold[0].qid, "small-9b", text="picked page 4, evidence on page 10", tags=["wrong_page_retrieved"],
                    author="Ana", expected_revision=0)
    store.save_note(identity, gold[1].qid, "", text="gold reads 33.9; page says 33.8", tags=["gold_wrong"], author="Bo",
                    expected_revision=0)
    store.save_correction(identity, gold[1].qid, answer="33.8", author="Bo", expected_revision=0)
    return store


def test_gold_of_reads_every_top_level_gold_file_but_documents(tmp_path):
    gold = _gold_of(SAMPLE)
    assert sorted(Path(f).name for f in gold.files) == ["qa_cross_doc.jsonl", "qa_single_doc.jsonl"]
    assert _gold_of(tmp_path).errors  # no gold: a problem, not an exception


def test_export_and_import_round_trip_through_the_command_line(tmp_path, sample_identity):
    before = tree_digest(SAMPLE)
    data = tmp_path / "data"
    store = seed(data / "annotations.sqlite3", sample_identity)  # the default file under LENS_DATA_DIR
    out = tmp_path / "notes.jsonl"
    done = run("export", "--benchmark", str(SAMPLE), "--output", str(out), data_dir=data)
    assert done.returncode == 0, done.stderr
    assert f"wrote 3 annotations (2 notes, 1 correction) of benchmark {sample_identity} to {out}" in done.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["note", "note", "correction"] and {r["benchmark"] for r in rows} == {sample_identity}

    other = tmp_path / "other.sqlite3"
    done = run("import", "--benchmark", str(SAMPLE), str(out), "--annotations", str(other), data_dir=data)
    assert done.returncode == 0, done.stderr
    assert f"{out}: 3 added, 0 updated, 0 unchanged, 0 skipped ({out.stat().st_size:,} bytes, 3 records)" in done.stdout
    assert str(other) in done.stdout and done.stderr == ""
    copy = AnnotationStore(other)
    assert copy.notes(sample_identity) == store.notes(sample_identity)
    assert copy.corrections(sample_identity) == store.corrections(sample_identity)
    again = run("import", "--benchmark", str(SAMPLE), str(out), "--annotations", str(other), data_dir=data)
    assert again.returncode == 0 and "0 added, 0 updated, 3 unchanged, 0 skipped" in again.stdout

    csv_out = tmp_path / "notes.txt"
    done = run("export", "--benchmark", str(SAMPLE), "--output", str(csv_out), "--csv", "--annotations", str(other), data_dir=data)
    assert done.returncode == 0 and csv_out.read_text().startswith("kind,benchmark,question_id,run,")
    fresh = tmp_path / "fresh.sqlite3"
    csv_file = tmp_path / "notes.csv"
    csv_out.rename(csv_file)
    done = run("import", "--benchmark", str(SAMPLE), str(csv_file), "--annotations", str(fresh), data_dir=data)
    assert done.returncode == 0 and "3 added" in done.stdout
    assert AnnotationStore(fresh).notes(sample_identity) == store.notes(sample_identity)
    assert tree_digest(SAMPLE) == before  # the sample is only read


def test_bad_lines_go_to_stderr_as_file_line_message(tmp_path, sample_identity):
    qid = _gold_of(SAMPLE).items[0].qid
    good = {"kind": "note", "question_id": qid, "run": "small-9b", "text": "ok", "tags": [], "author": "Ana",
            "created": "2024-01-01T00:00:00Z", "updated": "2024-01-01T00:00:00Z"}
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(good) + "\n{broken\n" + json.dumps({**good, "question_id": "no-such-question"}) + "\n")
    done = run("import", "--benchmark", str(SAMPLE), str(src), data_dir=tmp_path / "data")
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"{src}:2: expected a JSON object, got invalid JSON")
    assert lines[1].startswith(f"{src}:3: question_id: expected a question of this benchmark's gold")
    assert "2 added, 0 updated, 0 unchanged, 1 skipped" in done.stdout

    all_bad = tmp_path / "all-bad.jsonl"
    all_bad.write_text("{broken\n[1]\n")
    done = run("import", "--benchmark", str(SAMPLE), str(all_bad), data_dir=tmp_path / "data")
    assert done.returncode == 1 and f"{all_bad}:1:" in done.stderr and f"{all_bad}:2:" in done.stderr


def test_unreadable_inputs_and_usage_errors_have_their_exit_codes(tmp_path):
    data = tmp_path / "data"
    missing = run("import", "--benchmark", str(SAMPLE), str(tmp_path / "nope.jsonl"), data_dir=data)
    assert missing.returncode == 1 and str(tmp_path / "nope.jsonl") in missing.stderr
    assert run("import", "--benchmark", str(SAMPLE), data_dir=data).returncode == 2  # no FILE
    assert run("export", "--benchmark", str(SAMPLE), data_dir=data).returncode == 2  # no --output
    assert run("frobnicate", data_dir=data).returncode == 2
    no_dir = run("export", "--benchmark", str(tmp_path / "nowhere"), "--output", str(tmp_path / "o.jsonl"), data_dir=data)
    assert no_dir.returncode == 2 and "no such folder" in no_dir.stderr
    empty = tmp_path / "empty-bench"
    empty.mkdir()
    no_gold = run("export", "--benchmark", str(empty), "--output", str(tmp_path / "o.jsonl"), data_dir=data)
    assert no_gold.returncode == 1 and "no gold questions" in no_gold.stderr
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"\x00garbage" * 100)
    src = tmp_path / "one.jsonl"
    src.write_text("{}\n")
    broken_db = run("import", "--benchmark", str(SAMPLE), str(src), "--annotations", str(corrupt), data_dir=data)
    assert broken_db.returncode == 1 and str(corrupt) in broken_db.stderr and "damaged or not a database" in broken_db.stderr
    unwritable = run("export", "--benchmark", str(SAMPLE), "--output", str(tmp_path / "no" / "such" / "dir.jsonl"), data_dir=data)
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr
    assert run("--help", data_dir=data).returncode == 0


def test_export_of_no_database_yet_writes_an_empty_file_and_creates_nothing(tmp_path):
    data = tmp_path / "data"
    out = tmp_path / "empty.jsonl"
    done = run("export", "--benchmark", str(SAMPLE), "--output", str(out), data_dir=data)
    assert done.returncode == 0 and "wrote 0 annotations" in done.stdout and out.read_text() == ""
    assert not (data / "annotations.sqlite3").exists()


def test_the_command_line_exports_from_and_imports_into_postgresql_without_showing_the_password(tmp_path, sample_identity, postgres):
    """LENS_DATABASE_URL (export) and --annotations URL (import): the URL is named without its password."""
    import pg_kit

    source = postgres.fresh_database("cli_source")
    store = seed(source, sample_identity)
    out = tmp_path / "notes.jsonl"
    env = {**os.environ, "LENS_DATABASE_URL": source, "LENS_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "dashboard.annotations", "export", "--benchmark", str(SAMPLE), "--output", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    assert f"wrote 3 annotations (2 notes, 1 correction) of benchmark {sample_identity}" in done.stdout
    assert done.stdout.rstrip().endswith(f"from {store.path}") and str(store.path).startswith("postgresql://lens@127.0.0.1:")
    target = postgres.fresh_database("cli_target")
    done = run("import", "--benchmark", str(SAMPLE), str(out), "--annotations", target, data_dir=tmp_path / "data")
    assert done.returncode == 0 and "3 added, 0 updated, 0 unchanged, 0 skipped" in done.stdout
    assert pg_kit.PASSWORD not in done.stdout + done.stderr and str(AnnotationStore(target).path) in done.stdout
    copy = AnnotationStore(target)
    assert copy.notes(sample_identity) == store.notes(sample_identity)
    assert copy.corrections(sample_identity) == store.corrections(sample_identity)
    assert not (tmp_path / "data" / "annotations.sqlite3").exists()  # the URL, not the default file, was used

"""dashboard.annotations without streamlit: the database (schema, migration from version 1, corrupt,
foreign, unwritable and locked files, writers in threads and processes, the conflict path, the
vocabulary), the benchmark identity, export and import, and gold corrections."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from annotations_kit import write_notes
from dashboard.annotations import exchange
from dashboard.annotations.corrections import apply_corrections, check_answer, corrections_key
from dashboard.annotations.errors import AnnotationsUnavailable, InvalidInput
from dashboard.annotations.identity import benchmark_identity
from dashboard.annotations.location import default_path, resolve_path
from dashboard.annotations.records import DEFAULT_TAGS, MAX_TEXT, Conflict, Correction
from dashboard.annotations.schema import HEAD_REVISION, SCHEMA_VERSION
from dashboard.annotations.store import AnnotationStore
from scoring.evaluate import evaluate
from scoring.loaders import load_gold
from scoring.model import Prediction

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
BENCH = "0123456789abcdef"
HANG_GUARD = 120.0  # seconds: far above the expected time, only so that a hang fails instead of blocking the suite


def store_at(tmp_path: Path, name: str = "a.sqlite3", **kw) -> AnnotationStore:
    return AnnotationStore(tmp_path / name, **kw)


class Clock:
    """A clock the test moves by hand (one second per reading unless frozen)."""

    def __init__(self, step: float = 1.0) -> None:
        self.t = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
        self.step = timedelta(seconds=step)

    def __call__(self) -> datetime:
        self.t += self.step
        return self.t


# ----------------------------------------------------------------------------- where the file lives


def test_default_path_rules(tmp_path):
    assert default_path({"LENS_DATA_DIR": "/data/lens", "XDG_DATA_HOME": "/x"}) == Path("/data/lens/annotations.sqlite3")
    assert default_path({"XDG_DATA_HOME": "/x", "HOME": "/h"}) == Path("/x/docbench-lens/annotations.sqlite3")
    assert default_path({"XDG_DATA_HOME": "relative", "HOME": "/h"}) == Path("/h/.local/share/docbench-lens/annotations.sqlite3")
    assert default_path({"LENS_DATA_DIR": "", "HOME": "/h"}) == Path("/h/.local/share/docbench-lens/annotations.sqlite3")
    assert resolve_path(tmp_path / "x.db", {"LENS_DATA_DIR": "/data"}) == tmp_path / "x.db"
    assert resolve_path(None, {"LENS_DATA_DIR": "/data"}) == Path("/data/annotations.sqlite3")
    store = AnnotationStore(env={"LENS_DATA_DIR": str(tmp_path / "deep" / "er")})
    assert store.path == tmp_path / "deep" / "er" / "annotations.sqlite3" and store.path.is_file() and store.writable


# ----------------------------------------------------------------------------- schema and migration


def test_a_new_file_gets_the_current_schema_in_wal_mode(tmp_path):
    store = store_at(tmp_path)
    assert store.problem is None and store.readable
    con = sqlite3.connect(store.path)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD_REVISION == "r3"
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()
    assert {"notes", "note_tags", "vocabulary", "corrections", "saved_slices", "alembic_version"} == tables
    assert store.vocabulary() == list(DEFAULT_TAGS)
    assert store.notes(BENCH) == [] and store.corrections(BENCH) == []
    AnnotationStore(store.path)  # opening it again changes nothing
    assert store.vocabulary() == list(DEFAULT_TAGS)


V1_DDL = """
CREATE TABLE notes (benchmark TEXT NOT NULL, question_id TEXT NOT NULL, run TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '', author TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL, updated TEXT NOT NULL, PRIMARY KEY (benchmark, question_id, run));
CREATE TABLE corrections (benchmark TEXT NOT NULL, question_id TEXT NOT NULL, answer TEXT,
    author TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, PRIMARY KEY (benchmark, question_id));
PRAGMA user_version = 1;
"""


def make_v1(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript(V1_DDL)
    con.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?)", [
        (BENCH, "q1", "run-a", "looked at page 3", "wrong_page_retrieved,Table Misread, bad tag!,", "Ana",
         "2024-01-02T03:04:05Z", "2024-01-03T03:04:05+00:00"),
        (BENCH, "q2", "", "gold says 12, page says 21", "gold_wrong", "", "2024-01-04T00:00:00Z", "2024-01-04T00:00:00Z"),
        (BENCH, "q3", "run-b", "no tags", "", "Bo", "2024-01-05T00:00:00Z", "2024-01-05T00:00:00Z"),
    ])
    con.executemany("INSERT INTO corrections VALUES (?,?,?,?,?)", [
        (BENCH, "q2", "21", "Ana", "2024-01-04T00:00:00Z"),
        (BENCH, "q4", None, "Bo", "2024-01-06T00:00:00Z"),
    ])
    con.commit()
    con.close()


def test_a_version_1_file_is_migrated_with_its_data(tmp_path):
    path = tmp_path / "old.sqlite3"
    make_v1(path)
    store = AnnotationStore(path)
    assert store.problem is None
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
        "notes", "note_tags", "vocabulary", "corrections", "saved_slices", "alembic_version"}
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD_REVISION
    con.close()
    notes = store.notes(BENCH)
    assert [(n.question_id, n.run, n.text, n.tags, n.author, n.revision) for n in notes] == [
        ("q1", "run-a", "looked at page 3", ("table_misread", "wrong_page_retrieved"), "Ana", 1),
        ("q2", "", "gold says 12, page says 21", ("gold_wrong",), "(unknown)", 1),
        ("q3", "run-b", "no tags", (), "Bo", 1),
    ]
    assert notes[0].created == "2024-01-02T03:04:05.000000Z" and notes[0].updated == "2024-01-03T03:04:05.000000Z"
    assert store.vocabulary() == list(DEFAULT_TAGS) + ["table_misread"]
    assert [(c.question_id, c.action, c.answer, c.author, c.updated, c.revision) for c in store.corrections(BENCH)] == [
        ("q2", "answer", "21", "Ana", "2024-01-04T00:00:00Z", 1),
        ("q4", "exclude", "", "Bo", "2024-01-06T00:00:00Z", 1),
    ]
    saved = store.save_note(BENCH, "q1", "run-a", text="page 3, not 4", tags=["table_misread"], author="Cy", expected_revision=1)
    assert saved.revision == 2 and store.tag_usage(BENCH) == {"gold_wrong": 1, "table_misread": 1}


def test_a_file_of_a_newer_version_is_read_only(tmp_path):
    path = tmp_path / "new.sqlite3"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE future (x)")
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    store = AnnotationStore(path)
    assert store.problem is not None and store.problem.reason == "newer" and str(path) in store.problem.message
    assert store.notes(BENCH) == [] and store.vocabulary() == list(DEFAULT_TAGS)
    with pytest.raises(AnnotationsUnavailable):
        store.save_note(BENCH, "q", text="x", author="A", expected_revision=0)


# ----------------------------------------------------------------------------- files that cannot be used


def test_a_corrupt_file_is_read_only_with_a_message_naming_it(tmp_path):
    path = tmp_path / "annotations.sqlite3"
    junk = b"this is not a database, it is a shopping list\n" * 200
    path.write_bytes(junk)
    store = AnnotationStore(path)
    assert not store.writable and not store.readable
    assert store.problem is not None and store.problem.reason == "corrupt"
    assert str(path) in store.problem.message and "read-only" in store.problem.message
    assert store.notes(BENCH) == [] and store.note(BENCH, "q1") is None and store.corrections(BENCH) == []
    assert store.vocabulary() == list(DEFAULT_TAGS) and store.benchmarks() == {}
    with pytest.raises(AnnotationsUnavailable) as info:
        store.save_note(BENCH, "q1", text="x", author="Ana", expected_revision=0)
    assert info.value.message == store.problem.message
    with pytest.raises(AnnotationsUnavailable):
        store.add_tag("new_tag")
    assert path.read_bytes() == junk  # never written over


def test_another_programs_database_is_left_alone(tmp_path):
    path = tmp_path / "theirs.sqlite3"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.commit()
    con.close()
    store = AnnotationStore(path)
    assert store.problem is not None and store.problem.reason == "foreign" and str(path) in store.problem.message
    con = sqlite3.connect(path)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["invoices"]
    con.close()


def test_an_unwritable_place_is_read_only_with_a_message(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    path = blocker / "annotations.sqlite3"
    store = AnnotationStore(path)
    assert store.problem is not None and store.problem.reason == "unwritable" and str(path) in store.problem.message
    assert store.notes(BENCH) == []
    with pytest.raises(AnnotationsUnavailable, match="cannot be written"):
        store.save_correction(BENCH, "q1", exclude=True, author="Ana", expected_revision=0)


def test_a_database_opened_read_only_reads_and_refuses_writes(databases):
    where = databases.location()
    store = AnnotationStore(where)
    store.save_note(BENCH, "q1", "run", text="kept", author="Ana", expected_revision=0)
    ro = AnnotationStore(where, read_only=True)
    assert ro.readable and not ro.writable and ro.problem is not None and ro.problem.reason == "read_only"
    assert [n.text for n in ro.notes(BENCH)] == ["kept"]
    with pytest.raises(AnnotationsUnavailable):
        ro.save_note(BENCH, "q1", "run", text="changed", author="Bo", expected_revision=1)
    assert store.note(BENCH, "q1", "run").text == "kept"


def in_thread(fn):
    """Run fn in a thread; (finished, result or exception) after at most HANG_GUARD seconds."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test
            box["value"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HANG_GUARD)
    return not t.is_alive(), box.get("value")


def test_a_locked_file_refuses_the_write_clearly_and_in_bounded_time(tmp_path):
    store = store_at(tmp_path, busy_timeout=0.2)
    store.save_note(BENCH, "q1", text="before", author="Ana", expected_revision=0)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        finished, outcome = in_thread(lambda: store.save_note(BENCH, "q1", text="during", author="Bo", expected_revision=1))
        assert finished, "the write hung on a locked file"
        assert isinstance(outcome, AnnotationsUnavailable) and outcome.reason == "locked"
        assert str(store.path) in outcome.message and "locked" in outcome.message
        assert store.note(BENCH, "q1").text == "before"  # WAL: reads still work while another writes
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.save_note(BENCH, "q1", text="after", author="Bo", expected_revision=1).revision == 2


def test_a_file_locked_while_opening_gives_a_message_and_reopens_later(tmp_path):
    path = tmp_path / "busy.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)  # a rollback-journal file, held exclusively
    holder.execute("CREATE TABLE t (x)")
    holder.execute("DROP TABLE t")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        finished, store = in_thread(lambda: AnnotationStore(path, busy_timeout=0.2))
        assert finished, "opening a locked file hung"
        assert isinstance(store, AnnotationStore) and store.problem is not None and store.problem.reason == "locked"
        assert str(path) in store.problem.message
        with pytest.raises(AnnotationsUnavailable):
            store.save_note(BENCH, "q1", text="x", author="Ana", expected_revision=0)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.reopen()
    assert store.writable and store.save_note(BENCH, "q1", text="x", author="Ana", expected_revision=0).revision == 1


# ----------------------------------------------------------------------------- concurrent writers


def write_many(path: str, who: str, count: int, shared_rounds: int) -> None:
    """annotations_kit.write_notes on a store of its own (one per process or thread)."""
    write_notes(AnnotationStore(path, busy_timeout=60.0), who, count, shared_rounds)


def check_nothing_lost(store: AnnotationStore, writers: list[str], count: int, rounds: int) -> None:
    notes = store.notes(BENCH)
    own = {(n.question_id, n.text) for n in notes if n.question_id != "shared"}
    assert own == {(f"{w}-q{i}", f"{w} note {i}") for w in writers for i in range(count)}
    shared = store.note(BENCH, "shared")
    assert shared is not None and shared.revision == len(writers) * rounds
    assert sorted(shared.text.split("\n")) == sorted(f"{w}:{i}" for w in writers for i in range(rounds))
    assert store.tag_usage(BENCH) == {"reasoning_error": len(writers) * (count // 2)}


def test_twenty_threads_writing_at_once_lose_nothing(databases):
    where = databases.location()
    store = AnnotationStore(where)
    writers = [f"t{k}" for k in range(20)]
    errors: list[BaseException] = []

    def work(who):
        try:
            write_many(where, who, 25, 5)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    assert errors == []
    check_nothing_lost(store, writers, 25, 5)


def test_four_processes_writing_at_once_lose_nothing(databases):
    where = databases.location()
    store = AnnotationStore(where)
    writers = [f"p{k}" for k in range(4)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=write_many, args=(where, w, 60, 10)) for w in writers]
    for p in procs:
        p.start()
    for p in procs:
        p.join(HANG_GUARD)
    for p in procs:
        if p.is_alive():
            p.terminate()
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    check_nothing_lost(store, writers, 60, 10)


# ----------------------------------------------------------------------------- notes, conflicts, validation


def test_two_editors_from_the_same_revision_the_second_sees_the_first(tmp_path, databases):
    store = databases.store()
    # both open the editor when there is no note yet
    first = store.save_note(BENCH, "q1", "run-a", text="retriever picked page 9", tags=["wrong_page_retrieved"],
                            author="Ana", expected_revision=0)
    with pytest.raises(Conflict) as info:
        store.save_note(BENCH, "q1", "run-a", text="model misread the table", author="Bo", expected_revision=0)
    assert info.value.current == first and info.value.current.author == "Ana"
    assert "Ana" in info.value.message and "retriever picked page 9" in info.value.message
    assert first.updated[:16].replace("T", " ") in info.value.message
    assert store.note(BENCH, "q1", "run-a") == first  # Bo's text did not overwrite Ana's
    # both edit revision 1
    second = store.save_note(BENCH, "q1", "run-a", text="page 9, table 2", author="Ana", expected_revision=1)
    with pytest.raises(Conflict) as info:
        store.save_note(BENCH, "q1", "run-a", text="mine", author="Bo", expected_revision=1)
    assert info.value.current == second and info.value.current.revision == 2
    # one deletes while the other edits
    assert store.delete_note(BENCH, "q1", "run-a", expected_revision=2)
    with pytest.raises(Conflict) as info:
        store.save_note(BENCH, "q1", "run-a", text="mine", author="Bo", expected_revision=2)
    assert info.value.current is None and "deleted" in info.value.message
    # corrections follow the same rule
    store.save_correction(BENCH, "q1", answer="21", author="Ana", expected_revision=0)
    with pytest.raises(Conflict) as info:
        store.save_correction(BENCH, "q1", exclude=True, author="Bo", expected_revision=0)
    assert isinstance(info.value.current, Correction) and "Ana" in info.value.message and "21" in info.value.message


def test_saving_notes_records_author_time_and_revision(tmp_path, databases):
    clock = Clock()
    store = databases.store(clock=clock)
    a = store.save_note(BENCH, "q1", "", text="  gold looks off \r\n line two ", tags=["gold_wrong", "Gold Wrong"], author=" Ana  Lee ",
                        expected_revision=0)
    assert (a.text, a.tags, a.author, a.revision, a.kind) == ("gold looks off \n line two", ("gold_wrong",), "Ana Lee", 1, "question")
    assert a.created == a.updated == "2024-05-01T12:00:01.000000Z"
    assert store.save_note(BENCH, "q1", "", text=a.text, tags=["gold_wrong"], author="Bo", expected_revision=1) == a  # nothing changed
    b = store.save_note(BENCH, "q1", "", text="gold is 21", tags=[], author="Bo", expected_revision=1)
    assert (b.revision, b.author, b.created, b.tags) == (2, "Bo", a.created, ())
    assert b.updated > a.updated
    clock.step = timedelta(0)  # a clock that does not move still gives a later time to each change
    c = store.save_note(BENCH, "q1", "", text="gold is 22", author="Bo", expected_revision=2)
    assert c.updated > b.updated
    assert store.note(BENCH, "q1", "") == c and store.notes(BENCH, run="x") == []
    d = store.save_note(BENCH, "q0", "run", text="answer note", author="Bo", expected_revision=0)
    e = store.save_note(BENCH, "q1", "run", text="another answer note", author="Bo", expected_revision=0)
    assert [n.key[1:] for n in store.notes(BENCH)] == [("q0", "run"), ("q1", ""), ("q1", "run")] and store.notes("other") == []
    # run "" is a filter (the notes on questions), not "any run": asked beside answer notes, of the benchmark and of one question
    assert store.notes(BENCH, run="") == [c] and store.notes(BENCH, run="run") == [d, e]
    assert store.notes(BENCH, question_id="q1", run="") == [c] and store.notes(BENCH, question_id="q1") == [c, e]
    assert store.benchmarks() == {BENCH: 3}


def test_user_input_is_validated_and_capped(tmp_path, databases):
    store = databases.store()
    bad = [
        dict(text="x" * (MAX_TEXT + 1)),
        dict(tags=["a" * 65]),
        dict(tags=["no spaces?!"]),
        dict(tags=["not_in_vocabulary"]),
        dict(tags=[f"t{i}" for i in range(33)]),
        dict(author="   "),
        dict(author="x" * 101),
        dict(question_id="q\x00"),
        dict(question_id=""),
        dict(run="a\nb"),
        dict(text=42),
    ]
    for change in bad:
        args = {"question_id": "q1", "run": "r", "text": "ok", "tags": [], "author": "Ana", **change}
        with pytest.raises(InvalidInput):
            store.save_note(BENCH, args["question_id"], args["run"], text=args["text"], tags=args["tags"], author=args["author"],
                            expected_revision=0)
    assert store.notes(BENCH) == []
    assert store.save_note(BENCH, "q1", text="x" * MAX_TEXT, tags=["gold_wrong"], author="A",
                           expected_revision=0).text == "x" * MAX_TEXT
    with pytest.raises(InvalidInput):
        store.save_correction(BENCH, "q1", answer="   ", author="Ana", expected_revision=0)
    assert store.corrections(BENCH) == []


def test_the_vocabulary_can_be_edited_and_notes_follow(tmp_path, databases):
    store = databases.store()
    assert store.add_tag("Table Misread") == "table_misread" and store.add_tag("table_misread") == "table_misread"
    assert store.vocabulary() == list(DEFAULT_TAGS) + ["table_misread"]
    n = store.save_note(BENCH, "q1", "r", text="", tags=["table_misread", "format_only"], author="Ana", expected_revision=0)
    store.save_note(BENCH, "q2", "r", text="", tags=["format_only"], author="Ana", expected_revision=0)
    assert store.rename_tag("table_misread", "table_read_wrong") == 1
    assert store.vocabulary()[-1] == "table_read_wrong"
    renamed = store.note(BENCH, "q1", "r")
    assert renamed.tags == ("format_only", "table_read_wrong") and renamed.revision == n.revision + 1 and renamed.updated > n.updated
    with pytest.raises(InvalidInput):
        store.rename_tag("table_read_wrong", "format_only")  # exists already
    with pytest.raises(InvalidInput):
        store.rename_tag("no_such_tag", "x")
    assert store.remove_tag("format_only") == 2
    assert "format_only" not in store.vocabulary()
    assert store.note(BENCH, "q1", "r").tags == ("table_read_wrong",) and store.note(BENCH, "q2", "r").tags == ()
    assert store.tag_usage() == {"table_read_wrong": 1}
    with pytest.raises(InvalidInput):
        store.save_note(BENCH, "q2", "r", text="", tags=["format_only"], author="Ana", expected_revision=3)


# ----------------------------------------------------------------------------- identity


def copy_gold(src: Path, dst: Path, *, reverse: bool = False, edit=None) -> list[Path]:
    dst.mkdir(parents=True)
    out = []
    for f in sorted(src.glob("qa_*.jsonl")):
        lines = f.read_text(encoding="utf-8").splitlines()
        if reverse:
            lines = lines[::-1]
        if edit:
            lines = [edit(line) for line in lines]
        (dst / f.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append(dst / f.name)
    return out


def identity_of(files: list[Path]) -> str:
    return benchmark_identity(load_gold(files).items)


def test_identity_is_stable_under_moving_and_reordering_and_changed_by_a_gold_answer(tmp_path):
    here = identity_of(sorted(SAMPLE.glob("qa_*.jsonl")))
    assert len(here) == 16 and int(here, 16) >= 0
    moved = identity_of(copy_gold(SAMPLE, tmp_path / "elsewhere" / "bench"))
    reordered_lines = identity_of(copy_gold(SAMPLE, tmp_path / "reversed", reverse=True))
    reordered_files = identity_of(sorted(copy_gold(SAMPLE, tmp_path / "files"), reverse=True))
    assert here == moved == reordered_lines == reordered_files

    def change_one_answer(line: str) -> str:
        row = json.loads(line)
        if row["question_id"] == "adubench_single_000001":
            row["answer"]["value"] = "34.0"
        return json.dumps(row)

    def change_metadata_only(line: str) -> str:
        row = json.loads(line)
        row.setdefault("metadata", {})["difficulty"] = "changed"
        row["question"] = row["question"] + " (reworded)"
        return json.dumps(row)

    assert identity_of(copy_gold(SAMPLE, tmp_path / "changed", edit=change_one_answer)) != here
    assert identity_of(copy_gold(SAMPLE, tmp_path / "meta", edit=change_metadata_only)) == here
    questions = load_gold(sorted(SAMPLE.glob("qa_*.jsonl"))).items
    assert benchmark_identity(questions[1:]) != here  # a question fewer
    docvqa = tmp_path / "docvqa.jsonl"
    docvqa.write_text(json.dumps({"questionId": 1, "question": "?", "answers": ["a", "b"]}) + "\n")
    two = identity_of([docvqa])
    docvqa.write_text(json.dumps({"questionId": 1, "question": "?", "answers": ["a"]}) + "\n")
    assert identity_of([docvqa]) != two  # an acceptable answer fewer


# ----------------------------------------------------------------------------- export and import


def fill(store: AnnotationStore) -> None:
    store.add_tag("table_misread")
    store.save_note(BENCH, "q1", "run-a", text='says "12", page says 21; also, a comma\nand a second line — ü', tags=["table_misread", "gold_wrong"],
                    author="Ana", expected_revision=0)
    store.save_note(BENCH, "q1", "", text="the gold itself", tags=["gold_wrong"], author="Bo", expected_revision=0)
    store.save_note(BENCH, "q2", "run-b", text="", tags=["format_only"], author="Bo", expected_revision=0)
    store.save_note(BENCH, "q2", "run-b", text="now with text", tags=["format_only"], author="Cy", expected_revision=1)
    store.save_correction(BENCH, "q1", answer="21", author="Ana", expected_revision=0)
    store.save_correction(BENCH, "q3", exclude=True, author="Bo", expected_revision=0)
    store.save_note("another-benchmark", "q1", "run-a", text="not exported", author="Ana", expected_revision=0)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_then_import_into_a_fresh_database_gives_equal_rows(tmp_path, databases, fmt):
    source = databases.store("source.sqlite3")
    fill(source)
    out = tmp_path / f"notes.{fmt}"
    assert exchange.write_export(source, BENCH, out, fmt=fmt) == 5
    text = out.read_text(encoding="utf-8")
    assert "not exported" not in text
    if fmt == "jsonl":
        rows = [json.loads(line) for line in text.splitlines()]
        assert [r["kind"] for r in rows] == ["note"] * 3 + ["correction"] * 2
        assert set(rows[0]) == {"kind", "benchmark", "question_id", "run", "text", "tags", "author", "created", "updated", "revision"}
    else:
        assert text.splitlines()[0] == ",".join(exchange.FIELDS)
    fresh = databases.store("fresh.sqlite3")
    result = exchange.import_file(fresh, BENCH, out)
    assert result.counts() == {"added": 5, "updated": 0, "unchanged": 0, "skipped": 0} and result.problems == []
    assert result.size == out.stat().st_size and result.lines == 5 and result.tags_added == ["table_misread"]
    assert fresh.notes(BENCH) == source.notes(BENCH) and fresh.corrections(BENCH) == source.corrections(BENCH)
    again = exchange.import_file(fresh, BENCH, out)
    assert again.counts() == {"added": 0, "updated": 0, "unchanged": 5, "skipped": 0}
    assert fresh.notes(BENCH) == source.notes(BENCH)


def test_import_merges_by_key_and_time(tmp_path, databases):
    store = databases.store(clock=Clock())
    kept = store.save_note(BENCH, "q1", "r", text="stored", author="Ana", expected_revision=0)  # updated 12:00:01
    store.save_note(BENCH, "q2", "r", text="stored too", author="Ana", expected_revision=0)  # 12:00:02
    store.save_correction(BENCH, "q3", answer="1", author="Ana", expected_revision=0)  # 12:00:03

    def line(qid, text, updated, **kw):
        return json.dumps({"kind": "note", "question_id": qid, "run": "r", "text": text, "tags": [], "author": "Im",
                           "created": "2024-01-01T00:00:00Z", "updated": updated, **kw})

    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([
        line("q1", "equal time", kept.updated),  # equal: the stored one stays
        line("q2", "later", "2024-05-01T13:00:00+01:00"),  # 12:00:00 UTC: older, stays
        line("q2", "later still", "2024-05-02T00:00:00Z", created="2024-05-01T23:00:00Z"),  # later: replaces, keeps the earlier creation
        line("q4", "new", "2024-05-02T00:00:00Z"),
        json.dumps({"kind": "correction", "question_id": "q3", "action": "exclude", "author": "Im",
                    "created": "2024-01-01T00:00:00Z", "updated": "2024-06-01T00:00:00Z"}),
    ]) + "\n")
    result = exchange.import_file(store, BENCH, src)
    assert result.counts() == {"added": 1, "updated": 2, "unchanged": 2, "skipped": 0}
    assert store.note(BENCH, "q1", "r") == kept
    q2 = store.note(BENCH, "q2", "r")
    assert (q2.text, q2.author, q2.revision, q2.created, q2.updated) == (
        "later still", "Im", 2, "2024-05-01T12:00:02.000000Z", "2024-05-02T00:00:00.000000Z")
    assert store.note(BENCH, "q4", "r").text == "new"
    c = store.correction(BENCH, "q3")
    assert (c.action, c.answer, c.revision) == ("exclude", "", 2)


def test_a_bad_import_line_is_named_with_file_and_line_and_skipped(tmp_path, databases):
    store = databases.store()
    good = {"kind": "note", "question_id": "q1", "run": "r", "text": "fine", "tags": ["gold_wrong"], "author": "Ana",
            "created": "2024-01-01T00:00:00Z", "updated": "2024-01-01T00:00:00Z"}
    lines = [
        json.dumps(good),
        "",  # blank: not a record
        '{"kind": "note", "question_id": ',  # 3: broken JSON
        json.dumps({**good, "question_id": "q2", "tags": ["Not A Tag!"]}),  # 4
        json.dumps({**good, "question_id": "q3", "benchmark": "someone-else"}),  # 5
        json.dumps({**good, "question_id": "q4", "text": "x" * (MAX_TEXT + 1)}),  # 6
        json.dumps({**good, "question_id": "q5", "updated": "yesterday"}),  # 7
        json.dumps(["a", "list"]),  # 8
        json.dumps({**good, "kind": "correction", "question_id": "q6", "run": "", "action": "replace"}),  # 9
        '{"kind": "note", "text": "' + "y" * (exchange.MAX_LINE_BYTES + 10) + '"}',  # 10: too long
        json.dumps({**good, "question_id": "q7", "benchmark": BENCH, "tags": []}),  # 11: fine
    ]
    src = tmp_path / "bad.jsonl"
    src.write_bytes(("\n".join(lines) + "\n").encode() + b'{"kind": "\xff"}\n')  # 12: not UTF-8
    result = exchange.import_file(store, BENCH, src, question_ids={"q1", "q2", "q3", "q4", "q5", "q6"})
    assert result.counts() == {"added": 2, "updated": 0, "unchanged": 0, "skipped": 9}
    errors = {p.location: p for p in result.problems if p.severity == "error"}
    assert sorted(errors, key=lambda loc: int(loc.rsplit(":", 1)[1])) == [f"{src}:{n}" for n in (3, 4, 5, 6, 7, 8, 9, 10, 12)]
    assert errors[f"{src}:4"].field == "tags" and errors[f"{src}:5"].field == "benchmark" and errors[f"{src}:6"].field == "text"
    assert errors[f"{src}:7"].field == "updated" and errors[f"{src}:9"].field == "action"
    assert "someone-else" in errors[f"{src}:5"].got and "KiB" in errors[f"{src}:10"].expected
    warnings = [p for p in result.problems if p.severity == "warning"]
    assert [(p.location, p.field) for p in warnings] == [(f"{src}:11", "question_id")]  # q7 is not in the gold: kept, with a warning
    assert [n.question_id for n in store.notes(BENCH)] == ["q1", "q7"]


def test_a_bad_csv_row_is_named_with_its_first_line(tmp_path, databases):
    store = databases.store()
    header = ",".join(exchange.FIELDS)
    src = tmp_path / "in.csv"
    src.write_text(header + "\r\n"
                   + 'note,,q1,r,"two\r\nlines",gold_wrong;format_only,,,Ana,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,\r\n'  # lines 2-3
                   + 'note,,q2,r,"three\r\nmore\r\nlines",,,,,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,1\r\n'  # 4-6: no author
                   + "correction,,q3,,,,exclude,,Bo,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,x\r\n"  # 7: bad revision
                   + "correction,,q4,,,,answer,21,Bo,2024-01-01T00:00:00Z,2024-01-01T00:00:00Z,3\r\n", encoding="utf-8")  # 8
    result = exchange.import_file(store, BENCH, src)
    assert result.counts() == {"added": 2, "updated": 0, "unchanged": 0, "skipped": 2}
    assert [(p.location, p.field) for p in result.problems] == [(f"{src}:4", "author"), (f"{src}:7", "revision")]
    assert store.note(BENCH, "q1", "r").text == "two\nlines" and store.note(BENCH, "q1", "r").tags == ("format_only", "gold_wrong")
    assert store.correction(BENCH, "q4").revision == 3
    no_header = tmp_path / "plain.csv"
    no_header.write_text("a,b,c\n1,2,3\n")
    bad = exchange.import_file(store, BENCH, no_header)
    assert bad.unreadable and bad.problems[0].location == f"{no_header}:1"


def test_imports_are_bounded_and_report_the_size(tmp_path, databases, monkeypatch):
    store = databases.store()
    src = tmp_path / "big.jsonl"
    src.write_text("\n" * 5000)
    monkeypatch.setattr(exchange, "MAX_IMPORT_BYTES", 4096)
    result = exchange.import_file(store, BENCH, src)
    assert result.unreadable and result.size == 5000 and "5,000 bytes" in result.problems[0].got
    assert exchange.import_bytes(store, BENCH, b"x" * 4097, "upload.jsonl").unreadable
    missing = exchange.import_file(store, BENCH, tmp_path / "missing.jsonl")
    assert missing.unreadable and missing.problems[0].location == str(tmp_path / "missing.jsonl")


# ----------------------------------------------------------------------------- gold corrections


GOLD = [
    {"question_id": "q1", "question": "Revenue?", "answer": {"value": "10", "format": "Float", "verification_rule": "numeric_tolerance"}},
    {"question_id": "q2", "question": "Who?", "answer": {"value": "Acme", "format": "Str"}},
    {"question_id": "q3", "question": "Is it?", "answer": {"value": "yes", "format": "Bool"}},
    {"question_id": "q4", "question": "Which?", "answer": {"value": "B", "format": "single_choice"}},
]


def correction(qid: str, answer: str = "", *, exclude: bool = False, author: str = "Ana", updated: str = "2024-01-01T00:00:00Z"):
    return Correction(BENCH, qid, "exclude" if exclude else "answer", "" if exclude else answer, author, updated, updated)


def test_corrections_change_the_gold_and_the_scores_exactly(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in GOLD))
    gold = load_gold(path).items
    before = [(q.qid, q.answers) for q in gold]
    fixes = [correction("q1", " 12 "), correction("q2", exclude=True), correction("q9", "ghost"),
             correction("q3", "maybe")]
    corrected, summary = apply_corrections(gold, fixes)
    assert [(q.qid, q.answers, q.answer_format, q.verification_rule) for q in corrected] == [
        ("q1", ("12",), "Float", "numeric_tolerance"), ("q3", ("maybe",), "Bool", ""), ("q4", ("B",), "single_choice", "")]
    assert corrected[2] is gold[3]
    assert [(q.qid, q.answers) for q in gold] == before  # the input is not changed
    assert summary.corrected == ("q1", "q3") and summary.excluded == ("q2",) and summary.unknown == ("q9",)
    assert [qid for qid, _ in summary.unreadable] == ["q3"] and summary.changed
    assert str(summary).startswith("2 gold answers corrected, 1 question excluded, 1 correction of questions not in this gold ignored")
    # hand-computed: predictions 12 / Acme / yes / B; gold 10 -> 12 turns q1 right, q2 leaves the count
    preds = [Prediction("q1", "12", "success"), Prediction("q2", "Acme", "success"), Prediction("q3", "yes", "success"),
             Prediction("q4", "B", "success")]
    plain = evaluate(gold, preds)
    assert [r.accuracy for r in plain.results] == [0.0, 1.0, 1.0, 1.0]
    fixed, _ = apply_corrections(gold, [correction("q1", "12"), correction("q2", exclude=True)])
    rescored = evaluate(fixed, preds)
    assert [(r.qid, r.accuracy) for r in rescored.results] == [("q1", 1.0), ("q3", 1.0), ("q4", 1.0)]
    assert rescored.gold_count == 3 and rescored.extra_ids == ["q2"]


def test_the_latest_correction_of_a_question_wins_and_the_key_follows_what_they_say():
    fixes = [correction("q1", "12", updated="2024-01-01T00:00:00Z"), correction("q1", "13", updated="2024-02-01T00:00:00Z")]
    gold = [load_gold_rows()[0]]
    corrected, _ = apply_corrections(gold, fixes)
    assert corrected[0].answers == ("13",)
    key = corrections_key([correction("q1", "12"), correction("q2", exclude=True)])
    assert len(key) == 64
    assert key == corrections_key([correction("q2", exclude=True, author="Bo", updated="2025-01-01T00:00:00Z"), correction("q1", "12 ")])
    assert key != corrections_key([correction("q1", "12.5"), correction("q2", exclude=True)])
    assert key != corrections_key([correction("q1", "12")])
    assert corrections_key([]) == ""
    assert apply_corrections(gold, [])[0] == gold


def load_gold_rows():
    from scoring.model import GoldQuestion
    return [GoldQuestion(qid=g["question_id"], question=g["question"], answers=(g["answer"]["value"],),
                         answer_format=g["answer"]["format"], verification_rule=g["answer"].get("verification_rule", ""),
                         split="single_doc", metadata={}) for g in GOLD]


def test_check_answer_reads_the_answer_as_the_questions_format():
    q1, q2, q3, q4 = load_gold_rows()
    assert check_answer(q1, "12.5") is None and "number" in (check_answer(q1, "twelve") or "")
    assert check_answer(q2, "anything at all") is None
    assert check_answer(q3, "No") is None and check_answer(q3, "maybe") is not None
    assert check_answer(q4, "C") is None and check_answer(q4, "none") is not None


# the app side: the Streamlit panel, and the pages' tables (pandas); every other module stays plain Python
UI_ALLOWED = {"panel.py": ("streamlit", "pandas"), "frames.py": ("pandas",)}


def test_no_annotations_module_imports_a_ui_framework():
    import ast
    for path in sorted((ROOT / "dashboard" / "annotations").glob("*.py")):
        # a *_panel.py is a panel too (the Streamlit layer, tests/test_architecture.py): store_panel.py
        allowed = UI_ALLOWED.get("panel.py" if path.name.endswith("_panel.py") else path.name, ())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.split(".")[0] in ("streamlit", "pandas", "plotly", "numpy")
                        and n.split(".")[0] not in allowed], path


# ----------------------------------------------------------------------------- a file of today's version 2 (before Alembic)

V2_DDL = """
CREATE TABLE notes (id INTEGER PRIMARY KEY, benchmark TEXT NOT NULL, question_id TEXT NOT NULL, run TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '', author TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1), UNIQUE (benchmark, question_id, run));
CREATE TABLE note_tags (note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE, tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)) WITHOUT ROWID;
CREATE INDEX note_tags_by_tag ON note_tags(tag);
CREATE TABLE vocabulary (tag TEXT PRIMARY KEY, position INTEGER NOT NULL);
CREATE TABLE corrections (benchmark TEXT NOT NULL, question_id TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('answer', 'exclude')), answer TEXT NOT NULL DEFAULT '', author TEXT NOT NULL,
    created TEXT NOT NULL, updated TEXT NOT NULL, revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    PRIMARY KEY (benchmark, question_id));
PRAGMA user_version = 2;
"""  # what the annotations database module wrote before Alembic (commit 0fde644), in WAL mode


def test_a_version_2_file_written_before_alembic_opens_and_gains_saved_slices(tmp_path):
    path = tmp_path / "v2.sqlite3"
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(V2_DDL)
    con.executemany("INSERT INTO vocabulary VALUES (?, ?)", [(t, i) for i, t in enumerate([*DEFAULT_TAGS, "table_misread"])])
    con.execute("INSERT INTO notes VALUES (7, ?, 'q1', 'run-a', 'page 3', 'Ana', '2024-01-02T03:04:05.000000Z', "
                "'2024-01-03T03:04:05.000000Z', 4)", (BENCH,))
    con.executemany("INSERT INTO note_tags VALUES (7, ?)", [("table_misread",), ("gold_wrong",)])
    con.execute("INSERT INTO corrections VALUES (?, 'q2', 'exclude', '', 'Bo', '2024-01-04T00:00:00.000000Z', "
                "'2024-01-05T00:00:00.000000Z', 2)", (BENCH,))
    con.commit()
    con.close()
    store = AnnotationStore(path)
    assert store.problem is None
    (note,) = store.notes(BENCH)
    assert (note.question_id, note.run, note.text, note.tags, note.author, note.revision) == (
        "q1", "run-a", "page 3", ("gold_wrong", "table_misread"), "Ana", 4)
    assert [(c.question_id, c.action, c.revision) for c in store.corrections(BENCH)] == [("q2", "exclude", 2)]
    assert store.vocabulary() == [*DEFAULT_TAGS, "table_misread"]
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD_REVISION
    con.close()
    store.save_slice(BENCH, "charts", definition={"evidence_source": ["Chart"]}, author="Cy", expected_revision=0)
    assert store.save_note(BENCH, "q1", "run-a", text="page 3, table 2", tags=["gold_wrong"], author="Cy",
                           expected_revision=4).revision == 5
    assert [s.name for s in AnnotationStore(path).saved_slices(BENCH)] == ["charts"]  # opening it again changes nothing


def test_the_schema_constants_name_the_newest_migration():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from dashboard.annotations.schema import MIGRATIONS_DIR, REVISIONS

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    script = ScriptDirectory.from_config(cfg)
    assert script.get_heads() == [HEAD_REVISION]
    assert [r.revision for r in script.walk_revisions()][::-1] == list(REVISIONS)

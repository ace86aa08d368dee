"""Hostile annotation inputs (issue 29, section 5): notes files built to break the import (nesting
that Python cannot read, lone surrogates, times outside what UTC can hold), a damaged SQLite
database (zero bytes, bytes in a text column, a revision stored as text, a time stored as a
number), and an import large enough to hold the write lock -- each bad line skipped and named, the
rest imported, never a traceback; each bad row named, the rest exported; other writers let in."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from dashboard.annotations.exchange import RECOVER, export, import_bytes, import_file, records
from dashboard.annotations.records import Note
from dashboard.annotations.store import AnnotationStore

ROOT = Path(__file__).resolve().parent.parent
BENCH = "0123456789abcdef"
HANG_GUARD = 120.0  # seconds: only so that a hang fails instead of blocking the suite


def note_line(qid: str, **kw) -> str:
    row = {"kind": "note", "benchmark": BENCH, "question_id": qid, "run": "a", "text": f"note on {qid}", "tags": ["reasoning_error"],
           "author": "Ana", "created": "2024-05-01T12:00:00Z", "updated": "2024-05-01T12:00:00Z"}
    row.update(kw)
    return json.dumps(row)  # ensure_ascii: a lone surrogate is written as its \u escape, as a hostile file would


# line number -> (the line, the field its problem names (None: the whole line), words of the problem)
HOSTILE = {
    2: ("[" * 20_000 + "]" * 20_000, None, "nested 20,000 levels deep"),
    3: ('{"kind": "note", "text": ' + "[" * 100_000 + "]" * 100_000 + "}", None, "nested 100,001 levels deep"),
    4: (note_line("q-sur-text", text="bad \ud800 text"), "text", "lone surrogate (\\ud800 at character 5)"),
    5: (note_line("q-sur-\udc00-id"), "question_id", "lone surrogate (\\udc00 at character 7)"),
    6: (note_line("q-sur-author", author="An\ud83da"), "author", "lone surrogate (\\ud83d at character 3)"),
    7: (note_line("q-y9999", updated="9999-12-31T23:30:00-05:00"), "updated", "outside the years 1 to 9999"),
    8: (note_line("q-y1", created="0001-01-01T00:30:00+01:00"), "created", "outside the years 1 to 9999"),
}
GOOD = {1: "q-good-1", 9: "q-good-2", 10: "q-good-3"}


def hostile_file(folder: Path) -> Path:
    lines = {**{n: (note_line(q), None, "") for n, q in GOOD.items()}, **HOSTILE}
    path = folder / "hostile.jsonl"
    path.write_text("".join(lines[n][0] + "\n" for n in sorted(lines)), encoding="utf-8")
    return path


def assert_named(problems: list[str], name: str) -> None:
    """Every hostile line is named once, as `file:line: field: ...` (no field for an unreadable line);
    warnings about good lines (a question the benchmark's gold lacks: loaded anyway) aside."""
    problems = [p for p in problems if not p.endswith("(loaded anyway)")]
    assert len(problems) == len(HOSTILE), problems
    for (number, (_, field, words)), said in zip(sorted(HOSTILE.items()), problems, strict=True):
        prefix = f"{name}:{number}: " + (f"{field}: " if field else "expected ")
        assert said.startswith(prefix) and words in said and said.endswith("(skipped)"), (number, said)
        said.encode("utf-8")  # printable and storable: no lone surrogate in the message itself


# ----------------------------------------------------------------------------- a hostile notes file


def test_a_hostile_notes_file_imports_its_good_lines_and_names_each_bad_one(databases, tmp_path):
    store = databases.store()
    path = hostile_file(tmp_path)
    result = import_file(store, BENCH, path)
    assert (result.added, result.skipped, result.lines, result.unreadable) == (3, 7, 10, False)
    assert_named([f"{p.location}: {p.message}" for p in result.problems], str(path))
    assert [n.question_id for n in store.notes(BENCH)] == ["q-good-1", "q-good-2", "q-good-3"]
    again = import_bytes(store, BENCH, path.read_bytes(), "again.jsonl")  # the page's path: the same, nothing new
    assert (again.added, again.unchanged, again.skipped) == (0, 3, 7)


def test_the_command_line_imports_past_the_bad_lines_and_names_them(tmp_path):
    from dashboard.annotations.__main__ import _gold_of
    from dashboard.annotations.identity import benchmark_identity
    from test_annotations_app import tiny_bench

    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(_gold_of(bench).items)
    path = hostile_file(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace(BENCH, identity), encoding="utf-8")
    db = tmp_path / "cli.sqlite3"
    done = subprocess.run([sys.executable, "-m", "dashboard.annotations", "import", "--benchmark", str(bench), str(path),
                           "--annotations", str(db)], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LENS_DATA_DIR": str(tmp_path / "data")})
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    assert "3 added, 0 updated, 0 unchanged, 7 skipped" in done.stdout
    assert_named([ln for ln in done.stderr.splitlines() if ln.startswith(str(path))], str(path))
    assert len(AnnotationStore(db).notes(identity)) == 3


def test_the_data_page_import_box_shows_the_bad_lines_and_no_traceback(tmp_path, monkeypatch):
    from app_kit import app_on
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)
    data = hostile_file(tmp_path).read_text(encoding="utf-8").replace(BENCH, identity).encode("utf-8")
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    at = app_on(monkeypatch, bench, timeout=60)
    at.switch_page("views/data.py").run()
    upload = next(u for u in at.get("file_uploader") if "Import annotations" in u.label)
    upload.set_value(("hostile.jsonl", data, "application/jsonl")).run()
    next(b for b in at.button if b.key == "data_ann_import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("3 added, 0 updated, 0 unchanged, 7 skipped" in s.value.replace("\\", "") for s in at.success)  # md-escaped
    shown = [c.value for c in at.code if "hostile.jsonl:" in c.value]
    assert len(shown) == 1
    assert_named(shown[0].splitlines(), "hostile.jsonl")
    assert len(AnnotationStore(tmp_path / "data" / "annotations.sqlite3").notes(identity)) == 3


# ----------------------------------------------------------------------------- a damaged database (SQLite)


def test_a_zero_byte_file_is_made_a_fresh_database(tmp_path):
    """Decided: an empty file holds nothing that could be lost, and SQLite itself takes a zero-length
    file for an empty database, so it is created in place (writable), not opened read-only."""
    path = tmp_path / "empty.sqlite3"
    path.write_bytes(b"")
    assert AnnotationStore(path, read_only=True).notes(BENCH) == []  # an export of it: nothing, no error
    assert path.stat().st_size == 0  # ... and read-only wrote nothing
    store = AnnotationStore(path)
    assert store.problem is None
    store.save_note(BENCH, "q1", text="first", author="Ana", expected_revision=0)
    assert [n.text for n in AnnotationStore(path).notes(BENCH)] == ["first"]


def damaged(tmp_path: Path) -> tuple[Path, AnnotationStore]:
    """A database with four good notes, a good correction and slice, then damaged by hand: bytes
    in a note's text, a revision stored as text, a time stored as a number, bytes that are not
    UTF-8 in an author, a correction's answer as bytes and a slice whose definition is a number."""
    path = tmp_path / "damaged.sqlite3"
    store = AnnotationStore(path)
    for q in ("q1", "q2", "q3", "q4", "q5", "q6"):
        store.save_note(BENCH, q, "a", text=f"note {q}", tags=["reasoning_error"], author="Ana", expected_revision=0)
    store.save_correction(BENCH, "q1", answer="10", author="Ana", expected_revision=0)
    store.save_correction(BENCH, "q2", answer="20", author="Ana", expected_revision=0)
    store.save_slice(BENCH, "finance", definition={"domain": ["finance"]}, author="Ana", expected_revision=0)
    store.save_slice(BENCH, "broken", definition={"domain": ["x"]}, author="Ana", expected_revision=0)
    con = sqlite3.connect(path)
    con.execute("UPDATE notes SET text = ? WHERE question_id = 'q2'", (b"\x00\x01 raw bytes",))
    con.execute("UPDATE notes SET revision = 'two' WHERE question_id = 'q3'")
    con.execute("UPDATE notes SET updated = 1714564800 WHERE question_id = 'q4'")
    con.execute("UPDATE notes SET author = CAST(X'416EFF61' AS TEXT) WHERE question_id = 'q5'")  # not UTF-8
    con.execute("UPDATE corrections SET answer = ? WHERE question_id = 'q2'", (b"\xff\xfe",))
    con.execute("UPDATE saved_slices SET definition = 42 WHERE name = 'broken'")
    con.commit()
    con.close()
    return path, AnnotationStore(path)


def test_a_damaged_database_exports_what_can_be_read_and_names_each_bad_row(tmp_path):
    path, store = damaged(tmp_path)
    bad: list[str] = []
    text, count = export(store, BENCH, bad=bad)
    rows = [json.loads(line) for line in text.splitlines()]
    assert count == len(rows) == 4  # notes q1 and q6, the correction of q1, the slice finance
    assert [(r["kind"], r.get("question_id"), r.get("name")) for r in rows] == [
        ("note", "q1", None), ("note", "q6", None), ("correction", "q1", None), ("slice", "", "finance")]
    assert len(bad) == 6, bad
    assert "note 'q2', 'a'" in bad[0] and "text holds 12 bytes, not text" in bad[0]
    assert "note 'q3', 'a'" in bad[1] and "revision holds the text 'two', not a whole number" in bad[1]
    assert "note 'q4', 'a'" in bad[2] and "updated holds the text '1714564800', not a time" in bad[2]  # TEXT affinity
    assert "note 'q5', 'a'" in bad[3] and "author holds 4 bytes, not text" in bad[3]
    assert bad[4] == "correction 'q2': answer holds 2 bytes, not text"
    assert bad[5].startswith("saved slice 'broken': definition holds the text '42', not a JSON object")
    csv_text, csv_count = export(store, BENCH, fmt="csv")
    assert csv_count == 4 and csv_text.count("\r\n") == 5
    # the app's own reads leave the damaged rows out too (a page never gets bytes to draw)
    assert [n.question_id for n in store.notes(BENCH)] == ["q1", "q6"] and store.note(BENCH, "q2", "a") is None
    # a save over a damaged row replaces it (from "no note": revision 0)
    saved = store.save_note(BENCH, "q3", "a", text="written again", author="Bo", expected_revision=0)
    assert saved.revision == 1 and store.note(BENCH, "q3", "a") == saved


def test_the_way_out_of_a_damaged_database_recovers_every_good_row(tmp_path):
    """Export what is good, move the file aside, import into the new one: the good rows are all there."""
    path, store = damaged(tmp_path)
    good = records(store, BENCH)
    out = tmp_path / "good.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in good), encoding="utf-8")
    path.rename(tmp_path / "damaged.sqlite3.aside")
    fresh = AnnotationStore(path)
    result = import_file(fresh, BENCH, out)
    assert (result.added, result.skipped) == (4, 0)
    assert records(fresh, BENCH) == good


def test_the_command_line_export_of_a_damaged_database_names_the_rows_and_the_way_out(tmp_path):
    from dashboard.annotations.__main__ import main
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)
    path, _ = damaged(tmp_path)
    con = sqlite3.connect(path)
    for table in ("notes", "corrections", "saved_slices"):
        con.execute(f"UPDATE {table} SET benchmark = ?", (identity,))
    con.commit()
    con.close()
    out = tmp_path / "out.jsonl"
    code, printed = run_main(main, ["export", "--benchmark", str(bench), "--output", str(out), "--annotations", str(path)])
    assert code == 0, printed
    assert "wrote 4 annotations (2 notes, 1 correction, 1 saved slice)" in printed["out"]
    assert printed["err"].count("damaged row left out:") == 6 and RECOVER in printed["err"]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4


def run_main(main, argv: list[str]) -> tuple[int, dict[str, str]]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, {"out": out.getvalue(), "err": err.getvalue()}


def test_the_command_line_counts_saved_slices_as_slices(tmp_path):
    from dashboard.annotations.__main__ import main
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)
    store = AnnotationStore(tmp_path / "a.sqlite3")
    store.save_note(identity, "q1", "a", text="x", author="Ana", expected_revision=0)
    store.save_correction(identity, "q2", exclude=True, author="Ana", expected_revision=0)
    for name in ("one", "two", "three"):
        store.save_slice(identity, name, definition={"domain": ["finance"]}, author="Ana", expected_revision=0)
    code, printed = run_main(main, ["export", "--benchmark", str(bench), "--output", str(tmp_path / "o.jsonl"),
                                    "--annotations", str(tmp_path / "a.sqlite3")])
    assert code == 0 and "wrote 5 annotations (1 note, 1 correction, 3 saved slices)" in printed["out"], printed


# ----------------------------------------------------------------------------- a large import lets other writers in


def test_a_writer_saves_while_a_large_import_runs(databases):
    """The import runs in batches; a save of another session, started after the first batch, is
    stored before the import has finished (counted in records imported when the save returned)."""
    store = databases.store()
    store.import_batch = 1_000
    total = 12_000
    notes = [Note(BENCH, f"imp-{i:05d}", "a", f"imported {i}", ("reasoning_error",), "Importer", "2024-05-01T12:00:00.000000Z",
                  "2024-05-01T12:00:00.000000Z", 1) for i in range(total)]
    progress: list[int] = []
    saved_at: list[int] = []
    started, errors = threading.Event(), []

    def writer() -> None:
        try:
            store.save_note(BENCH, "live", "", text="saved during the import", author="Bo", expected_revision=0)
            saved_at.append(progress[-1])
        except BaseException as exc:  # handed to the test
            errors.append(repr(exc))
        finally:  # the wait below ends on a state; a save that took the lock at once leaves no waiting to see
            with store._gate:
                store._gate.notify_all()

    def on_progress(done: int, all_: int) -> None:
        progress.append(done)
        if len(progress) == 1:  # after the first batch: another session saves, and is waiting before the next batch starts
            thread = threading.Thread(target=writer, daemon=True)
            thread.start()
            started.set()
            with store._gate:
                assert store._gate.wait_for(lambda: store._waiting > 0 or saved_at or errors, timeout=HANG_GUARD)

    counts = store.merge(notes, progress=on_progress)
    assert started.wait(HANG_GUARD)
    assert errors == [] and counts.added == total
    assert progress == list(range(1_000, total + 1, 1_000))
    assert len(saved_at) == 1 and saved_at[0] < total, (saved_at, total)  # it did not wait for the whole import
    assert store.note(BENCH, "live").text == "saved during the import"
    assert len(store.notes(BENCH)) == total + 1

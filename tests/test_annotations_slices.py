"""Saved slices (issue 25, section 3; issue 28): their storage beside the notes, on SQLite and on
PostgreSQL -- save, list, change with the revision rule, delete, validation, and export/import."""

from __future__ import annotations

import json

import pytest

from dashboard.annotations import exchange
from dashboard.annotations.errors import InvalidInput
from dashboard.annotations.records import MAX_SLICE_NAME, Conflict, SavedSlice

BENCH = "0123456789abcdef"


def test_a_slice_is_saved_listed_changed_and_deleted(databases):
    store = databases.store()
    a = store.save_slice(BENCH, "counting over charts", definition={"reasoning_type": ["counting"], "evidence_source": ["Chart"]},
                         author=" Ana ", note="found by the finder", expected_revision=0)
    assert (a.name, a.author, a.note, a.revision) == ("counting over charts", "Ana", "found by the finder", 1)
    assert a.definition == {"evidence_source": ("Chart",), "reasoning_type": ("counting",)}  # keys sorted
    assert list(a.definition) == ["evidence_source", "reasoning_type"]
    store.save_slice(BENCH, "b-tables", definition={"evidence_source": ["Table", "Chart", "Table"]}, author="Bo", expected_revision=0)
    store.save_slice("other-benchmark", "x", definition={"domain": ["finance"]}, author="Bo", expected_revision=0)
    assert [s.name for s in store.saved_slices(BENCH)] == ["b-tables", "counting over charts"]
    assert store.saved_slice(BENCH, "b-tables").definition == {"evidence_source": ("Chart", "Table")}
    assert store.saved_slice(BENCH, "nope") is None
    # the same definition and note: nothing rewritten
    assert store.save_slice(BENCH, "counting over charts", definition={"evidence_source": ["Chart"], "reasoning_type": ["counting"]},
                            author="Cy", note="found by the finder", expected_revision=1) == a
    b = store.save_slice(BENCH, "counting over charts", definition={"reasoning_type": ["counting"]}, author="Cy", expected_revision=1)
    assert (b.revision, b.author, b.created, b.note) == (2, "Cy", a.created, "") and b.updated > a.updated
    with pytest.raises(Conflict) as info:
        store.save_slice(BENCH, "counting over charts", definition={"domain": ["x"]}, author="Dee", expected_revision=1)
    assert info.value.current == b and "Cy" in info.value.message and "saved slice" in info.value.message
    assert "reasoning_type=counting" in info.value.message
    with pytest.raises(Conflict):
        store.delete_slice(BENCH, "counting over charts", expected_revision=1)
    assert store.delete_slice(BENCH, "counting over charts", expected_revision=2)
    assert not store.delete_slice(BENCH, "counting over charts", expected_revision=None)
    assert [s.name for s in store.saved_slices(BENCH)] == ["b-tables"]
    assert [s.name for s in store.saved_slices("other-benchmark")] == ["x"]


@pytest.mark.parametrize("definition", [
    {}, {"Reasoning Type": ["x"]}, {"reasoning_type": []}, {"reasoning_type": "counting"}, {"reasoning_type": ["a\nb"]},
    {f"f{i}": ["x"] for i in range(17)}, {"reasoning_type": [f"v{i}" for i in range(501)]}, ["reasoning_type"],
])
def test_a_bad_definition_is_refused_with_a_sentence(tmp_path, definition):
    from dashboard.annotations.store import AnnotationStore

    store = AnnotationStore(tmp_path / "a.sqlite3")
    with pytest.raises(InvalidInput):
        store.save_slice(BENCH, "s", definition=definition, author="Ana", expected_revision=0)
    for name in ("", " ", "x" * (MAX_SLICE_NAME + 1), "a\tb"):
        with pytest.raises(InvalidInput):
            store.save_slice(BENCH, name, definition={"domain": ["x"]}, author="Ana", expected_revision=0)
    with pytest.raises(InvalidInput):
        store.save_slice(BENCH, "s", definition={"domain": ["x"]}, author="  ", expected_revision=0)
    assert store.saved_slices(BENCH) == []


def test_a_slice_picks_the_questions_whose_fields_match():
    s = SavedSlice(BENCH, "s", {"evidence_source": ("Chart", "Table"), "reasoning_type": ("counting",)}, "Ana", "", "t", "t")
    rows = [
        {"question_id": "q1", "reasoning_type": "counting", "evidence_source": "Chart"},
        {"question_id": "q2", "reasoning_type": "counting", "evidence_source": "Text"},
        {"question_id": "q3", "reasoning_type": "lookup", "evidence_source": "Table"},
        {"question_id": "q4", "reasoning_type": "counting", "evidence_source": ["Text", "Table"]},  # multi-label: one matches
        {"question_id": "q5", "evidence_source": "Chart"},  # no reasoning type
    ]
    assert s.questions(rows) == ["q1", "q4"]
    assert s.describe() == "evidence_source in {Chart, Table} & reasoning_type=counting"


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_slices_travel_with_the_notes_through_export_and_import(databases, fmt, tmp_path):
    source = databases.store("source.sqlite3")
    source.save_note(BENCH, "q1", "run", text="note", tags=["gold_wrong"], author="Ana", expected_revision=0)
    saved = source.save_slice(BENCH, "charts, \"quoted\"; and more", definition={"evidence_source": ["Chart", "Table"]},
                              author="Ana", note="two\nlines", expected_revision=0)
    source.save_slice(BENCH, "charts, \"quoted\"; and more", definition={"evidence_source": ["Chart"]}, author="Bo",
                      note="two\nlines", expected_revision=1)
    text, count = exchange.export(source, BENCH, fmt=fmt)
    assert count == 2
    if fmt == "jsonl":
        record = json.loads(text.splitlines()[-1])
        assert record["kind"] == "slice" and record["definition"] == {"evidence_source": ["Chart"]} and record["revision"] == 2
    out = tmp_path / f"export.{fmt}"
    out.write_text(text, encoding="utf-8", newline="")
    fresh = databases.store("fresh.sqlite3")
    result = exchange.import_file(fresh, BENCH, out)
    assert result.counts() == {"added": 2, "updated": 0, "unchanged": 0, "skipped": 0} and result.problems == []
    assert fresh.saved_slices(BENCH) == source.saved_slices(BENCH)
    (copy,) = fresh.saved_slices(BENCH)
    assert copy.created == saved.created and copy.revision == 2 and copy.note == "two\nlines"
    again = exchange.import_file(fresh, BENCH, out)  # the same records again: nothing changes
    assert again.counts() == {"added": 0, "updated": 0, "unchanged": 2, "skipped": 0}


def test_a_bad_slice_line_is_named_and_skipped(tmp_path):
    from dashboard.annotations.store import AnnotationStore

    store = AnnotationStore(tmp_path / "a.sqlite3")
    good = {"kind": "slice", "name": "ok", "definition": {"domain": ["finance"]}, "author": "Ana",
            "created": "2024-01-01T00:00:00Z", "updated": "2024-01-01T00:00:00Z"}
    lines = [good, {**good, "name": "bad", "definition": {"Bad Field": ["x"]}}, {**good, "name": ""},
             {**good, "name": "no-author", "author": ""}]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    result = exchange.import_file(store, BENCH, src)
    assert result.counts() == {"added": 1, "updated": 0, "unchanged": 0, "skipped": 3}
    assert [(p.location, p.field) for p in result.problems] == [(f"{src}:2", "definition"), (f"{src}:3", "name"), (f"{src}:4", "author")]
    assert [s.name for s in store.saved_slices(BENCH)] == ["ok"]

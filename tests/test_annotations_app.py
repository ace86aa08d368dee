"""The annotations in the app (issue 21) through AppTest: a note written in the question detail, the
explorer filtered by tag from the URL, the overview's failure-mode counts, a conflicting save shown
with the other person's note, a damaged database (read-only, said once, every page working), gold
corrections moving the leaderboard exactly as computed by hand, the sample's notes imported from
the Data page, and the stakeholder report's failure-mode section.

Each test has its own benchmark folder and LENS_DATA_DIR (so its own database file) -- and runs
twice: on that SQLite file, and on a PostgreSQL database of its own (LENS_DATABASE_URL, a throwaway
server: tests/conftest.py `postgres`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.annotations import frames
from dashboard.annotations.identity import benchmark_identity
from dashboard.annotations.location import FILE_NAME
from dashboard.annotations.records import Note
from dashboard.annotations.store import AnnotationStore
from dashboard.report.build import build_report
from scoring.loaders import load_gold

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
GOLD = {"q1": "10", "q2": "20", "q3": "30", "q4": "40"}
# run a right on q1 q2 q3 (75 %), run b right on q1 q4 (50 %); b's q2 answer is 77
RUNS = {"a": {"q1": "10", "q2": "20", "q3": "30", "q4": "99"}, "b": {"q1": "10", "q2": "77", "q3": "99", "q4": "40"}}


def tiny_bench(root: Path) -> Path:
    """Four integer questions (two domains) and two runs, no documents."""
    bench = root / "bench"
    (bench / "runs").mkdir(parents=True)
    rows = [{"question_id": qid, "task_type": "single_doc", "question": f"How many in {qid}?",
             "answer": {"value": gold, "format": "Int", "verification_rule": "numeric_tolerance"},
             "document": {"document_id": "doc_1", "evidence_pages": [1]},
             "metadata": {"domain": "finance" if qid in ("q1", "q2") else "science", "reasoning_type": "lookup"}}
            for qid, gold in GOLD.items()]
    (bench / "qa_single_doc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for run, answers in RUNS.items():
        (bench / "runs" / f"{run}.json").write_text(json.dumps(answers), encoding="utf-8")
    return bench


@pytest.fixture(params=["sqlite", "postgresql"])
def setup(request, tmp_path, monkeypatch):
    """(bench, data dir, store, identity, dialect, where) -- and `open(params, page)` giving the app there."""
    bench = tiny_bench(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("LENS_DATA_DIR", str(data))
    if request.param == "postgresql":
        where = request.getfixturevalue("postgres").fresh_database("app")
        monkeypatch.setenv("LENS_DATABASE_URL", where)
    else:
        where = str(data / FILE_NAME)
        monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)

    class S:
        pass

    s = S()
    s.bench, s.data, s.identity, s.dialect, s.where = bench, data, identity, request.param, where
    s.store = lambda: AnnotationStore(where)

    def open_(params: dict | None = None, page: str | None = None) -> AppTest:
        at = app_on(monkeypatch, bench, params, timeout=60)
        if page:
            at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        return at
    s.open = open_
    return s


def frame_with(at: AppTest, column) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def submit(at: AppTest, form_key: str, label: str = "Save") -> AppTest:
    """Press a form's submit button (AppTest lists them among the buttons, each with its form's id)."""
    button = next(b for b in at.button if b.label == label and form_key in (b.proto.form_id or ""))
    return button.click().run()


# ----------------------------------------------------------------------------- writing a note


def test_a_note_written_in_the_question_detail_is_stored_with_its_author(setup):
    at = setup.open({"sel": "q2", "run": "b"}, "views/questions.py")
    at.text_input(key="ann_name_qd").input("Ana").run()
    at.text_area(key="ann_text_qd_a_q2_b").input("77 is read from the wrong table")
    at.multiselect(key="ann_tags_qd_a_q2_b").set_value(["wrong_page_retrieved"])
    at = submit(at, "ann_form_qd_a_q2_b")
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = setup.store().note(setup.identity, "q2", "b")
    assert (note.text, note.tags, note.author, note.revision) == ("77 is read from the wrong table", ("wrong_page_retrieved",), "Ana", 1)
    assert setup.store().note(setup.identity, "q2", "") is None  # the question's own note is another one
    # the explorer's table has the tag in the question's row
    table = frame_with(at, ("Metadata", frames.TAGS_COLUMN))
    row = table[table[("Question", "Id")] == "q2"].iloc[0]
    assert row[("Metadata", frames.TAGS_COLUMN)] == "wrong_page_retrieved" and row[("Metadata", frames.NOTES_COLUMN)] == 1


def test_saving_without_a_name_says_so_and_stores_nothing(setup):
    at = setup.open({"sel": "q1", "run": "a"}, "views/questions.py")
    at.text_area(key="ann_text_qd_q_q1").input("a note")
    at = submit(at, "ann_form_qd_q_q1")
    assert any("Type your name" in e.value for e in at.error)
    assert setup.store().notes(setup.identity) == []


# ----------------------------------------------------------------------------- the explorer filter


def seed_notes(setup) -> AnnotationStore:
    s = setup.store()
    b = setup.identity
    s.save_note(b, "q2", "b", text="wrong table", tags=["wrong_page_retrieved"], author="Ana", expected_revision=0)
    s.save_note(b, "q3", "b", text="", tags=["reasoning_error", "wrong_page_retrieved"], author="Ana", expected_revision=0)
    s.save_note(b, "q4", "a", text="made up", tags=["hallucination"], author="Bo", expected_revision=0)
    s.save_note(b, "q4", "", text="gold looks fine", tags=[], author="Bo", expected_revision=0)
    return s


@pytest.mark.parametrize("params, expected", [
    ({"tag": "wrong_page_retrieved"}, ["q2", "q3"]),
    ({"tag": ["reasoning_error", "hallucination"]}, ["q3", "q4"]),
    ({"tag": frames.UNTAGGED}, ["q1"]),
    ({"note": "1"}, ["q2", "q4"]),
    ({"tag": "wrong_page_retrieved", "note": "1"}, ["q2"]),
])
def test_the_explorer_filters_by_tag_and_note_from_the_link(setup, params, expected):
    seed_notes(setup)
    at = setup.open({"run": ["a", "b"], **params}, "views/questions.py")
    table = frame_with(at, ("Question", "Id"))
    assert list(table[("Question", "Id")]) == expected
    assert at.multiselect(key="x_ann_tags").value == ([params["tag"]] if isinstance(params.get("tag"), str) else params.get("tag", []))
    view = at.session_state["lens_view"]
    assert (view.tags, view.noted) == ([params["tag"]] if isinstance(params.get("tag"), str) else params.get("tag", []),
                                       "note" in params)
    summary = "\n".join(c.value for c in at.caption).replace("\\", "")  # the count line says every filter in force
    for tag in view.tags:
        assert tag in summary.split("tags:", 1)[-1], summary
    assert ("has a note" in summary) == ("note" in params), summary


def test_tag_columns_go_into_the_explorers_csv(setup):
    seed_notes(setup)
    at = setup.open({"run": ["a", "b"]}, "views/questions.py")
    kept = at.session_state["lens_explorer_csv"]  # the CSV the download button serves (made once per table)
    csv = kept[1].decode("utf-8")
    table = pd.read_csv(pd.io.common.StringIO(csv), keep_default_na=False)
    assert list(table["Tags"]) == ["", "wrong_page_retrieved", "reasoning_error; wrong_page_retrieved", "hallucination"]
    assert list(table["b · Tags"]) == ["", "wrong_page_retrieved", "reasoning_error; wrong_page_retrieved", ""]
    assert list(table["Notes"]) == [0, 1, 1, 2]


# ----------------------------------------------------------------------------- the overview


def test_the_overview_counts_each_failure_mode_per_run_and_per_slice(setup):
    seed_notes(setup)
    at = setup.open()
    assert any(s.value == "Failure modes" for s in at.subheader)
    table = frame_with(at, "tag").set_index("tag")
    assert table.loc["wrong_page_retrieved"].to_dict() == {"a": 0, "b": 2}
    assert table.loc["reasoning_error"].to_dict() == {"a": 0, "b": 1}
    assert table.loc["hallucination"].to_dict() == {"a": 1, "b": 0}
    assert "gold_wrong" not in table.index  # tags nobody used are left out
    at.selectbox(key="ov_modes_field").set_value("domain").run()
    by_domain = next(d.value for d in at.dataframe if "finance" in d.value.columns or "science" in d.value.columns).set_index("tag")
    # q2 is finance, q3 and q4 science
    assert by_domain.loc["wrong_page_retrieved"].to_dict() == {"finance": 1, "science": 1}
    assert by_domain.loc["hallucination"].to_dict() == {"finance": 0, "science": 1}


def test_a_failure_mode_opens_its_questions_in_the_explorer(setup):
    seed_notes(setup)
    at = setup.open()
    at.selectbox(key="ov_modes_tag").set_value("reasoning_error")
    at.button(key="ov_modes_open").click().run()
    assert not at.exception
    assert at.session_state["lens_view"].tags == ["reasoning_error"]


# ----------------------------------------------------------------------------- a conflict


def test_a_save_over_someone_elses_newer_note_is_refused_and_shows_theirs(setup):
    at = setup.open({"sel": "q1", "run": "a"}, "views/questions.py")
    at.text_input(key="ann_name_qd").input("Ana").run()
    # while Ana's form is open (drawn with no note: revision 0), Bo saves a note on the same answer
    setup.store().save_note(setup.identity, "q1", "a", text="Bo's reading: right for the wrong reason", tags=["reasoning_error"],
                            author="Bo", expected_revision=0)
    at.text_area(key="ann_text_qd_a_q1_a").input("Ana's reading")
    at = submit(at, "ann_form_qd_a_q1_a")
    said = " ".join(e.value for e in at.error)
    assert "Bo wrote this note" in said and "your change was not saved" in said and "right for the wrong reason" in said
    assert any(t.value == "Bo's reading: right for the wrong reason" for t in at.text)  # their note, as text
    assert setup.store().note(setup.identity, "q1", "a").text == "Bo's reading: right for the wrong reason"
    # Ana has seen it: saving again replaces it, knowingly
    at = submit(at, "ann_form_qd_a_q1_a")
    assert not at.error
    note = setup.store().note(setup.identity, "q1", "a")
    assert (note.text, note.author, note.revision) == ("Ana's reading", "Ana", 2)


# ----------------------------------------------------------------------------- a damaged database


def test_a_damaged_database_is_read_only_said_once_and_every_page_works(setup):
    """SQLite: a file that is not a database; PostgreSQL: a database a newer version has migrated."""
    if setup.dialect == "postgresql":
        import sqlalchemy as sa

        from dashboard.annotations.location import ServerLocation

        setup.store()  # the schema made
        engine = sa.create_engine(ServerLocation(setup.where).url)
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = 'r99'"))
        engine.dispose()
        said, named = "newer schema", str(ServerLocation(setup.where))
    else:
        (setup.data / FILE_NAME).write_bytes(b"this is not a database\x00" * 100)
        said, named = "damaged or not a database", str(setup.data / FILE_NAME)
    at = setup.open({"sel": "q1", "run": "a"}, "views/questions.py")
    warnings = [w.value for w in at.warning if said in w.value]
    assert len(warnings) == 1 and named in warnings[0].replace("\\", "").replace("\u200b", "")  # md_escape'd
    assert "S3cret" not in " ".join(w.value for w in at.warning)  # the URL's password is never shown
    save = next(b for b in at.button if b.label == "Save")
    assert save.disabled
    for page in ("views/overview.py", "views/evidence.py", "views/compare.py", "views/data.py", "views/questions.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
    at.switch_page("views/overview.py").run()
    assert list(frame_with(at, "Accuracy (%)")["Run"]) == ["a", "b"]  # the pages still work
    if setup.dialect == "sqlite":
        assert (setup.data / FILE_NAME).read_bytes().startswith(b"this is not a database")  # never overwritten


# ----------------------------------------------------------------------------- gold corrections


def test_gold_corrections_move_the_leaderboard_as_computed_by_hand(setup):
    s = setup.store()
    s.save_note(setup.identity, "q2", "", text="the table says 77", tags=["gold_wrong"], author="Ana", expected_revision=0)
    s.save_correction(setup.identity, "q2", answer="77", author="Ana", expected_revision=0)
    s.save_note(setup.identity, "q3", "", text="ambiguous", tags=["gold_wrong"], author="Bo", expected_revision=0)
    s.save_correction(setup.identity, "q3", exclude=True, author="Bo", expected_revision=0)

    plain = setup.open()
    board = frame_with(plain, "Accuracy (%)").set_index("Run")
    assert board["Accuracy (%)"].to_dict() == pytest.approx({"a": 75.0, "b": 50.0})
    assert any("2 gold corrections recorded" in c.value for c in plain.caption)

    at = setup.open({"gold": "corrected"})
    assert at.toggle(key="with_corrections").value is True
    board = frame_with(at, "Accuracy (%)").set_index("Run")
    # q2's gold is 77 (b right, a wrong), q3 dropped: a right on q1 of q1 q2 q4, b right on all three
    # (a mean is rounded to 6 decimals, as the release's report does: 1/3 -> 0.333333)
    assert board["Accuracy (%)"].to_dict() == pytest.approx({"a": 100 / 3, "b": 100.0}, abs=1e-4)
    assert board["Questions"].to_dict() == {"a": 3, "b": 3}
    changes = frame_with(at, "Rank change").set_index("Run")
    assert changes.loc["a", ["Rank before", "Rank after", "Rank change"]].tolist() == [1, 2, -1]
    assert changes.loc["b", ["Rank before", "Rank after", "Rank change"]].tolist() == [2, 1, 1]
    assert changes.loc["a", "Change (points)"] == pytest.approx(100 / 3 - 75, abs=1e-4)
    assert changes.loc["b", "Change (points)"] == pytest.approx(50.0)
    # turned off again: the plain scores, from their own cache entries
    at.toggle(key="with_corrections").set_value(False).run()
    assert frame_with(at, "Accuracy (%)").set_index("Run")["Accuracy (%)"].to_dict() == pytest.approx({"a": 75.0, "b": 50.0})
    assert "gold" not in at.query_params


def test_a_correction_is_checked_against_the_answer_format_and_listed_on_the_data_page(setup):
    setup.store().save_note(setup.identity, "q2", "", text="", tags=["gold_wrong"], author="Ana", expected_revision=0)
    at = setup.open({"sel": "q2", "run": "a"}, "views/questions.py")
    at.text_input(key="ann_name_qd").input("Ana").run()
    at.text_input(key="ann_canswer_qd_q2").input("seventy-seven")
    at = submit(at, "ann_cform_qd_q2", "Save correction")
    assert any("needs a number" in e.value for e in at.error)
    assert setup.store().correction(setup.identity, "q2") is None
    at.text_input(key="ann_canswer_qd_q2").input("77")
    at = submit(at, "ann_cform_qd_q2", "Save correction")
    fixed = setup.store().correction(setup.identity, "q2")
    assert (fixed.answer, fixed.author, fixed.action) == ("77", "Ana", "answer")
    at.switch_page("views/data.py").run()
    listed = next(d.value for d in at.dataframe if "Corrected answer" in d.value.columns)
    assert listed[["Question", "Correction", "Corrected answer", "By"]].values.tolist() == [["q2", "answer", "77", "Ana"]]


# ----------------------------------------------------------------------------- the sample


def test_the_sample_offers_its_notes_and_every_view_shows_them_after_import(tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path))
    at = app_on(monkeypatch, SAMPLE, timeout=120)
    at.switch_page("views/data.py").run()
    at.button(key="ann_sample_data").click().run()
    assert not at.exception
    assert any("14 added" in s.value for s in at.success), [s.value for s in at.success]
    at.switch_page("views/overview.py").run()
    table = frame_with(at, "tag").set_index("tag")
    assert table.loc["refused_wrongly", "small-9b"] == 2 and table.loc["reasoning_error", "longctx-ocr"] == 1
    at.switch_page("views/data.py").run()
    listed = next(d.value for d in at.dataframe if "Corrected answer" in d.value.columns)
    assert sorted(listed["Correction"]) == ["answer", "exclude"]
    assert not [b for b in at.button if b.key == "ann_sample_data"]  # offered only while the database has nothing


# ----------------------------------------------------------------------------- the report


def test_the_report_has_a_failure_mode_section_with_escaped_examples(setup):
    from dashboard.report.build import load

    ws, an, _ = load(setup.bench, ["a", "b"])
    hostile = "<script>alert(1)</script> {{ 7*7 }}"
    notes = [Note(setup.identity, "q2", "b", hostile, ("wrong_page_retrieved",), "<b>Ana</b>", "t", "t"),
             Note(setup.identity, "q3", "", "fine", ("gold_wrong",), "Bo", "t", "t")]
    page = build_report(an, ["a", "b"], "b", workspace=ws, notes=notes)
    assert "Failure modes" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>Ana</b>" not in page and "{{ 7*7 }}" in page
    assert build_report(an, ["a", "b"], "b", workspace=ws).count("Failure modes") == 0  # no notes: no section


def test_corrected_scores_have_cache_entries_of_their_own():
    from dashboard.annotations.rescore import CORRECTED, salted

    plain = (("qa.jsonl", 1, 2),)
    assert salted("abc", plain) == "abc"
    one, other = salted("abc", (CORRECTED, "k1", plain)), salted("abc", (CORRECTED, "k2", plain))
    assert len({"abc", one, other}) == 3

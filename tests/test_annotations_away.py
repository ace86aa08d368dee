"""Nothing typed is lost while the annotations database is away (issue 28): an edit of an existing
note whose Save failed because PostgreSQL had just stopped stays in the form through every rerun
while it is away (a read that fails is not "there is no note"), the page says why it is read-only and offers a retry, and once
the server is back the edit is saved over the revision it was drawn from. Its own PostgreSQL server."""

from __future__ import annotations

import pg_kit
from dashboard.annotations.store import AnnotationStore

FORM = "qd_a_q2_b"  # the note form of run b's answer to q2 on the question detail


def test_an_unsaved_edit_survives_the_database_going_away_and_is_saved_when_it_is_back(tmp_path, monkeypatch):
    from app_kit import app_on
    from dashboard.annotations import store as annotations_store
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    monkeypatch.setattr(annotations_store, "DEFAULT_RETRY_INTERVAL", 0.0)  # the app's store tries the server again on every look
    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)
    with pg_kit.running() as pg:
        url = pg.fresh_database("awayedit")
        AnnotationStore(url).save_note(identity, "q2", "b", text="the stored note", tags=["reasoning_error"], author="Ana",
                                       expected_revision=0)
        monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
        at = app_on(monkeypatch, bench, {"sel": "q2", "run": "b"}, timeout=60, env={"LENS_DATABASE_URL": url})
        at.switch_page("views/questions.py").run()
        text = lambda: at.text_area(key=f"ann_text_{FORM}")  # noqa: E731
        tags = lambda: at.multiselect(key=f"ann_tags_{FORM}")  # noqa: E731
        save = lambda: next(b for b in at.button if b.label == "Save" and f"ann_form_{FORM}" in (b.proto.form_id or ""))  # noqa: E731
        assert not at.exception and text().value == "the stored note" and tags().value == ["reasoning_error"]
        at.text_input(key="ann_name_qd").input("Bo").run()
        pg.stop()  # mid-edit
        at.run()  # the page finds it gone: read-only, and the form keeps what it was drawn with (never "no note")
        assert not at.exception and text().value == "the stored note" and save().disabled
        # what a Save pressed as it went away leaves in the form: the edit, committed to the session, not stored
        at.session_state[f"ann_text_{FORM}"] = "my unsaved edit"
        at.session_state[f"ann_tags_{FORM}"] = ["reasoning_error", "hallucination"]
        for _ in range(3):  # every rerun while it is away (the first wiped the form before: "no note" was drawn)
            at.run()
            assert not at.exception
            assert text().value == "my unsaved edit" and tags().value == ["reasoning_error", "hallucination"]
            assert save().disabled
        said = " ".join(w.value for w in at.warning) + " ".join(c.value for c in at.caption)
        assert "cannot be reached" in said.replace("\\", "") or "read-only" in said
        assert "what you typed stays in this form" in said and pg_kit.PASSWORD not in said
        retry = next(b for b in at.button if b.key == f"ann_retry_{FORM}")
        retry.click().run()  # tried while still away: the same, nothing lost
        assert not at.exception and text().value == "my unsaved edit"
        pg.start()
        next(b for b in at.button if b.key == f"ann_retry_{FORM}").click().run()  # found again
        assert not at.exception and not save().disabled
        assert text().value == "my unsaved edit" and tags().value == ["reasoning_error", "hallucination"]
        assert not any(b.key == f"ann_retry_{FORM}" for b in at.button)
        save().click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        note = AnnotationStore(url).note(identity, "q2", "b")
        assert note is not None and note.text == "my unsaved edit" and note.author == "Bo" and note.revision == 2
        assert note.tags == ("hallucination", "reasoning_error")

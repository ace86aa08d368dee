"""Two app servers sharing one PostgreSQL database (issue 28): two processes, each with its own
AnnotationStore as each `docbench-lens` server holds one, driven through a pipe. A note, tag,
correction and saved slice made on one are read on the other; a gold correction moves the
leaderboard identically on both; an edit from a stale revision on one sees the other's save and
says who; 20 writer threads across both servers lose nothing; PostgreSQL stopped in the middle ->
one sentence and read-only on both, started again -> writes work on both without a new store."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest

import pg_kit
from annotations_kit import write_notes
from dashboard.annotations.errors import AnnotationsUnavailable
from dashboard.annotations.records import Conflict
from dashboard.annotations.store import AnnotationStore

BENCH = "0123456789abcdef"
HANG_GUARD = 180.0  # seconds: far above the expected time, only so that a hang fails instead of blocking the suite
GOLD = [{"question_id": q, "question": f"How many in {q}?", "answer": {"value": v, "format": "Int"},
         "document": {"document_id": "doc_1", "evidence_pages": [1]}} for q, v in (("q1", "10"), ("q2", "20"), ("q3", "30"), ("q4", "40"))]
ANSWERS = {"q1": "10", "q2": "77", "q3": "30", "q4": "99"}  # right on q1 and q3: 50 %; a correction q2 -> 77 makes it 75 %


def accuracy_with_corrections(store: AnnotationStore, gold_path: str) -> float:
    """The leaderboard's number "with gold corrections" for the one run, as the app computes it."""
    from dashboard.annotations.corrections import apply_corrections
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold
    from scoring.model import Prediction

    gold, _ = apply_corrections(load_gold(Path(gold_path)).items, store.corrections(BENCH))
    result = evaluate(gold, [Prediction(q, a, "success") for q, a in ANSWERS.items()])
    return sum(r.accuracy for r in result.results) / len(result.results)


def writers(store: AnnotationStore, names: list[str], count: int, rounds: int) -> list[str]:
    """`annotations_kit.write_notes` in one thread per name; the errors (and hung threads), none expected."""
    errors: list[str] = []

    def work(who: str) -> None:
        try:
            write_notes(store, who, count, rounds)
        except BaseException as exc:  # handed to the test
            errors.append(f"{who}: {exc!r}")

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD)
    return errors + [f"{t.name} hung" for t in threads if t.is_alive()]


def server(url: str, conn) -> None:
    """One 'app server': its own store; runs the commands the test sends until None."""
    store = AnnotationStore(url, retry_interval=0)
    while True:
        command = conn.recv()
        if command is None:
            return
        name, args, kw = command
        try:
            if name == "writers":
                conn.send(("ok", writers(store, kw["who"], *args)))
            elif name == "accuracy":
                conn.send(("ok", accuracy_with_corrections(store, *args)))
            elif name == "problem":
                p = store.problem
                conn.send(("ok", None if p is None else (p.reason, p.message)))
            else:
                conn.send(("ok", getattr(store, name)(*args, **kw)))
        except (AnnotationsUnavailable, Conflict) as exc:
            conn.send((type(exc).__name__, exc.message))


class Server:
    def __init__(self, url: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=server, args=(url, child), daemon=True)
        self.process.start()

    def __call__(self, name: str, *args, **kw):
        self.conn.send((name, args, kw))
        assert self.conn.poll(HANG_GUARD), f"the server hung on {name}"
        status, value = self.conn.recv()
        if status != "ok":
            raise {"AnnotationsUnavailable": AnnotationsUnavailable, "Conflict": RuntimeError}[status](*(
                [None, "x", value] if status == "AnnotationsUnavailable" else [value]))
        return value

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(HANG_GUARD)
        if self.process.is_alive():
            self.process.terminate()


@pytest.fixture
def two_servers(postgres, tmp_path):
    url = postgres.fresh_database("twoservers")
    servers = [Server(url), Server(url)]
    yield servers, url
    for s in servers:
        s.close()


def test_what_one_server_saves_the_other_reads_and_the_leaderboards_agree(two_servers, tmp_path):
    (a, b), _ = two_servers
    gold = tmp_path / "qa_single_doc.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD), encoding="utf-8")
    assert a("accuracy", str(gold)) == b("accuracy", str(gold)) == 0.5
    a("add_tag", "table_misread")
    note = a("save_note", BENCH, "q2", "run", text="the gold is 77: page 4", tags=["table_misread", "gold_wrong"], author="Ana",
             expected_revision=0)
    assert b("note", BENCH, "q2", "run") == note and "table_misread" in b("vocabulary")
    assert b("tag_usage", BENCH) == {"gold_wrong": 1, "table_misread": 1}
    a("save_correction", BENCH, "q2", answer="77", author="Ana", expected_revision=0)
    assert [c.answer for c in b("corrections", BENCH)] == ["77"]
    assert a("accuracy", str(gold)) == b("accuracy", str(gold)) == 0.75  # hand-computed: q1, q2 (corrected), q3 right of 4
    sliced = b("save_slice", BENCH, "finance", definition={"domain": ["finance"]}, author="Bo", expected_revision=0)
    assert a("saved_slices", BENCH) == [sliced]
    # both editors opened revision 1 of the note: the later save, on the other server, sees the earlier one
    b("save_note", BENCH, "q2", "run", text="Bo's reading", author="Bo", expected_revision=1)
    with pytest.raises(RuntimeError) as info:
        a("save_note", BENCH, "q2", "run", text="Ana's second reading", author="Ana", expected_revision=1)
    assert "Bo changed this note" in str(info.value) and "Bo's reading" in str(info.value)


def test_twenty_writer_threads_across_two_servers_lose_nothing(two_servers, postgres):
    (a, b), url = two_servers
    names = [f"w{k}" for k in range(20)]
    results: dict[str, list] = {}

    def drive(server_, who):
        results[who[0]] = server_("writers", 15, 4, who=who)

    threads = [threading.Thread(target=drive, args=(a, names[:10])), threading.Thread(target=drive, args=(b, names[10:]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD)
    assert results == {"w0": [], "w10": []}
    store = AnnotationStore(url)
    own = {(n.question_id, n.text) for n in store.notes(BENCH) if n.question_id != "shared"}
    assert own == {(f"{w}-q{i}", f"{w} note {i}") for w in names for i in range(15)}
    shared = store.note(BENCH, "shared")
    assert shared is not None and shared.revision == 20 * 4
    assert sorted(shared.text.split("\n")) == sorted(f"{w}:{i}" for w in names for i in range(4))
    assert store.tag_usage(BENCH) == {"reasoning_error": 20 * 7}


def test_the_database_stopped_mid_way_makes_both_read_only_and_back_when_it_is():
    """Its own PostgreSQL server: it is stopped and started again."""
    with pg_kit.running() as pg:
        url = pg.fresh_database("stopped")
        a, b = Server(url), Server(url)
        try:
            a("save_note", BENCH, "q1", text="before", author="Ana", expected_revision=0)
            assert b("note", BENCH, "q1").text == "before"
            pg.stop()
            for s in (a, b):
                with pytest.raises(AnnotationsUnavailable) as info:
                    s("save_note", BENCH, "q2", text="while it is away", author="Ana", expected_revision=0)
                assert "cannot be reached" in info.value.message and pg_kit.PASSWORD not in info.value.message
                reason, message = s("problem")
                assert reason == "unreachable" and message.startswith(f"The annotations database postgresql://lens@127.0.0.1:{pg.port}/")
                assert s("notes", BENCH) == []  # read-only, nothing to show: never a traceback
            pg.start()
            assert a("problem") is None and b("problem") is None  # found again on the next look, no restart
            a("save_note", BENCH, "q2", text="after, from a", author="Ana", expected_revision=0)
            b("save_note", BENCH, "q1", text="after, from b", author="Bo", expected_revision=1)
            assert [n.text for n in a("notes", BENCH)] == ["after, from b", "after, from a"]
        finally:
            a.close()
            b.close()


def test_the_app_is_read_only_while_the_database_is_away_and_writes_again_when_it_is_back(tmp_path, monkeypatch):
    """The app itself (AppTest) on LENS_DATABASE_URL: the server stopped -> the question page says so,
    naming the URL without its password, and its Save is disabled; started again -> the next rerun
    finds it (no restart, no new store) and a note is saved. Its own PostgreSQL server."""
    from app_kit import app_on
    from dashboard.annotations import store as annotations_store
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    monkeypatch.setattr(annotations_store, "DEFAULT_RETRY_INTERVAL", 0.0)  # the app's store tries the server again on every look
    bench = tiny_bench(tmp_path)
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)
    with pg_kit.running() as pg:
        url = pg.fresh_database("appretry")
        monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
        at = app_on(monkeypatch, bench, {"sel": "q2", "run": "b"}, timeout=60, env={"LENS_DATABASE_URL": url})
        at.switch_page("views/questions.py").run()
        save = lambda: next(b for b in at.button if b.label == "Save" and "ann_form_qd_a_q2_b" in (b.proto.form_id or ""))
        assert not at.exception and not save().disabled
        pg.stop()
        at.run()  # finds it gone (said once per session)
        away = [w.value for w in at.warning if "cannot be reached" in w.value]
        at.run()
        assert not at.exception and save().disabled and len(away) == 1
        assert f"127.0.0.1:{pg.port}" in away[0].replace("\\", "") and pg_kit.PASSWORD not in " ".join(away)
        pg.start()
        at.run()
        assert not at.exception and not save().disabled
        at.text_input(key="ann_name_qd").input("Ana").run()
        at.text_area(key="ann_text_qd_a_q2_b").input("saved after the restart")
        save().click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        note = AnnotationStore(url).note(identity, "q2", "b")
        assert note is not None and note.text == "saved after the restart" and note.author == "Ana"

"""The annotations database on PostgreSQL when it is away or refuses (issue 28): down, a wrong
password, a database that does not exist, a read-only login, a newer schema, someone else's tables
-- one sentence naming the URL without its password (never printed or logged), reads that return
nothing or what can be read, writes refused, and a retry that finds the server again. Also where
the database lives (LENS_DATABASE_URL) and a database left at the first schema revision."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import sqlalchemy as sa

import pg_kit
from dashboard.annotations.errors import AnnotationsUnavailable
from dashboard.annotations.location import ServerLocation, location_key, resolve_location, shown_url
from dashboard.annotations.records import DEFAULT_TAGS
from dashboard.annotations.schema import HEAD_REVISION
from dashboard.annotations.store import AnnotationStore

BENCH = "0123456789abcdef"


def no_password_anywhere(password: str, store: AnnotationStore, caplog, capsys) -> None:
    assert store.problem is not None
    texts = [store.problem.message, str(store.problem), str(store.path), repr(store.path), caplog.text]
    out = capsys.readouterr()
    texts += [out.out, out.err]
    try:
        store.save_note(BENCH, "q1", text="x", author="Ana", expected_revision=0)
    except AnnotationsUnavailable as exc:
        texts += [exc.message, str(exc), repr(exc)]
    assert [t for t in texts if password in t] == []


# ----------------------------------------------------------------------------- where the database lives


def test_the_database_url_setting_picks_the_database(tmp_path):
    assert resolve_location(None, {"LENS_DATA_DIR": str(tmp_path)}) == tmp_path / "annotations.sqlite3"
    assert resolve_location(None, {"LENS_DATABASE_URL": "sqlite:///rel/a.db"}) == Path("rel/a.db")
    assert resolve_location(None, {"LENS_DATABASE_URL": f"sqlite:///{tmp_path}/b.db"}) == tmp_path / "b.db"
    where = resolve_location(None, {"LENS_DATABASE_URL": "postgresql://ana:pa55@db.example:5433/lens", "LENS_DATA_DIR": "/x"})
    assert isinstance(where, ServerLocation)
    assert str(where) == "postgresql://ana@db.example:5433/lens" and "pa55" not in repr(where)
    assert where.url.drivername == "postgresql+psycopg" and where.url.password == "pa55"
    assert location_key(None, {"LENS_DATABASE_URL": "postgresql://ana:pa55@db.example:5433/lens"}) == "postgresql://ana:pa55@db.example:5433/lens"
    assert resolve_location(tmp_path / "explicit.db", {"LENS_DATABASE_URL": "postgresql://a@h/d"}) == tmp_path / "explicit.db"
    assert shown_url("postgresql://ana:p%40ss:w0rd@h:1/d") == "postgresql://ana@h:1/d"


@pytest.mark.parametrize("url", ["mysql://ana:s3cret@h/d", "sqlite://", "postgresql://ana:s3cret@h:5432/"])
def test_a_url_that_cannot_be_used_makes_the_store_read_only_with_a_sentence(url, caplog, capsys):
    store = AnnotationStore(env={"LENS_DATABASE_URL": url})
    assert store.problem is not None and not store.readable and store.notes(BENCH) == []
    assert store.vocabulary() == list(DEFAULT_TAGS)
    no_password_anywhere("s3cret", store, caplog, capsys)


# ----------------------------------------------------------------------------- a server away or refusing


def test_a_server_that_is_not_there_is_named_without_its_password(caplog, capsys):
    caplog.set_level(logging.DEBUG)
    url = f"postgresql://lens:{pg_kit.PASSWORD}@127.0.0.1:{pg_kit.free_port()}/lens"
    store = AnnotationStore(url)
    assert store.problem is not None and store.problem.reason == "unreachable" and not store.readable
    assert store.problem.message.startswith(f"The annotations database postgresql://lens@127.0.0.1:{store.path.url.port}/lens cannot be reached")
    assert store.problem.message.count(". ") == 0 and store.problem.message.endswith(".")  # one sentence
    assert store.notes(BENCH) == [] and store.note(BENCH, "q1") is None and store.vocabulary() == list(DEFAULT_TAGS)
    assert store.saved_slices(BENCH) == [] and store.benchmarks() == {}
    with pytest.raises(AnnotationsUnavailable, match="cannot be reached"):
        store.save_correction(BENCH, "q1", exclude=True, author="Ana", expected_revision=0)
    no_password_anywhere(pg_kit.PASSWORD, store, caplog, capsys)


def test_a_wrong_password_is_refused_in_one_sentence_that_does_not_repeat_it(postgres, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    good = postgres.fresh_database("wrongpw")
    bad = good.replace(pg_kit.PASSWORD, "not-the-Passw0rd")
    store = AnnotationStore(bad)
    assert store.problem is not None and store.problem.reason == "refused"
    assert "password authentication failed" in store.problem.message and str(store.path) in store.problem.message
    no_password_anywhere("not-the-Passw0rd", store, caplog, capsys)


def test_a_database_that_does_not_exist_says_so(postgres):
    store = AnnotationStore(postgres.url("no_such_database"))
    assert store.problem is not None and store.problem.reason == "missing" and "does not exist" in store.problem.message


def test_a_read_only_login_reads_and_cannot_write(postgres, caplog, capsys):
    url = postgres.fresh_database("readonly")
    AnnotationStore(url).save_note(BENCH, "q1", "run", text="written by the owner", author="Ana", expected_revision=0)
    reader_url = postgres.url(url.rsplit("/", 1)[1], "lens_reader", pg_kit.READER_PASSWORD)
    reader = AnnotationStore(reader_url)
    assert reader.problem is not None and reader.problem.reason == "denied" and reader.readable
    assert "may only be read" in reader.problem.message and str(reader.path) in reader.problem.message
    assert [n.text for n in reader.notes(BENCH)] == ["written by the owner"]
    with pytest.raises(AnnotationsUnavailable):
        reader.save_note(BENCH, "q1", "run", text="changed", author="Bo", expected_revision=1)
    no_password_anywhere(pg_kit.READER_PASSWORD, reader, caplog, capsys)


def test_a_schema_newer_than_this_code_is_left_alone(postgres):
    url = postgres.fresh_database("newer")
    AnnotationStore(url).save_note(BENCH, "q1", text="x", author="Ana", expected_revision=0)
    engine = sa.create_engine(ServerLocation(url).url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = 'r99'"))
    store = AnnotationStore(url)
    assert store.problem is not None and store.problem.reason == "newer" and "r99" in store.problem.message
    assert HEAD_REVISION in store.problem.message and store.notes(BENCH) == []
    with pytest.raises(AnnotationsUnavailable):
        store.save_note(BENCH, "q2", text="x", author="Ana", expected_revision=0)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "r99"
    engine.dispose()


def test_another_programs_database_is_left_alone(postgres):
    url = postgres.fresh_database("foreign")
    engine = sa.create_engine(ServerLocation(url).url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE invoices (id integer)"))
    store = AnnotationStore(url)
    assert store.problem is not None and store.problem.reason == "foreign"
    with engine.connect() as conn:
        assert sa.inspect(conn).get_table_names() == ["invoices"]
    engine.dispose()


def test_a_database_at_the_first_revision_is_migrated_with_its_data(postgres):
    """The r1 -> r2 step (tags out of one column, exclusions out of NULL answers) on PostgreSQL."""
    from alembic import command

    from dashboard.annotations.schema import alembic_config

    url = postgres.fresh_database("firstrev")
    engine = sa.create_engine(ServerLocation(url).url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "r1")
        conn.execute(sa.text("INSERT INTO notes VALUES (:b, 'q1', 'run-a', 'page 3', 'gold_wrong,Table Misread,bad!', 'Ana', "
                             "'2024-01-02T03:04:05Z', '2024-01-03T03:04:05+00:00')"), {"b": BENCH})
        conn.execute(sa.text("INSERT INTO corrections VALUES (:b, 'q4', NULL, 'Bo', '2024-01-06T00:00:00Z')"), {"b": BENCH})
    engine.dispose()
    store = AnnotationStore(url)
    assert store.problem is None
    (note,) = store.notes(BENCH)
    assert (note.tags, note.updated, note.revision) == (("gold_wrong", "table_misread"), "2024-01-03T03:04:05.000000Z", 1)
    assert [(c.question_id, c.action) for c in store.corrections(BENCH)] == [("q4", "exclude")]
    assert store.vocabulary() == [*DEFAULT_TAGS, "table_misread"]


def test_a_server_stopped_and_started_again_is_found_without_a_new_store():
    """Its own server (the session's keeps running for the other tests)."""
    with pg_kit.running() as server:
        url = server.fresh_database("restart")
        store = AnnotationStore(url, retry_interval=0)
        store.save_note(BENCH, "q1", text="before", author="Ana", expected_revision=0)
        server.stop()
        with pytest.raises(AnnotationsUnavailable) as info:
            store.save_note(BENCH, "q1", text="during", author="Ana", expected_revision=1)
        assert info.value.reason == "unreachable" and pg_kit.PASSWORD not in info.value.message
        assert store.problem is not None and store.problem.reason == "unreachable"  # tried again: still away
        assert store.notes(BENCH) == []
        server.start()
        assert store.problem is None and store.writable  # reading `problem` tried again and found it
        assert store.save_note(BENCH, "q1", text="after", author="Ana", expected_revision=1).revision == 2
        assert [n.text for n in store.notes(BENCH)] == ["after"]


def test_a_login_the_database_does_not_let_in_is_denied_without_a_traceback(postgres, caplog, capsys):
    url = postgres.fresh_database("noconnect")
    name = url.rsplit("/", 1)[1]
    postgres.psql(f"REVOKE CONNECT ON DATABASE {name} FROM PUBLIC; REVOKE CONNECT ON DATABASE {name} FROM lens_reader;")
    store = AnnotationStore(postgres.url(name, "lens_reader", pg_kit.READER_PASSWORD))
    assert store.problem is not None and store.problem.reason == "denied" and "permission denied" in store.problem.message
    assert store.notes(BENCH) == [] and str(store.path) in store.problem.message
    no_password_anywhere(pg_kit.READER_PASSWORD, store, caplog, capsys)

"""No credential shown in any URL form (issue 35, item 5): user:password, `?password=`, `?sslpassword=`,
a password file's path (`?passfile=`), a libpq connection string -- never on a page, in a log or in an
error. scoring/redact.py is the one place a URL is made fit to show; here it is held to that on
its own, through the annotations database (a real throwaway PostgreSQL, tests/pg_kit.py: a wrong
password given every way, a server that is down), the launcher, the app's pages (AppTest) and a
served app's own output (its stderr, with Streamlit's logging at debug level)."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import pg_kit
import server_kit
from app_kit import app_on
from browser_kit import OUT, check_clean, open_page, settle
from dashboard import launch
from dashboard.annotations.errors import AnnotationsUnavailable, InvalidInput
from dashboard.annotations.location import ServerLocation, shown_url
from dashboard.annotations.store import AnnotationStore
from scoring.redact import MASK, redact, redact_url

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
SECRET = "Qz-9secret-Pw"  # never the real password: the login is refused with it
PASSFILE = "/srv/ana/hidden-dir/pgpass"
SSLPW = "key-Unlock-77"


# ----------------------------------------------------------------------------- the function itself

@pytest.mark.parametrize("url,shown", [
    ("postgresql://lens:Qz-9secret-Pw@db:5432/lens", "postgresql://lens@db:5432/lens"),
    ("postgresql://lens@db:5432/?password=Qz-9secret-Pw", f"postgresql://lens@db:5432/?password={MASK}"),
    ("postgresql://lens@db/lens?sslmode=require&sslpassword=key-Unlock-77", f"postgresql://lens@db/lens?sslmode=require&sslpassword={MASK}"),
    ("postgresql://lens@db/lens?passfile=/srv/ana/hidden-dir/pgpass&application_name=x",
     f"postgresql://lens@db/lens?passfile={MASK}&application_name=x"),
    ("postgresql://lens:p%40ss%3AQz-9secret-Pw@db/lens", "postgresql://lens@db/lens"),  # percent-encoded
    ("postgresql://lens:Qz-9sec@ret-Pw@db/lens", "postgresql://lens@db/lens"),  # a raw "@" in the password
    ("postgresql://lens:a/b?Qz-9secret-Pw@db/lens", "postgresql://lens@db/lens"),  # "/" and "?" in it
    ("postgresql://lens@db/lens?PASSWORD=Qz-9secret-Pw", f"postgresql://lens@db/lens?PASSWORD={MASK}"),
    ("https://example.org/x?token=Qz-9secret-Pw&page=2", f"https://example.org/x?token={MASK}&page=2"),
    ("host=db password=Qz-9secret-Pw dbname=lens", f"host=db password={MASK} dbname=lens"),
    ("host=db password='Qz-9 secret\\' Pw' sslpassword = key-Unlock-77 passfile=/srv/ana/hidden-dir/pgpass",
     f"host=db password={MASK} sslpassword = {MASK} passfile={MASK}"),
    ("postgresql://lens@db:5432/lens", "postgresql://lens@db:5432/lens"),  # nothing to hide: as it is
    ("sqlite:////srv/notes.sqlite3", "sqlite:////srv/notes.sqlite3"),
])
def test_every_url_form_is_shown_without_its_secret(url, shown):
    assert redact_url(url) == shown
    for secret in (SECRET, SSLPW, PASSFILE, "Qz-9 secret"):
        assert secret not in redact_url(url)
        assert secret not in redact(f"could not connect to {url}: refused", [])


def test_a_message_holding_urls_and_a_known_secret_keeps_the_rest():
    text = ('connection to "postgresql://lens:Qz-9secret-Pw@db/lens?sslmode=require" failed. The server said '
            'Qz-9secret-Pw; also host=db password=Qz-9secret-Pw user=lens, and see https://www.postgresql.org/docs/.')
    said = redact(text, ["Qz-9secret-Pw"])
    assert SECRET not in said
    assert said == ('connection to "postgresql://lens@db/lens?sslmode=require" failed. The server said ***; also '
                    'host=db password=*** user=lens, and see https://www.postgresql.org/docs/.')
    assert "%40" not in redact("x p%40ss y", ["p@ss"]) and "p@ss" not in redact("x p@ss y", ["p%40ss"])


def test_the_store_and_the_launcher_show_urls_only_through_it():
    """`shown_url` and the store's location are redact_url's text; a URL without a database, whose
    password is a query parameter, is refused naming the URL without it (it once showed it)."""
    url = f"postgresql://lens@127.0.0.1:5432/?password={SECRET}"
    assert shown_url(url) == f"postgresql://lens@127.0.0.1:5432/?password={MASK}"
    with pytest.raises(InvalidInput) as refused:
        ServerLocation(url)
    assert SECRET not in str(refused.value) and "names no database" in str(refused.value)
    with pytest.raises(ValueError) as launcher:
        launch.annotations_location(url)
    assert SECRET not in str(launcher.value) and f"password={MASK}" in str(launcher.value)
    where = ServerLocation(f"postgresql://lens@db/lens?password={SECRET}&sslpassword={SSLPW}&passfile={PASSFILE}")
    assert str(where) == repr(where)[len("ServerLocation('"):-2] == "postgresql://lens@db/lens"
    assert where.scrub(f"refused {SECRET} {SSLPW} {PASSFILE}") == f"refused {MASK} {MASK} {MASK}"


# ----------------------------------------------------------------------------- a real PostgreSQL refusing or away

def _everything_said(store: AnnotationStore, caplog, capsys) -> str:
    texts = [store.problem.message if store.problem else "", str(store.path), repr(store.path), caplog.text]
    out = capsys.readouterr()
    texts += [out.out, out.err]
    try:
        store.save_note("bench", "q1", text="x", author="Ana", expected_revision=0)
    except AnnotationsUnavailable as exc:
        texts += [exc.message, str(exc), repr(exc)]
    return "\n".join(texts)


def _wrong_ways(server: pg_kit.Server, database: str) -> dict[str, str]:
    """The same wrong password given in each URL form, with a secret ssl password and password file."""
    base = f"postgresql://lens@127.0.0.1:{server.port}"
    return {
        "userinfo": f"postgresql://lens:{SECRET}@127.0.0.1:{server.port}/{database}",
        "query": f"{base}/{database}?password={SECRET}",
        "query, no database": f"{base}/?password={SECRET}",
        "sslpassword and passfile": f"{base}/{database}?password={SECRET}&sslpassword={SSLPW}&passfile={PASSFILE}",
    }


def test_a_wrong_password_in_any_url_form_is_never_repeated(postgres, caplog, capsys, tmp_path):
    caplog.set_level(logging.DEBUG)
    database = postgres.fresh_database("credentials").rsplit("/", 1)[1]
    for form, url in _wrong_ways(postgres, database).items():
        store = AnnotationStore(url)
        assert store.problem is not None and not store.readable, form
        assert store.problem.reason == ("error" if form == "query, no database" else "refused"), (form, store.problem.message)
        said = _everything_said(store, caplog, capsys)
        for secret in (SECRET, SSLPW, PASSFILE):
            assert secret not in said, (form, secret, said)
        assert f"127.0.0.1:{postgres.port}" in store.problem.message, form  # the server is still named


def test_a_server_that_is_down_is_named_without_any_secret(caplog, capsys):
    caplog.set_level(logging.DEBUG)
    with pg_kit.running() as server:
        database = server.fresh_database("down").rsplit("/", 1)[1]
        server.stop()
        for form, url in _wrong_ways(server, database).items():
            store = AnnotationStore(url)
            assert store.problem is not None, form
            assert store.problem.reason == ("error" if form == "query, no database" else "unreachable"), (form, store.problem.message)
            said = _everything_said(store, caplog, capsys)
            for secret in (SECRET, SSLPW, PASSFILE):
                assert secret not in said, (form, secret, said)


# ----------------------------------------------------------------------------- the app's pages

def _strings(message) -> list[str]:
    """Every string field of a protobuf message, nested messages included."""
    out = []
    for field, value in message.ListFields():
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        values = value if repeated else [value]
        if field.type == field.TYPE_MESSAGE:
            for v in values:
                out += _strings(v)
        elif field.type == field.TYPE_STRING:
            out += list(values)
    return out


def _page_text(at: AppTest) -> str:
    """Everything the page sent, as read: every string of every element (markdown with its escapes
    and the zero-width spaces md_escape puts in removed) and every table's cells."""
    out, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        proto = getattr(node, "proto", None)
        if proto is not None:
            out += _strings(proto)
        if type(node).__name__ == "Dataframe":
            out.append(node.value.to_csv())
        todo.extend(getattr(node, "children", {}).values())
    return re.sub(r"\\(.)", r"\1", "\n".join(out)).replace("\u200b", "")


@pytest.mark.parametrize("form", ["query, no database", "sslpassword and passfile", "userinfo"])
def test_the_data_page_and_the_notes_never_show_a_secret(form, postgres, monkeypatch, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    database = postgres.fresh_database("pages").rsplit("/", 1)[1]
    url = _wrong_ways(postgres, database)[form]
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
    at = app_on(monkeypatch, SAMPLE, timeout=120, env={"LENS_DATABASE_URL": url})
    assert not at.exception, [e.value for e in at.exception]
    seen = [_page_text(at)]
    for page in ("views/data.py", "views/questions.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        seen.append(_page_text(at))
    text = "\n".join(seen)
    assert f"Database: postgresql://lens@127.0.0.1:{postgres.port}/" in text  # the Data page names it (the "//" kept)...
    for secret in (SECRET, SSLPW, PASSFILE):
        assert secret not in text and secret not in caplog.text, (form, secret)  # ...and nothing else


# ----------------------------------------------------------------------------- a served app's own output

def test_a_served_app_logs_no_secret(postgres, tmp_path, browser):
    """A real server started by the launcher, its logging at debug level, with LENS_DATABASE_URL holding
    the password as a query parameter (no database), an ssl password and a password file; a browser
    opens the Data page (the script opens the store, which is refused); neither the page nor the
    server's whole output holds a secret."""
    database = postgres.fresh_database("served").rsplit("/", 1)[1]
    # the launcher refuses a URL without a database (test above): this one reaches the server as the
    # setting, with the password as a query parameter -- the form the Data page once showed
    url = _wrong_ways(postgres, database)["query, no database"] + f"&sslpassword={SSLPW}&passfile={PASSFILE}"
    port = pg_kit.free_port()
    log = tmp_path / "server.log"
    env = {"LENS_DATA_DIR": str(tmp_path / "data"), "STREAMLIT_LOGGER_LEVEL": "debug", "LENS_DATABASE_URL": url}
    cmd = [sys.executable, "-m", "dashboard.launch", "--headless", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with server_kit.started(cmd, base, log, tmp_path, env):
        # a session in a real browser: the script runs, opens the store (refused) and says so on the Data page
        b = browser  # the session's Chromium: a second sync Playwright in one thread is refused
        errors: list[str] = []
        page = open_page(b, base, errors)
        page.goto(base + "/data")
        settle(page, "Data")
        named = page.get_by_text("cannot be used").first
        named.wait_for()
        named.scroll_into_view_if_needed()
        shown = page.inner_text("body").replace("\u200b", "")  # md_escape keeps URLs from turning into links
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT / "credentials_data_page.png"))
        check_clean(page, errors, log, "the Data page")
        page.close()
    output = log.read_text(errors="replace")
    assert "Runtime state:" in output  # a debug-level line: the logging really was at debug level
    for secret in (SECRET, SSLPW, PASSFILE):
        assert secret not in output, (secret, output[-2000:])
        assert secret not in shown, secret
    assert f"lens@127.0.0.1:{postgres.port}/?password=***" in shown  # the server is named, the secret masked

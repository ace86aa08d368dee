"""`docbench-lens --annotations` takes a database URL as well as a file (issue 28): a PostgreSQL URL
reaches the server as LENS_DATABASE_URL in its environment -- never on its command line, where
`ps` shows it to every user -- and is never printed with its password; a file or sqlite:///PATH
becomes an absolute path, as before; any other URL is refused in one sentence without the password."""

from __future__ import annotations

import sys

import pytest

from dashboard import launch, resources
from dashboard.annotations.location import ServerLocation, resolve_location
from dashboard.core.paths import annotations_from

URL = "postgresql://ana:S3cret-pw@db.example:5433/lens"


def parse(argv: list[str]):
    return launch.build_parser().parse_args(argv)


def test_a_postgresql_url_goes_to_the_server_environment_not_its_command_line(monkeypatch):
    monkeypatch.delenv("LENS_ADDRESS", raising=False)
    args = parse(["--annotations", URL, "--port", "8600"])
    cmd = launch.build_command(args)
    assert cmd == [sys.executable, "-m", "dashboard.session.server", "run", str(resources.APP), "--server.port", "8600",
                   "--server.address", "127.0.0.1"]
    assert all("S3cret" not in part for part in cmd)
    env = launch.build_environment(args, {"PATH": "/usr/bin", "LENS_DATABASE_URL": "postgresql://old@h/d"})
    assert env == {"PATH": "/usr/bin", "LENS_DATABASE_URL": URL}  # --annotations wins over the setting
    where = resolve_location(None, env)  # what the app then opens
    assert isinstance(where, ServerLocation) and where.url.password == "S3cret-pw" and str(where) == "postgresql://ana@db.example:5433/lens"


def test_postgres_scheme_and_without_password_are_servers_too():
    for url in ("postgres://ana@db.example/lens", "postgresql+psycopg://ana@db.example/lens"):
        args = parse(["--annotations", url])
        assert "--annotations" not in launch.build_command(args)
        assert isinstance(resolve_location(None, launch.build_environment(args, {})), ServerLocation)


def test_a_file_or_sqlite_url_becomes_an_absolute_path_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for given in ("notes.sqlite3", "sqlite:///notes.sqlite3", f"sqlite:///{tmp_path}/notes.sqlite3"):
        args = parse(["--annotations", given])
        cmd = launch.build_command(args)
        assert cmd[-2:] == ["--annotations", str(tmp_path / "notes.sqlite3")], given
        assert annotations_from(cmd[cmd.index("--") + 1:]) == str(tmp_path / "notes.sqlite3")
        assert launch.build_environment(args, {"PATH": "/usr/bin"}) == {"PATH": "/usr/bin"}


@pytest.mark.parametrize("url", ["mysql://ana:S3cret-pw@h/d", "postgresql://ana:S3cret-pw@h:5432/", "sqlite://"])
def test_a_url_that_cannot_be_used_is_refused_without_its_password(url, capsys):
    with pytest.raises(SystemExit) as exit_:
        launch.main(["--annotations", url])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--annotations: " in err and "S3cret" not in err
    assert ("only sqlite:///PATH and postgresql://" in err or "names no server or no database" in err or "sqlite:///PATH" in err), err


def test_the_launcher_execs_the_server_with_the_url_in_its_environment(monkeypatch):
    seen = {}

    def fake_execve(path, argv, env):
        seen.update(path=path, argv=argv, env=env)
        raise SystemExit(0)

    monkeypatch.setattr(launch.os, "execve", fake_execve)
    monkeypatch.setattr(launch.os, "chdir", lambda _: None)
    monkeypatch.setattr(launch.os, "name", "posix")
    with pytest.raises(SystemExit):
        launch.main(["--annotations", URL, "--headless"])
    assert seen["env"]["LENS_DATABASE_URL"] == URL
    assert all("S3cret" not in a for a in seen["argv"])

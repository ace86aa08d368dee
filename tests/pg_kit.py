"""A throwaway PostgreSQL server for the tests: Debian's binaries (/usr/lib/postgresql/*/bin), a
cluster in a temporary folder, on a free loopback port, run as an unprivileged user when the tests
run as root (PostgreSQL refuses root), stopped and removed at the end.

Logins: the superuser `lens_admin` (password ADMIN_PASSWORD), `lens` (PASSWORD, owns the test
databases) and `lens_reader` (READER_PASSWORD, may only read). Password authentication (scram) on
127.0.0.1, so that a wrong password is refused as on a real server. `fresh_database()` makes an
empty database and returns its URL."""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

ADMIN_PASSWORD = "admin-S3cret-pw"
PASSWORD = "lens-S3cret-pw"
READER_PASSWORD = "reader-S3cret-pw"
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections


def binaries() -> Path | None:
    """The newest Debian PostgreSQL bin folder with initdb and pg_ctl, else one on PATH, else None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name)
                   if p.parent.parent.name.isdigit() else 0)
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path and shutil.which("initdb") else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One cluster. `start()` / `stop()` may be called again (the same port and data)."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="lens-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres" if _has_user("postgres") else "nobody"
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.running = False
        self._names = itertools.count(1)

    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = list(args)
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.root)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
        return proc

    def init(self, durable: bool = False) -> None:
        """initdb; `durable` False (the tests) turns fsync and synchronous commit off, True keeps a
        real server's settings (the benchmark)."""
        pwfile = self.root / "pw"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "lens_admin", f"--pwfile={pwfile}", "-E", "UTF8",
                  "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256")
        pwfile.unlink()
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as fh:
            fh.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.root}'\n"
                     "max_connections = 200\nshared_buffers = 32MB\nlog_min_messages = warning\n")
            if not durable:
                fh.write("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")

    def start(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", str(START_TIMEOUT), "start")
        self.running = True

    def stop(self) -> None:
        if self.running:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)
            self.running = False

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the superuser over the unix socket; its output."""
        return self._run(str(self.bin / "psql"), "-h", str(self.root), "-p", str(self.port), "-U", "lens_admin", "-d", database,
                         "-v", "ON_ERROR_STOP=1", "-qAtc", sql).stdout

    def setup_roles(self) -> None:
        self.psql(f"CREATE ROLE lens LOGIN PASSWORD '{PASSWORD}' CREATEDB; "
                  f"CREATE ROLE lens_reader LOGIN PASSWORD '{READER_PASSWORD}';")

    def url(self, database: str, user: str = "lens", password: str | None = PASSWORD) -> str:
        login = f"{user}:{password}" if password else user
        return f"postgresql://{login}@127.0.0.1:{self.port}/{database}"

    def fresh_database(self, hint: str = "t") -> str:
        """A new empty database owned by `lens` (readable by lens_reader once it has tables); its URL."""
        name = f"{''.join(c for c in hint.lower() if c.isalnum())[:30] or 't'}_{next(self._names)}"
        self.psql(f"CREATE DATABASE {name} OWNER lens")
        self.psql("GRANT CONNECT ON DATABASE " + name + " TO lens_reader; "
                  "ALTER DEFAULT PRIVILEGES FOR ROLE lens IN SCHEMA public GRANT SELECT ON TABLES TO lens_reader; "
                  "GRANT USAGE ON SCHEMA public TO lens_reader;", database=name)
        return self.url(name)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@contextlib.contextmanager
def running(durable: bool = False) -> Iterator[Server]:
    """A started server with its roles; stopped and removed afterwards. RuntimeError without binaries."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's server binaries (initdb, pg_ctl) were not found: apt-get install postgresql")
    server = Server(bin_dir)
    try:
        server.init(durable)
        server.start()
        server.setup_roles()
        yield server
    finally:
        server.remove()

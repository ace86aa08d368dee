"""Where the scored runs live, and a connection to them.

One user: DuckDB, embedded -- the file `<cache folder>/engine/lens.duckdb` (the cache folder:
scoring.settings.cache_root), nothing to start. An embedded DuckDB file has one writing process at a
time, and a writer excludes readers in other processes; so every connection to it takes a lock file
beside it first (`lens.duckdb.lock`: exclusive to write, shared to read). A second ingest waits for the
first -- saying once which process it waits for -- up to `wait_s` seconds, then stops with a sentence.

In a process of its own: DuckDB in memory (`memory_target`), for an analysis built from runs held in
memory (a test, the report's command line): gone with its Engine, nothing on disk, no lock.

A team: a DuckLake whose catalog is PostgreSQL (LENS_LAKE_CATALOG=postgresql://user@host:port/db)
and whose data files sit in a folder every server reaches (LENS_LAKE_DATA). Many processes on many
machines write at once: each transaction commits whole or not at all, and two that touch the same
rows conflict at commit -- `Engine.write` runs the transaction again then.

DuckDB's extensions come from the Python packages `duckdb-extension-ducklake` and
`duckdb-extension-postgres` (the version of `duckdb` itself) and are loaded by path (`LOAD '<file>'`)
with `autoinstall_known_extensions` and `autoload_known_extensions` off: nothing is downloaded at run
time, and a missing package is one sentence (`EngineError`). The postgres package's file is named
`postgres.duckdb_extension` while DuckDB wants the name of its entry point, `postgres_scanner`: it is
loaded through a symbolic link of that name in `<cache folder>/engine/extensions/`.

Every message that may quote the catalog's connection string passes through `scoring.redact.redact`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

import duckdb

from scoring.redact import password_of, redact
from scoring.settings import LAKE_CATALOG, LAKE_DATA, cache_root, engine_memory

from . import schema

__all__ = ["EngineError", "DamagedStore", "Target", "Engine", "target_from", "memory_target", "extension_file", "EXTENSION_PACKAGES", "LAKE",
           "EMBEDDED", "MEMORY", "DATABASE_FILE", "LAKE_ALIAS", "WAIT_S"]

EMBEDDED, LAKE, MEMORY = "duckdb", "ducklake", "memory"
DATABASE_FILE = "lens.duckdb"
LAKE_ALIAS = "lens_lake"
WAIT_S = 600.0  # how long a second writer waits for the first (embedded), by default
ATTEMPTS = 8  # a lake transaction run again at most this many times after a conflict
POLL_S = 0.2
EXTENSION_PACKAGES = {"ducklake": "duckdb_extension_ducklake", "postgres": "duckdb_extension_postgres"}
# the name DuckDB derives the entry point from (`<name>_duckdb_cpp_init`), where the file's differs
_ENTRY_NAMES = {"postgres": "postgres_scanner"}
_PACKAGE_NAMES = {"ducklake": "duckdb-extension-ducklake", "postgres": "duckdb-extension-postgres"}
_EXTRA = {"ducklake": "", "postgres": "[server]"}
T = TypeVar("T")


class EngineError(RuntimeError):
    """The engine cannot be used, in one sentence that names no credential."""


class DamagedStore(EngineError):
    """An embedded DuckDB file that is not a whole database (not DuckDB's, cut short, a block whose checksum
    fails): `Engine.set_aside` moves it out of the way so that a new one is made."""


class _NoLakeYet(Exception):
    """A DuckLake's catalog holds no lake yet (a reader's first look)."""


# ----------------------------------------------------------------------------- extensions


def extension_file(name: str) -> Path:
    """The extension file in its installed package (`<site-packages>/duckdb_extension_<name>/extensions/
    v<duckdb version>/<name>.duckdb_extension`); EngineError in one sentence when it is not installed,
    or installed for another DuckDB."""
    package = EXTENSION_PACKAGES[name]
    install = f"pip install 'docbench-lens{_EXTRA[name]}' (it brings {_PACKAGE_NAMES[name]}=={duckdb.__version__})"
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise EngineError(f"DuckDB's {name} extension is not installed: {install}; it is never downloaded at run time")
    want = Path(folders[0]) / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not want.is_file():
        found = sorted(p.name for p in (Path(folders[0]) / "extensions").glob("v*")) if (Path(folders[0]) / "extensions").is_dir() else []
        raise EngineError(f"DuckDB's {name} extension is installed for DuckDB {', '.join(found) or 'no version'}, not for "
                          f"v{duckdb.__version__}: {install}")
    return want


def _loadable(name: str, folder: Path) -> Path:
    """The path to LOAD: the package's file, or a symbolic link to it under the name DuckDB wants."""
    source = extension_file(name)
    entry = _ENTRY_NAMES.get(name)
    if entry is None:
        return source
    for base in (folder, Path(tempfile.gettempdir()) / f"docbench-lens-{os.getuid() if hasattr(os, 'getuid') else 0}"):
        target = base / "extensions" / f"v{duckdb.__version__}" / f"{entry}.duckdb_extension"
        try:
            if target.is_symlink() and target.resolve() == source.resolve():
                return target
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{entry}.{os.getpid()}.tmp")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.symlink(source, tmp)
            os.replace(tmp, target)  # atomic: a concurrent process sees the old link or the new one
            return target
        except OSError:
            continue
    raise EngineError(f"DuckDB's {name} extension cannot be loaded: no folder to place the link {entry}.duckdb_extension in "
                      f"({folder} and the temporary folder are not writable)")


def _load(con: duckdb.DuckDBPyConnection, name: str, folder: Path) -> None:
    path = _loadable(name, folder)
    try:
        con.execute(f"LOAD {_literal(str(path))}")
    except duckdb.Error as exc:
        raise EngineError(f"DuckDB's {name} extension ({path}) does not load: {redact(exc)}") from None


# ----------------------------------------------------------------------------- where


@dataclass(frozen=True)
class Target:
    """Where the scored runs live: an embedded DuckDB file, or a DuckLake (catalog URL, data folder)."""

    kind: str
    database: Path | None = None  # EMBEDDED: the file
    catalog: str = ""  # LAKE: postgresql://... (may carry a password: never shown)
    data: str = ""  # LAKE: the data files' folder
    memory: str = "1GB"
    folder: Path | None = None  # the engine's own folder (extension links, spill files)

    def shown(self) -> str:
        """Where, in words, with no credential."""
        if self.kind == EMBEDDED:
            return f"DuckDB {self.database}"
        if self.kind == MEMORY:
            return "DuckDB in memory"
        return f"the DuckLake {redact(self.catalog)} (data in {self.data})"

    @property
    def secrets(self) -> list[str]:
        return [s for s in (password_of(self.catalog), _conninfo_password(self.catalog)) if s]


def target_from(environ: Mapping[str, str] | None = None, *, lake: str | None = None, lake_data: str | None = None,
                database: Path | None = None) -> Target:
    """The target the settings name: a DuckLake when a catalog is given (`lake`, else LENS_LAKE_CATALOG)
    -- with its data folder (`lake_data`, else LENS_LAKE_DATA) -- else the DuckDB file `database`, by
    default in the cache folder. EngineError for a catalog without a data folder, or not PostgreSQL's."""
    memory = _memory(environ)
    folder = cache_root(environ) / "engine"
    catalog = lake if lake is not None else LAKE_CATALOG.value(environ).strip()
    if catalog:
        data = (lake_data if lake_data is not None else LAKE_DATA.value(environ)).strip()
        scheme = catalog.split("://", 1)[0].lower() if "://" in catalog else ""
        if scheme not in ("postgresql", "postgres"):
            raise EngineError(f"the DuckLake catalog {redact(catalog)} is not a PostgreSQL URL "
                              f"({LAKE_CATALOG.name}=postgresql://user@host:port/database)")
        if not data:
            raise EngineError(f"a DuckLake needs the folder of its data files: set {LAKE_DATA.name} (a folder every server "
                              "reaches), or pass --lake-data")
        return Target(LAKE, catalog=catalog, data=data.rstrip("/") + "/", memory=memory, folder=folder)
    return Target(EMBEDDED, database=database or folder / DATABASE_FILE, memory=memory, folder=folder)


def memory_target(environ: Mapping[str, str] | None = None) -> Target:
    """DuckDB in memory, for one Engine's life (its `memory_limit` the setting's)."""
    return Target(MEMORY, memory=_memory(environ))


def _memory(environ: Mapping[str, str] | None) -> str:
    try:
        return engine_memory(environ)
    except ValueError as exc:
        raise EngineError(str(exc)) from None


def _literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _conninfo_value(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def conninfo(url: str) -> str:
    """libpq's `key=value` connection string for a postgresql:// URL (the form DuckDB's postgres
    extension takes): dbname, host, port, user, password and the query's parameters (sslmode, ...)."""
    parts = urlsplit(url)
    values: dict[str, str] = {}
    database = unquote(parts.path.lstrip("/"))
    if database:
        values["dbname"] = database
    if parts.hostname:
        values["host"] = unquote(parts.hostname)
    if parts.port:
        values["port"] = str(parts.port)
    if parts.username:
        values["user"] = unquote(parts.username)
    if parts.password:
        values["password"] = unquote(parts.password)
    for key, value in parse_qsl(parts.query):
        values[key] = value
    return " ".join(f"{k}={_conninfo_value(v)}" for k, v in values.items())


def _conninfo_password(url: str) -> str:
    try:
        parts = urlsplit(url)
        return unquote(parts.password or "")
    except ValueError:
        return ""


# ----------------------------------------------------------------------------- the engine


class Engine:
    """Connections to one target. `read()` and `write()` are context managers giving a DuckDB
    connection whose current catalog holds the tables (`schema.TABLES`); `transaction(fn)` runs
    `fn(con)` in one transaction, again after a conflict with another writer (a DuckLake)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._held: duckdb.DuckDBPyConnection | None = None  # MEMORY: the database, for the Engine's life
        self._holding = threading.Lock()

    def shown(self) -> str:
        return self.target.shown()

    def error(self, what: str, exc: BaseException) -> EngineError:
        """An EngineError: `what` and the cause's first line (DuckDB adds the query it ran), without a credential."""
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0].strip()
        return EngineError(redact(f"{what}: {cause}", self.target.secrets))

    # ------------------------------------------------------------------ connecting

    def _config(self) -> dict[str, str | bool | int | float | list[str]]:
        config: dict[str, str | bool | int | float | list[str]] = {"memory_limit": self.target.memory, "autoinstall_known_extensions": False,
                                         "autoload_known_extensions": False}
        if self.target.folder is not None:
            config["temp_directory"] = str(self.target.folder / "spill")
        return config

    def _open_embedded(self, write: bool) -> duckdb.DuckDBPyConnection:
        path = self.target.database
        assert path is not None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not write and not path.exists():  # nothing written yet: made (empty) under the write lock
                return _session(duckdb.connect(":memory:", config=self._config()))
            return _session(duckdb.connect(str(path), read_only=not write, config=self._config()))
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():  # another program holds the file without our lock
                raise self.error(f"{self.shown()} is in use by another process", exc) from None
            raise DamagedStore(self.error(f"{self.shown()} is damaged", exc).args[0]) from None
        except (duckdb.Error, OSError) as exc:
            raise self.error(f"{self.shown()} cannot be opened", exc) from None

    def set_aside(self) -> Path | None:
        """Move a damaged embedded DuckDB file (and its write-ahead log) aside, under the write lock, so that
        the next connection makes a new one; returns where it went (None: nothing to move, or not embedded)."""
        path = self.target.database
        if self.target.kind != EMBEDDED or path is None:
            return None
        with self._locked(write=True, wait_s=WAIT_S, on_wait=None):
            if not path.exists():
                return None
            aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
            os.replace(path, aside)
            wal = path.with_name(path.name + ".wal")
            if wal.exists():
                os.replace(wal, aside.with_name(aside.name + ".wal"))
            return aside

    def _open_memory(self) -> duckdb.DuckDBPyConnection:
        """A cursor on the Engine's own in-memory database (made, with its tables, on first use)."""
        with self._holding:
            if self._held is None:
                try:
                    held = _session(duckdb.connect(":memory:", config={"memory_limit": self.target.memory,
                                                                       "autoinstall_known_extensions": False,
                                                                       "autoload_known_extensions": False}))
                except duckdb.Error as exc:
                    raise self.error("DuckDB cannot start", exc) from None
                _ensure(held)
                self._held = held
            return _session(self._held.cursor())

    def _open_lake(self, write: bool) -> duckdb.DuckDBPyConnection:
        t = self.target
        folder = t.folder or cache_root() / "engine"
        try:
            con = _session(duckdb.connect(":memory:", config=self._config()))
        except duckdb.Error as exc:
            raise self.error("DuckDB cannot start", exc) from None
        try:
            _load(con, "postgres", folder)
            _load(con, "ducklake", folder)
            options = [f"DATA_PATH {_literal(t.data)}"] + (["READ_ONLY"] if not write else [])
            con.execute(f"ATTACH {_literal('ducklake:postgres:' + conninfo(t.catalog))} AS {LAKE_ALIAS} ({', '.join(options)})")
            con.execute(f"USE {LAKE_ALIAS}")
        except EngineError:
            con.close()
            raise
        except duckdb.Error as exc:
            con.close()
            if not write and "does not exist" in str(exc) and "creating a new DuckLake" in str(exc):
                raise _NoLakeYet() from None
            raise self.error(f"{self.shown()} cannot be opened", exc) from None
        return con

    @contextlib.contextmanager
    def read(self, *, wait_s: float = WAIT_S, on_wait: Callable[[str], object] | None = None
             ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to read (a shared lock on an embedded file: it waits while a writer writes)."""
        with self._locked(write=False, wait_s=wait_s, on_wait=on_wait):
            if self.target.kind == LAKE:
                try:
                    con = self._open_lake(False)
                except _NoLakeYet:  # a lake nothing was written to: made (empty), then read
                    with self.write():
                        pass
                    con = self._open_lake(False)
            elif self.target.kind == MEMORY:
                con = self._open_memory()
            else:
                con = self._open_embedded(False)
            try:
                if self.target.kind == EMBEDDED and self.target.database is not None and not self.target.database.exists():
                    _ensure(con)  # an empty store: the queries find empty tables
                yield con
            finally:
                con.close()

    @contextlib.contextmanager
    def write(self, *, wait_s: float = WAIT_S, on_wait: Callable[[str], object] | None = None
              ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to write, its tables made if missing (an exclusive lock on an embedded file)."""
        with self._locked(write=True, wait_s=wait_s, on_wait=on_wait):
            con = self._open_lake(True) if self.target.kind == LAKE else self._open_memory() \
                if self.target.kind == MEMORY else self._open_embedded(True)
            try:
                try:
                    self._retried(con, _ensure)
                except EngineError as exc:
                    if self.target.kind == EMBEDDED and "corrupt" in str(exc).lower():
                        raise DamagedStore(str(exc)) from None
                    raise
                yield con
            finally:
                con.close()

    def transaction(self, con: duckdb.DuckDBPyConnection, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """`fn(con)` in one transaction, committed whole or not at all; run again (up to ATTEMPTS times)
        when another writer's commit conflicts with it. EngineError, naming no credential, when it fails."""
        return self._retried(con, fn)

    def _retried(self, con: duckdb.DuckDBPyConnection, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        for attempt in range(ATTEMPTS):
            try:
                con.begin()
                out = fn(con)
                con.commit()
                return out
            except duckdb.TransactionException as exc:
                _rollback(con)
                if attempt == ATTEMPTS - 1:
                    raise self.error(f"{self.shown()}: the transaction conflicted with other writers {ATTEMPTS} times; "
                                     "nothing of it was written", exc) from None
                time.sleep(min(2.0, 0.05 * 2**attempt) * (1 + (os.getpid() % 7) / 7))  # apart from the other writers
            except EngineError:
                _rollback(con)
                raise
            except duckdb.Error as exc:
                _rollback(con)
                raise self.error(f"{self.shown()}: the transaction failed and nothing of it was written", exc) from None
            except BaseException:
                _rollback(con)
                raise
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ the embedded file's lock

    @contextlib.contextmanager
    def _locked(self, *, write: bool, wait_s: float, on_wait: Callable[[str], object] | None) -> Iterator[None]:
        if self.target.kind != EMBEDDED or self.target.database is None:
            yield
            return
        try:
            import fcntl
        except ImportError:  # no advisory locks here: DuckDB's own lock says "in use" instead of waiting
            yield
            return
        lock = self.target.database.with_name(self.target.database.name + ".lock")
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise self.error(f"{self.shown()}: its lock file {lock} cannot be opened", exc) from None
        try:
            mode = fcntl.LOCK_EX if write else fcntl.LOCK_SH
            deadline = time.monotonic() + wait_s
            said = False
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not said and on_wait is not None:
                        holder = _holder(lock)
                        on_wait(f"{self.shown()} is being written by another process{holder}; waiting up to "
                                f"{wait_s:g} s for it to finish")
                        said = True
                    if time.monotonic() >= deadline:
                        raise EngineError(f"{self.shown()} is still being written by another process{_holder(lock)} after "
                                          f"{wait_s:g} s: nothing was done; try again when it has finished") from None
                    time.sleep(POLL_S)
            if write:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock


def _holder(lock: Path) -> str:
    try:
        text = lock.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return ""
    return f" (pid {text[0]} on {text[1]})" if len(text) >= 2 and text[0].isdigit() else ""


def _session(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new connection's own settings: no progress bar (DuckDB draws it on stdout: a job's output)."""
    con.execute("SET enable_progress_bar = false")
    return con


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.Error):
        con.rollback()


def _ensure(con: duckdb.DuckDBPyConnection) -> None:
    """The tables, made when missing; EngineError when the store was made by a newer version."""
    for statement in schema.statements():
        con.execute(statement)
    got = con.execute("SELECT max(CAST(value AS INTEGER)) FROM lens_meta WHERE key = 'schema'").fetchone()
    version = int(got[0]) if got and got[0] is not None else None
    if version is not None and version > schema.SCHEMA_VERSION:
        raise EngineError(f"the scored runs' store was made by a newer docbench-lens (schema {version}, this one reads "
                          f"{schema.SCHEMA_VERSION}): upgrade docbench-lens")
    if version is None or version < schema.SCHEMA_VERSION:
        for table, column, kind in schema.ADDED:  # a store made before these columns gains them (NULL in its rows)
            have = {str(r[0]) for r in con.execute(f"DESCRIBE {table}").fetchall()}
            if column not in have:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        con.execute("INSERT INTO lens_meta VALUES ('schema', ?)", [str(schema.SCHEMA_VERSION)])

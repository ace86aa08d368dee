"""Where the annotations database lives (`resolve_location`): the app's `--annotations PATH_OR_URL`,
else `LENS_DATABASE_URL` (`sqlite:///PATH` or `postgresql://user[:password]@host[:port]/database`,
read with psycopg 3), else `annotations.sqlite3` in the user data folder (`LENS_DATA_DIR`).
Messages name a server's URL without its password (`shown_url`); the password is never printed or
logged.

Above errors.py (a URL that cannot be used is `InvalidInput`); the store opens what this names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from dashboard.core import settings
from scoring.redact import is_secret_name, redact, redact_url

from .errors import InvalidInput

__all__ = ["FILE_NAME", "ServerLocation", "UnusableLocation", "default_path", "resolve_path", "resolve_location",
           "location_key", "shown_url"]

FILE_NAME = "annotations.sqlite3"


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """`annotations.sqlite3` in the user data folder (dashboard.core.settings.data_dir):
    $LENS_DATA_DIR, else $XDG_DATA_HOME/docbench-lens, else ~/.local/share/docbench-lens."""
    return settings.data_dir(env) / FILE_NAME


def resolve_path(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The explicit path (the app's `--annotations PATH`) when given, else `default_path(env)`."""
    if path is not None and str(path) != "":
        return Path(path).expanduser()
    return default_path(env)


def shown_url(url: str | URL) -> str:
    """A database URL as messages show it: without its password or any query parameter (as the
    user spells the dialect, `postgresql://`, not the driver SQLAlchemy is given); a URL's text
    without any credential (scoring.redact.redact_url: no password, `?password=***`)."""
    if isinstance(url, URL):
        bare = URL.create(url.get_backend_name(), username=url.username, host=url.host, port=url.port, database=url.database)
        return bare.render_as_string(hide_password=False)
    return redact_url(url)


class ServerLocation:
    """A database server's URL: `str()` is `shown_url` (no password); `url` is the SQLAlchemy URL
    with the psycopg driver (password included: never print it). `exists()` is True, as for a file
    the store may read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.shown = shown_url(text)
        self.secrets: tuple[str, ...] = ()
        try:
            url = make_url(text)
        except (ArgumentError, ValueError):
            raise InvalidInput(f"{self.shown} is not a database URL (postgresql://user@host:port/database)") from None
        # the password and every secret query value (?password=, ?sslpassword=, ?passfile=...): masked in any text
        self.secrets = (url.password or "", *(v for name, value in url.query.items() if is_secret_name(name)
                                              for v in ((value,) if isinstance(value, str) else value)))
        if url.get_backend_name() != "postgresql":
            raise InvalidInput(f"{self.shown}: only sqlite:///PATH and postgresql://user@host:port/database are supported")
        if not url.database:
            raise InvalidInput(f"{self.shown} names no database (postgresql://user@host:port/database)")
        self.url = url.set(drivername="postgresql+psycopg")
        self.shown = shown_url(self.url)
        self.password = url.password or ""

    def exists(self) -> bool:
        return True

    def scrub(self, text: str) -> str:
        """`text` without any credential (scoring.redact.redact): URLs in it without their
        password and secret parameters, and this URL's password and secret values replaced by ***."""
        return redact(text, self.secrets)

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"ServerLocation({self.shown!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerLocation) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class UnusableLocation:
    """Where a database URL that cannot be used points (another scheme, no database...): `str()` is
    the URL as messages show it (`shown_url`), whole -- a Path would fold its "//"; nothing is there."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def exists(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"UnusableLocation({self.shown!r})"


def _location(text: str) -> Path | ServerLocation:
    """A `--annotations` value or LENS_DATABASE_URL: `sqlite:///PATH` -> that file, `postgresql://...`
    -> the server, anything without `://` -> a file path. InvalidInput for another scheme."""
    if "://" not in text:
        return Path(text).expanduser()
    scheme = text.split("://", 1)[0].lower()
    if scheme in ("sqlite", "sqlite+pysqlite"):
        rest = text.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise InvalidInput(f"{shown_url(text)}: an SQLite URL is sqlite:///PATH (sqlite:////abs/path for an absolute one)")
        return Path(rest[1:]).expanduser()
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return ServerLocation("postgresql" + text[len(scheme):] if scheme == "postgres" else text)
    raise InvalidInput(f"{shown_url(text)}: only sqlite:///PATH and postgresql://user@host:port/database are supported")


def resolve_location(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path | ServerLocation:
    """Where the annotations live: the explicit path or URL (`--annotations`) when given, else
    LENS_DATABASE_URL (settings.DATABASE_URL), else `default_path(env)`. InvalidInput (a sentence
    without the password) for a URL that is neither sqlite:/// nor postgresql://."""
    if path is not None and str(path) != "":
        return _location(os.fspath(path))
    url = settings.DATABASE_URL.value(env).strip()
    if url:
        return _location(url)
    return default_path(env)


def location_key(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> str:
    """What `AnnotationStore(...)` is given to open the database `resolve_location` names, as text
    (a file's path, or the server's URL with its password: a cache key, never shown). A URL that
    cannot be used is returned as it is: the store then says why."""
    try:
        where = resolve_location(path, env)
    except InvalidInput:
        return os.fspath(path) if path is not None and str(path) != "" else settings.DATABASE_URL.value(env).strip()
    return where.text if isinstance(where, ServerLocation) else str(where)

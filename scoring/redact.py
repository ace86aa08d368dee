"""Credentials out of every text we show or log: one function, `redact`, for database URLs, libpq
connection strings and the messages that quote them.

A catalog or database URL may carry a password (`postgresql://user:secret@host/db`); the drivers
quote the connection string they were given in their errors (libpq's `... password=secret ...`,
DuckDB's `Failed to attach ... at path postgres:dbname=... password=...`). Every message that may hold
one passes through `redact` before it reaches a screen, a log or an exception users see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["HIDDEN", "redact", "password_of"]

HIDDEN = "***"
# scheme://user:password@host -- the password is everything up to the last @ before the host part
# (a scheme starts only where no scheme character precedes it: each character is tried once, linear time)
_URL_PASSWORD = re.compile(r"(?P<head>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*):(?P<pw>[^\s@/]*)@")
# libpq key=value: password=secret, password = 'it\'s secret' (libpq's quoting), password=''secret'' (the same
# inside a SQL string literal, quotes doubled), also PGPASSWORD=... in an environment dump
_KV_PASSWORD = re.compile(r"(?P<key>\b(?:password|pgpassword|passwd|pwd)\s*=\s*)"
                          r"(?P<pw>''(?:[^'\\]|\\''|\\.)*(?:''|$)|'(?:[^'\\]|\\.)*(?:'|$)|\S+)", re.IGNORECASE)
# ?password=secret in a URL's query
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&](?:password|pwd)=)(?P<pw>[^&\s#]*)", re.IGNORECASE)


def password_of(url: str) -> str:
    """The password a URL carries in its user part ('' when none): what `redact` hides wherever it appears."""
    m = _URL_PASSWORD.search(url or "")
    return m.group("pw") if m else ""


def redact(text: object, secrets: Iterable[str] = ()) -> str:
    """`text` (any object, as str) with every password hidden: a URL's `user:password@`, a libpq
    `password=...` (quoted or not), a URL query's `password=`, and every literal value of `secrets`
    (a password met anywhere else, e.g. echoed back unquoted). Linear regexes; never raises."""
    out = str(text)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        out = out.replace(secret, HIDDEN)
    out = _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{HIDDEN}@", out)
    out = _KV_PASSWORD.sub(lambda m: f"{m.group('key')}{HIDDEN}", out)
    return _QUERY_PASSWORD.sub(lambda m: f"{m.group('key')}{HIDDEN}", out)

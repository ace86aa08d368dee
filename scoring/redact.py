"""Credentials out of everything we show or log: a database URL in any form, and the driver's errors.

`redact_url(url)` is a URL as the app shows it, `redact(text)` a message that may hold URLs or a
libpq connection string (`host=... password=...`); both drop

* the password of `scheme://user:password@host` (shown `scheme://user@host`),
* the value of every query parameter or connection-string key whose name says it carries a secret
  (`SECRET_NAME`: password, sslpassword, passfile -- a password file's path --, sslkey, token,
  secret, api keys...), shown `name=***`,
* and each secret the caller knows (`secrets`: a password as given, and percent-encoded), wherever
  it appears -- a driver's error may quote it.

A connection string inside an SQL string literal has its quotes doubled (DuckDB's ATTACH of a
DuckLake catalog, `dbname=''lake'' password=''x''`, quoted back in its errors): such a value is a
value too. Standard library only; linear in the text (no regex that can backtrack over it). The one
place a URL or a connection string is made fit to show: the annotations database
(dashboard/annotations/location.py), the engine's catalog (scoring/engine), the launcher
(dashboard/launch.py) and the pages call these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

MASK = "***"
# a parameter or key carrying a secret: libpq's password, sslpassword, passfile (a password file's
# path), sslkey (a private key's path); and the usual names of tokens and keys in other URLs
SECRET_NAME = re.compile(r"pass|pwd|secret|token|sslkey|api_?key|access_?key|private_?key|credential|signature",
                         re.IGNORECASE)
MIN_SECRET = 3  # a known secret shorter than this is not searched for in free text (it would mask letters)

_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# key=value in a libpq connection string: a value in doubled quotes (inside an SQL literal), a quoted value ('...', \' and \\ inside) or up to a space
_KEY_VALUE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)([ \t]*=[ \t]*)(''(?:[^'\\]|\\.)*(?:''|$)|'(?:[^'\\]|\\.)*'?|[^\s']+)")


def password_of(url: str) -> str:
    """The password a URL carries in its user part (`scheme://user:password@host`; '' when none): a
    secret the caller hands to `redact`, which hides it wherever a driver's error quotes it."""
    if "://" not in (url or ""):
        return ""
    rest = url.split("://", 1)[1]
    query_at = rest.find("?")
    at = rest.rfind("@", 0, query_at if query_at >= 0 else len(rest))
    if at < 0:
        return ""
    user = rest[:at]
    return user.split(":", 1)[1] if ":" in user else ""


def is_secret_name(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


def redact_url(url: str) -> str:
    """`url` (the whole text is one URL) without credentials: `scheme://user@host...` for
    `scheme://user:password@host...`, `name=***` for each query parameter whose name carries a
    secret. Text without `://` is taken as a connection string (`key=value ...`)."""
    if "://" not in url:
        return _redact_key_values(url)
    scheme, rest = url.split("://", 1)
    # the user information ends at the last "@" before the query (SQLAlchemy reads the password up to
    # an "@"; a raw "@" in the password then ends it later): everything after a ":" in it is dropped
    first_at = rest.find("@")
    if first_at >= 0:
        query_at = rest.find("?", first_at)
        at = rest.rfind("@", 0, query_at if query_at >= 0 else len(rest))
        user = rest[:at].split(":", 1)[0]
        rest = user + rest[at:]
    path, sep, query = rest.partition("?")
    if sep:
        query = "&".join(_redact_parameter(p) for p in query.split("&"))
    return f"{scheme}://{path}{sep}{query}"


def _redact_parameter(param: str) -> str:
    name, eq, _value = param.partition("=")
    return f"{name}={MASK}" if eq and is_secret_name(unquote(name)) else param


def _redact_key_values(text: str) -> str:
    return _KEY_VALUE.sub(lambda m: m.group(1) + m.group(2) + MASK if is_secret_name(m.group(1)) else m.group(0), text)


def redact(text: object, secrets: Iterable[str] = ()) -> str:
    """`text` -- a message, an error, a log line; any object, as its str() -- with every URL in it (`scheme://` to the next
    space) made `redact_url`, secret keys of connection strings outside URLs masked, and each of
    `secrets` (as given and percent-encoded, if at least MIN_SECRET characters) replaced by ***."""
    text = str(text)
    for secret in sorted({s for given in secrets if given for s in (given, quote(given, safe=""), unquote(given))},
                         key=len, reverse=True):
        if len(secret) >= MIN_SECRET:
            text = text.replace(secret, MASK)
    out: list[str] = []
    done = 0  # text[:done] is in `out`
    start = text.find("://")
    while start >= 0:
        begin = start
        while begin > done and text[begin - 1] in _SCHEME:
            begin -= 1
        if begin == start:  # "://" with no scheme before it: not a URL
            start = text.find("://", start + 3)
            continue
        end = start + 3
        while end < len(text) and not text[end].isspace():
            end += 1
        token = text[begin:end]
        url = token.rstrip("'\").,;>")  # punctuation closing the sentence or a quotation is not the URL's
        out.append(_redact_key_values(text[done:begin]))
        out.append(redact_url(url) + token[len(url):])
        done = end
        start = text.find("://", end)
    out.append(_redact_key_values(text[done:]))
    return "".join(out)

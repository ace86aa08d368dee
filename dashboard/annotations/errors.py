"""The annotations' two errors, and how their messages quote what a user gave. The bottom of the
annotations' database layers (errors -> location, records -> schema -> unavailable, damage ->
store): it imports none of them.

- `InvalidInput`: a value a user gave (a note's text, a tag, a URL...) that cannot be stored;
- `AnnotationsUnavailable`: the database cannot be used, for one write or at all (the sentences
  for each reason are made in dashboard/annotations/unavailable.py);
- `excerpt`, `quoted`, `is_unicode`: a value as a message shows it.

A save refused because someone else saved in between is `records.Conflict`, beside the records it
describes.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["InvalidInput", "AnnotationsUnavailable", "Place", "excerpt", "quoted", "is_unicode"]


class InvalidInput(ValueError):
    """A value a user gave that cannot be stored; `str(exc)` is a sentence for the user."""


class Place(Protocol):
    """Where a database is, as a message names it (`str()`): a file's Path, a server
    (location.ServerLocation) or a URL that cannot be used (location.UnusableLocation)."""

    def exists(self) -> bool: ...


class AnnotationsUnavailable(Exception):
    """The annotations database cannot be used (for this write, or at all). `message` is a sentence
    for the user naming the file or the server's URL (never its password); `reason` is one of
    corrupt, locked, unwritable, newer, read_only, foreign, error (a file) or unreachable, refused,
    missing, denied, locked, newer, foreign, error (a server)."""

    def __init__(self, path: Place, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.message = message


def excerpt(text: str, limit: int = 200) -> str:
    """`text` on one line (white space runs made one space), cut to `limit` characters with `…`."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(value: str, limit: int) -> str:
    """A value quoted for a message: its excerpt, with characters that are not valid Unicode text
    (a lone surrogate) written as \\u escapes, so the message can always be printed and stored."""
    return ascii(excerpt(value, limit)) if not is_unicode(value) else repr(excerpt(value, limit))


def is_unicode(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate, which no database or page can hold)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

"""Reading untrusted files with every dimension bounded (issue 35), for every reader of scoring/:
opening only regular files (a FIFO would block, a device never end), lines read one at a time with
their length capped while reading (an over-long line is read past, never held), whole reads under
a size cap, and Python literals parsed only when small (ast.literal_eval needs hundreds of bytes a
character). The caps are scoring/limits.py's."""

from __future__ import annotations

import ast
import errno
import os
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .limits import LINE_SKIP_CHUNK, LITERAL_MAX_CHARS, LITERAL_MAX_DEPTH, LITERAL_MAX_ITEMS

__all__ = ["NotRegular", "Overlong", "TooLarge", "special_kind", "open_regular", "read_capped", "read_upto", "bounded_lines",
           "literal_shape", "read_literal", "literal_refusal", "skip_hole"]


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file or a folder is, in words ("a FIFO (named pipe)"), or None."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    return "a special file"


class NotRegular(OSError):
    """A path that is a FIFO, a device, a socket or a folder: never read (a FIFO would wait for a
    writer, a device never ends). `str()` says what it is."""

    def __init__(self, path: str | Path, what: str) -> None:
        super().__init__(f"{what}, not a file: not read")
        self.strerror = f"{what}, not a file: not read"
        self.filename = str(path)
        self.what = what


class TooLarge(OSError):
    """A file larger than the size a reader holds whole."""

    def __init__(self, path: str | Path, size: int, cap: int) -> None:
        why = f"{size:,} bytes, more than the {cap:,} read whole: not read"
        super().__init__(why)
        self.strerror = why
        self.filename = str(path)
        self.size = size
        self.cap = cap


def open_regular(path: str | Path) -> IO[bytes]:
    """The file opened for reading in binary, only when it is a regular file (a FIFO is opened
    without waiting for a writer, seen for what it is and closed): NotRegular otherwise; OSError
    as open() raises it (FileNotFoundError, PermissionError, a symlink loop)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket cannot be opened
            raise NotRegular(path, "a socket") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(path, "a folder" if stat.S_ISDIR(mode) else special_kind(mode) or "a special file")
        if flags & getattr(os, "O_NONBLOCK", 0):  # a regular file reads the same; cleared all the same
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | Path, cap: int) -> bytes:
    """The whole file, when it is a regular file of at most `cap` bytes: TooLarge (before anything
    is read) otherwise; never more than cap + 1 bytes read, whatever the file claims."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > cap:
            raise TooLarge(path, size, cap)
        data = read_upto(fh, size, cap)
    if len(data) > cap:  # grew while read
        raise TooLarge(path, len(data), cap)
    return data


def read_upto(fh: IO[bytes], size: int, cap: int) -> bytes:
    """At most cap + 1 bytes of `fh`, asking for its `size` (as stat gave it) and one more first: a read of
    n bytes reserves n bytes of memory before it reads, and under a read limit (scoring/guard.py) a
    reservation of the cap -- hundreds of MB -- fails for a file of a few bytes. A file that grew since is
    read on a chunk at a time, up to the cap."""
    data = fh.read(min(size, cap) + 1)
    if len(data) <= size:
        return data
    parts = [data]
    total = len(data)
    while total <= cap and (chunk := fh.read(min(SKIP_CHUNK, cap + 1 - total))):
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


class Overlong:
    """A line longer than the cap, read past and not held: its size in bytes (its line end
    included) and whether it had one (False: the file ended inside it)."""

    __slots__ = ("size", "ended")

    def __init__(self, size: int, ended: bool) -> None:
        self.size = size
        self.ended = ended

    def __repr__(self) -> str:
        return f"Overlong({self.size}, ended={self.ended})"


SKIP_CHUNK = LINE_SKIP_CHUNK


def bounded_lines(fh: IO[bytes], max_line: int) -> Iterator[bytes | Overlong]:
    """The lines of a binary file as read (line end included), each at most `max_line` bytes; a
    longer line is read past in chunks and given as Overlong(size) instead, so that no more than
    max_line + 1 bytes of it are ever held (a 2 GB file of NUL bytes without a line end costs
    max_line, not 2 GB)."""
    readline = fh.readline
    limit = max_line + 1
    while raw := readline(limit):
        if len(raw) <= max_line:
            yield raw
            continue
        size = len(raw)
        ended = raw.endswith(b"\n")
        del raw
        while not ended:
            size += skip_hole(fh)
            more = readline(SKIP_CHUNK)
            if not more:
                break
            size += len(more)
            ended = more.endswith(b"\n")
        yield Overlong(size, ended)


def skip_hole(fh: IO[bytes]) -> int:
    """Bytes of a hole of a sparse file skipped from the current position (a hole reads as NUL bytes,
    so it holds no line end): a 2 GB sparse file is read past without reading 2 GB. 0 where the file
    system cannot tell, or there is data."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return 0
    try:
        fd = fh.fileno()
        at = fh.tell()
        raw_at = os.lseek(fd, 0, os.SEEK_CUR)  # the descriptor's own offset, given back below
        try:
            data = os.lseek(fd, at, seek_data)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: only a hole up to the end of the file
                os.lseek(fd, raw_at, os.SEEK_SET)
                return 0
            data = os.fstat(fd).st_size
        os.lseek(fd, raw_at, os.SEEK_SET)  # the buffered reader's view of the descriptor stays true
        if data <= at:
            return 0
        fh.seek(data)
        return data - at
    except (OSError, ValueError, AttributeError):
        return 0


def literal_shape(text: str) -> tuple[int, int]:
    """(deepest bracket nesting, items) of a Python literal's text, brackets and commas inside
    string literals not counted: items are the commas outside strings plus one. One pass over the
    characters, stopping as soon as either is over its cap (LITERAL_MAX_DEPTH, LITERAL_MAX_ITEMS)."""
    depth = deepest = commas = 0
    quote = ""
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > LITERAL_MAX_DEPTH:
                    break
        elif ch in ")]}":
            depth -= 1
        elif ch == ",":
            commas += 1
            if commas >= LITERAL_MAX_ITEMS:
                break
    return deepest, commas + 1


def read_literal(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is a Python literal (read with `ast.literal_eval`, never
    executed) of at most LITERAL_MAX_CHARS characters, LITERAL_MAX_ITEMS items and
    LITERAL_MAX_DEPTH levels of brackets; (False, None) otherwise. Never raises. The caps come
    first: a 16 MB literal of 8 million items would need 6 GB to parse."""
    if len(text) > LITERAL_MAX_CHARS:
        return False, None
    deepest, items = literal_shape(text)
    if deepest > LITERAL_MAX_DEPTH or items > LITERAL_MAX_ITEMS:
        return False, None
    try:
        with warnings.catch_warnings():  # e.g. "invalid escape sequence" in a string literal
            warnings.simplefilter("ignore")
            return True, ast.literal_eval(text)
    except Exception:  # SyntaxError, ValueError, TypeError (an unhashable key), MemoryError, RecursionError
        return False, None


def literal_refusal(text: str) -> str:
    """Why read_literal would not parse `text` for its size (the words a problem says), or "" when its
    size is within the caps (it may still not be a literal)."""
    if len(text) > LITERAL_MAX_CHARS:
        return f"{len(text):,} characters, more than the {LITERAL_MAX_CHARS:,} a literal is parsed within"
    deepest, items = literal_shape(text)
    if deepest > LITERAL_MAX_DEPTH:
        return f"brackets nested more than {LITERAL_MAX_DEPTH} deep"
    if items > LITERAL_MAX_ITEMS:
        return f"at least {items:,} items, more than the {LITERAL_MAX_ITEMS:,} a literal is parsed with"
    return ""

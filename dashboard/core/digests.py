"""Files' sha256, read in chunks (`file_sha256`) and remembered in the cache folder by the file's
identity (`FileDigests`), so that a restart does not read a benchmark's files again to find their
cached entries: the prediction files (dashboard/core/store.py) and the documents (the documents
layer's `ocr.file_sha256`). Standard library only: the documents layer and its workers import it."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dashboard.core.settings import cache_root

_HEX64 = re.compile(r"[0-9a-f]{64}")
DAY = 86_400.0
UNUSED_DAYS = 30  # a cache entry no server has used for this long is removed (`sweep`)
_SWEPT: set[Path] = set()  # the folders this process has swept
_SWEEPING = threading.Lock()


def mark_used(path: Path, now: float | None = None) -> None:
    """Mark a cache entry as used now (its modification time), unless it was marked within the day: what
    `sweep` keeps. A folder this process may not write is left as it is."""
    now = time.time() if now is None else now
    try:
        if now - path.stat().st_mtime > DAY:
            os.utime(path, (now, now))
    except OSError:
        pass


def sweep(folder: Path, is_entry: Callable[[str], bool], now: float | None = None, *, once: bool = True) -> int:
    """Remove from `folder` the entries (the file names `is_entry` accepts) unused for UNUSED_DAYS and the
    temporary files (`.tmp-*`) older than a day; how many went. Nothing else in the folder is touched, nor
    a folder that is a symbolic link. `once`: only the first call of the process for this folder sweeps (a
    restart's start)."""
    if once:
        with _SWEEPING:
            if folder in _SWEPT:
                return 0
            _SWEPT.add(folder)
    if symlinked(folder):
        return 0
    now = time.time() if now is None else now
    gone = 0
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return 0
    for item in listing:
        entry = is_entry(item.name)
        if not entry and not item.name.startswith(".tmp-"):
            continue
        try:
            if not item.is_file(follow_symlinks=False):
                continue
            if now - item.stat(follow_symlinks=False).st_mtime > (UNUSED_DAYS * DAY if entry else DAY):
                os.unlink(item.path)
                gone += 1
        except OSError:
            continue
    return gone


def symlinked(folder: Path) -> bool:
    """Whether a cache folder is a symbolic link (then it is not used: its entries would land elsewhere)."""
    try:
        return folder.is_symlink()
    except OSError:
        return True


class FileDigests:
    """The sha256 of files read before, remembered under `root`/shas by the file's identity: its
    path, device, inode, size, and modification and status-change times in nanoseconds. A restart at
    200 runs read 700 MB of prediction files to hash them (0.9 CPU-s) before any cached entry could be
    found; with this it reads a small file per run. Any write to a file changes its status-change
    time, so a changed file is hashed again. A file is remembered only when it had not changed for
    SETTLED_NS before it was hashed and did not change while it was hashed: a write landing in the
    same clock tick as the one before it leaves the times as they were (git's "racily clean" files)."""

    SUBFOLDER = "shas"
    SETTLED_NS = 2_000_000_000
    CHUNK = 1 << 20

    def __init__(self, root: Path | None = None) -> None:
        self.folder = (Path(root) if root is not None else cache_root()) / self.SUBFOLDER
        self.hashed = 0  # files read to be hashed (the rest came from the folder), for tests and benchmarks

    def sha256(self, path: Path, now_ns: int | None = None) -> str:
        """The file's sha256 (hex); OSError when it cannot be read. `now_ns`: the clock (tests)."""
        import time

        before = os.stat(path)
        name = self._name(path, before)
        known = self._recall(name)
        if known is not None:
            return known
        digest = self._hash(path)
        after = os.stat(path)
        settled = (now_ns if now_ns is not None else time.time_ns()) - max(before.st_mtime_ns, before.st_ctime_ns)
        if name is not None and _identity(after) == _identity(before) and settled >= self.SETTLED_NS:
            self._remember(name, digest)
        return digest

    def known(self, path: Path) -> str | None:
        """The file's sha256 when it is remembered (its identity unchanged since it was hashed), else None --
        never read to be hashed. OSError when it cannot be looked at."""
        return self._recall(self._name(path, os.stat(path)))

    def _hash(self, path: Path) -> str:
        self.hashed += 1
        return file_sha256(path, self.CHUNK)

    @staticmethod
    def _name(path: Path, st: os.stat_result) -> str | None:
        try:
            where = os.path.abspath(path)  # the file itself is named by its device and inode
        except (OSError, ValueError):
            return None
        text = "\0".join(("lens-sha/1", where, *map(str, _identity(st))))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _recall(self, name: str | None) -> str | None:
        if name is None or symlinked(self.folder):
            return None
        try:
            with open(self.folder / name, "rb") as fh:
                text = fh.read(65).decode("ascii")
        except (OSError, UnicodeDecodeError):
            return None
        if not _HEX64.fullmatch(text):
            return None  # anything else is as good as no entry
        mark_used(self.folder / name)
        return text

    def sweep(self, now: float | None = None, *, once: bool = True) -> int:
        """Remove the remembered digests nobody has used for UNUSED_DAYS (one small file per path ever
        hashed: moved, renamed and changed files leave theirs) and stale temporary files (`sweep`)."""
        return sweep(self.folder, lambda name: _HEX64.fullmatch(name) is not None, now, once=once)

    def _remember(self, name: str, digest: str) -> None:
        if symlinked(self.folder):
            return
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(digest)
            os.replace(tmp, self.folder / name)
            tmp = None
        except OSError:
            pass  # not remembered: hashed again next time
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 (hex) of a file's bytes, read `chunk` bytes at a time into one buffer (reading a file whole
    gave each file of a few MB fresh pages of its own); OSError when it cannot be read."""
    h = hashlib.sha256()
    buf = bytearray(chunk)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def imports_sha256(start: str, root: Path) -> str:
    """sha256 of the source files of `imports_closure(start, root)`, named."""
    found = imports_closure(start, root)
    h = hashlib.sha256()
    for name in sorted(found):
        h.update(name.encode() + b"\0" + found[name].read_bytes() + b"\0")
    return h.hexdigest()


def imports_closure(start: str, root: Path) -> dict[str, Path]:
    """The source file of module `start` (dotted, e.g. "scoring.loaders", found under `root`, the
    folder holding its top-level package) and of every module of the same top-level package it imports,
    transitively: at module level or inside a function, and each enclosing package's `__init__.py`. The
    files are read and parsed (`ast`), never imported. What a cache entry made by `start`'s code depends
    on: a change to any of these files makes new entries; a change elsewhere in the package does not.
    Module name -> file."""
    top = start.split(".", 1)[0]
    found: dict[str, Path] = {}
    todo = [start]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        base = root.joinpath(*name.split("."))
        path = base / "__init__.py" if (base / "__init__.py").is_file() else base.with_suffix(".py")
        if not path.is_file():
            continue  # a name imported from a module ("from scoring.model import Prediction"), not a module
        found[name] = path
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        package = parts if path.name == "__init__.py" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                todo.extend(a.name for a in node.names if a.name.split(".", 1)[0] == top)
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    mod = ".".join([*package[:len(package) - node.level + 1], *([mod] if mod else [])])
                if mod.split(".", 1)[0] == top:
                    todo.append(mod)
                    todo.extend(f"{mod}.{a.name}" for a in node.names)
    return found

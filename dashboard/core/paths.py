"""Which folders may open (the data roots), where a document of a benchmark is, and uploads. No streamlit here."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

from dashboard.core import settings
from dashboard.resources import sample_benchmark

DEFAULT_BENCHMARK = sample_benchmark()  # sample_runs/ of a checkout, or the copy an installed package carries


@dataclass(frozen=True)
class Sources:
    """Where to read from. `gold` and `documents`, when given, replace the benchmark's own."""

    benchmark: Path | None
    runs: tuple[Path, ...] = ()
    scores: tuple[Path, ...] = ()
    gold: tuple[Path, ...] = ()
    documents: Path | None = None
    labels: tuple[tuple[str, str], ...] = ()  # (path, shown name) for uploaded files
    task: str = ""  # a harness folder opened as the benchmark: the task (dataset) whose gold is used ("" = the first)


def sources_from(argv: Sequence[str], environ: Mapping[str, str]) -> Sources:
    """`-- --benchmark DIR --runs P... --scores P...` (the script's argv), else the LENS_BENCHMARK,
    LENS_RUNS and LENS_SCORES environment variables (lists separated by os.pathsep), else sample_runs/."""
    ap = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    ap.add_argument("--benchmark")
    ap.add_argument("--runs", nargs="+", action="extend", default=[])
    ap.add_argument("--scores", nargs="+", action="extend", default=[])
    args, _ = ap.parse_known_args(list(argv))

    bench = args.benchmark or settings.BENCHMARK.value(environ) or str(DEFAULT_BENCHMARK)
    return Sources(
        benchmark=Path(bench),
        runs=tuple(Path(p) for p in args.runs or settings.RUNS.paths(environ)),
        scores=tuple(Path(p) for p in args.scores or settings.SCORES.paths(environ)),
    )


def annotations_from(argv: Sequence[str]) -> str:
    """The app's `--annotations PATH` (the annotations database file), '' when not given: then the
    default under the user data folder (dashboard.annotations.location.resolve_path)."""
    ap = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    ap.add_argument("--annotations", default="")
    args, _ = ap.parse_known_args(list(argv))
    return args.annotations


def data_roots(default: Sources, environ: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """The folders a session may read from, exactly: the configured benchmark folder, the runs and
    score paths given at start (command line, LENS_RUNS, LENS_SCORES) and the folders of
    LENS_DATA_ROOTS -- each resolved. Never a parent of one of them, never a filesystem root (`/`),
    never the upload folder (a session's uploads are its own). A folder typed in the data panel,
    and above all one named by a link's `data` parameter, opens only inside these (`check_folder`)."""
    given: list[Path] = []
    if default.benchmark is not None:
        given.append(default.benchmark)
    given += [*default.runs, *default.scores]
    given += [Path(p).expanduser() for p in settings.DATA_ROOTS.paths(environ)]
    roots: list[Path] = []
    for root in given:
        try:
            if "\x00" in str(root):
                continue
            resolved = Path(root).expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if resolved == Path(resolved.anchor) or resolved in roots:
            continue  # `/` (or a drive) is never a root, whatever was configured
        roots.append(resolved)
    return tuple(roots)


def _within(target: Path, base: Path) -> bool:
    return target == base or target.is_relative_to(base)  # by whole parts: /x/data-evil is not in /x/data


def folder_allowed(folder: Path | str, roots: Sequence[Path]) -> bool:
    """Whether `folder`, resolved (`..` and symlinks followed), is one of `roots` or inside one, and
    not inside the upload folder. Never raises; a path with a NUL byte, a relative path or one that
    cannot be resolved is refused."""
    try:
        if "\x00" in str(folder):
            return False
        given = Path(folder).expanduser()
        if not given.is_absolute():
            return False
        target = given.resolve()
        if _within(target, upload_root().expanduser().resolve()):
            return False
        for root in roots:
            base = Path(root).expanduser().resolve()
            if base != Path(base.anchor) and _within(target, base):
                return True
    except (OSError, RuntimeError, ValueError):
        return False
    return False


def check_folder(folder: str, roots: Sequence[Path]) -> str:
    """Why `folder` (typed in the data panel or named by a link's `data`) may not open, as a
    sentence for the user; '' when it may. Relative paths, folders outside the data roots (see
    `data_roots`), the upload folder and missing folders are refused. Never raises."""
    shown = folder.replace("\x00", "\\x00")
    if "\x00" in folder:
        return f"{shown} holds a NUL byte: not a folder name."
    try:
        given = Path(folder).expanduser()
    except (RuntimeError, ValueError):
        return f"{shown} cannot be read as a folder name."
    if not given.is_absolute():
        return (f"{shown} is a relative path: give the folder's full path (starting with /), since the "
                "server's working folder is not one of its data folders.")
    if not folder_allowed(given, roots):
        listed = ", ".join(map(str, roots)) or "none"
        return (f"{shown} is outside the folders this app may read (its data roots: {listed}). The server "
                f"opens more when they are listed in its {settings.DATA_ROOTS.name} environment variable "
                "(separated by ':'), see docs/team.md, \"Data roots and uploads\".")
    try:
        if not given.is_dir():
            return f"{shown} does not exist or is not a folder."
    except OSError as exc:
        return f"{shown} cannot be opened: {exc.strerror or exc}."
    return ""


# ----------------------------------------------------------------------------- uploads

MAX_UPLOAD_NAME = 200  # characters of an upload's name kept (its extension always kept)
UPLOAD_CHUNK = 1 << 20  # bytes copied at a time from an upload to its staged file
UPLOAD_IDLE_HOURS = 24  # a session's staged uploads not used for this long are removed
UPLOAD_CLOSED_MINUTES = 10  # ... and those of a session that has closed, this long after their last use
SESSION_FOLDER = re.compile(r"[0-9a-f]{32}")


class UploadError(ValueError):
    """An upload that could not be staged; its message is for the user."""


def upload_root() -> Path:
    """Where uploads are staged: `uploads/` in the app's own cache folder ($LENS_CACHE_DIR, else
    $XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens); each session has a folder of its
    own in it (`session_uploads`), which no link's `data` parameter can open."""
    return settings.cache_root() / "uploads"


def new_session_folder() -> str:
    """A fresh, unguessable name for one session's upload folder (kept in its session state)."""
    return secrets.token_hex(16)


def session_uploads(token: str, root: Path | None = None) -> Path:
    """The upload folder of the session whose folder name is `token`."""
    if not SESSION_FOLDER.fullmatch(token or ""):
        raise ValueError(f"not a session folder name: {token!r}")
    return (upload_root() if root is None else root) / token


def upload_name(name: str) -> tuple[str, str]:
    """(the name an upload is staged and shown under, a note for the user or ''): a plain base name
    (no folders, no `..`, no NUL or control characters, not hidden), at most MAX_UPLOAD_NAME
    characters with its extension kept, so that it is still read as what it is."""
    notes = []
    if "\x00" in name:
        notes.append("its name held a NUL byte, removed")
    safe = "".join(c for c in Path(name.replace("\\", "/").replace("\x00", "")).name if c.isprintable()).strip()
    if safe in ("", ".", ".."):
        safe = "upload"
    elif safe.startswith("."):
        safe = "upload" + safe
    if len(safe) > MAX_UPLOAD_NAME:
        stem, dot, ext = safe.rpartition(".")
        ext = dot + ext if dot and stem and len(ext) <= 16 else ""
        safe = safe[: MAX_UPLOAD_NAME - len(ext)].rstrip() + ext
        notes.append(f"its name was longer than {MAX_UPLOAD_NAME} characters, shortened with its extension kept")
    return safe, "; ".join(notes)


def _copy_hashing(data: bytes | BinaryIO, fh: BinaryIO | None) -> str:
    """sha256 of `data` (bytes or a file-like object read from its start in chunks), written to `fh` too."""
    h = hashlib.sha256()
    if isinstance(data, (bytes, bytearray, memoryview)):
        h.update(data)
        if fh is not None:
            fh.write(data)
        return h.hexdigest()
    data.seek(0)
    while chunk := data.read(UPLOAD_CHUNK):
        h.update(chunk)
        if fh is not None:
            fh.write(chunk)
    data.seek(0)
    return h.hexdigest()


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return _copy_hashing(fh, None)


def stage_upload(name: str, data: bytes | BinaryIO, root: Path | None = None) -> Path:
    """Write an uploaded file under root/<sha256>/<its name> (`upload_name`) so that the loaders,
    which read paths, can read it; the same bytes always land at the same path (stable cache keys).
    `data` is bytes or a file-like object (Streamlit's UploadedFile), copied in chunks while hashed,
    never held twice. An entry whose bytes no longer match its key (truncated, edited) is written
    again, atomically. Raises UploadError (with a message for the user) when it cannot be written."""
    root = upload_root() if root is None else root
    safe, _ = upload_name(name)
    for folder in (upload_root(), root):
        if folder.is_symlink():  # staged files would land outside the cache folder
            raise UploadError(f"{safe}: not staged, since the upload folder {folder} is a symbolic link; remove the "
                              "link (the app makes the folder itself)")
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(dir=root, prefix=".part-")
    except OSError as exc:
        raise UploadError(f"{safe}: the upload folder {root} cannot be written ({exc.strerror or exc}); set "
                          f"{settings.CACHE_DIR.name} to a writable folder") from None
    tmp: str | None = part  # None once moved into place
    try:
        with os.fdopen(fd, "wb") as fh:
            digest = _copy_hashing(data, fh)
        target = root / digest[:32] / safe
        try:
            intact = target.is_file() and _file_sha256(target) == digest
        except OSError:
            intact = False
        if intact:
            os.utime(target.parent)  # last used now: kept by `sweep_uploads`
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, target)
            tmp = None
    except OSError as exc:
        raise UploadError(f"{safe}: could not be staged in {root} ({exc.strerror or exc}); set "
                          f"{settings.CACHE_DIR.name} to a writable folder with free space") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return target


def sweep_uploads(keep: str = "", alive: Callable[[str], bool] | None = None, root: Path | None = None,
                  now: float | None = None, removed_names: list[str] | None = None) -> int:
    """Remove staged uploads no longer used: a session folder (other than `keep`) untouched for
    UPLOAD_IDLE_HOURS, or for UPLOAD_CLOSED_MINUTES when `alive(its name)` says its session has
    closed; stray partial files too. Returns the number of folders removed (their names appended
    to `removed_names`, so the caller can drop what it cached from them); never raises."""
    root = upload_root() if root is None else root
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.name == keep or entry.is_symlink():
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if entry.is_dir(follow_symlinks=False):
                closed = alive is not None and SESSION_FOLDER.fullmatch(entry.name) and not alive(entry.name)
                if age > UPLOAD_IDLE_HOURS * 3600 or (closed and age > UPLOAD_CLOSED_MINUTES * 60):
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
                    if removed_names is not None:
                        removed_names.append(entry.name)
            elif entry.name.startswith(".part-") and age > UPLOAD_IDLE_HOURS * 3600:
                os.unlink(entry.path)
        except OSError:
            continue
    return removed


def upload_folders_of(sources: Sources, root: Path | None = None) -> frozenset[str]:
    """The names of the session upload folders (under `root`, default upload_root()) that `sources`
    reads a file from."""
    root = (upload_root() if root is None else root).expanduser().resolve()
    names = set()
    for p in (sources.benchmark, sources.documents, *sources.runs, *sources.scores, *sources.gold):
        if p is None:
            continue
        try:
            rel = Path(p).expanduser().resolve().relative_to(root)
        except (ValueError, OSError, RuntimeError):
            continue
        if rel.parts:
            names.add(rel.parts[0])
    return frozenset(names)


def prune_session_uploads(folder: Path, used: Sequence[Path]) -> None:
    """Remove the session's staged files that are no longer among its uploads (removed from the
    upload boxes), so a session holds on disk only what it shows. Never raises."""
    keep = {p.parent.name for p in used}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and entry.name not in keep:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


@dataclass(frozen=True)
class DocLocation:
    document_id: str
    path: Path | None  # None when not found, or found but unusable (see `unusable`)
    how: str  # which rule found it, or why it was not found or cannot be used
    refused: str = ""  # a `file`/`path` field that pointed outside the docs folder
    unusable: str = ""  # "not a PDF", "encrypted", "no pages", "corrupt: ...": the file found cannot be shown
    file: Path | None = None  # the file found, usable or not


def inside(root: Path, relative: str) -> Path | None:
    """root/relative resolved, if it stays inside root (symlinks and `..` resolved), else None."""
    if not relative or "\x00" in relative:
        return None
    base = root.resolve()
    target = (base / relative).resolve()
    return target if target.is_relative_to(base) and target != base else None


def locate_document(document_id: str, file_field: str, url: str, docs_dir: Path | None) -> DocLocation:
    """Spec E: the record's file/path field (relative to docs/, never outside it), then
    docs/<document_id>.pdf, then the last path segment of its url."""
    if docs_dir is None or not docs_dir.is_dir():
        return DocLocation(document_id, None, "no docs/ folder")
    refused = ""
    if file_field:
        hit = inside(docs_dir, file_field)
        if hit is None:
            refused = file_field
        elif hit.is_file():
            return DocLocation(document_id, hit, "file field")
    hit = inside(docs_dir, f"{document_id}.pdf") if document_id else None
    if hit is not None and hit.is_file():
        return DocLocation(document_id, hit, "docs/<document_id>.pdf", refused)
    segment = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) if url else ""
    hit = inside(docs_dir, segment) if segment else None
    if hit is not None and hit.is_file():
        return DocLocation(document_id, hit, "url file name", refused)
    return DocLocation(document_id, None, "not found", refused)

"""Which folders may open (the data roots), where a document of a benchmark is, and uploads. No streamlit here."""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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


def data_roots(default: Sources, environ: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """The folders a session may read from: the configured benchmark (its parent too, so that a
    sibling benchmark of the same collection opens), the runs and score paths given at start, the
    upload folder, and LENS_DATA_ROOTS. A folder typed in the data panel, and above all one named
    by a link's `data` parameter, is opened only inside these (`folder_allowed`)."""
    roots: list[Path] = []
    if default.benchmark is not None:
        roots += [default.benchmark, default.benchmark.parent]
    roots += [*default.runs, *default.scores, upload_root()]
    roots += [Path(p).expanduser() for p in settings.DATA_ROOTS.paths(environ)]
    return tuple(roots)


def folder_allowed(folder: Path | str, roots: Sequence[Path]) -> bool:
    """Whether `folder`, resolved (`..` and symlinks followed), is one of `roots` or inside one.
    Never raises; a path with a NUL byte or that cannot be resolved is refused."""
    try:
        if "\x00" in str(folder):
            return False
        target = Path(folder).expanduser().resolve()
        for root in roots:
            base = Path(root).expanduser().resolve()
            if target == base or target.is_relative_to(base):
                return True
    except (OSError, RuntimeError, ValueError):
        return False
    return False


def upload_root() -> Path:
    """Where uploads are staged: `uploads/` in the app's own cache folder ($LENS_CACHE_DIR, else
    $XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens)."""
    return settings.cache_root() / "uploads"


def stage_upload(name: str, data: bytes, root: Path | None = None) -> Path:
    """Write an uploaded file under root/<sha256>/<its base name> so that the loaders, which read
    paths, can read it; the same bytes always land at the same path (stable cache keys). The name
    is reduced to a plain base name (no folders, no `..`, no NUL or control characters); an entry
    whose bytes no longer match its key (truncated, edited) is written again, atomically."""
    root = upload_root() if root is None else root
    safe = "".join(c for c in Path(name.replace("\\", "/")).name if c.isprintable())[:200].strip() or "upload"
    if safe in (".", "..") or safe.startswith("."):
        safe = "upload" + (safe if safe not in (".", "..") else "")
    digest = hashlib.sha256(data).hexdigest()
    target = root / digest[:32] / safe
    try:
        intact = target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest
    except OSError:
        intact = False
    if not intact:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return target


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

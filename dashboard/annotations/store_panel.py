"""The annotations' Streamlit caches: the database (one per server process and file), the gold
corrections as stored now, and the benchmark's identity annotations are filed under. Here, not in
dashboard/shell/cache.py, so that the shell imports no feature (tests/test_architecture.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:  # the database module (SQLAlchemy) is imported on first use
    from dashboard.annotations.store import AnnotationStore

FILE_NAME = "annotations.sqlite3"  # dashboard.annotations.location.FILE_NAME (a test holds them equal), without importing it


@st.cache_resource(show_spinner=False, max_entries=4)
def annotations_db(path: str) -> AnnotationStore:
    """The annotations database (dashboard/annotations/store.py), one per server process and file: it
    holds no connection (each call opens its own), so every session shares it."""
    from dashboard.annotations.store import AnnotationStore

    return AnnotationStore(path)


def annotation_store() -> AnnotationStore:
    """This server's annotations database: the app's `--annotations PATH`, else LENS_DATABASE_URL, else
    annotations.sqlite3 in the user data folder ($LENS_DATA_DIR, ...; dashboard.annotations.location.resolve_location)."""
    import sys

    from dashboard.annotations.location import location_key
    from dashboard.core.paths import annotations_from

    return annotations_db(location_key(annotations_from(sys.argv[1:])))


def absent_file() -> Path | None:
    """The annotations database's file when it is a file that does not exist yet (nothing was ever
    saved: every read finds nothing), else None (it exists, or it is a server). Said without importing
    the database module (SQLAlchemy: 0.7 s) or creating the file, which opening the store does: the
    overview reads nothing when a fresh machine has no database. Where it lives as
    dashboard.annotations.location.resolve_location says (tests hold the two equal)."""
    import os
    import sys

    from dashboard.core import settings
    from dashboard.core.paths import annotations_from

    text = annotations_from(sys.argv[1:]) or settings.DATABASE_URL.value().strip()
    if not text:
        path = settings.data_dir() / FILE_NAME
    elif "://" not in text:
        path = Path(text).expanduser()
    elif text.split("://", 1)[0].lower() in ("sqlite", "sqlite+pysqlite") and len(text.split("://", 1)[1]) > 1 \
            and text.split("://", 1)[1].startswith("/"):
        path = Path(text.split("://", 1)[1][1:]).expanduser()
    else:
        return None  # a server, or a URL the store will say is wrong
    return None if os.path.lexists(path) else path


def corrections(benchmark: str) -> list:
    """The benchmark's gold corrections as stored now (none when the database cannot be read, or
    does not exist yet)."""
    if absent_file() is not None:
        return []
    from dashboard.annotations.errors import AnnotationsUnavailable

    try:
        return annotation_store().corrections(benchmark)
    except AnnotationsUnavailable:
        return []


@st.cache_resource(show_spinner=False, max_entries=16)
def identity(gold_key: tuple, _gold: list) -> str:
    """The benchmark's identity (dashboard.annotations.identity) of the gold read under `gold_key`."""
    from dashboard.annotations.identity import benchmark_identity

    return benchmark_identity(_gold)

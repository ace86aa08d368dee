"""The annotations' Streamlit caches: the database (one per server process and file), the gold
corrections as stored now, and the benchmark's identity annotations are filed under. Here, not in
dashboard/shell/cache.py, so that the shell imports no feature (tests/test_architecture.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:  # the database module (SQLAlchemy) is imported on first use
    from dashboard.annotations.db import AnnotationStore


@st.cache_resource(show_spinner=False, max_entries=4)
def annotations_db(path: str) -> AnnotationStore:
    """The annotations database (dashboard/annotations/db.py), one per server process and file: it
    holds no connection (each call opens its own), so every session shares it."""
    from dashboard.annotations.db import AnnotationStore

    return AnnotationStore(path)


def annotation_store() -> AnnotationStore:
    """This server's annotations database: the app's `--annotations PATH`, else LENS_DATABASE_URL, else
    annotations.sqlite3 in the user data folder ($LENS_DATA_DIR, ...; dashboard.annotations.db.resolve_location)."""
    import sys

    from dashboard.annotations.db import location_key
    from dashboard.core.paths import annotations_from

    return annotations_db(location_key(annotations_from(sys.argv[1:])))


def corrections(benchmark: str) -> list:
    """The benchmark's gold corrections as stored now (none when the database cannot be read)."""
    from dashboard.annotations.db import AnnotationsUnavailable

    try:
        return annotation_store().corrections(benchmark)
    except AnnotationsUnavailable:
        return []


@st.cache_resource(show_spinner=False, max_entries=16)
def identity(gold_key: tuple, _gold: list) -> str:
    """The benchmark's identity (dashboard.annotations.identity) of the gold read under `gold_key`."""
    from dashboard.annotations.identity import benchmark_identity

    return benchmark_identity(_gold)

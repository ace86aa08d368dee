"""Triage annotations (issue 21): notes and tags on answers and questions, the tag vocabulary and
gold corrections and saved slices, kept in one SQLite file or one PostgreSQL database (LENS_DATABASE_URL,
issue 28) shared by every session and app server; their export and import; and the corrected gold a
rescoring uses. No streamlit, pandas or plotly (SQLAlchemy Core, Alembic, json, csv).

- `db`: `AnnotationStore` (the database, its schema, every read and write), `Note`, `Correction`,
  `SavedSlice`, `Conflict`, `AnnotationsUnavailable`, `InvalidInput`, `resolve_location`;
- `migrations/`: Alembic's revisions of the schema (run by `AnnotationStore` when it opens a database);
- `identity`: `benchmark_identity(questions)`, the key annotations are filed under;
- `exchange`: JSONL and CSV export and import (merging by key and time);
- `corrections`: `apply_corrections(questions, corrections)` and `corrections_key(corrections)`;
- `python -m dashboard.annotations export|import`: the command line.

Import the submodules themselves (`from dashboard.annotations.db import AnnotationStore`): this
package's `__init__` imports nothing.
"""

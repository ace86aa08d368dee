"""Triage annotations (issue 21): notes and tags on answers and questions, the tag vocabulary and
gold corrections and saved slices, kept in one SQLite file or one PostgreSQL database (LENS_DATABASE_URL,
issue 28) shared by every session and app server; their export and import; and the corrected gold a
rescoring uses. No streamlit, pandas or plotly (SQLAlchemy Core, Alembic, json, csv).

- the database, in layers that import downwards only (tests/test_architecture.py holds them):
  `errors` (`InvalidInput`, `AnnotationsUnavailable`) -> `location` (`resolve_location`, `shown_url`:
  where it lives) and `records` (`Note`, `Correction`, `SavedSlice`, `Conflict`, the validation of
  what a user gives) -> `schema` (the tables and their versions; Alembic's revisions in
  `migrations/`, run when a database is opened) -> `unavailable` (why a database cannot be used) ->
  `damage` (damaged rows: every row read becomes a record there, or is named) -> `store`
  (`AnnotationStore`: every read and write);
- `identity`: `benchmark_identity(questions)`, the key annotations are filed under;
- `exchange`: JSONL and CSV export and import (merging by key and time);
- `corrections`: `apply_corrections(questions, corrections)` and `corrections_key(corrections)`;
- `python -m dashboard.annotations export|import`: the command line.

Import the submodules themselves (`from dashboard.annotations.store import AnnotationStore`): this
package's `__init__` imports nothing.
"""

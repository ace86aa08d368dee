"""Triage annotations (issue 21): notes and tags on answers and questions, the tag vocabulary and
gold corrections, kept in one SQLite file shared by every session; their export and import; and the
corrected gold a rescoring uses. Pure Python (sqlite3, json, csv): no streamlit, pandas or plotly.

- `db`: `AnnotationStore` (the file, its schema and migrations, every read and write),
  `Note`, `Correction`, `Conflict`, `AnnotationsUnavailable`, `InvalidInput`, `default_path`;
- `identity`: `benchmark_identity(questions)`, the key annotations are filed under;
- `exchange`: JSONL and CSV export and import (merging by key and time);
- `corrections`: `apply_corrections(questions, corrections)` and `corrections_key(corrections)`;
- `python -m dashboard.annotations export|import`: the command line.

Import the submodules themselves (`from dashboard.annotations.db import AnnotationStore`): this
package's `__init__` imports nothing.
"""

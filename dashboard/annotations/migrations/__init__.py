"""Alembic's migrations of the annotations database (dashboard/annotations/schema.py runs them when it
opens a database; `alembic -c` is not needed). `versions/`: r1 (the first schema), r2 (tags in
their own table, revisions, the vocabulary), r3 (saved slices)."""

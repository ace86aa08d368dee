"""The annotations database's schema and its versions. Alembic keeps them (revisions r1 -> r2 -> r3 in
dashboard/annotations/migrations/versions); SQLite files also carry `PRAGMA user_version` =
SCHEMA_VERSION = 3, as files written before Alembic did: 1 and 2 map to r1 and r2.

    notes(id INTEGER PRIMARY KEY, benchmark, question_id, run, text, author, created, updated,
          revision, UNIQUE(benchmark, question_id, run))     run '' = a note on the question (the gold)
    note_tags(note_id -> notes.id ON DELETE CASCADE, tag, PRIMARY KEY(note_id, tag))
    vocabulary(tag PRIMARY KEY, position)                      the tags offered, in their order
    corrections(benchmark, question_id, action 'answer'|'exclude', answer, author, created, updated,
                revision, PRIMARY KEY(benchmark, question_id))
    saved_slices(benchmark, name, definition, author, note, created, updated, revision,
                 PRIMARY KEY(benchmark, name))                definition: JSON {field: [values]}

Times are text that sorts (records.now_iso). Version 1 (SCHEMA_V1 below) kept tags as one
comma-separated column, had no revisions and no vocabulary, and wrote an exclusion as a NULL answer.

`migrate(conn)` creates the schema or brings it to HEAD_REVISION inside the caller's write
transaction; `NewerSchema` and `ForeignTables` say why it cannot (unavailable.py words them).
Imports nothing of the annotations but through the migrations Alembic loads (they use records.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

__all__ = [
    "SCHEMA_VERSION", "SCHEMA_V1", "HEAD_REVISION", "REVISIONS", "MIGRATIONS_DIR", "metadata",
    "notes_t", "note_tags_t", "vocabulary_t", "corrections_t", "slices_t",
    "NewerSchema", "ForeignTables", "alembic_config", "migrate",
]

SCHEMA_VERSION = 3  # PRAGMA user_version of an SQLite file at HEAD_REVISION
HEAD_REVISION = "r3"  # the newest Alembic revision (tests check it against migrations/versions)
REVISIONS = ("r1", "r2", "r3")  # every revision this code knows, oldest first
_USER_VERSION_REVISION = {1: "r1", 2: "r2", 3: "r3"}  # files written before Alembic: PRAGMA user_version -> revision
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

SCHEMA_V1 = """
CREATE TABLE notes (
    benchmark TEXT NOT NULL, question_id TEXT NOT NULL, run TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL,
    PRIMARY KEY (benchmark, question_id, run));
CREATE TABLE corrections (
    benchmark TEXT NOT NULL, question_id TEXT NOT NULL, answer TEXT,
    author TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,
    PRIMARY KEY (benchmark, question_id));
"""  # what the first version wrote (PRAGMA user_version = 1); migrations/versions/r1_schema_v1.py creates the same

# The schema at HEAD_REVISION, as the store's queries see it (the migrations create it; tests compare both).
metadata = sa.MetaData()
notes_t = sa.Table(
    "notes", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("benchmark", sa.Text, nullable=False),
    sa.Column("question_id", sa.Text, nullable=False),
    sa.Column("run", sa.Text, nullable=False, server_default=""),
    sa.Column("text", sa.Text, nullable=False, server_default=""),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("benchmark", "question_id", "run"),
)
note_tags_t = sa.Table(
    "note_tags", metadata,
    sa.Column("note_id", sa.Integer, sa.ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tag", sa.Text, primary_key=True),
)
vocabulary_t = sa.Table(
    "vocabulary", metadata,
    sa.Column("tag", sa.Text, primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),
)
corrections_t = sa.Table(
    "corrections", metadata,
    sa.Column("benchmark", sa.Text, primary_key=True),
    sa.Column("question_id", sa.Text, primary_key=True),
    sa.Column("action", sa.Text, nullable=False),
    sa.Column("answer", sa.Text, nullable=False, server_default=""),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
)
slices_t = sa.Table(
    "saved_slices", metadata,
    sa.Column("benchmark", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("definition", sa.Text, nullable=False),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("created", sa.Text, nullable=False),
    sa.Column("updated", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
)


class ForeignTables(Exception):
    """The database holds tables of some other program (and no Alembic version): not annotations."""


class NewerSchema(Exception):
    """The database was brought to a schema this code does not know (`version`: its user_version or revision)."""

    def __init__(self, version: int | str) -> None:
        super().__init__(version)
        self.version = version


def _sqlite_user_version(conn: Connection) -> int:
    return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)


def alembic_config(conn: Connection) -> Any:
    """Alembic's configuration for migrating on `conn` (its open transaction: migrations/env.py)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = conn
    return cfg


def migrate(conn: Connection) -> None:
    """Inside the open write transaction: create the schema, or bring it to HEAD_REVISION with
    Alembic (a file written before Alembic is first stamped with the revision its user_version
    names). NewerSchema for a revision this code does not know, ForeignTables for someone else's tables."""
    from alembic import command

    sqlite = conn.dialect.name == "sqlite"
    tables = set(sa.inspect(conn).get_table_names())
    current: str | None = None
    if "alembic_version" in tables:
        current = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    if sqlite:
        version = _sqlite_user_version(conn)
        if version > SCHEMA_VERSION:
            raise NewerSchema(version)
        if current is None and version:
            current = _USER_VERSION_REVISION[version]
            command.stamp(alembic_config(conn), current)
    if current is None and tables - {"alembic_version"}:
        raise ForeignTables()
    if current is not None and current not in REVISIONS:
        raise NewerSchema(current)
    if current != HEAD_REVISION:
        command.upgrade(alembic_config(conn), HEAD_REVISION)
    if sqlite:
        conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")

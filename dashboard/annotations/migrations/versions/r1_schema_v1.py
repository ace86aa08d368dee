"""The first schema (PRAGMA user_version 1): tags in one comma-separated column, no revisions, no
vocabulary, an exclusion written as a NULL answer. Only a new database passes through it, on its
way to the newest revision; a file of that version is stamped r1 and migrated from here.

Revision ID: r1
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r1"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # named constraints: PostgreSQL's index names are per schema, and r2 renames these tables aside
    op.create_table(
        "notes",
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("question_id", sa.Text, nullable=False),
        sa.Column("run", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False, server_default=""),
        sa.Column("tags", sa.Text, nullable=False, server_default=""),
        sa.Column("author", sa.Text, nullable=False, server_default=""),
        sa.Column("created", sa.Text, nullable=False),
        sa.Column("updated", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("benchmark", "question_id", "run", name="notes_v1_pkey"),
    )
    op.create_table(
        "corrections",
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("question_id", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=True),
        sa.Column("author", sa.Text, nullable=False, server_default=""),
        sa.Column("created", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("benchmark", "question_id", name="corrections_v1_pkey"),
    )


def downgrade() -> None:
    raise NotImplementedError("annotations are never migrated down")

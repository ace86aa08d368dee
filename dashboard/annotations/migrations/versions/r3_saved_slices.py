"""Saved slices (issue 25, section 3): a named filter set of a benchmark's questions, with who
saved it, a note, times and a revision.

Revision ID: r3
Revises: r2
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "r3"
down_revision = "r2"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_slices",
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("created", sa.Text, nullable=False),
        sa.Column("updated", sa.Text, nullable=False),
        sa.Column("revision", sa.Integer, sa.CheckConstraint("revision >= 1", name="saved_slices_revision"), nullable=False,
                  server_default="1"),
        sa.PrimaryKeyConstraint("benchmark", "name", name="saved_slices_pkey"),
    )


def downgrade() -> None:
    raise NotImplementedError("annotations are never migrated down")

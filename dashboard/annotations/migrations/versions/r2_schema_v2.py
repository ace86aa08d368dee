"""The second schema (PRAGMA user_version 2): tags out of the comma-separated column into note_tags
(invalid names dropped), a revision on every note and correction, the vocabulary (the defaults,
then every other tag in use), and an exclusion as action 'exclude' instead of a NULL answer.

Revision ID: r2
Revises: r1
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from dashboard.annotations.errors import InvalidInput
from dashboard.annotations.records import DEFAULT_TAGS, clean_tag, parse_time

revision = "r2"
down_revision = "r1"
branch_labels = None
depends_on = None


def _stamp_or_keep(value: str) -> str:
    try:
        return parse_time(value)
    except InvalidInput:
        return value


def upgrade() -> None:
    bind = op.get_bind()
    op.rename_table("notes", "notes_v1")
    op.rename_table("corrections", "corrections_v1")
    notes = op.create_table(
        "notes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("question_id", sa.Text, nullable=False),
        sa.Column("run", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False, server_default=""),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("created", sa.Text, nullable=False),
        sa.Column("updated", sa.Text, nullable=False),
        sa.Column("revision", sa.Integer, sa.CheckConstraint("revision >= 1", name="notes_revision"), nullable=False, server_default="1"),
        sa.UniqueConstraint("benchmark", "question_id", "run", name="notes_key"),
    )
    note_tags = op.create_table(
        "note_tags",
        sa.Column("note_id", sa.Integer, sa.ForeignKey("notes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tag", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("note_id", "tag", name="note_tags_pkey"),
        sqlite_with_rowid=False,
    )
    op.create_index("note_tags_by_tag", "note_tags", ["tag"])
    vocabulary = op.create_table(
        "vocabulary",
        sa.Column("tag", sa.Text, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("tag", name="vocabulary_pkey"),
    )
    corrections = op.create_table(
        "corrections",
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("question_id", sa.Text, nullable=False),
        sa.Column("action", sa.Text, sa.CheckConstraint("action IN ('answer', 'exclude')", name="corrections_action"), nullable=False),
        sa.Column("answer", sa.Text, nullable=False, server_default=""),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("created", sa.Text, nullable=False),
        sa.Column("updated", sa.Text, nullable=False),
        sa.Column("revision", sa.Integer, sa.CheckConstraint("revision >= 1", name="corrections_revision"), nullable=False,
                  server_default="1"),
        sa.PrimaryKeyConstraint("benchmark", "question_id", name="corrections_pkey"),
    )
    assert notes is not None and note_tags is not None and vocabulary is not None and corrections is not None
    used: set[str] = set()
    rows = bind.execute(sa.text("SELECT benchmark, question_id, run, text, tags, author, created, updated FROM notes_v1")).all()
    for benchmark, qid, run, text, tags, author, created, updated in rows:
        inserted = bind.execute(sa.insert(notes).values(
            benchmark=benchmark, question_id=qid, run=run or "", text=text or "", author=author or "(unknown)",
            created=_stamp_or_keep(created), updated=_stamp_or_keep(updated), revision=1)).inserted_primary_key
        assert inserted is not None
        note_id = inserted[0]
        names: set[str] = set()
        for raw in (tags or "").split(","):
            try:
                names.add(clean_tag(raw))
            except InvalidInput:
                continue
        if names:
            bind.execute(sa.insert(note_tags), [{"note_id": note_id, "tag": t} for t in sorted(names)])
        used |= names
    for benchmark, qid, answer, author, created in bind.execute(
            sa.text("SELECT benchmark, question_id, answer, author, created FROM corrections_v1")).all():
        bind.execute(sa.insert(corrections).values(
            benchmark=benchmark, question_id=qid, action="exclude" if answer is None else "answer", answer=answer or "",
            author=author or "(unknown)", created=created, updated=created, revision=1))
    op.drop_table("notes_v1")
    op.drop_table("corrections_v1")
    tags = list(DEFAULT_TAGS) + sorted(used - set(DEFAULT_TAGS))
    bind.execute(sa.insert(vocabulary), [{"tag": t, "position": i} for i, t in enumerate(tags)])


def downgrade() -> None:
    raise NotImplementedError("annotations are never migrated down")

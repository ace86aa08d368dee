"""Alembic's environment: migrations run on the connection (inside its open write transaction)
that dashboard.annotations.schema.migrate hands over in `config.attributes["connection"]`; from the `alembic`
command line, on the database LENS_DATABASE_URL names (as the app resolves it)."""

from __future__ import annotations

from alembic import context

from dashboard.annotations.location import location_key
from dashboard.annotations.store import AnnotationStore


def run() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, transaction_per_migration=False)
        with context.begin_transaction():  # the caller's transaction: this adds none
            context.run_migrations()
        return
    store = AnnotationStore(location_key())  # opening it migrates it to the newest revision
    if store.problem is not None:
        raise SystemExit(store.problem.message)


run()

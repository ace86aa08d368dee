"""Why an annotations database cannot be used, in one sentence for the user: `file_problem` (an
SQLite file: corrupt, locked, unwritable, newer, foreign, error) and `server_problem` (a PostgreSQL
server: unreachable, refused, missing, denied, locked, newer, foreign, error), each an
`AnnotationsUnavailable` naming the file or the server's URL -- never its password (the driver's
words are scrubbed of it). The store tries a server's problems in RETRIED again (`store.problem`).
"""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from .errors import AnnotationsUnavailable, excerpt
from .location import ServerLocation
from .schema import HEAD_REVISION, SCHEMA_VERSION, ForeignTables, NewerSchema

__all__ = ["RETRIED", "driver_error", "driver_words", "file_problem", "server_problem"]

RETRIED = frozenset({"unreachable", "refused", "missing", "denied", "error"})  # a server's problems tried again


def driver_error(exc: BaseException) -> BaseException:
    """The driver's own exception under SQLAlchemy's wrapper (`exc` itself when there is none)."""
    return exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc


def driver_words(exc: BaseException) -> str:
    """The driver's own words, first line, without SQLAlchemy's statement and parameters."""
    orig = driver_error(exc)
    text = (getattr(orig, "strerror", None) if isinstance(orig, OSError) else None) or str(orig) or type(orig).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else type(orig).__name__
    first = re.sub(r"^(connection failed: )?connection to server at .*? failed: ", "", first)
    return excerpt(first.removeprefix("FATAL:").strip(), 160)


def file_problem(path: Path, exc: BaseException, doing: str) -> AnnotationsUnavailable:
    """One sentence naming the file, why it cannot be used (for `doing`) and what to do."""
    orig = driver_error(exc)
    text = str(orig).lower()
    if isinstance(exc, NewerSchema):
        return AnnotationsUnavailable(path, "newer", (
            f"The annotations file {path} was written by a newer version of DocBench Lens (schema {exc.version}; "
            f"this version knows up to {SCHEMA_VERSION}): notes are read-only here."))
    if isinstance(exc, ForeignTables):
        return AnnotationsUnavailable(path, "foreign", (
            f"The file {path} is an SQLite database of some other program, not an annotations file: notes are "
            "read-only. Give another file with --annotations PATH."))
    if "locked" in text or "busy" in text:
        return AnnotationsUnavailable(path, "locked", (
            f"The annotations file {path} is locked by another program, so {doing} did not happen; "
            "try again in a moment."))
    if "not a database" in text or "malformed" in text or "encrypted" in text or "corrupt" in text:
        return AnnotationsUnavailable(path, "corrupt", (
            f"The annotations file {path} is damaged or not a database ({orig}): notes are read-only and cannot "
            "be saved. Move the file aside (a new one is then made) or give another with --annotations PATH."))
    if isinstance(orig, OSError) or "readonly" in text or "read-only" in text or "unable to open" in text or "disk i/o" in text:
        detail = orig.strerror if isinstance(orig, OSError) and orig.strerror else str(orig)
        return AnnotationsUnavailable(path, "unwritable", (
            f"The annotations file {path} cannot be written ({detail}): notes are read-only. "
            "Give a writable place with --annotations PATH or LENS_DATA_DIR."))
    return AnnotationsUnavailable(path, "error", f"The annotations file {path} could not be used ({orig}), so {doing} did not happen.")


def server_problem(where: ServerLocation, exc: BaseException, doing: str) -> AnnotationsUnavailable:
    """One sentence naming the server's URL (never its password) and what to do."""
    if isinstance(exc, NewerSchema):
        return AnnotationsUnavailable(where, "newer", (
            f"The annotations database {where} was brought to a newer schema by a newer version of DocBench Lens "
            f"(revision {exc.version}; this version knows up to {HEAD_REVISION}): notes are read-only here."))
    if isinstance(exc, ForeignTables):
        return AnnotationsUnavailable(where, "foreign", (
            f"The database {where} holds tables of some other program, not annotations: notes are read-only. "
            "Give an empty database in LENS_DATABASE_URL."))
    orig = driver_error(exc)
    state = str(getattr(orig, "sqlstate", "") or "")
    detail = where.scrub(driver_words(exc))
    said = detail.lower()
    if not state:  # a refused connection carries no SQLSTATE: read the server's words
        if "password authentication failed" in said or "no password supplied" in said or "no pg_hba.conf entry" in said:
            state = "28P01"
        elif re.search(r"database \S+ does not exist", said):
            state = "3D000"
        elif "permission denied" in said:
            state = "42501"
    if state in ("28P01", "28000"):
        reason, says = "refused", f"refused the login ({detail}): check the user and password in LENS_DATABASE_URL"
    elif state == "3D000":
        reason, says = "missing", f"does not exist on that server ({detail}): create it (createdb) or fix LENS_DATABASE_URL"
    elif state in ("42501", "25006"):
        reason, says = "denied", f"does not let this login do that ({detail}), so {doing} did not happen: notes are read-only"
    elif state in ("55P03", "40P01", "57014"):
        reason, says = "locked", f"was busy with other writers, so {doing} did not happen; try again in a moment"
    elif state.startswith(("08", "57P")) or not state and isinstance(orig, (sa.exc.OperationalError, OSError)) \
            or type(orig).__name__ in ("OperationalError", "InterfaceError"):
        reason, says = "unreachable", (f"cannot be reached ({detail}), so {doing} did not happen: notes are read-only "
                                       "until it is back, and it is tried again on the next page")
    else:
        reason, says = "error", f"could not be used ({detail}), so {doing} did not happen"
    return AnnotationsUnavailable(where, reason, f"The annotations database {where} {says}.")

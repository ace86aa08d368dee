"""A workspace seen "with gold corrections": its gold replaced by the corrected gold (answers
replaced, excluded questions dropped, `corrections.apply_corrections`) and a gold key of its own,
so that every cache keyed by the gold key (the scored runs in memory and on disk, the analysis)
keeps the corrected scores apart from the plain ones. Pure: no streamlit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace

from dashboard.core.workspace import Workspace

from .corrections import CorrectionSummary, apply_corrections, corrections_key
from .db import Correction

__all__ = ["CORRECTED", "corrected_workspace", "is_corrected", "salted"]

CORRECTED = "gold-corrections"  # first item of a corrected gold key: (CORRECTED, corrections_key, plain gold key)


def is_corrected(gold_key: tuple) -> bool:
    return len(gold_key) == 3 and gold_key[0] == CORRECTED


def salted(gold_sha256: str, gold_key: tuple) -> str:
    """The gold files' digest for the disk cache's entry key: unchanged for the plain gold, mixed with
    the corrections' key for a corrected one (the same files, other answers: another entry)."""
    if not is_corrected(gold_key):
        return gold_sha256
    return hashlib.sha256(f"{gold_sha256}\0{CORRECTED}\0{gold_key[1]}".encode()).hexdigest()


def corrected_workspace(ws: Workspace, gold_key: tuple, corrections: Iterable[Correction]
                        ) -> tuple[Workspace, tuple, CorrectionSummary]:
    """(the workspace with the corrected gold, its gold key, what was done). With no correction that
    applies, the workspace and key come back as they are."""
    corrections = list(corrections)
    gold, summary = apply_corrections(ws.gold.items, corrections)
    if not summary.changed:
        return ws, gold_key, summary
    fixed = replace(ws, gold=replace(ws.gold, items=gold))
    return fixed, (CORRECTED, corrections_key(corrections), gold_key), summary

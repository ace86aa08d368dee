"""A workspace seen "with gold corrections": its gold replaced by the corrected gold (answers
replaced, excluded questions dropped, `corrections.apply_corrections`) and a gold key of its own,
so that every cache keyed by the gold key (the scored runs in memory and on disk, the analysis)
keeps the corrected scores apart from the plain ones. Pure: no streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from dashboard.core.goldkey import CORRECTED, is_corrected, salted
from dashboard.data.workspace import Workspace

from .corrections import CorrectionSummary, apply_corrections, corrections_key
from .records import Correction

__all__ = ["CORRECTED", "corrected_workspace", "is_corrected", "salted"]


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

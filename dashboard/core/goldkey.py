"""The gold key of a workspace with gold corrections, and the disk cache's digest of it. A corrected
gold key is (CORRECTED, the corrections' key, the plain gold key): every cache keyed by the gold key
(the scored runs in memory and on disk, the analysis) keeps the corrected scores apart from the plain
ones. The corrections themselves are applied by dashboard/annotations/rescore.py; the shell's scoring
needs only the key, so it lives here, below both. Pure: no streamlit.
"""

from __future__ import annotations

import hashlib

__all__ = ["CORRECTED", "is_corrected", "salted"]

CORRECTED = "gold-corrections"  # first item of a corrected gold key: (CORRECTED, corrections_key, plain gold key)


def is_corrected(gold_key: tuple) -> bool:
    return len(gold_key) == 3 and gold_key[0] == CORRECTED


def salted(gold_sha256: str, gold_key: tuple) -> str:
    """The gold files' digest for the disk cache's entry key: unchanged for the plain gold, mixed with
    the corrections' key for a corrected one (the same files, other answers: another entry)."""
    if not is_corrected(gold_key):
        return gold_sha256
    return hashlib.sha256(f"{gold_sha256}\0{CORRECTED}\0{gold_key[1]}".encode()).hexdigest()

"""The key annotations are filed under: a benchmark's identity, from its gold alone.

`benchmark_identity(questions)` hashes every gold question's id with its gold answers (all of
them: DocVQA questions list several acceptable answers) -- not file names, folders, line numbers or
the order of the gold -- so the same benchmark moved or copied elsewhere, or with its gold file
re-ordered or split differently, keeps its notes, and a changed gold answer makes a new identity
(the notes of the old one stay in the file, listed by `AnnotationStore.benchmarks()`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from scoring.model import GoldQuestion

__all__ = ["IDENTITY_LENGTH", "benchmark_identity"]

IDENTITY_LENGTH = 16  # hex digits of the sha256 kept (64 bits)
_VERSION = "docbench-lens/identity/1"  # changes only if what is hashed changes


def benchmark_identity(questions: Iterable[GoldQuestion]) -> str:
    """sha256 (first IDENTITY_LENGTH hex digits) of the sorted (question id, gold answers) pairs."""
    pairs = sorted((q.qid, list(q.answers)) for q in questions)
    digest = hashlib.sha256(_VERSION.encode())
    for pair in pairs:  # one JSON array per question: no two different golds encode alike
        digest.update(b"\n" + json.dumps(pair, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:IDENTITY_LENGTH]

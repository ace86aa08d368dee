"""What the annotations tests share: many writers' traffic on one database."""

from __future__ import annotations

from dashboard.annotations.records import Conflict
from dashboard.annotations.store import AnnotationStore

BENCH = "0123456789abcdef"


def write_notes(store: AnnotationStore, who: str, count: int, shared_rounds: int, bench: str = BENCH) -> None:
    """`count` notes of `who`'s own, then `shared_rounds` read-modify-write appends to one shared note,
    each retried on Conflict: none may be lost."""
    for i in range(count):
        store.save_note(bench, f"{who}-q{i}", "run", text=f"{who} note {i}", tags=["reasoning_error"] if i % 2 else [],
                        author=who, expected_revision=0)
    for i in range(shared_rounds):
        while True:
            current = store.note(bench, "shared", "")
            text = (current.text + "\n" if current else "") + f"{who}:{i}"
            try:
                store.save_note(bench, "shared", "", text=text, author=who, expected_revision=current.revision if current else 0)
                break
            except Conflict:
                continue

"""dashboard.core.bounded.Bounded, the one in-memory store behind the page-text, page-count and OCR
caches: bounded least-recently-used, and one build per key however many threads ask at once."""

from __future__ import annotations

import threading
import time

import pytest

from dashboard.core.bounded import Bounded


def test_the_least_recently_used_entry_leaves_first():
    b: Bounded[int] = Bounded(2)
    b.put("a", 1)
    b.put("b", 2)
    assert b.get("a") == 1  # a is now the most recent
    b.put("c", 3)
    assert (b.get("a"), b.get("b"), b.get("c"), len(b)) == (1, None, 3, 2)
    assert b.discard_where(lambda k: k == "a") == 1 and b.get("a") is None
    with pytest.raises(ValueError):
        Bounded(0)


def test_one_build_per_key_for_threads_asking_at_once():
    b: Bounded[str] = Bounded(8)
    builds: list[int] = []
    gate = threading.Event()

    def build() -> str:
        builds.append(1)
        gate.wait(30)  # hang guard far above the milliseconds the other threads need to arrive
        return "value"

    out: list[str] = []
    threads = [threading.Thread(target=lambda: out.append(b.get_or_build("k", build))) for _ in range(10)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30  # hang guard
    # until all ten have joined the key's one flight (a state, not a pause: one arriving after the gate
    # opened would find the value stored and prove nothing about building once)
    while not (b.busy("k") and b._flights["k"][1] == 10) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert b._flights["k"][1] == 10, "the ten threads did not all wait on the one build"
    gate.set()
    for t in threads:
        t.join(30)
    assert out == ["value"] * 10 and len(builds) == 1
    assert not b.busy("k")


def test_a_failed_build_is_not_stored_and_the_next_caller_builds():
    b: Bounded[int] = Bounded(4)

    def fail() -> int:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        b.get_or_build("k", fail)
    assert b.get_or_build("k", lambda: 7) == 7 and b.get("k") == 7
    assert b.get_or_build("none", lambda: None) is None and b.get("none") is None  # None is not stored

"""One computation per key at a time, shared by the sessions that ask for it meanwhile. No streamlit.

Twenty sessions opening the app at once each found the evidence metrics missing from the cache and
each computed them (every answer searched in every document, twenty times over, all holding one
GIL: 20-40 s before the first page showed, bench/bench_load.py). With `SingleFlight.get`, the first
session computes and the others wait for it and read its result from the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")


class SingleFlight:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Hashable, tuple[threading.Lock, int]] = {}  # key -> (its lock, threads using it)

    def busy(self, key: Hashable) -> bool:
        """Whether some thread is computing `key` now (for a "waiting for another session" note)."""
        with self._guard:
            entry = self._locks.get(key)
            return entry is not None and entry[0].locked()

    def get(self, key: Hashable, lookup: Callable[[], T | None], compute: Callable[[], T]) -> T:
        """`lookup()` if it has the value; else `compute()` in this thread, unless another thread is
        computing the same key: then wait for it and `lookup()` again (compute here if that thread
        failed or stopped without storing a value). `compute` must store its result where
        `lookup` finds it."""
        hit = lookup()
        if hit is not None:
            return hit
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                hit = lookup()
                return hit if hit is not None else compute()
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users <= 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

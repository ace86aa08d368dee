"""The one in-memory store for what the app caches outside Streamlit's own caches: bounded, least
recently used out first, safe across the sessions' threads, and single-flight (one computation per
key at a time; the threads that ask for it meanwhile wait and share its result). No streamlit here.

Page texts, page counts, OCR results, scored runs and evidence tables are each kept in one `Bounded`.
Twenty sessions opening the app at once each found the evidence metrics missing and each computed
them (every answer searched in every document, twenty times over, holding one GIL: 20-40 s before
the first page showed, bench/bench_load.py): `get_or_build` computes once and shares.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Bounded(Generic[V]):
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a bounded store holds at least one entry")
        self.capacity = capacity
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self._flights: dict[Hashable, tuple[threading.Lock, int]] = {}  # key -> (its lock, threads using it)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def pop(self, key: Hashable) -> V | None:
        with self._lock:
            return self._items.pop(key, None)

    def discard_where(self, doomed: Callable[[Hashable], bool]) -> int:
        """Drop every entry whose key `doomed` says so; how many were dropped."""
        with self._lock:
            keys = [k for k in self._items if doomed(k)]
            for k in keys:
                del self._items[k]
            return len(keys)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def busy(self, key: Hashable) -> bool:
        """Whether some thread is building `key` now (for a "waiting for another session" note)."""
        with self._lock:
            entry = self._flights.get(key)
            return entry is not None and entry[0].locked()

    def get_or_build(self, key: Hashable, build: Callable[[], V]) -> V:
        """The stored value, else `build()` in this thread and stored, unless another thread is
        building the same key: then wait for it and take its value (or build here, if that thread
        failed). A None from `build` is returned, not stored."""
        hit = self.get(key)
        if hit is not None:
            return hit
        with self._lock:
            lock, users = self._flights.get(key, (threading.Lock(), 0))
            self._flights[key] = (lock, users + 1)
        try:
            with lock:
                hit = self.get(key)
                if hit is not None:
                    return hit
                value = build()
                if value is not None:
                    self.put(key, value)
                return value
        finally:
            with self._lock:
                lock, users = self._flights[key]
                if users <= 1:
                    del self._flights[key]
                else:
                    self._flights[key] = (lock, users - 1)

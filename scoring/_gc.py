"""Loading and scoring create millions of small acyclic objects; each full pass of the cyclic
garbage collector walks all of them (a third to a half of the wall time of a 1M-prediction
run, measured in bench/). None of that code makes reference cycles, so the collector is paused
around it and resumed afterwards (if it was enabled); the objects are collected by its next pass."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

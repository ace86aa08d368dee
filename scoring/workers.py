"""What every process-using part of scoring shares: how many cores this process may use, and
worker processes that die with their parent.

`usable_cores()` counts the cores the process is allowed to run on (`os.sched_getaffinity`,
which a container's or `taskset`'s limit narrows), falling back to `os.cpu_count()`.

`die_with_parent()` is called first thing in every worker (columnar.py's forked parts, the pools
of evaluate.py and runner.py): on Linux it asks the kernel for SIGKILL when the parent exits (prctl PR_SET_PDEATHSIG), so that killing the CLI (SIGTERM, SIGINT, SIGKILL) leaves
no worker using CPU; elsewhere a daemon thread watches the parent's pid and ends the worker when
it changes (issue 18 item 8).

`shared_pool()` is the one pool of worker processes for work that finishes (scoring runs, reading
long documents' text): forkserver (workers start from a clean interpreter, so they neither copy a
threaded server's heap nor inherit its threads' locks), one worker per usable core, started on
first use, None on one core -- and None in a process that reads a user's files one bracket after
the other (`no_pool_here`: a reader job's child, scoring/guard.py). Work with a time budget that may
have to be killed (a heavy PDF page, OCR: dashboard/documents/pdf.py, ocr.py; reading a user's file:
scoring/guard.py) runs in processes of its own instead. Submit inside `bare_main()`, so that the
workers do not import the caller's `__main__` (Streamlit's CLI or an app script).

`idle_shared_pool()` is that pool only when it runs and nothing runs on it (it counts the work in flight):
short work that would rather use its own threads than wait behind a scoring or for processes to start
takes it then (Compare's per-slice table: scoring/paired_slices.py); `warm_shared_pool()` starts it in the
background, its workers importing scipy, for a page that will want it soon.

`forkserver_context()` is the forkserver every part uses: its server process imports PRELOAD once
(the scoring library and the readers), so that a worker or a reader job starts ready to work; started by
`warm_shared_pool`, it imports scipy too (WARM_PRELOAD), once rather than in each worker.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["usable_cores", "die_with_parent", "shared_pool", "idle_shared_pool", "warm_shared_pool", "discard_shared_pool",
           "bare_main", "forkserver_context", "no_pool_here", "PRELOAD"]

PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCH_INTERVAL = 0.5  # seconds between looks at the parent pid, where prctl is unavailable


def usable_cores() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def die_with_parent() -> None:
    """Make this (worker) process end when its parent does. Never raises."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before the request was made
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="die-with-parent").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    os._exit(1)


_POOL_LOCK = threading.Lock()
_POOL: ProcessPoolExecutor | None = None
_MAIN_LOCK = threading.Lock()
_NO_POOL = False
# what the forkserver imports before it forks anything: scoring (a scoring worker's work) and the
# readers of users' files (a reader job's, scoring/guard.py: 0.2 s of imports each otherwise)
PRELOAD = ["scoring.forkserver_start", "scoring.runner", "scoring.guard", "scoring.loaders", "scoring.formats", "scoring.mmlongbench"]


# what the forkserver imports besides, when it is started for the pool's workers ahead of a page that will use
# them (`warm_shared_pool`): scipy once, there, instead of once in each worker (0.8 CPU-s each, on the cores the
# page wanted). A forkserver a reader job started first goes on without them; its workers import scipy themselves.
WARM_PRELOAD = ["scipy.stats", "scipy.signal"]


def forkserver_context(*, warm: bool = False) -> multiprocessing.context.BaseContext:
    """The forkserver start method, its server importing PRELOAD, and WARM_PRELOAD if `warm` (set before it
    starts: the first part to use it starts it for every other; once it runs, this changes nothing)."""
    multiprocessing.forkserver.set_forkserver_preload(PRELOAD + (WARM_PRELOAD if warm else []))
    return multiprocessing.get_context("forkserver")


multiprocessing.forkserver.set_forkserver_preload(PRELOAD)  # whichever part starts the forkserver first


def no_pool_here() -> None:
    """From now on `shared_pool()` is None in this process (a reader job's child: see the module text)."""
    global _NO_POOL
    _NO_POOL = True


@contextmanager
def bare_main() -> Iterator[None]:
    """While worker processes start: a `__main__` with no file and no spec, so multiprocessing
    records no main script for them to import (Streamlit's `__main__` is its CLI or the app script)."""
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


class _Pool(ProcessPoolExecutor):
    """A ProcessPoolExecutor that counts the work submitted to it and not yet done (`idle`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counting = threading.Lock()
        self._in_flight = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        with self._counting:
            self._in_flight += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished(None)
            raise
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _: object) -> None:
        with self._counting:
            self._in_flight -= 1

    def idle(self) -> bool:
        with self._counting:
            return self._in_flight == 0


def idle_shared_pool() -> ProcessPoolExecutor | None:
    """The shared pool when it runs and nothing runs on it now, else None: for short work that would rather run
    on its own process's threads than wait behind a scoring's queue or for processes to start (the per-slice
    table). Never starts the pool (`warm_shared_pool` does, in the background)."""
    with _POOL_LOCK:
        pool = _POOL
    return pool if isinstance(pool, _Pool) and pool.idle() else None


_STARTING: list[threading.Thread] = []


def warm_shared_pool() -> None:
    """Start the shared pool in a background thread unless it runs (or is starting, or cannot be here), each
    worker importing scipy: a server that will want it soon (the Compare page) asks for it ahead."""
    with _POOL_LOCK:
        if _POOL is not None or _NO_POOL or usable_cores() < 2 or (_STARTING and _STARTING[0].is_alive()):
            return
        thread = threading.Thread(target=_start_warm, name="lens-start-pool", daemon=True)
        _STARTING[:] = [thread]
    thread.start()


def _start_warm() -> None:
    """Start the shared pool (its forkserver, if not running yet, importing scipy) and have each worker import
    scipy's stats and signal (`deferred`: at once where the forkserver did)."""
    try:
        pool = shared_pool(warm=True)
        if pool is None:
            return
        with bare_main():
            futures = [pool.submit(_warm_worker) for _ in range(usable_cores())]
        for future in futures:
            future.result()
    except Exception:  # noqa: BLE001  (a daemon thread: whoever uses the pool next meets the same failure, and says it)
        return


def _warm_worker() -> None:
    from . import deferred  # noqa: PLC0415  (the worker's imports, made once it runs)

    deferred.stats()
    deferred.signal()


def shared_pool(*, warm: bool = False) -> ProcessPoolExecutor | None:
    """The one pool, started on first use; None on a single core or when processes cannot start. `warm`: started
    for a page that will use it (`warm_shared_pool`), so a forkserver not running yet also imports scipy."""
    global _POOL
    with _POOL_LOCK:
        if _NO_POOL:
            return None
        if _POOL is None and usable_cores() > 1:
            try:
                ctx = forkserver_context(warm=warm)  # preloads scoring (not __main__): workers fork from it ready to score
                _POOL = _Pool(max_workers=usable_cores(), mp_context=ctx, initializer=die_with_parent)
            except (OSError, ValueError, ImportError):
                _POOL = None
        return _POOL


def discard_shared_pool() -> None:
    """Stop the pool's workers (a broken pool; or at exit); a new one starts on the next use."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


atexit.register(discard_shared_pool)

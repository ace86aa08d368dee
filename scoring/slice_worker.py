"""The weak-slice finder where it can be killed: a worker process of its own, with a memory limit and
a time budget, so that a search never grows inside the process that asked for it (the dashboard's
server: issue 35.3).

    search_bounded(outcome, fields, clusters, progress=None, memory_mb=MEMORY_MB, budget_s=BUDGET_S, **options)

The input is read and checked here (`scoring.slices.prepare`: its size is the input's, the
conditions as arrays of question positions); the search itself -- candidates, tests, folding, which
is where memory and time grow with the number of fields -- runs in the worker (`run_search`), whose
progress comes back through a queue. The search is capped by construction (scoring/slices.py:
conjunctions over the best-splitting fields, a cap on conjunctions and on the questions they hold);
the worker is the second line: its address space is limited (`RLIMIT_AS`: what it holds when it
starts plus `memory_mb`) and it is killed after `budget_s`. A search that runs out of either raises
`SearchFailed` with one sentence for the page, and the next search starts a new worker.

One worker (forkserver: it does not copy a threaded server's heap), started on first use with the
finder imported, serves one search at a time: searches from several sessions wait their turn (each
takes seconds). Where no process can start, the search runs here, still capped.

This is a small killable worker of the finder's own; the file readers' worker (issue 35.1) is
another module.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import queue as queue_module
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .slices import Prepared, SliceSearch, prepare, run_search
from .workers import bare_main, die_with_parent

MEMORY_MB = 1024  # the worker's allowance beyond what it holds when it starts
BUDGET_S = 120.0  # seconds one search may take in the worker
POLL_S = 0.05  # seconds between looks at the progress queue

_LOCK = threading.Lock()  # one search at a time in the worker
_POOL: ProcessPoolExecutor | None = None
_QUEUE: Any = None
_LIMIT: int | None = None  # the memory_mb the running worker was started with


class SearchFailed(Exception):
    """The search ran out of memory or time in its worker (the message is one sentence for the page)."""


def _vm_size() -> int:
    """This process's virtual size in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _start(progress_queue: Any, memory_mb: int) -> None:
    """In the worker: die with the parent, import the finder, limit the address space."""
    global _QUEUE
    die_with_parent()
    _QUEUE = progress_queue
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one search, one core
        os.environ.setdefault(name, "1")
    import scoring.slices  # noqa: F401  (numpy and scipy: imported once, not per search)

    try:
        import resource

        limit = _vm_size() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def _search(job: int, prep: Prepared) -> SliceSearch:
    """In the worker: the search, its progress put on the queue as (job, fraction, what). The last
    message ("done") is not sent: the queue's messages travel apart from the result and may arrive
    after it, so the process that waits says "done" itself once the result is in (`_wait`)."""
    def say(fraction: float, what: str) -> None:
        if _QUEUE is not None and fraction < 1.0:
            _QUEUE.put((job, fraction, what))

    return run_search(prep, say)


def _pool(memory_mb: int) -> ProcessPoolExecutor | None:
    global _POOL, _LIMIT
    if _POOL is not None and _LIMIT != memory_mb:
        _discard()
    if _POOL is None:
        try:
            ctx = multiprocessing.get_context("forkserver")
            progress_queue = ctx.Queue()
            with bare_main():
                _POOL = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_start,
                                            initargs=(progress_queue, memory_mb))
            _POOL._lens_queue = progress_queue  # type: ignore[attr-defined]
            _LIMIT = memory_mb
        except (OSError, ValueError, ImportError):
            _POOL = None
    return _POOL


def _discard(kill: bool = False) -> None:
    """Stop the worker (killed outright after a budget ran out); a new one starts on the next search."""
    global _POOL
    pool, _POOL = _POOL, None
    if pool is None:
        return
    if kill:
        for proc in list(getattr(pool, "_processes", {}).values()):  # the stdlib keeps them here
            try:
                proc.kill()
            except (OSError, AttributeError):
                pass
    pool.shutdown(wait=not kill, cancel_futures=True)


def shutdown() -> None:
    with _LOCK:
        _discard()


atexit.register(shutdown)

_JOBS = iter(range(1, 1 << 62))


def search_bounded(outcome: Sequence[float] | Any, fields: Mapping[str, Sequence[Any]] | Any, clusters: Any, *,
                   progress: Callable[[float, str], object] | None = None, memory_mb: int = MEMORY_MB,
                   budget_s: float = BUDGET_S, **options: Any) -> SliceSearch:
    """`scoring.slices.find_weak_slices` with the search in the worker (module docstring). Raises
    ValueError for a bad input (as the finder does) and SearchFailed when the worker ran out of
    memory or time."""
    if progress is not None:
        progress(0.0, "reading the conditions")
    prep = prepare(outcome, fields, clusters, **options)
    with _LOCK:
        pool = _pool(memory_mb)
        if pool is None:  # no process can start here: the capped search in this process
            return run_search(prep, progress)
        job = next(_JOBS)
        try:
            with bare_main():
                future: Future = pool.submit(_search, job, prep)
        except (BrokenProcessPool, RuntimeError, OSError):
            _discard(kill=True)
            pool = _pool(memory_mb)
            if pool is None:
                return run_search(prep, progress)
            with bare_main():
                future = pool.submit(_search, job, prep)
        return _wait(future, pool, job, progress, memory_mb, budget_s)


def _wait(future: Future, pool: ProcessPoolExecutor, job: int, progress: Callable[[float, str], object] | None,
          memory_mb: int, budget_s: float) -> SliceSearch:
    import time

    progress_queue = getattr(pool, "_lens_queue", None)
    deadline = time.monotonic() + budget_s
    while True:
        try:
            found = future.result(timeout=POLL_S)
        except TimeoutError:
            pass
        except (MemoryError, RuntimeError) as exc:  # a thread that cannot start under the limit is memory too
            if isinstance(exc, RuntimeError) and "thread" not in str(exc):
                raise
            raise SearchFailed(f"the weak-slice search needs more than {memory_mb:,} MB; it was stopped") from exc
        except BrokenProcessPool as exc:
            _discard(kill=True)
            raise SearchFailed(f"the weak-slice search stopped: its worker process ended (more than {memory_mb:,} MB "
                               "is the likeliest reason)") from exc
        else:
            _relay(progress_queue, job, progress)  # what has come; what comes later is stale and dropped
            if progress is not None:
                progress(1.0, "done")
            return found
        _relay(progress_queue, job, progress)
        if time.monotonic() > deadline:
            _discard(kill=True)
            raise SearchFailed(f"the weak-slice search needs more than {budget_s:g} s; it was stopped")


def _relay(progress_queue: Any, job: int, progress: Callable[[float, str], object] | None) -> None:
    """Hand this job's progress messages on (others' are stale: a search abandoned before)."""
    if progress_queue is None:
        return
    while True:
        try:
            got, fraction, what = progress_queue.get_nowait()
        except (queue_module.Empty, OSError, ValueError, EOFError):
            return
        if got == job and progress is not None:
            progress(fraction, what)

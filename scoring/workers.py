"""What every process-using part of scoring shares: how many cores this process may use, and
worker processes that die with their parent.

`usable_cores()` counts the cores the process is allowed to run on (`os.sched_getaffinity`,
which a container's or `taskset`'s limit narrows), falling back to `os.cpu_count()`.

`die_with_parent()` is called first thing in every worker (bulk's forked parts and prediction
reader, the pools of evaluate.py and runner.py): on Linux it asks the kernel for SIGKILL when the
parent exits (prctl PR_SET_PDEATHSIG), so that killing the CLI (SIGTERM, SIGINT, SIGKILL) leaves
no worker using CPU; elsewhere a daemon thread watches the parent's pid and ends the worker when
it changes (issue 18 item 8).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["usable_cores", "die_with_parent"]

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

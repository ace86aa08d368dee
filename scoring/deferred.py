"""scipy's `stats` and `signal`, imported when first used. Importing scipy.stats takes about half a second
(0.52 s of `import dashboard.core.analysis` here, 1.45 s in all), which every start of the app paid before
its first table, though the leaderboard needs neither: only intervals, tests and the finder do.

`warm()` imports them in a background thread, once a process: the app calls it after a page has been drawn,
so the first Compare or Weak slices page of a new server does not pay the import in its own time (a fresh
process's per-slice deltas at 20,000 questions took 3.0-3.4 s with the import inside, 2.0-2.6 s without)."""

from __future__ import annotations

import threading
from types import ModuleType

_warming: list[threading.Thread] = []  # the one warm-up thread of this process, once started
_lock = threading.Lock()
# one import of scipy at a time: scipy.signal imports scipy.stats, and two threads importing the two at once
# could each hold a module the other waits for (Python then hands one of them a half-made module)
_importing = threading.RLock()


def stats() -> ModuleType:
    with _importing:
        from scipy import stats as module

    return module


def signal() -> ModuleType:
    with _importing:
        from scipy import signal as module

    return module


failed: list[str] = []  # why the warm-up's import failed, if it did (a failed import fails again, with its message, where it is used)


def _import_both() -> None:
    try:
        stats()
        signal()
    except BaseException as exc:  # noqa: BLE001  (a daemon thread: nothing above it would say it)
        failed.append(f"{type(exc).__name__}: {exc}")


def warm() -> threading.Thread:
    """Start importing scipy's stats and signal in a daemon thread, the first time it is called in this
    process; the thread (started now or before). A caller of `stats()` or `signal()` meanwhile waits for
    the import to finish, as it would have waited for its own import."""
    with _lock:
        if not _warming:
            thread = threading.Thread(target=_import_both, name="lens-warm-scipy", daemon=True)
            thread.start()
            _warming.append(thread)
        return _warming[0]

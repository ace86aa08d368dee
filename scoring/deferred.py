"""scipy's `stats` and `signal`, imported when first used. Importing scipy.stats takes about half a second
(0.52 s of `import dashboard.core.analysis` here, 1.45 s in all), which every start of the app paid before
its first table, though the leaderboard needs neither: only intervals, tests and the finder do."""

from __future__ import annotations

from types import ModuleType


def stats() -> ModuleType:
    from scipy import stats as module

    return module


def signal() -> ModuleType:
    from scipy import signal as module

    return module

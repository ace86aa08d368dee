"""Imported first by the forkserver (`scoring.workers.PRELOAD`), before it forks any worker: a process forked
from it never runs its parent's main script.

multiprocessing tells each new process which script is the parent's `__main__` -- whatever
sys.modules["__main__"] is while the process is started -- and the process imports it again (as
`__mp_main__`) before it does its work. `workers.bare_main` hides that script while our processes start, but
Streamlit puts each script run's own module there, in any session's thread: a pool started beside a script run
(the Compare page's workers, started in the background) was told `dashboard/app.py`, and each worker ran the app.
Nothing this forkserver starts needs the parent's main: its work is functions of scoring and dashboard, imported
by name. So the two steps that would import it do nothing here (multiprocessing.spawn's own helpers, replaced in
this process only: the server never calls them)."""

from __future__ import annotations

import multiprocessing.spawn


def _no_main(_name_or_path: str) -> None:
    """The parent's main script or module is not imported in this process."""


multiprocessing.spawn._fixup_main_from_path = _no_main  # type: ignore[attr-defined]
multiprocessing.spawn._fixup_main_from_name = _no_main  # type: ignore[attr-defined]

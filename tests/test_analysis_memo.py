"""An analysis is shared by every session of a server (and by the server's warm, dashboard/session/server.py): a frame
two threads ask for at once is built once, the second waiting for the first's (`_Memo`); a failed build leaves
nothing behind, so the next asker builds again."""

from __future__ import annotations

import threading

import pytest

from dashboard.core import analysis

HANG_GUARD = 60.0  # seconds: only so that a hang fails instead of blocking the suite


class _CountedLock:
    """The memo's own lock, counting how many times it was entered (the state a test waits for)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entered = 0
        self.changed = threading.Condition()

    def __enter__(self):
        self._lock.acquire()
        with self.changed:
            self.entered += 1
            self.changed.notify_all()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.entered >= count, HANG_GUARD), "never entered"


def test_a_frame_asked_for_by_two_threads_at_once_is_built_once():
    memo = analysis._Memo()
    memo._lock = counted = _CountedLock()
    building, release = threading.Event(), threading.Event()
    builds: list[str] = []

    def build() -> str:
        builds.append(threading.current_thread().name)
        building.set()
        assert release.wait(HANG_GUARD)
        return "frame"

    got: dict[str, str] = {}
    first = threading.Thread(target=lambda: got.__setitem__("first", memo.get("k", build)), name="first")
    first.start()
    assert building.wait(HANG_GUARD)  # the first is inside build()
    entered = counted.entered
    second = threading.Thread(target=lambda: got.__setitem__("second", memo.get("k", build)), name="second")
    second.start()
    counted.wait_for(entered + 1)  # the second has looked for the frame and not found it: it is being built
    release.set()
    first.join(HANG_GUARD)
    second.join(HANG_GUARD)
    assert got == {"first": "frame", "second": "frame"}
    assert builds == ["first"]  # the second waited for the first's build instead of building its own


def test_a_failed_build_is_not_kept_and_the_next_asker_builds_again():
    memo = analysis._Memo()

    def broken() -> str:
        raise RuntimeError("the engine went away")

    with pytest.raises(RuntimeError):
        memo.get("k", broken)
    assert memo._building == {}
    assert memo.get("k", lambda: "frame") == "frame"
    assert memo.get("k", broken) == "frame"  # kept now


def test_a_value_is_kept_only_when_it_rests_on_the_analysis_own_question_frame():
    """`remembered`: kept on the analysis for its own question frame (which never changes); built again for any
    other frame (a page's filtered or tagged one); built where the analysis cannot remember (the pages' stand-ins)."""
    import types

    import pandas as pd

    own, other = pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 2]})
    an = types.SimpleNamespace(questions=own, _light=analysis._Memo(analysis.LIGHT_MEMO))
    an.remember = types.MethodType(analysis.Analysis.remember, an)
    built: list[str] = []

    def build(what: str):
        return lambda: built.append(what) or len(built)

    assert analysis.remembered(an, "k", build("own"), own) == analysis.remembered(an, "k", build("own"), own) == 1
    assert analysis.remembered(an, "k", build("none"), None) == 1  # no frame named: the analysis's own
    analysis.remembered(an, "k", build("other"), other)
    analysis.remembered(an, "k", build("other"), other)
    analysis.remembered(object(), "k", build("stand-in"))
    assert built == ["own", "other", "other", "stand-in"]

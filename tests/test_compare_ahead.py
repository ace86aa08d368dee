"""On a benchmark large enough for Compare's per-slice table to run on several cores, the shared
pool's worker processes are started in the background once the first page is drawn (app.py:
dashboard.session.load.ahead) -- not by the Compare page itself, where their start competed with the
first pair. Once an analysis; never on a small benchmark."""

from __future__ import annotations

import weakref

from app_kit import app_on
from dashboard.session import load as L
from scoring import paired_slices as PS


def _recording(monkeypatch) -> list[bool]:
    started: list[bool] = []
    monkeypatch.setattr(L, "_AHEAD", weakref.WeakValueDictionary())
    monkeypatch.setattr(L, "warm_shared_pool", lambda: started.append(True))
    monkeypatch.setattr(PS, "usable_cores", lambda: 2)
    return started


def test_a_large_benchmark_starts_the_workers_once_the_first_page_is_drawn(monkeypatch, mini_bench):
    started = _recording(monkeypatch)
    monkeypatch.setattr(PS, "THREADED_FROM", 1)  # the mini benchmark's questions count as many
    at = app_on(monkeypatch, mini_bench, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert started == [True]
    at.switch_page("views/questions.py").run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert started == [True], "started again for the same analysis"


def test_a_small_benchmark_starts_none(monkeypatch, mini_bench):
    started = _recording(monkeypatch)
    at = app_on(monkeypatch, mini_bench, timeout=120)
    at.switch_page("views/questions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert started == []

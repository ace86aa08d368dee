"""The sidebar's profile picker decides the configured benchmark's own profile (MMLongBench-Doc's
rule for its folder) by looking at the folder's layout -- once a session: the configuration does not
change while the server runs, and looking lists every file of runs/ (0.1 s a page run at 1,000 runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.shell import sidebar

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("bench, profile", [(ROOT / "sample_runs" / "mmlongbench", "mmlongbench-doc"),
                                            (ROOT / "tests" / "fixtures" / "mini_bench", "xldocbench")])
def test_the_configured_layout_is_read_once_a_session_and_picks_its_profile(monkeypatch, bench, profile):
    looked: list[object] = []
    real = sidebar.discover

    def counting(sources):
        looked.append(sources)
        return real(sources)

    monkeypatch.setattr(sidebar, "discover", counting)
    at = app_on(monkeypatch, bench, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="profile").value == profile
    first = len(looked)
    assert first == 1
    at.run()
    at.switch_page("views/questions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(looked) == first, "the configured benchmark's layout was read again in the same session"
    assert at.selectbox(key="profile").value == profile

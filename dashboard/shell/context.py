"""The Context every page reads (`context()`): the sources, workspace, analysis, profile and gold key
the session loaded (dashboard/session/load.py), and the warnings shown at the top of every page
about what was loaded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import streamlit as st

from dashboard.core.analysis import Analysis, join_warning
from dashboard.core.escape import md_escape
from dashboard.core.paths import Sources
from dashboard.data.workspace import Workspace

CONTEXT = "lens_context"
NOTIFIED = "lens_notified"  # uploaded files whose problems were announced in a toast


class CorrectionsDone(Protocol):
    """What applying the gold corrections did (dashboard/annotations/corrections.py CorrectionSummary,
    declared here by shape: the shell imports no feature): whether any answer was replaced or
    question excluded, and a sentence saying so (`str`)."""

    @property
    def changed(self) -> bool: ...


@dataclass
class Context:
    sources: Sources
    workspace: Workspace
    analysis: Analysis
    profile: str
    gold_key: tuple
    benchmark: str = ""  # the benchmark's identity, annotations are filed under (of the gold as loaded)
    plain: tuple | None = None  # with gold corrections: (the workspace, gold key) without them
    corrections: CorrectionsDone | None = None  # with gold corrections: what they did


def warn_joins(an: Analysis) -> None:
    """At the top of every page: the runs that match fewer than half of the gold questions (with an
    unmatched id), those matching none said to be left out of the ranking and comparisons."""
    text = join_warning(an.short_joins())
    if text:
        st.warning(md_escape(text), icon=":material/join_inner:")


def announce_upload_problems(ws: Workspace) -> None:
    """A toast, once per uploaded file, when it had problems (the Data page lists them)."""
    from dashboard.data.frames import load_results

    done = st.session_state.setdefault(NOTIFIED, set())
    for _, files, res in load_results(ws):
        for f in files:
            if f in ws.labels and f not in done and (res.problems or res.skipped):
                done.add(f)
                n = len(res.errors)
                st.toast(md_escape(f"{ws.labels[f]}: {res.skipped} row{'s' if res.skipped != 1 else ''} skipped, "
                                   f"{n} error{'s' if n != 1 else ''}, {len(res.problems) - n} warning"
                                   f"{'s' if len(res.problems) - n != 1 else ''}. The Data page lists them."),
                         icon=":material/warning:", duration="long")


def context() -> Context:
    return st.session_state[CONTEXT]

"""Locating every answer from the overview and the explorer, as a Streamlit component:
`locate_first(ctx, question_ids, draw)`.

On data too large to locate at once (more than AUTO_PAIRS question × run pairs, where the pages
ask first), the documents are read in the background (dashboard/evidence/locating.py: one job for
every session, the documents of the questions shown first, the rest after) and a fragment polls it:
documents and pages done of their totals, the pages without a text layer apart (OCR, the slow
ones), and the time left at the rate measured so far (dashboard/evidence/progress.py). The page
around it is never rerun by the poll; once done, `draw()` is called inside the fragment (or, with
no `draw`, a button reruns the page to show what was located).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.evidence import locating, panel
from dashboard.evidence.grounding import AUTO_PAIRS, evidence_table
from dashboard.evidence.locate import question_paths
from dashboard.evidence.progress import describe, documents_of, fraction
from dashboard.shell import cache
from dashboard.shell.context import Context

POLL_S = 1.0  # how often the locating's progress is polled (seconds)


def questions_of_runs(ctx: Context, runs: list[str]) -> list[str]:
    """The gold questions (in gold order) that one of these runs answers: the overview's in view."""
    preds = panel.all_predictions(ctx)
    return [q.qid for q in ctx.workspace.gold.items if any(q.qid in preds.get(r, {}) for r in runs)]


def _where(ctx: Context) -> dict:
    ws = ctx.workspace
    bench, docs = ws.discovery.benchmark, ws.discovery.docs_dir
    return {q.qid: question_paths(q, ws.locations, bench, docs) for q in ws.gold.items}


def _compute(ctx: Context, key: tuple, where: dict) -> Callable[[], object]:
    """The evidence table's computation for the background job, its inputs taken here (in the session)."""
    ws = ctx.workspace
    items, preds = list(ws.gold.items), panel.all_predictions(ctx)
    scores = ctx.analysis.scores
    right = {str(run): set(part.loc[part["right"], "question_id"]) for run, part in scores.groupby("run")}
    said = {r.name: panel.responses(ws, r.name) for r in ctx.analysis.runs}
    store = cache.evidence_tables()  # taken here: the job's thread has no script context

    def compute() -> object:
        return store.get_or_build(
            key, lambda: evidence_table(items, preds, lambda q: where[q.qid], right=right, responses=said))
    return compute


def locate_first(ctx: Context, question_ids: list[str], draw: Callable[[], None] | None) -> bool:
    """True when the caller may draw the located answers now: they are computed already, or the data
    is small enough to compute them at once (evidence_metrics, with its own bar). Else the
    background locating is started (or joined) with the documents of `question_ids` first, its
    progress is drawn, and False is returned."""
    if panel.evidence_metrics_ready(ctx):
        return True
    if len(ctx.workspace.gold.items) * len(ctx.analysis.runs) <= AUTO_PAIRS:
        return True
    key = panel.metrics_key(ctx)
    where = _where(ctx)
    paths = {qid: list(p.values()) for qid, p in where.items()}
    every = documents_of([q.qid for q in ctx.workspace.gold.items], paths)
    first = documents_of(question_ids, paths)
    loc = locating.get(key)
    if loc is None or loc.job is None or loc.job.failed:
        panel.register_scanned(ctx.workspace)
        locating.start(key, every, first, _compute(ctx, key, where))
    else:
        loc.prefer(first)
    _progress(key, draw)
    return False


@st.fragment(run_every=POLL_S)
def _progress(key: tuple, draw: Callable[[], None] | None) -> None:
    loc = locating.get(key)
    job = loc.job if loc is not None else None
    if loc is None or job is None:
        return
    if job.failed:
        st.warning(md_escape(f"Locating the answers stopped: {job.error}"), icon=":material/error:")
        return
    if not job.running:
        if draw is not None:
            draw()
        elif st.button("Show where the answers are", icon=":material/plagiarism:", key="loc_show"):
            st.rerun(scope="app")
        return
    t = loc.tally()
    now = loc.current
    reading = f" Reading {now.name}." if now is not None else " Locating the answers in the texts read."
    st.progress(fraction(t), text=md_escape("Locating every answer, the documents of the questions shown first: "
                                            + describe(t, loc.seconds_left()) + "." + reading
                                            + " The rest of the page is usable meanwhile."))

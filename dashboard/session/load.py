"""The session's context, loaded once a run by app.py: the workspace read (cached), the benchmark's
own scoring profile picked, the gold corrections applied when the view asks for them, every run
scored and ingested into the engine unless it is there already (with a progress bar;
dashboard/shell/scorer.py), the analysis built on the engine, and the Context every page reads
(`dashboard.shell.context.context()`).

A package of its own above the features: loading applies the annotations' gold corrections
(dashboard/annotations/rescore.py), and the shell, which every feature's panel imports, imports no
feature (tests/test_architecture.py).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import replace
from functools import partial

import streamlit as st

from dashboard.annotations import store_panel as notes_store
from dashboard.core.analysis import Analysis
from dashboard.core.paths import Sources
from dashboard.data.workspace import Discovery, Workspace, discover, fingerprint
from dashboard.shell import cache, context, scorer, sidebar, viewstate
from scoring.paired_slices import uses_cores
from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, MMLONGBENCH_PROFILE
from scoring.registry import METRICS
from scoring.workers import warm_shared_pool


def load(sources: Sources, profile: str) -> context.Context:
    slot = st.empty()  # the top of the page: scoring progress, when scoring takes longer than a moment
    disc = discover(sources)
    ws_key, ws = _workspace(sources, disc)
    ws = ws.with_evals(viewstate.view().evals)  # an older VLMEvalKit eval id picked on the Data page (URL `eval`)
    offered = sidebar.harness_profiles(ws)
    if offered != st.session_state.get(sidebar.HARNESS_OFFERED, []):  # the picker offers the harnesses' own profiles
        st.session_state[sidebar.HARNESS_OFFERED] = offered
        st.rerun()
    # MMLongBench-Doc's files (a harness's folder) are scored by its own rule unless the user (or the link) chose a profile
    own = sidebar.own_profile(disc, ws)
    automatic = (DEFAULT_PROFILE, MMLONGBENCH_PROFILE, *HARNESS_PROFILES)
    if own != profile and not st.session_state.get(sidebar.PROFILE_CHOSEN) and profile in automatic \
            and (profile == DEFAULT_PROFILE or sidebar.PROFILE_AUTO in st.session_state):
        st.session_state[sidebar.PROFILE_AUTO] = own
        st.rerun()
    gold_key = fingerprint(ws.discovery.gold)
    benchmark, plain, fixes = notes_store.identity(gold_key, ws.gold.items), (ws, gold_key), None
    if viewstate.view().corrected:  # every run scored with the gold corrections (cached under a gold key of their own)
        from dashboard.annotations.rescore import corrected_workspace  # SQLAlchemy: imported when corrections are on

        ws, gold_key, fixes = corrected_workspace(ws, gold_key, notes_store.corrections(benchmark))
    analysis = _analysis(ws, ws_key, gold_key, profile, slot)
    ctx = context.Context(sources, ws, analysis, profile, gold_key, benchmark, plain if fixes else None, fixes)
    st.session_state[context.CONTEXT] = ctx
    context.announce_upload_problems(ws)
    context.warn_joins(analysis)
    return ctx


def warm(configured: Sources) -> str:
    """What a first visit to the configured benchmark reads, scores and builds -- the workspace, the
    benchmark's identity, every run scored into the engine, the analysis and its leaderboard -- done ahead, without a session,
    under the keys `load` makes for that visit (the view's defaults: no eval id picked, no corrections, the
    benchmark's own profile, a harness folder's first task). dashboard/session/server.py calls it while the server
    starts, so the first browser finds the caches filled; a later visit that differs (another profile,
    folder or upload) is read as before. Returns the profile it scored under."""
    sources = replace(configured, task=sidebar.first_task(configured.benchmark)) if configured.benchmark else configured
    disc = discover(sources)
    ws_key, ws = _workspace(sources, disc)
    profile = sidebar.own_profile(disc, ws)
    gold_key = fingerprint(ws.discovery.gold)
    notes_store.identity(gold_key, ws.gold.items)
    an = _analysis(ws, ws_key, gold_key, profile, None)
    an.leaderboard()  # the overview's first table (kept by the analysis)
    return profile


def _workspace(sources: Sources, disc: Discovery) -> tuple[tuple, Workspace]:
    """The workspace of these sources (cached), with its key."""
    extra = [disc.docs_dir] if disc.docs_dir and disc.docs_dir.is_dir() else []
    ws_key = (scorer.sources_key(sources), fingerprint([*disc.all_files(), *extra]))
    return ws_key, cache.workspace(ws_key, sources, disc)


def _analysis(ws: Workspace, ws_key: tuple, gold_key: tuple, profile: str, slot) -> Analysis:
    """Every run of the workspace scored into the engine (`scorer.scored_runs`) and the analysis built on them (cached)."""
    runs, store, _questions = scorer.scored_runs(ws, gold_key, profile, slot)
    key = (ws_key, gold_key, profile, tuple((r.name, r.source, r.file) for r in runs), store.benchmark,
           tuple(sorted(store.ids.items())), store.engine.shown())

    def build() -> Analysis:
        cache.trim()  # what reading or scoring the runs left behind goes back before the tables are built
        # the question frame is made when a page first asks for it (the leaderboard does not: it is drawn first)
        return Analysis.build(runs, ws.gold.items, ws.page_counts, profile, ws.declared_pages(), store=store,
                              later_questions=partial(cache.frame, ws, gold_key))

    return cache.analysis(key, build)


_AHEAD: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id -> an analysis whose groundwork was started


def ahead(ctx: context.Context) -> None:
    """What Compare will want of a benchmark large enough for its per-slice table to run on several cores, started
    in the background once a page is drawn (app.py): the shared pool's worker processes, and the gold's slice
    values. Started by the Compare page itself, the pool's start competed with that page's first pair, which then
    ran on threads (4.2 s at 1,000 runs x 20,000 questions; 1.8 s with the pool up). Once an analysis; the pool
    holds about 250 MB (docs/performance.md)."""
    an = ctx.analysis
    if _AHEAD.get(id(an)) is an or not uses_cores(len(an.gold), len(METRICS)):
        return
    _AHEAD[id(an)] = an
    warm_shared_pool()
    threading.Thread(target=_values_ahead, args=(an,), name="lens-ahead", daemon=True).start()


def _values_ahead(an: Analysis) -> None:
    """The gold's slice values, made now; a failure is left to the page that asks for them next (it says it)."""
    try:
        an.question_values()
    except Exception:  # noqa: BLE001  (a daemon thread: no traceback in the server's log)
        return

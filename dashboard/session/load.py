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

from functools import partial

import streamlit as st

from dashboard.annotations import store_panel as notes_store
from dashboard.core.analysis import Analysis
from dashboard.core.paths import Sources
from dashboard.data.workspace import discover, fingerprint
from dashboard.shell import cache, context, scorer, sidebar, viewstate
from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, MMLONGBENCH_PROFILE


def load(sources: Sources, profile: str) -> context.Context:
    slot = st.empty()  # the top of the page: scoring progress, when scoring takes longer than a moment
    disc = discover(sources)
    extra = [disc.docs_dir] if disc.docs_dir and disc.docs_dir.is_dir() else []
    ws_key = (scorer.sources_key(sources), fingerprint([*disc.all_files(), *extra]))
    ws = cache.workspace(ws_key, sources)
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
    runs, store, _questions = scorer.scored_runs(ws, gold_key, profile, slot)
    key = (ws_key, gold_key, profile, tuple((r.name, r.source, r.file) for r in runs), store.benchmark,
           tuple(sorted(store.ids.items())), store.engine.shown())

    def build() -> Analysis:
        cache.trim()  # what reading or scoring the runs left behind goes back before the tables are built
        # the question frame is made when a page first asks for it (the leaderboard does not: it is drawn first)
        return Analysis.build(runs, ws.gold.items, ws.page_counts, profile, ws.declared_pages(), store=store,
                              later_questions=partial(cache.frame, ws, gold_key))

    analysis = cache.analysis(key, build)
    ctx = context.Context(sources, ws, analysis, profile, gold_key, benchmark, plain if fixes else None, fixes)
    st.session_state[context.CONTEXT] = ctx
    context.announce_upload_problems(ws)
    context.warn_joins(analysis)
    return ctx

"""Streamlit pieces of the Weak slices page (views/weak.py): the run and settings pickers, the search
on request with a progress bar, the ranked table, the forest plot and the folded slices.

Searches are kept in a small LRU store shared by the sessions (`core.bounded.Bounded`), keyed by the
run's scores and the questions' fields (content hashes) and the settings: a search is computed once,
and not inside a cached function, so the progress bar drawn while it runs is not replayed.
"""

from __future__ import annotations

import streamlit as st

from dashboard.core.bounded import Bounded
from dashboard.core.escape import md_escape
from dashboard.core.samples import campaign_offer
from dashboard.shell import viewstate
from dashboard.weak import charts
from dashboard.weak import frames as W
from scoring.registry import METRIC_LABELS, METRICS
from scoring.slices import SliceSearch

SEARCHES: Bounded[SliceSearch] = Bounded(32)
METHODS = {"bh": "Benjamini–Hochberg", "by": "Benjamini–Yekutieli (stricter, any dependence)"}


ALONE = "(none: the run against the rest of itself)"


def pickers(runs: list[str]) -> tuple[str, str, str, W.Settings]:
    """Run, baseline ("" for none), metric and the finder's settings (thresholds shown)."""
    c1, c2, c3 = st.columns([3, 3, 2])
    run = c1.selectbox("Run", runs, key="weak_run")
    others = [ALONE] + [r for r in runs if r != run]
    if st.session_state.get("weak_base") not in others:
        st.session_state["weak_base"] = ALONE
    base = c2.selectbox("Baseline (pair mode: where did the run get worse?)", others, key="weak_base",
                        help="With a baseline, each question's outcome is the run's score minus the baseline's, and a "
                             "slice is weak where the run lost more (or gained less) than on the other questions.")
    metric = c3.selectbox("Metric", list(METRICS), format_func=METRIC_LABELS.__getitem__, key="weak_metric")
    with st.expander("Thresholds and false-discovery control"):
        d1, d2, d3, d4 = st.columns(4)
        fdr = d1.number_input("False-discovery rate q", min_value=0.001, max_value=0.5, value=0.05, step=0.01,
                              format="%.3f", key="weak_fdr")
        method = d2.selectbox("Control", list(METHODS), format_func=METHODS.__getitem__, key="weak_method")
        min_q = d3.number_input("Min questions per slice (0: max(30, 0.5 %))", min_value=0, value=0, step=10,
                                key="weak_min_q")
        min_d = d4.number_input("Min documents per slice", min_value=1, value=20, step=5, key="weak_min_d")
    return run, "" if base == ALONE else str(base), metric, W.Settings(float(fdr), str(method), int(min_q), int(min_d))


def search_key(an, questions, run: str, baseline: str, metric: str, settings: W.Settings) -> tuple:
    """The store's key of one search: the run's (and baseline's) scores, the questions' fields -- the
    saved slices and tags among them -- and the settings."""
    return ("weak", run, baseline, metric, W.scores_key(an.rows_of([run, baseline] if baseline else [run]), questions, run, metric, baseline), settings)


def cached(an, questions, run: str, baseline: str, metric: str, settings: W.Settings) -> SliceSearch | None:
    """The search if it was made already (by any session), else None."""
    return SEARCHES.get(search_key(an, questions, run, baseline, metric, settings))


def compute(an, questions, run: str, baseline: str, metric: str, settings: W.Settings, bar=None) -> SliceSearch:
    """The search, from the store or computed now (`bar`: a st.progress it moves)."""
    key = search_key(an, questions, run, baseline, metric, settings)

    def build() -> SliceSearch:
        data = W.inputs(questions, an.rows_of([run, baseline] if baseline else [run]), an.gold, run, metric, baseline)
        return W.search(data, settings, progress=None if bar is None else
                        (lambda f, what: bar.progress(min(1.0, f), text=what.capitalize() + "…")))

    return SEARCHES.get_or_build(key, build)


def found(an, run: str, baseline: str, metric: str, settings: W.Settings, questions=None,
          key: str = "weak_go") -> SliceSearch | None:
    """The search for this run, metric and settings: from the store, or computed when the button is
    pressed (with a progress bar); None until then. `questions`: the question frame the fields are
    read from (with the saved slices and tags, dashboard.weak.saved_panel.questions_with_fields)."""
    questions = an.questions if questions is None else questions
    hit = cached(an, questions, run, baseline, metric, settings)
    if hit is not None:
        return hit
    if not st.button("Find weak slices", type="primary", icon=":material/search:", key=key):
        st.info("The search runs on request: every conjunction of up to three conditions is tested against the rest "
                "of the run, with documents as the unit. Press **Find weak slices**.")
        return None
    bar = st.progress(0.0, text="Reading the questions…")
    result = compute(an, questions, run, baseline, metric, settings, bar)
    bar.empty()
    return result


def show(result: SliceSearch, run: str, baseline: str, metric: str, saved=None) -> None:
    """The count of slices tested, then the ranked table and the forest plot, or 'not enough evidence'."""
    c1, c2, c3 = st.columns(3)
    c1.metric("Slices tested", f"{result.tested:,}")
    c2.metric("Weak slices", f"{len(result.weak):,}", help="kept after folding the slices another one explains")
    c3.metric("Folded under them", f"{len(result.folded):,}")
    st.caption(md_escape(W.settings_text(result)))
    if result.skipped_fields:
        st.caption(md_escape("Not fields here (one value for every question): " + ", ".join(result.skipped_fields)))
    if not result.weak:
        where = "this run is weaker than the rest" if not baseline else "this run lost more to the baseline than elsewhere"
        st.info(f"Not enough evidence: no slice where {where} beyond chance "
                f"({result.tested:,} slices tested, {result.units:,} {result.unit}s as the unit).")
        if result.tested == 0 and (offer := campaign_offer("weak", viewstate.view().data)):  # no slice had the documents
            st.markdown(offer)  # the app's own sentence and link (dashboard/core/samples.py)
        return
    shown = [c for c in W.TABLE_COLUMNS if c != "Gap (pp)"]  # the interval's text leads with it
    st.dataframe(W.table(result, run, baseline, saved, viewstate.view()), hide_index=True, key="weak_table", column_order=shown, column_config={
        "Rank": st.column_config.NumberColumn(width="small"),
        "Conditions": st.column_config.ListColumn("Conditions", width="large",
                                                  help="field=value; a question is in the slice when all hold"),
        W.INTERVAL: st.column_config.TextColumn(help="slice − rest of the run, percentage points, with its 95 % interval "
                                                     "(cluster-robust, documents as the unit)"),
        "Excess failures": st.column_config.NumberColumn(format="%.1f", help="questions × (rest − slice)"),
        "p (one-sided)": st.column_config.NumberColumn(format="%.2g"),
        "q": st.column_config.NumberColumn(format="%.2g", help="false-discovery-adjusted across every slice tested"),
        "Explains": st.column_config.NumberColumn(help="significant slices folded under this one (listed below)"),
        "Open in explorer": st.column_config.LinkColumn(display_text="questions ↗"),
    })
    st.plotly_chart(charts.forest(result, METRIC_LABELS[metric]), key="weak_forest")
    if result.folded:
        with st.expander(f"Folded slices ({len(result.folded):,}): what explains each"):
            st.dataframe(W.folded_table(result), hide_index=True, key="weak_folded", column_config={
                "Gap (pp)": st.column_config.NumberColumn(format="%+.1f"),
                "q": st.column_config.NumberColumn(format="%.2g")})

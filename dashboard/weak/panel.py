"""Streamlit pieces of the Weak slices page (views/weak.py): the run and settings pickers, the search
on request with a progress bar, the ranked table, the forest plot and the folded slices.

Searches are kept in a small LRU store shared by the sessions (`core.bounded.Bounded`), keyed by the
run's scores and the questions' fields (content hashes) and the settings: a search is computed once,
and not inside a cached function, so the progress bar drawn while it runs is not replayed.
"""

from __future__ import annotations

import streamlit as st

from dashboard.core.analysis import remembered
from dashboard.core.bounded import Bounded
from dashboard.core.escape import md_escape
from dashboard.core.samples import campaign_offer
from dashboard.shell import viewstate
from dashboard.weak import charts
from dashboard.weak import frames as W
from scoring.registry import METRIC_LABELS, METRICS
from scoring.slice_worker import SearchFailed
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
    fields = _kept(an, questions, ("fields digest",), lambda: W.fields_digest(questions))  # the same for every pair
    return ("weak", run, baseline, metric, _kept(an, questions, ("scores key", run, baseline, metric), lambda: W.scores_key(
        an.rows_of([run, baseline] if baseline else [run]), questions, run, metric, baseline, fields)), settings)


def _kept(an, questions, key: tuple, build):
    """`build()`, kept on the analysis when it rests on the analysis's own question frame (`remembered`):
    Compare asks the finder's key and scope of the pair at every run."""
    return remembered(an, key, build, questions)


def cached(an, questions, run: str, baseline: str, metric: str, settings: W.Settings) -> SliceSearch | None:
    """The search if it was made already (by any session), else None."""
    return SEARCHES.get(search_key(an, questions, run, baseline, metric, settings))


def inputs(an, questions, run: str, baseline: str, metric: str) -> W.Inputs:
    """The finder's inputs of a run (and baseline): its scores, the fields, the documents."""
    return W.inputs(questions, an.attempted_scores([run, baseline] if baseline else [run])[0], an.gold, run, metric, baseline,
                    getattr(an, "declared_pages", None), _values(an))


def scope(an, questions, run: str, baseline: str, metric: str) -> W.Scope:
    """The run's (and baseline's) questions the finder would test, without their fields (`too_small`'s need)."""
    return _kept(an, questions, ("scope", run, baseline, metric), lambda: W.scope(
        questions, an.attempted_scores([run, baseline] if baseline else [run])[0], an.gold, run, metric, baseline))


def _values(an):
    """The analysis' question_values (read from the gold once), when it has them."""
    return an.question_values() if hasattr(an, "question_values") else None


def compute(an, questions, run: str, baseline: str, metric: str, settings: W.Settings, bar=None) -> SliceSearch:
    """The search, from the store or computed now in the finder's worker (`bar`: a st.progress it
    moves). Raises scoring.slice_worker.SearchFailed when the worker ran out of memory or time."""
    key = search_key(an, questions, run, baseline, metric, settings)

    def build() -> SliceSearch:
        return W.search(inputs(an, questions, run, baseline, metric), settings, progress=None if bar is None else
                        (lambda f, what: bar.progress(min(1.0, f), text=what.capitalize() + "…")))

    return SEARCHES.get_or_build(key, build)


def too_small(an, questions, run: str, baseline: str, metric: str, settings: W.Settings, page: str = "weak",
              offer: bool = True) -> bool:
    """When the run's questions come from fewer documents than one slice needs, say so -- with the
    bundled campaign sample offered (`offer`: unless the page offers it already) -- and return True
    (nothing to search)."""
    why = W.too_small(scope(an, questions, run, baseline, metric), settings)
    if not why:
        return False
    st.info(f"Not enough evidence for the finder here: {why}. A slice is tested only with "
            f"{settings.min_documents} documents or more, since documents are the unit of every test.",
            icon=":material/info:")
    link = campaign_offer(page, viewstate.view().data) if offer else ""
    if link:
        st.markdown(link)  # the app's own sentence and link (dashboard/core/samples.py)
    elif offer:
        st.caption("Open a benchmark with more documents (the bundled sample_runs/campaign has 40: start the app with "
                   "--benchmark pointing at it, or add its folder to LENS_DATA_ROOTS).")
    return True


def computed(an, questions, run: str, baseline: str, metric: str, settings: W.Settings, text: str) -> SliceSearch | None:
    """The search from the store, or computed now with a progress bar; None (and the reason shown) when
    its worker ran out of memory or time."""
    hit = cached(an, questions, run, baseline, metric, settings)
    if hit is not None:
        return hit
    bar = st.progress(0.0, text=text)
    try:
        return compute(an, questions, run, baseline, metric, settings, bar)
    except SearchFailed as exc:
        st.error(f"The weak-slice search was stopped: {exc}.", icon=":material/error:")
        return None
    finally:
        bar.empty()


def answer(an, questions, run: str, baseline: str, metric: str, settings: W.Settings,
           text: str) -> tuple[SliceSearch | None, W.Parts]:
    """(the search, the finder's sentence) for a page that states the answer -- the Presentation: the
    search from the store or computed now; no search (None) and the reason as the sentence when the
    benchmark is too small or the search was stopped."""
    hit = cached(an, questions, run, baseline, metric, settings)
    if hit is None:
        why = W.too_small(scope(an, questions, run, baseline, metric), settings)
        if why:
            return None, W.small_sentence(why)
        hit = computed(an, questions, run, baseline, metric, settings, text)
        if hit is None:
            return None, [("The weak-slice search was stopped", True), (" (the reason is above).", False)]
    return hit, W.sentence(hit, run, METRIC_LABELS[metric], baseline)


def found(an, run: str, baseline: str, metric: str, settings: W.Settings, questions=None,
          key: str = "weak_go") -> SliceSearch | None:
    """The search for this run, metric and settings: from the store, or computed when the button is
    pressed (with a progress bar); None until then. `questions`: the question frame the fields are
    read from (with the saved slices and tags, dashboard.weak.saved_panel.questions_with_fields).
    A benchmark with fewer documents than a slice needs is said so at once (no button)."""
    questions = an.questions if questions is None else questions
    hit = cached(an, questions, run, baseline, metric, settings)
    if hit is not None:
        return hit
    if too_small(an, questions, run, baseline, metric, settings):
        return None
    if not st.button("Find weak slices", type="primary", icon=":material/search:", key=key):
        st.info("The search runs on request: every conjunction of up to three conditions is tested against the rest "
                "of the run, with documents as the unit. Press **Find weak slices**.")
        return None
    return computed(an, questions, run, baseline, metric, settings, "Reading the questions…")


def table_config() -> dict:
    """The weak-slice table's columns as every page shows them: p and q right after the interval, so
    they stay in view at 1,400 px (fixed widths: the table scrolls sideways for the rest)."""
    return {
        "Rank": st.column_config.NumberColumn("#", width=40),
        "Conditions": st.column_config.ListColumn("Conditions", width=320,
                                                  help="a question is in the slice when every condition holds"),
        W.INTERVAL: st.column_config.TextColumn("Gap [adjusted interval] (pp)", width=190, help=W.INTERVAL_HELP),
        "p (one-sided)": st.column_config.NumberColumn("p", format="%.2g", width=70,
                                                       help="one-sided: the slice is weaker than the rest"),
        "q": st.column_config.NumberColumn(format="%.2g", width=70,
                                           help="false-discovery-adjusted across every slice tested"),
        "Questions": st.column_config.NumberColumn(width=80),
        "Documents": st.column_config.NumberColumn(width=80),
        "Excess failures": st.column_config.NumberColumn(format="%.1f", width=80, help="questions × (rest − slice)"),
        "Explains": st.column_config.NumberColumn(width=70, help="significant slices folded under this one (listed below)"),
        "Open in explorer": st.column_config.LinkColumn("Explorer", display_text="questions ↗", width=90),
    }


SHOWN = [c for c in W.TABLE_COLUMNS if c != "Gap (pp)"]  # the interval's text leads with the gap


def show(result: SliceSearch, run: str, baseline: str, metric: str, saved=None) -> None:
    """The count of slices tested, the fields, then the ranked table and the forest plot, or 'not
    enough evidence'."""
    c1, c2, c3 = st.columns(3)
    c1.metric("Slices tested", f"{result.tested:,}")
    c2.metric("Weak slices", f"{len(result.weak):,}", help="kept after folding the slices another one explains")
    c3.metric("Folded under them", f"{len(result.folded):,}")
    st.caption(md_escape(W.settings_text(result)))
    st.caption(md_escape(W.fields_text(result)))
    if not result.weak:
        st.info(W.markdown(W.sentence(result, run, METRIC_LABELS[metric], baseline)))
        return
    st.markdown(W.markdown(W.sentence(result, run, METRIC_LABELS[metric], baseline)))
    st.dataframe(W.table(result, run, baseline, saved, viewstate.view()), hide_index=True, key="weak_table", column_order=SHOWN,
                 column_config=table_config())
    st.download_button("Weak slices as CSV", W.csv_bytes(result), file_name=f"weak_slices_{run}.csv"[:120],
                       mime="text/csv", icon=":material/download:", key="weak_csv", on_click="ignore",
                       help="The command line's --weak-slices columns: gap = slice − rest; ci_low and ci_high are the "
                            "intervals adjusted for the search (false-coverage rate), p one-sided, q adjusted.")
    st.plotly_chart(charts.forest(result, METRIC_LABELS[metric]), key="weak_forest")
    if result.folded:
        with st.expander(f"Folded slices ({len(result.folded):,}): what explains each"):
            st.dataframe(W.folded_table(result), hide_index=True, key="weak_folded", column_config={
                "Gap (pp)": st.column_config.NumberColumn(format="%+.1f"),
                "q": st.column_config.NumberColumn(format="%.2g")})

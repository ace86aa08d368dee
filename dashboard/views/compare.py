"""Compare runs: run A against baseline B (deltas with intervals, flips, questions side by side), and
all runs (where a run is weakest -- the weak-slice finder's answer -- and ranks per slice). The
stakeholder report is built from here."""

import streamlit as st

from dashboard.compare import frames as C
from dashboard.compare import panel as P
from dashboard.core.escape import md_escape
from dashboard.report import panel as report_panel
from dashboard.shell import context, viewstate
from dashboard.weak import saved_panel

ctx = context.context()
an = ctx.analysis
state = viewstate.view().compare
st.title("Compare runs")

if an.questions.empty or len(an.ranked_names) < 2:
    st.info("Comparing needs gold questions and at least two runs. Put prediction files in the benchmark's runs/ folder, "
            "or upload them in the sidebar's Data panel; the Data page lists what was found.")
else:
    runs = P.runs_by_accuracy(an)
    viewstate.seed("cmp_tab", P.ALL_TAB if state.get("cmp_tab") == "all" else P.PAIR_TAB)
    pair_tab, all_tab = st.tabs([P.PAIR_TAB, P.ALL_TAB], key="cmp_tab", on_change="rerun")
    state["cmp_tab"] = "all" if st.session_state.get("cmp_tab") == P.ALL_TAB else ""
    with pair_tab:
        if pair_tab.open is not False:
            viewstate.seed("cmp_a", state.get("a") if state.get("a") in runs else runs[0])
            viewstate.seed("cmp_b", state.get("b") if state.get("b") in runs else next(r for r in runs if r != st.session_state["cmp_a"]))
            c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
            a = c1.selectbox("Run A", runs, key="cmp_a")
            b = c2.selectbox("Baseline B", runs, key="cmp_b")
            c3.button("Swap", icon=":material/swap_horiz:", width="stretch", on_click=P.swap, args=(st.session_state,))
            state["a"], state["b"] = a, b
            pairs = C.paired(an.rows_of([a, b]), a, b)
            if a == b:
                st.warning("Run A and baseline B are the same run: choose two different runs.")
            elif pairs.empty:
                st.warning(f"{md_escape(a)} and {md_escape(b)} share no scored question.")
            else:
                if note := P.pair_note(an, a, b, len(pairs)):
                    st.info(md_escape(note), icon=":material/join_inner:")
                questions = saved_panel.questions_with_fields(ctx)  # the saved slices as a breakdown field
                tagged = saved_panel.questions_with_fields(ctx, [a, b], with_tags=True)
                job = P.pair_job(an, pairs, a, b, questions)  # the per-slice table, on a thread of its own
                P.headline(C.overall_frame(P.overall(job), pairs), a, b)  # its all-questions row is drawn first
                P.meanwhile(an, pairs, a, b, state, questions, tagged)  # what the sections below need, while it is made
                P.slices_section(an, P.deltas(job), a, b, state)
                P.where_worse_better(ctx, an, a, b, state, tagged)
                P.flips_section(an, pairs, a, b, state, ctx, questions)
    with all_tab:
        if all_tab.open is not False:
            P.many_runs(ctx, an, runs, state)
    report_panel.report_section(ctx, runs, state)

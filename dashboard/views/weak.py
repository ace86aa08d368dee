"""Weak slices: where is a run weak, and is it real? Every conjunction of up to three conditions
field=value is tested against the rest of the run with documents as the unit, false discoveries
controlled across all of them, found slices' intervals adjusted for the search; slices another one
explains are folded under it. Computed on request (dashboard/weak) in the finder's worker process. The
fields are the command line's (scoring/slice_fields.py) plus the saved slices and the triage notes'
tags; a slice found here can be saved. A benchmark with fewer documents than a slice needs is told so
at once, with the campaign sample offered. The link holds the run, baseline (pair mode) and metric
(`wk_run`, `wk_base`, `wk_metric`)."""

import streamlit as st

from dashboard.compare import panel as compare_panel
from dashboard.core.escape import md_escape
from dashboard.shell import context, viewstate
from dashboard.weak import panel as P
from dashboard.weak import saved as S
from dashboard.weak import saved_panel
from scoring.registry import METRICS

ctx = context.context()
an = ctx.analysis
st.title("Weak slices")

if an.questions.empty or not an.ranked_names:
    st.info("Finding weak slices needs gold questions and at least one scored run. Put prediction files in the "
            "benchmark's runs/ folder, or upload them in the sidebar's Data panel; the Data page lists what was found.")
else:
    runs = compare_panel.runs_by_accuracy(an)
    state = viewstate.view().weak
    viewstate.seed("weak_run", state.get("wk_run") if state.get("wk_run") in runs else runs[0])
    if st.session_state.get("weak_run") not in runs:
        st.session_state["weak_run"] = runs[0]
    if state.get("wk_base") in runs and state.get("wk_base") != st.session_state["weak_run"]:
        viewstate.seed("weak_base", state["wk_base"])
    viewstate.seed("weak_metric", state.get("wk_metric") if state.get("wk_metric") in METRICS else "accuracy")
    run, baseline, metric, settings = P.pickers(runs)
    state.clear()
    state.update({"wk_run": run, "wk_base": baseline, "wk_metric": "" if metric == "accuracy" else metric})
    questions = saved_panel.questions_with_fields(ctx, [run, baseline] if baseline else [run], with_tags=True)
    saved = saved_panel.by_name(ctx)
    st.caption(md_escape(f"Fields include the {len(saved)} saved slice{'s' * (len(saved) != 1)} ({S.SAVED_FIELD}) and "
                         f"the triage notes' tags ({S.TAG_FIELD}) of the run{' and the baseline' if baseline else ''}."))
    result = P.found(an, run, baseline, metric, settings, questions)
    if result is not None:
        P.show(result, run, baseline, metric, saved)
        if result.weak:
            with st.expander("Save a slice found here", icon=":material/bookmark_add:"):
                names = [s.name for s in result.weak]
                labels = {s.name: s.label for s in result.weak}
                pick = st.selectbox("Slice", names, key="weak_save_pick",
                                    format_func=lambda n: f"#{names.index(n) + 1} {labels[n]}")
                chosen = result.weak[names.index(pick)]
                conditions = [(f, x) for f, v in chosen.conditions for x in result.raw_values(f, v)]  # a range: its values
                saved_panel.save_form(ctx, S.definition_from_conditions(conditions), "weak_saved",
                                      suggested=chosen.label[:200], describe=chosen.label)
    with st.expander("Saved slices of this benchmark", icon=":material/bookmarks:"):
        saved_panel.manage(ctx, "weak_saved_list", run)

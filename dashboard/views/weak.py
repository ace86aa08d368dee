"""Weak slices: where is a run weak, and is it real? Every conjunction of up to three conditions
field=value is tested against the rest of the run with documents as the unit, false discoveries
controlled across all of them; slices another one explains are folded under it. Computed on request
(dashboard/weak)."""

import streamlit as st

from dashboard.compare import panel as compare_panel
from dashboard.shell import ui
from dashboard.weak import panel as P

ctx = ui.context()
an = ctx.analysis
st.title("Weak slices")

if an.questions.empty or not an.ranked_names:
    st.info("Finding weak slices needs gold questions and at least one scored run. Put prediction files in the "
            "benchmark's runs/ folder, or upload them in the sidebar's Data panel; the Data page lists what was found.")
else:
    runs = compare_panel.runs_by_accuracy(an)
    ui.seed("weak_run", runs[0])
    if st.session_state.get("weak_run") not in runs:
        st.session_state["weak_run"] = runs[0]
    run, baseline, metric, settings = P.pickers(runs)
    result = P.found(an, run, baseline, metric, settings)
    if result is not None:
        P.show(result, run, baseline, metric)

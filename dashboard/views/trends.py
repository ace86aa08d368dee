"""Trends: a series of checkpoints (runs of one training run, ordered by step) -- every slice's score per
checkpoint with its interval by document, and alarms only on real, lasting drops. The page's Streamlit
logic is dashboard/trends/panel.py; the statistics scoring/trends.py. The link holds the series, the slice
charted and the metric (`tr_series`, `tr_slice`, `tr_metric`)."""

import streamlit as st

from dashboard.shell import context
from dashboard.trends import panel as P

ctx = context.context()
an = ctx.analysis
st.title("Checkpoint trends")

if an.questions.empty or not an.ranked_names:
    st.info("Trends need gold questions and scored runs: put prediction files in the benchmark's runs/ folder, or "
            "upload them in the sidebar's Data panel; the Data page lists what was found.")
else:
    P.page(ctx)

"""Overview: what the metrics reward, the leaderboard of all runs, heatmaps and breakdown charts of
the runs picked (by default the ten best and any baseline); a click opens the explorer. The page's
Streamlit logic is dashboard/overview/panel.py."""

import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.overview import panel as P
from dashboard.shell import context

ctx = context.context()
an = ctx.analysis
st.title("Overview")
st.caption(f"Profile {ctx.profile} · {an.question_count} gold questions · {len(an.runs)} runs")

if not an.question_count:
    st.info(md_escape(f"No gold questions loaded. {P.no_gold_reason(ctx)} Open a benchmark folder or upload gold files in "
                      "the sidebar's Data panel; the Data page lists what was found and what went wrong."))
elif not an.runs:
    st.info("No runs loaded. Put prediction files in the benchmark's runs/ folder (or score files in results/), "
            "or upload them in the sidebar's Data panel.")
else:
    P.overview(ctx)

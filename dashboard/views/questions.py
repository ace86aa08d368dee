"""Question explorer: questions × chosen runs, filters, and one question's detail -- the gold with its
evidence quotes, then one tab per chosen run with its answer, scores and Accuracy trace. Model text is
shown as plain text only. The page's Streamlit logic is dashboard/explorer/panel.py."""

import streamlit as st

from dashboard.explorer import panel as P
from dashboard.shell import context

ctx = context.context()
an = ctx.analysis
st.title("Question explorer")

if an.questions.empty or not an.runs:
    st.info("Nothing to explore yet: load gold questions and at least one run (sidebar, Data panel). "
            "The Data page shows what was found.")
else:
    P.explore(ctx)

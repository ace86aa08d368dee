"""Question × run matrix: every question (or document) against the runs of a series ordered by step, each
cell right / wrong / partial / missing (the profile's right answer), filtered like the explorer, ordered by
what was forgotten, learned or flips most, a page at a time; a cell opens the question with both answers.
The page's Streamlit logic is dashboard/matrix/panel.py."""

import streamlit as st

from dashboard.matrix import panel as P
from dashboard.shell import context

ctx = context.context()
an = ctx.analysis
st.title("Question × run matrix")

if an.questions.empty or not an.ranked_names:
    st.info("The matrix needs gold questions and scored runs: put prediction files in the benchmark's runs/ folder, "
            "or upload them in the sidebar's Data panel; the Data page lists what was found.")
else:
    P.page(ctx)

"""DocBench Lens: `streamlit run dashboard/app.py [-- --benchmark DIR --runs P... --scores P...]`.

Without arguments it opens sample_runs/. The environment variables LENS_BENCHMARK, LENS_RUNS and
LENS_SCORES (lists separated by os.pathsep) do the same as the arguments; tests use them.

The pages live in views/, not pages/: Streamlit treats a `pages/` folder beside the entrypoint as
the old multipage layout, and a session whose first request is /questions would then run that page
without this script (no data loaded, no sidebar).
"""

import os
import sys
from pathlib import Path

import streamlit as st

from dashboard.core.paths import sources_from
from dashboard.session.load import load
from dashboard.shell import sidebar, viewstate

VIEWS = Path(__file__).resolve().parent / "views"

st.set_page_config(page_title="DocBench Lens", page_icon="🔎", layout="wide")
viewstate.start()
page = st.navigation([
    st.Page(VIEWS / "overview.py", title="Overview", icon=":material/leaderboard:", default=True),
    st.Page(VIEWS / "questions.py", title="Question explorer", icon=":material/quiz:"),
    st.Page(VIEWS / "disagreement.py", title="Metric disagreement", icon=":material/rule:"),
    st.Page(VIEWS / "evidence.py", title="Evidence", icon=":material/plagiarism:"),
    st.Page(VIEWS / "compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    st.Page(VIEWS / "weak.py", title="Weak slices", icon=":material/troubleshoot:"),
    st.Page(VIEWS / "present.py", title="Presentation", icon=":material/slideshow:"),
    st.Page(VIEWS / "data.py", title="Data", icon=":material/dataset:"),
])
st.sidebar.title("DocBench Lens")
profile = sidebar.profile_picker()
sources = sidebar.data_panel(sources_from(sys.argv[1:], os.environ))
load(sources, profile)
page.run()  # pages never call st.stop(): after it no Streamlit call runs, and the URL would go stale
viewstate.sync_url()

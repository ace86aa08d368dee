"""DocBench Lens: `streamlit run dashboard/app.py [-- --benchmark DIR --runs P... --scores P...]`.

Without arguments it opens sample_runs/. The environment variables LENS_BENCHMARK, LENS_RUNS and
LENS_SCORES (lists separated by os.pathsep) do the same as the arguments; tests use them.

The pages live in views/, not pages/: Streamlit treats a `pages/` folder beside the entrypoint as
the old multipage layout, and a session whose first request is /questions would then run that page
without this script (no data loaded, no sidebar). Each page's own modules are imported when the page
is opened (st.navigation runs its file); this script imports only the shell and the loading.
"""

import os
import sys
from pathlib import Path

import streamlit as st

import dashboard  # noqa: F401  (first of ours, before the prefetch's table loads numpy: one BLAS thread, scoring/__init__.py)

VIEWS = Path(__file__).resolve().parent / "views"
PREFETCHED = "lens_prefetched"  # session state: the browser was sent the table code to fetch
PREFETCH_KEY = "lens_prefetch"  # the one-pixel container's key (class st-key-lens_prefetch in the page)


def prefetch(slot) -> None:
    """On a session's first run, before the imports and the data load (one to several seconds), an
    empty table in a one-pixel container: the browser, idle meanwhile, fetches and compiles the table's
    code, which it otherwise asks for only when the leaderboard arrives, so the leaderboard is drawn as
    it arrives. Plotly's code (4.7 MB) is not fetched early: asked for with the first chart, after the
    leaderboard, it would hold the browser while the leaderboard is drawn (bench/bench_mmlongbench.py
    --first-paint: with it fetched here too the leaderboard came 1.0-1.7x the floor app's time, without
    0.7-0.8x). The slot is emptied once the data is loaded."""
    if st.session_state.get(PREFETCHED):
        return
    st.session_state[PREFETCHED] = True
    with slot.container(height=1, border=False, key=PREFETCH_KEY):
        st.dataframe({"": []}, height=1, hide_index=True)


st.set_page_config(page_title="DocBench Lens", page_icon="🔎", layout="wide")
early = st.empty()
prefetch(early)

from dashboard.core.paths import sources_from  # noqa: E402  (after the prefetch: these take a second on a busy machine)
from dashboard.session.load import ahead, load  # noqa: E402
from dashboard.shell import output, sidebar, viewstate  # noqa: E402
from scoring import deferred  # noqa: E402

output.blank_missing_cells()  # a missing value is an empty cell in every table, never the word "None"
viewstate.start()
page = st.navigation([
    st.Page(VIEWS / "overview.py", title="Overview", icon=":material/leaderboard:", default=True),
    st.Page(VIEWS / "questions.py", title="Question explorer", icon=":material/quiz:"),
    st.Page(VIEWS / "disagreement.py", title="Metric disagreement", icon=":material/rule:"),
    st.Page(VIEWS / "judge.py", title="LLM judge", icon=":material/gavel:"),
    st.Page(VIEWS / "evidence.py", title="Evidence", icon=":material/plagiarism:"),
    st.Page(VIEWS / "compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    st.Page(VIEWS / "weak.py", title="Weak slices", icon=":material/troubleshoot:"),
    st.Page(VIEWS / "trends.py", title="Trends", icon=":material/timeline:"),
    st.Page(VIEWS / "matrix.py", title="Question × run matrix", icon=":material/grid_on:"),
    st.Page(VIEWS / "present.py", title="Presentation", icon=":material/slideshow:"),
    st.Page(VIEWS / "data.py", title="Data", icon=":material/dataset:"),
])
st.sidebar.title("DocBench Lens")
profile = sidebar.profile_picker()
sources = sidebar.data_panel(sources_from(sys.argv[1:], os.environ))
ctx = load(sources, profile)
early.empty()
page.run()  # pages never call st.stop(): after it no Streamlit call runs, and the URL would go stale
viewstate.sync_url()
deferred.warm()  # scipy for intervals and tests, imported now the page is drawn: not in a later page's time
ahead(ctx)  # Compare's worker processes on a large benchmark, started now the page is drawn

"""The session's view and the URL: the view read from the URL on a session's first run, written back
when it changes, widgets seeded from it, and moving to another page (or a chart's slice in the
question explorer) with the view's URL."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

# Pillow whole before any session draws: Plotly looks up `PIL.Image` in sys.modules without the
# import lock, so a session that charts while another thread is first importing Pillow (for an
# evidence overlay) met a half-initialised module (bench/bench_load.py, 20 sessions at once).
import PIL.Image  # noqa: F401
import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.core.links import View, from_params, to_params

VIEW = "lens_view"
LINK_RUNS = "lens_link_runs"  # the runs named by the link the session opened with
QUESTIONS_PAGE = Path(__file__).resolve().parent.parent / "views" / "questions.py"
EXPLORER_PREFIX = "x_"  # widget keys of the question explorer


def start() -> View:
    """The session's view; on a session's first run it is read from the URL."""
    if VIEW not in st.session_state:
        st.session_state[VIEW] = from_params({k: st.query_params.get_all(k) for k in st.query_params})
        st.session_state[LINK_RUNS] = list(st.session_state[VIEW].runs)
    return st.session_state[VIEW]


def warn_missing_runs(loaded: list[str]) -> None:
    """Say which runs the opening link named that are not loaded (an uploaded file is not part of a
    link), until they are loaded or the message is dismissed."""
    missing = [r for r in st.session_state.get(LINK_RUNS, []) if r not in loaded]
    if not missing:
        return
    box = st.container(border=False)
    names = ", ".join(missing)
    box.warning(md_escape(f"The link names {len(missing)} run{'s' if len(missing) > 1 else ''} that "
                          f"{'are' if len(missing) > 1 else 'is'} not loaded: {names}. A run from an uploaded file "
                          "has to be uploaded again (sidebar, Data panel); a run from a folder needs that folder "
                          "open. The view shows the runs that are loaded."), icon=":material/link_off:")
    if box.button("Dismiss", key="dismiss_missing_runs"):
        st.session_state[LINK_RUNS] = []
        st.rerun()


def view() -> View:
    return st.session_state[VIEW]


def set_view(new: View) -> None:
    st.session_state[VIEW] = new


def sync_url() -> None:
    """Write the view into the URL (only when it changed, to keep history quiet)."""
    params = to_params(view())
    wanted = {k: v if isinstance(v, list) else [v] for k, v in params.items()}
    current = {k: st.query_params.get_all(k) for k in st.query_params}
    if wanted != current:
        st.query_params.from_dict(params)


def sync_url_in_fragment() -> None:
    """sync_url() when only a fragment reran (app.py's own call at the end of a full run does not
    run then); nothing in a full run, where a second write would push a second history entry."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    run_ctx = get_script_run_ctx()
    if run_ctx is not None and run_ctx.fragment_ids_this_run:
        sync_url()


def switch_to(page: Path) -> None:
    """Open another page with the view's URL: one browser history entry. (Without `query_params`,
    st.switch_page clears the URL, the frontend pushes the new page's path, then sync_url pushes it
    again with the view's query: Back went to the bare page, not to the page the user came from.)"""
    st.switch_page(page, query_params=to_params(view()))


def seed(key: str, value: object) -> None:
    """Give a widget its value from the view, unless the user has already set it."""
    if key not in st.session_state:
        st.session_state[key] = value


def open_slice(run: str | None, field_name: str, label: str) -> None:
    """Open the question explorer on one slice of a chart (its widgets are reseeded from the view)."""
    open_explorer(view().with_slice(run, field_name, label))


def open_explorer(target: View) -> None:
    """Open the question explorer on `target`'s runs, field filters, answer locations and tags -- a chart's
    segment or a finder's slice of several conditions -- keeping the rest of the view (data folder, profile)."""
    set_view(replace(view().with_slice(None, "", ""), runs=list(target.runs) or list(view().runs),
                     filters=dict(target.filters), location=list(target.location), tags=list(target.tags)))
    for key in [k for k in st.session_state if str(k).startswith(EXPLORER_PREFIX)]:
        del st.session_state[key]
    switch_to(QUESTIONS_PAGE)

"""The stakeholder report on the Compare runs page: the runs and baseline picked, the report built on
request (dashboard/report/build.py) and offered as a download. Here, above the comparison, because
the report is built from the comparison's helpers (tests/test_architecture.py: no two packages
import each other)."""

from __future__ import annotations

from collections.abc import MutableMapping

import streamlit as st

from dashboard.annotations import panel as annotations_panel
from dashboard.compare import panel as compare_panel
from dashboard.shell.context import Context
from dashboard.trends import panel as trend_panel
from dashboard.weak import saved_panel


def report_section(ctx: Context, order: list[str], state: MutableMapping[str, str]) -> None:
    from dashboard.report import build as report  # Jinja2 and the report's charts: imported on first use

    st.divider()
    st.subheader("Stakeholder report")
    st.caption("One HTML file that opens anywhere with no network: headline numbers with intervals, the weakest slices, "
               "the flip summary and the most telling failures with their evidence pages.")
    a = state.get("a") if state.get("a") in order else order[0]
    b = state.get("b") if state.get("b") in order and state.get("b") != a else next(r for r in order if r != a)
    if st.session_state.get("cmp_report_pair") != (a, b):  # a new pair above (Swap, another A or B): the report follows it
        st.session_state["cmp_report_pair"] = (a, b)
        st.session_state["cmp_report_runs"] = [a, b]
        st.session_state.pop("cmp_report_baseline", None)  # the selectbox's index then picks B
    c1, c2 = st.columns([3, 2])
    runs = c1.multiselect("Runs in the report (the first is A)", order, key="cmp_report_runs")
    choices: list[str | None] = list(runs) or [None]  # None: no run picked yet
    baseline = c2.selectbox("Baseline", choices, key="cmp_report_baseline",
                            index=min(1, max(0, len(runs) - 1)) if runs else 0)
    c3, c4 = st.columns(2)
    wanted = (tuple(runs), baseline, ctx.profile, id(ctx.analysis))
    if c3.button("Build the report", icon=":material/description:", disabled=not runs, width="stretch"):
        with st.spinner("Building the report: intervals, charts, page thumbnails…"):
            page = report.build_report(ctx.analysis, list(runs), baseline, workspace=ctx.workspace, profile=ctx.profile,
                                       settings=compare_panel.SETTINGS, notes=annotations_panel.notes(ctx), changes=annotations_panel.score_changes(ctx),
                                       changes_summary=str(ctx.corrections or ""), saved=saved_panel.saved_slices(ctx),
                                       trend=trend_panel.report_section(ctx))
        st.session_state["cmp_report"] = (wanted, page.encode("utf-8"))
    built = st.session_state.get("cmp_report")
    if built and built[0] == wanted:
        c4.download_button("Download HTML", built[1], file_name=f"report_{compare_panel.file_part(runs[0])}.html", mime="text/html",
                           icon=":material/download:", on_click="ignore", width="stretch", key="cmp_report_dl")
        st.caption(f"Ready: {len(built[1]) / 1e6:.1f} MB, Plotly's JavaScript included.")
    st.page_link(compare_panel.PRESENT_PAGE, label="Presentation mode: one message per screen", icon=":material/slideshow:")

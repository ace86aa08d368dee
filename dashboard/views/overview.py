"""Overview: leaderboard of all runs, heatmaps and breakdown charts; a click opens the explorer."""

import streamlit as st

from dashboard import charts, ui
from dashboard.links import METRICS, field_label
from dashboard.tables import METRIC_LABELS

HEATMAPS = ("reasoning_type", "evidence_source")
BREAKDOWNS = ("domain", "difficulty", "answer_format", "doc_type", "split", "length", "position")

ctx = ui.context()
an = ctx.analysis
st.title("Overview")
st.caption(f"Profile {ctx.profile} · {len(an.questions)} gold questions · {len(an.runs)} runs")


def show(fig, key: str) -> None:
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=key, width="stretch")
    hit = charts.slice_of(event)
    if hit:
        ui.open_slice(*hit)


def overview() -> None:
    st.subheader("Leaderboard")
    pct = st.column_config.NumberColumn(format="%.2f")
    st.dataframe(an.leaderboard(), hide_index=True, width="stretch", column_config={
        "Accuracy (%)": pct, "Token F1 (%)": pct, "ANLS (%)": pct,
        "Signature": st.column_config.TextColumn(width="large"),
        "Source": st.column_config.TextColumn(help="recomputed from predictions, or official per-question scores as loaded"),
    })

    metric = st.segmented_control("Metric", METRICS, default="accuracy", format_func=METRIC_LABELS.get, key="ov_metric") or "accuracy"
    runs = an.run_names
    st.caption("Click a cell or a bar to open those questions in the question explorer.")
    for name in HEATMAPS:
        show(charts.heatmap(an.breakdown(name), name, metric, runs), f"ov_heat_{name}")

    st.subheader("Breakdowns")
    # Only the open tab's chart is built and sent (a tab switch reruns): building and drawing all
    # seven bar charts took most of every overview rerun (bench/bench_dashboard.py).
    tabs = st.tabs([field_label(n) for n in BREAKDOWNS], key="ov_tab", on_change="rerun")
    for tab, name in zip(tabs, BREAKDOWNS):
        with tab:
            if tab.open is not False:
                show(charts.bars(an.breakdown(name), name, metric, runs), f"ov_bar_{name}")

    with st.expander("Open a slice without the mouse", icon=":material/keyboard:"):
        c1, c2, c3 = st.columns(3)
        field_name = c1.selectbox("Breakdown", HEATMAPS + BREAKDOWNS, format_func=field_label, key="ov_pick_field")
        label = c2.selectbox("Value", sorted(an.breakdown(field_name)["label"].unique()), key="ov_pick_label")
        run = c3.selectbox("Run", [None, *runs], format_func=lambda r: "every chosen run" if r is None else r, key="ov_pick_run")
        if st.button("Show these questions", icon=":material/arrow_forward:"):
            ui.open_slice(run, field_name, label)


if an.questions.empty:
    st.info("No gold questions loaded. Open a benchmark folder or upload gold files in the sidebar's Data panel; "
            "the Data page lists what was found and what went wrong.")
elif not an.runs:
    st.info("No runs loaded. Put prediction files in the benchmark's runs/ folder (or score files in results/), "
            "or upload them in the sidebar's Data panel.")
else:
    overview()

"""Streamlit pieces of checkpoint trends: the Trends page (views/trends.py) -- series, metric and slice
pickers, the alarms on real, lasting drops, one slice's chart and every slice's trend -- the Data page's
checkpoint steps (shown, editable, kept in the URL), and the trend's slide and report section when a
series is open (the view names one: `tr_series`)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.core.samples import campaign_offer
from dashboard.shell import viewstate
from dashboard.shell.context import Context
from dashboard.trends import charts
from dashboard.trends import frames as F
from dashboard.weak import saved_panel
from scoring.registry import METRIC_LABELS, METRICS
from scoring.trends import MIN_AFTER, OVERALL, TrendSearch

DATA_PAGE = "views/data.py"


def _series_label(name: str, members: list) -> str:
    return f"{name} ({len(members)} checkpoints, steps {members[0].step}–{members[-1].step})"


def no_series(ctx: Context) -> None:
    """The empty state: what makes a series, where to set steps, and the campaign sample when it can open."""
    st.info("No series of checkpoints: no two scored runs state a training step. A run's step is read from its "
            "name (checkpoint-1200, ckpt-0520, step_3000, global_step3000), from lmms-eval's model arguments or "
            "VLMEvalKit's model folder, or from a steps.csv (columns run, step, series) in the benchmark folder; "
            "the Data page shows each run's step and lets you set it.", icon=":material/timeline:")
    st.page_link(DATA_PAGE, label="Set checkpoint steps on the Data page", icon=":material/dataset:")
    if offer := campaign_offer(F.TRENDS, viewstate.view().data):
        st.markdown(offer)


def pick_series(ctx: Context, all_series: dict, state: dict, key: str) -> str:
    names = list(all_series)
    wanted = state.get("tr_series")
    viewstate.seed(key, wanted if wanted in names else names[0])
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    return str(st.selectbox("Series", names, key=key, format_func=lambda n: _series_label(n, all_series[n]),
                            help="Runs of one training run, ordered by step (the Data page sets steps by hand)."))


def settings() -> F.Settings:
    with st.expander("Thresholds and false-discovery control"):
        c1, c2, c3 = st.columns(3)
        fdr = c1.number_input("False-discovery rate q", min_value=0.001, max_value=0.5, value=0.05, step=0.01,
                              format="%.3f", key="tr_fdr")
        min_q = c2.number_input("Min questions per slice (0: max(30, 0.5 %))", min_value=0, value=0, step=10, key="tr_min_q")
        min_d = c3.number_input("Min documents per slice", min_value=1, value=20, step=5, key="tr_min_d")
    return F.Settings(float(fdr), int(min_q), int(min_d))


def page(ctx: Context) -> None:
    """The Trends page."""
    an, ws = ctx.analysis, ctx.workspace
    view = viewstate.view()
    state = view.trend
    all_series = F.series(an, ws, view.steps)
    if not all_series:
        no_series(ctx)
        return
    c1, c2 = st.columns([3, 1])
    with c1:
        name = pick_series(ctx, all_series, state, "tr_series")
    viewstate.seed("tr_metric", state.get("tr_metric") if state.get("tr_metric") in METRICS else "accuracy")
    metric = str(c2.selectbox("Metric", list(METRICS), format_func=METRIC_LABELS.__getitem__, key="tr_metric"))
    chosen = settings()
    members = all_series[name]
    runs, steps = [c.run for c in members], [int(c.step or 0) for c in members]
    questions = saved_panel.questions_with_fields(ctx, runs)
    with st.spinner("Computing every slice's trend and testing for lasting drops…"):
        found = F.trend_search(an, runs, steps, metric, questions, chosen)
    wanted_slice = state.get("tr_slice", "")
    state.clear()
    state.update({"tr_series": name, "tr_metric": "" if metric == "accuracy" else metric, "tr_slice": wanted_slice})
    st.caption(md_escape(found.summary()))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Checkpoints", len(runs))
    m2.metric("Slices tested", f"{found.slices_tested:,}", help=f"{found.tests:,} tests: slices × candidate checkpoints")
    m3.metric("Lasting drops", len(found.alarms), help="kept after folding the alarms another one explains")
    m4.metric("Folded under them", len(found.folded))
    alarms(found, name, metric, ctx)
    chart(found, name, metric, state)
    every_slice(found, metric)
    with st.expander("How an alarm is decided", icon=":material/help:"):
        st.markdown(F.RULE + f" A change needs {MIN_AFTER} checkpoints from it on.")


def alarms(found: TrendSearch, series_name: str, metric: str, ctx: Context) -> None:
    st.subheader("Lasting drops")
    if found.candidates == 0:
        st.info(f"Not enough evidence: a lasting drop needs at least {1 + MIN_AFTER} checkpoints (one before the change "
                f"and {MIN_AFTER} from it on); this series has {len(found.steps)}.")
        return
    if not found.alarms:
        st.info(md_escape(f"Not enough evidence of a lasting drop: {found.summary()}."))
        if found.tests == 0 and (offer := campaign_offer(F.TRENDS, viewstate.view().data)):
            st.markdown(offer)
        return
    for a in found.alarms[:3]:
        st.error(md_escape(F.alarm_text(a, found, metric)), icon=":material/trending_down:")
    table = F.alarms_table(found, series_name, saved_panel.by_name(ctx), viewstate.view())
    st.dataframe(table, hide_index=True, key="tr_alarms", column_config={
        "Before (%)": st.column_config.NumberColumn(format="%.1f"),
        "After (%)": st.column_config.NumberColumn(format="%.1f"),
        "Drop (pp)": st.column_config.NumberColumn(format="%+.1f"),
        "p": st.column_config.NumberColumn(format="%.2g", help="the largest of the three tests' p (by document)"),
        "q": st.column_config.NumberColumn(format="%.2g", help="Benjamini–Hochberg across slices × candidate checkpoints"),
        "Lost questions": st.column_config.NumberColumn(help="right at the checkpoint before the change, wrong at it "
                                                             "and at the latest (the profile's right answer)"),
        "Open in matrix": st.column_config.LinkColumn(display_text="questions ↗"),
    }, column_order=[c for c in F.ALARM_COLUMNS if c != "Drop (pp)"])
    if found.folded:
        with st.expander(f"Folded alarms ({len(found.folded)}): what explains each"):
            st.dataframe(F.folded_table(found), hide_index=True, key="tr_folded", column_config={
                "Drop (pp)": st.column_config.NumberColumn(format="%+.1f"),
                "q": st.column_config.NumberColumn(format="%.2g")})


def chart(found: TrendSearch, series_name: str, metric: str, state: dict) -> None:
    st.subheader("One slice per checkpoint")
    names = F.slice_names(found, metric)
    viewstate.seed("tr_slice", state.get("tr_slice") if state.get("tr_slice") in names else names[0])
    if st.session_state.get("tr_slice") not in names:
        st.session_state["tr_slice"] = names[0]
    picked = str(st.selectbox("Slice", names, key="tr_slice", help="the alarms' slices first, then the benchmark "
                              "(overall) and every slice of one or two conditions"))
    if picked != names[0]:
        state["tr_slice"] = picked
    else:
        state.pop("tr_slice", None)
    t = found.trend(metric, picked)
    if t is None:
        return
    shown = [a for a in found.alarms if a.slice == picked]
    st.plotly_chart(charts.trend_chart(t, found.steps, found.runs, METRIC_LABELS[metric], shown, found.unit),
                    key="tr_chart", config={"displayModeBar": False})
    if not t.tested:
        st.caption(md_escape(f"{t.slice}: {t.documents} {found.unit}s — too few to test for a lasting drop "
                             f"({found.min_documents} needed); the intervals are shown for what they are worth."))
    with st.expander("The numbers"):
        st.dataframe(F.trend_table(t, found.steps, found.runs), hide_index=True, key="tr_numbers",
                     column_config={c: st.column_config.NumberColumn(format="%.1f")
                                    for c in ("Score (%)", "Low (%)", "High (%)", "Smoothed (%)")})


def every_slice(found: TrendSearch, metric: str) -> None:
    st.subheader("Every slice's trend")
    table = F.slices_table(found, metric)
    st.dataframe(table, hide_index=True, key="tr_slices", column_config={
        "First (%)": st.column_config.NumberColumn(format="%.1f"),
        "Latest (%)": st.column_config.NumberColumn(format="%.1f"),
        "Noise ±(pp)": st.column_config.NumberColumn(format="%.1f", help="1.96 × the median move between "
                                                                         "neighbouring checkpoints / (0.6745 √2)"),
        "Trend (%)": st.column_config.LineChartColumn(y_min=0, y_max=100, width="medium"),
    })


# ----------------------------------------------------------------------------- the Data page


def steps_section(ctx: Context) -> None:
    """The Data page's checkpoint steps: every scored run's step and series, where each came from, editable
    (kept in the URL); the steps.csv's problems."""
    an, ws = ctx.analysis, ctx.workspace
    view = viewstate.view()
    st.subheader("Checkpoint steps")
    runs = F.scored_runs(an)
    if not runs:
        st.info("No scored run: steps order the runs of a training run once there are some.")
        return
    found = F.steps_file(ws.discovery.benchmark)
    st.caption("A run's step and series come from, first to last: a step set here (kept in the link), the "
               "benchmark's steps.csv (columns run, step, series), what a harness wrote of the run (lmms-eval's model "
               "arguments, VLMEvalKit's model folder), its name (checkpoint-1200, ckpt-0520, step_3000, global_step3000). "
               "Empty a step to take a run out of every series.")
    if found is not None:
        st.caption(md_escape(f"Read {ws.label(found.path)}: {len(found.rows)} run(s)."))
        for p in found.problems[:20]:
            st.warning(md_escape(f"{ws.label(p.file)}{':' + str(p.line) if p.line else ''} — {p.message}"))
    table = F.steps_table(F.checkpoints_of(ws, runs, view.steps))
    edited = st.data_editor(table, hide_index=True, key="data_steps", disabled=["Run", "From"], placeholder="—", column_config={
        "Step": st.column_config.NumberColumn(min_value=0, step=1, format="%d"),
        "Series": st.column_config.TextColumn(max_chars=80)})
    changed = F.edited_steps(table, edited, view.steps)
    if changed != list(view.steps) and not _same(changed, view.steps):
        view.steps = changed
        viewstate.set_view(view)
        st.rerun()
    if view.steps and st.button("Forget the steps set here", key="data_steps_reset", icon=":material/restart_alt:"):
        view.steps = []
        viewstate.set_view(view)
        st.session_state.pop("data_steps", None)
        st.rerun()
    series = F.series(an, ws, view.steps)
    if series:
        st.caption(md_escape("Series: " + "; ".join(_series_label(n, m) for n, m in series.items())))
        st.page_link("views/trends.py", label="Open the trends", icon=":material/timeline:")


def _same(a: list[str], b: list[str]) -> bool:
    return F.overrides(a) == F.overrides(b)


# ----------------------------------------------------------------------------- the slide and the report


def open_series(ctx: Context) -> tuple[str, list] | None:
    """The series the view names (`tr_series`), when the loaded runs hold it: (name, its checkpoints)."""
    view = viewstate.view()
    name = view.trend.get("tr_series")
    if not name:
        return None
    found = F.series(ctx.analysis, ctx.workspace, view.steps)
    return (name, found[name]) if name in found else None


def search_of_open(ctx: Context) -> tuple[str, TrendSearch, str] | None:
    """(series, its trend search, metric) of the open series, or None."""
    opened = open_series(ctx)
    if opened is None:
        return None
    name, members = opened
    metric = viewstate.view().trend.get("tr_metric") or "accuracy"
    runs = [c.run for c in members]
    found = F.trend_search(ctx.analysis, runs, [int(c.step or 0) for c in members], metric,
                           saved_panel.questions_with_fields(ctx, runs))
    return name, found, metric


def slide(ctx: Context) -> tuple[str, Any] | None:
    """The presentation's trend slide of the open series: its message (Markdown, escaped) and chart."""
    got = search_of_open(ctx)
    if got is None:
        return None
    name, found, metric = got
    label = METRIC_LABELS.get(metric, metric)
    if found.alarms:
        a = found.alarms[0]
        t = found.trend(metric, a.slice)
        message = (f"Series **{md_escape(name)}**: **{md_escape(a.slice)}** dropped **{abs(F.pct(a.gap)):.1f} points** "
                   f"of {label} from step {a.step} on and stayed down (95 % interval by {found.unit} {F.pct(a.ci_low):+.1f} "
                   f"to {F.pct(a.ci_high):+.1f} pp, q {a.q:.2g}; {len(found.alarms)} lasting drop(s) in "
                   f"{found.slices_tested} slices tested).")
    else:
        t = found.trend(metric, OVERALL)
        message = (f"Series **{md_escape(name)}**: no lasting drop beyond chance across {found.slices_tested} slices "
                   f"× {found.candidates} checkpoints (not enough evidence of one).")
    fig = charts.trend_chart(t, found.steps, found.runs, label, found.alarms[:1] if found.alarms else (), found.unit) \
        if t is not None else None
    return message, fig


def report_section(ctx: Context) -> dict | None:
    """The stakeholder report's trend section of the open series (dashboard/report's template trend.html)."""
    got = search_of_open(ctx)
    if got is None:
        return None
    name, found, metric = got
    return F.report_section(name, found, metric)

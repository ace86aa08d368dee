"""Plotly figures for the overview. No streamlit here.

Every clickable mark carries `customdata = [run, field, label]`, so a selection event names the
slice it stands for (`slice_of`). Heatmaps are drawn as scatters of square markers, because
heatmap traces send no selection events to Streamlit.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.core.analysis import LENGTH_BUCKETS, LONGEST, POSITIONS, UNKNOWN
from dashboard.core.escape import plotly_text
from dashboard.core.links import field_label
from scoring.registry import METRIC_LABELS

COLORSCALE = [[0.0, "#DCE6F2"], [0.5, "#6B9AD6"], [1.0, "#0B3D91"]]  # the lightest cell still shows on white
FONT = dict(size=13)
# Qualitative colours that read on white and on Streamlit's dark background alike.
RUN_COLOURS = ("#3B82F6", "#F59E0B", "#10B981", "#EF4444", "#8B5CF6", "#06B6D4", "#EC4899", "#84CC16",
               "#F97316", "#6366F1", "#14B8A6", "#A855F7", "#EAB308")
CELL = 46  # px per heatmap row


def metric_axis(metric: str) -> str:
    return f"{METRIC_LABELS[metric]} (%)"


FEW = 5  # cells over fewer questions are drawn faded: their score says little
FADED = [[0.0, "#EEF1F5"], [1.0, "#9AA8B8"]]  # grey for those cells, readable with dark text on both themes
LOADED_MARK = " *"  # after the name of a run whose scores were loaded (profile unknown)
N_COLUMNS = 8  # up to this many columns a cell shows "87.5 / n=8"; beyond, "88" (the rest on hover): an 800 px window
DARK = 55  # from this value on, a cell is dark enough for white text


ORDERS = {"length": [label for _, label in LENGTH_BUCKETS] + [LONGEST, UNKNOWN], "position": [*POSITIONS, UNKNOWN],
          "difficulty": ["easy", "medium", "hard", "very_hard", UNKNOWN]}


def label_order(field_name: str, labels) -> list[str]:
    """Labels in their natural order: document length and evidence position as ranges, difficulty from
    easy to very hard; anything else (and labels outside those lists) alphabetically, after them."""
    known = ORDERS.get(field_name, [])
    return [v for v in known if v in set(labels)] + sorted(v for v in set(labels) if v not in known)


def run_label(run: str, loaded: frozenset[str] | set[str] = frozenset()) -> str:
    """A run's axis or legend label, marked when its scores were loaded rather than recomputed."""
    return plotly_text(run) + (LOADED_MARK if run in loaded else "")


def heatmap(frame: pd.DataFrame, field_name: str, metric: str, runs: list[str],
            loaded: frozenset[str] | set[str] = frozenset()) -> go.Figure:
    """Runs (rows, in the order given: the leaderboard's) × labels of field_name (columns), coloured by
    the metric in %, with the number of questions (n) in the cell when there is room and always on
    hover; cells over fewer than FEW questions are grey. `frame` is `tables.breakdown(...)` output:
    run, label, count and the metric columns. Runs in `loaded` are marked with LOADED_MARK.

    Drawn as heatmap traces, whose cells follow the plot's width and never overlap, under a scatter of
    invisible points (trace 0), one per cell, that carries the hover text and the click: heatmap traces
    send no selection events. With `hoverdistance=-1` a click anywhere picks the nearest cell."""
    data = frame[frame["run"].isin(runs)]
    values = data[metric] * 100
    labels = label_order(field_name, data["label"].unique())
    cells = {(r, lab): (v, n) for r, lab, v, n in zip(data["run"], data["label"], values, data["count"])}
    xs, ys = [plotly_text(v) for v in labels], [run_label(r, loaded) for r in runs]
    with_n = len(labels) <= N_COLUMNS

    def grid(keep, what, empty=None):
        return [[what(*cells[(r, lab)]) if (r, lab) in cells and keep(*cells[(r, lab)]) else empty
                 for lab in labels] for r in runs]

    def text(v: float, n: int) -> str:
        return f"{v:.1f}<br>n={n}" if with_n else f"{v:.0f}"

    def layer(keep, colorscale, colour: str) -> go.Heatmap:
        return go.Heatmap(
            x=xs, y=ys, z=grid(keep, lambda v, n: v), text=grid(keep, text, ""), texttemplate="%{text}",
            textfont=dict(size=11, color=colour),
            colorscale=colorscale, zmin=0, zmax=100, xgap=3, ygap=3, showscale=False, hoverinfo="skip")

    fig = go.Figure([
        go.Scatter(
            x=data["label"].map(plotly_text), y=data["run"].map(lambda r: run_label(r, loaded)), mode="markers",
            marker=dict(symbol="square", size=20, color=values, cmin=0, cmax=100, colorscale=COLORSCALE, opacity=0),
            selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
            customdata=[[r, field_name, lab, n, " (fewer than 5: read with care)" if n < FEW else ""]
                        for r, lab, n in zip(data["run"], data["label"], data["count"])],
            hovertemplate=(f"Run: %{{y}}<br>{field_label(field_name)}: %{{x}}<br>"
                           f"{metric_axis(metric)}: %{{marker.color:.1f}}<br>Questions: %{{customdata[3]}}%{{customdata[4]}}"
                           "<extra></extra>"),
        ),
        layer(lambda v, n: n >= FEW and v >= DARK, COLORSCALE, "#FFFFFF"),
        layer(lambda v, n: n >= FEW and v < DARK, COLORSCALE, "#0B1F33"),
        layer(lambda v, n: n < FEW, FADED, "#0B1F33"),
    ])
    title = f"{metric_axis(metric)} by run and {field_label(field_name).lower()}"
    note = "n = questions per cell" if with_n else "n on hover"
    note += f"; grey: fewer than {FEW} questions"
    if loaded & set(runs):
        note += f";{LOADED_MARK} scores loaded (profile unknown)"
    fig.update_layout(
        title=dict(text=title, subtitle=dict(text=note)), font=FONT, height=170 + CELL * max(1, len(runs)),
        margin=dict(l=10, r=10, t=80, b=10), clickmode="event+select", dragmode=False, showlegend=False,
        hovermode="closest", hoverdistance=-1,
        xaxis=dict(title=dict(text=field_label(field_name)), categoryorder="array", categoryarray=xs, showgrid=False,
                   automargin=True, zeroline=False),
        yaxis=dict(title=dict(text="Run"), categoryorder="array", categoryarray=list(reversed(ys)), showgrid=False,
                   automargin=True, zeroline=False),
    )
    return fig


BAR_HEIGHT = 420  # px of a bar chart, plus LEGEND_ROW per two runs for the legend under it
LEGEND_ROW = 26


def bars(frame: pd.DataFrame, field_name: str, metric: str, runs: list[str],
         loaded: frozenset[str] | set[str] = frozenset()) -> go.Figure:
    """Grouped bars: one group per label of field_name, one bar per run (in the order given), height =
    metric in %. Runs in `loaded` are labelled "[loaded]"."""
    fig = go.Figure()
    for k, run in enumerate(runs):
        part = frame[frame["run"] == run]
        fig.add_trace(go.Bar(
            name=run_label(run, loaded), x=part["label"].map(plotly_text), y=part[metric] * 100, marker_color=RUN_COLOURS[k % len(RUN_COLOURS)],
            customdata=[[run, field_name, lab, n] for lab, n in zip(part["label"], part["count"])],
            hovertemplate=(f"Run: {run_label(run, loaded)}<br>{field_label(field_name)}: %{{x}}<br>{metric_axis(metric)}: %{{y:.1f}}"
                           "<br>Questions: %{customdata[3]}<extra></extra>"),
        ))
    fig.update_layout(
        title=dict(text=f"{metric_axis(metric)} by {field_label(field_name).lower()}"), font=FONT, barmode="group",
        height=BAR_HEIGHT + LEGEND_ROW * max(1, len(runs)) // 2, margin=dict(l=10, r=10, t=60, b=10),
        clickmode="event+select", dragmode=False,
        # tick labels (turned when they crowd) and the axis titles take the margin they need, never cut
        xaxis=dict(title=dict(text=field_label(field_name)), categoryorder="array", automargin=True,
                   categoryarray=[plotly_text(v) for v in label_order(field_name, frame["label"].unique())]),
        yaxis=dict(title=dict(text=metric_axis(metric)), range=[0, 100], ticksuffix="", automargin=True),
        # the legend below the plot, across the figure's width: beside it, it took a third of an 800 px
        # window from the bars and their labels
        legend=dict(title=dict(text="Run"), orientation="h", yref="container", yanchor="bottom", y=0,
                    x=0, xanchor="left"),
    )
    return fig


def slice_of(event: Any) -> tuple[str, str, str] | None:
    """(run, field, label) of the first selected point of a `st.plotly_chart` selection event."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points or []:
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, (list, tuple)) and len(data) >= 3:
            return str(data[0]), str(data[1]), str(data[2])
    return None


# The answer-location segments (dashboard.evidence.grounding's keys), coloured by what they say about the answer.
LOCATION_COLOURS = {"evidence_page": "#10B981", "other_page": "#F59E0B", "not_in_document": "#EF4444",
                    "no_document": "#64748B", "refused": "#8B5CF6", "extraction_failed": "#92400E",
                    "not_searched": "#CBD5E1", "computed": "#0EA5E9"}
LOCATION_FIELD = "answer_location"  # the field a location segment opens (links.View.with_slice)
MIN_TEXT_SHARE = 6  # % of a bar under which a segment shows no count (it would not fit at 800 px)


def locations(frame: pd.DataFrame, runs: list[str], loaded: frozenset[str] | set[str] = frozenset()) -> go.Figure:
    """One stacked horizontal bar per run (rows in the order given: the leaderboard's): the share of
    its answers per answer location, in %, the count written in each segment wide enough for it and
    everything on hover. `frame` is dashboard.evidence.grounding.location_breakdown output (run, label,
    count, location, share). A segment carries customdata [run, LOCATION_FIELD, location key]."""
    data = frame[frame["run"].isin(runs)]
    ys = [run_label(r, loaded) for r in runs]
    fig = go.Figure()
    for key in dict.fromkeys(data["location"]):
        part = data[data["location"] == key]
        label = plotly_text(str(part["label"].iloc[0]))
        pct = part["share"] * 100
        fig.add_trace(go.Bar(
            name=label, orientation="h", y=part["run"].map(lambda r: run_label(r, loaded)), x=pct,
            marker_color=LOCATION_COLOURS.get(key, "#94A3B8"),
            text=[str(n) if p >= MIN_TEXT_SHARE else "" for n, p in zip(part["count"], pct)],
            textposition="inside", insidetextanchor="middle", textfont=dict(size=12),
            customdata=[[r, LOCATION_FIELD, key, n] for r, n in zip(part["run"], part["count"])],
            hovertemplate=(f"Run: %{{y}}<br>Answer {label}<br>Questions: %{{customdata[3]}} "
                           "(%{x:.1f} % of the run's answers)<extra></extra>"),
        ))
    note = "% of the run's answers; numbers: questions"
    if loaded & set(runs):
        note += f"; {LOADED_MARK.strip()}: scores loaded"
    fig.update_layout(
        title=dict(text="Where each run's answer appears in the documents", subtitle=dict(text=note)), font=FONT,
        barmode="stack", height=190 + 40 * max(1, len(runs)), margin=dict(l=10, r=10, t=80, b=10),
        clickmode="event+select", dragmode=False, hovermode="closest",
        xaxis=dict(title=dict(text="Share of the run's answers (%)"), range=[0, 100], ticksuffix=""),
        yaxis=dict(title=dict(text="Run"), categoryorder="array", categoryarray=list(reversed(ys)), automargin=True),
        legend=dict(title=dict(text="Answer"), orientation="h", yanchor="top", y=-0.25, x=0, xanchor="left",
                    traceorder="normal"),
    )
    return fig

"""Plotly figures for the overview. No streamlit here.

Every clickable mark carries `customdata = [run, field, label]`, so a selection event names the
slice it stands for (`slice_of`). Heatmaps are drawn as scatters of square markers, because
heatmap traces send no selection events to Streamlit.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .links import field_label
from .tables import METRIC_LABELS, plotly_text

COLORSCALE = [[0.0, "#DCE6F2"], [0.5, "#6B9AD6"], [1.0, "#0B3D91"]]  # the lightest cell still shows on white
FONT = dict(size=13)
# Qualitative colours that read on white and on Streamlit's dark background alike.
RUN_COLOURS = ("#3B82F6", "#F59E0B", "#10B981", "#EF4444", "#8B5CF6", "#06B6D4", "#EC4899", "#84CC16",
               "#F97316", "#6366F1", "#14B8A6", "#A855F7", "#EAB308")
CELL = 46  # px per heatmap row


def metric_axis(metric: str) -> str:
    return f"{METRIC_LABELS[metric]} (%)"


def _text_colour(value: float) -> str:
    return "#FFFFFF" if value >= 55 else "#0B1F33"


FEW = 5  # cells over fewer questions are drawn faded: their score says little
PLOT_PX = 440  # the narrowest plot area the cells must fit side by side in (an 800 px window)


def run_label(run: str, loaded: frozenset[str] | set[str] = frozenset()) -> str:
    """A run's axis or legend label, marked when its scores were loaded rather than recomputed."""
    return plotly_text(run) + (" [loaded]" if run in loaded else "")


def cell_size(columns: int) -> int:
    """Side of a heatmap square in px: as large as CELL allows, small enough that `columns` squares
    never overlap in a PLOT_PX-wide plot (overlapping squares made clicks ambiguous)."""
    return int(max(14, min(CELL - 6, PLOT_PX / max(1, columns) - 6)))


def _cell_text(value: float, n: int, size: int) -> str:
    if size >= 34:  # room for a second line: the number of questions the cell covers
        return f"{value:.1f}<br>n={n}"
    return f"{value:.1f}" if size >= 28 else f"{value:.0f}"


def heatmap(frame: pd.DataFrame, field_name: str, metric: str, runs: list[str],
            loaded: frozenset[str] | set[str] = frozenset()) -> go.Figure:
    """Runs (rows, in the order given: the leaderboard's) × labels of field_name (columns), one square
    per cell, coloured by the metric in %, with its number of questions (n) in the cell when there is
    room and always on hover; cells over fewer than FEW questions are faded. `frame` is
    `tables.breakdown(...)` output: run, label, count and the metric columns. Runs in `loaded` are
    labelled "[loaded]" (scores read from files, profile unknown)."""
    data = frame[frame["run"].isin(runs)]
    values = data[metric] * 100
    labels = sorted(data["label"].unique())
    size = cell_size(len(labels))
    few = (data["count"] < FEW).tolist()
    ylabels = data["run"].map(lambda r: run_label(r, loaded))
    fig = go.Figure(go.Scatter(
        x=data["label"].map(plotly_text), y=ylabels, mode="markers+text",
        marker=dict(symbol="square", size=size, color=values, colorscale=COLORSCALE, cmin=0, cmax=100,
                    opacity=[0.35 if f else 1.0 for f in few], line=dict(width=0),
                    colorbar=dict(title=dict(text=metric_axis(metric)), thickness=12)),
        text=[_cell_text(v, n, size) for v, n in zip(values, data["count"])],
        textfont=dict(color=["#0B1F33" if f else _text_colour(v) for v, f in zip(values, few)],
                      size=11 if size >= 28 else 9),
        customdata=[[r, field_name, lab, n, " (fewer than 5: read with care)" if n < FEW else ""]
                    for r, lab, n in zip(data["run"], data["label"], data["count"])],
        hovertemplate=(f"Run: %{{y}}<br>{field_label(field_name)}: %{{x}}<br>"
                       f"{metric_axis(metric)}: %{{marker.color:.1f}}<br>Questions: %{{customdata[3]}}%{{customdata[4]}}"
                       "<extra></extra>"),
    ))
    title = f"{metric_axis(metric)} by run and {field_label(field_name).lower()}"
    fig.update_layout(
        title=dict(text=title, subtitle=dict(text=f"n = questions per cell; faded: fewer than {FEW}")),
        font=FONT, height=170 + CELL * max(1, len(runs)),
        margin=dict(l=10, r=10, t=80, b=10), clickmode="event+select", dragmode=False, showlegend=False,
        xaxis=dict(title=dict(text=field_label(field_name)), categoryorder="array",
                   categoryarray=[plotly_text(v) for v in labels], showgrid=False, automargin=True),
        yaxis=dict(title=dict(text="Run"), categoryorder="array", automargin=True,
                   categoryarray=[run_label(r, loaded) for r in reversed(runs)], showgrid=False),
    )
    return fig


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
        height=420, margin=dict(l=10, r=10, t=60, b=10), clickmode="event+select", dragmode=False,
        xaxis=dict(title=dict(text=field_label(field_name)), categoryorder="category ascending"),
        yaxis=dict(title=dict(text=metric_axis(metric)), range=[0, 100], ticksuffix=""),
        # a vertical legend right of the plot never meets the title, however narrow the window
        legend=dict(title=dict(text="Run"), orientation="v", yanchor="top", y=1.0, x=1.01, xanchor="left"),
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

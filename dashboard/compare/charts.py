"""Plotly figures of run comparison (dashboard/compare/frames.py frames). No streamlit here.

Deltas and gaps are drawn in percentage points, scores in percent, every estimate with its 95 %
interval from resampling documents as an error bar -- none where there are fewer than 20 documents
(too few to tell: hollow or pale marks, the hover says so and gives the smallest detectable gap). Labels go through `tables.plotly_text` (user data never becomes markup).
Clickable marks carry `customdata = [field, label, ...]`.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.compare.frames import FLIPS, METRIC_LABELS, MIN_DOCUMENTS, OVERALL_FIELD
from dashboard.core.escape import plotly_text
from dashboard.core.links import slice_label

FONT = dict(size=13)
ROW = 24  # px per row of a horizontal chart
A_COLOUR, B_COLOUR, NEUTRAL = "#2563EB", "#D97706", "#6B7280"
FLIP_COLOURS = {"both right": "#10B981", "only A": "#2563EB", "only B": "#D97706", "both wrong": "#9CA3AF"}
RUN_COLOURS = ("#3B82F6", "#F59E0B", "#10B981", "#EF4444", "#8B5CF6", "#06B6D4", "#EC4899", "#84CC16",
               "#F97316", "#6366F1", "#14B8A6", "#A855F7", "#EAB308")


def slice_name(field_name: str, label: str, n: int | None = None) -> str:
    text = "All questions" if field_name == OVERALL_FIELD else slice_label(field_name, label)
    return plotly_text(text + (f" ({n})" if n is not None else ""))


def _layout(fig: go.Figure, title: str, height: int, **kw) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), font=FONT, height=height,
                      margin=dict(l=10, r=20, t=90, b=50), dragmode=False, **kw)
    return fig


def delta_chart(table: pd.DataFrame, metric: str, a: str, b: str, *, title_size: int | None = None,
                include_overall: bool = True) -> go.Figure:
    """Per-slice delta A - B of `metric` in percentage points with the 95 % interval by documents,
    sorted; the overall delta as a dashed line. Slices under 20 documents are hollow markers with no
    error bar (too few documents to tell)."""
    data = table if include_overall else table[table["field"] != OVERALL_FIELD]
    data = data.sort_values(f"{metric}_delta", kind="stable")
    d, lo, hi = (data[f"{metric}_{k}"] * 100 for k in ("delta", "low", "high"))
    names = [slice_name(f, lab, n) for f, lab, n in zip(data["field"], data["label"], data["questions"])]
    few = data["too_few"].astype(bool)
    colours = [A_COLOUR if v > 0 else B_COLOUR if v < 0 else NEUTRAL for v in d]
    q = data[f"{metric}_q"] if f"{metric}_q" in data.columns else data["q"]

    def said(too_few: bool, lo_: float, hi_: float, p: float, docs: int, gap: float) -> str:
        if too_few:
            gap_words = "" if pd.isna(gap) or gap == float("inf") else f"; smallest detectable gap ±{100 * gap:.1f} pp"
            return f"too few documents to tell ({docs} documents{gap_words})"
        return f"95 % interval {lo_:+.1f} to {hi_:+.1f} pp over {docs} documents<br>q by document (Benjamini-Hochberg) {p:.3g}"

    fig = go.Figure(go.Scatter(
        x=d, y=names, mode="markers",
        marker=dict(size=10, color=["rgba(0,0,0,0)" if s else c for s, c in zip(few, colours)],
                    line=dict(color=colours, width=2), symbol="diamond"),
        error_x=dict(type="data", symmetric=False, array=(hi - d).clip(lower=0), arrayminus=(d - lo).clip(lower=0),
                     color="#94A3B8", thickness=2, width=4),
        customdata=[[f, lab, n, said(s, lo_, hi_, p, docs, gap)] for f, lab, n, s, lo_, hi_, p, docs, gap in
                    zip(data["field"], data["label"], data["questions"], few, lo, hi, q, data["documents"],
                        data[f"{metric}_detectable"])],
        hovertemplate="%{y}<br>Δ %{x:+.1f} pp<br>%{customdata[3]}<extra></extra>",
    ))
    fig.add_vline(x=0, line=dict(color="#475569", width=1))
    overall = table[table["field"] == OVERALL_FIELD]
    if len(overall):
        fig.add_vline(x=float(overall[f"{metric}_delta"].iloc[0]) * 100, line=dict(color=A_COLOUR, width=1, dash="dash"),
                      annotation_text="overall", annotation_position="bottom right")
    title = (f"Δ {METRIC_LABELS[metric]} by slice: {plotly_text(a)} − {plotly_text(b)}"
             "<br><sup>percentage points, 95 % intervals from resampling documents; right of 0: A better;<br>"
             f"hollow, no interval: fewer than {MIN_DOCUMENTS} documents (too few to tell)</sup>")
    _layout(fig, title, 140 + ROW * max(3, len(data)), showlegend=False, clickmode="event+select")
    fig.update_xaxes(title=dict(text=f"Δ {METRIC_LABELS[metric]} (percentage points)"), zeroline=False, ticksuffix="")
    # every slice keeps its label (Plotly drops every other category label when rows are tight)
    fig.update_yaxes(automargin=True, categoryorder="array", categoryarray=names, tickmode="array", tickvals=names)
    if title_size:
        fig.update_layout(title_font=dict(size=title_size))
    return fig


def runs_chart(intervals: pd.DataFrame, metric: str) -> go.Figure:
    """Each run's score in percent with its 95 % interval from resampling documents, best first
    (no interval for a run scored on fewer than 20 documents)."""
    data = intervals.sort_values(metric, ascending=False, kind="stable")
    m, lo, hi = data[metric] * 100, data[f"{metric}_low"] * 100, data[f"{metric}_high"] * 100
    fig = go.Figure(go.Bar(
        x=[plotly_text(r) for r in data["run"]], y=m, marker_color=[RUN_COLOURS[k % len(RUN_COLOURS)] for k in range(len(data))],
        error_y=dict(type="data", symmetric=False, array=(hi - m).clip(lower=0), arrayminus=(m - lo).clip(lower=0),
                     color="#334155", thickness=1.5, width=6),
        text=[f"{v:.1f}" for v in m], textposition="inside", insidetextanchor="start",
        hovertemplate="%{x}: %{y:.1f} %<extra></extra>",
    ))
    few = "documents" in data.columns and bool((data["documents"] < MIN_DOCUMENTS).any())
    title = (f"{METRIC_LABELS[metric]} per run (%)<br><sup>95 % intervals from resampling documents"
             + (f"; none under {MIN_DOCUMENTS} documents (too few to tell)" if few else "") + "</sup>")
    _layout(fig, title, 420, showlegend=False)
    fig.update_yaxes(title=dict(text=f"{METRIC_LABELS[metric]} (%)"), range=[0, 100])
    fig.update_xaxes(title=dict(text="Run"))
    return fig


def flips_chart(flips: pd.DataFrame, a: str, b: str, *, top: int | None = None) -> go.Figure:
    """Stacked horizontal bars of the four Accuracy outcomes, overall and per slice (question counts)."""
    data = flips if top is None else flips.head(top)
    data = data.iloc[::-1]
    names = [slice_name(f, lab, n) for f, lab, n in zip(data["field"], data["label"], data["questions"])]
    fig = go.Figure()
    legend = {"both right": "both right", "only A": f"only {plotly_text(a)} right", "only B": f"only {plotly_text(b)} right",
              "both wrong": "both wrong"}
    for flip in FLIPS:
        fig.add_trace(go.Bar(name=legend[flip], x=data[flip], y=names, orientation="h", marker_color=FLIP_COLOURS[flip],
                             customdata=[[f, lab, flip] for f, lab in zip(data["field"], data["label"])],
                             hovertemplate="%{y}<br>" + legend[flip] + ": %{x}<extra></extra>"))
    title = f"Accuracy outcomes<br><sup>{plotly_text(a)} (A) against {plotly_text(b)} (B): questions per outcome</sup>"
    _layout(fig, title, 170 + ROW * max(2, len(data)), barmode="stack", clickmode="event+select",
            legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left", title=None, traceorder="normal"))
    fig.update_layout(margin=dict(l=10, r=20, t=125, b=50))
    fig.update_xaxes(title=dict(text="Questions"))
    fig.update_yaxes(automargin=True, categoryorder="array", categoryarray=names)
    return fig


def picked(event) -> list:
    """customdata of the first selected point of a `st.plotly_chart` selection event, or []."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return []
    for point in points or []:
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, (list, tuple)) and len(data) >= 2:
            return list(data)
    return []

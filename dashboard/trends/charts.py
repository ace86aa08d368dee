"""The Trends page's chart: one slice's score per checkpoint with its interval by document, the smoothed
line and its noise band (for the eye only), and the alarms' change points. No streamlit here. Slice and
run names go through plotly_text (user data never becomes markup)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from dashboard.core.escape import plotly_text
from scoring.trends import Alarm, Trend

POINT = "#2563EB"
BAND = "rgba(148, 163, 184, 0.25)"
SMOOTH = "#64748B"
ALARM = "#DC2626"


def trend_chart(t: Trend, steps: Sequence[int], runs: Sequence[str], metric_label: str,
                alarms: Sequence[Alarm] = (), unit: str = "document") -> go.Figure:
    """Score (%) per checkpoint step: points with their 95 % interval by `unit`, the running median of three
    with a band of ± 1.96 x the neighbour-to-neighbour noise around it, a dashed line at each alarm's first
    checkpoint after the change with the tested drop."""
    x = list(steps)
    y = [100 * v for v in t.score]
    smooth = [100 * v for v in t.smooth]
    half = 196 * t.noise if t.noise == t.noise else 0.0
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x + x[::-1], y=[min(100.0, v + half) for v in smooth] + [max(0.0, v - half) for v in smooth[::-1]],
                             fill="toself", fillcolor=BAND, line=dict(width=0), hoverinfo="skip",
                             name="noise band (± 1.96 × neighbour noise)"))
    fig.add_trace(go.Scatter(x=x, y=smooth, mode="lines", line=dict(color=SMOOTH, width=2, dash="dot"),
                             name="smoothed (running median of 3, display only)", hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="lines+markers", name=f"score with 95 % interval by {unit}",
        line=dict(color=POINT, width=1), marker=dict(size=8, color=POINT),
        error_y=dict(type="data", symmetric=False, array=[100 * (h - s) for h, s in zip(t.high, t.score)],
                     arrayminus=[100 * (s - lo) for s, lo in zip(t.score, t.low)], color="#93C5FD", thickness=1.5),
        customdata=[[plotly_text(r)] for r in runs],
        hovertemplate="step %{x}<br>%{customdata[0]}<br>%{y:.1f} %<extra></extra>"))
    for a in alarms:
        fig.add_vline(x=a.step, line=dict(color=ALARM, width=2, dash="dash"))
        fig.add_annotation(x=a.step, y=1, yref="paper", yanchor="bottom", showarrow=False, font=dict(color=ALARM),
                           text=f"lasting drop {100 * a.gap:+.1f} pp (q {a.q:.2g})")
    fig.update_layout(
        title=dict(text=(f"{plotly_text(metric_label)} of {plotly_text(t.slice)} per checkpoint"
                         f"<br><sup>{t.questions:,} questions in {t.documents:,} {unit}s; intervals and tests by {unit}; "
                         "smoothing for display only</sup>"), x=0, xanchor="left"),
        height=440, margin=dict(l=10, r=20, t=90, b=50), dragmode=False,
        legend=dict(orientation="h", yanchor="top", y=-0.18, x=0))
    fig.update_xaxes(title=dict(text="checkpoint step"))
    fig.update_yaxes(title=dict(text=f"{plotly_text(metric_label)} (%)"))
    return fig

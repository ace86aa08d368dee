"""The Weak slices page's forest plot. No streamlit here. Slice names go through plotly_text (user
data never becomes markup)."""

from __future__ import annotations

import plotly.graph_objects as go

from dashboard.core.escape import plotly_text
from scoring.slices import SliceSearch

ROW = 26  # px per slice
COLOUR = "#DC2626"


def forest(found: SliceSearch, metric_label: str, top: int | None = None) -> go.Figure:
    """Each kept weak slice's gap to the rest of the run (percentage points, negative: worse; in pair
    mode, of the paired difference run − baseline) with its interval by document adjusted for the
    search, the first-ranked on top (`top`: the first ones only); a line at 0. Each point's
    customdata ends with its rank (a click picks the slice: dashboard.compare.charts.picked)."""
    rows = list(reversed(found.weak[:top] if top else found.weak))
    names = [plotly_text(f"#{len(rows) - k} {s.label}") for k, s in enumerate(rows)]
    gap = [s.gap * 100 for s in rows]
    fig = go.Figure(go.Scatter(
        x=gap, y=names, mode="markers", marker=dict(size=10, color=COLOUR, symbol="diamond"),
        error_x=dict(type="data", symmetric=False, array=[max(0.0, (s.ci_high - s.gap) * 100) for s in rows],
                     arrayminus=[max(0.0, (s.gap - s.ci_low) * 100) for s in rows], color="#94A3B8", thickness=2, width=4),
        customdata=[[s.n, s.documents, s.q, s.excess_failures, len(rows) - k] for k, s in enumerate(rows)],
        hovertemplate=("%{y}<br>gap %{x:+.1f} pp<br>%{customdata[0]} questions in %{customdata[1]} "
                       + found.unit + "s<br>q %{customdata[2]:.2g}<br>excess failures %{customdata[3]:.0f}<extra></extra>"),
    ))
    fig.add_vline(x=0, line=dict(color="#475569", width=1))
    what = ("weak slices against the rest of the run" if found.mode == "run"
            else "where the run lost more to the baseline than elsewhere")
    fig.update_layout(
        title=dict(text=(f"{plotly_text(metric_label)}: {what}"
                         f"<br><sup>gap to the rest in percentage points (negative: worse); intervals by {found.unit} "
                         f"adjusted for the search</sup>"), x=0, xanchor="left"),
        height=140 + ROW * max(3, len(rows)), margin=dict(l=10, r=20, t=80, b=50), showlegend=False, dragmode=False)
    fig.update_xaxes(title=dict(text="gap to the rest (percentage points)"), zeroline=False)
    fig.update_yaxes(automargin=True, categoryorder="array", categoryarray=names, tickmode="array", tickvals=names)
    return fig


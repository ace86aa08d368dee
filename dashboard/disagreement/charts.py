"""Plotly figures of the disagreement page. No streamlit here.

Clickable marks carry `customdata`: [run, category] on the bars, [run, question_id] on the
scatter's points, so a selection event names what it stands for (`points_of`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.core.escape import plotly_text
from dashboard.disagreement.frames import SCORE_LABELS, category_label
from scoring.categories import CATEGORY_IDS
from scoring.profiles import Profile, get_profile

FONT = dict(size=13)
# CATEGORY_PALETTE: one colour per category, fifteen told apart at a glance -- any two at least 14 apart in
# CIEDE2000, and at least 9 apart under simulated deuteranopia and protanopia (Machado et al. 2009; a
# stacked bar of the old greens, ambers and reds had pairs 0.5 apart for a deuteranope), measured by
# tests/test_small_things.py. Named colours of Okabe & Ito's palette and of Paul Tol's bright, muted, dark
# and light ones; right-ish answers blue and green, wrong ones red and brown, no answer grey.
CATEGORY_PALETTE = {
    "failed_or_missing": "#6B7280",  # grey
    "extraction_miss": "#000000",  # black (Okabe & Ito)
    "false_refusal": "#332288",  # indigo (Tol muted)
    "invented_answer": "#CC79A7",  # reddish purple (Okabe & Ito)
    "fragile_pass": "#F0E442",  # yellow (Okabe & Ito)
    "right_but_verbose": "#56B4E9",  # sky blue (Okabe & Ito)
    "right_other_format": "#0077BB",  # blue (Tol vibrant)
    "right_all_agree": "#009E73",  # bluish green (Okabe & Ito)
    "same_words_other_order": "#225555",  # dark cyan (Tol dark)
    "probably_right_scored_wrong": "#E69F00",  # orange (Okabe & Ito)
    "unit_or_scale_slip": "#666633",  # dark yellow (Tol dark)
    "numeric_near_miss": "#FFAABB",  # pink (Tol light)
    "partially_right": "#EE6677",  # red (Tol bright)
    "wrong_but_string_credit": "#663333",  # dark red (Tol dark)
    "wrong_all_agree": "#D55E00",  # vermillion (Okabe & Ito)
}
ACC_COLOURS = {1.0: "#2563EB", 0.0: "#F59E0B"}  # right / wrong: blue / orange, told apart with colour-blindness too


def category_bars(counts: pd.DataFrame) -> go.Figure:
    """Horizontal stacked bars: one bar per run (rows of `counts`), one segment per category
    (columns, contract order; named in words, coloured from CATEGORY_PALETTE), length = answers.
    Segments carry [run, category id]."""
    runs = list(counts.index)
    fig = go.Figure()
    for cat in CATEGORY_IDS:
        values = counts[cat].tolist() if cat in counts.columns else [0] * len(runs)
        if not any(values):
            continue
        fig.add_trace(go.Bar(
            y=[plotly_text(r) for r in runs], x=values, orientation="h", name=category_label(cat),
            marker=dict(color=CATEGORY_PALETTE[cat], line=dict(width=0.5, color="#FFFFFF")),
            customdata=[[r, cat] for r in runs],
            hovertemplate="Run: %{y}<br>Category: " + category_label(cat) + "<br>Answers: %{x}<extra></extra>",
        ))
    # the legend right of the bars, one category a line: under the bars it wrapped into one scrolling
    # column in an 800 px window; beside them it always reads
    fig.update_layout(
        barmode="stack", title=dict(text="Answers per category, per run", x=0, xanchor="left"),
        xaxis=dict(title="answers (questions × run)"), yaxis=dict(title=None, autorange="reversed"),
        legend=dict(orientation="v", yanchor="top", y=1, x=1.01, font=dict(size=10), traceorder="normal"),
        height=max(390, 120 + 40 * len(runs)), margin=dict(l=10, r=10, t=50, b=10), font=FONT,
        clickmode="event+select",
    )
    return fig


def pair_scatter(points: pd.DataFrame, x: str, y: str, listed: set[tuple[str, str]] | None = None,
                 profile: str | Profile | None = None) -> go.Figure:
    """Metric pair scatter, jittered, coloured by right and wrong answers (two traces, so the legend
    says which is which: "Accuracy 1" / "Accuracy 0", or under MMLongBench-Doc's partial score
    "Accuracy ≥ 0.5" / "Accuracy < 0.5"); right is the points' `right` column (scoring's one
    definition), else `profile.is_right` of their Accuracy. Each point carries [run, question_id,
    category in words] and shows its raw scores on hover. The points of `listed` (run, question id) -- the
    answers listed under the chart -- are ringed, unless that is every point."""
    fig = go.Figure()
    many = len(points) > 2_000
    rules = get_profile(profile)
    right = (points["right"].to_numpy(dtype=bool) if "right" in points.columns
             else rules.right_mask(points["accuracy"]))
    for acc, label in ((1.0, rules.right_rule), (0.0, rules.wrong_rule)):
        part = points[right == (acc == 1.0)]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["x"], y=part["y"], mode="markers", name=label,
            marker=dict(color=ACC_COLOURS[acc], size=5 if many else 8, opacity=0.35 if many else 0.7,
                        line=dict(width=0.5, color="#FFFFFF")),
            customdata=[[r, q, c, xr, yr] for r, q, c, xr, yr in
                        zip(part["run"].map(plotly_text), part["question_id"].map(plotly_text), part["category"].map(category_label),
                            part["x_raw"], part["y_raw"])],
            hovertemplate=(f"%{{customdata[1]}} · %{{customdata[0]}}<br>{SCORE_LABELS[x]}: %{{customdata[3]:.3f}}"
                           f"<br>{SCORE_LABELS[y]}: %{{customdata[4]:.3f}}<br>%{{customdata[2]}}<extra>{label}</extra>"),
        ))
    if listed:
        mask = [(r, q) in listed for r, q in zip(points["run"], points["question_id"])]
        ring = points[mask]
        if 0 < len(ring) < len(points):
            fig.add_trace(go.Scatter(
                x=ring["x"], y=ring["y"], mode="markers", name="listed below", hoverinfo="skip",
                marker=dict(symbol="circle-open", size=14, color="#111827", line=dict(width=1.5)),
            ))
    for v in (0.5,):  # the pass thresholds of token F1 and ANLS
        fig.add_vline(x=v, line=dict(color="#9CA3AF", dash="dot", width=1))
        fig.add_hline(y=v, line=dict(color="#9CA3AF", dash="dot", width=1))
    fig.update_layout(
        # the names alone in the title (it does not wrap at 800 px); the axes say what each measures
        title=dict(text=f"{_name(y)} against {_name(x)}, coloured by Accuracy", x=0, xanchor="left"),
        xaxis=dict(title=f"{SCORE_LABELS[x]} (0–1, jittered)", range=[-0.05, 1.05], zeroline=False),
        yaxis=dict(title=f"{SCORE_LABELS[y]} (0–1, jittered)", range=[-0.05, 1.05], zeroline=False),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"),
        height=460, margin=dict(l=10, r=10, t=70, b=10), font=FONT, dragmode="select",
    )
    return fig


def _name(metric: str) -> str:
    """A score's label without its explanation in brackets ("Fuzzy match (string similarity)" -> "Fuzzy match")."""
    return SCORE_LABELS[metric].split(" (")[0]


def points_of(event: Any) -> list[list[str]]:
    """[run, question_id] of every point a scatter selection holds (customdata carries the labels
    escaped for Plotly; they are unescaped here)."""
    out = []
    try:
        points = event["selection"]["points"]  # the event, or the widget's value in session state
    except (KeyError, TypeError):
        points = getattr(getattr(event, "selection", None), "points", []) or []
    for p in points or []:
        cd = p.get("customdata")
        if cd and len(cd) >= 2:
            out.append([_unescape(cd[0]), _unescape(cd[1])])
    return out


def _unescape(text: str) -> str:
    return str(text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")

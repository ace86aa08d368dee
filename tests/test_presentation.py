"""The Presentation page's slides, as an audience sees them: every slice of the "Δ by slice" chart
carries its label (Plotly drops every other category label when rows are tight at the slides' font)."""

from __future__ import annotations

import json
from pathlib import Path

from app_kit import app_on

ROOT = Path(__file__).resolve().parent.parent


def figures(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_every_slice_of_the_delta_slide_is_labelled(monkeypatch):
    at = app_on(monkeypatch, ROOT / "sample_runs", {"a": "longctx-ocr", "b": "small-9b"}, timeout=120)
    at.switch_page("views/present.py").run()
    assert not at.exception, [e.value for e in at.exception]
    delta = next(f for f in figures(at) if "by slice" in f["layout"]["title"]["text"])
    names = delta["data"][0]["y"]
    assert len(names) >= 10  # the overall row and the slices of three breakdowns
    axis = delta["layout"]["yaxis"]
    assert axis["tickmode"] == "array" and list(axis["tickvals"]) == list(names)
    # rows grow with the slides' larger font: at least 24 px x 17/12 a row
    assert delta["layout"]["height"] >= 24 * 17 / 12 * len(names)

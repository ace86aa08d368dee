"""The overview draws everything else before it searches the documents for "Where the answers are"
(issue 18: 50 s before the first overview of a 2,415-page manual was drawn): the section keeps its
place as a placeholder, filled at the end of the script with a progress bar; once the metrics are
computed it is drawn at once. streamlit.testing.v1.AppTest on a copy of sample_runs/ (a copy: the
metrics of sample_runs/ itself may be in this process's cache already)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import streamlit

from app_kit import app_on
from dashboard.annotations import panel as annotations_panel
from dashboard.evidence import panel as evidence_panel

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
WAITING = "once the rest of the page is drawn"


def walk(node):
    """The page's elements in the order they are drawn."""
    if getattr(node, "type", None) not in (None, "block", "main", "sidebar", "root") or not hasattr(node, "children"):
        yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def outline(at) -> list[str]:
    """Subheaders and charts in page order (charts by their title)."""
    out = []
    for el in walk(at.main):
        if el.type == "subheader":
            out.append(el.value)
        elif el.type == "plotly_chart":
            out.append("chart: " + str(json.loads(el.proto.spec)["layout"].get("title", {}).get("text", "")))
    return out


@pytest.fixture
def log(monkeypatch):
    """What happened, in order: the whole-document search, the last section (failure modes), the
    progress bars started."""
    events: list[str] = []
    search, modes, progress = evidence_panel.evidence_table, annotations_panel.failure_modes, streamlit.progress

    def searched(*args, **kwargs):
        events.append("search")
        return search(*args, **kwargs)

    def drawn(*args, **kwargs):
        events.append("failure modes")
        return modes(*args, **kwargs)

    def bar(*args, **kwargs):
        events.append("progress")
        return progress(*args, **kwargs)

    monkeypatch.setattr(evidence_panel, "evidence_table", searched)
    monkeypatch.setattr(annotations_panel, "failure_modes", drawn)
    monkeypatch.setattr(streamlit, "progress", bar)
    return events


def test_the_overview_draws_first_and_fills_where_the_answers_are_last(tmp_path, monkeypatch, log):
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench)
    # a cache folder of its own: answers an earlier test located in a copy of the sample are kept on disk by
    # content (dashboard/evidence/locating.py LocatedStore) and would be read back here, not searched
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    at = app_on(monkeypatch, bench, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    # every other section was drawn before the documents were searched, with a progress bar meanwhile
    assert "failure modes" in log and "search" in log
    assert log.index("failure modes") < log.index("search"), log
    assert "progress" in log[log.index("failure modes"):log.index("search")]
    # the section kept its place (between the breakdowns and the failure modes) and was filled
    order = outline(at)
    heads = [h for h in order if not h.startswith("chart: ")]
    assert heads.index("Leaderboard") < heads.index("Breakdowns") < heads.index("Where the answers are") \
        < heads.index("Failure modes"), order
    where = order.index("Where the answers are")
    assert any("Where each run" in c for c in order[where:order.index("Failure modes")]), order
    assert any("answer_only_on_other_page" in d.value.columns for d in at.dataframe)
    assert not any(WAITING in c.value for c in at.caption)  # the placeholder's note was replaced

    # computed once: the next run draws it in its place at once, without searching or a bar
    log.clear()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "search" not in log and "progress" not in log, log
    order = outline(at)
    where = order.index("Where the answers are")
    assert any("Where each run" in c for c in order[where:order.index("Failure modes")]), order

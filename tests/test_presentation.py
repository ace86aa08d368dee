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


def test_mmlongbench_slides_show_its_acc_and_f1_say_too_few_documents_and_drop_one_valued_fields(monkeypatch):
    """Issues 25, 29.3 and 34 on sample_runs/mmlongbench (41 questions over 5 documents): the benchmark's
    own Acc and F1 in the header, "too few documents to tell" instead of an interval, "not enough
    evidence" with the finder's reason instead of a weakest slice, and no slice of a field every
    question leaves 'unknown'."""
    at = app_on(monkeypatch, ROOT / "sample_runs" / "mmlongbench", {"a": "gpt-4o", "b": "docowl-8b"}, timeout=120)
    at.switch_page("views/present.py").run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown]
    assert texts[0].startswith("The benchmark's own Acc / F1: gpt\\-4o ") and "docowl\\-8b " in texts[0]  # md-escaped names
    assert "too few documents to tell" in texts[1] and "5 documents" in texts[1]
    assert texts[2].startswith("**Not enough evidence** for the finder\\: each slice needs 20 documents\\; this benchmark has 5")
    assert "No slice has the 20 documents a test needs" in texts[4]
    names = [n for f in figures(at) if "by slice" in f["layout"]["title"]["text"] for n in f["data"][0]["y"]]
    assert names and not any(n.startswith(("Reasoning type", "Domain", "Difficulty")) for n in names)


def test_header_lines_say_gold_corrections_and_how_many():
    from types import SimpleNamespace

    from dashboard.annotations.corrections import CorrectionSummary
    from dashboard.compare import panel

    an = SimpleNamespace(run=lambda name: None)
    assert panel.header_lines(an, ["a", "b"], None) == []
    fixes = CorrectionSummary(corrected=("q1", "q2"), excluded=("q3",), unknown=(), unreadable=())
    assert panel.header_lines(an, ["a", "b"], fixes) == [
        "Scored **with gold corrections**: 2 gold answers corrected\\, 1 question excluded."]  # as md_escape writes it


def test_many_runs_chart_the_leaderboards_first_with_a_and_b(monkeypatch):
    """Slide 1 and Compare's ranks per slice show at most RUNS_SHOWN runs (the leaderboard's first, with the
    runs the page is about) and say so: at 1,000 runs the slide drew every run's rows and interval, and had
    drawn nothing after 15 minutes. sample_runs/campaign has 13 runs; 5 are shown here."""
    from dashboard.compare import panel

    assert panel.leading_runs(list("abcdefg"), ["f", "b"], limit=3) == ["a", "b", "f"]
    assert panel.leading_runs(list("abc"), ["x"], limit=5) == ["a", "b", "c"]
    assert panel.leading_runs(list("abcdefg"), ["g", "f", "e", "d"], limit=3) == ["e", "f", "g"]
    assert panel.leading_note(list("abc"), list("abc"), "A and B") == ""
    monkeypatch.setattr(panel, "RUNS_SHOWN", 5)
    bench = ROOT / "sample_runs" / "campaign"
    at = app_on(monkeypatch, bench, {"a": "ckpt-0520", "b": "vision-13b"}, timeout=180)
    at.switch_page("views/present.py").run()
    assert not at.exception, [e.value for e in at.exception]
    runs_chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    charted = set(runs_chart["data"][0]["x"])
    assert len(charted) == 5 and {"ckpt-0520", "vision-13b"} <= charted, charted
    assert "The chart\\: 5 of 13 runs\\: the leaderboard\\'s first\\, A and B among them" in at.markdown[0].value, \
        at.markdown[0].value

    at = app_on(monkeypatch, bench, {"cmp_tab": "all", "cmp_run": "vision-13b"}, timeout=180)
    at.switch_page("views/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    ranks = next(d.value for d in at.dataframe if "Slice" in d.value.columns)
    ranked = [c for c in ranks.columns if c not in ("Slice", "Questions")]
    assert len(ranked) == 5 and "vision-13b" in ranked
    assert sorted(ranks.set_index("Slice").loc["All questions", ranked]) == [1, 2, 3, 4, 5]
    assert any("Ranked among 5 of 13 runs" in c.value for c in at.caption)

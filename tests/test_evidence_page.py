"""The Evidence page through streamlit.testing.v1.AppTest: sample_runs/ (a wrong-page answer, page
stepping, layer toggles), a benchmark whose PDF is missing, and the DocVQA-style image set."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
WRONG_PAGE = "adubench_single_000024"  # longctx-ocr answers with a value printed on page 4 (evidence: 24, 26)


@pytest.fixture
def open_evidence(monkeypatch):
    def start(bench: Path, params: dict) -> AppTest:
        at = app_on(monkeypatch, bench, params, timeout=120)
        at.switch_page("views/evidence.py")
        return at.run()
    return start


def texts(at: AppTest) -> str:
    parts = [c.value for c in at.caption] + [m.value for m in at.markdown] + [w.value for w in at.warning]
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def page_input(at: AppTest):
    return next(n for n in at.number_input if n.label.startswith("Page (of "))


def test_wrong_page_answer_steps_and_layers(open_evidence):
    at = open_evidence(SAMPLE, {"sel": WRONG_PAGE, "run": ["longctx-ocr"]})
    clean(at)
    assert at.title[0].value == "Evidence"
    assert at.selectbox(key="ev_question").value == WRONG_PAGE
    shown = texts(at)
    assert "page 24 of 36 · evidence page 1 of 2" in shown
    assert "longctx-ocr: “prior preventive failure” — appears on page 4, not on the evidence pages" in shown
    assert len(at.get("plotly_chart")) == 1
    # step to the next evidence page, then jump to the page holding the answer
    next(b for b in at.button if b.label == "Next" and not b.disabled).click().run()
    clean(at)
    assert page_input(at).value == 26 and "evidence page 2 of 2" in texts(at)
    next(b for b in at.button if b.label == "Open p. 4").click().run()
    clean(at)
    assert page_input(at).value == 4 and "page 4 of 36 · not an evidence page" in texts(at)
    assert "Cited by longctx-ocr." in texts(at)
    # hide every layer but the run's answer
    pills = at.button_group[0]
    assert pills.value == ["Gold evidence", "Gold boxes", "Gold answer", "longctx-ocr: answer", "longctx-ocr: cited evidence"]
    pills.set_value(["longctx-ocr: answer"]).run()
    clean(at)
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"longctx-ocr: answer"' in fig and '"Gold evidence"' not in fig and '"Gold answer"' not in fig
    # the page number can be typed
    page_input(at).set_value(36).run()
    clean(at)
    assert "page 36 of 36" in texts(at)
    assert "Evidence metrics per run" in [h.value for h in at.subheader]
    rates = at.dataframe[0].value.set_index("run")
    assert 0.0 < rates.loc["longctx-ocr", "answer_only_on_other_page"] < 1.0


def test_missing_pdf_says_where_it_looked(open_evidence, tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("docvqa", "__pycache__", "*.py", "results"))
    (bench / "docs" / "doc_000002.pdf").unlink()
    at = open_evidence(bench, {"sel": WRONG_PAGE, "run": ["longctx-ocr"]})
    clean(at)
    shown = texts(at)
    assert f"Document doc_000002 not found (not found): looked for {bench / 'docs' / 'doc_000002.pdf'}" in shown
    assert "Put doc_000002.pdf into" in shown and "documents.jsonl a \"file\" field" in shown
    assert "not searched: document doc_000002 not found" in shown
    assert not at.get("plotly_chart") or len(at.get("plotly_chart")) == 0
    at.selectbox(key="ev_question").set_value("adubench_single_000002").run()  # another document still works
    clean(at)
    assert len(at.get("plotly_chart")) == 1


def test_docvqa_image_pages(open_evidence):
    at = open_evidence(SAMPLE / "docvqa", {"profile": "docvqa", "sel": "61002"})
    clean(at)
    shown = texts(at)
    assert "52001 · page 1 of 1" in shown and "No text layer: this page was read by OCR" in shown
    assert len(at.get("plotly_chart")) == 1
    assert at.selectbox(key="profile").value == "docvqa"


def test_cross_document_question_shows_each_document_in_turn(open_evidence):
    at = open_evidence(SAMPLE, {"sel": "adubench_cross_000001", "run": ["longctx-img"]})
    clean(at)
    (docs,) = [r for r in at.radio if r.label == "Document"]
    assert [re.sub(r"\\(.)", r"\1", o) for o in docs.options] == ["doc_000004 (evidence p. 11)", "doc_000003 (evidence p. 44)", "doc_000001 (context only)"]
    assert "doc_000004 · page 11 of 55 · evidence page 1 of 1" in texts(at)
    docs.set_value("doc_000003").run()
    clean(at)
    assert "doc_000003 · page 44 of 103 · evidence page 1 of 1" in texts(at)
    at.radio(key=docs.key).set_value("doc_000001").run()
    clean(at)
    assert "doc_000001 · page 1 of 46 · the gold names no evidence page" in texts(at)
    assert len(at.get("plotly_chart")) == 1

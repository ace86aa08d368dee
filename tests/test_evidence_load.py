"""The pieces that keep the Evidence page fast with many sessions (issue 12): the page count cache
(dashboard/evidence/locate.py), the figure key (dashboard/evidence/panel.py's figure_key), the single-flight
computation (now dashboard/core/bounded.py: tests/test_bounded.py) and the evidence table's page lists (grounding.pages_listed)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pymupdf
import pytest

from dashboard.documents import pdf
from dashboard.evidence.grounding import pages_listed
from dashboard.evidence.panel import figure_key
from dashboard.evidence.render import Box

ROOT = Path(__file__).resolve().parent.parent


def _pdf(path: Path, pages: int) -> Path:
    doc = pymupdf.open()
    for k in range(pages):
        doc.new_page().insert_text((72, 72), f"page {k + 1}")
    doc.save(path)
    doc.close()
    return path


def test_page_count_is_cached_until_the_file_changes(tmp_path):
    pdf.clear_caches()
    path = _pdf(tmp_path / "a.pdf", 3)
    assert pdf.page_count(path) == 3
    stamp = path.stat().st_mtime_ns
    _pdf(path, 5)
    os.utime(path, ns=(stamp, stamp))  # same mtime: the cached count stands
    assert pdf.page_count(path) == 3
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))  # a newer file: counted again
    assert pdf.page_count(path) == 5
    pdf.clear_caches()
    with pytest.raises(pdf.DocumentError):
        pdf.page_count(tmp_path / "missing.pdf")


def test_figure_key_follows_the_file_page_zoom_height_and_every_box(tmp_path):
    pdf = _pdf(tmp_path / "a.pdf", 2)
    boxes = [Box((1, 2, 30, 40), "#009E73", "Gold evidence 1", "Gold evidence"),
             Box((5, 5, 9, 9), "#D55E00", "run: answer “x”", "run: answer")]
    key = figure_key(pdf, 1, 1.5, 840, boxes)
    assert key == figure_key(pdf, 1, 1.5, 840, [Box(*(getattr(b, f) for f in ("rect", "colour", "label", "layer")))
                                                 for b in boxes])
    different = [figure_key(pdf, 2, 1.5, 840, boxes), figure_key(pdf, 1, 2.0, 840, boxes),
                 figure_key(pdf, 1, 1.5, 900, boxes), figure_key(pdf, 1, 1.5, 840, boxes[:1]),
                 figure_key(pdf, 1, 1.5, 840, boxes[::-1]),
                 figure_key(pdf, 1, 1.5, 840, [boxes[0], Box((5, 5, 9, 9), "#D55E00", "run: answer “y”", "run: answer")]),
                 figure_key(pdf, 1, 1.5, 840, [boxes[0], Box((5, 5, 9, 9), "#D55E00", "run: answer “x”", "run: answer",
                                                             dashed=True)])]
    assert key not in different and len(set(different)) == len(different)
    stamp = pdf.stat().st_mtime_ns
    os.utime(pdf, ns=(stamp + 10**9, stamp + 10**9))  # the file changed: a new figure
    assert figure_key(pdf, 1, 1.5, 840, boxes) != key


def test_pages_listed_writes_page_lists_as_text():
    table = pd.DataFrame({"question_id": ["a", "b", "c"], "answer_pages_evidence": [(4, 7), (), (1,)],
                          "answer_pages_elsewhere": [(), (2, 3), ()]})
    shown = pages_listed(table)
    assert shown["answer_pages_evidence"].tolist() == ["4, 7", "", "1"]
    assert shown["answer_pages_elsewhere"].tolist() == ["", "2, 3", ""]
    assert table["answer_pages_evidence"].tolist() == [(4, 7), (), (1,)]  # the cached table is left as it was

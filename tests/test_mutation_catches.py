"""Tests for the three mutants of the dashboard that slipped through the suite in the mutation study
(issue 29.6): the boundary at which a page needs OCR, a link that hides every layer of the evidence
viewer, and the threshold of a right answer. Each assertion here fails under the mutant it names."""

from __future__ import annotations

import pytest

from dashboard.core.links import View, from_params, to_params
from dashboard.documents import ocr


def raw(chars: int, image: tuple[float, float, float, float] | None = None) -> dict:
    """A page's rawdict with `chars` glyphs and, optionally, one image block."""
    blocks: list[dict] = [{"type": 0, "lines": [{"spans": [{"chars": [{"c": "x", "bbox": (0, 0, 1, 1)}] * chars}]}]}]
    if image:
        blocks.append({"type": 1, "bbox": image})
    return {"blocks": blocks}


PAGE = (612.0, 792.0)
SCAN = (0.0, 0.0, 612.0, 792.0)  # an image covering the whole page
HALF = (0.0, 0.0, 612.0, 396.0)  # covering half of it


def test_the_character_boundary_of_a_usable_text_layer():
    # mutant: `n < MIN_CHARS` -> `n <= MIN_CHARS` (a page of exactly MIN_CHARS glyphs sent to OCR)
    assert ocr.needs_ocr(raw(ocr.MIN_CHARS - 1), *PAGE)
    assert not ocr.needs_ocr(raw(ocr.MIN_CHARS), *PAGE)


def test_the_glyph_boundary_over_a_full_page_image():
    # mutants: `n <= FEW_GLYPHS` -> `n < FEW_GLYPHS`, and the cover's `>=` -> `>`
    assert ocr.needs_ocr(raw(ocr.FEW_GLYPHS, SCAN), *PAGE)
    assert not ocr.needs_ocr(raw(ocr.FEW_GLYPHS + 1, SCAN), *PAGE)
    assert not ocr.needs_ocr(raw(ocr.FEW_GLYPHS, HALF), *PAGE)  # half a page is not a scan
    w, h = PAGE
    exactly = (0.0, 0.0, w, h * ocr.FULL_PAGE)
    assert ocr.needs_ocr(raw(ocr.FEW_GLYPHS, exactly), *PAGE)


@pytest.mark.parametrize("layers", [[], ["Gold boxes"], None])
def test_a_link_keeps_which_layers_are_shown_even_none(layers):
    # mutant: `list(view.layers) or [""]` -> `list(view.layers)` (every layer hidden came back as the default ones)
    view = View(question="q1", layers=layers)
    back = from_params(to_params(view))
    assert back.layers == layers
    if layers == []:
        assert to_params(view)["layer"] == [""]


def test_the_right_answer_threshold_is_one_definition_per_profile():
    # mutant: the threshold 1.0 -> 0.5 under the default profile (a partial answer counted right)
    from scoring.profiles import get_profile

    strict = get_profile("xldocbench")
    assert strict.is_right(1.0) and not strict.is_right(0.99) and not strict.is_right(0.5)

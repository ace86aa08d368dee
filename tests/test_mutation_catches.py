"""Tests for mutants that slipped through the suite in the mutation studies: three of the dashboard
(issue 29.6: the boundary at which a page needs OCR, a link that hides every layer of the evidence
viewer, the threshold of a right answer) and one of scoring (issue 36: token F1 and ANLS swapped in
the columns `run_columns` returns). Each assertion here fails under the mutant it names. (Issue 36's
other one here, `paired_by_document` at 20 and 19 documents, is tests/test_stats.py's
`test_twenty_documents_are_enough_and_nineteen_too_few`.)"""

from __future__ import annotations

import json

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


def test_run_columns_keeps_token_f1_and_anls_in_their_own_columns(tmp_path):
    # mutant: `"token_f1": f1, "anls": an` -> `"token_f1": an, "anls": f1` in run_columns' columns (the
    # report and its aggregates, computed beside them, stayed right, so no byte comparison saw it)
    from scoring.columnar import join, run_columns
    from scoring.loaders import load_gold_columns, load_prediction_columns
    from scoring.metrics import judge
    from scoring.profiles import get_profile
    from scoring.runner import columns_of

    # (gold, prediction, token F1, ANLS) by hand: F1 on the normalised word sets, ANLS 1 - distance / length
    # of the stripped, lower-cased strings when at least 0.5
    cases = [("annual report 2020", "Annual report", 0.8, 1 - 5 / 18),  # words 2 of 2 and 2 of 3; 5 edits in 18
             ("Violetta Prigozhina", "Prigozhina Violetta", 1.0, 0.0),  # the same words; 16 edits in 19 (< 0.5)
             ("blue whale", "blue", 2 / 3, 0.0)]  # words 1 of 1 and 1 of 2; 6 edits in 10 (< 0.5)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({
        "question_id": f"q{k}", "task_type": "single_doc", "question": "?",
        "answer": {"value": g, "format": "Str", "verification_rule": "casefold_exact_match"},
        "document": {"document_id": f"d{k}"}}) + "\n" for k, (g, _, _, _) in enumerate(cases)), encoding="utf-8")
    preds = tmp_path / "run.jsonl"
    preds.write_text("".join(json.dumps({"question_id": f"q{k}", "prediction": p}) + "\n"
                             for k, (_, p, _, _) in enumerate(cases)), encoding="utf-8")
    profile = get_profile("xldocbench")
    _, gold_columns = load_gold_columns([gold])
    _, pred_columns = load_prediction_columns(preds)
    joined = join(gold_columns, pred_columns, ignore_missing=False)
    run = run_columns(gold_columns, pred_columns, joined, profile=profile, name="run", ignore_missing=False,
                      prediction_field=None)
    columns = columns_of(run)  # what the dashboard reads: the leaderboard, the explorer, comparisons
    assert columns["question_id"] == ["q0", "q1", "q2"]
    assert columns["token_f1"] == pytest.approx([f1 for _, _, f1, _ in cases])
    assert columns["anls"] == pytest.approx([an for _, _, _, an in cases])
    for k, (g, p, _, _) in enumerate(cases):  # and as the one-answer scorer has them
        j = judge(p, [g], "Str", "casefold_exact_match", profile=profile)
        assert (columns["token_f1"][k], columns["anls"][k]) == (j.token_f1, j.anls)

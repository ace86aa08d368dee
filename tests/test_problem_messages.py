"""The exact text of loader problems: what a user reads on stderr (`python -m scoring`) and on the
Data page. Each line is `file:line: severity: field: expected ..., got ... (skipped | loaded anyway)`;
a reworded message is a change users see, so it has to show up here."""

from pathlib import Path

import pytest

from dashboard.data.frames import problem_line
from scoring.loaders import load_gold, load_predictions

BAD = Path(__file__).parent / "fixtures" / "bad"

GOLD = {
    "gold_bad_json.jsonl": [
        "{f}:2: error: expected a JSON value, got invalid JSON (Expecting value at column 1) (skipped)",
    ],
    "gold_non_object.jsonl": [
        "{f}:2: error: expected a JSON object, got a list of 2 (skipped)",
        "{f}:3: error: expected a JSON object, got string 'just a string' (skipped)",
    ],
    "gold_missing_id.jsonl": [
        "{f}:2: error: question_id: expected one of question_id, global_qa_id, global_id, id, got none of them (skipped)",
        "{f}:3: error: question_id: expected one of question_id, global_qa_id, global_id, id, got none of them (skipped)",
    ],
    "gold_duplicate_id.jsonl": [
        "{f}:3: error: question_id: expected an id not used before, got 'q1', first at {f}:1 (skipped)",
    ],
    "gold_unknown_format.jsonl": [
        "{f}:2: warning: answer.format: expected one of Str, Int, Float, None, got 'Date' (scored by the fallback rule) (loaded anyway)",
        "{f}:2: warning: answer.verification_rule: expected one of casefold_exact_match, numeric_tolerance, percentage_exact, "
        "choice_exact_match, exact_match, got 'calendar_match' (loaded anyway)",
    ],
    "gold_bom.jsonl": [
        "{f}:1: warning: expected UTF-8 without a byte-order mark, got a UTF-8 BOM (ignored) (loaded anyway)",
    ],
    "gold_non_utf8.jsonl": [
        "{f}:2: warning: expected UTF-8 text, got byte e9 at offset 38 (replaced by U+FFFD) (loaded anyway)",
    ],
    "empty.jsonl": [
        "{f}: warning: expected at least one record, got an empty file (loaded anyway)",
    ],
    "does_not_exist.jsonl": [
        "{f}: error: expected a readable file, got no such file (skipped)",
    ],
}

PREDICTIONS = {
    "preds_duplicate.jsonl": [
        "{f}:2: warning: question_id: expected each id once, got 'q1' again (replaces line 1) (loaded anyway)",
    ],
    "preds_no_field.jsonl": [
        "{f}:1: warning: prediction: expected a prediction field (prediction / model_answer / answer / response / output), "
        "got none, the row has 'question_id', 'text' (scored as an empty answer) (loaded anyway)",
    ],
    "preds_bare_string.json": [
        "{f}: error: expected a list of objects, {{\"items\": {{...}}}} or an id -> answer mapping, "
        "got string 'not a prediction file' (skipped)",
    ],
    "preds_bad.json": [
        "{f}:1: error: expected a JSON document, got invalid JSON (Expecting ',' delimiter at column 16) (skipped)",
    ],
}


@pytest.mark.parametrize("name", sorted(GOLD))
def test_gold_problem_text(name):
    path = BAD / name
    assert [str(p) for p in load_gold(path).problems] == [m.format(f=path) for m in GOLD[name]]


@pytest.mark.parametrize("name", sorted(PREDICTIONS))
def test_prediction_problem_text(name):
    path = BAD / name
    assert [str(p) for p in load_predictions(path).problems] == [m.format(f=path) for m in PREDICTIONS[name]]


def test_data_page_line_names_the_file_as_shown():
    path = BAD / "gold_missing_id.jsonl"
    problem = load_gold(path).problems[0]
    assert problem_line(problem, lambda f: "qa/" + Path(f).name) == (
        "qa/gold_missing_id.jsonl:2 — error: question_id: expected one of question_id, global_qa_id, global_id, id, "
        "got none of them (skipped)")


def test_a_score_file_with_other_columns_names_what_it_has(tmp_path):
    """Issue 29.4: a wrong-column file names the columns it found beside the ones expected."""
    from scoring.loaders import load_scores

    path = tmp_path / "scores.csv"
    path.write_text("id,answer_text,acc\nq1,x,1\n")
    assert [str(p) for p in load_scores(path).problems] == [
        f"{path}:1: error: header: expected columns question_id, accuracy, token_f1, anls, got missing question_id, "
        "accuracy, token_f1, anls (the header has 'id', 'answer_text', 'acc') (skipped)"]

"""Issue 18 items 1, 3 and 4: one bad input costs only itself and is named where it is.

- a stray quote in a per-question score CSV is reported at its own line and the rows after it read;
- a null, absent or NaN gold answer is a warning at file:line, the question kept and marked
  (`GoldQuestion.gold_problem`);
- a bad element of a JSON-list prediction file is named by its index."""

from __future__ import annotations

import json
from pathlib import Path

from scoring.loaders import load_gold, load_predictions, load_scores

HEADER = "question_id,prediction,gold_answer,answer_format,status,accuracy,token_f1,anls,split,domain,reasoning_type"


def _score_csv(tmp: Path, predictions: dict[int, str], n: int = 76) -> Path:
    lines = [HEADER]
    for k in range(1, n + 1):  # question k sits on line k + 1
        lines.append(f"q{k:03d},{predictions.get(k, f'answer {k}')},gold {k},Str,success,1.0,0.5,0.25,single_doc,law,comparison")
    path = tmp / "sys.per_question.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return path


def test_stray_quote_costs_only_its_line(tmp_path):
    """The issue's case: 76 rows, line 5's prediction `"5 ft tall`: 75 questions read, line 5 named."""
    res = load_scores(_score_csv(tmp_path, {4: '"5 ft tall'}))
    assert len(res.items) == 75
    assert "q004" not in {r.qid for r in res.items} and res.items[-1].qid == "q076"
    assert (res.rows_read, res.skipped) == (76, 1)
    assert [(p.line, p.field, p.severity) for p in res.problems] == [(5, "prediction", "error")]
    assert "never closed" in res.problems[0].got and '"5 ft tall' in res.problems[0].got


def test_two_stray_quotes_and_a_real_multiline_field(tmp_path):
    """A quoted field that really holds a line break (as csv.writer writes one) still reads as one
    record; a stray quote later in the same column is reported at its line."""
    res = load_scores(_score_csv(tmp_path, {3: '"two\r\nlines, one field"', 10: '"open', 20: 'x "inner" ok'}, n=30))
    by_id = {r.qid: r for r in res.items}
    assert by_id["q003"].prediction == "two\r\nlines, one field"
    assert by_id["q020"].prediction == 'x "inner" ok'
    assert len(res.items) == 29 and "q010" not in by_id
    # q003 spans lines 4-5, so q010 sits on line 12
    assert [(p.line, p.field) for p in res.problems] == [(12, "prediction")]


def test_stray_quote_on_the_last_line(tmp_path):
    res = load_scores(_score_csv(tmp_path, {6: '"last'}, n=6))
    assert len(res.items) == 5
    assert len(res.problems) == 1 and res.problems[0].line == 7


def _gold(tmp: Path, rows: list[str]) -> Path:
    path = tmp / "gold.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_null_and_nan_gold_answers_are_named_and_marked(tmp_path):
    path = _gold(tmp_path, [
        '{"question_id": "ok", "answer": {"value": "616", "format": "Int"}}',
        '{"question_id": "null_answer", "answer": null}',
        '{"question_id": "null_value", "answer": {"value": null, "format": "Str"}}',
        '{"question_id": "no_value", "answer": {"format": "Str"}}',
        '{"question_id": "nan_value", "answer": {"value": NaN, "format": "Float"}}',
        '{"question_id": "inf_value", "answer": {"value": Infinity, "format": "Float"}}',
        '{"question_id": "zero", "answer": {"value": 0, "format": "Int"}}',
    ])
    res = load_gold(path)
    marks = {q.qid: q.gold_problem for q in res.items}
    assert len(res.items) == 7  # every question kept
    assert marks == {"ok": "", "null_answer": "no gold answer", "null_value": "no gold answer", "no_value": "no gold answer",
                     "nan_value": "gold answer is nan", "inf_value": "gold answer is inf", "zero": ""}
    found = [(p.line, p.field, p.severity) for p in res.problems]
    assert found == [(2, "answer", "warning"), (3, "answer.value", "warning"), (4, "answer.value", "warning"),
                     (5, "answer.value", "warning"), (6, "answer.value", "warning")]
    assert "null" in res.problems[0].got and "nan" in res.problems[3].got
    # scored as the release does: the text "nan" (marked, not silently changed)
    assert next(q for q in res.items if q.qid == "nan_value").gold_answer == "nan"


def test_bad_elements_of_a_json_list_are_named_by_index(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"question_id": "q1", "prediction": "a"}, "junk", {"prediction": "no id"}, 3]), encoding="utf-8")
    res = load_predictions(path)
    assert [p.qid for p in res.items] == ["q1"]
    msgs = [str(p) for p in res.problems]
    assert msgs[0] == f"{path}: error: [1]: expected a JSON object, got string 'junk' (skipped)"
    assert msgs[1].startswith(f"{path}: error: [2].question_id: expected one of question_id")
    assert msgs[2] == f"{path}: error: [3]: expected a JSON object, got number 3 (skipped)"

"""Loaders: one bad-input fixture per problem kind; each test asserts the problem list and the
counts (loaded / skipped), not just "no crash"."""

import json
from pathlib import Path

import pytest

from scoring.evaluate import evaluate
from scoring.loaders import load_documents, load_gold, load_predictions, load_scores, load_summary
from scoring.problems import ERROR, WARNING

BAD = Path(__file__).parent / "fixtures" / "bad"


def where(res):
    """(line, field, severity) of each problem, for compact assertions."""
    return [(p.line, p.field, p.severity) for p in res.problems]


def test_bad_json_line_is_skipped_and_named():
    res = load_gold(BAD / "gold_bad_json.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q3"]
    assert where(res) == [(2, None, ERROR)]
    assert "invalid JSON" in res.problems[0].got
    assert str(res.problems[0]).startswith(f"{BAD / 'gold_bad_json.jsonl'}:2: error:")
    assert (res.rows_read, res.loaded, res.skipped) == (3, 2, 1)


def test_non_object_rows():
    res = load_gold(BAD / "gold_non_object.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q4"]
    assert where(res) == [(2, None, ERROR), (3, None, ERROR)]
    assert res.problems[0].expected == "a JSON object" and res.problems[0].got == "a list of 2"
    assert res.problems[1].got.startswith("string")


def test_missing_ids():
    res = load_gold(BAD / "gold_missing_id.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q4"]
    assert where(res) == [(2, "question_id", ERROR), (3, "question_id", ERROR)]
    assert "question_id, global_qa_id, global_id, id" in res.problems[0].expected


def test_duplicate_gold_id_keeps_the_first():
    res = load_gold(BAD / "gold_duplicate_id.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q2"]
    assert res.items[0].gold_answer == "616"
    assert where(res) == [(3, "question_id", ERROR)]
    assert "first at" in res.problems[0].got and ":1" in res.problems[0].got


def test_duplicate_ids_across_gold_files():
    res = load_gold([BAD / "gold_blank_lines.jsonl", BAD / "gold_bom.jsonl"])
    assert [q.qid for q in res.items] == ["q1", "q2"]
    dup = [p for p in res.problems if p.field == "question_id"]
    assert len(dup) == 2 and all(p.file.endswith("gold_bom.jsonl") for p in dup)


def test_unknown_format_and_rule_load_with_warnings():
    res = load_gold(BAD / "gold_unknown_format.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q2"]
    assert where(res) == [(2, "answer.format", WARNING), (2, "answer.verification_rule", WARNING)]
    assert res.items[1].answer_format == "Date"


def test_blank_lines_are_counted():
    res = load_gold(BAD / "gold_blank_lines.jsonl")
    assert res.loaded == 2 and res.blank_lines == 2 and res.problems == []


def test_bom_is_stripped_with_a_warning():
    res = load_gold(BAD / "gold_bom.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q2"]
    assert where(res) == [(1, None, WARNING)]
    assert "BOM" in res.problems[0].got


def test_non_utf8_bytes_are_replaced_and_reported():
    res = load_gold(BAD / "gold_non_utf8.jsonl")
    assert [q.qid for q in res.items] == ["q1", "q2"]
    assert res.items[1].question == "caf\ufffd"
    assert where(res) == [(2, None, WARNING)]
    assert "byte e9" in res.problems[0].got


def test_huge_line_loads_with_a_warning(tmp_path):
    f = tmp_path / "huge.jsonl"
    f.write_text(json.dumps({"question_id": "q1", "question": "x" * (1 << 20), "answer": {"value": "y"}}) + "\n")
    res = load_gold(f)
    assert res.loaded == 1
    assert where(res) == [(1, None, WARNING)]
    assert "bytes" in res.problems[0].got


@pytest.mark.parametrize("name", ["empty.jsonl", "whitespace_only.jsonl"])
def test_empty_files(name):
    res = load_gold(BAD / name)
    assert res.items == []
    assert len(res.problems) == 1 and res.problems[0].got == "an empty file" and res.problems[0].line is None


def test_missing_file():
    res = load_gold(BAD / "does_not_exist.jsonl")
    assert res.items == [] and res.problems[0].got == "no such file"


def test_predictions_for_unknown_questions_and_gold_without_predictions():
    gold = load_gold(BAD / "gold_blank_lines.jsonl")
    preds = load_predictions(BAD / "preds_unknown_and_missing.jsonl")
    assert preds.problems == []
    run = evaluate(gold.items, preds.items, profile="xldocbench")
    assert run.missing_ids == ["q2"]
    assert run.extra_ids == ["q999"]
    assert [(p.line, p.field) for p in run.problems] == [(2, "question_id")]
    assert "extra prediction" in run.problems[0].got
    assert [r.status for r in run.results] == ["success", "missing"]
    rep = run.report(per_question=False, lens=False)
    assert (rep["gold_count"], rep["prediction_count"], rep["evaluated_count"]) == (2, 2, 2)
    assert (rep["missing_prediction_count"], rep["extra_prediction_count"]) == (1, 1)


def test_duplicate_prediction_later_row_wins_with_warning():
    res = load_predictions(BAD / "preds_duplicate.jsonl")
    assert [(p.qid, p.text) for p in res.items] == [("q1", "616")]
    assert where(res) == [(2, "question_id", WARNING)]
    assert "replaces line 1" in res.problems[0].got


def test_prediction_without_a_prediction_field():
    res = load_predictions(BAD / "preds_no_field.jsonl")
    assert [(p.qid, p.text) for p in res.items] == [("q1", ""), ("q2", "616")]
    assert where(res) == [(1, "prediction", WARNING)]


def test_prediction_file_that_is_a_bare_string():
    res = load_predictions(BAD / "preds_bare_string.json")
    assert res.items == []
    assert res.problems[0].line is None and res.problems[0].got.startswith("string")


def test_prediction_file_with_invalid_json():
    res = load_predictions(BAD / "preds_bad.json")
    assert res.items == [] and res.problems[0].line == 1 and "invalid JSON" in res.problems[0].got


def test_json_list_with_junk_elements():
    res = load_predictions(BAD / "preds_list_with_junk.json")
    assert [(p.qid, p.text) for p in res.items] == [("q1", "616")]
    # issue 18 item 4: a list element has no line, so its index is named (as report.json problems are)
    assert [(p.field, p.expected) for p in res.problems] == [("[1]", "a JSON object"), ("[2].question_id", "one of question_id, global_qa_id, global_id, id")]
    assert str(res.problems[0]).endswith("preds_list_with_junk.json: error: [1]: expected a JSON object, got number 7 (skipped)")
    assert (res.rows_read, res.skipped) == (3, 2)


# ----------------------------------------------------------------------------- every accepted shape


def write(tmp_path, name, content):
    f = tmp_path / name
    f.write_text(content if isinstance(content, str) else json.dumps(content))
    return f


def test_prediction_shapes_and_fields(tmp_path):
    jsonl = write(tmp_path, "a.JSONL", "\n".join(json.dumps(r) for r in [
        {"question_id": " q1 ", "prediction": None},
        {"global_qa_id": 7, "model_answer": 616},
        {"global_id": "q3", "answer": {"value": "Paris", "unit": None}},
        {"id": "q4", "response": "r", "output": "o"},
        {"question_id": "q5", "output": ["a", {"b": 1}], "status": "context_overflow"},
        {"question_id": "q6", "answer": "plain", "status": ""},
    ]))
    res = load_predictions(jsonl)
    assert [(p.qid, p.text, p.status) for p in res.items] == [
        ("q1", "", "success"), ("7", "616", "success"), ("q3", "Paris", "success"),
        ("q4", "r", "success"), ("q5", '["a",{"b":1}]', "context_overflow"), ("q6", "plain", "success"),
    ]
    items = write(tmp_path, "b.json", {"items": {" k1": {"prediction": "x"}, "k2": {"answer": True}}})
    assert [(p.qid, p.text) for p in load_predictions(items).items] == [(" k1", "x"), ("k2", "True")]
    mapping = write(tmp_path, "c.json", {"q1": "616", "q2": 2.5, "q3": {"response": "r"}})
    assert [(p.qid, p.text) for p in load_predictions(mapping).items] == [("q1", "616"), ("q2", "2.5"), ("q3", "r")]
    forced = load_predictions(jsonl, prediction_field="output")
    assert [p.text for p in forced.items][3:5] == ["o", '["a",{"b":1}]']


def test_predicted_evidence(tmp_path):
    f = write(tmp_path, "e.jsonl", json.dumps({"question_id": "q1", "prediction": "x", "evidence_pages": [3, 0, "4"],
                                                "evidence": [{"page": 2, "bbox": [1, 2, 30, 40]}, {"page": "x"}]}))
    res = load_predictions(f)
    p = res.items[0]
    assert p.evidence_pages == (3,)
    assert p.evidence[0].page == 2 and p.evidence[0].bbox == (1.0, 2.0, 30.0, 40.0)
    assert where(res) == [(1, "evidence[1]", WARNING)]


def test_gold_release_schema_single_and_cross(tmp_path):
    single = {"question_id": "adubench_single_000305", "task_type": "single_doc", "question": "Welk percentage?",
              "answer": {"value": "63.1%", "format": "Float", "verification_rule": "percentage_exact"},
              "document": {"document_id": "doc_000156", "url": "https://x/ra.pdf", "evidence_pages": [25, 26],
                           "evidence_items": [{"locator": "Page 25", "pages": [25], "quote": "63,1 %", "source_type": "Table",
                                               "bbox": [10, 20, 100, 80], "mentioned_elements": ["Table 1"]}]},
              "metadata": {"domain": "legal_regulation", "evidence_sources": ["Table"], "reasoning_type": "comparison"}}
    cross = {"question_id": "adubench_cross_000001", "task_type": "cross_doc", "answer": {"value": "Not answerable", "format": "None"},
             "documents": [{"document_id": "doc_1", "evidence_pages": []}, {"document_id": "doc_2", "evidence_pages": [3]}],
             "metadata": {"evidence_sources": "Text"}}
    f = write(tmp_path, "g.jsonl", json.dumps(single) + "\n" + json.dumps(cross) + "\n")
    res = load_gold(f)
    assert res.problems == []
    s, c = res.items
    assert s.documents[0].evidence_pages == (25, 26)
    assert s.documents[0].evidence_items[0].bbox == (10.0, 20.0, 100.0, 80.0)
    assert s.labels("evidence_source") == ["Table"] and c.labels("evidence_source") == ["Text"]
    assert c.document_ids == ["doc_1", "doc_2"] and c.evidence_pages == {"doc_2": (3,)}
    assert c.labels("domain") == ["unknown"] and c.raw_meta("domain") == "unknown"


def test_docvqa_records(tmp_path):
    rows = [{"questionId": 49153, "question": "What is the actual value?", "answers": ["0.28", ".28"],
             "question_types": ["figure/diagram"], "docId": 14465, "image": "pybv0228_81.png"},
            {"questionId": 2, "answers": "[\"x\"]"}, {"questionId": 3, "answers": []}]
    res = load_gold(write(tmp_path, "docvqa.json", rows))
    assert [(q.qid, q.answers, q.question_types) for q in res.items] == [
        ("49153", ("0.28", ".28"), ("figure/diagram",)), ("2", ("x",), ())]
    assert where(res) == [(None, "answers", ERROR)]


def test_documents_file(tmp_path):
    f = write(tmp_path, "documents.jsonl", "\n".join(json.dumps(r) for r in [
        {"document_id": "doc_1", "title": "T", "page_count": 12, "file": "a/b.pdf"},
        {"document_id": "doc_2", "page_count": "many", "public_metadata": {"title": "Fallback"}},
        {"title": "no id"}, {"document_id": "doc_1"}]))
    res = load_documents(f)
    assert [(d.document_id, d.page_count, d.file) for d in res.items] == [("doc_1", 12, "a/b.pdf"), ("doc_2", None, "")]
    assert where(res) == [(2, "page_count", WARNING), (3, "document_id", ERROR), (4, "document_id", ERROR)]


# ----------------------------------------------------------------------------- score files


def test_score_files_long_nested_csv_report(tmp_path):
    long = write(tmp_path, "scores.jsonl", "\n".join(json.dumps(r) for r in [
        {"question_id": "q1", "system": "A", "accuracy": 1, "token_f1": 0.5, "anls": 0.25, "prediction": "p"},
        {"question_id": "q1", "system": "B", "accuracy": 0, "token_f1": 1.5, "anls": 0},
        {"question_id": "q2", "foo": 1},
        {"question_id": "q1", "system": "A", "accuracy": 1, "token_f1": 0.5, "anls": 0.25}]))
    res = load_scores(long)
    assert [(r.system, r.qid, r.token_f1, r.prediction) for r in res.items] == [("A", "q1", 0.5, "p")]
    assert where(res) == [(2, "token_f1", ERROR), (3, None, ERROR), (4, "question_id", ERROR)]
    nested = write(tmp_path, "nested.jsonl", json.dumps({"question_id": "q1", "scores": {"A": {"accuracy": 1, "token_f1": 1, "anls": 1}, "B": 3}}))
    res = load_scores(nested)
    assert [(r.system, r.accuracy) for r in res.items] == [("A", 1.0)]
    assert where(res) == [(1, "scores.B", ERROR)]
    csv_file = write(tmp_path, "run-x.per_question.csv", "question_id,prediction,accuracy,token_f1,anls\r\nq1,p,1.0,0.5,0.0\r\n,p,1,1,1\r\nq3,p,x,1,1\r\n")
    res = load_scores(csv_file)
    assert [(r.system, r.qid) for r in res.items] == [("run-x", "q1")]
    assert where(res) == [(3, "question_id", ERROR), (4, "accuracy", ERROR)]
    report = write(tmp_path, "run-y.report.json", {"overall": {}, "per_question": [{"question_id": "q1", "accuracy": 1.0, "token_f1": 1.0, "anls": 1.0}, "junk"]})
    res = load_scores(report)
    assert [(r.system, r.qid) for r in res.items] == [("run-y", "q1")]
    assert where(res) == [(None, "per_question[1]", ERROR)]


def test_summary(tmp_path):
    f = write(tmp_path, "summary.json", {"systems": {"A": {"accuracy": 0.4, "token_f1": 0.5, "anls": 0.3, "count": 10}, "B": {"accuracy": 40}}})
    res = load_summary(f)
    assert res.items == [{"system": "A", "accuracy": 0.4, "token_f1": 0.5, "anls": 0.3, "count": 10}]
    assert where(res) == [(None, "systems.B.accuracy", ERROR), (None, "systems.B.token_f1", ERROR), (None, "systems.B.anls", ERROR)]


def test_streamed_report_equals_json_dumps(tmp_path):
    from scoring.evaluate import evaluate
    gold = load_gold(BAD / "gold_blank_lines.jsonl").items
    for preds in ([], load_predictions(BAD / "preds_unknown_and_missing.jsonl").items):
        run = evaluate(gold, preds, profile="xldocbench")
        for per_question in (True, False):
            for lens in (True, False):
                expected = json.dumps(run.report(per_question=per_question, lens=lens), ensure_ascii=False, indent=2)
                assert run.report_json(per_question=per_question, lens=lens) == expected
        run.write_files(report=tmp_path / "r" / "x.json", csv_path=tmp_path / "x.csv")
        assert (tmp_path / "r" / "x.json").read_text(encoding="utf-8") == run.report_json()
        assert (tmp_path / "x.csv").read_bytes().decode() == run.csv_text()

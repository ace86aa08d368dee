"""lmms-eval's `--log_samples` output read as the harness leaves it (scoring/formats/lmms_eval.py),
scored by profile `lmms-eval` (scoring/harness_rules.py) and by the benchmarks' own evaluators.

Fixtures are written here in the harness's shapes, line format by version (lmms-eval's
`evaluation_tracker.save_results_samples` and `evaluator.py`: v0.2.3's `arguments.gen_args_0`,
v0.3.5's kept `doc` and `[[resp]]`, v0.7's string `filtered_resps`), and the expected scores are
worked out by hand from lmms-eval's published rules (`api/metrics.py` anls; `tasks/mmlongbench_doc/
utils.py`)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import cli
from scoring.formats import detect, lmms_eval, open_source
from scoring.harness import rescore
from scoring.harness_rules import lmms_anls, lmms_mmlongbench_f1, lmms_mmlongbench_score

DOCVQA_POST = "\nAnswer the question using a single word or phrase."
MMLB_POST = "\nAnswer with a single word or phrase. If the answer is not in the document, answer 'Not answerable'."
DOC_HASH = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"

# (questionId, question, answers, response as the model wrote it, lmms-eval anls, docvqa profile anls)
DOCVQA = [
    ("49153", "What is the date mentioned in the letter?", ["January 8, 1993", "january 8, 1993"], "January 8, 1993", 1.0, 1.0),
    # distance 2 of 4: exactly 0.5, kept by lmms-eval (`< 0.5` is zeroed); the benchmark's rule zeroes it
    ("24580", "What is the code?", ["abcd"], "abxy", 0.5, 0.0),
    # the response is stripped before scoring: "abcxyz" against "abcdef", distance 3 of 6 = 0.5, kept
    ("57349", "Which word is printed?", ["abcdef"], " abcxyz ", 0.5, 0.0),
    # an empty answer: distance 6 of 6, 1 - 1 = 0 -> the int 0
    ("57350", "What is the short date?", ["1/8/93"], "", 0, 0.0),
]
# hand: lmms-eval "anls,none" = (1 + 0.5 + 0.5 + 0) / 4 = 0.5; the docvqa profile: (1 + 0 + 0 + 0) / 4 = 0.25


def _repr_list(values):
    return str(list(values))  # what `str(doc_to_target(doc))` writes: a Python repr


def docvqa_line(version: str, doc_id: int, case) -> dict:
    qid, question, answers, response, anls, _ = case
    prompt = question + DOCVQA_POST
    if version in ("0.2.3", "0.2.4"):
        # up to v0.2.4 a list target took the "multiple targets" path: 1.0 when any answer scores
        anls = 1.0 if anls else 0.0
    if version == "0.2.3":
        return {"doc_id": doc_id, "target": _repr_list(answers),
                "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"max_new_tokens": 32}}},
                "resps": [[response]], "filtered_resps": [response], "doc_hash": DOC_HASH, "anls": anls}
    if version in ("0.3.5", "0.2.4"):
        doc = {"questionId": qid, "question": question, "question_types": ["layout"], "docId": 14281,
               "ucsf_document_id": "fnbx0223", "ucsf_document_page_no": "2", "answers": answers, "data_split": "val"}
        return {"doc_id": doc_id, "doc": doc, "target": _repr_list(answers),
                "arguments": {"0": "max_new_tokens", "1": "temperature"}, "resps": [[response]],
                "filtered_resps": [response], "doc_hash": DOC_HASH, "prompt_hash": "c5", "target_hash": "67",
                "anls": anls, "input": prompt}
    line = {"doc_id": doc_id, "target": _repr_list(answers)}
    if version == "0.7" and doc_id == 0:
        line["resps"] = "The user asks about a date.\n</think>\n\n" + response
    line.update({"filtered_resps": response if version == "0.7" else [response],
                 **({"token_counts": [{"output_tokens": 12}]} if version == "0.7" else {}),
                 "doc_hash": DOC_HASH, "anls": anls, "input": prompt})
    return line


def results_json(task: str, metrics: dict, *, model_name: str = "Qwen/Qwen3-VL-8B", version: str = "0.7.2") -> dict:
    return {
        "results": {task: {"alias": task, **{k: v for k, v in metrics.items()},
                           **{k.replace(",", "_stderr,"): "N/A" for k in metrics}}},
        "group_subtasks": {task: []}, "configs": {}, "versions": {task: "Yaml"}, "n-shot": {task: 0},
        "higher_is_better": {}, "n-samples": {task: {"original": 5349, "effective": 4}},
        "config": {"model": "qwen3_vl", "model_args": f"pretrained={model_name},max_pixels=12845056",
                   "batch_size": "1", "limit": None},
        "git_hash": "75571cf", "lmms_eval_version": version, "date": "20260801_101500",
        "model_name": model_name, "model_name_sanitized": model_name.replace("/", "__"),
    }


def write_jsonl(path: Path, lines: list[dict], *, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines) + tail
    path.write_text(text, encoding="utf-8")
    return path


def write_run(folder: Path, date: str, task: str, lines: list[dict], metrics: dict | None, **kw) -> Path:
    samples = write_jsonl(folder / f"{date}_samples_{task}.jsonl", lines)
    if metrics is not None:
        (folder / f"{date}_results.json").write_text(json.dumps(results_json(task, metrics, **kw), indent=2), "utf-8")
    return samples


# ----------------------------------------------------------------------------- the rules by hand


@pytest.mark.parametrize("case", DOCVQA, ids=[c[0] for c in DOCVQA])
def test_lmms_anls_by_hand(case):
    _, _, answers, response, expected, _ = case
    got = lmms_anls(answers, response.strip())
    assert got == expected and type(got) is type(expected)  # the int 0 below the threshold


def test_lmms_anls_denominator_is_the_raw_length():
    # spaces inside are collapsed for the distance but counted in the length: "a  b" vs "a b" has
    # distance 0 after collapsing -> 1.0; "ab" vs "a  bc": collapsed "a bc" distance 2, length 5 -> 0.6
    assert lmms_anls(["a  b"], "a b") == 1.0
    assert lmms_anls(["ab"], "a  bc") == pytest.approx(1 - 2 / 5)


def test_lmms_anls_up_to_v024_is_any_answer():
    from scoring.harness_rules import lmms_anls_any

    assert lmms_anls_any(["abcd"], "abxy") == 1.0  # 0.5 counts as "true"
    assert lmms_anls_any(["zzzz", "abcd"], "abcx") == 1.0 and lmms_anls_any(["zzzz"], "abcx") == 0.0


# (answer, format, response, lmms-eval score, MMLongBench-Doc's own eval_score)
MMLB = [
    ("63", "Int", "63 million", 1.0, 0.0),  # lmms-eval reads the first number; the benchmark int(float()) fails
    ("Not answerable", "None", "Not answerable.", 0.0, 1 - 1 / 15),  # exact text needed; the benchmark's ANLS 14/15
    ("Paris", "Str", "paris", 1.0, 1.0),
    ("['a', 'b']", "List", "['b', 'a']", 1.0, 1.0),  # literal lists, sorted
    ("0.25", "Float", "25%", 1.0, 1.0),  # 25 matches the gold x 100
]


@pytest.mark.parametrize("case", MMLB, ids=[c[0] for c in MMLB])
def test_lmms_mmlongbench_score_by_hand(case):
    answer, fmt, response, lmms, _ = case
    assert lmms_mmlongbench_score(answer, response, fmt) == lmms


def test_lmms_mmlongbench_f1_by_hand():
    # recall over gold-answerable (4 rows, all right) = 1; precision over predicted-answerable: every
    # response, "Not answerable." included (it is not exactly "not answerable") = 4/5
    items = [(1.0, True, True), (0.0, False, True), (1.0, True, True), (1.0, True, True), (1.0, True, True)]
    assert lmms_mmlongbench_f1(items) == pytest.approx(2 * 1.0 * 0.8 / 1.8)
    assert lmms_mmlongbench_f1([(0.0, True, False)]) == 0.0  # both 0: 0, no division


# ----------------------------------------------------------------------------- every line format


@pytest.mark.parametrize("version", ["0.2.3", "0.2.4", "0.3.5", "0.4", "0.7"])
def test_every_line_format_reproduces_the_reported_anls(tmp_path, version):
    old = version in ("0.2.3", "0.2.4")  # per line: 1 when any answer's ANLS is at least 0.5
    reported = 0.75 if old else 0.5  # (1 + 1 + 1 + 0) / 4 against (1 + 0.5 + 0.5 + 0) / 4
    out = tmp_path / "out" / "Qwen__Qwen3-VL-8B"
    lines = [docvqa_line(version, k, c) for k, c in enumerate(DOCVQA)]
    lines = [lines[k] for k in (0, 2, 1, 3)]  # two processes: doc_ids 0,2 then 1,3
    if version == "0.2.3":
        date = "2024-09-01T12-00-00.123456"
        write_jsonl(out / f"samples_docvqa_val_{date}.jsonl", lines)
        (out / f"results_{date}.json").write_text(json.dumps(results_json("docvqa_val", {"anls,none": reported})), "utf-8")
    else:
        write_run(out, "20260801_101500", "docvqa_val", lines, {"anls,none": reported})
    src = open_source(tmp_path / "out")
    assert src is not None and src.format == "lmms-eval"
    assert [p.kind for p in src.problems] == (["runs of old lmms-eval versions"] if old else [])
    (run,) = src.runs
    assert run.task == "docvqa_val" and run.model == "Qwen/Qwen3-VL-8B" and run.reported == {"anls,none": reported}
    assert run.extra["anls_rule"] == ("any" if old else "min")
    questions = {q.qid: q for q in src.gold["docvqa_val"]}
    r = rescore(run, questions, "lmms-eval")
    assert r.recomputed == {"anls,none": reported}
    assert [x.score for x in r.rows] == [x.official for x in r.rows] == ([1.0, 1.0, 1.0, 0.0] if old else [1.0, 0.5, 0.5, 0.0])
    b = rescore(run, questions, "docvqa")
    assert b.recomputed == {"anls,none": 0.25}
    if version in ("0.3.5", "0.2.4"):  # the doc kept: the ids and the page image are known
        assert sorted(questions) == ["24580", "49153", "57349", "57350"]
        assert src.documents == ["fnbx0223_2.png"]
    else:  # only doc_id
        assert sorted(questions) == ["0", "1", "2", "3"]
        assert questions["0"].question == DOCVQA[0][1]
    if version == "0.7":
        assert run.rows[0].response.startswith("The user asks")  # resps kept where it differs


def test_target_is_read_as_a_python_literal_never_run(tmp_path):
    # double quotes when an answer holds a quote; a target that is code is not run
    lines = [docvqa_line("0.4", 0, ("1", "Whose?", ["It's", "its"], "it's", 1.0, 1.0)),
             {**docvqa_line("0.4", 1, ("2", "Q?", ["x"], "x", 1.0, 1.0)), "target": "__import__('os').system('exit 3')"}]
    write_run(tmp_path / "m", "20260801_101500", "docvqa_val", lines, {"anls,none": 1.0})
    src = open_source(tmp_path / "m")
    qs = {q.qid: q for q in src.gold["docvqa_val"]}
    assert qs["0"].answers == ("It's", "its")
    assert qs["1"].answers == ("__import__('os').system('exit 3')",)  # the text itself, one answer
    assert any(p.line == 2 and p.field == "target" for p in src.problems)


def test_mmlongbench_doc_lines_and_aggregates(tmp_path):
    lines = []
    for k, (answer, _fmt, response, score, _) in enumerate(MMLB):
        lines.append({"doc_id": k, "target": answer, "filtered_resps": response, "doc_hash": DOC_HASH,
                      "mmlongbench_doc_acc": {"score": score},
                      "mmlongbench_doc_f1": {"score": score, "gt_answerable": answer != "Not answerable",
                                             "pred_answerable": True},
                      "input": f"  Question {k}?  " + MMLB_POST})
    acc = (1.0 + 0.0 + 1.0 + 1.0 + 1.0) / 5
    f1 = 2.0 * 1.0 * 0.8 / (1.0 + 0.8)
    write_run(tmp_path / "o" / "m", "20260801_101500", "mmlongbench_doc", lines,
              {"mmlongbench_doc_acc,none": acc, "mmlongbench_doc_f1,none": f1})
    src = open_source(tmp_path / "o")
    (run,) = src.runs
    qs = {q.qid: q for q in src.gold["mmlongbench_doc"]}
    assert qs["0"].question == "Question 0?" and [qs[str(k)].answer_format for k in range(5)] == \
        ["Int", "None", "Str", "List", "Float"]  # inferred from the answer text (the lines do not carry it)
    r = rescore(run, qs, "lmms-eval")
    assert r.recomputed == run.reported == {"mmlongbench_doc_acc,none": 0.8, "mmlongbench_doc_f1,none": f1}
    assert all(x.score == x.official for x in r.rows)
    # the benchmark's evaluator: 63 million -> 0, "Not answerable." -> 14/15 (ANLS)
    b = rescore(run, qs, "mmlongbench-doc")
    assert [x.score for x in b.rows] == [0.0, 1 - 1 / 15, 1.0, 1.0, 1.0]
    assert b.recomputed["mmlongbench_doc_acc,none"] == pytest.approx((3 + 14 / 15) / 5)
    # the benchmark's F1: recall 3/4 over answerable gold; precision 3/5 over "not exactly Not answerable" preds
    assert b.recomputed["mmlongbench_doc_f1,none"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert len(b.changed) == 2
    assert [x.reason for x in b.changed] == ["lmms-eval reads the first number: `63 million` → 63",
                                             "lmms-eval needs exactly `not answerable` after cleaning: `Not answerable.`"]
    from scoring.harness import sensitivity

    sens = sensitivity(b)
    assert (sens["count"], sens["changed"], sens["up"], sens["down"]) == (5, 2, 1, 1)
    assert sens["by_slice"]["Int"] == {"count": 1, "changed": 1, "up": 0, "down": 1}
    assert sens["by_slice"]["None"] == {"count": 1, "changed": 1, "up": 1, "down": 0}


def test_gold_files_give_the_real_format(tmp_path):
    """A Str answer that reads as a number: without samples.json lmms-eval's lines say nothing of its
    format (inferred Int); with it, the Str rule applies (exact match for a number-like gold)."""
    samples = [{"doc_id": "a.pdf", "doc_type": "Report", "question": "Which year?", "answer": "2019", "answer_format": "Str",
                "evidence_pages": "[1]", "evidence_sources": "['Pure-text (Plain-text)']"}]
    (tmp_path / "samples.json").write_text(json.dumps(samples), "utf-8")
    line = {"doc_id": 0, "target": "2019", "filtered_resps": "2019 year", "mmlongbench_doc_acc": {"score": 0.0},
            "mmlongbench_doc_f1": {"score": 0.0, "gt_answerable": True, "pred_answerable": True},
            "input": "Which year?" + MMLB_POST}
    write_run(tmp_path / "o", "20260801_101500", "mmlongbench_doc", [line],
              {"mmlongbench_doc_acc,none": 0.0, "mmlongbench_doc_f1,none": 0.0})
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(tmp_path / "o"), "--profile", "lmms-eval", "--output", str(report)]) == 0
    assert json.loads(report.read_text())["recomputed"]["mmlongbench_doc_acc,none"] == 1.0  # Int: first number 2019
    assert cli.main(["--predictions", str(tmp_path / "o"), "--gold-files", str(tmp_path / "samples.json"),
                     "--profile", "lmms-eval", "--output", str(report)]) == 0
    rep = json.loads(report.read_text())
    assert rep["recomputed"] == rep["reported"] == {"mmlongbench_doc_acc,none": 0.0, "mmlongbench_doc_f1,none": 0.0}
    assert rep["documents"] == ["a.pdf"]


# ----------------------------------------------------------------------------- layouts and bad input


def test_paths_accepted_output_model_folder_file_and_flat(tmp_path):
    lines = [docvqa_line("0.7", k, c) for k, c in enumerate(DOCVQA)]
    samples = write_run(tmp_path / "out" / "Qwen__Qwen3-VL-8B", "20260801_101500", "docvqa_val", lines, {"anls,none": 0.5})
    # files straight in --output_path (the model name was not parsed: v0.2.4-v0.4.1 with model_version=)
    write_run(tmp_path / "out", "20260802_080000", "infovqa_val", lines[:2], {"anls,none": 0.75}, model_name="")
    for path, n in ((tmp_path / "out", 2), (tmp_path / "out" / "Qwen__Qwen3-VL-8B", 1), (samples, 1)):
        assert detect(path) is lmms_eval
        src = open_source(path)
        assert len(src.runs) == n, path
    src = open_source(tmp_path / "out")
    names = sorted(r.name for r in src.runs)
    assert names == ["Qwen/Qwen3-VL-8B/docvqa_val", "out/infovqa_val"]
    single = open_source(samples)
    assert single.runs[0].reported == {"anls,none": 0.5}  # the results file beside it is read


def test_bad_input_each_named_rest_loaded(tmp_path):
    out = tmp_path / "out" / "m"
    good = [docvqa_line("0.4", k, c) for k, c in enumerate(DOCVQA)]
    text = json.dumps(good[0]) + "\n" + "{not json\n" + json.dumps(good[1]) + "\n" + json.dumps(good[1]) + "\n" + \
        json.dumps(good[2]) + "\n" + "[1, 2]\n" + json.dumps({**good[3], "doc_id": "3"}) + "\n" + json.dumps(good[3])[:40]
    out.mkdir(parents=True)
    (out / "20260801_101500_samples_docvqa_val.jsonl").write_text(text, "utf-8")
    (out / "20260801_101500_results.json").write_text(json.dumps(results_json("docvqa_val", {"anls,none": 0.5})), "utf-8")
    # a results file without samples, samples without results, an unknown task, a results file that is not JSON
    (out / "20260803_000000_results.json").write_text(json.dumps(results_json("docvqa_val", {"anls,none": 0.9})), "utf-8")
    write_jsonl(out / "20260804_000000_samples_docvqa_val.jsonl", good[:1])
    write_jsonl(out / "20260805_000000_samples_chartqa.jsonl", [{"doc_id": 0, "relaxed_overall": 1.0}])
    (out / "20260806_000000_results.json").write_text("{oops", "utf-8")
    write_jsonl(out / "20260806_000000_samples_docvqa_val.jsonl", good[:1])
    src = open_source(tmp_path / "out")
    where = {(p.file.rsplit("/", 1)[-1], p.line, p.kind or p.expected) for p in src.problems}
    f = "20260801_101500_samples_docvqa_val.jsonl"
    assert (f, 2, "lines that are not JSON") in where
    assert (f, 4, "duplicate lines") in where
    assert (f, 6, "a JSON object") in where
    assert any(p.line == 7 and p.field == "doc_id" for p in src.problems)
    assert (f, 8, "partial lines") in where
    assert ("20260803_000000_results.json", None, "results without samples") in where
    assert ("20260804_000000_samples_docvqa_val.jsonl", None, "samples without results") in where
    assert ("20260805_000000_samples_chartqa.jsonl", None, "unknown tasks") in where
    assert any(p.file.endswith("20260806_000000_results.json") and p.severity == "error" for p in src.problems)
    main = next(r for r in src.runs if r.date == "20260801_101500")
    assert [x.raw["doc_id"] for x in main.rows] == [0, 1, 2]  # the rest loaded
    assert len(src.runs) == 3


def test_a_second_line_for_a_doc_id_is_the_next_filter(tmp_path):
    """Tasks with two filters log each doc once per filter (same doc_id, no filter named): the
    results keys give the filters in order."""
    first = [docvqa_line("0.4", k, c) for k, c in enumerate(DOCVQA[:2])]
    second = [{**x, "filtered_resps": ["abcd"], "anls": 1.0 if k == 1 else 0} for k, x in enumerate(first)]
    res = results_json("docvqa_val", {"anls,none": 0.75, "anls,take_first": 0.5})
    out = tmp_path / "m"
    write_jsonl(out / "20260801_101500_samples_docvqa_val.jsonl", first + second)
    (out / "20260801_101500_results.json").write_text(json.dumps(res), "utf-8")
    src = open_source(out)
    (run,) = src.runs
    assert run.filters == ("none", "take_first")
    r = rescore(run, {q.qid: q for q in src.gold["docvqa_val"]}, "lmms-eval")
    # filter 2: "abcd" vs "January 8, 1993" -> 0; vs "abcd" -> 1: mean 0.5; filter 1: (1 + 0.5) / 2
    assert r.recomputed == {"anls,none": 0.75, "anls,take_first": 0.5}


def test_a_doc_id_repeated_within_its_one_filter_is_named_and_not_scored(tmp_path):
    """One filter: a second (different) line for a doc_id is not a next filter but a second run
    appended to the file -- named at its line, and the first line's answer is the one scored.
    Mutants: the per-filter bound `k >= len(filters)` loosened to `>`, or the check dropped."""
    first = [docvqa_line("0.4", k, c) for k, c in enumerate(DOCVQA[:2])]
    again = {**first[0], "filtered_resps": ["something else"], "anls": 0}
    out = tmp_path / "m"
    samples = write_jsonl(out / "20260801_101500_samples_docvqa_val.jsonl", [*first, again])
    (out / "20260801_101500_results.json").write_text(json.dumps(results_json("docvqa_val", {"anls,none": 0.75})), "utf-8")
    src = open_source(out)
    (run,) = src.runs
    assert run.filters == ("none",)
    repeated = [p for p in src.problems if p.kind == "doc_ids seen again"]
    assert [(p.file.rsplit("/", 1)[-1], p.line, p.field, p.severity) for p in repeated] == [
        (samples.name, 3, "doc_id", "error")]
    assert [(x.raw["doc_id"], x.prediction) for x in run.rows] == [(0, "January 8, 1993"), (1, "abxy")]
    r = rescore(run, {q.qid: q for q in src.gold["docvqa_val"]}, "lmms-eval")
    assert r.recomputed == {"anls,none": 0.75}  # (1 + 0.5) / 2: the repeated line is not a third answer


def test_symlinks_leaving_the_folder_are_named_not_read(tmp_path):
    outside = tmp_path / "elsewhere"
    write_run(outside, "20260801_101500", "docvqa_val", [docvqa_line("0.4", 0, DOCVQA[0])], {"anls,none": 1.0})
    out = tmp_path / "out" / "m"
    out.mkdir(parents=True)
    (out / "20260801_101500_samples_docvqa_val.jsonl").symlink_to(outside / "20260801_101500_samples_docvqa_val.jsonl")
    (out / "20260802_000000_samples_docvqa_val.jsonl").symlink_to("/nonexistent/x.jsonl")
    src = lmms_eval.load(tmp_path / "out")
    assert src.runs == []
    kinds = {p.kind for p in src.problems}
    assert {"links leaving the folder", "dangling links"} <= kinds


# ----------------------------------------------------------------------------- the command line


def test_cli_round_trip_own_profile_and_the_benchmarks(tmp_path, capsys):
    lines = [docvqa_line("0.7", k, c) for k, c in enumerate(DOCVQA)]
    write_run(tmp_path / "out" / "m", "20260801_101500", "docvqa_val", lines, {"anls,none": 0.5})
    report, table = tmp_path / "r.json", tmp_path / "q.csv"
    code = cli.main(["--predictions", str(tmp_path / "out"), "--profile", "lmms-eval", "--output", str(report),
                     "--per-question-csv", str(table)])
    assert code == 0
    rep = json.loads(report.read_text())
    assert rep["reported"] == rep["recomputed"] == {"anls,none": 0.5}
    assert rep["signature"].startswith("profile:lmms-eval|")
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["question_id"] for r in rows] == ["0", "1", "2", "3"]
    assert all(r["score"] == r["official_score"] for r in rows)
    assert [float(r["official_score"]) for r in rows] == [1.0, 0.5, 0.5, 0.0]
    # without --profile: the harness's own; under docvqa: the benchmark's rule
    assert cli.main(["--predictions", str(tmp_path / "out"), "--output", str(report)]) == 0
    assert json.loads(report.read_text())["profile"] == "lmms-eval"
    assert cli.main(["--predictions", str(tmp_path / "out"), "--profile", "docvqa", "--output", str(report),
                     "--per-question-csv", str(table)]) == 0
    rep = json.loads(report.read_text())
    assert rep["recomputed"] == {"anls,none": 0.25} and rep["reported"] == {"anls,none": 0.5}
    assert rep["runs"][0]["changed"] == 2
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["score"] for r in rows] == ["1.0", "0.0", "0.0", "0.0"]
    assert rep["runs"][0]["sensitivity"]["down"] == 2 and [r["reason"] for r in rows][:3] == [
        "", "a distance of exactly half the length: lmms-eval keeps 0.5, the benchmark's rule gives 0",
        "a distance of exactly half the length: lmms-eval keeps 0.5, the benchmark's rule gives 0"]


def test_cli_says_what_it_cannot_read(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["--predictions", str(tmp_path / "empty"), "--profile", "lmms-eval"]) == 1
    assert "ERROR:" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the sample's harness folder

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"


def test_sample_harness_folder_is_regenerated_byte_identical_and_reproduced(tmp_path):
    import sys

    sys.path.insert(0, str(SAMPLE))
    try:
        import _harness
    finally:
        sys.path.remove(str(SAMPLE))
    fresh = _harness.build(tmp_path)
    committed = sorted(p.relative_to(SAMPLE / "harness") for p in (SAMPLE / "harness").rglob("*") if p.is_file())
    assert committed == sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert [str(p) for p in committed if (SAMPLE / "harness" / p).read_bytes() != (fresh / p).read_bytes()] == []
    src = open_source(SAMPLE / "harness" / "lmms-eval")
    (run,) = src.runs
    qs = {q.qid: q for q in src.gold["mmlongbench_doc"]}
    r = rescore(run, qs, "lmms-eval")
    assert len(r.rows) == 41 and r.recomputed == run.reported and not r.changed
    # the benchmark's evaluator with samples.json: `7,310` (Int) and `96.4` for `96.4 million` (Float) lose
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(SAMPLE / "harness" / "lmms-eval"), "--profile", "mmlongbench-doc",
                     "--gold-files", str(SAMPLE / "mmlongbench" / "data" / "samples.json"), "--output", str(report)]) == 0
    rows = json.loads(report.read_text())["runs"][0]["per_question"]
    assert [(x["question_id"], x["prediction"], x["official_score"], x["score"]) for x in rows
            if x["score"] != x["official_score"]] == [("0", "7,310", 1.0, 0.0), ("13", "96.4", 1.0, 0.0)]


# ----------------------------------------------------------------------------- hostile text never raises

TEXT = st.text(alphabet=st.sampled_from(list("0123456789.,-+%$()[]'\" aZ\t\nßnotanswerable")), max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(answer=TEXT, pred=TEXT, fmt=st.sampled_from(["Int", "Float", "Str", "List", "None", "", "weird"]))
def test_the_rules_never_raise_on_any_text(answer, pred, fmt):
    from scoring.harness_rules import vlm_mmlongbench_score

    assert 0.0 <= lmms_mmlongbench_score(answer, pred, fmt) <= 1.0
    assert 0.0 <= vlm_mmlongbench_score(answer, pred, fmt)[0] <= 1.0
    assert 0.0 <= lmms_anls([answer], pred) <= 1.0


def test_huge_numbers_and_parentheses_are_bounded():
    # a 400-digit number is no float: lmms-eval's int() would raise; here it scores 0
    assert lmms_mmlongbench_score("1" * 400, "1" * 400, "Int") == 0.0
    # the parenthesis rule is one pass: 200,000 unmatched "(" is read, not backtracked over
    assert lmms_mmlongbench_score("a", "(" * 200_000, "Str") == 0.0
    # two long different texts: no edit distance computed (the project's 20,000-character bound)
    assert lmms_anls(["x" * 30_000], "y" * 30_000) == 0 and lmms_anls(["x" * 30_000], "x" * 30_000) == 1.0


def test_gold_files_join_docvqa_and_name_a_task_of_another_benchmark(tmp_path):
    """v0.4 lines carry no questionId: joined to a DocVQA-style gold by (question, answers); a
    mmlongbench_doc run beside it is named as not this benchmark and keeps its own gold."""
    lines = [docvqa_line("0.4", k, c) for k, c in enumerate(DOCVQA)]
    write_run(tmp_path / "o" / "m", "20260801_101500", "docvqa_val", lines, {"anls,none": 0.5})
    mm_line = {"doc_id": 0, "target": "Paris", "filtered_resps": "Paris", "mmlongbench_doc_acc": {"score": 1.0},
               "mmlongbench_doc_f1": {"score": 1.0, "gt_answerable": True, "pred_answerable": True},
               "input": "Where?" + MMLB_POST}
    write_run(tmp_path / "o" / "m", "20260802_101500", "mmlongbench_doc", [mm_line],
              {"mmlongbench_doc_acc,none": 1.0, "mmlongbench_doc_f1,none": 1.0})
    gold = tmp_path / "val.jsonl"
    gold.write_text("".join(json.dumps({"questionId": qid, "question": q, "answers": a, "docId": 7,
                                        "image": f"documents/page{qid}.png"}) + "\n"
                            for qid, q, a, *_ in DOCVQA[:3]), "utf-8")
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(tmp_path / "o"), "--gold-files", str(gold), "--output", str(report)]) == 0
    rep = json.loads(report.read_text())
    assert any("mmlongbench_doc: not this benchmark" in p for p in rep["problems"])
    assert sum("questions not in the benchmark's gold" in p or "3: expected a gold question" in p for p in rep["problems"]) == 1
    assert {r["task"]: r["recomputed"] == r["reported"] for r in rep["runs"]} == {"docvqa_val": True, "mmlongbench_doc": True}
    assert rep["documents"] == ["documents/page24580.png", "documents/page49153.png", "documents/page57349.png"]
    # v0.3.5 lines carry questionId: joined by it even where the answers differ, and the benchmark's
    # rule scores the benchmark's own answers (the gold says "abxy" where lmms-lab's copy says "abcd")
    write_run(tmp_path / "o2" / "m", "20260801_101500", "docvqa_val",
              [docvqa_line("0.3.5", k, c) for k, c in enumerate(DOCVQA)], {"anls,none": 0.5})
    gold.write_text(gold.read_text().replace('["abcd"]', '["abxy"]'), "utf-8")
    assert cli.main(["--predictions", str(tmp_path / "o2"), "--gold-files", str(gold), "--profile", "docvqa",
                     "--output", str(report)]) == 0
    rows = json.loads(report.read_text())["runs"][0]["per_question"]
    assert [x["score"] for x in rows] == [1.0, 1.0, 0.0, 0.0]


def test_report_survives_a_value_beyond_64_bits(tmp_path):
    lines = [docvqa_line("0.4", k, c) for k, c in enumerate(DOCVQA)]
    write_run(tmp_path / "o" / "m", "20260801_101500", "docvqa_val", lines, {"anls,none": 10**30})
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(tmp_path / "o"), "--output", str(report)]) == 0
    rep = json.loads(report.read_text())
    assert rep["reported"] == {"anls,none": 10**30} and rep["recomputed"] == {"anls,none": 0.5}
    assert rep["runs"][0]["agree"] == {"anls,none": False}

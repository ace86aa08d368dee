"""Issue 12, reliability: one regression test per fault the trial found, in the scoring core and
the command line. (Workspace, documents and paths: tests/test_reliability_workspace.py; fuzzing:
tests/test_fuzz_*.py; untrusted text in the browser: tests/test_browser_hostile.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions
from scoring.metrics import answer_type, effective_prediction, judge
from scoring.numbers import read_number, release_number
from scoring.problems import ERROR, WARNING, Omitted, Problem, summarise
from scoring.profiles import get_profile
from scoring.registry import is_success_status

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "fixtures" / "bad"
CLI_GOLD = ROOT / "tests" / "fixtures" / "cli" / "gold_single.jsonl"


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scoring", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def gold_file(tmp_path: Path, rows: list[dict], name: str = "gold.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def numeric_gold(qid: str, value: str, fmt: str = "Int") -> dict:
    return {"question_id": qid, "question": "How many?", "answer": {"value": value, "format": fmt,
                                                                   "verification_rule": "numeric_tolerance"}}


# ----------------------------------------------------------------------------- the number reader


@pytest.mark.parametrize("text", ["1e400", "2 x 10^400", "1e309", "-1e309", "1" * 400, "10^400", "9" * 400 + "/1",
                                  "1/" + "9" * 400, "2.5e" + "9" * 5000, "10^" + "9" * 5000])
def test_huge_values_read_as_no_number(text):
    assert read_number(text) is None


def test_huge_but_finite_values_are_read_as_their_decimal():
    assert read_number("0.001e310") == (1e307, "0.001e310")
    assert read_number("1e-400") == (0.0, "1e-400")  # underflow is the float of the text, as for any decimal


@pytest.mark.parametrize("pred,gold", [("1e400", "1e309"), ("0.001e310", "1e309"), ("2 x 10^400", "5"), ("5", "1e309")])
def test_hostile_numbers_never_raise_and_text_rules_decide(pred, gold):
    j = judge(pred, [gold], "Float", "numeric_tolerance", profile="xldocbench")
    assert j.accuracy in (0.0, 1.0)
    assert j.decided_by in ("containment", "similarity", "no_match", "numeric_tolerance")
    assert j.trace() and j.reason  # the explanation is computed without raising as well


def test_a_400_digit_answer_identical_to_its_gold_passes():
    digits = "7" * 400
    j = judge(digits, [digits], "Int", "numeric_tolerance", profile="xldocbench")
    assert (j.accuracy, j.token_f1, j.anls) == (1.0, 1.0, 1.0)
    assert j.decided_by == "containment"  # no number: the entity rule decides
    assert "no number read" in " ".join(j.notes)


def test_cli_survives_a_hostile_number(tmp_path):
    gold = gold_file(tmp_path, [numeric_gold("q1", "1e309", "Float"), numeric_gold("q2", "12")])
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"question_id": "q1", "prediction": "1e400"}\n{"question_id": "q2", "prediction": "2 x 10^400"}\n')
    out = tmp_path / "r.json"
    proc = cli("--gold-files", gold, "--predictions", preds, "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(out.read_text())
    assert report["evaluated_count"] == 2 and [r["accuracy"] for r in report["per_question"]] == [0.0, 0.0]


@pytest.mark.parametrize("sci,dec", [("2.1e-1", "0.21"), ("1.2e-3", "0.0012"), ("3.3e1", "33"), (".5e2", "50"),
                                     ("2.1 x 10^-1", "0.21"), ("2.1*10^-1", "0.21")])
def test_scientific_notation_reads_like_the_same_decimal(sci, dec):
    assert read_number(sci)[0] == read_number(dec)[0] == float(dec)


def test_scientific_and_decimal_score_the_same_against_the_gold():
    # 0.21 vs 0.2 is a relative error of 0.04999...; reading 2.1e-1 as 2.1 * 10.0**-1 gave 0.0500...04 and failed
    a = judge("2.1e-1", ["0.2"], "Float", "numeric_tolerance", profile="xldocbench")
    b = judge("0.21", ["0.2"], "Float", "numeric_tolerance", profile="xldocbench")
    assert a.accuracy == b.accuracy == 1.0 and a.relative_error == b.relative_error


@pytest.mark.parametrize("text,value", [("approximately-336.9", -336.9), ("x-5", -5.0), ("covid-19", -19.0),
                                        ("approx.5", 5.0), ("e.g. .5", 0.5), ("1..5", 1.0), ("about+4", 4.0),
                                        ("abc\u22127", -7.0), ("x-.5", -0.5)])
def test_a_sign_glued_to_a_word_is_a_sign(text, value):
    assert read_number(text)[0] == value


def test_glued_sign_scores_as_the_release_reads_it():
    for profile in ("xldocbench", "xldocbench-1519"):
        assert judge("approximately-336.9", ["-336.9"], "Float", "numeric_tolerance", profile=profile).accuracy == 1.0
    assert release_number("approximately-3369")[0] == -3369.0  # the release reader, for comparison


# ----------------------------------------------------------------------------- statuses, ANSWER:, rules


@pytest.mark.parametrize("status", ["success ", " OK", " ", "", "\tcompleted\n", "Success", None])
def test_statuses_are_trimmed(status):
    assert is_success_status(status)
    assert judge("616", ["616"], "Int", "numeric_tolerance", status=status, profile="xldocbench").accuracy == 1.0


@pytest.mark.parametrize("status", ["error", " failed ", "context_overflow", "0"])
def test_failed_statuses_still_fail(status):
    assert not is_success_status(status)
    assert judge("616", ["616"], "Int", status=status, profile="xldocbench").accuracy == 0.0


def test_answer_line_does_not_cross_line_ends():
    docvqa = get_profile("docvqa")
    assert effective_prediction("ANSWER:\nANSWER: x", "success", docvqa) == "x"
    assert effective_prediction("ANSWER:   \nsomething", "success", docvqa) == ""
    assert judge("ANSWER:\nANSWER: x", ["x"], profile="docvqa").accuracy == 1.0


@pytest.mark.parametrize("rule,kind", [("numeric_tolerance", "numeric"), ("NUMERIC_TOLERANCE", "date"),
                                       ("Numeric_Tolerance", "date"), ("tolerance", "numeric"), ("Tolerance", "date")])
def test_verification_rule_is_compared_as_written(rule, kind):
    assert answer_type("Date", rule) == kind


# ----------------------------------------------------------------------------- answer_format under the release profile


def test_answer_format_row_and_label_follow_the_release():
    gold = load_gold(BAD / "gold_format_edge.jsonl").items
    run = evaluate(gold, [], profile="xldocbench-1519", workers=1)
    rows = {r["question_id"]: r["answer_format"] for r in run.report(lens=False)["per_question"]}
    # absent -> "Str"; null and "" as written; a non-object answer has no format -> "Str"
    assert rows == {"f1": "Str", "f2": None, "f3": "", "f4": "Int", "f5": "Date", "f6": "Str"}
    labels = run.breakdowns["answer_format"]
    assert {k: v["count"] for k, v in labels.items()} == {"Date": 1, "Int": 1, "unknown": 4}
    # the answer type still reads an absent, null or empty format as Str
    assert {q.qid: q.answer_format for q in gold}["f3"] == "Str"


# ----------------------------------------------------------------------------- the command line: no prediction


NO_PREDICTION = ["empty.jsonl", "whitespace_only.jsonl", "preds_binary.jsonl", "preds_unknown_ids.jsonl",
                 "preds_bare_string.json", "preds_bad.json"]


@pytest.mark.parametrize("name", NO_PREDICTION)
@pytest.mark.parametrize("profile", ["xldocbench", "xldocbench-1519"])
def test_a_file_without_predictions_is_an_error(tmp_path, name, profile):
    out = tmp_path / "r.json"
    proc = cli("--gold-files", CLI_GOLD, "--predictions", BAD / name, "--output", out, "--profile", profile)
    assert proc.returncode == 1
    assert f"ERROR: no prediction could be loaded from {BAD / name}" in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    assert not out.exists(), "no report of zeros"


def test_ignore_missing_that_leaves_nothing_is_an_error(tmp_path):
    proc = cli("--gold-files", CLI_GOLD, "--predictions", BAD / "preds_unknown_ids.jsonl", "--ignore-missing")
    assert proc.returncode == 1
    assert f"ERROR: no prediction could be loaded from {BAD / 'preds_unknown_ids.jsonl'}" in proc.stderr.splitlines()
    assert "none of the 2 prediction ids" in proc.stderr


def test_several_files_one_empty_the_others_still_written(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text('{"question_id": "adubench_single_000001", "prediction": "x"}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "out"
    proc = cli("--gold-files", CLI_GOLD, "--predictions", good, empty, "--output", out)
    assert proc.returncode == 1
    assert (out / "good.json").is_file() and not (out / "empty.json").exists()
    assert f"ERROR: no prediction could be loaded from {empty}" in proc.stderr.splitlines()


@pytest.mark.parametrize("name", ["preds_utf16.jsonl", "preds_utf16_nobom.jsonl", "preds_utf32.json"])
def test_utf16_and_utf32_files_are_read(name):
    res = load_predictions(BAD / name)
    assert [(p.qid, p.text) for p in res.items] == [("q1", "616"), ("q2", "Violetta Prigozhina")]
    assert [(p.severity, p.expected) for p in res.problems] == [(WARNING, "UTF-8 text")]
    assert "save the file as UTF-8" in res.problems[0].got


def test_utf16_gold_and_cli(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(b"\xff\xfe" + json.dumps(numeric_gold("q1", "616")).encode("utf-16-le") + "\n".encode("utf-16-le"))
    assert [q.qid for q in load_gold(gold).items] == ["q1"]
    proc = cli("--gold-files", gold, "--predictions", BAD / "preds_utf16.jsonl")
    assert proc.returncode == 0 and "Accuracy: 100.00%" in proc.stdout


@pytest.mark.parametrize("name,shape", [("preds_pretty.jsonl", "a list of 2"), ("preds_pretty_map.jsonl", "an object")])
def test_pretty_printed_json_in_a_jsonl_file_is_read_as_json(name, shape):
    res = load_predictions(BAD / name)
    assert [p.qid for p in res.items] == ["q1", "q2"]
    assert len(res.problems) == 1 and res.problems[0].severity == WARNING
    assert res.problems[0].got == f"one JSON document over several lines ({shape}); read as JSON"


def test_pretty_printed_gold_in_a_jsonl_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps([numeric_gold("q1", "1"), numeric_gold("q2", "2")], indent=2))
    res = load_gold(path)
    assert [q.qid for q in res.items] == ["q1", "q2"] and res.problems[0].severity == WARNING


def test_a_real_jsonl_file_starting_with_an_object_is_not_taken_for_pretty_json(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"question_id": "q1", "prediction": "a"}\n{"question_id": "q2", "prediction": "b"}\n')
    res = load_predictions(path)
    assert [p.qid for p in res.items] == ["q1", "q2"] and res.problems == []


@pytest.mark.parametrize("name,why", [("gold_deep_nesting.jsonl", "JSON nested too deeply to read"),
                                      ("gold_huge_int.jsonl", "invalid JSON (an integer of more than 4,300 digits)")])
def test_json_the_parser_refuses_is_one_problem_not_a_crash(name, why):
    res = load_gold(BAD / name)
    assert [q.qid for q in res.items] == ["q1", "q3"]
    assert [(p.line, p.severity, p.got) for p in res.problems] == [(2, ERROR, why)]


def test_lone_surrogates_are_replaced_and_reported(tmp_path):
    res = load_gold(BAD / "gold_lone_surrogate.jsonl")
    q = res.items[1]
    assert q.question == "bad \ufffd half" and q.gold_answer == "x\ufffd"
    assert [(p.line, p.severity) for p in res.problems] == [(2, WARNING)]
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"question_id": "q2", "prediction": "\\udbff tail"}\n')
    out = tmp_path / "r.json"
    proc = cli("--gold-files", BAD / "gold_lone_surrogate.jsonl", "--predictions", preds, "--output", out,
               "--per-question-csv", tmp_path / "r.csv")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["per_question"][1]["prediction"] == "\ufffd tail"


# ----------------------------------------------------------------------------- repeated problems


def test_problem_constructors():
    e = Problem.error("f.jsonl", 3, "answer", "an object", "a list")
    w = Problem.warning("f.jsonl", None, None, "UTF-8", "UTF-16", kind="files not in UTF-8")
    s = Problem.warning("f.jsonl", 4, "question_id", "an id", "x", skipped=True)
    assert (e.severity, e.skipped, w.severity, w.skipped, s.skipped) == (ERROR, True, WARNING, False, True)
    assert str(e) == "f.jsonl:3: error: answer: expected an object, got a list (skipped)"
    assert Problem("f", 1, None, "a", "b") == Problem.error("f", 1, None, "a", "b")  # positional still works


def test_summarise_keeps_twenty_of_a_kind_and_counts_the_rest():
    extras = [Problem.warning("run.jsonl", k, "question_id", "an id of a gold question", f"'x{k}'", skipped=True,
                              kind="extra predictions") for k in range(1, 206_401)]
    other = Problem.error("run.jsonl", 7, None, "a JSON value", "invalid JSON")
    out = summarise([*extras[:10], other, *extras[10:]])
    assert len(out) == 22
    assert out[:10] == extras[:10] and out[10] is other and out[11:21] == extras[10:20]
    assert isinstance(out[21], Omitted)
    assert str(out[21]) == "run.jsonl: warning: … and 206,380 more extra predictions"
    # kinds are counted apart, per file; a kind without a name is described by its field and expectation
    many = [Problem.error(f, k, "answer", "an object", "x") for f in ("a", "b") for k in range(25)]
    lines = [str(p) for p in summarise(many) if isinstance(p, Omitted)]
    assert lines == ["a: error: … and 5 more problems like these (answer: expected an object)",
                     "b: error: … and 5 more problems like these (answer: expected an object)"]
    assert summarise(many[:20]) == many[:20]


def test_omitted_line_on_the_data_page_format():
    from dashboard.data.frames import problem_line

    omitted = summarise([Problem.warning("r.jsonl", k, "q", "e", "g", kind="extra predictions") for k in range(30)])[-1]
    assert problem_line(omitted, lambda f: f"runs/{f}") == "runs/r.jsonl — warning: … and 10 more extra predictions"


def test_cli_summarises_repeated_problems(tmp_path):
    preds = tmp_path / "many_extra.jsonl"
    rows = [{"question_id": "adubench_single_000001", "prediction": "x"}]
    rows += [{"question_id": f"extra_{k}", "prediction": "x"} for k in range(1_000)]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = cli("--gold-files", CLI_GOLD, "--predictions", preds)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert sum("extra prediction, not scored" in line for line in lines) == 20
    assert f"{preds}: warning: … and 980 more extra predictions" in lines
    assert "Extra predictions: 1000" in proc.stdout


# ----------------------------------------------------------------------------- the GC pause in a serving process


def test_gc_pause_from_many_threads_always_ends_enabled():
    """Streamlit serves sessions from threads, and loading and scoring pause the cyclic garbage
    collector process-wide (scoring._gc.paused_gc). However the pauses of many sessions overlap,
    the collector is enabled again once the last one ends -- the pause never leaks into serving."""
    import gc
    import random
    import threading
    import time

    from scoring._gc import paused_gc

    assert gc.isenabled()
    start = threading.Barrier(16)
    seen_disabled = []

    def worker(seed: int) -> None:
        rnd = random.Random(seed)
        start.wait()
        for _ in range(30):
            with paused_gc():
                seen_disabled.append(not gc.isenabled())
                time.sleep(rnd.uniform(0, 0.002))
            time.sleep(rnd.uniform(0, 0.001))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled()
    assert any(seen_disabled)  # the pause did happen


def test_gc_pause_ends_enabled_when_the_body_raises():
    import gc

    from scoring._gc import paused_gc
    from scoring.loaders import load_gold

    with pytest.raises(ZeroDivisionError), paused_gc():
        raise ZeroDivisionError
    assert gc.isenabled()
    load_gold(BAD / "gold_deep_nesting.jsonl")  # a loader (decorated) on hostile input
    assert gc.isenabled()


# ----------------------------------------------------------------------------- Markdown autolinks


@pytest.mark.parametrize("text", ["https://evil.example/phish", "see www.evil.example/x", "mail me@evil.example",
                                  "HTTPS://EVIL.EXAMPLE", "ftp://evil.example/f", "[a](http://evil.example)"])
def test_md_escape_leaves_no_autolink(text):
    """Streamlit's Markdown (GFM) turns a bare `https://…`, `www.…` or `a@b.c` into a live link even
    when every punctuation mark is backslash-escaped (checked in headless Chromium: md_escape's
    output of these strings gave 6 <a href> elements). Escaped text must not hold such a sequence
    once the escapes are read."""
    import re

    from dashboard.core.escape import md_escape

    shown = re.sub(r"\\(.)", r"\1", md_escape(text))
    assert not re.search(r"(?i)(?:https?|ftp)://|\bwww\.|[\w.+-]@[a-z0-9-]", shown), shown

"""The LLM judge (scoring/judge): the five states read from what the harnesses' judges left, the
client against a small OpenAI-compatible server the tests start (tests/judge_kit.py: canned, malformed,
empty, slow and HTTP 500 replies), the cache, the re-judge's counts, kappa against a hand computation,
and `python -m scoring --judge-url ...` (the judge object, the CSV columns, the signature)."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pytest

from gate_kit import answer, mm_results, mm_samples, wrong
from judge_kit import (
    FakeJudge,
    analysis_of,
    empty,
    extraction,
    free_port,
    malformed,
    no_choices,
    reply,
    slow,
    status,
)
from scoring import cli
from scoring.judge import client as client_mod
from scoring.judge.agreement import agreement, by_decile, by_label, cohen_kappa, kappa_of_table
from scoring.judge.answers import JudgedAnswer, answers_of_run
from scoring.judge.cache import ReplyCache, cache_key
from scoring.judge.client import PARAMETERS, JudgeClient, JudgeError, api_root, shown_url
from scoring.judge.prompts import LONGDOCURL_STYLE, MMLONGBENCH_STYLE, find_prompt, read_prompt
from scoring.judge.rejudge import rejudge
from scoring.judge.verdicts import (
    CORRECT,
    INCORRECT,
    INVALID,
    JUDGE_ERROR,
    UNPARSABLE,
    count_states,
    from_longdocurl,
    from_mmlongbench,
    from_vlmevalkit,
    without_failures,
)

ROOT = Path(__file__).resolve().parent.parent
PROMPT = ("Read the question and the analysis and write the answer the analysis gives, in two lines:\n"
          "Extracted answer: [answer]\nAnswer format: [Integer, Float, String, List or None]\n"
          "If the analysis only says it cannot read the document, the answer is \"Fail to answer\".\n")
HANG = 60  # s: a hang guard, never a measurement (the slowest test here takes well under a second of waiting)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    """Retries without waiting (the backoff itself is checked with a recorder, `test_retries_...`)."""
    monkeypatch.setattr(client_mod, "BACKOFF_S", 0.0)


# ----------------------------------------------------------------------------- a clone of 20 questions

DOCS, PER = 4, 5


def right(d: int, k: int) -> bool:
    return k != 4


def clone(tmp_path: Path) -> tuple[Path, Path]:
    """A MMLongBench-Doc clone: 4 PDFs x 5 Int questions, a result file whose judge left Failed (d0k0),
    a reply without `Extracted answer:` (d0k1) and `Fail to answer` (d0k2); every k=4 answer wrong;
    our own extraction prompt in eval/."""
    samples_path, samples = mm_samples(tmp_path, DOCS, PER)
    res = mm_results(tmp_path, "model-x", samples, PER, right=right)
    rows = json.loads(res.read_text())
    rows[0]["extracted_res"] = "Failed"
    rows[1]["extracted_res"] = "The analysis names a number of units."
    rows[2]["extracted_res"] = "Extracted answer: Fail to answer\nAnswer format: String"
    res.write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "prompt_for_answer_extraction.md").write_text(PROMPT, encoding="utf-8")
    return samples_path, res


def response(d: int, k: int) -> str:
    return f"The table lists {answer(d, k) if right(d, k) else wrong(d, k)}."


def script(body: dict):
    """The judge: each response's number extracted, but doc 3 k0-k1 misread, d1k0 HTTP 500, d1k1 malformed,
    d1k2 an empty reply, d1k3 `Fail to answer`."""
    text = analysis_of(body)
    special = {response(1, 0): status(500), response(1, 1): malformed(), response(1, 2): empty(),
               response(1, 3): reply(extraction("Fail to answer")), response(3, 0): reply(extraction("999999", "Integer")),
               response(3, 1): reply(extraction("999999", "Integer"))}
    if text in special:
        return special[text]
    return reply(extraction(text.removeprefix("The table lists ").rstrip("."), "Integer"))


def score(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def mm_argv(samples: Path, res: Path, tmp_path: Path, *more: str) -> list[str]:
    return ["--profile", "mmlongbench-doc", "--gold-files", str(samples), "--predictions", str(res),
            "--output", str(tmp_path / "out" / "r.json"), "--per-question-csv", str(tmp_path / "out" / "r.csv"), *more]


def test_stored_verdicts_of_a_result_file_count_exactly(tmp_path, capsys):
    samples, res = clone(tmp_path)
    code, out, _ = score(mm_argv(samples, res, tmp_path), capsys)
    assert code == 0
    rep = json.loads((tmp_path / "out" / "r.json").read_text())
    # 17 extracted answers: k=4 wrong (4), the rest right (13); one each of judge_error, unparsable, invalid
    assert rep["judge"] == {"model": None, "prompt_sha256": None, "parameters": None,
                            "verdicts": {"correct": 13, "incorrect": 4, "unparsable": 1, "judge_error": 1, "invalid": 1},
                            "requests": 0, "cached": 0,
                            # judge x rules: (T,T) 13, (F,F) 4, (F,T) 1 (the invalid one's response is right):
                            # po 17/18, pe (13*14 + 5*4)/18^2 = 202/324, kappa = 104/122
                            "agreement": {"with_rules": {"agree": 17, "kappa": round(104 / 122, 6)}, "with_stored": None}}
    assert "Judge verdicts: correct 13, incorrect 4, unparsable 1, judge_error 1, invalid 1" in out
    header = next(csv.reader(open(tmp_path / "out" / "r.csv", encoding="utf-8")))
    assert "judge_verdict" not in header  # columns only with a re-judge


def test_rejudge_on_the_users_server(tmp_path, capsys):
    samples, res = clone(tmp_path)
    cache = tmp_path / "cache"
    with FakeJudge(script) as server:
        code, out, err = score(mm_argv(samples, res, tmp_path, "--judge-url", server.url, "--judge-model", "judge-7b",
                                       "--judge-cache", str(cache)), capsys)
        bodies = list(server.requests)
    assert code == 0, err
    rep = json.loads((tmp_path / "out" / "r.json").read_text())
    j = rep["judge"]
    assert j["model"] == "judge-7b"
    assert j["prompt_sha256"] == read_prompt(tmp_path / "eval" / "prompt_for_answer_extraction.md").sha256
    assert j["parameters"] == PARAMETERS
    assert j["verdicts"] == {"correct": 10, "incorrect": 6, "unparsable": 1, "judge_error": 2, "invalid": 1}
    assert (j["requests"], j["cached"]) == (20, 0)
    # judge x rules over the 17 answered: (T,T) 10, (F,F) 4, (F,T) 3 -> po 14/17, pe 158/289, kappa 80/131
    assert j["agreement"]["with_rules"] == {"agree": 14, "kappa": round(80 / 131, 6)}
    # both judges answered 15; 4 answers changed; states (stored rows): c->c 7, c->i 2, c->v 1, i->i 4, v->c 1:
    # po 11/15, pe (10*8 + 4*6 + 1*1)/225 -> kappa 0.5
    assert j["agreement"]["with_stored"] == {"changed": 4, "kappa": 0.5}
    assert rep["signature"].endswith("|judge:judge-7b|judge_prompt:sha256:" + j["prompt_sha256"][:16] + "|judge_params:"
                                     + json.dumps(PARAMETERS, sort_keys=True, separators=(",", ":")))
    with open(tmp_path / "out" / "r.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[-3:] == ["judge_verdict", "judge_answer", "judge_model"]
    by = {r["question_id"]: r for r in rows}
    assert [by[q]["judge_verdict"] for q in ("mmlongbench_0005", "mmlongbench_0006", "mmlongbench_0007", "mmlongbench_0008")] \
        == [JUDGE_ERROR, JUDGE_ERROR, UNPARSABLE, INVALID]
    assert by["mmlongbench_0015"]["judge_answer"] == "999999" and by["mmlongbench_0015"]["judge_verdict"] == INCORRECT
    assert {r["judge_model"] for r in rows} == {"judge-7b"}
    assert "judge_error: mmlongbench_0005: HTTP 500" in out and "judge_error: mmlongbench_0006: not a JSON reply" in out
    # every request: the prompt as the user's message, then Question/Analysis as the assistant's, every parameter sent
    for body in bodies:
        assert body["messages"][0] == {"role": "user", "content": PROMPT}
        assert body["messages"][1]["role"] == "assistant" and body["messages"][1]["content"].startswith("\n\nQuestion:How many")
        assert {k: body[k] for k in PARAMETERS} == PARAMETERS and body["model"] == "judge-7b" and body["stream"] is False
    # the 500 and the malformed reply were tried again at the same settings: 4 identical bodies each
    for bad in (response(1, 0), response(1, 1)):
        sent = [b for b in bodies if analysis_of(b) == bad]
        assert len(sent) == 1 + client_mod.RETRIES and all(b == sent[0] for b in sent)
    assert len(bodies) == 18 + 2 * (1 + client_mod.RETRIES)

    # a second run asks only about the answers that got no reply (the two judge_errors)
    with FakeJudge() as healthy:
        code, out, _ = score(mm_argv(samples, res, tmp_path, "--judge-url", healthy.url, "--judge-model", "judge-7b",
                                     "--judge-cache", str(cache)), capsys)
        asked = sorted(analysis_of(b) for b in healthy.requests)
    rep = json.loads((tmp_path / "out" / "r.json").read_text())
    assert (rep["judge"]["requests"], rep["judge"]["cached"]) == (2, 18)
    assert asked == sorted([response(1, 0), response(1, 1)])
    assert rep["judge"]["verdicts"]["judge_error"] == 0


def test_a_server_that_dies_mid_run(tmp_path, capsys):
    samples, res = clone(tmp_path)
    cache = tmp_path / "cache"
    with FakeJudge(die_after=7) as server:
        code, out, _ = score(mm_argv(samples, res, tmp_path, "--judge-url", server.url, "--judge-model", "judge-7b",
                                     "--judge-cache", str(cache)), capsys)
        judged = set(server.replied)
    assert code == 0
    rep = json.loads((tmp_path / "out" / "r.json").read_text())
    assert rep["judge"]["verdicts"]["judge_error"] == 13 and rep["judge"]["requests"] == 20
    with open(tmp_path / "out" / "r.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    failed = [r["question_id"] for r in rows if r["judge_verdict"] == JUDGE_ERROR]
    assert len(failed) == 13
    for qid in failed:  # each named, with why
        assert f"judge_error: {qid}: " in out
    # what was judged before it died is in the cache: a run on a live server asks only the 13 others
    with FakeJudge() as server2:
        score(mm_argv(samples, res, tmp_path, "--judge-url", server2.url, "--judge-model", "judge-7b",
                      "--judge-cache", str(cache)), capsys)
        asked = {analysis_of(b) for b in server2.requests}
    rep = json.loads((tmp_path / "out" / "r.json").read_text())
    assert (rep["judge"]["requests"], rep["judge"]["cached"]) == (13, 7)
    assert len(judged) == len(server.replied) == 7  # the responses are distinct: one per answer
    assert not asked & judged


def test_usage_errors(tmp_path, capsys):
    samples, res = clone(tmp_path)
    code, _, err = score(mm_argv(samples, res, tmp_path, "--judge-model", "m"), capsys)
    assert code == 2 and "--judge-model needs --judge-url" in err
    code, _, err = score(mm_argv(samples, res, tmp_path, "--judge-url", "http://127.0.0.1:9/v1"), capsys)
    assert code == 2 and "--judge-url needs --judge-model" in err
    # XL-DocBench's answers are scored by rules: the judge is refused in words, exit 2
    gold = ROOT / "sample_runs" / "qa_single_doc.jsonl"
    code, _, err = score(["--gold-files", str(gold), "--predictions", str(next((ROOT / "sample_runs" / "runs").glob("*.jsonl"))),
                          "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m"], capsys)
    assert code == 2 and "XL-DocBench" in err
    # no prompt beside the gold, none given: exit 1 with the way out
    (tmp_path / "eval" / "prompt_for_answer_extraction.md").unlink()
    with FakeJudge() as server:
        code, _, err = score(mm_argv(samples, res, tmp_path, "--judge-url", server.url, "--judge-model", "judge-7b"), capsys)
    assert code == 1 and "--judge-prompt FILE" in err
    # a model the server does not serve: named, with those it does
    (tmp_path / "p.md").write_text(PROMPT, encoding="utf-8")
    with FakeJudge(models=("qwen-a", "qwen-b")) as server:
        code, _, err = score(mm_argv(samples, res, tmp_path, "--judge-url", server.url, "--judge-model", "judge-7b",
                                     "--judge-prompt", str(tmp_path / "p.md")), capsys)
    assert code == 1 and "does not serve 'judge-7b'; it serves: qwen-a, qwen-b" in err


def test_credentials_never_shown(tmp_path, capsys, monkeypatch):
    samples, res = clone(tmp_path)
    monkeypatch.setenv("LENS_JUDGE_API_KEY", "sk-very-secret-key")
    port = free_port()  # nothing listens there
    url = f"http://alice:hunter2pass@127.0.0.1:{port}/v1?token=abcdef123"
    code, out, err = score(mm_argv(samples, res, tmp_path, "--judge-url", url, "--judge-model", "m"), capsys)
    assert code == 1 and f"127.0.0.1:{port}" in err
    for secret in ("sk-very-secret-key", "hunter2pass", "alice", "abcdef123"):
        assert secret not in out + err
    with FakeJudge() as server:  # the key is sent, as a bearer token; without one, the URL's password (basic)
        for key in ("sk-1", ""):
            c = JudgeClient(server.url.replace("http://", "http://alice:hunter2pass@"), "judge-7b", api_key=key)
            c.chat([{"role": "user", "content": "x"}], PARAMETERS)
        assert server.headers[0]["Authorization"] == "Bearer sk-1"
        assert server.headers[1]["Authorization"] == "Basic YWxpY2U6aHVudGVyMnBhc3M="  # alice:hunter2pass
    assert shown_url("https://u:p@host:8443/v1/?k=1#f") == "https://host:8443/v1/"
    assert api_root("http://h:8000") == "http://h:8000/v1" and api_root("http://h:8000/v1/chat/completions") == "http://h:8000/v1"


# ----------------------------------------------------------------------------- the client


def chat(c: JudgeClient):
    return c.chat([{"role": "user", "content": "q"}], PARAMETERS)


def test_client_replies():
    with FakeJudge(lambda b: reply("Extracted answer: 7\nAnswer format: Integer")) as s:
        got = chat(JudgeClient(s.url, "judge-7b"))
        assert (got.text, got.model, got.finish_reason, got.tries) == ("Extracted answer: 7\nAnswer format: Integer", "judge-7b",
                                                                       "stop", 1)
    with FakeJudge(lambda b: empty()) as s:
        assert chat(JudgeClient(s.url, "judge-7b")).text == ""
    with FakeJudge(lambda b: no_choices()) as s:
        with pytest.raises(JudgeError) as e:
            chat(JudgeClient(s.url, "judge-7b", retries=1))
        assert e.value.message == "not a chat-completions reply (after 2 tries)" and len(s.requests) == 2


def test_retries_at_the_same_settings_with_backoff():
    waits: list[float] = []
    with FakeJudge(lambda b: status(503)) as s:
        with pytest.raises(JudgeError) as e:
            chat(JudgeClient(s.url, "judge-7b", retries=3, backoff=0.5, max_backoff=1.5, sleep=waits.append))
        assert e.value.tries == 4 and len(s.requests) == 4 and all(b == s.requests[0] for b in s.requests)
    assert waits == [0.5, 1.0, 1.5]  # doubled, capped
    with FakeJudge(lambda b: status(400)) as s:  # a request the server refuses is not tried again
        with pytest.raises(JudgeError) as e:
            chat(JudgeClient(s.url, "judge-7b", retries=3, sleep=waits.append))
        assert e.value.tries == 1 and e.value.message.startswith("HTTP 400")


def test_a_slow_reply_times_out():
    # the client waits 0.2 s; the server would answer after 5 s (25x): the outcome cannot depend on timing
    with FakeJudge(lambda b: slow(5.0)) as s:
        done = threading.Event()
        got: list[object] = []

        def ask() -> None:
            try:
                chat(JudgeClient(s.url, "judge-7b", timeout=0.2, retries=1))
            except JudgeError as exc:
                got.append(exc)
            done.set()

        threading.Thread(target=ask, daemon=True).start()
        assert done.wait(HANG)
    assert isinstance(got[0], JudgeError) and got[0].message == "no reply within 0.2 s (after 2 tries)"


def test_a_reply_over_the_cap_is_refused(monkeypatch):
    monkeypatch.setattr(client_mod, "MAX_REPLY_BYTES", 1_000)
    with FakeJudge(lambda b: reply("x" * 5_000)) as s:
        with pytest.raises(JudgeError) as e:
            chat(JudgeClient(s.url, "judge-7b", retries=0))
    assert e.value.message == "a reply over 1,000 bytes"


# ----------------------------------------------------------------------------- re-judge, cache, stop


def answers(n: int) -> list[JudgedAnswer]:
    return [JudgedAnswer(qid=f"q{i}", question=f"How many? {i}", response=f"It is {i}.", gold=str(i), answer_format="Int",
                         rules="mmlongbench-doc", document=f"d{i // 3}", rule_answers=(str(i),), rule_format="Int")
            for i in range(n)]


def test_rejudge_counts_cache_and_stop(tmp_path):
    prompt_file = tmp_path / "p.md"
    prompt_file.write_text(PROMPT, encoding="utf-8")
    prompt = read_prompt(prompt_file)
    cache = ReplyCache(tmp_path / "c")
    ans = answers(12)

    def odd_wrong(body):
        i = int(analysis_of(body).split()[-1].rstrip("."))
        return reply(extraction(str(i if i % 2 == 0 else i + 100), "Integer"))

    with FakeJudge(odd_wrong) as s:
        c = JudgeClient(s.url, "judge-7b")
        seen: list[tuple[int, int]] = []
        run = rejudge(ans, c, prompt, cache, concurrency=3, progress=lambda d, t: seen.append((d, t)))
    assert count_states(run.verdicts.values()) == {"correct": 6, "incorrect": 6, "unparsable": 0, "judge_error": 0, "invalid": 0}
    assert (run.requests, run.cached, run.tries) == (12, 0, 12) and list(run.verdicts) == [a.qid for a in ans]
    assert seen[-1] == (12, 12) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert without_failures(run.verdicts.values()) == (0.5, 12)
    # the identity keys the cache: another model, prompt or parameter is another entry
    k = cache_key(ans[0].question, ans[0].response, "judge-7b", prompt.sha256, dict(PARAMETERS))
    assert cache.get(k) is not None
    assert cache.get(cache_key(ans[0].question, ans[0].response, "judge-8b", prompt.sha256, dict(PARAMETERS))) is None
    assert cache.get(cache_key(ans[0].question, ans[0].response, "judge-7b", prompt.sha256, {**PARAMETERS, "seed": 1})) is None
    # a damaged entry is a miss, not an error
    path = tmp_path / "c" / k[:2] / f"{k}.json"
    path.write_text("{cut sh", encoding="utf-8")
    with FakeJudge(odd_wrong) as s:
        run2 = rejudge(ans, JudgeClient(s.url, "judge-7b"), prompt, cache)
    assert (run2.requests, run2.cached) == (1, 11)
    # stop: asked before anything is sent, nothing is asked
    stop = threading.Event()
    stop.set()
    with FakeJudge(odd_wrong) as s:
        run3 = rejudge(answers(20)[12:], JudgeClient(s.url, "judge-7b"), prompt, cache, stop=stop)
        assert s.requests == []
    assert run3.stopped and len(run3.unasked) == 8 and run3.verdicts == {}


# ----------------------------------------------------------------------------- verdicts from the files


def test_stored_verdicts_per_harness():
    assert from_mmlongbench("Failed", gold="3", answer_format="Int").state == JUDGE_ERROR
    assert from_mmlongbench("Answer: 3", gold="3", answer_format="Int").state == UNPARSABLE
    assert from_mmlongbench("Extracted answer: Fail to answer\nAnswer format: String", gold="3", answer_format="Int").state == INVALID
    v = from_mmlongbench("Extracted answer: 3\nAnswer format: Integer", gold=3, answer_format="Int")
    assert (v.state, v.answer, v.score) == (CORRECT, "3", 1.0)
    assert from_mmlongbench(None, gold="3", answer_format="Int") is None
    # VLMEvalKit: res, log, pred as its judge sheet holds them (NaN for a blank cell)
    nan = float("nan")
    failed = {"res": nan, "log": "Try 0: output is x, failed to parse.\n" * 5 + "All 5 retries failed.\n", "pred": nan,
              "answer": "3", "answer_format": "Int"}
    assert from_vlmevalkit(failed).state == JUDGE_ERROR
    assert from_vlmevalkit({**failed, "res": "I cannot say", "log": "Succeed"}).state == UNPARSABLE
    late = from_vlmevalkit({**failed, "res": extraction("3"), "log": "Try 0: output is x, failed to parse.\nSucceed", "pred": "3"},
                           score=1.0)
    assert late.state == CORRECT and "temperature 0.5" in late.note
    assert from_vlmevalkit({"answer": "3", "prediction": "3"}) is None
    # LongDocURL: its own files (no reply kept) and VLMEvalKit's (extraction_response, extraction_log)
    assert from_longdocurl({"pred": "Fail to extract"}, gold=3, answer_format="Integer").state == UNPARSABLE
    assert from_longdocurl({"pred": "Fail to extract", "extraction_response": None,
                            "extraction_log": "Failed to extract due to judge API failure."}, gold=3,
                           answer_format="Integer").state == JUDGE_ERROR
    assert from_longdocurl({"pred": 3}, gold=3, answer_format="Integer", score=1.0).state == CORRECT
    assert from_longdocurl({"pred": "Fail to answer"}, gold=3, answer_format="Integer").state == INVALID


def test_the_sample_vlmevalkit_sheet_holds_a_judge_error():
    from scoring import formats

    src = formats.open_source(ROOT / "sample_runs" / "harness" / "vlmevalkit")
    run = src.runs[0]
    got = answers_of_run(run, {q.qid: q for q in src.gold[run.task]})
    counts = count_states(a.stored for a in got)
    assert counts["judge_error"] == 1 and sum(counts.values()) == len(run.rows)


def test_longdocurl_lines_keep_the_judges_output(tmp_path):
    from scoring import formats

    line = {"question_id": "q1", "question": "How many?", "answer": 3, "answer_format": "Integer", "doc_no": "4055915",
            "detailed_response": "Three.", "pred": "Fail to extract", "score_v3": 0.0,
            "extraction_response": "I think three", "extraction_log": "Failed to parse judge response."}
    (tmp_path / "results_m.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    src = formats.open_source(tmp_path / "results_m.jsonl")
    got = answers_of_run(src.runs[0], {q.qid: q for q in src.gold["LongDocURL"]})
    assert got[0].stored is not None and got[0].stored.state == UNPARSABLE and got[0].stored.reply == "I think three"


def test_prompts_and_their_styles(tmp_path):
    p = tmp_path / "clone" / "eval" / "prompt_for_answer_extraction.md"
    p.parent.mkdir(parents=True)
    p.write_text(PROMPT, encoding="utf-8")
    (tmp_path / "clone" / "data").mkdir()
    assert find_prompt(tmp_path / "clone" / "data" / "samples.json") == p
    mm = read_prompt(p)
    assert mm.style == MMLONGBENCH_STYLE
    assert mm.messages("Q?", "A.") == [{"role": "user", "content": PROMPT},
                                       {"role": "assistant", "content": "\n\nQuestion:Q?\nAnalysis:A.\n"}]
    p.write_text("Use <concise_answer> and </concise_answer>, then <answer_format>...</answer_format>.", encoding="utf-8")
    ld = read_prompt(p)
    assert ld.style == LONGDOCURL_STYLE and len(ld.messages("Q?", "A.")) == 1
    assert ld.messages("Q?", "A.")[0]["content"].endswith("\nQuestion: Q?\nAnalysis: A.")
    assert ld.read("Extracted answer: <concise_answer>[1, 2]</concise_answer>\nAnswer format: <answer_format>List</answer_format>") \
        == "[1, 2]"
    assert ld.read("<concise_answer>" * 50_000) is None  # linear: no closing tag, no answer
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_prompt(p)


# ----------------------------------------------------------------------------- agreement


def test_kappa_equals_a_hand_computation():
    # 2x2: (T,T) 20, (T,F) 5, (F,T) 10, (F,F) 15; po = 35/50; pe = (25*30 + 25*20)/2500 = 0.5; kappa = 0.4
    a = [True] * 25 + [False] * 25
    b = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    # 3x3 (Fleiss's textbook table): [[25, 2, 5], [3, 26, 5], [15, 3, 16]]: po 67/100, pe .3328 + .1178... by hand:
    t = [[25, 2, 5], [3, 26, 5], [15, 3, 16]]
    n = 100
    po = 67 / n
    pe = ((32 * 43) + (34 * 31) + (34 * 26)) / n ** 2
    assert kappa_of_table(t) == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    assert kappa_of_table([[10, 0], [0, 0]]) != kappa_of_table([[10, 0], [0, 0]])  # one label only: undefined (nan)


def test_kappa_interval_by_document_covers_the_truth():
    """Seeded simulation with a known truth: two raters that agree with probability 0.8 on labels of
    probability 0.5 each (kappa 0.6), answers in documents of 5 that share a document effect; the
    interval by document holds 0.6 in about 95 % of 200 runs."""
    import numpy as np

    rng = np.random.default_rng(7)
    hits = 0
    runs = 200
    for _ in range(runs):
        docs, a, b = [], [], []
        for d in range(40):
            base = rng.random() < 0.5
            for _k in range(5):
                x = base if rng.random() < 0.6 else bool(rng.random() < 0.5)  # answers of a document lean together
                y = x if rng.random() < 0.8 else not x
                docs.append(f"d{d}")
                a.append(x)
                b.append(y)
        ag = agreement(a, b, docs, resamples=400, seed=1)
        hits += ag.low <= 0.6 <= ag.high
    assert 0.88 <= hits / runs <= 0.99  # a question-level interval on these clusters covers less
    ag = agreement(a, b, docs)
    assert ag.unit == "document" and ag.units == 40 and ag.n == 200
    assert agreement(a, b, docs).low == ag.low  # seeded


def test_agreement_by_decile_and_label():
    a = [True, False] * 50
    b = [True, False] * 45 + [False, True] * 5
    lengths = list(range(100))
    parts = by_decile(a, b, lengths)
    assert len(parts) == 10 and [p[2].n for p in parts] == [10] * 10
    assert [p[2].agree for p in parts] == [10] * 9 + [0]  # the longest tenth is where they disagree
    per = by_label(a, b, [["x"] if i < 50 else ["y", "x"] for i in range(100)])
    assert per["x"].n == 100 and per["y"].n == 50


def test_the_command_lines_judge_cache_is_the_apps_and_follows_lens_cache_dir(tmp_path):
    """--judge-cache unset: judge/ in the app's cache folder (LENS_CACHE_DIR moves it), so the command line and
    the app's Re-judge read each other's replies."""
    from scoring.judge.cache import default_folder

    assert default_folder({"LENS_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c" / "judge"
    assert default_folder({"XDG_CACHE_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "docbench-lens" / "judge"

"""The Judge page and the leaderboard's judge columns in AppTest: what the run's own judge left, a
Re-judge against the small OpenAI-compatible server of tests/judge_kit.py, the two judges side by side."""

from __future__ import annotations

import shutil
from pathlib import Path

from app_kit import app_on
from dashboard.judge import frames as F
from dashboard.judge import jobs
from judge_kit import FakeJudge, analysis_of, extraction, reply

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_MM = ROOT / "sample_runs" / "mmlongbench"
HANG = 120  # s: a hang guard for the background re-judge of 40 answers (it takes well under a second)
PROMPT = "Write the answer the analysis gives, in two lines:\nExtracted answer: [answer]\nAnswer format: [format]\n"


def judge_page(at):
    return at.switch_page("views/judge.py").run()


def test_the_runs_own_judge_and_rejudge_off(monkeypatch):
    for name in ("LENS_JUDGE_URL", "LENS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    at = judge_page(app_on(monkeypatch, SAMPLE_MM))
    assert not at.exception
    assert at.title[0].value == "LLM judge"
    table = at.dataframe[0].value
    assert list(table["Judge"]) == [F.FILES]
    assert int(table["correct"].iloc[0] + table["incorrect"].iloc[0]) == int(table["Judged"].iloc[0])
    go = [b for b in at.button if b.key == "judge_go_off"]
    assert go and go[0].disabled  # off unless a judge URL is set
    assert any(m.value.startswith("Judge vs rules") and "Cohen" in m.value for m in at.markdown)


def test_rejudge_then_two_judges(monkeypatch, tmp_path):
    clone = tmp_path / "mm"
    shutil.copytree(SAMPLE_MM, clone)
    (clone / "eval").mkdir()
    (clone / "eval" / "prompt_for_answer_extraction.md").write_text(PROMPT, encoding="utf-8")

    def judge(body):  # extracts the last word of the response, without its full stop
        return reply(extraction(analysis_of(body).rstrip(".").split()[-1]))

    with FakeJudge(judge) as server:
        env = {"LENS_JUDGE_URL": server.url, "LENS_JUDGE_MODEL": "judge-7b"}
        at = judge_page(app_on(monkeypatch, clone, env=env))
        assert not at.exception
        go = [b for b in at.button if b.key == "judge_go"]
        assert go and not go[0].disabled and go[0].label == "Re-judge 40 answers"
        go[0].click().run()
        key = at.session_state["judge_watch"]
        job = jobs.get(key)
        assert job is not None and job.finished.wait(HANG)  # a state, not a moment
        assert job.error == "" and job.run is not None and job.run.requests == 40
        at.run()
        assert len(server.requests) == 40
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["Judge"]) == [F.FILES, "judge-7b · prompt " + job.run.identity.prompt_sha256[:8]]
    assert int(table["Judged"].iloc[1]) == 40 and int(table["judge_error"].iloc[1]) == 0
    assert any(m.value.startswith("A vs B") for m in at.markdown)
    # a restarted app (a new session) reads the judge back from the cache without asking anyone
    jobs._JOBS.clear()
    at2 = judge_page(app_on(monkeypatch, clone, env={"LENS_JUDGE_URL": "http://127.0.0.1:9/v1", "LENS_JUDGE_MODEL": "judge-7b"}))
    assert not at2.exception and len(at2.dataframe[0].value) == 2


def test_the_leaderboard_shows_the_judges_failures(monkeypatch):
    at = app_on(monkeypatch, ROOT / "sample_runs" / "harness" / "vlmevalkit")
    assert not at.exception
    board = at.dataframe[0].value
    assert F.COUNT_COLUMN in board.columns and F.SCORE_COLUMN in board.columns
    row = board.iloc[0]
    assert int(row[F.COUNT_COLUMN]) == 1  # the sample's sheet holds one "All 5 retries failed"
    assert abs(row[F.SCORE_COLUMN] - 87.5) < 1e-9  # 35 right of the 40 answered

"""End to end in headless Chromium: the LLM judge page on a MMLongBench-Doc clone, with the small
OpenAI-compatible server of tests/judge_kit.py as the judge (LENS_JUDGE_URL). Open the page -> the
run's own judge's verdicts -> Re-judge -> the progress bar, then the second judge's row and the
judge-vs-judge comparison with both replies as text. At 800 px nothing is wider than the window.
The same checks as the other browser tests: no exception box, no console error, no request off the
machine (the judge is on 127.0.0.1), no traceback. Screenshots go to test-output/browser/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from browser_kit import check_clean, open_page, serve, settle, shot, wait_idle
from judge_kit import FakeJudge, analysis_of, extraction, reply

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
PROMPT = "Write the answer the analysis gives, in two lines:\nExtracted answer: [answer]\nAnswer format: [format]\n"


def test_rejudge_in_the_browser(tmp_path, browser):  # the session's Chromium: one Playwright per process
    from playwright.sync_api import expect

    clone = tmp_path / "mm"
    shutil.copytree(ROOT / "sample_runs" / "mmlongbench", clone)
    (clone / "eval").mkdir()
    (clone / "eval" / "prompt_for_answer_extraction.md").write_text(PROMPT, encoding="utf-8")

    def judge(body):
        return reply(extraction(analysis_of(body).rstrip(".").split()[-1]))

    with FakeJudge(judge) as fake:
        env = {"LENS_BENCHMARK": str(clone), "LENS_JUDGE_URL": fake.url, "LENS_JUDGE_MODEL": "judge-7b",
               "LENS_CACHE_DIR": str(tmp_path / "cache")}
        with serve(env, name="judge") as (url, log):
            errors: list[str] = []
            page = open_page(browser, url, errors)
            page.goto(url + "/judge")
            settle(page, "Verdicts")
            check_clean(page, errors, log, "judge page")
            page.get_by_role("button", name="Re-judge 40 answers").click()
            # the job ends (a state): the page is drawn again with the second judge
            page.get_by_text("Re-judged by judge-7b: 40 asked").wait_for(timeout=120_000)
            wait_idle(page)
            expect(page.get_by_text("judge-7b · prompt").first).to_be_attached()  # a grid cell: attached, drawn on a canvas
            page.get_by_role("heading", name="Judge vs judge").scroll_into_view_if_needed()
            assert page.get_by_text("A vs B (verdicts of the answers both answered)").count() == 1
            check_clean(page, errors, log, "after the re-judge")
            assert len(fake.requests) == 40
            shot(page, "38-judge-1400px.png")
            narrow = open_page(browser, url, errors, viewport={"width": 800, "height": 1000})
            narrow.goto(url + "/judge")
            settle(narrow, "Judge vs judge")
            width = narrow.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 800, width
            check_clean(narrow, errors, log, "judge page at 800 px")
            shot(narrow, "38-judge-800px.png")

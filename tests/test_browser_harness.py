"""The sample's harness runs (sample_runs/harness/: an lmms-eval and a VLMEvalKit run over the sample's
MMLongBench-Doc questions) in headless Chromium on the real `streamlit run` server:

- beside the sample's MMLongBench-Doc clone (LENS_RUNS): the leaderboard lists both harness runs, the
  Metric disagreement page compares each with the benchmark's own evaluator (the questions that change,
  with their reasons), the Data page names the harness, its version and model arguments;
- the harness folder itself opened from the URL (`data`, `bench`): its own gold, the task box, the
  harness's own profile, the Evidence page saying what is missing;
- no console error, no request off the machine, no exception (browser_kit.check_clean) at any step.

Screenshots go to test-output/browser/harness-*.png.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from browser_kit import check_clean, open_page, serve, settle, shot, wait_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HARNESS_DIR = ROOT / "sample_runs" / "harness"
MM = ROOT / "sample_runs" / "mmlongbench"
LMMS = "Qwen/Qwen2.5-VL-7B-Instruct"
VLM = "MiniCPM-Llama3-V-2_5"


def test_the_sample_harness_runs_open_and_compare_with_the_evaluator(browser):
    from playwright.sync_api import expect

    with serve({"LENS_BENCHMARK": str(MM), "LENS_RUNS": str(HARNESS_DIR)}, name="harness") as (url, log):
        errors: list[str] = []
        page = open_page(browser, url, errors)
        page.goto(url)
        settle(page, "Leaderboard")
        check_clean(page, errors, log, "overview with harness runs")
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.wait_for()
        shot(page, "harness-01-overview.png")

        page.goto(f"{url}/disagreement?{urlencode([('run', LMMS), ('run', VLM)])}")
        settle(page, "Metric disagreement")
        check_clean(page, errors, log, "metric disagreement")
        head = page.get_by_text("Harness scoring vs the benchmark's own evaluator")
        head.scroll_into_view_if_needed()
        expect(head).to_be_visible()
        expect(page.get_by_text("2 of 41 questions change score (0 up, 2 down)")).to_be_visible()
        shot(page, "harness-02-sensitivity.png")

        page.goto(f"{url}/data")
        settle(page, "Data")
        check_clean(page, errors, log, "data page")
        expect(page.get_by_role("heading", name="Harness runs")).to_be_visible()
        expect(page.get_by_text("all 41 questions match the official scores").first).to_be_attached()
        shot(page, "harness-03-data.png")

        # the harness folder itself, from a link: its own gold, VLMEvalKit's task by the URL
        errors2: list[str] = []
        own = open_page(browser, url, errors2)
        own.goto(f"{url}/data?{urlencode({'data': str(HARNESS_DIR), 'bench': 'MMLongBench_DOC'})}")
        settle(own, "Data")
        wait_idle(own)
        check_clean(own, errors2, log, "harness folder as the benchmark")
        expect(own.get_by_text("vlmevalkit: all 41 questions match").or_(
            own.get_by_text("all 41 questions match the official scores (profile vlmevalkit)")).first).to_be_attached()
        expect(own.get_by_text("Benchmark in this harness folder")).to_be_visible()
        shot(own, "harness-04-own-gold.png")
        own.goto(f"{url}/evidence?{urlencode({'data': str(HARNESS_DIR), 'bench': 'MMLongBench_DOC'})}")
        settle(own, "Evidence")
        check_clean(own, errors2, log, "evidence without documents")
        shot(own, "harness-05-evidence.png")

"""The pictures of the README and docs/, made from the bundled sample so that they can be made again
after the pages change:

    .venv/bin/python docs/screenshots.py                  # every picture, into docs/images/
    .venv/bin/python docs/screenshots.py compare weak     # only these

It starts the app on sample_runs/ exactly as the browser tests do (`tests/browser_kit.py`: `streamlit run`
on a free port of 127.0.0.1, Debian's Chromium driven headless by Playwright's Python package, every
request off the machine refused), with a cache and a user data folder of its own (a fresh cache: no notes,
nothing remembered from another session), opens each page from a link, waits until the app is idle and
saves the window, 1,400 px wide, as a PNG. A picture with an exception box, a browser error or a
traceback in the server's log is not saved: the script stops and says which. A PNG over MAX_BYTES is
reduced to a palette of 256 colours.

Needs the test extra (`pip install -e '.[test]'`) and Chromium (`apt-get install -y chromium`). Not part
of the package: nothing imports it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import browser_kit  # noqa: E402  (tests/browser_kit.py: the server and the browser the tests use)

IMAGES = ROOT / "docs" / "images"
CAMPAIGN = str(ROOT / "sample_runs" / "campaign")  # the bundled campaign: 40 documents, enough for the statistics
WINDOW = {"width": 1400, "height": 1300}  # tall enough for a chart below a page's first table
# the leaderboard and a heatmap; a question, its page and where the answer is; the finder's controls to its plot
TALLER = {"overview": 1900, "evidence": 1700, "weak": 1500}
MAX_BYTES = 300_000


def to_top(page, locator) -> None:
    """Scroll the app so that `locator`'s element is at the top of the window (below Streamlit's header)."""
    locator.first.evaluate("el => { el.style.scrollMarginTop = '70px'; el.scrollIntoView({block: 'start'}); }")
    browser_kit.wait_idle(page)


def overview(page, url: str) -> None:
    """The overview of the sample: the leaderboard, then the heatmaps of runs by slice."""
    page.goto(url)
    browser_kit.settle(page, "Leaderboard")
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for()
    browser_kit.wait_idle(page)
    to_top(page, page.get_by_role("heading", name="Leaderboard"))


def evidence(page, url: str) -> None:
    """A failure inspected: longctx-ocr answers question 24 from page 4 while the gold's evidence is on
    pages 24 and 26; the evidence page drawn with the gold's boxes, and where the run's answer was found."""
    page.goto(f"{url}/evidence?{urlencode({'sel': 'adubench_single_000024', 'run': 'longctx-ocr'})}")
    browser_kit.settle(page, "Evidence")
    page.locator(".js-plotly-plot").first.wait_for()
    page.get_by_text("appears on page 4, not on the evidence pages").first.wait_for()
    browser_kit.wait_idle(page)
    to_top(page, page.get_by_text("adubench_single_000024 · "))


def compare(page, url: str) -> None:
    """Two checkpoints of the campaign compared with documents as the unit: the headline deltas with their
    intervals, the sign-flip test's sentence and the per-slice delta chart."""
    page.goto(f"{url}/compare?{urlencode({'data': CAMPAIGN, 'a': 'ckpt-0520', 'b': 'ckpt-0410'})}")
    browser_kit.settle(page, "Compare runs")
    page.locator('[data-testid="stMetricValue"]').first.wait_for()
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for()
    browser_kit.wait_idle(page)
    to_top(page, page.get_by_role("heading", name="Headline"))


def weak(page, url: str) -> None:
    """Where vision-13b is weak on the campaign: the finder's sentence, table and forest plot, the interval
    adjusted for the search."""
    page.goto(f"{url}/weak?{urlencode({'data': CAMPAIGN, 'wk_run': 'vision-13b'})}")
    browser_kit.settle(page, "Weak slices")
    page.get_by_role("button", name="Find weak slices").click()
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for(timeout=120_000)
    browser_kit.wait_idle(page)


def trends(page, url: str) -> None:
    """The campaign's ten checkpoints: the one lasting drop the trend rule finds, and its slice per checkpoint."""
    page.goto(f"{url}/trends?{urlencode({'data': CAMPAIGN})}")
    browser_kit.settle(page, "Checkpoint trends")
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    browser_kit.wait_idle(page)
    to_top(page, page.get_by_role("heading", name="Lasting drops"))


SHOTS: dict[str, Callable] = {"overview": overview, "evidence": evidence, "compare": compare, "weak": weak,
                              "trends": trends}


def smaller(path: Path) -> None:
    """A PNG over MAX_BYTES as a palette image of 256 colours (the pages are flat colours and text)."""
    if path.stat().st_size <= MAX_BYTES:
        return
    from PIL import Image

    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    reduced.save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"the pictures to make (default: all): {', '.join(SHOTS)}")
    parser.add_argument("--out", type=Path, default=IMAGES, help="where the PNGs go (default: docs/images/)")
    args = parser.parse_args(argv)
    names = args.names or list(SHOTS)
    unknown = [n for n in names if n not in SHOTS]
    if unknown:
        parser.error(f"no such picture: {', '.join(unknown)} (choose from {', '.join(SHOTS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lens-shots-") as tmp:
        env = {"LENS_CACHE_DIR": str(Path(tmp) / "cache"), "LENS_DATA_DIR": str(Path(tmp) / "data")}
        with browser_kit.serve(env, name="screenshots") as (url, log), browser_kit.launch() as browser:
            for name in names:
                errors: list[str] = []
                page = browser_kit.open_page(browser, url, errors, viewport=WINDOW | {"height": TALLER.get(name, WINDOW["height"])})
                SHOTS[name](page, url)
                browser_kit.check_clean(page, errors, log, name)
                path = args.out / f"{name}.png"
                page.screenshot(path=str(path))
                smaller(path)
                print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {path.stat().st_size:,} bytes")
                page.context.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

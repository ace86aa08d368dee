"""Shared test fixtures: the mini benchmark, a copy of it with malformed files added, and the browser
tests' server on sample_runs/ and headless Chromium (one of each for the whole session)."""

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI_BENCH = FIXTURES / "mini_bench"


@pytest.fixture(scope="session", autouse=True)
def lens_cache_dir(tmp_path_factory):
    """The app's cache folder (scored rows, parsed prediction files, uploads) is a temporary folder for
    the whole session: tests never write into ~/.cache. dashboard/store.py reads LENS_CACHE_DIR when
    called, so this holds for every store made during the session (and for the browser tests' server,
    started after this fixture, which inherits the environment)."""
    import os

    folder = tmp_path_factory.mktemp("lens-cache")
    before = os.environ.get("LENS_CACHE_DIR")
    os.environ["LENS_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("LENS_CACHE_DIR", None)
    else:
        os.environ["LENS_CACHE_DIR"] = before


@pytest.fixture
def mini_bench() -> Path:
    return MINI_BENCH


@pytest.fixture
def broken_bench(tmp_path: Path) -> Path:
    """mini_bench plus mini_bench/malformed/: a gold file and two prediction files with bad rows."""
    target = tmp_path / "bench"
    shutil.copytree(MINI_BENCH, target, ignore=shutil.ignore_patterns("malformed"))
    shutil.copytree(MINI_BENCH / "malformed", target, dirs_exist_ok=True)
    return target


@pytest.fixture(scope="session")
def server():
    """`streamlit run dashboard/app.py` on sample_runs/: (base URL, log path)."""
    import browser_kit

    with browser_kit.serve() as running:
        yield running


@pytest.fixture(scope="session")
def browser(server):
    import browser_kit

    with browser_kit.launch() as b:
        yield b

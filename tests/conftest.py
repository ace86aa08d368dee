"""Shared test fixtures: the mini benchmark, a copy of it with malformed files added, and the browser
tests' server on sample_runs/ and headless Chromium (one of each for the whole session)."""

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import scoring  # noqa: F401  (before any test module loads numpy: one BLAS thread in the workers too, as in the app)

# A property test's outcome never hangs on the machine's speed: no per-example deadline and no
# "input generation is slow" failure (seen on a loaded CI machine; tests/test_dashboard_helpers.py).
# Nor on the run: the examples are drawn from a fixed seed (derandomize), so CI and a developer's
# machine try the same ones and a failure is found again by running the test again -- a clean-clone CI
# run once drew a case no earlier run had (tests/test_fuzz_loaders.py, a line holding only a UTF-8
# byte-order mark). LENS_FUZZ_RANDOM=1 draws new examples each run, to look for more.
# A test's own @settings inherits this profile for what it does not name.
settings.register_profile("lens", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=os.environ.get("LENS_FUZZ_RANDOM") != "1")
settings.load_profile("lens")

SOURCES = ("scoring", "dashboard", "sample_runs")  # the code the suite's own subprocesses import


def pytest_configure(config) -> None:
    """Before any worker starts: the repository's sources compiled to bytecode once, as an installed
    package has them. The suite starts hundreds of Python processes (the CLI, Streamlit servers, the
    guard's readers); where PYTHONDONTWRITEBYTECODE is set (this CI's environment) none of them writes
    what it compiles, so each compiled the ~190 modules it imports again: a CLI-heavy part of the suite
    took 81-92 CPU-s so, and 74 CPU-s with the sources compiled (docs/performance.md, "The test
    suite"). A stale .pyc is never used (Python checks the source's time and size)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    import compileall

    root = Path(__file__).resolve().parent.parent
    for name in SOURCES:
        compileall.compile_dir(str(root / name), quiet=2, workers=0 if len(os.sched_getaffinity(0)) > 1 else 1)


def pytest_xdist_auto_num_workers(config) -> int:
    """How many processes `-n auto` (pyproject's addopts) runs the suite in: LENS_TEST_WORKERS when set,
    else one per core this process may use, at most 8 (each worker starts its own Streamlit server,
    Chromium and PostgreSQL when its tests need them). Measured on 2 cores: 2 workers took the suite
    from 26 to 18 minutes; 3 were no faster (docs/performance.md, "The test suite")."""
    import os

    asked = os.environ.get("LENS_TEST_WORKERS", "").strip()
    if asked:
        if not asked.isdigit():
            raise pytest.UsageError(f"LENS_TEST_WORKERS must be a whole number of processes (0: one process), not {asked!r}")
        return int(asked)
    return max(1, min(8, len(os.sched_getaffinity(0))))


FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI_BENCH = FIXTURES / "mini_bench"


@pytest.fixture(scope="session", autouse=True)
def lens_cache_dir(tmp_path_factory):
    """The app's cache folder (scored rows, parsed prediction files, uploads) and its user data folder
    (the annotations database) are temporary folders for the whole session: tests never write into
    ~/.cache or ~/.local/share. dashboard/core/store.py reads LENS_CACHE_DIR when
    called, so this holds for every store made during the session. The browser tests' server drops
    every LENS_* variable (tests/browser_kit.serve) and falls back to $XDG_CACHE_HOME/docbench-lens:
    XDG_CACHE_HOME is a temporary folder too."""
    import os

    folder = tmp_path_factory.mktemp("lens-cache")
    xdg = tmp_path_factory.mktemp("xdg-cache")
    data = tmp_path_factory.mktemp("lens-data")
    before = {k: os.environ.get(k) for k in ("LENS_CACHE_DIR", "XDG_CACHE_HOME", "LENS_DATA_DIR", "XDG_DATA_HOME")}
    os.environ["LENS_CACHE_DIR"] = str(folder)
    os.environ["XDG_CACHE_HOME"] = str(xdg)
    os.environ["LENS_DATA_DIR"] = str(data)
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    yield folder
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once():
    """Streamlit looks for installed custom components (its "components v2" manifests) at the first
    run of every AppTest: a walk over every installed package's metadata, 0.1 s of CPU each time (three
    of the suite's files alone make 105 AppTests). The packages installed do not change while the
    suite runs, so the walk's answer (none: the app uses no custom component) is found once, by
    Streamlit's own scanner, and given to every later AppTest (docs/performance.md, "The test
    suite"). A server the tests start scans for itself."""
    from streamlit.components.v2 import manifest_scanner

    real = manifest_scanner.scan_component_manifests
    found = real()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)
    yield found
    manifest_scanner.scan_component_manifests = real


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


# ----------------------------------------------------------------------------- PostgreSQL (issue 28)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server for the session (tests/pg_kit.py): Debian's `postgresql`
    package, a cluster in a temporary folder on a free port, stopped and removed at the end. Without
    the binaries the test is skipped on a developer's machine and FAILS in CI (CI set), where
    .ci/run installs them: the annotations suite must run on both dialects there."""
    import os

    import pg_kit

    if pg_kit.binaries() is None:
        message = "PostgreSQL's server binaries were not found (apt-get install postgresql)"
        if os.environ.get("CI") or os.environ.get("LENS_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + ": CI must run the annotations tests on PostgreSQL too")
        pytest.skip(message)
    with pg_kit.running() as server:
        yield server


class Databases:
    """New empty annotations databases of one dialect: `location(name)` (a file path or a URL with
    its password) and `store(name, **kw)` (an AnnotationStore on a new one)."""

    def __init__(self, dialect: str, tmp_path: Path, server=None) -> None:
        self.dialect, self.tmp_path, self.server = dialect, tmp_path, server

    def location(self, name: str = "a.sqlite3") -> str:
        if self.server is None:
            return str(self.tmp_path / name)
        return self.server.fresh_database(Path(name).stem)

    def store(self, name: str = "a.sqlite3", **kw):
        from dashboard.annotations.store import AnnotationStore

        return AnnotationStore(self.location(name), **kw)


@pytest.fixture(params=["sqlite", "postgresql"])
def databases(request, tmp_path) -> Databases:
    """Every test that takes it runs twice: on an SQLite file and on a PostgreSQL database."""
    server = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    return Databases(request.param, tmp_path, server)

"""What an installed package needs besides its code: the sample benchmark, the Streamlit settings,
the page scripts and the `docbench-lens` command.

The wheel is built from a copy of the sources (`pip wheel --no-deps`, as a user would build it) and
read as a zip; then its files are unpacked into a bare folder and the app is started from there
with AppTest, in another working directory, to show that it opens the sample it carries.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

from dashboard import launch, resources
from dashboard.core.paths import DEFAULT_BENCHMARK

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
SAMPLE_DATA = (".jsonl", ".json", ".pdf", ".csv", ".md", ".png", ".jpg")  # the sample's data files (its .py files generate them)


# ----------------------------------------------------------------------------- the command


def parse(argv: list[str]) -> argparse.Namespace:
    return launch.build_parser().parse_args(argv)


def test_launch_command_runs_the_installed_app_with_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LENS_ADDRESS", raising=False)
    (tmp_path / "bench").mkdir()
    cmd = launch.build_command(parse(["--benchmark", "bench", "--runs", "a.jsonl", "runs2", "--scores", "s.jsonl",
                                      "--port", "8600", "--headless"]))
    assert cmd[:5] == [sys.executable, "-m", "dashboard.session.server", "run", str(resources.APP)]
    assert cmd[5:9] == ["--server.port", "8600", "--server.headless", "true"]
    assert cmd[9:11] == ["--server.address", "127.0.0.1"]  # this machine alone unless told (tests/test_bind.py)
    assert cmd[11:] == ["--", "--benchmark", str(tmp_path / "bench"), "--runs", str(tmp_path / "a.jsonl"),
                       str(tmp_path / "runs2"), "--scores", str(tmp_path / "s.jsonl")]


def test_launch_without_arguments_opens_the_sample(monkeypatch):
    monkeypatch.delenv("LENS_ADDRESS", raising=False)
    assert launch.build_command(parse([])) == [sys.executable, "-m", "dashboard.session.server", "run", str(resources.APP),
                                               "--server.address", "127.0.0.1"]


@pytest.mark.parametrize("argv,message", [
    (["--port", "http"], "expected a port number, got 'http'"),
    (["--port", "70000"], "expected a port number in 1..65535, got 70000"),
    (["--benchmark", "/no/such/folder"], "--benchmark /no/such/folder: no such folder"),
])
def test_launch_refuses_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        launch.main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_launch_says_a_benchmark_file_is_a_file(tmp_path, capsys):
    gold = tmp_path / "qa_single_doc.jsonl"
    gold.write_text("{}\n")
    with pytest.raises(SystemExit) as exit_:
        launch.main(["--benchmark", str(gold)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"--benchmark {gold}: is a file, not a folder" in err and str(tmp_path) in err and "no such folder" not in err


def test_the_app_argument_parser_reads_what_the_launcher_writes(tmp_path):
    from dashboard.core.paths import sources_from

    cmd = launch.build_command(parse(["--benchmark", str(tmp_path), "--runs", "x.jsonl", "--scores", "s.csv"]))
    src = sources_from(cmd[cmd.index("--") + 1:], {})
    assert (src.benchmark, src.runs, src.scores) == (tmp_path, (Path.cwd() / "x.jsonl",), (Path.cwd() / "s.csv",))


# ----------------------------------------------------------------------------- shipped files


def test_settings_are_the_projects_one_file():
    assert resources.SETTINGS == ROOT / ".streamlit" / "config.toml" and resources.SETTINGS_HOME == ROOT
    assert [p for p in ROOT.rglob("config.toml") if ".streamlit" in p.parts and ".venv" not in p.parts
            and "build" not in p.parts] == [resources.SETTINGS]  # one copy in the repository
    settings = tomllib.loads(resources.SETTINGS.read_text(encoding="utf-8"))
    assert settings["browser"]["gatherUsageStats"] is False
    assert settings["server"]["maxUploadSize"] == 200
    assert {"light", "dark"} <= set(settings["theme"])


def test_checkout_opens_the_repository_sample():
    assert DEFAULT_BENCHMARK == resources.sample_benchmark() == SAMPLE


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "setup.py", "MANIFEST.in", "constraints.txt"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / ".streamlit", src / ".streamlit")
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for folder in ("scoring", "dashboard", "sample_runs"):
        shutil.copytree(ROOT / folder, src / folder, ignore=junk)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "-w", str(out), "--no-deps", "-q"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("docbench_lens-*.whl")
    return built


def test_wheel_carries_sample_settings_pages_and_command(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    sample = sorted(p.relative_to(SAMPLE).as_posix() for p in SAMPLE.rglob("*") if p.suffix in SAMPLE_DATA)
    assert len(sample) >= 15 and "docs/doc_000001.pdf" in sample
    assert [f for f in sample if f"dashboard/sample_runs/{f}" not in names] == []
    assert {"dashboard/.streamlit/config.toml", "dashboard/app.py", "dashboard/launch.py", "dashboard/resources.py",
            "dashboard/views/overview.py", "dashboard/views/questions.py", "dashboard/views/data.py",
            "scoring/cli.py", "scoring/metrics.py"} <= names
    assert not any(n.startswith(("tests/", "bench/", "sample_runs/")) for n in names)
    # pyproject.toml lists the packages by name: a new module or sub-package must not be left out
    code = [p.relative_to(ROOT).as_posix() for folder in ("scoring", "dashboard") for p in (ROOT / folder).rglob("*.py")
            if "__pycache__" not in p.parts]
    assert [f for f in code if f not in names] == []
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "docbench-lens = dashboard.launch:main" in text and "docbench-score = scoring.cli:run" in text


def test_unpacked_wheel_opens_its_own_sample_from_any_folder(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = textwrap.dedent(f"""
        import dashboard, dashboard.core.paths as ws
        from streamlit.testing.v1 import AppTest
        assert dashboard.__file__.startswith({str(site)!r}), dashboard.__file__
        assert ws.DEFAULT_BENCHMARK == ws.Path({str(site / "dashboard" / "sample_runs")!r}), ws.DEFAULT_BENCHMARK
        at = AppTest.from_file({str(site / "dashboard" / "app.py")!r}, default_timeout=120).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.title[0].value == "Overview"
        board = at.dataframe[0].value
        # the questions each run is scored on: those it attempted (issue 34; agent-pipeline has no answer to 2)
        assert len(board) == 7 and board["Attempted"].sum() == 7 * 77 - 2, board
        print("ok", len(board))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok 7")


def test_the_command_serves_the_app_from_another_folder(tmp_path, mini_bench):
    """`python -m dashboard.launch` (what `docbench-lens` runs) starts a server that answers, from a
    working directory that holds nothing of the project."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dashboard.launch", "--port", str(port), "--headless",
                                 "--benchmark", str(mini_bench)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    status = r.status
                    break
            except OSError:
                time.sleep(0.5)
        assert status == 200, log.read_text(errors="replace")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(errors="replace")


def test_constraints_pin_every_dependency_inside_its_range():
    """constraints.txt (what CI installs) pins each dependency of pyproject.toml to a version its range
    allows: a new dependency, or a range moved past the pin, shows up here."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    assert [str(r) for r in declared if canonicalize_name(r.name) not in pins] == []
    assert [f"{r} vs {pins[canonicalize_name(r.name)]}" for r in declared
            if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)] == []

"""The repository stays clean under its own linters: ruff over everything (pyproject.toml's
[tool.ruff]) and mypy over scoring/ and dashboard/ ([tool.mypy]). Both come with the test extra."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_scoring_is_clean_under_mypy():
    done = run("mypy", "scoring")
    assert done.returncode == 0, done.stdout + done.stderr


def test_dashboard_is_clean_under_mypy():
    done = run("mypy", "dashboard")
    assert done.returncode == 0, done.stdout + done.stderr

"""Shared test fixtures: the mini benchmark, and a copy of it with malformed files added."""

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI_BENCH = FIXTURES / "mini_bench"


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

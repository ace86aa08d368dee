"""Every leaderboard, breakdown, flip table, interval and finder result equals the golden files captured by the
app's code before the scored runs moved onto the engine (tests/golden_kit.py writes them): on the sample,
sample_runs/campaign/ and a generated 20-run benchmark, through the app's own load path now."""

from __future__ import annotations

import json

import pytest

from golden_kit import DATASETS, FIXTURES, bench_of, capture, differences, today


@pytest.mark.parametrize("name", list(DATASETS))
def test_the_numbers_equal_the_golden_files(name, tmp_path):
    want = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    ws, an = today(bench_of(name, tmp_path))
    found = differences(want, json.loads(json.dumps(capture(an, ws))))
    assert not found, f"{name}: {len(found)} numbers differ, e.g.\n" + "\n".join(found[:20])

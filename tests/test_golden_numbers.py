"""Every leaderboard, breakdown, flip table, interval and finder result equals the golden files captured by the
app's code before the scored runs moved onto the engine (tests/golden_kit.py writes them): on the sample,
sample_runs/campaign/ and a generated 20-run benchmark -- through the app itself (each run ingested into the
engine in the cache folder, then read back after a restart), and through an analysis of runs held in memory
(the report's command line, the tests: DuckDB in memory)."""

from __future__ import annotations

import json

import pytest

from golden_kit import DATASETS, FIXTURES, as_drawn, bench_of, capture, differences, through_the_app, today


@pytest.mark.parametrize("path", ["app", "memory"])
@pytest.mark.parametrize("name", list(DATASETS))
def test_the_numbers_equal_the_golden_files(name, path, tmp_path):
    want = as_drawn(json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")))
    bench = bench_of(name, tmp_path)
    ws, an = through_the_app(bench, tmp_path / "cache") if path == "app" else today(bench)
    if path == "app":
        assert an.store.engine.target.kind == "duckdb" and (tmp_path / "cache" / "engine" / "lens.duckdb").is_file()
    found = differences(want, json.loads(json.dumps(capture(an, ws))))
    assert not found, f"{name}: {len(found)} numbers differ, e.g.\n" + "\n".join(found[:20])

"""The numbers the pages show, captured once by the app's code before the scored runs moved onto the engine
(tests/fixtures/golden/<dataset>.json) and compared with what the app computes now
(tests/test_golden_numbers.py): the leaderboard, every breakdown (every run, and the charted runs over the
questions they share), the flip tables, Compare's per-slice deltas with their document-bootstrap intervals, the
per-run intervals, and the weak-slice finder's answer (one run, and in pair mode).

    .venv/bin/python tests/golden_kit.py            # writes the fixtures again (only when the numbers are meant to change)

A capture is a dict of plain JSON values: frames as lists of records (floats kept whole: JSON writes a
float's repr, which reads back to the same float; NaN as NaN).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from engine_kit import SAMPLE, generated_campaign  # noqa: E402

FIXTURES = HERE / "fixtures" / "golden"
DATASETS = {"sample": SAMPLE, "campaign": SAMPLE / "campaign", "generated": None}
RESAMPLES = 2_000  # the bootstrap's resamples in the captures (the pages' 10,000 cost seconds per pair here)
BREAKDOWN_FIELDS = ("split", "domain", "reasoning_type", "difficulty", "doc_type", "answer_format", "evidence_source",
                    "length", "position", "page_category")


def bench_of(name: str, tmp: Path) -> Path:
    """The benchmark folder of a dataset (the generated one written under `tmp`: bench/make_campaign.py,
    the same arguments giving the same bytes)."""
    got = DATASETS[name]
    return got if got is not None else generated_campaign(tmp / "generated", questions=400, runs=20)


def _value(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_value(x) for x in v]
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return v if isinstance(v, (int, str)) else str(v)


def records(frame: pd.DataFrame) -> list[dict]:
    return [{str(k): _value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def pairs_of(names: list[str]) -> list[tuple[str, str]]:
    """A few pairs of runs: neighbours on the leaderboard, and the last against the first."""
    if len(names) < 2:
        return [(names[0], names[0])] if names else []
    return [(a, b) for a, b in zip(names, names[1:])][:3] + [(names[-1], names[0])]


def _slice(s) -> dict:
    return {"conditions": [list(c) for c in s.conditions], "n": s.n, "documents": s.documents, "gap": s.gap,
            "ci_low": s.ci_low, "ci_high": s.ci_high, "p": s.p, "q": s.q, "score_slice": s.score_slice,
            "score_rest": s.score_rest, "explains": list(s.explains)}


def capture(an, ws) -> dict:
    """Every number of the golden files, from an Analysis (and its workspace) of the app."""
    from dashboard.compare import frames as C
    from dashboard.core.analysis import MULTI_LABEL  # noqa: F401  (the fields' kinds, as the pages read them)
    from dashboard.weak import frames as W

    out: dict[str, Any] = {}
    board = an.leaderboard()
    out["leaderboard"] = records(board)
    ranked = [r for r in board["Run"] if r in set(an.ranked_names)]
    fields = [f for f in BREAKDOWN_FIELDS if f in an.questions.columns]
    out["breakdowns"] = {f: records(an.breakdown(f)) for f in fields}
    charted = ranked[:10]
    out["charted"] = charted
    # the charted runs' rows (the page draws only those; over the questions they all attempted when those differ)
    out["breakdowns_charted"] = {f: [r for r in records(an.breakdown(f, charted)) if r["run"] in charted] for f in fields}
    out["shared"] = {"questions": an.shared(charted).questions, "differs": an.shared(charted).differs}
    settings = C.Settings(resamples=RESAMPLES)
    out["intervals"] = records(C.run_intervals(an.rows_of(charted), charted, settings, an.questions))
    flips, deltas = {}, {}
    for a, b in pairs_of(ranked):
        pairs = C.paired(an.attempted_scores([a, b])[0], a, b)
        flips[f"{a}|{b}"] = records(C.flip_table(pairs, an.questions))
        slices = C.pair_fields(pairs, an.questions, an.gold, an.declared_pages)  # as the Compare page asks
        deltas[f"{a}|{b}"] = records(C.deltas(pairs, an.questions, slices, settings))
    out["flips"], out["deltas"] = flips, deltas
    finder = {}
    for run, base in [(r, "") for r in ranked[:2]] + ([(ranked[0], ranked[1])] if len(ranked) > 1 else []):
        data = W.inputs(an.questions, an.attempted_scores([run, base] if base else [run])[0], an.gold, run, "accuracy",
                        base, an.declared_pages)
        found = W.search(data, W.Settings())
        finder[f"{run}|{base}"] = {"too_small": W.too_small(data, W.Settings()), "tested": found.tested,
                                   "questions": found.questions, "units": found.units,
                                   "min_questions": found.min_questions, "fields": list(found.fields),
                                   "skipped_fields": list(found.skipped_fields), "weak": [_slice(s) for s in found.weak],
                                   "folded": [_slice(s) for s in found.folded]}
    out["finder"] = finder
    return out


def today(bench: Path):
    """(workspace, Analysis) from runs scored in memory (engine_kit.reference: before the engine, the app's own
    path; since, ingested into DuckDB in memory -- `dashboard.core.scored.memory_store`)."""
    from engine_kit import reference

    ws, _profile, an = reference(bench)
    return ws, an


def through_the_app(bench: Path, cache: Path):
    """(workspace, Analysis) of the app itself opening `bench` (AppTest): every run scored and ingested into the
    engine of a new cache folder, then -- `restart` -- read back from it by a new server's memory."""
    import os

    from streamlit.testing.v1 import AppTest

    from dashboard.data import workspace as W
    from dashboard.shell import cache as app_cache

    before = {k: os.environ.get(k) for k in ("LENS_BENCHMARK", "LENS_CACHE_DIR", "LENS_RUNS", "LENS_SCORES",
                                             "LENS_DATA_ROOTS", "LENS_LAKE_CATALOG")}
    os.environ.update({"LENS_BENCHMARK": str(bench), "LENS_CACHE_DIR": str(cache)})
    for k in ("LENS_RUNS", "LENS_SCORES", "LENS_DATA_ROOTS", "LENS_LAKE_CATALOG"):
        os.environ.pop(k, None)
    try:
        for _ in range(2):  # the first run scores and ingests; the second, a restart, reads the engine
            for f in (app_cache._runs, app_cache._workspace_of, app_cache._analysis_of, app_cache._questions, app_cache._frame, app_cache._engine):
                f.clear()
            app_cache._ENSURED.clear()
            W._KEPT.clear()
            at = AppTest.from_file(str(HERE.parent / "dashboard" / "app.py"), default_timeout=600).run()
            assert not at.exception, [e.value for e in at.exception]
        ctx = at.session_state["lens_context"]
        return ctx.workspace, ctx.analysis
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def write(builder: Callable[[Path], Any] = today, tmp: Path | None = None) -> None:
    import tempfile

    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        for name in DATASETS:
            ws, an = builder(bench_of(name, tmp or Path(folder)))
            (FIXTURES / f"{name}.json").write_text(json.dumps(capture(an, ws), sort_keys=True, separators=(",", ":")) + "\n",
                                                  encoding="utf-8")
            print(f"wrote {FIXTURES / (name + '.json')}")


def as_drawn(golden: dict) -> dict:
    """A golden capture as the pages draw it: of the charted runs' breakdowns (`breakdown(field, charted)`), the
    charted runs' rows. Before the engine that call also returned every other run's rows over the charted runs'
    shared questions, which no page draws (the charts keep `runs`); the engine computes only the runs asked for.
    The golden files stay as captured; this is the one projection the comparison makes."""
    charted = set(golden.get("charted", []))
    out = dict(golden)
    out["breakdowns_charted"] = {f: [r for r in rows if r["run"] in charted]
                                 for f, rows in golden.get("breakdowns_charted", {}).items()}
    return out


def differences(want: Any, got: Any, where: str = "", tol: float = 1e-9) -> list[str]:
    """Where two captures differ (floats within `tol`, absolute, or relative for large ones; None == NaN)."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{where}: keys {sorted(set(want) ^ set(got))}"] if set(want) != set(got) else []
        for k in want:
            if k in got:
                out += differences(want[k], got[k], f"{where}.{k}", tol)
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: {len(want)} items, now {len(got)}"]
        return [d for k, (w, g) in enumerate(zip(want, got)) for d in differences(w, g, f"{where}[{k}]", tol)]
    if isinstance(want, float) or isinstance(got, float):
        if want is None or got is None:
            return [] if want is None and got is None else [f"{where}: {want!r}, now {got!r}"]
        w, g = float(want), float(got)
        if (math.isnan(w) and math.isnan(g)) or w == g:
            return []
        return [] if abs(w - g) <= tol * max(1.0, abs(w)) else [f"{where}: {w!r}, now {g!r}"]
    return [] if want == got else [f"{where}: {want!r}, now {got!r}"]


if __name__ == "__main__":
    write()

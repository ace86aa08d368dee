"""Scale of the dashboard and the CLI: 50 runs x 20,000 questions, and how figures grow to it.

    .venv/bin/python bench/bench_scale.py                    # the growth grid, the main campaign, the CLI
    .venv/bin/python bench/bench_scale.py --grid 20000x50    # only some configurations (questions x runs)
    .venv/bin/python bench/bench_scale.py --no-cli --repeat 3 --browser

A script, not a test: it prints figures and asserts nothing but the correctness checks noted.

Dashboard, per configuration (questions x runs; campaigns written by bench/make_campaign.py into
bench/out/ when missing), each step in a fresh child process -- a server restart -- whose whole
process tree's resident memory is sampled from /proc every 250 ms by this process:
(a) first scoring: an empty cache folder (LENS_CACHE_DIR, a folder under bench/out/), the app's
    first script run through streamlit.testing.v1.AppTest: reading the files, scoring every run
    on the shared worker pool and ingesting it into the engine (DuckDB in the cache folder's
    engine/), building the analysis, drawing the overview;
(b) restart: a new process, the engine filled: the first script run again (files read, every run
    found in the engine by its identity, overview drawn), and the process's wall time from its start (imports
    included); then the server time of each interaction (`at.run()` timed, --repeat times):
    change the overview's metric, change the runs in the charts, open a slice, change the slice
    (explorer filter), change the explorer's runs, select a question; and, measured directly on
    the app's own analysis in that process, compare two runs (their rows from the engine, then
    dashboard.compare: pairing, flip table, per-slice deltas -- the latter once, as it is the heaviest)
    and disagreement counts over the two runs' rows (questions on which the three metrics disagree, and
    on which the two runs disagree);
(c) for the largest configuration, one prediction file changed (a byte appended): a restart
    rescoring that run only;
(d) with --browser, for the largest configuration: `streamlit run` started -> /_stcore/health ->
    the overview complete in headless Chromium (bench/bench_dashboard.py's server and page
    checks), with the cache filled.
CLI (--no-cli skips it): `python -m scoring` end to end (JSONL in, report JSON + per-question
CSV out, a subprocess each) on 1,000,000 predictions (bench/make_predictions.py), --cli-repeat
times (median), then the same run through the pure-Python reference evaluator's command line
(tests/reference_release.py, same files, same machine; about 13 minutes; --no-reference-full
skips it), whose output files must be byte-identical to the CLI's: the contract's ratio. The
ratio is also measured on the first 20,000 questions, where start-up weighs more.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import make_campaign  # noqa: E402
from bench_scoring import _tree_rss_mb  # noqa: E402

APP = ROOT / "dashboard" / "app.py"
OUT = HERE / "out"
GRID = ["1519x50", "5000x50", "20000x2", "20000x13", "20000x50"]
TARGETS = {"first": 120.0, "restart": 10.0, "interaction": 1.0, "rss_mb": 4096.0, "cli_1m": 30.0, "ratio": 30.0}


# ----------------------------------------------------------------------------- the child (one server process)


class Clock:
    """Seconds spent in named functions of the app, by wrapping them in their modules."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def wrap(self, module, name: str, label: str) -> None:
        original = getattr(module, name)

        def timed(*a, **kw):
            t = time.perf_counter()
            try:
                return original(*a, **kw)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - t

        setattr(module, name, timed)


def _generator_clock(clock: Clock, module, name: str, label: str) -> None:
    """Like Clock.wrap, for a generator function (time spent inside it, between yields)."""
    original = getattr(module, name)

    def timed(*a, **kw):
        gen = original(*a, **kw)
        while True:
            t = time.perf_counter()
            try:
                item = next(gen)
            except StopIteration:
                clock.spent[label] = clock.spent.get(label, 0.0) + time.perf_counter() - t
                return
            clock.spent[label] = clock.spent.get(label, 0.0) + time.perf_counter() - t
            yield item

    setattr(module, name, timed)


def child(mode: str, bench: str, repeat: int, started: float) -> dict:
    """One server process: the app's first script run, then (mode 'restart') the interactions."""
    imported = time.time()
    import pandas as pd
    from streamlit.testing.v1 import AppTest

    from dashboard.core import analysis as tables
    from dashboard.shell import cache, scorer

    clock = Clock()
    clock.wrap(cache, "load_workspace", "read files")
    clock.wrap(scorer, "scored_runs", "runs in the engine (found, or scored and ingested)")
    clock.wrap(scorer, "ingest", "ingesting into the engine")
    _generator_clock(clock, scorer, "score_runs", "scoring (pool, per run)")
    clock.wrap(tables.Analysis, "build", "building the analysis")
    os.environ["LENS_BENCHMARK"] = bench
    for k in ("LENS_RUNS", "LENS_SCORES"):
        os.environ.pop(k, None)
    at = AppTest.from_file(str(APP), default_timeout=3600)  # 1,000 runs scored first take over 20 min
    t = time.perf_counter()
    at.run()
    first = time.perf_counter() - t
    if at.exception:
        raise SystemExit(f"app exception: {[e.value for e in at.exception]}")
    board = at.dataframe[0].value if len(at.dataframe) else []
    out = {"first_run_s": first, "wall_from_start_s": time.time() - started, "imports_s": imported - started,
           "phases": dict(clock.spent), "runs_on_board": len(board), "rss_after_first_mb": _rss_mb(),
           "store": _engine_facts(at)}
    if mode == "restart":
        out["pages"] = pages(at, repeat)
        out["rss_after_pages_mb"] = _rss_mb()
        out["interactions"] = interactions(at, repeat, pd)
    if mode == "profile":
        t = time.perf_counter()
        at.sidebar.selectbox(key="profile").set_value("xldocbench-1519").run()
        out["profile_switch_s"] = time.perf_counter() - t
        if at.exception:
            raise SystemExit(f"app exception: {[e.value for e in at.exception]}")
        out["store_after_switch"] = _engine_facts(at)
    out["maxrss_self_mb"] = _maxrss_mb()
    return out


def _engine_facts(at) -> dict:
    """What the engine holds after a script run: where it is, its runs (every version) and its file's size."""
    from dashboard.shell import context
    from scoring.engine import queries as Q

    store = at.session_state[context.CONTEXT].analysis.store
    with store.read() as con:
        runs = len(Q.runs(con, current=False))
    path = Path(os.environ.get("LENS_CACHE_DIR", "")) / "engine" / "lens.duckdb"
    return {"engine": store.engine.shown(), "runs": runs, "mb": round(path.stat().st_size / 1e6, 1) if path.is_file() else None}


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def pages(at, repeat: int) -> dict[str, list[float]]:
    """Server time (s) of opening each page from the overview (`at.switch_page(...).run()`), `repeat`
    times: the explorer and the Data page (reproducibility and join tables over every run)."""
    out: dict[str, list[float]] = {}
    for _ in range(repeat):
        for label, page in (("explorer page load", "views/questions.py"), ("Data page load", "views/data.py")):
            at.switch_page("views/overview.py").run()
            t = time.perf_counter()
            at.switch_page(page).run()
            out.setdefault(label, []).append(time.perf_counter() - t)
            if at.exception:
                raise SystemExit(f"app exception on {page}: {[e.value for e in at.exception]}")
    return out


def _maxrss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def interactions(at, repeat: int, pd) -> dict[str, list[float]]:
    """Server time (s) of each interaction, `repeat` times; an interaction whose widget is not
    there (the page changed) is reported as an error message instead."""
    from dashboard.shell import context

    times: dict[str, list[float]] = {}
    errors: dict[str, str] = {}

    def clock(name: str, prepare) -> None:
        try:
            prepare()
            t = time.perf_counter()
            at.run()
            times.setdefault(name, []).append(time.perf_counter() - t)
            if at.exception:
                errors[name] = str([e.value for e in at.exception])[:300]
        except Exception as exc:  # a widget renamed by a later change: report it, measure the rest
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]

    ctx = at.session_state[context.CONTEXT]
    an = ctx.analysis
    board = list(an.leaderboard()["Run"])
    labels = sorted(an.breakdown("reasoning_type")["label"].unique())
    for i in range(repeat):
        at.switch_page("views/overview.py").run()
        clock("overview: change the metric", lambda: at.segmented_control(key="ov_metric").set_value(
            ("token_f1", "anls", "accuracy")[i % 3]))
        clock("overview: change the runs in the charts", lambda: at.multiselect(key="ov_runs").set_value(
            board[i % 5: i % 5 + 10]))

        def pick() -> None:
            at.selectbox(key="ov_pick_field").set_value("reasoning_type")
            at.selectbox(key="ov_pick_label").set_value(labels[i % len(labels)])
            at.selectbox(key="ov_pick_run").set_value(board[i % len(board)])
            next(b for b in at.button if b.label == "Show these questions").click()
        clock("open a slice (overview -> explorer)", pick)
        at.switch_page("views/questions.py")
        clock("explorer: change the slice (a filter)", lambda: at.multiselect(key="x_f.reasoning_type").set_value(
            [labels[(i + 3) % len(labels)]]))
        clock("explorer: change the runs", lambda: at.multiselect(key="x_runs").set_value(
            [board[(i + 1) % len(board)], board[(i + 2) % len(board)]]))

        def select() -> None:
            key = at.dataframe[0].key
            at.session_state[key] = {"selection": {"rows": [i], "columns": [], "cells": []}}
        clock("explorer: select a question", select)
    peak_app = _maxrss_mb()  # the app's own work so far; the direct measurements below are the bench's
    times |= direct_interactions(an, repeat, pd)
    return {"times": times, "errors": errors, "maxrss_before_direct_mb": peak_app}


def direct_interactions(an, repeat: int, pd) -> dict[str, list[float]]:
    """Compare two runs and disagreement counts, timed on the app's analysis in this process (the two runs'
    rows read from the engine each time: a new Analysis, as a new pair on the Compare page)."""
    out: dict[str, list[float]] = {}
    runs = list(an.leaderboard()["Run"])
    try:
        from dashboard.compare import frames as compare
    except ImportError:
        compare = None
    for i in range(repeat):
        a, b = runs[i % len(runs)], runs[(i + 1) % len(runs)]
        if compare is not None:
            t = time.perf_counter()
            pairs = compare.paired(an.attempted_scores([a, b])[0], a, b)
            compare.flip_table(pairs, an.questions)
            out.setdefault("compare two runs: pair + flip table (dashboard.compare)", []).append(time.perf_counter() - t)
            if i == 0:  # bootstrap intervals for every slice (under a second since the exact-count draws), measured once
                t = time.perf_counter()
                # the gold's field values as the page takes them (read once per workspace, included here)
                once = {"values": an.question_values()} if hasattr(an, "question_values") else {}
                compare.deltas(pairs, an.questions, compare.pair_fields(pairs, an.questions, an.gold, an.declared_pages, **once))
                out.setdefault("compare two runs: per-slice deltas with intervals (dashboard.compare)", []).append(
                    time.perf_counter() - t)
        t = time.perf_counter()
        s = an.rows_of([a, b])
        right = s["accuracy"] >= 1.0
        metrics_disagree = (right != (s["token_f1"] >= 0.5)) | (right != (s["anls"] >= 0.5))
        per_run = metrics_disagree.groupby(s["run"], sort=False).sum()
        wide = s.pivot_table(index="question_id", columns="run", values="accuracy", aggfunc="first")
        run_disagree = int((wide[a] != wide[b]).sum()) if a != b else 0
        out.setdefault("disagreement counts: metrics per run + two runs (their rows from the engine)", []).append(
            time.perf_counter() - t)
        assert len(per_run) <= 2 and run_disagree >= 0
    return out


# ----------------------------------------------------------------------------- the parent


def run_child(mode: str, bench: Path, cache_dir: Path, repeat: int, root: Path = ROOT) -> tuple[dict, float]:
    """One server process of the checkout at `root` (this one, or --against's, with its own .venv)."""
    env = dict(os.environ, LENS_CACHE_DIR=str(cache_dir))
    python = sys.executable if root == ROOT else str(root / ".venv" / "bin" / "python")
    cmd = [python, str(root / "bench" / "bench_scale.py"), "--child", mode, str(bench), str(repeat), repr(time.time())]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.25)
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"child {mode} on {bench} failed:\n{err[-3000:]}")
    line = [x for x in out.splitlines() if x.startswith("{")][-1]
    return json.loads(line), peak


def gold_only(bench: Path) -> Path:
    """The campaign's gold and documents without its runs: the empty server of the same benchmark."""
    out = bench.parent / f"{bench.name}-gold-only"
    out.mkdir(exist_ok=True)
    for f in bench.glob("*.jsonl"):
        target = out / f.name
        if not target.exists():
            shutil.copy(f, target)
    return out


EMPTY: dict[int, tuple[float, float]] = {}  # questions -> (peak MB, after the first script run MB) of the empty server


def empty_server(q: int, bench: Path, repeat: int) -> float:
    """Peak memory (MB) of the app on the benchmark's gold with no run: what every configuration's
    memory per scored row is counted above."""
    if q not in EMPTY:
        cache_dir = OUT / "scale_cache" / f"{q}x0"
        shutil.rmtree(cache_dir, ignore_errors=True)
        res, peak = run_child("first", gold_only(bench), cache_dir, repeat)
        EMPTY[q] = (peak, res["rss_after_first_mb"])
        print(f"[{q}x0] the empty server (gold only): peak {peak:,.0f} MB", flush=True)
    return EMPTY[q][0]


def measure(config: str, repeat: int, change_one: bool, profile_switch: bool = False, kept: dict | None = None) -> dict:
    """One configuration: the empty server, the first scoring on an empty cache folder, a restart with
    its pages and interactions. `kept` (--restarts-only): the first scoring measured before, whose
    cache folder is kept; only the restart is measured again (e.g. when the machine is quieter)."""
    q, r = (int(x) for x in config.split("x"))
    bench = make_campaign.ensure(q, r)
    cache_dir = OUT / "scale_cache" / config
    if kept is None:
        shutil.rmtree(cache_dir, ignore_errors=True)
    load = os.getloadavg()[0]
    empty = empty_server(q, bench, repeat) if kept is None else kept["empty_peak"]
    if kept is None:
        first, first_peak = run_child("first", bench, cache_dir, repeat)
    else:
        first, first_peak = kept["first"], kept["first_peak"]
    print(f"[{config}] first scoring{' (measured before)' if kept else ''}: {first['first_run_s']:.1f} s "
          f"({fmt_phases(first)}), peak {first_peak:,.0f} MB; cache {first['store']}", flush=True)
    restart, restart_peak = run_child("restart", bench, cache_dir, repeat)
    print(f"[{config}] restart: first script run {restart['first_run_s']:.2f} s, process start -> overview "
          f"{restart['wall_from_start_s']:.2f} s ({fmt_phases(restart)}), peak {restart_peak:,.0f} MB; "
          f"cache {restart['store']}", flush=True)
    for name, values in restart["pages"].items():
        print(f"[{config}]   {name}: {', '.join(f'{1000 * v:.0f}' for v in values)} ms", flush=True)
    for name, values in restart["interactions"]["times"].items():
        print(f"[{config}]   {name}: {', '.join(f'{1000 * v:.0f}' for v in values)} ms", flush=True)
    for name, msg in restart["interactions"]["errors"].items():
        print(f"[{config}]   {name}: NOT MEASURED ({msg})", flush=True)
    peak = max(first_peak, restart_peak)
    per_row = (peak - empty) * 1e6 / (q * r) / 1000
    print(f"[{config}] memory per scored row: ({peak:,.0f} - {empty:,.0f} MB empty) / {q * r:,} rows = {per_row:.3f} KB "
          f"(the server process's own peak: first scoring {first['maxrss_self_mb']:,.0f} MB; restart "
          f"{restart['maxrss_self_mb']:,.0f} MB, of which before the bench's direct compare/disagreement measurements "
          f"{restart['interactions']['maxrss_before_direct_mb']:,.0f} MB)", flush=True)
    res = {"config": config, "questions": q, "runs": r, "rows": q * r, "first": first, "first_peak": first_peak,
           "restart": restart, "restart_peak": restart_peak, "load_before": load, "load_after": os.getloadavg()[0],
           "empty_peak": empty, "kb_per_row": per_row}
    if profile_switch:
        switched, switch_peak = run_child("profile", bench, cache_dir, repeat)
        print(f"[{config}] profile switch (xldocbench -> xldocbench-1519, every run scored again): "
              f"{switched['profile_switch_s']:.1f} s, peak {switch_peak:,.0f} MB; cache {switched['store_after_switch']}",
              flush=True)
        res["profile"] = {"s": switched["profile_switch_s"], "peak": switch_peak}
    if change_one:
        target = sorted((bench / "runs").iterdir())[r // 2]
        original = target.read_bytes()
        try:
            target.write_bytes(original + b"\n")
            changed, changed_peak = run_child("first", bench, cache_dir, repeat)
        finally:
            target.write_bytes(original)
        print(f"[{config}] one prediction file changed: restart {changed['first_run_s']:.2f} s "
              f"({fmt_phases(changed)}), cache {changed['store']}", flush=True)
        res["changed"] = changed
    return res


def side_by_side(other: Path, config: str, repeat: int) -> dict:
    """Issue 37's "no slower than today's in-process path": the same campaign served by this checkout
    (the engine) and by `other` (a checkout of the code before it, with its own .venv and cache folder),
    first scoring once each, then `repeat` restarts of each, interleaved (ours first on even
    repetitions, theirs first on odd), each a new process; medians and their ratio, with the load."""
    q, r = (int(x) for x in config.split("x"))
    bench = make_campaign.ensure(q, r)
    ours_cache, theirs_cache = OUT / "scale_cache" / config, OUT / "scale_cache" / f"{config}-before"
    shutil.rmtree(theirs_cache, ignore_errors=True)
    load = [os.getloadavg()[0]]
    theirs_first, theirs_first_peak = run_child("first", bench, theirs_cache, 1, root=other)
    if not (ours_cache / "engine").is_dir():
        run_child("first", bench, ours_cache, 1)
    runs: dict[str, list[tuple[dict, float]]] = {"engine": [], "before": []}
    for k in range(repeat):
        order = [("engine", ROOT, ours_cache), ("before", other, theirs_cache)]
        for who, root, cache in order if k % 2 == 0 else order[::-1]:
            load.append(os.getloadavg()[0])
            runs[who].append(run_child("restart", bench, cache, 1, root=root))
    def med_of(who: str, pick) -> float:
        return statistics.median(pick(res) for res, _ in runs[who])
    rows = {"restart: first script run (s)": lambda res: res["first_run_s"],
            "restart: process start -> overview (s)": lambda res: res["wall_from_start_s"]}
    names = set(runs["engine"][0][0]["interactions"]["times"]) & set(runs["before"][0][0]["interactions"]["times"])
    for name in sorted(names):
        rows[f"{name} (s)"] = lambda res, name=name: med(res["interactions"]["times"][name])
    table = {label: (med_of("engine", f), med_of("before", f)) for label, f in rows.items()}
    peaks = (statistics.median(p for _, p in runs["engine"]), statistics.median(p for _, p in runs["before"]))
    print(f"\n[{config}] side by side with {other} (the in-process path), {repeat} interleaved restarts each, "
          f"load average {min(load):.1f}-{max(load):.1f}:\n")
    print("| measure | engine | in-process path | ratio (engine / in-process) |\n|---|---|---|---|")
    for label, (a, b) in table.items():
        print(f"| {label} | {a:.3f} | {b:.3f} | {a / b:.2f}x |")
    print(f"| peak memory of the process tree, restart (MB) | {peaks[0]:,.0f} | {peaks[1]:,.0f} | {peaks[0] / peaks[1]:.2f}x |")
    print(f"(first scoring, once each: in-process path {theirs_first['first_run_s']:.1f} s, peak {theirs_first_peak:,.0f} MB)",
          flush=True)
    return {"config": config, "table": table, "peaks": peaks, "load": load,
            "before_first": (theirs_first["first_run_s"], theirs_first_peak)}


def fmt_phases(r: dict) -> str:
    return ", ".join(f"{k} {v:.2f} s" for k, v in r["phases"].items())


def browser_restart(bench: Path, cache_dir: Path, times: int) -> list[tuple[float, float, float, float]]:
    """(server ready, server start -> leaderboard drawn, page -> overview complete, server start ->
    overview complete) with the cache filled, each on a new server (`bench_dashboard.server` keeps
    LENS_CACHE_DIR)."""
    import bench_dashboard as bd
    from playwright.sync_api import sync_playwright

    out = []
    os.environ["LENS_CACHE_DIR"] = str(cache_dir)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bd.CHROMIUM, args=bd.CHROMIUM_FLAGS)
        for _ in range(times):
            with bd.server(bench) as (url, up):
                page_s, phases = bd.first_load(browser, url)
                out.append((up, up + phases["first table drawn"], page_s, up + page_s))
                print(f"  browser restart: server ready {up:.2f} s, leaderboard drawn {out[-1][1]:.2f} s, "
                      f"overview complete {out[-1][3]:.2f} s (load {os.getloadavg()[0]:.1f})", flush=True)
        browser.close()
    return out


# ----------------------------------------------------------------------------- CLI


def cli(n: int, sample: int, repeat: int = 3, reference_full: bool = True) -> dict:
    import make_predictions

    gold, preds = OUT / f"gold_{n}.jsonl", OUT / f"predictions_{n}.jsonl"
    if not (gold.is_file() and preds.is_file()):
        make_predictions.generate(n, OUT)
    tmp = OUT / "scale_cli"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    py = sys.executable

    def timed(cmd: list[str], memory: bool = False) -> tuple[float, float]:
        """Wall time of the command; with `memory`, also the peak memory of its process tree,
        sampled every 0.1 s -- in a run of its own: reading /proc/PID/smaps_rollup of a 2 GB
        tree ten times a second costs the run about 4 s at 1M."""
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = 0.0
        if memory:
            while proc.poll() is None:
                peak = max(peak, _tree_rss_mb(proc.pid))
                time.sleep(0.1)
        _, err = proc.communicate()
        wall = time.perf_counter() - t
        if proc.returncode:
            raise SystemExit(f"{cmd[:3]} failed: {err[-2000:]}")
        return wall, peak

    full_cmd = [py, "-m", "scoring", "--gold-files", str(gold), "--predictions", str(preds), "--profile", "xldocbench-1519",
                "--output", str(tmp / "full.json"), "--per-question-csv", str(tmp / "full.csv")]
    fulls = []
    for k in range(repeat):
        full, _ = timed(full_cmd)
        fulls.append(full)
        print(f"CLI, {n:,} predictions end to end, run {k + 1}: {full:.1f} s ({n / full:,.0f}/s) "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    _, full_peak = timed(full_cmd, memory=True)
    print(f"CLI, {n:,} predictions: peak memory of the process tree (a separate run) {full_peak:,.0f} MB", flush=True)
    full = statistics.median(fulls)
    print(f"CLI, {n:,} predictions end to end: median {full:.1f} s of {repeat} (range {min(fulls):.1f}-{max(fulls):.1f} s)",
          flush=True)
    ref_full = same_full = None
    if reference_full:  # the contract's ratio: the same run through the pure-Python reference (about 13 minutes)
        ref_full, _ = timed([py, str(ROOT / "tests" / "reference_release.py"), "--gold-files", str(gold), "--predictions",
                             str(preds), "--output", str(tmp / "ref_full.json"), "--per-question-csv", str(tmp / "ref_full.csv")])
        same_full = _same_files(tmp / "ref_full.json", tmp / "full.json") and _same_files(tmp / "ref_full.csv", tmp / "full.csv")
        print(f"CLI vs the pure-Python reference CLI, the same {n:,}-prediction run end to end: {ref_full:.1f} s vs "
              f"{full:.1f} s (median) = {ref_full / full:.1f}x (from {ref_full / max(fulls):.1f}x to {ref_full / min(fulls):.1f}x "
              f"over the {repeat} runs); outputs byte-identical: {same_full}", flush=True)
    phases = cli_phases(gold, preds, tmp)
    print("  where the time goes (the CLI's steps, timed in a child): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()), flush=True)
    gs, ps = tmp / f"gold_{sample}.jsonl", tmp / f"predictions_{sample}.jsonl"
    for src, dst in ((gold, gs), (preds, ps)):
        with open(src, "rb") as fi, open(dst, "wb") as fo:
            for k, line in enumerate(fi):
                if k >= sample:
                    break
                fo.write(line)
    ref, _ = timed([py, str(ROOT / "tests" / "reference_release.py"), "--gold-files", str(gs), "--predictions", str(ps),
                    "--output", str(tmp / "ref.json"), "--per-question-csv", str(tmp / "ref.csv")])
    fast = min(timed([py, "-m", "scoring", "--gold-files", str(gs), "--predictions", str(ps), "--profile", "xldocbench-1519",
                      "--output", str(tmp / "fast.json"), "--per-question-csv", str(tmp / "fast.csv")])[0] for _ in range(3))
    same = (tmp / "ref.json").read_bytes() == (tmp / "fast.json").read_bytes() and \
        (tmp / "ref.csv").read_bytes() == (tmp / "fast.csv").read_bytes()
    print(f"CLI vs the pure-Python reference CLI, {sample:,} questions end to end: {ref:.2f} s vs {fast:.2f} s (best of 3) "
          f"= {ref / fast:.1f}x; outputs byte-identical: {same}", flush=True)
    return {"n": n, "full_s": full, "full_runs": fulls, "full_peak": full_peak, "ref_full_s": ref_full, "same_full": same_full,
            "sample": sample, "ref_s": ref, "fast_s": fast, "same": same, "phases": phases}


def _same_files(a: Path, b: Path, block: int = 1 << 24) -> bool:
    """Byte-equal files, compared a block at a time (the 1M report is half a gigabyte)."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(block), fb.read(block)
            if x != y:
                return False
            if not x:
                return True


def cli_phases(gold: Path, preds: Path, tmp: Path) -> dict[str, float]:
    """The CLI's steps (scoring.cli._run without its printing), each timed, in a fresh process."""
    proc = subprocess.run([sys.executable, __file__, "--cli-phases", str(gold), str(preds), str(tmp)], cwd=ROOT,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"CLI phases failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def _cli_phases_child(gold: str, preds: str, tmp: str) -> dict[str, float]:
    """The CLI's steps as scoring.cli runs them (`_run_in_columns`): the gold and the predictions read
    into columns, joined, then scored, encoded and written (in parts forked on every core from
    columnar.FORK_MIN questions)."""
    t0 = time.perf_counter()
    from scoring import guard
    from scoring._gc import paused_gc
    from scoring.columnar import join, run_columns
    from scoring.loaders import load_gold_columns, load_prediction_columns
    from scoring.profiles import get_profile
    from scoring.workers import usable_cores

    guard.supervise()  # as the CLI: the files are read here, not in a supervised job whose result is pickled back
    out: dict[str, float] = {"imports": time.perf_counter() - t0}
    with paused_gc():
        t = time.perf_counter()
        _, g = load_gold_columns([gold], release=True)
        out["read the gold into columns"] = time.perf_counter() - t
        t = time.perf_counter()
        _, p = load_prediction_columns(preds, release=True)
        out["read the predictions into columns"] = time.perf_counter() - t
        t = time.perf_counter()
        joined = join(g, p, ignore_missing=False)
        out["the join"] = time.perf_counter() - t
        t = time.perf_counter()
        run_columns(g, p, joined, profile=get_profile("xldocbench-1519"), name="phases", ignore_missing=False,
                    prediction_field=None, report=Path(tmp) / "phases.json", csv_path=Path(tmp) / "phases.csv", lens=False,
                    workers=usable_cores())
        out["scoring, encoding and writing"] = time.perf_counter() - t
    return out


# ----------------------------------------------------------------------------- report


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(results: list[dict], browser: list | None, cli_res: dict | None, repeat: int) -> None:
    import streamlit

    print(f"\nmachine: {os.cpu_count()} cores, Python {platform.python_version()}, streamlit {streamlit.__version__}; "
          f"load average during the runs: " + ", ".join(f"{r['config']} {r['load_before']:.1f}->{r['load_after']:.1f}"
                                                       for r in results))
    if results:
        print("\n| questions × runs | scored rows | first scoring | restart → overview (script / process) | "
              "peak memory (first / restart) | worst interaction (median) |")
        print("|---|---|---|---|---|---|")
    base = results[0] if results else None
    for r in results:
        inter = r["restart"]["interactions"]["times"]
        worst = max(((med(v), k) for k, v in inter.items()), default=(float("nan"), "—"))
        print(f"| {r['questions']:,} × {r['runs']} | {r['rows']:,} | {r['first']['first_run_s']:.1f} s | "
              f"{r['restart']['first_run_s']:.2f} s / {r['restart']['wall_from_start_s']:.2f} s | "
              f"{r['first_peak']:,.0f} / {r['restart_peak']:,.0f} MB | {1000 * worst[0]:.0f} ms ({worst[1]}) |")
    if len(results) > 1:
        print("\nGrowth, side by side (ratio to the first configuration listed; rows ratio first):")
        for r in results[1:]:
            print(f"  {base['config']} -> {r['config']}: rows x{r['rows'] / base['rows']:.1f}; first scoring "
                  f"x{r['first']['first_run_s'] / base['first']['first_run_s']:.1f}; restart "
                  f"x{r['restart']['first_run_s'] / base['restart']['first_run_s']:.1f}; peak memory "
                  f"x{r['first_peak'] / base['first_peak']:.1f}")
    if results and "kb_per_row" in results[0]:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e6
        print(f"\nMemory per scored row ((peak of the process tree - the empty server's peak) / rows; this machine has "
              f"{total_mb / 1000:.1f} GB):\n")
        print("| questions × runs | empty server | peak | KB per scored row | explorer page load | Data page load |")
        print("|---|---|---|---|---|---|")
        for r in results:
            pg = r["restart"].get("pages", {})
            print(f"| {r['questions']:,} × {r['runs']} | {r['empty_peak']:,.0f} MB | "
                  f"{max(r['first_peak'], r['restart_peak']):,.0f} MB | {r['kb_per_row']:.3f} | "
                  f"{1000 * med(pg.get('explorer page load', [])):.0f} ms | {1000 * med(pg.get('Data page load', [])):.0f} ms |")
        worst = max(r["kb_per_row"] for r in results)
        q = results[-1]["questions"]
        runs_fit = (total_mb - results[-1]["empty_peak"]) * 1000 / (worst * q)
        print(f"\nBreak-even on this machine: ({total_mb:,.0f} MB - the empty server) / ({worst:.3f} KB x {q:,} questions) "
              f"= about {runs_fit:,.0f} runs of {q:,} questions")
        if "profile" in results[-1]:
            pr = results[-1]["profile"]
            print(f"Profile switch at {results[-1]['config']} (every run scored again): {pr['s']:.1f} s, peak {pr['peak']:,.0f} MB")
    names = sorted({k for r in results for k in r["restart"]["interactions"]["times"]})
    if names:
        print(f"\nServer time per interaction, median of {repeat} (ms):\n")
        print("| interaction | " + " | ".join(f"{r['questions']:,} × {r['runs']}" for r in results) + " |")
        print("|---|" + "---|" * len(results))
        for n in names:
            cells = [r["restart"]["interactions"]["times"].get(n) for r in results]
            print(f"| {n} | " + " | ".join(f"{1000 * med(c):.0f}" if c else "—" for c in cells) + " |")
    big = results[-1] if results else None
    if big:
        inter = big["restart"]["interactions"]["times"]
        worst = max((med(v) for v in inter.values()), default=float("nan"))
        rows = [("first scoring, app's first script run, empty cache", f"{big['first']['first_run_s']:.1f} s", "< 2 min",
                 big['first']['first_run_s'] < TARGETS["first"]),
                ("restart → usable overview (new process: imports + first script run, cache filled)",
                 f"{big['restart']['wall_from_start_s']:.1f} s", "< 10 s", big['restart']['wall_from_start_s'] < TARGETS["restart"]),
                ("slowest interaction, server time (median)", f"{1000 * worst:.0f} ms", "< 1 s", worst < TARGETS["interaction"]),
                ("peak resident memory, whole process tree (first scoring / restart)",
                 f"{big['first_peak']:,.0f} / {big['restart_peak']:,.0f} MB", "< 4 GB",
                 max(big['first_peak'], big['restart_peak']) < TARGETS["rss_mb"])]
        if "changed" in big:
            rows.append(("one prediction file changed: restart rescoring that run only",
                         f"{big['changed']['first_run_s']:.1f} s", "—", None))
        if browser:
            rows.append(("restart in the browser: server start → leaderboard drawn (cache filled), median",
                         f"{med([b[1] for b in browser]):.1f} s", "< 10 s", med([b[1] for b in browser]) < TARGETS["restart"]))
            rows.append(("restart in the browser: server start → overview complete (cache filled), median",
                         f"{med([b[3] for b in browser]):.1f} s", "—", None))
        print(f"\n| figure ({big['questions']:,} × {big['runs']}) | measured | target | met |\n|---|---|---|---|")
        for label, value, target, met in rows:
            print(f"| {label} | {value} | {target} | {'—' if met is None else ('yes' if met else '**no**')} |")
    if cli_res:
        print("\n| figure (CLI) | measured | target | met |\n|---|---|---|---|")
        for label, value, target, met in cli_rows(cli_res):
            print(f"| {label} | {value} | {target} | {'—' if met is None else ('yes' if met else '**no**')} |")


def cli_rows(c: dict) -> list[tuple[str, str, str, bool | None]]:
    rows: list[tuple[str, str, str, bool | None]] = [
        (f"CLI, {c['n']:,} predictions end to end (median of {len(c['full_runs'])})",
         f"{c['full_s']:.1f} s ({min(c['full_runs']):.1f}-{max(c['full_runs']):.1f})", "< 30 s", c['full_s'] < TARGETS["cli_1m"])]
    if c["ref_full_s"]:
        ratio = c["ref_full_s"] / c["full_s"]
        rows.append((f"CLI vs pure-Python reference CLI, the same {c['n']:,}-prediction run, end to end",
                     f"{ratio:.1f}x ({c['ref_full_s']:.0f} s vs {c['full_s']:.1f} s; identical: {c['same_full']})", "≥ 30x",
                     ratio >= TARGETS["ratio"] and bool(c["same_full"])))
    ratio = c['ref_s'] / c['fast_s']
    rows.append((f"the same ratio on the first {c['sample']:,} questions (start-up weighs more)",
                 f"{ratio:.1f}x ({c['ref_s']:.1f} s vs {c['fast_s']:.2f} s)", "—", None))
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--cli-phases"]:
        print(json.dumps(_cli_phases_child(*sys.argv[2:5])))
        return
    if sys.argv[1:2] == ["--child"]:
        mode, bench, repeat, started = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        print(json.dumps(child(mode, bench, repeat, started)))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", nargs="+", default=GRID, help="configurations QUESTIONSxRUNS, smallest first")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also a restart in headless Chromium (largest configuration)")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--no-dashboard", action="store_true")
    ap.add_argument("--campaign", action="store_true",
                    help="issue 27's grid: 20000x50, 20000x100, 20000x200, with a profile switch on the largest")
    ap.add_argument("--profile-switch", action="store_true", help="measure a profile switch on the largest configuration")
    ap.add_argument("--reuse", action="store_true", help="take configurations measured before from bench/out/scale_results/")
    ap.add_argument("--no-change-one", action="store_true", help="skip the restart with one prediction file changed")
    ap.add_argument("--restarts-only", action="store_true",
                    help="keep each configuration's first scoring measured before (and its filled cache folder): "
                         "measure the restart, its pages and interactions again")
    ap.add_argument("--against", type=Path, metavar="CHECKOUT",
                    help="also serve the last configuration with CHECKOUT (a checkout of the code before the engine, "
                         "with its own .venv): restarts interleaved with ours, medians and ratios")
    ap.add_argument("--cli-n", type=int, default=1_000_000)
    ap.add_argument("--cli-sample", type=int, default=20_000)
    ap.add_argument("--cli-repeat", type=int, default=3, help="end-to-end runs of the CLI on the full run (median reported)")
    ap.add_argument("--no-reference-full", action="store_true",
                    help="skip the pure-Python reference on the full run (~13 min); the sample's ratio is still measured")
    args = ap.parse_args()
    if args.campaign:
        args.grid, args.profile_switch = ["20000x50", "20000x100", "20000x200"], True
    results = []
    if not args.no_dashboard:
        for k, config in enumerate(args.grid):
            saved = OUT / "scale_results" / f"{config}.json"
            if args.reuse and saved.is_file():
                results.append(json.loads(saved.read_text()))
                print(f"[{config}] reused {saved}")
                continue
            last = k == len(args.grid) - 1
            kept = json.loads(saved.read_text()) if args.restarts_only and saved.is_file() else None
            results.append(measure(config, args.repeat, change_one=last and not kept and not args.no_change_one,
                                   profile_switch=last and args.profile_switch and not kept, kept=kept))
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(results[-1]))
    if args.against and args.grid:
        saved = OUT / "scale_results" / f"{args.grid[-1]}-against.json"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(side_by_side(args.against.resolve(), args.grid[-1], args.repeat)))
    browser = None
    if args.browser and results:
        big = results[-1]
        browser = browser_restart(make_campaign.default_out(big["questions"], big["runs"]),
                                  OUT / "scale_cache" / big["config"], 3)
        print(f"browser restart (server ready, page, total): {browser}")
    cli_res = None if args.no_cli else cli(args.cli_n, args.cli_sample, args.cli_repeat, not args.no_reference_full)
    report(results, browser, cli_res, args.repeat)


if __name__ == "__main__":
    main()

"""Speed benchmark of scoring/'s fast path (a script, not a test).

    .venv/bin/python bench/bench_scoring.py [--n 1000000] [--sample 20000] [--workers 2]
                                            [--profile xldocbench-1519] [--out bench/out]

1. Generates (or reuses) N gold questions and N predictions with bench/make_predictions.py.
2. (a) In a fresh child process, so that its memory high-water mark is the scoring's alone:
   `scoring.loaders.load_gold`, `load_predictions`, `scoring.evaluate.evaluate(...,
   workers=W)` and the report JSON + per-question CSV written to disk as the CLI writes them --
   JSONL to report -- and prints wall time, throughput and peak memory (the main process's
   ru_maxrss, and the resident memory of the whole process tree, forkserver workers included,
   sampled from /proc every 250 ms).
3. (b) On the first `--sample` questions (written as their own JSONL files): the plain
   pure-Python reference (tests/reference_release.py, double-loop edit distance) and the fast
   path with workers=1, each from JSONL to report; checks that both give identical rounded
   scores on every question, and prints the ratio.
4. (c) The command line itself at `--cli-n` predictions (100,000 by default; issue 27.3): `python
   -m scoring` JSONL -> report JSON + per-question CSV, each run a subprocess, its CPU time the
   user + system time of the whole process tree (`RUSAGE_CHILDREN` around the run: every process
   it forked and waited for counts, so a second core cannot flatter it), interleaved `--cli-reps`
   times with the pure-Python reference CLI (tests/reference_release.py) on the same files -- and,
   with `--record-path`, with the CLI's record path (`evaluate` + `write_files`, which --categories-csv
   takes) -- medians, the 1-minute load average before each run, the wall-time ratio to the
   reference, and whether the outputs are byte-identical. `--cli-only` runs only this part.
   `--cli-before DIR` also times, in the same interleaved runs, the `scoring` package found in DIR
   (e.g. `git archive <commit> scoring | tar -x -C DIR`) and compares its outputs byte for byte:
   before and after in one run. `--cli-phases` then times the column path's phases in a child
   process (CPU of the process; interpreter start and imports measured as processes of their own),
   best and median of `--cli-reps`: where the CPU-seconds go.
5. Prints a markdown table ready for bench/README.md, with the targets: >=30x the pure-Python
   path, 1M predictions in < 60 s on 2 cores, peak memory < 2 GB; 100,000 predictions <= 1.3 CPU-s.
"""

from __future__ import annotations

import argparse
import filecmp
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

import make_predictions  # noqa: E402


def _maxrss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # KiB on Linux


def _pss_bytes(pid: int) -> int | None:
    """The process's proportional set size: its private pages plus its share of pages shared
    with other processes (a forked child shares its parent's pages until either writes them)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _tree_rss_mb(pid: int) -> float:
    """Memory of a process and all its descendants (forkserver workers are grandchildren, which
    RUSAGE_CHILDREN never sees), from /proc: the sum of their proportional set sizes, so that
    pages a forked child still shares with its parent count once (resident sizes where the
    kernel gives no PSS)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * resource.getpagesize()
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(_pss_bytes(p) or rss.get(p, 0) for p in tree) / 2**20


def _run_sampling_memory(cmd: list[str]) -> tuple[str, float]:
    """Run the measured child and poll its process tree's resident memory every 250 ms from
    this process. (A sampling thread inside the child would fight the child's CPU-bound main
    thread for the GIL at every /proc read and slowed it by a third.)"""
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while child.poll() is None:
        peak = max(peak, _tree_rss_mb(child.pid))
        time.sleep(0.25)
    out, err = child.communicate()
    if child.returncode:
        raise SystemExit(f"the measured child failed:\n{err}")
    return out, peak


def fast_phase(gold_path: str, pred_path: str, workers: int, profile: str) -> dict:
    """JSONL -> report with the project's fast path; run in a child process."""
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    t0 = time.perf_counter()
    gold = load_gold(gold_path)
    t1 = time.perf_counter()
    preds = load_predictions(pred_path)
    t2 = time.perf_counter()
    run = evaluate(gold.items, preds.items, profile=profile, workers=workers)
    t3 = time.perf_counter()
    # what the CLI does: the report JSON and per-question CSV, written to disk
    with tempfile.TemporaryDirectory() as tmp:
        run.write_files(report=Path(tmp) / "report.json", csv_path=Path(tmp) / "per_question.csv")
    report = run.report(per_question=False)
    t4 = time.perf_counter()
    return {
        "n_gold": len(gold.items),
        "n_pred": len(preds.items),
        "evaluated": report["evaluated_count"],
        "overall": report["overall"],
        "load_gold_s": t1 - t0,
        "load_predictions_s": t2 - t1,
        "evaluate_s": t3 - t2,
        "report_s": t4 - t3,
        "wall_s": t4 - t0,
        "rss_self_mb": _maxrss_mb(resource.RUSAGE_SELF),
        "rss_children_mb": _maxrss_mb(resource.RUSAGE_CHILDREN),
    }


def _head(src: Path, dst: Path, n: int) -> None:
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        fo.writelines(itertools.islice(fi, n))


def compare_phase(gold_path: Path, pred_path: Path, sample: int, profile: str, out: Path) -> dict:
    import reference_release as ref
    from scoring.evaluate import evaluate
    from scoring.loaders import load_gold, load_predictions

    gs, ps = out / f"sample_gold_{sample}.jsonl", out / f"sample_predictions_{sample}.jsonl"
    _head(gold_path, gs, sample)
    _head(pred_path, ps, sample)

    # end to end: JSONL -> report, one process each
    t0 = time.perf_counter()
    want = ref.evaluate_files([gs], ps)
    t_ref = time.perf_counter() - t0

    # the fast path is short enough for scheduler noise to matter: best of 5
    t_fast = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        run = evaluate(load_gold(gs).items, load_predictions(ps).items, profile=profile, workers=1)
        got = run.report(lens=False)
        t_fast = min(t_fast, time.perf_counter() - t0)

    compared = 0
    for a, b in zip(got["per_question"], want["per_question"], strict=True):
        assert a["question_id"] == b["question_id"]
        assert (a["accuracy"], a["token_f1"], a["anls"]) == (b["accuracy"], b["token_f1"], b["anls"]), (a, b)
        compared += 1
    assert got["overall"] == want["overall"] and got["breakdowns"] == want["breakdowns"]

    # metrics only: the same (gold, format, rule, prediction, status) through each scorer
    from scoring.metrics import judge
    from scoring.model import to_str
    from scoring.profiles import get_profile

    records = ref.load_gold([gs])
    predictions = ref.load_predictions(ps)
    args = []
    for qid, rec in records:
        answer = rec["answer"]
        text, status = predictions[qid]
        args.append((answer["value"], answer["format"], answer["verification_rule"], text, status))
    fast_args = [(t, [to_str(g)], to_str(f) or "Str", to_str(r), s) for g, f, r, t, s in args]
    prof = get_profile(profile)
    t0 = time.perf_counter()
    ref_scores = [ref.score_one(*a) for a in args]
    t_ref_m = time.perf_counter() - t0
    t_fast_m = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        fast_scores = [judge(t, g, f, r, status=s, profile=prof) for t, g, f, r, s in fast_args]
        t_fast_m = min(t_fast_m, time.perf_counter() - t0)
    for a, b in zip(ref_scores, fast_scores, strict=True):
        assert tuple(round(x, 6) for x in a) == tuple(round(x, 6) for x in (b.accuracy, b.token_f1, b.anls)), (a, b)
    return {"sample": sample, "compared": compared, "ref_s": t_ref, "fast1_s": t_fast, "ratio": t_ref / t_fast,
            "ref_metrics_s": t_ref_m, "fast_metrics_s": t_fast_m, "ratio_metrics": t_ref_m / t_fast_m}


# the record path: the CLI's records (`evaluate` + `RunResult.write_files`), as --categories-csv scores
RECORD_PATH = ("import sys; from scoring import cli; cli._in_columns = lambda args: False; "
               "sys.argv[0] = 'python -m scoring'; cli.run()")


def _timed_tree(cmd: list[str]) -> dict:
    """Run `cmd` to its end; its wall time and the CPU time (user, system) of its whole process
    tree: RUSAGE_CHILDREN before and after counts it and every descendant it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{cmd[:3]} failed: {proc.stderr[-2000:]}")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"wall": wall, "user": user, "sys": system, "cpu": user + system, "load": load}


def _before_cmd(before: Path) -> list[str]:
    """`python -m scoring` with the `scoring` package of `before` (put first on sys.path: `-m` and `-c`
    would put the current folder, this checkout, before PYTHONPATH)."""
    code = (f"import sys; sys.path.insert(0, {str(before)!r}); from scoring import cli; "
            "sys.argv[0] = 'python -m scoring'; cli.run()")
    return [sys.executable, "-c", code]


def cli_phase(n: int, reps: int, out: Path, seed: int, record_path: bool, before: Path | None = None) -> dict:
    """(c): the command line at n predictions, interleaved with the pure-Python reference (and the record path,
    and the `scoring` package of `before`)."""
    gold, preds = out / f"gold_{n}.jsonl", out / f"predictions_{n}.jsonl"
    if not (gold.exists() and preds.exists()):
        make_predictions.generate(n, out, seed)
    work = out / f"cli_{n}"
    work.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    files = ["--gold-files", str(gold), "--predictions", str(preds)]

    def outputs(name: str) -> list[str]:
        return ["--output", str(work / f"{name}.json"), "--per-question-csv", str(work / f"{name}.csv")]

    cmds = {"cli": [py, "-m", "scoring", *files, "--profile", "xldocbench-1519", *outputs("cli")],
            "reference": [py, str(ROOT / "tests" / "reference_release.py"), *files, *outputs("reference")]}
    if record_path:
        cmds["record path"] = [py, "-c", RECORD_PATH, *files, "--profile", "xldocbench-1519", *outputs("record")]
    if before is not None:
        cmds["before"] = [*_before_cmd(before), *files, "--profile", "xldocbench-1519", *outputs("before")]
    runs: dict[str, list[dict]] = {k: [] for k in cmds}
    for rep in range(reps):
        for name, cmd in cmds.items():
            r = _timed_tree(cmd)
            runs[name].append(r)
            print(f"(c) {n:,} predictions, {name}, run {rep + 1}: wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s "
                  f"(user {r['user']:.2f} + sys {r['sys']:.2f}), load before {r['load']:.1f}", flush=True)
    med = {name: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "user", "sys", "load")}
           for name, rs in runs.items()}
    same = all(filecmp.cmp(work / f"cli.{ext}", work / f"reference.{ext}", shallow=False) for ext in ("json", "csv"))
    for other in ["record"] * record_path + ["before"] * (before is not None):
        same = same and all(filecmp.cmp(work / f"cli.{ext}", work / f"{other}.{ext}", shallow=False) for ext in ("json", "csv"))
    pairs = [ref["wall"] / c["wall"] for c, ref in zip(runs["cli"], runs["reference"])]
    result = {"n": n, "reps": reps, "median": med, "ratio": med["reference"]["wall"] / med["cli"]["wall"],
              "pair_ratios": pairs, "same": same, "loads": [r["load"] for rs in runs.values() for r in rs]}
    c = med["cli"]
    print(f"(c) CLI, {n:,} predictions: CPU {c['cpu']:.2f} s (user {c['user']:.2f} + sys {c['sys']:.2f}, median of {reps}), "
          f"wall {c['wall']:.2f} s; reference wall {med['reference']['wall']:.1f} s -> {result['ratio']:.1f}x "
          f"(pairs {min(pairs):.1f}-{max(pairs):.1f}x); load {min(result['loads']):.1f}-{max(result['loads']):.1f}; "
          f"outputs byte-identical: {same}", flush=True)
    if record_path:
        r = med["record path"]
        print(f"(c) record path: CPU {r['cpu']:.2f} s (user {r['user']:.2f} + sys {r['sys']:.2f}), wall {r['wall']:.2f} s",
              flush=True)
    if before is not None:
        r = med["before"]
        print(f"(c) {before} (before): CPU {r['cpu']:.2f} s (user {r['user']:.2f} + sys {r['sys']:.2f}), wall {r['wall']:.2f} s; "
              f"this checkout {c['cpu']:.2f} s", flush=True)
    return result


PHASES = ("gold read into columns", "predictions read into columns", "join", "scores (column_scores)",
          "breakdown members", "aggregation + report rows", "report JSON + CSV written")


def phases_child(gold: str, preds: str, out: str) -> dict:
    """The column path's phases, as `cli._run_in_columns` and `columnar.run_columns` run them, each timed
    by the CPU time of this process (the imports are done before: `cli_phases` measures them apart)."""
    import gc

    from scoring import cli, columnar, harness_cli, mmlongbench_cli  # noqa: F401  # what `python -m scoring` imports
    from scoring.aggregate import aggregate_scores
    from scoring.evaluate import extra_prediction_problems
    from scoring.loaders import load_gold_columns, load_prediction_columns
    from scoring.model import BREAKDOWNS
    from scoring.profiles import get_profile, signature
    from scoring.runner import StoredRunResult

    gc.disable()  # as the command line runs (cli.main pauses the collector)
    profile = get_profile("xldocbench-1519")
    times = []
    clock = time.process_time
    t = clock()

    def lap() -> None:
        nonlocal t
        now = clock()
        times.append(now - t)
        t = now

    _, gold_cols = load_gold_columns([gold], release=True)
    lap()
    _, pred_cols = load_prediction_columns(preds, release=True)
    lap()
    joined = columnar.join(gold_cols, pred_cols, ignore_missing=False)
    lap()
    acc, f1, an = columnar.score_columns(gold_cols, pred_cols, joined, profile)
    lap()
    groups = BREAKDOWNS + (("question_type",) if any(gold_cols.question_types) else ())
    members = columnar.members_of(gold_cols, joined.gold_at, groups)
    lap()
    columns = columnar._row_columns(gold_cols, pred_cols, joined, acc, f1, an)
    run = StoredRunResult(build=list, columns={}, name="cli", profile=profile,
                          signature=signature(profile, ignore_missing=False, prediction_field=None),
                          gold_count=len(gold_cols), prediction_count=joined.prediction_count, missing_ids=joined.missing,
                          extra_ids=[], ignore_missing=False, problems=extra_prediction_problems([]), groups=groups)
    run._agg = aggregate_scores(members, acc, f1, an)
    lap()
    columnar.write_columns(run, columns, report=Path(out) / "phases.json", csv_path=Path(out) / "phases.csv",
                           per_question=True, lens=False)
    lap()
    return dict(zip(PHASES, times))


def cli_phases(n: int, reps: int, out: Path) -> dict:
    """Where the CPU time of `python -m scoring` at n predictions goes: interpreter start (`python -c pass`),
    the imports (`python -c "import ..."` less the start) and `phases_child`'s phases, best and median of `reps`."""
    gold, preds = out / f"gold_{n}.jsonl", out / f"predictions_{n}.jsonl"
    work = out / f"cli_{n}"
    py = sys.executable
    imports = "from scoring import cli, columnar, harness_cli, mmlongbench_cli"
    rows: dict[str, list[float]] = {"interpreter start": [], "imports": []}
    for _ in range(reps):
        start = _timed_tree([py, "-c", "pass"])["cpu"]
        rows["interpreter start"].append(start)
        rows["imports"].append(_timed_tree([py, "-c", imports])["cpu"] - start)
        proc = subprocess.run([py, __file__, "--_phases-child", str(gold), str(preds), str(work)], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        for name, value in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            rows.setdefault(name, []).append(value)
    print()
    print(f"| where the CPU time of `python -m scoring` at {n:,} predictions goes (best / median of {reps}) | CPU-s |")
    print("|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {min(values):.3f} / {statistics.median(values):.3f} |")
    best = sum(min(v) for v in rows.values())
    print(f"| sum | {best:.2f} / {sum(statistics.median(v) for v in rows.values()):.2f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description="scoring/ speed benchmark")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="xldocbench-1519",
                    help="profile of the fast path; the comparison with the reference needs xldocbench-1519")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--seed", type=int, default=1519)
    ap.add_argument("--skip-compare", action="store_true")
    ap.add_argument("--cli-n", type=int, default=100_000, help="predictions of the command-line measurement (c)")
    ap.add_argument("--cli-reps", type=int, default=3, help="interleaved repetitions of (c)")
    ap.add_argument("--record-path", action="store_true", help="(c) also times the CLI's record path (evaluate + write_files)")
    ap.add_argument("--cli-only", action="store_true", help="run (c) only")
    ap.add_argument("--cli-before", type=Path, metavar="DIR",
                    help="(c) also times the `scoring` package in DIR (an older checkout), interleaved, outputs compared")
    ap.add_argument("--cli-phases", action="store_true", help="after (c), where the CLI's CPU time goes, phase by phase")
    ap.add_argument("--_phases-child", nargs=3, metavar=("GOLD", "PREDS", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--gc-off", action="store_true",
                    help="what-if: disable Python's cyclic GC in the measured child (not the project's behaviour)")
    ap.add_argument("--_fast-child", nargs=2, metavar=("GOLD", "PREDS"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._fast_child:
        if args.gc_off:
            import gc

            gc.disable()
        print(json.dumps(fast_phase(*args._fast_child, args.workers, args.profile)))
        return

    if args._phases_child:
        print(json.dumps(phases_child(*args._phases_child)))
        return

    if args.cli_only:
        cli = cli_phase(args.cli_n, args.cli_reps, args.out, args.seed, args.record_path, args.cli_before)
        _cli_rows(cli)
        if args.cli_phases:
            cli_phases(args.cli_n, args.cli_reps, args.out)
        return

    gold_path, pred_path = args.out / f"gold_{args.n}.jsonl", args.out / f"predictions_{args.n}.jsonl"
    if gold_path.exists() and pred_path.exists():
        print(f"reusing {gold_path} and {pred_path}")
    else:
        t0 = time.perf_counter()
        make_predictions.generate(args.n, args.out, args.seed)
        print(f"generated {args.n:,} questions + predictions in {time.perf_counter() - t0:.1f} s")
    sizes = gold_path.stat().st_size / 1e6, pred_path.stat().st_size / 1e6
    print(f"gold {sizes[0]:.0f} MB, predictions {sizes[1]:.0f} MB")

    # (a) the full run, in a fresh process
    cmd = [sys.executable, __file__, "--workers", str(args.workers), "--profile", args.profile,
           *(["--gc-off"] if args.gc_off else []), "--_fast-child", str(gold_path), str(pred_path)]
    load_before = os.getloadavg()[0]
    stdout, tree_peak = _run_sampling_memory(cmd)
    fast = json.loads(stdout.strip().splitlines()[-1])
    fast["rss_tree_peak_mb"] = tree_peak
    load_after = os.getloadavg()[0]
    peak = max(fast["rss_self_mb"], fast["rss_tree_peak_mb"])
    print(f"(a) fast path, workers={args.workers}, profile {args.profile}: {fast['n_pred']:,} predictions "
          f"in {fast['wall_s']:.1f} s = {fast['n_pred'] / fast['wall_s']:,.0f} predictions/s")
    print(f"    load_gold {fast['load_gold_s']:.1f} s, load_predictions {fast['load_predictions_s']:.1f} s, "
          f"evaluate {fast['evaluate_s']:.1f} s, report {fast['report_s']:.1f} s")
    print(f"    peak RSS: main process {fast['rss_self_mb']:.0f} MB (ru_maxrss); whole process tree incl. "
          f"workers {fast['rss_tree_peak_mb']:.0f} MB (sampled every 250 ms)")
    print(f"    overall {fast['overall']}")
    print(f"    1-min load average before/after: {load_before:.1f} / {load_after:.1f} (other processes share the cores)")

    cmp = None
    if not args.skip_compare:
        # (b) the same predictions' first `sample` rows: reference vs fast path, one process each way
        cmp = compare_phase(gold_path, pred_path, args.sample, "xldocbench-1519", args.out)
        print(f"(b) sample of {cmp['sample']:,}: reference {cmp['ref_s']:.1f} s, fast path (workers=1, best of 5) "
              f"{cmp['fast1_s']:.2f} s -> {cmp['ratio']:.1f}x; identical rounded scores on {cmp['compared']:,} questions")
        print(f"    metrics only: reference {cmp['ref_metrics_s']:.1f} s, scoring.metrics.judge "
              f"{cmp['fast_metrics_s']:.2f} s -> {cmp['ratio_metrics']:.1f}x; identical on {cmp['compared']:,}")

    cpu = f"{os.cpu_count()} cores, Python {platform.python_version()}"
    ok = lambda b: "yes" if b else "**no**"  # noqa: E731
    print()
    gc_note = ", GC disabled (what-if)" if args.gc_off else ""
    print(f"| figure ({cpu}{gc_note}) | measured | target | met |")
    print("|---|---|---|---|")
    print(f"| {fast['n_pred']:,} predictions, JSONL to report, workers={args.workers} | {fast['wall_s']:.1f} s "
          f"({fast['n_pred'] / fast['wall_s']:,.0f}/s) | < 60 s | {ok(fast['wall_s'] < 60)} |")
    print(f"| of which load gold / load predictions / evaluate / report | {fast['load_gold_s']:.1f} / "
          f"{fast['load_predictions_s']:.1f} / {fast['evaluate_s']:.1f} / {fast['report_s']:.1f} s | | |")
    print(f"| peak memory (process tree incl. workers) | {peak:,.0f} MB | < 2,048 MB | {ok(peak < 2048)} |")
    if cmp:
        print(f"| speed-up over the pure-Python reference ({cmp['sample']:,} sample, 1 process each, fast path best of 5) | "
              f"{cmp['ratio']:.1f}x ({cmp['ref_s']:.1f} s vs {cmp['fast1_s']:.2f} s) | >= 30x | {ok(cmp['ratio'] >= 30)} |")
        print(f"| speed-up, metrics only (`score_one` vs `judge`, same sample) | "
              f"{cmp['ratio_metrics']:.1f}x ({cmp['ref_metrics_s']:.1f} s vs {cmp['fast_metrics_s']:.2f} s) | >= 30x | {ok(cmp['ratio_metrics'] >= 30)} |")
        print(f"| questions compared, identical rounded scores | {cmp['compared']:,} | all | yes |")
    cli = cli_phase(args.cli_n, args.cli_reps, args.out, args.seed, args.record_path, args.cli_before)
    _cli_rows(cli)
    if args.cli_phases:
        cli_phases(args.cli_n, args.cli_reps, args.out)


def _cli_rows(cli: dict) -> None:
    c, ref = cli["median"]["cli"], cli["median"]["reference"]
    ok = "yes" if c["cpu"] <= 1.3 else "**no**"
    print()
    print("| figure | measured | target | met |")
    print("|---|---|---|---|")
    print(f"| `python -m scoring`, {cli['n']:,} predictions end to end, CPU of the process tree (user + sys, median of "
          f"{cli['reps']}, load {min(cli['loads']):.1f}-{max(cli['loads']):.1f}) | {c['cpu']:.2f} s ({c['user']:.2f} + "
          f"{c['sys']:.2f}); wall {c['wall']:.2f} s | <= 1.3 CPU-s | {ok} |")
    print(f"| wall-time ratio to the pure-Python reference CLI, same files, interleaved | {cli['ratio']:.1f}x "
          f"({ref['wall']:.1f} s vs {c['wall']:.2f} s; pairs {min(cli['pair_ratios']):.1f}-{max(cli['pair_ratios']):.1f}x); "
          f"outputs byte-identical: {cli['same']} | - | - |")
    if "record path" in cli["median"]:
        r = cli["median"]["record path"]
        print(f"| the record path (evaluate + write_files), same runs | CPU {r['cpu']:.2f} s ({r['user']:.2f} + {r['sys']:.2f}); "
              f"wall {r['wall']:.2f} s | - | - |")
    if "before" in cli["median"]:
        r = cli["median"]["before"]
        print(f"| the `--cli-before` package, same runs | CPU {r['cpu']:.2f} s ({r['user']:.2f} + {r['sys']:.2f}); "
              f"wall {r['wall']:.2f} s | - | - |")


if __name__ == "__main__":
    main()

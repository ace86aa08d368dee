"""What the app holds in memory around one uploaded run, and what it still holds after the sweep
(issue 29.5): a script, not a test -- it prints figures and asserts nothing.

    .venv/bin/python bench/bench_upload_memory.py [--mb 190] [--seed 29] [--before]

One process plays the server through the upload path the app takes (dashboard/shell/sidebar.py
`_staged` and dashboard/session/load.py `load`, without a browser): the sample benchmark is loaded first (other sessions
hold it), then a generated run of `--mb` MB (the sample's questions answered, plus as many
further rows as make the size: question ids the gold does not have, as a run of another split
would) is staged into a new session's upload folder (paths.stage_upload, in chunks), read into a
workspace (cache.workspace), scored (scoring.evaluate.score_runs, then cache.remember and the
Parquet store, as shell.scorer.scored_runs), analysed (cache.analysis) and listed as the Data page does
(data.frames.load_results). The session then closes (its references dropped), the folder is
aged past UPLOAD_CLOSED_MINUTES and swept (paths.sweep_uploads with the session closed, then
cache.evict_uploads with the swept names, as shell.sidebar._upload_folder does).

It prints the process's resident memory (VmRSS from /proc/self/status) at each step: start (the
sample loaded), during (the upload read, scored, analysed), closed, swept -- and what each cache
still holds after the sweep (entries, and whether one came from the upload). `--before` skips
what evict_uploads now releases (issue 29.5: the runs scored from the swept files, then
shell/cache.py give_back -- a garbage collection and glibc's malloc_trim), to show the figure
before it.

The machine is shared: the figures are this process's on this machine, printed with the load.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "sample_runs"


def rss_mb() -> float:
    """This process's resident memory in MB (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def gold_ids() -> list[str]:
    out = []
    for f in sorted(SAMPLE.glob("qa_*.jsonl")):
        out += [json.loads(line)["question_id"] for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def write_run(path: Path, mb: float, seed: int) -> int:
    """A run of about `mb` MB: every sample question answered, then rows for question ids the gold
    lacks (each with a 300-character explanation), seeded. Returns its number of rows."""
    rng = random.Random(seed)
    words = ("revenue total page table figure annual report the of in and million EUR increase segment "
             "margin operating cost net see section note").split()
    target = int(mb * 1e6)
    rows = 0
    with open(path, "w", encoding="utf-8") as fh:
        for qid in gold_ids():
            fh.write(json.dumps({"question_id": qid, "prediction": rng.choice(words), "evidence_pages": [1]}) + "\n")
            rows += 1
        k = 0
        while fh.tell() < target:
            text = " ".join(rng.choice(words) for _ in range(45))[:300]
            fh.write(json.dumps({"question_id": f"other_split_{k:08d}", "prediction": text,
                                 "evidence_pages": [rng.randint(1, 400)]}) + "\n")
            k += 1
            rows += 1
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=190.0, help="the uploaded run's size in MB")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--before", action="store_true", help="skip what evict_uploads releases (the figure before)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="lens-upload-mem-"))
    os.environ["LENS_CACHE_DIR"] = str(tmp / "cache")
    import gc

    from dashboard.core import paths
    from dashboard.core.analysis import Analysis
    from dashboard.core.paths import Sources, new_session_folder, session_uploads, stage_upload, sweep_uploads
    from dashboard.data.frames import load_results
    from dashboard.data.workspace import discover, fingerprint
    from dashboard.shell import cache, scorer
    from scoring.workers import discard_shared_pool

    def load(sources: Sources, profile: str = "xldocbench"):
        """session.load's reading, scoring and analysis (no streamlit widgets): the runs scored and ingested
        into the engine, or found there (dashboard/shell/scorer.py), as the app does."""
        disc = discover(sources)
        ws_key = (("bench", tuple(map(str, sources.runs))), fingerprint(disc.all_files()))
        ws = cache.workspace(ws_key, sources)
        gold_key = fingerprint(ws.discovery.gold)
        runs, engine_store, _ = scorer.scored_runs(ws, gold_key, profile)
        key = (ws_key, gold_key, profile, tuple((r.name, r.source, r.file) for r in runs))
        an = cache.analysis(key, lambda: Analysis.build(runs, ws.gold.items, ws.page_counts, profile, ws.declared_pages(),
                                                        store=engine_store, later_questions=lambda: cache.frame(ws, gold_key)))
        listed = load_results(ws)
        return ws, an, listed

    steps: list[tuple[str, float]] = []
    print(f"load average {os.getloadavg()[0]:.2f}; run of {args.mb:g} MB; cache folder {tmp}", flush=True)
    held = load(Sources(benchmark=SAMPLE))  # the sample, held by other sessions throughout
    gc.collect()
    steps.append(("start (the sample loaded)", rss_mb()))

    generated = tmp / "generated-run.jsonl"
    rows = write_run(generated, args.mb, args.seed)
    token = new_session_folder()
    folder = session_uploads(token)
    folder.mkdir(parents=True)
    t0 = time.perf_counter()
    with open(generated, "rb") as fh:
        staged = stage_upload("big-run.jsonl", io.BufferedReader(fh), folder)  # type: ignore[arg-type]
    generated.unlink()
    session = load(Sources(benchmark=SAMPLE, runs=(staged,), labels=((str(staged), "big-run.jsonl"),)))
    steps.append((f"during (read, scored, analysed: {time.perf_counter() - t0:.0f} s, {rows:,} rows)", rss_mb()))

    del session  # the session closes: its references go
    gc.collect()
    steps.append(("closed", rss_mb()))

    old = time.time() - 60 * (paths.UPLOAD_CLOSED_MINUTES + 1)
    os.utime(folder, (old, old))
    swept: list[str] = []
    sweep_uploads(keep="", alive=lambda t: False, removed_names=swept)
    dropped = cache.evict_uploads(swept, release=not args.before)
    steps.append((f"swept ({len(swept)} folder, {dropped} workspace dropped{', as before' if args.before else ''})",
                  rss_mb()))

    print(f"{'step':<60} {'RSS MB':>8}")
    for name, mb in steps:
        print(f"{name:<60} {mb:>8.0f}")
    base = steps[0][1]
    print(f"held after the sweep beyond the start: {steps[-1][1] - base:.0f} MB "
          f"(during: {steps[1][1] - base:.0f} MB)")
    print("what the caches hold after the sweep:")
    runs = cache._runs()
    print(f"  scored runs (cache._runs): {len(runs)}; from the upload: "
          f"{sum(1 for k in list(runs._items) if 'big-run' in str(k))}")
    print(f"  evidence tables: {len(cache.evidence_tables())}")
    del held
    discard_shared_pool()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

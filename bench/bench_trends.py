"""Time the checkpoint trends (scoring/trends.py) and the question x run matrix page's work
(dashboard/matrix) at the issue's sizes.

    .venv/bin/python bench/bench_trends.py [--questions 20000] [--checkpoints 50] [--matrix-runs 200] [--repeat 3]

The gold is bench/make_campaign.py's generator at --questions questions (documents, metadata, cross-
document questions), read by the project's loader; the runs' per-question scores are simulated in memory
(a training curve rising fast then gently, checkpoints sharing 70 % of their draws, and from two thirds of
the way one slice -- reasoning_type=aggregation, 11 % of the questions -- much worse: a planted lasting drop), handed to the code as
runs held in columns, as the app holds them.

1. Trends: `scoring.trends.checkpoint_scores` (the data access) and `search` (every slice's trend --
   the benchmark, every condition and every conjunction of two on the finder's fields -- and the alarms),
   one metric, --checkpoints checkpoints. CPU seconds of this process (numpy here is single-threaded work:
   CPU time is what a second core cannot flatter). Target: at most 5 CPU-s at 50 x 20,000.
2. The matrix page at --matrix-runs runs, ingested (untimed) into DuckDB in memory as the app ingests
   them: building the matrix once (runs x questions read from the engine, the first page's extra), then a
   page: the explorer's filter, the order (forgotten, flips), the counts, the page's frame (50 rows) and
   its styled table as Streamlit sends it (`marshall_styler`). Target: a page at most 2 s.

Repetitions are interleaved (case after case, --repeat rounds); printed: medians and ranges, CPU and wall,
and the load average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import make_campaign  # noqa: E402
import make_synthetic_benchmark as msb  # noqa: E402

from scoring.loaders import load_gold  # noqa: E402
from scoring.profiles import get_profile  # noqa: E402
from scoring.slices import question_fields  # noqa: E402
from scoring.stats import document_clusters  # noqa: E402
from scoring.trends import checkpoint_scores, search  # noqa: E402

PLANTED = ("reasoning_type", "aggregation")  # the slice that drops for good two thirds of the way


def gold_of(questions: int, seed: int = 1519) -> list:
    """make_campaign's gold at this size, written to a temporary folder and read back."""
    rng = random.Random(seed)
    with make_campaign._scaled(questions, []), tempfile.TemporaryDirectory() as tmp:
        docs = msb._documents(rng)
        single, cross = msb._gold(rng, docs)
        msb._write_jsonl(Path(tmp) / "qa_single_doc.jsonl", single)
        msb._write_jsonl(Path(tmp) / "qa_cross_doc.jsonl", cross)
        return load_gold([Path(tmp) / "qa_single_doc.jsonl", Path(tmp) / "qa_cross_doc.jsonl"]).items


def simulate(gold: list, runs: int, seed: int = 7) -> np.ndarray:
    """runs x questions 0/1 scores: a training curve, shared draws, a planted lasting drop in one slice."""
    rng = np.random.default_rng(seed)
    n = len(gold)
    docs = {d: i for i, d in enumerate(dict.fromkeys(q.document_ids[0] if q.document_ids else q.qid for q in gold))}
    doc = np.array([docs[q.document_ids[0] if q.document_ids else q.qid] for q in gold])
    difficulty = rng.normal(0, 1, n) + rng.normal(0, 0.5, len(docs))[doc]
    planted = np.array([q.meta("reasoning_type") == PLANTED[1] for q in gold])
    shared = rng.random(n)
    out = np.zeros((runs, n), dtype=np.float64)
    for k in range(runs):
        level = 1.2 - 2.0 * np.exp(-4 * k / max(1, runs - 1))
        logit = difficulty + level - (1.5 * planted if k >= 2 * runs // 3 else 0.0)
        u = np.where(rng.random(n) < 0.7, shared, rng.random(n))
        out[k] = u < 1 / (1 + np.exp(-logit))
    return out


def held(scores: np.ndarray, ids: list[str]) -> list:
    """Runs held in columns, as the app holds them (`scoring.runner.compact_columns` reads these)."""
    profile = get_profile("xldocbench")
    shared_ids = np.asarray(ids, dtype=object)
    out = []
    for k, row in enumerate(scores):
        r = SimpleNamespace(profile=profile, name=f"run-{k:03d}", signature="bench_trends (simulated scores)")
        r.__dict__["_lens_compact"] = {"question_id": shared_ids, "accuracy": row, "token_f1": row, "anls": row,
                                       "answered": np.ones(row.size, dtype=bool), "status": np.full(row.size, "success"),
                                       "prediction": shared_ids}
        out.append(r)
    return out


def timed(fn) -> tuple[float, float, object]:
    c, w = time.process_time(), time.perf_counter()
    value = fn()
    return time.process_time() - c, time.perf_counter() - w, value


def summary(name: str, cpu: list[float], wall: list[float], note: str = "") -> None:
    print(f"  {name:<44} CPU {statistics.median(cpu):6.2f} s [{min(cpu):.2f}-{max(cpu):.2f}]   "
          f"wall {statistics.median(wall):6.2f} s [{min(wall):.2f}-{max(wall):.2f}]  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--checkpoints", type=int, default=50)
    ap.add_argument("--matrix-runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    gold = gold_of(args.questions)
    ids = [q.qid for q in gold]
    fields = question_fields(gold)
    clusters = document_clusters([q.document_ids for q in gold])
    print(f"gold: {len(gold):,} questions in {clusters.units:,} documents, fields {', '.join(fields)}")
    series = held(simulate(gold, args.checkpoints), ids)
    steps = list(range(100, 100 * (args.checkpoints + 1), 100))

    from streamlit.elements.lib.pandas_styler_utils import marshall_styler
    from streamlit.proto.Dataframe_pb2 import Dataframe

    from dashboard.core.analysis import question_frame
    from dashboard.core.links import View
    from dashboard.explorer.frames import filter_questions
    from dashboard.matrix import frames as M
    from dashboard.matrix.panel import EMPTY_SCORES

    questions = question_frame(gold, {})
    wide = held(simulate(gold, args.matrix_runs, seed=11), ids)
    names = [f"run-{k:03d}" for k in range(args.matrix_runs)]
    from dashboard.core.analysis import RECOMPUTED, Analysis, Run

    # the matrix reads the runs' rows from the engine, as the app does: here DuckDB in memory (ingest not timed)
    c0, w0 = time.process_time(), time.perf_counter()
    analysis = Analysis.build([Run(n, RECOMPUTED, n, result=r) for n, r in zip(names, wide)], gold, {}, "xldocbench",
                              questions=questions)
    print(f"ingested {len(names)} runs x {len(ids):,} into DuckDB in memory: CPU {time.process_time() - c0:.1f} s, "
          f"wall {time.perf_counter() - w0:.1f} s (not timed below)")

    def trend():
        scores, answered = checkpoint_scores(series, ids, ["accuracy"])
        return search(scores, clusters, fields, steps, answered=answered)

    def matrix_build():
        M.GRIDS.clear()
        return M.grid(analysis, names, list(range(len(names))), ids)

    def page(view: View, sort: str, number: int):
        def run():
            g = M.grid(analysis, names, list(range(len(names))), ids)
            kept = filter_questions(questions, EMPTY_SCORES, view)
            positions = np.flatnonzero(questions.index.isin(kept.index))
            order = M.ordered(g, positions, sort)
            M.counts(g, positions)
            frame = M.question_page(g, order, questions, number)
            styled = frame.style.map(M.cell_style, subset=names)
            marshall_styler(Dataframe().arrow_data, styled, "bench")
            return len(order)
        return run

    cases = {
        f"trends: {args.checkpoints} checkpoints, every slice + alarms": trend,
        f"matrix: build {args.matrix_runs} runs x {len(ids):,} (first page)": matrix_build,
        "matrix: a page, forgotten first": page(View(), "forgotten", 0),
        "matrix: a page, by flips, page 40": page(View(), "flips", 39),
        "matrix: a page, filtered + search": page(View(filters={"reasoning_type": ["aggregation"]}, search="what"),
                                                           "forgotten", 0),
    }
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    wall: dict[str, list[float]] = {k: [] for k in cases}
    notes: dict[str, str] = {}
    for _ in range(args.repeat):
        for name, fn in cases.items():
            c, w, value = timed(fn)
            cpu[name].append(c)
            wall[name].append(w)
            if hasattr(value, "summary"):
                notes[name] = value.summary().split("; ", 1)[-1]
                alarms = [(a.slice, a.step) for a in value.alarms][:3]
                notes[name] += f"\n{'':48}alarms: {alarms}"
            elif isinstance(value, int):
                notes[name] = f"({value:,} questions ordered)"
    print(f"results (median [range] of {args.repeat}, interleaved):")
    for name in cases:
        summary(name, cpu[name], wall[name], notes.get(name, ""))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

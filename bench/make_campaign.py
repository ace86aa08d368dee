"""Write a synthetic evaluation campaign: 50 runs x 20,000 questions (1,000,000 scored rows).

    .venv/bin/python bench/make_campaign.py [--questions 20000] [--runs 50] [--out bench/out/campaign_<q>x<r>]
                                            [--seed 1519]

The same benchmark folder as bench/make_synthetic_benchmark.py writes (whose generator this
reuses: documents, release-schema gold with evidence and metadata, runs whose chance of a right
answer falls with difficulty, document length and reasoning type; near misses, refusals,
verbose answers, failed statuses, missing questions, three file shapes), at campaign scale:

  qa_single_doc.jsonl   90 % of the questions (one document each)
  qa_cross_doc.jsonl    10 % (2-4 documents each)
  documents.jsonl       one document per ~8 questions (5 to 1,400 pages)
  runs/*.jsonl|json     `--runs` runs: model families x sizes x retrieval settings, skills spread
                        from 0.08 to 0.86; most JSONL, some a JSON list (`model_answer`), some
                        `{id, answer}` JSONL without a status; a few miss questions or fail often

Same arguments, same bytes. 20,000 x 50 is ~190 MB and takes ~1-2 minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from contextlib import contextmanager
from pathlib import Path

import make_synthetic_benchmark as msb

OUT = Path(__file__).resolve().parent / "out"
FAMILIES = ["longctx-ocr", "longctx-img", "agent-pipeline", "rag-dense", "rag-bm25", "simpledoc", "mdocagent",
            "qwen-img", "vision", "ocr-only", "hybrid-rerank", "layout-lm", "chart-reader"]
SIZES = ["3b", "8b", "14b", "32b", "72b"]
SETTINGS = ["", "-cot", "-v2", "-long"]


def run_specs(n: int, seed: int) -> list[tuple[str, float, float, float, float, str]]:
    """`n` runs as make_synthetic_benchmark.RUNS rows: (name, skill, verbose, missing, failed, shape).
    The first is a random baseline; skills are spread evenly over 0.20-0.86 otherwise, so the
    leaderboard has a clear top ten and a long tail."""
    rng = random.Random(seed * 7919 + n)
    specs, names = [("random-baseline", 0.08, 0.0, 0.0, 0.0, "jsonl")], {"random-baseline"}
    for k in range(1, n):
        for _ in range(200):  # a new name while there are some (13 x 5 x 4 = 260), else a numbered one
            name = f"{rng.choice(FAMILIES)}-{rng.choice(SIZES)}{rng.choice(SETTINGS)}"
            if name not in names:
                break
        else:
            name = f"{name}-r{k}"
        names.add(name)
        skill = round(0.20 + 0.66 * (k - 1) / max(1, n - 2) + rng.uniform(-0.02, 0.02), 3)
        verbose = rng.choice([0.02, 0.05, 0.05, 0.10, 0.20, 0.45])
        missing = rng.choice([0.0] * 8 + [0.01, 0.03])
        failed = rng.choice([0.0, 0.0, 0.005, 0.01, 0.02, 0.04, 0.08])
        shape = "list" if k % 10 == 3 else "id_answer" if k % 10 == 7 else "jsonl"
        specs.append((name, skill, verbose, missing, failed, shape))
    return specs


@contextmanager
def _scaled(questions: int, runs: list) -> None:
    """make_synthetic_benchmark's size constants and run table, set for this campaign."""
    saved = msb.N_SINGLE, msb.N_CROSS, msb.N_DOCS, msb.RUNS
    n_cross = max(1, questions // 10)
    msb.N_SINGLE, msb.N_CROSS, msb.N_DOCS, msb.RUNS = questions - n_cross, n_cross, max(40, questions // 8), runs
    try:
        yield
    finally:
        msb.N_SINGLE, msb.N_CROSS, msb.N_DOCS, msb.RUNS = saved


def default_out(questions: int, runs: int) -> Path:
    return OUT / f"campaign_{questions}x{runs}"


def generate(questions: int = 20_000, runs: int = 50, out: Path | None = None, seed: int = 1519) -> Path:
    """Write the campaign folder; returns it. Runs are generated and written one at a time."""
    out = out or default_out(questions, runs)
    specs = run_specs(runs, seed)
    rng = random.Random(seed)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for old in (out / "runs").iterdir():
        old.unlink()
    with _scaled(questions, specs):
        docs = msb._documents(rng)
        single, cross = msb._gold(rng, docs)
        msb._write_jsonl(out / "documents.jsonl", docs)
        msb._write_jsonl(out / "qa_single_doc.jsonl", single)
        msb._write_jsonl(out / "qa_cross_doc.jsonl", cross)
        gold, by_doc = single + cross, {d["document_id"]: d for d in docs}
        for spec in specs:
            msb.RUNS = [spec]
            for name, (shape, rows) in msb._runs(rng, gold, by_doc).items():
                _write_run(out / "runs", name, shape, rows)
    return out


def _write_run(folder: Path, name: str, shape: str, rows: list[dict]) -> None:
    """The three shapes of make_synthetic_benchmark.generate."""
    if shape == "list":
        data = [{"question_id": r["question_id"], "model_answer": r["prediction"], "status": r["status"],
                 "evidence_pages": r["evidence_pages"]} for r in rows]
        (folder / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    elif shape == "id_answer":
        msb._write_jsonl(folder / f"{name}.jsonl", [{"id": r["question_id"], "answer": r["prediction"]} for r in rows])
    else:
        msb._write_jsonl(folder / f"{name}.jsonl", rows)


def ensure(questions: int, runs: int, out: Path | None = None, seed: int = 1519) -> Path:
    """The campaign folder, generated when it is missing or incomplete."""
    out = out or default_out(questions, runs)
    done = out / ".complete"
    if not done.is_file() or done.read_text().strip() != f"{questions} {runs} {seed}":
        generate(questions, runs, out, seed)
        done.write_text(f"{questions} {runs} {seed}\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--seed", type=int, default=1519)
    args = ap.parse_args()
    t = time.perf_counter()
    out = args.out or default_out(args.questions, args.runs)
    generate(args.questions, args.runs, out, args.seed)
    (out / ".complete").write_text(f"{args.questions} {args.runs} {args.seed}\n")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out}: {args.questions:,} questions x {args.runs} runs ({size / 1e6:.1f} MB) "
          f"in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()

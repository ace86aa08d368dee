"""Speed of opening harness outputs (scoring/formats/) against the same rows in the benchmark's own
JSONL layout, side by side, each through the command line in a fresh process.

    .venv/bin/python bench/bench_harness.py [--runs 10] [--rows 5349] [--repeat 3]

Writes into bench/out/harness_<runs>x<rows>/ (git-ignored, deterministic):
- `lmms/`: an lmms-eval --output_path with --runs model folders, each a docvqa_val samples file
  (--rows lines, v0.7 format) and its results.json;
- `vlm/`: a VLMEvalKit work dir with --runs models, each DocVQA_VAL (xlsx + _results.xlsx +
  _acc.csv) and MMLongBench_DOC (xlsx + judge xlsx + _score.csv, 1,091 rows);
- `own/`: the same DocVQA rows as the benchmark's own layout (a DocVQA-style gold JSONL and one
  prediction JSONL per run), scored with `--profile docvqa`.
Then times, best of --repeat: `python -m scoring --predictions lmms/ --profile lmms-eval`,
`--predictions vlm/ --profile vlmevalkit`, and the own layout's CLI with all runs. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
POST = "\nAnswer the question using a single word or phrase."


def _docvqa_rows(rows: int, seed: str) -> list[tuple[str, str, list[str], str]]:
    rng = random.Random(seed)
    out = []
    for k in range(rows):
        answers = [f"answer {rng.randint(0, 9999)}", f"alt {rng.randint(0, 99)}"]
        pred = answers[0] if rng.random() < 0.7 else f"answer {rng.randint(0, 9999)}"
        out.append((str(50000 + k), f"What is item {k}?", answers, pred))
    return out


def build(folder: Path, runs: int, rows: int) -> None:
    import pandas as pd

    from scoring.harness_rules import lmms_anls, vlm_anls_distance, vlm_docvqa_score, vlm_overall

    gold = _docvqa_rows(rows, "gold")
    (folder / "own" / "runs").mkdir(parents=True, exist_ok=True)
    with open(folder / "own" / "docvqa_val.jsonl", "w", encoding="utf-8") as fh:
        for qid, q, answers, _ in gold:
            fh.write(json.dumps({"questionId": qid, "question": q, "answers": answers, "question_types": ["form"],
                                 "docId": 1}) + "\n")
    for m in range(runs):
        preds = _docvqa_rows(rows, f"run{m}")
        with open(folder / "own" / "runs" / f"model{m}.jsonl", "w", encoding="utf-8") as fh:
            for (qid, _, _, _), (_, _, _, pred) in zip(gold, preds):
                fh.write(json.dumps({"question_id": qid, "prediction": pred}) + "\n")
        d = folder / "lmms" / f"org__model{m}"
        d.mkdir(parents=True, exist_ok=True)
        scores = []
        with open(d / "20260801_101500_samples_docvqa_val.jsonl", "w", encoding="utf-8") as fh:
            for k, ((_, q, answers, _), (_, _, _, pred)) in enumerate(zip(gold, preds)):
                s = lmms_anls(answers, pred.strip())
                scores.append(s)
                fh.write(json.dumps({"doc_id": k, "target": str(answers), "filtered_resps": pred, "doc_hash": "74",
                                     "anls": s, "input": q + POST}) + "\n")
        (d / "20260801_101500_results.json").write_text(json.dumps(
            {"results": {"docvqa_val": {"alias": "docvqa_val", "anls,none": sum(scores) / len(scores)}},
             "model_name": f"org/model{m}"}), "utf-8")
        v = folder / "vlm" / f"Model{m}" / "T20260410-101010"
        v.mkdir(parents=True, exist_ok=True)
        table = [{"index": k, "question": q, "answer": str(a), "prediction": p}
                 for k, ((_, q, a, _), (_, _, _, p)) in enumerate(zip(gold, preds))]
        matches = [[vlm_anls_distance(x, r["prediction"]) for x in eval_answers] for r, (_, _, eval_answers, _) in
                   zip(table, gold)]
        _xlsx(pd, table, v / f"Model{m}_DocVQA_VAL.xlsx")
        _xlsx(pd, [{**r, "eval_match": str(mt)} for r, mt in zip(table, matches)], v / f"Model{m}_DocVQA_VAL_results.xlsx")
        pd.DataFrame({"Overall": [vlm_overall([vlm_docvqa_score(mt) for mt in matches])]}).to_csv(
            v / f"Model{m}_DocVQA_VAL_acc.csv", index=False, quoting=1)
        mm = [{"index": k, "doc_id": f"d{k % 135}.pdf", "question": f"Q{k}?", "answer": str(k % 50), "answer_format": "Int",
               "evidence_sources": "['Table']", "evidence_pages": "[1]", "prediction": f"It is {k % 47}"}
              for k in range(1091)]
        _xlsx(pd, mm, v / f"Model{m}_MMLongBench_DOC.xlsx")
        judged = [{**r, "res": "", "log": "Succeed", "pred": str(k % 47), "score": float(k % 50 == k % 47)}
                  for k, r in enumerate(mm)]
        _xlsx(pd, judged, v / f"Model{m}_MMLongBench_DOC_gpt-4o.xlsx")


def _xlsx(pd, rows: list[dict], path: Path) -> None:
    with pd.ExcelWriter(path, engine="xlsxwriter", engine_kwargs={"options": {"strings_to_formulas": False}}) as w:
        pd.DataFrame(rows).to_excel(w, index=False)


def timed(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
        best = min(best, elapsed)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=5349)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    folder = ROOT / "bench" / "out" / f"harness_{a.runs}x{a.rows}"
    if not (folder / "vlm").is_dir():
        t = time.perf_counter()
        build(folder, a.runs, a.rows)
        print(f"wrote {folder} in {time.perf_counter() - t:.1f} s")
    out = folder / "reports"
    own = timed(["--gold-files", str(folder / "own" / "docvqa_val.jsonl"), "--profile", "docvqa",
                 "--predictions", *map(str, sorted((folder / "own" / "runs").glob("*.jsonl"))),
                 "--output", str(out / "own")], a.repeat)
    lmms = timed(["--predictions", str(folder / "lmms"), "--profile", "lmms-eval", "--output", str(out / "lmms.json")],
                 a.repeat)
    vlm = timed(["--predictions", str(folder / "vlm"), "--profile", "vlmevalkit", "--output", str(out / "vlm.json")],
                a.repeat)
    n = a.runs * a.rows
    print(f"own JSONL layout, {a.runs} runs x {a.rows} DocVQA rows: {own:.2f} s")
    print(f"lmms-eval folder, same rows:                  {lmms:.2f} s ({lmms / own:.2f}x)")
    print(f"VLMEvalKit work dir, DocVQA_VAL + MMLongBench_DOC ({n + a.runs * 1091:,} rows, xlsx): {vlm:.2f} s "
          f"({vlm / own:.2f}x the DocVQA rows alone)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""The harness-shaped sample: sample_runs/harness/ (called by make_sample.py, or alone).

    python sample_runs/_harness.py                 # regenerate sample_runs/harness in place
    python sample_runs/_harness.py --out /tmp/x    # into /tmp/x/harness

Two runs over the 41 questions of the MMLongBench-Doc sample (sample_runs/_mmlongbench.py), written
as the harnesses write them (scoring/formats/ and the "Harness profiles" section of scoring/README.md):

- `harness/lmms-eval/<model>/<date>_samples_mmlongbench_doc.jsonl` and `<date>_results.json`: the
  v0.7 line format (`doc` dropped, `filtered_resps` a string, `resps` only where reasoning was
  stripped, the per-line `mmlongbench_doc_acc`/`_f1` dicts), lines in the order two processes
  leave them (even doc_ids, then odd), the model's short answers from the sample's second run;
- `harness/vlmevalkit/<model>/<model>_MMLongBench_DOC.xlsx`, the judge's `_gpt-4o.xlsx` and
  `_gpt-4o_score.csv` in the flat layout (before 2024-11: real files, formulas not escaped), the
  model's responses and the judge's extracted answers from the sample's first run, the format
  `None` a blank cell (the TSV round trip), one row the judge gave up on (blank `pred`).

The per-question scores and the aggregates are the harnesses' rules as reproduced by
scoring/harness_rules.py (the sample has no real harness run to copy), on the values as the harness
reads them back. Deterministic: xlsx with a fixed creation date; xlsxwriter (a test dependency)
and pandas write the sheets, as VLMEvalKit does.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import _mmlongbench as mm  # noqa: E402

FOLDER = "harness"
LMMS_MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"
LMMS_DATE = "20260801_101500"
VLM_MODEL = "MiniCPM-Llama3-V-2_5"
JUDGE = "gpt-4o"
POST_PROMPT = "\nAnswer with a single word or phrase. If the answer is not in the document, answer 'Not answerable'."
DOC_HASH = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
JUDGE_GAVE_UP = 8  # the sample index whose judge reply failed five times: `pred` and `res` blank
REASONING = 3  # the sample index whose response had a reasoning block, stripped by lmms-eval


def _short(value) -> str:
    return value[0] if isinstance(value, tuple) else value


def lmms_lines() -> tuple[list[dict], dict]:
    from scoring.harness_rules import lmms_answerable, lmms_mmlongbench_f1, lmms_mmlongbench_score

    lines, items = [], []
    for k, (sample, q) in enumerate(zip(mm.samples(), mm.QUESTIONS)):
        answer = _short(q[7])
        score = lmms_mmlongbench_score(sample["answer"], answer.strip(), sample["answer_format"])
        gt, pred = lmms_answerable(sample["answer"]), lmms_answerable(answer.strip())
        line = {"doc_id": k, "target": sample["answer"]}
        if k == REASONING:
            line["resps"] = f"<think>The page lists the revenue.</think>{answer}"
        line.update({"filtered_resps": answer, "token_counts": [{"output_tokens": 9}], "doc_hash": DOC_HASH,
                     "mmlongbench_doc_acc": {"score": score},
                     "mmlongbench_doc_f1": {"score": score, "gt_answerable": gt, "pred_answerable": pred},
                     "input": sample["question"].strip() + POST_PROMPT})
        lines.append(line)
        items.append((score, gt, pred))
    order = [x for x in lines if x["doc_id"] % 2 == 0] + [x for x in lines if x["doc_id"] % 2 == 1]
    acc = sum(float(s) for s, _, _ in items) / len(items)
    f1 = lmms_mmlongbench_f1(items)
    results = {
        "results": {"mmlongbench_doc": {"alias": "mmlongbench_doc", "mmlongbench_doc_acc,none": acc,
                                        "mmlongbench_doc_acc_stderr,none": "N/A", "mmlongbench_doc_f1,none": f1,
                                        "mmlongbench_doc_f1_stderr,none": "N/A"}},
        "group_subtasks": {"mmlongbench_doc": []},
        "configs": {},
        "versions": {"mmlongbench_doc": 0.0},
        "n-shot": {"mmlongbench_doc": 0},
        "higher_is_better": {"mmlongbench_doc": {"mmlongbench_doc_acc": True, "mmlongbench_doc_f1": True}},
        "n-samples": {"mmlongbench_doc": {"original": 1091, "effective": len(lines)}},
        "config": {"model": "qwen2_5_vl", "model_args": f"pretrained={LMMS_MODEL}", "batch_size": "1",
                   "device": "cuda:0", "limit": float(len(lines)), "gen_kwargs": ""},
        "git_hash": "75571cfe", "git_branch": "main", "lmms_eval_version": "0.7.2", "date": LMMS_DATE,
        "model_source": "qwen2_5_vl", "model_name": LMMS_MODEL, "model_name_sanitized": LMMS_MODEL.replace("/", "__"),
    }
    return order, results


def vlm_tables() -> tuple[list[dict], list[dict], list[dict]]:
    """(prediction rows, judged rows, score rows) as VLMEvalKit writes them (NaN: a blank cell)."""
    from scoring.harness_rules import vlm_categories, vlm_mmlongbench_aggregate, vlm_mmlongbench_score

    preds, judged, agg_rows = [], [], []
    for k, (sample, q) in enumerate(zip(mm.samples(), mm.QUESTIONS)):
        value = q[6]
        pred, response = value if isinstance(value, tuple) else (value, f"Based on the document, the answer is {value}.")
        fmt = math.nan if sample["answer_format"] == "None" else sample["answer_format"]
        row = {"index": k, "doc_id": sample["doc_id"], "doc_type": sample["doc_type"], "question": sample["question"],
               "answer": sample["answer"], "answer_format": fmt, "evidence_sources": sample["evidence_sources"],
               "evidence_pages": sample["evidence_pages"],
               "image_path": str([f"{Path(sample['doc_id']).stem}_{n}.jpg" for n in (1, 2)]), "prediction": response}
        preds.append(row)
        gave_up = k == JUDGE_GAVE_UP
        read_pred = math.nan if gave_up else pred  # a blank cell reads back as NaN
        score, _ = vlm_mmlongbench_score(sample["answer"], read_pred, fmt)
        judged.append({**row, "res": "" if gave_up else f"Extracted answer: {pred}\nAnswer format: {sample['answer_format']}",
                       "log": "Try 0: failed.\nAll 5 retries failed.\n" if gave_up else "Succeed",
                       "pred": "" if gave_up else pred, "score": score})
        cats, _ = vlm_categories(sample["evidence_sources"], sample["evidence_pages"])
        agg_rows.append((sample["answer"], read_pred, score, cats))
    agg = vlm_mmlongbench_aggregate(agg_rows)
    counts = {"overall_f1": len(agg_rows), "overall_acc": len(agg_rows)}
    for cat in list(agg)[2:]:
        counts[cat] = sum(1 for *_, cats in agg_rows if cat in cats)
    scores = [{"category": c, "num": counts[c], "avg_score": v} for c, v in agg.items()]
    return preds, judged, scores


def _xlsx(path: Path, rows: list[dict]) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    with pd.ExcelWriter(path, engine="xlsxwriter") as writer:  # the flat-layout era: xlsxwriter's defaults
        pd.DataFrame(rows).to_excel(writer, index=False)
        writer.book.set_properties({"created": datetime.datetime(2024, 3, 1, 12, 0, 0)})


def _csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(list(rows[0]))
    for r in rows:
        w.writerow([repr(v) if isinstance(v, float) else v for v in r.values()])
    path.write_text(buf.getvalue(), encoding="utf-8", newline="\n")


def build(out: Path) -> Path:
    folder = Path(out) / FOLDER
    lines, results = lmms_lines()
    model_dir = folder / "lmms-eval" / LMMS_MODEL.replace("/", "__")
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / f"{LMMS_DATE}_results.json").write_text(
        json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8", newline="\n")
    (model_dir / f"{LMMS_DATE}_samples_mmlongbench_doc.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8", newline="\n")
    preds, judged, scores = vlm_tables()
    vdir = folder / "vlmevalkit" / VLM_MODEL
    stem = f"{VLM_MODEL}_MMLongBench_DOC"
    _xlsx(vdir / f"{stem}.xlsx", preds)
    _xlsx(vdir / f"{stem}_{JUDGE}.xlsx", judged)
    _csv(vdir / f"{stem}_{JUDGE}_score.csv", scores)
    return folder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE), help="the folder that receives harness/ (default: sample_runs)")
    folder = build(Path(ap.parse_args(argv).out))
    print(f"wrote {folder}: an lmms-eval and a VLMEvalKit run over {len(mm.QUESTIONS)} MMLongBench-Doc questions")


if __name__ == "__main__":
    main()

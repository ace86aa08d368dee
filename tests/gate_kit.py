"""Small benchmarks and runs for the regression gate's tests, in each profile's real file format:
XL-DocBench gold and prediction JSONL, MMLongBench-Doc's samples.json and `res_<model>.json`, and an
lmms-eval `--log_samples` folder (v0.7 lines of its mmlongbench_doc task, with its results.json).

Every benchmark is `documents` PDFs of `per_doc` questions each (numeric answers: one right answer, any
other number wrong), so a run is given by which questions it answers and which of them it gets
right: `right(document, k)`, `answers(document, k)`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Rule = Callable[[int, int], bool]
ALL: Rule = lambda d, k: True  # noqa: E731
MMLB_POST = "\nAnswer with a single word or phrase. If the answer is not in the document, answer 'Not answerable'."
SOURCES = ("Chart", "Table", "Pure-text (Plain-text)")
DOC_TYPES = ("Financial report", "Research report / Introduction", "Brochure")


def answer(d: int, k: int) -> str:
    return str(1_000 + 37 * d + k)


def wrong(d: int, k: int) -> str:
    """Far from the answer under any numeric tolerance."""
    return str(3 * (1_000 + 37 * d + k) + 1)


# ----------------------------------------------------------------------------- XL-DocBench


def xl_gold(folder: Path, documents: int, per_doc: int) -> Path:
    """qa_single_doc.jsonl: `documents` PDFs (doc_000..), each with `per_doc` Int questions."""
    rows = []
    for d in range(documents):
        for k in range(per_doc):
            rows.append({"question_id": f"xl_{d:03d}_{k:02d}", "task_type": "single_doc",
                         "question": f"How many units are listed in table {k} of report {d}?",
                         "answer": {"value": answer(d, k), "format": "Int", "verification_rule": "numeric_tolerance"},
                         "document": {"document_id": f"doc_{d:03d}", "evidence_pages": [1 + k % 4]},
                         "metadata": {"domain": ("finance", "science")[d % 2], "reasoning_type": ("lookup", "counting")[k % 2],
                                      "evidence_sources": [("Table", "Chart")[k % 2]], "difficulty": "easy"}})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "qa_single_doc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def xl_run(folder: Path, name: str, documents: int, per_doc: int, right: Rule = ALL, answers: Rule = ALL,
           prefix: str = "xl") -> Path:
    """A prediction JSONL: the questions `answers` holds, right where `right` holds."""
    out = []
    for d in range(documents):
        for k in range(per_doc):
            if answers(d, k):
                out.append({"question_id": f"{prefix}_{d:03d}_{k:02d}",
                            "prediction": answer(d, k) if right(d, k) else wrong(d, k)})
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in out), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- MMLongBench-Doc


def mm_samples(folder: Path, documents: int, per_doc: int, *, tag: str = "report") -> tuple[Path, list[dict]]:
    """data/samples.json as the benchmark ships it (evidence lists as Python-literal strings)."""
    samples = []
    for d in range(documents):
        for k in range(per_doc):
            samples.append({"doc_id": f"{tag}_{d:03d}.pdf", "doc_type": DOC_TYPES[d % 3],
                            "question": f"How many units are listed in table {k} of {tag} {d}?", "answer": answer(d, k),
                            "evidence_pages": f"[{1 + k % 4}]", "evidence_sources": f"['{SOURCES[k % 3]}']",
                            "answer_format": "Int"})
    path = folder / "data" / "samples.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(samples, indent=1), encoding="utf-8")
    return path, samples


def mm_results(folder: Path, model: str, samples: list[dict], per_doc: int, right: Rule = ALL,
               answers: Rule = ALL) -> Path:
    """results/res_<model>.json as run_api.py writes it: each sample with response, extracted_res, pred, score."""
    rows = []
    for i, s in enumerate(samples):
        d, k = divmod(i, per_doc)
        if not answers(d, k):
            continue
        pred = s["answer"] if right(d, k) else wrong(d, k)
        rows.append({**s, "response": f"The table lists {pred}.", "extracted_res": f"Extracted answer: {pred}\nAnswer format: Int",
                     "pred": pred, "score": 1.0 if right(d, k) else 0.0})
    path = folder / "results" / f"res_{model}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- lmms-eval


def lmms_run(folder: Path, model: str, samples: list[dict], per_doc: int, right: Rule = ALL,
             date: str = "20260801_101500") -> Path:
    """<folder>/<model>/<date>_samples_mmlongbench_doc.jsonl (v0.7 lines: doc_id, target, filtered_resps,
    the two metric dicts, input) and <date>_results.json; the model folder."""
    lines = []
    total = 0.0
    for i, s in enumerate(samples):
        d, k = divmod(i, per_doc)
        ok = right(d, k)
        total += ok
        lines.append({"doc_id": i, "target": s["answer"], "filtered_resps": s["answer"] if ok else wrong(d, k),
                      "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
                      "mmlongbench_doc_acc": {"score": float(ok)},
                      "mmlongbench_doc_f1": {"score": float(ok), "gt_answerable": True, "pred_answerable": True},
                      "input": s["question"] + MMLB_POST})
    out = folder / model.replace("/", "__")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{date}_samples_mmlongbench_doc.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    results = {"results": {"mmlongbench_doc": {"alias": "mmlongbench_doc", "mmlongbench_doc_acc,none": total / len(lines),
                                               "mmlongbench_doc_acc_stderr,none": "N/A"}},
               "group_subtasks": {"mmlongbench_doc": []}, "configs": {}, "versions": {"mmlongbench_doc": 0.0},
               "n-shot": {"mmlongbench_doc": 0}, "higher_is_better": {},
               "n-samples": {"mmlongbench_doc": {"original": 1091, "effective": len(lines)}},
               "config": {"model": "qwen2_5_vl", "model_args": f"pretrained={model}", "batch_size": "1"},
               "lmms_eval_version": "0.7.2", "date": date, "model_name": model,
               "model_name_sanitized": model.replace("/", "__")}
    (out / f"{date}_results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return out

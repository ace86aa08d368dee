"""The command line's weak-slice finder and regression gate (issue 25, parts 2 and 4).

    python -m scoring --gold-files ... --predictions RUN --weak-slices OUT.csv \\
        [--slice-metric accuracy|token_f1|anls] [--fdr 0.05] [--fdr-method bh|by] [--min-questions N] [--min-documents N]
    python -m scoring --gold-files ... --predictions NEW --baseline OLD --compare-json OUT.json \\
        [--fail-on-regression] [--min-gap 0.02]

Both score the runs as the plain command line does (`scoring.evaluate.evaluate`, the same profile,
--prediction-field and --ignore-missing; --output and --per-question-csv still write the run's report
and CSV), then:

- --weak-slices: `scoring.slices.find_weak_slices` on the run's per-question --slice-metric, documents
  as the unit; writes the kept weak slices, ranked, as CSV (`CSV_COLUMNS`; an empty table, header
  only, when nothing passes the false-discovery control) and prints how many slices were tested.
- --baseline: NEW against OLD on the questions both cover. `overall`: per metric, the delta NEW - OLD
  with the document-bootstrap interval and the document-level sign-flip p of
  `scoring.stats.paired_by_document` (unit "document", or "question" when the gold names no
  document), and how many units. `slices`: the same for every single condition field=value (the
  finder's fields), plus q: Benjamini-Hochberg (or --fdr-method by) across the slices of each metric
  that hold at least --min-documents documents (a slice with fewer gets no interval and no q: too few
  documents to tell). `weak_slices`: the finder in pair mode on the --slice-metric difference
  (slices where NEW lost more than on the rest).
- --fail-on-regression: exit 3 when, for a --gate-metric (default all three), the overall delta, or a
  slice's, is below -min_gap with p (overall) or q (slice) below --fdr; the failing rows are printed.
  Otherwise the exit code is the plain command line's (0, or 1 when nothing could be scored).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

METRICS = ("accuracy", "token_f1", "anls")
CSV_COLUMNS = ["rank", "slice", "n", "documents", "gap", "ci_low", "ci_high", "p", "q", "excess_failures",
               "score_slice", "score_rest", "explains", "explained_slices"]
REGRESSION_EXIT = 3
OVERALL_RESAMPLES = 10_000
SLICE_RESAMPLES = 2_000  # per slice and metric: the per-slice table has dozens of rows
PARALLEL_MIN = 100_000


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of the finder and the gate, on the command line's parser."""
    g = ap.add_argument_group("weak slices and the regression gate")
    g.add_argument("--weak-slices", metavar="CSV", help="write the run's weak slices (documents as the unit) to this CSV")
    g.add_argument("--slice-metric", default="accuracy", choices=METRICS, help="the score the finder searches (default accuracy)")
    g.add_argument("--fdr", type=float, default=0.05, metavar="Q", help="false-discovery rate across slices (default 0.05)")
    g.add_argument("--fdr-method", default="bh", choices=("bh", "by"),
                   help="bh: Benjamini-Hochberg (default); by: Benjamini-Yekutieli (any dependence, stricter)")
    g.add_argument("--min-questions", type=int, metavar="N",
                   help="questions a slice needs to be tested (default max(30, 0.5%% of the questions))")
    g.add_argument("--min-documents", type=int, default=20, metavar="N", help="documents a slice needs (default 20)")
    g.add_argument("--baseline", metavar="PATH", help="the baseline run's prediction file: compare --predictions against it")
    g.add_argument("--compare-json", metavar="PATH", help="write the comparison with --baseline as JSON")
    g.add_argument("--fail-on-regression", action="store_true",
                   help=f"exit {REGRESSION_EXIT} when the overall score or a slice is worse than the baseline by more than "
                        "--min-gap at q < --fdr")
    g.add_argument("--min-gap", type=float, default=0.02, metavar="X", help="the drop (0..1) the gate tolerates (default 0.02)")
    g.add_argument("--gate-metric", nargs="+", choices=METRICS, default=list(METRICS), metavar="M",
                   help="the metrics the gate checks (default: accuracy token_f1 anls)")


def wants(args: argparse.Namespace) -> bool:
    """Whether the command line asked for the finder or the gate (then `run` does the work)."""
    return bool(args.weak_slices or args.baseline or args.compare_json or args.fail_on_regression)


def _refusal(args: argparse.Namespace) -> str | None:
    if (args.compare_json or args.fail_on_regression) and not args.baseline:
        return "--compare-json and --fail-on-regression need --baseline"
    if len(args.predictions) != 1:
        return "--weak-slices and --baseline take exactly one --predictions file"
    if not 0 < args.fdr < 1:
        return f"--fdr must be between 0 and 1, got {args.fdr}"
    if args.min_gap < 0:
        return f"--min-gap must be >= 0, got {args.min_gap}"
    if args.min_documents < 1 or (args.min_questions is not None and args.min_questions < 1):
        return "--min-questions and --min-documents must be >= 1"
    return None


def _num(x: float) -> float | None:
    """A JSON number (None for nan/inf: JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


def _score(args: argparse.Namespace, gold: list, path: str, name: str, profile: Any, write: bool) -> Any:
    """A run scored as the plain command line scores it (None when its predictions cannot be read)."""
    from .evaluate import evaluate
    from .loaders import load_predictions, reads_as_release
    from .problems import summarise

    preds = load_predictions(path, prediction_field=args.prediction_field, release=reads_as_release(profile))
    for p in summarise(preds.problems):
        print(p, file=sys.stderr)
    if preds.unreadable or not preds.items:
        print(f"ERROR: no prediction could be loaded from {path}", file=sys.stderr)
        return None
    run = evaluate(gold, preds.items, profile=profile, ignore_missing=args.ignore_missing, name=name,
                   prediction_field=args.prediction_field, workers=None if len(gold) >= PARALLEL_MIN else 1)
    if not run.results:
        print(f"ERROR: no prediction could be loaded from {path}", file=sys.stderr)
        return None
    if write and (args.output or args.per_question_csv):
        run.write_files(report=args.output, csv_path=args.per_question_csv, per_question=not args.no_per_question_json,
                        lens=profile.name != "xldocbench-1519")
    o = run.overall
    print(f"== {name}: {o['count']:,} questions evaluated, {len(run.missing_ids):,} missing; "
          f"Accuracy {o['accuracy'] * 100:.2f}%, Token F1 {o['token_f1'] * 100:.2f}%, ANLS {o['anls'] * 100:.2f}%")
    return run


def run(args: argparse.Namespace) -> int:
    """Score the run(s), write the weak slices and/or the comparison, apply the gate; the exit code."""
    why = _refusal(args)
    if why:
        print(f"ERROR: {why}", file=sys.stderr)
        return 2
    from .loaders import load_gold, reads_as_release
    from .problems import summarise
    from .profiles import get_profile

    profile = get_profile(args.profile)
    paths = [Path(f) for f in args.gold_files] if args.gold_files else [
        (Path(args.data_dir) if args.data_dir else Path.cwd() / "data") / f for f in ("qa_single_doc.jsonl", "qa_cross_doc.jsonl")]
    gold = load_gold(paths, release=reads_as_release(profile))
    for p in summarise(gold.problems):
        print(p, file=sys.stderr)
    if not gold.items:
        print("ERROR: no gold question could be loaded", file=sys.stderr)
        return 1
    new = _score(args, gold.items, args.predictions[0], Path(args.predictions[0]).stem, profile, write=True)
    if new is None:
        return 1
    if args.weak_slices:
        _write_weak_slices(args, new)
    if not args.baseline:
        return 0
    old = _score(args, gold.items, args.baseline, Path(args.baseline).stem, profile, write=False)
    if old is None:
        return 1
    comparison = compare(new, old, fdr=args.fdr, method=args.fdr_method, min_questions=args.min_questions,
                         min_documents=args.min_documents, slice_metric=args.slice_metric)
    if args.compare_json:
        out = Path(args.compare_json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(comparison, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    o = comparison["overall"]
    for m in METRICS:
        ci = o[m]["ci"]
        inside = "too few documents for an interval" if ci[0] is None else f"95% CI [{ci[0] * 100:+.2f}, {ci[1] * 100:+.2f}]"
        print(f"{m}: {o[m]['delta'] * 100:+.2f} points vs baseline ({inside}, p {_p_text(o[m]['p'])}; "
              f"{o[m]['units']:,} {o[m]['unit']}s)")
    failing = regressions(comparison, min_gap=args.min_gap, level=args.fdr, metrics=args.gate_metric)
    for row in failing:
        print(f"REGRESSION: {row}")
    if args.fail_on_regression and failing:
        print(f"FAILED: {len(failing)} regression(s) beyond --min-gap {args.min_gap:g} at q < {args.fdr:g}", file=sys.stderr)
        return REGRESSION_EXIT
    if args.fail_on_regression:
        print(f"no regression beyond --min-gap {args.min_gap:g} at q < {args.fdr:g}")
    return 0


# ----------------------------------------------------------------------------- the finder's table


def _arrays(run: Any, metric: str) -> tuple[list, Any, Any]:
    """(questions, scores of `metric`, clusters) of a scored run, in its question order."""
    import numpy as np

    from .stats import document_clusters

    questions = [r.question for r in run.results]
    scores = np.fromiter((getattr(r, metric) for r in run.results), dtype=float, count=len(questions))
    return questions, scores, document_clusters([q.document_ids for q in questions])


def slice_rows(search: Any) -> list[dict]:
    """The finder's kept slices as rows of `CSV_COLUMNS` (numbers as numbers)."""
    rows = []
    for rank, s in enumerate(search.weak, 1):
        rows.append({"rank": rank, "slice": s.name, "n": s.n, "documents": s.documents, "gap": _num(s.gap),
                     "ci_low": _num(s.ci_low), "ci_high": _num(s.ci_high), "p": _num(s.p), "q": _num(s.q),
                     "excess_failures": _num(s.excess_failures), "score_slice": _num(s.score_slice),
                     "score_rest": _num(s.score_rest), "explains": len(s.explains), "explained_slices": "; ".join(s.explains)})
    return rows


def _write_weak_slices(args: argparse.Namespace, run: Any) -> None:
    from .slice_fields import page_counts_beside, slice_fields
    from .slices import find_weak_slices

    questions, scores, clusters = _arrays(run, args.slice_metric)
    gold_paths = args.gold_files or [(Path(args.data_dir) if args.data_dir else Path.cwd() / "data") / "qa_single_doc.jsonl"]
    fields = slice_fields(questions, page_counts_beside(gold_paths))  # the dashboard's fields (scoring/slice_fields.py)
    search = find_weak_slices(scores, fields, clusters, fdr=args.fdr, method=args.fdr_method,
                              min_questions=args.min_questions, min_documents=args.min_documents)
    out = Path(args.weak_slices)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for row in slice_rows(search):
            w.writerow({k: (format(v, ".6g") if isinstance(v, float) else v) for k, v in row.items()})
    print(f"weak slices ({args.slice_metric}): {search.summary()}")
    print(f"  {search.fields_text()}")
    if search.weak:
        print(f"  gap = slice - rest; ci_low, ci_high: {search.interval_text()}")
    for s in search.weak[:10]:
        print(f"  {s.label}: {s.gap * 100:+.1f} points vs the rest [{s.ci_low * 100:+.1f}, {s.ci_high * 100:+.1f}], "
              f"{s.n:,} questions in {s.documents:,} {search.unit}s, q = {s.q:.2g}, explains {len(s.explains)}")


# ----------------------------------------------------------------------------- the comparison


def _entry(p: Any) -> dict:
    return {"delta": _num(p.delta), "ci": [_num(p.low), _num(p.high)], "p": _num(p.p), "unit": p.unit, "units": int(p.units)}


def compare(new: Any, old: Any, *, fdr: float = 0.05, method: str = "bh", min_questions: int | None = None,
            min_documents: int = 20, slice_metric: str = "accuracy", seed: int = 0) -> dict:
    """NEW against OLD (two scored runs of the same gold) on the questions both cover: the gate's JSON
    object (module docstring)."""
    import numpy as np
    from scipy import stats as sps

    from .slices import find_weak_pair_slices, question_fields
    from .stats import document_clusters, paired_by_document

    old_at = {r.question.qid: k for k, r in enumerate(old.results)}
    pairs = [(r, old.results[old_at[r.question.qid]]) for r in new.results if r.question.qid in old_at]
    questions = [a.question for a, _ in pairs]
    scores = {m: (np.fromiter((getattr(a, m) for a, _ in pairs), dtype=float, count=len(pairs)),
                  np.fromiter((getattr(b, m) for _, b in pairs), dtype=float, count=len(pairs))) for m in METRICS}
    clusters = document_clusters([q.document_ids for q in questions])
    overall = {m: _entry(paired_by_document(a, b, clusters, resamples=OVERALL_RESAMPLES, seed=seed, approximate=True,
                                            min_units=min_documents)) for m, (a, b) in scores.items()}
    fields = question_fields(questions)
    codes = np.asarray(clusters.codes)
    rows: list[dict] = []
    for name, column in fields.items():
        labels = [v if isinstance(v, tuple) else (v,) for v in column]
        values = sorted({x for v in labels for x in v if x is not None})
        if len(values) < 2 and all(len(v) == 1 for v in labels):
            continue  # one value everywhere: not a field
        for value in values:
            mask = np.fromiter((value in v for v in labels), dtype=bool, count=len(labels))
            row: dict[str, Any] = {"slice": f"{name}={value}", "field": name, "value": value, "questions": int(mask.sum())}
            for m, (a, b) in scores.items():
                p = paired_by_document(a[mask], b[mask], codes[mask], resamples=SLICE_RESAMPLES, seed=seed,
                                       approximate=True, min_units=min_documents)
                row[m] = _entry(p) | {"unit": clusters.unit, "q": None, "too_few": bool(p.too_few)}
            rows.append(row)
    for m in METRICS:
        tested = [r for r in rows if not r[m]["too_few"] and r[m]["p"] is not None]
        if tested:
            qs = sps.false_discovery_control([r[m]["p"] for r in tested], method=method)
            for r, q in zip(tested, qs):
                r[m]["q"] = float(q)
        for r in rows:
            r[m].pop("too_few")
    a, b = scores[slice_metric]
    search = find_weak_pair_slices(a, b, fields, clusters, fdr=fdr, method=method, min_questions=min_questions,
                                   min_documents=min_documents)
    return {"overall": overall, "slices": rows, "weak_slices": slice_rows(search),
            "weak_slices_tested": search.tested, "slice_metric": slice_metric,
            "baseline": old.name, "run": new.name, "questions": len(pairs)}


def regressions(comparison: dict, *, min_gap: float, level: float = 0.05, metrics: Any = METRICS) -> list[str]:
    """The gate's failing rows, in words: the overall score or a slice worse than the baseline by more
    than `min_gap`, with p (overall) or q (slices) below `level`."""
    out = []
    for m in metrics:
        o = comparison["overall"][m]
        if o["delta"] is not None and o["p"] is not None and o["delta"] < -min_gap and o["p"] < level:
            out.append(f"overall {m} {o['delta'] * 100:+.2f} points{_ci_text(o)}, p {_p_text(o['p'])} "
                       f"({o['units']:,} {o['unit']}s)")
    for r in comparison["slices"]:
        for m in metrics:
            e = r[m]
            if e["delta"] is not None and e["q"] is not None and e["delta"] < -min_gap and e["q"] < level:
                out.append(f"{r['slice']} {m} {e['delta'] * 100:+.2f} points{_ci_text(e)}, q {_p_text(e['q'])} "
                           f"({r['questions']:,} questions, {e['units']:,} {e['unit']}s)")
    return out


def _ci_text(e: dict) -> str:
    lo, hi = e["ci"]
    return "" if lo is None else f" [{lo * 100:+.2f}, {hi * 100:+.2f}]"


def _p_text(p: float | None) -> str:
    """"= 0.0123", or "< 1e-300" for a p-value that underflowed to 0."""
    if p is None:
        return "not computed"
    return "< 1e-300" if p <= 0 else f"= {p:.3g}"

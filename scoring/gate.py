"""The command line's weak-slice finder and regression gate, under every profile.

    python -m scoring --gold-files ... --predictions RUN --weak-slices OUT.csv \\
        [--slice-metric accuracy|token_f1|anls] [--fdr 0.05] [--fdr-method bh|by] [--min-questions N] [--min-documents N]
    python -m scoring --gold-files ... --predictions NEW --baseline OLD --compare-json OUT.json \\
        [--fail-on-regression] [--min-gap 0.02] [--inconclusive fail|pass]

The same options, outputs and exit codes on XL-DocBench (this module's `run`), on MMLongBench-Doc
(`--profile mmlongbench-doc`, or a samples.json given as the gold: scoring/mmlongbench_cli.py) and on
harness outputs (lmms-eval, VLMEvalKit: scoring/harness_cli.py). Each scores its runs its own way into
a `scoring.evaluate.RunResult`; `finish` does the rest for all of them:

- --weak-slices: `scoring.slices.find_weak_slices` on the run's per-question --slice-metric, documents
  as the unit; writes the kept weak slices, ranked, as CSV (`CSV_COLUMNS`; an empty table, header
  only, when nothing passes the false-discovery control) and prints how many slices were tested.
- --baseline: NEW against OLD on the questions BOTH answered (`shared`: same id, same question text;
  a question only one run answered is left out, never counted wrong) -- "compared on N shared
  questions of M". `overall`: per metric, the delta NEW - OLD with the document-bootstrap interval
  and the document-level sign-flip p of `scoring.stats.paired_by_document` (unit "document", or
  "question" when the gold names no document), and how many units. `slices`: the same for every
  single condition field=value of the finder's fields, plus q: Benjamini-Hochberg (or --fdr-method by)
  across the slices of each metric that hold at least --min-documents documents (a slice with fewer
  gets no interval and no q: too few documents to tell, and it is not in the family). Both are the
  one per-slice paired table (`scoring.paired_slices`) the Compare page shows: the same q there. `weak_slices`:
  the finder in pair mode on the --slice-metric difference (slices where NEW lost more than on the
  rest). `gate`: the decision (`decide`). A baseline sharing no question: EXIT_NO_SHARED.
- The gate (`decide`): for each --gate-metric, a REGRESSION is a drop below -min_gap whose two-sided
  sign-flip test against 0 rejects at the level --fdr: overall, on q = the metrics' p values adjusted
  together by Benjamini-Hochberg across the gate metrics; per slice, on the slice's q. INCONCLUSIVE:
  an overall drop below -min_gap that the documents cannot test -- even the smallest p they can give
  (`scoring.stats.smallest_p`: 2/2^N for N documents) is not below the level. With
  --fail-on-regression the exit code is EXIT_REGRESSION, else EXIT_INCONCLUSIVE (unless --inconclusive
  pass: then a warning), else 0. Without it, 0 (the lines are printed all the same).

No p is printed as 0: printed p and q below 1e-16 read "< 1e-16", and the CSV and JSON write them as
1e-16 (a bound, never 0). An output that cannot be written (a folder, no permission) is one sentence
on stderr; the verdict's exit code is kept.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .registry import METRICS, MIN_DOCUMENTS

CSV_COLUMNS = ["rank", "slice", "n", "documents", "gap", "ci_low", "ci_high", "p", "q", "excess_failures",
               "score_slice", "score_rest", "explains", "explained_slices"]
EXIT_PASS, EXIT_INPUT, EXIT_USAGE, EXIT_REGRESSION, EXIT_INCONCLUSIVE, EXIT_NO_SHARED = 0, 1, 2, 3, 4, 5
REGRESSION_EXIT = EXIT_REGRESSION
PARALLEL_MIN = 100_000
P_FLOOR = 1e-16  # a p or q below this is printed "< 1e-16" and written as 1e-16

EPILOG = """\
exit codes:
  0  pass: the runs were scored (with --fail-on-regression: no regression, nothing inconclusive)
  1  input: nothing could be scored (no gold question, no prediction of a gold question, an
     unreadable file), or an output could not be written when no verdict was asked for
  2  usage: an unknown option or a bad value
  3  regression (--fail-on-regression): see "what the gate tests"; with --trend, a real,
     lasting drop larger than --min-gap (see "what the trend tests")
  4  inconclusive (--fail-on-regression): a gate metric dropped by more than --min-gap, but the
     documents cannot test it: even the smallest p they can give is not below the level (5
     documents: 2/2^5 = 0.0625 > 0.05); prints INCONCLUSIVE: <metric> dropped by X points on N
     documents; the smallest p N documents can give is P (level L). --inconclusive pass lets it
     through with the same line as a warning (exit 0)
  5  the baseline shares no question with the new run (another benchmark, or other question ids)

what the gate tests (--baseline with --fail-on-regression):
  the new run minus the baseline on the questions both answered (a question only one of them
  answered is not compared, never counted wrong), documents as the unit. For each --gate-metric, a
  regression is a drop below -min-gap whose two-sided sign-flip test against 0 (the documents'
  paired differences, whole documents flipped) rejects at the level --fdr:
  - overall: the gate metrics' p values adjusted together by Benjamini-Hochberg across the gate
    metrics, q < --fdr (the scores of the same answers are positively dependent, where BH holds:
    when no gate metric really dropped, the overall test fails the gate with probability at most
    the level);
  - per slice field=value holding at least --min-documents documents: q by Benjamini-Hochberg
    (--fdr-method by: Benjamini-Yekutieli) across the slices of each metric; a slice with fewer
    documents is neither tested nor counted in the family.
  A p below 1e-16 is printed "< 1e-16"; no p is ever printed as 0.

what the trend tests (--trend, the --predictions runs ordered by checkpoint step):
  for the whole benchmark ("overall") and every slice of one or two conditions holding at least
  --min-documents documents, and every candidate checkpoint k with one checkpoint before it and
  two from it on: three paired sign-flip tests by document against the mean of the up to 3
  checkpoints before k -- the mean of k..latest, checkpoint k itself and the latest checkpoint
  are all lower; p is the largest of the three. An alarm: q < --fdr by Benjamini-Hochberg across
  slices x candidates x --gate-metric metrics. One bad checkpoint followed by recovery raises
  nothing (the latest is not lower); a drop seen only at the latest checkpoint waits for the next.
  Exit 4 (inconclusive): the latest checkpoint is more than --min-gap below the ones before it and
  the benchmark's documents cannot test a drop at all.
"""


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of the finder and the gate, on a command line's parser; its --help ends with the
    exit codes and what the gate tests (EPILOG)."""
    ap.epilog = EPILOG
    ap.formatter_class = argparse.RawDescriptionHelpFormatter
    g = ap.add_argument_group("weak slices and the regression gate")
    g.add_argument("--weak-slices", metavar="CSV", help="write the run's weak slices (documents as the unit) to this CSV")
    g.add_argument("--slice-metric", default="accuracy", choices=METRICS, help="the score the finder searches (default accuracy)")
    g.add_argument("--fdr", type=float, default=0.05, metavar="Q",
                   help="false-discovery rate across slices, and the gate's level (default 0.05)")
    g.add_argument("--fdr-method", default="bh", choices=("bh", "by"),
                   help="bh: Benjamini-Hochberg (default); by: Benjamini-Yekutieli (any dependence, stricter)")
    g.add_argument("--min-questions", type=int, metavar="N",
                   help="questions a slice needs to be tested (default max(30, 0.5%% of the questions))")
    g.add_argument("--min-documents", type=int, default=MIN_DOCUMENTS, metavar="N",
                   help=f"documents a slice needs (default {MIN_DOCUMENTS})")
    g.add_argument("--baseline", metavar="PATH",
                   help="the baseline run (a file or folder of the same kind as --predictions): compare against it")
    g.add_argument("--compare-json", metavar="PATH", help="write the comparison with --baseline as JSON")
    g.add_argument("--fail-on-regression", action="store_true",
                   help=f"exit {EXIT_REGRESSION} on a regression, {EXIT_INCONCLUSIVE} on an untestable drop (see below)")
    g.add_argument("--min-gap", type=float, default=0.02, metavar="X", help="the drop (0..1) the gate tolerates (default 0.02)")
    g.add_argument("--gate-metric", nargs="+", choices=METRICS, default=list(METRICS), metavar="M",
                   help="the metrics the gate checks (default: accuracy token_f1 anls)")
    g.add_argument("--inconclusive", choices=("fail", "pass"), default="fail",
                   help=f"a drop the documents cannot test: fail (exit {EXIT_INCONCLUSIVE}, default) or pass with a warning")
    t = ap.add_argument_group("checkpoint trend (scoring/trend_cli.py)")
    t.add_argument("--trend", metavar="CSV",
                   help="order the --predictions runs by checkpoint step and write one row per real, lasting drop "
                        "(slice, metric, step, before, after, gap, interval, p, q, documents) to this CSV; with "
                        f"--fail-on-regression exit {EXIT_REGRESSION} when a drop is larger than --min-gap")
    t.add_argument("--steps", metavar="FILE",
                   help="a CSV with columns run, step (and series) giving each run's checkpoint step (default: read from "
                        "the file names: checkpoint-1200, ckpt-0520, step_3000, global_step3000)")


def wants(args: argparse.Namespace) -> bool:
    """Whether the command line asked for the finder, the gate or the trend (then the gate's path does the work)."""
    return bool(args.weak_slices or args.baseline or args.compare_json or args.fail_on_regression or args.trend
                or args.steps)


def refusal(args: argparse.Namespace) -> str | None:
    """Why the finder's, the gate's and the trend's options cannot be used as given (a usage error), or None."""
    if args.trend:
        if args.baseline or args.compare_json or args.weak_slices:
            return ("--trend compares a series' checkpoints with each other: --baseline, --compare-json and "
                    "--weak-slices are asked for in a command line of their own")
    elif args.steps:
        return "--steps orders the runs of --trend: give --trend OUT.csv too"
    else:
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


def _num(x: float | None) -> float | None:
    """A JSON number (None for nan/inf: JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)


def _p_num(x: float | None) -> float | None:
    """A p or q as a JSON or CSV number: never 0 (below P_FLOOR it is written as P_FLOOR, a bound)."""
    v = _num(x)
    return v if v is None else max(v, P_FLOOR)


def p_text(p: float | None) -> str:
    """"= 0.0123", "< 1e-16" (never "= 0"; a p written as the floor reads so too), or "not computed"."""
    if p is None or not math.isfinite(p):
        return "not computed"
    return f"< {P_FLOOR:g}" if p <= P_FLOOR else f"= {p:.3g}"


def answered(run: Any) -> int:
    """How many of a run's questions have an answer (a prediction row)."""
    return sum(1 for r in run.results if r.prediction is not None)


def print_run(run: Any, name: str) -> None:
    """The one line the gate's path prints for a scored run."""
    o = run.overall
    print(f"== {name}: {o['count']:,} questions evaluated, {len(run.missing_ids):,} missing; "
          f"Accuracy {o['accuracy'] * 100:.2f}%, Token F1 {o['token_f1'] * 100:.2f}%, ANLS {o['anls'] * 100:.2f}%")


def load_gold_items(args: argparse.Namespace, profile: Any) -> list | None:
    """The gold questions of --gold-files (else --data-dir's, else ./data's default files), their problems
    printed; None, the error said, when none could be loaded."""
    from .formats.xldocbench import default_gold_paths
    from .loaders import load_gold, reads_as_release
    from .problems import summarise

    paths = [Path(f) for f in args.gold_files] if args.gold_files else default_gold_paths(
        Path(args.data_dir) if args.data_dir else Path.cwd() / "data")
    gold = load_gold(paths, release=reads_as_release(profile))
    for p in summarise(gold.problems):
        print(p, file=sys.stderr)
    if not gold.items:
        print("ERROR: no gold question could be loaded", file=sys.stderr)
        return None
    return list(gold.items)


def score_run(args: argparse.Namespace, gold: list, path: str, name: str, profile: Any, write: bool) -> Any:
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
        try:
            run.write_files(report=args.output, csv_path=args.per_question_csv, per_question=not args.no_per_question_json,
                            lens=profile.name != "xldocbench-1519")
        except OSError as exc:
            print(f"ERROR: cannot write the outputs of {path}: {_why(exc)}", file=sys.stderr)
    print_run(run, name)
    return run


def run(args: argparse.Namespace) -> int:
    """XL-DocBench (and DocVQA-style gold): score the run(s), then `finish`; the exit code. (--trend is
    scoring/trend_cli.py's: `python -m scoring` hands it there.)"""
    why = refusal(args)
    if why:
        print(f"ERROR: {why}", file=sys.stderr)
        return EXIT_USAGE
    from .profiles import get_profile

    profile = get_profile(args.profile)
    gold = load_gold_items(args, profile)
    if gold is None:
        return EXIT_INPUT
    new = score_run(args, gold, args.predictions[0], Path(args.predictions[0]).stem, profile, write=True)
    if new is None:
        return EXIT_INPUT
    if not answered(new):
        print(f"ERROR: none of the prediction ids of {args.predictions[0]} is a gold question id: nothing to score",
              file=sys.stderr)
        return EXIT_INPUT
    old = None
    if args.baseline:
        old = score_run(args, gold, args.baseline, Path(args.baseline).stem, profile, write=False)
        if old is None:
            return EXIT_INPUT
    return finish(args, new, old, gold_count=len(gold))


# ----------------------------------------------------------------------------- every profile's last steps


def _why(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename or ''} is a folder"
    return f"{exc.filename or ''}{': ' if exc.filename else ''}{exc.strerror or exc}"


def write_text(path: str, text: str, what: str) -> bool:
    """Write an output; on failure one sentence on stderr (no traceback) and False."""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    except OSError as exc:
        print(f"ERROR: cannot write {what} to {path}: {_why(exc)}", file=sys.stderr)
        return False
    return True


def finish(args: argparse.Namespace, new: Any, old: Any | None, *, gold_count: int) -> int:
    """The steps every profile shares, on scored runs (`scoring.evaluate.RunResult`): the weak slices of
    NEW, the comparison with OLD (when given), its JSON, the gate's lines and the exit code."""
    wrote = True
    if args.weak_slices:
        wrote = _write_weak_slices(args, new)
    if old is None:
        return EXIT_PASS if wrote else EXIT_INPUT
    pairs, differing = shared(new, old)
    if not pairs:
        print(f"ERROR: the baseline {args.baseline} shares no question with the new run (none of its {answered(old):,} "
              f"answered questions is among the {answered(new):,} the new run answered: another benchmark, or other "
              "question ids)", file=sys.stderr)
        return EXIT_NO_SHARED
    comparison = compare(new, old, fdr=args.fdr, method=args.fdr_method, min_questions=args.min_questions,
                         min_documents=args.min_documents, slice_metric=args.slice_metric, page_counts=_page_counts(args))
    comparison["gold_questions"] = int(gold_count)
    comparison["gate"] = decide(comparison, min_gap=args.min_gap, level=args.fdr, metrics=args.gate_metric)
    if args.compare_json:
        text = json.dumps(comparison, indent=2, ensure_ascii=False) + "\n"
        wrote = write_text(args.compare_json, text, "the comparison (--compare-json)") and wrote
    print(f"compared on {len(pairs):,} shared questions of {gold_count:,} (the new run answered {answered(new):,}, "
          f"the baseline {answered(old):,}; a question only one of them answered is not compared)")
    if differing:
        print(f"note: {differing:,} question id(s) of both runs name different question texts: not compared")
    o = comparison["overall"]
    for m in METRICS:
        e = o[m]
        if e["p"] is None and e.get("refused"):
            print(f"{m}: not tested: {e['refused']}")
            continue
        ci = e["ci"]
        inside = "too few documents for an interval" if ci[0] is None else f"95% CI [{ci[0] * 100:+.2f}, {ci[1] * 100:+.2f}]"
        print(f"{m}: {e['delta'] * 100:+.2f} points vs baseline ({inside}, p {p_text(e['p'])}; "
              f"{e['units']:,} {e['unit']}s)")
    gate = comparison["gate"]
    for row in gate["regressions"]:
        print(f"REGRESSION: {row}")
    for row in gate["inconclusive"]:
        print(f"INCONCLUSIVE: {row}")
    code = EXIT_PASS
    if args.fail_on_regression:
        code = _verdict_code(args, gate)
    elif not wrote:
        code = EXIT_INPUT
    return code


def _verdict_code(args: argparse.Namespace, gate: dict) -> int:
    where = f"beyond --min-gap {args.min_gap:g} at q < {args.fdr:g}"
    if gate["regressions"]:
        print(f"FAILED: {len(gate['regressions'])} regression(s) {where}", file=sys.stderr)
        return EXIT_REGRESSION
    if gate["inconclusive"]:
        if args.inconclusive == "pass":
            for row in gate["inconclusive"]:
                print(f"warning: INCONCLUSIVE: {row}", file=sys.stderr)
            print(f"no regression {where}; {len(gate['inconclusive'])} drop(s) could not be tested "
                  "(--inconclusive pass lets them through)")
            return EXIT_PASS
        print(f"FAILED: inconclusive: {len(gate['inconclusive'])} drop(s) larger than --min-gap {args.min_gap:g} that these "
              f"documents cannot test at level {args.fdr:g} (--inconclusive pass lets them through)", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    print(f"no regression {where}")
    return EXIT_PASS


# ----------------------------------------------------------------------------- the finder's table


def _arrays(run: Any, metric: str) -> tuple[list, Any, Any]:
    """(questions, scores of `metric`, clusters) of a scored run, in its question order."""
    import numpy as np

    from .stats import document_clusters

    questions = [r.question for r in run.results]
    scores = np.fromiter((getattr(r, metric) for r in run.results), dtype=float, count=len(questions))
    return questions, scores, document_clusters([q.document_ids for q in questions])


def slice_rows(search: Any) -> list[dict]:
    """The finder's kept slices as rows of `CSV_COLUMNS` (numbers as numbers; p and q never 0)."""
    rows = []
    for rank, s in enumerate(search.weak, 1):
        rows.append({"rank": rank, "slice": s.name, "n": s.n, "documents": s.documents, "gap": _num(s.gap),
                     "ci_low": _num(s.ci_low), "ci_high": _num(s.ci_high), "p": _p_num(s.p), "q": _p_num(s.q),
                     "excess_failures": _num(s.excess_failures), "score_slice": _num(s.score_slice),
                     "score_rest": _num(s.score_rest), "explains": len(s.explains), "explained_slices": "; ".join(s.explains)})
    return rows


def _page_counts(args: argparse.Namespace) -> dict[str, int | None] | None:
    """The documents' declared page counts beside the gold (documents.jsonl), as the dashboard reads
    them: what the finder's length and position fields rest on."""
    from .slice_fields import page_counts_beside

    data_dir = getattr(args, "data_dir", None)  # the harness command line has no --data-dir
    gold_paths = getattr(args, "gold_files", None) or [(Path(data_dir) if data_dir else Path.cwd() / "data") / "qa_single_doc.jsonl"]
    return page_counts_beside(gold_paths)


def _write_weak_slices(args: argparse.Namespace, run: Any) -> bool:
    from .slice_fields import slice_fields
    from .slices import find_weak_slices
    from .writers import csv_string

    questions, scores, clusters = _arrays(run, args.slice_metric)
    fields = slice_fields(questions, _page_counts(args))  # the dashboard's fields (scoring/slice_fields.py)
    search = find_weak_slices(scores, fields, clusters, fdr=args.fdr, method=args.fdr_method,
                              min_questions=args.min_questions, min_documents=args.min_documents)
    text = csv_string(([row[k] for k in CSV_COLUMNS] for row in slice_rows(search)), CSV_COLUMNS,
                      float_format=lambda v: format(v, ".6g"))  # numbers as numbers, slice names spreadsheet-safe
    wrote = write_text(args.weak_slices, text, "the weak slices (--weak-slices)")
    print(f"weak slices ({args.slice_metric}): {search.summary()}")
    print(f"  {search.fields_text()}")
    if search.weak:
        print(f"  gap = slice - rest; ci_low, ci_high: {search.interval_text()}")
    for s in search.weak[:10]:
        print(f"  {s.label}: {s.gap * 100:+.1f} points vs the rest [{s.ci_low * 100:+.1f}, {s.ci_high * 100:+.1f}], "
              f"{s.n:,} questions in {s.documents:,} {search.unit}s, q {p_text(s.q)}, explains {len(s.explains)}")
    return wrote


# ----------------------------------------------------------------------------- the comparison


def shared(new: Any, old: Any) -> tuple[list[tuple[Any, Any]], int]:
    """(pairs, differing): the (new, old) results of the questions both runs answered -- the same id
    and the same question text -- in NEW's order; and how many ids both answered name different texts
    (runs scored against different gold: not the same question)."""
    old_at = {r.question.qid: r for r in old.results if r.prediction is not None}
    pairs = []
    differing = 0
    for r in new.results:
        if r.prediction is None:
            continue
        o = old_at.get(r.question.qid)
        if o is None:
            continue
        if o.question is not r.question and " ".join(str(o.question.question).split()) != " ".join(
                str(r.question.question).split()):  # the same gold object (one benchmark's runs): no text to compare
            differing += 1
            continue
        pairs.append((r, o))
    return pairs, differing


def _entry(p: Any) -> dict:
    e = {"delta": _num(p.delta), "ci": [_num(p.low), _num(p.high)], "p": _p_num(p.p), "unit": p.unit, "units": int(p.units)}
    if p.refused:
        e["refused"] = p.refused
    return e


def compare(new: Any, old: Any, *, fdr: float = 0.05, method: str = "bh", min_questions: int | None = None,
            min_documents: int = MIN_DOCUMENTS, slice_metric: str = "accuracy", seed: int = 0,
            page_counts: dict[str, int | None] | None = None) -> dict:
    """NEW against OLD (two scored runs) on the questions both answered (`shared`): the gate's JSON
    object without its `gate` section (module docstring). `overall` and `slices` are the one per-slice
    paired table (`scoring.paired_slices.paired_table`) on the finder's fields of the shared questions
    (`scoring.slice_fields.slice_fields`, with `page_counts` when documents.jsonl declares them), as
    the Compare page shows it."""
    import numpy as np

    from .paired_slices import paired_table
    from .slice_fields import slice_fields
    from .slices import find_weak_pair_slices
    from .stats import document_clusters

    pairs, _ = shared(new, old)
    questions = [a.question for a, _ in pairs]
    a = np.array([np.fromiter((getattr(x, m) for x, _ in pairs), dtype=float, count=len(pairs)) for m in METRICS])
    b = np.array([np.fromiter((getattr(y, m) for _, y in pairs), dtype=float, count=len(pairs)) for m in METRICS])
    # a question's document as the new run's gold names it, else as the baseline's (a harness file that
    # logged no document beside one that did)
    clusters = document_clusters([x.question.document_ids or y.question.document_ids for x, y in pairs])
    fields = slice_fields(questions, page_counts)
    table = paired_table(a, b, clusters, fields, metrics=METRICS, min_documents=min_documents, method=method, seed=seed)
    overall = {m: _entry(table.overall.results[m]) for m in METRICS}
    rows = [{"slice": r.name, "field": r.field, "value": r.value, "questions": r.questions,
             **{m: _entry(r.results[m]) | {"q": _p_num(r.q[m])} for m in METRICS}} for r in table.slices]
    k = METRICS.index(slice_metric)
    search = find_weak_pair_slices(a[k], b[k], fields, clusters, fdr=fdr, method=method, min_questions=min_questions,
                                   min_documents=min_documents)
    return {"overall": overall, "slices": rows, "weak_slices": slice_rows(search),
            "weak_slices_tested": search.tested, "slice_metric": slice_metric,
            "baseline": old.name, "run": new.name, "questions": len(pairs),
            "new_answered": answered(new), "baseline_answered": answered(old)}


# ----------------------------------------------------------------------------- the decision


def decide(comparison: dict, *, min_gap: float, level: float = 0.05, metrics: Sequence[str] = METRICS) -> dict:
    """The gate on a comparison (`compare`): its `gate` section.

    - overall: per gate metric, q = its p adjusted by Benjamini-Hochberg across the gate metrics (the
      ones with a p); a REGRESSION when delta < -min_gap and q < level;
    - per slice: a REGRESSION when delta < -min_gap and the slice's q < level (q, never p: the slices
      are many);
    - INCONCLUSIVE: an overall delta < -min_gap that is no regression and that the documents cannot
      test: smallest_p(units) >= level (a metric refused for NaN scores is inconclusive too).
    `verdict`: "regression", "inconclusive" or "pass"."""
    from scipy import stats as sps

    from .stats import smallest_p

    metrics = [m for m in METRICS if m in metrics]
    overall = comparison["overall"]
    with_p = [m for m in metrics if overall[m]["p"] is not None]
    qs = sps.false_discovery_control([overall[m]["p"] for m in with_p], method="bh") if with_p else []
    q_of = {m: float(q) for m, q in zip(with_p, qs)}
    failing: list[str] = []
    untestable: list[str] = []
    for m in metrics:
        o = overall[m]
        q = q_of.get(m)
        if q is None:
            if o.get("refused"):
                untestable.append(f"{m} not tested: {o['refused']}")
            continue
        if o["delta"] is None or o["delta"] >= -min_gap:
            continue
        if q < level:
            failing.append(f"overall {m} {o['delta'] * 100:+.2f} points{_ci_text(o)}, p {p_text(o['p'])}, "
                           f"q {p_text(q)} ({o['units']:,} {o['unit']}s)")
            continue
        least = smallest_p(o["units"])
        if least >= level:
            n = f"{o['units']:,} {o['unit']}s"
            untestable.append(f"{m} dropped by {-o['delta'] * 100:.2f} points on {n}; the smallest p {n} can give is "
                              f"{least:.3g} (level {level:g})")
    for r in comparison["slices"]:
        for m in metrics:
            e = r[m]
            if e["delta"] is not None and e["q"] is not None and e["delta"] < -min_gap and e["q"] < level:
                failing.append(f"{r['slice']} {m} {e['delta'] * 100:+.2f} points{_ci_text(e)}, q {p_text(e['q'])} "
                               f"({r['questions']:,} questions, {e['units']:,} {e['unit']}s)")
    return {"metrics": list(metrics), "min_gap": min_gap, "level": level,
            "overall_adjustment": "Benjamini-Hochberg across the gate metrics",
            "slice_adjustment": "q across the slices of each metric holding at least --min-documents documents",
            "overall_q": {m: _p_num(q_of.get(m)) for m in metrics},
            "regressions": failing, "inconclusive": untestable,
            "verdict": "regression" if failing else "inconclusive" if untestable else "pass"}


def _ci_text(e: dict) -> str:
    lo, hi = e["ci"]
    return "" if lo is None else f" [{lo * 100:+.2f}, {hi * 100:+.2f}]"

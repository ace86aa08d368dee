"""`python -m scoring --profile mmlongbench-doc`: MMLongBench-Doc's own files scored as its evaluator does.

    python -m scoring --profile mmlongbench-doc --gold-files data/samples.json \\
        --predictions results/res_<model>.json [--output-txt res_<model>.txt] \\
        [--per-question-csv res_<model>.csv] [--output report.json]

`scoring/cli.py` hands the parsed command line here (`run`) when the profile is `mmlongbench-doc`, or
without --profile when the gold is a samples.json (scoring/options.py `kind_of`). The
gold is `data/samples.json` (scoring.mmlongbench.load_samples), each prediction file a result file
of its `run_api.py` (load_results: joined by position, else by doc_id and question). Outputs:

- `--output-txt`: the text of the evaluator's `show_results` over the result file's rows with the
  recomputed scores, byte for byte (UTF-8, no newline translation);
- `--per-question-csv`: one row per gold question (gold order): QUESTION_CSV_COLUMNS;
- `--output`: a JSON report -- the benchmark's Acc and F1, our Accuracy (its mean score over every
  gold question, missing ones 0), token F1 and ANLS, the breakdowns of its report (single-page /
  cross-page / unanswerable with overlaps, evidence sources, document type) plus the number of
  evidence pages, and the rows scored by a fallback rule.

--weak-slices, --baseline, --compare-json and --fail-on-regression (scoring/gate.py) work here as on
XL-DocBench, with one result file on each side, documents being the PDFs (`doc_id`): the same outputs
and exit codes; --trend (scoring/trend_cli.py) takes each result file as a checkpoint. `python -m scoring` hands a command line here also without --profile when its gold is
a samples.json.

--judge-url URL --judge-model NAME [--judge-prompt FILE] [--judge-cache DIR] (scoring/judge/cli.py) asks
an LLM judge on the user's own server to extract each answer again, with the benchmark's own prompt
(eval/prompt_for_answer_extraction.md of the clone): the CSV gains judge_verdict, judge_answer and
judge_model, the JSON report a `judge` object (scoring/judge/report.py), the signature the judge's
identity. Without it, a file whose rows hold `extracted_res` gets the `judge` object of that judge.

Rows scored by a fallback rule (where the released evaluator raises or would eval model text) are
named by question id on stderr. Problems in the inputs go to stderr as `file: severity: field: …`;
exit 1 with `ERROR: …` when no gold question or no prediction could be loaded. Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import gate, options
from .evaluate import RunResult, evaluate
from .judge import cli as judge_cli
from .judge.answers import answers_of_results
from .judge.report import JUDGE_CSV_COLUMNS, judge_object, question_columns, summary_lines
from .metrics import MMLONGBENCH_FALLBACK
from .mmlongbench import ResultsLoad, load_results, load_samples
from .mmlongbench_report import evidence_categories, rescored_rows, show_results
from .mmlongbench_rule import FALLBACK_RULES, acc_and_f1, extraction_miss
from .model import GoldQuestion, to_str
from .problems import summarise
from .profiles import MMLONGBENCH_PROFILE, get_profile
from .registry import METRICS
from .writers import write_csv

__all__ = ["QUESTION_CSV_COLUMNS", "main", "run", "score_file", "question_rows", "report"]

QUESTION_CSV_COLUMNS = ("question_id", "doc_id", "doc_type", "answer_format", "answer", "pred", "status", "score",
                        "official_score", "token_f1", "anls", "page_category", "evidence_pages", "evidence_sources",
                        "fallback_rule", "extraction_miss")
DEFAULT_SAMPLES = Path("data") / "samples.json"


def _pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line on MMLongBench-Doc's files, whatever the files (`python -m scoring` picks this kind
    itself: scoring/options.py `kind_of`)."""
    args, _ = options.parse(sys.argv[1:] if argv is None else argv, kind=options.MMLONGBENCH)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """The parsed command line (scoring/options.py) on MMLongBench-Doc's files; the exit code."""
    err = sys.stderr
    code = options.refused(args)
    if code is not None:
        return code
    asks_gate = gate.wants(args)
    if args.gold_files and len(args.gold_files) > 1:
        print("ERROR: --gold-files takes one file under --profile mmlongbench-doc (data/samples.json)", file=err)
        return 1
    samples = Path(args.gold_files[0]) if args.gold_files else Path(args.data_dir or "data") / "samples.json"
    gold = load_samples(samples)
    for p in summarise(gold.problems):
        print(p, file=err)
    if not gold.items:
        print("ERROR: no gold question could be loaded", file=err)
        return 1
    if judge_cli.wants(args):  # the judge's prompt beside the gold, its model id asked of its server
        args.judge = judge_cli.open_judge(args, [samples])
        if args.judge is None:
            return 1
    if args.trend:
        return _trend(args, gold.items)
    if asks_gate:
        return _gate(args, gold.items)
    several = len(args.predictions) > 1
    scored = failed = 0
    for path in map(Path, args.predictions):
        result = _one_file(args, path, gold.items, several, write=True)
        if result is None:
            failed += 1
        else:
            scored += 1
    if not scored:
        print("ERROR: nothing could be scored", file=err)
        return 1
    return 1 if failed else 0


def _one_file(args: argparse.Namespace, path: Path, gold: Sequence[GoldQuestion], several: bool, *,
              write: bool, header: bool = False) -> RunResult | None:
    """One result file loaded, scored, its outputs written (`write`) and its numbers printed; None (the
    error said) when nothing could be loaded or its outputs could not be written."""
    err = sys.stderr
    res = load_results(path, gold)
    for p in summarise(res.problems):
        print(p, file=err)
    if not res.items:
        print(f"ERROR: no prediction could be loaded from {path}", file=err)
        return None
    run = score_file(gold, res)
    for qid, note in fallback_rows(run):
        print(f"note: {qid}: scored by fallback rule {note} ({FALLBACK_RULES.get(note, '')})", file=err)
    judged = _judged(args, res, gold) if write else None
    if write:
        try:
            _write_outputs(args, run, res, gold, several, judged)
        except OSError as exc:
            print(f"ERROR: cannot write the outputs of {path}: {exc.filename or ''}{': ' if exc.filename else ''}"
                  f"{exc.strerror or exc}", file=err)
            return None
    rep = report(run, res, gold, per_question=False)
    if several or header:
        print(f"== {res.run}")
    print(f"Gold questions: {run.gold_count}")
    print(f"Predictions loaded: {run.prediction_count}")
    print(f"Missing predictions: {len(run.missing_ids)}")
    print(f"Acc (MMLongBench-Doc): {_pct(rep['acc'])}")
    print(f"F1 (MMLongBench-Doc): {_pct(rep['f1'])}")
    print(f"Accuracy (every gold question): {_pct(rep['overall']['accuracy'])}")
    print(f"Token F1: {_pct(rep['overall']['token_f1'])}")
    print(f"ANLS: {_pct(rep['overall']['anls'])}")
    print(f"Fallback rows: {len(rep['fallback'])}")
    for line in summary_lines(judged[0], judged[1], args.judge.client.url if judged and judged[1] else "") if judged else ():
        print(line)
    print(f"Signature: {_signature(run, judged)}")
    return run


def _judged(args: argparse.Namespace, res: ResultsLoad, gold: Sequence[GoldQuestion]) -> tuple | None:
    """(the file's answers, the re-judge or None): with --judge-url every answer judged again; without,
    None when the file holds no judge output (every output as it was)."""
    answers = answers_of_results(res, gold)
    judge = getattr(args, "judge", None)
    if judge is not None:
        return answers, judge_cli.judge_answers(judge, answers, res.run)
    return (answers, None) if any(a.stored is not None for a in answers) else None


def _signature(run: RunResult, judged: tuple | None) -> str:
    """The run's signature, with the judge's identity when it was judged again."""
    return run.signature + ("|" + judged[1].identity.signature if judged and judged[1] is not None else "")


def _gate(args: argparse.Namespace, gold: Sequence[GoldQuestion]) -> int:
    """--weak-slices and the regression gate on result files (scoring/gate.py): documents are the PDFs
    (`doc_id`); the run's own outputs are written as without them."""
    new = _one_file(args, Path(args.predictions[0]), gold, False, write=True, header=bool(args.baseline))
    if new is None:
        return gate.EXIT_INPUT
    old = None
    if args.baseline:
        if not Path(args.baseline).is_file():
            print(f"ERROR: {args.baseline}: no such result file", file=sys.stderr)
            return gate.EXIT_INPUT
        res = load_results(Path(args.baseline), gold)
        if not res.items and res.rows:  # read, but not one row is a question of this samples.json
            for p in summarise(res.problems):
                print(p, file=sys.stderr)
            print(f"ERROR: the baseline {args.baseline} shares no question with the new run (none of its {len(res.rows):,} "
                  "rows is a question of this samples.json: another benchmark, or another version of it)", file=sys.stderr)
            return gate.EXIT_NO_SHARED
        old = _one_file(args, Path(args.baseline), gold, False, write=False, header=True)
        if old is None:
            return gate.EXIT_INPUT
    return gate.finish(args, new, old, gold_count=len(gold))


def _trend(args: argparse.Namespace, gold: Sequence[GoldQuestion]) -> int:
    """--trend on result files (scoring/trend_cli.py): each file a checkpoint, named by its file (steps from
    the names, `res_checkpoint-1200.json`, or --steps by those names without `.json`)."""
    from . import trend_cli

    path_of = {Path(p).stem: Path(p) for p in args.predictions}
    if len(path_of) != len(args.predictions):
        print("ERROR: several result files share a name; each run is named by its file", file=sys.stderr)
        return gate.EXIT_USAGE

    def score(name: str) -> tuple[RunResult, list] | int:
        res = load_results(path_of[name], gold)
        for p in summarise(res.problems):
            print(p, file=sys.stderr)
        if not res.items:
            print(f"ERROR: no prediction could be loaded from {path_of[name]}", file=sys.stderr)
            return gate.EXIT_INPUT
        return score_file(gold, res), list(gold)

    return trend_cli.order_and_score(args, list(path_of), {}, score)


def score_file(gold: Sequence[GoldQuestion], res: ResultsLoad) -> RunResult:
    """One result file scored under mmlongbench-doc (in this process: 1,082 questions take a moment)."""
    return evaluate(gold, res.items, profile=get_profile(MMLONGBENCH_PROFILE), name=res.run, workers=1)


def fallback_rows(run: RunResult) -> list[tuple[str, str]]:
    """(question id, fallback rule) of every row the released evaluator could not score."""
    return [(r.qid, r.judgement.fallback_rule) for r in run.results if r.decided_by == MMLONGBENCH_FALLBACK]


def _scores(run: RunResult) -> dict[str, float]:
    return {r.qid: r.accuracy for r in run.results if r.prediction is not None}


def _path(value: str | None, name: str, ext: str, several: bool) -> Path | None:
    if not value:
        return None
    return Path(value) / f"res_{name}{ext}" if several else Path(value)


def _write_outputs(args: argparse.Namespace, run: RunResult, res: ResultsLoad, gold: Sequence[GoldQuestion],
                   several: bool, judged: tuple | None = None) -> None:
    txt = _path(args.output_txt, res.run, ".txt", several)
    if txt:
        txt.parent.mkdir(parents=True, exist_ok=True)
        with open(txt, "w", encoding="utf-8", newline="") as fh:
            fh.write(show_results(rescored_rows(res, _scores(run))))
    table = _path(args.per_question_csv, res.run, ".csv", several)
    if table:
        table.parent.mkdir(parents=True, exist_ok=True)
        rejudged = judged[1] if judged else None
        columns = QUESTION_CSV_COLUMNS + (JUDGE_CSV_COLUMNS if rejudged else ())
        with open(table, "w", encoding="utf-8", newline="") as fh:
            write_csv(fh, ([row[c] for c in columns] for row in question_rows(run, res, rejudged)), columns)
    out = _path(args.output, res.run, ".json", several)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(json.dumps(report(run, res, gold, per_question=not args.no_per_question_json, judged=judged),
                                ensure_ascii=False, indent=2) + "\n")


def _cell(value: Any) -> Any:
    """A JSON value as one CSV cell: text as it is, a whole or finite number as a number (the CSV
    writes its JSON digits, and it stays a number for writers.safe_cell), anything else as JSON."""
    if isinstance(value, str) or type(value) is int or type(value) is float and math.isfinite(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def question_rows(run: RunResult, res: ResultsLoad, rejudged: Any = None) -> list[dict[str, Any]]:
    """One dict per gold question of the run (gold order), keyed by QUESTION_CSV_COLUMNS (and
    JUDGE_CSV_COLUMNS with a re-judge, `rejudged`: scoring.judge.rejudge.JudgeRun)."""
    official = {s.qid: s.accuracy for s in res.official}
    out = []
    for r in run.results:
        q, j = r.question, r.judgement
        extras = res.extras.get(q.qid)
        gold_value = q.metadata.get("answer", q.gold_answer)
        fallback = j.fallback_rule
        miss = extras is not None and extraction_miss(gold_value, q.raw_format, extras.response, j.accuracy)
        out.append({
            "question_id": q.qid,
            "doc_id": to_str(q.metadata.get("doc_id")),
            "doc_type": to_str(q.metadata.get("doc_type")),
            "answer_format": to_str(q.raw_format),
            "answer": _cell(gold_value),
            "pred": "" if r.prediction is None else _cell(extras.pred if extras else r.prediction.text),
            "status": j.status,
            "score": j.accuracy,
            "official_score": official.get(q.qid, ""),
            "token_f1": round(j.token_f1, 6),
            "anls": round(j.anls, 6),
            "page_category": ";".join(evidence_categories(q.metadata.get("evidence_pages"), gold_value)),
            "evidence_pages": _cell(q.metadata.get("evidence_pages", [])),
            "evidence_sources": _cell(q.metadata.get("evidence_sources", [])),
            "fallback_rule": fallback,
            "extraction_miss": int(miss),
            **(question_columns(rejudged, q.qid) if rejudged is not None else {}),
        })
    return out


def _means(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"count": 0, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0}
    return {"count": n, **{m: round(sum(float(r[m]) for r in rows) / n, 6) for m in METRICS}}


def breakdowns(run: RunResult) -> dict[str, dict[str, dict[str, Any]]]:
    """Per label, over every gold question of the run: count and the mean Accuracy (the benchmark's
    score), token F1 and ANLS. Groups: page_category (single-page / cross-page / unanswerable, a
    question in each that applies), evidence_source (each source), doc_type, evidence_page_count."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "page_category": {}, "evidence_source": {}, "doc_type": {}, "evidence_page_count": {}}
    for r in run.results:
        q = r.question
        row = {"accuracy": r.accuracy, "token_f1": r.token_f1, "anls": r.anls}
        labels = {
            "page_category": list(evidence_categories(q.metadata.get("evidence_pages"), q.metadata.get("answer"))),
            "evidence_source": [to_str(s) for s in q.metadata.get("evidence_sources") or []],
            "doc_type": [to_str(q.metadata.get("doc_type")) or "unknown"],
            "evidence_page_count": [str(q.metadata.get("evidence_page_count", 0))],
        }
        for group, values in labels.items():
            for value in dict.fromkeys(values):
                groups[group].setdefault(value, []).append(row)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for group, by_label in groups.items():
        keys = sorted(by_label, key=lambda k: (int(k) if k.isdigit() else math.inf, k)) if group == "evidence_page_count" else list(by_label)
        out[group] = {k: _means(by_label[k]) for k in keys}
    return out


def report(run: RunResult, res: ResultsLoad, gold: Sequence[GoldQuestion], *, per_question: bool = True,
           judged: tuple | None = None) -> dict[str, Any]:
    """The JSON report of one result file (see the module text); `judged` (the file's answers and the
    re-judge or None) adds the `judge` object (scoring/judge/report.py) and the judge to the signature."""
    rows = rescored_rows(res, _scores(run))
    acc, f1 = acc_and_f1(rows)
    rep: dict[str, Any] = {
        "profile": MMLONGBENCH_PROFILE,
        "signature": _signature(run, judged),
        "run": res.run,
        "gold_count": run.gold_count,
        "prediction_count": run.prediction_count,
        "missing_prediction_count": len(run.missing_ids),
        "acc": acc,
        "f1": f1,
        "overall": run.overall,
        "breakdowns": breakdowns(run),
        "fallback": [{"question_id": qid, "rule": note} for qid, note in fallback_rows(run)],
        "problems": [str(p) for p in res.problems],
    }
    if judged:
        rep["judge"] = judge_object(judged[0], judged[1])
    if per_question:
        rep["per_question"] = question_rows(run, res, judged[1] if judged else None)
    return rep

"""`python -m scoring --predictions HARNESS_FILE_OR_FOLDER [--gold-files F ...] --profile P`: a
harness's output (lmms-eval, VLMEvalKit, LongDocURL), exactly as the harness left it, scored.

    python -m scoring --predictions outputs/ --profile lmms-eval --output report.json --per-question-csv q.csv

`scoring/cli.py` hands the parsed command line here (`run`) when the profile is `lmms-eval` or
`vlmevalkit`, or when a --predictions path is a harness's file or folder (scoring/options.py
`kind_of`); the options of the other kinds of input are named on stderr and ignored. Without --profile each
run is scored by its own harness's profile. --gold-files (optional) joins the runs to the
benchmark's own gold: MMLongBench-Doc's `samples.json` by (question, answer), which gives the
answer format lmms-eval's lines lack; DocVQA-style gold by questionId, else by (question, answers).

Outputs:
- `--output` (JSON): `harness`, `profile`, `signature`, `source`, `runs` (one object per run: its
  name, model, task, date, files, `reported`, `recomputed`, `agree`, counts, `sensitivity` -- changed,
  up, down, per answer format or task (`by_slice`) and per breakdown field and label (`by_field`: up,
  down, unchanged) -- and `per_question` unless --no-per-question-json), `problems`; plus `reported` and `recomputed` at the top: the
  run's own when there is one run, else by run name.
- `--per-question-csv`: `run, task, question_id, filter, official_score, score, prediction, gold,
  file, line, note` (scores on 0-1; empty when unknown).
Exit 1 with `ERROR: …` when nothing could be read or scored.

--weak-slices, --baseline, --compare-json and --fail-on-regression (scoring/gate.py) work on one run on
each side (`_gate`): each scored by its profile on the questions it answered, against the benchmark's
gold when --gold-files joins it (its documents are then the units), with the same outputs and exit
codes as on XL-DocBench. --trend (scoring/trend_cli.py) takes every run the --predictions hold as a
checkpoint (`_trend`), its step read from --steps, lmms-eval's model arguments or VLMEvalKit's model
folder."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import formats, gate, options
from .formats.base import ANLS_FAMILY, MMLONGBENCH_FAMILY, HarnessQuestion, SourceLoad
from .harness import SLICE_FIELDS, Rescored, own_profile, rescore, sensitivity
from .judge import cli as judge_cli
from .problems import Problem, summarise
from .profiles import signature
from .writers import write_csv

__all__ = ["main", "run", "CSV_COLUMNS", "join_mmlongbench", "join_docvqa"]

CSV_COLUMNS = ("run", "task", "question_id", "filter", "official_score", "score", "prediction", "gold", "file", "line", "note",
               "reason")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line on harness outputs, whatever the files (`python -m scoring` picks this kind itself:
    scoring/options.py `kind_of`)."""
    args, _ = options.parse(sys.argv[1:] if argv is None else argv, kind=options.HARNESS)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """The parsed command line (scoring/options.py) on harness outputs; the exit code."""
    code = options.refused(args)
    if code is not None:
        return code
    asks_gate = gate.wants(args)
    code = _rescore_all(args)
    if code or not asks_gate:
        return code
    return _trend(args) if args.trend else _gate(args)


def _open(value: str) -> SourceLoad | None:
    """A harness output opened (None, the error said, when it is not there or not one)."""
    path = Path(value)
    if not path.exists() and not path.is_symlink():
        print(f"ERROR: {value}: no such file or folder", file=sys.stderr)
        return None
    said: list[int] = []
    src = formats.open_source(path, progress=_progress(value, sys.stderr, said))
    if said:
        print(file=sys.stderr)  # the progress line ended
    if src is None:
        print(f"ERROR: {value}: not a harness output this reader knows (lmms-eval, VLMEvalKit, LongDocURL)", file=sys.stderr)
    return src


def _rescore_all(args: argparse.Namespace) -> int:
    """Every run of the --predictions rescored, the outputs written and the numbers printed."""
    err = sys.stderr
    sources: list[SourceLoad] = []
    problems: list[Problem] = []
    for value in args.predictions:
        src = _open(value)
        if src is None:
            return 1
        sources.append(src)
        problems.extend(src.problems)
    if args.gold_files:
        for src in sources:
            problems.extend(_join_gold(src, [Path(f) for f in args.gold_files]))
    for p in summarise(problems):
        print(p, file=err)
    results: list[Rescored] = []
    for src in sources:
        for run in src.runs:
            if run.older and not args.all_evals:
                print(f"note: {run.name}: an older eval id ({run.date}); --all-evals scores it too", file=err)
                continue
            profile = args.profile or own_profile(run)
            if profile is None:
                print(f"note: {run.name}: no profile reproduces {run.harness}'s score; its official scores are listed",
                      file=err)
                profile = ""
            questions = {q.qid: q for q in src.gold.get(run.task, [])}
            results.append(rescore(run, questions, profile))
    if not results:
        print("ERROR: no run could be read from " + ", ".join(args.predictions), file=err)
        return 1
    judged = _judge_all(args, results)
    if judged is None:
        return 1
    try:
        if args.output:
            _write_json(Path(args.output), args, sources, results, problems, judged)
        if args.per_question_csv:
            _write_csv(Path(args.per_question_csv), results, judged)
    except OSError as exc:
        print(f"ERROR: cannot write the outputs: {exc.filename or ''}{': ' if exc.filename else ''}{exc.strerror or exc}",
              file=err)
        return 1
    for r in results:
        _print_run(r, judged.get(id(r)), getattr(args, "judge", None))
    for move in ranks(results):
        if move["reported"] and move["reported"] != move["recomputed"]:
            before = {name: k + 1 for k, name in enumerate(move["reported"])}
            print(f"Ranks on {move['task']} by {move['key']} move: " + ", ".join(
                f"{name} {before[name]} -> {k + 1}" for k, name in enumerate(move["recomputed"]) if before[name] != k + 1))
    return 0


def _progress(value: str, err: Any, said: list[int]) -> Any:
    """A long listing of a folder said on a terminal, on one line ("listing outputs/: 60,000 entries"),
    else nothing; `said` receives the counts said."""
    if not getattr(err, "isatty", lambda: False)():
        return None

    def say(count: int, where: str) -> None:
        said.append(count)
        print(f"\rlisting {value}: {count:,} entries", end="", file=err, flush=True)

    return say


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _agree(reported: dict[str, Any], recomputed: dict[str, Any]) -> dict[str, bool]:
    out = {}
    for key, value in reported.items():
        other = recomputed.get(key)
        if isinstance(value, (int, float)) and isinstance(other, (int, float)):
            out[key] = math.isclose(float(value), float(other), rel_tol=0, abs_tol=1e-9)
    return out


def _judge_all(args: argparse.Namespace, results: list[Rescored]) -> dict[int, tuple] | None:
    """Per rescored run (by id) whose answers a judge extracts from: (its answers, the re-judge or None);
    with --judge-url each such run judged again, without it only the runs whose files hold judge output.
    None (the error said) when the judge cannot be used."""
    from .judge.answers import answers_of_run

    judge = None
    if judge_cli.wants(args):
        near = [*(args.gold_files or ())[:1], *args.predictions]
        judge = args.judge = judge_cli.open_judge(args, near)
        if judge is None:
            return None
    out: dict[int, tuple] = {}
    for r in results:
        answers = answers_of_run(r.run, r.questions)
        if not answers:
            continue
        stored_model = r.run.extra.get("judge") or None  # VLMEvalKit names its judge in the sheet's name
        if judge is not None:
            out[id(r)] = (answers, judge_cli.judge_answers(judge, answers, r.run.name), stored_model)
        elif any(a.stored is not None for a in answers):
            out[id(r)] = (answers, None, stored_model)
    return out


def _judge_json(judged: tuple | None) -> dict[str, Any]:
    """The run's `judge` object (scoring/judge/report.py), {} when it has none."""
    from .judge.report import judge_object

    if not judged:
        return {}
    return {"judge": judge_object(*judged)}


def _signature(profile: str, judged: tuple | None) -> str:
    """A profile's signature, with the judge's identity when the run was judged again."""
    if not profile:
        return ""
    return signature(profile) + ("|" + judged[1].identity.signature if judged and judged[1] is not None else "")


def _run_report(r: Rescored, per_question: bool, judged: tuple | None = None) -> dict[str, Any]:
    run = r.run
    rep: dict[str, Any] = {
        "name": run.name,
        "harness": run.harness,
        "model": run.model,
        "task": run.task,
        "date": run.date,
        "version": run.version,
        "model_args": run.model_args,
        "older": run.older,
        "files": run.files,
        "profile": r.profile,
        "signature": _signature(r.profile, judged),
        "rows": len(r.rows),
        "official_scored": sum(1 for x in r.rows if x.official is not None),
        "scored": sum(1 for x in r.rows if x.score is not None),
        "changed": len(r.changed),
        "reported": {k: _clean(v) for k, v in run.reported.items()},
        "recomputed": {k: _clean(v) for k, v in r.recomputed.items()},
        "agree": _agree(run.reported, r.recomputed),
        "sensitivity": sensitivity(r),
    }
    if run.extra:
        rep["extra"] = {k: v for k, v in run.extra.items() if isinstance(v, (str, bool, int, float, list))}
    rep.update(_judge_json(judged))
    if per_question:
        rejudged = judged[1] if judged else None
        rep["per_question"] = [_row_dict(r, x, rejudged) for x in r.rows]
    return rep


def _row_dict(r: Rescored, x: Any, rejudged: Any = None) -> dict[str, Any]:
    from .judge.report import question_columns

    return {"run": r.run.name, "task": r.run.task, "question_id": x.qid, "filter": x.filter,
            "official_score": _clean(x.official), "score": _clean(x.score), "prediction": x.prediction, "gold": x.gold,
            "file": x.file, "line": x.line, "note": x.note, "reason": x.reason,
            **(question_columns(rejudged, x.qid) if rejudged is not None else {})}


def _write_json(path: Path, args: argparse.Namespace, sources: list[SourceLoad], results: list[Rescored],
                problems: list[Problem], judged: dict[int, tuple] | None = None) -> None:
    judged = judged or {}
    runs = [_run_report(r, not args.no_per_question_json, judged.get(id(r))) for r in results]
    profiles = sorted({r.profile for r in results})
    together = judge_cli.pooled([(r.run.name, *judged[id(r)]) for r in results if id(r) in judged]) if judged else None
    report: dict[str, Any] = {
        "harness": sorted({s.format for s in sources}),
        "profile": profiles[0] if len(profiles) == 1 else profiles,
        "signature": _signature(profiles[0], together) if len(profiles) == 1 and profiles[0] else "",
        "source": [str(s.root) for s in sources],
        "documents": sorted({d for s in sources for d in s.documents}),
        "runs": runs,
        "problems": [str(p) for p in problems],
    }
    report["ranks"] = ranks(results)
    report.update(_judge_json(together))
    if len(runs) == 1:
        report["reported"], report["recomputed"] = runs[0]["reported"], runs[0]["recomputed"]
    else:
        report["reported"] = {r["name"]: r["reported"] for r in runs}
        report["recomputed"] = {r["name"]: r["recomputed"] for r in runs}
    path.parent.mkdir(parents=True, exist_ok=True)
    import orjson  # C speed: a work dir's per-question lists run to hundreds of thousands of rows

    try:
        data = orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # a value orjson does not take (an integer beyond 64 bits in a harness file): the slow path
        data = json.dumps(report, ensure_ascii=False, indent=2, default=str).encode("utf-8")
    with open(path, "wb") as fh:
        fh.write(data + b"\n")


PRIMARY = ("anls,none", "Overall", "mmlongbench_doc_acc,none", "overall_acc")


def ranks(results: list[Rescored]) -> list[dict[str, Any]]:
    """Per task with several runs: the runs ordered by the harness's primary number as reported and
    as recomputed by the profile (how the leaderboard's ranks move), best first."""
    by_task: dict[tuple[str, str], list[Rescored]] = {}
    for r in results:
        by_task.setdefault((r.run.harness, r.run.task), []).append(r)
    out = []
    for (harness, task), group in sorted(by_task.items()):
        if len(group) < 2:
            continue
        key = next((k for k in PRIMARY if all(k in g.recomputed for g in group)), None)
        if key is None:
            continue

        def order(values: dict[str, float]) -> list[str]:
            return sorted(values, key=lambda name: (-values[name], name))

        rep = {g.run.name: float(g.run.reported[key]) for g in group
               if isinstance(g.run.reported.get(key), (int, float)) and not isinstance(g.run.reported.get(key), bool)}
        rec = {g.run.name: float(g.recomputed[key]) for g in group}
        out.append({"harness": harness, "task": task, "key": key, "reported": order(rep) if len(rep) == len(group) else [],
                    "recomputed": order(rec)})
    return out


def _cell(value: float | None) -> float | str:
    """A score as a number (the CSV writes its repr), or an empty cell."""
    return "" if value is None else float(value)


def _write_csv(path: Path, results: list[Rescored], judged: dict[int, tuple] | None = None) -> None:
    from .judge.report import JUDGE_CSV_COLUMNS, question_columns

    rejudged = {id(r): got[1] for r in results if (got := (judged or {}).get(id(r))) and got[1] is not None}
    path.parent.mkdir(parents=True, exist_ok=True)
    def rows():
        for r in results:
            judge = rejudged.get(id(r))
            for x in r.rows:
                more = list(question_columns(judge, x.qid).values()) if judge else [""] * len(JUDGE_CSV_COLUMNS) if rejudged else []
                yield [r.run.name, r.run.task, x.qid, x.filter, _cell(x.official), _cell(x.score), x.prediction, x.gold,
                       x.file, "" if x.line is None else x.line, x.note, x.reason, *more]

    with open(path, "w", encoding="utf-8", newline="") as fh:
        write_csv(fh, rows(), CSV_COLUMNS + (JUDGE_CSV_COLUMNS if rejudged else ()))


def _print_run(r: Rescored, judged: tuple | None = None, judge: Any = None) -> None:
    run = r.run
    print(f"== {run.name} ({run.harness}, {run.task}{', ' + run.date if run.date else ''})")
    print(f"Rows: {len(r.rows)}  scored: {sum(1 for x in r.rows if x.score is not None)}  "
          f"official: {sum(1 for x in r.rows if x.official is not None)}  score differs from official: {len(r.changed)}")
    for key in dict.fromkeys([*run.reported, *r.recomputed]):
        rep, rec = run.reported.get(key), r.recomputed.get(key)
        print(f"{key}: reported {rep if rep is not None else '-'}  recomputed {rec if rec is not None else '-'}")
    changed = r.changed
    if changed and r.profile != own_profile(run):
        s = sensitivity(r)
        print(f"Changed under {r.profile}: {s['changed']} of {s['count']} ({s['up']} up, {s['down']} down)")
        for x in changed[:20]:
            print(f"  {x.qid}: {x.official:g} -> {x.score:g}: {x.reason}")
        if len(changed) > 20:
            print(f"  ... and {len(changed) - 20} more (--per-question-csv lists them all)")
        for name, labels in s["by_field"].items():  # per slice: each field with two labels or more
            print(f"  by {name}: " + "; ".join(f"{label} {c['up']} up, {c['down']} down, {c['unchanged']} unchanged"
                                               for label, c in labels.items()))
    if judged:
        from .judge.report import summary_lines

        for line in summary_lines(judged[0], judged[1], judge.client.url if judge is not None and judged[1] else ""):
            print(line)
    if r.profile:
        print(f"Signature: {_signature(r.profile, judged)}")


# ----------------------------------------------------------------------------- weak slices and the gate


def _gate(args: argparse.Namespace) -> int:
    """--weak-slices and the regression gate on harness runs (scoring/gate.py), one run on each side:
    each run scored by its profile (--profile, else its harness's own) on the questions it answered,
    against the benchmark's gold when --gold-files joins it (its question ids and documents), else
    against the gold its own files state. Runs are compared on the questions both answered."""
    gold_paths = [Path(f) for f in args.gold_files or ()]
    new = _gate_run(args, args.predictions[0], gold_paths, "--predictions")
    if not isinstance(new, tuple):
        return new
    old = None
    if args.baseline:
        got = _gate_run(args, args.baseline, gold_paths, "--baseline")
        if not isinstance(got, tuple):
            return got
        old = got[0]
    return gate.finish(args, new[0], old, gold_count=new[1])


def _trend(args: argparse.Namespace) -> int:
    """--trend on harness runs (scoring/trend_cli.py): every run the --predictions hold is a checkpoint, its
    step from --steps, else from its model arguments (lmms-eval: `pretrained=/ckpt/run7/checkpoint-1200`)
    or its model folder (VLMEvalKit), else its name; each scored as `_gate_run` scores one."""
    from . import trend_cli
    from .evaluate import evaluate

    gold_paths = [Path(f) for f in args.gold_files or ()]
    found: dict[str, tuple[SourceLoad, Any]] = {}
    for value in args.predictions:
        src = _open(value)
        if src is None:
            return gate.EXIT_INPUT
        for run in src.runs:
            if args.all_evals or not run.older:
                found.setdefault(run.name, (src, run))
    hints = {name: [h for h in (run.model_args, run.model) if h] for name, (_, run) in found.items()}

    def score(name: str) -> tuple[Any, list] | int:
        src, run = found[name]
        profile = args.profile or own_profile(run)
        if not profile:
            print(f"ERROR: {run.name}: no profile scores {run.harness} runs yet; --profile names one", file=sys.stderr)
            return gate.EXIT_INPUT
        gold, preds = _gold_and_answers(src, run, gold_paths, say=False)
        scored = evaluate(gold, preds, profile=profile, ignore_missing=True, name=name, workers=1) if gold and preds else None
        if scored is None or not scored.results:
            print(f"ERROR: no answer of {name} could be scored", file=sys.stderr)
            return gate.EXIT_INPUT
        return scored, gold

    return trend_cli.order_and_score(args, list(found), hints, score)


def _gate_run(args: argparse.Namespace, value: str, gold_paths: list[Path], option: str) -> tuple[Any, int] | int:
    """(the run scored, how many gold questions it was scored against), or the exit code (the error said)."""
    from .evaluate import evaluate

    src = _open(value)
    if src is None:
        return gate.EXIT_INPUT
    said = option == "--predictions"  # its problems were printed when it was rescored
    if not said:
        for p in summarise(src.problems):
            print(p, file=sys.stderr)
    runs = [r for r in src.runs if args.all_evals or not r.older]
    if len(runs) != 1:
        names = ", ".join(r.name for r in runs[:10]) + (f" and {len(runs) - 10} more" if len(runs) > 10 else "")
        print(f"ERROR: {option} {value} holds {len(runs)} runs{': ' + names if runs else ''}; --weak-slices and --baseline "
              "take one run on each side (point at one run's file or folder)", file=sys.stderr)
        return gate.EXIT_USAGE if runs else gate.EXIT_INPUT
    run = runs[0]
    profile = args.profile or own_profile(run)
    if not profile:
        print(f"ERROR: {run.name}: no profile scores {run.harness} runs yet; --profile names one", file=sys.stderr)
        return gate.EXIT_INPUT
    gold, preds = _gold_and_answers(src, run, gold_paths, say=not said)
    if not gold or not preds:
        print(f"ERROR: no answer of {value} could be scored", file=sys.stderr)
        return gate.EXIT_INPUT
    scored = evaluate(gold, preds, profile=profile, ignore_missing=True, name=run.name, workers=1)
    if not scored.results:
        print(f"ERROR: no answer of {value} is a question of the gold", file=sys.stderr)
        return gate.EXIT_INPUT
    gate.print_run(scored, f"{run.name} ({run.harness}, {run.task}, profile {profile})")
    return scored, len(gold)


def _gold_and_answers(src: SourceLoad, run: Any, gold_paths: list[Path], *, say: bool) -> tuple[list, list]:
    """(gold questions, the run's answers): joined to the benchmark's gold when --gold-files joins the
    run's questions (the benchmark's ids, documents and labels; the questions that do not join were
    named when `say`), else the gold the harness's own files state."""
    from .formats import records
    from .loaders import load_gold
    from .mmlongbench import load_samples

    if gold_paths:
        joined = _join_gold(src, gold_paths)
        for p in summarise(joined) if say else ():
            print(p, file=sys.stderr)
        qids = {q.qid: str(q.metadata["benchmark_qid"]) for q in src.gold.get(run.task, []) if "benchmark_qid" in q.metadata}
        if qids:
            gold = load_samples(gold_paths[0]) if run.family == MMLONGBENCH_FAMILY else load_gold(gold_paths)
            return list(gold.items), list(records.predictions(run, qids).items)
    return list(records.gold_of(src, run.task).items), list(records.predictions(run).items)


# ----------------------------------------------------------------------------- joining the benchmark's gold


def _join_gold(src: SourceLoad, paths: list[Path]) -> list[Problem]:
    """Join the runs' questions to the benchmark's gold in place (format, document, answers);
    one problem per question that could not be joined, with the reason."""
    problems: list[Problem] = []
    families = {r.task: r.family for r in src.runs}
    gold_kind = MMLONGBENCH_FAMILY if all(_is_samples_json(p) for p in paths) else ANLS_FAMILY
    for task, family in families.items():
        questions = src.gold.get(task, [])
        if family != gold_kind:
            problems.append(Problem.warning(task, None, None, f"a task of the benchmark of {', '.join(p.name for p in paths)}",
                                            f"{task}: not this benchmark (its own gold is used)", kind="tasks of another benchmark"))
        elif family == MMLONGBENCH_FAMILY:
            problems += join_mmlongbench(task, questions, paths)
        elif family == ANLS_FAMILY:
            problems += join_docvqa(task, questions, paths)
    return problems


def _is_samples_json(path: Path) -> bool:
    """MMLongBench-Doc's samples.json (scoring.formats.mmlongbench_doc.is_samples)."""
    from .formats.mmlongbench_doc import is_samples

    return is_samples(path)


def join_mmlongbench(task: str, questions: list[HarnessQuestion], paths: list[Path]) -> list[Problem]:
    from .mmlongbench import load_samples

    if len(paths) != 1:
        return [Problem.error(", ".join(map(str, paths)), None, None, "one file: MMLongBench-Doc's data/samples.json",
                              f"{len(paths)} files")]
    gold = load_samples(paths[0])
    out = list(gold.problems)
    index: dict[tuple[str, str], Any] = {}
    for item in gold.items:
        index.setdefault((item.question.strip(), str(item.metadata.get("answer", item.gold_answer))), item)
    for q in questions:
        g = index.get((q.question.strip(), q.answers[0] if q.answers else ""))
        if g is None:
            out.append(Problem.warning(task, None, q.qid, "a question of samples.json with the same text and answer",
                                       "none (a stale question text or an answer that changed since)",
                                       kind="questions not in the benchmark's gold"))
            continue
        q.answer_format = str(g.raw_format) if g.format_given else "Str"
        q.metadata.pop("answer_format_inferred", None)
        q.metadata["benchmark_qid"] = g.qid
        q.document = str(g.metadata.get("doc_id", "")) or q.document
        q.evidence_pages = tuple(g.documents[0].evidence_pages) if g.documents else q.evidence_pages
        q.metadata["benchmark_labels"] = _labels_of(g)
    return out


def _labels_of(g: Any) -> dict[str, list[str]]:
    """A joined question's breakdown labels as the benchmark's own gold gives them (the per-slice counts)."""
    return {f: g.labels(f) for f in SLICE_FIELDS}


def join_docvqa(task: str, questions: list[HarnessQuestion], paths: list[Path]) -> list[Problem]:
    from .loaders import load_gold

    gold = load_gold(paths)
    out = list(gold.problems)
    by_id = {g.qid: g for g in gold.items}
    by_text: dict[tuple[str, tuple[str, ...]], Any] = {}
    for item in gold.items:
        by_text.setdefault((item.question, tuple(item.answers)), item)
    for q in questions:
        g = by_id.get(q.qid) or by_text.get((q.question, tuple(q.answers)))
        if g is None:
            out.append(Problem.warning(task, None, q.qid, "a gold question with this questionId, or this question and answers",
                                       "none", kind="questions not in the benchmark's gold"))
            continue
        q.metadata["benchmark_qid"] = g.qid
        q.metadata["benchmark_answers"] = tuple(g.answers)
        q.metadata["benchmark_labels"] = _labels_of(g)
        if g.image:
            q.document = g.image
    return out

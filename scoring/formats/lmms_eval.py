"""lmms-eval's `--log_samples` output (v0.2.3 to now), read as the harness left it.

Accepted: the `--output_path` folder, one model folder inside it, or one samples file:
`<YYYYMMDD_HHMMSS>_samples_<task>.jsonl` beside `<YYYYMMDD_HHMMSS>_results.json` (v0.2.4 on), or
`samples_<task>_<ISO date>.jsonl` beside `results_<ISO date>.json` (v0.2.3). Every line format:
`doc` kept (to v0.3.5) or not (v0.4 on), `filtered_resps` a list of lists, a list or a string,
`input` or v0.2.3's `arguments`. Lines may come in any order (several processes interleave
them); a doc_id seen again is the next filter of the task (results keys `<metric>,<filter>`),
and an exact copy of a line is named and skipped. A last line cut short by a stopped run is
named. `target` is a Python literal read with `ast.literal_eval` only, and only under the literal
caps (scoring/limits.py: a longer target is kept as text and named). A line's score that is not a
number in 0..1 (NaN, Infinity, a string, a boolean, -5) is named and read as no official score.
Files are read a line at a time with the caps applied while reading (LMMS_MAX_LINE bytes a line,
HARNESS_MAX_LINES lines): an over-long line is read past, never held. The results file gives the
harness's reported numbers (`results[task]`, without the `_stderr` keys) and the run's config."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .. import guard
from ..harness_rules import infer_mmlongbench_format, lmms_anls, lmms_anls_any
from ..limits import LMMS_MAX_LINE, RESULTS_MAX_BYTES
from ..problems import Problem, kind_of, short_value
from ..reading import literal_refusal, read_capped, read_literal
from .base import (
    ANLS_FAMILY,
    MMLONGBENCH_FAMILY,
    HarnessQuestion,
    HarnessRow,
    HarnessRun,
    SourceLoad,
    Walk,
    conflict_problems,
    display,
    official_score,
    settle_gold,
    single,
    text_lines,
    unreadable,
    walk,
)

__all__ = ["NAME", "TASKS", "recognise", "load"]

NAME = "lmms-eval"
SAMPLES = re.compile(r"^(\d{8}_\d{6})_samples_(.+)\.jsonl$")
SAMPLES_V023 = re.compile(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
RESULTS = re.compile(r"^(\d{8}_\d{6})_results\.json$")
RESULTS_V023 = re.compile(r"^results_(\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")

# document tasks: task -> (family, the metric key of each line holding the harness's score)
TASKS: dict[str, tuple[str, str]] = {
    "docvqa_val": (ANLS_FAMILY, "anls"),
    "docvqa_test": (ANLS_FAMILY, "anls"),
    "docvqa_val_lite": (ANLS_FAMILY, "anls"),
    "infovqa_val": (ANLS_FAMILY, "anls"),
    "infovqa_test": (ANLS_FAMILY, "submission"),
    "infovqa_val_lite": (ANLS_FAMILY, "anls"),
    "mmlongbench_doc": (MMLONGBENCH_FAMILY, "mmlongbench_doc_acc"),
}
POST_PROMPTS = (
    "\nAnswer with a single word or phrase. If the answer is not in the document, answer 'Not answerable'.",
    "\nAnswer the question using a single word or phrase.",
    " Answer:",
)
META_MAX_CHARS = 2_000  # longer doc fields (InfoVQA's `ocr`) are not kept with the question


def _match(name: str) -> tuple[str, str, str] | None:
    """(kind, date id, task) of a file name lmms-eval writes, else None."""
    m = SAMPLES.match(name)
    if m:
        return "samples", m.group(1), m.group(2)
    m = SAMPLES_V023.match(name)
    if m:
        return "samples", m.group(2), m.group(1)
    m = RESULTS.match(name) or RESULTS_V023.match(name)
    if m:
        return "results", m.group(1), ""
    return None


def recognise(path: Path) -> bool:
    if path.is_file():
        return _match(path.name) is not None
    if path.is_dir():
        return any(_match(p.name) for p in walk(path, max_depth=3).files)
    return False


def _files(path: Path) -> Walk:
    if path.is_file() or path.is_symlink():
        w = single(path)
        m = _match(path.name)
        if m and m[0] == "samples":  # the results file of the same date beside it
            for name in (f"{m[1]}_results.json", f"results_{m[1]}.json"):
                other = path.parent / name
                if other.is_file():
                    w.files.update(single(other).files)
        return w
    return walk(path, max_depth=4)


def _read_results(path: Path, shown: str, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        data = json.loads(read_capped(path, RESULTS_MAX_BYTES).decode("utf-8"))
    except OSError as exc:
        problems.append(unreadable(shown, exc, "a JSON results file"))
        return None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems.append(Problem.error(shown, None, None, "a JSON results file", f"{type(exc).__name__}: {exc}"))
        return None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        problems.append(Problem.error(shown, None, "results", "an object with a `results` object", kind_of(data)))
        return None
    return data


def _model_name(results: dict[str, Any] | None, folder: Path) -> str:
    if results:
        name = results.get("model_name")
        if isinstance(name, str) and name:
            return name
        args = (results.get("config") or {}).get("model_args")
        if isinstance(args, str):
            for key in ("peft", "delta", "pretrained", "model", "model_version", "model_name", "model_id", "path", "engine"):
                m = re.search(rf"(?:^|,)\s*{key}=([^,]+)", args)
                if m:
                    return m.group(1).strip()
    return folder.name  # the model folder; files straight in --output_path: that folder's name


def _prediction(obj: dict[str, Any]) -> tuple[str, str]:
    """(the text the harness scored, the raw response when it differs)."""

    def first(value: Any) -> Any:
        while isinstance(value, list):
            value = value[0] if value else ""
        return value

    filtered = obj.get("filtered_resps")
    resps = obj.get("resps")
    value = first(filtered if "filtered_resps" in obj else resps)
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    raw = first(resps) if "resps" in obj else None
    raw_text = "" if raw is None or raw == value else raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return text.strip(), raw_text


def _prompt(obj: dict[str, Any]) -> str:
    text = obj.get("input")
    if isinstance(text, str):
        return text
    args = obj.get("arguments")
    if isinstance(args, dict):  # v0.2.3: {"gen_args_0": {"arg_0": prompt, ...}}
        inner = args.get("gen_args_0")
        if isinstance(inner, dict) and isinstance(inner.get("arg_0"), str):
            return inner["arg_0"]
    return ""


def _question(obj: dict[str, Any], doc: dict[str, Any] | None) -> str:
    if doc and isinstance(doc.get("question"), str):
        return doc["question"]
    text = _prompt(obj)
    for post in POST_PROMPTS:
        if text.endswith(post):
            return text[: -len(post)]
    return text


def _official(obj: dict[str, Any], family: str, key: str) -> tuple[float | None, Any, str]:
    """(the line's own score, its metric value as written, why a score present is not read: "" when it is)."""
    value = obj.get(key)
    if family == MMLONGBENCH_FAMILY:
        if not isinstance(value, dict):
            return None, value, "" if value is None else official_score(value)[1]
        if "score" not in value:
            return None, value, ""
        score, why = official_score(value["score"])
        return score, value, why
    if isinstance(value, dict) or value is None:
        return None, value, ""  # test splits: a dict for the submission, no score
    score, why = official_score(value)
    return score, value, why


def _read_samples(path: Path, shown: str, task: str, family: str, key: str, run: HarnessRun,
                  found: list[tuple[HarnessRow, HarnessQuestion]], problems: list[Problem]) -> None:
    """The run's rows, and beside each the gold its line states (`found`: keyed later, `_settle`)."""
    seen_lines: dict[bytes, int] = {}  # a digest of each line: a copy is named without every line held twice
    occurrences: Counter[int] = Counter()
    for number, line, last in text_lines(path, shown, problems, LMMS_MAX_LINE):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            if last:
                problems.append(Problem.error(shown, number, None, "a complete JSON line",
                                              "a line cut short (the run stopped while writing it)", kind="partial lines"))
            else:
                problems.append(Problem.error(shown, number, None, "a JSON object", f"not JSON ({getattr(exc, 'msg', type(exc).__name__)})",
                                              kind="lines that are not JSON"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem.error(shown, number, None, "a JSON object", kind_of(obj)))
            continue
        doc_id = obj.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool):
            problems.append(Problem.error(shown, number, "doc_id", "an integer", kind_of(doc_id)))
            continue
        digest = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if digest in seen_lines:
            problems.append(Problem.warning(shown, number, "doc_id", "each line once",
                                            f"a copy of line {seen_lines[digest]} (doc_id {doc_id})", skipped=True,
                                            kind="duplicate lines"))
            continue
        seen_lines[digest] = number
        k = occurrences[doc_id]
        if k >= len(run.filters):
            problems.append(Problem.error(
                shown, number, "doc_id", f"at most {len(run.filters)} line(s) per doc_id (one per filter)",
                f"doc_id {doc_id} again (two runs appended to one file?)", kind="doc_ids seen again"))
            continue
        occurrences[doc_id] += 1
        doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else None
        official, metric, why = _official(obj, family, key)
        if why:
            problems.append(Problem.warning(shown, number, key + (".score" if family == MMLONGBENCH_FAMILY else ""),
                                            "a number in 0..1", f"{why} (no official score)",
                                            kind="scores that are not numbers in 0..1"))
        qid = str(doc_id)
        given = None  # the dataset's own question id, when the line states it
        if doc and doc.get("questionId") not in (None, ""):
            qid = given = str(doc["questionId"])
        elif isinstance(metric, dict) and metric.get("questionId") not in (None, ""):
            qid = given = str(metric["questionId"])
        prediction, response = _prediction(obj)
        target = obj.get("target")
        notes: list[str] = []
        row = HarnessRow(qid=qid, prediction=prediction, official=official, file=shown, line=number,
                         response=response, raw={"doc_id": doc_id, "metric": metric, "target": target, "questionId": given},
                         notes=tuple(notes), occurrence=k)
        run.rows.append(row)
        if not k:  # another filter's line of a doc_id states the same gold
            found.append((row, _gold_question(qid, doc_id, obj, doc, target, family, shown, number, problems)))


def _gold_question(qid: str, doc_id: int, obj: dict[str, Any], doc: dict[str, Any] | None, target: Any, family: str,
                   shown: str, number: int, problems: list[Problem]) -> HarnessQuestion:
    question = _question(obj, doc).strip() if family == MMLONGBENCH_FAMILY else _question(obj, doc)
    meta: dict[str, Any] = {"doc_id": doc_id}
    if doc:
        meta.update({k: v for k, v in doc.items() if k != "question" and not (isinstance(v, str) and len(v) > META_MAX_CHARS)})
    if family == MMLONGBENCH_FAMILY:
        answer = doc.get("answer") if doc and "answer" in doc else target
        answer_text = "" if answer is None else str(answer)
        fmt_given = doc.get("answer_format") if doc else None
        fmt = str(fmt_given) if fmt_given not in (None, "") else infer_mmlongbench_format(answer_text)
        if fmt_given in (None, ""):
            meta["answer_format_inferred"] = True
        pages: tuple[int, ...] = ()
        return HarnessQuestion(qid=qid, question=question, answers=(answer_text,), answer_format=fmt,
                               answer_raw=answer_text, format_raw=fmt, document=str(doc.get("doc_id", "")) if doc else "",
                               evidence_pages=pages, metadata=meta)
    answers: list[str] = []
    if doc and isinstance(doc.get("answers"), list):
        answers = [str(a) for a in doc["answers"]]
    elif isinstance(target, str) and target.strip() not in ("", "None"):
        ok, value = read_literal(target)
        if not ok:
            value = None
            too_big = literal_refusal(target)
            problems.append(Problem.warning(shown, number, "target", "a Python literal list of answers",
                                            f"{too_big}: not parsed, kept as text (the one answer)" if too_big else
                                            f"{short_value(target)} (read as the one answer)",
                                            kind="targets too large to parse" if too_big else ""))
            answers = [target]
        if isinstance(value, (list, tuple)):
            answers = [str(a) for a in value]
        elif value is not None:
            answers = [str(value)]
    elif isinstance(target, list):
        answers = [str(a) for a in target]
    document = ""
    if doc and doc.get("ucsf_document_id") not in (None, ""):
        document = f"{doc['ucsf_document_id']}_{doc.get('ucsf_document_page_no', '')}.png"
    return HarnessQuestion(qid=qid, question=question, answers=tuple(answers), answer_raw=target, document=document,
                           metadata=meta)


def _anls_rule(run: HarnessRun, gold: dict[str, HarnessQuestion], *, v023: bool) -> str:
    """"any" for runs of lmms-eval up to v0.2.4, whose list targets took the multiple-target path
    (1.0 when any answer's ANLS is at least 0.5); "min" (the ANLS of the best answer) after. v0.2.3
    is known by its file names; v0.2.4's files look like v0.3's, so it is known by its per-line
    scores: all 0 or 1, at least one that the later rule would not give, and every one the old rule
    gives."""
    if v023:
        return "any"
    pairs = [(r, gold[r.qid]) for r in run.rows if r.official is not None and r.qid in gold and gold[r.qid].answers]
    if not pairs or any(r.official not in (0.0, 1.0) for r, _ in pairs):
        return "min"
    later = any(float(lmms_anls(q.answers, r.prediction)) != r.official for r, q in pairs)
    old = all(lmms_anls_any(q.answers, r.prediction) == r.official for r, q in pairs)
    return "any" if later and old else "min"


def _filters(results: dict[str, Any] | None, task: str, key: str) -> tuple[str, ...]:
    entry = (results or {}).get("results", {}).get(task) if results else None
    if not isinstance(entry, dict):
        return ("none",)
    found = [k.split(",", 1)[1] for k in entry if isinstance(k, str) and k.startswith(f"{key},") and "_stderr" not in k]
    return tuple(dict.fromkeys(found)) or ("none",)


def _reported(results: dict[str, Any] | None, task: str) -> dict[str, Any]:
    entry = (results or {}).get("results", {}).get(task) if results else None
    if not isinstance(entry, dict):
        return {}
    return {k: v for k, v in entry.items() if k != "alias" and "_stderr" not in k and "," in k}


def load(path: Path) -> SourceLoad:
    root = path if path.is_dir() else path.parent
    out = SourceLoad(format=NAME, root=str(path))
    w = _files(path)
    out.problems.extend(w.problems)
    groups: dict[tuple[Path, str], dict[str, Any]] = {}
    for found in sorted(w.files):
        m = _match(found.name)
        if not m:
            continue
        kind, date, task = m
        g = groups.setdefault((found.parent, date), {"results": None, "samples": []})
        if kind == "results":
            g["results"] = found
        else:
            g["samples"].append((task, found))
    runs_by_model: Counter[tuple[str, str]] = Counter()
    pending: list[HarnessRun] = []
    stated: dict[str, list[tuple[HarnessRow, HarnessQuestion]]] = {}  # task -> (row, the gold its line states)
    for (folder, date), g in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        results = None
        if g["results"] is not None:
            shown_r = display(g["results"], root)
            out.files.append(shown_r)
            results = _read_results(w.files[g["results"]], shown_r, out.problems)
            if results is not None and not g["samples"]:
                out.problems.append(Problem.warning(
                    shown_r, None, None, f"{date}_samples_<task>.jsonl beside it (run with --log_samples)",
                    "a results file without samples: its numbers are listed, nothing is scored", skipped=True,
                    kind="results without samples"))
        model = _model_name(results, folder)
        config = (results or {}).get("config") if isinstance((results or {}).get("config"), dict) else {}
        for task, sample_path in g["samples"]:
            shown = display(sample_path, root)
            out.files.append(shown)
            if task not in TASKS:
                out.problems.append(Problem.warning(shown, None, None, f"a document task ({', '.join(TASKS)})",
                                                    f"task {task!r}: not a task this reader knows (listed, not read)",
                                                    skipped=True, kind="unknown tasks"))
                continue
            if results is None:
                out.problems.append(Problem.warning(
                    shown, None, None, f"{date}_results.json beside it",
                    "samples without a results file: no reported numbers; model named by its folder",
                    kind="samples without results"))
            family, key = TASKS[task]
            run = HarnessRun(name="", harness=NAME, task=task, family=family, model=model, date=date,
                             version=str((results or {}).get("lmms_eval_version") or (results or {}).get("git_hash") or ""),
                             model_args=str((config or {}).get("model_args") or ""), config=dict(config or {}),
                             files=[shown] + ([display(g["results"], root)] if g["results"] else []),
                             reported=_reported(results, task), filters=_filters(results, task, key))
            _read_samples(w.files[sample_path], shown, task, family, key, run, stated.setdefault(task, []), out.problems)
            if family == ANLS_FAMILY:
                run.extra["v023"] = SAMPLES_V023.match(sample_path.name) is not None
            if results is not None and task not in (results.get("results") or {}):
                out.problems.append(Problem.warning(display(g["results"], root), None, "results",
                                                    f"an entry for task {task}", "none: no reported numbers"))
            runs_by_model[(model, task)] += 1
            pending.append(run)
    for task, lines in stated.items():
        _resolve_keys(lines)
        for run in pending:  # another filter's lines of a doc_id take the key of its first line
            if run.task == task and len(run.filters) > 1:
                keys = {r.raw["doc_id"]: r.qid for r in run.rows if not r.occurrence}
                for r in run.rows:
                    r.qid = keys.get(r.raw["doc_id"], r.qid)
        questions, conflicts = settle_gold(task, lines)
        out.gold[task] = questions
        out.conflicts.extend(conflicts)
        out.problems.extend(p for c in conflicts for p in conflict_problems(c))
    for run in pending:
        run.name = f"{run.model}/{run.task}" + (f"@{run.date}" if runs_by_model[(run.model, run.task)] > 1 else "")
        if run.family == ANLS_FAMILY:
            gold = {q.qid: q for q in out.gold.get(run.task, [])}
            run.extra["anls_rule"] = _anls_rule(run, gold, v023=bool(run.extra.pop("v023", False)))
            if run.extra["anls_rule"] == "any":
                out.problems.append(Problem.warning(
                    run.files[0], None, TASKS[run.task][1], "lmms-eval v0.3.0 or later (ANLS per line)",
                    "per-line scores of lmms-eval up to v0.2.4 (1 when any answer's ANLS is at least 0.5, else 0): "
                    "scored by that rule", kind="runs of old lmms-eval versions"))
        out.runs.append(run)
    return out


def _content(q: HarnessQuestion) -> tuple[str, tuple[str, ...]]:
    return q.question.strip(), tuple(q.answers)


def _resolve_keys(found: list[tuple[HarnessRow, HarnessQuestion]]) -> None:
    """One key per question across a task's files, whatever each version logged. Lines up to v0.3.5
    keep the `doc` and its `questionId`; from v0.4 a line names only its `doc_id` (the row of the
    split), `input` and `target`. When some line of the task states a questionId, every line that
    does not is keyed by it: by its (question, answers) when exactly one questionId has them, else
    by its doc_id when the lines stating a questionId give that doc_id exactly one (and its
    (question, answers) name no other). A line that neither finds keeps its doc_id. Rows and their
    stated gold are re-keyed in place (`settle_gold` then makes one gold per key)."""
    by_doc: dict[int, set[str]] = {}
    by_content: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for row, q in found:
        given = row.raw.get("questionId")
        if given is not None:
            by_doc.setdefault(row.raw["doc_id"], set()).add(given)
            by_content.setdefault(_content(q), set()).add(given)
    if not by_doc:
        return  # no line states a questionId: doc_id is the key throughout (every version logs it)
    for row, q in found:
        if row.raw.get("questionId") is not None:
            continue
        same = by_content.get(_content(q), set())
        at = by_doc.get(row.raw["doc_id"], set())
        if len(same) == 1:
            key = next(iter(same))
        elif len(at) == 1 and (not same or at <= same):
            key = next(iter(at))
        else:
            continue
        q.qid = row.qid = key
        row.raw["key_from"] = "question and answers" if len(same) == 1 else "doc_id"


def _each_file_guarded(read: Any, bounded: bool) -> Any:
    """`read(path, shown, ..., problems)` inside a bracket of its own (scoring/guard.py): a file over the
    read limits is named in `problems` (its reader's last argument) and not read; the rest of the folder
    loads."""

    def reader(path: Path, shown: str, *rest: Any) -> Any:
        with guard.reading(path, shown, bounded=bounded) as refused:
            if refused is not None:
                rest[-1].append(refused)
                return None
            return read(path, shown, *rest)

    reader.__doc__ = read.__doc__
    return reader


# every results and samples file is read where it can be killed; samples hold Python literals, whose
# parsing their size does not bound (`bounded=False`)
_read_results = _each_file_guarded(_read_results, bounded=True)
_read_samples = _each_file_guarded(_read_samples, bounded=False)

"""LongDocURL's own results: `results_<model>.jsonl` (dengc2023/LongDocURL, `eval/*`): one sample
per line (the release's fields plus `detailed_response`, the extracted `pred` and `score_v3`),
appended in completion order, joined to the questions on `question_id`. Accepted: the file, or
a folder holding such files (`evaluation_results/<kind>/`). The official per-question score is
`score_v3` (a number in 0..1; anything else is named and read as no score); LongDocURL writes no
aggregate file ("Avg. acc" is printed), so nothing is reported. The file is read a line at a time
with LONGDOCURL_MAX_LINE bytes a line and HARNESS_MAX_LINES lines (scoring/limits.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .. import guard
from ..limits import LONGDOCURL_MAX_LINE
from ..model import to_str
from ..problems import Problem, kind_of
from ..reading import open_regular
from .base import (
    LONGDOCURL_FAMILY,
    HarnessQuestion,
    HarnessRow,
    HarnessRun,
    SourceLoad,
    display,
    official_score,
    single,
    text_lines,
    walk,
)

__all__ = ["NAME", "recognise", "load"]

NAME = "longdocurl"
RESULTS = re.compile(r"^results_(.+)\.jsonl$")
TASK = "LongDocURL"
_JUDGE_KEYS = ("pred", "extraction_response", "extraction_log")  # what the extractor left (the last two: VLMEvalKit's)


def _looks_like(path: Path) -> bool:
    if not RESULTS.match(path.name):
        return False
    try:
        with open_regular(path) as fh:
            for _ in range(5):
                line = fh.readline(1_000_000).decode("utf-8", errors="replace")
                if not line:
                    return True  # an empty results file (the release ships one)
                if line.strip():
                    obj = json.loads(line)
                    return isinstance(obj, dict) and "question_id" in obj and ("score_v3" in obj or "detailed_response" in obj)
    except (OSError, ValueError):
        return False
    return False


def recognise(path: Path) -> bool:
    if path.is_file():
        return _looks_like(path)
    if path.is_dir():
        return any(_looks_like(r) for r in walk(path, max_depth=3).files.values())
    return False


def load(path: Path) -> SourceLoad:
    root = path if path.is_dir() else path.parent
    out = SourceLoad(format=NAME, root=str(path))
    w = single(path) if not path.is_dir() else walk(path, max_depth=3)
    out.problems.extend(w.problems)
    questions: dict[str, HarnessQuestion] = {}
    for found, real in sorted(w.files.items()):
        m = RESULTS.match(found.name)
        if not m or not _looks_like(real):
            continue
        shown = display(found, root)
        out.files.append(shown)
        run = HarnessRun(name=m.group(1), harness=NAME, task=TASK, family=LONGDOCURL_FAMILY, model=m.group(1), files=[shown])
        seen: dict[str, int] = {}
        for number, line, last in text_lines(real, shown, out.problems, LONGDOCURL_MAX_LINE):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError) as exc:
                out.problems.append(Problem.error(shown, number, None, "a JSON object",
                                                  "a line cut short" if last else f"not JSON ({getattr(exc, 'msg', type(exc).__name__)})"))
                continue
            if not isinstance(obj, dict):
                out.problems.append(Problem.error(shown, number, None, "a JSON object", kind_of(obj)))
                continue
            qid = obj.get("question_id")
            if not isinstance(qid, str) or not qid:
                out.problems.append(Problem.error(shown, number, "question_id", "a non-empty string", kind_of(qid)))
                continue
            if qid in seen:
                out.problems.append(Problem.warning(shown, number, "question_id", "each question once",
                                                    f"{qid} again (first at line {seen[qid]})", skipped=True,
                                                    kind="duplicate lines"))
                continue
            seen[qid] = number
            if qid not in questions:
                pdf = to_str(obj.get("pdf_path"))
                pages = tuple(p for p in obj.get("evidence_pages") or [] if isinstance(p, int) and not isinstance(p, bool)) \
                    if isinstance(obj.get("evidence_pages"), list) else ()
                questions[qid] = HarnessQuestion(
                    qid=qid, question=to_str(obj.get("question")), answers=(to_str(obj.get("answer")),),
                    answer_format=to_str(obj.get("answer_format")), answer_raw=obj.get("answer"),
                    format_raw=obj.get("answer_format"), document=pdf.rsplit("/", 1)[-1] if pdf else to_str(obj.get("doc_no")),
                    evidence_pages=pages,
                    metadata={k: obj.get(k) for k in ("doc_no", "task_tag", "question_type", "evidence_sources", "subTask")
                              if k in obj})
            score, why = official_score(obj.get("score_v3"))
            if score is None and "score_v3" in obj:
                out.problems.append(Problem.warning(shown, number, "score_v3", "a number in 0..1", f"{why} (no official score)",
                                                    kind="scores that are not numbers in 0..1"))
            run.rows.append(HarnessRow(qid=qid, prediction=to_str(obj.get("pred")), official=score, file=shown, line=number,
                                       response=to_str(obj.get("detailed_response")),
                                       raw={k: obj[k] for k in _JUDGE_KEYS if k in obj}))  # the judge's output (scoring/judge)
        out.runs.append(run)
    out.gold[TASK] = list(questions.values())
    return out


def _guarded(read: Any) -> Any:
    """`load` inside one bracket for the source (scoring/guard.py): a folder of results files over the
    read limits is named and not read."""

    def load(path: Path) -> SourceLoad:
        with guard.reading(path, bounded=True) as refused:
            if refused is not None:
                return SourceLoad(format=NAME, root=str(path), problems=[refused])
            return read(path)

    load.__doc__ = read.__doc__
    return load


load = _guarded(load)  # read where it can be killed, one bracket per source (results files are one per model)

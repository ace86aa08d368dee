"""The judge in the command line's outputs: the report's `judge` object, the per-question columns and
the lines printed.

    judge_object(answers, run=None, stored_model=None)

    {"model", "prompt_sha256", "parameters",
     "verdicts": {"correct", "incorrect", "unparsable", "judge_error", "invalid"},
     "requests", "cached",
     "agreement": {"with_rules": {"agree", "kappa"}, "with_stored": {"changed", "kappa"}}}

With a re-judge (`run`): its identity, its verdicts' counts, how many answers were asked of the server
(`requests`) and read from the cache (`cached`); `with_rules`: over the answers the judge answered
(correct, incorrect, invalid), how many it and our rules on the raw response (scoring.judge.answers.
rules_right) call the same -- right or not -- and Cohen's kappa; `with_stored`: over the answers both
it and the files' judge answered, how many extracted answers differ (`changed`, compared as text,
stripped) and kappa of the two verdicts. Without one: the files' judge (`model` its name where the
files give it, else null; `prompt_sha256` and `parameters` null: the files do not say), its verdicts,
`requests` and `cached` 0, `with_rules` as above, `with_stored` null. A kappa that is undefined is null.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .agreement import cohen_kappa
from .answers import JudgedAnswer, rules_right
from .rejudge import JudgeRun
from .verdicts import ANSWERED, CORRECT, Verdict, count_states, without_failures

__all__ = ["JUDGE_CSV_COLUMNS", "judge_object", "question_columns", "with_rules", "with_stored", "summary_lines",
           "stored_verdicts"]

JUDGE_CSV_COLUMNS = ("judge_verdict", "judge_answer", "judge_model")


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)


def stored_verdicts(answers: Sequence[JudgedAnswer]) -> dict[str, Verdict]:
    return {a.qid: a.stored for a in answers if a.stored is not None}


def with_rules(answers: Sequence[JudgedAnswer], verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    """{"agree", "kappa", "n"} of the judge's right/not right against our rules on the raw response,
    over the answers the judge answered."""
    judge, rules = [], []
    for a in answers:
        v = verdicts.get(a.qid)
        if v is None or v.state not in ANSWERED:
            continue
        judge.append(v.state == CORRECT)
        rules.append(rules_right(a))
    return {"agree": sum(1 for x, y in zip(judge, rules) if x == y), "kappa": _num(cohen_kappa(judge, rules)), "n": len(judge)}


def with_stored(answers: Sequence[JudgedAnswer], verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    """{"changed", "kappa", "n"} of the judge against the files' judge, over the answers both answered."""
    mine, theirs, changed = [], [], 0
    for a in answers:
        v, s = verdicts.get(a.qid), a.stored
        if v is None or s is None or v.state not in ANSWERED or s.state not in ANSWERED:
            continue
        mine.append(v.state)
        theirs.append(s.state)
        changed += (v.answer or "").strip() != (s.answer or "").strip()
    return {"changed": changed, "kappa": _num(cohen_kappa(mine, theirs)), "n": len(mine)}


def judge_object(answers: Sequence[JudgedAnswer], run: JudgeRun | None = None, stored_model: str | None = None) -> dict[str, Any]:
    """The report's `judge` object (module text)."""
    if run is not None:
        verdicts = run.verdicts
        stored = with_stored(answers, verdicts)
        return {**run.identity.as_dict(), "verdicts": count_states(verdicts.values()), "requests": run.requests,
                "cached": run.cached, "agreement": {"with_rules": _pair(with_rules(answers, verdicts), "agree"),
                                                   "with_stored": _pair(stored, "changed")}}
    verdicts = stored_verdicts(answers)
    return {"model": stored_model, "prompt_sha256": None, "parameters": None, "verdicts": count_states(verdicts.values()),
            "requests": 0, "cached": 0,
            "agreement": {"with_rules": _pair(with_rules(answers, verdicts), "agree"), "with_stored": None}}


def _pair(d: dict[str, Any], count: str) -> dict[str, Any]:
    return {count: d[count], "kappa": d["kappa"]}


def question_columns(run: JudgeRun, qid: str) -> dict[str, str]:
    """The per-question CSV's judge columns of one question ("" where it was not judged)."""
    v = run.verdicts.get(qid)
    return {"judge_verdict": v.state if v else "", "judge_answer": (v.answer or "") if v else "",
            "judge_model": run.identity.model}


def summary_lines(answers: Sequence[JudgedAnswer], run: JudgeRun | None, shown_url: str = "") -> list[str]:
    """What the command line prints of the judge: its identity, the verdicts, the score with and
    without the answers that got no answer, and each judge_error named (20 at most, the rest counted)."""
    lines = []
    if run is not None:
        i = run.identity
        lines.append(f"Judge: {i.model}{' at ' + shown_url if shown_url else ''}, prompt sha256 {i.prompt_sha256[:16]}, "
                     f"{run.requests} asked, {run.cached} from the cache")
        verdicts: Mapping[str, Verdict] = run.verdicts
    else:
        verdicts = stored_verdicts(answers)
        if not verdicts:
            return []
        lines.append("Judge (the files' own):")
    counts = count_states(verdicts.values())
    lines.append("Judge verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    with_fail = [v.score if v.score is not None else 0.0 for v in verdicts.values()]
    clean, n = without_failures(verdicts.values())
    if with_fail:
        lines.append(f"Judge score: {100 * sum(with_fail) / len(with_fail):.2f}% of {len(with_fail)} "
                     f"(unparsable and judge_error counted wrong); without them: "
                     + (f"{100 * clean:.2f}% of {n}" if clean is not None else "none left"))
    if run is not None:
        for qid, why in run.errors[:20]:
            lines.append(f"judge_error: {qid}: {why}")
        if len(run.errors) > 20:
            lines.append(f"judge_error: ... and {len(run.errors) - 20} more (the per-question CSV names them all)")
        if run.unasked:
            lines.append(f"Judge stopped: {len(run.unasked)} answers not asked")
    return lines

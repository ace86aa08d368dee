"""The answers a judge reads: for each question of a run, the question, the model's raw response, the
gold as the benchmark's rules and ours read it, the document, and the verdict the run's own judge left
(None where its files hold none).

    answers_of_results(res, gold)            a MMLongBench-Doc result file (scoring.mmlongbench.load_results)
    answers_of_run(run, questions, qids)     a harness run: VLMEvalKit's MMLongBench_DOC, lmms-eval's
                                             mmlongbench_doc (no judge of its own), LongDocURL
    rules_right(answer, profile)             whether our rules (a profile's Accuracy) take the raw response as right

Nothing here reads a file or asks a server.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..formats.base import LONGDOCURL_FAMILY, MMLONGBENCH_FAMILY, HarnessQuestion, HarnessRun
from ..model import GoldQuestion, to_str
from ..profiles import DEFAULT_PROFILE, get_profile
from .verdicts import (
    LONGDOCURL_FORMATS,
    LONGDOCURL_RULES,
    MMLONGBENCH_RULES,
    VLMEVALKIT_RULES,
    Verdict,
    from_longdocurl,
    from_mmlongbench,
    from_vlmevalkit,
)

__all__ = ["JudgedAnswer", "answers_of_results", "answers_of_run", "judged_family", "rules_right", "RULES_PROFILE"]

RULES_PROFILE = DEFAULT_PROFILE  # the rules the raw response is scored by, against the judge: our Accuracy


@dataclass(slots=True)
class JudgedAnswer:
    """One answer a judge reads. `gold` and `answer_format` are as the benchmark's rules (`rules`,
    scoring.judge.verdicts.RULES) read them; `rule_answers` and `rule_format` as our Accuracy reads them."""

    qid: str
    question: str
    response: str  # the model's raw answer: what the judge extracts from ("" when the file has none)
    gold: Any
    answer_format: Any
    rules: str
    document: str = ""
    stored: Verdict | None = None  # what the run's own judge left (None: its files hold no judge output)
    official: float | None = None  # the harness's own per-question score
    rule_answers: tuple[str, ...] = ()
    rule_format: str = "Str"
    rule_rule: str = ""
    where: str = ""  # file:line or sheet row

    @property
    def readable(self) -> bool:
        """Whether there is a response to judge."""
        return bool(self.response.strip())


def judged_family(run: HarnessRun) -> bool:
    """Whether a harness run's answers are the kind a judge extracts from (MMLongBench-Doc, LongDocURL)."""
    return run.family in (MMLONGBENCH_FAMILY, LONGDOCURL_FAMILY)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value if isinstance(value, str) else to_str(value)


def answers_of_results(res: Any, gold: Sequence[GoldQuestion]) -> list[JudgedAnswer]:
    """The answers of a MMLongBench-Doc result file (`scoring.mmlongbench.ResultsLoad`), gold order: the
    stored verdict from `extracted_res` scored by the benchmark's evaluator (the row's `score` when it has one)."""
    official = {s.qid: s.accuracy for s in getattr(res, "official", ())}
    out = []
    for q in gold:
        extras = res.extras.get(q.qid)
        if extras is None:
            continue
        value = q.metadata.get("answer", q.gold_answer)
        fmt = q.raw_format if q.format_given else "Str"
        stored = from_mmlongbench(extras.extracted_res, gold=value, answer_format=fmt, score=official.get(q.qid))
        out.append(JudgedAnswer(
            qid=q.qid, question=q.question, response=_text(extras.response), gold=value, answer_format=fmt,
            rules=MMLONGBENCH_RULES, document=to_str(q.metadata.get("doc_id")), stored=stored, official=official.get(q.qid),
            rule_answers=tuple(q.answers), rule_format=q.answer_format, rule_rule=q.verification_rule,
            where=f"{res.files[0] if res.files else ''}[{extras.index}]"))
    return out


def answers_of_run(run: HarnessRun, questions: Mapping[str, HarnessQuestion], qids: Mapping[str, str] | None = None
                   ) -> list[JudgedAnswer]:
    """The answers of a harness run (its first line per question), named by the workspace's question ids
    (`qids`: the harness's id -> the workspace's; None: the harness's own). Empty for a run of another kind."""
    if not judged_family(run):
        return []
    out = []
    seen: set[str] = set()
    for row in run.rows:
        q = questions.get(row.qid)
        if q is None or row.qid in seen:
            continue
        seen.add(row.qid)
        qid = qids.get(row.qid, "") if qids is not None else row.qid
        if not qid:
            continue
        where = f"{row.file}:{row.line}" if row.line is not None else row.file
        gold_value = q.answer_raw if q.answer_raw is not None else (q.answers[0] if q.answers else "")
        common: dict[str, Any] = dict(qid=qid, question=q.question, document=q.document, official=row.official,
                                      rule_answers=(q.answers[0] if q.answers else "",), where=where)
        if run.family == LONGDOCURL_FAMILY:
            fmt = _text(q.format_raw if q.format_raw is not None else q.answer_format)
            out.append(JudgedAnswer(
                response=row.response, gold=gold_value, answer_format=fmt, rules=LONGDOCURL_RULES,
                stored=from_longdocurl(row.raw, gold=gold_value, answer_format=fmt, score=row.official),
                rule_format=LONGDOCURL_FORMATS.get(fmt, "Str"), **common))
        elif run.harness == "vlmevalkit":
            judged = any(k in row.raw for k in ("res", "log"))
            out.append(JudgedAnswer(
                response=row.response if judged else row.prediction, gold=row.raw.get("answer"),
                answer_format=row.raw.get("answer_format"), rules=VLMEVALKIT_RULES,
                stored=from_vlmevalkit(row.raw, score=row.official) if judged else None,
                rule_format=q.answer_format or "Str", **common))
        else:  # lmms-eval's mmlongbench_doc scores the raw response: no judge of its own
            out.append(JudgedAnswer(
                response=row.prediction, gold=gold_value, answer_format=q.answer_format or "Str", rules=MMLONGBENCH_RULES,
                rule_format=q.answer_format or "Str", **common))
    return out


def rules_right(answer: JudgedAnswer, profile: str = RULES_PROFILE) -> bool:
    """Whether our rules take the raw response as right: the profile's Accuracy of the whole response
    against the gold (`Profile.is_right`)."""
    from ..metrics import judge

    p = get_profile(profile)
    j = judge(answer.response, list(answer.rule_answers) or [""], answer.rule_format or "Str", answer.rule_rule, profile=p)
    return p.is_right(j.accuracy)

"""The state of one judged answer, and the stored judge's verdicts read from what the harnesses left.

Every judged answer gets exactly one of STATES:

- `correct` / `incorrect`: the judge's reply yields an answer, and the benchmark's rules score it
  right or not (right: `scoring.profiles.is_right` under MMLongBench-Doc's evaluator, a score of at
  least 0.5 -- its scores are 0 or above 0.5);
- `unparsable`: a reply came back, but it yields no answer (no `Extracted answer:` before the first
  `Answer format:`; LongDocURL: no `<concise_answer>...</concise_answer>`);
- `judge_error`: no reply -- MMLongBench-Doc's `Failed` (its call raised), VLMEvalKit's "All 5 retries
  failed" with an empty `res`, LongDocURL's "judge API failure", an HTTP error, retries exhausted;
- `invalid`: the judge answers with the outcome its prompt keeps for an answer that is no answer --
  `Fail to answer` ("the analysis only tells you that it can not read/understand the images or
  documents", in MMLongBench-Doc's and LongDocURL's prompts).

The harness's own number counts `unparsable`, `judge_error` and `invalid` as wrong (it scores the
empty or failed extraction); `without_failures` is the score over the other answers, the number that
sits beside it.

Reading the files (what each writes: MMLongBench-Doc's `run_api.py` + `eval/extract_answer.py`,
VLMEvalKit's `MMLongBench_auxeval`, LongDocURL's `eval_api_models.py` and VLMEvalKit's `LongDocURL_auxeval`):

- MMLongBench-Doc `extracted_res`: `Failed` -> judge_error; no `Extracted answer:` -> unparsable;
  else the answer `run_api.py` cuts from it (scoring.mmlongbench.extract_pred).
- VLMEvalKit `res`, `log`, `pred`: `log` without `Succeed`, or an empty `res` -> judge_error; `res`
  holding VLMEvalKit's failure message -> judge_error; `res` without `Extracted answer:` ->
  unparsable; else `pred`. A `log` with `Try k` lines before `Succeed` was answered at a higher
  temperature (VLMEvalKit retries at 0, 0.5, 1.0, ...): the verdict's note says which try.
- LongDocURL `pred` (`Fail to extract` when no answer came out), with VLMEvalKit's `extraction_log`
  and `extraction_response` where the file has them: "judge API failure" or no reply -> judge_error;
  `Fail to extract` -> unparsable (its own files keep no reply: a reply without the tags and no reply
  at all both read `Fail to extract`, and the note says so).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import quick_state
from ..profiles import MMLONGBENCH_PROFILE, is_right

__all__ = ["STATES", "CORRECT", "INCORRECT", "UNPARSABLE", "JUDGE_ERROR", "INVALID", "ANSWERED", "FAILED",
           "Verdict", "count_states", "read_mmlongbench_reply", "read_longdocurl_reply", "from_mmlongbench",
           "from_vlmevalkit", "from_longdocurl", "scored_verdict", "score_extracted", "without_failures",
           "MMLONGBENCH_RULES", "VLMEVALKIT_RULES", "LONGDOCURL_RULES", "RULES", "LONGDOCURL_FORMATS", "FAIL_TO_ANSWER", "FAIL_TO_EXTRACT"]

STATES = ("correct", "incorrect", "unparsable", "judge_error", "invalid")
CORRECT, INCORRECT, UNPARSABLE, JUDGE_ERROR, INVALID = STATES
ANSWERED = frozenset({CORRECT, INCORRECT, INVALID})  # the judge gave an answer (invalid: "Fail to answer")
FAILED = frozenset({UNPARSABLE, JUDGE_ERROR})  # no answer came out of the judge

FAIL_TO_ANSWER = "Fail to answer"  # the prompts' outcome for an analysis that says it cannot read the document
FAIL_TO_EXTRACT = "Fail to extract"  # LongDocURL's pred when no answer came out of the reply
MMLONGBENCH_FAILED = "Failed"  # MMLongBench-Doc's extract_answer: the reply when the call raised
VLMEVALKIT_FAIL = "Failed to obtain answer"  # VLMEvalKit's FAIL_MSG (a prefix of every variant it writes)

# which rules score an extracted answer
MMLONGBENCH_RULES = "mmlongbench-doc"  # MMLongBench-Doc's own evaluator (scoring.mmlongbench_rule.eval_score)
VLMEVALKIT_RULES = "vlmevalkit"  # VLMEvalKit's eval_score on its sheet's cells (scoring.harness_rules)
LONGDOCURL_RULES = "longdocurl"  # LongDocURL's score_v3: not reproduced here; MMLongBench-Doc's evaluator stands in
RULES = {
    MMLONGBENCH_RULES: "MMLongBench-Doc's own evaluator",
    VLMEVALKIT_RULES: "VLMEvalKit's eval_score (the harness's own rule)",
    LONGDOCURL_RULES: "MMLongBench-Doc's evaluator with LongDocURL's formats (LongDocURL's score_v3 is not reproduced; "
                      "a stored answer keeps its stored score)",
}
LONGDOCURL_FORMATS = {"Integer": "Int", "Float": "Float", "String": "Str", "List": "List", "None": "None"}
MAX_TEXT = 100_000  # a reply or log longer than this is kept cut (a judge's reply is a few lines)


@quick_state
@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's verdict on one answer: its state, the answer it extracted (None: none), its reply
    and log as plain text, the rules' score of the answer (None unless correct or incorrect), and a
    sentence saying why when it is not plainly read."""

    state: str
    answer: str | None = None
    reply: str = ""
    log: str = ""
    score: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"not a judge state: {self.state!r}")

    @property
    def answered(self) -> bool:
        return self.state in ANSWERED

    @property
    def right(self) -> bool:
        return self.state == CORRECT


def count_states(verdicts: Iterable[Verdict | None]) -> dict[str, int]:
    """{state: how many} over every state (zeros kept), the verdicts that are None left out."""
    out = dict.fromkeys(STATES, 0)
    for v in verdicts:
        if v is not None:
            out[v.state] += 1
    return out


def without_failures(verdicts: Iterable[Verdict | None]) -> tuple[float | None, int]:
    """(the mean score over the answers the judge answered -- unparsable and judge_error left out --,
    how many that is); (None, 0) when none. The harness's own number is the mean over all of them,
    the failures counted 0."""
    scores = [v.score if v.score is not None else 0.0 for v in verdicts if v is not None and v.state in ANSWERED]
    return (sum(scores) / len(scores), len(scores)) if scores else (None, 0)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


# ----------------------------------------------------------------------------- reading one reply


def read_mmlongbench_reply(reply: str) -> str | None:
    """The answer MMLongBench-Doc's run_api.py (and VLMEvalKit) cut from an extraction reply: what follows
    the first `Extracted answer:` up to the first `Answer format:`, stripped; None when there is none
    (scoring.mmlongbench.extract_pred, the one reading)."""
    from ..mmlongbench import extract_pred

    return extract_pred(reply)


def _between(text: str, start: str, end: str) -> str | None:
    """The text between the first `start` and the first `end` after it (linear: two finds), else None."""
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    return None if j < 0 else text[i + len(start):j]


def read_longdocurl_reply(reply: str) -> str | None:
    """The answer LongDocURL's code takes from a reply: the text inside the first
    `<concise_answer>...</concise_answer>` (with an `<answer_format>...</answer_format>` after it, as its
    code requires both); None when either is missing."""
    answer = _between(reply, "<concise_answer>", "</concise_answer>")
    if answer is None or _between(reply, "<answer_format>", "</answer_format>") is None:
        return None
    return answer


# ----------------------------------------------------------------------------- scoring an extracted answer


def _literal(text: str) -> Any:
    """LongDocURL evaluates its extracted answer as Python; here only as a literal (never eval)."""
    if len(text) > 10_000:
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return list(value) if isinstance(value, set) else value


def score_extracted(rules: str, answer: str, gold: Any, answer_format: Any) -> float:
    """The rules' score (0-1) of an extracted answer against the gold, as the benchmark scores it."""
    if rules == VLMEVALKIT_RULES:
        from ..harness_rules import vlm_mmlongbench_score

        return float(vlm_mmlongbench_score(gold, answer, answer_format)[0])
    from ..mmlongbench_rule import eval_score

    if rules == LONGDOCURL_RULES:
        fmt = LONGDOCURL_FORMATS.get(str(answer_format), "Str")
        value = _literal(answer)
        return float(eval_score(gold, value if fmt == "List" else answer, fmt))
    return float(eval_score(gold, answer, answer_format))


def scored_verdict(answer: str, *, rules: str, gold: Any, answer_format: Any, reply: str = "", log: str = "",
                   score: float | None = None, note: str = "") -> Verdict:
    """The verdict on an extracted answer: `invalid` for the prompts' `Fail to answer`, else correct or
    incorrect by the rules' score (`score` when the file holds the harness's own, else computed)."""
    if answer.strip() == FAIL_TO_ANSWER:
        return Verdict(INVALID, answer, reply, log, 0.0 if score is None else score,
                       note or "the judge says the response cannot read the document (its prompt's `Fail to answer`)")
    if score is None:
        score = score_extracted(rules, answer, gold, answer_format)
    state = CORRECT if is_right(score, MMLONGBENCH_PROFILE) else INCORRECT
    return Verdict(state, answer, reply, log, score, note)


# ----------------------------------------------------------------------------- what the files hold


def from_mmlongbench(extracted_res: Any, *, gold: Any, answer_format: Any, score: float | None = None) -> Verdict | None:
    """The verdict MMLongBench-Doc's extractor left in a result row (`extracted_res`), scored by its own
    evaluator (`score`: the row's own, when it has one); None when the row holds no extraction."""
    if not isinstance(extracted_res, str):
        return None
    reply = _text(extracted_res)
    if extracted_res.strip() == MMLONGBENCH_FAILED:
        return Verdict(JUDGE_ERROR, None, reply, "", None, "the extractor's call failed: the file holds `Failed`")
    answer = read_mmlongbench_reply(extracted_res)
    if answer is None:
        return Verdict(UNPARSABLE, None, reply, "", None, "the reply has no `Extracted answer:` before `Answer format:`")
    return scored_verdict(answer, rules=MMLONGBENCH_RULES, gold=gold, answer_format=answer_format, reply=reply, score=score)


def _vlm_try(log: str) -> str:
    """VLMEvalKit's log of the tries: which try succeeded, when not the first (a higher temperature)."""
    tries = log.count("Try ")
    if not tries or "Succeed" not in log:
        return ""
    return (f"answered at try {tries + 1}, temperature {tries * 0.5:g}: VLMEvalKit retries a reply it cannot parse at a "
            "higher temperature")


def from_vlmevalkit(raw: Mapping[str, Any], *, score: float | None = None) -> Verdict | None:
    """The verdict VLMEvalKit's judge left in a row of `<model>_MMLongBench_DOC_<judge>.xlsx` (`res`,
    `log`, `pred` and the harness's `score`); None when the row has no judge columns."""
    if not any(k in raw for k in ("res", "log")):
        return None
    res, log = raw.get("res"), _text(raw.get("log"))
    reply = _text(res)
    if _missing(res) or (log and "Succeed" not in log):
        why = "all 5 tries failed" if "retries failed" in log else "no reply (an empty `res`)"
        return Verdict(JUDGE_ERROR, None, reply, log, None, f"the judge gave no reply: {why}")
    if VLMEVALKIT_FAIL in reply:
        return Verdict(JUDGE_ERROR, None, reply, log, None, "the judge's call failed: the reply is VLMEvalKit's failure message")
    if read_mmlongbench_reply(reply) is None:
        return Verdict(UNPARSABLE, None, reply, log, None, "the reply has no `Extracted answer:` (VLMEvalKit scored an empty pred)")
    pred = raw.get("pred")
    answer = "" if _missing(pred) else (pred if isinstance(pred, str) else _text(pred))
    return scored_verdict(answer, rules=VLMEVALKIT_RULES, gold=raw.get("answer"), answer_format=raw.get("answer_format"),
                          reply=reply, log=log, score=score, note=_vlm_try(log))


def from_longdocurl(raw: Mapping[str, Any], *, gold: Any, answer_format: Any, score: float | None = None) -> Verdict | None:
    """The verdict LongDocURL's extractor left in a result line (`pred`, and VLMEvalKit's `extraction_response`
    and `extraction_log` where present; `score`: the line's `score_v3`); None without a `pred`."""
    if "pred" not in raw:
        return None
    log = _text(raw.get("extraction_log"))
    kept = "extraction_response" in raw
    reply = _text(raw.get("extraction_response"))
    if "API failure" in log or (kept and (_missing(raw.get("extraction_response")) or VLMEVALKIT_FAIL in reply)):
        return Verdict(JUDGE_ERROR, None, reply, log, None, "the judge gave no reply (judge API failure)")
    pred = raw.get("pred")
    if isinstance(pred, str) and pred.strip() == FAIL_TO_EXTRACT:
        note = ("the reply has no <concise_answer> and <answer_format> tags" if kept else
                "no answer came out of the judge (`Fail to extract`): the file keeps no reply, so a reply without the tags "
                "and no reply at all read the same")
        return Verdict(UNPARSABLE, None, reply, log, None, note)
    answer = pred if isinstance(pred, str) else _text(repr(pred) if isinstance(pred, (list, tuple)) else pred)
    return scored_verdict(answer, rules=LONGDOCURL_RULES, gold=gold, answer_format=answer_format, reply=reply, log=log,
                          score=score)

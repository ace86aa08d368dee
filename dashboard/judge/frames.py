"""The Judge page's and the report's tables (no streamlit): which runs a judge read, each judge's
verdicts, a judge against our rules (confusion, kappa with its interval by document, per slice, per
response-length decile), against another judge, against people (the triage notes), and the leaderboard's
judge columns.

A *source* is one judge's verdicts on one run's answers: the run's own (what its files hold) or a
re-judge (scoring.judge.rejudge, read back from the reply cache). Verdicts are compared as "right or
not" against rules and people (the rules and people say nothing of `invalid`: it counts as not right;
unparsable and judge_error are left out and counted apart), and by state between two judges.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from dashboard.core import settings
from dashboard.data.workspace import Workspace
from scoring.judge.agreement import Agreement, agreement, by_decile
from scoring.judge.answers import JudgedAnswer, answers_of_results, answers_of_run, judged_family, rules_right
from scoring.judge.cache import ReplyCache
from scoring.judge.prompts import JudgePrompt
from scoring.judge.rejudge import JudgeIdentity, read_back
from scoring.judge.verdicts import ANSWERED, CORRECT, FAILED, JUDGE_ERROR, STATES, UNPARSABLE, Verdict, without_failures

__all__ = ["FILES", "Source", "judged_runs", "run_answers", "run_model", "verdict_table", "answer_frame", "agreement_row",
           "confusion_frame", "slice_table", "length_table", "disagreements", "changed", "human_verdicts", "people_frame",
           "family_of", "family_warning", "judge_board", "COUNT_COLUMN", "SCORE_COLUMN", "identity_label", "reply_cache",
           "cached_sources", "report_table", "kappa_cell"]

FILES = "the run's own judge (its files)"
COUNT_COLUMN = "Judge: no answer"
SCORE_COLUMN = "Acc without the judge's no-answers %"
# the people's verdict a triage tag on an answer carries (dashboard/annotations/records.py DEFAULT_TAGS): the scorer
# was wrong on a right answer, or the model was wrong
RIGHT_TAGS = frozenset({"format_only", "extraction_error"})
WRONG_TAGS = frozenset({"hallucination", "reasoning_error", "wrong_page_retrieved", "reading_or_ocr_error",
                        "refused_wrongly"})
FAMILIES = ("gpt", "chatgpt", "claude", "gemini", "gemma", "llama", "llava", "qwen", "qwq", "internvl", "internlm",
            "minicpm", "mistral", "mixtral", "pixtral", "ministral", "phi", "deepseek", "glm", "cogvlm", "yi", "idefics",
            "smolvlm", "molmo", "granite", "command", "aya", "olmo", "falcon", "docowl", "mplug", "nemotron", "kimi")
_WORD = re.compile(r"[a-z]+")


@dataclass
class Source:
    """One judge's verdicts on one run's answers."""

    name: str
    verdicts: dict[str, Verdict]
    identity: JudgeIdentity | None = None  # None: the run's own judge (its files)
    unasked: int = 0  # answers it has no verdict for (a re-judge not finished)
    extra: dict = field(default_factory=dict)


def identity_label(identity: JudgeIdentity) -> str:
    return f"{identity.model} · prompt {identity.prompt_sha256[:8]}"


def reply_cache() -> ReplyCache:
    """The app's reply cache: judge/ in its cache folder (LENS_CACHE_DIR)."""
    return ReplyCache(settings.cache_root() / "judge")


def cached_sources(answers: Sequence[JudgedAnswer], cache: ReplyCache) -> list[Source]:
    """Every judge with replies in the cache for some of these answers (read back, no server asked), newest first."""
    out = []
    for ident, style in cache.judges():
        identity = JudgeIdentity(ident["model"], ident["prompt_sha256"], ident["parameters"])
        got = read_back(answers, cache, identity, JudgePrompt("", identity.prompt_sha256, style))
        if got.verdicts:
            out.append(Source(identity_label(identity), got.verdicts, identity, len(got.unasked)))
    return out


# ----------------------------------------------------------------------------- the runs and their answers


def run_answers(ws: Workspace, run: str) -> list[JudgedAnswer]:
    """The answers of a run a judge reads ([] for a run of another kind): a MMLongBench-Doc result file
    (its extraction), or a harness run of MMLongBench-Doc or LongDocURL (scoring.judge.answers)."""
    h = next((e for e in ws.harness if e.name == run), None)
    if h is not None:
        return answers_of_run(h.run, h.questions, h.qids)
    pf = next((p for p in ws.predictions if p.run == run), None)
    if pf is None or getattr(pf.loaded, "extras", None) is None:
        return []
    return answers_of_results(pf.loaded, ws.gold.items)


def judged_runs(ws: Workspace) -> list[str]:
    """The runs whose answers a judge reads, in the workspace's order."""
    out = []
    for pf in ws.predictions:
        h = next((e for e in ws.harness if e.name == pf.run), None)
        if (judged_family(h.run) if h is not None else getattr(pf.loaded, "extras", None) is not None):
            out.append(pf.run)
    return out


def run_model(ws: Workspace, run: str) -> str:
    """The model that wrote a run's answers (a harness's model, else the run's name)."""
    h = next((e for e in ws.harness if e.name == run), None)
    return h.run.model if h is not None and h.run.model else run


# ----------------------------------------------------------------------------- verdicts


def _pct(x: float | None) -> float:
    return math.nan if x is None else 100 * x


def verdict_table(sources: Sequence[Source], answers: Sequence[JudgedAnswer]) -> pd.DataFrame:
    """One row per judge: how many answers it judged, each state, the unparsable and error rates, the
    score counting them wrong (as the harness does) and without them."""
    rows = []
    for s in sources:
        vs = list(s.verdicts.values())
        n = len(vs)
        counts = {st: sum(1 for v in vs if v.state == st) for st in STATES}
        clean, kept = without_failures(vs)
        rows.append({"Judge": s.name, "Judged": n, **counts,
                     "Unparsable %": _pct(counts[UNPARSABLE] / n if n else None),
                     "Error %": _pct(counts[JUDGE_ERROR] / n if n else None),
                     "Score %": _pct(sum(v.score or 0.0 for v in vs) / n if n else None),
                     "Without them %": _pct(clean), "Not judged": s.unasked or len(answers) - n})
    return pd.DataFrame(rows, columns=["Judge", "Judged", *STATES, "Unparsable %", "Error %", "Score %", "Without them %",
                                       "Not judged"])


def answer_frame(answers: Sequence[JudgedAnswer], verdicts: Mapping[str, Verdict]) -> pd.DataFrame:
    """One row per answer the judge answered (correct, incorrect, invalid): the judge's verdict and
    whether our rules take the raw response as right, the response's length, the answer and reply."""
    rows = []
    for a in answers:
        v = verdicts.get(a.qid)
        if v is None or v.state not in ANSWERED:
            continue
        rows.append({"question_id": a.qid, "document": a.document, "judge": v.state, "judge_right": v.state == CORRECT,
                     "rules_right": rules_right(a), "length": len(a.response), "answer": v.answer or "", "reply": v.reply,
                     "response": a.response, "gold": str(a.gold), "note": v.note})
    return pd.DataFrame(rows, columns=["question_id", "document", "judge", "judge_right", "rules_right", "length", "answer",
                                       "reply", "response", "gold", "note"])


def agreement_row(ag: Agreement) -> dict:
    """An Agreement as a table row: answers, agreement %, kappa and its interval, documents."""
    return {"Answers": ag.n, "Agree %": 100 * ag.rate if ag.n else math.nan, "Kappa": ag.kappa, "Low": ag.low,
            "High": ag.high, ag.unit.capitalize() + "s": ag.units}


def _both(frame: pd.DataFrame) -> Agreement:
    return agreement(list(frame["judge_right"]), list(frame["rules_right"]), list(frame["document"]), labels=[True, False])


def confusion_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, Agreement]:
    """The 2 x 2 table judge (rows) x rules (columns), and the Agreement behind it."""
    ag = _both(frame)
    t = ag.table if ag.table else ((0, 0), (0, 0))
    out = pd.DataFrame({"Judge says": ["correct", "not correct"], "Rules: right": [t[0][0], t[1][0]],
                        "Rules: not right": [t[0][1], t[1][1]]})
    return out, ag


def slice_table(frame: pd.DataFrame, questions: pd.DataFrame, field_name: str) -> pd.DataFrame:
    """Judge against rules per label of a breakdown field (an answer under each of its labels)."""
    from dashboard.disagreement.frames import slice_labels  # here: the overview reads judge_board, not the page

    labels = slice_labels(questions, field_name)
    merged = frame.merge(labels, on="question_id", how="inner")
    rows = [{"Slice": label, **agreement_row(_both(part))} for label, part in merged.groupby("label", sort=True)]
    return pd.DataFrame(rows)


def length_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Judge against rules per decile of the response's length (characters): does agreement fall with verbosity?"""
    parts = by_decile(list(frame["judge_right"]), list(frame["rules_right"]), list(frame["length"]), list(frame["document"]),
                      labels=[True, False])
    return pd.DataFrame([{"Decile": k + 1, "Characters": f"{lo:,}–{hi:,}", **agreement_row(ag)}
                         for k, (lo, hi, ag) in enumerate(parts)])


def disagreements(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers where the judge and the rules disagree, with the disagreement's reason and the reply."""
    part = frame[frame["judge_right"] != frame["rules_right"]]
    from dashboard.disagreement.frames import JUDGE_DISAGREES, category_label  # as above

    reason = [f"{category_label(JUDGE_DISAGREES)}: the judge says {j}, the rules {'right' if r else 'not right'}"
              for j, r in zip(part["judge"], part["rules_right"])]
    return pd.DataFrame({"question_id": part["question_id"], "reason": reason, "judge's answer": part["answer"],
                         "gold": part["gold"], "reply": part["reply"], "response": part["response"]}).reset_index(drop=True)


def changed(answers: Sequence[JudgedAnswer], a: Mapping[str, Verdict], b: Mapping[str, Verdict]) -> tuple[pd.DataFrame, Agreement]:
    """Two judges on the answers both answered: each answer whose extracted answer or state differs (both
    replies kept, plain text), and the Agreement of their states."""
    keys, sa, sb, docs, rows = [], [], [], [], []
    for ans in answers:
        va, vb = a.get(ans.qid), b.get(ans.qid)
        if va is None or vb is None:
            continue
        if va.state in ANSWERED and vb.state in ANSWERED:
            keys.append(ans.qid)
            sa.append(va.state)
            sb.append(vb.state)
            docs.append(ans.document)
        if (va.answer or "").strip() != (vb.answer or "").strip() or va.state != vb.state:
            rows.append({"question_id": ans.qid, "answer A": va.answer or "", "answer B": vb.answer or "", "verdict A": va.state,
                         "verdict B": vb.state, "reply A": va.reply or va.note, "reply B": vb.reply or vb.note})
    ag = agreement(sa, sb, docs, labels=[s for s in STATES if s not in FAILED])
    return pd.DataFrame(rows, columns=["question_id", "answer A", "answer B", "verdict A", "verdict B", "reply A", "reply B"]), ag


# ----------------------------------------------------------------------------- people


def human_verdicts(notes: Iterable, run: str) -> dict[str, tuple[bool, str]]:
    """Question id -> (the people's verdict: right?, the tags that say so), from the triage notes on this
    run's answers: a tag saying the scorer was wrong on a right answer (RIGHT_TAGS) or naming the model's
    error (WRONG_TAGS); a note carrying both kinds gives no verdict."""
    out: dict[str, tuple[bool, str]] = {}
    for n in notes:
        if n.run != run:
            continue
        tags = set(n.tags)
        right, wrong = tags & RIGHT_TAGS, tags & WRONG_TAGS
        if bool(right) != bool(wrong):
            out[n.question_id] = (bool(right), ", ".join(sorted(right or wrong)))
    return out


def people_frame(answers: Sequence[JudgedAnswer], verdicts: Mapping[str, Verdict],
                 people: Mapping[str, tuple[bool, str]]) -> tuple[pd.DataFrame, Agreement]:
    """The answers both the judge (answered) and a person gave a verdict on, and their Agreement."""
    rows = []
    for a in answers:
        v, p = verdicts.get(a.qid), people.get(a.qid)
        if v is None or p is None or v.state not in ANSWERED:
            continue
        rows.append({"question_id": a.qid, "document": a.document, "judge": v.state, "judge_right": v.state == CORRECT,
                     "person_right": p[0], "tags": p[1], "answer": v.answer or ""})
    frame = pd.DataFrame(rows, columns=["question_id", "document", "judge", "judge_right", "person_right", "tags", "answer"])
    ag = agreement(list(frame["judge_right"]), list(frame["person_right"]), list(frame["document"]), labels=[True, False])
    return frame, ag


# ----------------------------------------------------------------------------- names


def family_of(name: str) -> str:
    """A model's family from its name (`Qwen/Qwen2.5-VL-7B` -> qwen, `gpt-4o` -> gpt); "" when none is known."""
    for word in _WORD.findall(name.lower()):
        for fam in FAMILIES:
            if word == fam or (word.startswith(fam) and len(fam) >= 4):
                return fam
    return ""


def family_warning(judge_model: str, judged_model: str) -> str:
    """A sentence when the judge and the judged model share a family name ("" otherwise)."""
    fam = family_of(judge_model)
    if fam and fam == family_of(judged_model):
        return (f"The judge ({judge_model}) and the judged model ({judged_model}) share the family name “{fam}”: a judge "
                "may favour answers written the way its own family writes them. Check its verdicts against people's.")
    return ""


# ----------------------------------------------------------------------------- the leaderboard


def judge_board(ws: Workspace) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per run whose files hold a judge's output: how many answers got no answer from it (unparsable or
    judge_error: the harness counts them wrong) and its score without them, in %; with each column's help.
    Nothing when no run has such an answer (both columns would repeat the harness's own number)."""
    rows = []
    for run in judged_runs(ws):
        stored = [a.stored for a in run_answers(ws, run) if a.stored is not None]
        if not stored:
            continue
        failed = sum(1 for v in stored if v.state in FAILED)
        clean, _ = without_failures(stored)
        rows.append({"Run": run, COUNT_COLUMN: failed, SCORE_COLUMN: _pct(clean)})
    helps = {COUNT_COLUMN: "answers the run's own LLM judge gave no answer for: unparsable (a reply without the answer) "
                           "or judge_error (no reply). The harness's number counts them wrong; the Judge page lists them",
             SCORE_COLUMN: "the judge's score over the answers it did answer: the harness's number without the unparsable "
                           "and judge_error ones"}
    if not any(r[COUNT_COLUMN] for r in rows):  # no answer without one: the score without them is the harness's
        return pd.DataFrame(columns=["Run"]), {}
    return pd.DataFrame(rows, columns=["Run", COUNT_COLUMN, SCORE_COLUMN]), helps


# ----------------------------------------------------------------------------- the report


def kappa_cell(ag: Agreement) -> str:
    """Kappa and its interval by document as a table cell ("—" with no answer; "not enough evidence" without an interval)."""
    if ag.n == 0:
        return "—"
    k = "undefined" if math.isnan(ag.kappa) else f"{ag.kappa:.2f}"
    if math.isnan(ag.low):
        return f"{k} (not enough evidence: {ag.units} {ag.unit}s)"
    return f"{k} [{ag.low:.2f}, {ag.high:.2f}], {ag.units} {ag.unit}s"


def report_table(ws: Workspace, runs: Sequence[str], notes: Iterable = (), cache: ReplyCache | None = None
                 ) -> tuple[pd.DataFrame, list[JudgeIdentity]]:
    """One row per (run, judge) of the runs a judge read: its verdicts, kappa against our rules, against
    the run's own judge (and how many answers changed) and against people, each with its interval by
    document; and the identities of the re-judges in it (for the report's signature)."""
    cache = cache or reply_cache()
    notes = list(notes)
    rows, idents = [], []
    for run in [r for r in judged_runs(ws) if r in runs]:
        answers = run_answers(ws, run)
        stored = {a.qid: a.stored for a in answers if a.stored is not None}
        sources = ([Source(FILES, stored)] if stored else []) + cached_sources(answers, cache)
        people = human_verdicts(notes, run)
        for s in sources:
            counts = {st: sum(1 for v in s.verdicts.values() if v.state == st) for st in STATES}
            frame = answer_frame(answers, s.verdicts)
            rules = confusion_frame(frame)[1] if len(frame) else agreement([], [], [])
            vs_files = changed(answers, s.verdicts, stored)[1] if stored and s.identity is not None else None
            n_changed = len(changed(answers, s.verdicts, stored)[0]) if vs_files is not None else None
            ppl = people_frame(answers, s.verdicts, people)[1]
            clean, _ = without_failures(s.verdicts.values())
            rows.append({"Run": run, "Judge": s.name, "Judged": len(s.verdicts), **counts,
                         "Without failures %": "—" if clean is None else f"{100 * clean:.1f}",
                         "κ vs rules": kappa_cell(rules),
                         "κ vs the run's own judge": kappa_cell(vs_files) if vs_files is not None else "—",
                         "Answers changed": "—" if n_changed is None else str(n_changed),
                         "κ vs people": kappa_cell(ppl)})
            if s.identity is not None and s.identity not in idents:
                idents.append(s.identity)
    return pd.DataFrame(rows), idents

"""A harness run rescored under a profile: each answer scored by the profile's rule, the
aggregates recomputed under the harness's own keys, side by side with the harness's own
per-question scores (`official`) and aggregates (`reported`).

Profiles: `lmms-eval` and `vlmevalkit` (the harnesses' rules, scoring/harness_rules.py) and the
benchmarks' own evaluators, `docvqa` (part D of scoring/README.md) and `mmlongbench-doc`
(scoring/mmlongbench_rule.py). Under the harness's own profile, files the harness wrote give
recomputed = reported and score = official on every row."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .formats.base import ANLS_FAMILY, MMLONGBENCH_FAMILY, HarnessQuestion, HarnessRow, HarnessRun
from .formats.records import gold_question
from .harness_rules import (
    lmms_anls,
    lmms_anls_any,
    lmms_answerable,
    lmms_first_number,
    lmms_mean,
    lmms_mmlongbench_f1,
    lmms_mmlongbench_score,
    vlm_anls_distance,
    vlm_answers,
    vlm_categories,
    vlm_docvqa_score,
    vlm_get_f1,
    vlm_mmlongbench_aggregate,
    vlm_mmlongbench_score,
    vlm_overall,
)
from .mmlongbench_rule import acc_and_f1
from .mmlongbench_rule import eval_score as benchmark_eval_score
from .profiles import LMMS_EVAL_PROFILE, MMLONGBENCH_PROFILE, VLMEVALKIT_PROFILE

__all__ = ["RowScore", "Rescored", "rescore", "why", "sensitivity", "by_field", "question_labels", "SLICE_FIELDS",
           "HARNESS_SCORING_PROFILES", "own_profile"]

HARNESS_SCORING_PROFILES = (LMMS_EVAL_PROFILE, VLMEVALKIT_PROFILE, "docvqa", MMLONGBENCH_PROFILE)
_OWN = {"lmms-eval": LMMS_EVAL_PROFILE, "vlmevalkit": VLMEVALKIT_PROFILE}
# the fields the per-slice counts break down by, in the order the app's pages offer them (scoring.model.BREAKDOWNS)
SLICE_FIELDS = ("reasoning_type", "evidence_source", "answer_format", "domain", "difficulty", "doc_type", "split")


def own_profile(run: HarnessRun) -> str | None:
    """The profile that reproduces the run's harness (None: LongDocURL, no profile yet)."""
    return _OWN.get(run.harness)


@dataclass(slots=True)
class RowScore:
    qid: str
    filter: str
    official: float | None
    score: float | None
    prediction: str
    gold: str
    file: str
    line: int | None
    note: str = ""
    reason: str = ""  # why the profile's score differs from the harness's own, in words ("" when equal)
    slice: str = ""  # the answer format (MMLongBench-Doc) or the task, for the per-slice counts


@dataclass(slots=True)
class Rescored:
    run: HarnessRun
    profile: str
    rows: list[RowScore] = field(default_factory=list)
    recomputed: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    questions: dict[str, HarnessQuestion] = field(default_factory=dict)  # the gold the rows were scored against

    @property
    def changed(self) -> list[RowScore]:
        """Rows whose profile score differs from the harness's own (both known)."""
        return [r for r in self.rows if r.official is not None and r.score is not None and r.score != r.official]


def _nan_format(fmt: str) -> Any:
    # VLMEvalKit reads MMLongBench-Doc's TSV with pandas: the format `None` arrives as NaN
    return math.nan if fmt == "None" else fmt


def _row_score(run: HarnessRun, q: HarnessQuestion, row: HarnessRow, profile: str) -> tuple[float | None, str]:
    pred = row.prediction
    if run.family == ANLS_FAMILY:
        if run.harness == VLMEVALKIT_PROFILE:
            answers, note = vlm_answers(row.raw.get("answer", "")) if "answer" in row.raw else (list(q.answers), "")
        else:
            answers, note = list(q.answers), ""
        if not answers or run.task.lower().endswith("_test"):
            return None, "no gold answers (a test split)"
        if profile == LMMS_EVAL_PROFILE:
            if run.harness == "lmms-eval" and run.extra.get("anls_rule") == "any":
                return lmms_anls_any(answers, pred.strip()), note
            return float(lmms_anls(answers, pred.strip())), note
        if profile == VLMEVALKIT_PROFILE:
            return vlm_docvqa_score([vlm_anls_distance(a, pred) for a in answers]), note
        if profile == "docvqa":
            from .metrics import judge

            # the benchmark's own answers when its gold was joined (--gold-files), else the harness's
            own = q.metadata.get("benchmark_answers") or answers
            return judge(pred, list(own), profile="docvqa").anls, note
        return None, f"profile {profile} does not score DocVQA-style answers"
    if run.family == MMLONGBENCH_FAMILY:
        if run.harness == VLMEVALKIT_PROFILE and "pred" not in row.raw:
            return None, "not judged: VLMEvalKit scores the judge's extracted answer"
        answer = q.answer_raw if q.answer_raw is not None else (q.answers[0] if q.answers else "")
        if profile == LMMS_EVAL_PROFILE:
            return lmms_mmlongbench_score(answer, pred.strip(), q.answer_format), ""
        if profile == VLMEVALKIT_PROFILE:
            if run.harness == VLMEVALKIT_PROFILE:
                return vlm_mmlongbench_score(row.raw.get("answer"), row.raw.get("pred"), row.raw.get("answer_format"))
            return vlm_mmlongbench_score(answer, pred, _nan_format(q.answer_format))
        if profile == MMLONGBENCH_PROFILE:
            gold = answer if isinstance(answer, str) else ("nan" if isinstance(answer, float) and math.isnan(answer) else answer)
            return benchmark_eval_score(gold, pred, q.answer_format or "Str"), ""
        return None, f"profile {profile} does not score MMLongBench-Doc answers"
    return None, "no profile reproduces this harness's score yet"


def rescore(run: HarnessRun, questions: dict[str, HarnessQuestion], profile: str) -> Rescored:
    out = Rescored(run=run, profile=profile, questions=questions)
    scored: list[tuple[HarnessRow, HarnessQuestion, float]] = []
    for row in run.rows:
        q = questions.get(row.qid)
        filt = run.filters[row.occurrence] if row.occurrence < len(run.filters) else run.filters[-1]
        if q is None:
            out.rows.append(RowScore(row.qid, filt, row.official, None, row.prediction, "", row.file, row.line,
                                     "no gold question"))
            continue
        score, note = _row_score(run, q, row, profile)
        notes = [n for n in (note, *row.notes) if n]
        reason = why(run, q, row, score, profile, note) if score is not None and row.official is not None \
            and score != row.official else ""
        out.rows.append(RowScore(row.qid, filt, row.official, score, row.prediction, " | ".join(q.answers), row.file,
                                 row.line, "; ".join(notes), reason,
                                 q.answer_format if run.family == MMLONGBENCH_FAMILY else run.task))
        if score is not None:
            scored.append((row, q, score))
    out.recomputed = _aggregate(run, scored, profile)
    return out


def why(run: HarnessRun, q: HarnessQuestion, row: HarnessRow, score: float, profile: str, note: str = "") -> str:
    """The reason, in words, that the profile's score of a row differs from the harness's own."""
    harness = "lmms-eval" if run.harness == "lmms-eval" else "VLMEvalKit" if run.harness == VLMEVALKIT_PROFILE else run.harness
    pred = row.prediction
    official = row.official if row.official is not None else 0.0
    blank = any("blank cell" in n or "read as missing" in n for n in row.notes if n.startswith(("pred:", "prediction:")))
    if run.family == ANLS_FAMILY:
        if blank:
            return f"{harness} scored the text `nan` for a blank cell"
        if official == 0.5 and score == 0.0:
            return f"a distance of exactly half the length: {harness} keeps 0.5, the benchmark's rule gives 0"
        if pred != pred.strip():
            return f"spaces around the answer: {harness} {'counts them in the length' if run.harness == VLMEVALKIT_PROFILE else 'strips them'}"
        return f"{harness} gives {official:g}, profile {profile} {score:g}"
    if run.family == MMLONGBENCH_FAMILY:
        fmt = q.answer_format
        if run.harness == VLMEVALKIT_PROFILE:
            if blank:
                return "the judge gave no answer: VLMEvalKit scored the text `nan` for a blank cell"
            if note.startswith("VLMEvalKit's eval_score raises") or (official == 0.0 and profile != VLMEVALKIT_PROFILE
                                                                     and _vlm_raises(row)):
                return "VLMEvalKit's eval_score raises on this row and scores 0"
            if fmt == "None":
                return "the format None reached VLMEvalKit as a blank cell: its list branch scored the answer by ANLS"
            if row.response and pred.strip() and pred.strip().lower() not in row.response.lower():
                return f"the judge extracted a different answer (`{pred[:60]}`) than the response holds"
        if run.harness == "lmms-eval":
            if fmt in ("Int", "Float"):
                n = lmms_first_number(pred)
                if n is not None:
                    gold = q.answers[0] if q.answers else ""
                    g = lmms_first_number(gold)
                    plain = g is not None and gold.strip() in (f"{g:g}", str(g), str(int(g)) if g.is_integer() else "")
                    tail = "" if plain or g is None else f", the gold `{gold[:60]}` → {g:g}"
                    return f"lmms-eval reads the first number: `{pred[:60]}` → {n:g}{tail}"
            if fmt == "None":
                return f"lmms-eval needs exactly `not answerable` after cleaning: `{pred[:60]}`"
        return f"{harness} gives {official:g}, profile {profile} {score:g}"
    return ""


def _vlm_raises(row: HarnessRow) -> bool:
    _, note = vlm_mmlongbench_score(row.raw.get("answer"), row.raw.get("pred"), row.raw.get("answer_format"))
    return bool(note)


def sensitivity(r: Rescored) -> dict[str, Any]:
    """How many rows the profile scores differently from the harness, in which direction: over every
    row, per `by_slice` (the answer format, MMLongBench-Doc; the task, DocVQA-style) and per
    `by_field` (each breakdown field with two labels or more, per label: up, down, unchanged, over
    the first line of each question)."""
    def counts(rows: list[RowScore]) -> dict[str, int]:
        pairs = [(x.official, x.score) for x in rows if x.official is not None and x.score is not None]
        return {"count": len(pairs), "changed": sum(1 for o, s in pairs if s != o),
                "up": sum(1 for o, s in pairs if s > o), "down": sum(1 for o, s in pairs if s < o)}

    slices: dict[str, list[RowScore]] = {}
    for x in r.rows:
        slices.setdefault(x.slice or "unknown", []).append(x)
    return {**counts(r.rows), "by_slice": {k: counts(v) for k, v in sorted(slices.items())}, "by_field": by_field(r)}


def question_labels(run: HarnessRun, q: HarnessQuestion, field_name: str) -> list[str]:
    """A question's labels in one breakdown field, read as the app reads the gold built from the
    harness's files (scoring.formats.records.gold_question; evidence sources may give several)."""
    joined = q.metadata.get("benchmark_labels")
    if isinstance(joined, dict) and field_name in joined:  # joined to a benchmark (--gold-files): its own labels
        return list(joined[field_name])
    return gold_question(q, run.family, "").labels(field_name)


def first_rows(rows: list[RowScore]) -> list[RowScore]:
    """One row per question: the first filter's (lmms-eval may write one line per filter or repeat)."""
    seen: set[str] = set()
    out = []
    for x in rows:
        if x.qid not in seen:
            seen.add(x.qid)
            out.append(x)
    return out


def _all_labels(q: HarnessQuestion, family: str, fields: tuple[str, ...]) -> tuple[list[str], ...]:
    joined = q.metadata.get("benchmark_labels")
    if isinstance(joined, dict):  # joined to a benchmark (--gold-files): its own labels
        return tuple(list(joined.get(f, ["unknown"])) for f in fields)
    gq = gold_question(q, family, "")
    return tuple(gq.labels(f) for f in fields)


# labels per question object, shared by the runs of a task (their questions are the same objects): id -> (question, labels)
_LABELS: dict[tuple[int, str, tuple[str, ...]], tuple[HarnessQuestion, tuple[list[str], ...]]] = {}
_LABELS_MAX = 250_000


def by_field(r: Rescored, fields: tuple[str, ...] = SLICE_FIELDS) -> dict[str, dict[str, dict[str, int]]]:
    """Per breakdown field, per label: the questions with both scores (the first line of each),
    and how many the profile scores higher (`up`), lower (`down`) or the same (`unchanged`) than the
    harness did. A field whose questions all carry one label is no slice and is left out; a question
    with several evidence sources counts under each."""
    counts: list[dict[str, dict[str, int]]] = [{} for _ in fields]
    if len(_LABELS) > _LABELS_MAX:
        _LABELS.clear()
    for x in first_rows(r.rows):
        if x.official is None or x.score is None:
            continue
        q = r.questions.get(x.qid)
        if q is None:
            continue
        key = (id(q), r.run.family, fields)
        got = _LABELS.get(key)
        if got is None or got[0] is not q:
            got = (q, _all_labels(q, r.run.family, fields))
            _LABELS[key] = got
        way = "up" if x.score > x.official else "down" if x.score < x.official else "unchanged"
        for per_field, labels in zip(counts, got[1]):
            for label in dict.fromkeys(labels):
                c = per_field.get(label)
                if c is None:
                    c = per_field[label] = {"count": 0, "up": 0, "down": 0, "unchanged": 0}
                c["count"] += 1
                c[way] += 1
    return {f: {k: c[k] for k in sorted(c)} for f, c in zip(fields, counts) if len(c) >= 2}


def _aggregate(run: HarnessRun, scored: list[tuple[HarnessRow, HarnessQuestion, float]], profile: str) -> dict[str, Any]:
    if not scored:
        return {}
    if run.harness == "lmms-eval":
        out: dict[str, Any] = {}
        for k, filt in enumerate(run.filters):
            part = [(row, q, s) for row, q, s in scored if row.occurrence == k]
            if not part:
                continue
            if run.family == ANLS_FAMILY:
                out[f"anls,{filt}"] = lmms_mean([s for _, _, s in part])
            elif run.family == MMLONGBENCH_FAMILY:
                acc, f1 = _mm_acc_f1(part, profile, run)
                out[f"mmlongbench_doc_acc,{filt}"] = acc
                out[f"mmlongbench_doc_f1,{filt}"] = f1
        return out
    if run.harness == "vlmevalkit":
        if run.family == ANLS_FAMILY:
            out = {"Overall": vlm_overall([s for _, _, s in scored])}
            for column in ("split", "category"):
                labels = sorted({str(row.raw[column]) for row, _, _ in scored if column in row.raw})
                for label in labels:
                    if label in run.reported:
                        out[label] = vlm_overall([s for row, _, s in scored if str(row.raw.get(column)) == label])
            return out
        if run.family == MMLONGBENCH_FAMILY:
            rows = []
            for row, q, s in scored:
                cats, _ = vlm_categories(row.raw.get("evidence_sources"), row.raw.get("evidence_pages"))
                rows.append((row.raw.get("answer", q.answer_raw), row.raw.get("pred", row.prediction), s, cats))
            agg = vlm_mmlongbench_aggregate(rows)
            if profile != VLMEVALKIT_PROFILE:
                acc, f1 = _mm_acc_f1(scored, profile, run)
                agg["overall_acc"], agg["overall_f1"] = acc, f1
            return {k: v for k, v in agg.items() if v is not None}
    return {}


def _mm_acc_f1(part: list[tuple[HarnessRow, HarnessQuestion, float]], profile: str, run: HarnessRun) -> tuple[float, float | None]:
    scores = [s for _, _, s in part]
    if profile == MMLONGBENCH_PROFILE:
        rows = [{"answer": q.answers[0] if q.answers else "", "pred": row.prediction, "score": s} for row, q, s in part]
        return acc_and_f1(rows)
    if profile == VLMEVALKIT_PROFILE:
        total = 0.0
        for s in scores:
            total += s
        triples = [(row.raw.get("answer", q.answer_raw), row.raw.get("pred", row.prediction), s) for row, q, s in part]
        return total / len(scores), vlm_get_f1(triples)
    items = [(s, lmms_answerable(q.answers[0] if q.answers else ""), lmms_answerable(row.prediction.strip()))
             for row, q, s in part]
    return sum(float(s) for s in scores) / len(scores), lmms_mmlongbench_f1(items)

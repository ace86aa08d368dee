"""Aggregation: the overall and per-slice means of a run's three measures, and which questions each slice holds.

The sums run in question order (one pass per bucket), so a run scored in parts aggregates to the same
bytes as one scored whole (scoring/columnar.py sums a run scored in forked parts from its whole columns).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TypeVar

from .metrics import QuestionResult
from .model import BREAKDOWNS, GoldQuestion
from .registry import METRICS

T = TypeVar("T")


def bucket(acc: Sequence[float], f1: Sequence[float], an: Sequence[float]) -> dict:
    n = len(acc)
    if not n:
        return {"count": 0, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0}
    return {
        "count": n,
        "accuracy": round(sum(acc) / n, 6),
        "token_f1": round(sum(f1) / n, 6),
        "anls": round(sum(an) / n, 6),
    }


_LABEL_METHOD = frozenset({"split", "answer_format", "evidence_source", "question_type"})


def _keyed(values: list) -> list:
    """Hashable stand-ins: equal stand-ins for values with equal labels (strings as they are,
    anything else by type and repr, so 1, 1.0 and true stay apart)."""
    return [v if type(v) is str else (type(v), _repr(v)) for v in values]


def _repr(value: object) -> str:
    """repr of a raw value; one nested too deeply for repr keyed by its identity (its own bucket
    key; the label is made by `GoldQuestion.text`, which never raises)."""
    try:
        return repr(value)
    except RecursionError:
        return f"<deep {id(value)}>"


def label_keys(qs: list[GoldQuestion], metas: list[dict], group: str) -> list:
    """One hashable key per question such that equal keys have equal labels in `group`."""
    if group == "split":
        return _keyed([q.split for q in qs])
    if group == "answer_format":
        return _keyed([q.raw_format if q.format_given else _ABSENT for q in qs])
    if group == "question_type":
        return [q.question_types for q in qs]
    key = "evidence_sources" if group == "evidence_source" else group
    return _keyed([m.get(key, _ABSENT) for m in metas])


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def partition(keys: Iterable) -> dict:
    """key -> ascending positions holding it."""
    parts: dict = {}
    for i, k in enumerate(keys):
        idx = parts.get(k)
        if idx is None:
            parts[k] = [i]
        else:
            idx.append(i)
    return parts


def labels_of(q: GoldQuestion, group: str) -> list[str]:
    """`q.labels(group)`, with plain metadata keys read without the method call."""
    if group in _LABEL_METHOD:
        return q.labels(group)
    v = q.metadata.get(group)
    return [v if type(v) is str and v else (q.text(v) or "unknown")]


def group_members(qs: list[GoldQuestion], metas: list[dict], group: str) -> dict[str, list[int]]:
    """label -> ascending positions of the results in that bucket (a position twice when a
    question names a label twice), as one append per (question, label) would give. Labels are
    computed once per distinct key (a few label values), not per question."""
    return members_of_parts([(qs[idx[0]], idx) for idx in partition(label_keys(qs, metas, group)).values()],
                            partial(labels_of, group=group))


def members_of_parts(parts: Iterable[tuple[T, list[int]]], labels: Callable[[T], Iterable[str]]) -> dict[str, list[int]]:
    """label -> ascending positions, from (a representative, the ascending positions of every
    question whose labels are its) pairs: `labels(representative)` gives them (`labels_of` of a
    question and a group; the command line's column reader gives them by position)."""
    lists: dict[str, list[list[int]]] = {}
    for rep, idx in parts:
        for label in labels(rep):
            lists.setdefault(label, []).append(idx)
    members: dict[str, list[int]] = {}
    for label, found in lists.items():
        if len(found) == 1:
            members[label] = found[0]
        else:
            merged = [i for idx in found for i in idx]
            merged.sort()  # ascending runs: merged in O(n log runs)
            members[label] = merged
    return members


def aggregate(results: Sequence[QuestionResult], groups: Sequence[str] = BREAKDOWNS) -> tuple[dict, dict]:
    """(overall bucket, breakdowns) exactly as spec 7: raw scores averaged in question order,
    then rounded to 6 decimals."""
    js = [r.judgement for r in results]
    acc = [j.accuracy for j in js]
    f1 = [j.token_f1 for j in js]
    an = [j.anls for j in js]
    del js
    return aggregate_scores(breakdown_members([r.question for r in results], groups), acc, f1, an)


def breakdown_members(questions: Sequence[GoldQuestion], groups: Sequence[str] = BREAKDOWNS) -> dict[str, dict[str, list[int]]]:
    """group -> label -> ascending positions of the questions in that bucket: what aggregation
    needs of the questions, computed before (or while) they are scored. Questions alike in
    everything their labels read -- split, format, question types and the metadata dict (the
    loader shares one dict between questions with equal metadata) -- are partitioned once for
    every group; when few are alike, group by group."""
    qs = list(questions)
    parts = partition([
        (id(q.metadata), q.split if type(q.split) is str else id(q.split),
         q.raw_format if type(q.raw_format) is str else id(q.raw_format), q.format_given, q.question_types)
        for q in qs
    ])
    if len(parts) > len(qs) // 8 + 64:
        metas = [q.metadata for q in qs]
        return {g: group_members(qs, metas, g) for g in groups}
    reps = [(qs[idx[0]], idx) for idx in parts.values()]
    return {g: members_of_parts(reps, partial(labels_of, group=g)) for g in groups}


def aggregate_scores(members: dict[str, dict[str, list[int]]], acc: Sequence[float], f1: Sequence[float],
                     an: Sequence[float]) -> tuple[dict, dict]:
    """`aggregate` from score columns and `breakdown_members` of the same questions."""
    acc, f1, an = list(acc), list(f1), list(an)
    breakdowns = {g: {label: _bucket_at(m[label], acc, f1, an) for label in sorted(m)} for g, m in members.items()}
    return bucket(acc, f1, an), breakdowns


def _bucket_at(idx: list[int], acc: list[float], f1: list[float], an: list[float]) -> dict:
    """`bucket` of the values at `idx` (ascending, so each sum adds in question order, as
    `sum` of the picked values would), summed in C without building the picked lists."""
    n = len(idx)
    return {
        "count": n,
        "accuracy": round(sum(map(acc.__getitem__, idx)) / n, 6),
        "token_f1": round(sum(map(f1.__getitem__, idx)) / n, 6),
        "anls": round(sum(map(an.__getitem__, idx)) / n, 6),
    }


def run_groups(gold: Sequence[GoldQuestion]) -> tuple[str, ...]:
    """The breakdowns of a run on this gold: the release's, and question types when any question has one."""
    return BREAKDOWNS + (("question_type",) if any(q.question_types for q in gold) else ())


def macro_average(breakdowns: dict) -> dict:
    """Per breakdown group: the mean over its buckets of each bucket's mean, so that large
    groups do not drown small ones."""
    out = {}
    for g, buckets in breakdowns.items():
        vals = [b for b in buckets.values() if b["count"]]
        out[g] = {"groups": len(vals)} | {
            m: round(sum(b[m] for b in vals) / len(vals), 6) if vals else 0.0 for m in METRICS
        }
    return out

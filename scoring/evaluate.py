"""Scoring a run against gold, aggregation (spec 7) and the release report layout.

`evaluate(gold, predictions)` returns a `RunResult` holding every per-question result, the
join counts, and the aggregates; `RunResult.report()` is the release evaluator's JSON object.
Long runs are scored on all cores (processes), with a progress callback.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from math import isnan
from pathlib import Path
from typing import IO

from ._gc import paused_gc
from .metrics import OVERFLOW_STATUSES, OVERFLOW_TEXT, Decision, Judgement, decide
from .model import BREAKDOWNS, GoldQuestion, Prediction
from .problems import Problem
from .profiles import Profile, get_profile, signature
from .registry import METRICS, MISSING_STATUS, is_success_status
from .text import to_str

__all__ = ["QuestionResult", "RunResult", "evaluate", "aggregate", "aggregate_scores", "breakdown_members", "macro_average",
           "row_dicts", "row_columns", "dicts_of", "csv_columns", "run_groups", "extra_prediction_problems", "CSV_COLUMNS"]

CSV_COLUMNS = (
    "question_id", "prediction", "gold_answer", "answer_format", "status",
    "accuracy", "token_f1", "anls", "split", "domain", "reasoning_type",
)
PARALLEL_MIN = 20_000  # below this, one process is faster than starting workers
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class QuestionResult:
    """One gold question of a run: the question, its prediction row (None when missing) and the
    judgement of the answer. Scores and the rule are read from the judgement."""

    question: GoldQuestion
    prediction: Prediction | None
    judgement: Judgement

    @property
    def qid(self) -> str:
        return self.question.qid

    @property
    def accuracy(self) -> float:
        return self.judgement.accuracy

    @property
    def token_f1(self) -> float:
        return self.judgement.token_f1

    @property
    def anls(self) -> float:
        return self.judgement.anls

    @property
    def status(self) -> str:
        return self.judgement.status

    @property
    def decided_by(self) -> str:
        return self.judgement.decided_by

    @property
    def effective(self) -> str:
        """The prediction as the release reports it (after the overflow substitution)."""
        return self.judgement.reported_prediction

    def row(self) -> dict:
        """The release per-question row (spec 7), scores rounded to 6 decimals."""
        q, j = self.question, self.judgement
        return {
            "question_id": q.qid,
            "prediction": j.reported_prediction,
            "gold_answer": q.gold_answer,
            "answer_format": q.row_format,
            "status": j.status,
            "accuracy": round(j.accuracy, 6),
            "token_f1": round(j.token_f1, 6),
            "anls": round(j.anls, 6),
            "split": q.split,
            "domain": q.raw_meta("domain"),
            "reasoning_type": q.raw_meta("reasoning_type"),
        }


def _rows(results: Sequence[QuestionResult]) -> list[dict]:
    """`[r.row() for r in results]`, with the properties it reads inlined (a million rows)."""
    js = [r.judgement for r in results]
    return row_dicts([r.question for r in results], [r.prediction for r in results],
                     [j.accuracy for j in js], [j.token_f1 for j in js], [j.anls for j in js])


def row_dicts(questions: Sequence[GoldQuestion], predictions: Sequence[Prediction | None], accuracy: Sequence[float],
              token_f1: Sequence[float], anls: Sequence[float]) -> list[dict]:
    """The release per-question rows of aligned columns (a prediction None: missing), as
    `QuestionResult.row()` writes them -- for a caller holding scores without records."""
    return dicts_of(row_columns(questions, predictions, accuracy, token_f1, anls))


def row_columns(questions: Sequence[GoldQuestion], predictions: Sequence[Prediction | None], accuracy: Sequence[float],
                token_f1: Sequence[float], anls: Sequence[float]) -> list[list]:
    """The fields of `row_dicts`' rows as columns, in CSV_COLUMNS order (`csv_columns` writes them
    as CSV, `dicts_of` makes the rows)."""
    return [
        [q.qid for q in questions],
        ["" if pr is None else (OVERFLOW_TEXT if pr.status in OVERFLOW_STATUSES else pr.text) for pr in predictions],
        [q.answers[0] if q.answers else "" for q in questions],
        [q.raw_format if q.format_given else "Str" for q in questions],
        [MISSING_STATUS if pr is None else pr.status for pr in predictions],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in accuracy],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in token_f1],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in anls],
        [q.split for q in questions],
        [q.metadata.get("domain", "unknown") for q in questions],
        [q.metadata.get("reasoning_type", "unknown") for q in questions],
    ]


def dicts_of(columns: Sequence[Sequence]) -> list[dict]:
    """The row dicts of `row_columns` (keys in CSV_COLUMNS order: the report's bytes depend on it)."""
    return [{"question_id": qid, "prediction": pred, "gold_answer": gold, "answer_format": fmt, "status": status,
             "accuracy": acc, "token_f1": f1, "anls": an, "split": split, "domain": domain, "reasoning_type": rtype}
            for qid, pred, gold, fmt, status, acc, f1, an, split, domain, rtype in zip(*columns)]


def _bucket(acc: Sequence[float], f1: Sequence[float], an: Sequence[float]) -> dict:
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


def _group_labels(results: Sequence[QuestionResult], group: str) -> Iterable[list[str]]:
    if group in _LABEL_METHOD:
        return (r.question.labels(group) for r in results)
    # plain metadata keys: the same labels as GoldQuestion.meta, without a call per question
    return ([v if type(v) is str and v else (to_str(v) or "unknown")] for v in (r.question.metadata.get(group) for r in results))


def _keyed(values: list) -> list:
    """Hashable stand-ins: equal stand-ins for values with equal labels (strings as they are,
    anything else by type and repr, so 1, 1.0 and true stay apart)."""
    return [v if type(v) is str else (type(v), repr(v)) for v in values]


def _label_keys(qs: list[GoldQuestion], metas: list[dict], group: str) -> list:
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


def _partition(keys: Iterable) -> dict:
    """key -> ascending positions holding it."""
    parts: dict = {}
    for i, k in enumerate(keys):
        idx = parts.get(k)
        if idx is None:
            parts[k] = [i]
        else:
            idx.append(i)
    return parts


def _labels_of(q: GoldQuestion, group: str) -> list[str]:
    """`q.labels(group)`, with plain metadata keys read without the method call."""
    if group in _LABEL_METHOD:
        return q.labels(group)
    v = q.metadata.get(group)
    return [v if type(v) is str and v else (to_str(v) or "unknown")]


def _group_members(qs: list[GoldQuestion], metas: list[dict], group: str) -> dict[str, list[int]]:
    """label -> ascending positions of the results in that bucket (a position twice when a
    question names a label twice), as one append per (question, label) would give. Labels are
    computed once per distinct key (a few label values), not per question."""
    return _members_of_parts([(qs[idx[0]], idx) for idx in _partition(_label_keys(qs, metas, group)).values()], group)


def _members_of_parts(parts: list[tuple[GoldQuestion, list[int]]], group: str) -> dict[str, list[int]]:
    """label -> ascending positions, from (a question, the ascending positions of every question
    whose labels are that question's) pairs."""
    lists: dict[str, list[list[int]]] = {}
    for q, idx in parts:
        for label in _labels_of(q, group):
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
    parts = _partition([
        (id(q.metadata), q.split if type(q.split) is str else id(q.split),
         q.raw_format if type(q.raw_format) is str else id(q.raw_format), q.format_given, q.question_types)
        for q in qs
    ])
    if len(parts) > len(qs) // 8 + 64:
        metas = [q.metadata for q in qs]
        return {g: _group_members(qs, metas, g) for g in groups}
    reps = [(qs[idx[0]], idx) for idx in parts.values()]
    return {g: _members_of_parts(reps, g) for g in groups}


def aggregate_scores(members: dict[str, dict[str, list[int]]], acc: Sequence[float], f1: Sequence[float],
                     an: Sequence[float]) -> tuple[dict, dict]:
    """`aggregate` from score columns and `breakdown_members` of the same questions."""
    acc, f1, an = list(acc), list(f1), list(an)
    breakdowns = {g: {label: _bucket_at(m[label], acc, f1, an) for label in sorted(m)} for g, m in members.items()}
    return _bucket(acc, f1, an), breakdowns


def _bucket_at(idx: list[int], acc: list[float], f1: list[float], an: list[float]) -> dict:
    """`_bucket` of the values at `idx` (ascending, so each sum adds in question order, as
    `sum` of the picked values would), summed in C without building the picked lists."""
    n = len(idx)
    return {
        "count": n,
        "accuracy": round(sum(map(acc.__getitem__, idx)) / n, 6),
        "token_f1": round(sum(map(f1.__getitem__, idx)) / n, 6),
        "anls": round(sum(map(an.__getitem__, idx)) / n, 6),
    }


def extra_prediction_problems(extras: Sequence[Prediction]) -> list[Problem]:
    """One warning per prediction of no gold question (not scored)."""
    return [Problem.warning(pr.file, pr.line, "question_id", "an id of a gold question", f"{pr.qid!r} (extra prediction, not scored)",
                            skipped=True, kind="extra predictions") for pr in extras]


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


@dataclass
class RunResult:
    name: str
    profile: Profile
    signature: str
    results: list[QuestionResult]
    gold_count: int
    prediction_count: int
    missing_ids: list[str]
    extra_ids: list[str]
    ignore_missing: bool = False
    problems: list[Problem] = field(default_factory=list)
    groups: tuple[str, ...] = BREAKDOWNS
    _agg: tuple[dict, dict] | None = None

    def _aggregates(self) -> tuple[dict, dict]:
        if self._agg is None:
            with paused_gc():
                self._agg = aggregate(self.results, self.groups)
        return self._agg

    @property
    def overall(self) -> dict:
        if self._agg is not None:
            return self._agg[0]
        # the leaderboard needs only this: no breakdowns computed for it
        return _bucket([r.accuracy for r in self.results], [r.token_f1 for r in self.results], [r.anls for r in self.results])

    @property
    def breakdowns(self) -> dict:
        return self._aggregates()[1]

    @property
    def macro(self) -> dict:
        return macro_average(self.breakdowns)

    @property
    def failed_count(self) -> int:
        return sum(1 for r in self.results if r.prediction is not None and not is_success_status(r.status))

    def report(self, *, per_question: bool = True, lens: bool = True) -> dict:
        """The release evaluator's report object (spec 7). With `lens`, a trailing `lens` key
        adds the signature, macro averages and load problems; the release profile's CLI leaves it
        out so the file equals the release evaluator's byte for byte."""
        overall, breakdowns = self._aggregates()
        rep: dict = {
            "gold_count": self.gold_count,
            "prediction_count": self.prediction_count,
            "evaluated_count": overall["count"],
            "missing_prediction_count": len(self.missing_ids),
            "extra_prediction_count": len(self.extra_ids),
            "overall": overall,
            "breakdowns": breakdowns,
        }
        if per_question:
            with paused_gc():
                rep["per_question"] = [r.row() for r in self.results]
        if lens:
            rep["lens"] = {
                "signature": self.signature,
                "run": self.name,
                "macro": macro_average(breakdowns),
                "failed_status_count": self.failed_count,
                "problems": [str(p) for p in self.problems],
            }
        return rep

    def report_json(self, *, per_question: bool = True, lens: bool = True) -> str:
        return "".join(self.report_chunks(per_question=per_question, lens=lens))

    def _row_batches(self, size: int = 5_000) -> Iterator[list[dict]]:
        for i in range(0, len(self.results), size):
            yield _rows(self.results[i : i + size])

    def report_chunks(self, *, per_question: bool = True, lens: bool = True,
                      rows: Iterable[list[dict]] | None = None) -> Iterator[str]:
        """The text of `json.dumps(self.report(...), ensure_ascii=False, indent=2)`, piece by
        piece, a batch of per-question rows at a time: a million-question report is written
        without holding a million row dicts. `rows` lets a caller share its row batches."""
        head, sep, tail = self.report_frame(per_question=per_question, lens=lens)
        yield head
        if sep is not None:
            for k, batch in enumerate(rows if rows is not None else self._row_batches()):
                yield (sep if k else "") + _rows_json(batch)
        yield tail

    def report_frame(self, *, per_question: bool = True, lens: bool = True) -> tuple[str, str | None, str]:
        """(head, separator, tail): the report's text is `head + separator.join(texts) + tail`,
        where the texts are `_rows_json` of consecutive batches of the per-question rows (none
        empty); separator None when there are no rows to put there."""
        rep = self.report(per_question=False, lens=lens)
        extra = rep.pop("lens", None)
        head = json.dumps(rep, ensure_ascii=False, indent=2)[:-2]  # without the closing "\n}"
        tail = "" if extra is None else ',\n  "lens": ' + json.dumps(extra, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        if not per_question:
            return head, None, tail + "\n}"
        if not rep["evaluated_count"]:
            return head + ',\n  "per_question": []', None, tail + "\n}"
        return head + ',\n  "per_question": [\n    ', ",\n    ", "\n  ]" + tail + "\n}"

    def write_csv(self, fh: IO[str], rows: Iterable[list[dict]] | None = None) -> None:
        """csv.DictWriter's output (header, then rows, "\r\n" line ends), without its per-row key checks."""
        csv.writer(fh).writerow(CSV_COLUMNS)
        for batch in rows if rows is not None else self._row_batches():
            fh.write(csv_text(batch))

    def csv_text(self) -> str:
        buf = io.StringIO(newline="")
        self.write_csv(buf)
        return buf.getvalue()

    def write_files(self, *, report: str | Path | None = None, csv_path: str | Path | None = None,
                    per_question: bool = True, lens: bool = True) -> None:
        """The CLI's outputs: the report JSON and the per-question CSV, streamed to disk in one
        pass over the questions (each row dict is built once, for both files)."""
        with paused_gc(), contextlib.ExitStack() as stack:
            csv_fh = stack.enter_context(_open_for_writing(csv_path)) if csv_path else None
            json_fh = stack.enter_context(_open_for_writing(report)) if report else None
            writer = csv.writer(csv_fh) if csv_fh else None
            if writer:
                writer.writerow(CSV_COLUMNS)

            def batches() -> Iterator[list[dict]]:
                for batch in self._row_batches():
                    if csv_fh is not None:
                        csv_fh.write(csv_text(batch))
                    yield batch

            if json_fh:
                for chunk in self.report_chunks(per_question=per_question, lens=lens, rows=batches()):
                    json_fh.write(chunk)
            if writer and not (json_fh and per_question):  # the JSON did not pull the rows through
                for _ in batches():
                    pass


# ----------------------------------------------------------------------------- scoring


def _score_chunk(args: tuple[Profile, list[tuple]]) -> list[Decision]:
    profile, items = args
    return [decide(text, answers, fmt, rule, status, profile) for text, status, answers, fmt, rule in items]


def _shared(x: float) -> float:
    """0.0 and 1.0 -- most scores -- as two shared objects instead of a new float each."""
    return x if 0.0 < x < 1.0 else (_ONE if x else _ZERO)


_ZERO, _ONE = 0.0, 1.0


@paused_gc()
def evaluate(
    gold: Sequence[GoldQuestion],
    predictions: Sequence[Prediction],
    *,
    profile: str | Profile = "xldocbench",
    ignore_missing: bool = False,
    name: str = "run",
    prediction_field: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> RunResult:
    """Score one run. `progress(done, total)` is called as questions are scored."""
    p = get_profile(profile)
    by_id = {pr.qid: pr for pr in predictions}
    gold_ids = set()
    todo: list[tuple[GoldQuestion, Prediction | None]] = []
    missing: list[str] = []
    for q in gold:
        gold_ids.add(q.qid)
        pr = by_id.get(q.qid)
        if pr is None:
            missing.append(q.qid)
            if ignore_missing:
                continue
        todo.append((q, pr))
    extras = [pr for pr in predictions if pr.qid not in gold_ids]
    problems = extra_prediction_problems(extras)
    items = [
        (pr.text, pr.status, q.answers, q.answer_format, q.verification_rule) if pr is not None
        else (None, None, q.answers, q.answer_format, q.verification_rule)
        for q, pr in todo
    ]
    total = len(items)
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    scores: list[Decision] = []
    if n_workers > 1 and total >= PARALLEL_MIN:
        # imported here: the CLI scores small runs in one process and need not load them
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool
        from multiprocessing import get_context

        size = max(2_000, total // (n_workers * 8))
        chunks = [(p, items[i : i + size]) for i in range(0, total, size)]
        try:
            # forkserver: workers start from a clean interpreter, so they neither copy the
            # caller's heap nor inherit its threads' locks (Streamlit serves sessions from threads)
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=get_context("forkserver")) as pool:
                for part in pool.map(_score_chunk, chunks):
                    scores.extend(part)
                    if progress:
                        progress(len(scores), total)
        except (BrokenProcessPool, OSError):
            # workers could not start (e.g. a script without an `if __name__ == "__main__":`
            # guard, or no processes allowed): the loop below scores what is left in this process
            pass
        del chunks
    for i in range(len(scores), total, step := max(1, min(500, total // 50 or 1))):
        scores.extend(_score_chunk((p, items[i : i + step])))
        if progress:
            progress(len(scores), total)
    del items
    results = [
        QuestionResult(q, pr, Judgement(
            None if pr is None else pr.text, q.answers, q.answer_format, q.verification_rule,
            MISSING_STATUS if pr is None else pr.status, p, _shared(acc), _shared(f1), _shared(an), rule, threshold, details))
        for (q, pr), (acc, f1, an, rule, threshold, details) in zip(todo, scores)
    ]
    groups = run_groups(gold)
    return RunResult(
        name=name,
        profile=p,
        signature=signature(p, ignore_missing=ignore_missing, prediction_field=prediction_field),
        results=results,
        gold_count=len(gold),
        prediction_count=len(by_id),
        missing_ids=missing,
        extra_ids=[pr.qid for pr in extras],
        ignore_missing=ignore_missing,
        problems=problems,
        groups=groups,
    )


_SCALARS = frozenset({str, int, float, bool, type(None)})
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",\n      ", ": "))


def _unencodable(obj: object) -> None:
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


# JSONEncoder.encode builds a new C encoder on every call; for a million rows, build it once
# (same arguments as _ROW_ENCODER's: no circular check, no indent, ensure_ascii=False)
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
if _c_make_encoder is not None:
    _C_ROW_ENCODER = _c_make_encoder(None, _unencodable, json.encoder.encode_basestring, None,
                                     ": ", ",\n      ", False, False, True)

    def _encode_row(row: dict) -> str:
        return "".join(_C_ROW_ENCODER(row, 0))
else:  # pragma: no cover - CPython always has the C encoder
    _encode_row = _ROW_ENCODER.encode  # type: ignore[assignment]


def _row_json(row: dict) -> str:
    """One per-question row as `json.dumps(..., indent=2)` prints it two levels deep. With
    `indent`, the json module falls back to its pure-Python encoder (~40 us a row); a flat row
    of scalars gets the same text from the C encoder with the indent written into the item
    separator. Rows holding a list or object (raw metadata can) take the slow, exact path."""
    # only the raw metadata fields and the raw answer format can hold a list or object
    if (type(row["split"]) in _SCALARS and type(row["domain"]) in _SCALARS and type(row["reasoning_type"]) in _SCALARS
            and type(row["answer_format"]) in _SCALARS):
        return "{\n      " + _encode_row(row)[1:-1] + "\n    }"
    # JSON strings hold no raw newline, so re-indenting the generic output is safe
    return json.dumps(row, ensure_ascii=False, indent=2).replace("\n", "\n    ")


try:
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None  # type: ignore[assignment]

_TINY = 1e-4  # below this json writes 1e-05 and orjson 1e-5; from here to 1 both write the same digits
_PLAIN = frozenset({str, bool, type(None)})


def _orjson_safe(row: dict) -> bool:
    """True when orjson writes this row with exactly the json module's bytes. Strings are the same
    for every code point (orjson refuses lone surrogates: that batch then takes the json path);
    booleans and null too; scores only when 0 or in [1e-4, 1] (json writes 1e-05, orjson 1e-5;
    checked over every 6-decimal value and 4M random floats in [1e-4, 1]). The id, prediction,
    gold and status are strings by construction; the raw fields (format, split, domain,
    reasoning type) must be strings, booleans or null -- numbers, lists and objects take the json
    path."""
    a, f, n = row["accuracy"], row["token_f1"], row["anls"]
    if not ((a == 0.0 or _TINY <= a <= 1.0) and (f == 0.0 or _TINY <= f <= 1.0) and (n == 0.0 or _TINY <= n <= 1.0)):
        return False  # NaN fails every comparison: json writes NaN, orjson null
    return (type(row["answer_format"]) in _PLAIN and type(row["split"]) in _PLAIN and type(row["domain"]) in _PLAIN
            and type(row["reasoning_type"]) in _PLAIN and type(row["prediction"]) is str
            and type(row["gold_answer"]) is str and type(row["question_id"]) is str and type(row["status"]) is str)


def _rows_json(batch: list[dict], *, safe: bool | None = None) -> str:
    """`",\n    ".join(map(_row_json, batch))`: the rows two levels deep, as json.dumps(indent=2)
    nests them in the report. orjson writes the whole batch in one call when every row is safe
    for it (`_orjson_safe`; `safe`: the caller has checked, `batch_is_safe`) -- several times
    faster, the same bytes (the release-agreement golden files and tests/test_fast_json.py pin
    them); any other batch takes the json path."""
    if _orjson is not None and (safe if safe is not None else all(map(_orjson_safe, batch))):
        try:
            text = _orjson.dumps(batch, option=_orjson.OPT_INDENT_2)
        except TypeError:  # orjson.JSONEncodeError: e.g. a lone surrogate
            pass
        else:
            # b'[\n  {\n    "k": v,\n ...\n  }\n]': drop the brackets, indent every line two more spaces
            return text[4:-2].decode("utf-8").replace("\n", "\n  ")
    return ",\n    ".join(map(_row_json, batch))


def batch_is_safe(questions: Sequence[GoldQuestion], scores: Sequence[float]) -> bool:
    """`all(map(_orjson_safe, rows))` for the rows `row_dicts` makes of these questions, from the
    questions and their scores (no per-row call): the raw fields a row echoes (format, split,
    domain, reasoning type) are strings, booleans or null, and every score is 0 or in [1e-4, 1]
    (no NaN). The other fields are strings by construction."""
    if not scores:
        return True
    if isnan(sum(scores)) or max(scores) > 1.0 or min(filter(None, scores), default=1.0) < _TINY:
        return False
    plain = _PLAIN
    return all(type(q.raw_format) in plain and type(q.split) in plain and type(q.metadata.get("domain")) in plain
               and type(q.metadata.get("reasoning_type")) in plain for q in questions)


def csv_text(rows: list[dict]) -> str:
    """The rows as `csv.writer` (excel dialect, minimal quoting, "\r\n") writes them: a field is
    written as str() gives it (repr for floats, "" for null), quoted when it holds a quote, a
    comma or a line break, quotes doubled inside. Made a column at a time: a column of strings
    none of which needs quoting is taken as it is, a column of floats by `repr`, both in C; only
    the other columns (answers with commas, say) go cell by cell. tests/test_fast_json.py compares
    it with csv.writer on random rows."""
    return csv_columns(list(zip(*map(dict.values, rows))))


def csv_columns(columns: Sequence[Sequence]) -> str:
    """`csv_text` of the rows these columns hold (the rows' values, column by column)."""
    if not columns or not len(columns[0]):
        return ""
    cells: list[Iterable[str]] = []
    for col in columns:
        kinds = set(map(type, col))
        if kinds == _STR and not _needs_quotes("".join(col)):
            cells.append(col)
        elif kinds == _FLOAT:
            cells.append(_float_texts(col))
        else:
            cells.append(map(_csv_cell, col))
    return "\r\n".join(map(",".join, zip(*cells))) + "\r\n"


_STR, _FLOAT = {str}, {float}


def _float_texts(col: Sequence[float]) -> Iterable[str]:
    """`map(repr, col)`; written by orjson in one call when every value is 0 or in [1e-4, 1],
    where its digits are repr's (see `_orjson_safe`)."""
    if _orjson is not None and not isnan(sum(col)) and max(col) <= 1.0 and min(filter(None, col), default=1.0) >= _TINY:
        return _orjson.dumps(col).decode("ascii")[1:-1].split(",")
    return map(repr, col)


def _needs_quotes(s: str) -> bool:
    return '"' in s or "," in s or "\n" in s or "\r" in s


def _csv_cell(v: object) -> str:
    s = v if type(v) is str else ("" if v is None else (repr(v) if isinstance(v, float) else str(v)))
    return '"' + s.replace('"', '""') + '"' if _needs_quotes(s) else s


def _open_for_writing(path: str | Path) -> IO[str]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8", newline="")

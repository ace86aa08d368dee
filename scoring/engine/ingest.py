"""Putting scored runs into the engine: one run, one transaction -- no half run is ever visible.

    Questions.from_gold(gold, name=..., extra=..., vocab=...)   a benchmark's questions, fields coded once
    ScoredRun.from_result(result, questions, ...)              a run as the scoring path returns it
    ScoredRun.from_official(rows, questions, ...)              a run of official scores (a score file)
    ingest(engine, questions, run)                              -> Outcome ("ingested" or "unchanged")
    remove(engine, "name" | "name@version", benchmark=None)      -> the runs removed

A run's identity is its benchmark (the key of its questions), name, file sha256, profile signature and
step (a run of official scores: the profile that reads which of its answers are right, `official_identity`):
the same identity ingested again is a no-op ("unchanged"); a changed file under the same name is
a new version, and the older one stays until removed. Two processes that ingest the same identity at
once (a DuckLake lets them) both commit; after its commit each one removes every copy but the first
(by ingest time, then run id) -- the last of them to look sees both -- and readers see the first only
in the meantime (`queries.VISIBLE`). Both copies hold the same rows (the same file, profile and gold).

Within the transaction: the benchmark's questions (when it is new), the run's row, its label
dictionary, its scored rows, its texts and its summaries (`cells`, `doc_sums`: computed by DuckDB
from the rows being written, in the same statement set). The rows go in as Arrow tables.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np
import orjson
import pyarrow as pa

from scoring.model import GoldQuestion, ScoreRow
from scoring.profiles import Profile, get_profile
from scoring.registry import METRICS, is_success_status
from scoring.runner import column_list, compact_columns
from scoring.slices import question_fields
from scoring.stats import document_clusters

from .connection import WAIT_S, Engine, EngineError
from .queries import runs as listed
from .queries import version_of
from .schema import FIELDS, FINDER_FIELDS, LIST_FIELDS, OFFICIAL, OVERALL, RECOMPUTED, SCALAR_FIELDS
from .schema import columns as schema_columns

__all__ = ["Questions", "ScoredRun", "Outcome", "ingest", "remove", "RECOMPUTED", "OFFICIAL", "UNKNOWN",
           "MAX_LABELS", "OFFICIAL_SIGNATURE", "official_identity", "before_commit", "Candidate", "identity_of", "known_identities", "RunNotFound"]

OFFICIAL_SIGNATURE = "official scores (profile not stated)"  # a run of official scores: its file states no profile


def official_identity(profile: str | Profile) -> str:
    """The signature part of a run of official scores' identity: its file states no profile, but the
    profile in force reads which of its answers are right (`is_right`), so each profile is a run of its own."""
    return f"{OFFICIAL_SIGNATURE}, right as {get_profile(profile).name} reads it"
UNKNOWN = "unknown"
MAX_LABELS = 32_000  # a field with more distinct labels is not coded (a SMALLINT code each)


class RunNotFound(EngineError):
    """`remove` found no run of that name (or it is in several benchmarks)."""


def before_commit(con: duckdb.DuckDBPyConnection, run: ScoredRun) -> None:
    """Called inside the transaction just before it commits (tests replace it: a server stopped here)."""


# ----------------------------------------------------------------------------- the questions


def _labels(value: Any, field_name: str) -> list[str]:
    """A question's labels in one field, as the breakdowns count them: a multi-valued field once per
    label it names (an empty one: `unknown`, except page_category, where it is in none); a missing
    value `unknown`."""
    if field_name in LIST_FIELDS:
        if value is None:
            return [] if field_name == "page_category" else [UNKNOWN]
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if not items:
            return [] if field_name == "page_category" else [UNKNOWN]
        out = [UNKNOWN if v is None else str(v) for v in items]
        return [v for v in out if v != UNKNOWN] if field_name == "page_category" else out
    return [UNKNOWN if value is None or (isinstance(value, float) and value != value) else str(value)]


def _finder_labels(v: Any) -> frozenset[str]:
    """The labels the finder reads in a value (scoring.slices: None none, a list its distinct items)."""
    if v is None:
        return frozenset()
    if isinstance(v, (list, tuple, set, frozenset)):
        return frozenset(str(x) for x in v if x is not None)
    return frozenset((str(v),))


def _plain(v: Any) -> tuple | None:
    """A key for a value whose labels depend on nothing but it: None, a string, a tuple of strings -- with
    its type, so 1, 1.0 and True (equal as keys) never share one; None for any other value (not memoised)."""
    t = type(v)
    if v is None or t is str or (t is tuple and all(type(x) is str for x in v)):
        return (t, v)
    return None


def _each_labels(values: Sequence[Any], field_name: str) -> list[list[str]]:
    """`_labels` of each value, worked out once per distinct plain value (20,000 questions hold a few
    dozen: a restart at 20,000 questions spent 0.6 s here)."""
    memo: dict[tuple, list[str]] = {}
    out = []
    for v in values:
        k = _plain(v)
        if k is None:
            out.append(_labels(v, field_name))
            continue
        got = memo.get(k)
        if got is None:
            got = memo[k] = _labels(v, field_name)
        out.append(got)
    return out


def _same_labels(values: Sequence[Any], codes: Any, names: list[str]) -> bool:
    """Whether the finder's values give every question the labels the codes give it (each distinct pair
    of a plain value and its codes compared once)."""
    if len(values) != len(codes):
        return False
    listed = isinstance(codes, list)
    seen: set[tuple] = set()
    for v, cs in zip(values, codes if listed else codes.tolist()):
        got = tuple(cs.tolist()) if listed else (cs,)
        k = _plain(v)
        if k is not None and (k, got) in seen:
            continue
        if _finder_labels(v) != frozenset(names[c] for c in got):
            return False
        if k is not None:
            seen.add((k, got))
    return True


@dataclass
class Questions:
    """A benchmark's questions in gold order, as the engine stores them: ids, texts, gold answers, the
    documents each names and its cluster (the first one: scoring.stats.document_clusters), and every
    breakdown field (`schema.FIELDS`) coded: `codes[field]` an int16 array (scalar fields) or a list
    of int16 arrays (multi-valued ones), `dictionary[field]` the sorted labels the codes index."""

    name: str
    key: str
    ids: list[str]
    question: list[str]
    gold: list[str]
    documents: list[list[str]]
    doc: np.ndarray  # cluster code per question
    unit: str  # "document", or "question" when no question names a document
    dictionary: dict[str, list[str]]
    codes: dict[str, Any]
    finder_fields: tuple[str, ...] = ()  # the coded fields the finder lists with the same labels (FINDER_FIELDS)
    _lists: dict[str, pa.ListArray] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def positions(self) -> dict[str, int]:
        got = self.__dict__.get("_positions")
        if got is None:
            got = self.__dict__["_positions"] = {q: i for i, q in enumerate(self.ids)}
        return got

    @classmethod
    def from_gold(cls, gold: Sequence[GoldQuestion], *, name: str = "", extra: Mapping[str, Sequence[Any]] | None = None,
                  vocab: Mapping[str, Sequence[str]] | None = None,
                  finder: Mapping[str, Sequence[Any]] | None = None,
                  fields: Mapping[str, Sequence[Any]] | None = None) -> Questions:
        """The questions of `gold`, their fields from scoring.slices.question_fields (with `extra`: the
        dashboard's document length and evidence position, one value per question) and DocVQA's
        question types. `vocab`: every label a field may take (length, position: their fixed bins),
        so that its codes do not depend on which of them occur. The key hashes what the scores
        depend on and the gold-derived labels: the same gold, the same key, the same codes.
        `finder`: the weak-slice finder's fields (scoring.slice_fields.slice_fields(...).columns):
        the coded fields it lists with the same labels per question are `finder_fields` (its length
        and position rest on declared page counts only, and may be absent or other). `fields`: the gold's
        own fields when the caller has them already (`question_fields(gold)`, no extra): they are not
        worked out again (0.1 CPU-s of 0.7 at 20,000 questions)."""
        extra = dict(extra or {})
        given = {k: v for k, v in extra.items() if k in FIELDS}
        values = question_fields(gold, given) if fields is None else {**fields, **{k: list(v) for k, v in given.items()}}
        if any(q.question_types for q in gold):
            values["question_type"] = [tuple(q.question_types) for q in gold]
        ids = [q.qid for q in gold]
        docs = [list(q.document_ids) for q in gold]
        clusters = document_clusters(docs)
        dictionary: dict[str, list[str]] = {}
        codes: dict[str, Any] = {}
        for f in FIELDS:
            if f not in values:
                continue
            per = _each_labels(values[f], f)
            names = sorted({lab for labs in per for lab in labs} | set((vocab or {}).get(f, ())))
            if len(names) > MAX_LABELS:
                continue
            index = {lab: i for i, lab in enumerate(names)}
            dictionary[f] = names
            if f in LIST_FIELDS:
                codes[f] = [np.fromiter((index[lab] for lab in labs), np.int16, len(labs)) for labs in per]
            else:
                codes[f] = np.fromiter((index[labs[0]] for labs in per), np.int16, len(per))
        finder_fields = tuple(f for f in FINDER_FIELDS if f in codes and (
            finder is None or (f in finder and _same_labels(finder[f], codes[f], dictionary[f]))))
        h = hashlib.sha256(b"lens-engine-questions/1\0")
        for q, f_values in zip(gold, zip(*(values[f] for f in values if f not in extra)) if values else ()):
            h.update(orjson.dumps([q.qid, q.question, list(q.answers), q.verification_rule, q.document_ids,
                                   [list(v) if isinstance(v, tuple) else v for v in f_values]], default=str))
            h.update(b"\0")
        return cls(name, h.hexdigest()[:32], ids, [q.question for q in gold], [q.gold_answer for q in gold], docs,
                   np.asarray(clusters.codes, dtype=np.int32), clusters.unit, dictionary, codes, finder_fields)

    def list_array(self, f: str) -> pa.ListArray:
        """A multi-valued field's codes as an Arrow list per question (made once)."""
        got = self._lists.get(f)
        if got is None:
            parts = self.codes[f]
            offsets = np.zeros(len(parts) + 1, dtype=np.int32)
            np.cumsum([len(p) for p in parts], out=offsets[1:])
            flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)
            got = self._lists[f] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.int16()))
        return got

    def table(self) -> pa.Table:
        """The `questions` rows."""
        cluster = [d[0] if d and d[0] else None for d in self.documents]
        return pa.table({
            "benchmark": pa.array([self.key] * len(self), pa.string()),
            "q": pa.array(np.arange(len(self), dtype=np.int32)),
            "question_id": pa.array(self.ids, pa.string()),
            "doc": pa.array(self.doc, pa.int32()),
            "cluster": pa.array(cluster, pa.string()),
            "documents": pa.array(self.documents, pa.list_(pa.string())),
            "question": pa.array(self.question, pa.string()),
            "gold": pa.array(self.gold, pa.string()),
        })


# ----------------------------------------------------------------------------- a scored run


def identity_of(benchmark: str, name: str, file_sha256: str, signature: str, step: int | None) -> str:
    """What makes two ingests the same run: benchmark, name, file sha256, profile signature, step."""
    text = "\0".join([benchmark, name, file_sha256, signature, "" if step is None else str(step)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Candidate:
    """A run a loader found, before it is scored: enough to know whether it is in the store already
    (`identity`), and `make()` to score it (the app's scoring path) when it is not."""

    name: str
    file_path: str
    file_sha256: str
    signature: str  # the profile signature of its identity (official scores: `official_identity(profile)`)
    step: int | None
    make: Callable[[], ScoredRun]
    source: str = RECOMPUTED

    def identity(self, benchmark: str) -> str:
        return identity_of(benchmark, self.name, self.file_sha256, self.signature, self.step)


@dataclass
class ScoredRun:
    """One run's scored rows, in columns: `rows` the gold positions it has rows for (a recomputed run
    every question -- the missing ones too, status "missing"; a run of official scores the questions
    its file scores), and per row its three metrics, whether it is right (the profile's one
    definition), attempted (a row in the file), failed (a status that is not a success), the status
    and the prediction as reported."""

    name: str
    source: str
    file_path: str
    file_sha256: str
    profile: str
    signature: str
    rows: np.ndarray
    accuracy: np.ndarray
    token_f1: np.ndarray
    anls: np.ndarray
    is_right: np.ndarray
    attempted: np.ndarray
    failed: np.ndarray
    status: list[str]
    prediction: list[str | None]
    response: list[str | None] | None = None
    step: int | None = None
    series: str | None = None
    origin: str = ""
    file_rows: int = 0
    extra_ids: int = 0  # the file's ids that name no gold question (not scored)
    extra_example: str = ""  # the first of them

    def __len__(self) -> int:
        return len(self.rows)

    def identity(self, benchmark: str) -> str:
        """What makes two ingests the same run (`identity_of`; official scores: `official_identity`)."""
        sig = official_identity(self.profile) if self.source == OFFICIAL else self.signature
        return identity_of(benchmark, self.name, self.file_sha256, sig, self.step)

    @classmethod
    def from_result(cls, result: Any, questions: Questions, *, file_path: str, file_sha256: str, step: int | None = None,
                    series: str | None = None, origin: str = "", file_rows: int = 0,
                    responses: Mapping[str, object] | None = None, only_gold: bool = False) -> ScoredRun:
        """A run the scoring path returned (`scoring.evaluate.RunResult`, or the app's run in columns),
        read through `scoring.runner.compact_columns`: every question it holds, in its order. With
        `only_gold`, the questions `questions` does not hold are left out (a run scored against another
        gold: the command line's --trend reads a harness series against its first checkpoint's gold)."""
        c = compact_columns(result)
        ids = column_list(c["question_id"])
        at = questions.positions
        kept: list[int] | None = None
        if only_gold and not all(q in at for q in ids):
            kept = [i for i, q in enumerate(ids) if q in at]
            ids = [ids[i] for i in kept]

        def column(name: str) -> Any:
            values = c[name]
            if kept is None:
                return values
            if isinstance(values, list) or hasattr(values, "to_pylist"):
                whole = column_list(values)
                return [whole[i] for i in kept]
            return np.asarray(values)[kept]

        rows = np.fromiter((at[q] for q in ids), np.int32, len(ids))
        acc, f1, an = (np.asarray(column(m), dtype=np.float64) for m in METRICS)
        status = [str(s) for s in column_list(column("status"))]
        attempted = np.asarray(column("answered"), dtype=bool)
        ok = {s: is_success_status(s) for s in set(status)}
        failed = attempted & ~np.fromiter((ok[s] for s in status), bool, len(status))
        reported = column_list(column("prediction"))
        prediction = [p if a else None for p, a in zip(reported, attempted.tolist())]
        response = None
        if responses:
            response = [_text(responses.get(q)) if a else None for q, a in zip(ids, attempted.tolist())]
        profile = result.profile
        extra = list(getattr(result, "extra_ids", None) or ())
        return cls(result.name, RECOMPUTED, file_path, file_sha256, profile.name, result.signature, rows, acc, f1, an,
                   profile.right_mask(acc), attempted, failed, status, prediction, response, step, series, origin,
                   file_rows or getattr(result, "prediction_count", 0), len(extra), str(extra[0]) if extra else "")

    @classmethod
    def from_official(cls, name: str, rows: Sequence[ScoreRow], questions: Questions, profile: str | Profile, *,
                      file_path: str, file_sha256: str, step: int | None = None, series: str | None = None) -> ScoredRun:
        """A run of official scores (a score file, not recomputed): the rows of questions in the gold,
        right as `profile` reads their Accuracy (the profile in force, as the app reads them)."""
        at = questions.positions
        kept = [r for r in rows if r.qid in at]
        extra = list(dict.fromkeys(r.qid for r in rows if r.qid not in at))
        p = get_profile(profile)
        acc = np.array([r.accuracy for r in kept], dtype=np.float64)
        status = [r.status or "success" for r in kept]
        return cls(name, OFFICIAL, file_path, file_sha256, p.name, OFFICIAL_SIGNATURE,
                   np.fromiter((at[r.qid] for r in kept), np.int32, len(kept)), acc,
                   np.array([r.token_f1 for r in kept], dtype=np.float64), np.array([r.anls for r in kept], dtype=np.float64),
                   p.right_mask(acc), np.ones(len(kept), dtype=bool),
                   np.fromiter((not is_success_status(s) for s in status), bool, len(status)), status,
                   [r.prediction or "" for r in kept], None, step, series, "", len(rows), len(extra),
                   extra[0] if extra else "")

    def check(self) -> None:
        """ValueError when the columns are not one value per row or a score is not a finite number."""
        n = len(self.rows)
        for name in ("accuracy", "token_f1", "anls", "is_right", "attempted", "failed", "status", "prediction"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"run {self.name!r}: {name} has {len(getattr(self, name))} values for {n} rows")
        if len(np.unique(self.rows)) != n:
            raise ValueError(f"run {self.name!r}: a question appears twice")
        for m in METRICS:
            if not np.all(np.isfinite(getattr(self, m))):
                raise ValueError(f"run {self.name!r}: a {m} score is not a finite number")


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()


def _scores_table(questions: Questions, run: ScoredRun, run_id: int) -> pa.Table:
    n = len(run)
    rows = run.rows
    whole = n == len(questions) and bool(np.array_equal(rows, np.arange(n)))
    cols: dict[str, pa.Array] = {
        "run_id": pa.array(np.full(n, run_id, dtype=np.int64)),
        "q": pa.array(rows, pa.int32()),
        "doc": pa.array(questions.doc[rows], pa.int32()),
        "accuracy": pa.array(run.accuracy, pa.float64()),
        "token_f1": pa.array(run.token_f1, pa.float64()),
        "anls": pa.array(run.anls, pa.float64()),
        "is_right": pa.array(np.asarray(run.is_right, dtype=bool)),
        "attempted": pa.array(np.asarray(run.attempted, dtype=bool)),
        "failed": pa.array(np.asarray(run.failed, dtype=bool)),
        "status": pa.array(run.status, pa.string()),
        "reason": pa.nulls(n, pa.int16()),
    }
    for f in SCALAR_FIELDS:
        cols[f] = pa.array(questions.codes[f][rows], pa.int16()) if f in questions.codes else pa.nulls(n, pa.int16())
    for f in LIST_FIELDS:
        if f in questions.codes:
            arr = questions.list_array(f)
            cols[f] = arr if whole else arr.take(pa.array(rows))
        else:
            cols[f] = pa.nulls(n, pa.list_(pa.int16()))
    cols["step"] = pa.array(np.full(n, run.step, dtype=np.int64)) if run.step is not None else pa.nulls(n, pa.int64())
    return pa.table(cols)


def _texts_table(run: ScoredRun, run_id: int) -> pa.Table:
    keep = np.flatnonzero(np.asarray(run.attempted, dtype=bool))
    pred = [run.prediction[i] for i in keep.tolist()]
    resp = [run.response[i] for i in keep.tolist()] if run.response is not None else None
    return pa.table({
        "run_id": pa.array(np.full(len(keep), run_id, dtype=np.int64)),
        "q": pa.array(run.rows[keep], pa.int32()),
        "prediction": pa.array(pred, pa.string()),
        "response": pa.array(resp, pa.string()) if resp is not None else pa.nulls(len(keep), pa.string()),
        "judge": pa.nulls(len(keep), pa.string()),
    })


def _labels_table(questions: Questions, run: ScoredRun, run_id: int) -> pa.Table:
    """The dictionary of the codes this run's rows use (labels that occur among them)."""
    fields, codes, labels = [], [], []
    rows = run.rows
    for f, names in questions.dictionary.items():
        c = questions.codes[f]
        if f in LIST_FIELDS:
            used = set(np.concatenate([c[i] for i in rows.tolist()]).tolist()) if len(rows) else set()
        else:
            used = set(np.unique(c[rows]).tolist())
        for k in sorted(used):
            fields.append(f)
            codes.append(k)
            labels.append(names[k])
    return pa.table({"run_id": pa.array(np.full(len(fields), run_id, dtype=np.int64)), "field": pa.array(fields, pa.string()),
                     "code": pa.array(codes, pa.int16()), "label": pa.array(labels, pa.string())})


# ----------------------------------------------------------------------------- the summaries, by DuckDB

_SUMS = ("count(*) FILTER (attempted), fsum(accuracy) FILTER (attempted), fsum(token_f1) FILTER (attempted), "
         "fsum(anls) FILTER (attempted), count(*) FILTER (attempted AND is_right), count(*) FILTER (failed), "
         "count(DISTINCT doc) FILTER (attempted), count(*) FILTER (NOT attempted), count(DISTINCT q), count(DISTINCT doc)")


def _summaries(con: duckdb.DuckDBPyConnection, incoming: str, fields: Sequence[str]) -> None:
    """`cells` and `doc_sums` of the rows in `incoming` (one run's), written from them: every field's
    cells in one statement (the fields unpivoted into (field, code) rows, a multi-valued one unnested)."""
    base = "run_id, q, doc, accuracy, token_f1, anls, is_right, attempted, failed"
    parts = [f"SELECT {base}, '{OVERALL}' AS field, 0::SMALLINT AS code FROM {incoming}"]
    scalars = [f for f in fields if f not in LIST_FIELDS]
    lists = [f for f in fields if f in LIST_FIELDS]
    if scalars:
        parts.append(f"SELECT {base}, field, code FROM (UNPIVOT (SELECT {base}, {', '.join(scalars)} FROM {incoming}) "
                     f"ON {', '.join(scalars)} INTO NAME field VALUE code)")
    if lists:
        parts.append(f"SELECT {base}, field, unnest(codes) AS code FROM (UNPIVOT (SELECT {base}, {', '.join(lists)} FROM "
                     f"{incoming}) ON {', '.join(lists)} INTO NAME field VALUE codes)")
    con.execute(f"INSERT INTO cells SELECT any_value(run_id), field, code, {_SUMS} FROM ({' UNION ALL '.join(parts)}) "
                "GROUP BY field, code")
    con.execute(f"INSERT INTO doc_sums SELECT any_value(run_id), doc, count(*), fsum(accuracy), fsum(token_f1), fsum(anls), "
                f"count(*) FILTER (is_right) FROM {incoming} WHERE attempted GROUP BY doc")


# ----------------------------------------------------------------------------- ingest


@dataclass
class Outcome:
    """What an ingest did: `status` "ingested" or "unchanged" (the same identity was there, or was
    written at the same moment by another job), the run's id and version, and one sentence."""

    status: str
    run_id: int
    name: str
    version: int
    rows: int
    message: str


_VISIBLE = "run_id NOT IN (SELECT run_id FROM removals)"


def _columns(table: str) -> str:
    return ", ".join(schema_columns(table))


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


_ID_EPOCH_MS = 1_577_836_800_000  # 2020-01-01 UTC: 41 bits of milliseconds from it last until 2089
_ID_RANDOM_BITS = 22
_last_id = 0
_id_lock = threading.Lock()


def new_run_id() -> int:
    """A run's id: milliseconds since 2020 in the high 41 bits and 22 random bits below (a positive int64),
    and above the last id this process gave. Ids so rise in ingest order, and the rows of one run sit in
    row groups whose run_id range is narrow: DuckDB skips every other row group when a query asks for a few
    runs (`run_id IN (...)`). With wholly random ids each row group's [min, max] spanned nearly all ids and
    a query for 2 runs of 1,000 x 20,000 read 11.6M rows to keep 40,000 (bench/bench_engine_ids.py). Two jobs
    in the same millisecond draw 22 random bits each (a clash in 4 million such pairs)."""
    global _last_id
    drawn = ((time.time_ns() // 1_000_000 - _ID_EPOCH_MS) << _ID_RANDOM_BITS) | secrets.randbits(_ID_RANDOM_BITS)
    with _id_lock:
        _last_id = max(drawn, _last_id + 1)
        return _last_id


def ingest(engine: Engine, questions: Questions, run: ScoredRun, *, wait_s: float = WAIT_S,
           on_wait: Callable[[str], object] | None = None) -> Outcome:
    """Write `run` (scored against `questions`) in one transaction, unless the same identity is
    visible already. EngineError (one sentence, no credential) when the store cannot be written:
    then nothing of the run is visible."""
    run.check()
    benchmark = questions.key
    identity = run.identity(benchmark)
    run_id = new_run_id()
    tables = {"lens_in_scores": _scores_table(questions, run, run_id), "lens_in_texts": _texts_table(run, run_id),
              "lens_in_labels": _labels_table(questions, run, run_id)}
    coded = [f for f in FIELDS if f in questions.codes]
    host, pid = socket.gethostname(), os.getpid()

    def write(con: duckdb.DuckDBPyConnection) -> int | None:
        found = con.execute(f"SELECT run_id FROM runs WHERE identity = ? AND {_VISIBLE} ORDER BY ingested_at, run_id LIMIT 1",
                            [identity]).fetchone()
        if found:
            return int(found[0])
        now = _now()
        if not (con.execute("SELECT count(*) FROM benchmarks WHERE benchmark = ?", [benchmark]).fetchone() or (0,))[0]:
            con.execute("INSERT INTO benchmarks VALUES (?, ?, ?, ?, ?)", [benchmark, questions.name, len(questions),
                                                                         questions.unit, now])
            con.register("lens_in_questions", questions.table())
            try:
                con.execute(f"INSERT INTO questions SELECT {_columns('questions')} FROM lens_in_questions")
            finally:
                con.unregister("lens_in_questions")
        names = schema_columns("runs")
        con.execute(f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                    [run_id, identity, benchmark, run.name, run.source, run.file_path, run.file_sha256, run.profile,
                     run.signature, run.step, run.series, run.origin, len(run), run.file_rows, now, host, pid,
                     list(questions.finder_fields), run.extra_ids, run.extra_example])
        con.execute(f"INSERT INTO labels SELECT {_columns('labels')} FROM lens_in_labels")
        con.execute(f"INSERT INTO scores SELECT {_columns('scores')} FROM lens_in_scores")
        con.execute(f"INSERT INTO texts SELECT {_columns('texts')} FROM lens_in_texts")
        _summaries(con, "lens_in_scores", coded)
        before_commit(con, run)
        return None

    with engine.write(wait_s=wait_s, on_wait=on_wait) as con:
        for name, table in tables.items():
            con.register(name, table)
        try:
            existing = engine.transaction(con, write)
        finally:
            for name in tables:
                con.unregister(name)
        if existing is not None:
            version = _version(con, existing)
            return Outcome("unchanged", existing, run.name, version, len(run),
                           f"{run.name}: unchanged (this file under this profile is version {version}, already ingested)")
        # the same file written at the same moment by another job (a DuckLake lets both commit): the first copy
        # (ingest time, then run id) stays and the others go, whichever job sees them -- the last to look sees all
        copies = [int(r[0]) for r in con.execute(f"SELECT run_id FROM runs WHERE identity = ? AND {_VISIBLE} "
                                                 "ORDER BY ingested_at, run_id", [identity]).fetchall()]
        if len(copies) > 1:
            _remove_ids(engine, con, copies[1:], host, pid)
        if copies and copies[0] != run_id:
            version = _version(con, copies[0])
            return Outcome("unchanged", copies[0], run.name, version, len(run),
                           f"{run.name}: unchanged (another job ingested the same file at the same moment: version {version})")
        version = _version(con, run_id)
        return Outcome("ingested", run_id, run.name, version, len(run),
                       f"{run.name}: ingested as version {version} ({len(run):,} questions)")


def _version(con: duckdb.DuckDBPyConnection, run_id: int) -> int:
    return version_of(con, run_id)


def known_identities(con: duckdb.DuckDBPyConnection, benchmark: str) -> set[str]:
    """The identities of the visible runs of a benchmark (what an ingest of them would leave unchanged)."""
    return {str(r[0]) for r in con.execute(f"SELECT DISTINCT identity FROM runs WHERE benchmark = ? AND {_VISIBLE}",
                                             [benchmark]).fetchall()}


def _remove_ids(engine: Engine, con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], host: str, pid: int) -> None:
    ids = [int(r) for r in run_ids]

    def write(c: duckdb.DuckDBPyConnection) -> None:
        now = _now()
        c.executemany("INSERT INTO removals VALUES (?, ?, ?, ?)", [[r, now, host, pid] for r in ids])
        marks = ", ".join("?" for _ in ids)
        for table in ("scores", "texts", "labels", "cells", "doc_sums"):
            c.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", ids)

    engine.transaction(con, write)


def remove(engine: Engine, run: str, *, benchmark: str | None = None, wait_s: float = WAIT_S,
           on_wait: Callable[[str], object] | None = None) -> list[dict]:
    """Remove a run: `name` (every version visible) or `name@version` (that one), in `benchmark`
    (a key) or -- when None -- in the one benchmark that has a run of that name. Returns what was
    removed (name, version, run_id, benchmark); EngineError when nothing matches or the name is in
    several benchmarks."""
    name, sep, ver = run.rpartition("@")
    if not sep or not ver.isdigit():
        name, ver = run, ""
    with engine.write(wait_s=wait_s, on_wait=on_wait) as con:
        found = [r for r in listed(con, benchmark, current=False) if r["name"] == name and (not ver or r["version"] == int(ver))]
        if not found:
            known = sorted({r["name"] for r in listed(con, benchmark, current=False)})
            raise RunNotFound(f"no run {run!r} in {engine.shown()}" + (f" (runs: {', '.join(known[:20])}"
                                                                       f"{' …' if len(known) > 20 else ''})" if known else " (it holds no run)"))
        places = sorted({(r["benchmark"], r["benchmark_name"]) for r in found})
        if len(places) > 1:
            raise RunNotFound(f"run {name!r} is in {len(places)} benchmarks ({', '.join(f'{n or k}' for k, n in places)}): "
                              "name the benchmark with --benchmark")
        _remove_ids(engine, con, [r["run_id"] for r in found], socket.gethostname(), os.getpid())
        return found



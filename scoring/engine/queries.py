"""The questions the pages, the command line and CI jobs ask of the scored runs, written once, as
queries on the engine (an embedded DuckDB or a DuckLake: `connection.Engine`). No Streamlit, no
pandas: each function takes a DuckDB connection and returns plain lists of dicts or numpy arrays --
only what the page shows.

    runs(con, benchmark, current=True)        the runs visible (the latest version of each name and step)
    leaderboard(con, benchmark | run_ids)     per run: attempted, answered, missing, failed, metric means
    breakdown(con, field, ...)                per run x label: count and metric means over attempted questions
    flip_table(con, run_a, run_b, fields)     both right / only A / only B / both wrong, overall and per slice,
                                              with the sign-flip p of the document sums and McNemar's p
    document_sums(con, run_a, run_b)          per document: paired questions and the sums of A - B
                                              (what scoring.stats.paired_by_document resamples and tests)
    finder_counts(con, run_id)                per condition field = value: questions and documents, and
                                              whether the finder tests it (scoring.slices' thresholds)
    texts(con, run_id, positions)             the texts of the rows a page shows
    answer(con, run_id, q)                    one row of a run (a clicked cell): its scores, status and prediction
    rows(con, run_ids, texts=..., positions=...)   the scored rows of a few runs (a Compare, an explorer), as Arrow
    run_values(con, run_id, size)             one run's scores and flags over the gold, in gold order
    attempted_by_all(con, run_ids)            the gold positions every one of these runs attempted
    means_over(con, run_ids, positions)       per run: the metrics' means over the positions it attempted
    breakdown_by(con, run_ids, q, code, ...)  per run x code of any labelling of the questions (a gold
                                              metadata key, saved slices): count and sums over attempted rows
    right_runs(con, run_ids, q)               the runs right on one question
    right_rows(con, run_ids)                  per run, the gold positions it got right
    checkpoint_matrix(con, run_ids, positions, metrics)   runs x questions: the metrics' scores, attempted
                                              and right (the trends' and the checkpoint matrix's data)
    status_counts(con, run_ids)               per run and status: the rows it attempted

The leaderboard, breakdowns and finder counts read the per-run summaries written at ingest (`cells`),
never the rows; flips and document sums join two runs' rows inside the engine.

Which runs are visible: a run with no row in `removals`; of two ingests of one identity, the first
(ingest time, then run id). A run's version is the rank of its identity's first ingest among the
identities of its (benchmark, name, step).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from scoring.registry import METRICS, MIN_DOCUMENTS
from scoring.slices import MIN_QUESTIONS, MIN_SHARE, MIN_SIDE_DOCUMENTS
from scoring.stats import mcnemar_exact, sign_flip_p

from .schema import FINDER_FIELDS, LIST_FIELDS, OVERALL, RECOMPUTED

__all__ = ["VISIBLE", "runs", "version_of", "leaderboard", "breakdown", "flip_table", "document_sums", "finder_counts",
           "texts", "answer", "question_rows", "FLIP_KINDS", "COMPARE_FIELDS", "FINDER_FIELDS", "benchmarks", "rows", "run_values",
           "attempted_by_all", "means_over", "breakdown_by", "right_runs", "right_rows", "status_counts", "ROW_COLUMNS",
           "checkpoint_matrix"]

# the comparison's slices (scoring.model.BREAKDOWNS, in the order the Compare page shows them)
COMPARE_FIELDS = ("reasoning_type", "evidence_source", "domain", "difficulty", "answer_format", "doc_type", "split")
FLIP_KINDS = ("both_right", "only_a", "only_b", "both_wrong")

# every run not removed, with its version; of two copies of one identity, the first
VISIBLE = """
WITH lens_ident AS (
    SELECT benchmark, name, step, identity, min(ingested_at) AS first_at FROM runs GROUP BY benchmark, name, step, identity
), lens_versions AS (
    SELECT identity, row_number() OVER (PARTITION BY benchmark, name, step ORDER BY first_at, identity) AS version
    FROM lens_ident
), lens_visible AS (
    SELECT r.*, v.version FROM runs r JOIN lens_versions v ON r.identity = v.identity
    WHERE r.run_id NOT IN (SELECT run_id FROM removals)
    QUALIFY row_number() OVER (PARTITION BY r.identity ORDER BY r.ingested_at, r.run_id) = 1
), lens_current AS (
    SELECT * FROM lens_visible
    QUALIFY row_number() OVER (PARTITION BY benchmark, name, step ORDER BY version DESC) = 1
)
"""


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict]:
    names = [d[0] for d in cur.description or ()]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def benchmarks(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every benchmark with runs: key, name, questions, unit, and how many runs are visible."""
    return _dicts(con.execute(VISIBLE + """
        SELECT b.benchmark, any_value(b.name) AS name, any_value(b.questions) AS questions, any_value(b.unit) AS unit,
               count(DISTINCT c.run_id) AS runs
        FROM benchmarks b LEFT JOIN lens_current c ON c.benchmark = b.benchmark
        GROUP BY b.benchmark ORDER BY name, b.benchmark"""))


def runs(con: duckdb.DuckDBPyConnection, benchmark: str | None = None, *, current: bool = True) -> list[dict]:
    """The visible runs (of `benchmark`, or of every one), by name, step and version: run_id, name,
    version, step, series, source, profile, signature, file_path, file_sha256, origin, questions,
    file_rows, ingested_at, benchmark, identity, extra_ids and extra_example (the file's ids that name no
    gold question: how many, the first) and the benchmark's name. `current`: only the latest version of each
    (benchmark, name, step)."""
    table = "lens_current" if current else "lens_visible"
    where, params = ("WHERE r.benchmark = ?", [benchmark]) if benchmark is not None else ("", [])
    return _dicts(con.execute(VISIBLE + f"""
        SELECT r.run_id, r.name, r.version, r.step, r.series, r.source, r.profile, r.signature, r.file_path,
               r.file_sha256, r.origin, r.questions, r.file_rows, r.ingested_at, r.benchmark, r.identity,
               coalesce(r.extra_ids, 0) AS extra_ids, coalesce(r.extra_example, '') AS extra_example,
               (SELECT any_value(b.name) FROM benchmarks b WHERE b.benchmark = r.benchmark) AS benchmark_name
        FROM {table} r {where} ORDER BY r.name, r.step NULLS FIRST, r.version""", params))


def version_of(con: duckdb.DuckDBPyConnection, run_id: int) -> int:
    """The version of a run (its identity's rank in its name and step), visible or not."""
    got = con.execute("""
        WITH lens_ident AS (
            SELECT benchmark, name, step, identity, min(ingested_at) AS first_at FROM runs GROUP BY benchmark, name, step, identity
        ), lens_versions AS (
            SELECT identity, row_number() OVER (PARTITION BY benchmark, name, step ORDER BY first_at, identity) AS version
            FROM lens_ident
        )
        SELECT v.version FROM runs r JOIN lens_versions v ON r.identity = v.identity WHERE r.run_id = ?""",
                      [int(run_id)]).fetchone()
    return int(got[0]) if got else 0


def _chosen(benchmark: str | None, run_ids: Sequence[int] | None) -> tuple[str, list]:
    """The visible runs asked for: a benchmark's current ones, or these run ids (visible ones)."""
    if run_ids is not None:
        ids = [int(r) for r in run_ids]
        marks = ", ".join("?" for _ in ids) or "NULL"
        return f"SELECT * FROM lens_visible WHERE run_id IN ({marks})", ids
    if benchmark is None:
        return "SELECT * FROM lens_current", []
    return "SELECT * FROM lens_current WHERE benchmark = ?", [benchmark]


def _mean(total: float | None, n: int) -> float:
    return float(total or 0.0) / n if n else math.nan


def leaderboard(con: duckdb.DuckDBPyConnection, benchmark: str | None = None, run_ids: Sequence[int] | None = None
                ) -> list[dict]:
    """One row per run (a benchmark's current runs, or `run_ids`), from the summaries: run_id, name,
    version, step, source, signature, questions (= attempted: the rows its file has, answered or
    failed), the three metrics' means over them (a recomputed run's as the release rounds them, 6 decimals;
    0 for none),
    right (answers right by the profile), answered, missing, failed, and how its file joins the gold
    (file_rows, extra_ids, extra_example). Ordered by Accuracy, best first."""
    chosen, params = _chosen(benchmark, run_ids)
    rows = _dicts(con.execute(VISIBLE + f"""
        SELECT r.run_id, r.name, r.version, r.step, r.series, r.source, r.profile, r.signature, r.origin, r.file_rows,
               coalesce(r.extra_ids, 0) AS extra_ids, coalesce(r.extra_example, '') AS extra_example,
               c.n, c.sum_accuracy, c.sum_token_f1, c.sum_anls, c.sum_right, c.failed, c.missing
        FROM ({chosen}) r JOIN cells c ON c.run_id = r.run_id AND c.field = '{OVERALL}'
        ORDER BY r.name, r.step NULLS FIRST, r.version""", params))
    out = []
    for r in rows:
        n = int(r["n"] or 0)
        # a recomputed run's means as the release rounds them (scoring.aggregate.bucket); official scores' as read
        keep = (lambda x: round(x, 6)) if r["source"] == RECOMPUTED else float
        means = {m: keep(float(r[f"sum_{m}"]) / n) if n else 0.0 for m in METRICS}
        out.append({k: r[k] for k in ("run_id", "name", "version", "step", "series", "source", "profile", "signature",
                                      "origin", "file_rows", "extra_ids", "extra_example")}
                   | {"questions": n, **means, "right": int(r["sum_right"] or 0), "attempted": n,
                      "answered": n - int(r["failed"] or 0), "missing": int(r["missing"] or 0), "failed": int(r["failed"] or 0)})
    out.sort(key=lambda r: -r["accuracy"])  # stable: name order among equals
    return out


def breakdown(con: duckdb.DuckDBPyConnection, field: str, benchmark: str | None = None,
              run_ids: Sequence[int] | None = None) -> list[dict]:
    """Per run and label of `field`, over the questions each run attempted (a question once per label
    it names in a multi-valued field): run_id, name, label, count, the three metrics' means and
    `right` (how many right). From the summaries; ordered by run name, then label."""
    chosen, params = _chosen(benchmark, run_ids)
    rows = _dicts(con.execute(VISIBLE + f"""
        SELECT r.run_id, r.name, r.version, r.step, l.label, c.n, c.sum_accuracy, c.sum_token_f1, c.sum_anls, c.sum_right
        FROM ({chosen}) r JOIN cells c ON c.run_id = r.run_id AND c.field = ?
             JOIN labels l ON l.run_id = c.run_id AND l.field = c.field AND l.code = c.code
        WHERE c.n > 0
        ORDER BY r.name, r.step NULLS FIRST, r.version, l.label""", [*params, field]))
    return [{"run_id": r["run_id"], "name": r["name"], "version": r["version"], "step": r["step"], "label": r["label"],
             "count": int(r["n"]), **{m: _mean(r[f"sum_{m}"], int(r["n"])) for m in METRICS}, "right": int(r["sum_right"])}
            for r in rows]


def _unit(con: duckdb.DuckDBPyConnection, run_id: int) -> str:
    got = con.execute("SELECT any_value(b.unit) FROM runs r JOIN benchmarks b ON b.benchmark = r.benchmark WHERE r.run_id = ?",
                      [int(run_id)]).fetchone()
    return str(got[0]) if got and got[0] else "document"


def _paired(run_a: int, run_b: int, columns: str) -> str:
    """The rows of the questions both runs attempted, A's columns and B's as `<name>_b`."""
    return f"""(SELECT a.q, a.doc, a.is_right AS ra, b.is_right AS rb, {columns}
               FROM scores a JOIN scores b ON a.q = b.q
               WHERE a.run_id = {int(run_a)} AND b.run_id = {int(run_b)} AND a.attempted AND b.attempted)"""


_FLIP_COUNTS = ("count(*) FILTER (ra AND rb), count(*) FILTER (ra AND NOT rb), count(*) FILTER (rb AND NOT ra), "
                "count(*) FILTER (NOT ra AND NOT rb)")


def flip_table(con: duckdb.DuckDBPyConnection, run_a: int, run_b: int, fields: Sequence[str] = COMPARE_FIELDS) -> list[dict]:
    """Accuracy flips of run A against run B over the questions both attempted, overall ("overall",
    "all questions") and per label of each field that has at least two labels: field, label,
    questions, both_right, only_a, only_b, both_wrong, documents (units), unit, p (the sign-flip test
    of the per-document sums of right A - right B: exact) and p_mcnemar (McNemar's exact p on the
    discordant questions). A question is counted once per label, however often it names it. Right
    and wrong: each run's `is_right` (the profile's one definition)."""
    fields = [f for f in fields if f in COMPARE_FIELDS or f in LIST_FIELDS or f in ("length", "position")]
    labels: dict[str, dict[int, str]] = {}
    for f, code, label in con.execute(
            "SELECT DISTINCT field, code, label FROM labels WHERE run_id IN (?, ?) ORDER BY field, code",
            [int(run_a), int(run_b)]).fetchall():
        labels.setdefault(f, {})[int(code)] = str(label)
    cols = ", ".join(f"a.{f}" for f in fields)
    parts = [f"SELECT '{OVERALL}' AS field, 0::SMALLINT AS code, doc, {_FLIP_COUNTS} FROM lens_pairs GROUP BY doc"]
    for f in fields:
        if f in LIST_FIELDS:
            parts.append(f"SELECT '{f}', code, doc, {_FLIP_COUNTS} FROM (SELECT DISTINCT q, doc, ra, rb, code FROM "
                         f"(SELECT q, doc, ra, rb, unnest({f}) AS code FROM lens_pairs)) GROUP BY code, doc")
        else:
            parts.append(f"SELECT '{f}', {f}, doc, {_FLIP_COUNTS} FROM lens_pairs WHERE {f} IS NOT NULL GROUP BY {f}, doc")
    got = con.execute(f"WITH lens_pairs AS {_paired(run_a, run_b, cols or 'a.q AS q2')} "
                      + " UNION ALL ".join(parts)).fetchall()
    cells: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {}
    for f, code, _doc, *counts in got:
        cells.setdefault((str(f), int(code)), []).append(tuple(int(c) for c in counts))  # type: ignore[arg-type]
    unit = _unit(con, run_a)

    def row(f: str, code: int, label: str) -> dict:
        docs = cells.get((f, code), [])
        totals = [sum(d[k] for d in docs) for k in range(4)]
        n = sum(totals)
        sums = np.array([d[1] - d[2] for d in docs], dtype=float)
        return {"field": f, "label": label, "questions": n, **dict(zip(FLIP_KINDS, totals)), "documents": len(docs),
                "unit": unit, "p": sign_flip_p(sums)[0] if n else math.nan,
                "p_mcnemar": mcnemar_exact(totals[1], totals[2]) if n else math.nan}

    out = [row(OVERALL, 0, "all questions")]
    for f in fields:
        names = labels.get(f, {})
        if len(set(names.values())) < 2:
            continue
        for code, label in sorted(names.items(), key=lambda kv: kv[1]):
            out.append(row(f, code, label))
    return out


def document_sums(con: duckdb.DuckDBPyConnection, run_a: int, run_b: int) -> dict[str, np.ndarray]:
    """Per document (cluster) of the questions both runs attempted, in the order of its first such
    question: `doc` (its code), `n` (paired questions), `<metric>` the sum of A - B of each metric and
    `right` that of right A - right B, plus `first` (the gold position of its first paired question).
    `scoring.stats` resamples and tests exactly these: `cluster_bootstrap_means(sums, n, ...)`,
    `sign_flip_p(sums)`."""
    diffs = ", ".join(f"fsum(a.{m} - b.{m}) AS {m}" for m in METRICS)
    got = con.execute(f"""
        SELECT a.doc, count(*) AS n, {diffs}, sum(a.is_right::INTEGER - b.is_right::INTEGER) AS "right", min(a.q) AS first
        FROM scores a JOIN scores b ON a.q = b.q
        WHERE a.run_id = ? AND b.run_id = ? AND a.attempted AND b.attempted
        GROUP BY a.doc ORDER BY first""", [int(run_a), int(run_b)]).fetchnumpy()
    out = {k: np.asarray(v) for k, v in got.items()}
    for k in ("doc", "n", "right", "first"):
        out[k] = out[k].astype(np.int64)
    for m in METRICS:
        out[m] = out[m].astype(np.float64)
    return out


def finder_counts(con: duckdb.DuckDBPyConnection, run_id: int, *, min_questions: int | None = None,
                  min_documents: int = MIN_DOCUMENTS, fields: Sequence[str] | None = None) -> dict[str, Any]:
    """What the finder (scoring.slices.find_weak_slices) would test for one run, from the summaries:
    `questions` and `documents` (the run's rows: its population), `min_questions` (default max(30,
    0.5 % of the questions)), `min_documents`, `conditions` (one per field = label: field, label,
    questions, documents, tested -- at least min_questions questions, not every question, at least
    min_documents documents and 2), `candidates` (how many single conditions are tested) and
    `skipped_fields` (fields with no condition that splits the questions). `fields`: by default the
    finder's fields the run was ingested with (`runs.finder_fields`; the meta.* keys are not coded)."""
    total = con.execute(f"SELECT questions_all, documents_all FROM cells WHERE run_id = ? AND field = '{OVERALL}'",
                        [int(run_id)]).fetchone()
    n, g = (int(total[0]), int(total[1])) if total else (0, 0)
    if fields is None:
        got = con.execute("SELECT finder_fields FROM runs WHERE run_id = ?", [int(run_id)]).fetchone()
        fields = [f for f in FINDER_FIELDS if got and got[0] is not None and f in got[0]]
    min_q = int(min_questions) if min_questions is not None else max(MIN_QUESTIONS, math.ceil(MIN_SHARE * n))
    min_d = max(MIN_SIDE_DOCUMENTS, int(min_documents))
    marks = ", ".join("?" for _ in fields) or "NULL"
    rows = con.execute(f"""
        SELECT c.field, l.label, c.questions_all, c.documents_all
        FROM cells c JOIN labels l ON l.run_id = c.run_id AND l.field = c.field AND l.code = c.code
        WHERE c.run_id = ? AND c.field IN ({marks}) AND c.questions_all > 0
        ORDER BY c.field, l.label""", [int(run_id), *fields]).fetchall()
    by_field: dict[str, list[dict]] = {}
    for f, label, q, d in rows:
        by_field.setdefault(str(f), []).append({"field": str(f), "label": str(label), "questions": int(q),
                                                "documents": int(d)})
    conditions: list[dict] = []
    skipped: list[str] = []
    for f in fields:
        kept = [c for c in by_field.get(f, []) if c["questions"] < n]  # a value every question has is no condition
        if not kept:
            skipped.append(f)
            continue
        for c in kept:
            c["tested"] = c["questions"] >= min_q and c["documents"] >= min_d
            conditions.append(c)
    return {"questions": n, "documents": g, "min_questions": min_q, "min_documents": int(min_documents),
            "fields": list(fields), "conditions": conditions, "candidates": sum(1 for c in conditions if c["tested"]),
            "skipped_fields": skipped}


def texts(con: duckdb.DuckDBPyConnection, run_id: int, positions: Sequence[int]) -> dict[int, dict[str, str | None]]:
    """The texts of these rows of a run (gold positions): q -> prediction, response, judge (rows it did
    not attempt have none)."""
    qs = [int(q) for q in positions]
    if not qs:
        return {}
    marks = ", ".join("?" for _ in qs)
    got = con.execute(f"SELECT q, prediction, response, judge FROM texts WHERE run_id = ? AND q IN ({marks})",
                      [int(run_id), *qs]).fetchall()
    return {int(q): {"prediction": p, "response": r, "judge": j} for q, p, r, j in got}


def question_rows(con: duckdb.DuckDBPyConnection, benchmark: str, positions: Sequence[int]) -> dict[int, dict]:
    """The questions at these gold positions: q -> question_id, question, gold, documents, cluster."""
    qs = [int(q) for q in positions]
    if not qs:
        return {}
    marks = ", ".join("?" for _ in qs)
    got = con.execute(f"""SELECT q, any_value(question_id), any_value(question), any_value(gold), any_value(documents),
                                 any_value(cluster)
                          FROM questions WHERE benchmark = ? AND q IN ({marks}) GROUP BY q""", [benchmark, *qs]).fetchall()
    return {int(q): {"question_id": i, "question": t, "gold": g, "documents": list(d or []), "cluster": c}
            for q, i, t, g, d, c in got}


# ----------------------------------------------------------------------------- a few runs' rows, and any labelling

ROW_COLUMNS = ("run_id", "q", "doc", "accuracy", "token_f1", "anls", "is_right", "attempted", "failed", "status")


def _id_list(run_ids: Sequence[int]) -> list[int]:
    return [int(r) for r in run_ids]


def _positions_table(positions: Sequence[int] | np.ndarray) -> pa.Table:
    return pa.table({"q": pa.array(np.asarray(positions, dtype=np.int32))})


def rows(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], *, texts: bool = True,
         positions: Sequence[int] | np.ndarray | None = None, attempted_only: bool = False) -> pa.Table:
    """The scored rows of these runs (ROW_COLUMNS, and with `texts` the prediction as the release reports
    it: NULL where the run has no answer), run by run in the order of `run_ids`, each in gold order --
    only the rows at `positions` (gold positions) when given, only those attempted with `attempted_only`.
    An Arrow table: a page builds the one frame it shows from it."""
    ids = _id_list(run_ids)
    if not ids:
        return pa.table({c: pa.array([], t) for c, t in zip((*ROW_COLUMNS, *(("prediction",) if texts else ())),
                                                            (pa.int64(), pa.int32(), pa.int32(), pa.float64(), pa.float64(),
                                                             pa.float64(), pa.bool_(), pa.bool_(), pa.bool_(), pa.string(),
                                                             pa.string()))})
    marks = ", ".join("?" for _ in ids)
    where = [f"s.run_id IN ({marks})"]
    if attempted_only:
        where.append("s.attempted")
    if positions is not None:
        con.register("lens_at", _positions_table(positions))
        where.append("s.q IN (SELECT q FROM lens_at)")
    cols = ", ".join(f"s.{c}" for c in ROW_COLUMNS)
    text = ", t.prediction" if texts else ""
    # the texts' run filter said inside the join: DuckDB does not push it into a LEFT JOIN's right side, and read
    # every run's texts (0.30 s for two runs of a 1,000-run store; 0.02 s with it)
    join = f" LEFT JOIN (SELECT run_id, q, prediction FROM texts WHERE run_id IN ({marks})) t ON t.run_id = s.run_id AND t.q = s.q" \
        if texts else ""
    try:
        return con.execute(f"SELECT {cols}{text} FROM scores s{join} WHERE {' AND '.join(where)} "
                           f"ORDER BY list_position(?::BIGINT[], s.run_id), s.q", [*(ids if texts else ()), *ids, ids]).to_arrow_table()
    finally:
        if positions is not None:
            con.unregister("lens_at")


def answer(con: duckdb.DuckDBPyConnection, run_id: int, q: int) -> dict[str, Any] | None:
    """One row of a run, at gold position `q` (the checkpoint matrix's clicked cell): ROW_COLUMNS and the
    prediction as the release reports it (NULL where the run has no answer) -- `rows` over that one
    position, its text read for it alone; None when the run holds no row for the question."""
    got = rows(con, [run_id], positions=[int(q)])
    return got.slice(0, 1).to_pylist()[0] if got.num_rows else None


def run_values(con: duckdb.DuckDBPyConnection, run_id: int, size: int) -> dict[str, np.ndarray]:
    """One run over the gold (`size` questions, gold order): accuracy, token_f1, anls (NaN where it has no
    row), is_right, attempted, failed (False there), and `present` (it has a row: a recomputed run has one
    for every question, the missing ones too)."""
    got = con.execute("SELECT q, accuracy, token_f1, anls, is_right, attempted, failed FROM scores WHERE run_id = ?",
                      [int(run_id)]).fetchnumpy()
    q = np.asarray(got["q"], dtype=np.int64)
    out: dict[str, np.ndarray] = {}
    for m in METRICS:
        values = np.full(size, np.nan)
        values[q] = np.asarray(got[m], dtype=np.float64)
        out[m] = values
    for flag in ("is_right", "attempted", "failed"):
        values = np.zeros(size, dtype=bool)
        values[q] = np.asarray(got[flag], dtype=bool)
        out[flag] = values
    present = np.zeros(size, dtype=bool)
    present[q] = True
    out["present"] = present
    return out


def attempted_by_all(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int]) -> np.ndarray:
    """The gold positions every one of these runs attempted (answered or failed), sorted. A run holds one
    row per question it was scored on (ingest), so a question's attempted rows among the runs count its
    runs: count(*), not count(DISTINCT run_id), whose per-question sets of run ids took DuckDB to its
    memory limit at 1,000 runs (a restart's high-water mark 1,262 MB, 514 MB with count(*); 1.76 s, 0.18 s)."""
    ids = sorted(set(_id_list(run_ids)))
    if not ids:
        return np.zeros(0, dtype=np.int64)
    marks = ", ".join("?" for _ in ids)
    got = con.execute(f"SELECT q FROM scores WHERE run_id IN ({marks}) AND attempted GROUP BY q "
                      f"HAVING count(*) = {len(ids)} ORDER BY q", ids).fetchnumpy()
    return np.asarray(got["q"], dtype=np.int64)


def means_over(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], positions: Sequence[int] | np.ndarray
               ) -> dict[int, dict[str, float]]:
    """Per run: `n` (the questions of `positions` it attempted) and each metric's mean over them (NaN for none)."""
    ids = list(dict.fromkeys(_id_list(run_ids)))
    if not ids:
        return {}
    sums = ", ".join(f"fsum({m}) AS {m}" for m in METRICS)
    # joined with both lists as tables, not `run_id IN (?, ...)`: at 1,000 runs x 20,000 questions 0.10 s, not 0.23
    con.register("lens_at", _positions_table(np.unique(np.asarray(positions, dtype=np.int64))))
    con.register("lens_ids", pa.table({"run_id": pa.array(ids, pa.int64())}))
    try:
        got = _dicts(con.execute(f"SELECT run_id, count(*) AS n, {sums} FROM scores JOIN lens_at USING (q) "
                                 "JOIN lens_ids USING (run_id) WHERE attempted GROUP BY run_id"))
    finally:
        con.unregister("lens_at")
        con.unregister("lens_ids")
    out = {r: {"n": 0, **{m: math.nan for m in METRICS}} for r in ids}
    for r in got:
        n = int(r["n"])
        out[int(r["run_id"])] = {"n": n, **{m: _mean(r[m], n) for m in METRICS}}
    return out


def breakdown_by(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], q: Sequence[int] | np.ndarray,
                 code: Sequence[int] | np.ndarray, *, positions: Sequence[int] | np.ndarray | None = None) -> list[dict]:
    """A breakdown by any labelling of the questions: (`q`, `code`) pairs give each gold position its label
    codes (a question once per pair: a multi-valued field has several). Per run and code, over the rows
    the run attempted (only at `positions`, when given): run_id, code, count, `sum_<metric>`, right --
    ordered by run (as given), then code."""
    ids = _id_list(run_ids)
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    con.register("lens_labels", pa.table({"q": pa.array(np.asarray(q, dtype=np.int32)),
                                          "code": pa.array(np.asarray(code, dtype=np.int32))}))
    keep = ""
    if positions is not None:
        con.register("lens_at", _positions_table(positions))
        keep = " AND s.q IN (SELECT q FROM lens_at)"
    sums = ", ".join(f"fsum(s.{m}) AS sum_{m}" for m in METRICS)
    try:
        got = _dicts(con.execute(f"""
            SELECT s.run_id, l.code, count(*) AS count, {sums}, count(*) FILTER (s.is_right) AS "right"
            FROM scores s JOIN lens_labels l ON l.q = s.q
            WHERE s.run_id IN ({marks}) AND s.attempted{keep}
            GROUP BY s.run_id, l.code
            ORDER BY list_position(?::BIGINT[], s.run_id), l.code""", [*ids, ids]))
    finally:
        con.unregister("lens_labels")
        if positions is not None:
            con.unregister("lens_at")
    return [{"run_id": int(r["run_id"]), "code": int(r["code"]), "count": int(r["count"]),
             **{f"sum_{m}": float(r[f"sum_{m}"]) for m in METRICS}, "right": int(r["right"])} for r in got]


def right_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], q: int) -> set[int]:
    """The runs (of these) right on the question at gold position `q`."""
    ids = _id_list(run_ids)
    if not ids:
        return set()
    marks = ", ".join("?" for _ in ids)
    return {int(r[0]) for r in con.execute(f"SELECT run_id FROM scores WHERE run_id IN ({marks}) AND q = ? AND is_right",
                                           [*ids, int(q)]).fetchall()}


def right_rows(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """Per run (of these): the gold positions it got right, sorted."""
    ids = _id_list(run_ids)
    out = {r: np.zeros(0, dtype=np.int64) for r in ids}
    if not ids:
        return out
    marks = ", ".join("?" for _ in ids)
    got = con.execute(f"SELECT run_id, q FROM scores WHERE run_id IN ({marks}) AND is_right ORDER BY run_id, q",
                      ids).fetchnumpy()
    run, q = np.asarray(got["run_id"], dtype=np.int64), np.asarray(got["q"], dtype=np.int64)
    if len(run):
        cuts = np.flatnonzero(np.diff(run)) + 1
        for part_run, part_q in zip(np.split(run, cuts), np.split(q, cuts)):
            out[int(part_run[0])] = part_q
    return out


def status_counts(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int]) -> list[dict]:
    """Per run (of these) and status, the rows it attempted: run_id, status, count (by run, then count, most first)."""
    ids = _id_list(run_ids)
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    return _dicts(con.execute(f"SELECT run_id, status, count(*) AS count FROM scores WHERE run_id IN ({marks}) AND attempted "
                              "GROUP BY run_id, status ORDER BY run_id, count DESC, status", ids))


def checkpoint_matrix(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], positions: Sequence[int] | np.ndarray,
                      metrics: Sequence[str] = METRICS) -> dict[str, np.ndarray]:
    """These runs (rows, in the order of `run_ids`) over these questions (columns, in the order of
    `positions`: gold positions; a negative one names a question the gold does not hold): each metric's
    scores (float, runs x questions), `attempted` (the run has a row for the question, answered or failed)
    and `is_right` (the profile's one definition, as ingested). A question a run holds no row for scores 0
    and is neither attempted nor right; a row held but not attempted (a recomputed run's missing question)
    keeps the scores the run gave it. What the trends and the checkpoint matrix read
    (`scoring.trends.checkpoint_scores` is the same over runs held in memory)."""
    ids = _id_list(run_ids)
    cols = np.asarray(positions, dtype=np.int64).reshape(-1)
    k, n = len(ids), cols.size
    wanted = list(dict.fromkeys(metrics))
    for m in wanted:
        if m not in METRICS:
            raise ValueError(f"no metric {m!r} in the engine (metrics: {', '.join(METRICS)})")
    distinct, row_of = np.unique(np.asarray(ids, dtype=np.int64), return_inverse=True)
    held = {m: np.zeros((len(distinct), n)) for m in wanted}
    flags = {f: np.zeros((len(distinct), n), dtype=bool) for f in ("attempted", "is_right")}
    on = np.flatnonzero(cols >= 0)
    if k and on.size:
        # each gold position's column (-1: not asked), looked up here rather than joined in the engine: the
        # usual question is every gold question, read as stored
        top = int(cols[on].max())
        column = np.full(top + 1, -1, dtype=np.int64)
        column[cols[on]] = on
        marks = ", ".join("?" for _ in distinct)
        values = "".join(f", {m}" for m in wanted)
        got = con.execute(f"SELECT run_id, q{values}, attempted, is_right FROM scores "
                          f"WHERE run_id IN ({marks}) AND q BETWEEN ? AND ?",
                          [*(int(r) for r in distinct), int(cols[on].min()), top]).fetchnumpy()
        col = column[np.asarray(got["q"], dtype=np.int64)]
        keep = col >= 0
        row = np.searchsorted(distinct, np.asarray(got["run_id"], dtype=np.int64))[keep]
        col = col[keep]
        for m in wanted:
            held[m][row, col] = np.asarray(got[m], dtype=np.float64)[keep]
        for f in flags:
            flags[f][row, col] = np.asarray(got[f], dtype=bool)[keep]
    if len(distinct) == k and np.array_equal(row_of, np.arange(k)):  # each run once, asked in id order: as held
        return {**held, **flags}
    out = {m: held[m][row_of] for m in wanted}
    out.update({f: flags[f][row_of] for f in flags})
    return out

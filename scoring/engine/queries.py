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

from scoring.registry import METRICS, MIN_DOCUMENTS
from scoring.slices import MIN_QUESTIONS, MIN_SHARE, MIN_SIDE_DOCUMENTS
from scoring.stats import mcnemar_exact, sign_flip_p

from .schema import FINDER_FIELDS, LIST_FIELDS, OVERALL, RECOMPUTED

__all__ = ["VISIBLE", "runs", "version_of", "leaderboard", "breakdown", "flip_table", "document_sums", "finder_counts",
           "texts", "question_rows", "FLIP_KINDS", "COMPARE_FIELDS", "FINDER_FIELDS", "benchmarks"]

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
    file_rows, ingested_at, benchmark and its name. `current`: only the latest version of each
    (benchmark, name, step)."""
    table = "lens_current" if current else "lens_visible"
    where, params = ("WHERE r.benchmark = ?", [benchmark]) if benchmark is not None else ("", [])
    return _dicts(con.execute(VISIBLE + f"""
        SELECT r.run_id, r.name, r.version, r.step, r.series, r.source, r.profile, r.signature, r.file_path,
               r.file_sha256, r.origin, r.questions, r.file_rows, r.ingested_at, r.benchmark,
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
    right (answers right by the profile), answered, missing, failed. Ordered by Accuracy, best first."""
    chosen, params = _chosen(benchmark, run_ids)
    rows = _dicts(con.execute(VISIBLE + f"""
        SELECT r.run_id, r.name, r.version, r.step, r.series, r.source, r.profile, r.signature, r.origin, r.file_rows,
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
                                      "origin", "file_rows")}
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

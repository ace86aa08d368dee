"""The engine's tables: one row per (run, question) scored, texts apart, per-run summaries written at
ingest. The same statements make them in an embedded DuckDB file and in a DuckLake, so no constraint
is declared (a DuckLake has neither keys nor sequences): every table is appended to, the keys are
made by the writer (`run_id`, a 63-bit number per ingest that rises with time: `ingest.new_run_id`) and the readers resolve what two
writers may both have written (`queries.py`).

    runs        one row per ingest of a run: run_id, identity (what makes it the same run: benchmark,
                name, file sha256, profile signature, step), benchmark, name, source (recomputed or
                official scores), file path and sha256, profile and signature, step and series, origin,
                questions held, the file's rows, ingested_at, host and pid of the writer, finder_fields
                (the coded fields the weak-slice finder lists with these values: its counts are theirs),
                extra_ids and extra_example (how many of the file's ids name no gold question, and the
                first of them: how the run joins the gold, said on every page)
    removals    run_id, removed_at, host, pid: a run removed (`docbench-lens ingest --remove`) or
                written twice at once (the later copy). A run is visible while it has no removal.
    benchmarks  benchmark (the key of its questions, `Questions.key`), name, questions, units
                (document or question), created_at
    questions   per benchmark and gold position q: question_id, doc (its cluster code), cluster (the
                document id it is counted under, NULL: a question naming none is its own cluster),
                documents (every id it names), question, gold
    labels      per run: field, code, label -- the dictionary of the slice codes in `scores`
    scores      per run and question: q, doc, accuracy, token_f1, anls, is_right (the profile's one
                definition, `Profile.right_mask`), attempted (the run has a row for it: answered or
                failed), failed (a row with a status that is not a success), status, reason (the
                harness/evaluator disagreement reason code: NULL, not computed yet), one SMALLINT code
                per breakdown field (split, domain, reasoning_type, answer_format, difficulty, doc_type,
                length, position) and a SMALLINT[] per multi-valued one (evidence_source,
                page_category, question_type), step
    texts       per run and question attempted: prediction (as the release reports it), response
                (the raw answer where the file has one besides it), judge (a judge's reply: NULL until
                a judge writes one)
    cells       per run, field and code (field "overall", code 0: the whole run): n, sums of the three
                metrics and of is_right, failed, over the attempted questions (a question counted once
                per label it names, as the breakdowns count); documents among them; missing; and over
                every row (the finder's population) questions_all and documents_all (a question once)
    doc_sums    per run and doc: n, sums of the three metrics and of is_right over the attempted questions

Types: run_id BIGINT, q INTEGER (gold position), doc INTEGER, codes SMALLINT, metrics DOUBLE, sums
DOUBLE (Kahan-summed), counts INTEGER, times TIMESTAMP (UTC).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SCHEMA_VERSION", "SCALAR_FIELDS", "LIST_FIELDS", "FIELDS", "OVERALL", "FINDER_FIELDS", "RECOMPUTED", "OFFICIAL", "TABLES",
           "ADDED", "columns", "statements"]

SCHEMA_VERSION = 2  # 2: runs.extra_ids, runs.extra_example (a store of version 1 gains them)

# every breakdown field, as scoring.slices.question_fields names them (scoring.model.BREAKDOWNS and
# page_category), the dashboard's document length and evidence position, and DocVQA's question types
SCALAR_FIELDS = ("split", "domain", "reasoning_type", "answer_format", "difficulty", "doc_type", "length", "position")
LIST_FIELDS = ("evidence_source", "page_category", "question_type")
FIELDS = SCALAR_FIELDS + LIST_FIELDS
OVERALL = "overall"  # the cells row of the whole run (code 0)
# the finder's fields among them (scoring.slice_fields lists them; the meta.* keys are not coded)
FINDER_FIELDS = ("split", "reasoning_type", "evidence_source", "answer_format", "domain", "difficulty", "doc_type",
                 "length", "position", "page_category")
RECOMPUTED, OFFICIAL = "recomputed", "official"  # runs.source: scored here, or official scores read from a file

_METRIC_COLUMNS = "accuracy DOUBLE, token_f1 DOUBLE, anls DOUBLE"
_SUM_COLUMNS = "sum_accuracy DOUBLE, sum_token_f1 DOUBLE, sum_anls DOUBLE, sum_right INTEGER"

TABLES: dict[str, str] = {
    "lens_meta": "key VARCHAR, value VARCHAR",
    "runs": ("run_id BIGINT, identity VARCHAR, benchmark VARCHAR, name VARCHAR, source VARCHAR, file_path VARCHAR, "
             "file_sha256 VARCHAR, profile VARCHAR, signature VARCHAR, step BIGINT, series VARCHAR, origin VARCHAR, "
             "questions INTEGER, file_rows INTEGER, ingested_at TIMESTAMP, host VARCHAR, pid INTEGER, finder_fields VARCHAR[], "
             "extra_ids INTEGER, extra_example VARCHAR"),
    "removals": "run_id BIGINT, removed_at TIMESTAMP, host VARCHAR, pid INTEGER",
    "benchmarks": "benchmark VARCHAR, name VARCHAR, questions INTEGER, unit VARCHAR, created_at TIMESTAMP",
    "questions": ("benchmark VARCHAR, q INTEGER, question_id VARCHAR, doc INTEGER, cluster VARCHAR, documents VARCHAR[], "
                  "question VARCHAR, gold VARCHAR"),
    "labels": "run_id BIGINT, field VARCHAR, code SMALLINT, label VARCHAR",
    "scores": ("run_id BIGINT, q INTEGER, doc INTEGER, " + _METRIC_COLUMNS + ", is_right BOOLEAN, attempted BOOLEAN, "
               "failed BOOLEAN, status VARCHAR, reason SMALLINT, "
               + ", ".join(f"{f} SMALLINT" for f in SCALAR_FIELDS) + ", "
               + ", ".join(f"{f} SMALLINT[]" for f in LIST_FIELDS) + ", step BIGINT"),
    "texts": "run_id BIGINT, q INTEGER, prediction VARCHAR, response VARCHAR, judge VARCHAR",
    "cells": ("run_id BIGINT, field VARCHAR, code SMALLINT, n INTEGER, " + _SUM_COLUMNS + ", failed INTEGER, "
              "documents INTEGER, missing INTEGER, questions_all INTEGER, documents_all INTEGER"),
    "doc_sums": "run_id BIGINT, doc INTEGER, n INTEGER, " + _SUM_COLUMNS,
}


# columns added after a table was first made: (table, column, type), added to a store made before them
ADDED: tuple[tuple[str, str, str], ...] = (("runs", "extra_ids", "INTEGER"), ("runs", "extra_example", "VARCHAR"))


def columns(table: str) -> list[str]:
    """The column names of a table, in order."""
    return [part.strip().split(" ")[0] for part in TABLES[table].split(",")]


def statements(tables: Sequence[str] = tuple(TABLES)) -> list[str]:
    """CREATE TABLE IF NOT EXISTS for each table (in the connection's current catalog)."""
    return [f"CREATE TABLE IF NOT EXISTS {t} ({TABLES[t]})" for t in tables]

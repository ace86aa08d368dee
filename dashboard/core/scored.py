"""Where an analysis's scored runs are: the engine (scoring/engine/), read by its queries. No streamlit here.

The app ingests every run it opens into the engine of its settings -- DuckDB in the cache folder, or the
team's DuckLake -- with the same `ingest` as `docbench-lens ingest` (dashboard/shell/scorer.py), and its
`Analysis` (dashboard/core/analysis.py) asks the engine for the leaderboard, breakdowns and the rows of the
few runs a page shows. An analysis built from runs held in memory (a test, the report's command line)
has a store of its own: DuckDB in memory, the runs ingested the same way (`memory_store`).

    engine_questions(gold, page_counts, declared_pages, name)   a benchmark's questions as the engine codes them
    Store(engine, benchmark, ids, size, fields)           an analysis's engine, benchmark key and run ids
    scored_of(run, questions, profile)                    a run held in memory as the engine stores it
    memory_store(runs, gold, page_counts, declared_pages, profile)   such runs ingested into DuckDB in memory
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb

from scoring.engine.connection import Engine, memory_target
from scoring.engine.ingest import Questions, ScoredRun, ingest
from scoring.evaluate import RunResult
from scoring.model import GoldQuestion, ScoreRow
from scoring.profiles import Profile, get_profile
from scoring.slice_fields import LENGTH, LENGTH_BUCKETS, LONGEST, POSITION, POSITIONS, UNKNOWN, length_and_position, slice_fields


class Run(Protocol):
    """A run as dashboard.core.analysis.Run holds it (declared by shape: analysis imports this module)."""

    name: str
    file: str
    official: list[ScoreRow]
    origin: str
    file_rows: int

    @property
    def recomputed(self) -> bool: ...

    @property
    def result(self) -> RunResult | None: ...

__all__ = ["VOCABULARIES", "engine_questions", "Store", "scored_of", "memory_store"]

# every label the question frame's length and position take (their fixed bins): codes that do not
# depend on which of them occur
VOCABULARIES = {"length": [*(label for _, label in LENGTH_BUCKETS), LONGEST, UNKNOWN], "position": [*POSITIONS, UNKNOWN]}


def engine_questions(gold: Sequence[GoldQuestion], page_counts: Mapping[str, int | None],
                     declared_pages: Mapping[str, int | None], name: str = "") -> Questions:
    """The benchmark's questions as the engine codes them: the length and position bins the question frame
    has (`analysis.question_frame`, on the same page counts; the frame itself is not needed, so a restart
    finds its runs in the engine before building it) beside the gold's fields, and the fields the weak-slice
    finder lists alike (its length and position on the page counts documents.jsonl declares:
    `Questions.finder_fields`)."""
    bins = [length_and_position(q, page_counts) for q in gold]
    extra = {"length": [b[0] for b in bins], "position": [b[1] for b in bins]}
    finder = slice_fields(list(gold), dict(declared_pages), metadata=False).columns
    # the gold's own fields are the finder's but for the declared length and position: not worked out twice
    fields = {k: v for k, v in finder.items() if k not in (LENGTH, POSITION)}
    return Questions.from_gold(list(gold), name=name, extra=extra, vocab=VOCABULARIES, finder=finder, fields=fields)


@dataclass
class Store:
    """An analysis's runs in the engine: `benchmark` the key of its questions, `ids` run name -> run id,
    `size` the gold's questions, `fields` the breakdown fields the engine coded (the others are labelled
    by the page and joined in the engine: `queries.breakdown_by`). `keep`: what must live as long as the
    store (an in-memory engine's own)."""

    engine: Engine
    benchmark: str
    ids: dict[str, int]
    size: int
    fields: frozenset[str] = frozenset()
    keep: Any = field(default=None, repr=False, compare=False)

    @contextlib.contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.engine.read() as con:
            yield con

    def id_of(self, name: str) -> int | None:
        return self.ids.get(name)

    def ids_of(self, names: Sequence[str]) -> list[int]:
        return [self.ids[n] for n in names if n in self.ids]


def scored_of(run: Run, questions: Questions, profile: str | Profile, *, file_sha256: str = "") -> ScoredRun | None:
    """A run held in memory (its RunResult, or its official score rows) as the engine stores it; None for a
    run of official scores with no row of this gold."""
    if run.recomputed:
        result = run.result
        assert result is not None, f"run {run.name!r} is recomputed but holds no result"
        scored = ScoredRun.from_result(result, questions, file_path=run.file, file_sha256=file_sha256, origin=run.origin,
                                       file_rows=run.file_rows)
        scored.name = run.name  # the run's name here (a result scored without one is named "run")
        return scored
    return ScoredRun.from_official(run.name, run.official, questions, get_profile(profile), file_path=run.file,
                                   file_sha256=file_sha256)


def memory_store(runs: Sequence[Run], gold: Sequence[GoldQuestion], page_counts: Mapping[str, int | None],
                 declared_pages: Mapping[str, int | None], profile: str | Profile) -> Store:
    """The runs (held in memory) ingested into DuckDB in memory: an analysis of its own, gone with it."""
    engine = Engine(memory_target())
    questions = engine_questions(gold, page_counts, declared_pages)
    ids: dict[str, int] = {}
    for run in runs:
        scored = scored_of(run, questions, profile)
        if scored is not None:
            ids[run.name] = ingest(engine, questions, scored).run_id
    return Store(engine, questions.key, ids, len(questions), frozenset(questions.codes), keep=engine)

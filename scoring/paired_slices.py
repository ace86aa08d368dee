"""Run A against run B per slice: the one per-slice paired table, shown by the gate (`scoring/gate.py`,
compare.json's `slices`) and by the Compare page and the report (`dashboard.compare.frames.deltas`).
Pure: numpy and scipy only (no pandas, no streamlit).

    paired_table(a, b, clusters, fields)    the overall row and one row per slice (`PairedTable`)

Inputs: `a`, `b` -- the two runs' scores on the n questions both answered, one row per metric (k x n,
or one row); `clusters` -- their documents (`scoring.stats.document_clusters`); `fields` -- the finder's
fields of those questions (`scoring.slice_fields.slice_fields`: a `FieldSet`, or a mapping field -> one
value per question).

Slices: every single condition field = value of `fields` that holds for some but not every question,
enumerated as the weak-slice finder enumerates its conditions (`scoring.slices.conditions`: a
multi-valued field puts a question in the slice of each of its values; a field whose values split
nothing gives no slice), in field order, each field's values sorted. The finder, the gate and the
Compare page therefore list the same slices of the same fields.

Per slice and metric: `scoring.stats.paired_by_document` -- delta A - B, the document-bootstrap
interval, the sign-flip p by document -- with SLICE_RESAMPLES resamples (the overall row:
OVERALL_RESAMPLES) and the same seed everywhere, so the same two runs give the same numbers on the
command line and on the page -- and wherever a row is computed: from THREADED_FROM questions x metrics the
slices' rows go to the shared pool's worker processes when it runs idle (`scoring.workers.idle_shared_pool`),
else to threads, and each row draws from its own generator seeded as alone.

Multiplicity, one rule: q = Benjamini-Hochberg (`method="by"`: Benjamini-Yekutieli) across the slices
TESTED of each metric -- those holding at least `min_documents` documents. A slice with fewer gets no
interval and no q, and is not counted in the family (its p is still reported). `own_family` names
fields whose slices form a family of their own (the page's saved slices and the notes' tags, which a
user names): they do not enter the benchmark's family, so its q stay those the command line gives.
The overall row is one test of its own: no q.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import deferred
from .slice_fields import describe
from .slices import each_condition, slice_name
from .stats import MIN_DOCUMENTS, Clusters, Paired, paired_by_document_rows
from .workers import bare_main, discard_shared_pool, idle_shared_pool, usable_cores

OVERALL_RESAMPLES = 10_000  # the overall row: one test per metric
SLICE_RESAMPLES = 2_000  # per slice and metric (dozens of rows; bench/bench_stats.py measures the table)
THREADED_FROM = 3_000  # questions x metrics from which the rows are computed on threads (below, threads cost more)
MAX_THREADS = 4
OVERALL = "overall"
METHODS = ("bh", "by")


@dataclass(frozen=True)
class SliceRow:
    """One row of the table: the slice `field` = `value` ("overall" for every question), the positions
    of its questions in the inputs (ascending), and per metric its `Paired` result and its q (None:
    not tested -- too few documents, a NaN score, or the overall row)."""

    field: str
    value: str
    positions: np.ndarray
    results: dict[str, Paired]
    q: dict[str, float | None]

    @property
    def name(self) -> str:
        """`field=value` (the finder's and the CSV's machine name)."""
        return slice_name([(self.field, self.value)])

    @property
    def label(self) -> str:
        """The slice in words: "Answer format: Int" (`scoring.slice_fields.describe`)."""
        return describe([(self.field, self.value)])

    @property
    def questions(self) -> int:
        return int(self.positions.size)

    def first(self) -> Paired:
        """The first metric's result (documents, unit and too_few are the same for every metric)."""
        return next(iter(self.results.values()))


@dataclass(frozen=True)
class PairedTable:
    """`overall` (every question) and `slices` (in field order); `tested`: per metric how many slices
    are in the family (enough documents and a p); `family`: per field the family its slices' q are
    adjusted in ("benchmark", or the field's name for an `own_family` field)."""

    overall: SliceRow
    slices: list[SliceRow]
    tested: dict[str, int]
    family: dict[str, str] = field(default_factory=dict)
    method: str = "bh"


def _rows(x: Any) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x.reshape(1, -1) if x.ndim == 1 else x


def _results(x: np.ndarray, y: np.ndarray, codes: np.ndarray, unit: str, pos: np.ndarray, reps: int,
             settings: tuple[int, float, int]) -> list[Paired]:
    """One row's `Paired` per metric: the questions at `pos`, their documents numbered once, the bootstrap's
    draws shared by the metrics."""
    seed, confidence, min_documents = settings
    present, inside = np.unique(codes[pos], return_inverse=True)
    part = Clusters(inside.ravel(), unit, int(present.size))
    return paired_by_document_rows(x[:, pos], y[:, pos], part, resamples=reps, seed=seed, confidence=confidence,
                                   min_units=min_documents)


def _field_results(job: tuple) -> list[list[Paired]]:
    """In a worker process: the rows of one field's conditions (`_results` of each)."""
    x, y, codes, unit, positions, reps, settings = job
    return [_results(x, y, codes, unit, pos, reps, settings) for pos in positions]


def _rows_in_processes(pool: Any, conditions: Iterator[tuple[str, str, np.ndarray]], x: np.ndarray, y: np.ndarray,
                       codes: np.ndarray, unit: str, metrics: Sequence[str], reps: int, settings: tuple[int, float, int],
                       overall_row: Callable[[], SliceRow], on_overall: Callable[[SliceRow], object] | None) -> list[SliceRow]:
    """The overall row (`overall_row()`, here, handed to `on_overall`) and every condition's row (in `pool`, one
    job per field), in order."""
    fields: list[tuple[str, list[tuple[str, np.ndarray]], Any]] = []
    with bare_main():
        for name, conds in itertools.groupby(conditions, key=lambda c: c[0]):
            listed = [(value, pos) for _, value, pos in conds]
            fields.append((name, listed, pool.submit(_field_results, (x, y, codes, unit, [pos for _, pos in listed], reps,
                                                                      settings))))
    head = overall_row()
    if on_overall is not None:
        on_overall(head)
    rows = [head]
    for name, listed, future in fields:
        for (value, pos), results in zip(listed, future.result()):
            rows.append(SliceRow(name, value, pos, dict(zip(metrics, results)), {m: None for m in metrics}))
    return rows


def uses_cores(questions: int, metrics: int) -> bool:
    """Whether a table of this many questions x metrics is computed on several cores (in the shared pool's
    worker processes when it runs idle, else on threads): from THREADED_FROM, with more than one core."""
    return usable_cores() > 1 and questions * metrics >= THREADED_FROM


def _handing_first(rows: Iterable[SliceRow], first: Callable[[SliceRow], object] | None) -> list[SliceRow]:
    """The rows as a list, `first` called with the first one as soon as it is computed."""
    done: list[SliceRow] = []
    for r in rows:
        if first is not None and not done:
            first(r)
        done.append(r)
    return done


def paired_table(a: Sequence[Sequence[float]] | np.ndarray, b: Sequence[Sequence[float]] | np.ndarray,
                 clusters: Clusters, fields: Mapping[str, Sequence[Any]] | Any, *,
                 metrics: Sequence[str] = ("score",), min_documents: int = MIN_DOCUMENTS, method: str = "bh",
                 own_family: Collection[str] = (), resamples: int = OVERALL_RESAMPLES,
                 slice_resamples: int = SLICE_RESAMPLES, seed: int = 0, confidence: float = 0.95,
                 on_overall: Callable[[SliceRow], object] | None = None) -> PairedTable:
    """The overall row and every slice's row (module docstring). `a` and `b`: one row per name of
    `metrics` (a 1-d array: one metric); `clusters`: a `Clusters` of the same n questions. `on_overall`:
    called with the overall row as soon as it is drawn (before any slice is waited for), while the
    slices' rows are still being computed -- so a page can show its headline before the slices."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    x, y = _rows(a), _rows(b)
    if x.shape != y.shape or x.shape[0] != len(metrics):
        raise ValueError(f"a and b must be {len(metrics)} x n arrays of the same shape, got {x.shape} and {y.shape}")
    n = x.shape[1]
    codes = np.asarray(clusters.codes)

    settings = (seed, confidence, min_documents)

    def row(field_name: str, value: str, pos: np.ndarray, reps: int) -> SliceRow:
        return SliceRow(field_name, value, pos, dict(zip(metrics, _results(x, y, codes, clusters.unit, pos, reps, settings))),
                        {m: None for m in metrics})

    everything = (OVERALL, "all questions", np.arange(n), resamples)
    conditions = each_condition(fields, n)
    first = next(conditions, None)
    conditions = itertools.chain([first] if first is not None else [], conditions)
    threaded = uses_cores(n, len(metrics))
    pool = idle_shared_pool() if threaded and first is not None else None
    done: list[SliceRow] | None = None
    if pool is not None:
        # the slices' rows in the shared pool's worker processes (each a core of its own, no GIL to share: 0.9 s
        # where two threads took 1.2-1.4 s at 20,000 questions), one job per field, sent as it is enumerated;
        # the overall row meanwhile here
        try:
            done = _rows_in_processes(pool, conditions, x, y, codes, clusters.unit, metrics, slice_resamples, settings,
                                      lambda: row(*everything), on_overall)
        except BrokenExecutor:  # a worker died (killed, out of memory): the pool goes, the rows are computed here
            discard_shared_pool()
            conditions = each_condition(fields, n)
        except RuntimeError:  # the pool was shut down meanwhile (another part discarded it): computed here
            conditions = each_condition(fields, n)
    if done is None:
        jobs = itertools.chain([everything], ((f, v, pos, slice_resamples) for f, v, pos in conditions))
        if threaded:
            # numpy draws, gathers and sums without the GIL: the rows run on every core, each with its own
            # generator seeded as alone, so the numbers are the serial ones; a field's rows start while the
            # next field's conditions are encoded (`map` submits each job as the generator gives it)
            with ThreadPoolExecutor(max_workers=min(usable_cores(), MAX_THREADS), thread_name_prefix="paired-slices") as threads:
                done = _handing_first(threads.map(lambda job: row(*job), jobs), on_overall)
        else:
            done = _handing_first((row(*job) for job in jobs), on_overall)
    overall, slices = done[0], done[1:]
    own = set(own_family)
    family = {f: (f if f in own else "benchmark") for f in dict.fromkeys(r.field for r in slices)}
    tested = {m: 0 for m in metrics}
    for m in metrics:
        groups: dict[str, list[SliceRow]] = {}
        for r in slices:
            p = r.results[m]
            if not p.too_few and p.p is not None:
                groups.setdefault(family[r.field], []).append(r)
        for members in groups.values():
            qs = deferred.stats().false_discovery_control([r.results[m].p for r in members], method=method)
            for r, q in zip(members, qs):
                r.q[m] = float(q)
        tested[m] = sum(len(g) for g in groups.values())
    return PairedTable(overall, slices, tested, family, method)

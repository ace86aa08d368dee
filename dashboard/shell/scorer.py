"""Scoring a session's runs into the engine: every run the app opens is scored once, with the profile in
force, and ingested into the engine of the settings -- DuckDB in the cache folder (`engine/lens.duckdb`),
or the team's DuckLake when LENS_LAKE_CATALOG is set -- by the same `ingest` as `docbench-lens ingest`
(scoring/engine/ingest.py, dashboard/data/ingest.py): one path, not two. A run is known in the engine by
its identity (the gold's questions, its name, its file's sha256, the profile's signature), so a restart,
or a second app server on the same engine, finds it there and scores nothing; a changed file is a new
identity and is scored again. Scoring shows a progress bar once it takes longer than a moment.

The pages read the engine through the session's `Analysis` (dashboard/core/analysis.py). A run's
RunResult -- its records, for the question detail and the disagreement page -- is made when a page asks:
its prediction file read again beside its scores from the engine (`Run.result`), kept for the last few
runs asked for (dashboard/shell/cache.py)."""

from __future__ import annotations

import contextlib
import threading
import time
from functools import partial

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.core import runs
from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run
from dashboard.core.bounded import Bounded
from dashboard.core.escape import md_escape
from dashboard.core.paths import Sources
from dashboard.core.predictions import PredictionTable
from dashboard.core.scored import Store
from dashboard.data.workspace import PredictionFile, Workspace, responses
from dashboard.shell import cache
from dashboard.shell.context import CONTEXT
from scoring.engine import queries as Q
from scoring.engine.connection import Engine, EngineError
from scoring.engine.ingest import Questions, ScoredRun, identity_of, ingest, official_identity
from scoring.evaluate import RunResult, assemble, score_runs
from scoring.profiles import signature

PROFILE_NOTE = "lens_profile_note"  # the sidebar placeholder under the profile picker
PROGRESS_DELAY = 0.25  # s of scoring before a progress bar is shown
BATCH = 2  # runs scored on the shared pool at once before they are ingested (their predictions held meanwhile)


def sources_key(src: Sources) -> tuple:
    return (str(src.benchmark), tuple(map(str, src.runs)), tuple(map(str, src.scores)), tuple(map(str, src.gold)),
            str(src.documents), src.labels, src.task)


def columnar(pf: PredictionFile) -> bool:
    """Whether the run is kept, and scored, in columns (`runs.scored_in_columns`)."""
    return runs.scored_in_columns(pf.loaded.items)


def _scored(ws: Workspace, pf: PredictionFile, profile: str, the_plan, scored) -> RunResult:
    return runs.held_run(ws.gold.items, pf.loaded.items, the_plan, scored, profile=profile, name=pf.run)


def score(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str, bar=None) -> RunResult:
    """A prediction file scored with a profile, in memory (another profile's scores, for a page that compares
    profiles): kept by file content and profile among the last few runs; computed with a progress bar
    showing questions done / total (`bar`: a `_Progress`, or None for a bar of its own)."""
    key = (gold_key, pf.sha256, pf.run, profile)
    result = cache.scored(key)
    if result is None:
        own = bar is None
        bar = bar or _Progress(st.empty(), profile, len(ws.gold.items), stale=False)
        bar.update(md_escape(pf.run), 0, len(ws.gold.items))
        # the shared pool (scoring/runner.py): no new pool per run, no streamlit in the workers
        _, result = next(score_runs(ws.gold.items, [(pf.run, pf.loaded.items)], profile=profile, columns=columnar(pf),
                                    make=lambda _, the_plan, scored: _scored(ws, pf, profile, the_plan, scored)))
        bar.finish_run(len(ws.gold.items))
        cache.remember(key, result)
        if own:
            bar.close()
    return result


class _Progress:
    """The progress of scoring one or more runs, drawn into `slot` only once the work has taken
    longer than a moment (PROGRESS_DELAY), so that a quick rescoring does not flash a bar. While it
    is shown, the page says the numbers below are from before the profile change."""

    def __init__(self, slot, profile: str, total: int, stale: bool = True) -> None:
        self.slot, self.profile, self.total, self.stale = slot, profile, max(1, total), stale
        self.base = 0  # questions of the runs already scored
        self.started = time.monotonic()
        self.bar: DeltaGenerator | None = None  # drawn after PROGRESS_DELAY

    def update(self, label: str, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < PROGRESS_DELAY:
                return
            box = self.slot.container()
            if self.stale:
                box.caption(f"Recomputing under profile **{self.profile}**… until this bar completes, the numbers "
                            "below are from before the change.")
                note = st.session_state.get(PROFILE_NOTE)
                if note is not None:
                    note.caption(f"Recomputing under {self.profile}…")
            self.bar = box.progress(0.0)
        frac = min(1.0, (self.base + done) / self.total)
        self.bar.progress(frac, text=f"Scoring {label} with {self.profile}: {done} / {total} questions")

    def finish_run(self, total: int) -> None:
        self.base += total

    def close(self) -> None:
        self.slot.empty()
        note = st.session_state.get(PROFILE_NOTE)
        if self.stale and note is not None:
            note.empty()


# ----------------------------------------------------------------------------- the engine


def _rebuilt(gold, pf: PredictionFile, profile: str, engine: Engine, run_id: int, memory: Bounded, key: tuple
             ) -> RunResult:
    """A run's RunResult again: its prediction file's rows (the cache of parsed files) beside its scores read
    from the engine -- the same scores, no rescoring; its records' decisions are made again when a page first
    asks for them. Kept among the last few (`memory`: the shell's memory of scored runs)."""
    got = memory.get(key)
    if got is not None:
        return got

    def build() -> RunResult:
        preds = pf.loaded.items
        if not isinstance(preds, PredictionTable):  # a file kept as records: scored again (the record path)
            return next(score_runs(gold, [(pf.run, preds)], profile=profile, parallel=False,
                                   make=lambda _, the_plan, decisions: assemble(gold, the_plan, decisions, profile=profile,
                                                                                name=pf.run)))[1]
        with engine.read() as con:
            values = Q.run_values(con, run_id, len(gold))
        return runs.from_engine(gold, preds, values, profile=profile, name=pf.run)

    return memory.get_or_build(key, build)


@contextlib.contextmanager
def _said(slot):
    """An engine that cannot be used says so in one sentence where the page is, and the page stops."""
    try:
        yield
    except EngineError as exc:
        (slot or st).error(f"The scored runs' store cannot be used: {md_escape(str(exc))}", icon=":material/database:")
        st.stop()
        raise  # no session to stop (the server's warm: dashboard/session/server.py): the engine's own error goes on


_SCORING: dict[tuple, threading.Lock] = {}  # (questions' key, profile signature) -> held while that benchmark's runs are scored
_SCORING_LOCK = threading.Lock()
WAITING = ("These runs are being scored already -- by another session, or by the server, which reads its benchmark "
           "as it starts; they appear here when that is done.")


@contextlib.contextmanager
def _one_scorer(key: tuple):
    """One thread of the process at a time scores a benchmark's runs under a profile: another asking for the same
    waits (`_wait_for_other`), then finds them in the engine. Without this a first visit during the server's warm
    (dashboard/session/server.py), or two sessions opened at once, scored every run twice, side by side."""
    with _SCORING_LOCK:
        lock = _SCORING.setdefault(key, threading.Lock())
    if not lock.acquire(blocking=False):
        _wait_for_other(lock)
    try:
        yield
    finally:
        lock.release()


def _wait_for_other(lock: threading.Lock) -> None:
    with st.spinner(WAITING):
        lock.acquire()


def scored_runs(ws: Workspace, gold_key: tuple, profile: str, slot=None) -> tuple[list[Run], Store, Questions]:
    """The workspace's runs in the engine, each scored and ingested unless the engine holds it already
    (its identity): the runs as the pages hold them (their results made when asked), the store the
    analysis reads, and the questions as the engine codes them."""
    questions = cache.questions(ws, gold_key)
    official = ws.official()
    scorable = [pf for pf in ws.predictions if pf.loaded.loaded] if ws.gold.items else []
    sig = signature(profile)
    key = questions.key
    with _said(slot):
        engine = cache.engine()
        cache.ensure_store(engine)
        with _one_scorer((key, sig)):
            with engine.read() as con:
                known = {str(r["identity"]): int(r["run_id"]) for r in Q.runs(con, key, current=False)}
            ids: dict[str, int] = {}
            todo = []
            for pf in scorable:
                got = known.get(identity_of(key, pf.run, pf.sha256, sig, None))
                if got is None:
                    todo.append(pf)
                else:
                    ids[pf.run] = got
            if todo:
                ids |= _ingest_scored(ws, gold_key, profile, questions, engine, todo, slot)
            names = {pf.run for pf in scorable}
            shas: dict[str, str] = {}
            for system, rows in official.items():
                if system in names:
                    continue
                path = rows[0].file
                sha = shas[path] = shas[path] if path in shas else _file_sha(path)
                got = known.get(identity_of(key, system, sha, official_identity(profile), None))
                if got is None:
                    scored = ScoredRun.from_official(system, rows, questions, profile, file_path=path, file_sha256=sha)
                    got = ingest(engine, questions, scored).run_id
                ids[system] = got
    memory = cache.runs_memory()
    out: list[Run] = []
    for pf in scorable:
        rkey = (gold_key, pf.sha256, pf.run, profile)
        rebuild = partial(_rebuilt, ws.gold.items, pf, profile, engine, ids[pf.run], memory, rkey)
        out.append(Run(pf.run, RECOMPUTED, ws.label(str(pf.path)), None, official.get(pf.run, []), pf.origin,
                       pf.loaded.rows_read, rebuild=rebuild, signature=sig, profile=profile))
    for system, rows in official.items():
        if system not in names:
            out.append(Run(system, OFFICIAL, ws.label(rows[0].file), None, rows))
    store = Store(engine, key, ids, len(questions), frozenset(questions.codes))
    return out, store, questions


def board(ws: Workspace, gold_key: tuple, profile: str) -> pd.DataFrame:
    """The leaderboard of a workspace's runs (each scored into the engine unless it is there): the plain
    gold's, beside the session's analysis with gold corrections."""
    runs, store, _ = scored_runs(ws, gold_key, profile)
    return Analysis.build(runs, ws.gold.items, ws.page_counts, profile, ws.declared_pages(), store=store,
                          later_questions=partial(cache.frame, ws, gold_key)).leaderboard()


def _file_sha(path: str) -> str:
    from pathlib import Path

    from dashboard.core.digests import file_sha256

    try:
        return file_sha256(Path(path)) if Path(path).is_file() else ""
    except OSError:
        return ""


def _moved(bar: _Progress, labels: list[str], start: int, k: int, done: int, total: int) -> None:
    bar.update(labels[start + k], done, total)


def _made(ws: Workspace, part: list[PredictionFile], profile: str, k: int, the_plan, scored) -> RunResult:
    return _scored(ws, part[k], profile, the_plan, scored)


def _batches(todo: list[PredictionFile]) -> list[list[PredictionFile]]:
    """`todo` in order, cut into batches of at most BATCH runs that are all scored in columns or all kept
    as records (one `score_runs` call scores its runs one way)."""
    out: list[list[PredictionFile]] = []
    for pf in todo:
        if out and len(out[-1]) < BATCH and columnar(out[-1][0]) == columnar(pf):
            out[-1].append(pf)
        else:
            out.append([pf])
    return out


def _ingest_scored(ws: Workspace, gold_key: tuple, profile: str, questions: Questions, engine: Engine,
                   todo: list[PredictionFile], slot) -> dict[str, int]:
    """Score these runs on the shared worker pool (both cores), BATCH at a time, and ingest each as it is
    scored -- one transaction per run, as `docbench-lens ingest` -- with a progress bar. Returns their ids.
    When they are at most RUN_CAPACITY, each scored run is kept in the shell's memory of runs, for the page
    that shows it next; a campaign's are not (the last 16 of 100 runs held 150 MB of the server's peak while
    it scored the rest, and a page rebuilds the few runs it shows from the engine: `_rebuilt`)."""
    stale = CONTEXT in st.session_state  # a first load has no numbers "from before" to warn about
    n = len(ws.gold.items)
    bar = _Progress(slot or st.empty(), profile, n * len(todo), stale=stale)
    memory = cache.runs_memory()
    keep = len(todo) <= cache.RUN_CAPACITY  # a few runs: each kept for the pages; a campaign's are rebuilt when shown
    ids: dict[str, int] = {}
    labels = [md_escape(f"{pf.run} (run {k + 1} of {len(todo)})") for k, pf in enumerate(todo)]
    start = 0
    for part in _batches(todo):
        batch = [(pf.run, pf.loaded.items) for pf in part]
        moved = partial(_moved, bar, labels, start)
        made = partial(_made, ws, part, profile)
        for i, result in score_runs(ws.gold.items, batch, profile=profile, progress=moved, make=made,
                                    columns=columnar(part[0])):
            pf = part[i]
            scored = ScoredRun.from_result(result, questions, file_path=str(pf.path), file_sha256=pf.sha256,
                                           origin=pf.origin, file_rows=pf.loaded.rows_read, responses=responses(ws, pf.run))
            ids[pf.run] = ingest(engine, questions, scored).run_id
            if keep:  # a page asking at once reads it here
                memory.put((gold_key, pf.sha256, pf.run, profile), result)
            bar.finish_run(n)
        start += len(part)
    bar.close()
    cache.trim()
    return ids

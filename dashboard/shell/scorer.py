"""Scoring a session's runs: each prediction file scored with a profile, from memory, from the
Parquet store on disk (dashboard/core/store.py) or computed on the shared pool, with a progress bar
shown once the work takes longer than a moment."""

from __future__ import annotations

import time

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.core import runs, store
from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Run
from dashboard.core.escape import md_escape
from dashboard.core.goldkey import salted
from dashboard.core.paths import Sources
from dashboard.core.predictions import PredictionTable
from dashboard.data.workspace import PredictionFile, Workspace
from dashboard.shell import cache
from dashboard.shell.context import CONTEXT
from scoring._gc import paused_gc
from scoring.evaluate import RunResult
from scoring.runner import assemble, score_runs

PROFILE_NOTE = "lens_profile_note"  # the sidebar placeholder under the profile picker
PROGRESS_DELAY = 0.25  # s of scoring before a progress bar is shown


def sources_key(src: Sources) -> tuple:
    return (str(src.benchmark), tuple(map(str, src.runs)), tuple(map(str, src.scores)), tuple(map(str, src.gold)),
            str(src.documents), src.labels, src.task)


def score(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str, bar=None) -> RunResult:
    """A prediction file scored with a profile: cached by file content and profile; computed with a
    progress bar showing questions done / total (`bar`: a `_Progress`, or None for a bar of its own)."""
    key = (gold_key, pf.sha256, pf.run, profile)
    result = cache.scored(key) or _stored(ws, gold_key, pf, profile)
    if result is None:
        own = bar is None
        bar = bar or _Progress(st.empty(), profile, len(ws.gold.items), stale=False)
        label = md_escape(pf.run)

        bar.update(label, 0, len(ws.gold.items))
        # the shared pool (scoring/runner.py): no new pool per run, no streamlit in the workers
        _, result = next(score_runs(ws.gold.items, [(pf.run, pf.loaded.items)], profile=profile,
                                    make=lambda _, the_plan, decisions: _maker(ws, gold_key, pf, profile)(the_plan, decisions)))
        bar.finish_run(len(ws.gold.items))
        cache.remember(key, result)
        if own:
            bar.close()
    return result


def columnar(pf: PredictionFile) -> bool:
    """Whether the run is kept in columns (its file's rows are a PredictionTable: every file the
    loader reads but one with text Arrow cannot hold, such as a lone surrogate, kept as records)."""
    return isinstance(pf.loaded.items, PredictionTable)


def _maker(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str):
    """What `score_runs` makes of a run's decisions: the run in columns, written to the cache folder
    (`_publish`); for a file kept as records, the run with its records (the row path)."""
    if not columnar(pf):
        return lambda the_plan, decisions: _publish_rows(ws, gold_key, pf, profile,
                                                         assemble(ws.gold.items, the_plan, decisions, profile=profile,
                                                                  name=pf.run))
    return lambda the_plan, decisions: _publish(ws, gold_key, pf, profile, decisions)


def _publish(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str, decisions: list) -> RunResult:
    """A run just scored, written to the cache folder and kept in columns; when another app server
    sharing the folder published the same entry first (the store's hard-link publish: one whole
    entry), the winner's entry is read back and used, so every server shows the same bytes (equal
    results either way: the key names everything the scores depend on). Its records read the
    decisions back from the entry -- or keep them, when the entry could not be written."""
    shared = cache.score_store()
    skey = _store_key(ws, gold_key, pf, profile)
    gold, preds = ws.gold.items, pf.loaded.items
    written, lost = runs.save_decisions(shared, skey, gold, preds, decisions)
    if lost:
        got = runs.load_column_run(shared, skey, gold, preds, profile, pf.run)
        if got is not None:
            return got
    acc, f1, an = (np.fromiter((d[k] for d in decisions), np.float64, len(decisions)) for k in range(3))
    if written:
        return runs.column_run(gold, preds, acc, f1, an, profile=profile, name=pf.run,
                               decisions_later=lambda: runs.stored_decisions(shared, skey))
    return runs.column_run(gold, preds, acc, f1, an, profile=profile, name=pf.run, decisions_later=lambda: decisions)


def _publish_rows(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str, result: RunResult) -> RunResult:
    """`_publish` for a run kept with its records (a file not held in columns)."""
    shared = cache.score_store()
    lost = shared.lost_races
    store.save_run(shared, _store_key(ws, gold_key, pf, profile), result)
    if shared.lost_races != lost:
        return store.load_run(shared, _store_key(ws, gold_key, pf, profile), ws.gold.items, pf.loaded.items,
                              profile, pf.run) or result
    return result


def _store_key(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str) -> str:
    return store.run_key(salted(store.files_sha256(ws.discovery.gold, gold_key), gold_key), pf.sha256, profile)


def _stored(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str) -> RunResult | None:
    """The run from the Parquet cache on disk (dashboard/core/store.py), remembered in memory too."""
    if not pf.sha256:
        return None
    result = _read(cache.score_store(), _store_key(ws, gold_key, pf, profile), ws, pf, profile)
    if result is not None:
        cache.remember((gold_key, pf.sha256, pf.run, profile), result)
    return result


def _read(shared: store.ScoreStore, key: str, ws: Workspace, pf: PredictionFile, profile: str) -> RunResult | None:
    """One run from its store entry: in columns, or with its records for a file kept as records."""
    load = runs.load_column_run if columnar(pf) else store.load_run
    return load(shared, key, ws.gold.items, pf.loaded.items, profile, pf.run)


READERS = 2  # runs read from the Parquet cache at once (Parquet reading and Arrow's joins leave the GIL)


def _from_disk(ws: Workspace, gold_key: tuple, profile: str, todo: list[PredictionFile]) -> list[PredictionFile]:
    """The runs of `todo` read from the Parquet cache on disk, READERS at a time, and remembered in
    memory; returns those it does not hold (to be scored)."""
    from concurrent.futures import ThreadPoolExecutor

    shared = cache.score_store()  # here: the readers' threads have no script run to call streamlit from
    with paused_gc():  # once for all the readers (a collection is paused process-wide)
        key_of = {pf.run: _store_key(ws, gold_key, pf, profile) for pf in todo if pf.sha256}

        def read(pf: PredictionFile) -> RunResult | None:
            return _read(shared, key_of[pf.run], ws, pf, profile) if pf.run in key_of else None

        with ThreadPoolExecutor(max_workers=max(1, min(READERS, len(todo)))) as pool:
            found = list(pool.map(read, todo))
    for pf, result in zip(todo, found):
        if result is not None:
            cache.remember((gold_key, pf.sha256, pf.run, profile), result)
    return [pf for pf, result in zip(todo, found) if result is None]


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


def scored_runs(ws: Workspace, gold_key: tuple, profile: str, slot=None) -> list[Run]:
    official = ws.official()
    runs: list[Run] = []
    scorable = [pf for pf in ws.predictions if pf.loaded.items] if ws.gold.items else []
    todo = [pf for pf in scorable if cache.scored((gold_key, pf.sha256, pf.run, profile)) is None]
    todo = _from_disk(ws, gold_key, profile, todo)
    # a first load has no numbers "from before" to warn about
    stale = CONTEXT in st.session_state
    bar = _Progress(slot or st.empty(), profile, len(ws.gold.items) * len(todo), stale=stale) if todo else None
    if bar is not None:  # runs left (todo): every one on the shared worker pool (both cores); the bar moves per chunk and per run
        labels = [md_escape(f"{pf.run} (run {k + 1} of {len(todo)})") for k, pf in enumerate(todo)]
        batch = [(pf.run, pf.loaded.items) for pf in todo]
        makers = [_maker(ws, gold_key, pf, profile) for pf in todo]
        for i, result in score_runs(ws.gold.items, batch, profile=profile,
                                    progress=lambda k, done, total: bar.update(labels[k], done, total),
                                    make=lambda k, the_plan, decisions: makers[k](the_plan, decisions)):
            pf = todo[i]
            cache.remember((gold_key, pf.sha256, pf.run, profile), result)
            bar.finish_run(len(ws.gold.items))
    for pf in scorable:
        result = score(ws, gold_key, pf, profile, bar)
        runs.append(Run(pf.run, RECOMPUTED, ws.label(str(pf.path)), result, official.get(pf.run, []), pf.origin,
                        pf.loaded.rows_read))  # its file's rows: a join is judged on them (analysis.Join)
    if bar is not None:
        bar.close()
    names = {r.name for r in runs}
    for system, rows in official.items():
        if system not in names:
            runs.append(Run(system, OFFICIAL, ws.label(rows[0].file), None, rows))
    return runs

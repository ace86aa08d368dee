"""The app's shared st.cache_* (the workspace, the engine and the benchmark's questions as it codes them,
analyses, the last few runs' results, comparisons), keyed by plain values (paths with sizes and mtimes,
content hashes, profile names; the workspace's and the analysis's, which name every file and run, handed to
Streamlit as one digest). Cached objects are shared by all
sessions and treated as read-only. A feature's own caches live in its panel (the page renders in
dashboard/evidence/panel.py, the annotations database in dashboard/annotations/store_panel.py), so
that the shell imports no feature.

The scored runs themselves live in the engine (scoring/engine/: dashboard/shell/scorer.py ingests them);
the RunResults a page asks for (a run's records) live in a small LRU store instead of a cached function,
so that scoring can drive a progress bar: Streamlit replays elements drawn inside a cached function,
which would break a bar created outside it.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import numbers
import threading
from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import streamlit as st

from dashboard.core.analysis import Analysis, question_frame
from dashboard.core.bounded import Bounded
from dashboard.core.paths import Sources, upload_folders_of
from dashboard.data.workspace import Discovery, Workspace, load_workspace
from scoring.engine.connection import EMBEDDED, DamagedStore, Engine, Target, memory_target, target_from
from scoring.engine.ingest import Questions
from scoring.evaluate import RunResult

if TYPE_CHECKING:
    import pandas as pd

RUN_CAPACITY = 16  # RunResults of (run, profile) pairs kept (a page's records; the scores are in the engine)
EVIDENCE_CAPACITY = 64  # evidence tables kept


_UPLOADED: dict[tuple, frozenset[str]] = {}  # workspace key -> the session upload folders its sources read
_UPLOADED_RUNS: dict[tuple, frozenset[tuple[str, str]]] = {}  # such a workspace key -> its uploaded runs' (sha256, name)
_ANALYSES: dict[tuple, set[tuple]] = {}  # such a workspace key -> the analysis keys built on it
_UPLOADED_LOCK = threading.Lock()


def digest(key: tuple) -> str:
    """A cache key of plain values (tuples of texts, numbers, None and paths) as one short text, for the cached
    functions below whose keys name every file or run: Streamlit hashes a cached function's arguments object by
    object at every call, and at 1,000 runs the workspace's and the analysis's keys took 0.08 s of every page's
    run (twice on a restart: the server's read-ahead and the first visit). The repr of such values is exact and
    the same at every call; TypeError for any other value, whose repr might not be."""
    todo: list[Any] = [key]
    while todo:
        v = todo.pop()
        if type(v) is tuple:
            todo.extend(v)
        elif not (v is None or type(v) is str or isinstance(v, (numbers.Number, PurePath))):  # numpy's numbers too
            raise TypeError(f"not a plain cache key: a {type(v).__name__}")
    return hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).hexdigest()


def workspace(key: tuple, sources: Sources, disc: Discovery | None = None) -> Workspace:
    """`key` = (the sources, the (path, size, mtime_ns) of every file they name): the workspace, read once
    (`_workspace_of`, under the key's `digest`)."""
    return _workspace_of(digest(key), key, sources, disc)


@st.cache_resource(show_spinner="Reading the benchmark files…", max_entries=8)
def _workspace_of(name: str, _key: tuple, _sources: Sources, _disc: Discovery | None = None) -> Workspace:
    """A workspace read
    from a session's uploads is remembered by that folder, so `evict_uploads` can drop it. Once read,
    it is moved out of the garbage collector's sight, as the analysis is (`analysis`): the benchmark's
    identity and its questions' codes, made next, otherwise paid a full collection walking the gold
    (0.3 s of a restart's 20,000 questions)."""
    folders = upload_folders_of(_sources)
    ws = load_workspace(_sources, _disc)  # the files the key names: not looked for again
    trim()
    gc.freeze()
    if folders:
        shas = frozenset((pf.sha256, pf.run) for pf in ws.predictions if any(f in str(pf.path) for f in folders))
        with _UPLOADED_LOCK:
            _UPLOADED[_key] = folders
            _UPLOADED_RUNS[_key] = shas
    return ws


def evict_uploads(names: list[str], release: bool = True) -> int:
    """Drop the workspaces, and the analyses built on them, that read from these (swept) session
    upload folders: without this an uploaded benchmark stayed in memory, in one of the 8 workspace
    slots, long after its session and its files were gone. The runs scored from those uploads go too
    (a 190 MB run's scored rows kept 447 MB after the sweep), and the memory is given back (`give_back`; issue 29.5,
    bench/bench_upload_memory.py; `release=False`: only the workspaces and analyses, as before, for
    that bench's `--before`). Returns the workspaces dropped."""
    gone = set(names)
    with _UPLOADED_LOCK:
        keys = [k for k, folders in _UPLOADED.items() if folders & gone]
        dropped = [(k, _ANALYSES.pop(k, set())) for k in keys]
        shas = frozenset().union(*(_UPLOADED_RUNS.pop(k, frozenset()) for k in keys))
        for k in keys:
            del _UPLOADED[k]
    for k, analyses in dropped:
        _workspace_of.clear(digest(k), None, None, None)
        for a in analyses:
            _analysis_of.clear(digest(a), None, None)
    doomed: list[tuple] = []

    def uploaded_run(k) -> bool:  # scored-run keys: (gold key, prediction sha256, run name, profile)
        if isinstance(k, tuple) and len(k) > 2 and (k[1], k[2]) in shas:
            doomed.append(k)
            return True
        return False

    if shas and release:
        _runs().discard_where(uploaded_run)
        for k in doomed:
            run_categories.clear(k, None)
    if dropped and release:
        give_back()
    return len(dropped)  # freed by reference counting (the records make no cycles: see analysis)


def give_back() -> None:
    """Return freed memory to the system: a garbage collection, then glibc's malloc_trim where there
    is one (glibc may otherwise keep the freed heap pages of a dropped upload in the process)."""
    gc.collect()
    trim()


def trim() -> None:
    """Arrow's allocator (jemalloc: dashboard/core/predictions.py) and glibc's malloc_trim, where there
    is one, give their free pages back to the system. Reading a campaign's files leaves them behind
    (parsed JSON, Parquet buffers: 126 MB at 50 runs), and the tables built next would otherwise stack
    on top of them."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the allocator keeps its own counsel
        pass


def analysis(key: tuple, build: Callable[[], Analysis]) -> Analysis:
    """`key` = (workspace key, profile, the scored runs' keys): the analysis, built once (`_analysis_of`,
    under the key's `digest`)."""
    return _analysis_of(digest(key), key, build)


@st.cache_resource(show_spinner=False, max_entries=16)
def _analysis_of(name: str, _key: tuple, _build: Callable[[], Analysis]) -> Analysis:
    """Once built, everything the load
    made is moved out of the garbage collector's sight (`gc.freeze`): a served app holds millions
    of long-lived, acyclic objects (1.27 M at 50 runs x 20,000 questions), and each full collection
    walked them all -- 0.6 s during which no session's script runs -- while they can only be
    freed by reference counting anyway. A cycle among them would outlive its cache entry; the
    records make none."""
    built = _build()
    with _UPLOADED_LOCK:
        if _key and _key[0] in _UPLOADED:  # _key[0]: the workspace key (dashboard/session/load.py)
            _ANALYSES.setdefault(_key[0], set()).add(_key)
    gc.freeze()
    return built


@st.cache_resource(show_spinner=False)
def _runs() -> Bounded[RunResult]:
    return Bounded(RUN_CAPACITY)


def runs_memory() -> Bounded[RunResult]:
    """The memory of the last runs' RunResults (taken in a script run, handed to code that runs outside it)."""
    return _runs()


def scored(key: tuple) -> RunResult | None:
    """A run scored before: `key` = (gold key, prediction sha256, run name, profile)."""
    return _runs().get(key)


def remember(key: tuple, result: RunResult) -> None:
    _runs().put(key, result)


# ----------------------------------------------------------------------------- evidence pages


@st.cache_resource(show_spinner=False, max_entries=64)
def page_figure(key: str, _build: Callable[[], object]) -> object:
    """The evidence viewer's Plotly figure (the page image and its boxes), `key` =
    evidence_panel.figure_key (a digest of file, mtime, page, zoom, height, boxes). Shared and
    read-only: st.plotly_chart copies a figure before encoding it. Each holds its page image
    (base64, 4/3 of the PNG), so this cache holds at most 64 page images beside page_png's 256."""
    return _build()


@st.cache_resource(show_spinner=False)
def evidence_tables() -> Bounded[Any]:  # a table, or (rates, page lists) under a summary key
    """The evidence metrics (dashboard.evidence.grounding.evidence_table) computed before, keyed by
    (sources, gold key, the runs' files, the documents' files): a store, not a cached function, so
    that the computation can drive a progress bar; single-flight, so that twenty sessions opening
    the app at once compute them once (`Bounded.get_or_build`)."""
    return Bounded(EVIDENCE_CAPACITY)


def evidence_metrics(key: tuple) -> Any:
    """The evidence metrics computed before for `key`, or None."""
    return evidence_tables().get(key)


# ----------------------------------------------------------------------------- the engine


def engine() -> Engine:
    """The engine of the settings as they are now (scoring.engine.connection.target_from: DuckDB in the cache
    folder, or the DuckLake of LENS_LAKE_CATALOG); EngineError when they name none that can be used. A cache
    folder's `engine/` that is a symbolic link is never written through: the runs are then held by DuckDB in
    memory for this server's life (dashboard.core.store.cache_problems says so on the Data page)."""
    from dashboard.core.digests import symlinked

    target = target_from()
    if target.kind == EMBEDDED and target.database is not None and symlinked(target.database.parent):
        target = memory_target()
        return _engine((target.kind, "symlinked", str(target_from().database)), target)
    return _engine((target.kind, str(target.database), target.catalog, target.data, target.memory), target)


@st.cache_resource(show_spinner=False)
def _engine(key: tuple, _target: Target) -> Engine:
    return Engine(_target)


_ENSURED: set[tuple] = set()
_DAMAGED: dict[tuple, list[str]] = {}  # engine -> sentences for the Data page: its files found damaged and set aside
_LOG = logging.getLogger(__name__)
_ENSURED_LOCK = threading.Lock()


def _store_key(eng: Engine) -> tuple:
    t = eng.target
    return (t.kind, str(t.database), t.catalog, t.data)


def damaged(eng: Engine) -> list[str]:
    """Sentences for the Data page: this engine's files found damaged and set aside in this process (not
    another engine's: a process that opened several cache folders shows each its own)."""
    with _ENSURED_LOCK:
        return list(_DAMAGED.get(_store_key(eng), ()))


def ensure_store(eng: Engine) -> None:
    """The store's tables made, or brought to this version's schema, once a process (a writer's turn)."""
    key = _store_key(eng)
    with _ENSURED_LOCK:
        if key in _ENSURED:
            return
    try:
        with eng.write():
            pass
    except DamagedStore as exc:  # a file that is not a whole database: set aside, and the runs scored into a new one
        aside = eng.set_aside()
        _LOG.warning("%s; moved to %s: the runs are scored again into a new store", exc, aside)
        with _ENSURED_LOCK:
            _DAMAGED.setdefault(key, []).append(
                f"{exc}: it was moved to {aside} and a new one made (every run is scored again into it).")
        with eng.write():
            pass
    with _ENSURED_LOCK:
        _ENSURED.add(key)


def _pages_key(ws: Workspace, gold_key: tuple) -> tuple:
    pages = tuple(sorted(ws.page_counts.items(), key=lambda kv: kv[0]))
    declared = tuple(sorted(ws.declared_pages().items(), key=lambda kv: kv[0]))
    return gold_key, hash(pages), hash(declared)


def questions(ws: Workspace, gold_key: tuple) -> Questions:
    """The workspace's questions as the engine codes them (their key: the benchmark the engine files the
    runs under), made once per gold and page counts. The question frame is not needed for them: a restart
    finds its runs in the engine and draws the leaderboard before the frame is made (`frame`)."""
    return _questions(_pages_key(ws, gold_key), ws)


def frame(ws: Workspace, gold_key: tuple) -> pd.DataFrame:
    """The workspace's question frame (dashboard.core.analysis.question_frame), made once per gold and page
    counts, when a page first asks for it (`Analysis.build(later_questions=...)`)."""
    return _frame(_pages_key(ws, gold_key), ws)


@st.cache_resource(show_spinner=False, max_entries=8)
def _questions(key: tuple, _ws: Workspace) -> Questions:
    from dashboard.core.store import engine_questions_cached  # Parquet's reader: not imported with the shell

    bench = _ws.discovery.benchmark
    return engine_questions_cached(_ws.gold.items, _ws.page_counts, _ws.declared_pages(), bench.absolute().name if bench else "")


@st.cache_resource(show_spinner=False, max_entries=8)
def _frame(key: tuple, _ws: Workspace) -> pd.DataFrame:
    return question_frame(_ws.gold.items, _ws.page_counts)


# ----------------------------------------------------------------------------- run comparison


@st.cache_resource(show_spinner="Comparing runs (bootstrap intervals)…", max_entries=64)
def comparison(key: tuple, _build: Callable[[], object]) -> object:
    """A comparison table of dashboard/compare/frames.py (deltas, weakest slices, ranks), `key` = (what,
    the runs, a hash of their scores and of the questions' slices, settings). Read-only."""
    return _build()


@st.cache_resource(show_spinner="Sorting the answers into disagreement categories…", max_entries=512)
def run_categories(key: tuple, _build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """One scored run's disagreement categories (dashboard.disagreement.frames.run_categories); `key` =
    the run's scoring key (gold key, prediction sha256, run name, profile)."""
    return _build()

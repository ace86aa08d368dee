"""Locating every answer from the overview and the explorer, as a Streamlit component:
`locate_first(ctx, question_ids, draw)`.

On data too large to locate at once (more than AUTO_PAIRS question × run pairs, where the pages
ask first), the documents are read in the background (dashboard/evidence/locating.py: one job for
every session, the documents of the questions shown first, the rest after) and a fragment polls it:
documents and pages done of their totals, the pages without a text layer apart (OCR, the slow
ones), and the time left at the rate measured so far (dashboard/evidence/progress.py). The page
around it is never rerun by the poll; once done, `draw()` is called inside the fragment (or, with
no `draw`, a button reruns the page to show what was located).

The located answers are kept on disk (dashboard/evidence/locating.py LocatedStore) under
`located_key(ctx)`, a digest of what they are computed from: a server start reads them back (on the
sample, ~2 s of locating at every start) instead of reading the documents and locating every answer again.
Only a table whose documents were read whole is kept (no page left to OCR, refused by it, or Tesseract
missing): one with pages not read would say "not searched" next time too.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.core.store import scorer_sha256
from dashboard.documents import ocr, pagetext, pdf
from dashboard.evidence import grounding, locate, locating, panel, render
from dashboard.evidence.grounding import AUTO_PAIRS, evidence_table
from dashboard.evidence.locate import question_paths
from dashboard.evidence.progress import describe, documents_of, fraction
from dashboard.shell import cache
from dashboard.shell.context import Context

POLL_S = 1.0  # how often the locating's progress is polled (seconds)


def questions_of_runs(ctx: Context, runs: list[str]) -> list[str]:
    """The gold questions (in gold order) that one of these runs answers: the overview's in view."""
    preds = panel.all_predictions(ctx)
    return [q.qid for q in ctx.workspace.gold.items if any(q.qid in preds.get(r, {}) for r in runs)]


def _where(ctx: Context) -> dict:
    ws = ctx.workspace
    bench, docs = ws.discovery.benchmark, ws.discovery.docs_dir
    return {q.qid: question_paths(q, ws.locations, bench, docs) for q in ws.gold.items}


_CODE = (locate.__file__, grounding.__file__, render.__file__, ocr.__file__, pdf.__file__,
         pagetext.__file__)  # the locating and reading code: a change in any locates again
_KEYS: dict[tuple, str] = {}  # (metrics key, profile, scores) -> located_key, for this process
_ON_DISK: set[str] = set()  # located keys read from disk, or kept (or found not whole) by this process
_DISK_LOCK = threading.Lock()


def _digest(h, *parts: object) -> None:
    for part in parts:
        h.update(repr(part).encode("utf-8", "surrogatepass") + b"\0")


def located_key(ctx: Context, where: dict | None = None) -> str:
    """The name of the located answers on disk: a sha256 of everything evidence_table reads -- each gold
    question's id, answers, format, documents and evidence (with its boxes) and image; each run's
    answers (its prediction file's sha256, or its loaded answers), which of them are right (the
    profile's decision), the benchmark's other files' bytes (raw responses, documents.jsonl's scanned
    PDFs); each question's document files by their content sha256; and the code that reads and locates."""
    ws, an = ctx.workspace, ctx.analysis
    memo = (panel.metrics_key(ctx), ctx.profile, ctx.corrections is not None, id(an), tuple(an.store.ids.items()))
    with _DISK_LOCK:
        if memo in _KEYS:
            return _KEYS[memo]
    h = hashlib.sha256(f"lens-located/{locating.LOCATED_FORMAT}".encode())
    for f in _CODE:
        h.update(Path(f).read_bytes())
    _digest(h, scorer_sha256())
    for q in ws.gold.items:
        _digest(h, q.qid, q.answers, q.answer_format, q.documents, q.image)
    disc = ws.discovery
    others = [p for p in (*disc.gold, *([disc.documents] if disc.documents else []), *disc.scores, *disc.summaries,
                          *disc.harness_files) if p.is_file()]
    _digest(h, [ocr.file_sha256(p) for p in others])  # each remembered by its identity, as the documents are
    sha = {pf.run: pf.sha256 for pf in ws.predictions}
    rights = {run: sorted(ids) for run, ids in an.right_sets().items()}
    answers = None
    for r in an.runs:
        _digest(h, r.name, r.source)
        if r.recomputed and r.name in sha:
            _digest(h, sha[r.name])
        elif not r.recomputed:
            _digest(h, [(s.qid, s.prediction, s.status) for s in r.official])
        else:  # not from a file of its own: its answers themselves
            answers = answers or panel.all_predictions(ctx)
            _digest(h, [(p.qid, p.text, p.status, p.evidence_pages, p.evidence) for p in answers[r.name].values()])
        _digest(h, rights.get(r.name, []))
    contents: dict[Path, str] = {}
    for qid, paths in (where if where is not None else _where(ctx)).items():
        for doc, path in paths.items():
            if path is not None and path not in contents:
                try:
                    contents[path] = ocr.file_sha256(path)
                except OSError:
                    contents[path] = "unreadable"
            _digest(h, qid, doc, None if path is None else contents[path])
    key = h.hexdigest()
    with _DISK_LOCK:
        _KEYS[memo] = key
    return key


def _read_whole(where: dict) -> bool:
    """Whether every document of these questions was read whole (no page refused or left unread by
    OCR, Tesseract not missing): only then are the located answers kept on disk."""
    paths = {p for ps in where.values() for p in ps.values() if p is not None}
    return not any((s := ocr.status(p)).problems or s.unread or s.missing for p in paths)


def _keep(key: str, table: object, where: dict, store: locating.LocatedStore | None = None) -> None:
    """Keep `table` on disk under `key`, once a process (a table whose documents were not read whole is
    not kept: tried once)."""
    import pandas as pd

    with _DISK_LOCK:
        if key in _ON_DISK:
            return
        _ON_DISK.add(key)
    if isinstance(table, pd.DataFrame) and _read_whole(where):
        (store or locating.LocatedStore()).put(key, table)


def keep_on_disk(ctx: Context) -> None:
    """After evidence_metrics(ctx) computed the located answers: keep them on disk (once a process)."""
    key = located_key(ctx)
    with _DISK_LOCK:
        if key in _ON_DISK:
            return
    table = cache.evidence_metrics(panel.metrics_key(ctx))
    if table is not None:
        _keep(key, table, _where(ctx))


def from_disk(ctx: Context) -> bool:
    """Whether the located answers were on disk (then they are evidence_metrics(ctx)'s now, in memory)."""
    key = located_key(ctx)
    disk = locating.LocatedStore()
    disk.sweep()  # once a process: located answers no server has used for a month go (a changed run leaves its old ones)
    table = disk.get(key)
    if table is None:
        return False
    with _DISK_LOCK:
        _ON_DISK.add(key)
    cache.evidence_tables().get_or_build(panel.metrics_key(ctx), lambda: table)
    return True


def _compute(ctx: Context, key: tuple, where: dict) -> Callable[[], object]:
    """The evidence table's computation for the background job, its inputs taken here (in the session);
    the table is kept on disk once computed."""
    ws = ctx.workspace
    items, preds = list(ws.gold.items), panel.all_predictions(ctx)
    right = ctx.analysis.right_sets()
    said = {r.name: panel.responses(ws, r.name) for r in ctx.analysis.runs}
    store = cache.evidence_tables()  # taken here: the job's thread has no script context
    disk, on_disk = locating.LocatedStore(), located_key(ctx, where)

    def compute() -> object:
        table = store.get_or_build(
            key, lambda: evidence_table(items, preds, lambda q: where[q.qid], right=right, responses=said))
        _keep(on_disk, table, where, disk)
        return table
    return compute


def under_way(ctx: Context) -> bool:
    """Whether a background locating of this data is running in this server (started by any session):
    a page opened or reloaded meanwhile shows its progress (`locate_first` joins it) instead of offering
    to start it -- the job is per data (dashboard/evidence/locating.py), not per session."""
    loc = locating.get(panel.metrics_key(ctx))
    return loc is not None and loc.job is not None and loc.job.running


def locate_first(ctx: Context, question_ids: list[str], draw: Callable[[], None] | None) -> bool:
    """True when the caller may draw the located answers now: they are computed already, or the data
    is small enough to compute them at once (evidence_metrics, with its own bar). Else the
    background locating is started (or joined) with the documents of `question_ids` first, its
    progress is drawn, and False is returned."""
    if panel.evidence_metrics_ready(ctx) or from_disk(ctx):
        return True
    if len(ctx.workspace.gold.items) * len(ctx.analysis.runs) <= AUTO_PAIRS:
        return True
    key = panel.metrics_key(ctx)
    where = _where(ctx)
    paths = {qid: list(p.values()) for qid, p in where.items()}
    every = documents_of([q.qid for q in ctx.workspace.gold.items], paths)
    first = documents_of(question_ids, paths)
    loc = locating.get(key)
    if loc is None or loc.job is None or loc.job.failed:
        panel.register_scanned(ctx.workspace)
        locating.start(key, every, first, _compute(ctx, key, where))
    else:
        loc.prefer(first)
    _progress(key, draw)
    return False


@st.fragment(run_every=POLL_S)
def _progress(key: tuple, draw: Callable[[], None] | None) -> None:
    loc = locating.get(key)
    job = loc.job if loc is not None else None
    if loc is None or job is None:
        return
    if job.failed:
        st.warning(md_escape(f"Locating the answers stopped: {job.error}"), icon=":material/error:")
        return
    if not job.running:
        if draw is not None:
            draw()
        elif st.button("Show where the answers are", icon=":material/plagiarism:", key="loc_show"):
            st.rerun(scope="app")
        return
    t = loc.tally()
    now = loc.current
    reading = f" Reading {now.name}." if now is not None else " Locating the answers in the texts read."
    st.progress(fraction(t), text=md_escape("Locating every answer, the documents of the questions shown first: "
                                            + describe(t, loc.seconds_left()) + "." + reading
                                            + " The rest of the page is usable meanwhile."))

"""The evidence viewer as a Streamlit component: `show_evidence(ctx, question, runs)`.

The question's documents one at a time (a cross-document question lists each), the page with
boxes for the gold evidence, the gold answer, each run's answer and its cited evidence, layer
toggles, stepping through the evidence pages, jumping to any page, zoom, thumbnails of the
neighbouring pages, the answer-location diagnosis per run and a PNG download. Page images are cached
here (page_png, thumbnail_png); the pure work is in locate.py, layers.py and render.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.data.workspace import fingerprint, responses
from dashboard.documents import ocr, pdf
from dashboard.documents.pdf import DocumentError, page_count
from dashboard.evidence import locating
from dashboard.evidence.grounding import evidence_table, pages_listed, run_rates
from dashboard.evidence.layers import OCR_WORDS, gold_pages, layers, page_layers, quote_message
from dashboard.evidence.locate import (
    OTHER_PAGE,
    answered,
    gold_lazily,
    locate_answer,
    missing_message,
    question_paths,
)
from dashboard.evidence.render import SWATCHES, ZOOMS, Rendered, draw_overlay, page_figure, render_page
from dashboard.shell import cache, context, viewstate
from dashboard.shell.context import Context
from scoring.model import DocRef, GoldQuestion, Prediction
from scoring.runner import predictions_by_id

THUMBS = 2  # neighbouring pages shown on each side
THUMB_ZOOM = 0.3


PREFIX = "ev_"  # session-state keys of this component
LINKED_PAGE = PREFIX + "linked_page"  # (question, document) whose page the view (View.page) holds
DEFAULT_ZOOM = 1.5


def run_predictions(ctx: Context, runs: list[str], qid: str) -> dict[str, Prediction | None]:
    """Each run's prediction of one question: the parsed row of a scored prediction file (with its
    cited evidence), or the text of an official score row."""
    out: dict[str, Prediction | None] = {}
    for name in runs:
        run = ctx.analysis.run(name)
        pred = None
        if run is not None and run.result is not None:
            pred = predictions_by_id(run.result).get(qid)
        elif run is not None:
            s = next((s for s in run.official if s.qid == qid), None)
            if s is not None:
                pred = Prediction(qid, s.prediction or "", s.status or "success")
        out[name] = pred
    return out


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


@st.cache_data(show_spinner=False, max_entries=256)
def page_png(path: str, mtime_ns: int, page: int, zoom: float) -> Rendered:
    """A page rendered to PNG bytes (with its pixel matrix), keyed by (file, mtime, page, zoom).
    Raises documents.pdf.DocumentError for a page the document does not have (not cached)."""
    return render_page(Path(path), page, zoom)


@st.cache_data(show_spinner=False, max_entries=512)
def thumbnail_png(path: str, mtime_ns: int, page: int, zoom: float) -> Rendered:
    """A small render for the viewer's strip of neighbouring pages (~10-30 kB each): a cache of its
    own, so that four thumbnails a question do not push the large page renders out of page_png."""
    return render_page(Path(path), page, zoom)



def _render(path: Path, page: int, zoom: float):
    return page_png(str(path), _mtime(path), page, zoom)


def _thumb(path: Path, page: int):
    return thumbnail_png(str(path), _mtime(path), page, THUMB_ZOOM)


def figure_key(path: Path, page: int, zoom: float, height: int, boxes) -> str:
    """What the viewer's figure depends on, as one digest (cheaper for the cache to hash than the
    boxes' labels): the file (path, mtime), the page, the zoom, the chart's height and every box
    drawn, in order."""
    parts = (str(path), _mtime(path), page, zoom, height,
             tuple((b.rect, b.colour, b.label, b.layer, b.dashed, b.fill) for b in boxes))
    return hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=16).hexdigest()


def _key(*parts: object) -> str:
    return PREFIX + ":".join(str(p) for p in parts)


def _doc_label(ref: DocRef, found: bool) -> str:
    pages = gold_pages(ref)
    what = f"evidence p. {', '.join(map(str, pages))}" if pages else "context only"
    return f"{ref.document_id} ({what}{'' if found else ', missing'})"


def show_evidence(ctx: Context, question: GoldQuestion, runs: list[str]) -> None:
    """The evidence viewer for one question and the chosen runs."""
    ws = ctx.workspace
    paths = question_paths(question, ws.locations, ws.discovery.benchmark, ws.discovery.docs_dir)
    refs = [d for d in question.documents if d.document_id] or [DocRef(doc_id) for doc_id in paths]
    if not refs:
        st.info("This question names no document, so there is no page to show.")
        return
    preds = run_predictions(ctx, runs, question.qid)
    register_scanned(ws)
    if len(refs) > 1:
        labels = {d.document_id: _doc_label(d, paths.get(d.document_id) is not None) for d in refs}
        chosen = st.radio("Document", list(labels), format_func=lambda d: md_escape(labels[d]), horizontal=True,
                          key=_key("doc", question.qid),
                          help="A cross-document question: its documents one at a time.")
        ref = next(d for d in refs if d.document_id == chosen)
    else:
        ref = refs[0]
    path = paths.get(ref.document_id)
    if path is None:
        loc = ws.locations.get(ref.document_id)
        st.warning(md_escape(missing_message(ref.document_id, ws.discovery.docs_dir, loc.how if loc else "not found")),
                   icon=":material/description:")
        _answer_notes(question, runs, preds, paths, ref, jump=None)
        return
    _viewer(question, ref, path, runs, preds, paths)


def register_scanned(ws) -> None:
    """Documents with `pdf_type: scanned` in documents.jsonl: every page is read by OCR."""
    ocr.register_scanned(ocr.scanned_paths(ws.documents.items, ws.locations))


def _page_count(path: Path) -> int | None:
    try:
        return page_count(path)
    except DocumentError:
        return None


VIEWER = PREFIX + "viewer"  # the viewer fragment's key: a callback inside its answer poller reruns it by name


# A fragment: turning a page, zooming, toggling a layer or opening a thumbnail reruns the viewer
# alone, not the page around it (the question picker, the metrics tables, the sidebar).
@st.fragment(key=VIEWER)
def _viewer(q: GoldQuestion, ref: DocRef, path: Path, runs: list[str], preds: dict, paths: dict) -> None:
    n = _page_count(path)
    if n is None:
        st.error(md_escape(f"{path.name} cannot be opened as a PDF or image. Replace the file in the docs folder."))
        return
    evidence = [p for p in gold_pages(ref) if 1 <= p <= n]
    beyond = [p for p in gold_pages(ref) if p > n]
    if beyond:
        st.warning(md_escape(f"The gold names page{'s' if len(beyond) > 1 else ''} {', '.join(map(str, beyond))} of "
                             f"{ref.document_id}, which has {n} pages: the gold and the PDF disagree."))
    key = _key("page", q.qid, ref.document_id)
    first = evidence[0] if evidence else 1
    v = viewstate.view()
    # the link's page (View.page) is this question's when the view names it and no other question's
    # page has been written into the view since (LINKED_PAGE)
    linked = v.question == q.qid and st.session_state.get(LINKED_PAGE, (q.qid, ref.document_id)) == (q.qid, ref.document_id)
    if key not in st.session_state or not 1 <= st.session_state[key] <= n:
        st.session_state[key] = v.page if linked and 1 <= v.page <= n else first

    def go(page: int) -> None:
        st.session_state[key] = page

    current = st.session_state[key]
    before = [p for p in evidence if p < current]
    after = [p for p in evidence if p > current]
    cols = st.columns([1.35, 1.1, 1.1, 1.45], vertical_alignment="bottom")  # "Previous" whole at 800 px
    cols[0].button("Previous", icon=":material/arrow_back:", disabled=not before, width="stretch",
                   help="The previous gold evidence page", on_click=go, args=(before[-1] if before else current,),
                   key=_key("prev", q.qid, ref.document_id))
    cols[1].button("Next", icon=":material/arrow_forward:", icon_position="right", disabled=not after,
                   width="stretch", help="The next gold evidence page", on_click=go,
                   args=(after[0] if after else current,), key=_key("next", q.qid, ref.document_id))
    cols[2].number_input(f"Page (of {n})", min_value=1, max_value=n, step=1, key=key,
                         help=f"Go to any page of the document (1 to {n})")
    zooms = {round(z * 100): z for z in ZOOMS}
    viewstate.seed(_key("zoom"), zooms.get(v.zoom, DEFAULT_ZOOM))
    zoom = cols[3].select_slider("Zoom", options=list(ZOOMS), format_func=lambda z: f"{round(z * 100)} %",
                                 key=_key("zoom"), help=f"Rendering resolution and size. Above {round(DEFAULT_ZOOM * 100)} % the page is magnified inside the "
                                      "chart: drag it to move around, double-click to go back. At "
                                      f"{round(DEFAULT_ZOOM * 100)} % and below, drag on the page to zoom into a region.")
    all_layers = layers(runs)
    names = [la.name for la in all_layers]
    swatch = {la.name: f":{SWATCHES.get(la.colour, 'gray')}[:material/{'check_box_outline_blank' if la.dashed else 'stop'}:]"
              for la in all_layers}
    usual = [name for name in names if name != OCR_WORDS]
    viewstate.seed(_key("layers", *runs), usual if v.layers is None else [name for name in names if name in v.layers])
    # the page first, its layer switches under it: at 800 px the switches wrap to three rows, which pushed
    # the page below the fold (the chart's legend above the page toggles the layers too)
    shown = st.container()
    chosen = st.pills("Layers", names, selection_mode="multi", key=_key("layers", *runs),
                      format_func=lambda name: f"{swatch[name]} {md_escape(name)}",
                      help="Show or hide each kind of box. The chart's legend toggles them too; hover a box for its label.")
    page = st.session_state[key]
    if v.question == q.qid:  # the link holds what the viewer shows: page, zoom and layers
        st.session_state[LINKED_PAGE] = (q.qid, ref.document_id)
        v.page = 0 if page == first else page
        v.zoom = 0 if zoom == DEFAULT_ZOOM else round(zoom * 100)
        v.layers = None if set(chosen) == set(usual) else [name for name in names if name in chosen]
        viewstate.sync_url_in_fragment()  # a page turn reruns this fragment alone: app.py's sync does not run
    where = (f"evidence page {evidence.index(page) + 1} of {len(evidence)}" if page in evidence
             else "not an evidence page" if evidence else "the gold names no evidence page")
    shown.caption(md_escape(f"{ref.document_id} · page {page} of {n} · {where}"))
    try:
        rendered = _render(path, page, zoom)
        drawn = page_layers(q, ref, path, page, runs, preds, set(chosen))
    except DocumentError as exc:
        shown.warning(md_escape(str(exc)))
        return
    if rendered.capped:
        shown.caption(f"Rendered at {round(rendered.zoom * 100)} % to stay under the pixel limit.")
    # the zoom sets the chart's height (the page keeps its aspect ratio): 840 px for A4 at 150 %;
    # up to the default zoom the chart grows with it; beyond, it keeps the default's size and magnifies the
    # page inside it (a taller chart was capped at the column's width: blank space to scroll through)
    height = round(max(320, min(1800, 560 * min(zoom, DEFAULT_ZOOM) * rendered.height / max(rendered.width, 1) / 1.414)))
    magnify = max(1.0, zoom / DEFAULT_ZOOM)
    # built once per page, zoom and boxes and shared read-only: building and validating it cost a
    # fifth of a question switch (bench/profile_page.py)
    fig = cache.page_figure(figure_key(path, page, zoom, height, drawn.boxes),
                            lambda: page_figure(rendered, drawn.boxes, height=height, magnify=magnify))
    shown.plotly_chart(fig, width="stretch", key=_key("fig", q.qid, ref.document_id),
                       config={"displaylogo": False, "scrollZoom": False})
    state = ocr.status(path)
    if drawn.ocr:
        st.caption(f"No text layer: this page was read by OCR (Tesseract, {ocr.DPI} dpi, {drawn.ocr_words} words); "
                   f"the “{OCR_WORDS}” layer outlines what it read.")
    elif not drawn.has_text and state.missing:
        st.info(f"This document has pages without a text layer: {ocr.NO_TESSERACT} (`{ocr.INSTALL_HINT}`). "
                "Until then quotes and answers are not searched on them; explicit boxes are drawn.",
                icon=":material/document_scanner:")
    elif not drawn.has_text:
        st.caption(md_escape("This page is an image without a text layer: quotes and answers cannot be searched on it"
                             + (f" ({state.problems[page]})" if page in state.problems else "") + "; explicit boxes are drawn."))
    for note in drawn.quotes:
        st.caption(md_escape("Gold quote " + quote_message(note)))
    if drawn.cited_here:
        st.caption(md_escape("Cited by " + ", ".join(drawn.cited_here) + "."))
    _answer_notes(q, runs, preds, paths, ref, jump=go)
    # drawn on click only: encoding the page with its boxes cost most of a page switch
    boxes = drawn.boxes
    st.download_button("Download this page with its boxes (PNG)", lambda: draw_overlay(rendered, boxes),
                       file_name=f"{ref.document_id}-p{page}.png", mime="image/png", icon=":material/download:",
                       key=_key("png", q.qid, ref.document_id), on_click="ignore")
    _thumbnails(path, page, n, evidence, go, key)


def _answer_notes(q: GoldQuestion, runs: list[str], preds: dict, paths: dict, ref: DocRef, jump) -> None:
    """Per run, where its answer is: on an evidence page, only elsewhere (with buttons to open those
    pages), nowhere, or not searched. Searching needs each document's whole text, long documents and
    pages without a text layer read by worker processes: that reading runs in the background
    (ocr.background, one job per document for every session) while the rest of the page is usable; a
    fragment polls its progress and draws the answers when it is done."""
    if not runs:
        return
    st.markdown("**Where each answer appears**")
    jobs = _text_jobs(paths)
    if any(j.running for j in jobs.values()):
        # the poller is a fragment of its own: a page button pressed in it must redraw the viewer around it
        _answers_when_read(q, runs, preds, paths, ref, None if jump is None else _redrawing(jump), jobs)
    else:
        _answer_lines(q, runs, preds, paths, ref, jump, jobs)


def _redrawing(jump):
    """`jump` (the viewer's page setter) as a callback that also reruns the viewer fragment by its key:
    pressed inside the answer poller, a button would otherwise rerun the poller alone."""
    def go(page: int) -> None:
        jump(page)
        st.rerun(scope=VIEWER)
    return go


SEARCH_GRACE_S = 1.0  # a search done within this long is drawn at once, without a progress bar



def _text_jobs(paths: dict) -> dict[Path, ocr.Job]:
    """The background reading of each of the question's documents, started if needed; waits up to
    SEARCH_GRACE_S for them (a short document's text is there by then)."""
    jobs = {p: ocr.background(locating.text_key(p), locating.read_text(p)) for p in dict.fromkeys(v for v in paths.values() if v is not None)}
    for j in jobs.values():
        j.finished.wait(SEARCH_GRACE_S)  # the grace of one search (not a timed assertion)
        if j.running:
            break
    return jobs


POLL_S = 1.0  # how often a running reading's progress is polled (seconds)


@st.fragment(run_every=POLL_S)
def _answers_when_read(q: GoldQuestion, runs: list[str], preds: dict, paths: dict, ref: DocRef, jump, jobs) -> None:
    """Declared only while a document is read in the background (the caller decides, so a page drawn
    after the reading declares no poller at all): the reading's progress, polled every POLL_S, and
    once every reading is done the answer lines, drawn here, in this fragment alone. It never reruns
    the page: a full rerun from a poller re-created the page's widgets while the user was typing in
    them and lost what was typed (issue 29). Until the viewer or the page reruns, the poll goes on
    drawing the same lines from a memo (`_located`), which costs a dictionary look-up."""
    running = [(p, j) for p, j in jobs.items() if j.running]
    if not running:
        _answer_lines(q, runs, preds, paths, ref, jump, jobs)
        return
    for p, j in running:
        frac = j.done / j.total if j.total else 0.0
        pages = f"{j.done} / {j.total} pages" if j.total else "starting"
        st.progress(min(1.0, frac), text=md_escape(f"Reading {p.name} to search it for each answer: {pages} "
                                                   "(the rest of the page is usable meanwhile)"))


BACKGROUND_DOCS = 16  # documents read in the background for the metrics at most (pdf.py keeps 16 whole texts)


def _metric_jobs(ctx: Context) -> dict[Path, ocr.Job] | None:
    ws = ctx.workspace
    paths = list(dict.fromkeys(loc.path for loc in ws.locations.values() if getattr(loc, "path", None) is not None))
    if not paths or len(paths) > BACKGROUND_DOCS or cache.evidence_metrics(metrics_key(ctx)) is not None:
        return None
    register_scanned(ws)
    return _text_jobs({str(p): p for p in paths})


def metrics_when_read(ctx: Context, draw) -> None:
    """`draw()` (the Evidence page's metrics tables) once the context's documents are read: at once
    when they are; else a fragment polls the reading every POLL_S with a progress bar and calls
    `draw()` inside itself when it is done -- the page around it is never rerun (see
    `_answers_when_read`)."""
    jobs = _metric_jobs(ctx)
    if jobs is None or not any(j.running for j in jobs.values()):
        draw()
    else:
        _metrics_progress(jobs, draw)


@st.fragment(run_every=POLL_S)
def _metrics_progress(jobs: dict, draw) -> None:
    running = [p for p, j in jobs.items() if j.running]
    if not running:
        draw()
        return
    done = len(jobs) - len(running)
    j = jobs[running[0]]
    pages = f"{j.done:,} / {j.total:,} pages" if j.total else "starting"
    st.progress(done / len(jobs), text=md_escape(f"Reading the documents for the metrics: {done} / {len(jobs)} done "
                                                 f"({running[0].name}: {pages}); the rest of the page is usable meanwhile"))


def _answer_lines(q: GoldQuestion, runs: list[str], preds: dict, paths: dict, ref: DocRef, jump, jobs) -> None:
    failed = {p: j for p, j in jobs.items() if j.failed}
    for p, j in failed.items():  # the document's problem, not the page's
        st.warning(md_escape(f"{p.name} could not be searched for the answers: {j.error}"), icon=":material/description:")
        if st.button("Try again", key=_key("retry", q.qid, p.name), icon=":material/refresh:"):
            ocr.forget(j.key)
            st.rerun()
    usable = {d: (None if v in failed else v) for d, v in paths.items()}
    located, unread = _located(q, runs, preds, usable, jobs)
    for note in unread:
        st.caption(md_escape("OCR: " + note))
    for run in runs:
        pred = preds.get(run)
        text = answered(pred)
        loc = located[run]
        icon = loc.mark  # a green check only for an answer on an evidence page not known to be wrong
        shown = text if pred is not None else "(no prediction)"
        st.markdown(icon + " " + md_escape(f"{run}: “{' '.join(shown.split())[:120]}” — {loc.message}"))
        other = loc.other_pages.get(ref.document_id, [])
        if jump is not None and loc.location == OTHER_PAGE and other:
            cols = st.columns(min(6, len(other)) + 1)
            for col, p in zip(cols, other[:6]):
                col.button(f"Open p. {p}", key=_key("jump", q.qid, run, ref.document_id, p), on_click=jump, args=(p,))


LOCATED = PREFIX + "located"  # the last answer search drawn: (what it depends on, its result), for the poller's reruns


def _located(q: GoldQuestion, runs: list[str], preds: dict, usable: dict, jobs: dict) -> tuple[dict, list[str]]:
    """Each run's answer located in the question's documents, and the OCR notes of those documents;
    the last one kept in the session, so the answer poller redrawing the same lines every second
    (`_answers_when_read`) does not search again."""
    an = context.context().analysis if context.CONTEXT in st.session_state else None
    memo = (q.qid, tuple(runs), tuple(answered(preds.get(r)) for r in runs), tuple(sorted(map(str, usable.items()))),
            tuple((repr(j.key), j.running, j.failed) for j in jobs.values()), id(an))
    kept = st.session_state.get(LOCATED)
    if kept is not None and kept[0] == memo:
        return kept[1]
    right = an.right_runs(q.qid) if an is not None else None
    ws = context.context().workspace if an is not None else None
    said = {run: (responses(ws, run) or {}).get(q.qid) for run in runs} if ws is not None else {}  # raw responses
    gold = gold_lazily(q, usable)  # where the gold is, for the one rule: searched once for every run
    located = {run: locate_answer(answered(preds.get(run)), q, usable, right=None if right is None else run in right,
                                  response=said.get(run), gold=gold) for run in runs}
    unread = [ocr.status(p).message for p in dict.fromkeys(v for v in usable.values() if v is not None)
              if ocr.status(p).unread or ocr.status(p).problems]
    st.session_state[LOCATED] = (memo, (located, unread))
    return located, unread


def _thumbnails(path: Path, page: int, n: int, evidence: list[int], go, key: str) -> None:
    pages = [p for p in range(page - THUMBS, page + THUMBS + 1) if 1 <= p <= n]
    if len(pages) <= 1:
        return
    st.markdown("**Neighbouring pages**")
    cols = st.columns(2 * THUMBS + 1)
    for col, p in zip(cols, pages):
        try:
            thumb = _thumb(path, p)
        except DocumentError:
            continue
        mark = " · evidence" if p in evidence else ""
        col.image(thumb.png, output_format="PNG", caption=f"p. {p}{mark}" + (" (shown)" if p == page else ""), width="stretch")
        col.button(f"Open p. {p}", key=_key("thumb", key, p), on_click=go, args=(p,), disabled=p == page,
                   width="stretch")



def all_predictions(ctx: Context) -> dict[str, Mapping[str, Prediction]]:
    """Each run's predictions by question id (official-only runs: their prediction text); a run in
    columns builds each record when it is looked up."""
    out: dict[str, Mapping[str, Prediction]] = {}
    for run in ctx.analysis.runs:
        if run.recomputed and run.result is not None:
            out[run.name] = predictions_by_id(run.result)
        else:
            out[run.name] = {s.qid: Prediction(s.qid, s.prediction or "", s.status or "success") for s in run.official}
    return out


def metrics_key(ctx: Context) -> tuple:
    ws, an = ctx.workspace, ctx.analysis
    located = sorted((doc, str(loc.path)) for doc, loc in ws.locations.items() if loc.path)
    return (repr(ctx.sources), ctx.gold_key, tuple((pf.run, pf.sha256) for pf in ws.predictions),
            tuple((r.name, r.source, len(r.official)) for r in an.runs), tuple(located),
            fingerprint([Path(p) for _, p in located]))


def evidence_metrics(ctx: Context):
    """dashboard.evidence.grounding.evidence_table for every run and question of the context, computed once
    per data (with a progress bar) and kept in dashboard.shell.cache: one row per (question_id, run) with
    evidence_precision, evidence_recall, grounding, answer_location, answer_pages_evidence,
    answer_pages_elsewhere."""
    ws = ctx.workspace
    bench, docs = ws.discovery.benchmark, ws.discovery.docs_dir
    key = metrics_key(ctx)
    register_scanned(ws)

    def compute():
        bar = st.progress(0.0, text="Locating every answer in its documents…")
        where = {q.qid: question_paths(q, ws.locations, bench, docs) for q in ws.gold.items}
        _read_documents([p for paths in where.values() for p in paths.values() if p is not None], bar)
        right = ctx.analysis.right_sets()  # the right answers and raw responses: refusals and failed extractions apart
        said = {r.name: responses(ws, r.name) for r in ctx.analysis.runs}
        table = evidence_table(ws.gold.items, all_predictions(ctx), lambda q: where[q.qid],
                               progress=lambda d, t: bar.progress(d / t, text=f"Locating answers: {d} / {t}"),
                               right=right, responses=said)
        bar.empty()
        return table

    # one session computes; the others opening the app meanwhile wait for its result
    note = None
    store = cache.evidence_tables()
    if store.get(key) is None and store.busy(key):
        note = st.empty()
        note.caption("Another session is locating every answer in its documents; waiting for its result…")
    table = store.get_or_build(key, compute)
    if note is not None:
        note.empty()
    return table


def evidence_metrics_ready(ctx: Context) -> bool:
    """Whether evidence_metrics(ctx) is computed already (then it returns at once, without a bar)."""
    return cache.evidence_metrics(metrics_key(ctx)) is not None


def _read_documents(paths: list[Path], bar) -> None:
    """Each document's whole text read before the answers are searched (pdf.doc_text: from memory,
    from its disk cache, or from the PDF), the bar saying which document and how many of its pages:
    a 2,415-page manual is seconds of reading that the per-answer count would show as a stalled bar.
    Only when memory keeps them all (pdf.DOC_SLOTS); else the search reads each as it comes."""
    todo = list(dict.fromkeys(paths))
    if not todo or len(todo) > pdf.DOC_SLOTS:
        return
    for k, path in enumerate(todo):
        def tick(done: int, total: int, k: int = k, name: str = path.name) -> None:
            bar.progress(min(1.0, (k + done / max(total, 1)) / len(todo)),
                         text=md_escape(f"Reading the documents: {k + 1} / {len(todo)} ({name}: {done:,} / {total:,} pages)"))

        bar.progress(k / len(todo), text=md_escape(f"Reading the documents: {k + 1} / {len(todo)} ({path.name})"))
        try:
            pdf.doc_text(path, tick)
        except (pdf.DocumentError, OSError):
            continue  # the search says what is wrong with it


def evidence_summary(ctx: Context):
    """(per-run rates, the per question and run table with its page lists as text) of
    evidence_metrics(ctx): derived once per data and kept beside it, not on every rerun."""
    def build():
        table = evidence_metrics(ctx)
        return run_rates(table), pages_listed(table)

    return cache.evidence_tables().get_or_build((*metrics_key(ctx), "summary"), build)

"""Streamlit pieces of the question x run matrix (views/matrix.py): which runs (a series by step, or every
run), rows of questions or documents, the explorer's field filters and search, the order, one page at a
time (never the whole matrix in the browser), and the cell clicked -- the question with both answers, the
run's and the previous run's. The frames are dashboard/matrix/frames.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.core.escape import md_escape
from dashboard.core.links import View, field_label, to_params
from dashboard.explorer.frames import filter_options, filter_questions
from dashboard.matrix import frames as M
from dashboard.shell import viewstate
from dashboard.shell.context import Context
from dashboard.trends import frames as T

EVERY = "(every run)"
ROW_PX = 35
EMPTY_SCORES = pd.DataFrame(columns=["run", "question_id", "status", "prediction"])


def _runs(ctx: Context, state: dict) -> tuple[str, list[str], list[int | None]]:
    an, ws = ctx.analysis, ctx.workspace
    view = viewstate.view()
    series = T.series(an, ws, view.steps)
    options = [*series, EVERY]
    wanted = state.get("mx_series")
    viewstate.seed("mx_series", wanted if wanted in options else options[0])
    if st.session_state.get("mx_series") not in options:
        st.session_state["mx_series"] = options[0]
    labels = {name: f"{name} ({len(m)} checkpoints)" for name, m in series.items()} | {EVERY: "every run, by step"}
    picked = str(st.selectbox("Runs", options, key="mx_series", format_func=labels.__getitem__,
                              help="A series of checkpoints ordered by step, or every scored run (runs with a step "
                                   "first, by series and step, then the others by name)."))
    if picked != EVERY:
        members = series[picked]
        return picked, [c.run for c in members], [c.step for c in members]
    points = T.checkpoints_of(ws, T.scored_runs(an), view.steps)
    points.sort(key=lambda c: (c.step is None, c.series, c.step if c.step is not None else 0, c.run))
    return picked, [c.run for c in points], [c.step for c in points]


def _filters(ctx: Context, view: View) -> View:
    """The explorer's field filters and its search (the view's: kept in the URL, shared with the explorer)."""
    an = ctx.analysis
    search = st.text_input("Search", value=view.search, key="mx_search", placeholder="question id, words of a question or its gold",
                           help="Finds text (ignoring case) in question ids, questions and gold answers.")
    chosen: dict[str, list[str]] = {}
    with st.expander("Filters", expanded=bool(view.filters), icon=":material/filter_list:"):
        cols = st.columns(4)
        for k, (name, values) in enumerate(filter_options(an, view).items()):
            viewstate.seed(f"mx_f.{name}", [x for x in view.filters.get(name, []) if x in values])
            chosen[name] = cols[k % 4].multiselect(field_label(name), values, key=f"mx_f.{name}", placeholder="any")
    return replace(view, filters={k: x for k, x in chosen.items() if x}, search=search)


def page(ctx: Context) -> None:
    """The matrix page."""
    an = ctx.analysis
    view = viewstate.view()
    state = view.matrix
    name, runs, steps = _runs(ctx, state)
    c2, c3 = st.columns(2)
    viewstate.seed("mx_by", M.DOCUMENT if state.get("mx_by") == M.DOCUMENT else M.QUESTION)
    by = c2.segmented_control("Rows", [M.QUESTION, M.DOCUMENT], key="mx_by") or M.QUESTION
    viewstate.seed("mx_sort", state.get("mx_sort") if state.get("mx_sort") in M.SORTS else "forgotten")
    sort = str(c3.selectbox("Order", list(M.SORTS), key="mx_sort", format_func=M.SORTS.__getitem__))
    if len(runs) < 1:
        st.info("No scored run to show.")
        return
    new = _filters(ctx, view)
    if (new.filters, new.search) != (view.filters, view.search):
        view.filters, view.search = new.filters, new.search
    questions = an.questions
    kept = filter_questions(questions, EMPTY_SCORES, View(filters=view.filters, search=view.search))
    g = M.grid(an, runs, steps, [str(q) for q in questions.index])
    positions = np.flatnonzero(questions.index.isin(kept.index))
    at = state.get("mx_at", "")
    lost = M.lost_at(g, int(at)) if at.isdecimal() else None
    if at and lost is None:
        at = ""
    if lost is not None:
        positions = positions[lost[positions]]
        k = steps.index(int(at))
        st.warning(md_escape(f"Only the questions right at {runs[k - 1]} and wrong at {runs[k]} (step {at}) and at the "
                             f"latest run, {runs[-1]}: the questions a lasting drop from step {at} lost."),
                   icon=":material/trending_down:")
        if st.button("Show every question", key="mx_all"):
            at = ""
            state.pop("mx_at", None)
            st.rerun()
    order = M.ordered(g, positions, sort)
    tally = M.counts(g, positions)
    st.caption(md_escape(f"{len(positions):,} of {len(questions):,} questions × {len(runs)} runs: {tally['forgotten']:,} "
                         f"forgotten (right at the first run that answered, not at the last), {tally['learned']:,} learned, "
                         f"{tally['flipped']:,} flipped at least once. Right = the profile's right answer; "
                         f"{M.SYMBOL[M.RIGHT]} right · {M.SYMBOL[M.PARTIAL]} partial credit below it · "
                         f"{M.SYMBOL[M.WRONG]} wrong · {M.SYMBOL[M.MISSING]} missing."))
    if by == M.DOCUMENT:
        docs = questions["cluster"].astype(str).tolist() if "cluster" in questions.columns else [str(q) for q in questions.index]
        names, right, seen = M.document_rows(g, positions, docs)
        flips = np.bincount(np.unique(np.asarray(docs, dtype=object)[positions].astype(str), return_inverse=True)[1],
                            weights=g.keys()["flips"][positions], minlength=len(names)) if len(names) else np.zeros(0)
        doc_order = M.ordered_documents(g, right, seen, flips, sort)
        total = len(names)
    else:
        total = len(order)
    pages = max(1, -(-total // M.PAGE_ROWS))
    current = min(pages, max(1, int(state.get("mx_page") or 1) if str(state.get("mx_page") or "1").isdecimal() else 1))
    viewstate.seed("mx_page_no", current)
    if st.session_state.get("mx_page_no", 1) > pages:
        st.session_state["mx_page_no"] = pages
    p1, p2 = st.columns([1, 4], vertical_alignment="bottom")
    number = int(p1.number_input("Page", min_value=1, max_value=pages, step=1, key="mx_page_no"))
    first = (number - 1) * M.PAGE_ROWS
    p2.caption(f"rows {min(total, first + 1):,}–{min(total, first + M.PAGE_ROWS):,} of {total:,} "
               f"({M.PAGE_ROWS} a page)")
    frame = (M.document_page(g, names, right, seen, flips, doc_order, number - 1) if by == M.DOCUMENT
             else M.question_page(g, order, questions, number - 1))
    config = {run: st.column_config.TextColumn(run, width="small", help=f"step {s}" if s is not None else "no step")
              for run, s in zip(runs, steps)}
    config["Question"] = st.column_config.TextColumn(pinned=True)  # stays in view while the runs scroll by
    config["Document"] = st.column_config.TextColumn(pinned=True)
    config["Text"] = st.column_config.TextColumn(width="small", help="the question (cut); the cell opens it whole")
    shown = frame.style.map(M.cell_style, subset=[r for r in runs if r in frame.columns])  # this page's cells only
    event = st.dataframe(shown, hide_index=True, key=f"mx_grid_{by}", on_select="rerun", selection_mode="single-cell",
                         column_config=config, height=min(720, ROW_PX * (len(frame) + 1) + 3))
    cells = event.selection.cells if event is not None else []
    if cells:
        row, column = cells[0]
        if 0 <= row < len(frame):
            if by == M.DOCUMENT:
                state.pop("mx_q", None)
                st.session_state["mx_doc"] = str(frame.iloc[row]["Document"])
            else:
                state["mx_q"] = str(frame.iloc[row]["Question"])
                state["mx_run"] = column if column in runs else runs[-1]
    state.update({"mx_series": name if name != EVERY else "", "mx_by": by if by == M.DOCUMENT else "",
                  "mx_sort": sort if sort != "forgotten" else "", "mx_page": str(number) if number > 1 else "",
                  "mx_at": at})
    for empty in [key for key, value in state.items() if not value]:
        del state[empty]
    if by == M.DOCUMENT:
        _document_detail(view, state)
    else:
        _detail(ctx, g, state)


def _document_detail(view: View, state: dict) -> None:
    doc = st.session_state.get("mx_doc")
    if not doc:
        st.caption("Click a cell to look at that document's questions.")
        return
    st.markdown(md_escape(f"Document {doc}"))
    if st.button("Show its questions", key="mx_doc_open", icon=":material/quiz:"):
        view.filters = {**view.filters, "document": [doc]}
        for key in [k for k in st.session_state if str(k).startswith("mx_f.")]:
            del st.session_state[key]
        state["mx_by"] = ""
        st.session_state["mx_by"] = M.QUESTION
        st.session_state.pop("mx_doc", None)
        st.rerun()


def _detail(ctx: Context, g: M.Grid, state: dict) -> None:
    """The question clicked: its text and gold, then the answers of the run clicked and of the run before it."""
    qid, run = state.get("mx_q"), state.get("mx_run")
    if not qid or qid not in ctx.analysis.gold or run not in g.runs:
        st.caption("Click a cell to open the question with that run's answer beside the previous run's.")
        return
    an = ctx.analysis
    q = an.gold[qid]
    k = g.runs.index(run)
    other = g.runs[k - 1] if k > 0 else (g.runs[k + 1] if len(g.runs) > 1 else run)
    pair = [other, run] if k > 0 else [run, other]
    st.subheader("The question")
    st.markdown(md_escape(f"{qid} · documents {', '.join(q.document_ids) or 'none'}"))
    st.text(str(q.question))
    st.markdown("**Gold:** " + md_escape(str(q.gold_answer)))
    pos = g.ids.index(qid)
    cols = st.columns(len(dict.fromkeys(pair)))
    for col, name in zip(cols, dict.fromkeys(pair)):
        i = g.runs.index(name)
        got = M.answer(an, name, qid)
        step = g.steps[i]
        col.markdown(md_escape(f"{name}" + (f" (step {step})" if step is not None else "")) + f" — **{M.WORD[int(g.state[i, pos])]}**")
        if got:
            col.caption(md_escape(f"Accuracy {got['accuracy']:.2f} · status {got['status']}"))
            col.code(got["prediction"][:5_000] or "(empty answer)", language=None, wrap_lines=True)
        else:
            col.caption("no answer")
    link = View(runs=list(dict.fromkeys(pair)), question=qid, data=viewstate.view().data)
    st.page_link("views/questions.py", label="Open both answers in the question explorer", icon=":material/quiz:",
                 query_params=to_params(link))

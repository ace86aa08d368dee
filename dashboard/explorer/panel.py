"""The question explorer's Streamlit logic (dashboard/views/questions.py runs it): questions ×
chosen runs, filters, saved slices, and one question's detail -- the gold with its evidence quotes,
then one tab per chosen run with its answer, scores and Accuracy trace. Model text is shown as plain
text only. The frames come from dashboard/explorer/frames.py."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from functools import partial
from typing import cast

import pandas as pd
import streamlit as st

from dashboard.annotations import panel as notes_panel
from dashboard.core.escape import clipped, md_escape
from dashboard.core.links import View, field_label, to_params, value_label
from dashboard.data.frames import gold_mark
from dashboard.disagreement.frames import trace_frame
from dashboard.disagreement.why_panel import show_why
from dashboard.evidence import grounding  # AUTO_PAIRS read when used (tests lower it)
from dashboard.evidence.grounding import LOCATION_ORDER, explorer_columns, located_ids, location_label
from dashboard.evidence.locate_panel import locate_first
from dashboard.evidence.panel import evidence_metrics, show_evidence
from dashboard.explorer.frames import (
    HEADERS,
    SEARCHED,
    SHORT,
    default_runs,
    explorer_frame,
    filter_options,
    filter_questions,
    grouped,
    hidden_columns,
    in_words,
    question_header,
    run_column,
    with_run_columns,
)
from dashboard.shell import output, viewstate
from dashboard.shell.context import Context
from dashboard.weak import saved as saved_slices
from dashboard.weak import saved_panel
from scoring.metrics import QuestionResult, answer_type, judge
from scoring.mmlongbench_rule import extraction_miss
from scoring.model import GoldQuestion, ScoreRow, to_str
from scoring.profiles import get_profile
from scoring.registry import METRIC_LABELS, METRICS
from scoring.runner import record_of
from scoring.writers import frame_csv

TRACE_CHARS = 10_000  # characters of an answer the trace explains (a 50 MB answer took minutes)
ROW_PX = 35  # st.dataframe's row and header height
MAX_TABLE_PX = 560
EAGER_CSV_BYTES = 5_000_000  # above this the CSV is made on click
CSV_MEMO = "lens_explorer_csv"  # (analysis, table key) -> CSV bytes of the explorer table
COLUMNS_MEMO = "lens_evidence_columns"  # (metrics table, runs) -> the runs' evidence columns, for reruns
EVIDENCE_ON = "lens_evidence_on"  # the user's last word on computing the evidence metrics (explorer toggle, overview button)
EVIDENCE_HELP = {"Pages P": "Page precision: the share of the pages this run cites that are gold evidence pages",
                 "Pages R": "Page recall: the share of the gold evidence pages this run cites",
                 "Ground.": "Grounding: the share of the gold's boxes matched by a box this run cites (ParseBench's rule)"}


def _active(v: View) -> str:
    """The filters in force, in words (the expander holding them starts collapsed)."""
    parts = [f"{field_label(k)}: {', '.join(value_label(k, y) for y in x)}" for k, x in v.filters.items()]
    parts += [f"{METRIC_LABELS[m]} {lo}–{hi} %" for m, (lo, hi) in v.ranges.items()]
    if v.ranges and len(v.runs) > 1:
        parts.append(f"ranges hold for {v.match} chosen run")
    if v.status:
        parts.append(f"status: {', '.join(v.status)}")
    if v.location:
        parts.append(f"answer location: {', '.join(map(location_label, v.location))}")
    if v.tags:
        parts.append(f"tags: {', '.join(v.tags)}")
    if v.noted:
        parts.append("has a note")
    return " · ".join(parts)


def filters(ctx: Context, v: View):
    """The filter widgets, seeded from the view; returns the view they describe, and the slot for the
    count line under the search box."""
    an = ctx.analysis
    all_runs = an.run_names
    # by default the best runs by the chosen metric (the Evidence page opens on the same ones)
    # the view's values in the widgets' calls (not only in session state): a widget re-created after
    # Streamlit dropped its state comes back as the link says, never empty
    top = st.columns([3, 2])
    runs = top[0].multiselect("Runs", all_runs, default=[r for r in v.runs if r in all_runs] or default_runs(an, v.metric),
                              key="x_runs", placeholder="Choose runs to compare")
    search = top[1].text_input("Search", value=v.search, key="x_search", placeholder="question id, words of a question or an answer",
                               help=f"Finds text (ignoring case) in the {SEARCHED}.")
    count = st.empty()  # the count line, right under the search it counts
    statuses = sorted(an.rows_of(runs)["status"].unique())
    chosen: dict[str, list[str]] = {}
    ranges: dict[str, tuple[int, int]] = {}
    with st.expander("Filters", expanded=False, icon=":material/filter_list:"):
        cols = st.columns(4)
        for k, (name, values) in enumerate(filter_options(an, v).items()):  # one-valued fields offer nothing
            viewstate.seed(f"x_f.{name}", [x for x in v.filters.get(name, []) if x in values])
            chosen[name] = cols[k % 4].multiselect(field_label(name), values, key=f"x_f.{name}", placeholder="any",
                                                   format_func=partial(value_label, name))
        cols = st.columns(4)
        for col, metric in zip(cols, METRICS):
            viewstate.seed(f"x_r.{metric}", v.ranges.get(metric, (0, 100)))
            # a range slider: its state was seeded with a (low, high) pair (Streamlit types a slider without
            # `value` as one number)
            low, high = cast("tuple[int, int]", col.slider(f"{METRIC_LABELS[metric]} (%)", 0, 100, key=f"x_r.{metric}"))
            ranges[metric] = (low, high)
        viewstate.seed("x_status", [s for s in v.status if s in statuses])
        status = cols[3].multiselect("Status (any chosen run)", statuses, key="x_status", placeholder="any")
        viewstate.seed("x_location", [x for x in v.location if x in LOCATION_ORDER])
        location = st.columns([2, 1])[0].multiselect(
            "Answer location (any chosen run)", list(LOCATION_ORDER), key="x_location", placeholder="any",
            format_func=location_label,
            help="Where a chosen run's answer appears in the question's documents: on a gold evidence page, only on "
                 "other pages (a wrong-page answer), nowhere in the document, the document missing, a refusal, the "
                 "extraction failed (Fail to answer), or not searched (an empty answer, a choice letter, a page image "
                 "without text). Searches the documents.")
        notes_panel.explorer_filter(ctx, v)  # tags, untagged, has a note (the view's `tag` and `note`)
        viewstate.seed("x_match", v.match)
        match = cols[3].segmented_control(
            "Score ranges must hold for", ["every", "any"], key="x_match",
            format_func={"every": "every chosen run", "any": "any chosen run"}.__getitem__,
            help="every: all chosen runs score inside the ranges; any: at least one does.") or "every"
    new = replace(v, runs=runs, filters={k: x for k, x in chosen.items() if x},
                  ranges={m: r for m, r in ranges.items() if r != (0, 100)}, status=status, location=location,
                  search=search, match=match)
    return new, count


def _config(ctx: Context, frame: pd.DataFrame) -> dict:
    """Column settings of the grouped table, by position (1 = the first column; 0 is the hidden index):
    Streamlit keys a table with two header rows by position only."""
    config = {}
    for pos, (group, label) in enumerate(frame.columns, start=1):
        if label in ("Acc", "F1", "ANLS") and group not in ("Question", "Metadata"):
            metric = next(k for k, v in SHORT.items() if v == label)
            config[pos] = st.column_config.ProgressColumn(label, format="percent", min_value=0.0, max_value=1.0,
                                                          width="small", help=f"{METRIC_LABELS[metric]} of this run"
                                                          + (f". {get_profile(ctx.profile).accuracy_help[1]}" if metric == "accuracy" else ""))
        elif label in ("Prediction", HEADERS["question"]):
            config[pos] = st.column_config.TextColumn(label, width="medium")
        elif label in EVIDENCE_HELP and group not in ("Question", "Metadata"):
            config[pos] = st.column_config.ProgressColumn(label, format="percent", min_value=0.0, max_value=1.0,
                                                          width="small", help=EVIDENCE_HELP[label] + " (empty: not defined)")
        elif label == "Location" and group not in ("Question", "Metadata"):
            config[pos] = st.column_config.TextColumn(label, width="medium", help="Where this run's answer appears in "
                                                      "the question's documents")
        elif label == "Id":
            config[pos] = st.column_config.TextColumn("Id", pinned=True)
    return config


def _remember_switch() -> None:
    st.session_state[EVIDENCE_ON] = st.session_state["x_evidence"]  # outlives the explorer's widget keys


def evidence_switch(ctx: Context, v: View):
    """The evidence metrics of every (question, run) when the explorer needs them: for its columns
    (on by default up to grounding.AUTO_PAIRS question × run pairs, else on request) or for the answer-location
    filter. Returns (metrics table or None, whether to show the columns)."""
    an = ctx.analysis
    pairs = len(ctx.workspace.gold.items) * len(an.runs)
    viewstate.seed("x_evidence", st.session_state.get(EVIDENCE_ON, pairs <= grounding.AUTO_PAIRS))
    show = st.toggle("Evidence columns per run", key="x_evidence", on_change=_remember_switch,
                     help="Page precision and recall (cited pages against the gold evidence pages), grounding (cited "
                          "boxes against the gold's boxes) and where the answer appears. Computing them searches every "
                          "answer in its documents: quick on small data, slow on many long documents (then kept).")
    if not show and pairs > grounding.AUTO_PAIRS and not v.location:
        st.caption(f"Evidence columns are off: {pairs:,} question × run pairs. Turning them on searches every answer "
                   "in its documents, which takes a while the first time.")
    if not show and not v.location:
        return None, False
    if not locate_first(ctx, list(filter_questions(an.questions, an.rows_of(v.runs), v).index), None):
        return None, False  # large data: located in the background, the filtered table's documents first
    return evidence_metrics(ctx), show


def table(ctx: Context, v: View, count, ev: pd.DataFrame | None, show_evidence_columns: bool) -> None:
    """The filtered questions × runs table; selecting a row sets v.question. `ev`: the evidence
    metrics (dashboard.evidence.grounding), for the answer-location filter and, when asked, the columns."""
    an = ctx.analysis
    questions = filter_questions(an.questions, an.rows_of(v.runs), v)
    if v.location and ev is not None:
        questions = questions[questions.index.isin(located_ids(ev, v.runs, v.location))]
    if (tagged := notes_panel.filter_ids(ctx, v, questions.index)) is not None:
        questions = questions[questions.index.isin(tagged)]
    shown, _ = an.display_rows(v.runs)  # long answers cut (once per set of runs); the CSV has them whole

    def extend(frame: pd.DataFrame) -> pd.DataFrame:
        frame = notes_panel.with_tag_columns(ctx, frame, v.runs)  # Tags, Notes, <run> · Tags (table and CSV)
        if not show_evidence_columns or ev is None:
            return frame
        memo = (id(ev), len(ev), tuple(v.runs))
        kept = st.session_state.get(COLUMNS_MEMO)
        if not kept or kept[0] != memo:
            kept = (memo, explorer_columns(ev, v.runs, run_column))
            st.session_state[COLUMNS_MEMO] = kept
        return with_run_columns(frame, kept[1], v.runs)

    frame = extend(explorer_frame(questions, shown, v.runs, hidden_columns(an)))
    line = f"**{len(frame)} of {len(an.questions)} questions** · profile {ctx.profile}"
    if v.search:
        line += f" · search {md_escape(repr(v.search))} in the {SEARCHED}"
    active = _active(v)
    if active:
        line += " · " + md_escape(active)
    count.caption(line)
    if frame.empty:
        st.info("No question matches these filters. Widen a score range, clear a filter or the search text.")
    # A new filter state is a new table widget, so a stale row selection never points at another question.
    state = repr(sorted(to_params(replace(v, question="", metric="accuracy", tab="")).items()))
    key = "x_table_" + hashlib.sha256(state.encode()).hexdigest()[:12]
    ids = list(frame["question_id"])
    if v.question in ids:
        viewstate.seed(key, {"selection": {"rows": [ids.index(v.question)], "columns": [], "cells": []}})
    shown = grouped(in_words(clipped(frame)), v.runs)
    height = min(MAX_TABLE_PX, ROW_PX * (len(frame) + 2) + 3)  # two header rows, then the rows
    event = st.dataframe(shown, key=key, on_select="rerun", selection_mode="single-row", hide_index=True,
                         width="stretch", height=max(height, ROW_PX * 3 + 3), column_config=_config(ctx, shown))
    rows = event.selection.rows
    if rows or v.question in ids:
        v.question = ids[rows[0]] if rows else ""
    st.download_button("Download this table as CSV", _csv(ctx, questions, frame, v.runs, (key, show_evidence_columns, notes_panel.notes_stamp(ctx)), extend),
                       file_name="questions.csv",
                       mime="text/csv",
                       icon=":material/download:", on_click="ignore")
    if v.question and v.question not in ids:
        st.caption("The question shown below is not in the filtered table.")


def _csv(ctx: Context, questions: pd.DataFrame, frame: pd.DataFrame, runs: list[str], key, extend=lambda f: f):
    """The table as CSV, long answers whole: kept for the session while the table is the same (writing
    it took a third of an explorer rerun); with long answers or a big table, written only when the
    button is pressed."""
    an = ctx.analysis
    if an.display_rows(runs)[1]:  # an answer was cut for the table: the CSV reads them whole
        return lambda: frame_csv(extend(explorer_frame(questions, an.rows_of(runs), runs, hidden_columns(an))))
    memo = (id(an), key)
    kept = st.session_state.get(CSV_MEMO)
    if kept and kept[0] == memo:
        return kept[1]
    if frame.memory_usage(deep=True).sum() > EAGER_CSV_BYTES:
        return lambda: frame_csv(frame)
    data = frame_csv(frame)
    st.session_state[CSV_MEMO] = (memo, data)
    return data


def evidence(q: GoldQuestion) -> None:
    """The gold evidence: each quote with its document and pages, else the evidence pages."""
    items = [(d.document_id, item) for d in q.documents for item in d.evidence_items]
    if items:
        st.markdown(f"**Gold evidence** ({len(items)} quote{'s' if len(items) > 1 else ''})")
        for k, (doc_id, item) in enumerate(items):
            pages = ", ".join(map(str, item.pages)) or "?"
            where = f"{doc_id} · page{'s' if len(item.pages) > 1 else ''} {pages}"
            if item.source_type:
                where += f" · {item.source_type}"
            st.caption(md_escape(where))
            output.plain(item.quote, empty="(no quote text)", name=f"evidence_{k + 1}", key=f"dl_evidence_{k}")
    elif q.evidence_pages:
        st.markdown("**Gold evidence**")
        st.caption(md_escape("Pages (no quotes in the gold): " + "; ".join(
            f"{doc} p. {', '.join(map(str, pages))}" for doc, pages in q.evidence_pages.items())))
    else:
        st.caption("The gold names no evidence for this question.")


def show_trace(ctx: Context, q: GoldQuestion, result: QuestionResult) -> None:
    """Why this Accuracy: the rule that decided, with what it read. A long answer is explained on its
    first TRACE_CHARS characters (the scores above are from all of it)."""
    pred = result.prediction
    text = pred.text if pred else None
    length = 0 if text is None else len(text)
    cut = length > TRACE_CHARS
    ex = judge(None if text is None else text[:TRACE_CHARS], q.answers, q.answer_format, q.verification_rule,
               status=pred.status if pred else None, profile=ctx.profile)
    trace = clipped(trace_frame(ex), 500)
    with st.expander("Why this Accuracy", expanded=True):
        if cut:
            st.caption(f"Explained on the first {TRACE_CHARS:,} of {length:,} characters of the answer; "
                       "the scores above are from the whole answer.")
        st.dataframe(trace, hide_index=True, width="stretch", height=ROW_PX * (len(trace) + 1) + 3)


def run_detail(ctx: Context, name: str, q: GoldQuestion) -> None:
    an = ctx.analysis
    run = an.run_of(name)
    result = record_of(run.result, q.qid) if run.result else None
    official = next((s for s in run.official if s.qid == q.qid), None)
    st.caption(md_escape(f"{name} · {run.source}"))
    scored: QuestionResult | ScoreRow
    answer: str | None  # the prediction text shown
    if result is not None:
        scored, status, answer = result, result.status, result.effective
    elif official is not None:
        scored, status, answer = official, official.status or "success", official.prediction
    else:
        st.caption("No score for this question in this run.")
        return
    with st.container(horizontal=True, gap="small"):  # tiles wrap on a narrow screen
        for metric in METRICS:
            st.metric(METRIC_LABELS[metric], f"{100 * getattr(scored, metric):.1f}%", width="content")
        st.metric("Status", status, width="content")
    extras = _extras(ctx, name, q.qid)
    if extras is None:
        output.plain(answer, empty="(no prediction text)", name=f"{name}-{q.qid}", key=f"dl_answer_{name}")
    else:  # a result file with the raw response beside the extracted answer that was scored (MMLongBench-Doc)
        left, right = st.columns(2)
        with left:
            st.caption("Scored answer (`pred`, extracted from the response)")
            output.plain(answer, empty="(no prediction text)", name=f"{name}-{q.qid}", key=f"dl_answer_{name}")
        with right:
            st.caption("Raw response (`response`)")
            output.plain(to_str(extras.response), empty="(no response)", name=f"{name}-{q.qid}-response",
                     key=f"dl_response_{name}")
        score = scored.accuracy
        if extraction_miss(q.metadata.get("answer", q.gold_answer), q.raw_format, extras.response, score):
            st.warning("Extraction is the likely failure: the gold answer occurs in the raw response, but the "
                       "extracted answer scores 0 (category “Extraction miss”).", icon=":material/content_cut:")
    if result is None:
        st.caption("Scores loaded, not recomputed: no trace.")
        return
    show_trace(ctx, q, result)
    # HOOK why
    show_why(result.judgement, key=name, trace=False, title="Why these scores: category, character diff, token overlap",
             response=extras.response if extras else None)


def _extras(ctx: Context, name: str, qid: str):
    """The result file's raw fields of this question (scoring.mmlongbench.ResultExtras), or None."""
    pf = next((p for p in ctx.workspace.predictions if p.run == name), None)
    extras = getattr(pf.loaded, "extras", None) if pf is not None else None
    return extras.get(qid) if extras else None


def _tab_label(ctx: Context, name: str, q: GoldQuestion) -> str:
    an = ctx.analysis
    run = an.run_of(name)
    res = record_of(run.result, q.qid) if run.result else None
    scored = res or next((s for s in run.official if s.qid == q.qid), None)
    mark = "–" if scored is None else f"{100 * scored.accuracy:.0f}"
    return f"{md_escape(name)} · {mark}"


def detail(ctx: Context, q: GoldQuestion, runs: list[str]) -> None:
    an = ctx.analysis
    st.divider()
    st.subheader("Question detail")
    st.caption(md_escape(question_header(q, an)))  # fields that tell no question apart are left out
    output.plain(q.question, name="question", key="dl_question")
    st.markdown("**Gold answer**")
    if q.gold_problem:  # null or NaN in the gold file: kept and scored, but no right answer can match it
        st.warning(md_escape(gold_mark(q, ctx.workspace.label)), icon=":material/rule:")
    output.plain(q.gold_answer, name="gold", key="dl_gold")
    st.caption(md_escape(f"format {q.answer_format} · rule {q.verification_rule or 'none'} · "
                         f"scored as {answer_type(q.answer_format, q.verification_rule)}"))
    evidence(q)
    with st.expander("Evidence pages, with the boxes of the gold and of each run's answer", expanded=True,
                     icon=":material/plagiarism:"):
        show_evidence(ctx, q, runs)
    if not runs:
        st.info("Choose runs above to see their answers to this question.")
        return
    st.markdown("**Answers** (tab: run · Accuracy %)")
    for tab, name in zip(st.tabs([_tab_label(ctx, n, q) for n in runs]), runs):
        with tab:
            run_detail(ctx, name, q)
    notes_panel.annotate(ctx, q, runs, "qd")


def explore(ctx: Context) -> None:
    """The explorer: the filters (a link's saved slice applied), the saved slices, the table of
    questions × chosen runs, and the selected question's detail."""
    an = ctx.analysis
    viewstate.warn_missing_runs(an.run_names)
    view, count = filters(ctx, saved_panel.apply_from_view(ctx, viewstate.view()))  # a link's ?slice=NAME: its filters
    view = saved_panel.keep_name(view, ctx)  # the name stays in the URL while the filters are the slice's
    viewstate.set_view(view)
    with st.expander("Saved slices: save these filters under a name, open or delete a saved one",
                     icon=":material/bookmarks:"):
        definition, left_out = saved_slices.definition_from_view(view)
        saved_panel.save_form(ctx, definition, "x_saved", left_out=left_out)
        saved_panel.manage(ctx, "x_saved")
    metrics, with_columns = evidence_switch(ctx, view)
    table(ctx, view, count, metrics, with_columns)
    question = next((q for q in ctx.workspace.gold.items if q.qid == view.question), None)
    if question is None:
        st.info("Select a row (click its left edge) to see the question, the gold answer with its evidence, and each "
                "run's answer with the rule that scored it.")
    else:
        detail(ctx, question, view.runs)

"""Question explorer: questions × chosen runs, filters, and one question's detail with the
Accuracy trace. Model text is shown as plain text only."""

import hashlib
from dataclasses import replace

import streamlit as st

from dashboard import ui
from dashboard.links import METRICS, View, field_label, to_params
from dashboard.tables import (METRIC_LABELS, explorer_frame, field_options, filter_questions, md_escape, run_column,
                              trace_frame)
from scoring.metrics import answer_type, judge
from scoring.model import GoldQuestion

ctx = ui.context()
an = ctx.analysis
st.title("Question explorer")


def filters(v: View) -> View:
    """The filter widgets, seeded from the view; returns the view they describe."""
    all_runs = an.run_names
    ui.seed("x_runs", [r for r in v.runs if r in all_runs] or all_runs[:4])
    ui.seed("x_search", v.search)
    top = st.columns([3, 2])
    runs = top[0].multiselect("Runs", all_runs, key="x_runs", placeholder="Choose runs to compare")
    search = top[1].text_input("Search question, gold answer and predictions", key="x_search")
    statuses = sorted(an.scores[an.scores["run"].isin(runs)]["status"].unique())
    chosen: dict[str, list[str]] = {}
    ranges: dict[str, tuple[int, int]] = {}
    with st.expander("Filters", expanded=bool(v.filters or v.ranges or v.status), icon=":material/filter_list:"):
        cols = st.columns(4)
        for k, (name, values) in enumerate(field_options(an.questions).items()):
            ui.seed(f"x_f.{name}", [x for x in v.filters.get(name, []) if x in values])
            chosen[name] = cols[k % 4].multiselect(field_label(name), values, key=f"x_f.{name}", placeholder="any")
        cols = st.columns(4)
        for col, metric in zip(cols, METRICS):
            ui.seed(f"x_r.{metric}", v.ranges.get(metric, (0, 100)))
            ranges[metric] = tuple(col.slider(f"{METRIC_LABELS[metric]} (%) of every chosen run", 0, 100, key=f"x_r.{metric}"))
        ui.seed("x_status", [s for s in v.status if s in statuses])
        status = cols[3].multiselect("Status (any chosen run)", statuses, key="x_status", placeholder="any")
    return View(runs=runs, profile=v.profile, filters={k: x for k, x in chosen.items() if x},
                ranges={m: r for m, r in ranges.items() if r != (0, 100)}, status=status, search=search,
                question=v.question, data=v.data)


def table(v: View) -> None:
    """The filtered questions × runs table; selecting a row sets v.question."""
    questions = filter_questions(an.questions, an.scores, v)
    frame = explorer_frame(questions, an.scores, v.runs)
    st.caption(f"{len(frame)} of {len(an.questions)} questions · profile {ctx.profile}")
    if frame.empty:
        st.info("No question matches these filters. Widen a score range, clear a filter or the search text.")
    config = {"question_id": st.column_config.TextColumn("Question id", pinned=True),
              "question": st.column_config.TextColumn("Question", width="medium"), "gold": "Gold",
              "answer_format": "Format", "reasoning_type": "Reasoning type", "evidence_source": "Evidence sources",
              "document": "Document", "pages": "Evidence pages"}
    for run in v.runs:
        for metric in METRICS:
            config[run_column(run, metric)] = st.column_config.ProgressColumn(
                run_column(run, metric), format="percent", min_value=0.0, max_value=1.0, width="small")
        config[run_column(run, "prediction")] = st.column_config.TextColumn(run_column(run, "prediction"), width="medium")
    # A new filter state is a new table widget, so a stale row selection never points at another question.
    state = repr(sorted(to_params(replace(v, question="")).items()))
    key = "x_table_" + hashlib.sha256(state.encode()).hexdigest()[:12]
    ids = list(frame["question_id"])
    if v.question in ids:
        ui.seed(key, {"selection": {"rows": [ids.index(v.question)], "columns": [], "cells": []}})
    event = st.dataframe(frame, key=key, on_select="rerun", selection_mode="single-row", hide_index=True,
                         width="stretch", height=420, column_config=config)
    rows = event.selection.rows
    if rows or v.question in ids:
        v.question = ids[rows[0]] if rows else ""
    st.download_button("Download this table as CSV", frame.to_csv(index=False).encode("utf-8"),
                       file_name="questions.csv", mime="text/csv", icon=":material/download:")
    if v.question and v.question not in ids:
        st.caption("The question shown below is not in the filtered table.")


def run_detail(name: str, q: GoldQuestion) -> None:
    run = an.run(name)
    st.markdown(f"**{md_escape(name)}** · {run.source}")
    result = next((r for r in run.result.results if r.qid == q.qid), None) if run.result else None
    official = next((s for s in run.official if s.qid == q.qid), None)
    scored = result or official
    if scored is None:
        st.caption("No score for this question in this run.")
        return
    cols = st.columns(4)
    for col, metric in zip(cols, METRICS):
        col.metric(METRIC_LABELS[metric], f"{100 * getattr(scored, metric):.1f}%")
    cols[3].metric("Status", result.status if result else (official.status or "success"))
    ui.plain(result.effective if result else official.prediction, empty="(no prediction text)")
    if result is None:
        st.caption("Scores loaded, not recomputed: no trace.")
        return
    pred = result.prediction
    ex = judge(pred.text if pred else None, q.answers, q.answer_format, q.verification_rule,
                        status=pred.status if pred else None, profile=ctx.profile)
    trace = trace_frame(ex)
    with st.expander("Why this Accuracy", expanded=True):
        st.dataframe(trace, hide_index=True, width="stretch", height=35 * (len(trace) + 1) + 3)


def detail(q: GoldQuestion, runs: list[str]) -> None:
    st.divider()
    st.subheader("Question detail")
    st.caption(md_escape(f"{q.qid} · {q.labels('split')[0]} · {q.meta('domain')} · {q.meta('reasoning_type')} · "
                         f"documents {', '.join(q.document_ids) or 'none'}"))
    ui.plain(q.question)
    st.markdown("**Gold answer**")
    ui.plain(q.gold_answer)
    st.caption(md_escape(f"format {q.answer_format} · rule {q.verification_rule or 'none'} · "
                         f"scored as {answer_type(q.answer_format, q.verification_rule)}"))
    for name in runs:
        with st.container(border=True):
            run_detail(name, q)


if an.questions.empty or not an.runs:
    st.info("Nothing to explore yet: load gold questions and at least one run (sidebar, Data panel). "
            "The Data page shows what was found.")
else:
    view = filters(ui.view())
    ui.set_view(view)
    table(view)
    question = next((q for q in ctx.workspace.gold.items if q.qid == view.question), None)
    if question is None:
        st.info("Select a row (click its left edge) to see the question, the gold answer and each run's "
                "prediction with the rule that scored it.")
    else:
        detail(question, view.runs)

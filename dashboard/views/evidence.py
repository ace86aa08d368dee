"""Evidence: one question's evidence pages with boxes for the gold evidence, the gold answer, each
run's answer and its cited evidence; and the evidence metrics of every run."""

import streamlit as st

from dashboard.annotations import panel as annotations
from dashboard.core.escape import md_escape
from dashboard.evidence.grounding import AUTO_PAIRS
from dashboard.evidence.locate_panel import locate_first, under_way
from dashboard.evidence.panel import evidence_summary, metrics_when_read, show_evidence
from dashboard.explorer.frames import default_runs, question_header
from dashboard.shell import context, output, viewstate
from scoring.writers import frame_csv

ctx = context.context()
ws, an = ctx.workspace, ctx.analysis
st.title("Evidence")


def metrics_tables() -> None:
    rates, shown = evidence_summary(ctx)
    pct = {c: st.column_config.NumberColumn(format="percent") for c in rates.columns
           if c not in ("run", "questions", "grounded_questions", "answers_searched")}
    st.dataframe(rates, hide_index=True, width="stretch", column_config=pct | {
        "run": "Run", "questions": "Questions", "evidence_precision": st.column_config.NumberColumn("Page precision", format="percent"),
        "evidence_recall": st.column_config.NumberColumn("Page recall", format="percent"),
        "grounding": st.column_config.NumberColumn("Grounding", format="percent"),
        "grounded_questions": "Questions with gold and cited boxes", "answers_searched": "Answers searched",
        "answer_on_evidence_page": st.column_config.NumberColumn("On an evidence page", format="percent"),
        "answer_only_on_other_page": st.column_config.NumberColumn("Only on other pages", format="percent"),
        "answer_not_in_document": st.column_config.NumberColumn(
            "Not in the document", format="percent", help="Invented: not found verbatim, on questions whose gold answer "
            "is written in the document (or that it holds no answer to)"),
        "answer_computed": st.column_config.NumberColumn(
            "Computed from the page", format="percent", help="Not found verbatim, on questions whose gold answer is not "
            "written in the document either (computed, counted, or read from a figure)"),
        "answer_found_no_evidence_page": st.column_config.NumberColumn("Found (no evidence page named)", format="percent")})
    with st.expander("Per question and run", icon=":material/table:"):
        st.dataframe(shown, hide_index=True, width="stretch", height=360)
        # encoded on click only, not on every question switch
        st.download_button("Download as CSV", lambda: frame_csv(shown),
                           file_name="evidence_metrics.csv", mime="text/csv", icon=":material/download:",
                           on_click="ignore")



def question_columns(ids: list[str]):
    """The question picker's column and the runs picker's: the picker as wide as the longest id needs at an
    800 px window (a 22-character id was cut to "adubench_single_000" in two fifths of the page); an id
    longer than LONG_ID characters gets a row of its own."""
    longest = max(map(len, ids), default=0)
    if longest > LONG_ID:
        return [st.container(), st.container()]
    return st.columns([max(0.8, longest * ID_WEIGHT), 1])


LONG_ID = 30  # characters: a longer question id gets the whole row
ID_WEIGHT = 0.066  # the question column's weight per character of the longest id, against the runs column's 1


questions = ws.gold.items
if not questions:
    st.info("No gold questions loaded: open a benchmark folder or upload gold files in the sidebar's Data panel.")
else:
    view = viewstate.view()
    ids = [q.qid for q in questions]
    viewstate.seed("ev_question", view.question if view.question in ids else ids[0])
    cols = question_columns(ids)
    qid = cols[0].selectbox("Question", ids, key="ev_question",
                            help="The question explorer's selected question opens here too.")
    # by default the runs the question explorer opens on: the best by the overview's metric
    # in the call, not only in session state: a re-created picker comes back with the link's runs, never empty
    runs = cols[1].multiselect("Runs", an.run_names, default=[r for r in view.runs if r in an.run_names] or default_runs(an, view.metric),
                               key="ev_runs", placeholder="Choose runs to show their answers")
    view.question = qid
    q = next(x for x in questions if x.qid == qid)
    # fields that tell no question apart (MMLongBench-Doc's domain, reasoning type) are left out
    st.caption(md_escape(question_header(q, an, ("domain", "reasoning_type"), f"evidence {', '.join(q.evidence_sources) or 'none'}")))
    output.plain(q.question)
    st.markdown("**Gold answer**" + (" (any of)" if len(q.answers) > 1 else ""))
    output.plain(" | ".join(q.answers))
    show_evidence(ctx, q, runs)
    annotations.annotate(ctx, q, runs, "ev")

    st.divider()
    st.subheader("Evidence metrics per run")
    st.caption("Page precision and recall: the pages a run cites against the gold evidence pages. Grounding: the "
               "share of gold boxes that a cited box matches (≥ 0.5 of the gold box covered and ≥ 0.2 of the cited "
               "box inside it). Answer location: over the answers searched in their documents; an answer not found verbatim is "
               "invented where the gold answer is written in the document, computed from the page where it is not "
               "either; a list answer is found when each of its elements is.")
    pairs = len(questions) * len(an.runs)
    if not an.runs:
        st.info("No runs loaded: put prediction files in runs/ or upload them in the sidebar.")
    elif pairs > AUTO_PAIRS:
        if "ev_metrics" not in st.session_state and under_way(ctx):
            st.session_state["ev_metrics"] = True  # a page (re)loaded while a locating runs: its progress, not a switch off
        if not st.toggle(f"Compute for all {len(an.runs)} runs × {len(questions)} questions", key="ev_metrics",
                         help="Searches every answer in its documents in the background, this question's first; the "
                         "first time takes a while on long documents (then it is kept)."):
            st.caption("Turn the switch on to compute the evidence metrics of every run.")
        elif locate_first(ctx, [qid], metrics_tables):  # else its progress, and the tables drawn in place once done
            metrics_tables()
    else:
        # drawn at once when the documents are read; else a fragment polls their reading and draws them
        # in place when it is done (the page around it is not rerun: what the user types stays)
        metrics_when_read(ctx, metrics_tables)

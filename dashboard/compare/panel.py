"""Streamlit pieces of the comparison page (views/compare.py) and the presentation page
(views/present.py): widgets, tables with downloads, the question side by side. The numbers come
from dashboard/compare/frames.py (pure), the figures from dashboard/compare/charts.py.

Every interval and p-value shown has documents as the unit (frames.py's docstring): each says how
many documents it rests on, a slice under 20 documents reads "too few documents to tell" with the
smallest gap it could detect, and McNemar's question-level p is a secondary column.

`state` is the view's comparison part (`View.compare`, see dashboard/core/links.py): what a link restores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import MutableMapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.annotations import panel as annotations_panel
from dashboard.compare import charts
from dashboard.compare import frames as C
from dashboard.core.analysis import remembered
from dashboard.core.bounded import Bounded
from dashboard.core.escape import md_escape
from dashboard.core.links import View, field_label, slice_label
from dashboard.core.samples import CAMPAIGN_PAIR, campaign_offer
from dashboard.core.textdiff import char_diff, diff_text
from dashboard.shell import cache, output, viewstate
from dashboard.shell.context import Context
from dashboard.weak import charts as weak_charts
from dashboard.weak import frames as W
from dashboard.weak import panel as weak_panel
from dashboard.weak import saved_panel
from scoring.paired_slices import SliceRow, uses_cores
from scoring.workers import warm_shared_pool
from scoring.writers import frame_csv

SETTINGS = C.Settings()
PAIR_JOBS: Bounded[C.PairJob] = Bounded(64)  # the pairs' per-slice tables, made or being made, shared by the sessions
PAIR_TAB, ALL_TAB = "A against baseline B", "All runs: weakest slices and ranks"
ALL_FIELDS = "every breakdown"
WEAK_TOP = 10
PRESENT_PAGE = "views/present.py"


# ----------------------------------------------------------------------------- data, cached


def runs_by_accuracy(an) -> list[str]:
    """Run names in the leaderboard's order: best Accuracy over the questions each attempted first --
    over the questions they all attempted when those differ (Analysis.leaderboard); a run that
    matches no gold question is never offered (Analysis.ranked_names)."""
    ranked = set(an.ranked_names)  # once: the property works out every run's join
    return [r for r in an.leaderboard()["Run"] if r in ranked]


RUNS_SHOWN = 20  # runs side by side in one chart or table: the leaderboard's first, with the runs the page is about


def leading_runs(order: list[str], keep: Sequence[str] = (), limit: int | None = None) -> list[str]:
    """At most `limit` (RUNS_SHOWN) runs of `order` (the leaderboard's), in its order: the runs of `keep`
    that are in it, and the leaderboard's first to fill the rest. A chart of 1,000 runs' intervals drew
    every run's rows from the engine (20 million) and bootstrapped each: the Presentation page had drawn
    nothing after 15 minutes."""
    limit = RUNS_SHOWN if limit is None else limit
    kept = [r for r in dict.fromkeys(keep) if r in order][:limit]
    rest = [r for r in order if r not in kept][:max(0, limit - len(kept))]
    chosen = {*kept, *rest}
    return [r for r in order if r in chosen]


def leading_note(shown: list[str], order: list[str], about: str) -> str:
    """"" when every run is shown; else which runs are (`about`: the runs the page is about, in words)."""
    if len(shown) >= len(order):
        return ""
    return (f"{len(shown)} of {len(order):,} runs: the leaderboard's first, {about} among them "
            "(the leaderboard ranks every run).")


def compared_scores(an, runs: list[str]) -> pd.DataFrame:
    """The score rows that compare these runs: on the questions they all attempted (a missing answer
    is no answer, and a run of 40 questions is not ranked against others over 1,082)."""
    return an.attempted_scores(list(runs))[0]


def shared_note(an, runs: list[str]) -> str:
    """`3 runs share 40 of 1,082 questions: …` when the runs attempted different questions, else ""."""
    common = an.shared(list(runs))
    if not common.differs:
        return ""
    text = common.text()
    return (text[0].upper() + text[1:] + (": the ranks compare them on those." if common.questions else
                                          ": nothing to compare them on."))


def pair_note(an, a: str, b: str, shared: int) -> str:
    """Under the pair's pickers, when A or B attempted only some questions: how many each did, and that
    they are compared on the `shared` ones; "" when both attempted every question."""
    joins = an.joins()
    ja, jb = joins.get(a), joins.get(b)
    if ja is None or jb is None or (ja.matched == ja.total and jb.matched == jb.total):
        return ""
    return (f"{a} attempted {ja.matched:,} and {b} {jb.matched:,} of the {ja.total:,} questions: they are compared on "
            f"the {shared:,} both attempted.")


def _digest(frame: pd.DataFrame) -> int:
    """A cache key part for a frame's content: numbers hashed as they are (no text conversion, ~8x
    faster on 20,000 pairs), other columns (lists of evidence sources) as text."""
    if not len(frame):
        return 0
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    return int(pd.util.hash_pandas_object(frame.astype({c: str for c in text}) if text else frame, index=True).sum())


def _questions_digest(an, questions: pd.DataFrame | None = None) -> int:
    """A cache key part for the question frame's slices; the analysis's own frame (which never changes) hashed
    once, not at every run of the page."""
    q = an.questions if questions is None else questions

    def digest() -> int:
        cols = [c for c in (*C.BREAKDOWNS, C.SAVED_FIELD, "document", "cluster") if c in q.columns]
        return _digest(q[cols])

    return remembered(an, ("questions digest",), digest, q)


def fields_of(questions: pd.DataFrame) -> tuple[str, ...]:
    """The breakdowns, and the saved slices when the question frame has them (saved_panel.questions_with_fields)."""
    return (*C.BREAKDOWNS, C.SAVED_FIELD) if C.SAVED_FIELD in questions.columns else C.BREAKDOWNS


def pair_job(an, pairs: pd.DataFrame, a: str, b: str, questions: pd.DataFrame | None = None) -> C.PairJob:
    """The pair's per-slice table (`frames.deltas`), started on a thread of its own unless some session
    started it already (`PAIR_JOBS`, keyed by the pair's scores, the questions' slices and the
    settings); `questions`: the question frame with the saved slices' field. A job that failed is
    started again."""
    q = an.questions if questions is None else questions
    cols = [f"{m}_{s}" for m in C.METRICS for s in "ab"]
    key = ("deltas", a, b, _digest(pairs[cols]), _questions_digest(an, q), fields_of(q), SETTINGS)
    if (kept := PAIR_JOBS.get(key)) is not None and kept.failed():
        PAIR_JOBS.pop(key)
    if kept is None and uses_cores(len(pairs), len(C.METRICS)):
        warm_shared_pool()  # the slices' rows go to worker processes once they run (this time, on threads)
    values = an.question_values()
    return PAIR_JOBS.get_or_build(key, lambda: C.PairJob(
        lambda on_overall: C.deltas(pairs, q, C.pair_fields(pairs, q, an.gold, values=values), SETTINGS, on_overall=on_overall)))


COMPARING = "Comparing runs (bootstrap intervals)…"


def overall(job: C.PairJob) -> SliceRow:
    """The pair's all-questions row (the headline's), drawn first by its job."""
    if job.head_ready():
        return job.head()
    with st.spinner(COMPARING):
        return job.head()


def deltas(job: C.PairJob) -> pd.DataFrame:
    """The pair's per-slice table, when its job has made it."""
    if job.ready():
        return job.table()
    with st.spinner(COMPARING):
        return job.table()


def intervals(an, runs: list[str]) -> pd.DataFrame:
    key = ("intervals", tuple(runs), _digest(an.rows_of(runs)[["run", "question_id", *C.METRICS]]),
           _questions_digest(an), SETTINGS)
    return cache.comparison(key, lambda: C.run_intervals(an.rows_of(runs), runs, SETTINGS, an.questions))  # type: ignore[return-value]


# ----------------------------------------------------------------------------- small pieces


def slice_text(field_name: str, label: str) -> str:
    return "All questions" if field_name == C.OVERALL_FIELD else slice_label(field_name, label)


def downloads(frame: pd.DataFrame, name: str, key: str) -> None:
    """CSV and JSON of a table (fractions as in dashboard/compare/frames.py, not rounded), written when a
    button is pressed: the pair's questions are 20,000 rows at 20,000 questions, and writing both files
    took about a second of every run of the page."""
    c1, c2, _ = st.columns([1, 1, 3])
    c1.download_button("CSV", lambda: frame_csv(frame), file_name=f"{name}.csv", mime="text/csv",
                       icon=":material/download:", key=f"{key}_csv", on_click="ignore", width="stretch")
    c2.download_button("JSON", lambda: json_records(frame), file_name=f"{name}.json",
                       mime="application/json", icon=":material/download:", key=f"{key}_json", on_click="ignore", width="stretch")


def json_records(frame: pd.DataFrame) -> bytes:
    """A table as a JSON list of records (UTF-8, indented)."""
    records = json.loads(frame.to_json(orient="records", force_ascii=False))
    return json.dumps(records, indent=1, ensure_ascii=False).encode("utf-8")


def file_part(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:60] or "run"


def pvalue(p: float) -> str:
    return "—" if pd.isna(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def p_text(p: float) -> str:
    """`= 0.219` or `< 0.001`, to follow a "p"."""
    text = pvalue(p)
    return text if text.startswith("<") else f"= {text}"


def interval_text(row, metric: str) -> str:
    """The interval by documents, or why there is none (a `deltas` row)."""
    if bool(row["too_few"]):
        return (f"too few documents to tell ({C.units_text(int(row['documents']), row['unit'])}; "
                f"{C.detectable_text(row[f'{metric}_detectable'])})")
    lo, hi = 100 * row[f"{metric}_low"], 100 * row[f"{metric}_high"]
    return f"95 % interval {lo:+.1f} to {hi:+.1f} pp over {C.units_text(int(row['documents']), row['unit'])}"


def rank_colour(rank: object, last: int) -> str:
    """CSS for a rank cell: the best rank green, the last red (both readable in light and dark themes)."""
    if rank is None or pd.isna(rank):
        return ""
    if rank == 1:
        return "background-color: rgba(16, 185, 129, 0.28)"
    if rank == last and last > 1:
        return "background-color: rgba(239, 68, 68, 0.24)"
    return ""


def most_flipped(flips: pd.DataFrame, top: int) -> pd.DataFrame:
    """The overall row, then the `top` slices with the most questions that flipped (only A + only B)."""
    rest = flips[flips["field"] != C.OVERALL_FIELD]
    rest = rest.assign(_n=rest["only A"] + rest["only B"]).sort_values("_n", ascending=False, kind="stable").drop(columns="_n")
    return pd.concat([flips[flips["field"] == C.OVERALL_FIELD], rest.head(top)])


def swap(session: MutableMapping[str, Any]) -> None:
    session["cmp_a"], session["cmp_b"] = session.get("cmp_b"), session.get("cmp_a")


def header_lines(an, runs: list[str], corrections: object = None) -> list[str]:
    """Markdown lines (user text escaped) for a comparison's header: the benchmark's own Acc and F1
    of the runs that have them (MMLongBench-Doc), and whether gold corrections were applied and how many."""
    lines = []
    own = C.benchmark_scores(an, runs)
    if own:
        lines.append("The benchmark's own Acc / F1: " + "; ".join(
            f"{md_escape(r)} {100 * acc:.1f} % / {100 * f1:.1f} %" for r, (acc, f1) in own.items()))
    if corrections is not None:
        lines.append("Scored **with gold corrections**: " + md_escape(str(corrections)) + ".")
    return lines


# ----------------------------------------------------------------------------- A against B


def headline(table: pd.DataFrame, a: str, b: str) -> None:
    top = C.headline(table)
    st.subheader("Headline")
    row = st.container(horizontal=True, wrap=True, gap="medium")  # wraps below ~3 x 230 px instead of cutting numbers
    for m in C.METRICS:
        d = 100 * top[f"{m}_delta"]
        col = row.container(width=230)
        col.metric(f"Δ {C.METRIC_LABELS[m]} (A − B)", f"{d:+.1f} pp", border=True,
                   help="A minus B in percentage points over the questions both runs answered; 95 % percentile interval "
                        "from resampling documents (a drawn document brings both runs' answers to all its questions), "
                        f"none under {C.MIN_DOCUMENTS} documents.")
        col.caption(f"{interval_text(top, m)} · A {100 * top[f'{m}_a']:.1f} % · B {100 * top[f'{m}_b']:.1f} %")
    units = C.units_text(int(top["documents"]), top["unit"])
    said = C.verdict(top)
    if said == "too few":
        verdict = (f"with {units}, there are **too few documents to tell** whether the Accuracy difference is real "
                   f"({C.detectable_text(top['accuracy_detectable'])}).")
    else:
        verdict = (f"by document, p {p_text(top['p'])} (sign flips of whole documents): "
                   + ("**the Accuracy difference is unlikely to be chance.**" if said == "real"
                      else "the Accuracy difference could be chance."))
    st.markdown(
        f"On **{top['questions']}** shared questions in {units}, only **{md_escape(a)}** is right on **{top['only_a']}**, only "
        f"**{md_escape(b)}** on **{top['only_b']}**; " + verdict)
    if said == "too few" and (offer := campaign_offer("compare", viewstate.view().data, dict(zip("ab", CAMPAIGN_PAIR)))):
        st.markdown(offer)  # the app's own sentence and link (dashboard/core/samples.py)
    st.caption(f"Question-level McNemar p {p_text(top['p_mcnemar'])} (what other tools report: it counts questions as "
               "independent, and a document one run cannot read moves all its questions together).")


def slices_section(an, table: pd.DataFrame, a: str, b: str, state: MutableMapping[str, str]) -> None:
    st.subheader("By slice")
    viewstate.seed("cmp_metric", state.get("cmp_metric") if state.get("cmp_metric") in C.METRICS else "accuracy")
    c1, c2 = st.columns([3, 2])
    metric = c1.segmented_control("Metric", C.METRICS, format_func=C.METRIC_LABELS.__getitem__, key="cmp_metric") or "accuracy"
    state["cmp_metric"] = "" if metric == "accuracy" else metric
    fields = [f for f in dict.fromkeys(table["field"]) if f != C.OVERALL_FIELD]
    field_name = c2.selectbox("Breakdown", [ALL_FIELDS, *fields], format_func=lambda f: f if f == ALL_FIELDS else field_label(f),
                              key="cmp_field")
    shown = table if field_name == ALL_FIELDS else table[table["field"].isin([C.OVERALL_FIELD, field_name])]
    event = st.plotly_chart(charts.delta_chart(shown, metric, a, b), on_select="rerun", selection_mode="points",
                            key=f"cmp_delta_{metric}_{field_name}", width="stretch")
    hit = charts.picked(event)
    if hit and C.slice_key(str(hit[0]), str(hit[1])) != state.get("cmp_slice") and hit != st.session_state.get("cmp_delta_seen"):
        st.session_state["cmp_delta_seen"] = hit
        choose_slice(state, str(hit[0]), str(hit[1]))
    few = int((shown["too_few"].astype(bool) & (shown["field"] != C.OVERALL_FIELD)).sum())
    tested = C.tested_count(table)
    if few:
        st.warning(f"{few} of these slices have fewer than {C.MIN_DOCUMENTS} documents (hollow markers): too few documents "
                   "to tell, so they get no interval and no test; the table gives the smallest gap each could detect.",
                   icon=":material/warning:")
    unit = "documents" if C.unit_of(an.questions) == "document" else "questions (the gold names no documents)"
    family = (f"that p adjusted by Benjamini-Hochberg across the {tested} slice{'s' * (tested != 1)} with at least "
              f"{C.MIN_DOCUMENTS} documents (your saved slices among themselves), as the command line's gate adjusts it"
              if tested else f"none here: no slice has the {C.MIN_DOCUMENTS} documents a test needs")
    st.caption(f"Intervals and p resample and test {unit}: a drawn document brings both runs' answers to all its questions, "
               f"and p is the sign-flip test of whole documents. q: {family}. McNemar p (questions): the "
               "question-level test other tools report, which treats questions as independent. Click a marker to open "
               "that slice's flips below.")
    rows = shown.assign(Slice=[slice_text(f, lab) for f, lab in zip(shown["field"], shown["label"])])
    too_few = rows["too_few"].astype(bool)
    frame = pd.DataFrame({
        "Slice": rows["Slice"], "Questions": rows["questions"], "Documents": rows["documents"],
        "Few": too_few.map(lambda s: "⚠ too few documents to tell" if s else ""),
        "A (%)": rows[f"{metric}_a"] * 100, "B (%)": rows[f"{metric}_b"] * 100,
        "Δ (pp)": rows[f"{metric}_delta"] * 100, "Low (pp)": rows[f"{metric}_low"] * 100, "High (pp)": rows[f"{metric}_high"] * 100,
        "Detectable (pp)": rows[f"{metric}_detectable"].where(rows[f"{metric}_detectable"] < float("inf")) * 100,
        "p": rows[f"{metric}_p"].where(~too_few), "q": rows[f"{metric}_q"],
        "Only A": rows["only_a"], "Only B": rows["only_b"], "McNemar p (questions)": rows["p_mcnemar"],
    })
    num = st.column_config.NumberColumn(format="%.1f")
    st.dataframe(frame, hide_index=True, width="stretch", key="cmp_delta_table", column_config={
        "A (%)": num, "B (%)": num, "Δ (pp)": st.column_config.NumberColumn(format="%+.1f"),
        "Low (pp)": st.column_config.NumberColumn(format="%+.1f", help="95 % interval by documents (none under 20)"),
        "High (pp)": st.column_config.NumberColumn(format="%+.1f", help="95 % interval by documents (none under 20)"),
        "Detectable (pp)": st.column_config.NumberColumn(
            format="±%.1f", help="the smallest gap this slice could detect at 80 % power and 95 % confidence"),
        "p": st.column_config.NumberColumn(format="%.3g", help="sign-flip test of whole documents"),
        "q": st.column_config.NumberColumn(format="%.3g", help="p adjusted for the many slices (Benjamini-Hochberg)"),
        "McNemar p (questions)": st.column_config.NumberColumn(
            format="%.3g", help="question-level: treats questions as independent (secondary)")})
    downloads(table, f"deltas_{file_part(a)}_vs_{file_part(b)}", "cmp_dl_deltas")


def choose_slice(state: MutableMapping[str, str], field_name: str, label: str, flip: str = "") -> None:
    """Select a slice (and a flip cell) for the flip section; its pickers follow on this run."""
    state["cmp_slice"] = C.slice_key(field_name, label)
    state["cmp_flip"] = flip
    state.pop("cmp_q", None)
    st.session_state["cmp_slice_pick"] = state["cmp_slice"]
    st.session_state["cmp_flip_pick"] = flip or None
    st.session_state.pop("cmp_q_pick", None)


def flip_table(an, pairs: pd.DataFrame, a: str, b: str, qframe: pd.DataFrame) -> pd.DataFrame:
    """The pair's flip table over the frame's fields, kept on the analysis: the pairs are its rows of A and B,
    which never change."""
    fields = fields_of(qframe)
    digest = _questions_digest(an, qframe)
    return an.remember(("flips", a, b, fields, digest), lambda: C.flip_table(
        pairs, qframe, fields, remembered(an, ("slice positions", fields, digest), lambda: C.slice_positions(qframe, fields),
                                          qframe)))


def meanwhile(an, pairs: pd.DataFrame, a: str, b: str, state: MutableMapping[str, str], questions: pd.DataFrame,
              tagged: pd.DataFrame) -> None:
    """What the sections under the per-slice table work out without it -- the flip table, and the finder's scope
    of the pair when its answers are not made yet (`where_worse_better`) -- worked out while the pair's job makes
    the table (its slices' rows in the shared pool's worker processes), and kept where those sections find them;
    nothing is drawn."""
    flip_table(an, pairs, a, b, questions)
    metric = _pair_metric(state)
    settings = W.Settings()
    if tagged is an.questions and (weak_panel.cached(an, tagged, a, b, metric, settings) is None
                                   or weak_panel.cached(an, tagged, b, a, metric, settings) is None):
        weak_panel.scope(an, tagged, a, b, metric)


def _pair_metric(state: MutableMapping[str, str]) -> str:
    metric = state.get("cmp_metric") or "accuracy"
    return metric if metric in C.METRICS else "accuracy"


def flips_section(an, pairs: pd.DataFrame, a: str, b: str, state: MutableMapping[str, str], ctx: Context,
                  with_fields: pd.DataFrame | None = None) -> None:
    """The flip table per slice (`with_fields`: the question frame with the saved slices' field), a
    cell's questions and one question side by side."""
    st.subheader("What flipped (Accuracy)")
    qframe = an.questions if with_fields is None else with_fields
    flips = flip_table(an, pairs, a, b, qframe)
    st.caption(f"A = {md_escape(a)}, B = {md_escape(b)}. Click a count to list those questions. p (documents): is one run "
               "right more often than the other, tested by flipping whole documents between the runs (exact); McNemar p "
               "(questions): the question-level test, which treats questions as independent.")
    shown = flips.assign(Slice=[slice_text(f, lab) for f, lab in zip(flips["field"], flips["label"])])
    table = shown[["Slice", "questions", *C.FLIPS, "documents", "p", "p_mcnemar"]].rename(
        columns={"questions": "Questions", "documents": "Documents", "p": "p (documents)", "p_mcnemar": "McNemar p (questions)"})
    event = st.dataframe(table, hide_index=True, width="stretch", height=320, key="cmp_flip_table", on_select="rerun",
                         selection_mode="single-cell", column_config={
                             "p (documents)": st.column_config.NumberColumn(format="%.3g"),
                             "McNemar p (questions)": st.column_config.NumberColumn(format="%.3g")})
    cells = list(getattr(getattr(event, "selection", None), "cells", None) or [])
    if cells and tuple(cells[0]) != st.session_state.get("cmp_flip_seen"):
        st.session_state["cmp_flip_seen"] = tuple(cells[0])
        row, column = cells[0]
        if 0 <= int(row) < len(flips):
            pick = flips.iloc[int(row)]
            choose_slice(state, pick["field"], pick["label"], column if column in C.FLIPS else "")
    downloads(flips, f"flips_{file_part(a)}_vs_{file_part(b)}", "cmp_dl_flips")
    annotations_panel.modes_a_not_b(ctx, a, b)

    keys = [C.slice_key(f, lab) for f, lab in zip(flips["field"], flips["label"])]
    names = dict(zip(keys, shown["Slice"]))
    viewstate.seed("cmp_slice_pick", state.get("cmp_slice") if state.get("cmp_slice") in names else keys[0])
    viewstate.seed("cmp_flip_pick", state.get("cmp_flip") if state.get("cmp_flip") in C.FLIPS else None)
    if st.session_state["cmp_slice_pick"] not in names:  # a slice of another pair of runs
        st.session_state["cmp_slice_pick"] = keys[0]
    c1, c2 = st.columns([2, 3])
    chosen = c1.selectbox("Slice", keys, format_func=names.__getitem__, key="cmp_slice_pick")
    flip = c2.segmented_control("Outcome", C.FLIPS, key="cmp_flip_pick", help="None chosen: every question of the slice")
    now = ("" if chosen == keys[0] else chosen, flip or "")
    if now != (state.get("cmp_slice", ""), state.get("cmp_flip", "")):
        state.pop("cmp_q", None)
        st.session_state.pop("cmp_q_pick", None)
    state["cmp_slice"], state["cmp_flip"] = now
    field_name, label = C.parse_slice(chosen) or (C.OVERALL_FIELD, C.OVERALL_LABEL)
    cell = C.flip_questions(pairs, qframe, field_name, label, flip)
    what = f"{slice_text(field_name, label)} · {flip or 'every outcome'}"
    st.markdown(f"**{len(cell)} question{'s' if len(cell) != 1 else ''}**: {md_escape(what)}")
    if cell.empty:
        st.info("No question in this cell. Pick another slice or outcome.")
        return
    questions(an, cell, a, b, state, ctx)


def questions(an, cell: pd.DataFrame, a: str, b: str, state: MutableMapping[str, str], ctx: Context) -> None:
    q = an.questions.reindex(cell.index)
    table = pd.DataFrame({
        "question_id": cell.index, "outcome": cell["flip"].values, "question": q["question"].values, "gold": q["gold"].values,
        "A answer": cell["prediction_a"].values, "B answer": cell["prediction_b"].values,
        **{f"A {C.METRIC_LABELS[m]}": cell[f"{m}_a"].values * 100 for m in C.METRICS},
        **{f"B {C.METRIC_LABELS[m]}": cell[f"{m}_b"].values * 100 for m in C.METRICS},
    })
    pct = st.column_config.NumberColumn(format="%.0f")
    ids = list(cell.index)
    # one table widget per cell: a row selected in one cell's table must not select a row of the next
    cell_key = hashlib.sha256(json.dumps([a, b, state.get("cmp_slice", ""), state.get("cmp_flip", "")]).encode()).hexdigest()[:10]
    chosen = [ids.index(state["cmp_q"])] if state.get("cmp_q") in ids else []
    event = st.dataframe(table, hide_index=True, width="stretch", height=min(420, 38 + 35 * len(table)),
                         key=f"cmp_q_table_{cell_key}", on_select="rerun", selection_mode="single-row",
                         selection_default={"selection": {"rows": chosen, "columns": [], "cells": []}},
                         column_config={c: pct for c in table.columns if c.startswith(("A ", "B ")) and "answer" not in c})
    rows = list(getattr(getattr(event, "selection", None), "rows", None) or [])
    seen = (cell_key, tuple(rows))
    if seen != st.session_state.get("cmp_q_seen"):  # act on a change of the row selection only
        st.session_state["cmp_q_seen"] = seen
        if rows and 0 <= rows[0] < len(ids):
            state["cmp_q"] = ids[rows[0]]
            st.session_state["cmp_q_pick"] = ids[rows[0]]
    downloads(table, f"questions_{file_part(a)}_vs_{file_part(b)}", "cmp_dl_questions")
    if st.session_state.get("cmp_q_pick") not in [None, *ids]:
        st.session_state.pop("cmp_q_pick")
    viewstate.seed("cmp_q_pick", state.get("cmp_q") if state.get("cmp_q") in ids else None)
    qid = st.selectbox("Question", ids, key="cmp_q_pick", placeholder="Select a row above, or pick a question here")
    state["cmp_q"] = qid or ""
    if qid:
        detail(an, cell.loc[qid], qid, a, b, ctx)


def detail(an, row: pd.Series, qid: str, a: str, b: str, ctx: Context) -> None:
    """One question, A and B side by side: answers as plain text, a character diff, the three scores,
    the evidence page (dashboard/evidence/panel.py)."""
    q = an.questions.loc[qid]
    st.subheader("Question detail")
    parts = [str(q.get(k, "") or "") for k in ("answer_format", "reasoning_type", "document")]
    st.caption(md_escape(" · ".join([qid, *(v for v in parts if v and v != C.UNKNOWN)])))  # no "unknown · unknown"
    output.plain(q.get("question"), key=f"cmp_qtext_{qid}", name="question")
    st.markdown("**Gold answer**")
    output.plain(q.get("gold"), key=f"cmp_gold_{qid}", name="gold")
    cols = st.columns(2)
    for col, run, side in ((cols[0], a, "a"), (cols[1], b, "b")):
        with col:
            st.markdown(f"**{'A' if side == 'a' else 'B'} · {md_escape(run)}**")
            output.plain(str(row[f"prediction_{side}"] or ""), key=f"cmp_pred_{side}_{qid}", name=f"{file_part(run)}_answer")
            st.caption(" · ".join(f"{C.METRIC_LABELS[m]} {100 * row[f'{m}_{side}']:.0f} %" for m in C.METRICS)
                       + f" · status {md_escape(str(row[f'status_{side}']))}")
    st.markdown("**Character difference A → B**")
    st.caption(md_escape("[-only in A-] {+only in B+}"))
    st.code(diff_text(char_diff(str(row["prediction_a"] or ""), str(row["prediction_b"] or ""))) or "(both empty)",
            language=None, wrap_lines=True)
    gold = next((g for g in ctx.workspace.gold.items if g.qid == qid), None)
    if gold is None:
        return
    try:
        from dashboard.evidence.panel import show_evidence
    except ImportError:  # no evidence viewer in this build
        return
    with st.expander("Evidence page", expanded=False, icon=":material/description:"):
        show_evidence(ctx, gold, [a, b])
    annotations_panel.annotate(ctx, gold, [a, b], "cmp")


# ----------------------------------------------------------------------------- many runs


def run_weakness(ctx: Context, an, run: str, metric: str, text: str = "Finding where the run is weak…"):
    """The weak-slice finder on one run against the rest of itself (dashboard/weak: the Weak slices
    page's search, its store, default settings, the saved slices and tags as fields) -- the one answer
    to "where is it weak" that Compare's "All runs", the Presentation and the report show. None when
    the benchmark is too small (said) or the search was stopped (said)."""
    questions = saved_panel.questions_with_fields(ctx, [run], with_tags=True)
    settings = W.Settings()
    if weak_panel.cached(an, questions, run, "", metric, settings) is None and weak_panel.too_small(
            an, questions, run, "", metric, settings, page="compare"):
        return None
    return weak_panel.computed(an, questions, run, "", metric, settings, text)


def many_runs(ctx: Context, an, order: list[str], state: MutableMapping[str, str]) -> None:
    st.subheader("Where a run is weakest")
    st.caption("The weak-slice finder (the Weak slices page's search): every conjunction of up to three conditions is "
               "tested against the rest of the run with documents as the unit, false discoveries controlled across "
               "all of them; a slice's gap is slice − rest (negative: worse), its interval adjusted for the search.")
    viewstate.seed("cmp_run", state.get("cmp_run") if state.get("cmp_run") in order else order[0])
    viewstate.seed("cmp_all_metric", state.get("cmp_metric") if state.get("cmp_metric") in C.METRICS else "accuracy")
    run = st.selectbox("Run", order, key="cmp_run")
    metric = st.segmented_control("Metric", C.METRICS, format_func=C.METRIC_LABELS.__getitem__, key="cmp_all_metric") or "accuracy"
    state["cmp_run"] = run
    found = run_weakness(ctx, an, run, metric)
    if found is not None:
        label = C.METRIC_LABELS[metric]
        st.markdown(W.markdown(W.sentence(found, run, label)))
        st.caption(md_escape(W.settings_text(found) + " " + W.fields_text(found)))
        if found.weak:
            event = st.plotly_chart(weak_charts.forest(found, label, top=WEAK_TOP), width="stretch",
                                    key=f"cmp_weak_{metric}", on_select="rerun", selection_mode="points")
            st.caption(f"Click a slice to open those questions of {md_escape(run)} in the question explorer.")
            hit = charts.picked(event)
            if hit and 1 <= int(hit[-1]) <= len(found.weak):
                viewstate.open_explorer(W.explorer_view(run, found.weak[int(hit[-1]) - 1].conditions, "",
                                                        saved_panel.by_name(ctx), found))
            st.dataframe(W.table(found, run, "", saved_panel.by_name(ctx)).head(WEAK_TOP), hide_index=True,
                         width="stretch", key="cmp_weak_table", column_order=weak_panel.SHOWN,
                         column_config=weak_panel.table_config())
        if st.button("Every slice on the Weak slices page", key="cmp_weak_open", icon=":material/troubleshoot:"):
            open_weak_page(run, "", metric)

    st.subheader("Ranks per slice")
    shown = leading_runs(order, [run])
    note = shared_note(an, shown)
    if note:
        st.info(md_escape(note), icon=":material/join_inner:")
    long = C.slice_scores(compared_scores(an, shown), an.questions, shown, metric)
    wide = C.rank_table(long)
    ranks = wide.assign(Slice=[slice_text(f, lab) for f, lab in zip(wide["field"], wide["label"])])
    ranks = ranks[["Slice", "questions", *shown]].rename(columns={"questions": "Questions"})
    among = leading_note(shown, order, "the run picked above")
    st.caption(f"{C.METRIC_LABELS[metric]} rank of every run on every slice (1 = best, green; last, red; ties share a rank). "
               "Columns follow the overall ranking." + (md_escape(f" Ranked among {among}") if among else ""))
    last = len(shown)
    styled = ranks.style.map(lambda v: rank_colour(v, last), subset=list(shown))
    st.dataframe(styled, hide_index=True, width="stretch", height=420, key="cmp_rank_table")
    downloads(long, f"ranks_{metric}", "cmp_dl_ranks")


# ----------------------------------------------------------------------------- pair mode of the finder


WEAK_PAGE = "views/weak.py"
PAIR_TOP = 5


def open_weak_page(run: str, baseline: str, metric: str) -> None:
    """The Weak slices page in pair mode on (run, baseline, metric): its pickers follow the view."""
    view = viewstate.view()
    view.weak = {"wk_run": run, "wk_base": baseline, "wk_metric": "" if metric == "accuracy" else metric}
    for key in ("weak_run", "weak_base", "weak_metric"):
        st.session_state.pop(key, None)
    viewstate.switch_to(viewstate.QUESTIONS_PAGE.parent / "weak.py")


def pair_slices_table(result, run: str, baseline: str, saved=None, source: View | None = None) -> pd.DataFrame:
    """The top PAIR_TOP kept slices of a pair-mode search: conditions, questions, documents, the gap
    of the paired difference with its interval by document, q, and the explorer link (showing what
    `source`, the page's view, shows)."""
    table = W.table(result, run, baseline, saved, source).head(PAIR_TOP)
    return table[["Rank", "Conditions", "Questions", "Documents", W.INTERVAL, "q", "Open in explorer"]]


def where_worse_better(ctx: Context, an, a: str, b: str, state: MutableMapping[str, str], questions: pd.DataFrame) -> None:
    """"Where did A get worse / better": the finder in pair mode (dashboard/weak), A − B (slices where
    A lost more to B than elsewhere) and B − A (where A gained more), computed on request with a
    progress bar and kept in the Weak slices page's store; the top slices with their intervals by
    document, and a button to that page in pair mode for the full table."""
    metric = _pair_metric(state)
    st.subheader("Where did A get worse, and where better")
    settings = W.Settings()
    worse = weak_panel.cached(an, questions, a, b, metric, settings)
    better = weak_panel.cached(an, questions, b, a, metric, settings)
    if worse is None or better is None:
        st.caption(f"On request: every conjunction of up to three conditions is tested for a paired {C.METRIC_LABELS[metric]} "
                   "difference A − B below (or above) the rest's, with documents as the unit and false discoveries "
                   "controlled (Benjamini–Hochberg, q < 0.05).")
        if weak_panel.too_small(an, questions, a, b, metric, settings, page="compare", offer=False):  # offered above
            return
        if not st.button("Find where A got worse and better", icon=":material/search:", key="cmp_pair_go"):
            return
        worse = weak_panel.computed(an, questions, a, b, metric, settings, "Reading the questions…")
        better = weak_panel.computed(an, questions, b, a, metric, settings, "Reading the questions…")
        if worse is None or better is None:
            return
    saved = saved_panel.by_name(ctx)  # a saved-slice condition's link brings that slice's filters
    st.caption(md_escape(W.settings_text(worse) + " " + W.fields_text(worse)))
    for title, result, run, base, key in ((f"Where {a} got worse than {b}", worse, a, b, "worse"),
                                          (f"Where {a} got better than {b}", better, b, a, "better")):
        st.markdown(f"**{md_escape(title)}** ({C.METRIC_LABELS[metric]}, {result.tested:,} slices tested)")
        if not result.weak:
            st.info(md_escape(f"Not enough evidence: no slice where the difference is {key} than on the other questions "
                              f"beyond chance ({result.tested:,} slices tested, {result.units:,} {result.unit}s as the unit)."))
        else:
            st.dataframe(pair_slices_table(result, run, base, saved, viewstate.view()), hide_index=True, width="stretch", key=f"cmp_pair_{key}",
                         column_config={
                             "Conditions": st.column_config.ListColumn("Conditions", width="large"),
                             W.INTERVAL: st.column_config.TextColumn(
                                 "Gap of " + ("B − A" if key == "better" else "A − B") + " (pp), interval adjusted for the search",
                                 help="the slice's mean paired difference minus the rest's (negative: lost more there), "
                                      "with its interval by document adjusted for the search (false-coverage rate)"),
                             "q": st.column_config.NumberColumn(format="%.2g"),
                             "Open in explorer": st.column_config.LinkColumn(display_text="questions ↗")})
        if st.button(f"The full table on the Weak slices page ({'A against B' if key == 'worse' else 'B against A'})",
                     key=f"cmp_pair_open_{key}", icon=":material/troubleshoot:"):
            open_weak_page(run, base, metric)

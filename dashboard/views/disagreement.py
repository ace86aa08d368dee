"""Metric disagreement: where Accuracy, token F1 and ANLS disagree, why, and how fragile each verdict
is. Category counts per run and per slice (a click opens those questions), the metric-pair scatter
(a selection opens its points), the questions with the why of each answer, answerability rates and
the evaluator's sensitivity to the scoring profile. Model text is plain text only."""

import hashlib
from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st

from dashboard.core.escape import clipped, md_escape
from dashboard.core.links import field_label
from dashboard.core.paths import DEFAULT_BENCHMARK
from dashboard.data.workspace import responses
from dashboard.disagreement import frames as dg
from dashboard.disagreement import harness as hs
from dashboard.disagreement.charts import category_bars, pair_scatter, points_of
from dashboard.disagreement.why_panel import show_why
from dashboard.shell import cache, context, output, scorer, viewstate
from scoring.categories import CATEGORIES, CATEGORY_IDS
from scoring.evaluate import RunResult
from scoring.profiles import get_profile
from scoring.registry import METRICS
from scoring.runner import overall_of, record_of
from scoring.sensitivity import applicable_profiles, compare
from scoring.writers import frame_csv

SLICE_FIELDS = ("reasoning_type", "evidence_source", "answer_format", "domain", "difficulty", "document")
MODES = {"primary": "Primary category (each answer counted once)", "any": "Every category an answer carries"}
LAST = "dis_last_events"  # the last selection seen per widget: only a new selection changes the view
POINTS = "dis_points"  # (run, question id) pairs selected in the scatter
DEFAULT_RUNS = 4  # runs chosen when the link names none: the leaderboard's first

ctx = context.context()
an = ctx.analysis
st.title("Metric disagreement")
st.caption(f"Where Accuracy, token F1 and ANLS disagree, why, and how fragile each verdict is · profile {ctx.profile}")


def _csv_of(frame):
    """The table's CSV, written when its download button is pressed (`frame` as it is now)."""
    return lambda: frame_csv(frame)


def new_event(key: str, value) -> bool:
    """True the first time a widget reports this selection (a kept selection is not a new click)."""
    seen = st.session_state.setdefault(LAST, {})
    if value and seen.get(key) != value:
        seen[key] = value
        return True
    if not value:
        seen.pop(key, None)
    return False


def open_list(d: dict, **changes) -> None:
    d.update({k: v for k, v in changes.items()})
    for k in [k for k, v in d.items() if not v]:
        del d[k]
    st.session_state.pop(POINTS, None)
    d.pop("dis_q", None)


def slice_field(d: dict[str, str]) -> str:
    by = d.get("dis_by")
    return by if by in SLICE_FIELDS else SLICE_FIELDS[0]


def _categories(result: RunResult, name: str) -> pd.DataFrame:
    return dg.run_categories(result, responses(ctx.workspace, name))


def frame_for(runs):
    parts = []
    for name in runs:
        result = an.result_of(name)
        pf = next((p for p in ctx.workspace.predictions if p.run == name), None)
        key = (ctx.gold_key, pf.sha256 if pf else name, name, ctx.profile)
        parts.append(cache.run_categories(key, partial(_categories, result, name)))
    return dg.category_frame(parts)


def pick_runs(v, scored: list[str]) -> list[str]:
    chosen = st.session_state.get("dis_runs") or []
    if chosen and not any(r in scored for r in chosen):
        del st.session_state["dis_runs"]  # another folder opened: none of the runs chosen is loaded, choose again
    # none in the link: the leaderboard's first four (the runs a user looks at first), not the files' first four
    wanted = set(scored)
    leading = [r for r in an.leaderboard()["Run"] if r in wanted] or scored
    viewstate.seed("dis_runs", [r for r in v.runs if r in scored] or leading[:DEFAULT_RUNS])
    top = st.columns([3, 2])
    runs = top[0].multiselect("Runs", scored, key="dis_runs", placeholder="Choose runs")
    viewstate.seed("dis_mode_w", v.disagree.get("dis_mode", "primary") if v.disagree.get("dis_mode") in MODES else "primary")
    mode = top[1].radio("Count", list(MODES), format_func=MODES.__getitem__, key="dis_mode_w")
    v.runs = runs
    v.disagree["dis_mode"] = "" if mode == "primary" else mode
    return runs


def definitions() -> None:
    with st.expander("What each category means (checked in this order; the first that applies is the primary one)",
                     icon=":material/menu_book:"):
        st.dataframe({"Category": [dg.category_label(c) for c in CATEGORY_IDS], "Definition": list(CATEGORIES.values()),
                      "Id": list(CATEGORY_IDS)}, hide_index=True, width="stretch", row_height=48,
                     column_config={"Definition": st.column_config.TextColumn(width="large"),
                                    "Id": st.column_config.TextColumn(help="the category's name in the CSV and JSON "
                                                                           "downloads and the command line's output")})
        st.caption(f"A metric passes when the answer is right ({get_profile(ctx.profile).right_rule}), token F1 ≥ 0.5, "
                   "ANLS ≥ 0.5. " + dg.FUZZY_DEFINITION +
                   " The exact reading of each rule: scoring/categories.py.")


def per_run(frame, runs, mode, d) -> None:
    st.subheader("Categories per run")
    counts = dg.counts(frame, runs, mode)
    event = st.plotly_chart(category_bars(counts), on_select="rerun", selection_mode="points", key="dis_bars",
                            width="stretch")
    hit = [(p["customdata"][0], p["customdata"][1]) for p in event.selection.points if p.get("customdata")]
    if new_event("dis_bars", hit[:1]):
        open_list(d, cat=hit[0][1], dis_run=hit[0][0], dis_slice="")
    words = {dg.category_label(c): c for c in counts.columns}  # the table's rows, in words
    table = counts.T.rename_axis("category").reset_index().assign(category=list(words))
    ev = st.dataframe(table, hide_index=True, width="stretch", key="dis_counts", on_select="rerun",
                      selection_mode="single-cell", height=35 * (len(table) + 1) + 3,
                      column_config={"category": st.column_config.TextColumn("Category", pinned=True, width="medium")})
    st.caption("Click a bar or a count to open those questions below.")
    cells = [tuple(c) for c in ev.selection.cells]
    if new_event("dis_counts", cells):
        row, col = cells[0]
        open_list(d, cat=words[table.iloc[row]["category"]], dis_run=col if col in runs else "", dis_slice="")


def per_slice(frame, runs, mode, d) -> str:
    st.subheader("Categories per slice")
    viewstate.seed("dis_by_w", slice_field(d))
    by = st.selectbox("Slice by", SLICE_FIELDS, format_func=field_label, key="dis_by_w")
    if by != slice_field(d):  # another field: a label of the previous one means nothing
        d.pop("dis_slice", None)
    d["dis_by"] = "" if by == SLICE_FIELDS[0] else by
    table = dg.slice_counts(frame, an.questions, runs, by, mode)
    shown = table.reset_index().rename(columns={table.index.name: "label"})
    words = {dg.category_label(c): c for c in CATEGORY_IDS}  # the columns, in words
    ev = st.dataframe(shown.rename(columns={c: dg.category_label(c) for c in CATEGORY_IDS}), hide_index=True,
                      width="stretch", key=f"dis_slices_{by}", on_select="rerun",
                      selection_mode="single-cell", height=min(600, 35 * (len(shown) + 1) + 3),
                      column_config={"label": st.column_config.TextColumn(field_label(by), pinned=True),
                                     "questions": st.column_config.NumberColumn("answers", help="question × run pairs")})
    st.caption(f"Answers of the chosen runs per {field_label(by).lower()} and category; click a count to open them.")
    cells = [tuple(c) for c in ev.selection.cells]
    if new_event(f"dis_slices_{by}", cells):
        row, col = cells[0]
        open_list(d, cat=words.get(str(col), ""), dis_slice=str(shown.iloc[row]["label"]), dis_run="")
    return by


def scatter(frame, runs, d, shown: set) -> bool:
    """The metric-pair scatter, the listed answers ringed; True when a new selection was made."""
    st.subheader("Scores side by side")
    pair = d.get("dis_pair") if d.get("dis_pair") in dg.PAIRS else "token_f1 / anls"
    viewstate.seed("dis_pair_w", pair)
    pair = st.segmented_control("Metric pair", list(dg.PAIRS), key="dis_pair_w",
                                format_func=lambda p: " vs ".join(dg.SCORE_LABELS[m] for m in dg.PAIRS[p])) or pair
    d["dis_pair"] = "" if pair == "token_f1 / anls" else pair
    x, y = dg.PAIRS[pair]
    pts, total = dg.scatter_points(frame, runs, x, y)
    event = st.plotly_chart(pair_scatter(pts, x, y, shown, ctx.profile), on_select="rerun", selection_mode=("points", "box", "lasso"),
                            key=f"dis_scatter_{pair}", width="stretch")
    note = f" (a fixed sample of {len(pts):,} of {total:,} drawn)" if total > len(pts) else ""
    st.caption(f"One point per answer{note}, jittered by up to ±{dg.JITTER:.3f} so equal scores form a cloud. "
               "Click a point or draw a box or lasso (toolbar) to open those answers below.")
    chosen = points_of(st.session_state.get(f"dis_scatter_{pair}") or event)
    if new_event(f"dis_scatter_{pair}", chosen):
        open_list(d, cat="", dis_run="", dis_slice="")
        st.session_state[POINTS] = chosen
        return True
    return False


def listed(frame, runs, mode, d):
    """The answers opened by the last selection: (rows of the category frame, what they are)."""
    points = st.session_state.get(POINTS)
    if points:
        keys = set(map(tuple, points))
        rows = frame[[(r, q) in keys for r, q in zip(frame["run"], frame["question_id"])]]
        what = f"{len(keys)} answers selected in the scatter"
    else:
        cat, run, by, label = d.get("cat", ""), d.get("dis_run", ""), slice_field(d), d.get("dis_slice", "")
        rows = dg.select(frame, an.questions, [run] if run in runs else runs, cat if cat in CATEGORIES else "",
                         by if label else "", label, mode)
        parts = [f"category {dg.category_label(cat)}" if cat in CATEGORIES else "every category",
                 f"run {run}" if run in runs else "chosen runs"]
        if by and label:
            parts.append(f"{field_label(by).lower()} {label}")
        what = " · ".join(parts)
    return rows, what


def question_list(frame, rows, what, runs, d) -> None:
    st.subheader("Answers")
    points = st.session_state.get(POINTS)
    table = dg.table(rows, an.questions)
    cols = st.columns([4, 1], vertical_alignment="center")
    cols[0].caption(md_escape(f"{what}: {len(table)} answer{'s' if len(table) != 1 else ''}"))
    if (points or d.get("cat") or d.get("dis_slice") or d.get("dis_run")) and cols[1].button("Show all", key="dis_clear"):
        open_list(d, cat="", dis_run="", dis_slice="")
        st.rerun()
    if table.empty:
        st.info("No answer in this selection. Pick another category, slice or run above.")
        return
    shown = dg.in_words(clipped(table, 300))  # categories, rules and formats in words; the CSV keeps the codes
    key = "dis_list_" + hashlib.sha256(f"{what}|{len(table)}".encode()).hexdigest()[:12]
    ids = list(zip(table["run"], table["question_id"]))
    want = (d.get("dis_run", ""), d.get("dis_q", ""))
    if d.get("dis_q") and key not in st.session_state:
        hit = next((i for i, (r, q) in enumerate(ids) if q == want[1] and (not want[0] or r == want[0])), None)
        if hit is not None:
            st.session_state[key] = {"selection": {"rows": [hit], "columns": [], "cells": []}}
    ev = st.dataframe(shown, hide_index=True, width="stretch", height=min(420, 35 * (len(shown) + 1) + 3), key=key,
                      on_select="rerun", selection_mode="single-row",
                      column_config={"question_id": st.column_config.TextColumn("Question id", pinned=True),
                                     "prediction": st.column_config.TextColumn(width="medium"),
                                     "decision": st.column_config.TextColumn("rule that decided Accuracy"),
                                     "categories": st.column_config.TextColumn("every category"),
                                     **{m: st.column_config.NumberColumn(dg.SCORE_LABELS[m], format="%.3f") for m in METRICS},
                                     # the short name in the header (the long one pushed columns out of view), the
                                     # measure explained in its help
                                     "fuzzy": st.column_config.NumberColumn("Fuzzy match", format="%.3f",
                                                                            help=dg.FUZZY_DEFINITION.replace("Fuzzy match:", f"{dg.FUZZY_LABEL}:", 1))})
    c1, c2 = st.columns(2)
    c1.download_button("Download this table as CSV", lambda: frame_csv(table),  # written when pressed
                       file_name="disagreement.csv", mime="text/csv", icon=":material/download:", key="dis_dl_csv")
    c2.download_button("Download the category counts as JSON", dg.counts_json(frame, runs, ctx.profile).encode("utf-8"),
                       file_name="category_counts.json", mime="application/json", icon=":material/download:",
                       key="dis_dl_json")
    if ev.selection.rows:
        run, qid = ids[ev.selection.rows[0]]
        d["dis_q"] = qid
        why(run, qid)
    else:
        d.pop("dis_q", None)
        st.caption("Select a row (click its left edge) to see why that answer got its scores.")


def why(run_name: str, qid: str) -> None:
    result = record_of(an.result_of(run_name), qid)
    if result is None:
        return
    q = result.question
    with st.container(border=True):
        st.markdown(f"**Why** · {md_escape(run_name)} · {md_escape(qid)}")
        output.plain(q.question, name="question", key="dis_dl_q")
        st.caption("Gold answer")
        output.plain(q.gold_answer, name="gold", key="dis_dl_gold")
        st.caption("Prediction")
        output.plain(result.effective, empty="(no prediction)", name="prediction", key="dis_dl_pred")
        raw = (responses(ctx.workspace, run_name) or {}).get(qid)
        if raw is not None:
            st.caption("Raw response (before extraction)")
            output.plain(str(raw), empty="(no response)", name="response", key="dis_dl_response")
        show_why(result.judgement, key=f"dis_{run_name}", response=raw)
        if st.button("Open in the question explorer (evidence pages, every run's answer)", key="dis_open_explorer",
                     icon=":material/quiz:"):
            open_in_explorer(run_name, qid)


def open_in_explorer(run_name: str, qid: str) -> None:
    """The question explorer on this answer: its run chosen, no filter, the question selected."""
    v = viewstate.view()
    viewstate.set_view(replace(v, runs=[run_name], filters={}, ranges={}, status=[], search="", question=qid, match="every"))
    for key in [k for k in st.session_state if str(k).startswith(viewstate.EXPLORER_PREFIX)]:
        del st.session_state[key]
    viewstate.switch_to(viewstate.QUESTIONS_PAGE)  # with its URL: Back returns here in one press


def answerability(frame, runs, by) -> None:
    st.subheader("Answerability")
    st.caption("Invented answers: unanswerable questions answered with something else. False refusals: answerable "
               "questions answered with a refusal phrase. Rates in % of those questions; empty where the "
               "slice has no such question.")
    pct = st.column_config.NumberColumn(format="%.1f")
    overall = dg.answerability(frame, an.questions, runs).drop(columns="label")
    st.dataframe(overall, hide_index=True, width="stretch", key="dis_ans_runs",
                 column_config={"invented (%)": pct, "false refusals (%)": pct})
    st.caption(f"Per {field_label(by).lower()}:")
    st.dataframe(dg.answerability(frame, an.questions, runs, by).rename(columns={"label": field_label(by)}),
                 hide_index=True, width="stretch", key="dis_ans_slices",
                 column_config={"invented (%)": pct, "false refusals (%)": pct})


def board(runs, profiles) -> None:
    """The chosen runs' Accuracy and rank under each profile: how far the leaderboard would move."""
    files = {p.run: p for p in ctx.workspace.predictions}
    scored = {r: {ctx.profile: an.result_of(r)} | {p: scorer.score(ctx.workspace, ctx.gold_key, files[r], p) for p in profiles}
              for r in runs if r in files}
    frame = dg.profile_leaderboard(scored, ctx.profile)
    config = {c: st.column_config.NumberColumn(format="%.1f") for c in frame.columns if c.startswith("Accuracy")}
    config |= {c: st.column_config.NumberColumn(format="%+d") for c in frame.columns if c.startswith("Rank change")}
    st.dataframe(frame, hide_index=True, width="stretch", key="dis_sens_board", column_config=config)
    st.caption("The chosen runs under each profile: Accuracy, rank, and the rank change from the current profile "
               "(+1 = one place up).")


def harness_slice_field(fields: list[str]) -> str:
    """The breakdown field the harness comparison is counted by, picked on the page and kept in the URL
    (`dis_hs_by`); the first field with two labels or more unless chosen. "" when no field splits the run."""
    d = viewstate.view().disagree
    if not fields:
        return ""
    wanted = d.get("dis_hs_by", "")
    if st.session_state.get("dis_hs_by_w") not in fields:
        st.session_state["dis_hs_by_w"] = wanted if wanted in fields else fields[0]
    by = st.selectbox("Count per", fields, format_func=field_label, key="dis_hs_by_w",
                      help="The slices the changed questions are counted in: each field of the gold with two labels "
                           "or more among this run's questions.")
    d["dis_hs_by"] = "" if by == fields[0] else by
    return str(by)


def harness_sensitivity() -> None:
    """A harness run's own scores against the benchmark's own evaluator on the same answers."""
    entries = hs.compared(ctx.workspace.harness)
    if not entries:
        sample = DEFAULT_BENCHMARK / "harness"
        if ctx.sources.benchmark == DEFAULT_BENCHMARK and sample.is_dir():
            st.caption("A harness's own scoring (lmms-eval, VLMEvalKit) against the benchmark's evaluator shows here for "
                       "harness runs: open a harness's output folder in the Data panel, or the sample's.")
            st.button("Open the sample's harness runs", key="dis_hs_sample", icon=":material/folder_open:",
                      on_click=lambda: st.session_state.__setitem__("data_folder", str(sample)))
        return
    st.markdown("**Harness scoring vs the benchmark's own evaluator**")
    st.caption("Each harness run's own per-question scores (lmms-eval's metric on each line, VLMEvalKit's per-row "
               "score) against the benchmark's own evaluator applied to the same answers (docvqa for DocVQA, "
               "mmlongbench-doc for MMLongBench-Doc): the questions whose score changes, why, and how the ranks move.")
    digests = {pf.run: pf.sha256 for pf in ctx.workspace.predictions}
    pairs = [(e, hs.rescored(e, digests.get(e.name, ""))) for e in entries]
    others = []
    profiles = {e.benchmark_profile for e in entries}
    if all(e.qids is not None for e in entries) and len(profiles) == 1:  # joined to a benchmark: its own runs too
        harness_names = {e.name for e in ctx.workspace.harness}
        for pf in ctx.workspace.predictions:
            if pf.run not in harness_names and pf.loaded.loaded:
                overall = overall_of(scorer.score(ctx.workspace, ctx.gold_key, pf, next(iter(profiles))))
                others.append((pf.run, int(overall["count"]), float(overall["accuracy"])))
    board_ = hs.ranks(pairs, others)
    if len(board_):
        st.dataframe(board_, hide_index=True, width="stretch", key="dis_hs_ranks", column_config={
            "Harness score (%)": st.column_config.NumberColumn(format="%.1f"),
            "Evaluator score (%)": st.column_config.NumberColumn(format="%.1f"),
            "Δ (points)": st.column_config.NumberColumn(format="%+.1f"),
            "Rank change": st.column_config.NumberColumn(format="%+d")})
        st.caption("Ranks by the harness's own mean score and by the evaluator's, over the questions each run has "
                   "both for; the benchmark's own runs, scored by its evaluator, keep their score (Rank change +1 = "
                   "one place up under the evaluator).")
    names = [e.name for e in entries]
    if st.session_state.get("dis_hs_run") not in names:
        st.session_state["dis_hs_run"] = names[0]
    name = st.selectbox("Harness run", names, key="dis_hs_run")
    entry, r = next((e, x) for e, x in pairs if e.name == name)
    head = hs.headline(r)
    st.markdown(md_escape(f"{name} ({entry.run.harness}, {entry.run.task}) under {entry.benchmark_profile}: "
                          f"{head['changed']} of {head['count']} questions change score "
                          f"({head['up']} up, {head['down']} down)."))
    fields = hs.slice_fields(entry, r, an.questions)
    by = harness_slice_field(fields)
    changed = hs.changes(entry, r, an.questions, by)
    if by:
        table = hs.slices(entry, r, an.questions, by)
        st.dataframe(table.rename(columns={"slice": field_label(by)}), hide_index=True, width="stretch",
                     key=f"dis_hs_slices_{by}")
        st.caption(f"Per {field_label(by).lower()}: the questions with both scores, and how many the evaluator scores "
                   "higher (up), lower (down) or the same as the harness did" +
                   (" (a question with several evidence sources counts under each)." if by == "evidence_source" else "."))
    if changed.empty:
        st.caption("The benchmark's evaluator gives every answer the harness's own score.")
        return
    st.dataframe(clipped(changed, 300), hide_index=True, width="stretch", key="dis_hs_changes", column_config={
        "harness score": st.column_config.NumberColumn(format="%.3f"),
        "evaluator score": st.column_config.NumberColumn(format="%.3f")})
    digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
    st.download_button("Download these changes as CSV", lambda: frame_csv(changed),
                       file_name=f"harness_sensitivity_{digest}.csv", mime="text/csv", key=f"dis_hs_dl_{digest}",
                       icon=":material/download:")


def sensitivity(runs, by) -> None:
    st.subheader("Evaluator sensitivity")
    harness_sensitivity()
    st.caption("The run rescored under the other profiles: the answers whose Accuracy changes, and how far the "
               "headline scores would move if the scoring rule changed.")
    viewstate.seed("dis_sens_run", runs[0])
    if st.session_state.get("dis_sens_run") not in runs:
        st.session_state["dis_sens_run"] = runs[0]
    name = st.selectbox("Run", runs, key="dis_sens_run")
    options = [p for p in applicable_profiles(ctx.profile, ctx.workspace.gold.items)]
    base = an.result_of(name)
    pf = next((p for p in ctx.workspace.predictions if p.run == name), None)
    if pf is None or not options:
        st.info("No other profile applies to this run.")
        return
    comparisons = [compare(base, scorer.score(ctx.workspace, ctx.gold_key, pf, p)) for p in options]
    board(runs, options)
    st.markdown(f"**{md_escape(name)}** under each profile")
    pct = st.column_config.NumberColumn(format="%.2f")
    st.dataframe(dg.sensitivity_headline(comparisons), hide_index=True, width="stretch", key="dis_sens_head",
                 column_config={"Accuracy (%)": pct, "Token F1 (%)": pct, "ANLS (%)": pct})
    for cmp_ in comparisons:
        other = cmp_.profiles[1]
        with st.expander(f"Under {other}: {len(cmp_.changes)} answer{'s' if len(cmp_.changes) != 1 else ''} change "
                         f"Accuracy ({cmp_.gained} gained, {cmp_.lost} lost)", expanded=bool(cmp_.changes)):
            if not cmp_.changes:
                st.caption("No answer changes its Accuracy under this profile.")
                continue
            changes = dg.sensitivity_changes(cmp_, an.questions)
            st.dataframe(dg.in_words(clipped(changes, 300)), hide_index=True, width="stretch", key=f"dis_sens_{other}")
            st.download_button(f"Download the changes under {other} as CSV", _csv_of(changes),
                               file_name=f"sensitivity_{other}.csv", mime="text/csv", key=f"dis_sens_dl_{other}",
                               icon=":material/download:")
            st.dataframe(dg.sensitivity_slices(cmp_, an.questions, by).rename(columns={"label": field_label(by)}),
                         hide_index=True, width="stretch", key=f"dis_sens_slices_{other}",
                         column_config={"Δ Accuracy (points)": st.column_config.NumberColumn(format="%+.1f")})


scored = [r.name for r in an.runs if r.recomputed]
if an.questions.empty or not scored:
    st.info("Nothing to analyse yet: load gold questions and at least one prediction file (sidebar, Data panel). "
            "Runs with loaded scores only have no per-answer rule to explain.")
else:
    view = viewstate.view()
    d = view.disagree
    runs = pick_runs(view, scored)
    loaded = [r.name for r in an.runs if not r.recomputed]
    if loaded:
        st.caption(md_escape(f"Not shown (scores loaded, not recomputed, so no rule to explain): {', '.join(loaded)}."))
    definitions()
    if not runs:
        st.info("Choose at least one run above.")
    else:
        mode = view.disagree.get("dis_mode") or "primary"
        frame = frame_for(runs)
        per_run(frame, runs, mode, d)
        by = per_slice(frame, runs, mode, d)
        rows, what = listed(frame, runs, mode, d)
        if scatter(frame, runs, d, set(zip(rows["run"], rows["question_id"]))):
            rows, what = listed(frame, runs, mode, d)  # a new selection in the scatter
        question_list(frame, rows, what, runs, d)
        answerability(frame, runs, by)
        sensitivity(runs, by)
    viewstate.set_view(view)

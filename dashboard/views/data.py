"""Data: what was loaded, every problem as `file:line — message`, documents found and missing,
how each run joins the gold, and the reproducibility check against official scores."""

import hashlib

import streamlit as st

from dashboard.annotations import panel as annotations
from dashboard.core import settings
from dashboard.core.escape import md_escape
from dashboard.core.store import cache_problems
from dashboard.data.frames import (
    all_problems,
    compared_count,
    conflict_text,
    conflicts_frame,
    documents_frame,
    files_frame,
    harness_frame,
    harness_notes,
    join_frame,
    problem_line,
    read_limits_note,
    repro_frame,
)
from dashboard.shell import cache, context, scorer, viewstate
from dashboard.trends import panel as trend_panel
from scoring.problems import ERROR, summarise
from scoring.profiles import HARNESS_PROFILES, PROFILES

MAX_LINES = 500

ctx = context.context()
ws, an = ctx.workspace, ctx.analysis
st.title("Data")
st.caption(md_escape(f"Benchmark folder: {ws.discovery.benchmark or 'none'} · docs: {ws.discovery.docs_dir or 'none'}"))

found = sum(1 for loc in ws.locations.values() if loc.path)
cols = st.columns(4)
cols[0].metric("Gold questions", ws.gold.loaded)
cols[1].metric("Documents found", f"{found} / {len(ws.locations)}")
cols[2].metric("Runs", len(an.runs))
cols[3].metric("Score files", len(ws.scores))

# ----------------------------------------------------------------------------- problems
problems = all_problems(ws)
errors = [p for p in problems if p.severity == ERROR]
unscored = [pf for pf in ws.predictions if not pf.loaded.loaded]
nothing = {str(pf.path) for pf in unscored}  # files of which nothing loaded: one sentence each, the true one
for file in dict.fromkeys(p.file for p in errors):
    n = sum(1 for p in errors if p.file == file)
    rest = "nothing in it could be loaded" if file in nothing else "the rest was loaded"
    st.error(md_escape(f"{ws.label(file)}: {n:,} error{'s' if n > 1 else ''} (rows skipped or values refused); "
                       f"{rest}. See the problem list below."), icon=":material/error:")
for pf in unscored:
    if not any(p.file == str(pf.path) for p in errors):
        st.warning(md_escape(f"{ws.label(str(pf.path))}: no prediction could be loaded, so this run is not scored."))
if not problems:
    st.success("Every file loaded without a problem.")
for note in cache_problems():  # a cache folder that is a symlink is not used (dashboard/core/store.py)
    st.warning(md_escape(note), icon=":material/folder_off:")
for note in cache.damaged(ctx.analysis.store.engine):  # its file found damaged: set aside, the runs scored into a new one
    st.warning(md_escape(note), icon=":material/database:")
st.caption(md_escape(f"Scored runs: {ctx.analysis.store.engine.shown()}."))

st.subheader("Files")
if ws.discovery.all_files():
    st.dataframe(files_frame(ws), hide_index=True, width="stretch")
    st.caption(md_escape(read_limits_note(settings.read_limits())))
else:
    st.info("No files found. Type a benchmark folder in the sidebar's Data panel, or upload gold, prediction and "
            "score files there.")

if problems:
    st.subheader(f"Problems ({len(problems)})")
    shown = summarise(problems)  # 20 of each kind, then one line that counts the rest
    lines = [problem_line(p, ws.label) for p in shown[:MAX_LINES]]
    if len(shown) > MAX_LINES:
        lines.append(f"… and {len(shown) - MAX_LINES} more")
    st.code("\n".join(lines), language=None, wrap_lines=True)

# ----------------------------------------------------------------------------- harness runs


def eval_pickers() -> None:
    """Per (model, dataset) VLMEvalKit evaluated more than once: which eval id is the run (the newest
    unless picked), kept in the URL (`eval=<model>/<dataset>@<eval id>`)."""
    if not ws.evals:
        return
    st.caption("VLMEvalKit evaluated these models on these datasets more than once: each counts once, its newest "
               "eval id unless you pick an older one here (the link keeps the choice).")
    loaded = {h.name: h.run.date for h in ws.harness}
    view = viewstate.view()
    for name, options in ws.evals.items():
        ids = [o.eval_id for o in options]
        current = loaded.get(name, ids[0])
        key = "data_eval_" + hashlib.sha256(options[0].key.encode("utf-8", "replace")).hexdigest()[:12]
        if st.session_state.get(key) not in ids:
            st.session_state[key] = current
        shown = {e: f"{e} (newest)" if k == 0 else e for k, e in enumerate(ids)}
        picked = st.selectbox(md_escape(f"Eval id of {options[0].key} (run {name})"), ids, key=key,
                              format_func=shown.__getitem__)
        if picked != current:
            view.evals = [e for e in view.evals if e.rpartition("@")[0] != options[0].key]
            if picked != ids[0]:
                view.evals.append(f"{options[0].key}@{picked}")
            viewstate.set_view(view)
            st.rerun()


if ws.harness:
    st.subheader("Harness runs")
    if ws.tasks:
        st.caption(md_escape(f"A harness's output opened as the benchmark: the gold of {ws.task} is built from its files "
                             f"({len(ws.tasks)} task{'s' if len(ws.tasks) != 1 else ''} in the folder; the sidebar picks one)."))
    else:
        st.caption("Harness outputs joined to this benchmark's gold: each run's answers by the benchmark's question ids "
                   "(questions that could not be joined are in the problem list).")
    st.dataframe(harness_frame(ws), hide_index=True, width="stretch")
    if ws.conflicts:
        st.warning(md_escape(conflict_text(ws, "The table below names each")), icon=":material/rule:")
        st.dataframe(conflicts_frame(ws), hide_index=True, width="stretch", key="data_conflicts")
    eval_pickers()
    notes = harness_notes(ws)
    if len(notes):
        st.caption(f"{len(notes):,} row{'s' if len(notes) != 1 else ''} changed on the way through the harness's files "
                   "(what the harness itself saw is what is scored):")
        st.dataframe(notes, hide_index=True, width="stretch")

# ----------------------------------------------------------------------------- documents
st.subheader("Documents")
if ws.locations:
    docs = documents_frame(ws.locations, ws.page_counts, an.questions, ws.label)
    st.caption(f"{found} found, {len(docs) - found} missing. A missing document only disables what needs its pages.")
    st.dataframe(docs, hide_index=True, width="stretch")
else:
    st.info("No documents: neither documents.jsonl nor the gold questions name any.")

# ----------------------------------------------------------------------------- join
st.subheader("Runs joined with the gold")
if an.runs:
    st.dataframe(join_frame(an), hide_index=True, width="stretch")
else:
    st.info("No runs. Put prediction files in runs/ or score files in results/, or upload them in the sidebar.")

# ----------------------------------------------------------------------------- reproducibility
checked = [(r, res) for r in an.runs if r.recomputed and r.official and (res := r.result) is not None]
st.subheader("Reproducibility: recomputed vs official scores")
if not checked:
    st.info("No run has both a prediction file and official scores under the same name (prediction file stem = "
            "system name), so there is nothing to compare.")
elif ws.harness:
    st.caption("A harness run's official scores are the harness's own per-question scores (lmms-eval's metric on each "
               "line, VLMEvalKit's per-row score); its profile (lmms-eval, vlmevalkit) reproduces them.")
by_name = {pf.run: pf for pf in ws.predictions}
for run, result in checked:
    diff = repro_frame(result, run.official)
    total = compared_count(result, run.official)
    name = md_escape(run.name)
    if diff.empty:
        st.success(f"{name}: all {total} questions match the official scores (profile {ctx.profile}).")
        continue
    st.warning(f"{name}: {len(diff)} of {total} questions differ from the official scores when recomputed with "
               f"profile {ctx.profile}. The official file may have been computed with another profile.")
    harness_own = [p for p in HARNESS_PROFILES if any(h.run.harness == p for h in ws.harness)]
    for other in (p for p in [*PROFILES, *harness_own] if p != ctx.profile):
        res = scorer.score(ws, ctx.gold_key, by_name[run.name], other)
        n = len(repro_frame(res, run.official))
        st.caption(f"With profile {other}: {n} of {compared_count(res, run.official)} differ"
                   + (" — the official scores were probably computed with this profile." if n == 0 else "."))
    st.dataframe(diff, hide_index=True, width="stretch", column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in diff.columns if c != "question_id"})

if ws.summary.items:
    st.subheader("Official summary (summary.json)")
    st.dataframe(ws.summary.items, hide_index=True, width="stretch")

trend_panel.steps_section(ctx)  # each scored run's checkpoint step and series, editable (dashboard/trends)
annotations.data_section(ctx)  # every gold correction with its author; export and import

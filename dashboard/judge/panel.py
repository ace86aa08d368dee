"""The Judge page (issue 38): how far the LLM judge that scored a run can be trusted, and a re-judge on
the user's own OpenAI-compatible server (LENS_JUDGE_URL, LENS_JUDGE_MODEL, LENS_JUDGE_API_KEY).

Sections: each judge's verdicts (the unparsable and error rates, the score with and without them);
the judge against our rules (confusion table, Cohen's kappa with its interval by document, per slice,
per response-length decile, the answers where they disagree with the reply); two judges against each
other (the run's own and a re-judge, or two re-judges: kappa, the answers that changed, both replies
side by side); the judge against people (the triage notes' tags). Model text and replies are plain
text only (dataframe cells, st.text), never Markdown or HTML.
"""

from __future__ import annotations

import math

import streamlit as st

from dashboard.annotations import panel as notes_panel
from dashboard.core import settings
from dashboard.core.escape import clipped, md_escape
from dashboard.disagreement.frames import JUDGE_DISAGREES, category_label
from dashboard.judge import frames as F
from dashboard.judge import jobs
from dashboard.shell.context import Context
from scoring.judge.agreement import Agreement
from scoring.judge.answers import JudgedAnswer
from scoring.judge.client import JudgeClient, JudgeError, shown_url
from scoring.judge.prompts import JudgePrompt, PromptError, find_prompt, read_prompt

POLL_S = 1.0
SLICE_FIELDS = ("answer_format", "evidence_source", "doc_type", "split", "reasoning_type", "domain", "document")
_ANSWERS: dict[tuple, list[JudgedAnswer]] = {}
_READ: dict[tuple, list[F.Source]] = {}
_MEMO = 16


def _memo(store: dict, key: tuple, make):
    if key not in store:
        while len(store) >= _MEMO:
            store.pop(next(iter(store)))
        store[key] = make()
    return store[key]


reply_cache = F.reply_cache


def answers_of(ctx: Context, run: str) -> list[JudgedAnswer]:
    ws = ctx.plain[0] if ctx.plain is not None else ctx.workspace  # the files' gold: a person's correction is a verdict
    pf = next((p for p in ws.predictions if p.run == run), None)
    return _memo(_ANSWERS, (ctx.gold_key, run, pf.sha256 if pf else ""), lambda: F.run_answers(ws, run))


def prompt_of(ctx: Context, run: str) -> tuple[JudgePrompt | None, str]:
    """The benchmark's own extraction prompt (eval/prompt_for_answer_extraction.md of the benchmark's folder or
    of the run's), or None and why not."""
    ws = ctx.workspace
    places = [ws.discovery.benchmark] + [h.root for h in ws.harness if h.name == run] + \
        [pf.path for pf in ws.predictions if pf.run == run]
    path = next((p for p in (find_prompt(x) for x in places if x is not None) if p is not None), None)
    if path is None:
        return None, ("the benchmark's extraction prompt, eval/prompt_for_answer_extraction.md, is not in the benchmark's "
                      "folder (copy it there from the benchmark's repository)")
    try:
        return read_prompt(path), ""
    except PromptError as exc:
        return None, str(exc)


def sources_of(ctx: Context, run: str, answers: list[JudgedAnswer]) -> list[F.Source]:
    """The run's own judge (when its files hold one), then every judge with replies in the cache, newest first."""
    out = []
    stored = {a.qid: a.stored for a in answers if a.stored is not None}
    if stored:
        out.append(F.Source(F.FILES, stored))
    cache = reply_cache()
    key = (ctx.gold_key, run, answers_key(answers), str(cache.folder), jobs.generation())
    return out + _memo(_READ, key, lambda: F.cached_sources(answers, cache))


# ----------------------------------------------------------------------------- re-judge


def rejudge_section(ctx: Context, run: str, answers: list[JudgedAnswer]) -> None:
    url, model = settings.JUDGE_URL.value().strip(), settings.JUDGE_MODEL.value().strip()
    st.subheader("Re-judge on your own server")
    if not url or not model:
        st.caption("Off: set LENS_JUDGE_URL (an OpenAI-compatible server: vLLM, Ollama, llama.cpp's server) and "
                   "LENS_JUDGE_MODEL (and LENS_JUDGE_API_KEY if it needs a key), then start the app again. The command "
                   "line does the same with --judge-url and --judge-model.")
        st.button("Re-judge", icon=":material/gavel:", disabled=True, key="judge_go_off")
        return
    prompt, why = prompt_of(ctx, run)
    readable = sum(1 for a in answers if a.readable)
    st.caption(md_escape(f"Judge: {model} at {shown_url(url)}. Each of the {len(answers):,} answers ({readable:,} with a "
                         "response) is asked with the benchmark's own prompt, temperature 0 and every sampling parameter "
                         "sent; a reply already in the cache is not asked again.")
               + (md_escape(f" Prompt: {prompt.path} (sha256 {prompt.sha256[:12]}…).") if prompt else ""))
    if prompt is None:
        st.warning(md_escape(f"Re-judge needs {why}."), icon=":material/description:")
        return
    key = ("judge", run, answers_key(answers), shown_url(url), model, prompt.sha256)
    job = jobs.get(key)
    if job is None or not job.running:
        if st.button(f"Re-judge {len(answers):,} answers", icon=":material/gavel:", key="judge_go", type="primary"):
            try:
                client = JudgeClient(url, model, api_key=settings.JUDGE_API_KEY.value().strip())
            except JudgeError as exc:
                st.error(md_escape(f"LENS_JUDGE_URL: {exc.message}"), icon=":material/error:")
                return
            jobs.start(key, answers, client, prompt, reply_cache())
            st.session_state["judge_watch"] = key
    progress(key)


def answers_key(answers: list[JudgedAnswer]) -> str:
    import hashlib

    h = hashlib.sha256()
    for a in answers:
        h.update(f"{a.qid}\x1f{a.question}\x1f{a.response}\x1e".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


@st.fragment(run_every=POLL_S)
def progress(key: tuple) -> None:
    job = jobs.get(key)
    if job is None:
        return
    if job.running:
        st.progress(job.done / job.total if job.total else 0.0,
                    text=md_escape(f"Judged {job.done:,} of {job.total:,} answers (the rest of the page is usable)."))
        if st.button("Stop", icon=":material/stop_circle:", key="judge_stop"):
            job.stop.set()
        return
    if st.session_state.get("judge_watch") == key:  # it ended while this session watched: the page is drawn again
        del st.session_state["judge_watch"]
        st.rerun(scope="app")
    if job.error:
        st.warning(md_escape(f"The re-judge stopped: {job.error}. Nothing was lost: the replies that came are cached."),
                   icon=":material/error:")
    elif job.run is not None:
        r = job.run
        text = (f"Re-judged by {r.identity.model}: {r.requests:,} asked, {r.cached:,} from the cache"
                + (f", {len(r.errors):,} without a reply (judge_error: asked again next time)" if r.errors else "")
                + (f"; stopped, {len(r.unasked):,} not asked" if r.stopped else "") + ".")
        st.success(md_escape(text), icon=":material/task_alt:")


# ----------------------------------------------------------------------------- the sections


def _kappa_text(ag: Agreement, what: str) -> str:
    if ag.n == 0:
        return f"{what}: no answer to compare."
    k = "undefined (one label only)" if math.isnan(ag.kappa) else f"{ag.kappa:.2f}"
    interval = (f"95% interval {ag.low:.2f} to {ag.high:.2f}, {ag.units:,} {ag.unit}s as the unit"
                if not math.isnan(ag.low) else f"not enough evidence for an interval: {ag.units:,} {ag.unit}s")
    return f"{what}: Cohen's κ {k} ({interval}); they agree on {ag.agree:,} of {ag.n:,} answers."


def verdicts_section(sources: list[F.Source], answers: list[JudgedAnswer], judged_model: str) -> None:
    st.subheader("Verdicts")
    table = F.verdict_table(sources, answers)
    pct = {c: st.column_config.NumberColumn(c, format="%.1f") for c in table.columns if c.endswith("%")}
    st.dataframe(table, hide_index=True, width="stretch", column_config=pct | {
        "Judge": st.column_config.TextColumn(pinned=True)}, placeholder="—")
    st.caption("correct / incorrect: the judge's extracted answer scored by the benchmark's rules; unparsable: a reply "
               "that yields no answer; judge_error: no reply; invalid: the prompt's “Fail to answer”. Score % counts "
               "unparsable and judge_error wrong, as the harness does; Without them % leaves them out.")
    for s in sources:
        name = s.identity.model if s.identity else s.extra.get("model", "")
        text = F.family_warning(name, judged_model) if name else ""
        if text:
            st.warning(md_escape(text), icon=":material/family_history:")


def rules_section(ctx: Context, source: F.Source, answers: list[JudgedAnswer]) -> None:
    st.subheader("Judge vs rules")
    frame = F.answer_frame(answers, source.verdicts)
    if frame.empty:
        st.info("The judge answered none of these answers: nothing to compare with the rules.")
        return
    table, ag = F.confusion_frame(frame)
    st.caption(md_escape(f"{source.name} against our rules (Accuracy of the whole raw response against the gold), over "
                         "the answers the judge answered; invalid counts as not correct."))
    st.dataframe(table, hide_index=True, key="judge_confusion")
    st.markdown(md_escape(_kappa_text(ag, "Judge vs rules")))
    fields = [f for f in SLICE_FIELDS if f in ctx.analysis.questions.columns]
    if fields:
        field = st.selectbox("Per slice of", fields, key="judge_slice_field")
        st.dataframe(F.slice_table(frame, ctx.analysis.questions, field), hide_index=True, width="stretch",
                     column_config=_agreement_config())
    st.markdown("**By response length** (deciles of the raw response's characters: does the judge drift on verbose answers?)")
    lengths = F.length_table(frame)
    st.dataframe(lengths, hide_index=True, width="stretch", column_config=_agreement_config())
    st.bar_chart(lengths, x="Decile", y="Agree %", height=220)
    dis = F.disagreements(frame)
    st.markdown("**Where they disagree** " + md_escape(f"({len(dis):,} answers; reason: "
                                                       f"{category_label(JUDGE_DISAGREES)})"))
    if dis.empty:
        return
    ev = st.dataframe(clipped(dis, 300), hide_index=True, width="stretch", key="judge_dis", on_select="rerun",
                      selection_mode="single-row")
    rows = ev.selection.rows
    row = dis.iloc[rows[0]] if rows else dis.iloc[0]
    st.caption(md_escape(f"{row['question_id']}: the judge's reply, then the model's response"))
    st.text(row["reply"] or "(an empty reply)")
    st.text(row["response"] or "(no response)")


def judges_section(sources: list[F.Source], answers: list[JudgedAnswer]) -> None:
    st.subheader("Judge vs judge")
    if len(sources) < 2:
        st.info("One judge only. Re-judge (above) to set a judge on your server against the run's own, or against "
                "another model.")
        return
    names = [s.name for s in sources]
    cols = st.columns(2)
    a = cols[0].selectbox("Judge A", names, index=len(names) - 1, key="judge_a")
    b = cols[1].selectbox("Judge B", names, index=0, key="judge_b")
    sa, sb = sources[names.index(a)], sources[names.index(b)]
    frame, ag = F.changed(answers, sa.verdicts, sb.verdicts)
    st.markdown(md_escape(_kappa_text(ag, "A vs B (verdicts of the answers both answered)")))
    st.caption(md_escape(f"{len(frame):,} answers where the extracted answer or the verdict differs."))
    if frame.empty:
        return
    ev = st.dataframe(clipped(frame[["question_id", "answer A", "answer B", "verdict A", "verdict B"]], 200), hide_index=True,
                      width="stretch", key="judge_changed", on_select="rerun", selection_mode="single-row")
    rows = ev.selection.rows
    row = frame.iloc[rows[0]] if rows else frame.iloc[0]
    st.caption(md_escape(f"{row['question_id']}: both replies"))
    left, right = st.columns(2)
    left.caption("A")
    left.text(row["reply A"] or "(no reply)")
    right.caption("B")
    right.text(row["reply B"] or "(no reply)")


def people_section(ctx: Context, run: str, source: F.Source, answers: list[JudgedAnswer]) -> None:
    st.subheader("Judge vs people")
    people = F.human_verdicts(notes_panel.notes(ctx), run)
    frame, ag = F.people_frame(answers, source.verdicts, people)
    if frame.empty:
        st.info("No triage note on this run's answers holds a verdict: tag an answer (Question explorer) with "
                "format_only or extraction_error (the answer is right, the scorer was wrong) or with a model error "
                "(hallucination, reasoning_error, wrong_page_retrieved, reading_or_ocr_error, refused_wrongly).")
        return
    st.markdown(md_escape(_kappa_text(ag, f"{source.name} vs people")))
    st.dataframe(clipped(frame.drop(columns=["document"]), 300), hide_index=True, width="stretch")


def _agreement_config() -> dict:
    return {"Agree %": st.column_config.NumberColumn(format="%.1f"), "Kappa": st.column_config.NumberColumn(format="%.2f"),
            "Low": st.column_config.NumberColumn(format="%.2f", help="95% interval by document"),
            "High": st.column_config.NumberColumn(format="%.2f", help="95% interval by document")}


def page(ctx: Context) -> None:
    ws = ctx.workspace
    runs = F.judged_runs(ws)
    if not runs:
        st.info("No run here was scored through an LLM judge's extraction: open MMLongBench-Doc's result files "
                "(results/res_<model>.json), VLMEvalKit's MMLongBench_DOC outputs or LongDocURL's results_<model>.jsonl.")
        return
    if st.session_state.get("judge_run") not in runs:
        st.session_state["judge_run"] = runs[0]
    run = st.selectbox("Run", runs, key="judge_run")
    answers = answers_of(ctx, run)
    rejudge_section(ctx, run, answers)
    sources = sources_of(ctx, run, answers)
    h = next((e for e in ws.harness if e.name == run), None)
    if sources and sources[0].identity is None and h is not None and h.run.extra.get("judge"):
        sources[0].name = f"{F.FILES}: {h.run.extra['judge']}"
        sources[0].extra["model"] = str(h.run.extra["judge"])
    if not sources:
        st.info("This run's files hold no judge output, and no re-judge of it is in the cache yet.")
        return
    verdicts_section(sources, answers, F.run_model(ws, run))
    names = [s.name for s in sources]
    pick = st.selectbox("Judge to examine", names, index=len(names) - 1, key="judge_pick",
                        help="the run's own judge (its files) or a re-judge read back from the cache")
    source = sources[names.index(pick)]
    rules_section(ctx, source, answers)
    judges_section(sources, answers)
    people_section(ctx, run, source, answers)

"""Streamlit glue shared by app.py and the pages: the view (session state <-> URL), the sidebar
data panel, loading and scoring with a progress bar, and plain-text output of user data."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Pillow whole before any session draws: Plotly looks up `PIL.Image` in sys.modules without the
# import lock, so a session that charts while another thread is first importing Pillow (for an
# evidence overlay) met a half-initialised module (bench/bench_load.py, 20 sessions at once).
import PIL.Image  # noqa: F401
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.core import store
from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run, join_warning
from dashboard.core.escape import DISPLAY_CHARS, error_text, md_escape
from dashboard.core.goldkey import salted
from dashboard.core.links import View, from_params, to_params
from dashboard.core.paths import (
    UPLOAD_CLOSED_MINUTES,
    Sources,
    UploadError,
    check_folder,
    data_roots,
    new_session_folder,
    prune_session_uploads,
    session_uploads,
    stage_upload,
    sweep_uploads,
    upload_name,
)
from dashboard.data.workspace import (
    HARNESS,
    MMLONGBENCH,
    Discovery,
    PredictionFile,
    Workspace,
    discover,
    harness_tasks,
)
from dashboard.shell import cache
from scoring.evaluate import RunResult
from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, MMLONGBENCH_PROFILE, PROFILES
from scoring.runner import score_runs

VIEW, CONTEXT = "lens_view", "lens_context"
LINK_RUNS = "lens_link_runs"  # the runs named by the link the session opened with
NOTIFIED = "lens_notified"  # uploaded files whose problems were announced in a toast
QUESTIONS_PAGE = Path(__file__).resolve().parent.parent / "views" / "questions.py"
EXPLORER_PREFIX = "x_"  # widget keys of the question explorer
PROFILE_NOTE = "lens_profile_note"  # the sidebar placeholder under the profile picker
PROGRESS_DELAY = 0.25  # s of scoring before a progress bar is shown


@dataclass
class Context:
    sources: Sources
    workspace: Workspace
    analysis: Analysis
    profile: str
    gold_key: tuple
    benchmark: str = ""  # the benchmark's identity, annotations are filed under (of the gold as loaded)
    plain: tuple | None = None  # with gold corrections: (the workspace, gold key) without them
    corrections: object = None  # with gold corrections: what they did (annotations.corrections.CorrectionSummary)


# ----------------------------------------------------------------------------- view and URL


def start() -> View:
    """The session's view; on a session's first run it is read from the URL."""
    if VIEW not in st.session_state:
        st.session_state[VIEW] = from_params({k: st.query_params.get_all(k) for k in st.query_params})
        st.session_state[LINK_RUNS] = list(st.session_state[VIEW].runs)
    return st.session_state[VIEW]


def warn_missing_runs(loaded: list[str]) -> None:
    """Say which runs the opening link named that are not loaded (an uploaded file is not part of a
    link), until they are loaded or the message is dismissed."""
    missing = [r for r in st.session_state.get(LINK_RUNS, []) if r not in loaded]
    if not missing:
        return
    box = st.container(border=False)
    names = ", ".join(missing)
    box.warning(md_escape(f"The link names {len(missing)} run{'s' if len(missing) > 1 else ''} that "
                          f"{'are' if len(missing) > 1 else 'is'} not loaded: {names}. A run from an uploaded file "
                          "has to be uploaded again (sidebar, Data panel); a run from a folder needs that folder "
                          "open. The view shows the runs that are loaded."), icon=":material/link_off:")
    if box.button("Dismiss", key="dismiss_missing_runs"):
        st.session_state[LINK_RUNS] = []
        st.rerun()


def view() -> View:
    return st.session_state[VIEW]


def set_view(new: View) -> None:
    st.session_state[VIEW] = new


def sync_url() -> None:
    """Write the view into the URL (only when it changed, to keep history quiet)."""
    params = to_params(view())
    wanted = {k: v if isinstance(v, list) else [v] for k, v in params.items()}
    current = {k: st.query_params.get_all(k) for k in st.query_params}
    if wanted != current:
        st.query_params.from_dict(params)


def sync_url_in_fragment() -> None:
    """sync_url() when only a fragment reran (app.py's own call at the end of a full run does not
    run then); nothing in a full run, where a second write would push a second history entry."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    run_ctx = get_script_run_ctx()
    if run_ctx is not None and run_ctx.fragment_ids_this_run:
        sync_url()


def switch_to(page: Path) -> None:
    """Open another page with the view's URL: one browser history entry. (Without `query_params`,
    st.switch_page clears the URL, the frontend pushes the new page's path, then sync_url pushes it
    again with the view's query: Back went to the bare page, not to the page the user came from.)"""
    st.switch_page(page, query_params=to_params(view()))


def seed(key: str, value: object) -> None:
    """Give a widget its value from the view, unless the user has already set it."""
    if key not in st.session_state:
        st.session_state[key] = value


def open_slice(run: str | None, field_name: str, label: str) -> None:
    """Open the question explorer on one slice of a chart (its widgets are reseeded from the view)."""
    set_view(view().with_slice(run, field_name, label))
    for key in [k for k in st.session_state if str(k).startswith(EXPLORER_PREFIX)]:
        del st.session_state[key]
    switch_to(QUESTIONS_PAGE)


# ----------------------------------------------------------------------------- data panel


UPLOADS = "lens_uploads"  # this session's upload folder name (dashboard/core/paths.session_uploads)
SESSION_MARK = ".session"  # in a session's upload folder: the Streamlit session it belongs to


def _session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    run_ctx = get_script_run_ctx()
    return run_ctx.session_id if run_ctx is not None else ""


def _closed(token: str) -> bool:
    """Whether the session that owns upload folder `token` has closed (its mark names a session the
    server no longer has). Unknown owners count as closed; without a runtime (tests), as open."""
    from streamlit import runtime

    if not runtime.exists():
        return False
    try:
        owner = (session_uploads(token) / SESSION_MARK).read_text().strip()
    except (OSError, ValueError):
        return True
    return not runtime.get_instance().is_active_session(owner)


def _upload_folder() -> Path:
    """This session's own upload folder, made (and old or closed sessions' folders swept) on first use."""
    token = st.session_state.get(UPLOADS)
    if token is None:
        token = st.session_state[UPLOADS] = new_session_folder()
        swept: list[str] = []
        sweep_uploads(keep=token, alive=lambda t: not _closed(t), removed_names=swept)
        cache.evict_uploads(swept)  # what was read from them leaves memory with them
    folder = session_uploads(token)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SESSION_MARK).write_text(_session_id())
        os.utime(folder)  # last used now (sweep_uploads goes by it)
    except OSError:
        pass  # stage_upload says so, with the folder's name
    return folder


def _staged(files: Iterable, labels: list[tuple[str, str]], notes: list[str]) -> list[Path]:
    """The uploads copied (in chunks, never whole in memory again) to this session's upload folder."""
    out: list[Path] = []
    files = list(files or [])
    if not files:
        return out
    folder = _upload_folder()
    for f in files:
        shown, note = upload_name(f.name)
        try:
            path = stage_upload(f.name, f, folder)
        except UploadError as exc:
            notes.append(str(exc))
            continue
        if note:
            notes.append(f"{shown}: {note}.")
        labels.append((str(path), f"upload: {shown}"))
        out.append(path)
    return out


def data_panel(default: Sources) -> Sources:
    """Sidebar: a folder on the server, or uploaded gold, prediction and score files."""
    v = view()
    with st.sidebar.expander("Data", icon=":material/folder_open:"):
        seed("data_folder", v.data or str(default.benchmark or ""))
        folder = st.text_input("Benchmark folder on the server", key="data_folder",
                               help="Holds qa_*.jsonl, documents.jsonl, docs/, runs/ and results/ -- or a clone of MMLongBench-Doc "
                                    "(data/samples.json, data/documents/, results/res_*.json) -- or a harness's output "
                                    "(lmms-eval --output_path, VLMEvalKit --work-dir, LongDocURL results): its gold is "
                                    "built from its files, one task at a time. Only folders "
                                    "inside the server's data roots open (README, \"Data roots and uploads\").").strip()
        gold = st.file_uploader("Gold question files", type=["jsonl", "json"], accept_multiple_files=True, key="up_gold",
                                help="Replace the folder's gold; a file named documents.jsonl is read as the document list; "
                                     "MMLongBench-Doc's samples.json (then its res_*.json as prediction files).")
        runs = st.file_uploader("Prediction files", type=["jsonl", "json"], accept_multiple_files=True, key="up_runs")
        scores = st.file_uploader("Score files", type=["jsonl", "json", "csv"], accept_multiple_files=True, key="up_scores")
        st.caption(f"Uploads: up to {st.get_option('server.maxUploadSize')} MB per file, seen by this session only, "
                   f"removed from the server {UPLOAD_CLOSED_MINUTES} minutes after it closes.")
    bench = Path(folder).expanduser() if folder else default.benchmark
    refused = check_folder(folder, data_roots(default)) if folder and folder != str(default.benchmark) else ""
    if refused:
        # a link's ?data= or a typed path may name any folder of the server: only the data roots open.
        # Said in the main area, where the page keeps showing the configured benchmark, and in the panel.
        text = md_escape(f"{refused} Showing {default.benchmark} instead.")
        st.error(text, icon=":material/block:")
        st.sidebar.error(text, icon=":material/block:")
        bench = default.benchmark
    v.data = "" if bench == default.benchmark else str(bench)
    task = _task_picker(bench, v) if bench is not None else ""
    labels: list[tuple[str, str]] = []
    notes: list[str] = []
    gold_paths = _staged(gold, labels, notes)
    run_paths, score_paths = _staged(runs, labels, notes), _staged(scores, labels, notes)
    if UPLOADS in st.session_state:  # files taken out of the upload boxes leave the disk too
        prune_session_uploads(session_uploads(st.session_state[UPLOADS]), [*gold_paths, *run_paths, *score_paths])
    for note in notes:
        st.sidebar.warning(md_escape(note), icon=":material/upload_file:")
    documents = next((p for p in gold_paths if p.name == "documents.jsonl"), default.documents)
    return Sources(
        benchmark=bench,
        runs=default.runs + tuple(run_paths),
        scores=default.scores + tuple(score_paths),
        gold=tuple(p for p in gold_paths if p.name != "documents.jsonl") or default.gold,
        documents=documents,
        labels=default.labels + tuple(labels),
        task=task,
    )


def _task_picker(bench: Path, v) -> str:
    """A harness folder opened as the benchmark holding several tasks (datasets): which one's gold to
    use, kept in the URL (`bench`). '' for any other folder."""
    tasks = harness_tasks(bench)
    if not tasks:
        v.bench = ""
        return ""
    names = list(tasks)
    if len(names) == 1:
        v.bench = ""
        return names[0]
    seed("data_task", v.bench if v.bench in tasks else names[0])
    if st.session_state.get("data_task") not in tasks:
        st.session_state["data_task"] = names[0]
    chosen = st.sidebar.selectbox("Benchmark in this harness folder", names, key="data_task",
                                  format_func=lambda t: tasks.get(t, t),
                                  help="A harness's output folder holding several tasks (lmms-eval) or datasets "
                                       "(VLMEvalKit): each is a benchmark of its own, its gold built from the files.")
    chosen = str(chosen or names[0])
    v.bench = chosen if chosen != names[0] else ""
    return chosen


PROFILE_AUTO, PROFILE_CHOSEN = "lens_profile_auto", "lens_profile_chosen"  # the benchmark's own profile, until the user picks one
HARNESS_OFFERED = "lens_harness_profiles"  # the harness profiles that apply to the data loaded (offered in the picker)


def own_profile(disc: Discovery, ws: Workspace | None = None) -> str:
    """The profile a benchmark's files are scored by until the user picks one: MMLongBench-Doc's own rule
    for its clone; a harness folder's own harness's rule when one harness wrote every run; else the default."""
    if disc.layout == MMLONGBENCH:
        return MMLONGBENCH_PROFILE
    if disc.layout == HARNESS and ws is not None:
        harnesses = {h.run.harness for h in ws.harness}
        if len(harnesses) == 1 and next(iter(harnesses)) in HARNESS_PROFILES:
            return next(iter(harnesses))
    return DEFAULT_PROFILE


def harness_profiles(ws: Workspace) -> list[str]:
    """The harness profiles that apply to a workspace: those of the harnesses that wrote its runs."""
    return [p for p in HARNESS_PROFILES if any(h.run.harness == p for h in ws.harness)]


def profile_picker() -> str:
    v = view()
    if PROFILE_AUTO not in st.session_state and v.profile == DEFAULT_PROFILE and not v.data:
        # the configured benchmark's own rule decided here (another folder opened later: by load(), with a rerun)
        from dashboard.core.paths import sources_from

        if discover(sources_from(sys.argv[1:], os.environ)).layout == MMLONGBENCH:
            st.session_state[PROFILE_AUTO] = MMLONGBENCH_PROFILE
    if PROFILE_AUTO in st.session_state and not st.session_state.get(PROFILE_CHOSEN):
        st.session_state["profile"] = v.profile = st.session_state[PROFILE_AUTO]
    seed("profile", v.profile)
    offered = [*PROFILES, *(p for p in HARNESS_PROFILES if p in st.session_state.get(HARNESS_OFFERED, ())
                            or p in (v.profile, st.session_state.get("profile")))]
    described = {**PROFILES, **HARNESS_PROFILES}
    v.profile = st.sidebar.selectbox("Scoring profile", offered, key="profile",
                                     on_change=lambda: st.session_state.__setitem__(PROFILE_CHOSEN, True),
                                     help="\n\n".join(f"**{described[p].name}**: {described[p].description}" for p in offered))
    st.session_state[PROFILE_NOTE] = st.sidebar.empty()  # "recomputing under …" while scoring
    seed("with_corrections", v.corrected)
    v.corrected = st.sidebar.toggle("with gold corrections", key="with_corrections", help="Rescore every run with the "
                                    "gold corrections of the annotations (corrected answers, excluded questions).")
    return v.profile


# ----------------------------------------------------------------------------- loading and scoring


def sources_key(src: Sources) -> tuple:
    return (str(src.benchmark), tuple(map(str, src.runs)), tuple(map(str, src.scores)), tuple(map(str, src.gold)),
            str(src.documents), src.labels, src.task)


def score(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str, bar=None) -> RunResult:
    """A prediction file scored with a profile: cached by file content and profile; computed with a
    progress bar showing questions done / total (`bar`: a `_Progress`, or None for a bar of its own)."""
    key = (gold_key, pf.sha256, pf.run, profile)
    result = cache.scored(key) or _stored(ws, gold_key, pf, profile)
    if result is None:
        own = bar is None
        bar = bar or _Progress(st.empty(), profile, len(ws.gold.items), stale=False)
        label = md_escape(pf.run)

        bar.update(label, 0, len(ws.gold.items))
        # the shared pool (scoring/runner.py): no new pool per run, no streamlit in the workers
        _, result = next(score_runs(ws.gold.items, [(pf.run, pf.loaded.items)], profile=profile))
        bar.finish_run(len(ws.gold.items))
        store.save_run(cache.score_store(), _store_key(ws, gold_key, pf, profile), result)
        cache.remember(key, result)
        if own:
            bar.close()
    return result


def _store_key(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str) -> str:
    return store.run_key(salted(store.files_sha256(ws.discovery.gold, gold_key), gold_key), pf.sha256, profile)


def _stored(ws: Workspace, gold_key: tuple, pf: PredictionFile, profile: str) -> RunResult | None:
    """The run from the Parquet cache on disk (dashboard/core/store.py), remembered in memory too."""
    if not pf.sha256:
        return None
    result = store.load_run(cache.score_store(), _store_key(ws, gold_key, pf, profile), ws.gold.items,
                            pf.loaded.items, profile, pf.run)
    if result is not None:
        cache.remember((gold_key, pf.sha256, pf.run, profile), result)
    return result


class _Progress:
    """The progress of scoring one or more runs, drawn into `slot` only once the work has taken
    longer than a moment (PROGRESS_DELAY), so that a quick rescoring does not flash a bar. While it
    is shown, the page says the numbers below are from before the profile change."""

    def __init__(self, slot, profile: str, total: int, stale: bool = True) -> None:
        self.slot, self.profile, self.total, self.stale = slot, profile, max(1, total), stale
        self.base = 0  # questions of the runs already scored
        self.started = time.monotonic()
        self.bar: DeltaGenerator | None = None  # drawn after PROGRESS_DELAY

    def update(self, label: str, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < PROGRESS_DELAY:
                return
            box = self.slot.container()
            if self.stale:
                box.caption(f"Recomputing under profile **{self.profile}**… until this bar completes, the numbers "
                            "below are from before the change.")
                note = st.session_state.get(PROFILE_NOTE)
                if note is not None:
                    note.caption(f"Recomputing under {self.profile}…")
            self.bar = box.progress(0.0)
        frac = min(1.0, (self.base + done) / self.total)
        self.bar.progress(frac, text=f"Scoring {label} with {self.profile}: {done} / {total} questions")

    def finish_run(self, total: int) -> None:
        self.base += total

    def close(self) -> None:
        self.slot.empty()
        note = st.session_state.get(PROFILE_NOTE)
        if self.stale and note is not None:
            note.empty()


def scored_runs(ws: Workspace, gold_key: tuple, profile: str, slot=None) -> list[Run]:
    official = ws.official()
    runs: list[Run] = []
    scorable = [pf for pf in ws.predictions if pf.loaded.items] if ws.gold.items else []
    todo = [pf for pf in scorable if cache.scored((gold_key, pf.sha256, pf.run, profile)) is None]
    todo = [pf for pf in todo if _stored(ws, gold_key, pf, profile) is None]
    # a first load has no numbers "from before" to warn about
    stale = CONTEXT in st.session_state
    bar = _Progress(slot or st.empty(), profile, len(ws.gold.items) * len(todo), stale=stale) if todo else None
    if bar is not None:  # runs left (todo): every one on the shared worker pool (both cores); the bar moves per chunk and per run
        labels = [md_escape(f"{pf.run} (run {k + 1} of {len(todo)})") for k, pf in enumerate(todo)]
        batch = [(pf.run, pf.loaded.items) for pf in todo]
        for i, result in score_runs(ws.gold.items, batch, profile=profile,
                                    progress=lambda k, done, total: bar.update(labels[k], done, total)):
            pf = todo[i]
            store.save_run(cache.score_store(), _store_key(ws, gold_key, pf, profile), result)
            cache.remember((gold_key, pf.sha256, pf.run, profile), result)
            bar.finish_run(len(ws.gold.items))
    for pf in scorable:
        result = score(ws, gold_key, pf, profile, bar)
        runs.append(Run(pf.run, RECOMPUTED, ws.label(str(pf.path)), result, official.get(pf.run, []), pf.origin))
    if bar is not None:
        bar.close()
    names = {r.name for r in runs}
    for system, rows in official.items():
        if system not in names:
            runs.append(Run(system, OFFICIAL, ws.label(rows[0].file), None, rows))
    return runs


def warn_joins(an: Analysis) -> None:
    """At the top of every page: the runs that match fewer than half of the gold questions (with an
    unmatched id), those matching none said to be left out of the ranking and comparisons."""
    text = join_warning(an.short_joins())
    if text:
        st.warning(md_escape(text), icon=":material/join_inner:")


def announce_upload_problems(ws: Workspace) -> None:
    """A toast, once per uploaded file, when it had problems (the Data page lists them)."""
    from dashboard.data.frames import load_results

    done = st.session_state.setdefault(NOTIFIED, set())
    for _, files, res in load_results(ws):
        for f in files:
            if f in ws.labels and f not in done and (res.problems or res.skipped):
                done.add(f)
                n = len(res.errors)
                st.toast(md_escape(f"{ws.labels[f]}: {res.skipped} row{'s' if res.skipped != 1 else ''} skipped, "
                                   f"{n} error{'s' if n != 1 else ''}, {len(res.problems) - n} warning"
                                   f"{'s' if len(res.problems) - n != 1 else ''}. The Data page lists them."),
                         icon=":material/warning:", duration="long")


def context() -> Context:
    return st.session_state[CONTEXT]


# ----------------------------------------------------------------------------- output


def show_error(problem: BaseException | str, *, icon: str = ":material/error:") -> None:
    """The one shape of an error on a page: its sentence (core.escape.error_text), escaped, in an
    error box -- never a traceback, never the text rendered as Markdown."""
    st.error(md_escape(error_text(problem)), icon=icon)


def plain(text: str | None, empty: str = "(empty)", *, limit: int = DISPLAY_CHARS, name: str = "text",
          key: str | None = None) -> None:
    """Untrusted text (model output, gold, questions) as plain text: never Markdown or HTML. Text
    longer than `limit` characters is cut for display, with its length and a download of all of it
    (`name` names the file; `key` keeps two such buttons apart)."""
    if not text:
        st.caption(empty)
        return
    if len(text) <= limit:
        st.code(text, language=None, wrap_lines=True)
        return
    st.code(text[:limit] + " …", language=None, wrap_lines=True, height=320)
    cols = st.columns([3, 1], vertical_alignment="center")
    cols[0].caption(f"Showing the first {limit:,} of {len(text):,} characters.")
    digest = hashlib.sha256(text[:4096].encode("utf-8", "replace")).hexdigest()[:12]
    cols[1].download_button(f"Download all ({_size(text)})", lambda: text.encode("utf-8", "replace"),
                            file_name=f"{name}.txt", mime="text/plain", icon=":material/download:",
                            key=key or f"dl_{name}_{len(text)}_{digest}", on_click="ignore")


def _size(text: str) -> str:
    n: float = len(text.encode("utf-8", "replace")) if len(text) < 1_000_000 else len(text)  # ~ bytes, quickly
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return ""

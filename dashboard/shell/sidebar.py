"""The sidebar's inputs: the scoring profile picker (with the benchmark's own profile until the user
picks one) and the Data panel (a folder on the server inside the data roots, or uploaded files staged
in this session's own upload folder)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import streamlit as st

from dashboard.core.escape import md_escape
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
from dashboard.data.workspace import HARNESS, MMLONGBENCH, Discovery, Workspace, discover, harness_tasks
from dashboard.shell import cache
from dashboard.shell.scorer import PROFILE_NOTE
from dashboard.shell.viewstate import seed, view
from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, MMLONGBENCH_PROFILE, PROFILES

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
                                    "inside the server's data roots open (docs/team.md, \"Data roots and uploads\").").strip()
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


def first_task(bench: Path) -> str:
    """The task a harness folder holding several opens on (`_task_picker`'s default); '' for any other folder."""
    return next(iter(harness_tasks(bench)), "")


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


PROFILE_AUTO = "lens_profile_auto"  # the benchmark's own profile, until the user picks one
PROFILE_CHOSEN = "lens_profile_chosen"  # set once the user picked a profile
HARNESS_OFFERED = "lens_harness_profiles"  # the harness profiles that apply to the data loaded (offered in the picker)
LAYOUT_READ = "lens_configured_layout_read"  # the configured benchmark's layout was looked at in this session


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
    if PROFILE_AUTO not in st.session_state and v.profile == DEFAULT_PROFILE and not v.data \
            and not st.session_state.get(LAYOUT_READ):
        # the configured benchmark's own rule decided here, once a session: the configuration does not change, and
        # looking costs every file of runs/ a stat or two (0.1 s a page run at 1,000 runs); another folder opened
        # later is decided by load(), with a rerun
        from dashboard.core.paths import sources_from

        st.session_state[LAYOUT_READ] = True
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

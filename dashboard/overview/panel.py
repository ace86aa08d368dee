"""The overview page's Streamlit logic (dashboard/views/overview.py runs it): what the metrics reward,
the leaderboard of all runs, heatmaps and breakdown charts of the runs picked (by default the ten best
and any baseline), where the answers are; a click opens the explorer. The figures come from
dashboard/overview/charts.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.core.analysis import ATTEMPTED, BENCH_F1, OFFICIAL, PAGE_CATEGORY, SHARED_ACC, Analysis, Shared, top_runs
from dashboard.core.escape import md_escape
from dashboard.core.links import LOCATION_FIELD, field_label
from dashboard.data.frames import (
    compared_count,
    conflict_text,
    failed_zeroed,
    failed_zeroed_text,
    gold_trouble,
    reported_breakdown,
    reported_columns,
    repro_frame,
    skipped_reasons,
    skipped_warning,
)
from dashboard.judge.frames import COUNT_COLUMN as JUDGE_COUNT
from dashboard.judge.frames import judge_board
from dashboard.overview import charts
from dashboard.shell import viewstate
from dashboard.shell.context import Context
from scoring.profiles import LMMS_EVAL_PROFILE, MMLONGBENCH_PROFILE, PROFILES, VLMEVALKIT_PROFILE, get_profile
from scoring.registry import METRIC_LABELS, METRICS

HEATMAPS = ("reasoning_type", "evidence_source")
BREAKDOWNS: tuple[str, ...] = ("domain", "difficulty", "answer_format", "doc_type", "split", "length", "position")
CHART_RUNS = 10  # runs drawn by default: the best by the chosen metric, plus any baseline
BOARD_ROWS = 25  # leaderboard rows shown before it scrolls
ROW_PX = 35
CONTRACT = "scoring/README.md"  # the scoring contract, a path in the repository
PROFILES_DOC = "docs/scoring-rules.md"  # the profiles, each in a sentence
EXPLAINED = {  # Accuracy's is the profile's (scoring.profiles.Profile.accuracy_help)
    "token_f1": ("Overlap of the normalised words of the answer and the gold (precision × recall).",
                 "Partial credit for partly right answers; padding the answer with extra words costs."),
    "anls": ("1 − the edit distance between answer and gold, relative to the longer one; 0 when too far off.",
             "Rewards answers spelled almost right (OCR slips), nothing for a different answer."),
}
DATA_PAGE = viewstate.QUESTIONS_PAGE.parent / "data.py"
EVIDENCE_ON = "lens_evidence_on"  # the user asked for the evidence metrics (here, or the explorer's switch)
LOCATION_MEMO = "lens_location_memo"  # (metrics table, runs) -> (location breakdown, run rates), for reruns
PCT = "percent"
RATE_COLUMNS = {  # run_rates column -> (header, help)
    "evidence_precision": ("Page precision", "Mean share of the pages a run cites that are gold evidence pages "
                           "(over the questions where it cites pages)"),
    "evidence_recall": ("Page recall", "Mean share of the gold evidence pages the run cites"),
    "grounding": ("Grounding", "Mean share of the gold's boxes matched by a cited box (ParseBench: the overlap "
                  "covers ≥ 0.5 of the gold box and ≥ 0.2 of the cited box); empty: no gold or no cited boxes"),
    "answer_on_evidence_page": ("On an evidence page", "Share of the searched answers found on a gold evidence page"),
    "answer_only_on_other_page": ("Wrong page", "Share of the searched answers found only on pages that are not "
                                  "evidence pages"),
    "answer_not_in_document": ("Not in the document", "Share of the searched answers not found verbatim in the "
                               "document although its gold is written there: likely invented"),
    "answer_computed": ("Computed from the page", "Share of the searched answers not written in the document whose "
                        "gold is not written there either: computed from what the page shows"),
    "answer_found_no_evidence_page": ("Found (no evidence page named)", "Share of the searched answers found in a "
                                      "document whose gold names no evidence page (as DocVQA's)"),
}
BENCH_COLUMNS = {  # MMLongBench-Doc's own F1 (the leaderboard has it under that profile only; its Acc is Accuracy there)
    BENCH_F1: st.column_config.NumberColumn("F1 (MMLongBench-Doc) %", format="%.2f", width=164, help="MMLongBench-Doc's "
                                            "own F1 (its eval_acc_and_f1): recall over the answerable questions, precision "
                                            "over the answers that are not 'Not answerable' -- not the token F1"),
}
# the Accuracy column's header under a profile whose Accuracy is another tool's own score
ACC_HEADERS = {MMLONGBENCH_PROFILE: "Acc (MMLongBench-Doc) %", LMMS_EVAL_PROFILE: "Acc (lmms-eval rule) %",
               VLMEVALKIT_PROFILE: "Acc (VLMEvalKit rule) %"}
SAVED_FIELD = "saved_slice"  # dashboard.weak.saved.SAVED_FIELD (a test holds them equal), without importing it
SIGNATURES = "ov_signatures"  # the signatures' expander (open: its content is built)
# leaderboard columns said under it, not shown (Missing: the gold's count minus Attempted, named under it when any)
BOARD_NOTED = ("Source", "Questions", "Answered", "Missing", "Signature")
BOARD_FIRST = ("Run", SHARED_ACC)  # then the board's own order; the harnesses' numbers after ANLS


def breakdowns_of(an: Analysis) -> tuple[str, ...]:
    """The breakdown fields charted: MMLongBench-Doc's page categories (a question in each that
    applies) stand in for the split when the gold has them."""
    if PAGE_CATEGORY in an.questions.columns:
        return tuple(PAGE_CATEGORY if n == "split" else n for n in BREAKDOWNS)
    return BREAKDOWNS


def show(ctx: Context, fig, key: str) -> None:
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=key, width="stretch")
    hit = charts.slice_of(event)
    if hit and hit[1] == SAVED_FIELD:  # a saved slice's bar: the explorer with its filters
        from dashboard.weak import saved_panel

        chosen = saved_panel.by_name(ctx).get(hit[2])
        if chosen is not None:
            saved_panel.open_saved(chosen, hit[0])
    elif hit:
        viewstate.open_slice(*hit)


class Later:
    """The page's charts, each given its place where it belongs (an empty container) and drawn into it
    once everything else of the page is sent (`draw`, the script's last step). Sent last, Plotly's
    4.7 MB chunk, which the browser asks for when the first chart arrives, is served by a server with
    nothing left to do: sent in the middle, the rest of the script held the GIL while the server sent
    it (1.0 s to download it in the MMLongBench-Doc clone's first paint, against 0.1-0.2 s idle)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.todo: list[tuple[DeltaGenerator, Callable[[], object], str]] = []

    def chart(self, build: Callable[[], object], key: str) -> None:
        self.todo.append((st.container(), build, key))

    def draw(self) -> None:
        figures = [(slot, build(), key) for slot, build, key in self.todo]  # built first: then sent at once
        self.todo.clear()
        for slot, fig, key in figures:
            with slot:
                show(self.ctx, fig, key)


def metrics_explained(ctx: Context) -> None:
    st.markdown("**What the metrics reward**", help=f"The exact rules are in the scoring contract, `{CONTRACT}` in "
                "the repository: answer formats, profiles, rules and the signature.")
    cols = st.columns(3)
    for col, metric in zip(cols, METRICS):  # Accuracy: what it is under the profile in force (partial on MMLongBench-Doc)
        first, second = get_profile(ctx.profile).accuracy_help if metric == "accuracy" else EXPLAINED[metric]
        col.caption(f"**{METRIC_LABELS[metric]}** — {first}  \n{second}")


def board_columns(board, profile: str, reported_help: dict[str, str], shared: Shared) -> tuple[list[str], dict]:
    """The leaderboard's shown columns and their headers: each says what it is -- the profile's
    Accuracy (MMLongBench-Doc's own Acc under its profile: shown once), the token F1 (never "F1",
    which is the benchmark's own where it has one), the harnesses' own numbers under their own keys."""
    acc_help = get_profile(profile).accuracy_help[1]
    pct = {c: st.column_config.NumberColumn(label, format="%.2f", width=w, help=text)
           for c, label, w, text in (
               ("Accuracy (%)", ACC_HEADERS.get(profile, "Acc %"), 64 if profile not in ACC_HEADERS else 152,
                f"Accuracy in %, over the questions the run attempted ({acc_help})"),
               ("Token F1 (%)", "Token F1 %", 70, "Token F1 in % (ours: word overlap of answer and gold), over the "
                "questions the run attempted -- not a benchmark's own F1"),
               ("ANLS (%)", "ANLS %", 68, "ANLS in %, over the questions the run attempted"))}
    pct[SHARED_ACC] = st.column_config.NumberColumn(
        "Shared Acc %", format="%.2f", width=84, help=f"Accuracy over the questions every run here attempted "
        f"({shared.text()}): the runs compared on the same questions; the board is ranked by it")
    pct |= {c: st.column_config.NumberColumn(c, format="%d" if c == JUDGE_COUNT else "%.2f", help=text)
            for c, text in reported_help.items()}
    # the ranking, then the benchmark's and the harnesses' own numbers beside Accuracy, then ours (token F1, ANLS)
    first = [c for c in (*BOARD_FIRST, "Accuracy (%)", BENCH_F1, *reported_help, "Problems") if c in board.columns]
    shown = first + [c for c in board.columns if c not in BOARD_NOTED and c not in first]
    return shown, pct | {
        "Run": st.column_config.TextColumn("Run", pinned=True),
        ATTEMPTED: st.column_config.NumberColumn(width=76, help="gold questions the run has a row for (answered or "
                                                 "failed): its metrics are over these. The others are missing: not "
                                                 "counted (the command line counts them wrong unless --ignore-missing)"),
        "Failed": st.column_config.NumberColumn(width=60, help="answers with a failed status (an error, a timeout)"),
        **BENCH_COLUMNS,
        "Signature": st.column_config.TextColumn(width="large"),
        "Source": st.column_config.TextColumn(help="recomputed from predictions with the sidebar's profile, or "
                                              "per-question scores as loaded from a file (profile unknown)"),
        "Problems": st.column_config.TextColumn(help="rows of the run's file that are not in its scores: unreadable "
                                                "(the run may look complete while it is not), or replaced by a "
                                                "repeat of their id. The Data page lists them."),
    }


def with_reported(board: pd.DataFrame, ws) -> tuple[pd.DataFrame, dict[str, str]]:
    """The board with the harnesses' own overall numbers (`reported_columns`; shown beside Accuracy by
    `board_columns`), and their help."""
    reported, helps = reported_columns(ws)
    judged, judge_helps = judge_board(ws)  # the runs' own LLM judges: answers without an answer, the score without them
    for frame in (reported, judged):
        if not frame.empty:
            board = board.merge(frame, on="Run", how="left")
    return board, helps | judge_helps


def leaderboard(ctx: Context, v, loaded: list[str]) -> None:
    an = ctx.analysis
    st.subheader("Leaderboard")
    board = an.leaderboard()
    if v.hide_loaded:
        board = board[board["Source"] != OFFICIAL].reset_index(drop=True)
    board, reported_help = with_reported(board, ctx.workspace)
    reasons = skipped_reasons(ctx.workspace)
    problems = {run: s.text() for run, s in reasons.items()}
    if any(r in problems for r in board["Run"]):
        board.insert(2, "Problems", [problems.get(r, "") for r in board["Run"]])
    # Fits the main area of an 800 px window (about 460 px beside the sidebar): the ranking and what is
    # missing; the source, question count and signature are said under it (board_notes), not in columns.
    shared = an.shared(list(board["Run"]))
    shown, config = board_columns(board, ctx.profile, reported_help, shared)
    # an empty cell (a number this run has not: another harness's, another profile's) reads "—", never "None"
    st.dataframe(board, hide_index=True, width="stretch", height=ROW_PX * (min(len(board), BOARD_ROWS) + 1) + 3,
                 column_order=shown, column_config=config, placeholder="—")
    board_notes(board, shared)
    if reported_help:
        reported_notes(ctx)
    text = skipped_warning(reasons, list(board["Run"]))
    if text:
        st.warning(md_escape(text), icon=":material/warning:")
        st.page_link(DATA_PAGE, label="See the problems on the Data page", icon=":material/dataset:")
    trust_notes(ctx)
    if loaded:
        # the badges, then the toggle under them: side by side its label was cut at 800 px
        badges = " ".join(f":orange-badge[{md_escape(r)} · loaded]" for r in loaded)
        st.markdown(badges if not v.hide_loaded else f":gray-badge[{len(loaded)} loaded-score runs hidden]")
        v.hide_loaded = st.toggle("Hide loaded scores", key="ov_hide_loaded",
                                       help="Runs whose scores were read from score files rather than recomputed "
                                       "from predictions.")
        if not v.hide_loaded:
            differ = [(r.name, len(repro_frame(res, r.official)), compared_count(res, r.official))
                      for r in an.runs if r.recomputed and r.official and (res := r.result) is not None]
            differ = [(name, n, total) for name, n, total in differ if n]
            text = (f"{len(loaded)} run{'s' if len(loaded) > 1 else ''} marked *loaded* show scores read from files: "
                    f"their scoring profile is unknown and may differ from **{ctx.profile}**, which the other runs are "
                    "recomputed with; the profile switch does not change them.")
            if differ:
                text += " " + md_escape(
                    "Loaded scores differ from the ones recomputed under " + ctx.profile + " for " +
                    ", ".join(f"{name} ({n} of {total} questions)" for name, n, total in differ) +
                    ": the score files were probably made with another profile (the Data page names it).")
            st.warning(text + " Rank the loaded runs with care, or hide them.", icon=":material/info:")


def reported_notes(ctx: Context) -> None:
    """Under the leaderboard: where the harnesses' numbers come from, and their numbers per category."""
    st.caption("The columns named after a harness are its own numbers as its files report them (lmms-eval's results.json, "
               "VLMEvalKit's _acc.csv or _score.csv), beside the recomputed ones: a fraction is shown ×100, a percentage "
               "as printed; the header says which. Under the harness's own profile, its Acc equals its number.")
    per_category = reported_breakdown(ctx.workspace)
    if len(per_category):
        with st.expander("What the harnesses reported per category", icon=":material/table_chart:"):
            st.dataframe(per_category, hide_index=True, width="stretch", placeholder="—",
                         column_config={c: st.column_config.NumberColumn(format="%.2f") for c in per_category.columns[1:]})


NAMED = 8  # a caption names at most this many runs of a kind; more are counted (the board has a row for each)


def _named(runs: list[str]) -> str:
    if len(runs) <= NAMED:
        return ", ".join(runs)
    return f"{', '.join(runs[:NAMED])} and {len(runs) - NAMED:,} more runs"


def board_text(board, shared: Shared | None = None) -> str:
    """The caption under the leaderboard: the questions each run is scored on (the runs of the largest
    group counted, not named, when there are several: the Attempted column has each run's), the runs
    with missing answers (at most NAMED named) and what all runs share. At 1,000 runs it named all
    1,000 in one paragraph."""
    counts = board.groupby("Questions", sort=False)["Run"].apply(list)
    if len(counts) == 1:
        text = f"Scored on the {next(iter(counts.index)):,} questions each run attempted"
    else:
        largest = max(counts.index, key=lambda n: (len(counts[n]), n))
        text = ("Scored on the questions each run attempted (answered or failed; a missing answer is not counted, as "
                "with the command line's --ignore-missing): "
                + "; ".join(f"{n:,} questions: {f'{len(runs):,} runs' if n == largest and len(runs) > NAMED else _named(runs)}"
                            for n, runs in counts.items()))
    missing = board[board["Missing"] > 0] if "Missing" in board.columns else board.iloc[0:0]
    if len(missing):
        shown = [f"{r} {n:,}" for r, n in zip(missing["Run"], missing["Missing"])]
        text += ". Missing (no row: not counted): " + _named(shown)
    if shared is not None and shared.differs:
        text += (f". {shared.text()[0].upper() + shared.text()[1:]}: Shared Acc % compares them on those and ranks the board"
                 if shared.questions else ". They share no question: each is ranked on its own questions, which differ -- "
                 "the Compare page compares two runs on the questions both attempted")
    return text + "."


def board_notes(board, shared: Shared | None = None) -> None:
    """Under the leaderboard, what its hidden columns hold: the questions each run is scored on (the
    ones it attempted) and, when they differ, how many all runs share -- then each signature (the
    scoring profile's rules) with the runs that carry it."""
    if board.empty:
        return
    st.caption(md_escape(board_text(board, shared)))
    # built when opened (a rerun): closed, it adds nothing to the page's first paint
    box = st.expander("Source and scoring signature of each run", icon=":material/fingerprint:", key=SIGNATURES,
                      on_change="rerun")
    if not box.open:
        return
    with box:
        for signature, runs in board.groupby("Signature", sort=False)["Run"].apply(list).items():
            sources = set(board[board["Run"].isin(runs)]["Source"])
            st.caption(md_escape(f"{', '.join(runs)} — {', '.join(sorted(sources))}"))
            # plain text: st.code would make the browser fetch its 1.56 MB highlighting chunk for it
            st.text(signature or "(none)")


def trust_notes(ctx: Context) -> None:
    """Under the leaderboard: the runs not ranked, gold rows dropped or unmatchable, answers the profile zeroed."""
    an = ctx.analysis
    if an.not_ranked():
        st.markdown("**Not ranked** — these runs match no gold question: they are not ranked, charted or compared.")
        st.dataframe([{"Run": j.run, "Matched": j.matched, "Gold questions": j.total,
                       "Example id": j.unmatched_example} for j in an.not_ranked()], hide_index=True, width="stretch")
    gold = gold_trouble(ctx.workspace).messages(len(an.questions))
    conflicts = conflict_text(ctx.workspace)
    if conflicts:
        gold.append(conflicts)
    for text in gold:
        st.warning(md_escape(text), icon=":material/rule:")
    if gold:
        st.page_link(DATA_PAGE, label="The gold rows and questions, with file:line, on the Data page",
                     icon=":material/dataset:")
    zeroed = failed_zeroed(an, ctx.profile)
    if zeroed:
        # one under the other: side by side the popover's label was cut to "W…" at 800 px
        st.info(md_escape(failed_zeroed_text(zeroed, ctx.profile)), icon=":material/exposure_zero:")
        with st.popover("Why: the profiles", icon=":material/help:"):
            st.markdown(f"The profiles are explained in `{PROFILES_DOC}` (Profiles) and in `{CONTRACT}`.")
            for p in PROFILES.values():
                st.markdown(md_escape(f"{p.name}: {p.description}"))


def chart_runs(ctx: Context, v, board_runs: list[str], metric: str) -> list[str]:
    """The runs the charts show, in leaderboard order: picked by the user, by default (and again
    once the pick equals it) the CHART_RUNS best by `metric` plus any baseline."""
    an = ctx.analysis
    baselines = tuple(r for r in board_runs if "baseline" in r.lower() or r == getattr(v, "baseline", None))
    board = an.leaderboard()
    default = top_runs(board[board["Run"].isin(board_runs)], metric, CHART_RUNS, baselines)
    # the pick lives in the view (the link's `chart=`), so it outlives the page and travels with a link;
    # none: follow the default, which changes with the metric
    st.session_state["ov_runs"] = [r for r in v.charts if r in board_runs] if v.charts is not None else default

    def remember() -> None:
        chosen = st.session_state["ov_runs"]
        v.charts = None if chosen == default else list(chosen)

    picked = st.multiselect(f"Runs in the charts ({len(board_runs)} on the leaderboard)", board_runs, key="ov_runs",
                            on_change=remember, placeholder="Choose runs to draw",
                            help=f"By default the {CHART_RUNS} best by the chosen metric, plus any baseline. "
                            "The leaderboard above keeps every run.")
    return [r for r in board_runs if r in picked]


def overview(ctx: Context) -> None:
    an = ctx.analysis
    v = viewstate.view()
    viewstate.warn_missing_runs(an.run_names)
    loaded = [r.name for r in an.runs if r.source == OFFICIAL]
    viewstate.seed("ov_hide_loaded", v.hide_loaded)
    v.hide_loaded = bool(loaded) and st.session_state["ov_hide_loaded"]  # the toggle sits below the board
    leaderboard(ctx, v, loaded)
    board_runs = [r for r in an.leaderboard()["Run"] if not (v.hide_loaded and r in loaded)]
    metrics_explained(ctx)

    viewstate.seed("ov_metric", v.metric)
    metric = st.segmented_control("Metric", METRICS, format_func=METRIC_LABELS.__getitem__, key="ov_metric") or "accuracy"
    v.metric = metric
    runs = chart_runs(ctx, v, board_runs, metric)
    if st.session_state.get("ov_show") and st.session_state.get("ov_pick_label") is not None:
        # "Show these questions" was pressed: open the slice before drawing charts it would leave
        pick_run = st.session_state.get("ov_pick_run")
        if pick_run is None:
            v.runs = list(runs)
        viewstate.open_slice(pick_run, st.session_state["ov_pick_field"], st.session_state["ov_pick_label"])
    if not runs:
        st.info("Pick at least one run to draw the charts.")
        return
    marked = set(loaded)
    # a field the gold never fills (every question `unknown`) gets no chart, and the page says so
    heatmaps = tuple(n for n in HEATMAPS if an.informative(n))
    breakdowns = tuple(n for n in breakdowns_of(an) if an.informative(n))  # none: no tabs (never a default of one value)
    left_out = [n for n in (*HEATMAPS, *breakdowns_of(an)) if n not in heatmaps + breakdowns]
    st.caption("Click a cell or a bar to open those questions in the question explorer. Rows follow the leaderboard.")
    note = chart_note(an.shared(runs))
    if note:
        st.caption(md_escape(note))
    later = Later(ctx)  # every chart drawn in its place once the rest of the page is sent
    for name in heatmaps:
        def heat(name: str = name):
            return charts.heatmap(an.breakdown(name, runs), name, metric, runs, marked)
        later.chart(heat, f"ov_heat_{name}")

    saved = saved_breakdown(ctx)  # the saved slices' tab (one read of the annotations database, if any)
    if breakdowns or saved is not None:
        breakdown_tabs(ctx, v, breakdowns, metric, runs, marked, saved, later)
    if left_out:
        why = (" (document length and evidence position are read from the PDFs' page counts)"
               if {"length", "position"} & set(left_out) else "")
        st.caption(md_escape(f"Not charted: {', '.join(map(field_label, left_out))}: "
                             f"{'it tells' if len(left_out) == 1 else 'they tell'} no question of this benchmark apart "
                             f"(every question has the same value, or none){why}."))

    if heatmaps + breakdowns:  # (else no field tells questions apart: no slice to open)
        with st.expander("Open a slice without the mouse", icon=":material/keyboard:"):
            c1, c2, c3 = st.columns(3)
            field_name = c1.selectbox("Breakdown", heatmaps + breakdowns, format_func=field_label, key="ov_pick_field")
            label = c2.selectbox("Value", sorted(an.breakdown(field_name)["label"].unique()), key="ov_pick_label")
            run = c3.selectbox("Run", [None, *runs], format_func=lambda r: "every run in the charts" if r is None else r,
                               key="ov_pick_run")
            if st.button("Show these questions", icon=":material/arrow_forward:", key="ov_show"):  # opened above, early
                if run is None:
                    v.runs = list(runs)
                viewstate.open_slice(run, field_name, label)
    _after_charts(ctx, runs, marked, heatmaps + breakdowns, later)


def chart_note(shared: Shared) -> str:
    """What the charts compare when the runs drawn attempted different questions ("" when the same)."""
    if not shared.differs:
        return ""
    if not shared.questions:
        return ("The runs drawn share no question: each bar is over the questions its own run attempted, which differ "
                "from run to run.")
    return f"The runs drawn attempted different questions: {shared.text()}, and the charts compare them on those."


def breakdown_tabs(ctx: Context, v, breakdowns: tuple[str, ...], metric: str, runs: list[str], marked: set[str], saved=None,
                   later: Later | None = None) -> None:
    """One tab per field that tells questions apart, then the saved slices' (`saved`: their breakdown,
    when any is saved: a bar per saved slice, a question in each it matches); the view's tab open,
    else the first."""
    an = ctx.analysis
    st.subheader("Breakdowns")
    if saved is not None:
        breakdowns = (*breakdowns, SAVED_FIELD)
    # Only the open tab's chart is built and sent (a tab switch reruns): building and drawing all
    # seven bar charts took most of every overview rerun (bench/bench_dashboard.py).
    labels = {field_label(n): n for n in breakdowns}
    viewstate.seed("ov_tab", field_label(v.tab) if v.tab in breakdowns else field_label(breakdowns[0]))
    tabs = st.tabs(list(labels), key="ov_tab", on_change="rerun")
    current = labels.get(st.session_state.get("ov_tab", ""), breakdowns[0])
    v.tab = "" if current == breakdowns[0] else current
    for tab, name in zip(tabs, breakdowns):
        with tab:
            if tab.open is not False:
                def build(name: str = name):
                    return charts.bars(saved if name == SAVED_FIELD else an.breakdown(name, runs), name, metric, runs,
                                       marked)
                if later is not None:
                    later.chart(build, f"ov_bar_{name}")
                else:
                    show(ctx, build(), f"ov_bar_{name}")


def saved_breakdown(ctx: Context):
    """The saved slices' breakdown (dashboard.weak.saved_panel), None when none is saved -- known
    without importing the annotations database (SQLAlchemy, 0.7 s) when there is no database yet."""
    from dashboard.annotations import store_panel

    if store_panel.absent_file() is not None:
        return None
    from dashboard.weak import saved_panel

    return saved_panel.saved_breakdown(ctx)


def _after_charts(ctx: Context, runs: list[str], marked: set[str], fields: tuple[str, ...], later: Later) -> None:
    fill = answer_locations(ctx, runs, marked, later)
    # tag counts per run and slice, gold corrections (per document when no field tells questions apart)
    failure_modes(ctx, runs, fields or ("document",))
    if fill is not None:  # the whole-document answer search, last: everything above is drawn already
        fill()
    later.draw()


# dashboard.annotations.panel's names for the sample's notes (a test holds them equal), without importing it
SAMPLE_FILE = "annotations/annotations.jsonl"
SAMPLE_DISMISSED = "lens_sample_annotations_dismissed"
SAMPLE_KEY = "ov"  # offer_sample's key on this page: its buttons are ann_sample_ov and ann_sample_no_ov
NO_TAGS = ("No tagged notes yet. Tag answers in the question explorer (select a question, then Triage notes): their "
           "failure modes are counted here per run and per slice.")


def failure_modes(ctx: Context, runs: list[str], fields: tuple[str, ...]) -> None:
    """dashboard.annotations.panel.failure_modes; when there is no annotations database yet (a fresh
    machine: no note, correction or saved slice, and the gold corrections off) the same section is
    drawn here -- the heading, the offer to import the benchmark's own notes, "no tagged notes yet" --
    without importing the database module (SQLAlchemy, 0.7 s) or creating the file. Pressing the
    offer's Import button takes the panel's path (the same button: its click is handled there)."""
    from dashboard.annotations import store_panel

    where = store_panel.absent_file()
    if where is None or ctx.corrections is not None or st.session_state.get(f"ann_sample_{SAMPLE_KEY}"):
        from dashboard.annotations import panel as notes_panel

        notes_panel.failure_modes(ctx, runs, fields)
        return
    st.subheader("Failure modes")
    bench = ctx.workspace.discovery.benchmark
    sample = Path(bench) / SAMPLE_FILE if bench is not None else None
    if sample is not None and sample.is_file() and not st.session_state.get(SAMPLE_DISMISSED) and ctx.benchmark:
        box = st.container(border=True)
        box.info(md_escape(f"This benchmark comes with triage notes ({SAMPLE_FILE}): import them into the annotations "
                           f"database ({where}) to see failure modes, tags and a gold correction in every view."),
                 icon=":material/note_stack:")
        c1, c2 = box.columns(2)
        c1.button("Import the sample's notes", key=f"ann_sample_{SAMPLE_KEY}", icon=":material/download:", disabled=False)
        if c2.button("Not now", key=f"ann_sample_no_{SAMPLE_KEY}"):
            st.session_state[SAMPLE_DISMISSED] = True
            st.rerun()
    st.caption(NO_TAGS)


def answer_locations(ctx: Context, runs: list[str], marked: set[str], later: Later | None = None) -> Callable[[], None] | None:
    """Where the answers are: per run, the share of its answers on an evidence page, only on other
    pages, nowhere in the document (a click opens those questions), and the evidence rates. Drawn
    here when the metrics are computed already; else a placeholder, and the function that fills it
    (with the search's progress bar) is returned for the end of the page, so that nothing else
    waits for the search (50 s on a 2,415-page manual)."""
    from dashboard.evidence import grounding  # AUTO_PAIRS read when used (tests lower it)

    an = ctx.analysis
    st.subheader("Where the answers are")
    pairs = len(ctx.workspace.gold.items) * len(an.runs)
    from dashboard.evidence.locate_panel import under_way

    # a job already running for this data (started before a reload, or by another session) is shown, not offered again
    if pairs > grounding.AUTO_PAIRS and not st.session_state.get(EVIDENCE_ON) and not under_way(ctx):
        st.caption(f"Finding each answer in its documents means searching the whole documents for {pairs:,} "
                   "question × run pairs: on long documents that takes a while the first time (then it is kept). It "
                   "runs in the background, the documents of the charted runs' questions first, with what is left.")
        if not st.button("Locate answers in the documents", icon=":material/plagiarism:", key="ov_locate"):
            return None
        st.session_state[EVIDENCE_ON] = True
    from dashboard.evidence.locate_panel import locate_first, questions_of_runs
    from dashboard.evidence.panel import evidence_metrics_ready

    if evidence_metrics_ready(ctx):
        located_answers(ctx, runs, marked, later)
        return None
    slot = st.empty()
    slot.caption("Locating each answer in its documents once the rest of the page is drawn…")

    def fill() -> None:  # on large data in the background, the charted runs' documents first (gold order)
        with slot.container():
            # drawn by the progress fragment when located in the background (its chart at once, there)
            if locate_first(ctx, questions_of_runs(ctx, runs), lambda: located_answers(ctx, runs, marked)):
                located_answers(ctx, runs, marked, later)

    return fill


def located_answers(ctx: Context, runs: list[str], marked: set[str], later: Later | None = None) -> None:
    """The section's chart (drawn by `later` when given), rates and keyboard access, from
    evidence_metrics (computed here if need be)."""
    from dashboard.evidence.grounding import LOCATION_ORDER, location_breakdown, location_label, run_rates
    from dashboard.evidence.locate_panel import keep_on_disk
    from dashboard.evidence.panel import evidence_metrics

    everything = evidence_metrics(ctx)
    keep_on_disk(ctx)  # a server start reads them back instead of locating again (once a process)
    memo = (id(everything), len(everything), tuple(runs))
    kept = st.session_state.get(LOCATION_MEMO)
    if not kept or kept[0] != memo:
        ev = everything[everything["run"].isin(runs)]
        kept = (memo, location_breakdown(ev), run_rates(ev), ev.empty)
        st.session_state[LOCATION_MEMO] = kept
    _, breakdown, rates, empty = kept
    if empty:
        st.info("None of these runs answers a gold question: nothing to locate.")
        return
    st.caption("Per run, where its answer appears in the question's documents: on a gold evidence page, only on other "
               "pages (a wrong-page answer), nowhere (invented, or computed), a refusal, a failed extraction (the "
               "benchmark's `Fail to answer`, or the gold only in the raw response: never counted as not in the "
               "document), or not searched (empty or failed answers, choice letters, pages without text). Click a "
               "segment to open those questions.")
    if later is not None:
        later.chart(lambda: charts.locations(breakdown, runs, marked), "ov_locations")
    else:
        show(ctx, charts.locations(breakdown, runs, marked), "ov_locations")
    rates = rates.set_index("run").reindex([r for r in runs if r in set(rates["run"])]).reset_index()
    shown = rates[["run", "answers_searched", *RATE_COLUMNS]]
    if not shown["answer_found_no_evidence_page"].fillna(0).any():
        shown = shown.drop(columns="answer_found_no_evidence_page")
    config = {"run": st.column_config.TextColumn("Run", pinned=True),
              "answers_searched": st.column_config.NumberColumn("Answers searched", help="Answers looked for in "
                                                                "their documents (not refusals, failed extractions, empty "
                                                                "or failed answers, choice letters, image-only pages)")}
    config |= {c: st.column_config.NumberColumn(h, format=PCT, help=t) for c, (h, t) in RATE_COLUMNS.items()}
    st.dataframe(shown, hide_index=True, width="stretch", column_config=config,
                 height=ROW_PX * (min(len(shown), BOARD_ROWS) + 1) + 3)
    st.caption("Page precision and recall: the pages a run cites against the gold evidence pages (empty: the run "
               "cites no page; grounding empty: no gold or no cited boxes). Rates of the answer's location: over the "
               "answers searched. The Evidence page shows each question's pages with the boxes.")
    with st.expander("Open answers by location without the mouse", icon=":material/keyboard:"):
        c1, c2 = st.columns(2)
        run = c1.selectbox("Run", list(rates["run"]), key="ov_loc_run")
        where = c2.selectbox("Answer location", LOCATION_ORDER, format_func=location_label, key="ov_loc_where")
        if st.button("Show these answers", icon=":material/arrow_forward:", key="ov_loc_open"):
            viewstate.open_slice(run, LOCATION_FIELD, where)


def no_gold_reason(ctx: Context) -> str:
    """Why no gold question loaded, in the folder's own terms (a wrong --benchmark is the usual cause)."""
    disc = ctx.workspace.discovery
    bench = disc.benchmark
    if not disc.gold and bench is not None and not bench.is_dir():
        return f"The benchmark folder {bench.absolute()} does not exist (or is not a folder)."
    if not disc.gold and bench is not None:
        return (f"The benchmark folder {bench.absolute()} has no gold files (top-level *.jsonl files other than "
                "documents.jsonl holding questions).")
    if disc.gold:
        return (f"The gold files ({', '.join(ctx.workspace.label(str(p)) for p in disc.gold)}) yielded no valid "
                "question.")
    return "No benchmark folder is open and no gold file was uploaded."

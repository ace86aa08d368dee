"""The Trends page's frames (dashboard/views/trends.py) and the checkpoints every page reads: which run is
which step of which series, each slice's trend and the alarms on real, lasting drops, as tables and
links. No streamlit here; the statistics are scoring/trends.py, the steps scoring/steps.py.

A run's step comes from, first to last: the view (set by hand on the Data page, kept in the URL as
`step=STEP:RUN`), a steps.csv in the benchmark folder (or its runs/ folder), what a harness wrote of
the run (lmms-eval's model arguments, VLMEvalKit's model folder), its name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from dashboard.core.bounded import Bounded
from dashboard.core.links import View, page_url, with_source
from dashboard.weak import frames as W
from dashboard.weak.frames import EXTRA_FIELDS
from scoring import steps as S
from scoring.registry import METRIC_LABELS, MIN_DOCUMENTS
from scoring.slice_fields import FieldSet, QuestionValues, slice_fields
from scoring.stats import document_clusters
from scoring.trends import OVERALL, Alarm, Trend, TrendSearch, search

STEPS_FILES = (S.STEPS_FILE, f"runs/{S.STEPS_FILE}")  # where a benchmark folder's mapping is looked for
MATRIX = "matrix"  # the matrix page's URL path (views/matrix.py)
TRENDS = "trends"
NO_STEP = "-"
SEARCHES: Bounded[TrendSearch] = Bounded(16)
_FILES: Bounded[S.StepsFile] = Bounded(8)
ALARM_COLUMNS = ["Rank", "Slice", "From step", "First run after", "Before (%)", "After (%)", "Drop (pp)",
                 "Drop, 95% CI by document (pp)", "p", "q", "Documents", "Questions", "Best so far", "Lost questions",
                 "Open in matrix"]


# ----------------------------------------------------------------------------- steps


def parse_override(value: str) -> tuple[str, int | None, str] | None:
    """(run, step or None, series) of a view's `STEP:RUN` / `STEP@SERIES:RUN` / `-:RUN`; None if unreadable."""
    head, sep, run = str(value).partition(":")
    if not sep or not run:
        return None
    step_text, _, series = head.partition("@")
    if step_text == NO_STEP:
        return run, None, ""
    if not (step_text.isascii() and step_text.isdecimal()) or len(step_text) > 12:
        return None
    return run, int(step_text), series


def override_value(run: str, step: int | None, series: str = "") -> str:
    """The view's text of a step set by hand (`parse_override` reads it back); ':' is kept out of a series."""
    if step is None:
        return f"{NO_STEP}:{run}"
    series = series.replace(":", "-").replace("@", "-")
    return f"{int(step)}{'@' + series if series else ''}:{run}"


def overrides(values: Sequence[str]) -> dict[str, tuple[int | None, str]]:
    """Run -> (step, series) of the view's `steps` (a later one for a run wins)."""
    out: dict[str, tuple[int | None, str]] = {}
    for v in values:
        got = parse_override(v)
        if got:
            out[got[0]] = (got[1], got[2])
    return out


def steps_file(benchmark: Path | None) -> S.StepsFile | None:
    """The benchmark folder's steps.csv (or runs/steps.csv), read bounded (scoring.steps.read_steps_csv) and
    kept while the file is unchanged; None when there is none. A file reached through a link pointing out
    of the folder is not read."""
    if benchmark is None:
        return None
    try:
        root = benchmark.resolve()
    except OSError:
        return None
    for rel in STEPS_FILES:
        path = root / rel
        try:
            real = path.resolve()
            if not path.is_file() or not real.is_relative_to(root):
                continue
            st = os.stat(real)
        except OSError:
            continue
        key = (str(real), st.st_mtime_ns, st.st_size)
        return _FILES.get_or_build(key, _reader(real))
    return None


def _reader(path: Path):
    return lambda: S.read_steps_csv(path)


def run_hints(workspace: Any) -> dict[str, list[str]]:
    """Run -> what a harness wrote of it that may state a step: lmms-eval's model arguments, the model
    (VLMEvalKit's model folder). `workspace`: a dashboard.data.workspace.Workspace."""
    return {h.name: [x for x in (h.run.model_args, h.run.model) if x] for h in getattr(workspace, "harness", [])}


def checkpoints_of(workspace: Any, runs: Sequence[str], view_steps: Sequence[str] = ()) -> list[S.Checkpoint]:
    """Every run's checkpoint (module docstring's order of sources)."""
    found = steps_file(getattr(getattr(workspace, "discovery", None), "benchmark", None))
    return S.checkpoints(list(runs), found.rows if found else None, run_hints(workspace), overrides(view_steps))


def scored_runs(analysis: Any) -> list[str]:
    """The runs a series may hold: ranked runs with per-question scores (not official scores only). Asked
    of the run's source, not of its result: a result not held is rebuilt from the engine on each asking (at
    400 runs, every run's rows read to list them)."""
    return [r for r in analysis.ranked_names if (run := analysis.run(r)) is not None and run.recomputed]


def series(analysis: Any, workspace: Any, view_steps: Sequence[str] = ()) -> dict[str, list[S.Checkpoint]]:
    """Series name -> its checkpoints by step, over the runs with scores; the longest series first."""
    found = S.series_of(checkpoints_of(workspace, scored_runs(analysis), view_steps))
    return dict(sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def steps_table(points: Sequence[S.Checkpoint]) -> pd.DataFrame:
    """The Data page's table: run, step (empty: no checkpoint), series and where the step came from."""
    return pd.DataFrame([{"Run": c.run, "Step": c.step, "Series": c.series if c.step is not None else "",
                          "From": c.source or "no step found"} for c in points],
                        columns=["Run", "Step", "Series", "From"]).astype({"Step": "Int64"})


def edited_steps(before: pd.DataFrame, after: pd.DataFrame, current: Sequence[str]) -> list[str]:
    """The view's `steps` once the Data page's table was edited: a row whose step or series changed becomes an
    override (an emptied step: no checkpoint); the other overrides stay."""
    kept = overrides(current)
    for (_, old), (_, new) in zip(before.iterrows(), after.iterrows()):
        run = str(old["Run"])
        step = None if pd.isna(new["Step"]) else int(new["Step"])
        series_name = str(new["Series"] or "").strip() if not pd.isna(new["Series"]) else ""
        was = None if pd.isna(old["Step"]) else int(old["Step"])
        if step != was or series_name != str(old["Series"] or ""):
            kept[run] = (step, series_name)
    return [override_value(run, step, name) for run, (step, name) in kept.items()]


# ----------------------------------------------------------------------------- the search


@dataclass(frozen=True)
class Settings:
    """The page's settings (defaults as the command line's)."""

    fdr: float = 0.05
    min_questions: int = 0  # 0: max(30, 0.5 % of the questions)
    min_documents: int = MIN_DOCUMENTS


def fields_of(questions: pd.DataFrame, gold: Mapping[str, Any], page_counts: Mapping[str, int | None] | None = None,
              values: QuestionValues | None = None) -> FieldSet:
    """The finder's fields (`scoring.slice_fields.slice_fields`, as the Weak slices page lists them) of the
    questions in the frame's order, with the documents' declared page counts and, when the frame has
    them, the saved slices and tags."""
    extra = {col: [tuple(v) if isinstance(v, (list, tuple)) else v for v in questions[col].tolist()]
             for col in EXTRA_FIELDS if col in questions.columns}
    if values is not None:  # the whole gold's question_values on the same page counts: no gold read again
        return values.fields(questions.index, extra)
    return slice_fields([gold[q] for q in questions.index], page_counts, extra)


def _key(analysis: Any, runs: Sequence[str], metric: str, questions: pd.DataFrame, settings: Settings) -> tuple:
    """The search's key: the runs' identities in the engine (their run ids: a changed file is a new ingest,
    a new id, so it is never served an old result) and the benchmark's key, the questions and their saved
    slices and tags, the metric and the settings."""
    cols = [c for c in EXTRA_FIELDS if c in questions.columns]
    extra = int(pd.util.hash_pandas_object(questions[cols].astype(str), index=True).sum()) if cols else 0
    ids = hash(tuple(str(q) for q in questions.index))
    return ("trend", analysis.store.benchmark, tuple(runs), analysis.scored_ids(runs), ids, metric, extra, settings)


def trend_search(analysis: Any, runs: Sequence[str], steps: Sequence[int], metric: str, questions: pd.DataFrame,
                 settings: Settings = Settings()) -> TrendSearch:
    """Every slice's trend and the alarms of one series (runs in step order), computed once per series,
    metric, fields and settings and shared by the sessions. The runs' scores are the engine's
    (`Analysis.checkpoint_matrix`: scoring.engine.queries.checkpoint_matrix); the statistics scoring.trends'."""
    key = _key(analysis, runs, metric, questions, settings)

    def build() -> TrendSearch:
        ids = [str(q) for q in questions.index]
        got = analysis.checkpoint_matrix(runs, ids, [metric])
        clusters = document_clusters([analysis.gold[q].document_ids for q in ids])
        fields = fields_of(questions, analysis.gold, getattr(analysis, "declared_pages", None),
                           analysis.question_values() if hasattr(analysis, "question_values") else None)
        return search({metric: got[metric]}, clusters, fields, steps, runs=list(runs),
                      answered=got["attempted"], right=got["is_right"] if len(runs) else None, fdr=settings.fdr,
                      min_questions=settings.min_questions or None, min_documents=settings.min_documents)

    return SEARCHES.get_or_build(key, build)


# ----------------------------------------------------------------------------- tables and links


def pct(x: float) -> float:
    return float(x) * 100 if np.isfinite(x) else float("nan")


def matrix_view(series_name: str, conditions: Sequence[tuple[str, str]], step: int | None = None,
                saved: Mapping[str, Any] | None = None, found: TrendSearch | None = None) -> View:
    """The matrix page's view of a slice of a series: the slice's conditions as the explorer's filters
    (`dashboard.weak.frames.explorer_view`; a numeric range's values from `found`), ordered by questions
    forgotten; with `step`, only the questions right at the checkpoint before it and wrong at it and at the
    latest (an alarm's lost questions)."""
    base = W.explorer_view("", tuple(conditions), saved=saved, found=cast(Any, found))
    keys = {"mx_series": series_name, "mx_sort": "forgotten"}
    if step is not None:
        keys["mx_at"] = str(step)
    return View(filters=base.filters, tags=base.tags, matrix=keys)


def matrix_link(series_name: str, conditions: Sequence[tuple[str, str]], step: int | None = None,
                saved: Mapping[str, Any] | None = None, source: View | None = None,
                found: TrendSearch | None = None) -> str:
    """The matrix page's URL (relative to the app) of `matrix_view`, showing what `source` (the page's view)
    shows -- its folder, task, profile and steps set by hand (links.with_source; it opens in a new tab)."""
    view = matrix_view(series_name, conditions, step, saved, found)
    if source is not None:
        view = replace(with_source(view, source), steps=list(source.steps))
    return page_url(MATRIX, view)


def alarms_table(found: TrendSearch, series_name: str, saved: Mapping[str, Any] | None = None,
                 source: View | None = None) -> pd.DataFrame:
    """The kept alarms, strongest first: the slice, the first checkpoint after the change, the levels before
    and after, the drop with its 95 % interval by document, p, q, its documents and questions, the best
    checkpoint before it, the questions lost and the matrix link to them."""
    rows = []
    for k, a in enumerate(found.alarms, 1):
        rows.append({"Rank": k, "Slice": a.slice, "From step": a.step, "First run after": found.runs[a.index],
                     "Before (%)": pct(a.before), "After (%)": pct(a.after), "Drop (pp)": pct(a.gap),
                     "Drop, 95% CI by document (pp)": f"{pct(a.gap):+.1f} [{pct(a.ci_low):+.1f}, {pct(a.ci_high):+.1f}]",
                     "p": a.p, "q": a.q, "Documents": a.documents, "Questions": a.questions,
                     "Best so far": f"{pct(a.best):.1f} % at step {a.best_step}",
                     "Lost questions": len(a.forgotten),
                     "Open in matrix": matrix_link(series_name, a.conditions, a.step, saved, source, found)})
    return pd.DataFrame(rows, columns=ALARM_COLUMNS)


def folded_table(found: TrendSearch) -> pd.DataFrame:
    """The alarms folded under a kept one: what explains each."""
    return pd.DataFrame([{"Slice": a.slice, "Folded under": a.folded_under, "From step": a.step,
                          "Drop (pp)": pct(a.gap), "q": a.q} for a in found.folded],
                        columns=["Slice", "Folded under", "From step", "Drop (pp)", "q"])


def slices_table(found: TrendSearch, metric: str) -> pd.DataFrame:
    """Every slice's trend in one row: its size, the score at the first and the latest checkpoint, the noise
    band's width, the scores per checkpoint (a sparkline) and whether it alarms."""
    alarmed = {a.slice: a.step for a in found.alarms}
    folded = {a.slice: a.folded_under for a in found.folded}
    rows = []
    for t in found.trends.get(metric, []):
        rows.append({"Slice": t.slice, "Questions": t.questions, "Documents": t.documents,
                     "First (%)": pct(t.score[0]) if t.score.size else float("nan"),
                     "Latest (%)": pct(t.score[-1]) if t.score.size else float("nan"),
                     "Noise ±(pp)": 1.96 * pct(t.noise),
                     "Trend (%)": [round(pct(x), 2) for x in t.score],
                     "Alarm": (f"lasting drop from step {alarmed[t.slice]}" if t.slice in alarmed else
                               f"folded under {folded[t.slice]}" if t.slice in folded else
                               "" if t.tested else "too few documents to test")})
    return pd.DataFrame(rows, columns=["Slice", "Questions", "Documents", "First (%)", "Latest (%)", "Noise ±(pp)",
                                       "Trend (%)", "Alarm"])


def trend_table(t: Trend, steps: Sequence[int], runs: Sequence[str]) -> pd.DataFrame:
    """One slice per checkpoint: step, run, score with its 95 % interval by document, the smoothed line."""
    return pd.DataFrame({"Step": list(steps), "Run": list(runs), "Score (%)": [pct(x) for x in t.score],
                         "Low (%)": [pct(x) for x in t.low], "High (%)": [pct(x) for x in t.high],
                         "Smoothed (%)": [pct(x) for x in t.smooth]})


def alarm_text(a: Alarm, found: TrendSearch, metric: str) -> str:
    """One alarm in a sentence (no user text but the slice's name: the caller escapes it)."""
    return (f"{a.slice}: {METRIC_LABELS.get(metric, metric)} dropped {abs(pct(a.gap)):.1f} points from step {a.step} on "
            f"({pct(a.before):.1f} % → {pct(a.after):.1f} %; 95 % interval by document {pct(a.ci_low):+.1f} to "
            f"{pct(a.ci_high):+.1f} pp over {a.documents} {found.unit}s; q {a.q:.2g}) and stayed down; dropped from "
            f"the best so far, {pct(a.best):.1f} % at step {a.best_step}")


def slice_names(found: TrendSearch, metric: str) -> list[str]:
    """The slices offered for the chart: the alarms' first, then the benchmark, then the rest as listed."""
    names = [t.slice for t in found.trends.get(metric, [])]
    first = [a.slice for a in found.alarms if a.slice in names]
    return list(dict.fromkeys([*first, OVERALL, *names]))


RULE = ("An alarm at a checkpoint needs three paired tests on the same questions, documents as the unit (the sign-flip "
        "test: whole documents' differences flipped in sign), each against the level of the up to three checkpoints "
        "before it: the mean from that checkpoint to the latest is lower, that checkpoint itself is lower, and the "
        "latest checkpoint is still lower. Its p is the largest of the three; q is Benjamini–Hochberg across every "
        "slice × candidate checkpoint tested. A gentle improvement, noise and one bad checkpoint followed by recovery "
        "raise nothing. Scores are never smoothed before a test; the smoothed line and its noise band are for the "
        "eye. \"Dropped from the best so far\" is said only of an alarm: the best of many noisy checkpoints is biased "
        "upward.")
REPORT_COLUMNS = ["Slice", "From step", "First run after", "Before (%)", "After (%)",
                  "Drop (pp) [95 % interval by document]", "q", "Documents", "Best so far"]


def report_section(series_name: str, found: TrendSearch, metric: str) -> dict:
    """The stakeholder report's trend section (dashboard/report/templates/trend.html): the series, what was
    tested, the kept alarms as a table of plain text (escaped by the template) and the chart of the first
    alarm's slice (else the benchmark's) as a figure (`figure`: the report makes it a chart div)."""
    from dashboard.trends.charts import trend_chart

    label = METRIC_LABELS.get(metric, metric)
    rows = [[("Slice", a.slice), ("From step", str(a.step)), ("First run after", found.runs[a.index]),
             ("Before (%)", f"{pct(a.before):.1f}"), ("After (%)", f"{pct(a.after):.1f}"),
             ("Drop (pp) [95 % interval by document]", f"{pct(a.gap):+.1f} [{pct(a.ci_low):+.1f}, {pct(a.ci_high):+.1f}]"),
             ("q", f"{a.q:.2g}"), ("Documents", str(a.documents)),
             ("Best so far", f"{pct(a.best):.1f} % at step {a.best_step}")] for a in found.alarms]
    shown = found.alarms[0].slice if found.alarms else OVERALL
    t = found.trend(metric, shown)
    figure = trend_chart(t, found.steps, found.runs, label, [a for a in found.alarms if a.slice == shown], found.unit) \
        if t is not None else None
    return {"template": "trend.html", "series": series_name, "metric": label, "summary": found.summary(),
            "runs": ", ".join(f"{r} ({s})" for r, s in zip(found.runs, found.steps)), "rule": RULE,
            "table": {"columns": REPORT_COLUMNS, "rows": rows,
                      "numeric": ["From step", "Before (%)", "After (%)", "q", "Documents"]} if rows else None,
            "none": "" if rows else "Not enough evidence of a lasting drop in any slice.", "figure": figure}

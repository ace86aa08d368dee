"""DataFrames for the pages: questions, per-question scores of every run, leaderboard,
breakdowns, joins, reproducibility and the explorer table. No streamlit here.

Scores stay fractions in 0..1 in every frame; pages and charts turn them into percentages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from scoring.evaluate import RunResult
from scoring.metrics import Judgement
from scoring.model import GoldQuestion, ScoreRow
from scoring.problems import LoadResult, Problem
from scoring.registry import METRIC_LABELS, METRIC_SHORT_LABELS, is_success_status
from scoring.runner import columns_of, overall_of
from scoring.text import to_str

from .links import FIELDS, META, METRICS, View
from .workspace import Workspace

RECOMPUTED = "recomputed"
OFFICIAL = "scores loaded, not recomputed"
LENGTH_BUCKETS = ((10, "1–10 pages"), (50, "11–50 pages"), (200, "51–200 pages"), (500, "201–500 pages"))
LONGEST = "over 500 pages"
POSITIONS = ("first third", "middle third", "last third")
UNKNOWN = "unknown"
STANDARD_METADATA = frozenset({"domain", "reasoning_type", "difficulty", "doc_type", "evidence_sources"})


def md_escape(text: str) -> str:
    """Text that Markdown shows literally: every ASCII punctuation mark backslash-escaped (CommonMark),
    so `![](http://…)`, `<script>` or `**` in user data are shown, never rendered or fetched. Markdown
    renderers also turn `https://…`, `www.…` and `name@host` into live links whatever is escaped, so
    a zero-width space goes inside each of those words (the text reads the same)."""
    text = _AUTOLINK.sub(lambda m: "\u200b@" if m.group() == "@" else m.group()[0] + "\u200b" + m.group()[1:], text)
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in text).replace("\n", "  \n")


_AUTOLINK = re.compile(r"(?i)https?|ftp|www|mailto|@")  # what GFM's extended autolinks start from


def plotly_text(text: str) -> str:
    """Plotly labels understand a few HTML tags; escape them so a label shows as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@dataclass
class Run:
    """One row of the leaderboard: a scored prediction file, or official scores only."""

    name: str
    source: str  # RECOMPUTED or OFFICIAL
    file: str
    result: RunResult | None = None
    official: list[ScoreRow] = field(default_factory=list)

    @property
    def signature(self) -> str:
        return self.result.signature if self.result else "official scores (profile not stated)"


# ----------------------------------------------------------------------------- questions


def length_bucket(pages: int | None) -> str:
    if not pages:
        return UNKNOWN
    return next((label for limit, label in LENGTH_BUCKETS if pages <= limit), LONGEST)


def evidence_position(first_page: int | None, page_count: int | None) -> str:
    """Which third of the document holds the first gold evidence page."""
    if not first_page or not page_count or first_page > page_count:
        return UNKNOWN
    return POSITIONS[min(2, (first_page - 1) * 3 // page_count)]


def _context_pages(q: GoldQuestion, page_counts: dict[str, int | None]) -> int | None:
    counts = [page_counts.get(d.document_id) for d in q.documents]
    return sum(counts) if counts and all(counts) else None  # type: ignore[arg-type]


def _position(q: GoldQuestion, page_counts: dict[str, int | None]) -> str:
    ref = next((d for d in q.documents if d.evidence_pages), None)
    return evidence_position(min(ref.evidence_pages), page_counts.get(ref.document_id)) if ref else UNKNOWN


def _pages_text(q: GoldQuestion) -> str:
    return "; ".join(f"{d.document_id}: {', '.join(map(str, d.evidence_pages))}" for d in q.documents if d.evidence_pages)


def question_frame(gold: list[GoldQuestion], page_counts: dict[str, int | None]) -> pd.DataFrame:
    """One row per gold question, in gold order, indexed by question id."""
    rows = []
    for q in gold:
        pages = _context_pages(q, page_counts)
        rows.append({
            "question_id": q.qid,
            "question": q.question,
            "gold": q.gold_answer,
            "answer_format": q.labels("answer_format")[0],
            "rule": q.verification_rule,
            "split": q.labels("split")[0],
            "domain": q.meta("domain"),
            "reasoning_type": q.meta("reasoning_type"),
            "difficulty": q.meta("difficulty"),
            "doc_type": q.meta("doc_type"),
            "evidence_source": tuple(q.labels("evidence_source")),
            "length": length_bucket(pages),
            "position": _position(q, page_counts),
            "document": ", ".join(q.document_ids),
            "pages": _pages_text(q),
            "page_count": pages,
        } | _extra_metadata(q))
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=QUESTION_COLUMNS)
    return frame.set_index("question_id", drop=False).rename_axis(None)


def _extra_metadata(q: GoldQuestion) -> dict[str, str]:
    return {META + k: to_str(v) for k, v in q.metadata.items()
            if k not in STANDARD_METADATA and not isinstance(v, (list, dict))}


QUESTION_COLUMNS = ["question_id", "question", "gold", "answer_format", "rule", "split", "domain", "reasoning_type",
                    "difficulty", "doc_type", "evidence_source", "length", "position", "document", "pages", "page_count"]


# ----------------------------------------------------------------------------- scores


def is_success(status: str) -> bool:
    return is_success_status(status)


def score_frame(runs: list[Run], gold_ids: set[str]) -> pd.DataFrame:
    """Long table: one row per (run, gold question that the run covers)."""
    cols = ["run", "question_id", *METRICS, "status", "prediction"]
    parts = []
    for run in runs:
        if run.result is not None:  # built column by column (a run's records are not walked: see columns_of)
            c = columns_of(run.result)
            part = pd.DataFrame({k: c[k] for k in cols[1:]}, columns=cols[1:])
        else:
            part = pd.DataFrame([{"question_id": s.qid, "accuracy": s.accuracy, "token_f1": s.token_f1, "anls": s.anls,
                                  "status": s.status or "success", "prediction": s.prediction or ""}
                                 for s in run.official if s.qid in gold_ids], columns=cols[1:])
        if len(part):
            part.insert(0, "run", run.name)
            parts.append(part.astype({m: "float64" for m in METRICS}))
    if not parts:
        return pd.DataFrame([], columns=cols)
    return pd.concat(parts, ignore_index=True)


def coverage(run: Run, gold_ids: set[str]) -> dict[str, int]:
    if run.result is not None:
        c = columns_of(run.result)
        present = [st for st, answered in zip(c["status"], c["answered"]) if answered]
        missing = len(run.result.missing_ids)
        ok = {st: is_success(st) for st in set(present)}  # a handful of distinct statuses in a million rows
        failed = sum(1 for st in present if not ok[st])
        return {"answered": len(present) - failed, "missing": missing, "failed": failed}
    else:
        present = [s.status or "success" for s in run.official if s.qid in gold_ids]
        missing = len(gold_ids) - len(present)
    failed = sum(1 for s in present if not is_success(s))
    return {"answered": len(present) - failed, "missing": missing, "failed": failed}


def leaderboard(runs: list[Run], scores: pd.DataFrame, gold_ids: set[str]) -> pd.DataFrame:
    """One row per run: the three metrics in % over the questions it is scored on, coverage, signature."""
    rows = []
    for run in runs:
        if run.result is not None:
            overall = overall_of(run.result)
        else:
            part = scores[scores["run"] == run.name]
            overall = {"count": len(part)} | {m: (part[m].mean() if len(part) else 0.0) for m in METRICS}
        rows.append({"Run": run.name, "Source": run.source, "Questions": overall["count"],
                     **{METRIC_LABELS[m] + " (%)": 100 * overall[m] for m in METRICS},
                     **{k.capitalize(): v for k, v in coverage(run, gold_ids).items()},
                     "Signature": run.signature})
    frame = pd.DataFrame(rows, columns=["Run", "Source", "Questions", "Accuracy (%)", "Token F1 (%)", "ANLS (%)",
                                        "Answered", "Missing", "Failed", "Signature"])
    return frame.sort_values("Accuracy (%)", ascending=False, kind="stable").reset_index(drop=True)


def breakdown(scores: pd.DataFrame, questions: pd.DataFrame, field_name: str, positions=None) -> pd.DataFrame:
    """Mean of each metric per (run, label of field_name); evidence_source counts a question once per source.
    `positions`: each score row's position in `questions` (-1 for an id that is not there), when the
    caller keeps it (Analysis does): joining a million rows on their string ids took most of an
    overview's time at 50 runs x 20,000 questions; here the join is by position."""
    if positions is None:
        positions = question_positions(scores, questions)
    keep = positions >= 0
    pos = positions[keep]
    base = {"run": scores["run"][keep].reset_index(drop=True),
            **{m: scores[m][keep].reset_index(drop=True) for m in METRICS}}
    col = questions[field_name]
    if field_name == "evidence_source":
        ex = col.reset_index(drop=True).explode()  # index: the question's position
        labels = pd.DataFrame({"q": ex.index.to_numpy(), "label": ex.to_numpy(dtype=object)})
        merged = pd.DataFrame({"q": pos, **base}).merge(labels, on="q", how="inner").drop(columns="q")
    else:
        merged = pd.DataFrame({**base, "label": col.to_numpy(dtype=object)[pos]})
    merged["label"] = merged["label"].fillna(UNKNOWN).astype(str)
    out = merged.groupby(["run", "label"], sort=True).agg(
        count=("run", "size"), **{m: (m, "mean") for m in METRICS}).reset_index()
    return out


def question_positions(scores: pd.DataFrame, questions: pd.DataFrame):
    """Each score row's position in `questions` (indexed by question id), -1 when it is not there."""
    import numpy as np

    if not len(scores):
        return np.zeros(0, dtype=np.intp)
    return questions.index.get_indexer(scores["question_id"])


def skipped_rows(ws: Workspace) -> dict[str, str]:
    """Run name -> what went wrong reading its file, for runs whose prediction or score file had rows
    that could not be read (their question ids are unknown, so the run may look complete)."""
    out: dict[str, str] = {}
    for pf in ws.predictions:
        if pf.loaded.skipped:
            out[pf.run] = f"{pf.loaded.skipped} row{'s' if pf.loaded.skipped != 1 else ''} skipped, ids unknown"
    by_file = {str(path): res for path, res in zip(ws.discovery.scores, ws.scores)}
    for system, rows in ws.official().items():
        res = by_file.get(rows[0].file)
        if system not in out and res is not None and res.skipped:
            out[system] = (f"{res.skipped} row{'s' if res.skipped != 1 else ''} of {ws.label(rows[0].file)} skipped, "
                           "ids unknown")
    return out


def top_runs(board: pd.DataFrame, metric: str, n: int = 10, keep: tuple[str, ...] = ()) -> list[str]:
    """The n best runs of a leaderboard by `metric` (a METRICS name), plus the runs in `keep`
    (baselines), in leaderboard order."""
    col = METRIC_LABELS[metric] + " (%)"
    best = set(board.sort_values(col, ascending=False, kind="stable")["Run"].head(n)) | set(keep)
    return [r for r in board["Run"] if r in best]


# ----------------------------------------------------------------------------- data page


def join_frame(runs: list[Run], gold_ids: set[str]) -> pd.DataFrame:
    """How each run joins the gold: matched, missing, extra ids, and the statuses met."""
    rows = []
    for run in runs:
        if run.result is not None:
            ids = {r.qid for r in run.result.results if r.prediction is not None}
            extra = len(run.result.extra_ids)
            statuses = pd.Series([r.status for r in run.result.results if r.prediction is not None], dtype=object)
        else:
            ids = {s.qid for s in run.official}
            extra = len(ids - gold_ids)
            statuses = pd.Series([s.status or "success" for s in run.official if s.qid in gold_ids], dtype=object)
        counts = statuses.value_counts()
        rows.append({"Run": run.name, "Source": run.source, "File": run.file, "Gold questions": len(gold_ids),
                     "Matched": len(ids & gold_ids), "Missing": len(gold_ids - ids), "Extra (not scored)": extra,
                     "Failed statuses": ", ".join(f"{s}: {n}" for s, n in counts.items() if not is_success(str(s))) or "none"})
    return pd.DataFrame(rows, columns=["Run", "Source", "File", "Gold questions", "Matched", "Missing",
                                       "Extra (not scored)", "Failed statuses"])


def repro_frame(result: RunResult, official: list[ScoreRow], tolerance: float = 1e-6) -> pd.DataFrame:
    """Questions whose recomputed score differs from the official one, with per-metric differences
    (recomputed minus official). Official rows for questions the run does not score are left out."""
    mine = {r.qid: r for r in result.results}
    rows = []
    for s in official:
        r = mine.get(s.qid)
        if r is None:
            continue
        diffs = {m: getattr(r, m) - getattr(s, m) for m in METRICS}
        if any(abs(d) > tolerance for d in diffs.values()):
            rows.append({"question_id": s.qid, **{f"{METRIC_LABELS[m]} official": getattr(s, m) for m in METRICS},
                         **{f"{METRIC_LABELS[m]} recomputed": getattr(r, m) for m in METRICS},
                         **{f"Δ {METRIC_LABELS[m]}": d for m, d in diffs.items()}})
    cols = ["question_id", *(f"{METRIC_LABELS[m]} {k}" for k in ("official", "recomputed") for m in METRICS),
            *(f"Δ {METRIC_LABELS[m]}" for m in METRICS)]
    return pd.DataFrame(rows, columns=cols)


def compared_count(result: RunResult, official: list[ScoreRow]) -> int:
    mine = {r.qid for r in result.results}
    return sum(1 for s in official if s.qid in mine)


def documents_frame(locations: dict, page_counts: dict[str, int | None], questions: pd.DataFrame, label) -> pd.DataFrame:
    used = questions["document"].str.split(", ").explode().value_counts() if len(questions) else pd.Series(dtype=int)
    rows = [{"Document": doc_id, "Found": loc.path is not None,
             "File": label(str(loc.path)) if loc.path else "", "How": loc.how + (f"; refused file field {loc.refused!r}" if loc.refused else ""),
             "Pages": page_counts.get(doc_id), "Questions": int(used.get(doc_id, 0))}
            for doc_id, loc in locations.items()]
    return pd.DataFrame(rows, columns=["Document", "Found", "File", "How", "Pages", "Questions"])


# ----------------------------------------------------------------------------- explorer


def _matches(series: pd.Series, wanted: list[str]) -> pd.Series:
    if series.name == "evidence_source":
        return series.map(lambda values: any(v in wanted for v in values))
    return series.astype(str).isin(wanted)


def filter_questions(questions: pd.DataFrame, scores: pd.DataFrame, view: View) -> pd.DataFrame:
    """The questions that pass every filter of the view. Score ranges and statuses are checked
    against the chosen runs: with `view.match == "every"` a question passes the ranges when every
    chosen run's scores are inside them, with "any" when at least one chosen run's scores are all
    inside them; a status filter passes when any chosen run has one of the statuses."""
    keep = pd.Series(True, index=questions.index)
    for name, wanted in view.filters.items():
        if name in questions.columns and wanted:
            keep &= _matches(questions[name], wanted)
    mine = scores[scores["run"].isin(view.runs)]
    if view.ranges:
        inside = pd.Series(True, index=mine.index)
        for metric, (lo, hi) in view.ranges.items():
            pct = mine[metric] * 100
            inside &= (pct >= lo - 1e-9) & (pct <= hi + 1e-9)
        if view.match == "any":
            keep &= questions.index.isin(set(mine[inside]["question_id"]))
        else:
            keep &= ~questions.index.isin(set(mine[~inside]["question_id"]))
    if view.status:
        keep &= questions.index.isin(set(mine[mine["status"].isin(view.status)]["question_id"]))
    if view.search:
        keep &= _search(questions, mine, view.search)
    return questions[keep]


SEARCHED = "question ids, questions, gold answers and the chosen runs' predictions"


def _search(questions: pd.DataFrame, scores: pd.DataFrame, text: str) -> pd.Series:
    """Case-insensitive substring search in SEARCHED."""
    needle = text.strip().casefold()
    if not needle:
        return pd.Series(True, index=questions.index)
    hit = pd.Series(False, index=questions.index)
    for col in ("question_id", "question", "gold"):
        hit |= questions[col].astype(str).str.casefold().str.contains(needle, regex=False)
    by_pred = scores[scores["prediction"].str.casefold().str.contains(needle, regex=False)]["question_id"]
    return hit | questions.index.isin(set(by_pred))


def explorer_frame(questions: pd.DataFrame, scores: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """questions × runs: id, question and gold, then per run its three scores, prediction and status,
    then the metadata. A run with no score for a question leaves its cells empty."""
    base = questions[["question_id", "question", "gold"]].copy()
    for run in runs:
        part = scores[scores["run"] == run].set_index("question_id")
        for col in (*METRICS, "prediction", "status"):
            base[run_column(run, col)] = part[col].reindex(base.index)
    meta = questions[["answer_format", "reasoning_type", "evidence_source", "document", "pages"]].copy()
    meta["evidence_source"] = meta["evidence_source"].map(", ".join)
    return pd.concat([base, meta], axis=1).reset_index(drop=True)


def run_column(run: str, col: str) -> str:
    return f"{run} · {METRIC_LABELS.get(col, col)}"


SHORT = METRIC_SHORT_LABELS | {"prediction": "Prediction", "status": "Status"}
# A run's evidence columns (dashboard.grounding.explorer_columns named with run_column(run, label)): short labels
EVIDENCE_SHORT = {"Page precision": "Pages P", "Page recall": "Pages R", "Grounding": "Ground.", "Answer location": "Location"}
HEADERS = {"question_id": "Id", "question": "Question", "gold": "Gold", "answer_format": "Format",
           "reasoning_type": "Reasoning type", "evidence_source": "Evidence sources", "document": "Document",
           "pages": "Evidence pages"}
QUESTION_GROUP, META_GROUP = "Question", "Metadata"


def grouped(frame: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """The explorer table with two header rows: each run's columns grouped under its name with short
    labels (Acc, F1, ANLS, Prediction, Status); the question's columns under "Question", the rest
    under "Metadata". Values are untouched; `flat_column` gives back explorer_frame's names."""
    owner = {run_column(run, col): (run, SHORT[col]) for run in runs for col in SHORT}
    owner |= {run_column(run, col): (run, EVIDENCE_SHORT[col]) for run in runs for col in EVIDENCE_SHORT}
    tuples = []
    for col in frame.columns:
        if col in owner:
            tuples.append(owner[col])
        else:
            group = QUESTION_GROUP if col in ("question_id", "question", "gold") else META_GROUP
            tuples.append((group, HEADERS.get(col, col)))
    out = frame.copy()
    out.columns = pd.MultiIndex.from_tuples(tuples)
    return out


def flat_column(header: tuple[str, str]) -> str:
    """The explorer_frame name of a `grouped` header."""
    group, label = header
    if group in (QUESTION_GROUP, META_GROUP):
        return next((k for k, v in HEADERS.items() if v == label), label)
    return run_column(group, next(k for k, v in (SHORT | EVIDENCE_SHORT).items() if v == label))


def with_run_columns(frame: pd.DataFrame, extra: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """explorer_frame's `frame` with `extra` (indexed by question id, columns named run_column(run, x))
    joined on, each run's extra columns right after its own (after its Status), so that `grouped`
    keeps a run's columns under one header."""
    if extra.empty and not len(extra.columns):
        return frame
    joined = frame.join(extra, on="question_id")
    order: list[str] = []
    for col in frame.columns:
        order.append(col)
        for run in runs:
            if col == run_column(run, "status"):
                mine = {run_column(run, label) for label in EVIDENCE_SHORT}
                order += [c for c in extra.columns if c in mine and c not in order]
    order += [c for c in joined.columns if c not in order]
    return joined[order]


DISPLAY_CHARS = 2_000  # characters of one text shown in a code block
TABLE_CHARS = 300  # characters of one text shown in a table cell
COPY_CHARS = 10_000  # a text longer than this is cut before it is copied into a table (Analysis.display_scores)


def clip_text(text: str | None, limit: int = DISPLAY_CHARS) -> str | None:
    """`text` cut to at most `limit` characters for display, saying how long it was (a cut text is
    not cut again)."""
    if text is None or len(text) <= limit:
        return text
    suffix = f"… [{len(text):,} characters, cut for display]"
    return text[:max(limit // 2, limit - len(suffix))] + suffix


def clipped(frame: pd.DataFrame, limit: int = TABLE_CHARS) -> pd.DataFrame:
    """`frame` with every text cell longer than `limit` cut (`clip_text`): what a table shows. A
    50 MB prediction sent to the browser's grid froze the explorer for minutes."""
    out = frame
    for col in frame.columns:
        series = frame[col]
        if not (series.dtype == object or pd.api.types.is_string_dtype(series)):
            continue
        try:
            lengths = series.str.len()
        except AttributeError:  # not text after all
            continue
        long = (lengths > limit).fillna(False).to_numpy(dtype=bool)
        if long.any():
            out = out.copy() if out is frame else out
            out[col] = _clip_where(series, long, limit)
    return out


def _clip_where(series: pd.Series, long: np.ndarray, limit: int) -> pd.Series:
    """`series` with the texts at `long` cut (`clip_text`). Only those texts pass through Python:
    an Arrow-backed column is patched in Arrow (item assignment into it, row by row, or a round
    trip of a million answers through Python objects, took most of a second)."""
    if isinstance(series.array, pd.arrays.ArrowStringArray):
        import pyarrow as pa
        import pyarrow.compute as pc

        values = pa.array(series)
        mask = pa.array(long)
        cut = pa.array([clip_text(v, limit) for v in pc.filter(values, mask).to_pylist()], type=values.type)
        patched = pd.arrays.ArrowStringArray(pc.replace_with_mask(values, mask, cut), dtype=series.dtype)
        return pd.Series(patched, index=series.index, name=series.name)
    values = series.to_numpy(dtype=object, copy=True)
    for i in np.flatnonzero(long):
        values[i] = clip_text(values[i], limit)
    return pd.Series(values, index=series.index, dtype=series.dtype, name=series.name)


def filter_fields(questions: pd.DataFrame) -> list[str]:
    """The standard fields, then every other metadata key found in the gold (`meta.<key>`)."""
    return [f for f in FIELDS if f in questions.columns] + [c for c in questions.columns if c.startswith(META)]


def field_options(questions: pd.DataFrame) -> dict[str, list[str]]:
    """The values each filter field takes, sorted."""
    out = {}
    for name in filter_fields(questions):
        col = questions[name]
        values = (col.explode() if name == "evidence_source" else col).dropna()
        # str() of each value, as the filter compares them; unique first, so each distinct value is converted once
        out[name] = sorted({str(v) for v in (values.unique() if pd.api.types.is_string_dtype(values) else values)})
    return out


# ----------------------------------------------------------------------------- all of it


@dataclass
class Analysis:
    """Everything the pages show for one workspace and profile. Built once per (workspace, profile)
    and cached; treated as read-only, except the breakdown and leaderboard memos."""

    runs: list[Run]
    questions: pd.DataFrame
    scores: pd.DataFrame
    _breakdowns: dict[str, pd.DataFrame] = field(default_factory=dict)
    _leaderboard: pd.DataFrame | None = None
    _positions: object = None  # each score row's position in `questions` (numpy), for breakdowns

    @classmethod
    def build(cls, runs: list[Run], gold: list[GoldQuestion], page_counts: dict[str, int | None]) -> Analysis:
        questions = question_frame(gold, page_counts)
        return cls(runs, questions, score_frame(runs, set(questions.index)))

    @property
    def gold_ids(self) -> set[str]:
        return set(self.questions.index)

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def run(self, name: str) -> Run | None:
        return next((r for r in self.runs if r.name == name), None)

    def leaderboard(self) -> pd.DataFrame:
        """Computed once (a page asks for it several times per rerun); a copy, which callers may change."""
        if self._leaderboard is None:
            self._leaderboard = leaderboard(self.runs, self.scores, self.gold_ids)
        return self._leaderboard.copy()

    def display_scores(self) -> pd.DataFrame:
        """`scores` with the predictions longer than COPY_CHARS cut to TABLE_CHARS (computed once);
        the same object as `scores` when none is that long. Copying a 50 MB answer through every
        explorer rerun cost seconds; the table cuts the rest (`clipped`) on the rows it shows, so a
        million ordinary answers are not cut here (most of a second, at 50 runs x 20,000)."""
        if "display_scores" not in self._breakdowns:
            shown = self.scores
            if len(shown):
                lengths = shown["prediction"].str.len()
                huge = (lengths > COPY_CHARS).fillna(False).to_numpy(dtype=bool)
                if huge.any():
                    shown = shown.assign(prediction=_clip_where(shown["prediction"], huge, TABLE_CHARS))
            self._breakdowns["display_scores"] = shown
        return self._breakdowns["display_scores"]

    def field_options(self) -> dict[str, list[str]]:
        """`field_options(self.questions)`, computed once."""
        if "field_options" not in self._breakdowns:
            self._breakdowns["field_options"] = field_options(self.questions)  # type: ignore[assignment]
        return self._breakdowns["field_options"]  # type: ignore[return-value]

    def breakdown(self, field_name: str) -> pd.DataFrame:
        if field_name not in self._breakdowns:
            if self._positions is None:
                self._positions = question_positions(self.scores, self.questions)
            self._breakdowns[field_name] = breakdown(self.scores, self.questions, field_name, self._positions)
        return self._breakdowns[field_name]


def trace_frame(ex: Judgement) -> pd.DataFrame:
    """The Accuracy trace of a scoring.metrics.Judgement as (step, value) text rows."""
    return pd.DataFrame(ex.trace(), columns=["Step", "Value"])


def load_results(ws: Workspace) -> list[tuple[str, list[str], LoadResult]]:
    """(kind, files, LoadResult) of everything the workspace read."""
    out: list[tuple[str, list[str], LoadResult]] = []
    if ws.discovery.gold:
        out.append(("gold", [str(p) for p in ws.discovery.gold], ws.gold))
    if ws.discovery.documents:
        out.append(("documents", [str(ws.discovery.documents)], ws.documents))
    out += [("predictions", [str(pf.path)], pf.loaded) for pf in ws.predictions]
    out += [("scores", [str(p)], res) for p, res in zip(ws.discovery.scores, ws.scores)]
    if ws.discovery.summaries:
        out.append(("summary", [str(p) for p in ws.discovery.summaries], ws.summary))
    return out


def files_frame(ws: Workspace) -> pd.DataFrame:
    rows = []
    for kind, files, res in load_results(ws):
        rows.append({"Kind": kind, "File": ", ".join(ws.label(f) for f in files), "Rows read": res.rows_read,
                     "Loaded": res.loaded, "Skipped": res.skipped, "Blank lines": res.blank_lines,
                     "Errors": len(res.errors), "Warnings": len(res.problems) - len(res.errors)})
    return pd.DataFrame(rows, columns=["Kind", "File", "Rows read", "Loaded", "Skipped", "Blank lines", "Errors", "Warnings"])


def all_problems(ws: Workspace) -> list[Problem]:
    out = [*ws.discovery.problems, *ws.problems]
    for _, _, res in load_results(ws):
        out += res.problems
    return out


def problem_line(p: Problem, label) -> str:
    """`file:line — severity: message`, with uploaded files under their own names."""
    where = label(p.file) + (f":{p.line}" if p.line is not None else "")
    return f"{where} — {p.severity}: {p.message}"

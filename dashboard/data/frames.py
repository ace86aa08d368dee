"""The Data page's frames: what was read from each file, every problem, joins, reproducibility. No streamlit here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.core import settings
from dashboard.core.analysis import Analysis, is_success
from dashboard.data.workspace import Workspace
from scoring import guard
from scoring.evaluate import RunResult
from scoring.formats.base import ANLS_FAMILY, CONFLICT_RULE, gold_text
from scoring.mmlongbench import NOT_EVALUATED
from scoring.model import ScoreRow
from scoring.problems import LoadResult, Omitted, Problem
from scoring.profiles import PROFILES, get_profile
from scoring.registry import METRIC_LABELS, METRICS
from scoring.runner import column_list, compact_columns

REPEATED_PREDICTION = "repeated prediction ids"  # scoring.loaders: a later row replaced an earlier one (its skipped count)
REPEATED_GOLD = "repeated question ids"
REPEATED_SCORE = "one row per question and system"  # scoring.loaders.load_scores: a repeat dropped, the first kept


def _n(count: int, noun: str = "row") -> str:
    return f"{count:,} {noun}{'s' if count != 1 else ''}"


@dataclass(frozen=True)
class Skipped:
    """Why rows of one run's file are not in its scores: rows that could not be read (their
    question ids are unknown, so the run may look complete), rows replaced by a later row with the
    same id (the later one is scored), rows dropped as repeats of an earlier row (the first kept)."""

    unreadable: int = 0
    replaced: int = 0
    repeated: int = 0
    file: str = ""  # a score file's label, when the run's rows came from one
    unevaluated: int = 0  # MMLongBench-Doc result rows without `pred`: not evaluated yet (their ids are known)

    def text(self) -> str:
        """The leaderboard's Problems cell, e.g. `3 rows skipped, ids unknown; 1 row replaced by a later one`."""
        parts = []
        if self.unevaluated:
            parts.append(f"{_n(self.unevaluated)} not evaluated (no `pred`)")
        if self.unreadable:
            parts.append(f"{_n(self.unreadable)}{' of ' + self.file if self.file else ''} skipped, ids unknown")
        if self.replaced:
            parts.append(f"{_n(self.replaced)} replaced by a later row with the same id")
        if self.repeated:
            parts.append(f"{_n(self.repeated)} dropped as repeats of an earlier row")
        return "; ".join(parts)

    def reasons(self) -> str:
        """The overview warning's sentence part: each reason that applied, with what it means."""
        parts = []
        if self.unevaluated:
            parts.append(f"{_n(self.unevaluated)} had no `pred` (not evaluated yet: the benchmark's run_api.py "
                         "writes the file after every sample), so the question counts as missing")
        if self.unreadable:
            parts.append(f"{_n(self.unreadable)} could not be read (their question ids are unknown, so the scores "
                         "may leave questions out)")
        if self.replaced:
            parts.append(f"{_n(self.replaced)} repeated an id and {'were' if self.replaced != 1 else 'was'} replaced "
                         "by the later row with that id (the later answer is scored)")
        if self.repeated:
            parts.append(f"{_n(self.repeated)} repeated a question and {'were' if self.repeated != 1 else 'was'} "
                         "dropped (the first row is kept)")
        return "; ".join(parts)


def _skipped(res: LoadResult, file: str = "") -> Skipped | None:
    if not res.skipped:
        return None
    replaced = sum(1 for p in res.problems if p.kind == REPEATED_PREDICTION)
    repeated = sum(1 for p in res.problems if p.field == "question_id" and p.expected == REPEATED_SCORE)
    unevaluated = sum(1 for p in res.problems if p.kind == NOT_EVALUATED)
    return Skipped(max(0, res.skipped - replaced - repeated - unevaluated), replaced, repeated, file, unevaluated)


def skipped_reasons(ws: Workspace) -> dict[str, Skipped]:
    """Run name -> why rows of its prediction or score file are not in its scores."""
    out: dict[str, Skipped] = {}
    for pf in ws.predictions:
        got = _skipped(pf.loaded)
        if got is not None:
            out[pf.run] = got
    by_file = {str(path): res for path, res in zip(ws.discovery.scores, ws.scores)}
    for system, rows in ws.official().items():
        res = by_file.get(rows[0].file)
        got = _skipped(res, ws.label(rows[0].file)) if system not in out and res is not None else None
        if got is not None:
            out[system] = got
    return out


def skipped_rows(ws: Workspace) -> dict[str, str]:
    """Run name -> what went wrong reading its file (`Skipped.text`), for runs whose prediction or
    score file had rows that are not in its scores."""
    return {run: s.text() for run, s in skipped_reasons(ws).items()}


def skipped_warning(reasons: dict[str, Skipped], runs: list[str]) -> str:
    """The overview's warning for the runs shown: per run, each reason that applied; "" for none."""
    shown = [(r, reasons[r]) for r in runs if r in reasons]
    return " ".join(f"{run}: of the file's rows, {s.reasons()}." for run, s in shown)


@dataclass(frozen=True)
class GoldTrouble:
    """What of the gold is not as the leaderboard counts it: rows dropped (unreadable, or repeating
    an id: the first kept) and questions kept with a gold no right answer can match, by reason."""

    unreadable: int = 0
    repeated: int = 0
    marked: dict[str, int] = field(default_factory=dict)  # GoldQuestion.gold_problem -> questions

    @property
    def dropped(self) -> int:
        return self.unreadable + self.repeated

    def messages(self, loaded: int) -> list[str]:
        out = []
        if self.dropped:
            why = []
            if self.unreadable:
                why.append(f"{_n(self.unreadable)} could not be read")
            if self.repeated:
                why.append(f"{_n(self.repeated)} repeated a question id (the first row is kept)")
            out.append(f"{_n(self.dropped, 'gold row')} {'were' if self.dropped != 1 else 'was'} dropped "
                       f"({', '.join(why)}): the leaderboard scores the {loaded:,} questions loaded, without "
                       f"{'them' if self.dropped != 1 else 'it'}.")
        if self.marked:
            n = sum(self.marked.values())
            out.append(f"{_n(n, 'question')} {'have' if n != 1 else 'has'} a gold answer no right answer can match ("
                       + ", ".join(f"{reason}: {k:,}" for reason, k in self.marked.items())
                       + "): they are kept and scored as the release does, so every run's right answer scores 0 on "
                       "them.")
        return out


def gold_trouble(ws: Workspace) -> GoldTrouble:
    res = ws.gold
    repeated = sum(1 for p in res.problems if p.kind == REPEATED_GOLD)
    marked: dict[str, int] = {}
    for q in res.items:
        if q.gold_problem:
            marked[q.gold_problem] = marked.get(q.gold_problem, 0) + 1
    return GoldTrouble(max(0, res.skipped - repeated), repeated, marked)


def gold_mark(q, label=str) -> str:
    """The question detail's warning for a gold that no right answer can match (`q.gold_problem`)."""
    where = f"{label(q.file) or q.file}{f':{q.line}' if q.line is not None else ''}"
    return (f"This question's gold cannot be matched by a right answer: {q.gold_problem} ({where}). It is kept and "
            "scored as the release does, against the gold text shown, so a right answer scores 0 on it.")


def failed_zeroed(an: Analysis, profile: str) -> dict[str, int]:
    """Run name -> answers with a failed status that the profile scored 0 whatever their text
    (failed:zero, e.g. the default profile), for recomputed runs that have any (the engine's counts);
    {} under a profile that scores the text of failed answers (the release, xldocbench-1519)."""
    if not get_profile(profile).failed_status_zero:
        return {}
    out = {}
    for run in an.runs:
        if run.recomputed:
            n = an.coverage(run.name)["failed"]
            if n:
                out[run.name] = n
    return out


def failed_zeroed_text(zeroed: dict[str, int], profile: str) -> str:
    total = sum(zeroed.values())
    runs = ", ".join(f"{run} ({n:,})" for run, n in zeroed.items())
    release = next((p.name for p in PROFILES.values() if not p.failed_status_zero), "")
    return (f"Profile {profile} scored {_n(total, 'answer')} 0 because their status is not a success "
            f"(failed:zero in the signature), whatever their text: {runs}."
            + (f" Profile {release}, the public release's evaluator, scores their text instead, so its numbers for "
               "these runs differ." if release else ""))


def join_frame(an: Analysis) -> pd.DataFrame:
    """How each run joins the gold: matched, missing, extra ids, and the statuses met (the engine's counts)."""
    rows = []
    gold_ids = an.gold_ids
    statuses = an.status_counts()
    joins = an.joins()
    for run in an.runs:
        if run.recomputed:
            matched, extra = joins[run.name].matched, int(an.facts().get(run.name, {}).get("extra_ids") or 0)
        else:
            ids = {s.qid for s in run.official}
            matched = len(ids & gold_ids)
            extra = len(ids - gold_ids)
        counts = statuses.get(run.name, {})  # most first
        rows.append({"Run": run.name, "Source": run.source, "File": run.file, "Gold questions": len(gold_ids),
                     "Matched": matched, "Missing": len(gold_ids) - matched, "Extra (not scored)": extra,
                     "Failed statuses": ", ".join(f"{s}: {n}" for s, n in counts.items() if not is_success(str(s))) or "none"})
    return pd.DataFrame(rows, columns=["Run", "Source", "File", "Gold questions", "Matched", "Missing",
                                       "Extra (not scored)", "Failed statuses"])


def repro_frame(result: RunResult, official: list[ScoreRow], tolerance: float = 1e-6) -> pd.DataFrame:
    """Questions whose recomputed score differs from the official one, with per-metric differences
    (recomputed minus official). Official rows for questions the run does not score are left out."""
    mine, scores = _scores_by_id(result)
    rows = []
    for s in official:
        i = mine.get(s.qid)
        if i is None:
            continue
        r = {m: float(scores[m][i]) for m in METRICS}
        diffs = {m: r[m] - getattr(s, m) for m in METRICS}
        if any(abs(d) > tolerance for d in diffs.values()):
            rows.append({"question_id": s.qid, **{f"{METRIC_LABELS[m]} official": getattr(s, m) for m in METRICS},
                         **{f"{METRIC_LABELS[m]} recomputed": r[m] for m in METRICS},
                         **{f"Δ {METRIC_LABELS[m]}": d for m, d in diffs.items()}})
    cols = ["question_id", *(f"{METRIC_LABELS[m]} {k}" for k in ("official", "recomputed") for m in METRICS),
            *(f"Δ {METRIC_LABELS[m]}" for m in METRICS)]
    return pd.DataFrame(rows, columns=cols)


def _scores_by_id(result: RunResult) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """(question id -> position, metric -> its scores): a run's scores read from its columns."""
    c = compact_columns(result)
    positions = {q: i for i, q in enumerate(column_list(c["question_id"]))}
    return positions, {m: np.asarray(c[m], dtype=np.float64) for m in METRICS}


def compared_count(result: RunResult, official: list[ScoreRow]) -> int:
    mine = set(column_list(compact_columns(result)["question_id"]))
    return sum(1 for s in official if s.qid in mine)


def documents_frame(locations: dict, page_counts: dict[str, int | None], questions: pd.DataFrame, label) -> pd.DataFrame:
    used = questions["document"].str.split(", ").explode().value_counts() if len(questions) else pd.Series(dtype=int)
    rows = [{"Document": doc_id, "Found": loc.path is not None,
             "File": label(str(loc.path)) if loc.path else "", "How": loc.how + (f"; refused file field {loc.refused!r}" if loc.refused else ""),
             "Pages": page_counts.get(doc_id), "Questions": int(used.get(doc_id, 0))}
            for doc_id, loc in locations.items()]
    return pd.DataFrame(rows, columns=["Document", "Found", "File", "How", "Pages", "Questions"])


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


def problem_line(p: Problem | Omitted, label: Callable[[str], str]) -> str:
    """`file:line — severity: message`, with uploaded files under their own names."""
    shown = label(p.file)
    where = (p.file if shown in ("", ".") else shown) + (f":{p.line}" if p.line is not None else "")
    return f"{where} — {p.severity}: {p.message}"


HARNESS_NAMES = {"lmms-eval": "lmms-eval", "vlmevalkit": "VLMEvalKit", "longdocurl": "LongDocURL"}
# the harnesses' overall keys (the rest of what they report is per category: `reported_breakdown`)
_OVERALL = {"vlmevalkit": ("Overall", "overall_acc", "overall_f1")}
_PRINTED_PERCENT = {("vlmevalkit", "Overall")}  # VLMEvalKit's DocVQA/InfoVQA _acc.csv: a percentage already


def _reported_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def reported_header(harness: str, key: str) -> str:
    """A reported number's header: the harness, its own key, and whether it is shown as printed (a
    percentage already) or as the fraction it printed x100."""
    name = HARNESS_NAMES.get(harness, harness)
    return f"{name} {key} %" if (harness, key) in _PRINTED_PERCENT else f"{name} {key} ×100"


def _is_overall(harness: str, key: str) -> bool:
    keys = _OVERALL.get(harness)
    return keys is None or key in keys


def reported_columns(ws: Workspace) -> tuple[pd.DataFrame, dict[str, str]]:
    """What each harness run's own files report overall, beside the recomputed scores: one column per
    (harness, key) under its own name (`reported_header`: lmms-eval's `anls,none` and
    `mmlongbench_doc_acc,none`, VLMEvalKit's `Overall`, `overall_acc`, `overall_f1`), in % (a
    fraction x100, the header says so); a row per harness run (the app's run name). Returns the frame
    and each column's help."""
    rows: dict[str, dict[str, float]] = {}
    helps: dict[str, str] = {}
    for h in ws.harness:
        order = _OVERALL.get(h.run.harness, ())
        for key, value in sorted(h.run.reported.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 0):
            number = _reported_number(value)
            if number is None or not _is_overall(h.run.harness, key):
                continue
            col = reported_header(h.run.harness, key)
            percent = (h.run.harness, key) in _PRINTED_PERCENT
            rows.setdefault(h.name, {})[col] = number if percent else 100 * number
            where = next((f for f in h.run.files if f.endswith((".json", ".csv"))), h.run.files[-1] if h.run.files else "")
            helps[col] = (f"{HARNESS_NAMES.get(h.run.harness, h.run.harness)}'s own number `{key}` as its files report it "
                          f"({where.rsplit('/', 1)[-1]}{', a percentage' if percent else ', a fraction shown x100'}); "
                          "empty for runs of another harness")
    frame = pd.DataFrame([{"Run": run, **cols} for run, cols in rows.items()], columns=["Run", *helps])
    return frame, helps


def reported_breakdown(ws: Workspace) -> pd.DataFrame:
    """The rest of what the harnesses report, per category (VLMEvalKit's MMLongBench_DOC `_score.csv`:
    text, layout, table, chart, image, single-page, multi-page, unanswerable; its DocVQA `_acc.csv`
    splits): one row per category, a column per run, in % (the header names harness and scale)."""
    cols: dict[str, dict[str, float]] = {}
    for h in ws.harness:
        for key, value in h.run.reported.items():
            number = _reported_number(value)
            if number is None or _is_overall(h.run.harness, key):
                continue
            percent = (h.run.harness, "Overall") in _PRINTED_PERCENT and h.run.family == ANLS_FAMILY
            col = f"{h.name} ({HARNESS_NAMES.get(h.run.harness, h.run.harness)}{', %' if percent else ', ×100'})"
            cols.setdefault(col, {})[key] = number if percent else 100 * number
    categories = list(dict.fromkeys(k for c in cols.values() for k in c))
    return pd.DataFrame({"Category": categories, **{c: [v.get(k, np.nan) for k in categories] for c, v in cols.items()}},
                        columns=["Category", *cols])


def harness_frame(ws: Workspace) -> pd.DataFrame:
    """One row per harness run: where it comes from (harness, version, task, model arguments, date), its
    files, and the harness's own aggregate numbers as its files state them (each under its own key,
    as printed: lmms-eval's and VLMEvalKit's MMLongBench_DOC's are fractions, VLMEvalKit's DocVQA
    `Overall` a percentage)."""
    rows = []
    for h in ws.harness:
        run = h.run
        rows.append({"Run": h.name, "Harness": run.harness, "Version": run.version or "not stated", "Task": run.task,
                     "Model": run.model, "Model arguments": run.model_args, "Date": run.date or "not stated",
                     "Older eval": run.older, "Lines": len(run.rows), "Questions": len({r.qid for r in run.rows}),
                     "Reported": ", ".join(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}"
                                                        for k, v in run.reported.items()),
                     "Files": ", ".join(run.files)})
    return pd.DataFrame(rows, columns=["Run", "Harness", "Version", "Task", "Model", "Model arguments", "Date", "Older eval",
                                       "Lines", "Questions", "Reported", "Files"])


def conflicts_frame(ws: Workspace) -> pd.DataFrame:
    """The questions to which two harness files give different gold: one row per gold stated, with
    where (file:line or sheet row), whether it is the one kept, and how the question's gold was decided."""
    rows = []
    for c, decided in ws.conflicts:
        for k, v in enumerate(c.variants):
            rows.append({"Task": c.task, "question_id": c.qid, "Gold": gold_text(v.question),
                         "Stated in": ", ".join(f"{f}:{line}" if line is not None else f for f, line in v.where),
                         "Files": len(v.files), "Kept": k == 0 and decided == CONFLICT_RULE,
                         "Decided by": decided})
    return pd.DataFrame(rows, columns=["Task", "question_id", "Gold", "Stated in", "Files", "Kept", "Decided by"])


def conflict_text(ws: Workspace, where: str = "The Data page names each") -> str:
    """The banner count of conflicting gold ("" for none); `where` the conflicts are named."""
    if not ws.conflicts:
        return ""
    n = len({(c.task, c.qid) for c, _ in ws.conflicts})
    how = {decided for _, decided in ws.conflicts}
    rule = next(iter(how)) if len(how) == 1 else "see the Data page for each"
    if len(how) == 1 and rule.startswith("the benchmark's gold"):
        rule = "the benchmark's gold is used"
    return (f"{_n(n, 'question')} {'get' if n != 1 else 'gets'} different gold from different harness files: {rule}. "
            f"{where}, with both golds and where each file states them.")


def harness_notes(ws: Workspace) -> pd.DataFrame:
    """The rows a harness's file changed on the way (a blank cell read as nan, a formula's cached 0, a
    cell cut at 32,767 characters, ...): run, question, file:line and what happened."""
    rows = []
    for h in ws.harness:
        for r in h.run.rows:
            for note in r.notes:
                rows.append({"Run": h.name, "question_id": (h.qids or {}).get(r.qid, r.qid) if h.qids is not None else r.qid,
                             "Harness id": r.qid, "Where": f"{r.file}:{r.line}" if r.line is not None else r.file, "What": note})
    return pd.DataFrame(rows, columns=["Run", "question_id", "Harness id", "Where", "What"])


def read_limits_note(limits: guard.Limits) -> str:
    """What the Data page says of the read limits (scoring/guard.py, settings LENS_READ_MEMORY and
    LENS_READ_BUDGET_S): each file a user or a harness left is read where it can be killed."""
    return (f"Each file is read where it can be killed: in a worker process that may take "
            f"{guard.format_memory(limits.memory)} of memory ({settings.READ_MEMORY.name}) and {limits.budget_s:g} s "
            f"({settings.READ_BUDGET.name}) -- a JSON, JSON-lines or CSV file {guard.BOUNDED_FACTOR} times its size and "
            f"a second per {guard.BOUNDED_RATE >> 20} MB when that is more, and one under "
            f"{guard.INLINE_MAX_BYTES >> 20} MB in the server itself, too small to do harm. A file that needs more is "
            "named in the problems and not read; the rest loads.")

"""The Data page's frames: what was read from each file, every problem, joins, reproducibility. No streamlit here."""

from __future__ import annotations

import pandas as pd

from dashboard.core.analysis import Run, is_success
from dashboard.core.workspace import Workspace
from scoring.evaluate import RunResult
from scoring.mmlongbench import NOT_EVALUATED
from scoring.model import ScoreRow
from scoring.problems import LoadResult, Problem
from scoring.registry import METRIC_LABELS, METRICS


def skipped_rows(ws: Workspace) -> dict[str, str]:
    """Run name -> what went wrong reading its file, for runs whose prediction or score file had rows
    that could not be read (their question ids are unknown, so the run may look complete)."""
    out: dict[str, str] = {}
    for pf in ws.predictions:
        if pf.loaded.skipped:
            unevaluated = sum(1 for p in pf.loaded.problems if p.kind == NOT_EVALUATED)  # MMLongBench-Doc: no `pred`
            rest = pf.loaded.skipped - unevaluated
            parts = [f"{unevaluated} row{'s' if unevaluated != 1 else ''} not evaluated (no `pred`)"] if unevaluated else []
            parts += [f"{rest} row{'s' if rest != 1 else ''} skipped, ids unknown"] if rest > 0 else []
            out[pf.run] = "; ".join(parts)
    by_file = {str(path): res for path, res in zip(ws.discovery.scores, ws.scores)}
    for system, rows in ws.official().items():
        res = by_file.get(rows[0].file)
        if system not in out and res is not None and res.skipped:
            out[system] = (f"{res.skipped} row{'s' if res.skipped != 1 else ''} of {ws.label(rows[0].file)} skipped, "
                           "ids unknown")
    return out


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
    shown = label(p.file)
    where = (p.file if shown in ("", ".") else shown) + (f":{p.line}" if p.line is not None else "")
    return f"{where} — {p.severity}: {p.message}"

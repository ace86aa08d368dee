"""VLMEvalKit's `--work-dir` output, read as the harness left it.

Accepted: the work dir, one model folder, or one prediction table `<model>_<DATASET>.xlsx|.tsv|.json`.
Layouts: `<model>/<eval_id>/<file>` with links `<model>/<file>` to it (relative since 2026-04,
absolute before: those dangle on any other machine and are named), and the flat layout of real
files in `<model>/` (before 2024-11). Each (model, dataset, eval id) is read once (links resolved,
de-duplicated by real path); per (model, dataset) the newest eval id comes first and older ones
are kept, marked `older`. Beside each prediction table: DocVQA/InfoVQA's `_acc.csv` (the reported
`Overall`, ×100) and `_results.xlsx` (per-row `eval_match`: the official per-question score);
MMLongBench_DOC's judge sheet `_<judge>.xlsx` (its `pred` and `score`) and `_<judge>_score.csv`.
Tables are read as pandas hands them to the harness (scoring.formats.tables). `*.pkl` files are
never opened."""

from __future__ import annotations

import json
import math
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..harness_rules import vlm_anls_distance, vlm_answers, vlm_docvqa_score
from ..problems import Problem
from ..reading import read_literal
from .base import (
    ANLS_FAMILY,
    MMLONGBENCH_FAMILY,
    HarnessQuestion,
    HarnessRow,
    HarnessRun,
    SourceLoad,
    Walk,
    conflict_problems,
    display,
    settle_gold,
    walk,
)
from .tables import Table, is_na, read_table

__all__ = ["NAME", "DATASETS", "recognise", "load", "harness_text"]

NAME = "vlmevalkit"
DATASETS: dict[str, str] = {
    "DocVQA_VAL": ANLS_FAMILY,
    "DocVQA_TEST": ANLS_FAMILY,
    "InfoVQA_VAL": ANLS_FAMILY,
    "InfoVQA_TEST": ANLS_FAMILY,
    "MMLongBench_DOC": MMLONGBENCH_FAMILY,
}
# datasets of VLMEvalKit this reader lists but does not read (another benchmark, or another scoring)
OTHER_DATASETS = ("SLIDEVQA", "SLIDEVQA_MINI", "DUDE", "DUDE_MINI", "LongDocURL", "MMLongBench_32K", "MMLongBench_128K",
                  "MMLongBench_256K", "MMLongBench_512K", "ChartQA_TEST", "TextVQA_VAL", "OCRVQA_TEST")
PRED_EXT = (".xlsx", ".tsv", ".json")
EVAL_ID = re.compile(r"^T\d{8}(?:_G[0-9a-fA-F]+|-\d{6})$")
_NP_FLOAT = re.compile(r"np\.float(?:16|32|64)\(([^()]*)\)")
_NOT_JUDGE = ("_score", "results", "_acc", "_fine", "_metrics", "_rating", "_config", "_meta", "_tmp", "_response",
              "_processed")
DERIVED = re.compile(r"_(?:acc|fine|metrics|results|detailed_results|score|tmp|response|processed|rating|config|meta|"
                     r"extract|longdocurl_eval|[A-Za-z0-9.\-]+_score)$")


def harness_text(value: Any) -> str:
    """`str(value)` as the harness takes it from a pandas cell: `nan` for a missing cell."""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return str(value)


def _split_name(stem: str, model: str) -> tuple[str, str] | None:
    """(model, dataset) of a prediction table's stem, else None (an evaluation output or no table)."""
    for dataset in sorted(DATASETS, key=len, reverse=True):
        if stem.endswith("_" + dataset) and len(stem) > len(dataset) + 1:
            return stem[: -len(dataset) - 1], dataset
    if model and stem.startswith(model + "_"):
        rest = stem[len(model) + 1:]
        if any(rest.startswith(d + "_") for d in DATASETS) or DERIVED.search(rest):
            return None
        return model, rest
    return None


def _model_folder(path: Path) -> tuple[Path, str]:
    """(the model folder, eval id) of a file at <model>/<eval_id>/<f> or <model>/<f>."""
    parent = path.parent
    if EVAL_ID.match(parent.name):
        return parent.parent, parent.name
    return parent, ""


def _candidates(w: Walk) -> list[tuple[Path, str, str]]:
    out = []
    for p in w.files:
        if p.suffix.lower() not in PRED_EXT:
            continue
        folder, _ = _model_folder(p)
        split = _split_name(p.stem, folder.name)
        if split:
            out.append((p, split[0], split[1]))
    return out


def recognise(path: Path) -> bool:
    if path.is_file():
        folder, _ = _model_folder(path)
        split = _split_name(path.stem, folder.name)
        return path.suffix.lower() in PRED_EXT and split is not None and split[1] in DATASETS
    if path.is_dir():
        return any(d in DATASETS for _, _, d in _candidates(walk(path, max_depth=3)))
    return False


def _eval_key(eval_id: str) -> tuple[str, str]:
    return (eval_id[1:9], eval_id[9:]) if eval_id else ("", "")


def load(path: Path) -> SourceLoad:
    out = SourceLoad(format=NAME, root=str(path))
    if path.is_file() or path.is_symlink():
        # a table given by itself: its folder is the folder given (a link into an eval-id folder
        # below it is followed there, where its evaluation files are)
        root = path.parent
        w = walk(root, max_depth=1)
        only: list[Path] | None = [path]
        if path not in w.files:
            named = [p for p in w.problems if p.file == path.name]
            out.problems.extend(named or [Problem.error(path.name, None, None, "a readable prediction table", "nothing to read")])
            return out
        w.problems = [p for p in w.problems if p.file == path.name]
    else:
        root = path
        w = walk(path, max_depth=4)
        only = None
    out.problems.extend(w.problems)
    by_real: dict[Path, tuple[Path, str, str]] = {}
    for p, model, dataset in _candidates(w):
        if only is not None and p not in only:
            continue
        real = w.files[p]
        # prefer the path that sits in the eval-id folder (where its evaluation files are)
        if real not in by_real or (p == real or EVAL_ID.match(p.parent.name)):
            by_real[real] = (p, model, dataset)
    groups: dict[tuple[str, str], list[tuple[str, Path, Path]]] = defaultdict(list)
    for real, (p, model, dataset) in by_real.items():
        shown = display(p, root)
        if dataset not in DATASETS:
            out.problems.append(Problem.warning(shown, None, None, f"a dataset this reader knows ({', '.join(DATASETS)})",
                                                f"dataset {dataset!r} (listed, not read)", skipped=True, kind="unknown datasets"))
            continue
        eval_id = real.parent.name if EVAL_ID.match(real.parent.name) else _model_folder(p)[1]
        groups[(model, dataset)].append((eval_id, p, real))
    with _LOAD_LOCK:  # one load at a time uses the table cache
        _CACHE.clear()
        _SAID.clear()
        _prefetch([_main_sheet(real, DATASETS[dataset], _beside(w, real))
                   for (_, dataset), found in groups.items() for _, _, real in found])
        stated: dict[str, list[tuple[HarnessRow, HarnessQuestion]]] = {}  # dataset -> (row, the gold its row states)
        try:
            _read_groups(groups, root, w, out, stated)
        finally:
            _CACHE.clear()
            _SAID.clear()
    for dataset, rows in stated.items():  # one gold per index; sheets that disagree are named (settle_gold)
        questions, conflicts = settle_gold(dataset, rows)
        out.gold[dataset] = questions
        out.conflicts.extend(conflicts)
        out.problems.extend(p for c in conflicts for p in conflict_problems(c))
    return out


def _read_groups(groups: dict[tuple[str, str], list[tuple[str, Path, Path]]], root: Path, w: Walk, out: SourceLoad,
                 stated: dict[str, list[tuple[HarnessRow, HarnessQuestion]]]) -> None:
    for (model, dataset), found in sorted(groups.items()):
        found.sort(key=lambda t: _eval_key(t[0]), reverse=True)
        for k, (eval_id, p, real) in enumerate(found):
            run = _read_run(p, real, root, model, dataset, eval_id, w, out, stated.setdefault(dataset, []))
            if run is None:
                continue
            run.older = k > 0
            run.name = f"{model}/{dataset}" + (f"@{eval_id}" if len(found) > 1 and eval_id else "") + (
                f"@{k}" if len(found) > 1 and not eval_id else "")
            out.runs.append(run)


def _beside(w: Walk, real: Path) -> dict[str, Path]:
    """Files in the same folder as the real prediction table, by name (walked paths)."""
    return w.beside(real)


_LOAD_LOCK = threading.Lock()
_CACHE: dict[Path, Table] = {}  # the tables of the load in progress (prefetched in parallel; emptied after it)
_SAID: set[Path] = set()  # the tables whose remarks are in the load's problems already


def _said(path: Path, table: Table, shown: str, out: SourceLoad) -> None:
    """The table's remarks (cells not read, where a cap or a damaged file cut it) as problems, once a load."""
    if path in _SAID:
        return
    _SAID.add(path)
    for r in table.remarks:
        out.problems.append(Problem.warning(shown, r.line, None, r.expected, r.got, kind=r.kind))


def _table(path: Path, shown: str, out: SourceLoad, need: tuple[str, ...]) -> Table | None:
    table = _CACHE.get(path) or read_table(path)
    _CACHE[path] = table
    _said(path, table, shown, out)
    if table.error:
        out.problems.append(Problem.error(shown, None, None, "a readable table", table.error))
        return None
    missing = [c for c in need if c not in table.columns]
    if missing:
        out.problems.append(Problem.error(shown, 1, ", ".join(missing), f"the columns {', '.join(need)}",
                                          f"a sheet without {', '.join(missing)} (columns: {', '.join(table.columns[:12])})",
                                          kind="sheets with missing columns"))
        return None
    out.files.append(shown)
    return table


def _scalar_csv(path: Path, shown: str, out: SourceLoad) -> Table | None:
    table = read_table(path)
    _said(path, table, shown, out)
    if table.error:
        out.problems.append(Problem.error(shown, None, None, "a readable table", table.error))
        return None
    out.files.append(shown)
    return table


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _read_run(p: Path, real: Path, root: Path, model: str, dataset: str, eval_id: str, w: Walk,
              out: SourceLoad, stated: list[tuple[HarnessRow, HarnessQuestion]]) -> HarnessRun | None:
    shown = display(p, root)
    family = DATASETS[dataset]
    stem = real.stem
    need: tuple[str, ...] = ("index", "question", "answer", "prediction")
    if family == MMLONGBENCH_FAMILY:
        need = need + ("answer_format", "evidence_sources", "evidence_pages")
    beside = _beside(w, real)
    main = _main_sheet(real, family, beside)
    table = None
    if main != real:  # the evaluation sheet holds the prediction table's columns too: read once
        probe = _CACHE.get(main) or read_table(main)
        _CACHE[main] = probe
        if not probe.error and all(c in probe.columns for c in need):
            table = probe
            _said(main, probe, display(main, root), out)
    if table is None:
        table = _table(real, shown, out, need)
    if table is None:
        return None
    run = HarnessRun(name="", harness=NAME, task=dataset, family=family, model=model, date=eval_id, files=[shown])
    seen: set[str] = set()
    for row, line, notes in zip(table.rows, table.lines, table.notes):
        qid = harness_text(row.get("index"))
        if qid in seen:
            out.problems.append(Problem.error(shown, line, "index", "each index once", f"index {qid} again",
                                              kind="duplicate rows"))
            continue
        seen.add(qid)
        run.rows.append(HarnessRow(qid=qid, prediction=harness_text(row.get("prediction")), official=None, file=shown,
                                   line=line, raw=dict(row), notes=tuple(f"{c}: {n}" for c, n in notes.items())))
        stated.append((run.rows[-1], _question(qid, row, family)))  # the gold this sheet row states
    if family == ANLS_FAMILY:
        _docvqa_outputs(run, stem, beside, root, out)
    else:
        _mmlongbench_outputs(run, stem, beside, root, out)
    return run


def _judges(stem: str, beside: dict[str, Path]) -> list[str]:
    # the judge's sheet is written in PRED_FORMAT (xlsx by default, tsv or json when set)
    return sorted(n for n in beside if n.startswith(stem + "_") and n.endswith(PRED_EXT)
                  and not n[len(stem) + 1:].rsplit(".", 1)[0].endswith(_NOT_JUDGE))


def _main_sheet(real: Path, family: str, beside: dict[str, Path]) -> Path:
    """The sheet a run's rows are read from: the evaluation sheet when there is one (DocVQA's
    `_results.xlsx`, MMLongBench's judge sheet: the prediction table plus the evaluation's columns),
    else the prediction table."""
    stem = real.stem
    if family == ANLS_FAMILY and f"{stem}_results.xlsx" in beside:
        return beside[f"{stem}_results.xlsx"]
    if family == MMLONGBENCH_FAMILY:
        judges = _judges(stem, beside)
        if judges:
            return beside[judges[0]]
    return real


PARALLEL_MIN_BYTES = 2_000_000  # below this the tables are read in this process


def _prefetch(paths: list[Path]) -> None:
    """Read the tables into _CACHE, on every core when there are several large ones."""
    from ..workers import bare_main, discard_shared_pool, shared_pool

    try:
        size = sum(p.stat().st_size for p in paths)
    except OSError:
        return
    pool = shared_pool() if len(paths) > 1 and size >= PARALLEL_MIN_BYTES else None
    if pool is None:
        return
    from concurrent.futures.process import BrokenProcessPool

    try:
        with bare_main():
            futures = {p: pool.submit(read_table, p) for p in paths}
        for p, f in futures.items():
            _CACHE[p] = f.result()
    except (BrokenProcessPool, OSError):
        discard_shared_pool()  # read in this process instead, as they come


# a run's own columns (its answer and what the evaluation wrote beside it): never part of the gold
RUN_COLUMNS = frozenset({"prediction", "thinking", "extra_records", "res", "log", "pred", "score", "eval_gt", "eval_pred",
                         "eval_match", "eval_score", "verifier_score", "verifier_match"})


def _question(qid: str, row: dict[str, Any], family: str) -> HarnessQuestion:
    """The gold a sheet row states: the dataset's columns (not the run's: RUN_COLUMNS)."""
    meta = {k: v for k, v in row.items() if k not in RUN_COLUMNS and k not in ("question", "answer") and not is_na(v)}
    if family == ANLS_FAMILY:
        answers, _ = vlm_answers(harness_text(row.get("answer")))
        return HarnessQuestion(qid=qid, question=harness_text(row.get("question")), answers=tuple(answers),
                               answer_raw=row.get("answer"), metadata=meta)
    fmt = row.get("answer_format")
    pages: tuple[int, ...] = ()
    ok, value = read_literal(str(row.get("evidence_pages")))  # under the literal caps (scoring/limits.py)
    if ok and isinstance(value, list):
        pages = tuple(int(x) for x in value if isinstance(x, int) and not isinstance(x, bool))
    sources = meta.get("evidence_sources")
    if isinstance(sources, str) and sources.startswith("[") and len(sources) <= 10_000:
        # a Python-repr list, as in MMLongBench-Doc's samples.json: read as the benchmark's loader reads it (a
        # list of labels); the row's own cell stays as it is for VLMEvalKit's scoring (row.raw)
        ok, value = read_literal(sources)
        if ok and isinstance(value, list):
            meta["evidence_sources"] = [str(v) for v in value]
    return HarnessQuestion(qid=qid, question=harness_text(row.get("question")), answers=(harness_text(row.get("answer")),),
                           answer_format="None" if is_na(fmt) else harness_text(fmt), answer_raw=row.get("answer"),
                           format_raw=fmt, document="" if is_na(row.get("doc_id")) else harness_text(row.get("doc_id", "")),
                           evidence_pages=pages, metadata=meta)


def _docvqa_outputs(run: HarnessRun, stem: str, beside: dict[str, Path], root: Path, out: SourceLoad) -> None:
    acc = next((beside[n] for n in (f"{stem}_acc.csv", f"{stem}_acc.json") if n in beside), None)
    if acc is not None:  # EVAL_FORMAT: csv (default) or json (a list of one record)
        shown = display(acc, root)
        table = _scalar_csv(acc, shown, out)
        if table is not None and table.rows:
            run.reported = {c: table.rows[0][c] for c in table.columns if _number(table.rows[0][c]) is not None}
            run.extra["acc_columns"] = list(table.columns)
            run.files.append(shown)
    results = beside.get(f"{stem}_results.xlsx")
    if results is None:
        return
    shown = display(results, root)
    table = _table(results, shown, out, ("index", "eval_match"))
    if table is None:
        return
    run.files.append(shown)
    by_index = {harness_text(r.get("index")): (r, line) for r, line in zip(table.rows, table.lines)}
    for row in run.rows:
        found = by_index.get(row.qid)
        if found is None:
            continue
        r, line = found
        try:
            # numpy 2 writes a numpy float inside a list as `np.float64(0.5)`: read the number
            distances = _distances(harness_text(r.get("eval_match")))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            out.problems.append(Problem.warning(shown, line, "eval_match", "a list of distances",
                                                harness_text(r.get("eval_match"))[:60]))
            continue
        row.official = vlm_docvqa_score(distances)


def _distances(text: str) -> list[float]:
    """An `eval_match` cell: a list of floats, JSON-readable as the harness writes it (fast), else a
    Python literal (numpy 2 writes a numpy float inside a list as `np.float64(0.5)`)."""
    try:
        value = json.loads(text)
    except ValueError:
        ok, value = read_literal(_NP_FLOAT.sub(r"\1", text))  # under the literal caps (scoring/limits.py)
        if not ok:
            raise ValueError("not a list of distances") from None
    if not isinstance(value, list):
        raise TypeError("not a list")
    return [float(x) for x in value]


def _mmlongbench_outputs(run: HarnessRun, stem: str, beside: dict[str, Path], root: Path, out: SourceLoad) -> None:
    judges = _judges(stem, beside)
    if not judges:
        out.problems.append(Problem.warning(
            display(beside.get(stem + ".xlsx", Path(stem)), root), None, None,
            f"the judge's sheet {stem}_<judge>.xlsx beside it",
            "none: the run was not evaluated; the harness scores the judge's extracted answer, so nothing is scored",
            kind="runs without a judge sheet"))
        run.extra["judged"] = False
        return
    name = judges[0]
    judge = name[len(stem) + 1:].rsplit(".", 1)[0]
    if len(judges) > 1:
        out.problems.append(Problem.warning(display(beside[name], root), None, None, "one judge's sheet",
                                            f"{len(judges)}: {', '.join(judges)}; {name} is read"))
    run.extra["judge"] = judge
    shown = display(beside[name], root)
    table = _table(beside[name], shown, out, ("index", "answer", "answer_format", "pred"))
    if table is None:
        return
    run.files.append(shown)
    run.extra["judged"] = True
    by_index = {harness_text(r.get("index")): (r, line, notes) for r, line, notes in zip(table.rows, table.lines, table.notes)}
    for row in run.rows:
        found = by_index.get(row.qid)
        if found is None:
            out.problems.append(Problem.warning(shown, None, "index", f"a judged row for index {row.qid}", "none"))
            continue
        r, line, notes = found
        row.response = row.prediction
        row.prediction = harness_text(r.get("pred"))
        row.raw = dict(r)
        row.notes = tuple(f"{c}: {n}" for c, n in notes.items())
        row.official = _number(r.get("score"))
    score = beside.get(f"{stem}_{judge}_score.csv")
    if score is not None:
        shown_s = display(score, root)
        t = _scalar_csv(score, shown_s, out)
        if t is not None:
            if not {"category", "avg_score"} <= set(t.columns):
                out.problems.append(Problem.error(shown_s, 1, "category, avg_score", "the columns category, num, avg_score",
                                                  ", ".join(t.columns), kind="sheets with missing columns"))
            else:
                run.reported = {harness_text(r["category"]): r["avg_score"] for r in t.rows
                                if _number(r.get("avg_score")) is not None}
                run.files.append(shown_s)


def distances(answers: list[str], prediction: str) -> list[float]:
    """`eval_match` of one row as the harness computes it."""
    return [vlm_anls_distance(a, prediction) for a in answers]

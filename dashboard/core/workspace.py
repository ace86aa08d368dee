"""Finding and loading a benchmark's files (spec part E). No streamlit here.

A benchmark folder holds gold files (every top-level *.jsonl except documents.jsonl),
documents.jsonl, docs/<document_id>.pdf, runs/*.json[l] prediction files and results/ score files
(scores.jsonl, summary.json, official/*.report.json|*.per_question.csv). Loading never raises on
user data: every problem is kept as a `scoring.problems.Problem` and shown on the Data page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from dashboard.core.paths import DocLocation, Sources, locate_document
from dashboard.evidence.pdf import DocCheck, inspect_document
from scoring.cli import DEFAULT_GOLD
from scoring.loaders import load_documents, load_gold, load_scores, load_summary
from scoring.model import DocumentRecord, GoldQuestion, Prediction, ScoreRow
from scoring.problems import LoadResult, Problem

# ----------------------------------------------------------------------------- discovery


@dataclass
class Discovery:
    benchmark: Path | None
    docs_dir: Path | None
    documents: Path | None
    gold: list[Path] = field(default_factory=list)
    predictions: list[Path] = field(default_factory=list)
    scores: list[Path] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    layout: str = "lens"  # or MMLONGBENCH: data/samples.json, data/documents/*.pdf, results/res_*.json

    def all_files(self) -> list[Path]:
        docs = [self.documents] if self.documents else []
        return [*self.gold, *docs, *self.predictions, *self.scores, *self.summaries]


def _gold_order(path: Path) -> tuple[int, str]:
    return (DEFAULT_GOLD.index(path.name) if path.name in DEFAULT_GOLD else len(DEFAULT_GOLD), path.name)


def prediction_files(target: Path) -> list[Path]:
    """The prediction files a --runs path names: the file itself, or a folder's *.json and *.jsonl."""
    if target.is_dir():
        return sorted(p for p in target.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl"))
    return [target]


def _classify_scores(target: Path, disc: Discovery) -> None:
    files = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
    for p in files:
        name = p.name.lower()
        if name == "summary.json":
            disc.summaries.append(p)
        elif name.endswith((".jsonl", ".csv", ".report.json")) or not target.is_dir():
            disc.scores.append(p)


MMLONGBENCH = "mmlongbench"  # Discovery.layout of a clone of MMLongBench-Doc


def is_mmlongbench_samples(path: Path) -> bool:
    """Whether a gold file is MMLongBench-Doc's samples.json: a .json file whose text starts as a JSON
    list of objects with `doc_id` and `answer_format` (its first 4 kB looked at; never raises)."""
    if path.suffix.lower() != ".json":
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8-sig", "replace").lstrip()
    except OSError:
        return path.name == "samples.json"
    return head.startswith("[") and '"doc_id"' in head and '"answer_format"' in head


def _discover_mmlongbench(bench: Path | None, src: Sources, disc: Discovery) -> Discovery:
    """MMLongBench-Doc's own layout: gold data/samples.json, PDFs in data/documents/, each
    results/res_*.json (and every --runs file) a result file read with its official `score`."""
    disc.layout = MMLONGBENCH
    if bench is not None:
        disc.docs_dir = bench / "data" / "documents"
        disc.gold = [bench / "data" / "samples.json"]  # unless gold files are given (_take_gold)
        if (bench / "results").is_dir():
            disc.predictions.extend(sorted(p for p in (bench / "results").glob("res_*.json") if p.is_file()))
    _take_gold(src, disc)
    for target in src.runs:
        disc.predictions.extend(prediction_files(target))
    disc.predictions = _unique(disc.predictions)
    return disc


def _blank(path: Path) -> bool:
    """Whether a file holds nothing but white space (an empty upload). Never raises."""
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 16):
                if chunk.strip():
                    return False
    except OSError:
        return False  # unreadable: the loader says so
    return True


def _take_gold(src: Sources, disc: Discovery) -> None:
    """The gold files given (uploaded, or --gold) replace the benchmark's -- except empty ones: an empty
    upload never replaces the benchmark's gold with nothing. Each empty file is named, and when every
    file given is empty the benchmark's gold is kept and the problem says so."""
    if not src.gold:
        return
    given = [p for p in src.gold if not _blank(p)]
    kept = bool(disc.gold) and not given
    for p in src.gold:
        if p not in given:
            disc.problems.append(Problem.warning(str(p), None, None, "gold question records",
                                                 "the file is empty: " + ("the benchmark's gold is kept" if kept
                                                                          else "not read"), skipped=True,
                                                 kind="empty gold files"))
    if not kept:
        disc.gold = given


def discover(src: Sources) -> Discovery:
    bench = src.benchmark
    disc = Discovery(benchmark=bench, docs_dir=None, documents=src.documents)
    if bench is not None and not bench.is_dir():
        disc.problems.append(Problem.error(str(bench), None, None, "a benchmark folder", "no such folder"))
        bench = None
    if (src.gold and all(is_mmlongbench_samples(p) for p in src.gold)) or (
            not src.gold and bench is not None and (bench / "data" / "samples.json").is_file()
            and not any(p.is_file() for p in bench.glob("*.jsonl"))):
        return _discover_mmlongbench(bench, src, disc)
    if bench is not None:
        disc.docs_dir = bench / "docs"
        if disc.documents is None and (bench / "documents.jsonl").is_file():
            disc.documents = bench / "documents.jsonl"
        top = [p for p in bench.glob("*.jsonl") if p.is_file() and p.name != "documents.jsonl"]
        disc.gold = []
        for p in sorted(top, key=_gold_order):
            if looks_like_gold(p):
                disc.gold.append(p)
            else:
                disc.problems.append(Problem.warning(str(p), None, None, "gold question records (question, answer)",
                                                     "none in its first rows: not read as gold", skipped=True,
                                                     kind="files that are not gold"))
        if (bench / "runs").is_dir():
            disc.predictions.extend(prediction_files(bench / "runs"))
        if (bench / "results").is_dir():
            _classify_scores(bench / "results", disc)
    _take_gold(src, disc)
    for target in src.runs:
        disc.predictions.extend(prediction_files(target))
    for target in src.scores:
        _classify_scores(target, disc)
    disc.predictions = _unique(disc.predictions)
    disc.scores = _unique(disc.scores)
    disc.summaries = _unique(disc.summaries)
    if not disc.gold:
        where = str(src.benchmark) if src.benchmark else "the data panel"
        disc.problems.append(Problem.error(where, None, None, "gold question files (*.jsonl)", "none found"))
    return disc


def _unique(paths: list[Path]) -> list[Path]:
    """Each file once, by resolved path (`--benchmark B --runs B/runs` names B/runs twice)."""
    seen: set[Path] = set()
    out = []
    for p in paths:
        try:
            key = p.resolve()
        except (OSError, RuntimeError):  # a symlink loop: keep the path as given
            key = p
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


GOLD_SNIFF_ROWS = 50  # non-blank lines read to decide whether a top-level .jsonl file holds gold


def _gold_like(row: object) -> bool:
    if not isinstance(row, dict):
        return False
    if "questionId" in row and "answers" in row:  # DocVQA
        return True
    answer = row.get("answer")
    return "question" in row or (isinstance(answer, dict) and "value" in answer)


def looks_like_gold(path: Path, rows: int = GOLD_SNIFF_ROWS) -> bool:
    """Whether a top-level .jsonl file holds gold questions: one of its first `rows` non-blank
    lines is an object with a `question` (or an `answer` object with a `value`, or DocVQA's
    `questionId` and `answers`). A file none of whose first lines even parse as JSON is read as
    gold, so that its problems are listed; an empty file too. Never raises."""
    import json

    parsed = 0
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                if len(raw) > (1 << 20):
                    return True  # a huge line: let the loader report it
                try:
                    row = json.loads(raw.removeprefix(b"\xef\xbb\xbf"))
                except (ValueError, RecursionError):
                    rows -= 1
                    if rows <= 0:
                        break
                    continue
                parsed += 1
                if _gold_like(row):
                    return True
                rows -= 1
                if rows <= 0:
                    break
    except OSError:
        return True  # unreadable: the loader says so
    return parsed == 0


def fingerprint(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime_ns) per file: a plain, hashable cache key that changes when a file does."""
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(p), -1, -1))
    return tuple(out)






# ----------------------------------------------------------------------------- documents
















# ----------------------------------------------------------------------------- loading


@dataclass
class PredictionFile:
    run: str
    path: Path
    sha256: str
    loaded: LoadResult[Prediction]


@dataclass
class Workspace:
    discovery: Discovery
    gold: LoadResult[GoldQuestion]
    documents: LoadResult[DocumentRecord]
    predictions: list[PredictionFile]
    scores: list[LoadResult[ScoreRow]]
    summary: LoadResult[dict]
    locations: dict[str, DocLocation]
    page_counts: dict[str, int | None]
    labels: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)  # the workspace's own (duplicates, refused paths)

    def label(self, path: str) -> str:
        """How a file is named on screen: uploads by their own name, benchmark files relative to it."""
        if path in self.labels:
            return self.labels[path]
        bench = self.discovery.benchmark
        if bench is not None and Path(path) == bench:
            return str(bench.absolute())  # the folder itself: its real path, not "."
        if bench is not None and Path(path).is_relative_to(bench):
            return Path(path).relative_to(bench).as_posix()
        return path

    def official(self) -> dict[str, list[ScoreRow]]:
        """Score rows per system; a system met in several files keeps its first file's rows."""
        out: dict[str, list[ScoreRow]] = {}
        owner: dict[str, str] = {}
        for res in self.scores:
            for row in res.items:
                if row.system in owner and owner[row.system] != row.file:
                    continue
                owner.setdefault(row.system, row.file)
                out.setdefault(row.system, []).append(row)
        return out


def run_name(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl", ".json"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _load_predictions(paths: Sequence[Path], problems: list[Problem]) -> list[PredictionFile]:
    """Each prediction file as scoring.loaders.load_predictions reads it -- from the cache of parsed
    files (dashboard/store.py, keyed by the file's sha256) when its bytes were read before."""
    from dashboard.core.store import PredictionStore, load_predictions_cached
    from scoring._gc import paused_gc

    store = PredictionStore()  # the cache folder as configured now ($LENS_CACHE_DIR at call time)
    with paused_gc():  # a million small acyclic records: one collection after them, not one per file
        return _read_predictions(paths, problems, store, load_predictions_cached)


def _read_predictions(paths, problems, store, read) -> list[PredictionFile]:
    out: list[PredictionFile] = []
    taken: set[str] = set()
    for path in paths:
        try:
            sha = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            sha = ""
        name = base = run_name(path)
        k = 2
        while name in taken:
            name, k = f"{base} ({k})", k + 1
        if name != base:
            problems.append(Problem.warning(str(path), None, "run name", "a run name used once", f"{base!r} again (shown as {name!r})"))
        taken.add(name)
        out.append(PredictionFile(name, path, sha, read(path, sha, store)))
    return out


def _scores_by_system(res: LoadResult[ScoreRow]) -> dict[str, dict[str, tuple[float, float, float]]]:
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for r in res.items:
        out.setdefault(r.system, {})[r.qid] = (r.accuracy, r.token_f1, r.anls)
    return out


def _duplicate_systems(paths: Sequence[Path], scores: list[LoadResult[ScoreRow]]) -> list[Problem]:
    """A system met in a second file is ignored there; say so when the two files disagree
    (a release report and its per-question CSV hold the same scores, and are not worth a warning)."""
    first: dict[str, tuple[Path, dict]] = {}
    out = []
    for path, res in zip(paths, scores):
        for system, rows in _scores_by_system(res).items():
            if system not in first:
                first[system] = (path, rows)
            elif first[system][1] != rows:
                kept = first[system][1]
                differ = sum(1 for qid, s in rows.items() if kept.get(qid) != s)
                out.append(Problem.warning(str(path), None, "system", f"the same scores as {first[system][0]}", f"different scores for {system!r} on {differ} of {len(rows)} questions, perhaps from "
                                   "another scoring profile (this file is ignored for it)", skipped=True))
    return out


def _locate_all(gold: list[GoldQuestion], docs: list[DocumentRecord], docs_dir: Path | None) -> dict[str, DocLocation]:
    records = {d.document_id: d for d in docs}
    urls = {ref.document_id: ref.url for q in gold for ref in q.documents if ref.url}
    ids = list(dict.fromkeys([*records, *(ref.document_id for q in gold for ref in q.documents if ref.document_id)]))
    out = {}
    for doc_id in ids:
        rec = records.get(doc_id)
        out[doc_id] = locate_document(doc_id, rec.file if rec else "", (rec.url if rec else "") or urls.get(doc_id, ""), docs_dir)
    return out


def check_documents(locations: dict[str, DocLocation], counts: dict[str, int | None]
                    ) -> tuple[dict[str, DocLocation], dict[str, int | None], list[Problem]]:
    """Open every found document once (each file once, however many ids point at it): a file that
    cannot be shown becomes not found, with the reason in `how` and one problem naming the file.
    Page counts come from the document (documents.jsonl's `page_count` when the file is missing)."""
    checks: dict[Path, DocCheck] = {}
    out: dict[str, DocLocation] = {}
    pages: dict[str, int | None] = {}
    problems: list[Problem] = []
    for doc_id, loc in locations.items():
        if loc.path is None:
            out[doc_id], pages[doc_id] = loc, counts.get(doc_id)
            continue
        check = checks.get(loc.path)
        if check is None:
            check = checks[loc.path] = inspect_document(loc.path)
            if check.problem:
                # a warning: the document is skipped (its pages are not shown), its questions are not
                problems.append(Problem.warning(str(loc.path), None, None, "a document that can be shown",
                                                check.problem, skipped=True, kind="documents that cannot be shown"))
        if check.problem:
            out[doc_id] = DocLocation(doc_id, None, f"{check.problem} ({loc.path.name})", loc.refused, check.problem, loc.path)
            pages[doc_id] = counts.get(doc_id)
        else:
            out[doc_id] = replace(loc, file=loc.path)
            pages[doc_id] = counts.get(doc_id) or check.pages
    return out, pages, problems


def load_workspace(src: Sources) -> Workspace:
    disc = discover(src)
    if disc.layout == MMLONGBENCH:
        return _load_mmlongbench(disc, src)
    gold = load_gold(disc.gold) if disc.gold else LoadResult()
    documents = load_documents(disc.documents) if disc.documents else LoadResult()
    problems: list[Problem] = []
    predictions = _load_predictions(disc.predictions, problems)
    scores = [load_scores(p) for p in disc.scores]
    summary: LoadResult[dict] = LoadResult()
    for p in disc.summaries:
        summary.extend(load_summary(p))
    problems.extend(_duplicate_systems(disc.scores, scores))
    locations = _locate_all(gold.items, documents.items, disc.docs_dir)
    for loc in locations.values():
        if loc.refused:
            problems.append(Problem.error(str(disc.documents or "documents.jsonl"), None, f"{loc.document_id}.file", "a path inside the docs folder", f"{loc.refused!r} (refused)", skipped=False))
    counts = {d.document_id: d.page_count for d in documents.items}
    locations, page_counts, doc_problems = check_documents(locations, counts)
    problems.extend(doc_problems)
    return Workspace(disc, gold, documents, predictions, scores, summary, locations, page_counts,
                     dict(src.labels), problems)


# ----------------------------------------------------------------------------- MMLongBench-Doc


def _load_mmlongbench(disc: Discovery, src: Sources) -> Workspace:
    """A clone of MMLongBench-Doc read as it is (scoring/mmlongbench.py): gold from samples.json (the
    question's `split` is its page category -- single-page, cross-page, unanswerable, joined by " + "
    where the evaluator counts it twice; `metadata["page_category"]` lists them, for the breakdown
    that counts a question in each as the evaluator does), one document per PDF named, each result file a run (named
    as the benchmark names it: res_gpt-4o.json -> gpt-4o) whose `score` values are its official
    scores. Rows the evaluator cannot score without raising or executing text, and the PDFs not in
    data/documents/, are listed once each as problems."""
    from scoring.mmlongbench import (
        document_records,
        evidence_categories,
        judge_question,
        load_results,
        load_samples,
    )
    from scoring.mmlongbench import run_name as result_run_name

    gold: LoadResult[GoldQuestion] = load_samples(disc.gold[0]) if disc.gold else LoadResult()
    problems: list[Problem] = []
    for extra in disc.gold[1:]:
        problems.append(Problem.warning(str(extra), None, None, "one samples.json", "another gold file (not read)"))
    for q in gold.items:
        categories = evidence_categories(q.metadata.get("evidence_pages"), q.metadata.get("answer"))
        q.split = " + ".join(categories) or "unknown"
        q.metadata["page_category"] = list(categories)  # the breakdown counts a question in each (analysis.MULTI_LABEL)
    documents: LoadResult[DocumentRecord] = LoadResult(items=document_records(gold.items))
    by_id = {q.qid: q for q in gold.items}
    predictions: list[PredictionFile] = []
    disc.scores, scores = [], []
    taken: set[str] = set()
    for path in disc.predictions:
        res = load_results(path, gold)
        name = base = result_run_name(path)
        k = 2
        while name in taken:
            name, k = f"{base} ({k})", k + 1
        taken.add(name)
        res.run = name
        for p in res.items:
            note = judge_question(by_id[p.qid], res.extras[p.qid].pred).note
            if note:
                res.problems.append(Problem.warning(str(path), None, f"[{res.extras[p.qid].index}].pred",
                                                    "an answer the released evaluator scores", f"{p.qid} scored by "
                                                    f"fallback rule {note} (scoring/README.md, MMLongBench-Doc)",
                                                    skipped=False, kind="rows scored by a fallback rule"))
        try:
            sha = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            sha = ""
        predictions.append(PredictionFile(name, path, sha, res))
        if res.official:
            disc.scores.append(path)
            scores.append(LoadResult(items=[replace(r, system=name) for r in res.official], files=[str(path)],
                                     rows_read=len(res.official)))
    locations = _locate_all(gold.items, documents.items, disc.docs_dir)
    missing = [loc for loc in locations.values() if loc.path is None]
    if missing and disc.docs_dir is not None:
        for loc in missing:
            locations[loc.document_id] = replace(loc, how=f"not in {disc.docs_dir}")
        shown = ", ".join(loc.document_id for loc in missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
        problems.append(Problem.warning(str(disc.docs_dir), None, None, "every PDF samples.json names",
                                        f"{len(missing)} of {len(locations)} missing: {shown} (their questions are scored; "
                                        "their pages cannot be shown -- copy the PDFs into this folder)",
                                        skipped=False, kind="missing PDFs"))
    locations, page_counts, doc_problems = check_documents(locations, {})
    problems.extend(doc_problems)
    return Workspace(disc, gold, documents, predictions, scores, LoadResult(), locations, page_counts,
                     dict(src.labels), problems)


def responses(ws: Workspace, run: str) -> dict[str, object] | None:
    """The raw model answers (`response`) of a run by question id, where its file has them beside the
    scored text (an MMLongBench-Doc result file); None otherwise."""
    pf = next((p for p in ws.predictions if p.run == run), None)
    extras = getattr(pf.loaded, "extras", None) if pf is not None else None
    return {qid: e.response for qid, e in extras.items()} if extras else None

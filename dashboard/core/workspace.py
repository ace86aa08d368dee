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

    def all_files(self) -> list[Path]:
        docs = [self.documents] if self.documents else []
        return [*self.gold, *docs, *self.predictions, *self.scores, *self.summaries]


def _gold_order(path: Path) -> tuple[int, str]:
    return (DEFAULT_GOLD.index(path.name) if path.name in DEFAULT_GOLD else len(DEFAULT_GOLD), path.name)


def _prediction_files(target: Path) -> list[Path]:
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


def discover(src: Sources) -> Discovery:
    bench = src.benchmark
    disc = Discovery(benchmark=bench, docs_dir=None, documents=src.documents)
    if bench is not None and not bench.is_dir():
        disc.problems.append(Problem.error(str(bench), None, None, "a benchmark folder", "no such folder"))
        bench = None
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
            disc.predictions.extend(_prediction_files(bench / "runs"))
        if (bench / "results").is_dir():
            _classify_scores(bench / "results", disc)
    if src.gold:
        disc.gold = list(src.gold)
    for target in src.runs:
        disc.predictions.extend(_prediction_files(target))
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

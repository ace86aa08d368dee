"""Finding and loading a benchmark's files (spec part E). No streamlit here.

A benchmark folder holds gold files (every top-level *.jsonl except documents.jsonl),
documents.jsonl, docs/<document_id>.pdf, runs/*.json[l] prediction files and results/ score files
(scores.jsonl, summary.json, official/*.report.json|*.per_question.csv). Loading never raises on
user data: every problem is kept as a `scoring.problems.Problem` and shown on the Data page.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import unquote, urlsplit

from scoring.cli import DEFAULT_GOLD
from scoring.loaders import load_documents, load_gold, load_predictions, load_scores, load_summary
from scoring.model import DocumentRecord, GoldQuestion, Prediction, ScoreRow
from scoring.problems import ERROR, WARNING, LoadResult, Problem

from .resources import sample_benchmark

DEFAULT_BENCHMARK = sample_benchmark()  # sample_runs/ of a checkout, or the copy an installed package carries
ENV_BENCHMARK, ENV_RUNS, ENV_SCORES = "LENS_BENCHMARK", "LENS_RUNS", "LENS_SCORES"
UPLOAD_ROOT = Path(tempfile.gettempdir()) / "docbench-lens-uploads"
_PDF_LOCK = threading.Lock()  # PyMuPDF is not thread-safe; Streamlit runs sessions in threads


@dataclass(frozen=True)
class Sources:
    """Where to read from. `gold` and `documents`, when given, replace the benchmark's own."""

    benchmark: Path | None
    runs: tuple[Path, ...] = ()
    scores: tuple[Path, ...] = ()
    gold: tuple[Path, ...] = ()
    documents: Path | None = None
    labels: tuple[tuple[str, str], ...] = ()  # (path, shown name) for uploaded files


def sources_from(argv: Sequence[str], environ: Mapping[str, str]) -> Sources:
    """`-- --benchmark DIR --runs P... --scores P...` (the script's argv), else the LENS_BENCHMARK,
    LENS_RUNS and LENS_SCORES environment variables (lists separated by os.pathsep), else sample_runs/."""
    ap = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    ap.add_argument("--benchmark")
    ap.add_argument("--runs", nargs="+", action="extend", default=[])
    ap.add_argument("--scores", nargs="+", action="extend", default=[])
    args, _ = ap.parse_known_args(list(argv))

    def listed(name: str) -> list[str]:
        return [p for p in environ.get(name, "").split(os.pathsep) if p]

    bench = args.benchmark or environ.get(ENV_BENCHMARK) or str(DEFAULT_BENCHMARK)
    return Sources(
        benchmark=Path(bench),
        runs=tuple(Path(p) for p in args.runs or listed(ENV_RUNS)),
        scores=tuple(Path(p) for p in args.scores or listed(ENV_SCORES)),
    )


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
        disc.gold = sorted(top, key=_gold_order)
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
    if not disc.gold:
        where = str(src.benchmark) if src.benchmark else "the data panel"
        disc.problems.append(Problem.error(where, None, None, "gold question files (*.jsonl)", "none found"))
    return disc


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


def stage_upload(name: str, data: bytes, root: Path = UPLOAD_ROOT) -> Path:
    """Write an uploaded file under root/<sha256>/<its base name> so that the loaders, which read
    paths, can read it; the same bytes always land at the same path (stable cache keys)."""
    safe = Path(name.replace("\\", "/")).name or "upload"
    if safe in (".", ".."):
        safe = "upload"
    target = root / hashlib.sha256(data).hexdigest()[:32] / safe
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return target


# ----------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class DocLocation:
    document_id: str
    path: Path | None
    how: str  # which rule found it, or why it was not found
    refused: str = ""  # a `file`/`path` field that pointed outside the docs folder


def inside(root: Path, relative: str) -> Path | None:
    """root/relative resolved, if it stays inside root (symlinks and `..` resolved), else None."""
    if not relative or "\x00" in relative:
        return None
    base = root.resolve()
    target = (base / relative).resolve()
    return target if target.is_relative_to(base) and target != base else None


def locate_document(document_id: str, file_field: str, url: str, docs_dir: Path | None) -> DocLocation:
    """Spec E: the record's file/path field (relative to docs/, never outside it), then
    docs/<document_id>.pdf, then the last path segment of its url."""
    if docs_dir is None or not docs_dir.is_dir():
        return DocLocation(document_id, None, "no docs/ folder")
    refused = ""
    if file_field:
        hit = inside(docs_dir, file_field)
        if hit is None:
            refused = file_field
        elif hit.is_file():
            return DocLocation(document_id, hit, "file field")
    hit = inside(docs_dir, f"{document_id}.pdf") if document_id else None
    if hit is not None and hit.is_file():
        return DocLocation(document_id, hit, "docs/<document_id>.pdf", refused)
    segment = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) if url else ""
    hit = inside(docs_dir, segment) if segment else None
    if hit is not None and hit.is_file():
        return DocLocation(document_id, hit, "url file name", refused)
    return DocLocation(document_id, None, "not found", refused)


def pdf_page_count(path: Path) -> int | None:
    """Open, count, close -- under one lock, nothing kept."""
    import pymupdf

    with _PDF_LOCK:
        try:
            with pymupdf.open(path) as doc:
                return doc.page_count
        except Exception:  # a broken PDF is reported as "page count unknown", never raised
            return None


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
        out.append(PredictionFile(name, path, sha, load_predictions(path)))
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
    page_counts = {doc_id: counts.get(doc_id) or (pdf_page_count(loc.path) if loc.path and loc.path.suffix.lower() == ".pdf" else None)
                   for doc_id, loc in locations.items()}
    return Workspace(disc, gold, documents, predictions, scores, summary, locations, page_counts,
                     dict(src.labels), problems)

"""What every source format gives back, and the folder walk they share.

A source format (one module per format in this package) answers four questions about a path:
is it mine (`recognise`), what are its gold questions, runs and the harness's own per-question
scores (`load`), which documents do the questions name (`SourceLoad.documents`), and what could
not be read (`SourceLoad.problems`, each with file, line or sheet row, and field). A loader never
raises on user data and never reads outside the folder it was given: symlinks are resolved, a
link that leaves the folder or dangles is named, not followed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problems import Problem

__all__ = ["BenchmarkFiles", "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad", "Walk", "walk", "single", "siblings",
           "inside", "display",
           "ANLS_FAMILY", "MMLONGBENCH_FAMILY", "LONGDOCURL_FAMILY"]

# task families: how a harness scores them (scoring.harness_rules) and which benchmark evaluator they compare with
ANLS_FAMILY = "anls"  # DocVQA, InfoVQA: several acceptable answers, ANLS
MMLONGBENCH_FAMILY = "mmlongbench"  # MMLongBench-Doc: one answer with its format
LONGDOCURL_FAMILY = "longdocurl"  # LongDocURL's own score_v3


@dataclass(slots=True)
class HarnessQuestion:
    """One gold question as a harness file states it (no benchmark folder needed)."""

    qid: str
    question: str
    answers: tuple[str, ...]  # the acceptable answers as text (DocVQA: several; MMLongBench-Doc: one)
    answer_format: str = ""  # MMLongBench-Doc's Int/Float/Str/List/None ("" when the harness has none)
    answer_raw: Any = None  # the answer exactly as the harness holds it (for its own scoring)
    format_raw: Any = None  # the format exactly as the harness holds it (VLMEvalKit: NaN for None)
    document: str = ""  # the document the question is about (a PDF or page-image name; "" unknown)
    evidence_pages: tuple[int, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class HarnessRow:
    """One scored answer of a run: what the harness scored, and its own per-question score."""

    qid: str
    prediction: str  # the text the harness scored (lmms-eval: filtered_resps; VLMEvalKit: prediction, or the judge's pred)
    official: float | None  # the harness's own per-question score on 0-1 (None: the files hold none)
    file: str
    line: int | None  # 1-based line (JSONL) or sheet row (the header is row 1)
    response: str = ""  # the model's raw answer when it differs from `prediction`
    raw: dict[str, Any] = field(default_factory=dict)  # the cells/fields as the harness saw them (for its own rules)
    notes: tuple[str, ...] = ()  # what changed the row on its way through the harness ("blank cell read as nan", …)
    occurrence: int = 0  # lmms-eval: 0 for the first line of a doc_id, 1 for the second (another filter) …


@dataclass(slots=True)
class HarnessRun:
    """One (model, task or dataset, eval date) of a harness."""

    name: str
    harness: str  # "lmms-eval", "vlmevalkit", "longdocurl"
    task: str  # lmms-eval task / VLMEvalKit dataset name as the files spell it
    family: str  # ANLS_FAMILY, MMLONGBENCH_FAMILY, LONGDOCURL_FAMILY
    model: str
    date: str = ""  # lmms-eval date id, VLMEvalKit eval id
    version: str = ""  # the harness version when its files say it
    model_args: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    rows: list[HarnessRow] = field(default_factory=list)
    reported: dict[str, Any] = field(default_factory=dict)  # the harness's aggregate numbers under its own keys
    filters: tuple[str, ...] = ("none",)  # lmms-eval: the filter of each occurrence of a doc_id
    older: bool = False  # VLMEvalKit: an older eval id of a (model, dataset) that has a newer one
    extra: dict[str, Any] = field(default_factory=dict)  # format-specific facts (VLMEvalKit: acc.csv keys order, …)


@dataclass(slots=True)
class SourceLoad:
    """Everything one path held: gold per task, runs, documents named, problems."""

    format: str
    root: str
    gold: dict[str, list[HarnessQuestion]] = field(default_factory=dict)  # task -> questions, file order
    runs: list[HarnessRun] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def documents(self) -> list[str]:
        """The documents the questions name (PDF or page-image file names), first-seen order."""
        seen: dict[str, None] = {}
        for questions in self.gold.values():
            for q in questions:
                if q.document:
                    seen.setdefault(q.document, None)
        return list(seen)

    def question(self, task: str, qid: str) -> HarnessQuestion | None:
        for q in self.gold.get(task, ()):
            if q.qid == qid:
                return q
        return None


@dataclass(slots=True)
class BenchmarkFiles:
    """Which files of a benchmark's own folder hold what (a benchmark format's `layout`): gold,
    the document list and folder, prediction (result) files, score files, summaries, and what was
    found that is not what it should be."""

    format: str
    gold: list[Path] = field(default_factory=list)
    docs_dir: Path | None = None
    documents: Path | None = None
    predictions: list[Path] = field(default_factory=list)
    scores: list[Path] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def display(path: Path, root: Path) -> str:
    """A path as problems name it: relative to the folder given when inside it."""
    try:
        return path.relative_to(root).as_posix() or path.name
    except ValueError:
        return str(path)


def inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


@dataclass(slots=True)
class Walk:
    """The regular files under a folder, symlinks resolved: `files` maps each file as found (its
    path under the root, link names kept) to its real path; links that dangle or leave the folder
    are in `problems` and not in `files`."""

    root: Path
    files: dict[Path, Path] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def real(self, path: Path) -> Path | None:
        return self.files.get(path)


MAX_DEPTH = 6  # a harness folder is at most output_path/model/eval_id/file deep; more is not walked
MAX_FILES = 200_000


def walk(root: Path, *, max_depth: int = MAX_DEPTH) -> Walk:
    """Every regular file under `root` (never following a directory link out of it), symlinks to
    files resolved and kept only when their target is a file inside `root`."""
    root_real = Path(os.path.realpath(root))
    out = Walk(root=root)
    count = 0

    def visit(folder: Path, depth: int) -> Iterator[Path]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            yield Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir and depth < max_depth:
                yield from visit(Path(entry.path), depth + 1)

    for path in visit(root, 0):
        count += 1
        if count > MAX_FILES:
            out.problems.append(Problem.warning(display(path, root), None, None, f"at most {MAX_FILES:,} files",
                                                "more; the rest is not read", skipped=True))
            break
        if path.is_symlink():
            target = os.readlink(path)
            real = Path(os.path.realpath(path))
            if not real.exists():
                out.problems.append(Problem.warning(
                    display(path, root), None, None, "a link to a file that exists on this machine",
                    f"a dangling link to {target} (not read)", skipped=True, kind="dangling links"))
                continue
            if not inside(real, root_real):
                out.problems.append(Problem.error(
                    display(path, root), None, None, "a link to a file inside the folder given",
                    f"a link to {target}, outside it (not read)", kind="links leaving the folder"))
                continue
            if real.is_file():
                out.files[path] = real
            continue
        if path.is_file():
            out.files[path] = Path(os.path.realpath(path))
    return out


def single(path: Path) -> Walk:
    """The walk of one file given by itself: its folder is the folder given."""
    root = path.parent
    out = Walk(root=root)
    real = Path(os.path.realpath(path))
    if path.is_symlink() and not real.exists():
        out.problems.append(Problem.error(path.name, None, None, "a file", f"a dangling link to {os.readlink(path)}"))
    elif real.is_file() and inside(real, Path(os.path.realpath(root))):
        out.files[path] = real
    elif real.is_file():
        out.problems.append(Problem.error(path.name, None, None, "a file inside its folder",
                                          f"a link to {os.readlink(path)}, outside it (not read)"))
    return out


def siblings(w: Walk, path: Path) -> dict[str, Path]:
    """The files of the walk in `path`'s folder, by name."""
    return {p.name: p for p in w.files if p.parent == path.parent}

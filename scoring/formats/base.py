"""What every source format gives back, and the folder walk they share.

A source format (one module per format in this package) answers four questions about a path:
is it mine (`recognise`), what are its gold questions, runs and the harness's own per-question
scores (`load`), which documents do the questions name (`SourceLoad.documents`), and what could
not be read (`SourceLoad.problems`, each with file, line or sheet row, and field). A loader never
raises on user data and never reads outside the folder it was given: symlinks are resolved, a
link that leaves the folder or dangles is named, not followed."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problems import Problem

__all__ = ["BenchmarkFiles", "GoldConflict", "GoldVariant", "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad",
           "Walk", "walk", "single", "siblings", "inside", "display", "settle_gold", "conflict_problems", "gold_text", "CONFLICT_RULE",
           "CONFLICTING_GOLD",
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
class GoldVariant:
    """One gold a harness's files give a question: its text and answers, where (file, line or sheet
    row) each file states it, and the question as the first of them holds it."""

    question: HarnessQuestion
    where: list[tuple[str, int | None]] = field(default_factory=list)  # (file, line) per file, file order

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(f for f, _ in self.where))

    @property
    def first(self) -> str:
        f, line = self.where[0]
        return f"{f}:{line}" if line is not None else f


@dataclass(slots=True)
class GoldConflict:
    """A question to which two files of a task give different gold: every variant (kept first), so
    that the page names both, and a benchmark's own gold can be looked for under each."""

    task: str
    qid: str
    variants: list[GoldVariant]  # the kept one first, then the others in file order

    @property
    def kept(self) -> GoldVariant:
        return self.variants[0]


@dataclass(slots=True)
class SourceLoad:
    """Everything one path held: gold per task, runs, documents named, problems."""

    format: str
    root: str
    gold: dict[str, list[HarnessQuestion]] = field(default_factory=dict)  # task -> questions, file order
    runs: list[HarnessRun] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    conflicts: list[GoldConflict] = field(default_factory=list)  # questions whose gold differs between files

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


CONFLICTING_GOLD = "questions with conflicting gold"  # Problem.kind of a conflict
CONFLICT_RULE = "the gold most files give is kept (on a tie, the one of the file whose path sorts first)"


def gold_text(q: HarnessQuestion) -> str:
    """A gold as a conflict names it: the question and its answers, each cut to 80 characters."""
    def cut(text: str) -> str:
        return text if len(text) <= 80 else text[:79] + "…"

    answers = " | ".join(cut(a) for a in q.answers[:5]) + (f" | … ({len(q.answers)} answers)" if len(q.answers) > 5 else "")
    return f"{cut(q.question.strip())!r} → {answers!r}"


def _gold_key(q: HarnessQuestion) -> tuple[str, tuple[str, ...]]:
    return q.question.strip(), tuple(q.answers)


def settle_gold(task: str, found: Iterable[tuple[HarnessRow, HarnessQuestion]]) -> tuple[list[HarnessQuestion], list[GoldConflict]]:
    """One gold question per question id from the gold each line (or sheet row) of a task's files
    states, in first-seen order. Lines agreeing on a question's text and answers are one gold (the
    fullest statement kept: the one naming its document, else with the most fields). When files
    disagree, CONFLICT_RULE decides which is the question's gold, each disagreement is a GoldConflict
    (`conflict_problems` names it), and every row stating another gold carries a note saying so --
    never the first file read silently."""
    groups: dict[str, dict[tuple[str, tuple[str, ...]], GoldVariant]] = {}
    rows: dict[str, list[tuple[HarnessRow, tuple[str, tuple[str, ...]]]]] = {}
    for row, q in found:
        variants = groups.setdefault(row.qid, {})
        key = _gold_key(q)
        v = variants.get(key)
        if v is None:
            v = variants[key] = GoldVariant(q)
        elif (bool(q.document), len(q.metadata)) > (bool(v.question.document), len(v.question.metadata)):
            v.question = q
        if row.file not in v.files:
            v.where.append((row.file, row.line))
        rows.setdefault(row.qid, []).append((row, key))
    out: list[HarnessQuestion] = []
    conflicts: list[GoldConflict] = []
    for qid, variants in groups.items():
        stated = list(variants.values())
        kept = min(stated, key=lambda v: (-len(v.files), min(v.files)))
        for v in stated:
            v.question.qid = qid
        out.append(kept.question)
        if len(stated) == 1:
            continue
        conflicts.append(GoldConflict(task, qid, [kept, *(v for v in stated if v is not kept)]))
        kept_key = _gold_key(kept.question)
        for row, key in rows[qid]:
            if key != kept_key:
                row.notes = (*row.notes, f"gold: this file states {gold_text(variants[key].question)} for question "
                             f"{qid}; {kept.first} states {gold_text(kept.question)} (conflicting gold)")
    return out, conflicts


def conflict_problems(c: GoldConflict, decided: str = CONFLICT_RULE) -> list[Problem]:
    """A warning per gold of a conflict other than the kept one, at its first file and line: the
    question id, both golds with where each is stated, and how the question's gold was decided."""
    kept = c.kept
    more = f" and {len(kept.files) - 1} more file{'s' if len(kept.files) > 2 else ''}" if len(kept.files) > 1 else ""
    out = []
    for v in c.variants[1:]:
        f, line = v.where[0]
        also = f" (also in {len(v.files) - 1} more file{'s' if len(v.files) > 2 else ''})" if len(v.files) > 1 else ""
        out.append(Problem.warning(
            f, line, "gold", f"the gold {kept.first}{more} give{'s' if not more else ''} question {c.qid} of {c.task}: "
            f"{gold_text(kept.question)}", f"{gold_text(v.question)}{also}: {decided}", kind=CONFLICTING_GOLD))
    return out


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

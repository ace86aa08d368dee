"""What every source format gives back, and the folder walk they share.

A source format (one module per format in this package) answers four questions about a path:
is it mine (`recognise`), what are its gold questions, runs and the harness's own per-question
scores (`load`), which documents do the questions name (`SourceLoad.documents`), and what could
not be read (`SourceLoad.problems`, each with file, line or sheet row, and field). A loader never
raises on user data and never reads outside the folder it was given: symlinks are resolved, a
link that leaves the folder, dangles or loops is named, not followed; FIFOs, devices and sockets
are named and never opened; a folder is listed up to WALK_MAX_ENTRIES entries, with progress
(`walk(progress=...)`, or `reporting(progress)` around a format's `load`)."""

from __future__ import annotations

import errno
import math
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..limits import HARNESS_MAX_LINES, WALK_MAX_DEPTH, WALK_MAX_ENTRIES, WALK_PROGRESS_EVERY
from ..problems import Problem, kind_of
from ..reading import NotRegular, Overlong, TooLarge, bounded_lines, open_regular, special_kind

__all__ = ["BenchmarkFiles", "GoldConflict", "GoldVariant", "HarnessQuestion", "HarnessRow", "HarnessRun", "SourceLoad",
           "Walk", "walk", "single", "siblings", "inside", "display", "settle_gold", "conflict_problems", "gold_text", "CONFLICT_RULE",
           "CONFLICTING_GOLD", "reporting", "listing_once", "official_score", "unreadable", "overlong_line", "cut_lines",
           "text_lines",
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
    _folders: dict[Path, dict[str, Path]] | None = None

    def real(self, path: Path) -> Path | None:
        return self.files.get(path)

    def beside(self, real: Path) -> dict[str, Path]:
        """The real files in `real`'s folder, by name (the first found of each name): an index built
        once, so that asking for each of many files is not a pass over every file each time."""
        if self._folders is None:
            self._folders = {}
            for r in self.files.values():
                self._folders.setdefault(r.parent, {}).setdefault(r.name, r)
        return self._folders.get(real.parent, {})

    def copy(self) -> Walk:
        return Walk(root=self.root, files=dict(self.files), problems=list(self.problems))

    def within(self, max_depth: int) -> Walk:
        """The walk `walk(root, max_depth=max_depth)` gives, from this deeper one: the files and problems
        at most `max_depth` folders below the root."""
        def depth(parts: int) -> bool:
            return parts - 1 <= max_depth

        return Walk(root=self.root, files={p: r for p, r in self.files.items() if depth(len(p.relative_to(self.root).parts))},
                    problems=[p for p in self.problems if depth(p.file.count("/") + 1)])


MAX_DEPTH = WALK_MAX_DEPTH
Progress = Callable[[int, str], None]  # (entries listed so far, the path being listed)
_PROGRESS: ContextVar[Progress | None] = ContextVar("walk_progress", default=None)


_WALKS: ContextVar[dict[str, tuple[int, Walk]] | None] = ContextVar("walks", default=None)


@contextmanager
def listing_once() -> Iterator[None]:
    """Inside this block each folder is listed once for every format that asks (each format's
    `recognise` and `load` walk the same folder): a walk asked again is a copy of the first."""
    if _WALKS.get() is not None:
        yield
        return
    token = _WALKS.set({})
    try:
        yield
    finally:
        _WALKS.reset(token)


@contextmanager
def reporting(progress: Progress | None) -> Iterator[None]:
    """Every walk inside this block (a format's `recognise` and `load`) reports its progress to
    `progress`, every WALK_PROGRESS_EVERY entries."""
    token = _PROGRESS.set(progress)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def _link_problem(path: Path, root: Path, root_real: Path) -> tuple[Problem | None, Path | None]:
    """(a problem, None) for a link that loops, dangles, leaves the folder or names a FIFO, device or
    socket; (None, its real path) for a link to a regular file inside the folder; (None, None) for a
    link to a folder (not followed)."""
    shown = display(path, root)
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Problem.warning(shown, None, None, "a link to a file",
                                   f"a symlink loop ({shown} -> {target} -> ... never reaches a file; not read)",
                                   skipped=True, kind="symlink loops"), None
        return Problem.warning(shown, None, None, "a link to a file that exists on this machine",
                               f"a dangling link to {target} (not read)", skipped=True, kind="dangling links"), None
    real = Path(os.path.realpath(path))
    if not inside(real, root_real):
        return Problem.error(shown, None, None, "a link to a file inside the folder given",
                             f"a link to {target}, outside it (not read)", kind="links leaving the folder"), None
    if stat.S_ISDIR(st.st_mode):
        return None, None
    what = special_kind(st.st_mode)
    if what:
        return _special(shown, f"a link to {what}"), None
    return None, real


def _special(shown: str, what: str) -> Problem:
    return Problem.warning(shown, None, None, "a regular file", f"{what}: never opened, not read", skipped=True,
                           kind="FIFOs, devices and sockets")


def walk(root: Path, *, max_depth: int = MAX_DEPTH, progress: Progress | None = None) -> Walk:
    """Every regular file under `root` in name order (never following a directory link), symlinks to
    files resolved and kept only when their target is a regular file inside `root`; links that
    loop, dangle or leave, FIFOs, devices and sockets named and not read. At most WALK_MAX_ENTRIES
    entries are listed (the cut is named: which were listed, which not); `progress` (or the one
    `reporting` set) hears every WALK_PROGRESS_EVERY entries. One `scandir` a folder and no other
    system call for a regular file, so 60,000 files list in a fraction of a second."""
    cache = _WALKS.get()
    if cache is None:
        return _walk(root, max_depth, progress)
    key = os.path.abspath(root)
    found = cache.get(key)
    if found is None or found[0] < max_depth:
        found = cache[key] = (max(max_depth, WALK_SHARED_DEPTH), _walk(root, max(max_depth, WALK_SHARED_DEPTH), progress))
    depth, listed = found
    return listed.copy() if depth == max_depth else listed.within(max_depth)


WALK_SHARED_DEPTH = 4  # a walk shared by the formats (listing_once) goes this deep: the deepest a format's load asks


def _walk(root: Path, max_depth: int, progress: Progress | None) -> Walk:
    root_real = Path(os.path.realpath(root))
    out = Walk(root=root)
    report = progress or _PROGRESS.get()
    count = 0

    cut_listing: set[Path] = set()  # folders holding more entries than were listed

    def entries_of(folder: Path) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(folder) as it:
                found = []
                for entry in it:
                    found.append(entry)
                    if count + len(found) > WALK_MAX_ENTRIES:
                        cut_listing.add(folder)  # never more listed than the cap allows, however large the folder
                        break
        except OSError:
            return None
        found.sort(key=lambda e: e.name)
        return found

    stack: list[tuple[Path, Path, int, list[os.DirEntry[str]], int]] = []
    first = entries_of(root)
    if first is not None:
        stack.append((root, root if root == root_real else root_real, 0, first, 0))
    while stack:
        folder, real_folder, depth, entries, at = stack[-1]
        if at >= len(entries):
            stack.pop()
            continue
        stack[-1] = (folder, real_folder, depth, entries, at + 1)
        entry = entries[at]
        path = folder / entry.name
        count += 1
        if count > WALK_MAX_ENTRIES:
            where = display(folder, root) if folder != root else "the folder given"
            out.problems.append(Problem.warning(
                display(folder, root) if folder != root else str(root.name or root), None, None,
                f"at most {WALK_MAX_ENTRIES:,} files and folders under the folder given",
                (f"more: {where} holds more entries than are left to list; the first {WALK_MAX_ENTRIES:,} listed (in the "
                 "order the file system gives them, then by name) are read, the rest is not") if folder in cut_listing else
                (f"more: the first {WALK_MAX_ENTRIES:,} in name order are read, the rest, from {display(path, root)} on, "
                 "is not"), skipped=True, kind="folders cut short"))
            break
        if report is not None and count % WALK_PROGRESS_EVERY == 0:
            report(count, display(path, root))
        try:
            if entry.is_symlink():
                problem, real = _link_problem(path, root, root_real)
                if problem is not None:
                    out.problems.append(problem)
                elif real is not None:
                    out.files[path] = real
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < max_depth:
                    below = entries_of(path)
                    if below is not None:
                        stack.append((path, path if real_folder is folder else real_folder / entry.name, depth + 1, below, 0))
                continue
            if entry.is_file(follow_symlinks=False):
                out.files[path] = path if real_folder is folder else real_folder / entry.name
                continue
            what = special_kind(entry.stat(follow_symlinks=False).st_mode)
        except OSError:
            continue  # gone while listed
        if what:
            out.problems.append(_special(display(path, root), what))
    return out


def single(path: Path) -> Walk:
    """The walk of one file given by itself: its folder is the folder given."""
    root = path.parent
    out = Walk(root=root)
    if path.is_symlink():
        problem, real = _link_problem(path, root, Path(os.path.realpath(root)))
        if problem is not None:
            out.problems.append(Problem.error(problem.file, None, None, problem.expected, problem.got, kind=problem.kind))
        elif real is not None:
            out.files[path] = real
        return out
    try:
        st = os.stat(path)
    except OSError:
        return out
    what = special_kind(st.st_mode)
    if what:
        out.problems.append(_special(path.name, what))
    elif stat.S_ISREG(st.st_mode):
        out.files[path] = Path(os.path.realpath(path))
    return out


def unreadable(shown: str, exc: OSError, expected: str = "a readable file") -> Problem:
    """A file that could not be opened or read, as a problem: what it is (a FIFO, a folder, too large,
    no such file) in words."""
    if isinstance(exc, (NotRegular, TooLarge)):
        got = exc.strerror or str(exc)
    elif isinstance(exc, FileNotFoundError):
        got = "no such file"
    elif exc.errno == errno.ELOOP:
        got = "a symlink loop"
    else:
        got = exc.strerror or str(exc)
    return Problem.error(shown, None, None, expected, got)


def overlong_line(shown: str, number: int, line: Overlong, cap: int) -> Problem:
    """A line longer than `cap` bytes, read past without being held."""
    tail = "" if line.ended else ", to the end of the file (no line end: a sparse or zero-filled file?)"
    return Problem.error(shown, number, None, f"a line of at most {cap:,} bytes", f"{line.size:,} bytes{tail}: not read",
                         kind="lines too long to read")


def cut_lines(shown: str, number: int, cap: int, fh: IO[bytes]) -> Problem:
    """The lines of a file after the first `cap`: named, not read (what was read and what not)."""
    try:
        size = os.fstat(fh.fileno()).st_size
        at = fh.tell()
        rest = f" (about {size - at:,} of its {size:,} bytes)"
    except (OSError, ValueError):
        rest = ""
    return Problem.warning(shown, number, None, f"a file of at most {cap:,} lines",
                           f"more: lines 1 to {cap:,} are read, the rest, from line {number:,} on{rest}, is not",
                           skipped=True, kind="files cut short")


def text_lines(path: Path, shown: str, problems: list[Problem], max_line: int) -> Iterator[tuple[int, str, bool]]:
    """(line number, text without its line end, whether the file ended inside it) of each non-blank
    line of a harness's JSONL file, read a line at a time (UTF-8, bad bytes replaced): a line over
    `max_line` bytes is read past and named, never held; after HARNESS_MAX_LINES lines the rest is
    named and not read; a file that cannot be opened (a FIFO, no such file) is named."""
    try:
        fh = open_regular(path)
    except OSError as exc:
        problems.append(unreadable(shown, exc))
        return
    with fh:
        for number, raw in enumerate(bounded_lines(fh, max_line), start=1):
            if number > HARNESS_MAX_LINES:
                problems.append(cut_lines(shown, number, HARNESS_MAX_LINES, fh))
                return
            if isinstance(raw, Overlong):
                problems.append(overlong_line(shown, number, raw, max_line))
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
            if line.strip():
                yield number, line, not raw.endswith(b"\n")


def official_score(value: Any) -> tuple[float | None, str]:
    """(the score, "") for a harness's per-question score that is a number in 0..1; (None, what it is
    instead) for NaN, an infinite number (JSON's Infinity, or 1e400), a string, a boolean, a number
    out of range or anything else."""
    if isinstance(value, bool):
        return None, f"boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return None, "NaN"
        if isinstance(value, float) and math.isinf(value):
            return None, f"{'-' if value < 0 else ''}Infinity (or a number beyond 1.8e308)"
        if 0 <= value <= 1:
            return float(value), ""
        return None, f"number {value} (out of 0..1)"
    return None, kind_of(value)


def siblings(w: Walk, path: Path) -> dict[str, Path]:
    """The files of the walk in `path`'s folder, by name."""
    return {p.name: p for p in w.files if p.parent == path.parent}

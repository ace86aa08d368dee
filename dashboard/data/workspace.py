"""Finding and loading a benchmark's files (spec part E). No streamlit here.

A benchmark folder holds gold files (every top-level *.jsonl except documents.jsonl),
documents.jsonl, docs/<document_id>.pdf, runs/*.json[l] prediction files and results/ score files
(scores.jsonl, summary.json, official/*.report.json|*.per_question.csv). Loading never raises on
user data: every problem is kept as a `scoring.problems.Problem` and shown on the Data page.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from dashboard.core.bounded import Bounded
from dashboard.core.paths import DocLocation, Sources, locate_document
from dashboard.core.predictions import as_table
from dashboard.documents.pdf import DocCheck, inspect_document
from scoring import guard
from scoring.formats import benchmark_format, docvqa, mmlongbench_doc, xldocbench
from scoring.formats.base import (
    ANLS_FAMILY,
    CONFLICT_RULE,
    CONFLICTING_GOLD,
    MMLONGBENCH_FAMILY,
    BenchmarkFiles,
    GoldConflict,
    HarnessQuestion,
    HarnessRun,
    SourceLoad,
    conflict_problems,
)
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
    layout: str = "lens"  # or MMLONGBENCH: data/samples.json, data/documents/*.pdf, results/res_*.json; or HARNESS
    format: str = ""  # the format module's NAME (scoring.formats: xldocbench, docvqa, mmlongbench-doc; a harness's)
    harness: list[Path] = field(default_factory=list)  # harness outputs (lmms-eval, VLMEvalKit, LongDocURL) to read
    harness_files: list[Path] = field(default_factory=list)  # every file under them (the cache key changes with any)
    task: str = ""  # HARNESS: the task (dataset) asked for ("" = the default one)

    def all_files(self) -> list[Path]:
        docs = [self.documents] if self.documents else []
        return [*self.gold, *docs, *self.predictions, *self.scores, *self.summaries, *self.harness_files]


def prediction_files(target: Path) -> list[Path]:
    """The prediction files a --runs path names: the file itself, or a folder's *.json and *.jsonl."""
    return xldocbench.prediction_files(target)


def _classify_scores(target: Path, disc: Discovery) -> None:
    found = BenchmarkFiles(format="")
    xldocbench.classify_scores(target, found)
    disc.summaries.extend(found.summaries)
    disc.scores.extend(found.scores)


MMLONGBENCH = "mmlongbench"  # Discovery.layout of a clone of MMLongBench-Doc


def _discover_mmlongbench(bench: Path | None, src: Sources, disc: Discovery) -> Discovery:
    """MMLongBench-Doc's own layout (scoring.formats.mmlongbench_doc.layout): gold data/samples.json,
    PDFs in data/documents/, each results/res_*.json (and every --runs file) a result file read with
    its official `score`."""
    disc.layout = MMLONGBENCH
    disc.format = mmlongbench_doc.NAME
    if bench is not None:
        found = mmlongbench_doc.layout(bench)
        disc.docs_dir = found.docs_dir
        disc.gold = list(found.gold)  # unless gold files are given (_take_gold)
        disc.predictions.extend(found.predictions)
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
    disc = Discovery(benchmark=bench, docs_dir=None, documents=src.documents, task=src.task)
    if bench is not None and not src.gold and is_harness_benchmark(bench):
        return _discover_harness(bench, src, disc)
    if bench is not None and not bench.is_dir():
        disc.problems.append(Problem.error(str(bench), None, None, "a benchmark folder", "no such folder"))
        bench = None
    disc.harness = [t for t in src.runs if is_harness(t)]
    disc.harness_files = _files_under(disc.harness)
    src = replace(src, runs=tuple(t for t in src.runs if t not in disc.harness))
    fmt = benchmark_format(bench, src.gold)  # the benchmark's own layout, as the formats recognise it
    if fmt is mmlongbench_doc:
        return _discover_mmlongbench(bench, src, disc)
    disc.format = fmt.NAME
    if bench is not None:
        found = fmt.layout(bench)  # XL-DocBench's layout (DocVQA-style folders share it)
        disc.docs_dir = found.docs_dir
        if disc.documents is None:
            disc.documents = found.documents
        disc.gold = list(found.gold)
        disc.problems.extend(found.problems)
        disc.predictions.extend(found.predictions)
        disc.scores.extend(found.scores)
        disc.summaries.extend(found.summaries)
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


# ----------------------------------------------------------------------------- harness outputs


HARNESS = "harness"  # Discovery.layout of a harness's output folder opened as the benchmark (its own gold)


def is_harness(path: Path) -> bool:
    """Whether a path is a harness's output (lmms-eval, VLMEvalKit, LongDocURL: scoring.formats). Never raises."""
    from scoring import formats

    try:
        return bool(formats.detect_all(path))
    except (OSError, ValueError, RuntimeError):
        return False


def is_harness_benchmark(bench: Path) -> bool:
    """Whether a benchmark path is a harness's output rather than a benchmark's own folder: a harness
    file, or a folder a harness format recognises that holds neither gold files (top-level *.jsonl
    other than a harness's own), documents.jsonl nor MMLongBench-Doc's data/samples.json."""
    from scoring.formats import longdocurl

    try:
        if bench.is_file():
            return is_harness(bench)
        if not bench.is_dir() or (bench / "documents.jsonl").is_file() or (bench / "data" / "samples.json").is_file():
            return False
        for p in bench.glob("*.jsonl"):
            if p.is_file() and not longdocurl.recognise(p) and looks_like_gold(p):
                return False
    except OSError:
        return False
    return is_harness(bench)


HARNESS_MAX_FILES = 20_000  # files fingerprinted under a harness path (the readers' own limits are larger)


def _files_under(paths: Sequence[Path]) -> list[Path]:
    import os

    out: list[Path] = []
    for root in paths:
        if not root.is_dir():
            out.append(root)
            continue
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            out.extend(Path(folder) / f for f in sorted(files))
            if len(out) > HARNESS_MAX_FILES:
                return out
    return out


def _discover_harness(bench: Path, src: Sources, disc: Discovery) -> Discovery:
    """A harness's output opened as the benchmark: its gold is built from its own files, one task at a time."""
    disc.layout = HARNESS
    disc.docs_dir = (bench if bench.is_dir() else bench.parent) / "docs"
    disc.harness = [bench, *(t for t in src.runs if is_harness(t))]
    disc.harness_files = _files_under(disc.harness)
    disc.predictions = _unique([p for t in src.runs if t not in disc.harness for p in prediction_files(t)])
    return disc


def _unique(paths: list[Path]) -> list[Path]:
    """Each file once, by resolved path (`--benchmark B --runs B/runs` names B/runs twice). A file that is no
    symbolic link resolves to its folder's resolved path and its name: each folder is resolved once, not
    each of a thousand runs' files component by component (at every page run)."""
    seen: set[Path] = set()
    folders: dict[Path, Path] = {}
    out = []
    for p in paths:
        try:
            if p.is_symlink():
                key = p.resolve()
            else:
                folder = folders.get(p.parent)
                if folder is None:
                    folder = folders[p.parent] = p.parent.resolve()
                key = folder / p.name
        except (OSError, RuntimeError):  # a symlink loop: keep the path as given
            key = p
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


GOLD_SNIFF_ROWS = xldocbench.GOLD_SNIFF_ROWS  # non-blank lines read to decide whether a top-level .jsonl file holds gold


def looks_like_gold(path: Path, rows: int = GOLD_SNIFF_ROWS) -> bool:
    """Whether a top-level .jsonl file holds gold questions (scoring.formats.xldocbench.looks_like_gold). Never raises."""
    return xldocbench.looks_like_gold(path, rows)


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


# ----------------------------------------------------------------------------- loading


KEPT = 8  # prediction files whose rows are kept in memory at once (the last read), beside the workspace's facts
_KEPT: Bounded[LoadResult] = Bounded(KEPT)


class LazyLoad(LoadResult):
    """A prediction file's LoadResult whose rows (`items`) are read from the cache of parsed files
    (dashboard/core/store.py PredictionStore) when a page asks -- the last KEPT files' kept in memory, never
    every file's: a campaign's scored rows live in the engine, and its predictions stay on disk. Its
    problems and counts (`loaded` among them) are held: the Data page and the leaderboard read those."""

    def __init__(self, facts: LoadResult, count: int, load: Callable[[], LoadResult], key: tuple) -> None:
        self._count, self._load, self._key = count, load, key
        super().__init__(items=[], problems=list(facts.problems), files=list(facts.files), rows_read=facts.rows_read,
                         skipped=facts.skipped, blank_lines=facts.blank_lines, unreadable=list(facts.unreadable))

    @property  # type: ignore[override]
    def items(self) -> list:
        got = _KEPT.get(self._key)
        if got is None:
            got = self._load()
            got.items = cast(list, as_table(got.items))
            _KEPT.put(self._key, got)
        return got.items

    @items.setter
    def items(self, value) -> None:  # set by LoadResult's own __init__ (empty): the rows stay on disk
        if len(value):
            raise ValueError("a lazily read prediction file's rows are read from its cache entry")

    @property
    def loaded(self) -> int:
        return self._count


@dataclass
class PredictionFile:
    run: str
    path: Path
    sha256: str
    loaded: LoadResult[Prediction]
    origin: str = ""  # a harness run: harness, version, task, model arguments, date (scoring.formats.records.origin)

    def __post_init__(self) -> None:
        # held as columns (dashboard/core/predictions.py): a million records cost a gigabyte, columns a
        # fraction; a file whose rows Arrow cannot hold (a lone surrogate in a text) stays records. A file
        # read lazily (LazyLoad) holds no rows at all
        if not isinstance(self.loaded, LazyLoad):
            self.loaded.items = cast(list, as_table(self.loaded.items))


@dataclass
class HarnessEntry:
    """A harness run as the app holds it: its name here, the run as read, its questions (by the
    harness's own ids, for its own scoring and the evaluator comparison), and the map from the
    harness's ids to the workspace's (None: the workspace's gold is the harness's own)."""

    name: str
    run: HarnessRun
    questions: dict[str, HarnessQuestion]
    qids: dict[str, str] | None
    root: Path
    benchmark_profile: str  # the benchmark's own evaluator the harness is compared with ("" none)


@dataclass
class EvalOption:
    """One eval id of a (model, dataset) VLMEvalKit evaluated more than once: the run it holds, and
    what adding it as the app's run needs. `key` (`<model>/<dataset>`) and `eval_id` make the URL's
    `eval=<model>/<dataset>@<eval id>` (dashboard/core/links.py)."""

    key: str
    eval_id: str
    run: HarnessRun
    root: Path
    questions: dict[str, HarnessQuestion]
    qids: dict[str, str] | None
    benchmark_profile: str

    @property
    def pick(self) -> str:
        return f"{self.key}@{self.eval_id}"


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
    harness: list[HarnessEntry] = field(default_factory=list)  # the harness runs read (lmms-eval, VLMEvalKit, LongDocURL)
    tasks: dict[str, str] = field(default_factory=dict)  # HARNESS layout: task -> its label, the benchmarks offered
    task: str = ""  # HARNESS layout: the task whose gold is loaded
    # a run's eval ids when VLMEvalKit evaluated its (model, dataset) more than once: run name -> its
    # eval ids, newest first (the newest is the run loaded; `with_evals` loads another)
    evals: dict[str, list[EvalOption]] = field(default_factory=dict)
    # questions to which two harness files give different gold (scoring.formats.base.GoldConflict), with how
    # the question's gold was decided: (conflict, the sentence saying so)
    conflicts: list[tuple[GoldConflict, str]] = field(default_factory=list)
    _named: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)  # `label`'s answers

    def with_evals(self, picks: Iterable[str]) -> Workspace:
        """This workspace with the eval ids the view picked (`<model>/<dataset>@<eval id>`) as the runs of
        their (model, dataset), under the same run names; itself when none is picked (the newest: the default)."""
        wanted = {key: eval_id for key, _, eval_id in (p.rpartition("@") for p in picks) if key}
        swaps = [(name, opt) for name, options in self.evals.items() for opt in options[1:]
                 if wanted.get(opt.key) == opt.eval_id]
        if not swaps:
            return self
        out = replace(self, discovery=replace(self.discovery, scores=list(self.discovery.scores)),
                      predictions=list(self.predictions), scores=list(self.scores), harness=list(self.harness))
        for name, opt in swaps:
            i = next(k for k, pf in enumerate(out.predictions) if pf.run == name)
            j = next(k for k, h in enumerate(out.harness) if h.name == name)
            old = out.predictions.pop(i)
            out.harness.pop(j)
            out.scores = [res for res in out.scores if not (res.items and res.items[0].system == name)]
            out.discovery.scores = [f for f in out.discovery.scores if f != old.path]
            _add_run(out, name, opt.run, opt.root, opt.questions, opt.qids, opt.benchmark_profile)
            out.predictions.insert(i, out.predictions.pop())
            out.harness.insert(j, out.harness.pop())
        return out

    def declared_pages(self) -> dict[str, int | None]:
        """Page counts as documents.jsonl declares them (no PDF counted): what the weak-slice finder's
        length and position fields rest on, as on the command line (scoring/slice_fields.py)."""
        return {d.document_id: d.page_count for d in self.documents.items if d.page_count}

    def origin(self, run: str) -> str:
        """Where a run comes from when a harness wrote it (harness, version, task, model arguments, date); '' else."""
        return next((pf.origin for pf in self.predictions if pf.run == run), "")

    def label(self, path: str) -> str:
        """How a file is named on screen: uploads by their own name, benchmark files relative to it (each
        path worked out once: every page run names every run)."""
        if path in self.labels:
            return self.labels[path]
        named = self._named.get(path)
        if named is None:
            named = self._named[path] = self._label_of(path)
        return named

    def _label_of(self, path: str) -> str:
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
    files (dashboard/core/store.py, keyed by the file's sha256) when its bytes were read before."""
    from dashboard.core.digests import FileDigests
    from dashboard.core.store import PredictionStore, load_predictions_cached
    from scoring._gc import paused_gc

    store = PredictionStore()  # the cache folder as configured now ($LENS_CACHE_DIR at call time)
    digests = FileDigests(store.root)
    with paused_gc():  # a million small acyclic records: one collection after them, not one per file
        got = _read_predictions(paths, problems, store, load_predictions_cached, digests.sha256, digests.known)
    # once a process, after the entries read now were marked used, and not in the reading's time (a
    # listing of every entry ever written: 0.07-0.3 s of a restart at 1,000 runs): the entries no server
    # has used for a month go, and the digests of files nobody has opened for a month (moved, renamed, changed)
    threading.Thread(target=_sweep, args=(store, digests), name=SWEEPER, daemon=True).start()
    return got


SWEEPER = "lens-cache-sweep"  # the thread's name


def _sweep(*folders) -> None:
    for folder in folders:
        try:
            folder.sweep()
        except OSError:  # a folder that cannot be listed or changed is swept by a later start
            pass


READERS = 2  # prediction files hashed and read at once (hashing and Parquet reading leave the GIL)


def _lazily(path: Path, sha: str, store) -> LoadResult | None:
    """The file as a LazyLoad when the cache of parsed files holds its entry (its facts read from the entry's
    metadata alone), else None."""
    from dashboard.core.store import PredictionStore, load_predictions_cached, prediction_key

    if not sha or not isinstance(store, PredictionStore):
        return None
    got = store.facts(prediction_key(sha, str(path)), str(path))
    if got is None:
        return None
    root = store.root
    return LazyLoad(got[0], got[1], lambda: load_predictions_cached(path, sha, PredictionStore(root)), (str(path), sha))


def _read_predictions(paths, problems, store, read, sha256, known) -> list[PredictionFile]:
    """Each file hashed (`sha256(path)`, which remembers the digests of files unchanged since:
    dashboard.core.digests.FileDigests) and known by its entry in the cache of parsed files (`LazyLoad`:
    its rows read when a page needs them) -- or read (`read(path, sha256, store)`, which writes that entry),
    READERS at a time: at 200 runs this was most of a restart's reading; the files keep their order,
    names and problems. `known(path)`: the digest when remembered, else None (`FileDigests.known`); the
    files it knows whose entries exist are taken first, in this thread: that is all Python, and threads
    made a restart's 1,000 such files take 0.48-0.61 s instead of 0.32 s."""
    from concurrent.futures import ThreadPoolExecutor

    def one(path: Path):
        try:
            sha = sha256(path)
        except OSError:
            sha = ""
        lazy = _lazily(path, sha, store)
        if lazy is not None:
            return sha, lazy
        res = read(path, sha, store)
        lazy = _lazily(path, sha, store)  # the entry written just now: its rows go back to disk (the last few kept)
        if lazy is not None and lazy.loaded == len(res.items):
            res.items = cast(list, as_table(res.items))
            _KEPT.put((str(path), sha), res)
            return sha, lazy
        return sha, res

    loaded: list = [None] * len(paths)
    for i, path in enumerate(paths):
        try:
            sha = known(path)
        except OSError:
            continue  # `one` says so
        lazy = _lazily(path, sha, store) if sha else None
        if lazy is not None:
            loaded[i] = (sha, lazy)
    rest = [i for i, got in enumerate(loaded) if got is None]
    with ThreadPoolExecutor(max_workers=max(1, min(READERS, len(rest)))) as pool:
        for i, got in zip(rest, pool.map(one, [paths[i] for i in rest])):
            loaded[i] = got
    out: list[PredictionFile] = []
    taken: set[str] = set()
    for path, (sha, res) in zip(paths, loaded):
        name = base = run_name(path)
        k = 2
        while name in taken:
            name, k = f"{base} ({k})", k + 1
        if name != base:
            problems.append(Problem.warning(str(path), None, "run name", "a run name used once", f"{base!r} again (shown as {name!r})"))
        taken.add(name)
        out.append(PredictionFile(name, path, sha, res))
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
    if docs_dir is not None and not docs_dir.is_dir():
        docs_dir = None  # looked at once, not once per document (2,500 failed looks: 0.15 s of a restart)
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


def load_workspace(src: Sources, disc: Discovery | None = None) -> Workspace:
    """The files of `src` read (`disc`: what `discover(src)` found just now, when the caller has it)."""
    disc = discover(src) if disc is None else disc
    if disc.layout == HARNESS:
        return _load_harness_benchmark(disc, src)
    ws = _load_mmlongbench(disc, src) if disc.layout == MMLONGBENCH else _load_lens(disc, src)
    if disc.harness:
        _join_harness(ws, disc)
    return ws


def _load_lens(disc: Discovery, src: Sources) -> Workspace:
    from concurrent.futures import ThreadPoolExecutor

    from dashboard.core.store import read_gold_cached  # a restart reads the parsed gold (0.35 s at 20,000 questions, not 1.3-1.7)

    fmt = docvqa if disc.format == docvqa.NAME else xldocbench
    problems: list[Problem] = []  # the prediction files' problems come first, as before
    with ThreadPoolExecutor(max_workers=1) as beside:
        # the prediction files are hashed and read (hashlib and Parquet leave the GIL) while the gold is
        # parsed here (Python): at 200 runs a restart spent ~2 s on each, one after the other. Once their
        # digests are remembered (digests.FileDigests) the two take the same time side by side or in turn
        # (the readers wait for the GIL the parse holds); side by side still helps a first start
        reading = beside.submit(_load_predictions, disc.predictions, problems)
        gold = read_gold_cached(fmt, disc.gold) if disc.gold else LoadResult()
        documents = xldocbench.read_documents(disc.documents) if disc.documents else LoadResult()
        predictions = reading.result()
    scores = [xldocbench.read_scores(p) for p in disc.scores]
    summary: LoadResult[dict] = LoadResult()
    for p in disc.summaries:
        summary.extend(xldocbench.read_summary(p))
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
    fmt = mmlongbench_doc
    document_records, evidence_categories, judge_question = fmt.documents, fmt.evidence_categories, fmt.judge_question
    load_results, result_run_name = fmt.read_run, fmt.run_name

    gold: LoadResult[GoldQuestion] = fmt.read_gold(disc.gold[0]) if disc.gold else LoadResult()
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
    from dashboard.core.digests import FileDigests

    digests = FileDigests()  # each result file's sha256, remembered as the prediction files' are
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
            sha = digests.sha256(path)
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


# ----------------------------------------------------------------------------- harness outputs


_SOURCE_CACHE: dict[tuple, SourceLoad | None] = {}
_SOURCE_CACHE_SIZE = 4


def harness_source(path: Path) -> SourceLoad | None:
    """A harness path read by the formats that recognise it (scoring.formats.open_source), kept while
    its files are unchanged (the Data panel's list of tasks and the workspace read it once)."""
    from scoring import formats

    key = (str(path), fingerprint(_files_under([path])))
    if key in _SOURCE_CACHE:
        return _SOURCE_CACHE[key]
    try:  # in a reader process, each file in a bracket of its own (scoring/guard.py): a hostile file costs itself
        got = guard.job(formats.open_source, path, paths=[path], failed=lambda problem: SourceLoad(
            format="", root=str(path), problems=[problem]))
    except (OSError, ValueError, RuntimeError) as exc:  # the readers report problems; this is a last guard
        got = SourceLoad(format="", root=str(path), problems=[Problem.error(str(path), None, None, "a harness output",
                                                                             f"unreadable ({type(exc).__name__}: {exc})")])
    while len(_SOURCE_CACHE) >= _SOURCE_CACHE_SIZE:
        _SOURCE_CACHE.pop(next(iter(_SOURCE_CACHE)))
    _SOURCE_CACHE[key] = got
    return got


def harness_tasks(bench: Path) -> dict[str, str]:
    """The benchmarks a harness folder opened as the benchmark offers: task -> label ({} for another folder)."""
    from scoring.formats import records

    if not is_harness_benchmark(bench):
        return {}
    got = harness_source(bench)
    if not got:
        return {}
    first = records.default_task(got)
    return {t: records.task_label(got, t) for t in sorted(records.tasks(got), key=lambda t: t != first)}


def _root_of(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _problems_of(src: SourceLoad, path: Path) -> list[Problem]:
    """A source's problems with their files named from the folder given (as the Data page names files)."""
    root = _root_of(path)
    return [replace(p, file=str(root / p.file)) if p.file and not Path(p.file).is_absolute() and (root / p.file).exists() else p
            for p in src.problems]


def _add_run(ws: Workspace, name: str, run: HarnessRun, root: Path, questions: dict[str, HarnessQuestion],
             qids: dict[str, str] | None, benchmark_profile: str) -> None:
    from scoring.formats import records

    files = records.run_files(run, root)
    path = files[0] if files else root
    loaded = records.predictions(run, qids)
    loaded.files = [str(path)]
    ws.predictions.append(PredictionFile(name, path, records.run_digest(run, root), loaded, records.origin(run)))
    rows = records.official_rows(run, name, qids)
    if rows:
        rows = [replace(r, file=str(root / r.file) if not Path(r.file).is_absolute() else r.file) for r in rows]
        ws.discovery.scores.append(path)
        ws.scores.append(LoadResult(items=rows, files=[str(path)], rows_read=len(rows)))
    ws.harness.append(HarnessEntry(name, run, questions, qids, root, benchmark_profile))


def _add_runs(ws: Workspace, runs: list[HarnessRun], root: Path, questions: dict[str, HarnessQuestion],
              qids: dict[str, str] | None, benchmark_profile: str, taken: Iterable[str] = ()) -> list[str]:
    """Add a source's runs of one task; the names given. A (model, dataset) VLMEvalKit evaluated more
    than once is one run, its newest eval id (the source lists it first); the others are kept in
    `ws.evals` under that run's name, for the Data page to load instead."""
    from scoring.formats import records

    groups: dict[object, list[HarnessRun]] = {}
    for run in runs:
        key: object = (run.harness, run.model, run.task) if run.harness == "vlmevalkit" else id(run)
        groups.setdefault(key, []).append(run)
    heads = [group[0] for group in groups.values()]
    names = records.app_names(heads, taken)
    for name, group in zip(names, groups.values()):
        _add_run(ws, name, group[0], root, questions, qids, benchmark_profile)
        if len(group) > 1:
            ws.evals[name] = [EvalOption(f"{r.model}/{r.task}", r.date, r, root, questions, qids, benchmark_profile)
                              for r in group]
    return names


def _benchmark_profile(family: str) -> str:
    from scoring.profiles import MMLONGBENCH_PROFILE

    return {ANLS_FAMILY: "docvqa", MMLONGBENCH_FAMILY: MMLONGBENCH_PROFILE}.get(family, "")


def _join_harness(ws: Workspace, disc: Discovery) -> None:
    """Harness runs (`--runs` a harness's output) joined to the benchmark's gold: MMLongBench-Doc by
    (question, answer), DocVQA by questionId else (question, answers) (scoring.harness_cli); each
    question that cannot be joined and each task of another benchmark is named, the rest loads."""
    from scoring.formats import records
    from scoring.harness_cli import join_docvqa, join_mmlongbench
    from scoring.sensitivity import looks_docvqa

    kind = MMLONGBENCH_FAMILY if disc.layout == MMLONGBENCH else ANLS_FAMILY if looks_docvqa(ws.gold.items) else ""
    taken = {pf.run for pf in ws.predictions} | set(ws.official())
    for path in disc.harness:
        src = harness_source(path)
        if src is None:
            continue
        # conflicting gold is said below, per task joined: there the benchmark's gold decides
        ws.problems.extend(p for p in _problems_of(src, path) if p.kind != CONFLICTING_GOLD)
        root = _root_of(path)
        for task, runs in records.tasks(src).items():
            family = runs[0].family
            # copies: the join writes into the questions, and the source read stays cached for other workspaces
            questions = [replace(q, metadata=dict(q.metadata)) for q in src.gold.get(task, [])]
            if family != kind or not disc.gold:
                ws.problems.append(Problem.warning(str(path), None, None, "a task of this benchmark",
                                                   f"{task}: not this benchmark ({len(runs)} run{'s' if len(runs) != 1 else ''} "
                                                   "not loaded; open the folder as the benchmark to see it)",
                                                   skipped=True, kind="tasks of another benchmark"))
                continue
            def join(those: list[HarnessQuestion], task: str = task) -> list[Problem]:
                return join_mmlongbench(task, those, [disc.gold[0]]) if kind == MMLONGBENCH_FAMILY \
                    else join_docvqa(task, those, list(disc.gold))

            joined = join(questions)
            joined = _join_conflicts(ws, src, task, questions, joined, join, disc, path)
            ws.problems.extend(p for p in joined if p.kind == "questions not in the benchmark's gold")
            qids = {q.qid: str(q.metadata["benchmark_qid"]) for q in questions if "benchmark_qid" in q.metadata}
            by_qid = {q.qid: q for q in questions}
            taken |= set(_add_runs(ws, runs, root, by_qid, qids, _benchmark_profile(family), taken))


def _join_conflicts(ws: Workspace, src: SourceLoad, task: str, questions: list[HarnessQuestion], joined: list[Problem],
                    join, disc: Discovery, path: Path) -> list[Problem]:
    """The questions of `task` whose harness files give different gold, joined to the benchmark: when
    the gold the harness's rule kept finds no benchmark question but another file's gold does, that
    one joins (the benchmark's gold is the question's gold either way); each conflict is named with
    the benchmark deciding. Returns `joined`'s problems without those of the questions joined here."""
    conflicts = [c for c in src.conflicts if c.task == task]
    if not conflicts:
        return joined
    by_qid = {q.qid: q for q in questions}
    rescued: set[str] = set()
    for k in range(1, max(len(c.variants) for c in conflicts)):  # one join per round: the benchmark's gold read once each
        tried = [(by_qid[c.qid], replace(c.variants[k].question, metadata=dict(c.variants[k].question.metadata)))
                 for c in conflicts if k < len(c.variants) and c.qid in by_qid
                 and "benchmark_qid" not in by_qid[c.qid].metadata]
        if not tried:
            break
        join([other for _, other in tried])
        for q, other in tried:
            if "benchmark_qid" in other.metadata:
                q.metadata.update({key: val for key, val in other.metadata.items() if key.startswith("benchmark_")})
                q.answer_format, q.document, q.evidence_pages = other.answer_format, other.document, other.evidence_pages
                rescued.add(q.qid)
    for c in conflicts:
        joined_q = by_qid.get(c.qid)
        if joined_q is None:
            continue
        where = ws.label(str(disc.gold[0])) if disc.gold else "the benchmark"
        said = (f"the benchmark's gold ({where}) is used for question {joined_q.metadata['benchmark_qid']}"
                if "benchmark_qid" in joined_q.metadata else "no file's gold is a question of the benchmark: not scored")
        ws.conflicts.append((c, said))
        ws.problems.extend(replace(p, file=str(_root_of(path) / p.file)) for p in conflict_problems(c, said))
    return [p for p in joined if not (p.kind == "questions not in the benchmark's gold" and p.field in rescued)]


def _load_harness_benchmark(disc: Discovery, src: Sources) -> Workspace:
    """A harness's output opened as the benchmark: the gold of one task (dataset) built from the
    files themselves (scoring.formats.records.gold_of), its runs, their official per-question scores.
    The documents the questions name are looked for in <folder>/docs/; the missing ones are named
    with where they go."""
    from scoring.formats import records

    bench = disc.harness[0]
    problems: list[Problem] = []
    src_load = harness_source(bench) or SourceLoad(format="", root=str(bench))
    problems.extend(_problems_of(src_load, bench))
    found = records.tasks(src_load)
    task = disc.task if disc.task in found else records.default_task(src_load)
    if disc.task and disc.task not in found:
        problems.append(Problem.warning(str(bench), None, "task", "one of " + ", ".join(found) if found else "a task",
                                        f"{disc.task!r} (not in this folder: {task or 'nothing'} shown)"))
    disc.task = task
    root = _root_of(bench)
    runs = found.get(task, [])
    gold = records.gold_of(src_load, task) if task else LoadResult[GoldQuestion]()
    if gold.files:
        gold.files = [str(root / gold.files[0])]
        for q in gold.items:
            q.file = gold.files[0]
    disc.gold = [f for run in runs for f in records.run_files(run, root)]
    if not runs:
        problems.append(Problem.error(str(bench), None, None, "a harness run (lmms-eval samples, VLMEvalKit predictions, "
                                      "LongDocURL results)", "none readable"))
    ws = Workspace(disc, gold, LoadResult(), [], [], LoadResult(), {}, {}, dict(src.labels), problems)
    ws.tasks = {t: records.task_label(src_load, t) for t in found}
    ws.task = task
    ws.conflicts = [(c, CONFLICT_RULE) for c in src_load.conflicts if c.task == task]
    family = runs[0].family if runs else ""
    by_qid = {q.qid: q for q in src_load.gold.get(task, [])}
    _add_runs(ws, runs, root, by_qid, None, _benchmark_profile(family))
    others = _load_predictions(disc.predictions, ws.problems)
    ws.predictions.extend(others)
    for other in [t for t in disc.harness[1:]]:  # further harness paths given as runs: the same task's runs
        extra = harness_source(other)
        if extra is None:
            continue
        ws.problems.extend(_problems_of(extra, other))
        more = records.tasks(extra).get(task, [])
        taken = {pf.run for pf in ws.predictions}
        qids = {q.qid: q.qid for q in extra.gold.get(task, []) if q.qid in by_qid}
        _add_runs(ws, more, _root_of(other), by_qid, qids, _benchmark_profile(family), taken)
    documents: LoadResult[DocumentRecord] = LoadResult(items=[DocumentRecord(d) for d in dict.fromkeys(
        ref.document_id for q in gold.items for ref in q.documents if ref.document_id)])
    locations = _locate_all(gold.items, documents.items, disc.docs_dir)
    missing = [loc for loc in locations.values() if loc.path is None]
    what = "PDFs" if family == MMLONGBENCH_FAMILY else "page images"
    where = (f"copy the {what} into {disc.docs_dir}, or open this folder as runs (--runs) beside the benchmark's own "
             "folder (--benchmark: a clone of MMLongBench-Doc with data/documents/, or a DocVQA-style folder with docs/)")
    for loc in missing:
        locations[loc.document_id] = replace(loc, how=f"not in {disc.docs_dir}: {where}")
    if missing:
        shown = ", ".join(loc.document_id for loc in missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
        problems.append(Problem.warning(str(disc.docs_dir), None, None, f"the {what} the questions name",
                                        f"{len(missing)} of {len(locations)} missing: {shown} (their questions are scored; "
                                        f"their pages cannot be shown -- {where})", kind="missing documents"))
    elif not locations and gold.items:
        problems.append(Problem.warning(str(bench), None, None, "the documents of the questions",
                                        f"none named: {task}'s files do not say which document a question is about, so "
                                        "pages cannot be shown -- open this folder as runs (--runs) beside the benchmark's "
                                        "own folder (--benchmark), whose gold names them", kind="missing documents"))
    ws.documents = documents
    ws.locations, ws.page_counts, doc_problems = check_documents(locations, {})
    ws.problems.extend(doc_problems)
    return ws

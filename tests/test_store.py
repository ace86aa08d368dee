"""The scored runs' store the app keeps -- the engine in the cache folder (scoring/engine/, ingested by
dashboard/shell/scorer.py) -- through the app (AppTest): a restart reads it and scores nothing, a changed
file is scored again (only it), a profile change scores every run under it, a damaged engine file is set
aside and the runs scored into a new one; the shared scoring pool (scoring/evaluate.py); the cache of parsed
prediction files (dashboard/core/store.py), which the workspace reads lazily; and remembered digests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core import digests as D
from dashboard.core import store as S
from scoring import evaluate as scoring_path
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
GOLD = [SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]
RUNS = sorted((SAMPLE / "runs").iterdir())


@pytest.fixture(scope="module")
def gold():
    return load_gold(GOLD).items


def judgements(result):
    return [(r.qid, r.prediction, r.judgement.prediction, r.judgement.status, r.accuracy, r.token_f1, r.anls,
             r.decided_by, r.judgement.threshold, r.judgement.details) for r in result.results]


def same_run(a, b) -> None:
    assert a.report_json() == b.report_json()
    assert a.csv_text() == b.csv_text()
    assert judgements(a) == judgements(b)
    assert (a.missing_ids, a.extra_ids, a.prediction_count, a.gold_count, a.signature, a.groups) == \
        (b.missing_ids, b.extra_ids, b.prediction_count, b.gold_count, b.signature, b.groups)
    assert [str(p) for p in a.problems] == [str(p) for p in b.problems]


def gold_sha() -> str:
    return S.files_sha256(GOLD)


def key_of(path: Path, profile: str) -> str:
    return S.run_key(gold_sha(), S.files_sha256([path]), profile)


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


# ----------------------------------------------------------------------------- the shared pool


def test_score_runs_equals_evaluate_and_workers_do_not_import_streamlit(gold):
    runs = [(p.stem, load_predictions(p).items) for p in RUNS]
    for profile in ("xldocbench", "xldocbench-1519"):
        got = dict(scoring_path.score_runs(gold, runs, profile=profile, min_parallel=0))  # on the pool, however small
        assert sorted(got) == list(range(len(runs)))
        for i, (name, preds) in enumerate(runs):
            same_run(got[i], evaluate(gold, preds, profile=profile, name=name, workers=1))
    if (os.cpu_count() or 1) > 1:
        import streamlit  # noqa: F401  -- imported here, as in the app
        assert scoring_path.workers_import_streamlit() is False


def test_score_runs_falls_back_to_this_process(gold, monkeypatch):
    monkeypatch.setattr(scoring_path, "_pool", lambda: None)
    runs = [(p.stem, load_predictions(p).items) for p in RUNS[:2]]
    got = dict(scoring_path.score_runs(gold, runs))
    for i, (name, preds) in enumerate(runs):
        same_run(got[i], evaluate(gold, preds, name=name, workers=1))


# ----------------------------------------------------------------------------- through the app


def _app(bench: Path, cache: Path, monkeypatch) -> AppTest:
    at = app_on(monkeypatch, bench, timeout=120, env={"LENS_CACHE_DIR": str(cache)})
    assert not at.exception, [e.value for e in at.exception]
    return at


def _restart() -> None:
    """A new server process, as far as the app's memory goes: nothing cached in it (the cache folder stays)."""
    from dashboard.data import workspace as W
    from dashboard.shell import cache as app_cache

    for f in (app_cache._runs, app_cache._workspace_of, app_cache._analysis_of, app_cache._questions, app_cache._frame, app_cache._engine):
        f.clear()
    app_cache._ENSURED.clear()
    W._KEPT.clear()


def _engine_runs(cache: Path) -> dict[tuple[str, str], tuple]:
    """(run name, profile) -> (run id, when ingested, file sha256) of the runs visible in the app's engine."""
    from scoring.engine.connection import EMBEDDED, Engine, Target

    engine = Engine(Target(EMBEDDED, database=cache / "engine" / "lens.duckdb", folder=cache / "engine"))
    with engine.read() as con:
        rows = con.execute("SELECT name, profile, run_id, ingested_at, file_sha256 FROM runs "
                           "WHERE run_id NOT IN (SELECT run_id FROM removals)").fetchall()
    return {(n, p): (r, t, sha) for n, p, r, t, sha in rows}


def _counting(monkeypatch) -> list[list[str]]:
    """Every batch the app's scorer scores (its run names), recorded."""
    from dashboard.shell import scorer

    scored: list[list[str]] = []
    real = scorer.score_runs

    def counted(gold, runs, **kw):
        scored.append([name for name, _ in runs])
        return real(gold, runs, **kw)

    monkeypatch.setattr(scorer, "score_runs", counted)
    return scored


def test_app_reads_the_engine_and_rescores_only_what_changed(tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("docs", "results", "*.py", "__pycache__"))
    cache = tmp_path / "cache"
    scored = _counting(monkeypatch)
    _restart()
    at = _app(bench, cache, monkeypatch)
    first = _engine_runs(cache)
    assert sorted(n for n, _ in first) == sorted(p.stem for p in RUNS)  # one run in the engine per prediction file
    assert sorted(n for b in scored for n in b) == sorted(p.stem for p in RUNS)
    board = at.dataframe[0].value.set_index("Run")

    _restart()
    scored.clear()
    at = _app(bench, cache, monkeypatch)
    assert _engine_runs(cache) == first and scored == []  # read from the engine: nothing scored or written
    assert at.dataframe[0].value.set_index("Run").equals(board)

    changed = bench / "runs" / RUNS[2].name
    data = changed.read_bytes()
    changed.write_bytes(data.replace(b'"prediction": "', b'"prediction": "Answer: ', 1))
    assert changed.read_bytes() != data
    at = _app(bench, cache, monkeypatch)
    now = _engine_runs(cache)
    assert scored == [[RUNS[2].stem]]  # only the changed file was scored again
    assert {k: v for k, v in now.items() if k[0] != RUNS[2].stem} == {k: v for k, v in first.items() if k[0] != RUNS[2].stem}
    assert now[(RUNS[2].stem, "xldocbench")][2] != first[(RUNS[2].stem, "xldocbench")][2]  # its new file's run

    at.selectbox(key="profile").set_value("xldocbench-1519").run()
    assert not at.exception
    assert sorted(n for n, p in _engine_runs(cache) if p == "xldocbench-1519") == sorted(p.stem for p in RUNS)


def test_a_restart_ranks_the_runs_in_the_engine_before_the_question_frame_is_made(tmp_path, monkeypatch):
    """After a restart the runs are found in the engine and ranked without building the question frame
    (0.8 s at 20,000 questions): the engine's codes take the frame's length and position bins from the same
    function (`slice_fields.length_and_position`), and the frame is made when a page first asks for it."""
    from dashboard.core.analysis import question_frame
    from dashboard.core.paths import Sources
    from dashboard.core.scored import engine_questions
    from dashboard.data.workspace import fingerprint, load_workspace
    from dashboard.shell import cache as app_cache
    from dashboard.shell import scorer
    from scoring.engine.ingest import Questions

    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("results", "*.py", "__pycache__"))
    cache = tmp_path / "cache"
    scored = _counting(monkeypatch)
    _restart()
    at = _app(bench, cache, monkeypatch)
    shown = at.dataframe[0].value.set_index("Run")["Accuracy (%)"]
    ws = load_workspace(Sources(benchmark=bench))
    assert any(ws.page_counts.values())  # the PDFs' page counts: length and position are not all "unknown"

    _restart()
    scored.clear()
    made: list[int] = []
    monkeypatch.setattr(app_cache, "question_frame", lambda *a: made.append(1) or question_frame(*a))
    monkeypatch.setenv("LENS_CACHE_DIR", str(cache))
    board = scorer.board(ws, fingerprint(ws.discovery.gold), "xldocbench").set_index("Run")["Accuracy (%)"]
    assert scored == [] and made == []  # found in the engine, ranked, and no frame made
    assert board.sort_index().equals(shown.sort_index())

    # the engine's codes are those of the frame's own bins
    gold, pages = ws.gold.items, ws.page_counts
    frame = question_frame(gold, pages)
    got = engine_questions(gold, pages, ws.declared_pages(), "x")
    from dashboard.core.scored import VOCABULARIES
    from scoring.slice_fields import slice_fields
    want = Questions.from_gold(gold, name="x", extra={f: frame[f].tolist() for f in ("length", "position")},
                               vocab=VOCABULARIES, finder=slice_fields(gold, ws.declared_pages(), metadata=False).columns)
    assert got.key == want.key and got.dictionary == want.dictionary
    assert {f: [list(c) for c in v] if isinstance(v, list) else list(v) for f, v in got.codes.items()} == \
        {f: [list(c) for c in v] if isinstance(v, list) else list(v) for f, v in want.codes.items()}
    assert len(set(frame["length"])) > 1 and len(set(frame["position"])) > 1


def test_a_damaged_engine_file_is_set_aside_and_the_runs_scored_again(tmp_path, monkeypatch):
    """The engine's file in the cache folder is not a database (a disk error, a copy cut short): the app
    moves it aside, scores every run into a new one, and the Data page says so -- never a traceback."""
    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("docs", "results", "*.py", "__pycache__"))
    cache = tmp_path / "cache"
    (cache / "engine").mkdir(parents=True)
    (cache / "engine" / "lens.duckdb").write_bytes(b"not a database " * 4096)
    _restart()
    at = _app(bench, cache, monkeypatch)
    assert sorted(n for n, _ in _engine_runs(cache)) == sorted(p.stem for p in RUNS)
    assert len(list((cache / "engine").glob("lens.duckdb.damaged-*"))) == 1
    at.switch_page("views/data.py").run()
    assert not at.exception
    assert any("damaged" in w.value and "scored again" in w.value for w in at.warning)
    # the notice is that engine's: the same process on another cache folder (a whole engine) shows none
    other = _app(bench, tmp_path / "other", monkeypatch)
    other.switch_page("views/data.py").run()
    assert not other.exception
    assert other.title[0].value == "Data" and not [w.value for w in other.warning if "damaged" in w.value]


# ----------------------------------------------------------------------------- parsed prediction files

MINI = ROOT / "tests" / "fixtures" / "mini_bench"
PREDICTION_FILES = [*RUNS, *sorted((MINI / "runs").iterdir()), *sorted((MINI / "malformed" / "runs").iterdir())]


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _exactly(a, b) -> None:
    """The same LoadResult: records (with the types of their fields), problems, counts, files."""
    assert a == b
    assert [tuple(map(type, (p.line, p.evidence_pages))) for p in a.items] == \
        [tuple(map(type, (p.line, p.evidence_pages))) for p in b.items]


def test_imports_closure_follows_every_import_of_the_package(tmp_path):
    """Module-level and function-level imports, absolute and relative, `from package import module` and
    enclosing packages are followed; a module nothing imports, and other packages, are not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "a.py": "import os\nfrom pkg import b\n\ndef f():\n    from .sub.c import x\n",
             "b.py": "from . import sub\n", "sub/__init__.py": "", "sub/c.py": "from ..d import y\nx = 1\n",
             "d.py": "y = 2\n", "e.py": "import pkg.a\n"}
    for name, text in files.items():
        (pkg / name).write_text(text)
    assert sorted(D.imports_closure("pkg.a", tmp_path)) == ["pkg", "pkg.a", "pkg.b", "pkg.d", "pkg.sub", "pkg.sub.c"]
    before = D.imports_sha256("pkg.a", tmp_path)
    (pkg / "e.py").write_text("import pkg.a  # changed\n")
    assert D.imports_sha256("pkg.a", tmp_path) == before
    (pkg / "d.py").write_text("y = 3\n")
    assert D.imports_sha256("pkg.a", tmp_path) != before


def test_a_parsed_file_entry_outlives_a_change_to_code_that_does_not_read_it(tmp_path, monkeypatch):
    """The entry's key covers the code that parses prediction files (scoring.loaders and what it imports):
    a change to the runner leaves every entry valid -- a restart at 1,000 runs does not parse them all
    again -- and a change to the data model or the loader makes new ones."""
    code = tmp_path / "code"
    shutil.copytree(ROOT / "scoring", code / "scoring", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(S, "_SCORING", code / "scoring")

    def key() -> str:
        monkeypatch.setattr(S, "_READER", None)
        return S.prediction_key("0" * 64, "runs/alpha.jsonl")

    names = set(D.imports_closure("scoring.loaders", code))
    assert {"scoring.loaders", "scoring.model", "scoring.problems"} <= names
    assert not names & {"scoring.runner", "scoring.metrics", "scoring.columnar", "scoring.engine"}
    before = key()
    for untouched in ("runner.py", "metrics.py", "engine/ingest.py"):
        with open(code / "scoring" / untouched, "a") as fh:
            fh.write("# changed\n")
        assert key() == before, untouched
    for read in ("model.py", "loaders.py"):
        with open(code / "scoring" / read, "a") as fh:
            fh.write("# changed\n")
        assert key() != before, read
        before = key()


@pytest.mark.parametrize("path", PREDICTION_FILES, ids=lambda p: p.name)
def test_parsed_predictions_round_trip_exactly(tmp_path, path):
    want = load_predictions(path)
    store = S.PredictionStore(tmp_path)
    _exactly(S.load_predictions_cached(path, _sha(path), store), want)
    assert (store.hits, store.misses) == (0, 1) and len(list((tmp_path / "predictions").glob("*.parquet"))) == 1
    again = S.PredictionStore(tmp_path)
    _exactly(S.load_predictions_cached(path, _sha(path), again), want)
    assert (again.hits, again.misses, again.rejected) == (1, 0, 0)


def test_entries_nobody_used_for_a_month_are_swept_and_a_use_keeps_one(tmp_path):
    """A changed file or reading code leaves its old entries behind: the sweep removes those no server has
    used for UNUSED_DAYS (and a killed writer's temporary file after a day); reading an entry -- its facts
    at a restart, or its rows -- marks it used. Ages are set on the files: nothing waits."""
    import os
    import time

    runs = PREDICTION_FILES[:3]
    store = S.PredictionStore(tmp_path)
    keys = [S.prediction_key(_sha(p), str(p)) for p in runs]
    for p in runs:
        S.load_predictions_cached(p, _sha(p), store)
    paths = [store.path(k) for k in keys]
    assert all(p.is_file() for p in paths)
    tmp = store.folder / ".tmp-left-by-a-killed-writer.parquet"
    tmp.write_bytes(b"part")
    other = store.folder / "notes.txt"  # not an entry: never touched
    other.write_text("mine")
    now = time.time()
    old = now - (D.UNUSED_DAYS + 1) * D.DAY
    for p in (*paths, tmp, other):
        os.utime(p, (old, old))

    assert store.facts(keys[0], str(runs[0])) is not None  # a restart reads its facts: used
    assert store.get(keys[1], str(runs[1])) is not None  # a page reads its rows: used
    assert store.sweep(now, once=False) == 2  # the third entry and the temporary file
    assert [p.is_file() for p in paths] == [True, True, False] and not tmp.exists() and other.is_file()

    recent = now - (D.UNUSED_DAYS - 1) * D.DAY  # unused for less than the limit: kept
    os.utime(paths[0], (recent, recent))
    assert store.sweep(now, once=False) == 0 and paths[0].is_file()
    # once a process: the app's workspace sweeps each folder at its first load only
    first, second = S.PredictionStore(tmp_path / "a"), S.PredictionStore(tmp_path / "a")
    first.folder.mkdir(parents=True)
    assert first.sweep(now) == 0 and second.sweep(now) == 0 and first.folder in D._SWEPT
    gone = S.load_predictions_cached(runs[2], _sha(runs[2]), store)  # a swept entry still wanted is made again
    assert gone.items and paths[2].is_file()


def test_remembered_digests_nobody_used_for_a_month_are_swept_and_a_use_keeps_one(tmp_path, monkeypatch):
    """One small file per path ever hashed (`shas/`): moved, renamed and changed files leave theirs. The sweep
    removes those unused for UNUSED_DAYS and a killed writer's temporary file after a day; recalling a digest
    marks it used; the workspace sweeps at its first load. Ages are set on the files: nothing waits."""
    import os
    import time

    digests = D.FileDigests(tmp_path)
    files = []
    for k in range(3):
        f = tmp_path / f"run{k}.jsonl"
        f.write_text(f'{{"question_id": "q{k}"}}\n')
        files.append(f)
        assert digests.sha256(f, now_ns=time.time_ns() + 10 * D.FileDigests.SETTLED_NS) == _sha(f)  # settled: remembered
    entries = sorted(digests.folder.iterdir())
    assert len(entries) == 3 and digests.hashed == 3
    tmp = digests.folder / ".tmp-left-by-a-killed-writer"
    tmp.write_text("part")
    other = digests.folder / "notes.txt"  # not an entry: never touched
    other.write_text("mine")
    now = time.time()
    old = now - (D.UNUSED_DAYS + 1) * D.DAY
    for p in (*entries, tmp, other):
        os.utime(p, (old, old))
    assert digests.sha256(files[0]) == _sha(files[0]) and digests.hashed == 3  # recalled, not hashed: used
    assert digests.sweep(now, once=False) == 3  # the two others and the temporary file
    assert sorted(digests.folder.iterdir()) == sorted([other, *(e for e in entries if e.is_file())])
    assert len([e for e in entries if e.is_file()]) == 1 and not tmp.exists()
    assert digests.sha256(files[1]) == _sha(files[1]) and digests.hashed == 4  # a swept digest is worked out again

    # the app's workspace sweeps the digests' folder at its first load (once a process)
    swept: list = []
    monkeypatch.setattr(D.FileDigests, "sweep", lambda self, *a, **k: swept.append(self.folder) or 0)
    from dashboard.data.workspace import _load_predictions

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    _load_predictions([files[2]], [])
    import threading

    from dashboard.data.workspace import SWEEPER

    for thread in [t for t in threading.enumerate() if t.name == SWEEPER]:  # it sweeps after the reading, beside it
        thread.join(timeout=120)  # only so that a hang fails instead of blocking the suite
    assert swept == [tmp_path / "cache" / "shas"]


def test_parsed_predictions_keep_problems_and_counts(tmp_path):
    broken = MINI / "malformed" / "runs" / "broken.jsonl"
    want = load_predictions(broken)
    assert want.problems and want.skipped  # the fixture has bad rows
    S.load_predictions_cached(broken, _sha(broken), S.PredictionStore(tmp_path))
    hit = S.PredictionStore(tmp_path).get(S.prediction_key(_sha(broken), str(broken)), str(broken))
    assert hit is not None
    assert hit.problems == want.problems and hit.counts() == want.counts() and hit.unreadable == want.unreadable


def test_changed_prediction_file_is_read_again(tmp_path):
    path = tmp_path / "run.jsonl"
    shutil.copy(RUNS[2], path)
    store = S.PredictionStore(tmp_path / "cache")
    first = S.load_predictions_cached(path, _sha(path), store)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"prediction": "', b'"prediction": "Answer: ', 1))
    second = S.load_predictions_cached(path, _sha(path), store)
    assert second == load_predictions(path) and second != first
    assert store.misses == 2 and store.hits == 0


def _rewrite(target: Path, change) -> None:
    table = pq.read_table(target)
    pq.write_table(change(table), target)


def _flip(data: bytes) -> bytes:
    i = len(data) // 3  # inside a data page (the footer is at the end)
    return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]


def _pred_entry(tmp_path) -> tuple[Path, Path]:
    path = RUNS[1]
    S.load_predictions_cached(path, _sha(path), S.PredictionStore(tmp_path))
    return path, next((tmp_path / "predictions").glob("*.parquet"))


PREDICTION_CORRUPTIONS = {
    "garbage bytes": lambda t: t.write_bytes(b"not a parquet file at all"),
    "truncated": lambda t: t.write_bytes(t.read_bytes()[: t.stat().st_size // 2]),
    "a flipped byte in the data": lambda t: t.write_bytes(_flip(t.read_bytes())),
    "rows dropped": lambda t: _rewrite(t, lambda tb: tb.slice(0, tb.num_rows - 3)),
    "a missing column": lambda t: _rewrite(t, lambda tb: tb.drop_columns(["evidence"]).replace_schema_metadata(tb.schema.metadata)),
    "another key": lambda t: _rewrite(t, lambda tb: tb.replace_schema_metadata({**tb.schema.metadata, b"lens.key": b"0" * 64})),
    "no load metadata": lambda t: _rewrite(t, lambda tb: tb.replace_schema_metadata(
        {k: v for k, v in tb.schema.metadata.items() if k != b"lens.load"})),
    "problems of another shape": lambda t: _rewrite(t, lambda tb: tb.replace_schema_metadata(
        {**tb.schema.metadata, b"lens.load": b'{"problems": [["x"]], "files": [], "rows_read": 1, "skipped": 0, '
                                              b'"blank_lines": 0, "unreadable": []}'})),
    "an id twice": lambda t: _rewrite(t, lambda tb: tb.set_column(
        0, "question_id", pa.array(["same"] * tb.num_rows, pa.string())).replace_schema_metadata(tb.schema.metadata)),
    "a null status": lambda t: _rewrite(t, lambda tb: tb.set_column(
        2, "status", pa.array([None] * tb.num_rows, pa.string())).replace_schema_metadata(tb.schema.metadata)),
    "evidence pages of another type": lambda t: _rewrite(t, lambda tb: tb.set_column(
        5, "evidence_pages", pa.array(['["a"]'] * tb.num_rows, pa.string())).replace_schema_metadata(tb.schema.metadata)),
    "a null page": lambda t: _rewrite(t, lambda tb: tb.set_column(
        5, "evidence_pages", pa.array([[1, None]] * tb.num_rows, pa.list_(pa.int64()))).replace_schema_metadata(
        tb.schema.metadata)),
    "evidence that is no JSON": lambda t: _rewrite(t, lambda tb: tb.set_column(
        6, "evidence", pa.array(["["] * tb.num_rows, pa.string())).replace_schema_metadata(tb.schema.metadata)),
}


@pytest.mark.parametrize("how", list(PREDICTION_CORRUPTIONS))
def test_corrupt_prediction_entry_is_read_again_never_trusted(tmp_path, how):
    path, target = _pred_entry(tmp_path)
    PREDICTION_CORRUPTIONS[how](target)
    store = S.PredictionStore(tmp_path)
    _exactly(S.load_predictions_cached(path, _sha(path), store), load_predictions(path))
    assert store.rejected == 1 and store.hits == 0
    assert target.exists()  # removed, then written again from the file
    again = S.PredictionStore(tmp_path)
    _exactly(S.load_predictions_cached(path, _sha(path), again), load_predictions(path))
    assert again.hits == 1


def test_cache_folder_is_read_when_called(tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "a"))
    assert S.PredictionStore().root == tmp_path / "a"
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "b"))
    assert S.PredictionStore().root == tmp_path / "b"


def test_session_cache_is_not_the_home_cache(lens_cache_dir):
    home = str(Path.home() / ".cache")
    assert S.cache_root() == lens_cache_dir and not str(S.cache_root()).startswith(home)
    without = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}  # the browser tests' server
    assert not str(S.cache_root(without)).startswith(home)


def test_app_shows_load_problems_from_the_cache(broken_bench, tmp_path, monkeypatch):
    """A restart reads the parsed files from the cache; the Data page lists the same problems and
    counts, and the leaderboard is the same."""

    cache = tmp_path / "cache"
    seen, stamps = [], []
    for _ in range(2):
        _restart()  # a restart: nothing in memory
        at = _app(broken_bench, cache, monkeypatch)
        board = at.dataframe[0].value
        at.switch_page("views/data.py").run()
        assert not at.exception
        seen.append((board, [e.value for e in at.error], at.code[0].value, at.dataframe[0].value))
        stamps.append({p.name: p.stat().st_mtime_ns for p in (cache / "predictions").glob("*.parquet")})
    assert stamps[0] == stamps[1]  # read on the restart, not written again
    assert len(list((cache / "predictions").glob("*.parquet"))) == len(list((broken_bench / "runs").iterdir()))
    (b1, e1, c1, f1), (b2, e2, c2, f2) = seen
    assert b1.equals(b2) and e1 == e2 and c1 == c2 and f1.equals(f2)
    assert "runs/broken.jsonl:3 — error: expected a JSON object, got number 42" in c2
    assert f2.set_index("File").loc["runs/broken.jsonl", ["Rows read", "Loaded", "Skipped"]].tolist() == [4, 1, 3]


def test_evidence_boxes_and_uncacheable_text_round_trip(tmp_path):
    """Evidence with document ids and boxes (ints and floats) reads back as built; a text Arrow cannot
    hold (a lone surrogate) is simply not cached -- loaded from the file each time, same result."""
    boxed = tmp_path / "boxed.jsonl"
    boxed.write_text(
        '{"question_id": "q1", "prediction": "a", "evidence": [{"page": 2, "document_id": "d1", "bbox": [1, 2.5, 3, 4]}, '
        '{"page": 3}]}\n{"question_id": "q2", "prediction": "b", "status": "error", "evidence_pages": [1, 7]}\n\n'
        '{"question_id": "q3", "prediction": "c"}\n{"question_id": "q3", "prediction": "d"}\n', encoding="utf-8")
    want = load_predictions(boxed)
    assert any(p.evidence and p.evidence[0].bbox for p in want.items) and any(p.evidence_pages for p in want.items)
    store = S.PredictionStore(tmp_path / "cache")
    _exactly(S.load_predictions_cached(boxed, _sha(boxed), store), want)
    again = S.PredictionStore(tmp_path / "cache")
    _exactly(S.load_predictions_cached(boxed, _sha(boxed), again), want)
    assert again.hits == 1
    from scoring.model import Prediction
    from scoring.problems import LoadResult

    odd = LoadResult(items=[Prediction("q1", "\ud800", "success", "f")])
    assert store.put(S.prediction_key("0" * 64, "f"), odd) is None  # not cacheable: read from the file each time
    assert load_predictions(boxed).problems  # the repeated id is a problem kept with the entry


# ----------------------------------------------------------------------------- file digests remembered


def _digests(tmp_path: Path) -> tuple[D.FileDigests, Path, int]:
    """A FileDigests on a cache folder, a file, and a clock SETTLED_NS after the file's last change."""
    import hashlib

    f = tmp_path / "run.jsonl"
    f.write_bytes(b'{"question_id": "q1", "prediction": "42"}\n' * 3000)  # several chunks of the reader
    st = f.stat()
    later = max(st.st_mtime_ns, st.st_ctime_ns) + D.FileDigests.SETTLED_NS
    d = D.FileDigests(tmp_path / "cache")
    d.CHUNK = 4096
    assert d.sha256(f, now_ns=later) == hashlib.sha256(f.read_bytes()).hexdigest()
    return d, f, later


def test_a_settled_file_is_hashed_once(tmp_path):
    d, f, later = _digests(tmp_path)
    assert d.hashed == 1
    again = D.FileDigests(tmp_path / "cache")  # another process: the folder remembers
    assert again.sha256(f, now_ns=later) == d.sha256(f, now_ns=later)
    assert (again.hashed, d.hashed) == (0, 1)


def test_a_changed_file_is_hashed_again(tmp_path):
    import hashlib

    d, f, later = _digests(tmp_path)
    st = f.stat()
    with open(f, "r+b") as fh:  # same size, and the modification time put back: the status-change time moves
        fh.write(b"X")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    got = d.sha256(f, now_ns=f.stat().st_ctime_ns + D.FileDigests.SETTLED_NS)
    assert got == hashlib.sha256(f.read_bytes()).hexdigest() != hashlib.sha256(b"").hexdigest()
    assert d.hashed == 2


def test_a_file_changed_just_now_is_not_remembered(tmp_path):
    d, f, later = _digests(tmp_path)
    f.write_bytes(f.read_bytes() + b"\n")
    fresh = max(f.stat().st_mtime_ns, f.stat().st_ctime_ns)
    d.sha256(f, now_ns=fresh + D.FileDigests.SETTLED_NS - 1)  # not settled: a write in the same tick could follow
    d.sha256(f, now_ns=fresh + D.FileDigests.SETTLED_NS - 1)
    assert d.hashed == 3
    d.sha256(f, now_ns=fresh + D.FileDigests.SETTLED_NS)
    d.sha256(f, now_ns=fresh + D.FileDigests.SETTLED_NS)
    assert d.hashed == 4


@pytest.mark.parametrize("content", [b"", b"not a digest", b"0" * 63, b"G" * 64, b"\xff" * 64])
def test_a_bad_remembered_digest_is_never_trusted(tmp_path, content):
    import hashlib

    d, f, later = _digests(tmp_path)
    (entry,) = list((tmp_path / "cache" / "shas").iterdir())
    entry.write_bytes(content)
    assert d.sha256(f, now_ns=later) == hashlib.sha256(f.read_bytes()).hexdigest()
    assert d.hashed == 2


def test_a_symlinked_digest_folder_is_not_used(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "shas").symlink_to(elsewhere)
    d = D.FileDigests(tmp_path / "cache")
    f = tmp_path / "run.jsonl"
    f.write_text("{}\n")
    later = max(f.stat().st_mtime_ns, f.stat().st_ctime_ns) + D.FileDigests.SETTLED_NS
    d.sha256(f, now_ns=later)
    d.sha256(f, now_ns=later)
    assert d.hashed == 2 and not list(elsewhere.iterdir())


def test_the_workspace_remembers_its_prediction_files(tmp_path, monkeypatch):
    """Read twice: the second read of a settled benchmark hashes no file -- neither a prediction file nor the gold
    (whose digest names its parsed entry)."""
    from dashboard.core.paths import Sources
    from dashboard.data import workspace as W

    bench = tmp_path / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("mmlongbench", "campaign", "docs", "*.pdf"))
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    made: list[D.FileDigests] = []

    class Settled(D.FileDigests):
        def __init__(self, root=None):
            super().__init__(root)
            made.append(self)

        def sha256(self, path, now_ns=None):
            st = os.stat(path)
            return super().sha256(path, now_ns=max(st.st_mtime_ns, st.st_ctime_ns) + self.SETTLED_NS)

    monkeypatch.setattr(D, "FileDigests", Settled)
    first = W.load_workspace(Sources(bench))
    hashed_first = sum(d.hashed for d in made)
    second = W.load_workspace(Sources(bench))
    assert len(first.predictions) >= 2
    assert [pf.sha256 for pf in first.predictions] == [pf.sha256 for pf in second.predictions]
    assert hashed_first == len(first.predictions) + len(first.discovery.gold) and len(first.discovery.gold) == 2
    assert sum(d.hashed for d in made) == hashed_first  # the second read hashed nothing


def _same_questions(a, b) -> None:
    import numpy as np

    for f in ("name", "key", "ids", "question", "gold", "documents", "unit", "dictionary", "finder_fields"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.doc.dtype == b.doc.dtype and np.array_equal(a.doc, b.doc)
    assert set(a.codes) == set(b.codes)
    for f, want in a.codes.items():
        got = b.codes[f]
        if isinstance(want, list):
            assert len(got) == len(want) and all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(want, got)), f
        else:
            assert want.dtype == got.dtype and np.array_equal(want, got), f


def test_the_questions_as_the_engine_codes_them_are_kept_and_read_back_equal(tmp_path):
    """A restart reads the benchmark's questions as the engine codes them from the cache folder (S.QuestionsStore)
    instead of working them out again: read back equal to `engine_questions`, field by field and dtype by dtype --
    the sample's page counts and evidence sources, and DocVQA's question types (a list field) on some questions --;
    under another key when a gold record, the page counts or the name differ; and an entry that does not read back
    whole (a code outside its dictionary, a null id, a file cut short) is a miss, removed, and made again."""
    from dataclasses import replace

    from dashboard.core.paths import Sources
    from dashboard.core.scored import engine_questions
    from dashboard.data.workspace import load_workspace

    ws = load_workspace(Sources(benchmark=SAMPLE))
    gold = [replace(q, question_types=("table/list", "form")) if i % 7 == 0 else q for i, q in enumerate(ws.gold.items)]
    pages, declared = ws.page_counts, ws.declared_pages()
    assert any(pages.values())
    store = S.QuestionsStore(tmp_path)
    want = engine_questions(gold, pages, declared, "sample")
    assert "question_type" in want.codes and "evidence_source" in want.codes
    first = S.engine_questions_cached(gold, pages, declared, "sample", store=store)
    assert store.misses == 1 and store.hits == 0 and len(list(store.folder.glob("*.parquet"))) == 1
    _same_questions(want, first)
    again = S.engine_questions_cached(gold, pages, declared, "sample", store=store)
    assert store.hits == 1
    _same_questions(want, again)

    key = S.questions_key(gold, pages, declared, "sample")
    changed = [replace(gold[0], question=gold[0].question + "?"), *gold[1:]]
    other_pages = {**pages, next(iter(pages)): 999}
    assert len({key, S.questions_key(changed, pages, declared, "sample"), S.questions_key(gold, other_pages, declared, "sample"),
                S.questions_key(gold, pages, declared, "other")}) == 4

    huge = [replace(gold[0], metadata={**gold[0].metadata, "size": 1 << 70}), *gold[1:]]  # past what JSON holds
    _same_questions(engine_questions(huge, pages, declared, "sample"), S.engine_questions_cached(huge, pages, declared, "sample", store=store))

    path = store.path(key)
    good = pq.read_table(path)
    i = good.column_names.index("code:domain")
    broken = {
        "a code outside its dictionary": good.set_column(i, "code:domain", pa.array([len(want.dictionary["domain"])] * good.num_rows, pa.int16())),
        "a null id": good.set_column(0, "id", pa.array([None] * good.num_rows, pa.string())),
        "a repeated id": good.set_column(0, "id", pa.array(["q"] * good.num_rows, pa.string())),
        "a cluster the documents do not give": good.set_column(4, "doc", pa.array([0] * good.num_rows, pa.int32())),
    }
    for what, table in broken.items():
        pq.write_table(table.replace_schema_metadata(good.schema.metadata), path)
        assert store.get(key) is None and not path.exists(), what
        _same_questions(want, S.engine_questions_cached(gold, pages, declared, "sample", store=store))
    path.write_bytes(path.read_bytes()[:-100])
    assert store.get(key) is None and not path.exists()
    _same_questions(want, S.engine_questions_cached(gold, pages, declared, "sample", store=store))
    assert store.get(key) is not None

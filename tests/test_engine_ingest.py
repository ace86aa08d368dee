"""Ingest into the embedded engine (scoring/engine/, `docbench-lens ingest`): labels coded as the
breakdowns count them, one transaction per run, the same file twice a no-op, a changed file a new
version, removal, a second writer waiting for the first (and saying so), the extensions loaded from
their packages with downloads off, the memory setting, and no credential in any message."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pytest

from dashboard.compare import frames as C
from dashboard.core.analysis import Analysis
from dashboard.core.paths import Sources
from dashboard.data.ingest import questions_of
from dashboard.data.workspace import load_workspace
from dashboard.launch import main as launch_main
from engine_kit import HANG, ROOT, SAMPLE, app_runs, embedded, ingest_all, line_with
from scoring.engine import connection
from scoring.engine import queries as Q
from scoring.engine.connection import Engine, EngineError, Target, conninfo, extension_file, target_from
from scoring.engine.ingest import Questions, ScoredRun, ingest
from scoring.redact import redact
from scoring.registry import METRICS


def run_cli(argv: list[str], env: dict | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    from dashboard.data.ingest import load
    from scoring.engine.cli import main

    code = main(argv, load=load, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LENS_CACHE_DIR", str(folder))
    monkeypatch.delenv("LENS_LAKE_CATALOG", raising=False)
    monkeypatch.delenv("LENS_LAKE_DATA", raising=False)
    monkeypatch.delenv("LENS_ENGINE_MEMORY", raising=False)
    return folder


def engine_of(cache: Path) -> Engine:
    return Engine(target_from())


# ----------------------------------------------------------------------------- labels as the breakdowns count them


def test_labels_named_twice_or_none_count_as_the_breakdowns_and_flips_count_them(tmp_path):
    """A question naming an evidence source twice is counted twice in a breakdown (dashboard.core.analysis)
    and once in a flip table's slice (dashboard.compare.frames); one in no page category is in none."""
    ws = load_workspace(Sources((SAMPLE / "mmlongbench").absolute()))
    gold = ws.gold.items
    gold[0].metadata["evidence_sources"] = ["Chart", "Chart"]
    gold[1].metadata["evidence_sources"] = ["Chart", "Table", "Chart"]
    gold[2].metadata["page_category"] = []
    gold[3].metadata["page_category"] = ["cross-page", "cross-page"]
    runs = app_runs(ws, "mmlongbench-doc")
    an = Analysis.build(runs, gold, ws.page_counts, "mmlongbench-doc")
    questions = questions_of(ws, "mm")
    engine = embedded(tmp_path / "lens.duckdb")
    ids = {}
    for run in runs:
        ids[run.name] = ingest(engine, questions, ScoredRun.from_result(run.result, questions, file_path="f",
                                                                         file_sha256=run.name)).run_id
    with engine.read() as con:
        for field in ("evidence_source", "page_category"):
            want = an.breakdown(field)
            got = Q.breakdown(con, field, questions.key)
            assert [(r["name"], r["label"], r["count"]) for r in got] == list(zip(want["run"], want["label"], want["count"]))
        a, b = (r.name for r in runs)
        want = C.flip_table(C.paired(an.rows_of(an.run_names), a, b), an.questions)
        got = Q.flip_table(con, ids[a], ids[b])
        assert [(g["field"], g["label"], g["questions"], g["documents"]) for g in got] == list(
            zip(want["field"], want["label"], want["questions"], want["documents"]))


def test_the_same_gold_gives_the_same_key_and_codes():
    ws = load_workspace(Sources(SAMPLE.absolute()))
    one, two = questions_of(ws, "a"), questions_of(ws, "b")
    assert one.key == two.key and one.dictionary == two.dictionary
    assert all(np.array_equal(one.codes[f], two.codes[f]) for f in one.codes if not isinstance(one.codes[f], list))
    # the length bins: every bin coded, whichever occur
    assert one.dictionary["length"] == sorted(["1–10 pages", "11–50 pages", "51–200 pages", "201–500 pages", "over 500 pages",
                                               "unknown"])
    changed = list(ws.gold.items)
    changed[0].answers = ("another answer",)
    assert Questions.from_gold(changed, name="a").key != one.key


def test_a_run_whose_columns_do_not_match_is_refused(tmp_path):
    ws = load_workspace(Sources(SAMPLE.absolute()))
    questions = questions_of(ws)
    run = app_runs(ws, "xldocbench")[0]
    scored = ScoredRun.from_result(run.result, questions, file_path="f", file_sha256="x")
    scored.accuracy = scored.accuracy.copy()
    scored.accuracy[3] = np.nan
    with pytest.raises(ValueError, match="not a finite number"):
        ingest(embedded(tmp_path / "e.duckdb"), questions, scored)
    scored.accuracy = scored.accuracy[:-1]
    with pytest.raises(ValueError, match="values for"):
        ingest(embedded(tmp_path / "e.duckdb"), questions, scored)


# ----------------------------------------------------------------------------- the command


def test_ingest_twice_is_a_no_op_and_a_changed_file_a_new_version(cache, tmp_path):
    bench = tmp_path / "bench"
    import shutil

    shutil.copytree(SAMPLE / "campaign", bench)
    run_file = bench / "runs" / "small-3b.jsonl"
    code, out, err = run_cli(["--benchmark", str(bench), "--runs", str(run_file)])
    assert code == 0, err
    assert out.strip() == "small-3b: ingested as version 1 (408 questions)"
    engine = engine_of(cache)
    with engine.read() as con:
        before = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    code, out, err = run_cli(["--benchmark", str(bench), "--runs", str(run_file)])
    assert code == 0 and "small-3b: unchanged" in out
    with engine.read() as con:
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == before == 408
    # a changed file: version 2; version 1 stays until removed
    lines = run_file.read_text(encoding="utf-8").splitlines()
    run_file.write_text("\n".join(lines[:-10]) + "\n", encoding="utf-8")
    code, out, err = run_cli(["--benchmark", str(bench), "--runs", str(run_file)])
    assert code == 0 and out.strip() == "small-3b: ingested as version 2 (408 questions)", (out, err)
    with engine.read() as con:
        every = Q.runs(con, current=False)
        assert [(r["name"], r["version"]) for r in every] == [("small-3b", 1), ("small-3b", 2)]
        board = Q.leaderboard(con)
        assert [(r["name"], r["version"], r["missing"]) for r in board] == [("small-3b", 2, 10)]
    code, out, err = run_cli(["--list"])
    assert code == 0 and out.splitlines()[0].startswith("small-3b@1\trecomputed\t408 questions")
    code, out, err = run_cli(["--remove", "small-3b@1"])
    assert code == 0 and out.strip() == "small-3b@1: removed"
    with engine.read() as con:
        assert [(r["name"], r["version"]) for r in Q.runs(con, current=False)] == [("small-3b", 2)]
        assert con.execute("SELECT count(DISTINCT run_id) FROM scores").fetchone()[0] == 1
    code, out, err = run_cli(["--remove", "small-3b@1"])
    assert code == 1 and "no run 'small-3b@1'" in err and "small-3b" in err
    code, out, err = run_cli(["--remove", "small-3b"])
    assert code == 0 and out.strip() == "small-3b@2: removed"
    with engine.read() as con:
        assert Q.runs(con, current=False) == [] and con.execute("SELECT count(*) FROM scores").fetchone()[0] == 0


def test_run_ids_rise_in_ingest_order_so_a_query_for_a_few_runs_skips_the_rest(cache):
    """A run's rows sit in row groups whose run_id range is narrow only if ids rise as runs are written:
    DuckDB then skips every row group of other runs for `run_id IN (...)` (bench/bench_engine_ids.py:
    2 runs of 1,000 x 20,000 read 11.6M rows with random ids, 246k with rising ones)."""
    code, out, err = run_cli(["--benchmark", str(SAMPLE / "campaign"), "--runs", str(SAMPLE / "campaign" / "runs")])
    assert code == 0, err
    with engine_of(cache).read() as con:
        written = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY ingested_at").fetchall()]
    assert len(written) == 13
    assert written == sorted(written) and len(set(written)) == 13
    assert all(0 < r < 2**63 for r in written)


def test_the_step_makes_a_checkpoint_of_its_own(cache):
    bench = SAMPLE / "campaign"
    run_file = bench / "runs" / "ckpt-0410.jsonl"
    for step in ("410", "410", "520"):
        code, out, err = run_cli(["--benchmark", str(bench), "--runs", str(run_file), "--step", step, "--series", "ckpt"])
        assert code == 0, err
    with engine_of(cache).read() as con:
        runs = Q.runs(con)
        assert [(r["name"], r["step"], r["version"], r["series"]) for r in runs] == [("ckpt-0410", 410, 1, "ckpt"),
                                                                                      ("ckpt-0410", 520, 1, "ckpt")]
        assert {s for (s,) in con.execute("SELECT DISTINCT step FROM scores").fetchall()} == {410, 520}


def test_the_launcher_dispatches_ingest(cache):
    code = launch_main(["ingest", "--benchmark", str(SAMPLE / "campaign"), "--runs",
                        str(SAMPLE / "campaign" / "runs" / "rag-baseline.jsonl")])
    assert code == 0
    with engine_of(cache).read() as con:
        assert [r["name"] for r in Q.runs(con)] == ["rag-baseline"]


def test_every_run_of_the_benchmark_when_none_is_named_and_official_scores(cache):
    code, out, err = run_cli(["--benchmark", str(SAMPLE)])
    assert code == 0, err
    with engine_of(cache).read() as con:
        board = {r["name"]: r for r in Q.leaderboard(con)}
    assert set(board) == {"agent-pipeline", "longctx-img", "longctx-ocr", "small-9b", "simpledoc-gpt", "mdocagent",
                          "qwen-35b-img"}
    assert board["mdocagent"]["source"] == "official" and board["small-9b"]["source"] == "recomputed"


@pytest.mark.parametrize("argv,code,says", [
    (["--benchmark", "/no/such/folder"], 1, "no such folder"),
    ([], 2, "--benchmark DIR is needed"),
    (["--benchmark", str(SAMPLE), "--step", "-3"], 2, "step of 0 or more"),
    (["--benchmark", str(SAMPLE), "--runs", "/no/such/run.jsonl"], 1, "no such file or folder"),
    (["--remove", "nothing-here"], 1, "no run 'nothing-here'"),
    (["--benchmark", str(SAMPLE), "--lake"], 2, "LENS_LAKE_CATALOG, which is not set"),
    (["--benchmark", str(SAMPLE), "--lake", "mysql://u:pw@h/db", "--lake-data", "/tmp/x"], 2, "not a PostgreSQL URL"),
    (["--benchmark", str(SAMPLE), "--lake", "postgresql://u:pw@h/db"], 2, "needs the folder of its data files"),
])
def test_bad_arguments_say_what_is_wrong_in_one_sentence(cache, argv, code, says, capsys):
    got, out, err = run_cli(argv)
    assert got == code and says in err + capsys.readouterr().err
    assert "Traceback" not in err and "pw@" not in err


def test_a_bad_memory_setting_is_one_sentence(cache, monkeypatch):
    monkeypatch.setenv("LENS_ENGINE_MEMORY", "lots")
    code, out, err = run_cli(["--benchmark", str(SAMPLE)])
    assert code == 2 and "LENS_ENGINE_MEMORY='lots' is not an amount of memory" in err


def test_the_memory_setting_reaches_duckdb(cache, monkeypatch):
    monkeypatch.setenv("LENS_ENGINE_MEMORY", "256MB")
    with engine_of(cache).write() as con:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "244.1 MiB"
    monkeypatch.delenv("LENS_ENGINE_MEMORY")
    with engine_of(cache).write() as con:  # the default: 1 GB
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "953.6 MiB"


# ----------------------------------------------------------------------------- one writer at a time (embedded)


CHILD = textwrap.dedent("""
    import sys
    from dashboard.launch import main
    sys.exit(main(["ingest", *sys.argv[1:]]))
""")


def child(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_second_writer_waits_for_the_first_and_says_so(cache):
    env = {**os.environ, "LENS_CACHE_DIR": str(cache)}
    engine = engine_of(cache)
    bench = SAMPLE / "campaign"
    with engine.write() as con:  # this process writes: the child must wait
        con.execute("SELECT 1")
        proc = child(["--benchmark", str(bench), "--runs", str(bench / "runs" / "vision-13b.jsonl")], env)
        said = line_with(proc.stderr, "waiting")
        assert "is being written by another process (pid" in said and f"pid {os.getpid()} on" in said
        assert "waiting up to 600 s for it to finish" in said
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    assert out.strip() == "vision-13b: ingested as version 1 (408 questions)"


def test_a_writer_that_waited_too_long_stops_with_a_sentence(cache):
    env = {**os.environ, "LENS_CACHE_DIR": str(cache)}
    engine = engine_of(cache)
    bench = SAMPLE / "campaign"
    with engine.write():
        proc = child(["--benchmark", str(bench), "--runs", str(bench / "runs" / "vision-13b.jsonl"), "--wait", "0"], env)
        out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 3
    assert f"is still being written by another process (pid {os.getpid()} on" in err and "nothing was done" in err
    with engine.read() as con:
        assert Q.runs(con) == []


def test_two_ingest_processes_at_once_both_land_whole(cache):
    env = {**os.environ, "LENS_CACHE_DIR": str(cache)}
    bench = SAMPLE / "campaign"
    procs = [child(["--benchmark", str(bench), "--runs", str(bench / "runs" / name)], env)
             for name in ("ckpt-0410.jsonl", "ckpt-0520.jsonl")]
    for p in procs:
        out, err = p.communicate(timeout=HANG)
        assert p.returncode == 0, err
    with engine_of(cache).read() as con:
        got = {r["name"]: r for r in Q.leaderboard(con)}
        assert set(got) == {"ckpt-0410", "ckpt-0520"}
        for r in got.values():
            n = con.execute("SELECT count(*) FROM scores WHERE run_id = ?", [r["run_id"]]).fetchone()[0]
            assert n == 408 and r["attempted"] + r["missing"] == 408


# ----------------------------------------------------------------------------- extensions, offline


def test_extensions_load_from_their_packages_with_downloads_off(tmp_path):
    """Every extension the engine loads is a file inside an installed package (site-packages), and
    DuckDB's automatic install and load are off: nothing can be fetched at run time."""
    import site

    roots = [Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]]
    for name in ("ducklake", "postgres"):
        path = extension_file(name).resolve()
        assert any(path.is_relative_to(r) for r in roots), path
        assert path.parent.name == f"v{duckdb.__version__}"
    engine = embedded(tmp_path / "e.duckdb")
    with engine.write() as con:
        got = dict(con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN "
                               "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
        assert got == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    con = duckdb.connect(config=engine._config())
    connection._load(con, "ducklake", tmp_path)
    connection._load(con, "postgres", tmp_path)
    loaded = {n: p for n, p in con.execute("SELECT extension_name, install_path FROM duckdb_extensions() WHERE loaded "
                                           "AND NOT install_path LIKE '(BUILT-IN)'").fetchall()}
    assert set(loaded) >= {"ducklake", "postgres_scanner"}
    link = tmp_path / "extensions" / f"v{duckdb.__version__}" / "postgres_scanner.duckdb_extension"
    assert link.is_symlink() and link.resolve() == extension_file("postgres").resolve()


def test_a_missing_extension_package_is_one_sentence(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith("duckdb_extension") else real(name, *a))
    with pytest.raises(EngineError) as got:
        extension_file("postgres")
    text = str(got.value)
    assert text == ("DuckDB's postgres extension is not installed: pip install 'docbench-lens[server]' (it brings "
                    f"duckdb-extension-postgres=={duckdb.__version__}); it is never downloaded at run time")


# ----------------------------------------------------------------------------- no credential in a message


@pytest.mark.parametrize("text", [
    "postgresql://lens:S3cret@127.0.0.1:5432/lake",
    "could not attach 'ducklake:postgres:dbname=lake host=h user=lens password=S3cret'",
    "dbname='lake' password='S3cret' user='lens'",
    "ATTACH 'ducklake:postgres:dbname=''lake'' password=''S3cret'''",
    "https://h/x?user=u&password=S3cret&y=1",
    "echoed back: S3cret",
])
def test_redact_hides_the_password_in_every_form(text):
    assert "S3cret" not in redact(text, ["S3cret"])
    if "echoed" not in text:
        assert "S3cret" not in redact(text)


def test_the_catalog_url_becomes_a_libpq_string_and_is_never_shown():
    url = "postgresql://lens:p%40ss%27w@db.example:6543/lake?sslmode=require"
    assert conninfo(url) == "dbname='lake' host='db.example' port='6543' user='lens' password='p@ss\\'w' sslmode='require'"
    target = target_from({"LENS_LAKE_CATALOG": url, "LENS_LAKE_DATA": "/shared/lake"})
    assert target.kind == "ducklake" and target.data == "/shared/lake/"
    assert "p@ss" not in target.shown() and "p%40ss" not in target.shown()
    assert set(target.secrets) == {"p%40ss%27w", "p@ss'w"}


def test_a_store_made_by_a_newer_version_is_refused(tmp_path):
    engine = embedded(tmp_path / "e.duckdb")
    with engine.write() as con:
        con.execute("INSERT INTO lens_meta VALUES ('schema', '99')")
    with pytest.raises(EngineError, match="made by a newer docbench-lens"):
        with engine.write():
            pass


def test_summaries_match_the_rows_they_summarise(tmp_path):
    """cells and doc_sums, written at ingest, equal the same sums over the stored rows."""
    engine = embedded(tmp_path / "e.duckdb")
    ingest_all(engine, SAMPLE / "campaign")
    with engine.read() as con:
        for run_id, in con.execute("SELECT run_id FROM runs").fetchall():
            n, acc, right = con.execute("SELECT n, sum_accuracy, sum_right FROM cells WHERE run_id = ? AND field = 'overall'",
                                        [run_id]).fetchone()
            m, acc2, right2 = con.execute("SELECT count(*), sum(accuracy), count_if(is_right) FROM scores WHERE run_id = ? "
                                          "AND attempted", [run_id]).fetchone()
            assert (n, right) == (m, right2) and acc == pytest.approx(acc2)
            per_doc = con.execute("SELECT sum(n), sum(sum_token_f1) FROM doc_sums WHERE run_id = ?", [run_id]).fetchone()
            assert per_doc[0] == n
    assert set(METRICS) == {"accuracy", "token_f1", "anls"}


def test_target_is_in_the_cache_folder_by_default(cache):
    target = target_from()
    assert target.kind == "duckdb" and target.database == cache / "engine" / "lens.duckdb"
    assert isinstance(target, Target)


def test_the_engine_is_packaged():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "scoring.engine" in project["tool"]["setuptools"]["packages"]
    deps = project["project"]["dependencies"]
    assert f"duckdb=={duckdb.__version__}" in deps and f"duckdb-extension-ducklake=={duckdb.__version__}" in deps
    assert f"duckdb-extension-postgres=={duckdb.__version__}" in project["project"]["optional-dependencies"]["server"]


def test_labels_worked_out_once_per_value_keep_every_value_apart():
    """The questions' labels are memoised per distinct plain value (a restart at 20,000 questions spent
    0.6 s working them out one by one): values equal as keys but of other types (1, 1.0, True) keep their
    own labels, a list is never memoised, and a value seen with matching codes is checked again when its
    codes differ."""
    from scoring.engine import ingest as I

    values = [1, 1.0, True, "1", None, float("nan"), ("a", "b"), ["a", "b"], 1, "1", ("a", "b")]
    for field in ("domain", "evidence_source", "page_category"):
        assert I._each_labels(values, field) == [I._labels(v, field) for v in values]
    assert I._each_labels([1, 1.0, True], "domain") == [["1"], ["1.0"], ["True"]]
    names = ["a", "b"]
    assert I._same_labels(["a", "a", "b"], np.array([0, 0, 1]), names)
    assert not I._same_labels(["a", "a"], np.array([0, 1]), names)
    assert I._same_labels([("a", "b"), ("a", "b")], [np.array([0, 1]), np.array([1, 0])], names)
    assert not I._same_labels([("a", "b"), ("a", "b")], [np.array([0, 1]), np.array([0])], names)

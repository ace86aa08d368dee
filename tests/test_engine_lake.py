"""The engine as a team's DuckLake: its catalog on a throwaway PostgreSQL server started by the tests
(tests/pg_kit.py; LENS_REQUIRE_POSTGRES=1 makes a missing server a failure), its data files in a folder.
Two ingest processes write at once (held inside their transactions until both are there), two reader
processes read all along and never see half a run; the same file ingested by two jobs at once lands
once; PostgreSQL stopped mid-ingest leaves the run absent, and the job says so; no message shows the
catalog's password."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest

from dashboard.data.ingest import load
from engine_kit import HANG, ROOT, SAMPLE, line_with
from scoring.engine import ingest as I
from scoring.engine import queries as Q
from scoring.engine.cli import main as cli_main
from scoring.engine.connection import Engine, EngineError, target_from

CAMPAIGN = SAMPLE / "campaign"

# an ingest process that, inside its transaction, marks that it got there and waits until the other
# one has too: both transactions are open at once, then both commit
WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from scoring.engine import ingest as I
    here, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    def both_inside(con, run):
        (here / me).touch()
        deadline = time.monotonic() + 600  # a hang guard: the other writer died
        while not (here / other).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    I.before_commit = both_inside
    from dashboard.launch import main
    sys.exit(main(["ingest", *sys.argv[4:]]))
""")

# a reader that checks, at every look until it sees `want` runs, that each run it sees is whole: all
# its rows and summaries (never a part of a run)
READER = textwrap.dedent("""
    import sys, time
    from scoring.engine import queries as Q
    from scoring.engine.connection import Engine, target_from
    want = int(sys.argv[1])
    looks = 0
    with Engine(target_from()).read() as con:
        print("connected", flush=True)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            looks += 1
            con.execute("BEGIN")  # one snapshot for the runs and their rows
            board = Q.leaderboard(con)
            for r in board:
                rows = con.execute("SELECT count(*), count(*) FILTER (attempted) FROM scores WHERE run_id = ?",
                                   [r["run_id"]]).fetchone()
                texts = con.execute("SELECT count(*) FROM texts WHERE run_id = ?", [r["run_id"]]).fetchone()[0]
                docs = con.execute("SELECT sum(n) FROM doc_sums WHERE run_id = ?", [r["run_id"]]).fetchone()[0]
                assert rows == (408, r["attempted"]) and texts == r["attempted"] and docs == r["attempted"], (r, rows, texts)
            con.execute("COMMIT")
            if len(board) >= want:
                print(looks, sorted(r["name"] for r in board))
                sys.exit(0)
            time.sleep(0.05)
    sys.exit("the runs never all appeared")
""")


@pytest.fixture
def lake(postgres, tmp_path, monkeypatch) -> dict[str, str]:
    """A fresh DuckLake: the catalog a new database on the session's server, the data a folder; the
    settings set for this process and its children."""
    url = postgres.fresh_database("lake")
    env = {"LENS_LAKE_CATALOG": url, "LENS_LAKE_DATA": str(tmp_path / "lake-data"), "LENS_CACHE_DIR": str(tmp_path / "cache")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


def spawn(script: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_writers_at_once_and_two_readers_see_whole_runs_only(lake, tmp_path):
    with Engine(target_from()).write():  # the tables made once, before the race
        pass
    readers = [spawn(READER, ["2"], lake) for _ in range(2)]
    for proc in readers:  # both connected (a state, waited for) before the writers start
        assert proc.stdout is not None and line_with(proc.stdout, "connected").strip() == "connected"
    marks = tmp_path / "marks"
    marks.mkdir()
    writers = [spawn(WRITER, [str(marks), me, other, "--benchmark", str(CAMPAIGN), "--runs", str(CAMPAIGN / "runs" / run)], lake)
               for me, other, run in (("a", "b", "ckpt-0410.jsonl"), ("b", "a", "ckpt-0520.jsonl"))]
    for proc in writers:
        out, err = proc.communicate(timeout=HANG)
        assert proc.returncode == 0, err
        assert "ingested as version 1 (408 questions)" in out
    for proc in readers:
        out, err = proc.communicate(timeout=HANG)
        assert proc.returncode == 0, err
        assert out.split(" ", 1)[1].strip() == "['ckpt-0410', 'ckpt-0520']"
    assert (marks / "a").exists() and (marks / "b").exists()  # both were inside their transactions at once
    with Engine(target_from()).read() as con:
        assert sorted(r["name"] for r in Q.leaderboard(con)) == ["ckpt-0410", "ckpt-0520"]
        assert con.execute("SELECT count(*) FROM benchmarks").fetchone()[0] >= 1
        assert con.execute("SELECT count(DISTINCT q) FROM questions").fetchone()[0] == 408


def test_the_same_file_by_two_jobs_at_once_lands_once(lake, tmp_path):
    with Engine(target_from()).write():
        pass
    marks = tmp_path / "marks"
    marks.mkdir()
    run = CAMPAIGN / "runs" / "rag-baseline.jsonl"
    writers = [spawn(WRITER, [str(marks), me, other, "--benchmark", str(CAMPAIGN), "--runs", str(run)], lake)
               for me, other in (("a", "b"), ("b", "a"))]
    outs = []
    for proc in writers:
        out, err = proc.communicate(timeout=HANG)
        assert proc.returncode == 0, err
        outs.append(out.strip())
    # each job says the run is in: ingested, or found ingested by the other at the same moment
    assert "rag-baseline: ingested as version 1 (408 questions)" in outs
    assert all(o in ("rag-baseline: ingested as version 1 (408 questions)",
                     "rag-baseline: unchanged (another job ingested the same file at the same moment: version 1)")
               for o in outs), outs
    with Engine(target_from()).read() as con:
        board = Q.leaderboard(con)
        assert [(r["name"], r["version"]) for r in board] == [("rag-baseline", 1)]
        # the later copy removed itself: its rows are gone too
        assert con.execute("SELECT count(DISTINCT run_id) FROM scores").fetchone()[0] == 1
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 408


def test_postgres_stopped_mid_ingest_leaves_the_run_absent_and_the_job_says_so(tmp_path, monkeypatch):
    import pg_kit

    if pg_kit.binaries() is None:
        if os.environ.get("CI") or os.environ.get("LENS_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL's server binaries were not found (apt-get install postgresql)")
        pytest.skip("PostgreSQL's server binaries were not found")
    with pg_kit.running() as server:  # a server of its own: this test stops it
        url = server.fresh_database("lake")
        monkeypatch.setenv("LENS_LAKE_CATALOG", url)
        monkeypatch.setenv("LENS_LAKE_DATA", str(tmp_path / "lake-data"))
        monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
        argv = ["--benchmark", str(CAMPAIGN), "--runs", str(CAMPAIGN / "runs" / "small-3b.jsonl"),
                str(CAMPAIGN / "runs" / "vision-13b.jsonl")]
        stopped = []

        def stop_the_server(con, run):
            if run.name == "vision-13b" and not stopped:  # the second run: the first is in
                server.stop()
                stopped.append(run.name)

        monkeypatch.setattr(I, "before_commit", stop_the_server)
        out, err = io.StringIO(), io.StringIO()
        code = cli_main(argv, load=load, stdout=out, stderr=err)
        assert code == 3, err.getvalue()
        assert out.getvalue().strip() == "small-3b: ingested as version 1 (408 questions)", err.getvalue()
        said = err.getvalue()
        assert "vision-13b: NOT ingested" in said and "Nothing of this run is visible in the store" in said
        assert "the 1 run before it is in the store" in said and "run the job again" in said
        assert len(said.strip().splitlines()) == 1  # one line, without the query DuckDB ran
        assert pg_kit.PASSWORD not in said and "Traceback" not in said
        server.start()
        with Engine(target_from()).read() as con:
            assert [r["name"] for r in Q.runs(con)] == ["small-3b"]
            assert con.execute("SELECT count(DISTINCT run_id) FROM scores").fetchone()[0] == 1
            assert con.execute("SELECT count(*) FROM runs WHERE name = 'vision-13b'").fetchone()[0] == 0
        monkeypatch.setattr(I, "before_commit", lambda con, run: None)
        out, err = io.StringIO(), io.StringIO()
        assert cli_main(argv, load=load, stdout=out, stderr=err) == 0, err.getvalue()
        assert out.getvalue().splitlines() == ["small-3b: unchanged (already in " + Engine(target_from()).shown() + ")",
                                               "vision-13b: ingested as version 1 (408 questions)"]


def test_a_wrong_password_is_one_sentence_without_it(postgres, tmp_path, monkeypatch):
    url = postgres.fresh_database("lake").replace(":lens-S3cret-pw@", ":Wr0ng-pw@")
    monkeypatch.setenv("LENS_LAKE_CATALOG", url)
    monkeypatch.setenv("LENS_LAKE_DATA", str(tmp_path / "d"))
    with pytest.raises(EngineError) as got:
        with Engine(target_from()).write():
            pass
    text = str(got.value)
    assert "cannot be opened" in text and "password authentication failed" in text
    assert "Wr0ng" not in text and "***" in text
    out, err = io.StringIO(), io.StringIO()
    assert cli_main(["--benchmark", str(CAMPAIGN), "--runs", str(CAMPAIGN / "runs" / "small-3b.jsonl")], load=load,
                    stdout=out, stderr=err) == 3
    assert "Wr0ng" not in err.getvalue() + out.getvalue()

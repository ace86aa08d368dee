"""Files a user or a harness left are read where they can be killed (issue 35.1, scoring/guard.py): a
reader that allocates without bound is stopped at the memory limit, one that hangs at the time budget,
one that crashes costs its file -- each file named with the reason, the rest of the folder loaded, and
the process that asked (the app's server, the command line) under a memory ceiling.

The mechanism is tested with test-only readers (tests/guard_kit.py); the real readers with hostile files
of bounded size on disk: a JSON-lines prediction whose answer is a 24 MB nested list (about 900 MB of
objects: the app's workspace and the CLI both peaked above 880 MB on it before), and an lmms-eval
samples file whose `target` is a 16 MB Python literal. Budgets here are small (256 MB, 2-3 s); every
wait has a hang guard of at least 20 times what it should take."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sys
import threading
from pathlib import Path

import pytest

import guard_kit
from scoring import guard
from scoring.problems import LoadResult

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini_bench"
HANG_GUARD_S = 120.0  # a refused file takes its budget (2-3 s here) plus a child's start: 20x and more


def _limited(monkeypatch, memory: str = "256M", budget: str = "60") -> None:
    for name, value in guard_kit.memory_env(memory, budget).items():
        monkeypatch.setenv(name, value)


def _within_guard(fn, *args, **kwargs):
    """fn(...) in a thread, waited for at most HANG_GUARD_S (a hang fails the test instead of the run)."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("value", fn(*args, **kwargs)), daemon=True)
    t.start()
    t.join(HANG_GUARD_S)
    assert not t.is_alive(), f"still running after {HANG_GUARD_S:.0f} s"
    return box["value"]


# ----------------------------------------------------------------------------- the settings


@pytest.mark.parametrize(("text", "expected"), [
    ("1G", 1 << 30), ("512M", 512 << 20), ("1.5G", 3 << 29), ("2GB", 2 << 30), ("512MiB", 512 << 20),
    ("800k", 800 << 10), ("1073741824", 1 << 30), (" 1 g ", 1 << 30), ("", None), ("lots", None), ("-1G", None),
    ("0", None), ("nanG", None), ("infM", None), ("1X", None)])
def test_the_memory_setting_reads_sizes(text, expected):
    assert guard.parse_memory(text) == expected


def test_the_limits_fall_back_to_their_defaults():
    assert guard.limits({}) == guard.Limits(1 << 30, 60.0)
    assert guard.limits({guard.MEMORY_VARIABLE: "512M", guard.BUDGET_VARIABLE: "2.5"}) == guard.Limits(512 << 20, 2.5)
    assert guard.limits({guard.MEMORY_VARIABLE: "nonsense", guard.BUDGET_VARIABLE: "-3"}) == guard.Limits(1 << 30, 60.0)
    assert guard.limits({guard.MEMORY_VARIABLE: "1M", guard.BUDGET_VARIABLE: "1e9"}) == guard.Limits(32 << 20, 60.0)
    assert [guard.format_memory(n) for n in (1 << 30, 3 << 29, 512 << 20, 2 << 40)] == ["1 GB", "1.5 GB", "512 MB", "2 TB"]


def test_bounded_formats_may_take_more_for_their_size(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(200 << 20)
    base = guard.Limits(1 << 30, 60.0)
    assert guard.file_limits(big, True, base) == (guard.Limits(1600 << 20, 60.0), True)
    assert guard.file_limits(big, False, base) == (base, False)
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    assert guard.file_limits(small, True, base) == (base, False)


# ----------------------------------------------------------------------------- the mechanism (test-only readers)


def test_a_reader_that_allocates_without_bound_is_stopped_at_the_limit_and_the_rest_loads(tmp_path, monkeypatch):
    _limited(monkeypatch, "256M")
    folder = guard_kit.hostile_folder(tmp_path, good=3, hog=1)
    got, problems = _within_guard(guard.job, guard_kit.read_folder, folder, failed=lambda p: ({}, [p]))
    assert sorted(got) == ["a.txt", "b.txt", "c.txt"]
    assert [(Path(p.file).name, p.got, p.kind) for p in problems] == [
        ("hog0.hog", "hog0.hog needs more than 256 MB to read; not read", guard.REFUSED_KIND)]


def test_a_reader_that_hangs_is_stopped_at_the_budget(tmp_path, monkeypatch):
    _limited(monkeypatch, "256M", "2")
    folder = guard_kit.hostile_folder(tmp_path, good=2, hang=1)
    got, problems = _within_guard(guard.job, guard_kit.read_folder, folder, failed=lambda p: ({}, [p]))
    assert sorted(got) == ["a.txt", "b.txt"]
    assert [p.got for p in problems] == ["hang0.hang was not read within 2 s (the budget, LENS_READ_BUDGET_S); not read"]


def test_a_reader_that_crashes_costs_its_file(tmp_path, monkeypatch):
    _limited(monkeypatch)
    folder = guard_kit.hostile_folder(tmp_path, good=2, crash=1)
    got, problems = _within_guard(guard.job, guard_kit.read_folder, folder, failed=lambda p: ({}, [p]))
    assert sorted(got) == ["a.txt", "b.txt"]
    assert [p.got for p in problems] == ["crash0.crash stopped its reader (SIGSEGV; it may need more than 256 MB to read); "
                                         "not read"]


def test_after_too_many_refusals_the_files_not_read_yet_are_refused_together(tmp_path, monkeypatch):
    _limited(monkeypatch, "64M")
    monkeypatch.setattr(guard, "MAX_REFUSALS", 2)
    folder = guard_kit.hostile_folder(tmp_path, good=2, hog=4)
    got, problems = _within_guard(guard.job, guard_kit.read_folder, folder, failed=lambda p: ({}, [p]))
    assert sorted(got) == ["a.txt", "b.txt"]  # read before the hogs (by name), in every attempt
    assert [Path(p.file).name for p in problems] == ["hog0.hog", "hog1.hog", "hog2.hog", "hog3.hog"]
    assert [p.got.split(" ", 1)[1] for p in problems[:2]] == ["needs more than 64 MB to read; not read"] * 2
    assert all(p.got.split(" ", 1)[1].startswith("was skipped after") for p in problems[2:])


def test_a_worker_process_of_ours_limits_itself(tmp_path, monkeypatch):
    """A pool's worker (the harness tables read on every core) has no supervisor: inside a bracket it
    limits itself and ends on a MemoryError, so that its caller reads the file again in its own bracket."""
    _limited(monkeypatch, "64M")
    path = tmp_path / "x.hog"
    path.write_text("x")
    proc = multiprocessing.get_context("forkserver").Process(target=guard_kit.hog_in_bracket, args=(path,))
    proc.start()
    proc.join(HANG_GUARD_S)
    assert proc.exitcode == guard.MEMORY_EXIT


def test_a_small_document_reads_under_a_small_limit(monkeypatch):
    """A JSON document is read whole up to a cap of hundreds of MB: the read must not reserve the cap
    (under a 64 MB limit that reservation alone failed, and a 428-byte file was refused)."""
    from scoring import loaders

    _limited(monkeypatch, "64M")
    res = _within_guard(guard.job, loaders.load_predictions, MINI / "runs" / "beta.json")
    assert not res.unreadable and len(res.items) == 10, res.problems


def test_a_plain_process_reads_small_bounded_files_here_and_the_rest_in_a_job(tmp_path):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text("{}\n" * 10)
    big.write_text("{}\n" * 800_000)
    assert guard.here([small], bounded=True)
    assert not guard.here([big], bounded=True)
    assert not guard.here([small], bounded=False)  # a workbook's or a literal's size bounds nothing
    fifo = tmp_path / "pipe.jsonl"
    import os

    os.mkfifo(fifo)
    assert not guard.here([fifo], bounded=True)


# ----------------------------------------------------------------------------- the real readers


def _bench_with_hostile_run(root: Path) -> Path:
    bench = root / "bench"
    shutil.copytree(MINI, bench, ignore=shutil.ignore_patterns("malformed"))
    qid = json.loads((bench / "runs" / "alpha.jsonl").read_text().splitlines()[0])["question_id"]
    guard_kit.nested_list_predictions(bench / "runs" / "hostile.jsonl", qid)
    return bench


WORKSPACE = """
import json
from pathlib import Path
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
ws = load_workspace(Sources(benchmark=Path({bench!r})))
print(json.dumps({{pf.run: [len(pf.loaded.items), [p.got for p in pf.loaded.problems]] for pf in ws.predictions}}))
"""


def test_the_workspace_names_a_hostile_prediction_file_and_loads_the_rest_under_a_ceiling(tmp_path):
    """Before: the server process parsed the file itself -- 885 MB peak, 8 s; now a reader process
    does, is stopped at 256 MB, and the server's peak stays under 400 MB."""
    bench = _bench_with_hostile_run(tmp_path)
    env = {**guard_kit.memory_env("256M"), "LENS_CACHE_DIR": str(tmp_path / "cache")}
    peak, out = guard_kit.peak_of(WORKSPACE.format(bench=str(bench)), env, timeout=HANG_GUARD_S)
    runs = json.loads(out.strip().splitlines()[-1])
    assert runs["alpha"][0] == 10 and runs["beta"][0] == 10
    assert runs["hostile"] == [0, ["hostile.jsonl needs more than 256 MB to read; not read"]]
    assert peak < 400, f"the process that asked peaked at {peak} MB"


def test_a_refusal_is_not_cached_and_a_larger_limit_reads_the_file(tmp_path, monkeypatch):
    from dashboard.core.store import PredictionStore, load_predictions_cached

    path = guard_kit.nested_list_predictions(tmp_path / "run.jsonl", "q1", mb=4)  # 1.4 M lists, ~100 MB parsed
    store = PredictionStore(tmp_path / "cache")
    _limited(monkeypatch, "32M")
    for _ in range(2):
        res = _within_guard(load_predictions_cached, path, "ab" * 32, store)
        assert res.unreadable == [str(path)] and res.problems[0].kind == guard.REFUSED_KIND
    assert not list((tmp_path / "cache").rglob("*.parquet"))
    _limited(monkeypatch, "1G")
    res = _within_guard(load_predictions_cached, path, "ab" * 32, store)
    assert not res.unreadable and len(res.items) == 1


def test_the_command_line_names_the_file_and_scores_the_rest_under_a_ceiling(tmp_path):
    """Before: 1,280 MB and 31 s, the hostile answer parsed in the CLI's process; now the file is named
    (exit 1: one prediction file yielded nothing), both other runs are scored and printed once each."""
    bench = _bench_with_hostile_run(tmp_path)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "scoring", "--gold-files", str(bench / "qa_single_doc.jsonl"),
           str(bench / "qa_cross_doc.jsonl"), "--predictions", str(bench / "runs" / "alpha.jsonl"),
           str(bench / "runs" / "hostile.jsonl"), str(bench / "runs" / "beta.json"), "--output", str(out),
           "--per-question-csv", str(out)]
    proc, peak, _ = guard_kit.run_measured(cmd, guard_kit.memory_env("256M"), timeout=HANG_GUARD_S)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("== alpha") == 1 and proc.stdout.count("== beta") == 1
    assert f"{bench / 'runs' / 'hostile.jsonl'}: error: expected {guard.EXPECTED}, got hostile.jsonl needs more than " \
           "256 MB to read; not read (skipped)" in proc.stderr
    assert proc.stderr.count("hostile.jsonl needs more than") == 1
    assert sorted(p.name for p in out.iterdir()) == ["alpha.csv", "alpha.json", "beta.csv", "beta.json"]
    assert peak < 500, f"the command line peaked at {peak} MB"


def test_a_replayed_command_prints_what_came_before_the_refused_file_once(tmp_path):
    """The harness CLI prints a note before it reads; the hostile file stops the first attempt and the
    command runs again from its start: the note is printed once, the refusal once."""
    folder = guard_kit.hostile_folder(tmp_path, good=0)
    (folder / "x.txt").write_text("x")
    code = ("import sys; sys.path.insert(0, 'tests'); import guard_kit\n"
            "from scoring import guard\n"
            "guard.supervise()\n"
            "print('note: before the reading', flush=True)\n"
            "print('warning on stderr', file=sys.stderr)\n"
            f"got, problems = guard_kit.read_folder({str(folder)!r})\n"
            "print(sorted(got), [p.got for p in problems])\n")
    (folder / "z.hog").write_text("x")
    proc, _, _ = guard_kit.run_measured([sys.executable, "-c", code], guard_kit.memory_env("64M"), timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["note: before the reading",
                                        "['x.txt'] ['z.hog needs more than 64 MB to read; not read']"]
    assert proc.stderr.splitlines() == ["warning on stderr"]


def test_a_harness_folder_loads_beside_a_run_whose_target_is_a_16_mb_literal(tmp_path):
    """lmms-eval's `target` read by `ast.literal_eval` took 6 GB for 16 MB; read in a reader process
    under 256 MB, the hostile run is named and the good run of the folder loads; the process that asked
    stays under 400 MB."""
    folder = guard_kit.lmms_with_hostile_target(tmp_path)
    code = ("import json\nfrom pathlib import Path\nfrom dashboard.data.workspace import harness_source\n"
            f"src = harness_source(Path({str(folder)!r}))\n"
            "print(json.dumps({'runs': {r.model: len(r.rows) for r in src.runs}, "
            "'problems': [[p.file, p.field, p.got[:120]] for p in src.problems]}))\n")
    env = {**guard_kit.memory_env("256M"), "LENS_CACHE_DIR": str(tmp_path / "cache")}
    peak, out = guard_kit.peak_of(code, env, timeout=HANG_GUARD_S)
    got = json.loads(out.strip().splitlines()[-1])
    good = [m for m in got["runs"] if "Evil" not in m]
    assert good and all(got["runs"][m] > 0 for m in good), got
    named = [p for p in got["problems"] if p[0].endswith("Evil__Model-7B/20260802_101500_samples_docvqa_val.jsonl")]
    assert named, got["problems"]  # the hostile file: refused, or its target named and kept as text
    assert peak < 400, f"the process that asked peaked at {peak} MB"


def test_an_unguarded_bracket_reads(tmp_path):
    """In a process that is neither supervised nor a worker (the server, a library caller), a bracket
    reads: such callers go through `job`, which supervises."""
    path = tmp_path / "a.txt"
    path.write_text("x")
    with guard.reading(path) as refused:
        assert refused is None
    assert not guard.guarded()
    assert isinstance(guard.job(LoadResult), LoadResult)  # no paths: a job; its result pickled back


def test_the_data_page_states_the_limits():
    from dashboard.data.frames import read_limits_note

    note = read_limits_note(guard.Limits(512 << 20, 30.0))
    assert "512 MB of memory (LENS_READ_MEMORY) and 30 s (LENS_READ_BUDGET_S)" in note
    assert "8 times its size" in note and "under 2 MB in the server itself" in note


def test_hashing_a_large_harness_file_holds_a_chunk_at_a_time(tmp_path):
    """The scored runs' cache key hashes the gold files -- in a harness folder opened as the benchmark,
    its samples files: a sparse 2 GB one was read whole into the server (2.3 GB at its peak). A sparse 640 MB one
    here: read whole, it alone would be twice the ceiling below (2 GB took 10 s of the suite to hash)."""
    big = tmp_path / "20260101_000000_samples_docvqa_val.jsonl"
    with open(big, "wb") as fh:
        fh.write(b'{"doc_id": 0}\n')
        fh.truncate(640 << 20)
    code = f"from pathlib import Path\nfrom dashboard.core.store import files_sha256\nprint(files_sha256([Path({str(big)!r})]))\n"
    peak, out = guard_kit.peak_of(code, timeout=HANG_GUARD_S * 3)
    assert len(out.strip()) == 64
    assert peak < 300, f"hashing held {peak} MB"

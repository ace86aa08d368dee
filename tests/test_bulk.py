"""The command line's large-run path: `columnar.run_columns(workers=N)` scores, encodes and writes
the run's rows in parts, each in a process forked for it (from columnar.FORK_MIN questions, lowered
here by its `fork_min` parameter); the files must be the bytes one process writes
(`run_columns(workers=1)`) and `RunResult.write_files` writes (which the release-agreement tests
pin to the independent reference), on odd inputs too. Forking needs a process with no other thread
alive: those checks run in a fresh interpreter."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scoring.aggregate import breakdown_members, group_members
from scoring.columnar import join, run_columns
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_gold_columns, load_prediction_columns, load_predictions, reads_as_release
from scoring.model import BREAKDOWNS
from scoring.profiles import get_profile
from scoring.runner import columns_of
from test_reference_agreement import _odd_gold_row, write_generated

ROOT = Path(__file__).resolve().parent.parent


def _write_odd(tmp: Path, n: int, seed: int) -> tuple[Path, Path]:
    gold, pred, _ = write_generated(tmp, seed, n)
    return gold, pred


def _columns_run(tmp: Path, gold_file: Path, pred_file: Path, *, profile: str, ignore_missing: bool, per_question: bool,
                 lens: bool, workers: int, fork_min: int | None = None, tag: str = "got"):
    release = reads_as_release(profile)
    _, gold = load_gold_columns([gold_file], release=release)
    _, preds = load_prediction_columns(pred_file, release=release)
    out = tmp / tag
    run = run_columns(gold, preds, join(gold, preds, ignore_missing=ignore_missing), profile=get_profile(profile), name="r",
                      ignore_missing=ignore_missing, prediction_field=None, report=out / "r.json", csv_path=out / "r.csv",
                      per_question=per_question, lens=lens, workers=workers, fork_min=fork_min)
    assert sorted(p.name for p in out.iterdir()) == ["r.csv", "r.json"]  # no part file left behind
    return run, (out / "r.json").read_bytes(), (out / "r.csv").read_bytes()


def _figures(run) -> tuple:
    return (run.overall, run.breakdowns, run.signature, run.gold_count, run.prediction_count, run.missing_ids, run.extra_ids,
            [str(x) for x in run.problems], run.failed_count, columns_of(run))


def _both(tmp: Path, gold_file: Path, pred_file: Path, *, profile: str, ignore_missing: bool, per_question: bool,
          lens: bool, workers: int, fork_min: int | None = None) -> tuple[int, dict]:
    """Write the run's files by the record path and by the column path with `workers`; assert equal
    bytes and figures; return (parts made by forked processes, overall)."""
    release = reads_as_release(profile)  # the CLI reads the files as the release does under its profile
    gold = load_gold(gold_file, release=release)
    preds = load_predictions(pred_file, release=release)
    want = evaluate(gold.items, preds.items, profile=get_profile(profile), ignore_missing=ignore_missing, name="r", workers=1)
    want.write_files(report=tmp / "want.json", csv_path=tmp / "want.csv", per_question=per_question, lens=lens)
    got, json_bytes, csv_bytes = _columns_run(tmp, gold_file, pred_file, profile=profile, ignore_missing=ignore_missing,
                                              per_question=per_question, lens=lens, workers=workers, fork_min=fork_min)
    assert csv_bytes == (tmp / "want.csv").read_bytes()
    assert json_bytes == (tmp / "want.json").read_bytes()
    assert _figures(got) == _figures(want)
    # the records are not kept, but can still be asked for: read and scored again, equal
    assert [r.row() for r in got.results] == [r.row() for r in want.results]
    return got.__dict__.get("_lens_worker_processes", 0), got.overall


@pytest.mark.parametrize("seed,n,ignore_missing,per_question,lens,profile", [
    (1, 300, False, True, False, "xldocbench-1519"),
    (2, 300, True, True, True, "xldocbench-1519"),
    (3, 120, False, False, False, "xldocbench-1519"),
    (4, 250, False, True, True, "xldocbench"),
    (5, 1, False, True, True, "xldocbench"),
])
def test_one_process_writes_the_record_paths_bytes(tmp_path, seed, n, ignore_missing, per_question, lens, profile):
    used, _ = _both(tmp_path, *_write_odd(tmp_path, n, seed), profile=profile, ignore_missing=ignore_missing,
                    per_question=per_question, lens=lens, workers=1, fork_min=1)
    assert used == 0


def test_no_question_scored_writes_the_empty_report(tmp_path):
    gold, _ = _write_odd(tmp_path, 5, 9)
    pred = tmp_path / "none.jsonl"
    pred.write_text('{"question_id": "elsewhere", "prediction": "x"}\n', encoding="utf-8")
    _both(tmp_path, gold, pred, profile="xldocbench-1519", ignore_missing=True, per_question=True, lens=True, workers=2,
          fork_min=1)
    assert json.loads((tmp_path / "got" / "r.json").read_text(encoding="utf-8"))["per_question"] == []


def _fresh(script: str) -> list[str]:
    """Run `script` in a fresh interpreter (no other thread alive: forking allowed); its printed words."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


def test_forked_parts_write_the_same_bytes_as_one_process(tmp_path):
    """The forked column path (workers=2, the threshold lowered to 1,000 questions) writes the bytes and
    gives the figures of `run_columns(workers=1)` -- under both XL-DocBench profiles, with and without
    --ignore-missing, without the per-question rows, without a CSV -- and the parts were made by forked
    processes, eight of them, two at a time."""
    gold, pred = _write_odd(tmp_path, 6_000, 12)
    words = _fresh(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from test_bulk import _columns_run, _figures
        tmp, gold, pred = Path({str(tmp_path)!r}), Path({str(gold)!r}), Path({str(pred)!r})
        for k, (profile, ignore, per_question, lens) in enumerate([("xldocbench-1519", False, True, False),
                ("xldocbench-1519", True, True, False), ("xldocbench", False, True, True), ("xldocbench", True, False, True)]):
            runs = [_columns_run(tmp, gold, pred, profile=profile, ignore_missing=ignore, per_question=per_question, lens=lens,
                                 workers=w, fork_min=1_000, tag=f"{{k}}_{{w}}") for w in (1, 2)]
            (one, *one_files), (two, *two_files) = runs
            print(two.__dict__.get("_lens_worker_processes"), one.__dict__.get("_lens_worker_processes", 0),
                  two_files == one_files, _figures(two) == _figures(one), one.overall["count"])
    """)
    rows = [words[i : i + 5] for i in range(0, len(words), 5)]
    assert len(rows) == 4
    for forked, alone, same_files, same_figures, count in rows:
        assert (forked, alone, same_files, same_figures) == ("8", "0", "True", "True")
        assert int(count) > 4_000
    assert rows[0][4] == "6000" and rows[1][4] != "6000"  # --ignore-missing left the missing questions out


def test_a_part_whose_process_fails_is_made_here(tmp_path):
    """A part whose forked process dies is made again in this process: the same bytes, one part fewer
    made by a forked process; a part that cannot be written raises here, and no part file is left."""
    gold, pred = _write_odd(tmp_path, 3_000, 13)
    words = _fresh(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from scoring import columnar
        from test_bulk import _columns_run
        tmp, gold, pred = Path({str(tmp_path)!r}), Path({str(gold)!r}), Path({str(pred)!r})
        parent, part = os.getpid(), columnar._Parts.part

        def dies_in_its_process(self, k):
            if k == 2 and os.getpid() != parent:
                os._exit(3)
            part(self, k)

        kw = dict(profile="xldocbench", ignore_missing=False, per_question=True, lens=True, fork_min=1)
        one = _columns_run(tmp, gold, pred, workers=1, tag="one", **kw)
        columnar._Parts.part = dies_in_its_process
        two = _columns_run(tmp, gold, pred, workers=2, tag="two", **kw)
        print(two[0].__dict__["_lens_worker_processes"], two[1:] == one[1:])

        def cannot_write(self, k):
            raise OSError(28, "No space left on device")

        columnar._Parts.part = cannot_write
        try:
            _columns_run(tmp, gold, pred, workers=2, tag="full", **kw)
        except OSError as exc:
            print(exc.strerror.replace(" ", "_"), sorted(p.name for p in (tmp / "full").iterdir()))
    """)
    assert words[:3] == ["7", "True", "No_space_left_on_device"]
    assert words[3:] == ["['r.csv',", "'r.json']"]


_FORKING_CLI = ("import sys; from scoring import cli, columnar; columnar.FORK_MIN = 1_000; cli.usable_cores = lambda: 2; "
                "run = columnar.run_columns\n"
                "def counted(*a, **k):\n"
                "    got = run(*a, **k); print('forked parts:', got.__dict__.get('_lens_worker_processes', 0), file=sys.stderr)\n"
                "    return got\n"
                "columnar.run_columns = counted; sys.argv[0] = 'python -m scoring'; cli.run()")


def _forking_cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m scoring` with the fork threshold lowered to 1,000 questions and two cores to use; it
    says on stderr how many parts each run had made by forked processes."""
    return subprocess.run([sys.executable, "-c", _FORKING_CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("n,seed,flags", [(12_000, 21, []), (30_000, 22, ["--ignore-missing"])])
def test_cli_large_run_equals_the_one_process_files(tmp_path, n, seed, flags):
    """`python -m scoring` on a large run -- its parts scored, encoded and written by forked processes --
    writes what RunResult.write_files writes, and prints the same figures."""
    gold_file, pred_file = _write_odd(tmp_path, n, seed)
    out = tmp_path / "cli"
    proc = _forking_cli("--profile", "xldocbench-1519", "--gold-files", str(gold_file), "--predictions", str(pred_file),
                        "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv"), *flags)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "forked parts: 8" in proc.stderr
    gold, preds = load_gold(gold_file, release=True), load_predictions(pred_file, release=True)
    run = evaluate(gold.items, preds.items, profile="xldocbench-1519", name="r", workers=1, ignore_missing=bool(flags))
    run.write_files(report=tmp_path / "w.json", csv_path=tmp_path / "w.csv", lens=False)
    assert (out / "r.json").read_bytes() == (tmp_path / "w.json").read_bytes()
    assert (out / "r.csv").read_bytes() == (tmp_path / "w.csv").read_bytes()
    assert f"Evaluated: {run.overall['count']}" in proc.stdout and f"Missing predictions: {len(run.missing_ids)}" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["r.csv", "r.json"]


def test_cli_large_docvqa_run_equals_the_one_process_files(tmp_path):
    """A DocVQA run through the CLI's forked parts: several acceptable answers, question types as
    a breakdown (several per question, one named twice), the lens block in the report."""
    rnd = random.Random(24)
    types = ["table/list", "form", "layout", "figure/diagram", None]
    gold_file, pred_file = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    gold_file.write_text("".join(json.dumps({
        "questionId": k, "question": "?", "answers": rnd.sample(["0.28", "28%", "Acme Inc", "yes", "1,234"], rnd.randint(1, 3)),
        "docId": k % 50, "split": "val", "question_types": [rnd.choice(types) for _ in range(rnd.randint(0, 3))]}) + "\n"
        for k in range(12_000)), encoding="utf-8")
    pred_file.write_text("".join(json.dumps({"question_id": str(k), "answer": rnd.choice(["0.28", "acme", "Yes", "1234", ""])}) + "\n"
                                 for k in range(12_000) if k % 97), encoding="utf-8")
    out = tmp_path / "cli"
    proc = _forking_cli("--profile", "docvqa", "--gold-files", str(gold_file), "--predictions", str(pred_file),
                        "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "forked parts: 8" in proc.stderr
    gold, preds = load_gold(gold_file), load_predictions(pred_file)
    run = evaluate(gold.items, preds.items, profile="docvqa", name="preds", workers=1)  # the CLI names a run by its file
    assert "question_type" in run.breakdowns and len(run.breakdowns["question_type"]) >= 4
    run.write_files(report=tmp_path / "w.json", csv_path=tmp_path / "w.csv", lens=True)
    assert (out / "r.json").read_bytes() == (tmp_path / "w.json").read_bytes()
    assert (out / "r.csv").read_bytes() == (tmp_path / "w.csv").read_bytes()


def test_cli_forked_output_that_is_a_folder_is_an_error_not_a_traceback(tmp_path):
    gold_file, pred_file = _write_odd(tmp_path, 2_000, 25)
    (tmp_path / "r.json").mkdir()
    proc = _forking_cli("--gold-files", str(gold_file), "--predictions", str(pred_file), "--output", str(tmp_path / "r.json"),
                        "--per-question-csv", str(tmp_path / "r.csv"))
    assert proc.returncode == 1
    assert "ERROR: cannot write the outputs of" in proc.stderr and "Is a directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("r.", ".lens"))) == ["r.csv", "r.json"]


@pytest.mark.parametrize("seed,metadata_kinds", [(31, None), (32, 3)])
def test_breakdown_members_equal_group_by_group(tmp_path, seed, metadata_kinds):
    """Both ways of computing bucket members: partitioned once over every group (few distinct
    metadata dicts: the loader shares equal ones) and group by group (many)."""
    rnd = random.Random(seed)
    rows = [_odd_gold_row(rnd, k) for k in range(3000)]
    if metadata_kinds:  # few distinct metadata objects: the one-partition path
        kinds = [{"domain": "law", "evidence_sources": ["Table", "Text", "Table"]}, {"domain": 3, "difficulty": None},
                 {"reasoning_type": "", "evidence_sources": "Text"}]
        for k, r in enumerate(rows):
            r["metadata"] = kinds[k % metadata_kinds]
            r.pop("task_type", None)
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    qs = load_gold(path).items
    groups = BREAKDOWNS + ("question_type",)
    metas = [q.metadata for q in qs]
    want = {g: group_members(qs, metas, g) for g in groups}
    assert breakdown_members(qs, groups) == want
    if metadata_kinds:
        assert len({id(q.metadata) for q in qs}) <= metadata_kinds


def _cli(*args: str) -> subprocess.CompletedProcess:
    fixtures = ROOT / "tests" / "fixtures" / "cli"
    return subprocess.run([sys.executable, "-m", "scoring", "--gold-files", str(fixtures / "gold_cross.jsonl"),
                           "--predictions", str(fixtures / "predictions.jsonl"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_output_under_a_file_is_refused_before_reading(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    proc = _cli("--output", str(blocker / "r.json"))
    assert proc.returncode == 1
    assert f"ERROR: cannot make the output folder {blocker}" in proc.stderr
    assert "Traceback" not in proc.stderr and "warning" not in proc.stderr  # said before the inputs were read


def test_cli_output_that_is_a_folder_is_an_error_not_a_traceback(tmp_path):
    (tmp_path / "r.json").mkdir()
    proc = _cli("--output", str(tmp_path / "r.json"), "--per-question-csv", str(tmp_path / "r.csv"))
    assert proc.returncode == 1
    assert "ERROR: cannot write the outputs of" in proc.stderr and "Is a directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json"]  # no part file left behind

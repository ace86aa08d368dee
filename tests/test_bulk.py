"""The command line's large-run path (scoring/bulk.py): forked workers score, encode and write
parts of the run; the files must be the bytes `RunResult.write_files` writes (which the
release-agreement tests pin to the independent reference), on odd inputs too, in this process
and across worker processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from array import array
from pathlib import Path

import pytest

from scoring import bulk
from scoring.aggregate import breakdown_members, group_members
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions, reads_as_release
from scoring.model import BREAKDOWNS
from scoring.profiles import get_profile
from scoring.runner import plan
from test_reference_agreement import _odd_gold_row, _odd_prediction_row, write_generated

ROOT = Path(__file__).resolve().parent.parent


def _write_odd(tmp: Path, n: int, seed: int) -> tuple[Path, Path]:
    gold, pred, _ = write_generated(tmp, seed, n)
    return gold, pred


def _both(tmp: Path, gold_file: Path, pred_file: Path, *, profile: str, ignore_missing: bool, per_question: bool,
          lens: bool, workers: int) -> tuple[int, dict]:
    """Write the run's files both ways; assert equal bytes; return (worker processes used, overall)."""
    release = reads_as_release(profile)  # the CLI reads the files as the release does under its profile
    gold = load_gold(gold_file, release=release)
    preds = load_predictions(pred_file, release=release)
    p = get_profile(profile)
    want = evaluate(gold.items, preds.items, profile=p, ignore_missing=ignore_missing, name="r", workers=1)
    want.write_files(report=tmp / "want.json", csv_path=tmp / "want.csv", per_question=per_question, lens=lens)
    got = bulk.score_and_write(gold.items, plan(gold.items, preds.items, ignore_missing=ignore_missing), profile=p, name="r",
                               ignore_missing=ignore_missing, report=tmp / "out" / "got.json", csv_path=tmp / "out" / "got.csv",
                               per_question=per_question, lens=lens, workers=workers)
    assert (tmp / "out" / "got.csv").read_bytes() == (tmp / "want.csv").read_bytes()
    assert (tmp / "out" / "got.json").read_bytes() == (tmp / "want.json").read_bytes()
    assert sorted(p.name for p in (tmp / "out").iterdir()) == ["got.csv", "got.json"]  # no part file left behind
    assert got.overall == want.overall and got.breakdowns == want.breakdowns and got.signature == want.signature
    assert (got.gold_count, got.prediction_count, got.missing_ids, got.extra_ids) == (
        want.gold_count, want.prediction_count, want.missing_ids, want.extra_ids)
    assert [str(x) for x in got.problems] == [str(x) for x in want.problems]
    # the records are not kept, but can still be asked for: scored again, equal
    assert [r.row() for r in got.results] == [r.row() for r in want.results]
    return got.__dict__["_lens_worker_processes"], got.overall


@pytest.mark.parametrize("seed,n,ignore_missing,per_question,lens,profile", [
    (1, 300, False, True, False, "xldocbench-1519"),
    (2, 300, True, True, True, "xldocbench-1519"),
    (3, 120, False, False, False, "xldocbench-1519"),
    (4, 250, False, True, True, "xldocbench"),
    (5, 1, False, True, True, "xldocbench"),
])
def test_in_process_parts_write_the_same_bytes(tmp_path, seed, n, ignore_missing, per_question, lens, profile):
    used, _ = _both(tmp_path, *_write_odd(tmp_path, n, seed), profile=profile, ignore_missing=ignore_missing,
                    per_question=per_question, lens=lens, workers=1)
    assert used == 0


def test_no_question_scored_writes_the_empty_report(tmp_path):
    gold, _ = _write_odd(tmp_path, 5, 9)
    pred = tmp_path / "none.jsonl"
    pred.write_text('{"question_id": "elsewhere", "prediction": "x"}\n', encoding="utf-8")
    _both(tmp_path, gold, pred, profile="xldocbench-1519", ignore_missing=True, per_question=True, lens=True, workers=1)
    assert json.loads((tmp_path / "out" / "got.json").read_text(encoding="utf-8"))["per_question"] == []


def test_forked_parts_write_the_same_bytes_as_one_process(tmp_path):
    """25,000 odd questions: eight parts, each made by a process forked for it, two at a time
    (run in a fresh interpreter, where no other thread is alive), joined into the bytes of one
    process's files."""
    gold, pred = _write_odd(tmp_path, 25_000, 11)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from test_bulk import _both
        used, overall = _both(Path({str(tmp_path)!r}), Path({str(gold)!r}), Path({str(pred)!r}), profile="xldocbench-1519",
                              ignore_missing=False, per_question=True, lens=True, workers=2)
        print(used, overall["count"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["8", "25000"]


@pytest.mark.parametrize("n,seed,flags", [(12_000, 21, []), (30_000, 22, ["--ignore-missing"])])
def test_cli_large_run_equals_the_one_process_files(tmp_path, n, seed, flags):
    """`python -m scoring` on a large run -- its parts scored by forked processes while the gold
    is read, the predictions read by another one beside it -- writes what RunResult.write_files
    writes."""
    gold_file, pred_file = _write_odd(tmp_path, n, seed)
    out = tmp_path / "cli"
    proc = subprocess.run([sys.executable, "-m", "scoring", "--profile", "xldocbench-1519", "--gold-files", str(gold_file),
                           "--predictions", str(pred_file), "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv"),
                           *flags], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
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
    proc = subprocess.run([sys.executable, "-m", "scoring", "--profile", "docvqa", "--gold-files", str(gold_file),
                           "--predictions", str(pred_file), "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    gold, preds = load_gold(gold_file), load_predictions(pred_file)
    run = evaluate(gold.items, preds.items, profile="docvqa", name="preds", workers=1)  # the CLI names a run by its file
    assert "question_type" in run.breakdowns and len(run.breakdowns["question_type"]) >= 4
    run.write_files(report=tmp_path / "w.json", csv_path=tmp_path / "w.csv", lens=True)
    assert (out / "r.json").read_bytes() == (tmp_path / "w.json").read_bytes()
    assert (out / "r.csv").read_bytes() == (tmp_path / "w.csv").read_bytes()


@pytest.mark.parametrize("chunk", [700, 800])
@pytest.mark.parametrize("predictions", ["odd", "exactly the gold's", "the gold's, some twice"])
def test_streamed_join_equals_the_plan(tmp_path, chunk, predictions):
    """The join made a chunk at a time while the gold is read equals runner.plan's -- with extra
    predictions, with none (told from the count of joined questions, without a walk over the
    predictions) and with repeated ids; and no small part is left at the end on its own."""
    gold_file, pred_file = _write_odd(tmp_path, 9_000, 23)
    if predictions != "odd":
        ids = [q.qid for q in load_gold(gold_file).items]
        ids += ids[::7] if predictions.endswith("twice") else []
        pred_file = tmp_path / "exact.jsonl"
        pred_file.write_text("".join(json.dumps({"question_id": i, "prediction": f"p{k}"}) + "\n" for k, i in enumerate(ids)),
                             encoding="utf-8")
    for ignore in (False, True):
        aside = bulk.read_predictions_aside(pred_file)
        with bulk.Streamed(aside, profile=get_profile("xldocbench"), name="r", ignore_missing=ignore, report=None,
                           csv_path=None, per_question=True, workers=1) as stream:
            stream.chunk = chunk
            gold = load_gold(gold_file, on_chunk=stream.gold_chunk, chunk=chunk)
            got = stream.plan(gold.items)
            sizes = [len(part["qs"]) for part in stream.parts.parts]
            assert len(sizes) > 5  # parts were added while the gold was read
            assert sum(sizes) == len(got.questions) and min(sizes) >= chunk // 2
        want = plan(gold.items, load_predictions(pred_file).items, ignore_missing=ignore)
        assert (got.questions, got.predictions, got.missing, got.extras, got.prediction_count) == (
            want.questions, want.predictions, want.missing, want.extras, want.prediction_count)
        assert bool(want.extras) == (predictions == "odd")


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


@pytest.mark.parametrize("seed,labels", [(33, "odd"), (34, "few, repeated"), (35, "many"), (36, "docvqa question types")])
def test_bucket_shares_are_the_values_at_the_members(tmp_path, seed, labels):
    """A part's bucket values (computed on columns with numpy) are the scores at
    breakdown_members' positions, in order -- with odd metadata, with a source named twice in one
    question, and with more labels than the one-pass path takes (the sorted-pairs path)."""
    rnd = random.Random(seed)
    rows = [_odd_gold_row(rnd, k) for k in range(2500)]
    if labels.startswith("docvqa"):  # question types: several per question, a type twice in some, none in others
        types = ["table/list", "form", "layout", "figure/diagram", "free_text", 7, None]
        rows = [{"questionId": k, "question": "?", "answers": ["a"], "docId": k % 9, "split": rnd.choice(["val", "test"]),
                 "question_types": [rnd.choice(types) for _ in range(rnd.randint(0, 3))]} for k in range(2500)]
    elif labels != "odd":
        many = labels == "many"
        for r in rows:
            r["metadata"] = {"domain": f"d{rnd.randrange(300 if many else 4)}",
                             "evidence_sources": [f"s{rnd.randrange(200 if many else 3)}" for _ in range(rnd.randint(0, 4))]}
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    qs = load_gold(path).items
    cols = [array("d", [rnd.choice([0.0, 1.0, rnd.random()]) for _ in qs]) for _ in range(3)]
    got = bulk.bucket_shares(qs, *cols)
    members = breakdown_members(qs, bulk.ALL_GROUPS)
    want = {g: {label: tuple(array("d", [c[i] for i in idx]).tobytes() for c in cols) for label, idx in m.items()}
            for g, m in members.items()}
    assert got == want
    if labels == "many":
        assert len(got["domain"]) > bulk._FEW_LABELS and len(got["evidence_source"]) > bulk._FEW_LABELS
    if labels == "few, repeated":
        assert any(len(set(q.evidence_sources)) < len(q.evidence_sources) for q in qs)
    if labels.startswith("docvqa"):
        assert any(len(set(q.question_types)) < len(q.question_types) for q in qs) and len(got["question_type"]) > 3


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


def test_predictions_read_beside_the_gold_equal_the_ones_read_here(tmp_path):
    """The CLI reads its first prediction file in a forked process while it reads the gold; the
    records, problems and counts that come back equal `load_predictions`' (odd rows, repeated
    ids, bad lines, cited evidence with boxes)."""
    rnd = random.Random(41)
    lines = []
    for k in range(16_000):
        row = _odd_prediction_row(rnd, f"q{k % 15_000}")  # ids repeat: later rows replace earlier ones, with warnings
        if k % 7 == 0:
            row["evidence_pages"] = [1 + k % 5, "x"]
        if k % 13 == 0:
            row["evidence"] = [{"page": 2, "document_id": "d", "bbox": [1, 2, 30, 40]}, {"page": 0}]
        if k == 4_321:  # a NUL inside an answer: the answers are sent as a list, not joined by NULs
            row["prediction"] = "before\u0000after"
        lines.append(json.dumps(row, ensure_ascii=False))
        if k % 1000 == 0:
            lines.append("{not json")
    pred = tmp_path / "preds.jsonl"
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert pred.stat().st_size >= bulk.ASIDE_MIN_BYTES
    script = textwrap.dedent(f"""
        from scoring import bulk
        from scoring.loaders import load_predictions
        aside = bulk.read_predictions_aside({str(pred)!r})
        got = aside()
        want = load_predictions({str(pred)!r})
        same = (got.items == want.items and got.problems == want.problems and got.counts() == want.counts()
                and got.files == want.files and got.unreadable == want.unreadable)
        print(aside.proc is not None and aside.conn is None, same, len(got.items), sum(1 for p in got.items if p.evidence))
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    name, same, n, with_evidence = proc.stdout.split()
    assert name == "True" and same == "True"  # read by the forked process (its result taken), and equal
    assert int(n) == 15_000 and int(with_evidence) > 0

"""Issue 34 §1, the headline numbers at the seams between harness outputs and the app:

1. an lmms-eval output folder holding DocVQA runs of v0.3.5 (`doc.questionId` kept), v0.4.1 and v0.7
   (only `doc_id`, `input`, `target`) is one gold row per question, and the leaderboard under the
   lmms-eval profile shows lmms-eval's own reported numbers;
2. runs that answered a subset are scored on the questions they attempted, compared with the others on
   the questions they share, and the banner says so (not "another benchmark");
3. the harnesses' own numbers sit beside the recomputed ones under their own names, and each header says
   what it is (one Acc column on MMLongBench-Doc);
4. two files giving one question different gold is named (file:line, id, both golds) and decided by a
   stated rule -- or by the benchmark's gold when there is one.

The folders are tests/fixtures/harness_versions/ (make_fixtures.py writes them as the harnesses do);
the reported numbers are worked out by hand there: every DocVQA answer is exact (ANLS 1), exactly half
wrong (0.5, kept by lmms-eval) or another answer (0)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.core.analysis import ATTEMPTED, BENCH_F1, RECOMPUTED, SHARED_ACC, Analysis, Run, join_warning
from dashboard.core.paths import Sources
from dashboard.data.frames import conflict_text, conflicts_frame, reported_breakdown, reported_columns
from dashboard.data.workspace import load_workspace
from scoring.evaluate import evaluate
from scoring.formats import open_source
from scoring.formats.base import CONFLICT_RULE, CONFLICTING_GOLD

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "harness_versions"
DOCVQA = FIXTURES / "docvqa_lmms"
SUBSET = FIXTURES / "mmlongbench_subset"
MM = ROOT / "sample_runs" / "mmlongbench"
LLAVA, GPT4O, QWEN = "lmms-lab/llava-onevision-qwen2-7b-ov", "gpt-4o-2024-08-06", "Qwen/Qwen3-VL-8B-Instruct"
FILES = {  # version -> the files lmms-eval wrote for its run
    "0.3.5": ["lmms-lab__llava-onevision-qwen2-7b-ov/20250301_120000_results.json",
              "lmms-lab__llava-onevision-qwen2-7b-ov/20250301_120000_samples_docvqa_val.jsonl"],
    "0.4.1": ["20250912_093000_results.json", "20250912_093000_samples_docvqa_val.jsonl"],
    "0.7": ["Qwen__Qwen3-VL-8B-Instruct/20260315_101500_results.json",
            "Qwen__Qwen3-VL-8B-Instruct/20260315_101500_samples_docvqa_val.jsonl"],
}
# by hand (make_fixtures.py): (exact + 0.5 x half) / 40
REPORTED = {LLAVA: (28 + 0.5 * 4) / 40, GPT4O: (26 + 0.5 * 2) / 40, QWEN: (26 + 0.5 * 3) / 40}
LMMS, VLM = "Qwen/Qwen2.5-VL-7B-Instruct", "MiniCPM-Llama3-V-2_5"


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def folder_of(tmp_path: Path, *versions: str) -> Path:
    out = tmp_path / "out"
    for v in versions:
        for f in FILES[v]:
            (out / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(DOCVQA / f, out / f)
    return out


def analysis_of(ws, profile: str) -> Analysis:
    runs = [Run(pf.run, RECOMPUTED, str(pf.path), evaluate(ws.gold.items, pf.loaded.items, profile=profile, name=pf.run),
                ws.official().get(pf.run, []), pf.origin, pf.loaded.rows_read) for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts, profile)


# ----------------------------------------------------------------------------- 1. one gold row per question


def test_three_versions_hold_one_gold_row_per_question():
    src = open_source(DOCVQA)
    assert src is not None and not src.problems and not src.conflicts
    questions = src.gold["docvqa_val"]
    assert len(questions) == 40  # was 80: keyed by questionId in v0.3.5's lines, by doc_id in the others'
    ids = {q.qid for q in questions}
    assert "49153" in ids and not any(q.qid.isdigit() and int(q.qid) < 40 for q in questions)  # questionIds only
    for run in src.runs:
        assert {r.qid for r in run.rows} == ids, run.name  # every run answers the same 40 questions
    # the fullest statement of each question is its gold: v0.3.5's doc names the page image
    assert all(q.document for q in questions) and len(src.documents) == 38  # two questions on a page asked twice
    by_model = {r.model: r for r in src.runs}
    assert {m: r.reported for m, r in by_model.items()} == {m: {"anls,none": v} for m, v in REPORTED.items()}


@pytest.mark.parametrize("versions,keys", [(("0.3.5", "0.4.1"), "questionId"), (("0.4.1", "0.7"), "doc_id"),
                                           (("0.3.5", "0.7"), "questionId"), (("0.3.5", "0.4.1", "0.7"), "questionId")])
def test_every_pair_of_versions_joins(tmp_path, versions, keys):
    src = open_source(folder_of(tmp_path, *versions))
    assert src is not None and not src.conflicts
    questions = src.gold["docvqa_val"]
    assert len(questions) == 40 and len(src.runs) == len(versions)
    ids = {q.qid for q in questions}
    assert ("49153" in ids) == (keys == "questionId") and ("0" in ids) == (keys == "doc_id")
    for run in src.runs:
        assert {r.qid for r in run.rows} == ids


def test_the_app_shows_forty_questions_and_lmms_evals_own_numbers():
    ws = load_workspace(Sources(DOCVQA))
    assert len(ws.gold.items) == 40
    an = analysis_of(ws, "lmms-eval")
    board = an.leaderboard().set_index("Run")
    assert set(board.index) == set(REPORTED)
    for model, value in REPORTED.items():
        assert board.loc[model, "Accuracy (%)"] == pytest.approx(100 * value, abs=1e-9)  # the harness's anls,none
        assert board.loc[model, ATTEMPTED] == 40 and board.loc[model, "Missing"] == 0
    assert SHARED_ACC not in board.columns and join_warning(an.short_joins()) == ""
    reported, helps = reported_columns(ws)
    assert list(helps) == ["lmms-eval anls,none ×100"]  # the harness's own key, and its scale
    assert reported.set_index("Run")["lmms-eval anls,none ×100"].to_dict() == pytest.approx(
        {m: 100 * v for m, v in REPORTED.items()})
    assert list(board.index) == [LLAVA, QWEN, GPT4O]  # ranked as lmms-eval ranks them


def test_the_app_on_the_folder(monkeypatch, tmp_path):
    from app_kit import app_on

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    at = app_on(monkeypatch, DOCVQA, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert any("40 gold questions" in str(c.value) for c in at.caption)
    board = at.dataframe[0].value.set_index("Run")
    for model, value in REPORTED.items():
        assert board.loc[model, "Accuracy (%)"] == pytest.approx(100 * value, abs=1e-9)
        assert board.loc[model, "lmms-eval anls,none ×100"] == pytest.approx(100 * value, abs=1e-9)
        assert board.loc[model, "Missing"] == 0
    assert not [w for w in at.warning if "matched" in str(w.value) or "subset" in str(w.value)]


# ----------------------------------------------------------------------------- 2. runs that answered a subset


@pytest.fixture(scope="module")
def subset_ws():
    return load_workspace(Sources(MM, runs=(SUBSET,)))


def test_subset_runs_are_scored_on_the_questions_they_attempted(subset_ws):
    ws = subset_ws
    an = analysis_of(ws, "mmlongbench-doc")
    board = an.leaderboard().set_index("Run")
    assert board.loc[LMMS, ATTEMPTED] == board.loc[VLM, ATTEMPTED] == 20 and board.loc[LMMS, "Missing"] == 21
    # its Accuracy is the benchmark's own rule over its 20 questions, not over 41 with 21 zeros
    harness = evaluate(ws.gold.items, next(pf for pf in ws.predictions if pf.run == LMMS).loaded.items,
                       profile="mmlongbench-doc", ignore_missing=True)
    assert harness.overall["count"] == 20
    assert board.loc[LMMS, "Accuracy (%)"] == pytest.approx(100 * harness.overall["accuracy"], abs=1e-9)
    # one Acc column (the benchmark's Acc IS Accuracy here), and no two columns shown alike
    from dashboard.overview.panel import BOARD_NOTED

    numeric = board.drop(columns=[c for c in BOARD_NOTED if c in board.columns]).select_dtypes("number")
    for a in numeric.columns:
        for b in numeric.columns:
            if a < b and not numeric[[a, b]].isna().all().any():
                assert not np.allclose(numeric[a].to_numpy(float), numeric[b].to_numpy(float), equal_nan=True), (a, b)
    assert BENCH_F1 in board.columns and not any("Acc (benchmark" in c for c in board.columns)
    # compared on the 20 questions all four runs attempted, ranked by that
    common = an.shared(list(board.index))
    assert (common.runs, common.questions, common.total, common.differs) == (4, 20, 41, True)
    assert common.text() == "4 runs share 20 of 41 questions"
    assert list(board.index) == list(board.sort_values(SHARED_ACC, ascending=False, kind="stable").index)
    for name in board.index:
        assert board.loc[name, SHARED_ACC] == pytest.approx(
            100 * an.mean_on(name, "accuracy", common.mask), abs=1e-9)


def test_the_banner_says_what_is_true(subset_ws):
    an = analysis_of(subset_ws, "mmlongbench-doc")
    text = join_warning(an.short_joins())
    assert text.startswith("2 runs answered a subset (20 of 41 questions): ")
    assert text.endswith("each is scored on the questions it attempted.")
    assert "another benchmark" not in text
    # a run whose rows match (almost) no gold question is still said to be from another benchmark
    joins = an.joins()
    assert joins[LMMS].subset and not joins[LMMS].foreign
    from dashboard.core.analysis import Join

    assert Join("x", 3, 41, "", rows=40).foreign and "another benchmark" in join_warning([Join("x", 3, 41, "", rows=40)])


def test_charts_and_compare_use_the_shared_questions(subset_ws):
    from dashboard.compare import panel as compare_panel

    an = analysis_of(subset_ws, "mmlongbench-doc")
    runs = list(an.leaderboard()["Run"])
    chart = an.breakdown("answer_format", runs)
    counts = chart.groupby("run")["count"].sum()
    assert set(counts) == {20}  # every run's bars over the same 20 questions
    alone = an.breakdown("answer_format")  # without a set of runs: each over the questions it attempted
    assert alone.groupby("run")["count"].sum().to_dict() == {"gpt-4o": 41, "docowl-8b": 40, LMMS: 20, VLM: 20}
    frame = compare_panel.compared_scores(an, runs)
    assert frame.groupby("run").size().to_dict() == {r: 20 for r in runs}
    assert compare_panel.shared_note(an, runs).startswith("4 runs share 20 of 41 questions")
    assert compare_panel.pair_note(an, LMMS, "gpt-4o", 20) == (
        f"{LMMS} attempted 20 and gpt-4o 41 of the 41 questions: they are compared on the 20 both attempted.")


def test_the_harnesses_numbers_under_their_own_names(subset_ws):
    reported, helps = reported_columns(subset_ws)
    got = reported.set_index("Run")
    lmms = json.loads((SUBSET / "lmms-eval" / "Qwen__Qwen2.5-VL-7B-Instruct" / "20260801_101500_results.json")
                      .read_text(encoding="utf-8"))["results"]["mmlongbench_doc"]
    assert got.loc[LMMS, "lmms-eval mmlongbench_doc_acc,none ×100"] == pytest.approx(
        100 * lmms["mmlongbench_doc_acc,none"])
    assert got.loc[LMMS, "lmms-eval mmlongbench_doc_f1,none ×100"] == pytest.approx(100 * lmms["mmlongbench_doc_f1,none"])
    score = pd.read_csv(SUBSET / "vlmevalkit" / VLM / f"{VLM}_MMLongBench_DOC_gpt-4o_score.csv").set_index("category")
    assert got.loc[VLM, "VLMEvalKit overall_acc ×100"] == pytest.approx(100 * score.loc["overall_acc", "avg_score"])
    assert got.loc[VLM, "VLMEvalKit overall_f1 ×100"] == pytest.approx(100 * score.loc["overall_f1", "avg_score"])
    assert pd.isna(got.loc[VLM, "lmms-eval mmlongbench_doc_acc,none ×100"])  # another harness's column: empty
    per_category = reported_breakdown(subset_ws).set_index("Category")
    assert list(per_category.index) == ["text", "layout", "table", "chart", "image", "single-page", "multi-page",
                                        "unanswerable"]
    column = f"{VLM} (VLMEvalKit, ×100)"
    for cat in per_category.index:
        assert per_category.loc[cat, column] == pytest.approx(100 * score.loc[cat, "avg_score"])
    # under each harness's own profile, its run's Accuracy is the harness's own acc
    for profile, run, col in (("lmms-eval", LMMS, "lmms-eval mmlongbench_doc_acc,none ×100"),
                              ("vlmevalkit", VLM, "VLMEvalKit overall_acc ×100")):
        board = analysis_of(subset_ws, profile).leaderboard().set_index("Run")
        assert board.loc[run, "Accuracy (%)"] == pytest.approx(got.loc[run, col], abs=1e-4)  # as the release rounds


def test_the_overview_headers_say_what_each_column_is(monkeypatch, tmp_path):
    """The leaderboard's headers (the column config the page sends): one Acc, the token F1 named so, the
    benchmark's F1 and the harnesses' numbers under their own names."""
    from app_kit import app_on

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    at = app_on(monkeypatch, MM, timeout=120, env={"LENS_RUNS": str(SUBSET)})
    assert not at.exception, [e.value for e in at.exception]
    proto = at.dataframe[0].proto
    config = json.loads(proto.columns)
    labels = {name: c.get("label") for name, c in config.items() if isinstance(c, dict)}
    shown = [labels.get(c) or c for c in proto.column_order]
    assert shown[:2] == ["Run", "Shared Acc %"]  # ranked by it
    assert [c for c in shown if "acc" in c.lower()] == ["Shared Acc %", "Acc (MMLongBench-Doc) %",
                                                         "lmms-eval mmlongbench_doc_acc,none ×100",
                                                         "VLMEvalKit overall_acc ×100",
                                                         # VLMEvalKit's judge gave no answer for some: its Acc without them
                                                         "Acc without the judge's no-answers %"]
    # the benchmark's and the harnesses' own numbers beside Accuracy, then ours: "F1" alone is no header
    assert [c for c in shown if "f1" in c.lower()] == ["F1 (MMLongBench-Doc) %", "lmms-eval mmlongbench_doc_f1,none ×100",
                                                       "VLMEvalKit overall_f1 ×100", "Token F1 %"]
    assert "Token F1 %" in shown and "F1 (MMLongBench-Doc) %" in shown and "F1 %" not in shown
    assert "lmms-eval mmlongbench_doc_acc,none ×100" in shown and "VLMEvalKit overall_f1 ×100" in shown
    assert not any(s.startswith("Bench Acc") for s in shown)
    warns = " ".join(unescape(str(w.value)) for w in at.warning)
    assert "answered a subset (20 of 41 questions)" in warns and "another benchmark" not in warns
    assert any("4 runs share 20 of 41 questions" in unescape(str(c.value)) for c in at.caption)


# ----------------------------------------------------------------------------- 4. conflicting gold


def _edit_line(path: Path, doc_id: int, **changes) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    for k, text in enumerate(lines):
        obj = json.loads(text)
        if obj["doc_id"] == doc_id:
            obj.update(changes)
            lines[k] = json.dumps(obj, ensure_ascii=False)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return k + 1
    raise AssertionError(doc_id)


def test_two_lmms_eval_files_giving_other_gold_are_named(tmp_path):
    out = folder_of(tmp_path, "0.3.5", "0.4.1", "0.7")
    line = _edit_line(out / FILES["0.4.1"][1], 3, target="['March 4, 1987']")  # gpt-4o's file: another answer
    src = open_source(out)
    assert len(src.gold["docvqa_val"]) == 40
    (c,) = src.conflicts
    assert c.qid == "57350" and len(c.variants) == 2
    kept = next(q for q in src.gold["docvqa_val"] if q.qid == "57350")
    assert kept.answers == ("March 3, 1987",)  # two files of three give it: CONFLICT_RULE
    (p,) = [p for p in src.problems if p.kind == CONFLICTING_GOLD]
    assert (p.file, p.line, p.field) == (FILES["0.4.1"][1], line, "gold")
    assert "question 57350 of docvqa_val" in p.message and "'March 3, 1987'" in p.message
    assert "'March 4, 1987'" in p.message and CONFLICT_RULE in p.message
    assert FILES["0.7"][1] + ":4" in p.message  # where the kept gold is stated (the file first by path)
    row = next(r for r in src.runs if r.model == GPT4O).rows
    assert any("conflicting gold" in n for r in row for n in r.notes)


def test_a_tie_is_decided_by_the_path_and_said(tmp_path):
    out = folder_of(tmp_path, "0.4.1", "0.7")
    _edit_line(out / FILES["0.7"][1], 5, target="['Smith Co.']")
    src = open_source(out)
    (c,) = src.conflicts
    # one file each: the gold of the file whose path sorts first (20250912_093000_samples_... < Qwen__.../...)
    assert c.kept.files == [FILES["0.4.1"][1]] and c.kept.question.answers == ("Smith's Co.", "Smith's Company")
    ws = load_workspace(Sources(out))
    assert ws.conflicts == [(c, CONFLICT_RULE)] or [x for x, _ in ws.conflicts][0].qid == c.qid
    assert conflict_text(ws).startswith("1 question gets different gold from different harness files: the gold most "
                                        "files give is kept")
    table = conflicts_frame(ws)
    assert table["Kept"].tolist() == [True, False] and table["Stated in"].tolist() == [
        f"{FILES['0.4.1'][1]}:6", f"{FILES['0.7'][1]}:6"]


def test_vlmevalkit_sheets_giving_other_gold_are_named(tmp_path):
    from openpyxl import load_workbook

    folder = tmp_path / "vlm"
    shutil.copytree(SUBSET / "vlmevalkit", folder)
    # a second model whose sheets state another answer for one index (the dataset's TSV changed between runs)
    src_dir = folder / VLM
    other = folder / "InternVL-Chat-V1-5"
    other.mkdir()
    for f in src_dir.iterdir():
        shutil.copy(f, other / f.name.replace(VLM, "InternVL-Chat-V1-5"))
    for name in ("InternVL-Chat-V1-5_MMLongBench_DOC.xlsx", "InternVL-Chat-V1-5_MMLongBench_DOC_gpt-4o.xlsx"):
        book = load_workbook(other / name)
        sheet = book.active
        header = [c.value for c in sheet[1]]
        sheet.cell(row=3, column=header.index("answer") + 1).value = "a changed answer"
        book.save(other / name)
    src = open_source(folder)
    (c,) = src.conflicts
    assert c.task == "MMLongBench_DOC" and len(c.variants) == 2
    (p,) = [p for p in src.problems if p.kind == CONFLICTING_GOLD]
    assert p.line == 3 and "a changed answer" in p.message and c.qid in p.message
    # the first file by path is InternVL's (I < M): the tie keeps its gold, and says so
    assert p.file.startswith(VLM) and c.kept.files[0].startswith("InternVL")


def test_with_a_benchmark_its_gold_decides(tmp_path):
    """Two lmms-eval runs of MMLongBench-Doc: one file states a stale answer for question 0. The tie rule
    keeps the stale one (its file's path sorts first), which is no question of samples.json: the other
    file's gold joins, the benchmark's gold is used, and the conflict says so."""
    out = tmp_path / "runs"
    src_dir = SUBSET / "lmms-eval" / "Qwen__Qwen2.5-VL-7B-Instruct"
    for model, date in (("AAA__first", "20260801_101500"), ("ZZZ__second", "20260802_101500")):
        (out / model).mkdir(parents=True)
        for f in src_dir.iterdir():
            shutil.copy(f, out / model / f.name.replace("20260801_101500", date))
        results = json.loads((out / model / f"{date}_results.json").read_text(encoding="utf-8"))
        results["model_name"] = model.replace("__", "/")
        (out / model / f"{date}_results.json").write_text(json.dumps(results), encoding="utf-8")
    _edit_line(out / "AAA__first" / "20260801_101500_samples_mmlongbench_doc.jsonl", 0, target="a stale answer")
    ws = load_workspace(Sources(MM, runs=(out,)))
    (entry,) = ws.conflicts
    conflict, said = entry
    assert conflict.kept.question.answers == ("a stale answer",)  # what the harness folder alone would keep
    assert said.startswith("the benchmark's gold (data/samples.json) is used for question ")
    assert not [p for p in ws.problems if p.kind == "questions not in the benchmark's gold"]  # it joined
    for name in ("AAA/first", "ZZZ/second"):
        pf = next(pf for pf in ws.predictions if pf.run == name)
        assert len(pf.loaded.items) == 20  # both runs' answers to it are scored against the benchmark's gold
    (p,) = [p for p in ws.problems if p.kind == CONFLICTING_GOLD]
    assert "a stale answer" in p.message and "the benchmark's gold" in p.message
    assert conflict_text(ws).endswith("the benchmark's gold is used. The Data page names each, with both golds and "
                                      "where each file states them.")


def test_the_fixtures_are_what_make_fixtures_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_docvqa(tmp_path)
    for f in sorted((tmp_path / "docvqa_lmms").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (DOCVQA / f.relative_to(tmp_path / "docvqa_lmms")).read_bytes(), f

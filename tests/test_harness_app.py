"""Harness outputs opened in the app: sample_runs/harness/ (an lmms-eval and a VLMEvalKit run over the
sample's MMLongBench-Doc questions) as the benchmark (its own gold, one task at a time, the choice in
the URL) and as runs beside the sample's MMLongBench-Doc clone (joined to samples.json: Evidence
works); the Data page's harness facts and reproducibility check; the Metric disagreement page's
harness-vs-evaluator section. Numbers pinned by hand from the sample's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.links import field_label, from_params, to_params
from dashboard.core.paths import Sources
from dashboard.data.workspace import HARNESS, MMLONGBENCH, discover, harness_tasks, load_workspace
from dashboard.disagreement import harness as hs
from scoring.mmlongbench import qid_for

ROOT = Path(__file__).resolve().parent.parent
HARNESS_DIR = ROOT / "sample_runs" / "harness"
MM = ROOT / "sample_runs" / "mmlongbench"
DOCVQA = ROOT / "sample_runs" / "docvqa"
LMMS = "Qwen/Qwen2.5-VL-7B-Instruct"
VLM = "MiniCPM-Llama3-V-2_5"
SAMPLES = HARNESS_DIR / "lmms-eval" / "Qwen__Qwen2.5-VL-7B-Instruct" / "20260801_101500_samples_mmlongbench_doc.jsonl"


def _lmms_scores() -> list[float]:
    """The lmms-eval run's own per-line scores, read straight from its file."""
    out = []
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(float(json.loads(line)["mmlongbench_doc_acc"]["score"]))
    return out


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def frame_with(at: AppTest, first_column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if len(d.value.columns) and d.value.columns[0] == first_column)


# ----------------------------------------------------------------------------- the workspace


def test_a_harness_folder_as_the_benchmark_builds_its_gold_per_task():
    disc = discover(Sources(HARNESS_DIR))
    assert disc.layout == HARNESS and disc.harness == [HARNESS_DIR]
    assert discover(Sources(ROOT / "sample_runs")).layout == "lens"  # the sample holds harness/ but is not one
    tasks = harness_tasks(HARNESS_DIR)
    assert set(tasks) == {"mmlongbench_doc", "MMLongBench_DOC"}
    for task, harness, run in (("mmlongbench_doc", "lmms-eval", LMMS), ("MMLongBench_DOC", "vlmevalkit", VLM)):
        ws = load_workspace(Sources(HARNESS_DIR, task=task))
        assert ws.task == task and len(ws.gold.items) == 41
        assert [pf.run for pf in ws.predictions] == [run]
        assert [h.run.harness for h in ws.harness] == [harness]
        assert len(ws.official()[run]) == 41 and len(ws.predictions[0].loaded.items) == 41
        # the documents: where they go is said (VLMEvalKit's rows name their PDFs, lmms-eval's v0.7 lines none)
        missing = [p for p in ws.problems if p.kind == "missing documents"]
        assert len(missing) == 1
        if harness == "vlmevalkit":
            assert missing[0].message.startswith("expected the PDFs the questions name, got 5 of 5 missing")
            assert f"copy the PDFs into {HARNESS_DIR / 'docs'}" in missing[0].message
        else:
            assert "none named" in missing[0].message and "--benchmark" in missing[0].message
    ws = load_workspace(Sources(HARNESS_DIR, task="mmlongbench_doc"))
    assert ws.origin(LMMS) == ("lmms-eval 0.7.2 · task mmlongbench_doc · model args pretrained=Qwen/Qwen2.5-VL-7B-Instruct"
                               " · date 20260801_101500")
    assert sorted(s.accuracy for s in ws.official()[LMMS]) == sorted(_lmms_scores())
    asked = load_workspace(Sources(HARNESS_DIR, task="no_such_task"))
    assert asked.task in ("mmlongbench_doc", "MMLongBench_DOC")
    assert any(p.field == "task" and "no_such_task" in p.message for p in asked.problems)


def test_harness_runs_beside_mmlongbench_join_its_gold_and_documents():
    ws = load_workspace(Sources(MM, runs=(HARNESS_DIR,)))
    assert ws.discovery.layout == MMLONGBENCH
    runs = {pf.run: pf for pf in ws.predictions}
    assert {"gpt-4o", "docowl-8b", LMMS, VLM} <= set(runs)
    gold_ids = {q.qid for q in ws.gold.items}
    for name in (LMMS, VLM):
        ids = [p.qid for p in runs[name].loaded.items]
        assert len(ids) == 41 and set(ids) == gold_ids  # every harness row joined by (question, answer)
    # the harness's row 0 is samples.json's first question
    assert runs[LMMS].loaded.items[0].qid == qid_for(0)
    assert any(loc.path is not None for loc in ws.locations.values())  # the clone's PDFs: Evidence works


def test_harness_runs_of_another_benchmark_are_named_not_guessed():
    ws = load_workspace(Sources(DOCVQA, runs=(HARNESS_DIR,)))
    assert not ws.harness
    said = sorted(p.got for p in ws.problems if p.kind == "tasks of another benchmark")
    assert len(said) == 2 and said[0].startswith("MMLongBench_DOC: not this benchmark")
    assert said[1].startswith("mmlongbench_doc: not this benchmark")


def test_a_question_that_cannot_be_joined_is_listed_and_the_rest_loads(tmp_path):
    bench = tmp_path / "mm"
    shutil.copytree(MM, bench)
    samples = json.loads((bench / "data" / "samples.json").read_text(encoding="utf-8"))
    samples[0]["question"] = "A question reworded since the harness copied it?"
    (bench / "data" / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    ws = load_workspace(Sources(bench, runs=(HARNESS_DIR,)))
    unjoined = [p for p in ws.problems if p.kind == "questions not in the benchmark's gold"]
    assert sorted((p.file, p.field) for p in unjoined) == [("MMLongBench_DOC", "0"), ("mmlongbench_doc", "0")]
    runs = {pf.run: pf for pf in ws.predictions}
    assert len(runs[LMMS].loaded.items) == 40 and runs[LMMS].loaded.skipped == 1


def test_the_url_keeps_the_task():
    assert to_params(from_params({"bench": "MMLongBench_DOC", "profile": "vlmevalkit"})) == {
        "bench": "MMLongBench_DOC", "profile": "vlmevalkit"}


# ----------------------------------------------------------------------------- evaluator sensitivity (hand-pinned)


def test_harness_scores_against_the_benchmarks_evaluator_on_the_sample():
    ws = load_workspace(Sources(MM, runs=(HARNESS_DIR,)))
    pairs = [(e, hs.rescored(e)) for e in hs.compared(ws.harness)]
    assert {e.benchmark_profile for e, _ in pairs} == {"mmlongbench-doc"}
    by = {e.name: (e, r) for e, r in pairs}
    # lmms-eval reads the first number: `7,310` (gold 7310) and `96.4` (gold `96.4 million`) score 1 under
    # it, 0 under the benchmark (int(float("7,310")) raises; "96.4" is not "96.4 million"): 2 of 41 down
    e, r = by[LMMS]
    assert hs.headline(r) == {"count": 41, "changed": 2, "up": 0, "down": 2}
    ch = hs.changes(e, r).set_index("question_id")
    assert list(ch.index) == [qid_for(0), qid_for(13)]
    assert ch.loc[qid_for(0), "reason"] == "lmms-eval reads the first number: `7,310` → 7310"
    assert (ch["harness score"] == 1.0).all() and (ch["evaluator score"] == 0.0).all()
    assert ch.loc[qid_for(13), "slice"] == "Float"
    # VLMEvalKit's eval_score raises on two rows and scores them 0; the benchmark gives 1 to both: 2 up
    e2, r2 = by[VLM]
    assert hs.headline(r2) == {"count": 41, "changed": 2, "up": 2, "down": 0}
    assert set(hs.changes(e2, r2)["reason"]) == {"VLMEvalKit's eval_score raises on this row and scores 0"}
    slices = hs.slices(e2, r2, None, "answer_format").set_index("slice")
    assert slices.loc["List", "up"] == 1 and slices.loc["Float", "up"] == 1 and slices["changed"].sum() == 2
    board = hs.ranks(pairs).set_index("Run")
    own = _lmms_scores()
    assert board.loc[LMMS, "Harness score (%)"] == pytest.approx(100 * sum(own) / 41)
    assert board.loc[LMMS, "Evaluator score (%)"] == pytest.approx(100 * (sum(own) - 2) / 41)
    assert board.loc[VLM, "Harness score (%)"] == pytest.approx(100 * 35 / 41)
    assert board.loc[VLM, "Evaluator score (%)"] == pytest.approx(100 * 37 / 41)
    assert board.loc[VLM, "Rank by evaluator"] == 1 and (board["Rank change"] == 0).all()


# the sample's samples.json, counted by hand (41 questions): answer_format Str 13, Int 9, Float 8, List 7, None 4;
# doc_type Financial report 16, Academic paper 10, Brochure 8, Tutorial/Workshop 4, Guidebook 3; evidence
# sources ['Pure-text (Plain-text)'] 22, ['Generalized-text (Layout)'] 8, ['Table'] 4, [] 3, [Pure-text, Table] 2,
# ['Chart'] 1, ['Figure'] 1 (so Pure-text 24, Table 6, unknown 3). lmms-eval's two changes (questions 0 and 13:
# `7,310`, Int, and `96.4`, Float) are both Financial report / Pure-text; VLMEvalKit's two (a List and a Float
# question) are Financial report / Pure-text too.
def _cell(frame: pd.DataFrame, label: str) -> tuple[int, int, int, int]:
    row = frame.set_index("slice").loc[label]
    return int(row["questions"]), int(row["up"]), int(row["down"]), int(row["unchanged"])


def test_harness_changes_per_slice_of_any_breakdown_field():
    ws = load_workspace(Sources(MM, runs=(HARNESS_DIR,)))
    by = {e.name: (e, hs.rescored(e)) for e in hs.compared(ws.harness)}
    e, r = by[LMMS]
    # reasoning_type, domain and difficulty: the benchmark has none (one label): no slice
    assert hs.slice_fields(e, r, None) == ["evidence_source", "answer_format", "doc_type"]
    fmt = hs.slices(e, r, None, "answer_format")
    assert list(fmt["slice"]) == ["Float", "Int", "List", "None", "Str"]
    assert _cell(fmt, "Int") == (9, 0, 1, 8) and _cell(fmt, "Float") == (8, 0, 1, 7)
    assert _cell(fmt, "Str") == (13, 0, 0, 13) and fmt["questions"].sum() == 41
    doc = hs.slices(e, r, None, "doc_type")
    assert _cell(doc, "Financial report") == (16, 0, 2, 14) and _cell(doc, "Academic paper") == (10, 0, 0, 10)
    src = hs.slices(e, r, None, "evidence_source")
    assert _cell(src, "Pure-text (Plain-text)") == (24, 0, 2, 22) and _cell(src, "Table") == (6, 0, 0, 6)
    assert _cell(src, "unknown") == (3, 0, 0, 3)
    ch = hs.changes(e, r, None, "doc_type")
    assert list(ch["slice"]) == ["Financial report", "Financial report"]
    e2, r2 = by[VLM]
    doc2 = hs.slices(e2, r2, None, "doc_type")
    assert _cell(doc2, "Financial report") == (16, 2, 0, 14) and doc2["up"].sum() == 2 and doc2["down"].sum() == 0


def test_the_cli_counts_changes_per_field_and_label(tmp_path, capsys):
    from scoring import harness_cli as cli

    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(HARNESS_DIR), "--gold-files", str(MM / "data" / "samples.json"),
                     "--profile", "mmlongbench-doc", "--output", str(report), "--no-per-question-json"]) == 0
    runs = {run["model"]: run["sensitivity"] for run in json.loads(report.read_text())["runs"]}
    lmms = runs["Qwen/Qwen2.5-VL-7B-Instruct"]["by_field"]
    assert sorted(lmms) == ["answer_format", "doc_type", "evidence_source"]
    assert lmms["answer_format"]["Int"] == {"count": 9, "up": 0, "down": 1, "unchanged": 8}
    assert lmms["answer_format"]["Float"] == {"count": 8, "up": 0, "down": 1, "unchanged": 7}
    assert lmms["doc_type"]["Financial report"] == {"count": 16, "up": 0, "down": 2, "unchanged": 14}
    assert lmms["evidence_source"]["Pure-text (Plain-text)"] == {"count": 24, "up": 0, "down": 2, "unchanged": 22}
    vlm = runs["MiniCPM-Llama3-V-2_5"]["by_field"]
    assert vlm["answer_format"]["List"] == {"count": 7, "up": 1, "down": 0, "unchanged": 6}
    assert vlm["doc_type"]["Financial report"] == {"count": 16, "up": 2, "down": 0, "unchanged": 14}
    out = capsys.readouterr().out
    assert "by doc_type: Academic paper 0 up, 0 down, 10 unchanged; Brochure 0 up, 0 down, 8 unchanged; " \
           "Financial report 0 up, 2 down, 14 unchanged" in out
    # without the benchmark's gold, VLMEvalKit's own cells still give the fields (its evidence lists read as lists)
    assert cli.main(["--predictions", str(HARNESS_DIR), "--profile", "mmlongbench-doc", "--output", str(report),
                     "--no-per-question-json"]) == 0
    runs = {run["model"]: run["sensitivity"] for run in json.loads(report.read_text())["runs"]}
    own = runs["MiniCPM-Llama3-V-2_5"]["by_field"]
    assert own["evidence_source"]["Pure-text (Plain-text)"] == {"count": 24, "up": 2, "down": 0, "unchanged": 22}
    assert own["doc_type"]["Financial report"] == {"count": 16, "up": 2, "down": 0, "unchanged": 14}


def test_ranks_move_when_the_evaluator_reorders_runs():
    from dashboard.data.workspace import HarnessEntry
    from scoring.formats.base import HarnessRun
    from scoring.harness import Rescored, RowScore

    def pair(name: str, official: list[float], score: list[float]):
        run = HarnessRun(name=name, harness="lmms-eval", task="t", family="mmlongbench", model=name)
        rows = [RowScore(str(k), "none", o, s, "", "", "f", k + 1) for k, (o, s) in enumerate(zip(official, score))]
        return HarnessEntry(name, run, {}, None, ROOT, "mmlongbench-doc"), Rescored(run, "mmlongbench-doc", rows)

    board = hs.ranks([pair("a", [1, 1, 0], [0, 0, 0]), pair("b", [1, 0, 0], [1, 0, 0])]).set_index("Run")
    assert board.loc["a", "Rank by harness"] == 1 and board.loc["a", "Rank by evaluator"] == 2
    assert board.loc["a", "Rank change"] == -1 and board.loc["b", "Rank change"] == 1
    assert board.loc["a", "Δ (points)"] == pytest.approx(-200 / 3)


# ----------------------------------------------------------------------------- the app


def test_app_opens_a_harness_folder_as_the_benchmark(monkeypatch):
    # the first task (ties on runs, then on questions: by name) is VLMEvalKit's, scored by its own profile
    at = app_on(monkeypatch, HARNESS_DIR, timeout=90)
    assert_clean(at)
    picker = next(s for s in at.sidebar.selectbox if s.label == "Scoring profile")
    assert picker.value == "vlmevalkit" and {"vlmevalkit", "mmlongbench-doc"} <= set(picker.options)
    task = next(s for s in at.sidebar.selectbox if s.label == "Benchmark in this harness folder")
    assert task.value == "MMLongBench_DOC" and task.options == [
        "MMLongBench_DOC (vlmevalkit: 1 run, 41 questions)", "mmlongbench_doc (lmms-eval: 1 run, 41 questions)"]
    at.switch_page("views/data.py").run()
    assert_clean(at)
    assert any("all 41 questions match the official scores (profile vlmevalkit)" in s.value.replace("\\", "")
               for s in at.success)
    # the evidence page says what is missing and where it goes
    at.switch_page("views/evidence.py").run()
    assert_clean(at)
    # the other task, by the URL: lmms-eval's, scored by its own profile, its facts on the Data page
    at2 = app_on(monkeypatch, HARNESS_DIR, {"bench": "mmlongbench_doc"}, timeout=90)
    assert_clean(at2)
    assert next(s for s in at2.sidebar.selectbox if s.label == "Scoring profile").value == "lmms-eval"
    assert next(s for s in at2.sidebar.selectbox if s.label == "Benchmark in this harness folder").value == "mmlongbench_doc"
    assert at2.query_params.get("bench") in ("mmlongbench_doc", ["mmlongbench_doc"])
    at2.switch_page("views/data.py").run()
    assert_clean(at2)
    facts = next(d.value for d in at2.dataframe if "Model arguments" in d.value.columns).iloc[0]
    assert facts["Version"] == "0.7.2" and facts["Model arguments"] == f"pretrained={LMMS}"
    assert facts["Date"] == "20260801_101500" and facts["Harness"] == "lmms-eval"
    assert any("all 41 questions match the official scores (profile lmms-eval)" in s.value.replace("\\", "")
               for s in at2.success)


def test_app_opens_harness_runs_beside_the_benchmark(monkeypatch):
    at = app_on(monkeypatch, MM, timeout=120, env={"LENS_RUNS": str(HARNESS_DIR)})
    assert_clean(at)
    picker = next(s for s in at.sidebar.selectbox if s.label == "Scoring profile")
    assert picker.value == "mmlongbench-doc" and {"lmms-eval", "vlmevalkit"} <= set(picker.options)
    board = next(d.value for d in at.dataframe if "Signature" in d.value.columns)
    assert {LMMS, VLM, "gpt-4o"} <= set(board["Run"])
    sig = board.set_index("Run").loc[LMMS, "Signature"]
    assert "source: lmms-eval 0.7.2 · task mmlongbench_doc · model args pretrained=" in sig
    at.switch_page("views/evidence.py").run()
    assert_clean(at)


def test_sensitivity_view_shows_the_sample_harness_runs(monkeypatch):
    at = app_on(monkeypatch, MM, {"run": [LMMS, VLM]}, timeout=120, env={"LENS_RUNS": str(HARNESS_DIR)})
    at.switch_page("views/disagreement.py").run()
    assert_clean(at)
    board = frame_with(at, "Run")
    board = next(d.value for d in at.dataframe if "Rank by evaluator" in d.value.columns).set_index("Run")
    assert board.loc[VLM, "Evaluator score (%)"] == pytest.approx(100 * 37 / 41)
    # the benchmark's own runs keep their score; lmms-eval's run falls below docowl-8b under the evaluator
    assert board.loc["gpt-4o", "Harness"] == "(the benchmark's files)" and board.loc["gpt-4o", "Δ (points)"] == 0
    assert board.loc[LMMS, "Evaluator score (%)"] == pytest.approx(100 * (sum(_lmms_scores()) - 2) / 41)
    assert board.loc[LMMS, "Evaluator score (%)"] < board.loc["docowl-8b", "Evaluator score (%)"] < \
        board.loc[LMMS, "Harness score (%)"]
    assert dict(board["Rank change"]) == {"gpt-4o": 0, VLM: 0, "docowl-8b": 1, LMMS: -1}
    changes = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["question_id", "harness id"])
    assert list(changes["question_id"]) == [qid_for(0), qid_for(13)]  # the first harness run listed: lmms-eval's
    assert any("2 of 41 questions change score" in m.value.replace("\\", "") for m in at.markdown)
    # per slice: the picker offers the fields with two labels or more, the first by default
    picker = at.selectbox(key="dis_hs_by_w")
    assert picker.value == "evidence_source"
    assert {field_label("answer_format"), field_label("doc_type")} <= set(picker.options)
    assert field_label("reasoning_type") not in picker.options  # MMLongBench-Doc has none: one label, no slice
    label = field_label("evidence_source")
    table = next(d.value for d in at.dataframe if d.value.columns[0] == label).set_index(label)
    assert table.loc["Pure-text (Plain-text)"].tolist() == [24, 2, 0, 2, 22]  # questions, changed, up, down, unchanged
    picker.set_value("doc_type").run()
    assert_clean(at)
    label = field_label("doc_type")
    table = next(d.value for d in at.dataframe if d.value.columns[0] == label).set_index(label)
    assert table.loc["Financial report"].tolist() == [16, 2, 0, 2, 14]
    assert table.loc["Academic paper"].tolist() == [10, 0, 0, 0, 10] and table["questions"].sum() == 41
    assert at.query_params["dis_hs_by"] == "doc_type"
    changes = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["question_id", "harness id"])
    assert list(changes["slice"]) == ["Financial report", "Financial report"]


def test_the_first_start_offers_the_sample_harness_runs(monkeypatch):
    # the sample (XL-DocBench) has no harness run: its sensitivity section opens the sample's harness folder
    at = app_on(monkeypatch, ROOT / "sample_runs", {"run": "longctx-ocr"}, timeout=120)
    at.switch_page("views/disagreement.py").run()
    assert_clean(at)
    at.button(key="dis_hs_sample").click().run()
    assert_clean(at)
    assert at.session_state["data_folder"] == str(HARNESS_DIR)
    assert any("questions change score" in m.value.replace("\\", "") for m in at.markdown)
    board = next(d.value for d in at.dataframe if "Rank by evaluator" in d.value.columns).set_index("Run")
    assert board.loc[VLM, "Harness score (%)"] == pytest.approx(100 * 35 / 41)


def test_lmms_eval_docvqa_lines_join_a_docvqa_folder_by_question_id(tmp_path):
    # v0.3.5 lines keep `doc` (with questionId): two of the sample's DocVQA questions and one it does not hold
    rows = [(61001, "What is the invoice number?", ["INV-20931", "INV 20931", "20931"], "INV-20931", 1.0),
            (61002, "What is the total amount due?", ["$1,250.00", "1,250.00", "$1250", "1250"], "$1250", 1.0),
            (99999, "A question of another copy?", ["x"], "y", 0)]
    folder = tmp_path / "out" / "org__model"
    folder.mkdir(parents=True)
    lines = []
    for k, (qid, question, answers, response, anls) in enumerate(rows):
        doc = {"questionId": str(qid), "question": question, "question_types": ["form"], "docId": 52001,
               "ucsf_document_id": "lens52001", "ucsf_document_page_no": "1", "answers": answers, "data_split": "val"}
        lines.append({"doc_id": k, "doc": doc, "target": str(answers), "resps": [[response]], "filtered_resps": [response],
                      "anls": anls, "input": question + "\nAnswer the question using a single word or phrase."})
    (folder / "20260801_101500_samples_docvqa_val.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ws = load_workspace(Sources(DOCVQA, runs=(tmp_path / "out",)))
    assert [h.run.task for h in ws.harness] == ["docvqa_val"] and ws.harness[0].benchmark_profile == "docvqa"
    pf = next(p for p in ws.predictions if p.run == ws.harness[0].name)
    assert [p.qid for p in pf.loaded.items] == ["61001", "61002"] and pf.loaded.skipped == 1
    assert [(p.file, p.field) for p in ws.problems if p.kind == "questions not in the benchmark's gold"] == [
        ("docvqa_val", "99999")]
    assert sorted(s.accuracy for s in ws.official()[pf.run]) == [1.0, 1.0]
    r = hs.rescored(ws.harness[0])
    assert hs.headline(r) == {"count": 3, "changed": 0, "up": 0, "down": 0}  # the unjoined row keeps its own gold


def test_a_longdocurl_results_file_opens_as_its_own_benchmark(tmp_path, monkeypatch):
    rows = [{"question_id": "free_gemini15_pro_4055915_42_71_8", "doc_no": "4055915", "total_pages": 80,
             "question": "How many plants?", "answer": 12, "answer_format": "Integer", "task_tag": "Understanding",
             "evidence_pages": [42], "evidence_sources": ["Text"], "pdf_path": "/data/pdfs/4055915.pdf",
             "detailed_response": "There are 12 plants.", "pred": 12, "score_v3": 1.0},
            {"question_id": "q2", "doc_no": "4055915", "question": "Which city?", "answer": "Oslo",
             "answer_format": "String", "task_tag": "Locating", "evidence_pages": [3], "pdf_path": "/data/pdfs/4055915.pdf",
             "detailed_response": "Bergen", "pred": "Bergen", "score_v3": 0.0}]
    folder = tmp_path / "longdocurl"
    folder.mkdir()
    (folder / "results_gpt4o.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ws = load_workspace(Sources(folder))
    assert ws.discovery.layout == HARNESS and ws.task == "LongDocURL" and len(ws.gold.items) == 2
    assert {s.qid: s.accuracy for s in ws.official()["gpt4o"]} == {"free_gemini15_pro_4055915_42_71_8": 1.0, "q2": 0.0}
    assert hs.compared(ws.harness) == []  # no benchmark evaluator of LongDocURL's here: nothing to compare
    at = app_on(monkeypatch, folder, timeout=90)
    assert_clean(at)
    at.switch_page("views/disagreement.py").run()
    assert_clean(at)

"""VLMEvalKit's `--work-dir` output read as the harness leaves it (scoring/formats/vlmevalkit.py,
scoring/formats/tables.py), scored by profile `vlmevalkit` and by the benchmarks' own evaluators.

The work dirs are written here as VLMEvalKit writes them (`vlmeval/smp/file.py` `dump`: pandas
with the xlsxwriter engine, `strings_to_formulas=False` since 2026-07, the writer's defaults
before; `_acc.csv`/`_score.csv` quoted; eval-id folders with relative links, or absolute links that
dangle elsewhere; the flat layout). Expected scores are worked out by hand from its published
rules (`vqa_eval.py` `anls_compute`/`hit_calculate`; `mmlongbenchdoc.py` `eval_score`, `get_f1`,
`MMLongBench_acc`)."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from scoring import cli
from scoring.formats import detect, open_source, vlmevalkit
from scoring.formats.tables import read_xlsx
from scoring.harness import rescore
from scoring.harness_rules import vlm_anls_distance, vlm_docvqa_score, vlm_get_f1, vlm_mmlongbench_score

# (index, question, answers, prediction, harness's distances, harness's per-question score)
DOCVQA = [
    (0, "What is the date mentioned in the letter?", ["January 8, 1993", "january 8, 1993"], "January 8, 1993",
     [0.0, 0.0], 1.0),
    (1, "What is the code?", ["abcd"], "abxy", [0.5], 0.5),  # exactly 0.5: kept (`< 0.5` is zeroed)
    # the prediction is not stripped for the denominator: distance 3 over len(" abcxyz ") = 8
    (2, "Which word is printed?", ["abcdef"], " abcxyz ", [0.375], 0.625),
    # an empty prediction is a blank cell: pandas reads NaN and the harness scores str(nan) = "nan"
    (3, "What is the short date?", ["1/8/93"], "", [1.0], 0.0),
]
OVERALL = (1.0 + 0.5 + 0.625 + 0.0) / 4 * 100  # 53.125: numpy's mean of four floats is this sum
OVERALL_DOCVQA_PROFILE = 25.0  # the benchmark's rule: 0.5 scores 0, " abcxyz " stripped is 0.5 -> 0, "nan" -> 0

# MMLongBench_DOC judge rows: (answer, answer_format as read (NaN for None), judge's pred, evidence_sources,
# evidence_pages, VLMEvalKit's eval_score, MMLongBench-Doc's own eval_score of the same pred)
MMLB = [
    ("63", "Int", "63 million", "['Chart']", "[3]", 0.0, 0.0),  # int(float("63 million")) raises: 0
    ("Not answerable", math.nan, "Not answerable.", "[]", "[]", 1 - 1 / 15, 1 - 1 / 15),  # NaN format: list branch, ANLS
    ("Paris", "Str", "paris", "['Pure-text (Plain-text)']", "[1, 2]", 1.0, 1.0),
    ("['a', 'b']", "List", "['b', 'a']", "['Table', 'Chart']", "[4]", 1.0, 1.0),
    ("5", "Int", "", "['Figure']", "[7]", 0.0, 0.0),  # the judge gave up: blank pred, NaN, int(float(nan)) raises
]


def dump_xlsx(rows: list[dict], path: Path, *, formulas_escaped: bool = True) -> Path:
    """VLMEvalKit's `dump` to .xlsx (2026-07 on: strings starting with = stay strings; before: formulas)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows)
    if formulas_escaped:
        with pd.ExcelWriter(path, engine="xlsxwriter", engine_kwargs={"options": {"strings_to_formulas": False}}) as w:
            df.to_excel(w, index=False)
    else:
        df.to_excel(path, index=False, engine="xlsxwriter")
    return path


def dump_csv(data: dict, path: Path) -> Path:
    pd.DataFrame(data).to_csv(path, index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    return path


def docvqa_rows(cases=DOCVQA):
    return [{"index": i, "question": q, "answer": str(a), "prediction": p} for i, q, a, p, _, _ in cases]


def write_docvqa_eval(folder: Path, model: str, cases=DOCVQA, *, overall: float = OVERALL) -> Path:
    stem = f"{model}_DocVQA_VAL"
    pred = dump_xlsx(docvqa_rows(cases), folder / f"{stem}.xlsx")
    results = [{**r, "eval_gt": str(c[2]), "eval_pred": c[3] or "nan", "eval_match": str(c[4]),
                "eval_score": sum(c[4]) / len(c[4])} for r, c in zip(docvqa_rows(cases), cases)]
    dump_xlsx(results, folder / f"{stem}_results.xlsx")
    dump_csv({"Overall": [overall]}, folder / f"{stem}_acc.csv")
    return pred


def mmlb_rows():
    return [{"index": k, "doc_id": f"doc{k}.pdf", "question": f"Question {k}?", "answer": a, "answer_format": f,
             "evidence_sources": s, "evidence_pages": p, "image_path": f"['doc{k}_1.jpg', 'doc{k}_2.jpg']",
             "prediction": f"The answer is {pred or 'unclear'}"} for k, (a, f, pred, s, p, _, _) in enumerate(MMLB)]


def mmlb_expected() -> dict[str, float]:
    """`_score.csv`'s avg_score, by hand from MMLongBench_acc's formulas."""
    scores = [c[5] for c in MMLB]
    total = 0.0
    for s in scores:
        total += s
    recall = (0.0 + 1.0 + 1.0 + 0.0) / 4  # answer != "Not answerable": rows 0, 2, 3, 4
    precision = sum(scores) / 5  # pred != "Not answerable": every row ("Not answerable." and NaN too)
    return {"overall_f1": 2 * recall * precision / (recall + precision), "overall_acc": total / 5,
            "text": 1.0, "layout": 0.0, "table": 1.0, "chart": (0.0 + 1.0) / 2, "image": 0.0,
            "single-page": (0.0 + 1.0 + 0.0) / 3, "multi-page": 1.0, "unanswerable": 1 - 1 / 15}


def write_mmlb_eval(folder: Path, model: str, judge: str = "gpt-4o") -> Path:
    stem = f"{model}_MMLongBench_DOC"
    pred = dump_xlsx(mmlb_rows(), folder / f"{stem}.xlsx")
    judged = [{**r, "res": f"Extracted answer: {c[2]}\nAnswer format: {c[1]}", "log": "Succeed", "pred": c[2], "score": c[5]}
              for r, c in zip(mmlb_rows(), MMLB)]
    dump_xlsx(judged, folder / f"{stem}_{judge}.xlsx")
    exp = mmlb_expected()
    dump_csv({"category": list(exp), "num": [5, 5, 1, 0, 1, 2, 1, 3, 1, 1], "avg_score": list(exp.values())},
             folder / f"{stem}_{judge}_score.csv")
    return pred


@pytest.fixture
def work(tmp_path) -> Path:
    """A work dir with both layouts: ModelA (2026: eval ids T<date>-<time>, relative links, an older
    eval), ModelB (2024-2026: T<date>_G<commit>, absolute links that dangle here), ModelC (flat,
    before 2024-11, written with formulas), ModelD (a dataset this reader does not read)."""
    w = tmp_path / "outputs"
    a_new = w / "ModelA" / "T20260410-101010"
    write_docvqa_eval(a_new, "ModelA")
    (a_new / "status.json").write_text(json.dumps({"schema_version": 1, "eval_id": "T20260410-101010"}), "utf-8")
    (a_new / "ModelA_DocVQA_VAL_tmp.pkl").write_bytes(b"\x80\x04not a pickle to open")
    right = [(i, q, a, a[0], [0.0] * len(a), 1.0) for i, q, a, _, _, _ in DOCVQA]
    write_docvqa_eval(w / "ModelA" / "T20260301-090000", "ModelA", right, overall=100.0)
    for name in ("ModelA_DocVQA_VAL.xlsx", "ModelA_DocVQA_VAL_acc.csv"):
        (w / "ModelA" / name).symlink_to(Path("T20260410-101010") / name)
    b_eval = w / "ModelB" / "T20250101_Gabcdef12"
    write_mmlb_eval(b_eval, "ModelB")
    for name in ("ModelB_MMLongBench_DOC.xlsx", "ModelB_MMLongBench_DOC_gpt-4o.xlsx"):
        (w / "ModelB" / name).symlink_to(f"/mnt/cluster/someone/VLMEvalKit/./outputs/ModelB/T20250101_Gabcdef12/{name}")
    flat = [{"index": 0, "question": "What number?", "answer": "['42']", "prediction": "=42"},
            {"index": 1, "question": "Which?", "answer": "[\"It's\", 'd\"q']", "prediction": "N/A"}]
    dump_xlsx(flat, w / "ModelC" / "ModelC_DocVQA_VAL.xlsx", formulas_escaped=False)
    dump_xlsx([{"index": 0, "question": "q", "answer": "a", "prediction": "a"}], w / "ModelD" / "ModelD_SLIDEVQA.xlsx")
    return w


# ----------------------------------------------------------------------------- the rules by hand


@pytest.mark.parametrize("case", DOCVQA, ids=[str(c[0]) for c in DOCVQA])
def test_docvqa_rule_by_hand(case):
    _, _, answers, prediction, distances, score = case
    seen = prediction or "nan"  # what the harness reads back from a blank cell
    assert [vlm_anls_distance(a, seen) for a in answers] == distances
    assert vlm_docvqa_score(distances) == score


@pytest.mark.parametrize("case", MMLB, ids=[c[0] for c in MMLB])
def test_mmlongbench_rule_by_hand(case):
    answer, fmt, pred, _, _, score, _ = case
    got, _ = vlm_mmlongbench_score(answer, math.nan if pred == "" else pred, fmt)
    assert got == score


def test_mmlongbench_rule_quirks():
    # `eval` in the harness; literal_eval here: a pred that is code scores 0 and is never run
    score, note = vlm_mmlongbench_score("['a']", "[__import__('os').getcwd()]", "List")
    assert score == 0.0 and "eval" in note
    assert vlm_mmlongbench_score("[]", "[]", "List")[0] == 0.0  # the empty gold list: IndexError -> 0
    assert vlm_mmlongbench_score("63", "63 million", "Str")[0] == 0.0  # exact match for a number: no mile/million strip
    assert vlm_get_f1([("Not answerable", "x", 1.0)]) is None  # no answerable row: ZeroDivisionError, no score file


# ----------------------------------------------------------------------------- tables read as pandas reads them


def test_cells_read_as_the_harness_saw_them(tmp_path):
    long = "x" * 40_000
    rows = [{"index": 0, "prediction": "", "answer": "['a', 'b']", "score": 1.0},
            {"index": 1, "prediction": "None", "answer": "[\"q'uote\", 'd\"q']", "score": 0.0},
            {"index": 2, "prediction": "=SUM(1)", "answer": "nan", "score": 1.0},
            {"index": 3, "prediction": long, "answer": " spaced ", "score": 0.0},
            {"index": 4, "prediction": "N/A", "answer": "ok", "score": 1.0}]
    with pytest.warns(UserWarning):  # xlsxwriter cuts the long cell, as VLMEvalKit's runs do
        path = dump_xlsx(rows, tmp_path / "m_DocVQA_VAL.xlsx", formulas_escaped=False)
    table = read_xlsx(path)
    ours = [[vlmevalkit.harness_text(r[c]) for c in ("prediction", "answer")] for r in table.rows]
    theirs = pd.read_excel(path)  # what VLMEvalKit's `load` returns
    assert ours == [[str(v) for v in theirs.loc[k, ["prediction", "answer"]]] for k in range(5)]
    assert ours[0][0] == "nan" and ours[1][0] == "nan" and ours[2][0] == "0" and len(ours[3][0]) == 32_767
    assert ours[1][1] == "[\"q'uote\", 'd\"q']" and ours[3][1] == " spaced "
    assert [r["score"] for r in table.rows] == [1, 0, 1, 0, 1] and all(type(r["score"]) is int for r in table.rows)
    assert "blank cell" in table.notes[0]["prediction"] and "'None'" in table.notes[1]["prediction"]
    assert "formula" in table.notes[2]["prediction"] and "32,767" in table.notes[3]["prediction"]


# ----------------------------------------------------------------------------- layouts


def test_work_dir_both_layouts_each_run_once_newest_first(work):
    assert detect(work) is vlmevalkit
    src = open_source(work)
    runs = {(r.model, r.task, r.date): r for r in src.runs}
    assert sorted(runs) == [("ModelA", "DocVQA_VAL", "T20260301-090000"), ("ModelA", "DocVQA_VAL", "T20260410-101010"),
                            ("ModelB", "MMLongBench_DOC", "T20250101_Gabcdef12"), ("ModelC", "DocVQA_VAL", "")]
    newest = runs[("ModelA", "DocVQA_VAL", "T20260410-101010")]
    older = runs[("ModelA", "DocVQA_VAL", "T20260301-090000")]
    assert not newest.older and older.older
    assert [r.date for r in src.runs if r.model == "ModelA"] == ["T20260410-101010", "T20260301-090000"]
    assert newest.reported == {"Overall": 53.125} and older.reported == {"Overall": 100.0}
    dangling = [p for p in src.problems if p.kind == "dangling links"]
    assert sorted(p.file for p in dangling) == ["ModelB/ModelB_MMLongBench_DOC.xlsx", "ModelB/ModelB_MMLongBench_DOC_gpt-4o.xlsx"]
    assert any(p.kind == "unknown datasets" and "SLIDEVQA" in p.got for p in src.problems)
    assert not any(".pkl" in f for f in src.files) and not any(".pkl" in p.file for p in src.problems)


def test_model_folder_and_single_table(work):
    assert [r.date for r in open_source(work / "ModelA").runs] == ["T20260410-101010", "T20260301-090000"]
    # the link in the model folder: read where it points, with the evaluation files there
    (run,) = open_source(work / "ModelA" / "ModelA_DocVQA_VAL.xlsx").runs
    assert run.date == "T20260410-101010" and run.reported == {"Overall": 53.125}
    assert [x.official for x in run.rows] == [1.0, 0.5, 0.625, 0.0]
    (run,) = open_source(work / "ModelB" / "T20250101_Gabcdef12" / "ModelB_MMLongBench_DOC.xlsx").runs
    assert run.extra["judge"] == "gpt-4o"


def test_docvqa_reproduced_and_under_the_benchmarks_rule(work):
    src = open_source(work)
    run = next(r for r in src.runs if r.date == "T20260410-101010")
    qs = {q.qid: q for q in src.gold["DocVQA_VAL"]}
    r = rescore(run, qs, "vlmevalkit")
    assert r.recomputed == run.reported == {"Overall": 53.125}
    assert [x.score for x in r.rows] == [x.official for x in r.rows] == [1.0, 0.5, 0.625, 0.0]
    b = rescore(run, qs, "docvqa")
    assert b.recomputed == {"Overall": OVERALL_DOCVQA_PROFILE}
    assert [(x.qid, x.reason) for x in b.changed] == [
        ("1", "a distance of exactly half the length: VLMEvalKit keeps 0.5, the benchmark's rule gives 0"),
        ("2", "spaces around the answer: VLMEvalKit counts them in the length")]
    # lmms-eval's rule on the same answers: it strips first, so " abcxyz " gives 0.5, and scores "nan" 0
    assert rescore(run, qs, "lmms-eval").recomputed == {"Overall": (1.0 + 0.5 + 0.5 + 0.0) / 4 * 100}
    assert "blank cell" in r.rows[3].note


def test_flat_layout_formula_and_missing_cells_named(work):
    src = open_source(work / "ModelC")
    (run,) = src.runs
    # "=42" became a formula (cached value 0) and "N/A" is missing: a numeric column with a gap, so
    # pandas reads 0.0 -- the text the harness scored
    assert [x.prediction for x in run.rows] == ["0.0", "nan"]
    assert [str(v) for v in pd.read_excel(work / "ModelC" / "ModelC_DocVQA_VAL.xlsx")["prediction"]] == ["0.0", "nan"]
    assert "formula" in "; ".join(run.rows[0].notes) and "'N/A'" in "; ".join(run.rows[1].notes)
    qs = {q.qid: q for q in src.gold["DocVQA_VAL"]}
    assert qs["1"].answers == ("It's", 'd"q')


def test_mmlongbench_judge_sheet_reproduced(work):
    src = open_source(work / "ModelB")
    (run,) = src.runs
    exp = mmlb_expected()
    assert run.reported == pytest.approx(exp) and run.reported["overall_f1"] == pytest.approx(88 / 163)
    assert run.reported["overall_acc"] == pytest.approx((2 + 14 / 15) / 5)
    qs = {q.qid: q for q in src.gold["MMLongBench_DOC"]}
    assert [qs[str(k)].answer_format for k in range(5)] == ["Int", "None", "Str", "List", "Int"]
    assert src.documents == [f"doc{k}.pdf" for k in range(5)]
    r = rescore(run, qs, "vlmevalkit")
    assert r.recomputed == run.reported
    assert [x.score for x in r.rows] == [x.official for x in r.rows] == [c[5] for c in MMLB]
    assert [x.prediction for x in r.rows] == ["63 million", "Not answerable.", "paris", "['b', 'a']", "nan"]
    b = rescore(run, qs, "mmlongbench-doc")
    assert [x.score for x in b.rows] == [c[6] for c in MMLB]
    # the benchmark's F1: recall 2/4 over answerable gold, precision 2/5 over preds not exactly "Not answerable"
    assert b.recomputed["overall_f1"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)


def test_bad_sheets_each_named_rest_loaded(tmp_path):
    w = tmp_path / "outputs"
    dump_xlsx([{"index": 0, "question": "q"}], w / "M1" / "M1_DocVQA_VAL.xlsx")  # no answer, no prediction
    (w / "M2").mkdir(parents=True)
    (w / "M2" / "M2_DocVQA_VAL.xlsx").write_bytes(b"PK\x03\x04 not a workbook")
    dump_xlsx(docvqa_rows() + docvqa_rows()[:1], w / "M3" / "M3_DocVQA_VAL.xlsx")  # index 0 twice
    outside = tmp_path / "elsewhere.xlsx"
    dump_xlsx(docvqa_rows(), outside)
    (w / "M4").mkdir()
    (w / "M4" / "M4_DocVQA_VAL.xlsx").symlink_to(outside)
    src = open_source(w)
    assert [r.model for r in src.runs] == ["M3"] and len(src.runs[0].rows) == 4
    by_file = {p.file: p for p in src.problems}
    assert by_file["M1/M1_DocVQA_VAL.xlsx"].kind == "sheets with missing columns"
    assert "answer, prediction" in by_file["M1/M1_DocVQA_VAL.xlsx"].field
    assert "not a readable .xlsx" in by_file["M2/M2_DocVQA_VAL.xlsx"].got
    assert by_file["M3/M3_DocVQA_VAL.xlsx"].line == 6 and by_file["M3/M3_DocVQA_VAL.xlsx"].kind == "duplicate rows"
    assert by_file["M4/M4_DocVQA_VAL.xlsx"].kind == "links leaving the folder"


def test_tsv_and_json_prediction_formats(tmp_path):
    folder = tmp_path / "o" / "M" / "T20260410-101010"
    folder.mkdir(parents=True)
    pd.DataFrame(docvqa_rows()).to_csv(folder / "M_DocVQA_VAL.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    with open(folder / "M_InfoVQA_VAL.json", "w", encoding="utf-8") as fh:
        json.dump(docvqa_rows(), fh, indent=4, ensure_ascii=False)
    src = open_source(tmp_path / "o")
    got = {r.task: [x.prediction for x in r.rows] for r in src.runs}
    assert got["DocVQA_VAL"] == ["January 8, 1993", "abxy", " abcxyz ", "nan"]  # "" read as NaN by read_csv
    assert got["InfoVQA_VAL"] == ["January 8, 1993", "abxy", " abcxyz ", ""]


# ----------------------------------------------------------------------------- the command line


def test_cli_round_trip(work, tmp_path):
    report, table = tmp_path / "r.json", tmp_path / "q.csv"
    assert cli.main(["--predictions", str(work / "ModelB"), "--profile", "vlmevalkit", "--output", str(report),
                     "--per-question-csv", str(table)]) == 0
    rep = json.loads(report.read_text())
    assert rep["reported"] == rep["recomputed"] and set(rep["reported"]) == set(mmlb_expected())
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["question_id"] for r in rows] == ["0", "1", "2", "3", "4"]
    assert all(r["score"] == r["official_score"] for r in rows)
    # the whole work dir: the newest eval of each (model, dataset); older ones with --all-evals
    assert cli.main(["--predictions", str(work), "--output", str(report), "--per-question-csv", str(table)]) == 0
    rep = json.loads(report.read_text())
    # a model with several eval ids: its runs are named with the eval id
    assert sorted(rep["reported"]) == ["ModelA/DocVQA_VAL@T20260410-101010", "ModelB/MMLongBench_DOC", "ModelC/DocVQA_VAL"]
    assert rep["recomputed"]["ModelA/DocVQA_VAL@T20260410-101010"] == {"Overall": 53.125}
    assert cli.main(["--predictions", str(work), "--all-evals", "--output", str(report)]) == 0
    assert len(json.loads(report.read_text())["runs"]) == 4
    assert cli.main(["--predictions", str(work / "ModelA"), "--profile", "docvqa", "--output", str(report)]) == 0
    assert json.loads(report.read_text())["recomputed"] == {"Overall": 25.0}


def test_no_pickle_is_opened(work, monkeypatch):
    import pickle

    def refuse(*a, **k):
        raise AssertionError("a pickle was opened")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    assert open_source(work).runs
    assert os.path.exists(work / "ModelA" / "T20260410-101010" / "ModelA_DocVQA_VAL_tmp.pkl")


def test_eval_format_json_and_a_tsv_judge_sheet(tmp_path):
    """EVAL_FORMAT=json writes `_acc.json` (a list of one record); PRED_FORMAT=tsv writes the judge's
    sheet as `_<judge>.tsv` (quoted, read back with read_csv's missing strings); `_score.csv` stays csv."""
    d = tmp_path / "o" / "M" / "T20260410-101010"
    d.mkdir(parents=True)
    pd.DataFrame(docvqa_rows()).to_csv(d / "M_DocVQA_VAL.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    (d / "M_DocVQA_VAL_acc.json").write_text(json.dumps([{"Overall": OVERALL}], indent=4), "utf-8")
    pd.DataFrame(mmlb_rows()).to_csv(d / "M_MMLongBench_DOC.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    judged = [{**r, "res": "", "log": "Succeed", "pred": c[2], "score": c[5]} for r, c in zip(mmlb_rows(), MMLB)]
    pd.DataFrame(judged).to_csv(d / "M_MMLongBench_DOC_gpt-4o-mini.tsv", sep="\t", index=False, quoting=csv.QUOTE_ALL)
    exp = mmlb_expected()
    dump_csv({"category": list(exp), "num": [5] * 10, "avg_score": list(exp.values())}, d / "M_MMLongBench_DOC_gpt-4o-mini_score.csv")
    src = open_source(tmp_path / "o")
    runs = {r.task: r for r in src.runs}
    assert runs["DocVQA_VAL"].reported == {"Overall": 53.125}
    mm = runs["MMLongBench_DOC"]
    assert mm.extra["judge"] == "gpt-4o-mini" and mm.reported == pytest.approx(exp)
    r = rescore(mm, {q.qid: q for q in src.gold["MMLongBench_DOC"]}, "vlmevalkit")
    assert [x.score for x in r.rows] == [x.official for x in r.rows] == [c[5] for c in MMLB]
    assert r.recomputed == pytest.approx(mm.reported)


def test_sample_harness_vlmevalkit_run_reproduced():
    sample = Path(__file__).resolve().parent.parent / "sample_runs" / "harness" / "vlmevalkit"
    src = open_source(sample)
    (run,) = src.runs
    assert run.model == "MiniCPM-Llama3-V-2_5" and run.extra["judge"] == "gpt-4o" and len(run.rows) == 41
    qs = {q.qid: q for q in src.gold["MMLongBench_DOC"]}
    r = rescore(run, qs, "vlmevalkit")
    assert r.recomputed == run.reported and not r.changed
    assert run.rows[8].prediction == "nan" and "blank cell" in r.rows[8].note  # the judge gave up
    b = rescore(run, qs, "mmlongbench-doc")
    # where VLMEvalKit's eval_score raises (Float gold `96.4 million`, the empty gold list): 0; the benchmark's rules: 1
    assert [(x.qid, x.official, x.score) for x in b.changed] == [("13", 0.0, 1.0), ("14", 0.0, 1.0)]
    assert {x.reason for x in b.changed} == {"VLMEvalKit's eval_score raises on this row and scores 0"}


def test_results_sheet_written_with_numpy_floats(tmp_path):
    """A list of numpy floats in a cell is written as its repr: `[np.float64(0.375)]` under numpy 2."""
    import numpy as np

    d = tmp_path / "M"
    dump_xlsx(docvqa_rows(), d / "M_DocVQA_VAL.xlsx")
    rows = [{**r, "eval_match": [np.float64(x) for x in c[4]]} for r, c in zip(docvqa_rows(), DOCVQA)]
    dump_xlsx(rows, d / "M_DocVQA_VAL_results.xlsx")
    assert "np.float64(0.375)" in str(pd.read_excel(d / "M_DocVQA_VAL_results.xlsx")["eval_match"][2])
    (run,) = open_source(d).runs
    assert [x.official for x in run.rows] == [1.0, 0.5, 0.625, 0.0]


def test_split_columns_of_acc_csv_are_recomputed(tmp_path):
    """A TSV with a `split` column: `_acc.csv` holds each split's ANLS x100 and Overall."""
    d = tmp_path / "M"
    rows = [{**r, "split": "a" if k < 2 else "b"} for k, r in enumerate(docvqa_rows())]
    dump_xlsx(rows, d / "M_DocVQA_VAL.xlsx")
    results = [{**r, "eval_match": str(c[4])} for r, c in zip(rows, DOCVQA)]
    dump_xlsx(results, d / "M_DocVQA_VAL_results.xlsx")
    dump_csv({"b": [(0.625 + 0.0) / 2 * 100], "a": [(1.0 + 0.5) / 2 * 100], "Overall": [OVERALL]}, d / "M_DocVQA_VAL_acc.csv")
    src = open_source(d)
    (run,) = src.runs
    assert run.reported == {"b": 31.25, "a": 75.0, "Overall": 53.125}
    assert rescore(run, {q.qid: q for q in src.gold["DocVQA_VAL"]}, "vlmevalkit").recomputed == run.reported


def test_ranks_move_under_the_benchmarks_rule(tmp_path, capsys):
    """ModelA 53.125 and ModelB 50 by VLMEvalKit's rule; by DocVQA's own (0.5 scores 0, the spaces
    stripped) ModelA 25 and ModelB 50: the ranks swap."""
    w = tmp_path / "outputs"
    write_docvqa_eval(w / "ModelA", "ModelA")
    b_cases = [(i, q, a, p, [vlm_anls_distance(x, p or "nan") for x in a], 0.0)
               for (i, q, a, _, _, _), p in zip(DOCVQA, ["January 8, 1993", "abcd", "zzzzzz", "zz"])]
    b_cases = [c[:5] + (vlm_docvqa_score(c[4]),) for c in b_cases]
    assert [c[5] for c in b_cases] == [1.0, 1.0, 0.0, 0.0]
    write_docvqa_eval(w / "ModelB", "ModelB", b_cases, overall=50.0)
    report = tmp_path / "r.json"
    assert cli.main(["--predictions", str(w), "--profile", "docvqa", "--output", str(report)]) == 0
    (move,) = json.loads(report.read_text())["ranks"]
    assert move["key"] == "Overall" and move["reported"] == ["ModelA/DocVQA_VAL", "ModelB/DocVQA_VAL"]
    assert move["recomputed"] == ["ModelB/DocVQA_VAL", "ModelA/DocVQA_VAL"]
    assert "ModelB/DocVQA_VAL 2 -> 1, ModelA/DocVQA_VAL 1 -> 2" in capsys.readouterr().out


# ----------------------------------------------------------------------------- eval ids in the app


OLDER = "ModelA/DocVQA_VAL@T20260301-090000"


def test_the_newest_eval_id_is_the_run_and_an_older_one_loads_instead(work):
    from dashboard.core.paths import Sources
    from dashboard.data.workspace import load_workspace

    ws = load_workspace(Sources(work, task="DocVQA_VAL"))
    # one run per (model, dataset), named by its model (no date: one eval id is loaded at a time)
    assert [pf.run for pf in ws.predictions] == ["ModelA", "ModelC"]
    assert [(o.eval_id, o.pick) for o in ws.evals["ModelA"]] == [
        ("T20260410-101010", "ModelA/DocVQA_VAL@T20260410-101010"), ("T20260301-090000", OLDER)]
    entry = next(h for h in ws.harness if h.name == "ModelA")
    assert entry.run.date == "T20260410-101010" and entry.run.reported == {"Overall": 53.125}
    assert ws.with_evals([]) is ws and ws.with_evals(["ModelZ/DocVQA_VAL@T20260301-090000"]) is ws
    older = ws.with_evals([OLDER])
    assert [pf.run for pf in older.predictions] == ["ModelA", "ModelC"]
    entry = next(h for h in older.harness if h.name == "ModelA")
    assert entry.run.date == "T20260301-090000" and entry.run.reported == {"Overall": 100.0}
    # its official scores are the older eval's (every answer right there: 1.0 each), the newest's are gone
    official = older.official()["ModelA"]
    assert len(official) == len(DOCVQA) and {r.accuracy for r in official} == {1.0}
    assert sorted({r.accuracy for r in ws.official()["ModelA"]}) != [1.0]
    pf = next(p for p in older.predictions if p.run == "ModelA")
    assert [p.text for p in pf.loaded.items] == [a[0] for _, _, a, _, _, _ in DOCVQA]
    # the workspace read (cached, shared) is not changed
    assert next(h for h in ws.harness if h.name == "ModelA").run.date == "T20260410-101010"


def test_the_data_page_picks_the_eval_id_kept_in_the_url(work, monkeypatch):
    from app_kit import app_on

    at = app_on(monkeypatch, work, {"bench": "DocVQA_VAL"}, timeout=120)
    at.switch_page("views/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = next(s for s in at.selectbox if s.label.replace("\\", "").startswith("Eval id of ModelA/DocVQA_VAL"))
    assert picker.options == ["T20260410-101010 (newest)", "T20260301-090000"]
    assert picker.value == "T20260410-101010" and "eval" not in at.query_params
    board = next(d.value for d in at.dataframe if "Older eval" in d.value.columns).set_index("Run")
    assert board.loc["ModelA", "Date"] == "T20260410-101010"
    picker.set_value("T20260301-090000").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["eval"] == OLDER
    board = next(d.value for d in at.dataframe if "Older eval" in d.value.columns).set_index("Run")
    assert board.loc["ModelA", "Date"] == "T20260301-090000" and board.loc["ModelA", "Reported"] == "Overall: 100"
    # a link with the eval id opens on it
    again = app_on(monkeypatch, work, {"bench": "DocVQA_VAL", "eval": OLDER}, timeout=120)
    again.switch_page("views/data.py").run()
    board = next(d.value for d in again.dataframe if "Older eval" in d.value.columns).set_index("Run")
    assert board.loc["ModelA", "Date"] == "T20260301-090000"
    picker = next(s for s in again.selectbox if s.label.replace("\\", "").startswith("Eval id of ModelA/DocVQA_VAL"))
    assert picker.value == "T20260301-090000"

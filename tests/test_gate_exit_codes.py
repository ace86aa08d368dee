"""The regression gate's contract, exit code by exit code, under every profile (XL-DocBench,
MMLongBench-Doc's own files, lmms-eval and VLMEvalKit outputs): 0 pass, 1 input, 2 usage,
3 regression, 4 inconclusive (a drop the documents cannot test), 5 a baseline sharing no question;
runs compared on the questions both answered; outputs that cannot be written said in one sentence with
the verdict kept; every code in --help and in docs/statistics.md. Benchmarks in each real format:
tests/gate_kit.py."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gate_kit import lmms_run, mm_results, mm_samples, xl_gold, xl_run
from scoring.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_MM = ROOT / "sample_runs" / "mmlongbench"
SAMPLE_HARNESS = ROOT / "sample_runs" / "harness"
INCONCLUSIVE = re.compile(r"^INCONCLUSIVE: (accuracy|token_f1|anls) dropped by (\d+\.\d\d) points on (\d+) documents; "
                          r"the smallest p \3 documents can give is ([0-9.e-]+) \(level ([0-9.]+)\)$", re.M)
WEAK_HEADER = "rank,slice,n,documents,gap,ci_low,ci_high,p,q,excess_failures,score_slice,score_rest,explains,explained_slices"


def collapse(d: int, k: int) -> bool:
    """A run that lost nearly every answer: right only on the first question of each document."""
    return k == 0


def half_wrong(d: int, k: int) -> bool:
    return k % 2 == 0


# ----------------------------------------------------------------------------- 4: a drop the documents cannot test


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    """A 5-document benchmark (8 questions each): the baseline right everywhere, the new run collapsed."""
    tmp = tmp_path_factory.mktemp("five")
    gold = xl_gold(tmp, 5, 8)
    return {"tmp": tmp, "gold": gold, "old": xl_run(tmp, "old", 5, 8), "new": xl_run(tmp, "new", 5, 8, right=collapse)}


def _gate(files, *extra: str, new: str = "new", old: str = "old") -> list[str]:
    return ["--gold-files", str(files["gold"]), "--predictions", str(files[new]), "--baseline", str(files[old]), *extra]


def test_a_collapse_on_five_documents_is_inconclusive_not_a_pass(five, capsys):
    out = five["tmp"] / "c.json"
    assert main(_gate(five, "--compare-json", str(out), "--fail-on-regression")) == 4
    printed = capsys.readouterr()
    found = INCONCLUSIVE.findall(printed.out)
    assert [f[0] for f in found] == ["accuracy", "token_f1", "anls"], printed.out
    metric, drop, docs, least, level = found[0]
    assert (docs, least, level) == ("5", "0.0625", "0.05")
    assert float(drop) == pytest.approx(100 * 7 / 8, abs=0.01)  # 8 right of 8 -> 1 right of 8 per document
    assert "no regression" not in printed.out and "REGRESSION" not in printed.out
    assert "FAILED: inconclusive" in printed.err and "--inconclusive pass" in printed.err
    gate = json.loads(out.read_text(encoding="utf-8"))["gate"]
    assert gate["verdict"] == "inconclusive" and len(gate["inconclusive"]) == 3 and gate["regressions"] == []


def test_inconclusive_pass_opts_out_with_the_same_line_as_a_warning(five, capsys):
    assert main(_gate(five, "--fail-on-regression", "--inconclusive", "pass")) == 0
    printed = capsys.readouterr()
    lines = [m.group(0) for m in INCONCLUSIVE.finditer(printed.out)]
    assert len(lines) == 3
    for line in lines:
        assert f"warning: {line}" in printed.err
    # without --fail-on-regression the lines are printed and nothing fails
    assert main(_gate(five)) == 0
    assert len(INCONCLUSIVE.findall(capsys.readouterr().out)) == 3


def test_a_drop_within_min_gap_is_not_inconclusive(five, capsys):
    assert main(_gate(five, "--fail-on-regression", "--min-gap", "0.9")) == 0
    printed = capsys.readouterr().out
    assert "INCONCLUSIVE" not in printed and "no regression beyond --min-gap 0.9" in printed


def test_python_m_scoring_exits_4(five):
    done = subprocess.run([sys.executable, "-m", "scoring", *_gate(five, "--fail-on-regression", "--gate-metric", "accuracy")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stderr
    assert [f[0] for f in INCONCLUSIVE.findall(done.stdout)] == ["accuracy"]
    assert "Traceback" not in done.stderr


# ----------------------------------------------------------------------------- runs that answered a subset; 5


@pytest.fixture(scope="module")
def forty(tmp_path_factory):
    """40 documents x 6 questions."""
    tmp = tmp_path_factory.mktemp("forty")
    n, m = 40, 6
    first_half = lambda d, k: d < 20  # noqa: E731
    return {"tmp": tmp, "gold": xl_gold(tmp, n, m), "old": xl_run(tmp, "old", n, m),
            "same": xl_run(tmp, "same", n, m),
            "worse": xl_run(tmp, "worse", n, m, right=half_wrong),
            # the baseline answered the first 20 documents only (all right); the new run answered all,
            # half wrong on those 20 and right on the rest: a real drop where both answered
            "partial_old": xl_run(tmp, "partial_old", n, m, answers=first_half),
            "drop_on_shared": xl_run(tmp, "drop_on_shared", n, m, right=lambda d, k: d >= 20 or k % 2 == 0),
            # the new run answered the first 20 documents only, exactly as the baseline did
            "partial_new": xl_run(tmp, "partial_new", n, m, answers=first_half),
            "other": xl_run(tmp, "other", n, m, prefix="another_benchmark")}


def test_a_partial_baseline_is_compared_on_the_shared_questions(forty, capsys):
    out = forty["tmp"] / "partial.json"
    code = main(_gate(forty, "--compare-json", str(out), "--fail-on-regression", new="drop_on_shared", old="partial_old"))
    printed = capsys.readouterr().out
    assert "compared on 120 shared questions of 240" in printed
    assert code == 3, printed  # counted as wrong, the baseline's 120 missing answers would hide the drop
    got = json.loads(out.read_text(encoding="utf-8"))
    assert (got["questions"], got["gold_questions"], got["new_answered"], got["baseline_answered"]) == (120, 240, 240, 120)
    assert got["overall"]["accuracy"]["delta"] == pytest.approx(-0.5) and got["overall"]["accuracy"]["units"] == 20


def test_a_new_run_that_answered_a_subset_is_not_failed_for_the_rest(forty, capsys):
    assert main(_gate(forty, "--fail-on-regression", new="partial_new")) == 0
    printed = capsys.readouterr().out
    assert "compared on 120 shared questions of 240" in printed and "accuracy: +0.00 points" in printed


def test_a_baseline_sharing_no_question_is_refused_with_exit_5(forty, capsys):
    out = forty["tmp"] / "none.json"
    assert main(_gate(forty, "--compare-json", str(out), "--fail-on-regression", new="same", old="other")) == 5
    err = capsys.readouterr().err
    refusal = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(refusal) == 1 and "shares no question" in refusal[0]
    assert not out.exists()


def test_a_real_drop_fails_and_none_passes(forty, capsys):
    assert main(_gate(forty, "--fail-on-regression", new="worse")) == 3
    printed = capsys.readouterr()
    assert "REGRESSION: overall accuracy" in printed.out and "q = " in printed.out
    assert main(_gate(forty, "--fail-on-regression", new="same")) == 0
    assert "no regression" in capsys.readouterr().out


# ----------------------------------------------------------------------------- outputs that cannot be written


@pytest.mark.parametrize("target", ["folder", "under_a_file"])
def test_an_unwritable_compare_json_is_one_sentence_and_the_verdict_is_kept(forty, five, capsys, target):
    bad = forty["tmp"] / "a_folder"
    bad.mkdir(exist_ok=True)
    if target == "under_a_file":
        bad = forty["gold"] / "compare.json"  # a path below a regular file
    for files, new, code in ((forty, "worse", 3), (five, "new", 4), (forty, "same", 0)):
        assert main(_gate(files, "--compare-json", str(bad), "--fail-on-regression", new=new)) == code
        err = capsys.readouterr().err
        said = [line for line in err.splitlines() if "--compare-json" in line]
        assert len(said) == 1 and said[0].startswith("ERROR: cannot write the comparison"), err
        assert "Traceback" not in err
    # asked for no verdict, the write was the job: exit 1
    assert main(_gate(forty, "--compare-json", str(bad), new="same")) == 1


def test_an_unwritable_weak_slices_csv_is_one_sentence(forty, capsys):
    bad = forty["tmp"] / "csv_folder"
    bad.mkdir(exist_ok=True)
    args = ["--gold-files", str(forty["gold"]), "--predictions", str(forty["worse"]), "--weak-slices", str(bad)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("ERROR: cannot write the weak slices") == 1 and "Traceback" not in err
    assert main([*args, "--baseline", str(forty["old"]), "--fail-on-regression"]) == 3


def test_a_compare_json_in_a_folder_not_made_yet_is_written(forty, capsys):
    out = forty["tmp"] / "new" / "folder" / "c.json"
    assert main(_gate(forty, "--compare-json", str(out), new="same")) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["gate"]["verdict"] == "pass"


# ----------------------------------------------------------------------------- 2 and the help


def test_usage_errors_exit_2(forty, capsys):
    assert main(["--gold-files", str(forty["gold"]), "--predictions", str(forty["same"]), "--fail-on-regression"]) == 2
    with pytest.raises(SystemExit) as raised:
        main(_gate(forty, "--inconclusive", "maybe", new="same"))
    assert raised.value.code == 2
    capsys.readouterr()


@pytest.mark.parametrize("profile", [[], ["--profile", "mmlongbench-doc"], ["--profile", "lmms-eval"]])
def test_the_help_lists_every_exit_code_and_what_is_tested(profile):
    done = subprocess.run([sys.executable, "-m", "scoring", *profile, "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    codes = dict(re.findall(r"^  ([0-9])  (\w+)", text, re.M))
    assert codes == {"0": "pass", "1": "input", "2": "usage", "3": "regression", "4": "inconclusive", "5": "the"}
    assert "shares no question" in " ".join(text.split())
    flat = " ".join(text.split())
    for words in ("a drop below -min-gap", "rejects at the level", "Benjamini-Hochberg across", "adjusted together",
                  "--inconclusive pass", "the smallest p N documents can give is P (level L)", "--inconclusive {fail,pass}"):
        assert words in flat, words


def test_the_readme_lists_every_exit_code():
    """docs/statistics.md (where the README sends a reader for the gate) lists every exit code."""
    assert "docs/statistics.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    text = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    section = text[text.index("## Weak slices and the regression gate"):]
    section = section[:section.index("\n## ", 5)]
    for code, word in (("0", "pass"), ("1", "input"), ("2", "usage"), ("3", "regression"), ("4", "inconclusive"),
                       ("5", "no shared question")):
        assert re.search(rf"^\| `{code}` \| {word}", section, re.M), (code, word)
    assert "--inconclusive pass" in section and "compared on" in section


# ----------------------------------------------------------------------------- MMLongBench-Doc's own files


@pytest.fixture(scope="module")
def mm(tmp_path_factory):
    """A 40-PDF MMLongBench-Doc (3 questions each) and result files of it; another benchmark's file."""
    tmp = tmp_path_factory.mktemp("mm")
    samples_path, samples = mm_samples(tmp / "bench", 40, 3)
    _, others = mm_samples(tmp / "other", 40, 3, tag="brochure")
    return {"tmp": tmp, "gold": samples_path,
            "old": mm_results(tmp / "bench", "gpt-4o", samples, 3),
            "same": mm_results(tmp / "bench", "same", samples, 3),
            "worse": mm_results(tmp / "bench", "worse", samples, 3, right=lambda d, k: k == 0),
            "partial": mm_results(tmp / "bench", "partial", samples, 3, answers=lambda d, k: d < 25),
            "other": mm_results(tmp / "other", "other", others, 3)}


@pytest.mark.parametrize("profile", [["--profile", "mmlongbench-doc"], []], ids=["profile", "samples.json alone"])
def test_mmlongbench_gate_and_weak_slices(mm, capsys, profile):
    out, weak = mm["tmp"] / f"c{len(profile)}.json", mm["tmp"] / f"w{len(profile)}.csv"
    txt = mm["tmp"] / f"res_worse{len(profile)}.txt"
    code = main([*profile, "--gold-files", str(mm["gold"]), "--predictions", str(mm["worse"]), "--baseline", str(mm["old"]),
                 "--compare-json", str(out), "--fail-on-regression", "--weak-slices", str(weak), "--output-txt", str(txt)])
    printed = capsys.readouterr()
    assert code == 3, printed.err
    assert "REGRESSION: overall accuracy" in printed.out and "compared on 120 shared questions of 120" in printed.out
    got = json.loads(out.read_text(encoding="utf-8"))
    assert list(got)[:3] == ["overall", "slices", "weak_slices"]
    acc = got["overall"]["accuracy"]
    assert acc["unit"] == "document" and acc["units"] == 40 and acc["delta"] == pytest.approx(-2 / 3)
    assert {"doc_type=Brochure", "evidence_source=Chart"} <= {r["slice"] for r in got["slices"]}
    assert weak.read_text(encoding="utf-8").splitlines()[0] == WEAK_HEADER
    assert txt.is_file()  # the run's own outputs are written as without the gate
    assert main([*profile, "--gold-files", str(mm["gold"]), "--predictions", str(mm["same"]), "--baseline", str(mm["old"]),
                 "--fail-on-regression"]) == 0
    assert "no regression" in capsys.readouterr().out


def test_mmlongbench_partial_and_foreign_baselines(mm, capsys):
    base = ["--profile", "mmlongbench-doc", "--gold-files", str(mm["gold"])]
    assert main([*base, "--predictions", str(mm["same"]), "--baseline", str(mm["partial"]), "--fail-on-regression"]) == 0
    assert "compared on 75 shared questions of 120" in capsys.readouterr().out
    assert main([*base, "--predictions", str(mm["same"]), "--baseline", str(mm["other"]), "--fail-on-regression"]) == 5
    err = capsys.readouterr().err
    assert "shares no question" in err and "Traceback" not in err


def test_mmlongbench_sample_is_inconclusive(tmp_path, capsys):
    """sample_runs/mmlongbench: 5 PDFs; docowl-8b 63 points below gpt-4o, untestable on 5 documents."""
    weak = tmp_path / "w.csv"
    code = main(["--profile", "mmlongbench-doc", "--gold-files", str(SAMPLE_MM / "data" / "samples.json"),
                 "--predictions", str(SAMPLE_MM / "results" / "res_docowl-8b.json"),
                 "--baseline", str(SAMPLE_MM / "results" / "res_gpt-4o.json"), "--fail-on-regression", "--weak-slices", str(weak)])
    printed = capsys.readouterr()
    assert code == 4, printed.err
    assert "compared on 40 shared questions of 41" in printed.out  # docowl-8b left one unanswered
    assert {f[2:] for f in INCONCLUSIVE.findall(printed.out)} == {("5", "0.0625", "0.05")}
    assert weak.read_text(encoding="utf-8").splitlines() == [WEAK_HEADER]  # 5 documents: nothing can be tested


# ----------------------------------------------------------------------------- harness outputs


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """lmms-eval folders (mmlongbench_doc, v0.7 lines) of the 40-PDF benchmark: a baseline, the same
    answers, a worse run; its samples.json to join them to."""
    tmp = tmp_path_factory.mktemp("lmms")
    samples_path, samples = mm_samples(tmp / "bench", 40, 3)
    return {"tmp": tmp, "gold": samples_path,
            "old": lmms_run(tmp / "old", "Qwen/Qwen2.5-VL-7B-Instruct", samples, 3),
            "same": lmms_run(tmp / "same", "Qwen/Qwen3-VL-8B", samples, 3),
            "worse": lmms_run(tmp / "worse", "llava/onevision-7b", samples, 3, right=lambda d, k: k == 0)}


def test_lmms_eval_gate_on_the_benchmarks_documents(harness, capsys):
    out, weak = harness["tmp"] / "c.json", harness["tmp"] / "w.csv"
    code = main(["--predictions", str(harness["worse"]), "--baseline", str(harness["old"]), "--gold-files", str(harness["gold"]),
                 "--compare-json", str(out), "--fail-on-regression", "--weak-slices", str(weak)])
    printed = capsys.readouterr()
    assert code == 3, printed.err
    got = json.loads(out.read_text(encoding="utf-8"))
    acc = got["overall"]["accuracy"]
    assert (acc["unit"], acc["units"], got["questions"]) == ("document", 40, 120)  # joined: the PDFs are the units
    assert acc["delta"] == pytest.approx(-2 / 3)
    assert weak.read_text(encoding="utf-8").splitlines()[0] == WEAK_HEADER
    assert main(["--predictions", str(harness["same"]), "--baseline", str(harness["old"]), "--gold-files", str(harness["gold"]),
                 "--fail-on-regression"]) == 0
    assert "no regression" in capsys.readouterr().out


def test_harness_gate_refuses_a_baseline_of_another_benchmark(harness, capsys):
    # an lmms-eval run of the benchmark against MMLongBench-Doc result files is not a harness baseline
    code = main(["--predictions", str(harness["same"]), "--baseline", str(SAMPLE_HARNESS / "vlmevalkit"),
                 "--gold-files", str(harness["gold"]), "--fail-on-regression"])
    err = capsys.readouterr().err
    assert code == 5 and "shares no question" in err and "Traceback" not in err


def test_harness_sample_lmms_eval_against_vlmevalkit_is_inconclusive(tmp_path, capsys):
    """sample_runs/harness: an lmms-eval run and a VLMEvalKit run of the 5-PDF sample benchmark."""
    weak = tmp_path / "w.csv"
    code = main(["--predictions", str(SAMPLE_HARNESS / "lmms-eval"), "--baseline", str(SAMPLE_HARNESS / "vlmevalkit"),
                 "--gold-files", str(SAMPLE_MM / "data" / "samples.json"), "--fail-on-regression", "--weak-slices", str(weak)])
    printed = capsys.readouterr()
    assert code == 4, printed.err
    assert {f[2:] for f in INCONCLUSIVE.findall(printed.out)} == {("5", "0.0625", "0.05")}
    with weak.open(encoding="utf-8", newline="") as fh:
        assert next(csv.reader(fh)) == WEAK_HEADER.split(",")
    # VLMEvalKit as the new run, --weak-slices alone
    assert main(["--predictions", str(SAMPLE_HARNESS / "vlmevalkit"), "--weak-slices", str(weak)]) == 0
    assert "weak slices (accuracy)" in capsys.readouterr().out


def test_a_harness_folder_of_several_runs_is_a_usage_error(harness, tmp_path, capsys):
    both = tmp_path / "both"
    for name in ("old", "worse"):
        for f in harness[name].iterdir():
            (both / harness[name].name).mkdir(parents=True, exist_ok=True)
            (both / harness[name].name / f.name).write_bytes(f.read_bytes())
    code = main(["--predictions", str(both), "--baseline", str(harness["old"]), "--fail-on-regression"])
    err = capsys.readouterr().err
    assert code == 2 and "holds 2 runs" in err

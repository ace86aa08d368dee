"""`docbench-lens` is the one command (issue 36, item 2): every program a subcommand that `--help`
lists, each subcommand's `--help` listing every option its parser accepts (read from the parsers
themselves), profiles and exit codes; `python -m scoring` the same program as `docbench-lens score`
(the same help, the same bytes written), and `slices` and `gate` the same code as `score` with
`--weak-slices` and with `--baseline ... --fail-on-regression`."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard import launch
from gate_kit import lmms_run, mm_results, mm_samples, xl_gold, xl_run
from scoring import options
from scoring.profiles import HARNESS_PROFILES, PROFILES

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
NAMES = ("serve", "score", "slices", "gate", "report", "evidence", "notes", "ingest")
SCRIPTS = {"score": ["-m", "scoring"], "report": ["-m", "dashboard.report"], "evidence": ["-m", "dashboard.evidence"],
           "notes": ["-m", "dashboard.annotations"]}
HANG = 300  # seconds: a hang guard, far beyond the few seconds each command takes


def run(args: list[str], cwd: Path = ROOT, columns: int = 100) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env["COLUMNS"] = str(columns)  # argparse wraps the help to the terminal's width
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG)


def lens(*args: str) -> list[str]:
    """`docbench-lens ARGS` as the installed script runs it (dashboard.launch:main)."""
    return ["-m", "dashboard.launch", *args]


# ----------------------------------------------------------------------------- what --help says


def test_the_help_lists_every_subcommand_on_one_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    commands = launch.subcommands()
    assert tuple(c.name for c in commands) == NAMES
    text = launch.command_parser(commands).format_help()
    for c in commands:
        assert re.search(rf"^ +{c.name} +{re.escape(c.summary)}$", text, re.M), (c.name, text)
    assert "python -m scoring" in text and "docbench-score" in text  # the aliases are named


def _parsers(ap: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser]]:
    """A parser and, for a parser with sub-commands (notes export|import), each of theirs."""
    out = [(name, ap)]
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, parser in action.choices.items():
                out += _parsers(parser, f"{name} {sub}")
    return out


@pytest.mark.parametrize("name", NAMES)
def test_each_subcommand_help_lists_every_option_choice_and_exit_code(name, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    command = next(c for c in launch.subcommands() if c.name == name)
    checked = 0
    for label, ap in _parsers(command.parser(f"docbench-lens {name}"), name):
        text = ap.format_help()
        flat = " ".join(text.split())
        for action in ap._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings:
                assert flag in text, (label, flag)
                checked += 1
            if action.choices and not isinstance(action, argparse._SubParsersAction):
                for choice in action.choices:
                    assert str(choice) in flat, (label, action.dest, choice)
        assert "exit codes:" in text, label
        assert text.startswith(f"usage: docbench-lens {label}"), text[:80]
    assert checked >= 4


def test_the_score_help_names_every_profile_kind_of_input_output_and_exit_code(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = options.build_parser("docbench-lens score").format_help()
    flat = " ".join(text.split())
    for profile in [*PROFILES, *HARNESS_PROFILES]:  # lmms-eval, vlmevalkit and mmlongbench-doc among them
        assert re.search(rf"^  {re.escape(profile)} +\S", text, re.M), profile  # each with its description
    for words in ("--output-txt", "--all-evals", "--categories-csv", "--per-question-csv", "--weak-slices", "--compare-json",
                  "--judge-url", "samples.json", "lmms-eval", "VLMEvalKit", "LongDocURL"):
        assert words in flat, words
    codes = dict(re.findall(r"^  ([0-9])  (\w+)", text, re.M))
    assert codes == {"0": "pass", "1": "input", "2": "usage", "3": "regression", "4": "inconclusive", "5": "the"}


def test_python_m_scoring_help_is_docbench_lens_score_help():
    alias, score = run(["-m", "scoring", "--help"]), run(lens("score", "--help"))
    assert alias.returncode == score.returncode == 0, alias.stderr + score.stderr
    assert alias.stdout.startswith("usage: python -m scoring ") and score.stdout.startswith("usage: docbench-lens score ")
    # the same text but for the program's name (and where the usage lines wrap, which its length moves)
    assert " ".join(alias.stdout.replace("python -m scoring", "PROG").split()) == \
        " ".join(score.stdout.replace("docbench-lens score", "PROG").split())


@pytest.mark.parametrize("name", ["report", "evidence", "notes"])
def test_the_python_m_forms_are_aliases(name, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    alias = run([*SCRIPTS[name], "--help"])
    assert alias.returncode == 0, alias.stderr
    command = next(c for c in launch.subcommands() if c.name == name)
    mine = command.parser(f"python {' '.join(SCRIPTS[name])}").format_help()
    assert " ".join(alias.stdout.split()) == " ".join(mine.split())


def test_the_installed_script_is_the_one_command():
    script = Path(sys.executable).parent / "docbench-lens"
    assert script.is_file(), "pip install -e . installs docbench-lens beside the interpreter"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0 and all(f"    {n} " in done.stdout for n in NAMES), done.stdout + done.stderr


# ----------------------------------------------------------------------------- serve is the default


def test_no_subcommand_and_serve_start_the_app(monkeypatch):
    calls = []
    monkeypatch.setattr(launch, "serve", lambda argv, prog="docbench-lens": calls.append((list(argv), prog)) or 0)
    assert launch.main([]) == 0  # the README's first command
    assert launch.main(["--benchmark", "x", "--port", "8600"]) == 0
    assert launch.subcommands()[0].name == "serve"
    assert calls == [([], "docbench-lens"), (["--benchmark", "x", "--port", "8600"], "docbench-lens")]


def test_serve_refuses_bad_arguments_under_its_name(capsys):
    with pytest.raises(SystemExit) as exit_:
        launch.main(["serve", "--benchmark", "/no/such/folder"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "docbench-lens serve: error: --benchmark /no/such/folder: no such folder" in err


def test_an_unknown_subcommand_is_a_usage_error_listing_them(capsys):
    with pytest.raises(SystemExit) as exit_:
        launch.main(["scroe", "--predictions", "x"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'scroe'" in err and all(repr(n) in err for n in NAMES)


def test_notes_runs_the_annotations_program(tmp_path, capsys):
    out = tmp_path / "notes.jsonl"
    code = launch.main(["notes", "export", "--benchmark", str(SAMPLE), "--output", str(out),
                        "--annotations", str(tmp_path / "a.sqlite3")])
    assert code == 0 and out.is_file()
    assert "wrote 0 annotations" in capsys.readouterr().out


def test_report_says_an_unknown_run_under_its_name(tmp_path, capsys):
    code = launch.main(["report", "--benchmark", str(SAMPLE), "--runs", "no-such-run", "--output", str(tmp_path / "r.html")])
    assert code == 2
    assert "unknown run: no-such-run" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the same program, the same bytes


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _same(args_alias: list[str], args_lens: list[str], a: Path, b: Path) -> subprocess.CompletedProcess:
    """Both command lines run, each writing into its own folder (`{out}` in the arguments): the same exit
    code, printing and files, byte for byte."""
    first = run([x.replace("{out}", str(a)) for x in args_alias])
    second = run([x.replace("{out}", str(b)) for x in args_lens])
    assert first.returncode == second.returncode, first.stderr + second.stderr
    assert first.stdout.replace(str(a), "{out}") == second.stdout.replace(str(b), "{out}")
    assert first.stderr.replace(str(a), "{out}") == second.stderr.replace(str(b), "{out}")
    assert _outputs(a) and _outputs(a) == _outputs(b)
    return first


def test_score_writes_what_python_m_scoring_writes(tmp_path):
    runs = [str(p) for p in sorted((SAMPLE / "runs").iterdir())]
    common = ["--gold-files", str(SAMPLE / "qa_single_doc.jsonl"), str(SAMPLE / "qa_cross_doc.jsonl"),
              "--predictions", *runs, "--output", "{out}/reports", "--per-question-csv", "{out}/csv",
              "--categories-csv", "{out}/categories"]
    done = _same(["-m", "scoring", *common], ["-m", "dashboard.launch", "score", *common], tmp_path / "a", tmp_path / "b")
    assert done.returncode == 0 and "Signature: profile:xldocbench" in done.stdout


def test_score_on_mmlongbench_and_harness_files_writes_what_python_m_scoring_writes(tmp_path):
    mm = SAMPLE / "mmlongbench"
    common = ["--gold-files", str(mm / "data" / "samples.json"), "--predictions", *map(str, sorted((mm / "results").iterdir())),
              "--output-txt", "{out}/txt", "--per-question-csv", "{out}/csv", "--output", "{out}/json",
              "--no-per-question-json"]
    done = _same(["-m", "scoring", *common], lens("score", *common), tmp_path / "a", tmp_path / "b")
    assert done.returncode == 0 and "Acc (MMLongBench-Doc)" in done.stdout
    harness = ["--predictions", str(SAMPLE / "harness" / "lmms-eval"), str(SAMPLE / "harness" / "vlmevalkit"),
               "--gold-files", str(mm / "data" / "samples.json"), "--output", "{out}/h.json", "--per-question-csv",
               "{out}/h.csv", "--data-dir", "ignored"]
    done = _same(["-m", "scoring", *harness], lens("score", *harness), tmp_path / "c", tmp_path / "d")
    assert done.returncode == 0 and "note: ignored for harness files: --data-dir ignored" in done.stderr


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory):
    """In each kind's real format: 30 documents of 4 questions, the new run wrong on every question of the
    first 24 documents' questions 0 and 1 (a planted regression), the baseline right everywhere."""
    tmp = tmp_path_factory.mktemp("kinds")
    lost = lambda d, k: not (d < 24 and k < 2)  # noqa: E731
    xl = xl_gold(tmp / "xl", 30, 4)
    old, new = xl_run(tmp / "xl", "old", 30, 4), xl_run(tmp / "xl", "new", 30, 4, right=lost)
    samples_path, samples = mm_samples(tmp / "mm", 30, 4)
    mm_old, mm_new = mm_results(tmp / "mm", "old", samples, 4), mm_results(tmp / "mm", "new", samples, 4, right=lost)
    h_old = lmms_run(tmp / "lmms", "org/old", samples, 4)
    h_new = lmms_run(tmp / "lmms", "org/new", samples, 4, right=lost)
    return {"benchmark": (["--gold-files", str(xl)], old, new), "mmlongbench-doc": (["--gold-files", str(samples_path)], mm_old, mm_new),
            "harness": (["--gold-files", str(samples_path)], h_old, h_new)}


@pytest.mark.parametrize("kind", ["benchmark", "mmlongbench-doc", "harness"])
def test_gate_is_score_with_baseline_and_fail_on_regression(benchmarks, kind, tmp_path):
    gold, old, new = benchmarks[kind]
    inputs = [*gold, "--predictions", str(new), "--baseline", str(old), "--compare-json", "{out}/c.json",
              "--min-documents", "5"]
    done = _same(["-m", "scoring", *inputs, "--fail-on-regression"], lens("gate", *inputs), tmp_path / "a", tmp_path / "b")
    assert done.returncode == 3 and "REGRESSION: overall accuracy" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["benchmark", "mmlongbench-doc", "harness"])
def test_slices_is_score_with_weak_slices(benchmarks, kind, tmp_path):
    gold, _, new = benchmarks[kind]
    inputs = [*gold, "--predictions", str(new), "--weak-slices", "{out}/weak.csv", "--min-documents", "5",
              "--min-questions", "10"]
    done = _same(["-m", "scoring", *inputs], lens("slices", *inputs), tmp_path / "a", tmp_path / "b")
    assert done.returncode == 0 and "weak slices (accuracy)" in done.stdout, done.stdout + done.stderr


def test_gate_on_checkpoints_is_score_with_trend_and_fail_on_regression(tmp_path):
    campaign = SAMPLE / "campaign"  # ten checkpoints, one lasting drop planted from step 740 on
    inputs = ["--gold-files", str(campaign / "qa_single_doc.jsonl"), "--predictions",
              *map(str, sorted((campaign / "runs").glob("ckpt-*.jsonl"))), "--trend", "{out}/trend.csv"]
    done = _same(["-m", "scoring", *inputs, "--fail-on-regression"], lens("gate", *inputs), tmp_path / "a", tmp_path / "b")
    assert done.returncode == 3 and "ALARM: reasoning_type=aggregation" in done.stdout, done.stdout + done.stderr


def test_gate_and_slices_take_only_their_options(benchmarks, tmp_path):
    gold, old, new = benchmarks["benchmark"]
    no_baseline = run(lens("gate", *gold, "--predictions", str(new)))
    assert no_baseline.returncode == 2 and "the gate compares the run with --baseline OLD" in no_baseline.stderr
    no_csv = run(lens("slices", *gold, "--predictions", str(new)))
    assert no_csv.returncode == 2 and "--weak-slices" in no_csv.stderr
    outputs = run(lens("slices", *gold, "--predictions", str(new), "--weak-slices", str(tmp_path / "w.csv"),
                       "--output", str(tmp_path / "r.json")))
    assert outputs.returncode == 2 and "unrecognized arguments: --output" in outputs.stderr


@pytest.mark.parametrize("flag,value,kind", [("--output-txt", "x.txt", "MMLongBench-Doc's files"),
                                             ("--all-evals", None, "harness outputs")])
def test_an_option_of_another_kind_of_input_is_a_usage_error_naming_its_kind(benchmarks, flag, value, kind):
    gold, _, new = benchmarks["benchmark"]
    done = run(["-m", "scoring", *gold, "--predictions", str(new), flag, *([value] if value else [])])
    assert done.returncode == 2
    assert f"{flag} is for {kind}" in done.stderr and "these are a benchmark's gold and prediction files" in done.stderr


@pytest.mark.parametrize("kind", ["mmlongbench-doc", "harness"])
def test_every_kind_refuses_the_same_options_the_same_way(benchmarks, kind, tmp_path):
    """One refusal (scoring/options.py `refused`) for the kinds of input that can be re-judged: the gate's
    options given wrongly and the judge's, each exit 2 with one sentence, before any file is scored."""
    gold, _, new = benchmarks[kind]
    no_baseline = run(["-m", "scoring", *gold, "--predictions", str(new), "--compare-json", str(tmp_path / "c.json")])
    assert no_baseline.returncode == 2, no_baseline.stderr
    assert no_baseline.stderr.strip() == "ERROR: --compare-json and --fail-on-regression need --baseline"
    no_url = run(["-m", "scoring", *gold, "--predictions", str(new), "--judge-model", "m"])
    assert no_url.returncode == 2 and no_url.stderr.strip() == "ERROR: --judge-model needs --judge-url", no_url.stderr
    assert not (tmp_path / "c.json").exists()

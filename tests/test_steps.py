"""Which checkpoint a run is (scoring/steps.py): steps and series from run names, checkpoint paths,
lmms-eval's model arguments and VLMEvalKit's model folders; a steps.csv mapping read with every bad row
said (file, line, field) and the rest kept; the order of the sources."""

from __future__ import annotations

import time

import pytest

from scoring import steps as S


@pytest.mark.parametrize("text, expected", [
    ("checkpoint-1200", (1200, S.DEFAULT_SERIES)),
    ("ckpt-0520", (520, S.DEFAULT_SERIES)),
    ("step_3000", (3000, S.DEFAULT_SERIES)),
    ("global_step3000", (3000, S.DEFAULT_SERIES)),
    ("GLOBAL-STEP-3000", (3000, S.DEFAULT_SERIES)),
    ("iter_0001000", (1000, S.DEFAULT_SERIES)),
    ("run7-checkpoint-1200", (1200, "run7")),
    ("qwen-ckpt-0520-cot", (520, "qwen-cot")),
    ("/ckpt/run7/checkpoint-1200", (1200, "run7")),
    ("C:\\runs\\run8\\global_step40", (40, "run8")),
    ("Qwen2-VL-7B-ckpt1200", (1200, "Qwen2-VL-7B")),
    ("checkpoint-100/checkpoint-200", (200, "checkpoint-100")),  # the last component that states one
])
def test_a_step_and_series_from_a_name(text, expected):
    assert S.step_in(text) == expected


@pytest.mark.parametrize("text", ["vision-13b", "laststep100", "ckpt", "step-", "rag-baseline", "", "checkpoint-99999999999999"])
def test_no_step_where_none_is_stated(text):
    assert S.step_in(text) is None


def test_a_long_hostile_name_is_read_in_linear_time():
    text = "step_" * 20_000 + "x" + "9" * 50_000
    t = time.process_time()
    S.step_in(text)
    S.from_model_args("pretrained=" + "ckpt-" * 50_000)
    assert time.process_time() - t < 2.0  # hang guard (a few milliseconds expected)


def test_lmms_eval_model_arguments_name_the_checkpoint_as_lmms_eval_does():
    assert S.from_model_args("pretrained=/ckpt/run7/checkpoint-1200,dtype=bfloat16") == (1200, "run7")
    # the first of lmms-eval's keys in its own order: an adapter before its base model
    assert S.from_model_args("pretrained=/base/model,peft=/lora/run2/checkpoint-30") == (30, "run2")
    assert S.model_name("model=foo,pretrained=/x/global_step3000") == "/x/global_step3000"
    assert S.from_model_args("device=cuda,dtype=bf16") is None
    assert S.model_name("") == ""


def write(tmp_path, text: str):
    path = tmp_path / "steps.csv"
    path.write_bytes(text.encode("utf-8"))
    return path


def test_a_steps_csv_with_bad_rows_keeps_the_good_ones_and_names_each_problem(tmp_path):
    path = write(tmp_path, "\ufeffRun,Step,Series\nckpt-a,100,run7\nckpt-b,1_200,\nbaseline,,\n,300,x\nckpt-c,ten,run7\n"
                           "ckpt-d,-5,run7\nckpt-a,150,run7\n\nckpt-e,=1+1,run7\n")
    got = S.read_steps_csv(path)
    assert got.rows == {"ckpt-a": (150, "run7"), "ckpt-b": (1200, ""), "baseline": (None, "")}
    where = [(p.line, p.field, p.severity) for p in got.problems]
    assert where == [(5, "run", "error"), (6, "step", "error"), (7, "step", "error"), (8, "run", "warning"),
                     (10, "step", "error")]
    assert all(p.file == str(path) for p in got.problems)
    assert "'ten'" in str(got.problems[1])


@pytest.mark.parametrize("text, expected", [
    ("", "a header row"), ("name,value\nx,1\n", "columns run and step"), ("run\nx\n", "columns run and step"),
])
def test_a_steps_csv_without_the_columns_is_one_clear_problem(tmp_path, text, expected):
    got = S.read_steps_csv(write(tmp_path, text))
    assert got.rows == {} and len(got.problems) == 1 and expected in str(got.problems[0])


def test_a_steps_csv_is_read_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "MAX_ROWS", 5)
    got = S.read_steps_csv(write(tmp_path, "run,step\n" + "".join(f"r{i},{i}\n" for i in range(20))))
    assert len(got.rows) == 5 and "at most 5 rows" in str(got.problems[-1])
    monkeypatch.setattr(S, "MAX_BYTES", 30)
    got = S.read_steps_csv(write(tmp_path, "run,step\n" + "".join(f"r{i},{i}\n" for i in range(20))))
    assert "bytes" in str(got.problems[0]) and len(got.rows) < 5
    missing = S.read_steps_csv(tmp_path / "absent.csv")
    assert missing.rows == {} and missing.problems[0].severity == "error"


def test_sources_in_order_set_by_hand_then_the_file_then_the_harness_then_the_name():
    names = ["ckpt-0100", "ckpt-0200", "vision-13b", "lmms-run", "odd"]
    mapping = {"ckpt-0200": (250, ""), "odd": (None, ""), "vision-13b": (5, "side")}
    hints = {"lmms-run": ["pretrained=/ckpt/run9/checkpoint-40"]}
    by = {c.run: c for c in S.checkpoints(names, mapping, hints, {"ckpt-0100": (90, "mine")})}
    assert (by["ckpt-0100"].step, by["ckpt-0100"].series, by["ckpt-0100"].source) == (90, "mine", S.FROM_VIEW)
    assert (by["ckpt-0200"].step, by["ckpt-0200"].series, by["ckpt-0200"].source) == (250, S.DEFAULT_SERIES, S.FROM_FILE)
    assert (by["vision-13b"].step, by["vision-13b"].series) == (5, "side")
    assert (by["lmms-run"].step, by["lmms-run"].series, by["lmms-run"].source) == (40, "run9", S.FROM_HINT)
    assert by["odd"].step is None and by["odd"].source == ""
    series = S.series_of(by.values())
    assert [c.run for c in series[S.DEFAULT_SERIES]] == ["ckpt-0200"] and set(series) == {S.DEFAULT_SERIES, "mine",
                                                                                          "side", "run9"}


def test_repeated_steps_are_listed():
    points = S.checkpoints(["a-step_1", "b-step_1", "a-step_2"], {"b-step_1": (1, "a")})
    series = S.series_of(points)
    assert [c.run for c in series["a"]] == ["a-step_1", "b-step_1", "a-step_2"]
    assert S.repeated_steps(series["a"]) == [(1, ["a-step_1", "b-step_1"])]

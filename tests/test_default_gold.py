"""The gold files read when none is named: a benchmark of single-document questions (the campaign sample) has
no qa_cross_doc.jsonl, and the command line said "error: ... no such file" for it on every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGN = ROOT / "sample_runs" / "campaign"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_a_default_gold_file_the_benchmark_does_not_have_is_no_error():
    assert not (CAMPAIGN / "qa_cross_doc.jsonl").exists()  # the case this test is about
    done = run("--data-dir", str(CAMPAIGN), "--predictions", str(CAMPAIGN / "runs" / "small-3b.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "qa_cross_doc" not in done.stderr and "error" not in done.stderr.lower(), done.stderr
    assert "Gold questions: 408" in done.stdout and "Evaluated: 408" in done.stdout


def test_with_no_default_gold_file_both_are_named(tmp_path):
    done = run("--data-dir", str(tmp_path), "--predictions", str(CAMPAIGN / "runs" / "small-3b.jsonl"))
    assert done.returncode == 1
    for name in ("qa_single_doc.jsonl", "qa_cross_doc.jsonl"):
        assert f"{name}: error: expected a readable file, got no such file" in done.stderr
    assert "ERROR: no gold question could be loaded" in done.stderr

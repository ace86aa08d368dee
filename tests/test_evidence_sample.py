"""sample_runs/docvqa/ (the DocVQA-style set of page images) is what its generator writes, loads as a
DocVQA benchmark and scores under the docvqa profile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from scoring.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
DOCVQA = ROOT / "sample_runs" / "docvqa"


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_docvqa_set_regenerates_byte_identically(tmp_path):
    res = subprocess.run([sys.executable, str(ROOT / "sample_runs" / "make_sample.py"), "--out", str(tmp_path),
                          "--only", "docvqa"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    committed, fresh = files(DOCVQA), files(tmp_path / "docvqa")
    assert sorted(committed) == sorted(fresh)
    assert [k for k in committed if committed[k] != fresh[k]] == []


def test_docvqa_set_loads_and_scores_with_the_docvqa_profile():
    ws = load_workspace(Sources(benchmark=DOCVQA))
    assert not [p for p in ws.gold.problems if p.severity == "error"]
    gold = ws.gold.items
    assert 10 <= len(gold) <= 20 and all(len(q.answers) >= 1 for q in gold)
    assert sum(len(q.answers) > 1 for q in gold) >= 12  # several acceptable answers
    assert all(q.image.endswith(".png") for q in gold)
    assert all(loc.path is not None and loc.path.suffix == ".png" for loc in ws.locations.values())
    (pf,) = ws.predictions
    result = evaluate(gold, pf.loaded.items, profile="docvqa", name=pf.run)
    assert 0.3 < result.overall["accuracy"] < 0.9 and result.overall["anls"] > result.overall["accuracy"]

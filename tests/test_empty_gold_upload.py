"""An empty gold upload never replaces the benchmark's gold with nothing (issue 29.4): the upload is
named as empty and the benchmark's questions stay; a non-empty upload still replaces them."""

from __future__ import annotations

from pathlib import Path

from dashboard.core.paths import Sources
from dashboard.data.workspace import discover, load_workspace

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini_bench"


def test_an_empty_gold_upload_keeps_the_benchmarks_gold(tmp_path):
    empty = tmp_path / "upload.jsonl"
    empty.write_text("\n  \n")
    own = load_workspace(Sources(MINI))
    ws = load_workspace(Sources(MINI, gold=(empty,)))
    assert [q.qid for q in ws.gold.items] == [q.qid for q in own.gold.items] and ws.gold.items
    said = [p for p in discover(Sources(MINI, gold=(empty,))).problems if p.file == str(empty)]
    assert len(said) == 1 and "the file is empty: the benchmark's gold is kept" in said[0].got


def test_a_real_gold_upload_replaces_the_benchmarks_gold(tmp_path):
    gold = tmp_path / "mine.jsonl"
    gold.write_text((MINI / "qa_single_doc.jsonl").read_text().splitlines()[0] + "\n")
    ws = load_workspace(Sources(MINI, gold=(gold,)))
    assert len(ws.gold.items) == 1


def test_an_empty_upload_beside_a_real_one_is_named_and_left_out(tmp_path):
    gold, empty = tmp_path / "mine.jsonl", tmp_path / "empty.jsonl"
    gold.write_text((MINI / "qa_single_doc.jsonl").read_text().splitlines()[0] + "\n")
    empty.write_text("")
    disc = discover(Sources(MINI, gold=(gold, empty)))
    assert disc.gold == [gold]
    assert any(p.file == str(empty) and p.got == "the file is empty: not read" for p in disc.problems)

"""The source formats' one interface (scoring/formats): every harness format answers recognise/load,
every benchmark format recognise/layout/read_gold; the benchmarks' own folders are told apart by the
formats (the workspace asks them), with the files each layout names."""

from __future__ import annotations

from pathlib import Path

from dashboard.core.paths import Sources
from dashboard.data.workspace import discover
from scoring import formats
from scoring.formats import docvqa, mmlongbench_doc, xldocbench

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


def test_every_format_module_answers_the_same_questions():
    for fmt in formats.FORMATS:
        assert callable(fmt.recognise) and callable(fmt.load) and isinstance(fmt.NAME, str)
    for fmt in formats.BENCHMARK_FORMATS:
        assert callable(fmt.recognise) and callable(fmt.layout) and callable(fmt.read_gold) and isinstance(fmt.NAME, str)


def test_benchmark_folders_are_told_apart_by_the_formats():
    assert formats.benchmark_format(SAMPLE) is xldocbench
    assert formats.benchmark_format(SAMPLE / "docvqa") is docvqa
    assert formats.benchmark_format(SAMPLE / "mmlongbench") is mmlongbench_doc
    samples = SAMPLE / "mmlongbench" / "data" / "samples.json"
    assert formats.benchmark_format(SAMPLE, [samples]) is mmlongbench_doc  # an uploaded samples.json decides
    assert mmlongbench_doc.is_samples(samples) and not mmlongbench_doc.is_samples(SAMPLE / "qa_single_doc.jsonl")
    assert [d.format for d in (discover(Sources(SAMPLE)), discover(Sources(SAMPLE / "docvqa")),
                               discover(Sources(SAMPLE / "mmlongbench")), discover(Sources(SAMPLE / "harness")))] == [
        "xldocbench", "docvqa", "mmlongbench-doc", ""]


def test_layouts_name_the_files_as_the_workspace_reads_them():
    lens = xldocbench.layout(SAMPLE)
    assert [p.name for p in lens.gold] == ["qa_single_doc.jsonl", "qa_cross_doc.jsonl"]
    assert lens.documents == SAMPLE / "documents.jsonl" and lens.docs_dir == SAMPLE / "docs"
    assert {p.name for p in lens.predictions} == {p.name for p in (SAMPLE / "runs").iterdir() if p.suffix in (".json", ".jsonl")}
    assert any(p.name == "summary.json" for p in lens.summaries)
    mm = mmlongbench_doc.layout(SAMPLE / "mmlongbench")
    assert mm.gold == [SAMPLE / "mmlongbench" / "data" / "samples.json"]
    assert [p.name for p in mm.predictions] == ["res_docowl-8b.json", "res_gpt-4o.json"]
    disc = discover(Sources(SAMPLE / "mmlongbench"))
    assert disc.gold == mm.gold and disc.predictions == mm.predictions and disc.docs_dir == mm.docs_dir


def test_a_top_level_file_without_gold_is_named_not_read(tmp_path):
    (tmp_path / "qa.jsonl").write_text('{"question": "q", "answer": {"value": "a"}}\n', encoding="utf-8")
    (tmp_path / "notes.jsonl").write_text('{"text": "not gold"}\n', encoding="utf-8")
    found = xldocbench.layout(tmp_path)
    assert [p.name for p in found.gold] == ["qa.jsonl"]
    assert [(Path(p.file).name, p.kind) for p in found.problems] == [("notes.jsonl", "files that are not gold")]

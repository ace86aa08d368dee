"""The cache of parsed gold files (dashboard/core/store.py GoldStore, `read_gold_cached`): what a restart reads
instead of parsing the gold again. A hit is the reader's own result, record for record -- on the sample's gold
(with evidence boxes), DocVQA's, and every bad gold file of the fixtures (their problems and counts kept); what
JSON cannot hold exactly is not kept; a changed file, a damaged or altered entry, and another reader's code are
misses, read again; the workspace reads its gold through it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboard.core import store as S
from scoring.formats import docvqa, xldocbench
from scoring.model import GoldQuestion

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
BAD = ROOT / "tests" / "fixtures" / "bad"
GOLDS = [(xldocbench, [SAMPLE / "qa_single_doc.jsonl", SAMPLE / "qa_cross_doc.jsonl"]),
         (docvqa, [SAMPLE / "docvqa" / "qa_docvqa.jsonl"]),
         *((xldocbench, [p]) for p in sorted(BAD.glob("gold_*.jsonl")))]


def _same(a, b) -> None:
    assert a.items == b.items
    assert [tuple(type(getattr(q, f)) for f in S._GOLD_FIELDS) for q in a.items] == \
        [tuple(type(getattr(q, f)) for f in S._GOLD_FIELDS) for q in b.items]  # tuples stay tuples, None stays None
    assert (a.problems, a.counts(), a.files, a.unreadable) == (b.problems, b.counts(), b.files, b.unreadable)


def _entries(root: Path) -> list[Path]:
    return sorted((root / "gold").glob("*.parquet"))


@pytest.mark.parametrize("fmt,paths", GOLDS, ids=lambda v: v[-1].name if isinstance(v, list) else v.__name__.rsplit(".", 1)[-1])
def test_a_cached_gold_is_the_readers_own(tmp_path, fmt, paths):
    want = fmt.read_gold(paths)
    first = S.GoldStore(tmp_path)
    _same(S.read_gold_cached(fmt, paths, first), want)
    assert (first.hits, first.misses) == (0, 1)
    assert len(_entries(tmp_path)) == 1  # every one kept (the reader skips the lines JSON could not hold)
    again = S.GoldStore(tmp_path)
    _same(S.read_gold_cached(fmt, paths, again), want)
    assert (again.hits, again.misses, again.rejected) == (1, 0, 0)


def test_the_sample_has_what_the_entry_must_carry():
    """Evidence boxes, pages, several documents, metadata: the sample's gold exercises every nested field."""
    want = xldocbench.read_gold(GOLDS[0][1]).items
    assert any(e.bbox for q in want for d in q.documents for e in d.evidence_items)
    assert any(len(q.documents) > 1 for q in want) and any(q.metadata for q in want)
    assert any(d.evidence_pages for q in want for d in q.documents)


def test_what_json_cannot_hold_exactly_is_not_kept(tmp_path):
    from scoring.problems import LoadResult

    nan = GoldQuestion("q1", "?", ("1",), "Int", "", "single_doc", {"weight": float("nan")})
    assert S.GoldStore(tmp_path).put("a" * 64, LoadResult(items=[nan])) is None
    big = GoldQuestion("q1", "?", ("1",), "Int", "", "single_doc", {"id": 2 ** 70})
    assert S.GoldStore(tmp_path).put("b" * 64, LoadResult(items=[big])) is None
    assert _entries(tmp_path) == []


def test_a_changed_gold_file_is_read_again(tmp_path):
    path = tmp_path / "qa_single_doc.jsonl"
    shutil.copy(SAMPLE / "qa_single_doc.jsonl", path)
    store = S.GoldStore(tmp_path / "cache")
    first = S.read_gold_cached(xldocbench, [path], store)
    path.write_bytes(path.read_bytes().replace(b'"question": "', b'"question": "Changed: ', 1))
    second = S.read_gold_cached(xldocbench, [path], store)
    _same(second, xldocbench.read_gold([path]))
    assert second.items != first.items and (store.hits, store.misses) == (0, 2)


def test_another_reader_code_is_another_entry(tmp_path, monkeypatch):
    paths = GOLDS[0][1]
    S.read_gold_cached(xldocbench, paths, S.GoldStore(tmp_path))
    monkeypatch.setattr(S, "_GOLD_CODE", "0" * 64)  # as if a file of scoring had changed
    store = S.GoldStore(tmp_path)
    _same(S.read_gold_cached(xldocbench, paths, store), xldocbench.read_gold(paths))
    assert (store.hits, store.misses) == (0, 1) and len(_entries(tmp_path)) == 2


def _rewrite(target: Path, change) -> None:
    table = pq.read_table(target)
    pq.write_table(change(table), target)


def _record(change):
    """A table whose first record's JSON is changed by `change(list) -> list`."""
    import orjson

    def apply(tb: pa.Table) -> pa.Table:
        rows = tb.column("record").to_pylist()
        rows[0] = orjson.dumps(change(orjson.loads(rows[0])))
        return pa.table({"record": pa.array(rows, pa.binary())}).replace_schema_metadata(tb.schema.metadata)

    return apply


def _set(i: int, value):
    def change(state: list) -> list:
        state[i] = value
        return state

    return change


ALTERATIONS = {
    "garbage bytes": lambda t: t.write_bytes(b"not a parquet file"),
    "truncated": lambda t: t.write_bytes(t.read_bytes()[: t.stat().st_size // 2]),
    "rows dropped": lambda t: _rewrite(t, lambda tb: tb.slice(0, tb.num_rows - 1)),
    "another key": lambda t: _rewrite(t, lambda tb: tb.replace_schema_metadata({**tb.schema.metadata, b"lens.key": b"0" * 64})),
    "a record that is not JSON": lambda t: _rewrite(t, lambda tb: pa.table(
        {"record": pa.array([b"{"] + tb.column("record").to_pylist()[1:], pa.binary())}).replace_schema_metadata(tb.schema.metadata)),
    "a field of another type": lambda t: _rewrite(t, _record(_set(0, 17))),
    "answers that are not texts": lambda t: _rewrite(t, _record(_set(2, [1, 2]))),
    "a record too short": lambda t: _rewrite(t, _record(lambda s: s[:-1])),
    "a document of another shape": lambda t: _rewrite(t, _record(_set(S._DOCS, [["d", "u"]]))),
    "a box of three numbers": lambda t: _rewrite(t, _record(_set(S._DOCS, [["d", "", [1], [["l", [1], "q", "text", [0, 0, 1]]]]]))),
    "counts that are not numbers": lambda t: _rewrite(t, lambda tb: tb.replace_schema_metadata(
        {**tb.schema.metadata, b"lens.load": b'{"problems": [], "files": [], "rows_read": "x", "skipped": 0, "blank_lines": 0, "unreadable": []}'})),
}


@pytest.mark.parametrize("alter", ALTERATIONS.values(), ids=list(ALTERATIONS))
def test_a_damaged_or_altered_entry_is_a_miss_removed_and_read_again(tmp_path, alter):
    paths = GOLDS[0][1]
    S.read_gold_cached(xldocbench, paths, S.GoldStore(tmp_path))
    (entry,) = _entries(tmp_path)
    alter(entry)
    store = S.GoldStore(tmp_path)
    _same(S.read_gold_cached(xldocbench, paths, store), xldocbench.read_gold(paths))
    assert (store.hits, store.misses, store.rejected) == (0, 1, 1)
    again = S.GoldStore(tmp_path)  # written again, whole
    S.read_gold_cached(xldocbench, paths, again)
    assert (again.hits, again.rejected) == (1, 0)


def test_the_workspace_reads_its_gold_through_the_cache(tmp_path, monkeypatch):
    from dashboard.core.paths import Sources
    from dashboard.data.workspace import load_workspace

    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    first = load_workspace(Sources(benchmark=SAMPLE))
    calls: list[int] = []
    real = xldocbench.read_gold
    monkeypatch.setattr(xldocbench, "read_gold", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    second = load_workspace(Sources(benchmark=SAMPLE))
    assert calls == [] and second.gold.items == first.gold.items and second.gold.problems == first.gold.problems

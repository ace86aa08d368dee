"""Issue 27, item 2: the overview sends its leaderboard before any chart, shows the signature as text
(st.code would make the browser fetch a 1.56 MB highlighting chunk), the PDFs' page counts are kept
on disk with the document texts (a restart opens no PDF it checked before), and the app and the
overview import no other page's modules until that page is opened."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from app_kit import app_on
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from dashboard.documents import ocr, pdf

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini_bench"
MINI_COUNTS = {"doc_000001": 12, "doc_000002": 3, "doc_000003": 6, "doc_000004": 300}  # test_dashboard_helpers


def walk(node):
    """The page's elements in the order they are drawn (blocks descended into)."""
    kind = getattr(node, "type", None)
    if kind not in (None, "block", "main", "sidebar", "root", "flex_container", "expandable", "tab_container",
                    "tab", "column", "vertical", "horizontal"):
        yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def test_the_leaderboard_comes_before_every_chart_and_the_signature_is_text(monkeypatch):
    at = app_on(monkeypatch, MINI, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    kinds = [el.type for el in walk(at.main)]
    assert "plotly_chart" in kinds and "dataframe" in kinds
    board = kinds.index("dataframe")
    assert board < kinds.index("plotly_chart"), kinds
    assert list(at.dataframe[0].value.columns)[:1] == ["Run"] and sorted(at.dataframe[0].value["Run"]) == [
        "alpha", "beta", "gamma"]
    # the sentences about the leaderboard are above the first chart too
    before = [el for el in list(walk(at.main))[:kinds.index("plotly_chart")] if el.type == "caption"]
    assert any(str(el.value).startswith("Scored on") for el in before)
    # the signatures: built only once their expander is opened, as plain text, no code block anywhere
    assert "code" not in kinds and "text" not in kinds
    at.session_state["ov_signatures"] = True  # the expander opened
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kinds = [el.type for el in walk(at.main)]
    assert "code" not in kinds
    signatures = [el.value for el in walk(at.main) if el.type == "text"]
    board_signatures = set(at.dataframe[0].value["Signature"].fillna("").replace("", "(none)"))
    assert board_signatures and board_signatures <= set(signatures)
    # the prefetch slot (dashboard/app.py) is empty once the page is drawn: no chart or table of its own
    assert len(at.get("plotly_chart")) == sum(1 for k in kinds if k == "plotly_chart")
    assert not any("lens_prefetch" in str(getattr(c, "key", "")) for c in at.get("plotly_chart"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("LENS_CACHE_DIR", str(folder))
    pdf.clear_caches()
    ocr.clear()
    yield folder
    pdf.clear_caches()
    ocr.clear()


def _kept(cache: Path) -> dict[str, int]:
    """The page counts on disk: content sha256 -> pages (each entry named by the sha256 or by a digest of the stat)."""
    entries = [json.loads(f.read_text()) for f in (cache / "doctext" / "pages").glob("*.json")]
    return {e["sha256"]: e["pages"] for e in entries}


def _restart() -> None:
    """What a new server process starts with: nothing in memory, the cache folder kept."""
    pdf.clear_caches()
    ocr.clear()


def _no_pdf_work(monkeypatch) -> list[str]:
    """Every PDF open (and content hash) from now on is recorded and fails."""
    done: list[str] = []

    def refuse_open(*args, **kwargs):
        done.append(f"open {args[0] if args else ''}")
        raise RuntimeError("a PDF was opened")

    def refuse_hash(path):
        done.append(f"hash {path}")
        raise OSError("a document was hashed")

    monkeypatch.setattr(pymupdf, "open", refuse_open)
    monkeypatch.setattr(pdf.ocr, "file_sha256", refuse_hash)
    return done


def test_page_counts_come_from_the_cache_after_a_restart(cache, tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    shutil.copytree(MINI, bench)
    first = load_workspace(Sources(bench))
    assert first.page_counts == MINI_COUNTS
    # the PDFs found (doc_000004 has none: its count is documents.jsonl's, as doc_000001's), each by its
    # content and by its path and stat
    assert sorted(_kept(cache).values()) == [3, 6, 12]
    assert len(list((cache / "doctext" / "pages").glob("*.json"))) == 6

    _restart()
    with monkeypatch.context() as m:
        done = _no_pdf_work(m)
        again = load_workspace(Sources(bench))
        assert done == []  # neither opened nor hashed: known by path, size and mtime
        assert again.page_counts == MINI_COUNTS
        assert not [p for p in again.problems if p.kind == "documents that cannot be shown"]
        assert pdf.page_count(bench / "docs" / "doc_000001.pdf") == 12 and done == []  # the evidence pages' count too

    # a copy elsewhere (a new path): hashed, not opened
    _restart()
    moved = tmp_path / "moved"
    shutil.copytree(bench, moved)
    opened: list[str] = []
    real_open = pymupdf.open
    monkeypatch.setattr(pymupdf, "open", lambda *a, **k: opened.append(str(a[0])) or real_open(*a, **k))
    assert load_workspace(Sources(moved)).page_counts == MINI_COUNTS
    assert opened == []

    # a changed document (doc_000002's count is its PDF's: documents.jsonl gives none) is opened again
    doc = pymupdf.Document()
    for _ in range(4):
        doc.new_page()
    doc.save(moved / "docs" / "reports" / "annual.pdf")
    doc.close()
    assert load_workspace(Sources(moved)).page_counts == MINI_COUNTS | {"doc_000002": 4}
    assert [Path(p).name for p in opened] == ["annual.pdf"]
    _restart()
    opened.clear()
    assert load_workspace(Sources(moved)).page_counts["doc_000002"] == 4 and opened == []  # and its new count kept


def test_a_tampered_page_count_index_is_not_trusted(cache, tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    shutil.copytree(MINI, bench)
    load_workspace(Sources(bench))
    bad = {3: -1, 6: "six", 12: True}  # doc_000002's count (3) is its PDF's alone
    files = list((cache / "doctext" / "pages").glob("*.json"))
    for f in files:
        entry = json.loads(f.read_text())
        f.write_text(json.dumps(entry | {"pages": bad[entry["pages"]]}))
    _restart()
    opened: list[str] = []
    real_open = pymupdf.open
    monkeypatch.setattr(pymupdf, "open", lambda *a, **k: opened.append(Path(a[0]).name) or real_open(*a, **k))
    assert load_workspace(Sources(bench)).page_counts == MINI_COUNTS  # the bad entries dropped, those PDFs opened
    assert sorted(opened) == ["annual.pdf", "doc_000001.pdf", "third.pdf"]
    assert sorted(_kept(cache).values()) == [3, 6, 12]  # rewritten
    for f in files:
        f.write_text("not json")
    _restart()
    opened.clear()
    assert load_workspace(Sources(bench)).page_counts == MINI_COUNTS
    assert sorted(opened) == ["annual.pdf", "doc_000001.pdf", "third.pdf"]


def test_a_damaged_document_is_not_remembered(cache, tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(MINI, bench)
    (bench / "docs" / "doc_000001.pdf").write_bytes(b"%PDF-1.7\nnot a real document")
    ws = load_workspace(Sources(bench))
    assert ws.locations["doc_000001"].path is None  # cannot be shown
    assert sorted(_kept(cache).values()) == [3, 6]


OTHER_FEATURES = ("dashboard.compare", "dashboard.weak", "dashboard.evidence", "dashboard.report",
                  "dashboard.explorer", "dashboard.disagreement", "dashboard.annotations.panel")
# the annotations database's modules that load SQLAlchemy (store_panel, which the overview uses, is not one)
DATABASE = {f"dashboard.annotations.{m}" for m in ("location", "schema", "unavailable", "damage", "store")}


def test_the_app_and_the_overview_import_no_other_page():
    """What app.py imports, then the overview's modules, in a fresh interpreter: no other page's
    package (nor the annotations database, SQLAlchemy) is loaded until a page that uses it runs."""
    import ast

    tree = ast.parse((ROOT / "dashboard" / "app.py").read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                and n.module.startswith("dashboard")]
    assert imported, "app.py imports nothing from dashboard?"
    code = ("import importlib, sys, json\n"
            f"for m in {imported + ['dashboard.shell.context', 'dashboard.overview.panel', 'dashboard.overview.charts']!r}:\n"
            "    importlib.import_module(m)\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "dashboard.overview.panel" in loaded
    assert [m for m in loaded if m.startswith(OTHER_FEATURES)] == []
    assert sorted(DATABASE & set(loaded)) == []
    assert "sqlalchemy" not in loaded

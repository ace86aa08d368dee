"""Issue 12, reliability of the dashboard's data layer: hostile documents (corrupt, encrypted,
zero pages, not a PDF, empty, a 200 x 200-inch page, 10,000 pages, a 20,000 x 20,000-pixel image),
paths that try to leave the docs folder or the data roots, runs given twice, top-level files that
are not gold, the upload cache -- and the app keeps serving every question of such a benchmark."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from dashboard.core.paths import Sources, data_roots, folder_allowed, inside, locate_document, stage_upload
from dashboard.data.workspace import discover, load_workspace, looks_like_gold
from dashboard.documents.pdf import inspect_document
from scoring.problems import WARNING

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"
sys.path.insert(0, str(HOSTILE))
import make_hostile  # noqa: E402

# document id -> (file in docs/, the reason it cannot be shown, or "" when it can)
DOCS = {
    "d_corrupt": ("corrupt.pdf", "corrupt"),
    "d_encrypted": ("encrypted.pdf", "encrypted (needs a password)"),
    "d_zero": ("zero_pages.pdf", "no pages"),
    "d_text": ("not_a_pdf.pdf", "not a PDF"),
    "d_empty": ("empty.pdf", "empty file (no pages)"),
    "d_huge_box": ("huge_mediabox.pdf", ""),
    "d_good": ("good.pdf", ""),
    "d_many": ("many.pdf", ""),
    "d_image": ("huge.png", ""),
}


def _gold_row(qid: str, doc_id: str, text: str = "What is it?") -> dict:
    return {"question_id": qid, "task_type": "single_doc", "question": text,
            "answer": {"value": "616", "format": "Int", "verification_rule": "numeric_tolerance"},
            "document": {"document_id": doc_id, "evidence_pages": [1], "evidence_items": [
                {"locator": "Page 1", "pages": [1], "quote": "616", "source_type": "Table"}]},
            "metadata": {"domain": "finance_business", "reasoning_type": "comparison", "evidence_sources": ["Table"]}}


@pytest.fixture(scope="module")
def hostile_bench(tmp_path_factory) -> Path:
    """A benchmark whose documents are all hostile (the big ones built here, not checked in), plus
    document records whose file fields try to leave docs/, a symlink out of it, a runs folder and a
    top-level .jsonl that is not gold."""
    bench = tmp_path_factory.mktemp("hostile") / "bench"
    docs = bench / "docs"
    docs.mkdir(parents=True)
    outside = bench.parent / "outside"
    outside.mkdir()
    (outside / "secret.pdf").write_bytes(make_hostile.good())
    for name, _ in DOCS.values():
        if name == "many.pdf":
            make_hostile.many_pages(docs / name, 10_000)
        elif name == "huge.png":
            make_hostile.huge_image(docs / name, 20_000)
        else:
            shutil.copy(HOSTILE / name, docs / name)
    (docs / "link.pdf").symlink_to(outside / "secret.pdf")
    records = [{"document_id": d, "file": name, "title": d} for d, (name, _) in DOCS.items()]
    records += [{"document_id": "d_dotdot", "file": "../outside/secret.pdf"},
                {"document_id": "d_abs", "file": str(outside / "secret.pdf")},
                {"document_id": "d_symlink", "file": "link.pdf"},
                {"document_id": "d_nul", "file": "good.pdf\x00.txt"}]
    (bench / "documents.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    ids = [*DOCS, "d_dotdot", "d_abs", "d_symlink", "d_nul"]
    gold = [_gold_row(f"q_{d}", d) for d in ids]
    (bench / "qa_single_doc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))
    (bench / "scores_dump.jsonl").write_text("".join(json.dumps({"question_id": f"q{k}", "system": "s", "accuracy": 1,
                                                                 "token_f1": 1, "anls": 1}) + "\n" for k in range(40)))
    runs = bench / "runs"
    runs.mkdir()
    (runs / "alpha.jsonl").write_text("".join(json.dumps({"question_id": f"q_{d}", "prediction": "616"}) + "\n" for d in ids))
    return bench


# ----------------------------------------------------------------------------- documents


@pytest.mark.parametrize("doc_id", list(DOCS))
def test_each_hostile_document_gets_a_clear_verdict(hostile_bench, doc_id):
    name, reason = DOCS[doc_id]
    check = inspect_document(hostile_bench / "docs" / name)
    assert check.problem.startswith(reason) if reason else check.problem == ""
    if not reason:
        assert check.pages == {"many.pdf": 10_000}.get(name, check.pages) and check.pages >= 1


def test_workspace_reports_unusable_documents_as_not_found(hostile_bench):
    ws = load_workspace(Sources(hostile_bench))
    for doc_id, (name, reason) in DOCS.items():
        loc = ws.locations[doc_id]
        if reason:
            assert loc.path is None and loc.unusable.startswith(reason) and loc.file == hostile_bench / "docs" / name
            assert loc.how.startswith(reason) and name in loc.how
        else:
            assert loc.path == (hostile_bench / "docs" / name).resolve() and not loc.unusable
    assert ws.page_counts["d_many"] == 10_000 and ws.page_counts["d_image"] == 1 and ws.page_counts["d_huge_box"] == 1
    shown = {Path(p.file).name: p for p in ws.problems if p.kind == "documents that cannot be shown"}
    assert set(shown) == {name for name, reason in DOCS.values() if reason}
    assert all(p.severity == WARNING and p.skipped for p in shown.values())


def test_each_document_file_is_opened_once(hostile_bench, monkeypatch):
    from dashboard.data import workspace

    opened: list[str] = []
    real = workspace.inspect_document
    monkeypatch.setattr(workspace, "inspect_document", lambda p: opened.append(p.name) or real(p))
    load_workspace(Sources(hostile_bench))
    assert sorted(opened) == sorted(set(opened))  # no file twice
    assert set(opened) == {name for name, _ in DOCS.values()}


def test_document_paths_never_leave_the_docs_folder(hostile_bench):
    ws = load_workspace(Sources(hostile_bench))
    for doc_id in ("d_dotdot", "d_abs", "d_symlink", "d_nul"):
        loc = ws.locations[doc_id]
        assert loc.path is None and loc.refused, doc_id
    refused = [p for p in ws.problems if p.field and p.field.endswith(".file")]
    assert {p.field for p in refused} == {"d_dotdot.file", "d_abs.file", "d_symlink.file", "d_nul.file"}
    docs = hostile_bench / "docs"
    for bad in ("../outside/secret.pdf", "/etc/passwd", "link.pdf", "..", ".", "", "a/../../outside/secret.pdf",
                "good.pdf\x00"):
        assert inside(docs, bad) is None, bad
    assert inside(docs, "good.pdf") == (docs / "good.pdf").resolve()
    # a url whose last segment tries to climb out is only ever looked up inside docs/
    loc = locate_document("x", "", "https://evil.example/..%2F..%2Foutside%2Fsecret.pdf", docs)
    assert loc.path is None or loc.path.is_relative_to(docs.resolve())


# ----------------------------------------------------------------------------- discovery


def test_runs_folder_given_twice_is_read_once(hostile_bench):
    src = Sources(hostile_bench, runs=(hostile_bench / "runs", hostile_bench / "runs" / ".." / "runs",
                                       hostile_bench / "runs" / "alpha.jsonl"))
    disc = discover(src)
    assert [p.name for p in disc.predictions] == ["alpha.jsonl"]
    ws = load_workspace(src)
    assert [pf.run for pf in ws.predictions] == ["alpha"]
    assert not [p for p in ws.problems if p.field == "run name"]


def test_a_run_reached_through_links_is_read_once_and_other_files_of_one_name_stay(tmp_path, monkeypatch):
    """Each prediction file once by where it really is: through a linked folder, a link to the file, a relative
    path with `..`; a link to another file of the list is that file; two files of one name in two folders
    are two runs."""
    sample = ROOT / "sample_runs"
    bench = tmp_path / "bench"
    shutil.copytree(sample / "runs", bench / "runs")
    for name in ("documents.jsonl", "qa_single_doc.jsonl", "qa_cross_doc.jsonl"):
        shutil.copy(sample / name, bench / name)
    runs = bench / "runs"
    first = sorted(runs.glob("*.jsonl"))[0]
    (tmp_path / "linked").symlink_to(runs, target_is_directory=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / first.name).write_bytes(first.read_bytes())
    (tmp_path / "other" / "same.jsonl").symlink_to(first)
    monkeypatch.chdir(tmp_path)
    src = Sources(bench, runs=(tmp_path / "linked", Path("bench") / "runs" / ".." / "runs" / first.name,
                               tmp_path / "linked" / first.name, tmp_path / "other"))
    disc = discover(src)
    want = sorted(p.resolve() for p in runs.iterdir() if p.suffix in (".json", ".jsonl"))
    got = [p for p in disc.predictions if p.parent.name != "other"]
    assert sorted(p.resolve() for p in got) == want and len(want) >= 3  # the benchmark's runs, each once
    others = sorted(p.name for p in disc.predictions if p.parent.name == "other")
    assert others == [first.name]  # the copy is its own file; the link to `first` is `first`


def test_top_level_jsonl_that_is_not_gold_is_skipped_with_one_note(hostile_bench):
    ws = load_workspace(Sources(hostile_bench))
    assert [p.name for p in ws.discovery.gold] == ["qa_single_doc.jsonl"]
    notes = [p for p in ws.discovery.problems if p.file.endswith("scores_dump.jsonl")]
    assert len(notes) == 1 and notes[0].severity == WARNING and "not read as gold" in notes[0].got
    assert ws.gold.errors == [] and ws.gold.loaded == 13


@pytest.mark.parametrize("content,gold", [
    ('{"question_id": "q1", "question": "?", "answer": {"value": "1"}}\n', True),
    ('{"question_id": "q1", "answer": {"value": "1"}}\n', True),
    ('{"questionId": 1, "answers": ["a"]}\n', True),
    ('{"question_id": "q1", "prediction": "x"}\n' * 3, False),
    ('{"question_id": "q1", "answer": "x"}\n', False),
    ('{"question_id": "q1", "system": "a", "accuracy": 1}\n', False),
    ("not json at all\n{broken\n", True),  # nothing parses: read as gold so that its problems are listed
    ("", True),
    ('[1, 2]\n"text"\n', False),
])
def test_looks_like_gold(tmp_path, content, gold):
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    assert looks_like_gold(path) is gold


# ----------------------------------------------------------------------------- data roots


def test_folders_outside_the_data_roots_are_refused(tmp_path):
    bench = tmp_path / "data" / "bench"
    bench.mkdir(parents=True)
    (tmp_path / "data" / "other").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "extra").mkdir()
    (bench / "escape").symlink_to(tmp_path / "elsewhere")
    roots = data_roots(Sources(bench), {"LENS_DATA_ROOTS": str(tmp_path / "extra")})
    assert folder_allowed(bench, roots) and folder_allowed(tmp_path / "extra", roots)
    # the benchmark's parent is not a root (issue 17, item 6): a sibling opens only when listed
    for bad in (tmp_path / "data" / "other", tmp_path / "data", "/etc", "/", tmp_path / "elsewhere", bench / "escape", bench / ".." / ".." / "elsewhere",
                str(bench) + "\x00", "~"):
        assert not folder_allowed(bad, roots), bad


# ----------------------------------------------------------------------------- the upload cache


def test_uploads_are_keyed_by_content_and_rewritten_when_corrupt(tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    a = stage_upload("run.jsonl", b'{"question_id": "q1", "prediction": "x"}\n')
    assert a.is_relative_to(tmp_path / "cache" / "uploads") and a.name == "run.jsonl"
    assert stage_upload("run.jsonl", a.read_bytes()) == a
    b = stage_upload("run.jsonl", b"other bytes")
    assert b != a and b.parent != a.parent
    a.write_bytes(b"truncat")  # a corrupt entry: recomputed from the upload
    assert stage_upload("run.jsonl", b'{"question_id": "q1", "prediction": "x"}\n') == a
    assert a.read_bytes() == b'{"question_id": "q1", "prediction": "x"}\n'
    for name in ("../../etc/passwd", "/etc/passwd", "..\\..\\x.jsonl", "..", ".hidden", "a\x00b\n.jsonl", ""):
        p = stage_upload(name, b"x")
        assert p.is_relative_to(tmp_path / "cache" / "uploads") and p.parent.parent == tmp_path / "cache" / "uploads", name
    assert not any(tmp_path.glob("**/.part-*"))


def test_workspace_writes_nothing_outside_the_cache(hostile_bench, tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    before = {p: p.stat().st_mtime_ns for p in hostile_bench.parent.rglob("*")}
    load_workspace(Sources(hostile_bench, runs=(hostile_bench / "runs",)))
    after = {p: p.stat().st_mtime_ns for p in hostile_bench.parent.rglob("*")}
    assert before == after


# ----------------------------------------------------------------------------- render caps (dashboard.evidence.render)


def test_renders_of_hostile_pages_are_capped(hostile_bench):
    from dashboard.documents.pdf import DocumentError
    from dashboard.evidence.render import MAX_PIXELS, render_page

    docs = hostile_bench / "docs"
    for name in ("huge_mediabox.pdf", "huge.png"):
        r = render_page(docs / name, 1, 2.0)
        # PyMuPDF rounds the pixmap's sides up: at most one extra row and column beyond the cap
        assert r.capped and r.width * r.height <= MAX_PIXELS + r.width + r.height + 1 and r.png.startswith(b"\x89PNG")
    last = render_page(docs / "many.pdf", 10_000, 1.0)
    assert last.page_count == 10_000 and not last.capped
    for name, page in (("many.pdf", 10_001), ("corrupt.pdf", 1), ("zero_pages.pdf", 1), ("not_a_pdf.pdf", 1),
                       ("empty.pdf", 1)):
        with pytest.raises(DocumentError):
            render_page(docs / name, page, 1.0)


def test_render_of_an_encrypted_pdf_is_a_document_error(hostile_bench):
    from dashboard.documents.pdf import DocumentError
    from dashboard.evidence.render import render_page

    with pytest.raises(DocumentError):
        render_page(hostile_bench / "docs" / "encrypted.pdf", 1, 1.0)


# ----------------------------------------------------------------------------- the app keeps serving


@pytest.fixture
def app_on(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from app_kit import app_on

    def start(bench: Path, params: dict) -> AppTest:
        return app_on(monkeypatch, bench, params, timeout=120, env={"LENS_CACHE_DIR": str(tmp_path / "cache")})
    return start


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_app_serves_every_question_of_a_hostile_benchmark(hostile_bench, app_on):
    at = app_on(hostile_bench, {"run": ["alpha"]})
    _clean(at)
    at.switch_page("views/data.py")
    at.run()
    _clean(at)
    problems = "\n".join(c.value for c in at.code)
    for name, reason in DOCS.values():
        if reason:
            assert name in problems and reason in problems
    pages = ["views/questions.py"]
    if (ROOT / "dashboard" / "views" / "evidence.py").is_file():
        pages.append("views/evidence.py")
    for page in pages:
        for doc_id in (*DOCS, "d_dotdot", "d_symlink"):
            at.query_params["sel"] = f"q_{doc_id}"
            at.session_state["lens_view"].question = f"q_{doc_id}"
            at.switch_page(page)
            at.run()
            _clean(at)
    # a good question still shows after all the hostile ones
    at.session_state["lens_view"].question = "q_d_good"
    at.switch_page("views/questions.py")
    at.run()
    _clean(at)

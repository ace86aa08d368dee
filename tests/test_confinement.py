"""Only the configured data opens (issue 17, item 6; issue 18's Data-panel refusal): the data roots are
exactly the benchmark folder, the folders given at start and LENS_DATA_ROOTS -- never a parent,
never `/`, never the upload folder; relative and missing folders are refused with a message shown
in the main area that names LENS_DATA_ROOTS."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.core import paths
from dashboard.core.paths import Sources, check_folder, data_roots, folder_allowed, stage_upload

GOLD_LINE = ('{"question_id": "secret_q", "question": "PRIVATE QUESTION", "answer": {"value": "x", '
             '"answer_format": "Str"}, "documents": []}\n')


def private_bench(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "qa_single_doc.jsonl").write_text(GOLD_LINE)
    return folder


def main_errors(at) -> list[str]:
    """The main area's error boxes as plain text (the app escapes Markdown in them)."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.main.error]


def shows_private(at) -> bool:
    return "secret_q" in set(at.session_state["lens_context"].analysis.questions.get("question_id", []))


# ----------------------------------------------------------------------------- the roots themselves


def test_a_sibling_sharing_the_roots_name_prefix_is_refused(tmp_path):
    root = tmp_path / "x" / "data"
    root.mkdir(parents=True)
    evil = private_bench(tmp_path / "x" / "data-evil")
    roots = data_roots(Sources(root), {})
    assert roots == (root.resolve(),)
    assert folder_allowed(root, roots) and not folder_allowed(evil, roots)
    assert "outside the folders" in check_folder(str(evil), roots)
    assert not folder_allowed(str(root) + "-evil", roots)


def test_a_top_level_benchmark_does_not_make_its_parent_a_root(tmp_path, monkeypatch):
    # `--benchmark /lensbench`: the parent `/` is never a root, nor is `/` given itself
    roots = data_roots(Sources(Path("/lensbench")), {"LENS_DATA_ROOTS": "/"})
    assert Path("/") not in roots and roots == (Path("/lensbench"),)
    for bad in ("/etc", "/srv/privatebench", "/", "/lensbench-other"):
        assert not folder_allowed(bad, roots), bad
        assert check_folder(bad, roots), bad
    assert data_roots(Sources(Path("/")), {}) == ()  # a benchmark at / itself opens nothing else
    # the same with real folders: the benchmark's parent is not a root, so its private sibling stays closed
    bench = private_bench(tmp_path / "lensbench")
    private = private_bench(tmp_path / "privatebench")
    roots = data_roots(Sources(bench), {})
    assert tmp_path.resolve() not in roots and not folder_allowed(private, roots)


def test_top_level_benchmark_through_the_app(monkeypatch, mini_bench, tmp_path):
    bench = tmp_path / "lensbench"
    shutil.copytree(mini_bench, bench)
    private = private_bench(tmp_path / "root" / "privatebench")
    for target in (private, tmp_path / "root", Path("/etc"), Path("/")):
        at = app_on(monkeypatch, bench, {"data": str(target)})
        assert not at.exception
        assert any("outside the folders this app may read" in e and "LENS_DATA_ROOTS" in e for e in main_errors(at))
        assert not shows_private(at)
        assert "data" not in at.query_params


def test_symlinks_out_of_a_root_are_refused(tmp_path):
    root = tmp_path / "data"
    inner = root / "bench"
    inner.mkdir(parents=True)
    outside = private_bench(tmp_path / "outside")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "alias").symlink_to(inner, target_is_directory=True)  # a link that stays inside is fine
    (tmp_path / "link-to-root").symlink_to(root, target_is_directory=True)
    roots = data_roots(Sources(None), {"LENS_DATA_ROOTS": str(root)})
    assert not folder_allowed(root / "escape", roots)
    assert not folder_allowed(root / "alias" / ".." / ".." / "outside", roots)
    assert folder_allowed(root / "alias", roots) and folder_allowed(tmp_path / "link-to-root" / "bench", roots)
    # a root given through a link is its target, so the link's siblings stay closed
    linked = data_roots(Sources(tmp_path / "link-to-root"), {})
    assert linked == (root.resolve(),) and not folder_allowed(outside, linked)


def test_relative_values_are_refused(tmp_path, monkeypatch):
    root = tmp_path / "data"
    (root / "bench").mkdir(parents=True)
    monkeypatch.chdir(root)  # even where the relative path would resolve inside a root
    roots = data_roots(Sources(root), {})
    for rel in ("bench", "./bench", "../data/bench", "."):
        assert not folder_allowed(rel, roots), rel
        assert "relative path" in check_folder(rel, roots), rel


def test_a_missing_folder_inside_a_root_is_refused(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "a-file").write_text("x")
    roots = data_roots(Sources(root), {})
    assert "does not exist" in check_folder(str(root / "nothing"), roots)
    assert "not a folder" in check_folder(str(root / "a-file"), roots)
    assert check_folder(str(root), roots) == ""
    assert "NUL" in check_folder(str(root) + "\x00", roots)


def test_the_upload_folder_is_never_a_root(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("LENS_CACHE_DIR", str(cache))
    staged = stage_upload("qa_single_doc.jsonl", GOLD_LINE.encode(), paths.session_uploads("a" * 32))
    # even when a data root covers the whole cache folder
    roots = data_roots(Sources(tmp_path / "bench"), {"LENS_DATA_ROOTS": str(tmp_path)})
    for target in (staged.parent, staged.parent.parent, paths.upload_root()):
        assert not folder_allowed(target, roots), target
    assert folder_allowed(tmp_path, roots)


# ----------------------------------------------------------------------------- through the app (AppTest)


def test_a_prefix_sibling_link_is_refused_in_the_main_area(monkeypatch, mini_bench, tmp_path):
    root = tmp_path / "x" / "data"
    shutil.copytree(mini_bench, root)
    evil = tmp_path / "x" / "data-evil"
    shutil.copytree(mini_bench, evil)
    private_bench(evil / "nested")
    for target in (evil, evil / "nested"):
        at = app_on(monkeypatch, root, {"data": str(target)})
        assert not at.exception
        errors = main_errors(at)
        assert errors and "outside the folders this app may read" in errors[0], errors
        assert "LENS_DATA_ROOTS" in errors[0] and str(root) in errors[0]  # says where it shows instead
        assert not shows_private(at)


def test_relative_and_missing_links_are_refused_in_the_main_area(monkeypatch, mini_bench, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(mini_bench, root)
    monkeypatch.chdir(root.parent)
    at = app_on(monkeypatch, root, {"data": "data"})
    assert not at.exception and any("relative path" in e for e in main_errors(at))
    at = app_on(monkeypatch, root, {"data": str(root / "missing")})
    assert not at.exception and any("does not exist" in e for e in main_errors(at))
    assert at.title[0].value == "Overview" and len(at.session_state["lens_context"].analysis.questions) > 0


def test_another_sessions_upload_cannot_be_opened_by_link(monkeypatch, mini_bench, tmp_path):
    """Session A's staged gold (its digest folder under its own session folder) named by session B's
    ?data=, even with a data root over the whole cache folder: refused."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("LENS_CACHE_DIR", str(cache))
    staged = stage_upload("qa_single_doc.jsonl", GOLD_LINE.encode(), paths.session_uploads(paths.new_session_folder()))
    env = {"LENS_CACHE_DIR": str(cache), "LENS_DATA_ROOTS": str(tmp_path)}
    for target in (staged.parent, staged.parent.parent, paths.upload_root()):
        at = app_on(monkeypatch, mini_bench, {"data": str(target)}, env=env)
        assert not at.exception
        assert any("outside the folders" in e for e in main_errors(at)), (target, main_errors(at))
        assert not shows_private(at)
    # the folder beside the upload folder, inside the declared root, does open
    private = private_bench(tmp_path / "other")
    at = app_on(monkeypatch, mini_bench, {"data": str(private)}, env=env)
    assert not at.exception and not main_errors(at) and shows_private(at)


def test_session_folder_names_are_unguessable():
    made = {paths.new_session_folder() for _ in range(200)}
    assert len(made) == 200 and all(len(t) == 32 for t in made)
    with pytest.raises(ValueError):
        paths.session_uploads("../x")

"""What a new user sees with a wrong benchmark (issue 18, Data page items): the overview says why no
gold question loaded, and the Data page names the benchmark folder by its real path, never `.`."""

from __future__ import annotations

import re

from app_kit import app_on


def plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def test_a_missing_benchmark_is_named_on_the_overview(monkeypatch, tmp_path):
    at = app_on(monkeypatch, tmp_path / "no-such-bench")
    assert not at.exception
    infos = [plain(i.value) for i in at.info]
    assert any("No gold questions loaded" in i and f"{tmp_path / 'no-such-bench'} does not exist" in i for i in infos), infos


def test_a_folder_without_gold_is_named_on_the_overview(monkeypatch, tmp_path):
    (tmp_path / "documents.jsonl").write_text("")
    at = app_on(monkeypatch, tmp_path)
    assert not at.exception
    infos = [plain(i.value) for i in at.info]
    assert any(f"{tmp_path} has no gold files" in i for i in infos), infos


def test_the_data_page_names_the_benchmark_folder_by_its_path(monkeypatch, tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    monkeypatch.chdir(bench)
    at = app_on(monkeypatch, bench)
    at.switch_page("views/data.py").run()
    assert not at.exception
    lines = "\n".join(c.value for c in at.code).splitlines()
    assert any(line.startswith(f"{bench} — error:") for line in lines), lines
    assert not any(line.startswith(". ") or line.startswith(".:") for line in lines), lines
    errors = [plain(e.value) for e in at.error]
    assert all(not e.startswith(".:") for e in errors) and any(e.startswith(f"{bench}:") for e in errors), errors


def test_a_run_file_of_which_nothing_loaded_gets_one_true_sentence(monkeypatch, tmp_path, mini_bench):
    """Issue 29.4: '1,082 errors … the rest was loaded' beside 'no prediction could be loaded' said two
    contradictory things of one file; now a file of which nothing loaded says so, once."""
    import shutil

    bench = tmp_path / "bench"
    shutil.copytree(mini_bench, bench, ignore=shutil.ignore_patterns("malformed"))
    (bench / "runs" / "broken.jsonl").write_text("not json\n{also not\n")
    at = app_on(monkeypatch, bench)
    at.switch_page("views/data.py").run()
    assert not at.exception
    said = [plain(e.value) for e in at.error] + [plain(w.value) for w in at.warning]
    about = [s for s in said if "broken.jsonl" in s]
    assert len(about) == 1, about
    assert "nothing in it could be loaded" in about[0] and "the rest was loaded" not in about[0], about

"""A link or the data panel can only open folders inside the app's data roots, and the Data page
summarises repeated problems of one kind instead of listing thousands."""

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on


@pytest.fixture
def open_app(monkeypatch):
    def start(bench: Path, params: dict | None = None, roots: str | None = None) -> AppTest:
        return app_on(monkeypatch, bench, params, env={"LENS_DATA_ROOTS": roots} if roots else None)
    return start


def test_a_link_naming_a_folder_outside_the_roots_is_refused(open_app, mini_bench, tmp_path):
    outside = tmp_path / "elsewhere"
    shutil.copytree(mini_bench, outside)
    at = open_app(mini_bench, {"data": str(outside)})
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any("outside the folders this app may read" in e for e in errors), errors
    assert at.sidebar.text_input(key="data_folder").value == str(outside)  # what was asked stays visible
    # the configured benchmark is shown instead (its runs, not the other folder's)
    assert "data" not in at.query_params

    # the same folder opens once it is a declared root
    at = open_app(mini_bench, {"data": str(outside)}, roots=str(tmp_path))
    assert not at.exception and not at.sidebar.error
    assert at.query_params["data"] in (str(outside), [str(outside)])


def test_data_page_summarises_repeated_problems(open_app, mini_bench, tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(mini_bench, bench, ignore=shutil.ignore_patterns("malformed"))
    noids = bench / "runs" / "noids.jsonl"  # 45 rows of one kind of problem: no question id
    noids.write_text("".join(json.dumps({"prediction": f"x{i}"}) + "\n" for i in range(45)))
    at = open_app(bench)
    at.switch_page("views/data.py").run()
    assert not at.exception
    lines = "\n".join(c.value for c in at.code).splitlines()
    listed = [line for line in lines if line.startswith("runs/noids.jsonl:")]
    assert [line.split(" ")[0] for line in listed] == [f"runs/noids.jsonl:{i}" for i in range(1, 21)]
    assert "runs/noids.jsonl — error: … and 25 more rows without an id" in lines

"""The project's import rules, read from the source with `ast` (no module is imported here):

- imports run one way, bench -> dashboard -> scoring: `scoring/` imports neither `dashboard` nor
  `bench`, and `dashboard/` never imports `bench`;
- `scoring/` is pure Python (plus rapidfuzz, scipy, numpy, orjson): no streamlit, plotly, pandas or
  pymupdf, anywhere in a module, function bodies included;
- in `dashboard/`, only the Streamlit layer imports streamlit: `app.py`, `ui.py`, `cache.py`, the
  `*_panel.py` modules and the pages under `views/`. Every other module is a pure helper.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCORING = ROOT / "scoring"
DASHBOARD = ROOT / "dashboard"

UI_FRAMEWORKS = ("streamlit", "plotly", "pandas", "pymupdf")
STREAMLIT_LAYER = {"app.py", "ui.py", "cache.py"}  # plus *_panel.py and views/*.py


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative imports resolved against
    the file's package, imports inside functions and `if` blocks included."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module:
                out.append((node.lineno, module))
            # `from . import x` / `from pkg import submodule`: the names may be modules too
            prefix = f"{module}." if module else ""
            out += [(node.lineno, prefix + alias.name) for alias in node.names if alias.name != "*"]
    return out


def top(module: str) -> str:
    return module.split(".")[0]


def violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [f"{f.relative_to(ROOT)}:{line} imports {module}"
            for f in files for line, module in imported_modules(f) if top(module) in forbidden]


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def is_streamlit_layer(path: Path) -> bool:
    rel = path.relative_to(DASHBOARD)
    return rel.parts[0] == "views" or rel.name in STREAMLIT_LAYER or rel.name.endswith("_panel.py")


def test_the_folders_are_there():
    # an empty glob would make every rule below pass
    assert len(python_files(SCORING)) >= 10 and len(python_files(DASHBOARD)) >= 10
    assert (DASHBOARD / "app.py").is_file() and (DASHBOARD / "views").is_dir()


def test_scoring_imports_no_ui_framework():
    assert violations(python_files(SCORING), UI_FRAMEWORKS) == []


def test_imports_run_bench_dashboard_scoring():
    assert violations(python_files(SCORING), ("dashboard", "bench")) == []
    assert violations(python_files(DASHBOARD), ("bench",)) == []


def test_dashboard_helpers_import_no_streamlit():
    helpers = [p for p in python_files(DASHBOARD) if not is_streamlit_layer(p)]
    assert {p.name for p in helpers} >= {"links.py", "tables.py", "workspace.py", "charts.py", "launch.py"}
    assert violations(helpers, ("streamlit",)) == []


@pytest.mark.parametrize("source,expected", [
    ("import streamlit as st", ["streamlit"]),
    ("def f():\n    import pandas\n", ["pandas"]),
    ("from plotly import graph_objects", ["plotly", "plotly.graph_objects"]),
    ("from .. import dashboard", ["dashboard"]),
    ("from ..dashboard.tables import md_escape", ["dashboard.tables", "dashboard.tables.md_escape"]),
    ("from .text import to_str", ["scoring.text", "scoring.text.to_str"]),
])
def test_the_import_reader_sees_every_form(tmp_path, source, expected, monkeypatch):
    """The checker itself: a forbidden import in any of these forms is caught."""
    folder = tmp_path / "scoring"
    folder.mkdir()
    (folder / "m.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert [m for _, m in imported_modules(folder / "m.py")] == expected

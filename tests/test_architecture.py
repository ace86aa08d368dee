"""The project's import rules, read from the source with `ast` (no module is imported here):

- imports run one way, bench -> dashboard -> scoring: `scoring/` imports neither `dashboard` nor
  `bench`, and `dashboard/` never imports `bench`;
- `scoring/` is pure Python (plus rapidfuzz, scipy, numpy, orjson): no streamlit, plotly, pandas or
  pymupdf, anywhere in a module, function bodies included;
- in `dashboard/`, only the Streamlit layer imports streamlit: `app.py`, the `shell/` package, each
  feature's `panel.py` (and `*_panel.py`) and the pages under `views/`. Every other module is a pure
  helper;
- inside `dashboard/`, layers import downwards only (LAYERS below), and no two modules import each
  other, directly or around a circle;
- no module imports another module's private (`_name`) names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCORING = ROOT / "scoring"
DASHBOARD = ROOT / "dashboard"

UI_FRAMEWORKS = ("streamlit", "plotly", "pandas", "pymupdf")
FEATURES = ("evidence", "compare", "report", "disagreement", "explorer", "overview", "data", "annotations")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative imports resolved against
    the file's package, imports inside functions and `if` blocks included."""
    return [(line, module) for line, module, _ in imported_names(path)]


def imported_names(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name imported from it or None) for every import; for `from m import x` both
    `m` (name x) and `m.x` (no name: x may be a submodule) are listed."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            prefix = f"{module}." if module else ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                if module:
                    out.append((node.lineno, module, alias.name))
                out.append((node.lineno, prefix + alias.name, None))  # the name may be a module too
    seen: set[tuple[int, str, str | None]] = set()
    return [x for x in out if not (x in seen or seen.add(x))]


def top(module: str) -> str:
    return module.split(".")[0]


def violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [f"{f.relative_to(ROOT)}:{line} imports {module}"
            for f in files for line, module in imported_modules(f) if top(module) in forbidden]


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_streamlit_layer(path: Path) -> bool:
    rel = path.relative_to(DASHBOARD)
    return (rel.parts[0] in ("views", "shell") or rel.name == "app.py"
            or rel.name == "panel.py" or rel.name.endswith("_panel.py"))


def layer(module: str) -> int:
    """0 core (settings, paths, workspace, store, links, escape, analysis; and the one module that
    opens PDFs, with its OCR and the page-text model they return), 1 the features' pure helpers, 2 the report
    (built from the comparison's and the evidence's helpers), 3 the shell (session, caches), 4 the
    panels, 5 the pages and the app."""
    parts = module.split(".")
    name = parts[-1]
    if parts[1] in ("views", "app") or module == "dashboard":
        return 5
    if name == "panel" or name.endswith("_panel"):
        return 4
    if parts[1] == "shell":
        return 3
    if parts[1] == "report":
        return 2
    if parts[1] in ("core", "resources", "launch") or module in ("dashboard.evidence.pdf", "dashboard.evidence.ocr", "dashboard.evidence.guard",
                                                               "dashboard.evidence.pagetext"):
        return 0
    return 1


def dashboard_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in python_files(DASHBOARD)}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m, path in modules.items():
        for _, target, _name in imported_names(path):
            # a package's __init__ is named by every `from package import module`: not an edge
            if target in modules and target != m and modules[target].name != "__init__.py":
                graph[m].add(target)
    return graph


def test_the_folders_are_there():
    # an empty glob would make every rule below pass
    assert len(python_files(SCORING)) >= 10 and len(python_files(DASHBOARD)) >= 30
    assert (DASHBOARD / "app.py").is_file() and (DASHBOARD / "views").is_dir()
    for feature in FEATURES + ("core", "shell"):
        assert (DASHBOARD / feature / "__init__.py").is_file(), feature
    assert not [p.name for p in DASHBOARD.glob("*.py")
                if p.name not in ("__init__.py", "app.py", "launch.py", "resources.py")], "flat modules are back"


def test_scoring_imports_no_ui_framework():
    assert violations(python_files(SCORING), UI_FRAMEWORKS) == []


def test_imports_run_bench_dashboard_scoring():
    assert violations(python_files(SCORING), ("dashboard", "bench")) == []
    assert violations(python_files(DASHBOARD), ("bench",)) == []


def test_dashboard_helpers_import_no_streamlit():
    helpers = [p for p in python_files(DASHBOARD) if not is_streamlit_layer(p)]
    assert {str(p.relative_to(DASHBOARD)) for p in helpers} >= {
        "core/links.py", "core/analysis.py", "core/workspace.py", "overview/charts.py", "launch.py", "evidence/pdf.py"}
    assert violations(helpers, ("streamlit",)) == []


def test_layers_import_downwards_only():
    graph = dashboard_graph()
    upward = [f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
              for a, targets in graph.items() for b in targets if layer(b) > layer(a)]
    assert upward == []


def test_no_import_cycles_in_the_dashboard():
    graph = dashboard_graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_no_module_imports_a_private_name_of_another():
    own = {top(module_name(p)) for p in python_files(SCORING) + python_files(DASHBOARD)}
    found = [f"{p.relative_to(ROOT)}:{line} takes {module}.{name}"
             for p in python_files(SCORING) + python_files(DASHBOARD) + python_files(ROOT / "bench")
             for line, module, name in imported_names(p)
             if name and name.startswith("_") and not name.startswith("__") and top(module) in own]
    assert found == []


@pytest.mark.parametrize("source,expected", [
    ("import streamlit as st", ["streamlit"]),
    ("def f():\n    import pandas\n", ["pandas"]),
    ("from plotly import graph_objects", ["plotly", "plotly.graph_objects"]),
    ("from .. import dashboard", ["dashboard"]),
    ("from ..dashboard.core.analysis import md_escape", ["dashboard.core.analysis", "dashboard.core.analysis.md_escape"]),
    ("from .text import to_str", ["scoring.text", "scoring.text.to_str"]),
])
def test_the_import_reader_sees_every_form(tmp_path, source, expected, monkeypatch):
    """The checker itself: a forbidden import in any of these forms is caught."""
    folder = tmp_path / "scoring"
    folder.mkdir()
    (folder / "m.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert [m for _, m in imported_modules(folder / "m.py")] == expected


@pytest.mark.parametrize("source,caught", [
    ("from scoring.evaluate import _bucket", True),
    ("from .metrics import _anls", True),
    ("from scoring.metrics import anls as _anls", False),  # a private alias of a public name
    ("from scoring import __version__", False),
])
def test_the_private_name_rule_sees_every_form(tmp_path, source, caught, monkeypatch):
    folder = tmp_path / "scoring"
    folder.mkdir()
    (folder / "m.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    names = [n for _, m, n in imported_names(folder / "m.py") if n and n.startswith("_") and not n.startswith("__")]
    assert bool(names) == caught


def test_the_layer_rule_would_catch_an_upward_import():
    assert layer("dashboard.core.workspace") < layer("dashboard.evidence.locate") < layer("dashboard.report.build") \
        < layer("dashboard.shell.cache") < layer("dashboard.evidence.panel") < layer("dashboard.views.overview")

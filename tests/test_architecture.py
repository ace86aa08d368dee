"""The project's import rules, read from the source with `ast` (no module is imported here):

- imports run one way, bench -> dashboard -> scoring: `scoring/` imports neither `dashboard` nor
  `bench`, and `dashboard/` never imports `bench`;
- `scoring/` is pure Python (plus rapidfuzz, scipy, numpy, orjson): no streamlit, plotly, pandas or
  pymupdf, anywhere in a module, function bodies included;
- in `dashboard/`, only the Streamlit layer imports streamlit: `app.py`, the `shell/` and `session/`
  packages, each feature's `panel.py` (and `*_panel.py`) and the pages under `views/`. Every other
  module is a pure helper;
- inside `dashboard/`, the layers are packages and import downwards only (PACKAGE_LAYERS below),
  bottom to top:

    0 resources   where the shipped files are
    1 core        settings (every LENS_* setting), paths, links, escape, analysis, store, bounded
    2 documents   PDF and OCR access: pdf, ocr, pagetext, guard
    3 data        the workspace (finding and loading a benchmark's files) and the Data page's frames
    4 shell       the Streamlit session: view and URL, caches, scoring, output; imports no feature
    5 features    evidence, annotations, explorer, disagreement, overview, weak, compare, judge, trends,
                  matrix: pure
                  helpers and the feature's Streamlit panel.py
    6 report      the stakeholder report, built from the comparison's and the evidence's helpers
    7 session     loading a session's context (applies the annotations' gold corrections)
    8 views, app.py, launch.py   the pages, the entry point, the command

  The features share a layer: they may import one another, but no two packages import each other,
  directly or around a circle (nor do two modules);
- inside `dashboard/annotations/`, the database's modules import downwards only (ANNOTATIONS_LAYERS),
  bottom to top:

    0 errors        InvalidInput, AnnotationsUnavailable, how messages quote a value
    1 location      where the database lives (a file, a server's URL)
      records       Note, Correction, SavedSlice, Conflict, the validation of what a user gives
    2 schema        the tables, their versions, the migration (and migrations/versions/*)
    3 unavailable   why a database cannot be used, in a sentence
    4 damage        damaged rows: every row read becomes a record here, or is named
    5 store         AnnotationStore
    6 the rest of the package (export and import, corrections, frames, panels, the command line,
      migrations/env.py), which uses the database;
- inside `scoring/`, no import circle, module by module and package by package, counting every
  import of a module (inside functions and `if` blocks included, and a name taken from a package's
  `__init__`). Its ground floor, the records (`scoring/model.py`, GROUND_FLOOR), imports nothing of
  `scoring`; the rules that judge an answer (RULES: `metrics`, `harness_rules`, `mmlongbench_rule`)
  reach no reader or report (READERS_AND_REPORTS), so MMLongBench-Doc's rule stays apart from its
  reader and its report;
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
FEATURES = ("evidence", "compare", "report", "disagreement", "explorer", "overview", "data", "annotations", "weak", "judge",
            "trends", "matrix")
PACKAGE_LAYERS = {
    "resources": 0, "core": 1, "documents": 2, "data": 3, "shell": 4,
    **{feature: 5 for feature in ("evidence", "annotations", "explorer", "disagreement", "overview", "weak", "compare",
                                  "judge", "trends", "matrix")},
    "report": 6, "session": 7, "views": 8, "app": 8, "launch": 8, "dashboard": 9,
}

ANNOTATIONS = "dashboard.annotations"
ANNOTATIONS_LAYERS = {"errors": 0, "location": 1, "records": 1, "schema": 2, "migrations.versions": 2, "unavailable": 3,
                      "damage": 4, "store": 5}
ANNOTATIONS_USERS = 6  # every other module of the package

GROUND_FLOOR = ("scoring.model",)
RULES = ("scoring.metrics", "scoring.harness_rules", "scoring.mmlongbench_rule")
READERS_AND_REPORTS = ("scoring.loaders", "scoring.mmlongbench", "scoring.mmlongbench_report", "scoring.writers", "scoring.cli")


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
    return (rel.parts[0] in ("views", "shell", "session") or rel.name == "app.py"
            or rel.name == "panel.py" or rel.name.endswith("_panel.py"))


def package(module: str) -> str:
    """The package of a dashboard module: `dashboard.evidence.locate` -> evidence; a module directly
    under dashboard/ is a package of its own (`dashboard.app` -> app); `dashboard` itself -> dashboard."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer(module: str) -> int:
    """The layer of a module's package (PACKAGE_LAYERS); a package not listed there fails here."""
    return PACKAGE_LAYERS[package(module)]


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
        "core/links.py", "core/analysis.py", "data/workspace.py", "overview/charts.py", "launch.py", "documents/pdf.py"}
    assert violations(helpers, ("streamlit",)) == []


def test_layers_import_downwards_only():
    graph = dashboard_graph()
    upward = [f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
              for a, targets in graph.items() for b in targets if layer(b) > layer(a)]
    assert upward == []


def annotations_layer(module: str) -> int:
    """The layer of a module of dashboard/annotations/ (ANNOTATIONS_LAYERS; a migration's revision
    with the schema; any other module above the store)."""
    name = module.removeprefix(ANNOTATIONS + ".")
    for placed, level in ANNOTATIONS_LAYERS.items():
        if name == placed or name.startswith(placed + "."):
            return level
    return ANNOTATIONS_USERS


def annotations_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside dashboard/annotations/ that do not run downwards: a database module importing
    one of its own layer or above (the package's other modules may import one another)."""
    inside = lambda m: m.startswith(ANNOTATIONS + ".")
    return [f"{a} (layer {annotations_layer(a)}) imports {b} (layer {annotations_layer(b)})"
            for a, targets in sorted(graph.items()) if inside(a) and annotations_layer(a) < ANNOTATIONS_USERS
            for b in sorted(targets) if inside(b) and annotations_layer(b) >= annotations_layer(a)]


def test_the_annotations_database_imports_downwards():
    graph = dashboard_graph()
    placed = {m.removeprefix(ANNOTATIONS + ".") for m in graph if m.startswith(ANNOTATIONS + ".")}
    assert set(ANNOTATIONS_LAYERS) - {"migrations.versions"} <= placed, "a layer's module is gone: the rule would pass on nothing"
    assert annotations_violations(graph) == []


def test_the_annotations_rule_would_catch_an_upward_or_sideways_import():
    m = lambda name: f"{ANNOTATIONS}.{name}"
    assert [annotations_layer(m(n)) for n in ("errors", "records", "schema", "migrations.versions.r2_schema_v2", "unavailable",
                                              "damage", "store", "exchange", "migrations.env")] == [0, 1, 2, 2, 3, 4, 5, 6, 6]
    graph = {m("records"): {m("errors")}, m("damage"): {m("records"), m("store")}, m("location"): {m("records")},
             m("exchange"): {m("store"), m("identity")}, m("store"): set(), m("errors"): set(), m("identity"): set()}
    assert annotations_violations(graph) == [
        f"{m('damage')} (layer 4) imports {m('store')} (layer 5)", f"{m('location')} (layer 1) imports {m('records')} (layer 1)"]


def test_no_import_cycles_in_the_dashboard():
    assert cycles_in(dashboard_graph()) == []


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {package(m): set() for m in graph}
    for m, targets in graph.items():
        out[package(m)] |= {package(t) for t in targets if package(t) != package(m)}
    return out


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk meets, each as the path around it (first node repeated)."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return cycles


def scoring_graph(folder: Path = SCORING) -> dict[str, set[str]]:
    """Module -> the modules of `scoring` it imports, wherever the import stands. A package's
    `__init__` is an edge only where its own code is used: `import package`, or a name taken from
    it that is not a submodule (`from .formats import records` is an edge to formats.records alone)."""
    modules = {module_name(p): p for p in python_files(folder)}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m, path in modules.items():
        for _, target, name in imported_names(path):
            if target not in modules or target == m:
                continue
            if modules[target].name == "__init__.py" and name is not None and f"{target}.{name}" in modules:
                continue  # `from package import submodule`: the submodule is the edge
            graph[m].add(target)
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_no_import_cycles_in_scoring():
    graph = scoring_graph()
    assert {"scoring.model", "scoring.metrics", "scoring.mmlongbench", "scoring.formats.docvqa"} <= set(graph)
    assert cycles_in(graph) == []
    assert cycles_in(package_graph(graph)) == []


def test_the_scoring_ground_floor_imports_nothing_of_scoring():
    for module in GROUND_FLOOR:
        path = ROOT / (module.replace(".", "/") + ".py")
        assert path.is_file(), module
        assert [f"{line}: {m}" for line, m in imported_modules(path) if top(m) == "scoring"] == []


def test_the_rules_reach_no_reader_or_report():
    graph = scoring_graph()
    assert set(RULES) | set(READERS_AND_REPORTS) <= set(graph), "a module named here is gone: the rule would pass on nothing"
    assert {rule: sorted(reachable(graph, rule) & set(READERS_AND_REPORTS)) for rule in RULES} == {rule: [] for rule in RULES}


def test_the_scoring_rules_see_a_circle_hidden_in_a_function(tmp_path, monkeypatch):
    """The circle this check was written for: model -> metrics at the top, metrics -> mmlongbench
    inside a function, mmlongbench -> model; and a ground floor importing text in a function."""
    folder = tmp_path / "scoring"
    (folder / "formats").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "model.py": "def f():\n    from .text import normalize_answer\n",
        "metrics.py": "from .model import GoldQuestion\ndef g():\n    from .mmlongbench import judge_mmlongbench\n",
        "mmlongbench.py": "from . import metrics\n",
        "text.py": "",
        "formats/__init__.py": "from . import docvqa\ndef detect(): ...\n",
        "formats/docvqa.py": "from .. import problems\n",
        "problems.py": "from .formats import detect\n",
    }
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    graph = scoring_graph(folder)
    assert graph["scoring.model"] == {"scoring.text"}
    assert graph["scoring.mmlongbench"] == {"scoring.metrics"}  # `from . import metrics`: the submodule, not __init__
    assert cycles_in(graph) == [
        ["scoring.formats", "scoring.formats.docvqa", "scoring.problems", "scoring.formats"],  # through __init__'s own code
        ["scoring.metrics", "scoring.mmlongbench", "scoring.metrics"],
    ]
    assert [m for _, m in imported_modules(folder / "model.py") if top(m) == "scoring"] == ["scoring.text", "scoring.text.normalize_answer"]


def test_every_dashboard_package_has_a_layer():
    packages = {package(m) for m in dashboard_graph()}
    assert packages >= {"core", "documents", "data", "shell", "session", "report", "views", "evidence"}
    assert sorted(packages - set(PACKAGE_LAYERS)) == []


def test_no_two_packages_import_each_other():
    """Package by package: no pair imports each other, directly or around a circle (a feature's panel
    importing the shell while the shell imports that feature's helpers would be one)."""
    assert cycles_in(package_graph(dashboard_graph())) == []


def test_the_package_cycle_check_sees_a_circle():
    graph = {"dashboard.shell.cache": {"dashboard.evidence.render"}, "dashboard.evidence.panel": {"dashboard.shell.viewstate"},
             "dashboard.evidence.render": set(), "dashboard.shell.viewstate": set()}
    assert package_graph(graph) == {"shell": {"evidence"}, "evidence": {"shell"}}
    assert cycles_in(package_graph(graph)) == [["evidence", "shell", "evidence"]]
    around = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles_in(around) == [["a", "b", "c", "a"]]
    assert cycles_in({"a": {"b"}, "b": {"c"}, "c": set()}) == []


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
    ("from .text import normalize_answer", ["scoring.text", "scoring.text.normalize_answer"]),
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
    chain = ["dashboard.resources", "dashboard.core.settings", "dashboard.documents.pdf", "dashboard.data.workspace",
             "dashboard.shell.cache", "dashboard.evidence.panel", "dashboard.report.build", "dashboard.session.load",
             "dashboard.views.overview"]
    assert [layer(m) for m in chain] == list(range(9))
    assert layer("dashboard.evidence.locate") == layer("dashboard.compare.panel")  # the features share a layer
    with pytest.raises(KeyError):
        layer(".".join(["dashboard", "unplaced", "module"]))  # a package nobody placed is not let through


def test_the_first_table_needs_no_scipy():
    """What the app imports to draw the leaderboard imports no scipy (scoring/deferred.py): scipy.stats alone
    took half a second of every start, before the first table, for intervals and tests drawn after it."""
    import subprocess
    import sys

    code = ("import sys, dashboard.session.load, dashboard.overview.panel, dashboard.shell.scorer\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_scipy_is_imported_in_the_background_once_a_page_is_drawn(tmp_path):
    """The leaderboard needs no scipy, but intervals and tests do: after a page is drawn the app imports
    scipy in a background thread (scoring.deferred.warm), so the first Compare of a new server does not pay
    the import in its own time (0.6-1 s of a fresh process's per-slice deltas at 20,000 questions)."""
    import os
    import subprocess
    import sys

    code = ("import sys\n"
            "from streamlit.testing.v1 import AppTest\n"
            "from scoring import deferred\n"
            "before = 'scipy.stats' in sys.modules\n"
            "at = AppTest.from_file('dashboard/app.py', default_timeout=120).run()\n"
            "assert not at.exception, at.exception\n"
            "thread = deferred._warming[0] if deferred._warming else None\n"
            "if thread is not None: thread.join(300)\n"
            "print(deferred.failed)\n"
            "print(before, thread is not None and thread.name, 'scipy.stats' in sys.modules,"
            " 'scipy.signal' in sys.modules, deferred.warm() is thread)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env["LENS_BENCHMARK"] = str(ROOT / "sample_runs")
    env["LENS_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    # the warm-up's own failure first, if any, then the server's output (the import's traceback is not printed)
    assert out.stdout.split()[-5:] == ["False", "lens-warm-scipy", "True", "True", "True"], (out.stdout[-1500:], out.stderr[-3000:])

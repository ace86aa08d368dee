"""Every LENS_* setting is declared once (dashboard/core/settings.py; the cache folder's and the engine's in
scoring/settings.py, which it lists) and documented in the settings table of docs/settings.md, which the
README points to; no other module spells a LENS_* name in its code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dashboard.core import settings

ROOT = Path(__file__).resolve().parent.parent


def readme_table() -> dict[str, str]:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8") + "\n\n"
    section = text[text.index("| variable"):]
    section = section[:section.index("\n\n")]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `(LENS_\w+)` \| ([^|]+) \|", section, re.M)}


def test_the_readme_lists_every_setting_with_its_default():
    assert "docs/settings.md" in (ROOT / "README.md").read_text(encoding="utf-8")  # the front door points to the table
    table = readme_table()
    assert set(table) == {s.name for s in settings.SETTINGS}
    assert {name: default.strip() for name, default in table.items()} == {s.name: s.default for s in settings.SETTINGS}


def test_no_other_module_spells_a_setting_name_in_code():
    """Docstrings and comments may name a variable; string constants in code may not."""
    found = []
    # the judge's three names are spelt once, where the command line (scoring, which imports no dashboard) reads them;
    # dashboard/core/settings.py declares its Settings with those names
    declared = (ROOT / "dashboard" / "core" / "settings.py", ROOT / "scoring" / "judge" / "client.py",
                ROOT / "scoring" / "settings.py")  # the cache folder's and the engine's, read by scoring too
    for path in sorted((ROOT / "dashboard").rglob("*.py")) + sorted((ROOT / "scoring").rglob("*.py")):
        if path in declared or "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and re.fullmatch(r"LENS_[A-Z_]+", node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert found == []


def test_settings_read_their_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "d"))
    assert settings.cache_root() == tmp_path / "c" and settings.data_dir() == tmp_path / "d"
    assert settings.RUNS.paths({"LENS_RUNS": f"a{__import__('os').pathsep}{__import__('os').pathsep}b"}) == ["a", "b"]
    assert settings.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "docbench-lens"
    assert settings.data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "docbench-lens"

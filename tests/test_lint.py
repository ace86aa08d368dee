"""The repository stays clean under its own linters: ruff over everything (pyproject.toml's
[tool.ruff]) and mypy over scoring/ and dashboard/ ([tool.mypy]). Both come with the test extra."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_scoring_and_dashboard_are_clean_under_mypy():
    """One run over both packages ([tool.mypy] files): checking the dashboard checks the scoring modules it
    imports, so two runs did most of scoring/ twice (9 s of the suite)."""
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    modules = sum(1 for top in ("scoring", "dashboard") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
    assert f"in {modules} source files" in done.stdout, done.stdout  # every module of both packages was checked


# ----------------------------------------------------------------------------- paths named in prose

import re  # noqa: E402

TOP = ("dashboard", "scoring", "tests", "bench", "sample_runs", "docs")
# `docs/…` is this repository's docs folder in the README and in docs/ itself; anywhere else it is a
# benchmark's folder of documents (`docs/doc_000001.pdf`), which is not a path of the repository
REPOSITORY_DOCS = ("README.md", "docs")
SKIP_PARTS = {".venv", ".git", "node_modules", "out", "__pycache__"}
# where the installed package puts what the checkout keeps elsewhere (pyproject.toml, setup.py)
INSTALLED = {"dashboard/sample_runs": "sample_runs", "dashboard/.streamlit": ".streamlit"}
PATH_RE = re.compile(r"(?<![\w/.\-])((?:" + "|".join(TOP) + r")/[\w/.\-]*[\w])([*<{]?)")
MODULE_RE = re.compile(r"(?<![\w/.\-])((?:dashboard|scoring)(?:\.\w+)+)")


# strings that look like module paths but name none on purpose
NOT_NAMES = {("tests/test_architecture.py", "dashboard.core.analysis.md_escape")}  # the import reader's test input


def _texts():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if path.suffix not in (".py", ".md") or SKIP_PARTS & set(rel.parts) or not path.is_file() \
                or path == Path(__file__).resolve():  # this file names what it looks for
            continue
        yield rel, path.read_text(errors="replace")


def _exists(name: str, glob: bool) -> bool:
    for installed, here in INSTALLED.items():
        if name == installed or name.startswith(installed + "/"):
            name = here + name[len(installed):]
    if name == "bench/out" or name.startswith("bench/out/"):  # what the benchmarks write: not in a checkout
        return True
    if glob:
        parent, _, stem = name.rpartition("/")
        return any(p.name.startswith(stem) for p in (ROOT / parent).glob("*")) if (ROOT / parent).is_dir() else False
    if (ROOT / name).exists():
        return True
    module, _, attribute = name.rpartition(".")  # `tests/browser_kit.serve`: a module file and a name in it
    source = ROOT / (module + ".py")
    return bool(module) and source.is_file() and _defines(source.read_text(errors="replace"), attribute)


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*[:=]|"
                     rf"^\s*from\s+\S+\s+import\s+.*\b{re.escape(name)}\b|^\s*import\s+.*\b{re.escape(name)}\b",
                     source, re.M) is not None


def _module_exists(dotted: str) -> bool:
    """`pkg.module[.attribute]`: the longest prefix that is a module or package of the checkout, then
    (if anything is left) its first remaining name defined or imported in that module."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:k])
        source = None
        if base.with_suffix(".py").is_file():
            source = base.with_suffix(".py").read_text(errors="replace")
        elif (base / "__init__.py").is_file():
            source = (base / "__init__.py").read_text(errors="replace")
            if k < len(parts) and (base / parts[k]).with_suffix(".py").is_file():
                continue  # cannot happen: the longer prefix was tried first
        elif base.is_dir() and k == len(parts):
            return True
        if source is not None:
            return k == len(parts) or _defines(source, parts[k])
    return False


def test_paths_named_in_docstrings_and_readmes_exist():
    """Every repository path (`dashboard/core/store.py`, `docs/teams.md`) and module
    (`dashboard.core.store.ScoreStore`) named in a docstring, comment, README or page of docs/ exists: the
    move into packages left 49 names of flat modules that were gone (issue 29.6), and the README's move
    into docs/ (issue 36) must leave no name behind either."""
    missing = []
    for rel, text in _texts():
        for m in PATH_RE.finditer(text):
            name, glob = m.group(1).rstrip("."), bool(m.group(2))
            if name.startswith("docs/") and rel.parts[0] not in REPOSITORY_DOCS:
                continue
            if not _exists(name, glob):
                missing.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {name}")
        for m in MODULE_RE.finditer(text):
            name = m.group(1).rstrip(".")
            if name.endswith((".py", ".md", ".json", ".jsonl", ".csv", ".toml")) or "__" in name:
                continue  # a file named by its module path, or an attribute such as dashboard.__file__
            if (str(rel), name) in NOT_NAMES:
                continue
            if not _module_exists(name):
                missing.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {name}")
    assert not missing, "named but not in the repository:\n" + "\n".join(missing)


HOLLOW = 5  # blank lines in a row: PEP 8 asks for two between top-level definitions


def test_no_hollow_blocks_where_code_was_cut():
    """No run of HOLLOW or more blank lines in a Python file (17 blocks of 10-50 were left where code
    was cut out: issue 29.6)."""
    hollow = []
    for rel, text in _texts():
        if rel.suffix != ".py":
            continue
        for m in re.finditer(r"(?:\n[ \t]*){" + str(HOLLOW + 1) + r",}\n", text):
            hollow.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 2}: {m.group(0).count(chr(10)) - 1} blank lines")
    assert not hollow, "\n".join(hollow)

"""The repository stands alone: a fresh clone has everything its documents point to and its tests read.

- every relative link of every Markdown file resolves to a file or folder inside the repository;
- no file names a place on the machine it was written on (a shared folder beside the repository,
  an absolute path under /work, /home or /root).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCES = {".git", ".venv", "build", "test-output", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
               ".hypothesis"}
TEXT = {".md", ".py", ".toml", ".txt", ".in", ".cfg", ".ini", ".yaml", ".yml", ".sh"}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MACHINE_PATHS = re.compile(r"\.\./shared\b|(?<![\w.])/(?:work|home|root)/")


def sources() -> list[Path]:
    out = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if path.is_file() and not (set(rel.parts) & NOT_SOURCES) and rel.parts[:2] != ("bench", "out") \
                and not any(p.endswith(".egg-info") for p in rel.parts) \
                and (path.suffix in TEXT or path.name in ("run", "MANIFEST.in")):
            out.append(path)
    return sorted(out)


FILES = sources()
MARKDOWN = [p for p in FILES if p.suffix == ".md"]


def test_the_walk_finds_the_documents():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "scoring/README.md", "tests/data/README.md", "pyproject.toml", ".ci/run"} <= names


@pytest.mark.parametrize("md", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_markdown_links_stay_inside_the_repository(md):
    broken = []
    for target in LINK.findall(md.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):  # a URL or an anchor
            continue
        resolved = (md.parent / target.split("#")[0]).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(target)
    assert broken == []


def test_no_file_names_a_path_of_the_machine():
    hits = []
    for path in FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if MACHINE_PATHS.search(line) and path != Path(__file__).resolve():
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert hits == []

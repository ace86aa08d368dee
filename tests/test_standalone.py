"""The repository stands alone: a fresh clone has everything its documents point to and its tests read.

- every relative link of every Markdown file resolves to a file or folder inside the repository, and a link to
  a heading (`docs/team.md#data-roots-and-uploads`, `#profiles`) to a heading that is there (the README's
  sections moved into docs/: a link may not point where a section was);
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
    assert {"README.md", "scoring/README.md", "tests/data/README.md", "pyproject.toml", ".ci/run",
            "docs/architecture.md", "docs/statistics.md", "docs/cli.md", "docs/screenshots.py"} <= names


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (letters, digits, `_` and `-` kept),
    each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(md: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (outside code blocks), a repeated one numbered as GitHub does."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            base = slug(m.group(1))
            out.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return out


def test_the_anchor_rule_is_githubs():
    assert slug("Many checkpoints: Trends, the question × run matrix and `--trend`") == \
        "many-checkpoints-trends-the-question--run-matrix-and---trend"
    assert slug("`report`: the stakeholder report") == "report-the-stakeholder-report"
    assert slug("Reading a user's files where they can be killed") == "reading-a-users-files-where-they-can-be-killed"


@pytest.mark.parametrize("md", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_links_to_a_heading_find_it(md):
    broken = []
    for target in LINK.findall(md.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or "#" not in target:
            continue
        path, _, anchor = target.partition("#")
        page = (md.parent / path).resolve() if path else md
        if page.suffix == ".md" and page.is_file() and anchor not in anchors(page):
            broken.append(target)
    assert broken == []


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

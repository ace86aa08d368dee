"""The README is a front door and docs/ holds the rest (issue 36.6):

- the README opens with what the tool is and who it is for, then a picture of the app, then the two commands --
  byte for byte the ones users copy and `.ci/run` runs -- as the first commands of the page; then the three
  jobs with a picture each; it stays short and links every page of docs/;
- every picture the README and docs/ show is a PNG that docs/screenshots.py makes, about 1,400 px wide and under
  300 KB, and every picture it makes is shown somewhere;
- docs/cli.md names every subcommand and every option of each (its reference is written by docs/cli_help.py from
  the parsers themselves).

Paths named in docs/ exist (tests/test_lint.py), its links and anchors resolve and it names no path of this
machine (tests/test_standalone.py), its settings table is the declared one (tests/test_settings.py).
"""

from __future__ import annotations

import importlib.util
import re
import struct
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
IMAGES = DOCS / "images"
# The two commands of the README's first lines, since the beginning: a user copies them, CI runs the second.
COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/docbench-lens"
    "                                    # start the app on sample_runs/",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' -c constraints.txt && .venv/bin/python -m pytest"
    "    # run all tests",
)
MAX_LINES = 250
MAX_BYTES = 300_000
WIDTH = 1400
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[\w-]*\n(.*?)^```", re.M | re.S)


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def module(name: str):
    """A script of docs/ (not part of the package), imported from its file."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", DOCS / f"{name}.py")
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


# ----------------------------------------------------------------------------- the front door


def test_the_two_commands_are_the_first_commands_byte_for_byte():
    readme = text(README)
    first = FENCE.search(readme)
    assert first is not None and first.group(1).splitlines() == list(COMMANDS)
    # what they run exists: the installed command, the test extra, the pins
    project = tomllib.loads(text(ROOT / "pyproject.toml"))["project"]
    assert project["scripts"]["docbench-lens"] == "dashboard.launch:main"
    assert "test" in project["optional-dependencies"] and (ROOT / "constraints.txt").is_file()
    # CI runs the README's test command (quietly)
    ci = COMMANDS[1].split("#")[0].strip().replace("pip install -e", "pip install -q -e")
    assert ci in text(ROOT / ".ci" / "run").splitlines()


def test_what_it_is_and_a_picture_come_before_the_commands():
    readme = text(README)
    before = readme[:readme.index(COMMANDS[0])]
    words = " ".join(before.split())
    for name in ("XL-DocBench", "DocVQA", "MMLongBench-Doc", "lmms-eval", "VLMEvalKit", "LLM judges",
                 "ML engineers"):
        assert name in words, name
    assert IMAGE.findall(before) == ["docs/images/overview.png"]


def test_three_jobs_each_with_a_picture():
    readme = text(README)
    jobs = re.split(r"^### ", readme[readme.index("## Three jobs"):readme.index("\n## ", readme.index("## Three jobs"))],
                    flags=re.M)[1:]
    assert [j.splitlines()[0] for j in jobs] == [
        "1. Inspect failures by hand", "2. Compare runs: what flipped, on which slices, whether it is real",
        "3. Show stakeholders where a model is weak"]
    assert [IMAGE.findall(j) for j in jobs] == [["docs/images/evidence.png"], ["docs/images/compare.png"],
                                                 ["docs/images/weak.png"]]


def test_the_readme_is_short_and_links_every_page_of_docs():
    readme = text(README)
    assert readme.count("\n") <= MAX_LINES
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert len(pages) >= 10
    assert [p for p in pages if f"](docs/{p})" not in readme] == []


# ----------------------------------------------------------------------------- pictures


def shown() -> dict[str, list[Path]]:
    """Each picture the README and docs/ show: its file -> the pages showing it."""
    out: dict[str, list[Path]] = {}
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in IMAGE.findall(text(page)):
            out.setdefault((page.parent / target).resolve().relative_to(ROOT).as_posix(), []).append(page)
    return out


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path.name} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_every_picture_is_a_small_png_the_script_makes():
    pictures = shown()
    made = {f"docs/images/{name}.png" for name in module("screenshots").SHOTS}
    assert set(pictures) == made  # every picture shown is made by the script, and every one it makes is shown
    assert sorted(p.name for p in IMAGES.iterdir()) == sorted(Path(m).name for m in made)  # nothing stale beside them
    for name in made:
        path = ROOT / name
        width, height = png_size(path)
        assert width == WIDTH and 600 <= height <= 2400, (name, width, height)
        assert path.stat().st_size <= MAX_BYTES, (name, path.stat().st_size)


def test_png_size_reads_the_header(tmp_path):
    fake = tmp_path / "x.png"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + struct.pack(">II", 1400, 900) + b"\x08\x06\x00\x00\x00")
    assert png_size(fake) == (1400, 900)


# ----------------------------------------------------------------------------- the command line's reference


def sections(page: str) -> dict[str, str]:
    """docs/cli.md's reference: each `### `command`` heading -> the text under it."""
    parts = re.split(r"^### `([^`]+)`\n", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_docs_cli_names_every_subcommand_and_option():
    page = sections(text(DOCS / "cli.md"))
    parsers = list(module("cli_help").parsers())
    names = [name for name, _ in parsers]
    assert {"docbench-lens", "docbench-lens serve", "docbench-lens score", "docbench-lens gate",
            "docbench-lens notes export"} <= set(names)
    missing = []
    for name, parser in parsers:
        if name not in page:
            missing.append(name)
            continue
        for action in parser._actions:
            missing += [f"{name} {o}" for o in action.option_strings
                        if o.startswith("--") and not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", page[name])]
    assert missing == [], "not in docs/cli.md (run .venv/bin/python docs/cli_help.py):\n" + "\n".join(missing)


def test_docs_cli_reference_holds_only_the_parsers_help():
    """Between the help markers is each parser's `--help` in a block under its heading, in the generator's order,
    and nothing else: a text written there by hand (it once held a paragraph on the server's start) is lost at
    the next `docs/cli_help.py`. (Blocks, not bytes: argparse formats help differently across Python versions.)"""
    cli_help = module("cli_help")
    page = text(DOCS / "cli.md")
    region = page.split(cli_help.BEGIN, 1)[1].split(cli_help.END, 1)[0]
    block = r"### `([^`\n]+)`\n\n```text\n(?:(?!```)[^\n]*\n)*```\n"
    assert re.fullmatch(rf"\n\n(?:{block}\n)*{block}\n", region), \
        "docs/cli.md's reference holds more than the parsers' help: move prose above it, then run docs/cli_help.py"
    assert re.findall(block, region) == [name for name, _ in cli_help.parsers()]

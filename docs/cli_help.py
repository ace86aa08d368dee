"""Writes the reference part of docs/cli.md -- every subcommand's `--help`, nested subcommands (`notes export`,
`notes import`) included -- from the parsers themselves, so that the page lists every option there is:

    .venv/bin/python docs/cli_help.py            # rewrite docs/cli.md between its help markers
    .venv/bin/python docs/cli_help.py --check    # exit 1 when docs/cli.md is not what it would write

The help is formatted 100 columns wide whatever the terminal, with the defaults a user sees under `~`. Not part of the package: nothing imports it
but tests/test_docs.py, which checks that docs/cli.md names every option of every subcommand.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"
BEGIN, END = "<!-- help:begin -->", "<!-- help:end -->"
COLUMNS = "100"
HOME = "/HOME"  # the home folder while the help is formatted, written `~` in the page


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command line, parser) of `docbench-lens`, each subcommand and each subcommand's own subcommands, in
    the order `docbench-lens --help` lists them."""
    from dashboard import launch

    yield "docbench-lens", launch.command_parser()
    for command in launch.subcommands():
        name = f"docbench-lens {command.name}"
        parser = command.parser(name)
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    yield f"{name} {sub}", subparser


def reference() -> str:
    """The help of every parser, as Markdown. Defaults that name a folder of this machine (the judge's cache,
    the user data folder) are written as a user would read them, under `~`: the help is formatted with HOME
    set to a stand-in (then written `~`) and no XDG_* or LENS_* variable."""
    saved = dict(os.environ)
    try:
        for key in [k for k in os.environ if k.startswith(("XDG_", "LENS_"))]:
            del os.environ[key]
        os.environ.update({"COLUMNS": COLUMNS, "HOME": HOME})
        blocks = [f"### `{name}`\n\n```text\n{parser.format_help().rstrip().replace(HOME, '~')}\n```\n"
                  for name, parser in parsers()]
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return "\n".join(blocks)


def rewritten(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{reference()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether docs/cli.md is up to date (exit 1 if not)")
    args = parser.parse_args(argv)
    text = CLI_MD.read_text(encoding="utf-8")
    new = rewritten(text)
    if args.check:
        if new != text:
            print("docs/cli.md is not what docs/cli_help.py writes: run it", file=sys.stderr)
            return 1
        return 0
    CLI_MD.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

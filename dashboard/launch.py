"""`docbench-lens`: start the dashboard from an installed package, in any working directory.

    docbench-lens [--benchmark DIR] [--runs FILE_OR_DIR ...] [--scores FILE ...] [--annotations PATH] [--port N] [--headless]

runs `streamlit run <installed dashboard/app.py> [--server.port N] -- <the app's arguments>`. The app's
settings (upload size, theme, no usage statistics) come from the project's `.streamlit/config.toml`:
Streamlit is started in the folder that holds it (dashboard.resources.SETTINGS_HOME); without --benchmark the app opens the sample benchmark that ships
with the package. Paths are made absolute here, so what the app shows does not depend on where it runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from dashboard.resources import APP, SETTINGS_HOME
from scoring import __version__

INTERRUPTED = 130  # the shell's exit status for a program stopped with Ctrl+C
MAX_PORT = 65_535


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"expected a port number in 1..{MAX_PORT}, got {port}")
    return port


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="docbench-lens", description="Start the DocBench Lens dashboard (Streamlit).")
    ap.add_argument("--benchmark", metavar="DIR", help="benchmark folder: gold *.jsonl, documents.jsonl, docs/, runs/, "
                                                       "results/ (default: the bundled sample benchmark)")
    ap.add_argument("--runs", nargs="+", action="extend", default=[], metavar="FILE_OR_DIR",
                    help="prediction files, or folders of them, beside the benchmark's runs/")
    ap.add_argument("--scores", nargs="+", action="extend", default=[], metavar="FILE",
                    help="score files (scores.jsonl, summary.json, *.report.json, *.per_question.csv)")
    ap.add_argument("--annotations", metavar="PATH", help="the annotations database (default: annotations.sqlite3 in "
                                                          "$LENS_DATA_DIR, else the user data folder)")
    ap.add_argument("--port", type=_port, help="the server's port (default: Streamlit's, 8501)")
    ap.add_argument("--headless", action="store_true", help="do not open a browser window")
    ap.add_argument("--version", action="version", version=f"docbench-lens {__version__}")
    return ap


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def build_command(args: argparse.Namespace) -> list[str]:
    """The `streamlit run` command line for parsed arguments."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP)]
    if args.port is not None:
        cmd += ["--server.port", str(args.port)]
    if args.headless:
        cmd += ["--server.headless", "true"]
    app_args: list[str] = []
    if args.benchmark:
        app_args += ["--benchmark", _absolute(args.benchmark)]
    if args.runs:
        app_args += ["--runs", *map(_absolute, args.runs)]
    if args.scores:
        app_args += ["--scores", *map(_absolute, args.scores)]
    if args.annotations:
        app_args += ["--annotations", _absolute(args.annotations)]
    return cmd + (["--", *app_args] if app_args else [])


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.benchmark and not Path(args.benchmark).expanduser().is_dir():
        given = Path(args.benchmark).expanduser()
        if given.exists():  # a gold or run file given where its folder was meant
            ap.error(f"--benchmark {args.benchmark}: is a file, not a folder; give the folder that holds the gold "
                     f"files (here perhaps {given.parent}), or pass a run file with --runs")
        ap.error(f"--benchmark {args.benchmark}: no such folder")
    cmd = build_command(args)
    if os.name == "posix":  # become the server: signals (Ctrl+C, a service manager's TERM) reach it directly
        os.chdir(SETTINGS_HOME)
        os.execv(cmd[0], cmd)
    try:
        return subprocess.call(cmd, cwd=SETTINGS_HOME)
    except KeyboardInterrupt:
        return INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

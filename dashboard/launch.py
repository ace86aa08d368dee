"""`docbench-lens`: the one command -- the dashboard, and every program of the project as a subcommand.

    docbench-lens [serve options]                 start the app (the bundled sample without --benchmark)
    docbench-lens SUBCOMMAND [options]            serve, score, slices, gate, report, evidence, notes, ingest
    docbench-lens --help | SUBCOMMAND --help      the subcommands; one's options, outputs and exit codes

`SUBCOMMANDS` lists them: scoring's (score, slices, gate, ingest) come from `scoring.cli.subcommands`
(scoring never imports the dashboard: `ingest` is handed the dashboard's reading of a benchmark here),
the dashboard's (serve, report, evidence, notes) are this module's and the features' `__main__.py`
(whose `python -m dashboard.report`, `.evidence` and `.annotations` stay as aliases). A subcommand's
modules are imported only when it runs or shows its help.

`serve` (the default when the first argument is an option, or there is none):

    docbench-lens [serve] [--benchmark DIR] [--runs FILE_OR_DIR ...] [--scores FILE ...] [--annotations PATH_OR_URL]
                          [--address HOST] [--port N] [--headless]

runs `streamlit run <installed dashboard/app.py> --server.address HOST [--server.port N] -- <the app's
arguments>` through `python -m dashboard.session.server`, which is Streamlit's own command line in a process that
also reads the benchmark ahead, while the server starts (dashboard/session/server.py). The server listens on 127.0.0.1 unless `--address` (or LENS_ADDRESS) says otherwise, so
a laptop's benchmark and notes are not open to its network; a team binds each server to an address
only its proxy reaches (docs/team.md). The app's
settings (upload size, theme, no usage statistics) come from the project's `.streamlit/config.toml`:
Streamlit is started in the folder that holds it (dashboard.resources.SETTINGS_HOME); without --benchmark the app opens the sample benchmark that ships
with the package. Paths are made absolute here, so what the app shows does not depend on where it runs.

`--annotations` takes a file (or `sqlite:///PATH`: made an absolute path) or a PostgreSQL URL
(`postgresql://user:password@host:port/database`), which reaches the server as LENS_DATABASE_URL in
its environment, not on its command line, where every user of the machine could read the password
(`ps`); a URL is never printed with its password.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.core import settings
from dashboard.core.settings import DATABASE_URL
from dashboard.resources import APP, SETTINGS_HOME
from scoring import __version__
from scoring.redact import redact_url

if TYPE_CHECKING:
    from scoring.cli import Subcommand

INTERRUPTED = 130  # the shell's exit status for a program stopped with Ctrl+C
MAX_PORT = 65_535
PROG = "docbench-lens"
SERVE = "serve"
# the order `docbench-lens --help` lists them in
SUBCOMMANDS = (SERVE, "score", "slices", "gate", "report", "evidence", "notes", "ingest")
SERVE_EPILOG = """\
the app: http://HOST:PORT in a browser (127.0.0.1:8501 unless --address, --port say otherwise); without
--benchmark it opens the sample benchmark that ships with the package.

exit codes:
  0  the server was stopped
  2  usage: an unknown option or a bad value, no such --benchmark folder, an --annotations URL that is
     not sqlite:///PATH or postgresql://...
  130  stopped with Ctrl+C
"""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"expected a port number in 1..{MAX_PORT}, got {port}")
    return port


def _address(text: str) -> str:
    if not text.strip() or any(c.isspace() or c in "/@?#" for c in text.strip()):
        raise argparse.ArgumentTypeError(f"expected a host name or an IP address, got {text!r}")
    return text.strip()


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """`serve`'s parser: the app's options."""
    ap = argparse.ArgumentParser(prog=prog, description="Start the DocBench Lens dashboard (Streamlit).", epilog=SERVE_EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", metavar="DIR", help="benchmark folder: gold *.jsonl, documents.jsonl, docs/, runs/, "
                                                       "results/ (default: the bundled sample benchmark)")
    ap.add_argument("--runs", nargs="+", action="extend", default=[], metavar="FILE_OR_DIR",
                    help="prediction files, or folders of them, beside the benchmark's runs/")
    ap.add_argument("--scores", nargs="+", action="extend", default=[], metavar="FILE",
                    help="score files (scores.jsonl, summary.json, *.report.json, *.per_question.csv)")
    ap.add_argument("--annotations", metavar="PATH_OR_URL",
                    help="the annotations database: a file, sqlite:///PATH or postgresql://user:password@host:port/database "
                         "(default: $LENS_DATABASE_URL, else annotations.sqlite3 in $LENS_DATA_DIR or the user data folder)")
    ap.add_argument("--address", type=_address, metavar="HOST",
                    help="the address the server listens on (default: $LENS_ADDRESS, else 127.0.0.1: this machine alone; "
                         "0.0.0.0 is every interface, open to the network -- for a team, an address only the proxy reaches)")
    ap.add_argument("--port", type=_port, help="the server's port (default: Streamlit's, 8501)")
    ap.add_argument("--headless", action="store_true", help="do not open a browser window")
    ap.add_argument("--version", action="version", version=f"docbench-lens {__version__}")
    return ap


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def annotations_location(value: str) -> tuple[list[str], dict[str, str]]:
    """(the app's arguments, the server's environment) for `--annotations VALUE`: a file path or
    sqlite:///PATH -> `--annotations ABSOLUTE_PATH`; a postgresql:// (postgres://) URL ->
    LENS_DATABASE_URL (never on a command line; the app reads it as dashboard.annotations.location does).
    ValueError, naming the URL without its password, for any other."""
    if "://" not in value:
        return ["--annotations", _absolute(value)], {}
    scheme, rest = value.split("://", 1)
    scheme = scheme.lower()
    if scheme in ("sqlite", "sqlite+pysqlite"):
        if not rest.startswith("/") or rest == "/":
            raise ValueError(f"{redact_url(value)}: an SQLite URL is sqlite:///PATH (sqlite:////abs/path for an absolute one)")
        return ["--annotations", _absolute(rest[1:])], {}
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        host, _, database = rest.rpartition("@")[2].partition("/")
        if not host or not database.split("?", 1)[0]:
            raise ValueError(f"{redact_url(value)} names no server or no database (postgresql://user:password@host:port/database)")
        return [], {DATABASE_URL.name: value}
    raise ValueError(f"{redact_url(value)}: only sqlite:///PATH and postgresql://user@host:port/database are supported")


def build_environment(args: argparse.Namespace, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: this one, with LENS_DATABASE_URL set when --annotations is a server's URL."""
    env = dict(os.environ if environ is None else environ)
    if args.annotations:
        env.update(annotations_location(args.annotations)[1])
    return env


def listen_address(args: argparse.Namespace, environ: dict[str, str] | None = None) -> str:
    """Where the server listens: `--address`, else LENS_ADDRESS, else 127.0.0.1 (settings.address)."""
    return getattr(args, "address", None) or settings.address(environ)


def build_command(args: argparse.Namespace) -> list[str]:
    """The `streamlit run` command line for parsed arguments (through dashboard/session/server.py: the benchmark read ahead)."""
    cmd = [sys.executable, "-m", "dashboard.session.server", "run", str(APP)]
    if args.port is not None:
        cmd += ["--server.port", str(args.port)]
    if args.headless:
        cmd += ["--server.headless", "true"]
    cmd += ["--server.address", listen_address(args)]
    app_args: list[str] = []
    if args.benchmark:
        app_args += ["--benchmark", _absolute(args.benchmark)]
    if args.runs:
        app_args += ["--runs", *map(_absolute, args.runs)]
    if args.scores:
        app_args += ["--scores", *map(_absolute, args.scores)]
    if args.annotations:
        app_args += annotations_location(args.annotations)[0]
    return cmd + (["--", *app_args] if app_args else [])


def serve(argv: Sequence[str], prog: str = PROG) -> int:
    """`docbench-lens [serve] ...`: become the app's server (the process is replaced on POSIX)."""
    ap = build_parser(prog)
    args = ap.parse_args(list(argv))
    if args.benchmark and not Path(args.benchmark).expanduser().is_dir():
        given = Path(args.benchmark).expanduser()
        if given.exists():  # a gold or run file given where its folder was meant
            ap.error(f"--benchmark {args.benchmark}: is a file, not a folder; give the folder that holds the gold "
                     f"files (here perhaps {given.parent}), or pass a run file with --runs")
        ap.error(f"--benchmark {args.benchmark}: no such folder")
    if args.annotations:
        try:
            annotations_location(args.annotations)
        except ValueError as exc:  # the sentence names the URL without its password
            ap.error(f"--annotations: {exc}")
    cmd, env = build_command(args), build_environment(args)
    if os.name == "posix":  # become the server: signals (Ctrl+C, a service manager's TERM) reach it directly
        os.chdir(SETTINGS_HOME)
        os.execve(cmd[0], cmd, env)
    try:
        return subprocess.call(cmd, cwd=SETTINGS_HOME, env=env)
    except KeyboardInterrupt:
        return INTERRUPTED


# ----------------------------------------------------------------------------- the subcommands


def _ingest_load(args: argparse.Namespace) -> Any:
    """`ingest`'s reading and scoring of a benchmark's files: the app's own (dashboard/data/ingest.py)."""
    from dashboard.data.ingest import load

    return load(args)


def _report_parser(prog: str) -> argparse.ArgumentParser:
    from dashboard.report.__main__ import build_parser as report_parser

    return report_parser(prog)


def _report(argv: list[str], prog: str) -> int:
    from dashboard.report.__main__ import main as report_main

    return report_main(argv, prog)


def _evidence_parser(prog: str) -> argparse.ArgumentParser:
    from dashboard.evidence.__main__ import build_parser as evidence_parser

    return evidence_parser(prog)


def _evidence(argv: list[str], prog: str) -> int:
    from dashboard.evidence.__main__ import main as evidence_main

    return evidence_main(argv, prog)


def _notes_parser(prog: str) -> argparse.ArgumentParser:
    from dashboard.annotations.__main__ import build_parser as notes_parser

    return notes_parser(prog)


def _notes(argv: list[str], prog: str) -> int:
    from dashboard.annotations.__main__ import main as notes_main

    return notes_main(argv, prog)


def subcommands() -> list[Subcommand]:
    """Every subcommand of `docbench-lens`, in SUBCOMMANDS' order."""
    from scoring.cli import Subcommand
    from scoring.cli import subcommands as scoring_subcommands

    found = {c.name: c for c in scoring_subcommands(ingest_load=_ingest_load)}
    found[SERVE] = Subcommand(SERVE, "start the dashboard (the default: docbench-lens alone)", build_parser, serve)
    found["report"] = Subcommand("report", "write the stakeholder report: one HTML file", _report_parser, _report)
    found["evidence"] = Subcommand("evidence", "locate evidence quotes and answers on the documents' pages",
                                   _evidence_parser, _evidence)
    found["notes"] = Subcommand("notes", "export or import triage notes, tags and gold corrections", _notes_parser, _notes)
    return [found[name] for name in SUBCOMMANDS]


def command_parser(commands: Sequence[Subcommand] | None = None) -> argparse.ArgumentParser:
    """The parser of `docbench-lens --help`: the subcommands, one line each (each one's own parser is
    built when it runs: `Subcommand.parser`)."""
    commands = subcommands() if commands is None else commands
    ap = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, usage="%(prog)s [-h] [--version] [SUBCOMMAND] [options]",
        description="DocBench Lens: error analysis for document question-answering benchmarks (XL-DocBench, DocVQA,\n"
                    "MMLongBench-Doc) and the runs scored on them, in an app and on the command line.\n"
                    "`docbench-lens` alone starts the app on the bundled sample; `docbench-lens SUBCOMMAND --help`\n"
                    "lists a subcommand's options, outputs and exit codes.",
        epilog="aliases: `python -m scoring` and `docbench-score` are `docbench-lens score`; `python -m dashboard.report`,\n"
               "`python -m dashboard.evidence` and `python -m dashboard.annotations` are `report`, `evidence`, `notes`.")
    ap.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = ap.add_subparsers(title="subcommands", dest="subcommand", metavar="SUBCOMMAND")
    for c in commands:
        sub.add_parser(c.name, help=c.summary, add_help=False)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """`docbench-lens ARGS`: the subcommand the first argument names; the app (`serve`) when it is an
    option or there is none, as `docbench-lens --benchmark DIR` always started it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        return serve(argv)
    commands = subcommands()
    chosen = next((c for c in commands if c.name == argv[0]), None)
    if chosen is None:  # --help, or a name that is no subcommand: argparse lists them (exit 0, or 2)
        command_parser(commands).parse_args(argv)
        return 2
    return chosen.run(argv[1:], f"{PROG} {chosen.name}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

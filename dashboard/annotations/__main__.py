"""`docbench-lens notes export|import` (alias `python -m dashboard.annotations`): a benchmark's
annotations (triage notes, tags, gold corrections, saved slices) to and from a file.

    docbench-lens notes export --benchmark DIR --output notes.jsonl [--csv] [--annotations PATH]
    docbench-lens notes import --benchmark DIR FILE [--annotations PATH]

The benchmark's identity comes from its gold (`_gold_of`). What was done goes to stdout, each
problem to stderr as `file:line: message`. Exit 0 when the export was written or the import file
was read (something was imported, or it held nothing new); 1 when a file or the database could not
be read or written, or every record of the import was bad; 2 on a usage error. Never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from scoring.loaders import load_gold
from scoring.model import GoldQuestion
from scoring.problems import ERROR, LoadResult, Problem

from .errors import AnnotationsUnavailable, InvalidInput
from .exchange import RECOVER, import_file, records, write_export
from .identity import benchmark_identity
from .store import AnnotationStore

USAGE, FAILED = 2, 1


def _gold_of(benchmark_dir: Path) -> LoadResult[GoldQuestion]:
    """The benchmark's gold questions exactly as the app reads them (dashboard.data.workspace's
    discovery: the top-level gold *.jsonl but documents.jsonl and files that hold no gold, in the
    app's order; a clone of MMLongBench-Doc by its own loader), so that the identity is the app's."""
    from dashboard.core.paths import Sources
    from dashboard.data.workspace import discover, load_workspace

    src = Sources(benchmark=benchmark_dir)
    disc = discover(src)
    if disc.layout != "lens":  # another layout's gold comes from its own loader
        return load_workspace(src).gold
    if not disc.gold:
        return LoadResult(problems=[p for p in disc.problems if p.severity == ERROR] or [
            Problem.error(str(benchmark_dir), None, None, "gold question files (*.jsonl)", "none found")])
    return load_gold(disc.gold)


def _say_problem(p: Problem) -> None:
    print(f"{p.location}: {p.message}", file=sys.stderr)


EPILOG = """\
exit codes:
  0  the export was written, or the import file was read (something imported, or nothing new)
  1  a file or the database could not be read or written, or every record of the import was bad
  2  usage: an unknown option, a bad value, no such --benchmark folder
"""


def build_parser(prog: str = "python -m dashboard.annotations") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Export or import the triage notes, tags, gold corrections and "
                                                        "saved slices of a benchmark.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, metavar="{export,import}")
    ex = sub.add_parser("export", help="write the benchmark's annotations to a JSONL (or CSV) file",
                        description="Write the benchmark's annotations to a JSONL (or CSV) file: one record per note,\n"
                                    "correction or saved slice, keyed by the benchmark's identity (from its gold).",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ex.add_argument("--benchmark", required=True, metavar="DIR", help="benchmark folder (its gold *.jsonl give its identity)")
    ex.add_argument("--output", required=True, metavar="FILE", help="file to write (a .csv name writes CSV)")
    ex.add_argument("--csv", action="store_true", help="write CSV instead of JSONL")
    im = sub.add_parser("import", help="merge a JSONL or CSV file of annotations into the database",
                        description="Merge a file written by export (JSONL, or CSV by its .csv name) into the database:\n"
                                    "what is new is added, each bad record named on stderr.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    im.add_argument("--benchmark", required=True, metavar="DIR", help="benchmark folder (its gold *.jsonl give its identity)")
    im.add_argument("file", metavar="FILE", help="a file written by export (JSONL, or CSV by its .csv name)")
    for p in (ex, im):
        p.add_argument("--annotations", metavar="PATH",
                       help="the annotations database (default: $LENS_DATA_DIR/annotations.sqlite3, else "
                            "$XDG_DATA_HOME/docbench-lens/annotations.sqlite3, else ~/.local/share/docbench-lens/...)")
    return ap


def _identity(benchmark: Path) -> tuple[str, set[str]] | None:
    gold = _gold_of(benchmark)
    if not gold.items:
        for p in gold.errors[:5] or gold.problems[:5]:
            _say_problem(p)
        print(f"error: no gold questions could be read in {benchmark}, so its identity is unknown", file=sys.stderr)
        return None
    return benchmark_identity(gold.items), {q.qid for q in gold.items}


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' * (n != 1)}"


def _export(args: argparse.Namespace, store: AnnotationStore, identity: str) -> int:
    fmt = "csv" if args.csv or str(args.output).lower().endswith(".csv") else "jsonl"
    if not store.readable and store.path.exists() and store.problem is not None:
        print(f"error: {store.problem.message}", file=sys.stderr)
        return FAILED
    bad: list[str] = []
    try:
        count = write_export(store, identity, args.output, fmt=fmt, bad=bad)
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return FAILED
    kinds = Counter(r["kind"] for r in records(store, identity))
    slices = f", {_count(kinds['slice'], 'saved slice')}" if kinds["slice"] else ""  # a saved slice is not a correction
    print(f"wrote {_count(count, 'annotation')} ({_count(kinds['note'], 'note')}, {_count(kinds['correction'], 'correction')}{slices}) "
          f"of benchmark {identity} to {args.output} ({fmt.upper()}), from {store.path}")
    if bad:  # the export holds what could be read; each damaged row is named, with the way out
        for row in bad:
            print(f"{store.path}: damaged row left out: {row}", file=sys.stderr)
        print(f"warning: {_count(len(bad), 'damaged row')} of {store.path} could not be exported. {RECOVER}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace, store: AnnotationStore, identity: str, qids: set[str]) -> int:
    if store.problem is not None:
        print(f"error: {store.problem.message}", file=sys.stderr)
        return FAILED
    result = import_file(store, identity, args.file, question_ids=qids)
    for p in result.problems:
        _say_problem(p)
    if result.unreadable:
        print(f"error: {result.summary()}", file=sys.stderr)
        return FAILED
    print(f"{result.summary()} into {store.path} (benchmark {identity})")
    if result.lines and result.skipped == result.lines:
        return FAILED
    return 0


def main(argv: Sequence[str] | None = None, prog: str = "python -m dashboard.annotations") -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage
        return exc.code if isinstance(exc.code, int) else USAGE
    benchmark = Path(args.benchmark)
    if not benchmark.is_dir():
        print(f"error: --benchmark {benchmark}: no such folder", file=sys.stderr)
        return USAGE
    try:
        found = _identity(benchmark)
        if found is None:
            return FAILED
        identity, qids = found
        store = AnnotationStore(args.annotations, read_only=args.command == "export")  # export writes nothing there
        if args.command == "export":
            return _export(args, store, identity)
        return _import(args, store, identity, qids)
    except (AnnotationsUnavailable, InvalidInput) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback: say what failed
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return FAILED


if __name__ == "__main__":
    sys.exit(main())

"""The options of `docbench-lens score` (`python -m scoring`), `slices` and `gate`: one definition.

Every option is declared once here (the finder's, the gate's and the trend's in scoring/gate.py, the
judge's in scoring/judge/cli.py, each module's `add_arguments` recorded by `Recorder`), and each
command line's parser is built from that one list:

- `build_parser(prog, command)`: the parser whose --help a user reads: every option `command` takes
  (score: all of them; slices and gate: the ones of the finder and of the gate, with the inputs);
- `parse(argv, prog, command)`: the arguments parsed for the kind of input they name (`kind_of`:
  --profile, else what the files are) by the same list narrowed to that kind's options (`view`), so
  that an option of another kind is a usage error naming the kind it belongs to (harness outputs:
  named on stderr and ignored, as `python -m scoring` always did), and every option any kind reads
  is on the namespace, at its default when not given.

Kinds of input: BENCHMARK (a benchmark's gold JSONL and prediction files: XL-DocBench, DocVQA;
scoring/cli.py), MMLONGBENCH (MMLongBench-Doc's samples.json and result files:
scoring/mmlongbench_cli.py), HARNESS (an lmms-eval, VLMEvalKit or LongDocURL output as the harness
left it: scoring/harness_cli.py).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__, gate
from .formats.xldocbench import DEFAULT_GOLD
from .judge import cli as judge_cli
from .profiles import DEFAULT_PROFILE, HARNESS_PROFILE_NAMES, HARNESS_PROFILES, MMLONGBENCH_PROFILE, PROFILES

__all__ = ["BENCHMARK", "MMLONGBENCH", "HARNESS", "SCORE", "SLICES", "GATE", "COMMANDS", "build_parser", "parse",
           "kind_of", "Recorder"]

BENCHMARK, MMLONGBENCH, HARNESS = "benchmark", "mmlongbench-doc", "harness"
KIND_TEXT = {
    BENCHMARK: "a benchmark's gold and prediction files (XL-DocBench, DocVQA)",
    MMLONGBENCH: "MMLongBench-Doc's files (--profile mmlongbench-doc, or a samples.json as the gold)",
    HARNESS: "harness outputs (lmms-eval, VLMEvalKit, LongDocURL)",
}
SCORE, SLICES, GATE = "score", "slices", "gate"
COMMANDS = (SCORE, SLICES, GATE)

# the options one or two kinds of input take (every other option is every kind's)
ONLY: dict[str, tuple[str, ...]] = {
    "data_dir": (BENCHMARK, MMLONGBENCH),
    "prediction_field": (BENCHMARK,),
    "ignore_missing": (BENCHMARK,),
    "categories_csv": (BENCHMARK,),
    "output_txt": (MMLONGBENCH,),
    "all_evals": (HARNESS,),
}
INPUTS = ("predictions", "gold_files", "data_dir", "profile", "prediction_field", "ignore_missing", "all_evals")
FINDER = ("weak_slices", "slice_metric", "fdr", "fdr_method", "min_questions", "min_documents")
GATE_OPTIONS = ("baseline", "compare_json", "min_gap", "gate_metric", "inconclusive", "trend", "steps",
                "slice_metric", "fdr", "fdr_method", "min_questions", "min_documents")
# what `slices` and `gate` take (score: everything); and what they imply
TAKES: dict[str, frozenset[str]] = {SLICES: frozenset(INPUTS + FINDER), GATE: frozenset(INPUTS + GATE_OPTIONS)}
IMPLIED: dict[str, dict[str, Any]] = {GATE: {"fail_on_regression": True}}
REQUIRED: dict[str, frozenset[str]] = {SLICES: frozenset({"weak_slices"})}
ONE_RUN = ("a prediction file, an MMLongBench-Doc result file, or one run's harness output (an lmms-eval model folder or "
           "samples file, a VLMEvalKit model folder or table, LongDocURL's results_<model>.jsonl)")
HELP: dict[str, dict[str, str]] = {
    SLICES: {"predictions": f"the run: {ONE_RUN}"},
    GATE: {"predictions": f"the new run (with --baseline): {ONE_RUN}; or a training run's checkpoints (with --trend): "
                          "prediction or result files, or harness outputs holding them"},
}
# --profile's default per kind
PROFILE_DEFAULT = {BENCHMARK: DEFAULT_PROFILE, MMLONGBENCH: MMLONGBENCH_PROFILE, HARNESS: None}


# ----------------------------------------------------------------------------- one declaration, several parsers


@dataclass
class Option:
    flags: tuple[str, ...]
    kwargs: dict[str, Any]

    @property
    def dest(self) -> str:
        if "dest" in self.kwargs:
            return str(self.kwargs["dest"])
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")


@dataclass
class Group:
    title: str | None
    description: str | None = None
    options: list[Option] = field(default_factory=list)

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.options.append(Option(flags, kwargs))


class Recorder:
    """Stands in for an ArgumentParser while modules declare their options (`add_argument_group`,
    `add_argument`, `epilog`, `formatter_class`), so that one declaration builds several parsers
    (`replay`)."""

    def __init__(self) -> None:
        self.groups: list[Group] = [Group(None)]
        self.epilog: str | None = None
        self.formatter_class: Any = None

    def add_argument_group(self, title: str | None = None, description: str | None = None) -> Group:
        group = Group(title, description)
        self.groups.append(group)
        return group

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        self.groups[0].add_argument(*flags, **kwargs)

    def options(self) -> list[Option]:
        return [o for g in self.groups for o in g.options]

    def replay(self, ap: argparse.ArgumentParser, keep: Callable[[str], bool],
               override: dict[str, dict[str, Any]] | None = None) -> None:
        """The options `keep` keeps (by dest), each with `override`'s keyword arguments on top, onto `ap`."""
        override = override or {}
        for g in self.groups:
            kept = [o for o in g.options if keep(o.dest)]
            if not kept:
                continue
            target: Any = ap if g.title is None else ap.add_argument_group(g.title, g.description)
            for o in kept:
                target.add_argument(*o.flags, **{**o.kwargs, **override.get(o.dest, {})})


def _own_arguments(rec: Recorder) -> None:
    i = rec.add_argument_group("inputs (the kind of input is chosen by --profile, else by the files: see below)")
    i.add_argument("--predictions", nargs="+", required=True, metavar="PATH",
                   help="the runs: prediction files (JSON or JSONL), MMLongBench-Doc result files "
                        "(results/res_<model>.json), or harness outputs (an lmms-eval --output_path, a VLMEvalKit "
                        "--work-dir, a model folder in either, one of their files; LongDocURL's results_<model>.jsonl)")
    i.add_argument("--gold-files", nargs="+", metavar="F",
                   help="gold question files, read in this order (default: qa_single_doc.jsonl and qa_cross_doc.jsonl "
                        "in --data-dir); MMLongBench-Doc: its data/samples.json; harness outputs: optional, the "
                        "benchmark's gold the runs are joined to (else the gold the files state)")
    i.add_argument("--data-dir", metavar="DIR",
                   help="the folder holding the default gold files (qa_single_doc.jsonl, qa_cross_doc.jsonl; or "
                        "MMLongBench-Doc's samples.json) (default ./data)")
    i.add_argument("--profile", choices=[*PROFILES, *HARNESS_PROFILES], metavar="NAME",
                   help=f"the scoring rules: {', '.join([*PROFILES, *HARNESS_PROFILES])} (see profiles below; default "
                        f"{DEFAULT_PROFILE}, {MMLONGBENCH_PROFILE} for its files, a harness's own for its outputs)")
    i.add_argument("--prediction-field", metavar="NAME", help="prediction files: take the prediction from this field only")
    i.add_argument("--ignore-missing", action="store_true",
                   help="prediction files: score only gold questions that have a prediction")
    i.add_argument("--all-evals", action="store_true", help="VLMEvalKit: also score older eval ids (default: the newest only)")
    o = rec.add_argument_group("outputs")
    o.add_argument("--output", metavar="PATH",
                   help="write the JSON report (a folder of <run>.json when several prediction or result files)")
    o.add_argument("--per-question-csv", metavar="PATH",
                   help="write the per-question CSV (a folder of <run>.csv when several prediction or result files)")
    o.add_argument("--no-per-question-json", action="store_true", help="leave the per-question rows out of the JSON report")
    o.add_argument("--categories-csv", metavar="PATH",
                   help="prediction files: write each question's disagreement categories as CSV (a folder when several runs)")
    o.add_argument("--output-txt", metavar="PATH",
                   help="MMLongBench-Doc: write its evaluator's text report, byte for byte (a folder when several files)")
    rec.add_argument("--version", action="version", version=f"docbench-lens scoring {__version__}")


def declared() -> Recorder:
    """Every option of the three commands, in the order --help lists them."""
    rec = Recorder()
    _own_arguments(rec)
    gate.add_arguments(rec)  # type: ignore[arg-type]  # --weak-slices, --baseline, --compare-json, --fail-on-regression, ...
    judge_cli.add_arguments(rec)  # type: ignore[arg-type]  # --judge-url, --judge-model, --judge-prompt, --judge-cache, ...
    return rec


# ----------------------------------------------------------------------------- what --help says


DESCRIPTIONS = {
    SCORE: "Score document-QA runs: the JSON report, the per-question CSV and the headline numbers; a run's weak "
           "slices (--weak-slices), its comparison with a baseline and the regression gate (--baseline, "
           "--fail-on-regression), a training run's checkpoints (--trend), an LLM judge (--judge-url).",
    SLICES: "Where is one run weak? Every slice (one to three conditions field=value) tested against the rest of "
            "the run with documents as the unit, the false-discovery rate controlled across all of them, intervals "
            "adjusted for the search; the kept slices written as CSV. The same as `score ... --weak-slices CSV`.",
    GATE: "Did the new run regress against the baseline (--baseline OLD: both compared on the questions both "
          "answered, documents as the unit, overall and per slice), or a training run's checkpoints drop for good "
          "(--trend CSV: every checkpoint of the series as --predictions)? Exit 3 on a regression, 4 when a drop cannot "
          "be tested. The same as `score ... --fail-on-regression` with --baseline or --trend.",
}


def _kinds_text() -> str:
    return ("kinds of input (--profile names one; without it, the files say which):\n"
            "  a benchmark's files  gold JSONL (--gold-files, or --data-dir) and prediction files: XL-DocBench, DocVQA\n"
            "  MMLongBench-Doc      --profile mmlongbench-doc, or a samples.json as --gold-files (or in --data-dir):\n"
            "                       data/samples.json and its run_api.py's result files results/res_<model>.json\n"
            "  harness outputs      --profile lmms-eval|vlmevalkit, or an lmms-eval, VLMEvalKit or LongDocURL output\n"
            "                       as --predictions, scored as the harness left it; --gold-files joins the benchmark's\n"
            "                       gold (MMLongBench-Doc by question and answer, DocVQA by questionId)\n")


def _profiles_text() -> str:
    lines = ["profiles (--profile):"]
    for name, p in [*PROFILES.items(), *HARNESS_PROFILES.items()]:
        lines += textwrap.wrap(p.description, 100, initial_indent=f"  {name:<16} ", subsequent_indent=" " * 19)
    return "\n".join(lines) + "\n"


SLICES_EPILOG = """\
exit codes:
  0  pass: the run was scored and its weak slices written (none kept: the header only)
  1  input: nothing could be scored (no gold question, no prediction of a gold question, an
     unreadable file), or the CSV could not be written
  2  usage: an unknown option or a bad value
"""


def _profile_choices(kind: str) -> list[str]:
    """The profiles a kind of input is scored by."""
    if kind == HARNESS:
        from .harness import HARNESS_SCORING_PROFILES

        return list(HARNESS_SCORING_PROFILES)
    return [MMLONGBENCH_PROFILE] if kind == MMLONGBENCH else list(PROFILES)


def build_parser(prog: str = "python -m scoring", command: str = SCORE, kind: str | None = None,
                 rec: Recorder | None = None) -> argparse.ArgumentParser:
    """`command`'s parser (SCORE, SLICES, GATE); with `kind`, narrowed to the options that kind of input takes."""
    rec = rec or declared()
    takes = TAKES.get(command)
    implied = IMPLIED.get(command, {})

    def keep(dest: str) -> bool:
        if dest in implied or (takes is not None and dest not in takes and dest != "version"):
            return False
        return kind is None or kind in ONLY.get(dest, (kind,))

    override: dict[str, dict[str, Any]] = {d: {"required": True} for d in REQUIRED.get(command, ())}
    for dest, text in HELP.get(command, {}).items():
        override.setdefault(dest, {})["help"] = text
    if kind is not None:
        override["profile"] = {"choices": _profile_choices(kind), "default": PROFILE_DEFAULT[kind]}
    if command == SCORE:
        epilog = _kinds_text() + "\n" + _profiles_text() + "\n" + (rec.epilog or "")
    elif command == SLICES:
        epilog = _kinds_text() + "\n" + _profiles_text() + "\n" + SLICES_EPILOG
    else:
        epilog = _kinds_text() + "\n" + _profiles_text() + "\n" + (rec.epilog or "")
    ap = argparse.ArgumentParser(prog=prog, description=textwrap.fill(DESCRIPTIONS[command], 100, break_on_hyphens=False), epilog=epilog,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    rec.replay(ap, keep, override)
    return ap


# ----------------------------------------------------------------------------- which kind of input


def _is_samples(path: str) -> bool:
    from .formats.mmlongbench_doc import is_samples

    return is_samples(Path(path))


def kind_of(args: argparse.Namespace) -> str:
    """The kind of input a command line names: HARNESS for a harness profile or a --predictions path a
    harness format recognises (also under another --profile: the harness's reader scores it);
    MMLONGBENCH for `--profile mmlongbench-doc`, or no --profile and MMLongBench-Doc's samples.json as
    the gold (the --gold-files given, or a --data-dir holding samples.json and not XL-DocBench's gold);
    else BENCHMARK."""
    from . import formats

    if args.profile in HARNESS_PROFILE_NAMES or any(formats.detect(p) is not None for p in args.predictions
                                                    if Path(p).exists()):
        return HARNESS
    if args.profile:
        return MMLONGBENCH if args.profile == MMLONGBENCH_PROFILE else BENCHMARK
    if args.gold_files:
        return MMLONGBENCH if all(_is_samples(g) for g in args.gold_files) else BENCHMARK
    data_dir = Path(args.data_dir) if args.data_dir else None
    if data_dir is not None and (data_dir / "samples.json").is_file() and not (data_dir / DEFAULT_GOLD[0]).exists():
        return MMLONGBENCH
    return BENCHMARK


def _given(ap: argparse.ArgumentParser, args: argparse.Namespace, dests: Collection[str]) -> list[str]:
    """The option strings of `dests` given a value other than the default."""
    out = []
    for action in ap._actions:  # argparse lists its actions nowhere else
        if action.dest in dests and action.option_strings and getattr(args, action.dest, None) != action.default:
            out.append(action.option_strings[-1])
    return out


def parse(argv: Sequence[str], prog: str = "python -m scoring", command: str = SCORE,
          kind: str | None = None) -> tuple[argparse.Namespace, str]:
    """(the arguments, the kind of input): parsed by `command`'s parser, then by the same options narrowed
    to the kind the arguments name (`kind_of`; `kind` forces one). Usage errors exit 2 (argparse);
    harness outputs ignore the options of the other kinds, saying which on stderr. Every option of
    `score` is on the namespace: those not given (or not taken) at their defaults, the command's
    implied ones set (`gate`: --fail-on-regression)."""
    argv = list(argv)
    rec = declared()
    full = build_parser(prog, command, rec=rec)
    args, _ = full.parse_known_args(argv)  # -h, a missing --predictions and bad values are said here
    kind = kind or kind_of(args)
    view = build_parser(prog, command, kind, rec=rec)
    if kind == HARNESS:
        args, unknown = view.parse_known_args(argv)
        if unknown:  # the benchmark CLI's other options (--data-dir, --ignore-missing, ...) mean nothing here
            print(f"note: ignored for harness files: {' '.join(unknown)}", file=sys.stderr)
    else:
        other = [d for d in ONLY if kind not in ONLY[d]]
        for flag in _given(full, args, other):
            full.error(f"{flag} is for {' or '.join(KIND_TEXT[k] for k in ONLY[flag.lstrip('-').replace('-', '_')])}; "
                       f"these are {KIND_TEXT[kind]}")
        args = view.parse_args(argv)
    for o in rec.options():  # every option any kind reads, at its default when not taken here
        if o.dest != "version" and not hasattr(args, o.dest):
            setattr(args, o.dest, o.kwargs.get("default", False if o.kwargs.get("action") == "store_true" else None))
    for dest, value in IMPLIED.get(command, {}).items():
        setattr(args, dest, value)
    if command == GATE and not args.baseline and not args.trend:
        view.error("the gate compares the run with --baseline OLD (or a training run's checkpoints: --trend CSV)")
    return args, kind


def refused(args: argparse.Namespace) -> int | None:
    """The usage error the kinds of input that can be re-judged (MMLongBench-Doc's files, harness outputs)
    say before reading a file: the finder's, the gate's and the trend's options given wrongly (when any is
    asked for), or the judge's. Said on stderr; the exit code (gate.EXIT_USAGE), or None when the options
    stand."""
    why = (gate.refusal(args) if gate.wants(args) else None) or judge_cli.refusal(args)
    if why is None:
        return None
    print(f"ERROR: {why}", file=sys.stderr)
    return gate.EXIT_USAGE

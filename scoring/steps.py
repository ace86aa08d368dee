"""Which checkpoint a run is: its training step and its series, from its name or a mapping file.
Pure standard library (the command line and the app read steps the same way).

    step_in(text)                  (step, series) a name or path states, or None
    from_model_args(args)          the same from lmms-eval's --model_args (`pretrained=/ckpt/run7/checkpoint-1200`)
    read_steps_csv(path)           a steps.csv mapping (run, step, series) and the problems in it
    checkpoints(names, ...)        every run's Checkpoint: the mapping first, then its hints, then its name
    series_of(checkpoints)         series name -> its checkpoints ordered by step

A step is read from the LAST of these tokens in a text (case ignored; `-`, `_` or nothing between the
word and the number): `checkpoint-1200`, `ckpt-0520`, `step_3000`, `global_step3000`, `iter_0001000`
(Megatron's folders), `iteration-500`. The series is what is left of the text once the token is taken
out (`run7-checkpoint-1200` -> `run7`); when nothing is left, the folder holding it
(`/ckpt/run7/checkpoint-1200` -> `run7`), else DEFAULT_SERIES. lmms-eval names the model by the value of
the first of `peft= delta= pretrained= model= model_version= model_name= model_id= path= engine=` its
--model_args holds (in that order, as lmms-eval looks them up: an adapter's folder before its base
model); VLMEvalKit by its model folder, read as a name.

steps.csv: a header row with `run` and `step` (and optionally `series`), one row per run; an empty step
takes the run out of every series (a baseline that is no checkpoint). Read bounded: at most
MAX_BYTES bytes and MAX_ROWS rows; every bad row is a `Problem` with its line, the rest is kept.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .problems import Problem

DEFAULT_SERIES = "checkpoints"
MAX_BYTES = 1_000_000
MAX_ROWS = 20_000
MAX_STEP = 10 ** 12
MODEL_KEYS = ("peft", "delta", "pretrained", "model", "model_version", "model_name", "model_id", "path", "engine")
STEPS_FILE = "steps.csv"
FROM_FILE, FROM_NAME, FROM_HINT, FROM_VIEW = "steps.csv", "name", "harness", "set here"

# a word, then at most one separator, then 1-12 digits; not preceded by a letter, not followed by a digit.
# One alternation over fixed words and bounded repeats: linear on any text.
_TOKEN = re.compile(r"(?<![A-Za-z])(global[_-]?step|checkpoint|ckpt|step|iteration|iter)[_-]?(\d{1,12})(?!\d)",
                    re.IGNORECASE)
_SEPARATORS = re.compile(r"[-_.\s]+")


@dataclass(frozen=True)
class Checkpoint:
    """A run placed in a series: `step` None when nothing states one (the run is in no series)."""

    run: str
    step: int | None
    series: str
    source: str  # FROM_FILE, FROM_HINT, FROM_NAME, FROM_VIEW, or "" when no step was found


def _tidy(text: str) -> str:
    """Separators folded to one `-`, none at either end."""
    return _SEPARATORS.sub("-", text).strip("-")


def step_in(text: str) -> tuple[int, str] | None:
    """(step, series) stated by a run name, a model folder or a checkpoint path (module docstring), or None."""
    text = str(text or "")[:4096]
    path = PurePosixPath(text.replace("\\", "/"))
    parts = [p for p in path.parts if p not in ("/", "")]
    for k in range(len(parts) - 1, -1, -1):  # the last component that states a step
        found = list(_TOKEN.finditer(parts[k]))
        if not found:
            continue
        m = found[-1]
        rest = _tidy(parts[k][:m.start()] + "-" + parts[k][m.end():])
        if not rest and k > 0:
            rest = _tidy(parts[k - 1])
        return int(m.group(2)), rest or DEFAULT_SERIES
    return None


def model_name(model_args: str) -> str:
    """The model lmms-eval names a run by: the value of the first of MODEL_KEYS in `key=value,...` (its order)."""
    pairs: dict[str, str] = {}
    for item in str(model_args or "")[:8192].split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip() and key.strip() not in pairs:
            pairs[key.strip()] = value.strip()
    return next((pairs[k] for k in MODEL_KEYS if pairs.get(k)), "")


def from_model_args(model_args: str) -> tuple[int, str] | None:
    """(step, series) of lmms-eval's --model_args (`pretrained=/ckpt/run7/checkpoint-1200,dtype=bf16` -> (1200, run7))."""
    name = model_name(model_args)
    return step_in(name) if name else None


@dataclass
class StepsFile:
    """A steps.csv read: run -> (step or None, series or ""), and the problems (file, line, field)."""

    path: str
    rows: dict[str, tuple[int | None, str]]
    problems: list[Problem]


def read_steps_csv(path: str | Path, text: str | None = None) -> StepsFile:
    """Read a steps.csv (module docstring). `text`: its content when already read (an upload)."""
    where = str(path)
    out = StepsFile(where, {}, [])
    if text is None:
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            out.problems.append(Problem.error(where, None, None, "a readable steps.csv", exc.strerror or str(exc)))
            return out
        if len(raw) > MAX_BYTES:
            out.problems.append(Problem.warning(where, None, None, f"at most {MAX_BYTES:,} bytes",
                                                "a larger file: the rest is not read"))
            raw = raw[:MAX_BYTES]
            raw = raw[:raw.rfind(b"\n") + 1]  # never half a row
        text = raw.decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text[:MAX_BYTES]))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (StopIteration, csv.Error):
        out.problems.append(Problem.error(where, 1, None, "a header row with run and step", "nothing"))
        return out
    if "run" not in header or "step" not in header:
        out.problems.append(Problem.error(where, 1, None, "columns run and step (and series)",
                                          ", ".join(header)[:200] or "an empty header"))
        return out
    at = {name: header.index(name) for name in ("run", "step", "series") if name in header}
    for line, row in enumerate(_rows(reader, out, where), start=2):
        if line - 1 > MAX_ROWS:
            out.problems.append(Problem.warning(where, line, None, f"at most {MAX_ROWS:,} rows", "more: not read"))
            break
        if not any(cell.strip() for cell in row):
            continue
        cell = {name: row[i].strip() if i < len(row) else "" for name, i in at.items()}
        run = cell["run"]
        if not run:
            out.problems.append(Problem.error(where, line, "run", "a run name", "an empty cell"))
            continue
        step: int | None = None
        if cell["step"]:
            digits = cell["step"].replace("_", "").replace(",", "")
            if not (digits.isascii() and digits.isdecimal()) or int(digits) > MAX_STEP:
                out.problems.append(Problem.error(where, line, "step", "a whole number of training steps (or empty: no "
                                                  "checkpoint)", repr(cell["step"][:40])))
                continue
            step = int(digits)
        if run in out.rows:
            out.problems.append(Problem.warning(where, line, "run", "each run once", f"{run!r} again: this row is kept"))
        out.rows[run] = (step, _tidy(cell.get("series", "")))
    return out


def _rows(reader: Iterable[list[str]], out: StepsFile, where: str) -> Iterable[list[str]]:
    """The CSV rows, a malformed one said once (csv.Error stops the reader there)."""
    try:
        yield from reader
    except csv.Error as exc:
        out.problems.append(Problem.error(where, None, None, "CSV", f"{exc} (the rest is not read)"))


def checkpoints(names: Sequence[str], mapping: Mapping[str, tuple[int | None, str]] | None = None,
                hints: Mapping[str, Sequence[str]] | None = None,
                overrides: Mapping[str, tuple[int | None, str]] | None = None) -> list[Checkpoint]:
    """Every run's checkpoint, by the first that says: `overrides` (set by hand: the app's Data page, its
    URL), `mapping` (a steps.csv), `hints` (run -> model arguments or model folders a harness wrote, each
    read by `from_model_args` when it has `=`, else as a name), the run's own name. A mapping row with an
    empty series keeps the series its name states."""
    out = []
    for run in names:
        named = step_in(run)
        for hint in (hints or {}).get(run, ()):
            found = from_model_args(hint) if "=" in hint else step_in(hint)
            if found:
                named = found
                source = FROM_HINT
                break
        else:
            source = FROM_NAME if named else ""
        chosen: tuple[int | None, str] | None = None
        for given, label in ((overrides, FROM_VIEW), (mapping, FROM_FILE)):
            if given and run in given:
                chosen, source = given[run], label
                break
        if chosen is not None:
            step, series = chosen
            out.append(Checkpoint(run, step, series or (named[1] if named else DEFAULT_SERIES), source if step is not None else ""))
        elif named:
            out.append(Checkpoint(run, named[0], named[1], source))
        else:
            out.append(Checkpoint(run, None, "", ""))
    return out


def series_of(points: Iterable[Checkpoint]) -> dict[str, list[Checkpoint]]:
    """Series name -> its checkpoints by step (then name); runs without a step are in none. Series in the
    order of their first run."""
    out: dict[str, list[Checkpoint]] = {}
    for c in points:
        if c.step is not None:
            out.setdefault(c.series, []).append(c)
    return {name: sorted(members, key=lambda c: (c.step, c.run)) for name, members in out.items()}


def repeated_steps(series: Sequence[Checkpoint]) -> list[tuple[int, list[str]]]:
    """The steps of a series held by more than one run: (step, runs)."""
    by: dict[int, list[str]] = {}
    for c in series:
        if c.step is not None:
            by.setdefault(c.step, []).append(c.run)
    return [(s, runs) for s, runs in by.items() if len(runs) > 1]

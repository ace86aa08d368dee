"""DocVQA-style folders: the XL-DocBench layout (scoring.formats.xldocbench) whose gold records are
DocVQA's (`questionId`, `question`, `answers`, `question_types`, `docId`, `image`), read by
scoring.loaders.load_gold (several acceptable answers, ANLS under the `docvqa` profile)."""

from __future__ import annotations

import json
from pathlib import Path

from ..limits import JSONL_HUGE_LINE
from ..loaders import load_gold
from ..reading import Overlong, bounded_lines, open_regular
from .base import BenchmarkFiles
from .xldocbench import layout as _lens_layout
from .xldocbench import recognise as _lens_recognise

__all__ = ["NAME", "is_record", "recognise", "layout", "read_gold", "PROFILE"]

NAME = "docvqa"
PROFILE = "docvqa"  # the benchmark's own evaluator (scoring.profiles)
SNIFF_ROWS = 20

read_gold = load_gold


def is_record(row: object) -> bool:
    """A DocVQA gold record: an object with `questionId` and `answers`."""
    return isinstance(row, dict) and "questionId" in row and "answers" in row


def _docvqa_file(path: Path) -> bool:
    """Whether a gold file's first non-blank lines are DocVQA records (a .json list: its first 4 kB name them)."""
    try:
        with open_regular(path) as fh:  # a FIFO named like gold is never waited on
            if path.suffix.lower() == ".json":
                head = fh.read(4096).decode("utf-8-sig", "replace")
                return '"questionId"' in head and '"answers"' in head
            seen = 0
            for raw in bounded_lines(fh, JSONL_HUGE_LINE):  # a line is never held beyond the sniff's need
                if isinstance(raw, Overlong):
                    raw = b""  # longer than a record: none (the loader says what it is), and a line looked at
                elif not raw.strip():
                    continue
                seen += 1
                try:
                    if is_record(json.loads(raw.removeprefix(b"\xef\xbb\xbf"))):
                        return True
                except (ValueError, RecursionError):
                    pass
                if seen >= SNIFF_ROWS:
                    break
    except OSError:
        return False
    return False


def recognise(path: Path) -> bool:
    """A DocVQA gold file, or a folder of the XL-DocBench layout whose gold files hold DocVQA records."""
    if path.is_file():
        return _docvqa_file(path)
    return _lens_recognise(path) and any(_docvqa_file(p) for p in _lens_layout(path).gold)


def layout(bench: Path) -> BenchmarkFiles:
    out = _lens_layout(bench)
    out.format = NAME
    return out

"""The spreadsheet-safe CSV rule stated again, independently of scoring/writers.py, for the tests that
hold our per-question CSV against the release evaluator's (tests/reference_release.py).

The release writes every cell as it is; we write a text cell that begins with =, +, -, @, a tab or a
carriage return (after any single quotes) with one single quote in front, and numbers as they are.
So our CSV is the release's CSV of the same rows with that rule applied to their strings, and it
differs from the release's bytes only in those cells (`quoted_cells` lists them)."""

from __future__ import annotations

import csv
import io

import reference_release as ref

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_like(text: str) -> bool:
    rest = text.lstrip("'")
    return rest.startswith(FORMULA_STARTS)


def made_safe(value):
    """A cell as the rule writes it: a str that is formula-like gets one quote; anything else as it is."""
    return "'" + value if isinstance(value, str) and formula_like(value) else value


def release_csv_made_safe(report_or_rows) -> str:
    """The release's per-question CSV of these rows (or of this report's), each string cell made safe."""
    rows = report_or_rows["per_question"] if isinstance(report_or_rows, dict) else report_or_rows
    return ref.csv_text([{k: made_safe(v) for k, v in row.items()} for row in rows])


def quoted_cells(ours: str, release: str) -> list[tuple[int, int, str]]:
    """(row, column, release's text) of every cell where our CSV differs from the release's; fails
    unless each difference is exactly one quote before a formula-like cell (same rows, same columns)."""
    a = list(csv.reader(io.StringIO(ours, newline="")))
    b = list(csv.reader(io.StringIO(release, newline="")))
    assert len(a) == len(b), (len(a), len(b))
    out = []
    for i, (ra, rb) in enumerate(zip(a, b)):
        assert len(ra) == len(rb), (i, ra, rb)
        for j, (x, y) in enumerate(zip(ra, rb)):
            if x != y:
                assert x == "'" + y and formula_like(y), (i, j, x, y)
                out.append((i, j, y))
    return out

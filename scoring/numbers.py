"""Reading the number out of an answer.

`release_number` is the 1,519-question release's reader, quirks included (spec section 5):
commas and spaces deleted from the *normalised* text, first `[-+]?\\d*\\.?\\d+`, as a float.

`read_number` is the hardened reader of profile `xldocbench` (spec part C.1): it reads the first
numeric expression of the lower-cased, prefix-stripped text before punctuation is deleted and
understands scientific notation, powers of ten, fractions, thousands separators, decimal commas
and the Unicode minus. Both return (value, matched text) or None.
"""

from __future__ import annotations

import math
import re

__all__ = ["release_number", "read_number"]

_RELEASE = re.compile(r"[-+]?\d*\.?\d+")


def release_number(normalised: str) -> tuple[float, str] | None:
    s = normalised.replace(",", "").replace(" ", "")
    m = _RELEASE.search(s)
    if m is None:
        return None
    return float(m.group()), m.group()


_SIGN = r"[-+\u2212]?"
_DEC = r"(?:\d+(?:\.\d*)?|\.\d+)"
_THOUSANDS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"
_TIMES = r"\s*(?:x|\u00d7|\*)\s*"

# Alternatives tried at one starting position; the longest match wins.
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("power", re.compile(rf"(?P<m>{_SIGN}{_DEC}){_TIMES}10\^(?P<e>{_SIGN}\d+)")),
    ("power", re.compile(rf"(?P<m>{_SIGN})10\^(?P<e>{_SIGN}\d+)")),
    ("scientific", re.compile(rf"(?P<m>{_SIGN}{_DEC})e(?P<e>{_SIGN}\d+)")),
    ("fraction", re.compile(rf"(?P<n>{_SIGN}{_DEC})\s*/\s*(?P<d>{_DEC})")),
    ("thousands", re.compile(rf"(?P<v>{_SIGN}{_THOUSANDS})(?!\d)")),
    ("decimal_comma", re.compile(rf"(?P<v>{_SIGN}\d+,\d+)(?!\d)")),
    ("plain", re.compile(rf"(?P<v>{_SIGN}{_DEC})")),
)
# Where a number may start (spec C.1): at a digit; at a sign followed by a digit or a period and a
# digit, whatever precedes the sign ("approximately-336.9" and "covid-19" read signed, as the
# release reads them); at a period followed by a digit, unless the period comes right after a
# letter or another period ("approx.5" reads 5, "1..5" is not ".5").
_START = re.compile(r"[-+\u2212]\.?\d|(?<![^\W\d_])(?<!\.)\.\d|\d")


def _float(text: str) -> float:
    return float(text.replace("\u2212", "-").replace(",", ""))


def _value(kind: str, m: re.Match[str]) -> float | None:
    """The value of one matched form; every form is read by `float` of decimal text, so
    `2.1e-1`, `2.1 x 10^-1` and `0.21` give the same float. None for a zero denominator."""
    if kind == "power":
        mant = m.group("m").replace("\u2212", "-")
        mant = mant + "1" if mant in ("", "+", "-") else mant
        return float(f"{mant}e{m.group('e').replace(chr(0x2212), '-')}")
    if kind == "scientific":
        return _float(m.group())
    if kind == "fraction":
        num, den = _float(m.group("n")), _float(m.group("d"))
        if den == 0 or not (math.isfinite(num) and math.isfinite(den)):
            return None
        return num / den
    if kind == "decimal_comma":
        whole, frac = m.group("v").split(",")
        return _float(f"{whole}.{frac}")
    return _float(m.group("v"))


def read_number(lowered: str) -> tuple[float, str] | None:
    """Hardened reader. `lowered` is the stripped, lower-cased, prefix-stripped text.

    A trailing % is dropped without scaling. The first numeric expression decides: when it has no
    usable value -- a fraction with denominator 0, or a value that overflows or is not finite
    (`1e400`, a 400-digit integer) -- the answer has no number (nothing later is read instead) and
    the text rules decide. Never raises, whatever the text.
    """
    for start in _START.finditer(lowered):
        pos = start.start()
        best: tuple[int, str, re.Match[str]] | None = None
        for kind, pattern in _FORMS:
            m = pattern.match(lowered, pos)
            if m and (best is None or m.end() > best[0]):
                best = (m.end(), kind, m)
        if best is None:  # defensive: every start is followed by at least a plain number
            continue
        _, kind, m = best
        try:
            value = _value(kind, m)
        except (ValueError, OverflowError, ZeroDivisionError):  # defensive: float() of matched text
            return None
        if value is None or not math.isfinite(value):
            return None
        return value, m.group()
    return None

"""Reading the number out of an answer.

`release_number` is the 1,519-question release's reader, quirks included (spec section 5):
commas and spaces deleted from the *normalised* text, first `[-+]?\\d*\\.?\\d+`, as a float.

`read_number` is the hardened reader of profile `xldocbench` (spec part C.1): it reads the first
numeric expression of the lower-cased, prefix-stripped text before punctuation is deleted and
understands scientific notation, powers of ten, fractions, thousands separators, decimal commas
and the Unicode minus. Both return (value, matched text) or None.
"""

from __future__ import annotations

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
# A number starts at a sign or a digit (or a leading period); a sign glued to a preceding word
# ("covid-19") is not a sign.
_START = re.compile(r"(?<![\w.])[-+\u2212]?\.?\d|\d")


def _float(text: str) -> float:
    return float(text.replace("\u2212", "-").replace(",", ""))


def _value(kind: str, m: re.Match[str]) -> float | None:
    if kind == "power":
        mant = m.group("m")
        base = 1.0 if mant in ("", "+") else (-1.0 if mant in ("-", "\u2212") else _float(mant))
        return base * 10.0 ** int(m.group("e").replace("\u2212", "-"))
    if kind == "scientific":
        return _float(m.group("m")) * 10.0 ** int(m.group("e").replace("\u2212", "-"))
    if kind == "fraction":
        den = _float(m.group("d"))
        if den == 0:
            return None
        return _float(m.group("n")) / den
    if kind == "decimal_comma":
        whole, frac = m.group("v").split(",")
        return _float(f"{whole}.{frac}")
    return _float(m.group("v"))


def read_number(lowered: str) -> tuple[float, str] | None:
    """Hardened reader. `lowered` is the stripped, lower-cased, prefix-stripped text.

    A trailing % is dropped without scaling. The first numeric expression decides: when it is a
    fraction with denominator 0 the answer has no number (nothing later is read instead).
    """
    for start in _START.finditer(lowered):
        pos = start.start()
        best: tuple[int, str, re.Match[str]] | None = None
        for kind, pattern in _FORMS:
            m = pattern.match(lowered, pos)
            if m and (best is None or m.end() > best[0]):
                best = (m.end(), kind, m)
        if best is None:  # a bare sign or period not followed by a number form
            continue
        _, kind, m = best
        value = _value(kind, m)
        if value is None:
            return None
        return value, m.group()
    return None

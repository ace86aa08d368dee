"""A page's text as the locator reads it: normalised characters with their boxes, and the numbers on it. Pure: no PDF library here."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from scoring.numbers import read_number

Rect = tuple[float, float, float, float]


_TRANSLATE = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00ad": "", "\u200b": "", "\ufeff": "", "\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " ",
}


_CHAR_CACHE: dict[str, str] = {}


def norm_char(c: str) -> str:
    """One character as the search sees it: NFKC (ligatures → letters, … → ...), quotes and dashes
    straightened, case folded, every kind of space a plain space."""
    out = _CHAR_CACHE.get(c)
    if out is None:
        t = _TRANSLATE.get(c, c)
        t = unicodedata.normalize("NFKC", t).casefold() if t else ""
        t = "".join(_TRANSLATE.get(x, " " if x.isspace() else x) for x in t)
        out = _CHAR_CACHE[c] = t
    return out


# blanks before the line break exclude newlines: `\s*\n\s*` split a run of newlines every possible
# way before failing (quadratic: a hyphen then 16,000 newlines took 6.8 s)
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u00ad\u2010\u2011][^\S\n]*\n\s*(?=\w)")


_TABLE = str.maketrans(_TRANSLATE)


def norm_text(text: str) -> str:
    """A free text (a quote, an answer, a page's plain text) normalised like the page streams:
    a hyphen ending a line is joined, whitespace collapsed to single spaces. (The same rules as
    norm_char, applied to a whole string at C speed.)"""
    text = _LINE_HYPHEN.sub("", text).translate(_TABLE)
    s = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold().translate(_TABLE)
    return " ".join(s.split())


def tight(text: str) -> str:
    """Normalised text without spaces and hyphens (pass 2 and fuzzy)."""
    return text.replace(" ", "").replace("-", "")


@dataclass
class PageText:
    """One page's characters in reading order: `text` (normalised, single spaces) and `packed`
    (no spaces or hyphens), each with the index of the source character of every position."""

    page: int  # 1-based
    width: float  # unrotated, in points: the extent of search_for space
    height: float
    rotation: int
    boxes: list[Rect]  # per source character
    lines: list[int]  # per source character: its line number on the page
    text: str
    text_src: list[int]
    packed: str
    packed_src: list[int]
    has_text: bool = True

    def rects(self, sources: Iterable[int]) -> list[Rect]:
        """One rectangle per line covered by these source characters (as search_for gives them)."""
        by_line: dict[int, list[float]] = {}
        for i in sources:
            if i < 0:
                continue
            x0, y0, x1, y1 = self.boxes[i]
            r = by_line.get(self.lines[i])
            if r is None:
                by_line[self.lines[i]] = [x0, y0, x1, y1]
            else:
                r[0], r[1], r[2], r[3] = min(r[0], x0), min(r[1], y0), max(r[2], x1), max(r[3], y1)
        return [tuple(round(v, 2) for v in r) for r in by_line.values()]  # type: ignore[misc]

    def span_rects(self, start: int, end: int, packed: bool = False) -> list[Rect]:
        src = self.packed_src if packed else self.text_src
        return self.rects(src[start:end])


def page_text_from_rawdict(raw: dict, number: int, width: float, height: float, rotation: int) -> PageText:
    boxes: list[Rect] = []
    lines: list[int] = []
    chars: list[str] = []
    line_no = 0
    for block in raw.get("blocks", []):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", []):
            start = len(chars)
            for span in line.get("spans", []):
                for ch in span.get("chars", []):
                    chars.append(ch["c"])
                    boxes.append(tuple(ch["bbox"]))
                    lines.append(line_no)
            # a hyphen ending a line after a letter joins the word across the line break
            k = len(chars) - 1
            while k >= start and chars[k].isspace():
                k -= 1
            line_no += 1
            if k > start and chars[k] in "-\u00ad\u2010\u2011" and chars[k - 1].isalpha():
                chars[k] = "\x00soft"
                del chars[k + 1:], boxes[k + 1:], lines[k + 1:]  # no space after a joined hyphen
                continue
            chars.append("\n")
            boxes.append((0.0, 0.0, 0.0, 0.0))
            lines.append(-1)
    text: list[str] = []
    text_src: list[int] = []
    packed: list[str] = []
    packed_src: list[int] = []
    for i, c in enumerate(chars):
        if c == "\x00soft":
            continue
        n = " " if c == "\n" else norm_char(c)
        for x in n:
            if x == " ":
                if text and text[-1] != " ":
                    text.append(" ")
                    text_src.append(-1)
                continue
            text.append(x)
            text_src.append(i)
            if x != "-":
                packed.append(x)
                packed_src.append(i)
    if text and text[-1] == " ":
        text.pop()
        text_src.pop()
    return PageText(number, width, height, rotation, boxes, lines, "".join(text), text_src, "".join(packed), packed_src,
                    bool(text))


@dataclass
class DocText:
    """A whole document's normalised text, one string per page, and the numbers on each page."""

    pages: list[str]
    numbers: list[frozenset[float]]


NUMBER_TOKEN = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*%?")


def number_key(value: float) -> float:
    return float(f"{value:.9g}")


def numbers_in(text: str) -> frozenset[float]:
    out = set()
    for m in NUMBER_TOKEN.finditer(text):
        v = token_value(m.group())
        if v is not None:
            out.add(number_key(v))
    return frozenset(out)


MAX_TOKEN_CHARS = 64  # a longer number token of a page or an answer has no value (not read)


_PLAIN = re.compile(r"-?\d+(?:\.\d+)?")


_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def token_value(token: str) -> float | None:
    """The value of a number token of a page: plain and thousands-separated forms directly (as
    scoring.numbers.read_number reads them), anything else through read_number."""
    if len(token) > MAX_TOKEN_CHARS:  # no number is written with this many characters
        return None
    token = token.rstrip("%").rstrip(".,")
    if _PLAIN.fullmatch(token):
        return float(token)
    if _THOUSANDS.fullmatch(token):
        return float(token.replace(",", ""))
    got = read_number(token)
    return got[0] if got else None

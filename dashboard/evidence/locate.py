"""Where evidence quotes and answers sit on the pages of a document. No streamlit here.

    python -m dashboard.evidence --benchmark DIR --output boxes.jsonl \
        [--runs FILE_OR_DIR ... --answers-output answers.jsonl]

Every rectangle is `(x0, y0, x1, y1)` in PDF points in the coordinate space of PyMuPDF's
`Page.search_for` on that page: unrotated, origin at the top-left corner of the CropBox. The
renderer (dashboard/evidence/render.py) maps them onto the rendered, possibly rotated, image.

Location of a quote on its page, first hit wins:
  1. exact: the quote's normalised text (NFKC, so ligatures become letters; curly quotes and
     dashes straightened; case folded; whitespace and line breaks collapsed; a hyphen at a line
     end joined) is a substring of the page's normalised text;
  2. exact: the same with every space and hyphen removed on both sides ("hyphen-ated",
     "well-\\nknown", words run together in a table cell);
  3. fuzzy: rapidfuzz's best partial alignment of the quote against the page's characters (space
     and hyphen free), accepted at a score of at least 0.8 (0.9 for quotes under 12 characters).
A quote with an ellipsis (`…` or `...`) for an omitted middle is located part by part.

PyMuPDF is not thread-safe: every open, read and close happens inside one call under the one
module-level lock shared with the workspace and the renderer. Extracted texts are cached in small
LRUs keyed by (path, mtime_ns, page), never Document objects.
"""

from __future__ import annotations

import json
import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from rapidfuzz import fuzz

from dashboard.core.paths import inside
from dashboard.documents import ocr
from dashboard.documents.pagetext import NUMBER_TOKEN, DocText, PageText, Rect, norm_text, number_key, tight, token_value
from dashboard.documents.pdf import DocumentError, doc_text, page_text
from scoring.mmlongbench_rule import extraction_miss
from scoring.model import DocRef, GoldQuestion, Prediction
from scoring.numbers import read_number
from scoring.reading import read_literal
from scoring.registry import is_failure_marker

EXACT, FUZZY, NOT_FOUND, NO_DOCUMENT = "exact", "fuzzy", "not_found", "no_document"
EVIDENCE_PAGE, OTHER_PAGE, NOT_IN_DOCUMENT = "evidence_page", "other_page", "not_in_document"
IN_DOCUMENT = "in_document"  # found, in a question whose gold names no evidence page (DocVQA): neither right nor wrong page
# Answers that are not looked for, each its own outcome (never "not in the document", never "invented"):
# a refusal ("Not answerable", "N/A"), and a failed extraction -- the benchmark's marker (MMLongBench-Doc's
# `Fail to answer`, scoring.registry.FAILURE_MARKERS), or an extracted answer not in the document while the
# gold occurs in the model's raw response (scoring.mmlongbench_rule.extraction_miss).
REFUSED, EXTRACTION_FAILED = "refused", "extraction_failed"
# Not found in the documents, on a question whose gold answer is not written in them either (or cannot be
# looked for): computed from the page, never "invented" (`not_found_verdict`, the one rule)
COMPUTED = "computed"
FUZZY_MIN, FUZZY_MIN_SHORT, SHORT_QUOTE = 0.80, 0.90, 12
# fuzzy alignment costs about (quote length x page length): beyond this many character pairs (about
# 0.2 s) a quote is located exactly or not at all, and its message says so
FUZZY_MAX_WORK = 200_000_000
# an answer candidate longer than this is searched as text, never read as a number
NUMBER_ANSWER_CHARS = 100
MAX_ANSWER_WORDS = 12  # longer answers are searched by their bold parts and numbers only

# ----------------------------------------------------------------------------- normalisation


# no leading or trailing \s*: split() tried them at every blank of a long run of blanks (quadratic);
# the parts are stripped instead
_ELLIPSIS = re.compile(r"\u2026|\.{3,}|\[\s*(?:\u2026|\.\.\.)\s*\]")


MAX_QUOTE_PARTS = 20  # a quote with more ellipses than this is searched whole (each part costs a page search)


def quote_parts(quote: str) -> list[str]:
    """The parts of a quote written with an ellipsis for an omitted middle (or the whole quote)."""
    parts = [p.strip() for p in _ELLIPSIS.split(quote, maxsplit=MAX_QUOTE_PARTS)]
    if len(parts) > MAX_QUOTE_PARTS:
        return [quote]
    return [p for p in parts if norm_text(p)] or [quote]


# ----------------------------------------------------------------------------- page text


# ----------------------------------------------------------------------------- quotes


@dataclass
class Location:
    rects: list[Rect]
    method: str  # exact, fuzzy, not_found, no_document
    score: float  # 0..1
    message: str = ""
    parts: int = 1


def _all(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i >= 0 and needle:
        out.append(i)
        i = hay.find(needle, i + len(needle))
    return out


def _locate_part(pt: PageText, part: str) -> Location:
    q = norm_text(part)
    if not q:
        return Location([], NOT_FOUND, 0.0, "empty quote")
    hits = _all(pt.text, q)
    if hits:
        return Location([r for h in hits for r in pt.span_rects(h, h + len(q))], EXACT, 1.0)
    qp = tight(q)
    hits = _all(pt.packed, qp)
    if hits:
        return Location([r for h in hits for r in pt.span_rects(h, h + len(qp), packed=True)], EXACT, 1.0)
    if not pt.packed or not qp:
        return Location([], NOT_FOUND, 0.0, "the page has no text layer" if not pt.has_text else "")
    if len(qp) * len(pt.packed) > FUZZY_MAX_WORK:
        return Location([], NOT_FOUND, 0.0, f"not found exactly on page {pt.page}; too long for a fuzzy search "
                                            f"({len(qp):,} quote characters against {len(pt.packed):,} on the page)")
    if len(qp) > len(pt.packed):
        score = fuzz.ratio(qp, pt.packed) / 100
        return Location([], NOT_FOUND, round(score, 3))
    al = fuzz.partial_ratio_alignment(qp, pt.packed)
    if al is None:  # rapidfuzz gives None only below a score_cutoff, which is not set here
        return Location([], NOT_FOUND, 0.0)
    score = round(al.score / 100, 3)
    if score >= (FUZZY_MIN_SHORT if len(qp) < SHORT_QUOTE else FUZZY_MIN):
        return Location(pt.span_rects(al.dest_start, al.dest_end, packed=True), FUZZY, score)
    return Location([], NOT_FOUND, score)


def locate_quote(pt: PageText, quote: str) -> Location:
    """The quote on this page: exact, then fuzzy; an elided quote part by part."""
    parts = quote_parts(quote)
    if len(parts) == 1:
        loc = _locate_part(pt, parts[0])
    else:
        found = [_locate_part(pt, p) for p in parts]
        rects = [r for f in found for r in f.rects]
        located = [f for f in found if f.method != NOT_FOUND]
        score = round(sum(f.score for f in found) / len(found), 3)
        if not located:
            loc = Location([], NOT_FOUND, score, parts=len(parts))
        else:
            method = EXACT if len(located) == len(found) and all(f.method == EXACT for f in found) else FUZZY
            miss = len(found) - len(located)
            loc = Location(rects, method, score, f"{miss} of {len(parts)} parts not found" if miss else "", len(parts))
    if loc.method == NOT_FOUND and not loc.message:
        loc.message = ("the page has no text layer (an image): quotes cannot be searched" if not pt.has_text else
                       f"not found on page {pt.page}; best fuzzy score {loc.score:.2f}")
    return loc


def locate_in_document(path: Path | None, page: int, quote: str) -> Location:
    """A quote on page `page` (1-based) of the document at `path`; never raises."""
    if path is None:
        return Location([], NO_DOCUMENT, 0.0, "document not found")
    try:
        return locate_quote(page_text(path, page), quote)
    except DocumentError as exc:
        return Location([], NOT_FOUND, 0.0, str(exc))
    except OSError as exc:
        return Location([], NO_DOCUMENT, 0.0, f"{path.name}: {exc.strerror or exc}")


# ----------------------------------------------------------------------------- answers

REFUSALS = re.compile(r"^(?:not answerable|unanswerable|n/?a|none|unknown|no answer|cannot be determined|"
                      r"the answer cannot be determined.*|the document does not (?:provide|contain|state|mention).*|"
                      r"not (?:stated|given|mentioned|provided).*|insufficient information.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_PREFIX = re.compile(r"^(?:[-*•]\s*)?(?:.{0,60}?\bthe\s+answer\s+is\s*:?|final\s+answer\s*:|answer\s*:|answer\s+is)\s*", re.I)
_OPTION = re.compile(r"^[A-Da-d]\)\s+")
_LABELS = frozenset({"answer", "evidence", "final answer", "answer is"})


def _unwrapped(answer: str) -> tuple[str, list[str]]:
    """An answer without its wrappers ("The answer is", "Answer:", Markdown emphasis, a final period,
    quotes, an option's letter), and its bold parts."""
    text = (answer or "").strip()
    if not text:
        return "", []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    marked = [ln for ln in lines if re.search(r"answer\s*[:*]", ln, re.I)]
    text = (marked[-1] if marked else lines[-1] if len(lines) > 1 and len(lines[-1]) < 80 else text).strip()
    bold = [a or b for a, b in _BOLD.findall(text)]
    text = _PREFIX.sub("", text.replace("**", "").replace("__", "").strip()).strip()
    text = re.sub(r"^[-*•]\s+", "", text).strip()
    text = _PREFIX.sub("", text).strip().rstrip(".").strip().strip('"\'').strip()
    return _OPTION.sub("", text), bold


def _is_refusal(text: str) -> bool:
    n = norm_text(text)
    return bool(REFUSALS.match(n)) or n.startswith(("not answerable", "unanswerable"))


def answer_candidates(answer: str) -> list[str]:
    """What to look for in the document for one answer: its text without wrappers ("The answer
    is", "Answer:", Markdown emphasis, a final period), and its bold parts; for a list answer
    (`answer_elements`), each element's. Empty for refusals, empty answers and lists, and single
    characters other than a digit (a choice letter names an option, not a text; a digit is a
    number, searched as one)."""
    elements = answer_elements(answer)
    if elements is not None:
        return list(dict.fromkeys(c for e in elements for c in answer_candidates(e)))
    text, bold = _unwrapped(answer)
    if _is_refusal(text):
        return []
    out = []
    if text and len(text.split()) <= MAX_ANSWER_WORDS:
        out.append(text)
    for b in bold:
        b = _OPTION.sub("", _PREFIX.sub("", b.strip()).rstrip(".:").strip())
        if b and b not in out and norm_text(b) not in _LABELS:
            out.append(b)
    out = [c for c in out if not REFUSALS.match(norm_text(c)) and (len(c) > 1 or c.isdigit())]
    return out


# ----------------------------------------------------------------------------- list answers

# A list answer (MMLongBench-Doc's `List` format: `['The Economist', 'TIME']`, `[18, 24]`; a JSON list;
# a list-shaped string such as `[The Economist, TIME]`) is searched element by element. Longer text is
# searched as text: the Python-literal parse (scoring.reading.read_literal, never eval) is bounded
# by this size, the elements by their count.
LIST_MAX_CHARS = 4_000
MAX_ELEMENTS = 50  # elements searched at most (each is a search of the whole document)
_SCALARS = (str, int, float)


def _elements_of(value: object) -> list[str] | None:
    """The texts of a parsed list's elements (one nested level flattened; None, booleans, objects
    and deeper lists left out), or None when `value` is not a list."""
    if not isinstance(value, (list, tuple)):
        return None
    out: list[str] = []
    for v in value:
        for w in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(w, _SCALARS) and not isinstance(w, bool):
                out.append(str(w).strip())
    return out


def _unquoted(inner: str) -> list[str] | None:
    """`a, b` of a list-shaped string `[a, b]` that is no literal: its comma-separated parts, quotes
    stripped; None when brackets are nested inside (not a list of plain elements)."""
    if "[" in inner or "]" in inner:
        return None
    return [p.strip().strip("'\"\u2018\u2019\u201c\u201d").strip() for p in inner.split(",")]


_PHRASE_SPLIT = re.compile(r", and |, |; | and | & ", re.I)  # literal alternatives on single-spaced text: linear


def phrase_parts(answer: str) -> list[str] | None:
    """The parts of an answer written as a list in words -- `Germany and United Kingdom`, `Paris,
    Lyon and Nice`, `salt; pepper` -- each with at least two letters (`18 and 24` is no such list: a
    bare number is found almost anywhere), at most MAX_ELEMENTS; None when it has one part, more than
    MAX_ANSWER_WORDS words, or is a bracketed list (`answer_elements`). Such an answer is found when it
    is, else when each of its parts is."""
    text = " ".join(_unwrapped(answer)[0].split())
    if not text or len(text.split(" ")) > MAX_ANSWER_WORDS or answer_elements(answer) is not None:
        return None
    parts = [x.strip() for x in _PHRASE_SPLIT.split(text)]
    if len(parts) < 2 or any(sum(c.isalpha() for c in x) < 2 for x in parts):
        return None
    return list(dict.fromkeys(parts))[:MAX_ELEMENTS]


def answer_elements(answer: str) -> list[str] | None:
    """The elements of a list answer, in order, each once (compared as normalised text), at most
    MAX_ELEMENTS; None when the answer is not a list. A list is the answer's text without its
    wrappers, between `[` and `]`: a Python literal (scoring.reading.read_literal:
    `ast.literal_eval`, never eval), else a JSON list (`null`, `true`), else a list-shaped string
    (`[The Economist, TIME]`, split at its commas). `[]` is a list without elements."""
    if not answer or "[" not in answer:
        return None
    text, _ = _unwrapped(answer)
    if not (text.startswith("[") and text.endswith("]")) or len(text) > LIST_MAX_CHARS:
        return None
    ok, value = read_literal(text)
    got = _elements_of(value) if ok else None
    if got is None:
        try:
            got = _elements_of(json.loads(text))
        except (ValueError, RecursionError):  # not JSON, a number too long to convert, brackets nested too deep
            got = None
    if got is None:
        got = _unquoted(text[1:-1])
    if got is None:
        return None
    seen: dict[str, str] = {}
    for e in got:
        if e and norm_text(e) not in seen:
            seen[norm_text(e)] = e
    return list(seen.values())[:MAX_ELEMENTS]


_CHOICE = re.compile(r"^\(?([A-Da-d])[).]?$")


def not_searched_reason(answer: str) -> str:
    """Why `answer_candidates(answer)` is empty, in words: the reason that applied."""
    text = (answer or "").strip()
    if not text:
        return "an empty answer"
    elements = answer_elements(text)
    if elements is not None:
        return "an empty list" if not elements else "a list with nothing to look for in its elements"
    bare = _PREFIX.sub("", text.replace("**", "").replace("__", "")).strip().rstrip(".").strip().strip('"\'').strip()
    if _CHOICE.match(bare):
        return f"a choice letter ({bare})"
    if _is_refusal(bare):
        return "a refusal"
    if len(bare) <= 1:
        return "a single character, not a text to look for"
    return "nothing left to look for once its wrappers are removed"


# a letter (not after a digit or a point) followed by a digit, perhaps after a hyphen: the same
# search result as `(?<![\d.])[^\W\d_]+-?\d`, whose `+` was retried from every letter of a long
# word (quadratic: 16,000 letters took 10.6 s)
_IDENTIFIER = re.compile(r"(?<![\d.])[^\W\d_]-?\d")


def _answer_number(candidate: str) -> tuple[float, tuple[str, ...]] | None:
    """The number an answer stands for, when the answer is essentially a number (with a unit, a
    currency, a percent sign: `1,250`, `EUR 6,228.0 million`, `26.9%`), and its other words, which
    must then stand near the number on the page (`5 months` is not any 5). A bare integer is never
    matched by the page's own number (`_number_hits`)."""
    if len(candidate) > NUMBER_ANSWER_CHARS:  # a sentence, not a number with its unit
        return None
    text = norm_text(candidate)
    if _IDENTIFIER.search(text):  # HX-420, M30, A100: a name with digits, matched as text
        return None
    got = read_number(text)
    if got is None:
        return None
    words = tuple(w for w in re.findall(r"[^\W\d_]+", text.replace(got[1], " ", 1)) if len(w) > 1)
    if len(words) > 3:
        return None
    return got[0], words


def _number_hits(text: str, value: float, words: tuple[str, ...], page: int = 0) -> list[tuple[int, int]]:
    """Where the number stands in the text; a bare integer equal to the page's own number is taken
    for the page number (a header or footer) and skipped."""
    key = number_key(value)
    if not words and value == page:
        return []
    out = []
    for m in NUMBER_TOKEN.finditer(text):
        v = token_value(m.group())
        if v is None or number_key(v) != key:
            continue
        if words:
            near = text[max(0, m.start() - 30): m.end() + 30]
            if not any(re.search(rf"(?<!\w){re.escape(w)}", near) for w in words):
                continue
        out.append((m.start(), m.end()))
    return out


def _bounded(hay: str, start: int, end: int) -> bool:
    before = hay[start - 1] if start > 0 else " "
    after = hay[end] if end < len(hay) else " "
    return not before.isalnum() and not after.isalnum()


def _text_hits(hay: str, needle: str) -> list[int]:
    return [i for i in _all(hay, needle) if _bounded(hay, i, i + len(needle))]


def _word_spans(hay: str, needle: str, packed_hay: Callable[[], str] | None = None) -> list[tuple[int, int]]:
    """Where `needle` (normalised) stands in `hay` (normalised) as whole words: exactly, else with
    hyphens, spaces and line breaks between its letters taken as one: "less well-off" finds "less
    well off", "less well-off" broken at its hyphen (joined to "less welloff" when the page is read)
    and the other way round. Both forms are found with str.find, no regular expression: linear in
    the text per hit; positions are mapped only on a page where the packed needle occurs.
    `packed_hay`: gives `tight(hay)` (answer_pages keeps a document's packed pages between answers)."""
    exact = [(i, i + len(needle)) for i in _text_hits(hay, needle)]
    if exact:
        return exact
    pieces = [p for p in needle.replace("-", " ").split(" ") if p]
    # one piece: the exact search found it wherever it stands whole; else every piece must be on the
    # page before the page is packed (a few C-speed look-ups: most pages hold no answer)
    if len(pieces) < 2 or not all(p in hay for p in pieces):
        return []
    packed_needle = "".join(pieces)
    packed = packed_hay() if packed_hay is not None else tight(hay)  # `tight(hay)`, perhaps kept from before
    if packed_needle not in packed:
        return []
    # packed position k -> position in hay: k plus the separators before it, those j with s_j - j <= k
    before = [pos - j for j, pos in enumerate(m.start() for m in _SEPARATOR.finditer(hay))]
    out = []
    for k in _all(packed, packed_needle):
        last = k + len(packed_needle) - 1
        start, end = k + bisect_right(before, k), last + bisect_right(before, last) + 1
        if _bounded(hay, start, end):
            out.append((start, end))
    return out


_SEPARATOR = re.compile(r"[ -]")  # one character: linear


def _greek_names() -> dict[str, str]:
    import unicodedata

    out = {}
    for code in range(0x391, 0x3CA):
        name = unicodedata.name(chr(code), "")
        if name.startswith(("GREEK SMALL LETTER ", "GREEK CAPITAL LETTER ")):
            out[chr(code)] = name.rsplit(" ", 1)[-1].lower()
    return out


_GREEK = str.maketrans(_greek_names())
RENDERING_CHARS = 200  # longer answers are not compared as renderings of the gold


def spelled(text: str) -> str:
    """A text with its symbols spelled out, for comparing renderings: NFKC (`χ²` -> `χ2`), case
    folded, Greek letters by name (`β` -> `beta`), every character but letters and digits dropped
    (`chi^2` -> `chi2`)."""
    import unicodedata

    t = unicodedata.normalize("NFKC", text).casefold().translate(_GREEK)
    return "".join(c for c in t if c.isalnum())


def renders_gold(answer: str, gold: str) -> bool:
    """Whether an answer is the gold written in other characters: `β` for `beta`, `χ²` for `chi^2`,
    `beta` for `β` -- equal once symbols are spelled out (`spelled`), not equal as written, and
    one side not plain ASCII. Such an answer is not invented, whatever it scored."""
    if not answer or not gold or len(answer) > RENDERING_CHARS or len(gold) > RENDERING_CHARS:
        return False
    if answer.isascii() and gold.isascii():
        return False
    a = spelled(answer)
    return bool(a) and a == spelled(gold) and norm_text(answer) != norm_text(gold)


def _candidate_rects(pt: PageText, candidates: list[str]) -> list[Rect]:
    rects: list[Rect] = []
    for cand in candidates:
        q = norm_text(cand)
        num = _answer_number(cand)
        if num is None:
            for a, b in _word_spans(pt.text, q):
                rects += pt.span_rects(a, b)
        else:
            for a, b in _number_hits(pt.text, *num, page=pt.page):
                rects += pt.span_rects(a, b)
    return list(dict.fromkeys(rects))


def answer_rects(pt: PageText, answer: str) -> list[Rect]:
    """Every occurrence of the answer on this page: its text (word-bounded), and a numeric
    answer's value written in any form (`1,250` finds `1250`); of a list answer, each element's."""
    return _candidate_rects(pt, answer_candidates(answer))


def answer_boxes(pt: PageText, answer: str) -> list[tuple[str, int, int, Rect]]:
    """`answer_rects` with what each box is of: (the text found, its element's 1-based position, the
    number of elements, the box). A single answer is one element of one: (its text, 1, 1, box)."""
    elements = answer_elements(answer)
    if elements is None:
        whole = [(answer, 1, 1, r) for r in answer_rects(pt, answer)]
        elements = phrase_parts(answer) if not whole else None  # "Germany and United Kingdom": its parts
        if elements is None:
            return whole
    return [(e, k, len(elements), r) for k, e in enumerate(elements, 1) for r in answer_rects(pt, e)]


def answer_pages(doc: DocText, answer: str, also: list[str] | None = None) -> list[int]:
    """1-based pages whose text holds the answer (text or number), or one of the texts `also`
    (the gold, for an answer that renders it in other characters). A text is found as whole words,
    hyphen, space and line-break variants alike (`_word_spans`)."""
    cands = answer_candidates(answer) + [c for c in also or [] if c]
    nums = [n for n in (_answer_number(c) for c in cands) if n is not None]
    texts = [norm_text(c) for c in cands if _answer_number(c) is None]
    keys = {number_key(v) for v, _ in nums}
    out = []
    for k, page in enumerate(doc.pages):
        if any(t and _word_spans(page, t, partial(_packed_page, doc, k)) for t in texts):
            out.append(k + 1)
        elif keys & doc.numbers[k] and any(_number_hits(page, v, w, k + 1) for v, w in nums):
            out.append(k + 1)
    return out


PACKED_DOCS = 4  # documents whose packed pages (`tight`) are kept between answers
_PACKED: OrderedDict[int, tuple[DocText, dict[int, str]]] = OrderedDict()
_PACKED_LOCK = threading.Lock()


def _packed_page(doc: DocText, k: int) -> str:
    """`tight(doc.pages[k])`, kept for the last PACKED_DOCS documents searched: every answer of a long
    document would pack the same pages again (a few tens of microseconds a page)."""
    with _PACKED_LOCK:
        entry = _PACKED.get(id(doc))
        if entry is None or entry[0] is not doc:  # a new document (or a new object under a reused id)
            entry = _PACKED[id(doc)] = (doc, {})
            while len(_PACKED) > PACKED_DOCS:
                _PACKED.popitem(last=False)
        _PACKED.move_to_end(id(doc))
        got = entry[1].get(k)
    if got is None:
        got = tight(doc.pages[k])
        with _PACKED_LOCK:
            entry[1][k] = got
    return got


@dataclass
class ElementLocation:
    """One element of a list answer, located: the pages holding it per document."""

    text: str
    evidence_pages: dict[str, list[int]] = field(default_factory=dict)
    other_pages: dict[str, list[int]] = field(default_factory=dict)
    searched: bool = True  # False: nothing in it to look for (a single letter, a refusal)

    @property
    def found(self) -> bool:
        return bool(self.evidence_pages or self.other_pages)

    @property
    def on_evidence_page(self) -> bool:
        return bool(self.evidence_pages)


@dataclass
class AnswerLocation:
    answer: str
    searched: bool  # False: a refusal, a failure marker, an empty answer or a choice letter, or no text layer
    # evidence_page, in_document, other_page, not_in_document, computed, no_document, refused,
    # extraction_failed; None when not searched for another reason
    location: str | None
    evidence_pages: dict[str, list[int]] = field(default_factory=dict)  # document -> evidence pages holding it
    other_pages: dict[str, list[int]] = field(default_factory=dict)  # document -> other pages holding it
    missing: list[str] = field(default_factory=list)  # documents that could not be searched
    message: str = ""
    right: bool | None = None  # whether the answer is right (scoring's definition); None: unknown
    elements: list[ElementLocation] = field(default_factory=list)  # a list answer's elements, each located

    @property
    def mark(self) -> str:
        """The mark of this outcome on the Evidence page (Streamlit's coloured icon syntax): a green
        check only for an answer on an evidence page that is not known to be wrong."""
        if self.location == EVIDENCE_PAGE:
            return ":orange[:material/error:]" if self.right is False else ":green[:material/check_circle:]"
        return LOCATION_MARKS.get(self.location or "", ":gray[:material/remove:]")

    @property
    def in_document(self) -> bool | None:
        if self.location in (EVIDENCE_PAGE, OTHER_PAGE, IN_DOCUMENT):
            return True
        if self.location in (NOT_IN_DOCUMENT, COMPUTED):
            return False
        return None

    def flat(self, which: str) -> list[int]:
        pages = self.evidence_pages if which == "evidence" else self.other_pages
        return sorted({p for ps in pages.values() for p in ps})


LOCATION_MARKS = {OTHER_PAGE: ":orange[:material/warning:]", NOT_IN_DOCUMENT: ":red[:material/help:]",
                  COMPUTED: ":blue[:material/calculate:]",
                  REFUSED: ":violet[:material/block:]", EXTRACTION_FAILED: ":gray[:material/content_cut:]"}


def _s(items) -> str:
    return "s" if len(items) != 1 else ""


def _pages_text(pages: dict[str, list[int]], several: bool) -> str:
    parts = []
    for doc_id, ps in pages.items():
        if ps:
            shown = ", ".join(map(str, ps[:12])) + (f" and {len(ps) - 12} more" if len(ps) > 12 else "")
            parts.append(f"{doc_id} p. {shown}" if several else shown)
    return "; ".join(parts)


# ----------------------------------------------------------------------------- computed or invented: one rule

# Where a question's gold answer is written (`gold_where`): what the one rule (`not_found_verdict`) reads.
GOLD_WRITTEN = "written"  # found verbatim in the question's documents: a look-up question
GOLD_NOT_WRITTEN = "not_written"  # searched, not found: computed, counted, or read from a figure
GOLD_UNANSWERABLE = "unanswerable"  # the gold is a refusal ("Not answerable"): the documents hold no answer
GOLD_UNKNOWN = "unknown"  # nothing to look for in the gold (empty, a choice letter), or no document read

NOT_FOUND_WRITTEN = "appears nowhere in the document{s}, where the gold answer is written (likely invented)"
NOT_FOUND_UNANSWERABLE = "appears nowhere in the document{s}, which hold no answer to this question (likely invented)"
NOT_FOUND_COMPUTED = ("not found verbatim in the document{s}, nor is the gold answer: computed from the page "
                      "(or read from a figure), as the gold is")
NOT_FOUND_UNKNOWN = ("not found verbatim in the document{s}; computed from it or invented cannot be told: the gold "
                     "answer cannot be looked for (nothing in it to search, or pages without a text layer not read)")
NOT_FOUND_RENDERED = "not found verbatim in the document{s}: the gold answer written in other characters, not invented"
# the same verdicts for the elements of a list answer that were not found, when others were
PART_WRITTEN = "likely invented: the gold answer is written in the document{s}"
PART_UNANSWERABLE = "likely invented: the document{s} hold no answer to this question"
PART_COMPUTED = "computed from the page, as the gold is (it is not written in the document{s} either)"
PART_UNKNOWN = "computed or invented cannot be told: the gold answer cannot be looked for"


def not_found_verdict(gold: str, rendered: bool = False, partly: bool = False) -> tuple[str, str]:
    """The one rule for every answer searched and not found in its documents, whoever gave it and
    whatever it scored: (location, words, with `{s}` for the documents' plural; `partly`: the words
    for the missing elements of a list answer whose other elements were found). It reads where the
    question's gold is (`gold_where`), never whether the answer is right -- two wrong or right
    numbers on one question get one label:

    * the gold is written in the documents (a look-up question), or the question has no answer in
      them (its gold a refusal): NOT_IN_DOCUMENT, "likely invented" -- the red "not in the document";
    * the gold is not written in them either (computed, counted, read from a figure): COMPUTED;
    * the gold cannot be looked for (nothing in it to search, no document read, pages without a
      text layer left unread): COMPUTED, saying that computed or invented cannot be told (never
      red without a reason);
    * an answer that writes the gold in other characters (`renders_gold`): COMPUTED, not invented."""
    if rendered:
        return COMPUTED, NOT_FOUND_RENDERED
    if gold == GOLD_WRITTEN:
        return NOT_IN_DOCUMENT, PART_WRITTEN if partly else NOT_FOUND_WRITTEN
    if gold == GOLD_UNANSWERABLE:
        return NOT_IN_DOCUMENT, PART_UNANSWERABLE if partly else NOT_FOUND_UNANSWERABLE
    if gold == GOLD_NOT_WRITTEN:
        return COMPUTED, PART_COMPUTED if partly else NOT_FOUND_COMPUTED
    return COMPUTED, PART_UNKNOWN if partly else NOT_FOUND_UNKNOWN


def _read_documents(q: GoldQuestion, paths: dict[str, Path | None],
                    progress: Callable[[int, int], None] | None = None) -> tuple[list[tuple[DocRef, Path, DocText]], list[str]]:
    """The question's documents that can be searched, with their whole texts, and the ids of those
    that cannot (missing or unreadable). A document without text on any page (page images not read
    by OCR) is neither."""
    read, missing = [], []
    for ref in (d for d in q.documents if d.document_id):
        path = paths.get(ref.document_id)
        if path is None:
            missing.append(ref.document_id)
            continue
        try:
            dt = doc_text(path, progress)
        except (DocumentError, OSError):
            missing.append(ref.document_id)
            continue
        if not any(dt.pages):
            continue  # page images not read by OCR (dashboard/documents/ocr.py): nothing to search
        read.append((ref, path, dt))
    return read, missing


def _parts(answer: str) -> list[str]:
    """What must each be found for the answer to be: a list answer's elements, else the answer."""
    elements = answer_elements(answer)
    return [answer] if elements is None else elements


def gold_where(q: GoldQuestion, paths: dict[str, Path | None],
               progress: Callable[[int, int], None] | None = None) -> str:
    """Where the question's gold answer is, for `not_found_verdict`: GOLD_WRITTEN when one of its
    answers is found verbatim in the question's documents (a list gold: each of its elements that
    can be looked for), GOLD_UNANSWERABLE when every gold answer is a refusal, GOLD_NOT_WRITTEN when
    searched and not found, GOLD_UNKNOWN when there is nothing to look for or no document to read, or
    when not found while a page without a text layer was left unread (OCR missing, refused, not yet)."""
    golds = [g for g in q.answers if g and g.strip()]
    if golds and all(_is_refusal(_unwrapped(g)[0]) for g in golds):
        return GOLD_UNANSWERABLE
    wanted = [[p for p in _parts(g) if answer_candidates(p)] for g in golds]
    wanted += [w for w in map(phrase_parts, golds) if w]  # "Germany and United Kingdom": written when its parts are
    wanted = [w for w in wanted if w]
    if not wanted:
        return GOLD_UNKNOWN
    read, _ = _read_documents(q, paths, progress)
    if not read:
        return GOLD_UNKNOWN
    for parts in wanted:
        if all(any(answer_pages(dt, p) for _, _, dt in read) for p in parts):
            return GOLD_WRITTEN
    unread = any((st := ocr.status(path)).unread or st.problems or st.missing for _, path, _ in read)
    return GOLD_UNKNOWN if unread else GOLD_NOT_WRITTEN


def gold_lazily(q: GoldQuestion, paths: dict[str, Path | None]) -> Callable[[], str]:
    """`gold_where(q, paths)` as a function computing it on its first call only: for `locate_answer`'s
    `gold`, shared by the runs of one question (searched once, and only when an answer is not found)."""
    kept: list[str] = []

    def get() -> str:
        if not kept:
            kept.append(gold_where(q, paths))
        return kept[0]
    return get


# ----------------------------------------------------------------------------- one answer


FAILURE_MARKED = "no answer: the benchmark's extraction failed (its marker “{answer}”); not searched"
EXTRACTION_MISSED = ("the extraction likely failed: the gold answer occurs in the model's raw response, the "
                     "extracted answer {where}")
WRONG_ON_EVIDENCE = " (but scored wrong)"


def _extraction_missed(q: GoldQuestion, response: object, right: bool | None) -> bool:
    """The gold occurs in the raw response (scoring.mmlongbench_rule.extraction_miss) of an answer known
    to be wrong: the extraction, not the model, likely failed."""
    if right is not False or not isinstance(response, str) or not response:
        return False
    return extraction_miss(q.metadata.get("answer", q.gold_answer), q.raw_format or q.answer_format, response, 0.0)


def _quoted(texts: list[str], limit: int = 6) -> str:
    shown = ", ".join(f"“{' '.join(t.split())[:60]}”" for t in texts[:limit])
    return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


def _merged(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    return {d: sorted({*a.get(d, []), *b.get(d, [])}) for d in dict.fromkeys([*a, *b])}


def _search(texts: list[str], read: list[tuple[DocRef, Path, DocText]], also: list[str]) -> list[ElementLocation]:
    """Each text (an answer, or each element of a list answer) looked for in the documents read:
    the evidence pages and the other pages holding it, per document. `also`: other forms of the
    answer, looked for with it (`renders_gold`)."""
    parts = [ElementLocation(t, searched=bool(answer_candidates(t))) for t in texts]
    for ref, _, dt in read:
        evidence = set(ref.evidence_pages) | {p for it in ref.evidence_items for p in it.pages}
        for part in (p for p in parts if p.searched):
            hits = answer_pages(dt, part.text, also)
            ev = [p for p in hits if p in evidence]
            other = [p for p in hits if p not in evidence]
            if ev:
                part.evidence_pages[ref.document_id] = ev
            if other:
                part.other_pages[ref.document_id] = other
    return parts


def _elements_said(elements: list[ElementLocation], several: bool, noun: str = "elements") -> str:
    """Which elements of a list answer were found where, and which not: "2 of 3 elements found:
    “A” (p. 5), “B” (p. 7); not found: “C”"."""
    looked = [e for e in elements if e.searched]
    found = [e for e in looked if e.found]
    where = [f"“{' '.join(e.text.split())[:60]}” ({'' if several else 'p. '}"
             f"{_pages_text(_merged(e.evidence_pages, e.other_pages), several)})" for e in found[:6]]
    text = f"{len(found)} of {len(looked)} {noun} found"
    if where:
        text += ": " + ", ".join(where) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    missing = [e.text for e in looked if not e.found]
    if missing:
        text += "; not found: " + _quoted(missing)
    skipped = [e.text for e in elements if not e.searched]
    if skipped:
        text += "; not searched: " + _quoted(skipped)
    return text


def locate_answer(answer: str, q: GoldQuestion, paths: dict[str, Path | None],
                  progress: Callable[[int, int], None] | None = None, *, right: bool | None = None,
                  response: object = None, gold: str | Callable[[], str] | None = None) -> AnswerLocation:
    """Where an answer appears in the question's documents: on an evidence page, only on other
    pages (a wrong-page answer), on some page of a question whose gold names no evidence page
    (IN_DOCUMENT), nowhere (NOT_IN_DOCUMENT, invented, or COMPUTED: `not_found_verdict`, the one
    rule, from `gold` -- `gold_where(q, paths)`, or a function giving it, called only when the answer
    is not found; computed here when not given), or unknown (no
    document). A list answer (`answer_elements`) is found when each of its elements is, and is
    on an evidence page when each is; `elements` says where each was found. `right`: whether the
    answer is right (scoring.profiles.Profile.is_right; None: unknown): it marks a wrong answer on
    an evidence page and tells a failed extraction, never whether a missing answer is invented; an
    answer that writes the gold in other characters (`renders_gold`) is also looked for as the gold
    is written. Not searched, each its own outcome: a failure marker (`Fail to answer`:
    EXTRACTION_FAILED) and a refusal (REFUSED). `response`: the model's raw answer where the run has
    one (MMLongBench-Doc): a wrong answer (`right` False) that is a refusal or is not found while the
    gold occurs in the response is EXTRACTION_FAILED too."""
    out = AnswerLocation(answer, False, None, right=right)
    missed = _extraction_missed(q, response, right)
    if is_failure_marker(answer):
        out.location, out.message = EXTRACTION_FAILED, FAILURE_MARKED.format(answer=" ".join(answer.split()))
        if missed:
            out.message += "; the gold answer occurs in the model's raw response"
        return out
    rendered = right is not True and renders_gold(answer, q.gold_answer)
    # the gold as written, and a one-character rendering (`β`), are looked for too: whole words
    also = [t for t in dict.fromkeys((answer.strip(), q.gold_answer.strip())) if t] if rendered else []
    if not answer_candidates(answer) and not also:
        reason = not_searched_reason(answer)
        out.message = f"not searched: {reason}"
        if missed:
            out.location, out.message = EXTRACTION_FAILED, EXTRACTION_MISSED.format(where=f"is {reason}")
        elif reason == "a refusal":
            out.location = REFUSED
        return out
    listed = answer_elements(answer) is not None
    refs = [d for d in q.documents if d.document_id]
    named = any(d.evidence_pages or any(it.pages for it in d.evidence_items) for d in refs)
    read, out.missing = _read_documents(q, paths, progress)
    parts = _search(_parts(answer), read, [] if listed else also)
    looked = [p for p in parts if p.searched]
    whole = bool(looked) and all(p.found for p in looked)
    noun = "elements"
    on_evidence = whole and all(p.on_evidence_page for p in looked)
    if not listed and not on_evidence and (phrase := phrase_parts(answer)) is not None:
        # a list in words: found when each of its parts is (on the evidence pages when each is there)
        alt = [p for p in _search(phrase, read, []) if p.searched]
        if alt and all(p.found for p in alt) and (not whole or all(p.on_evidence_page for p in alt)):
            parts, listed, noun = alt, True, "parts"
            looked, whole = alt, True
    for part in looked:
        for got, into in ((part.evidence_pages, out.evidence_pages), (part.other_pages, out.other_pages)):
            for doc_id, pages in got.items():
                into[doc_id] = sorted({*into.get(doc_id, []), *pages})
    if listed:
        out.elements = parts
    several = len(refs) > 1
    out.searched = bool(read)
    said = f"; {_elements_said(parts, several, noun)}" if listed else ""
    if whole and all(p.on_evidence_page for p in looked):
        out.location = EVIDENCE_PAGE
        what = f"all {len(looked)} {noun} appear" if listed and len(looked) > 1 else "appears"
        out.message = f"{what} on the evidence page{'s' if len(out.flat('evidence')) > 1 else ''} " \
                      f"{_pages_text(out.evidence_pages, several)}"
        if out.other_pages:
            out.message += f" (and on page{_s(out.flat('other'))} {_pages_text(out.other_pages, several)})"
        if right is False:
            out.message += WRONG_ON_EVIDENCE
    elif whole and not named:  # the gold names no evidence page: found is all that can be said
        out.location = IN_DOCUMENT
        out.message = f"appears on page{_s(out.flat('other'))} {_pages_text(out.other_pages, several)}"
    elif whole:
        out.location = OTHER_PAGE
        if listed and out.evidence_pages:  # some elements on an evidence page, some only elsewhere
            off = [p.text for p in looked if not p.on_evidence_page]
            out.message = f"not every {noun[:-1]} is on the evidence pages ({_quoted(off)} only elsewhere){said}"
        else:
            out.message = f"appears on page{_s(out.flat('other'))} {_pages_text(out.other_pages, several)}, " \
                          "not on the evidence pages"
    elif read and missed:
        out.location = EXTRACTION_FAILED
        out.message = EXTRACTION_MISSED.format(where=f"is not in the document{'s' if several else ''}") + said
    elif read:
        where = gold() if callable(gold) else gold if gold is not None else gold_where(q, paths, progress)
        partly = any(p.found for p in looked)  # a list answer some of whose elements were found
        out.location, words = not_found_verdict(where, rendered, partly)
        words = words.format(s="s" if several else "")
        out.message = f"{said[2:]} — the rest {words}" if partly else words + said
        if out.missing:
            out.message += f"; not searched: {', '.join(out.missing)} (missing)"
    elif out.missing:
        out.location = NO_DOCUMENT
        out.message = f"not searched: document {', '.join(out.missing)} not found"
    else:
        out.message = "not searched: the documents are page images without a text layer"
    return out


# ----------------------------------------------------------------------------- gold rows


def item_pages(ref: DocRef, k: int) -> list[int]:
    it = ref.evidence_items[k]
    return list(it.pages) or list(ref.evidence_pages)


def gold_rows(q: GoldQuestion, paths: dict[str, Path | None]) -> list[dict]:
    """One row per (evidence item with a quote, page it lists): where the quote sits."""
    rows = []
    for ref in q.documents:
        path = paths.get(ref.document_id)
        for k, it in enumerate(ref.evidence_items):
            if not it.quote.strip():
                continue
            pages: list[int | None] = list(item_pages(ref, k)) or [None]
            for page in pages:
                if page is None:
                    loc = Location([], NOT_FOUND, 0.0, "the evidence item lists no page")
                else:
                    loc = locate_in_document(path, page, it.quote)
                rows.append({"question_id": q.qid, "document_id": ref.document_id, "page": page, "quote": it.quote,
                             "rects": [list(r) for r in loc.rects], "method": loc.method, "score": loc.score,
                             "item": k, "locator": it.locator, "message": loc.message})
    return rows


_SUCCESS = frozenset({"", "success", "ok", "completed"})


def answered(pred: Prediction | None) -> str:
    """The text to locate: a successful prediction's text; "" for a missing or failed one."""
    if pred is None or pred.status.strip().lower() not in _SUCCESS:
        return ""
    return pred.text


def answer_row(q: GoldQuestion, run: str, pred: Prediction | None, paths: dict[str, Path | None]) -> dict:
    text = pred.text if pred is not None else ""
    loc = locate_answer(answered(pred), q, paths)
    return {"question_id": q.qid, "run": run, "answer": text, "answer_pages_evidence": loc.flat("evidence"),
            "answer_pages_elsewhere": loc.flat("other"), "in_document": loc.in_document, "location": loc.location,
            "documents": {d: {"evidence": loc.evidence_pages.get(d, []), "elsewhere": loc.other_pages.get(d, [])}
                          for d in dict.fromkeys([*loc.evidence_pages, *loc.other_pages])},
            "message": loc.message}


# ----------------------------------------------------------------------------- documents of a benchmark


def image_path(q: GoldQuestion, benchmark: Path | None, docs_dir: Path | None) -> Path | None:
    """A DocVQA record's page image: its `image` field relative to the benchmark folder, then to
    docs/, then its file name in docs/ -- never outside those folders."""
    if not q.image:
        return None
    tries = []
    if benchmark is not None:
        tries.append(inside(benchmark, q.image))
    if docs_dir is not None and docs_dir.is_dir():
        tries += [inside(docs_dir, q.image), inside(docs_dir, Path(q.image.replace("\\", "/")).name)]
    return next((p for p in tries if p is not None and p.is_file()), None)


def question_paths(q: GoldQuestion, locations: dict, benchmark: Path | None, docs_dir: Path | None) -> dict[str, Path | None]:
    """document id -> file for one question: the workspace's located PDFs; a DocVQA image."""
    out: dict[str, Path | None] = {}
    for ref in q.documents:
        loc = locations.get(ref.document_id)
        out[ref.document_id] = loc.path if loc is not None else None
    img = image_path(q, benchmark, docs_dir)
    if img is not None:
        for doc_id in out or [q.image]:
            out[doc_id] = img
    return out


def missing_message(document_id: str, docs_dir: Path | None, how: str = "not found") -> str:
    name = document_id if document_id.lower().endswith(".pdf") else f"{document_id}.pdf"  # MMLongBench ids are file names
    where = str(docs_dir / name) if docs_dir else "<benchmark>/docs/" + name
    folder = str(docs_dir) if docs_dir else "<benchmark>/docs"
    hint = "" if name == document_id else ", or give its record in documents.jsonl a \"file\" field naming a PDF inside that folder"
    return f"Document {document_id} not found ({how}): looked for {where}. Put {name} into {folder}/{hint}."

"""Character-level difference between two answers, as segments and as plain text. Pure (rapidfuzz's Indel opcodes).

    char_diff("the cat", "the bat")  ->  [("equal", "the "), ("delete", "c"), ("insert", "b"), ("equal", "at")]
    diff_text(...)                   ->  "the [-c-]{+b+}at"

Readable: the texts are first aligned word by word (words, runs of white space and single marks as
tokens), and only the words that differ are then aligned character by character, so a change reads
as whole words ("[-based on the document, the answer is -]no") and not as scattered letters that a
character-level longest common subsequence would pick ("[-based o-]n[- the d-]o[-cument…").

Bounded: both alignments are longest common subsequences (rapidfuzz's bit-parallel Indel distance,
O(len(a) * len(b) / 64) whatever the text: 5,000 characters against 5,000 take about 10 ms).
difflib's SequenceMatcher was far worse than quadratic on periodic text (1,000 characters of
"the the the …" against their reverse took 13.5 s, 2,000 took 149 s). Each input longer than `LIMIT`
characters (5,000) is compared by its first `LIMIT` characters only, and the segments then end with
one `("truncated", note)` segment saying how many characters of each side were left out. Text in the segments is the caller's
untrusted text, unchanged: render it with `st.text`/`st.code` or escape it, never as HTML.
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Indel

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")  # linear: each position is consumed by exactly one token

LIMIT = 5_000
EQUAL, DELETE, INSERT, TRUNCATED = "equal", "delete", "insert", "truncated"
_OPS = {"equal": ((EQUAL, "a"),), "delete": ((DELETE, "a"),), "insert": ((INSERT, "b"),),
        "replace": ((DELETE, "a"), (INSERT, "b"))}


def char_diff(a: str, b: str, *, limit: int = LIMIT) -> list[tuple[str, str]]:
    """Segments ``(kind, text)`` turning `a` into `b`: kind is "equal", "delete" (only in a) or
    "insert" (only in b); a replacement is a delete followed by an insert. Joining the equal+delete
    texts gives `a`, equal+insert gives `b` (of the compared prefixes when truncated). Adjacent
    segments of one kind are merged. When either input is longer than `limit`, only the first
    `limit` characters of each are compared and a final ``("truncated", "…")`` segment says so."""
    a = "" if a is None else str(a)
    b = "" if b is None else str(b)
    cut_a, cut_b = max(0, len(a) - limit), max(0, len(b) - limit)
    a_part, b_part = a[:limit], b[:limit]
    out: list[tuple[str, str]] = []
    pending: dict[str, list[str]] = {DELETE: [], INSERT: []}  # a run of changes: its deletions, then its insertions

    def flush() -> None:
        for kind in (DELETE, INSERT):
            if pending[kind]:
                out.append((kind, "".join(pending[kind])))
                pending[kind] = []

    def add(kind: str, text: str) -> None:
        if not text:
            return
        if kind == EQUAL:
            flush()
            if out and out[-1][0] == EQUAL:
                out[-1] = (EQUAL, out[-1][1] + text)
            else:
                out.append((EQUAL, text))
        else:
            pending[kind].append(text)

    def chars(x: str, y: str) -> None:
        for op in Indel.opcodes(x, y):
            for kind, side in _OPS[op.tag]:
                add(kind, x[op.src_start:op.src_end] if side == "a" else y[op.dest_start:op.dest_end])

    ta, tb = _TOKEN.findall(a_part), _TOKEN.findall(b_part)
    gone: list[str] = []  # a run of changed words: what left a, what came in b
    came: list[str] = []

    def changed() -> None:
        x, y = "".join(gone), "".join(came)
        if x and y:  # words that differ: aligned letter by letter, as one run of changes
            chars(x, y)
        else:
            add(DELETE, x)
            add(INSERT, y)
        gone.clear()
        came.clear()

    for op in Indel.opcodes(ta, tb):
        if op.tag == "equal":
            changed()
            add(EQUAL, "".join(ta[op.src_start:op.src_end]))
        else:
            gone += ta[op.src_start:op.src_end]
            came += tb[op.dest_start:op.dest_end]
    changed()
    flush()
    if cut_a or cut_b:
        out.append((TRUNCATED, f"compared the first {limit:,} characters only; "
                               f"{cut_a:,} more in the first text and {cut_b:,} more in the second were not compared"))
    return out


def diff_text(segments: list[tuple[str, str]]) -> str:
    """Plain text with markers: ``[-deleted-]`` and ``{+inserted+}`` (wdiff's notation); a truncation
    note is appended on its own line in ``[...]``."""
    parts = []
    for kind, text in segments:
        if kind == EQUAL:
            parts.append(text)
        elif kind == DELETE:
            parts.append(f"[-{text}-]")
        elif kind == INSERT:
            parts.append(f"{{+{text}+}}")
        elif kind == TRUNCATED:
            parts.append(f"\n[... {text}]")
    return "".join(parts)


def similarity(a: str, b: str, *, limit: int = LIMIT) -> float:
    """Share of characters the two texts have in common: 2 x their longest common subsequence over
    their total length, of the compared prefixes (difflib's ratio when its blocks are the LCS)."""
    return Indel.normalized_similarity(str(a)[:limit], str(b)[:limit])

"""Character-level difference between two answers, as segments and as plain text. Pure (difflib only).

    char_diff("the cat", "the bat")  ->  [("equal", "the "), ("delete", "c"), ("insert", "b"), ("equal", "at")]
    diff_text(...)                   ->  "the [-c-]{+b+}at"

Bounded: difflib's matcher is quadratic in the worst case, so each input longer than `LIMIT`
characters (5,000) is compared by its first `LIMIT` characters only, and the segments then end with
one `("truncated", note)` segment saying how many characters of each side were left out. Callers
that only want a boolean use `is_truncated(segments)`. Text in the segments is the caller's
untrusted text, unchanged: render it with `st.text`/`st.code` or escape it, never as HTML.
"""

from __future__ import annotations

from difflib import SequenceMatcher

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
    matcher = SequenceMatcher(None, a_part, b_part, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for kind, side in _OPS[tag]:
            text = a_part[i1:i2] if side == "a" else b_part[j1:j2]
            if not text:
                continue
            if out and out[-1][0] == kind:
                out[-1] = (kind, out[-1][1] + text)
            else:
                out.append((kind, text))
    if cut_a or cut_b:
        out.append((TRUNCATED, f"compared the first {limit:,} characters only; "
                               f"{cut_a:,} more in the first text and {cut_b:,} more in the second were not compared"))
    return out


def is_truncated(segments: list[tuple[str, str]]) -> bool:
    return bool(segments) and segments[-1][0] == TRUNCATED


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
    """Share of characters the two texts have in common (difflib ratio of the compared prefixes)."""
    return SequenceMatcher(None, str(a)[:limit], str(b)[:limit], autojunk=False).ratio()

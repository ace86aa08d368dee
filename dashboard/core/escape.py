"""Untrusted text made inert for each place it is shown: Markdown, Plotly labels, table cells. No streamlit here."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd


def md_escape(text: str) -> str:
    """Text that Markdown shows literally: every ASCII punctuation mark backslash-escaped (CommonMark),
    so `![](http://…)`, `<script>` or `**` in user data are shown, never rendered or fetched. Markdown
    renderers also turn `https://…`, `www.…` and `name@host` into live links whatever is escaped, so
    a zero-width space goes inside each of those words (the text reads the same)."""
    text = _AUTOLINK.sub(lambda m: "\u200b@" if m.group() == "@" else m.group()[0] + "\u200b" + m.group()[1:], text)
    return text.translate(_ESCAPES).replace("\n", "  \n")


def error_text(problem: BaseException | str) -> str:
    """What a user is told of a problem: the app's own errors carry their sentence as `message`
    (AnnotationsUnavailable, Conflict, InvalidInput, ...); any other exception its text, or its kind
    when it has none. Plain text: the page escapes it (`shell.output.show_error`)."""
    if isinstance(problem, BaseException):
        return getattr(problem, "message", None) or str(problem) or type(problem).__name__
    return str(problem)


_AUTOLINK = re.compile(r"(?i)https?|ftp|www|mailto|@")  # what GFM's extended autolinks start from


def plotly_text(text: str) -> str:
    """Plotly labels understand a few HTML tags; escape them so a label shows as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


_ESCAPES = str.maketrans({ch: "\\" + ch for ch in _PUNCTUATION})  # one C pass (a generator per character took 1.2 s a MB)


DISPLAY_CHARS = 2_000  # characters of one text shown in a code block


TABLE_CHARS = 300  # characters of one text shown in a table cell


COPY_CHARS = 10_000  # a text longer than this is cut before it is copied into a table (Analysis.display_rows)


def clip_text(text: str | None, limit: int = DISPLAY_CHARS) -> str | None:
    """`text` cut to at most `limit` characters for display, saying how long it was (a cut text is
    not cut again)."""
    if text is None or len(text) <= limit:
        return text
    suffix = f"… [{len(text):,} characters, cut for display]"
    return text[:max(limit // 2, limit - len(suffix))] + suffix


def clipped(frame: pd.DataFrame, limit: int = TABLE_CHARS) -> pd.DataFrame:
    """`frame` with every text cell longer than `limit` cut (`clip_text`): what a table shows. A
    50 MB prediction sent to the browser's grid froze the explorer for minutes."""
    out = frame
    for col in frame.columns:
        series = frame[col]
        if not (series.dtype == object or pd.api.types.is_string_dtype(series)):
            continue
        try:
            lengths = series.str.len()
        except AttributeError:  # not text after all
            continue
        long = (lengths > limit).fillna(False).to_numpy(dtype=bool)
        if long.any():
            out = out.copy() if out is frame else out
            out[col] = clip_where(series, long, limit)
    return out


def clip_where(series: pd.Series, long: np.ndarray, limit: int) -> pd.Series:
    """`series` with the texts at `long` cut (`clip_text`). Only those texts pass through Python:
    an Arrow-backed column is patched in Arrow (item assignment into it, row by row, or a round
    trip of a million answers through Python objects, took most of a second)."""
    if isinstance(series.array, pd.arrays.ArrowStringArray):
        import pyarrow as pa
        import pyarrow.compute as pc

        values = pa.array(series)
        mask = pa.array(long)
        cut = pa.array([clip_text(v, limit) for v in pc.filter(values, mask).to_pylist()], type=values.type)
        patched = pd.arrays.ArrowStringArray(pc.replace_with_mask(values, mask, cut), dtype=series.dtype)
        return pd.Series(patched, index=series.index, name=series.name)
    values = series.to_numpy(dtype=object, copy=True)
    for i in np.flatnonzero(long):
        values[i] = clip_text(values[i], limit)
    return pd.Series(values, index=series.index, dtype=series.dtype, name=series.name)

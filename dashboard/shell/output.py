"""Output of user data on a page: one shape of an error (`show_error`), untrusted text as plain text
(`plain`), cut for display with a download of all of it, and what a table shows for a missing value
(`blank_missing_cells`)."""

from __future__ import annotations

import hashlib
import inspect

import streamlit as st

from dashboard.core.escape import DISPLAY_CHARS, error_text, md_escape


def show_error(problem: BaseException | str, *, icon: str = ":material/error:") -> None:
    """The one shape of an error on a page: its sentence (core.escape.error_text), escaped, in an
    error box -- never a traceback, never the text rendered as Markdown."""
    st.error(md_escape(error_text(problem)), icon=icon)


def plain(text: str | None, empty: str = "(empty)", *, limit: int = DISPLAY_CHARS, name: str = "text",
          key: str | None = None) -> None:
    """Untrusted text (model output, gold, questions) as plain text: never Markdown or HTML. Text
    longer than `limit` characters is cut for display, with its length and a download of all of it
    (`name` names the file; `key` keeps two such buttons apart)."""
    if not text:
        st.caption(empty)
        return
    if len(text) <= limit:
        st.code(text, language=None, wrap_lines=True)
        return
    st.code(text[:limit] + " …", language=None, wrap_lines=True, height=320)
    cols = st.columns([3, 1], vertical_alignment="center")
    cols[0].caption(f"Showing the first {limit:,} of {len(text):,} characters.")
    digest = hashlib.sha256(text[:4096].encode("utf-8", "replace")).hexdigest()[:12]
    cols[1].download_button(f"Download all ({_size(text)})", lambda: text.encode("utf-8", "replace"),
                            file_name=f"{name}.txt", mime="text/plain", icon=":material/download:",
                            key=key or f"dl_{name}_{len(text)}_{digest}", on_click="ignore")


def _size(text: str) -> str:
    n: float = len(text.encode("utf-8", "replace")) if len(text) < 1_000_000 else len(text)  # ~ bytes, quickly
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return ""


MISSING_CELL = ""  # what every table shows for a missing value (no score, a rate of no question, no p)


def blank_missing_cells() -> None:
    """Every table of the app (st.dataframe, and .dataframe of a column or container) shows a missing
    value as MISSING_CELL: Streamlit's own placeholder is the word "None", which reads as a value (of
    no score, of no page cited) in a dozen tables of every page. Set once, for
    the server's process (app.py calls it first): st.dataframe's and st.data_editor's default `placeholder`
    becomes MISSING_CELL (an editor's empty cell, such as a run's checkpoint step not known, too); a call that
    gives its own placeholder keeps it."""
    from streamlit.delta_generator import DeltaGenerator

    for method in (DeltaGenerator.dataframe, DeltaGenerator.data_editor):
        defaults = inspect.unwrap(method).__kwdefaults__
        if defaults is not None and "placeholder" in defaults:
            defaults["placeholder"] = MISSING_CELL

"""Why one answer got its scores, as a Streamlit component: `show_why(judgement)`.

The disagreement categories it falls in, the Accuracy trace (normalised prediction and gold,
numbers read and the relative error, the rule that decided and its threshold), a character diff of
the prediction against the gold, and the token overlap behind token F1. Model text is shown as
plain text only (st.code / dataframe cells), never as Markdown or HTML. The pure work is in
dashboard/disagreement.py and dashboard/textdiff.py.
"""

from __future__ import annotations

import streamlit as st

from scoring.categories import CATEGORIES, classify
from scoring.metrics import Judgement

from .disagreement import token_overlap, why_diffs
from .tables import trace_frame


def show_why(judgement: Judgement, *, key: str = "") -> None:
    """Draw the explanation of one judgement (`key` keeps widgets of several panels apart)."""
    c = classify(judgement, with_fuzzy=True)
    st.markdown(f"**Category: `{c.primary}`**" + (f" · also {', '.join(f'`{x}`' for x in c.categories[1:])}"
                                                  if len(c.categories) > 1 else ""))
    st.caption("  \n".join(f"{x}: {CATEGORIES[x]}" for x in c.categories) + f"  \nFuzzy (seed 001): {c.fuzzy:.3f}")
    trace = trace_frame(judgement)
    st.markdown("**Accuracy trace**")
    st.dataframe(trace, hide_index=True, width="stretch", height=35 * (len(trace) + 1) + 3,
                 key=f"why_trace_{key}" if key else None)
    st.markdown("**Character diff, prediction → gold**")
    st.caption("[-x-] is only in the prediction, {+x+} only in the gold; the rest is shared.")
    for title, text in why_diffs(judgement):
        st.caption(title)
        st.code(text, language=None, wrap_lines=True)
    frame, note = token_overlap(judgement)
    st.markdown("**Token overlap behind token F1**")
    st.dataframe(frame, hide_index=True, width="stretch", key=f"why_tokens_{key}" if key else None)
    st.caption(note)

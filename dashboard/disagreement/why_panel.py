"""Why one answer got its scores, as a Streamlit component: `show_why(judgement)`.

The disagreement categories it falls in, the Accuracy trace (normalised prediction and gold,
numbers read and the relative error, the rule that decided and its threshold), a character diff of
the prediction against the gold, and the token overlap behind token F1. Model text is shown as
plain text only (st.code / dataframe cells), never as Markdown or HTML. The pure work is in
dashboard/disagreement/frames.py and dashboard/core/textdiff.py.
"""

from __future__ import annotations

import streamlit as st

from dashboard.core.escape import clipped, md_escape
from dashboard.disagreement.frames import (
    FUZZY_DEFINITION,
    FUZZY_LABEL,
    category_label,
    token_overlap,
    trace_frame,
    why_diffs,
)
from scoring.categories import CATEGORIES, classify
from scoring.metrics import Judgement, judge

EXPLAIN_CHARS = 20_000  # a longer answer is explained on its first EXPLAIN_CHARS characters


def _explained(j: Judgement) -> tuple[Judgement, bool]:
    """The judgement to explain: `j`, or `j` re-judged on the first EXPLAIN_CHARS characters."""
    text = j.prediction
    if text is None or len(text) <= EXPLAIN_CHARS:
        return j, False
    return judge(text[:EXPLAIN_CHARS], j.answers, j.answer_format, j.verification_rule, status=j.status,
                 profile=j.profile), True


def show_why(judgement: Judgement, *, key: str = "", trace: bool = True, title: str | None = None,
             response: object = None) -> None:
    """Draw the explanation of one judgement: its categories (from the whole answer), the Accuracy
    trace (unless `trace=False`, when the caller shows it), the character diff and the token overlap.
    With `title`, all of it sits in an expander of that title, drawn only once it is opened. `key`
    keeps several panels apart."""
    if title:  # drawn only while open: a closed panel costs nothing and adds nothing to the page
        box = st.expander(title, icon=":material/rule:", key=f"why_open_{key}", on_change="rerun")
        if box.open:
            with box:
                _draw(judgement, key, trace, response)
    else:
        _draw(judgement, key, trace, response)


def _draw(judgement: Judgement, key: str, trace: bool, response: object = None) -> None:
    c = classify(judgement, with_fuzzy=True, response=response)
    st.markdown(f"**Category: {category_label(c.primary)}**" + (
        f" · also {', '.join(category_label(x) for x in c.categories[1:])}" if len(c.categories) > 1 else ""))
    st.caption("  \n".join(f"{category_label(x)}: {CATEGORIES[x]}" for x in c.categories) + f"  \n{FUZZY_LABEL}: {c.fuzzy:.3f}",
               help=FUZZY_DEFINITION)
    j, cut = _explained(judgement)
    if cut:
        st.caption(f"The diff and the token overlap below use the first {EXPLAIN_CHARS:,} of "
                   f"{len(judgement.prediction or ''):,} characters of the answer; the scores are from the whole answer.")
    if trace:
        frame = clipped(trace_frame(j), 500)
        st.markdown("**Accuracy trace**")
        st.dataframe(frame, hide_index=True, width="stretch", height=35 * (len(frame) + 1) + 3,
                     key=f"why_trace_{key}" if key else None)
    st.markdown("**Character diff, prediction → gold**")
    st.caption("[-x-] is only in the prediction, {+x+} only in the gold; the rest is shared.")
    for heading, text in why_diffs(j):
        st.caption(md_escape(heading))
        st.code(text, language=None, wrap_lines=True)
    frame, note = token_overlap(j)
    st.markdown("**Token overlap behind token F1**")
    st.dataframe(clipped(frame, 500), hide_index=True, width="stretch", key=f"why_tokens_{key}" if key else None)
    st.caption(note)

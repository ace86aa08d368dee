"""Streamlit pieces of saved slices (issue 25, section 3): save the explorer's filters or a slice the
finder discovered under a name (with the session's annotator name and a note), list them with
Open and Delete, apply one from the URL (`?slice=NAME`), and the question frame with the saved
slices and tags as fields for the overview, Compare runs, the finder and the report.

Saved slices live in the annotations database (dashboard/annotations/store.py), shared by every session
of the benchmark. Names, notes, authors and definitions are user text: shown with st.text,
dataframes, or through md_escape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboard.annotations import panel as notes_panel
from dashboard.annotations.errors import AnnotationsUnavailable, InvalidInput
from dashboard.annotations.records import Conflict, SavedSlice
from dashboard.core.bounded import Bounded
from dashboard.core.escape import md_escape
from dashboard.core.links import View, page_url, with_source
from dashboard.shell import output, viewstate
from dashboard.shell.context import Context
from dashboard.weak import frames as W
from dashboard.weak import saved as S

APPLIED = "lens_saved_applied"  # the saved slice whose filters the explorer last applied from the view
EXPLORER_PREFIX = viewstate.EXPLORER_PREFIX


def saved_slices(ctx: Context) -> list[SavedSlice]:
    """The open benchmark's saved slices, by name ([] when the database cannot be read)."""
    if not ctx.benchmark:
        return []
    try:
        return notes_panel.store().saved_slices(ctx.benchmark)
    except AnnotationsUnavailable:
        return []


def by_name(ctx: Context) -> dict[str, SavedSlice]:
    return {s.name: s for s in saved_slices(ctx)}


def tags(ctx: Context, runs: Sequence[str] | None = None) -> pd.Series:
    """Each question's tags (its own note's and `runs`' answers', every run's when None)."""
    return S.question_tags(notes_panel.notes(ctx), ctx.analysis.questions.index, runs)


MEMBERSHIP: Bounded[pd.Series] = Bounded(16)  # (questions, slices, tags) -> each question's saved slices


def membership(ctx: Context, saved: Sequence[SavedSlice], tags_of: pd.Series | None = None) -> pd.Series:
    """`saved.membership` of the open benchmark's questions, computed once per (questions, slices as
    saved, tags) and shared by the sessions (every page reruns it otherwise)."""
    q = ctx.analysis.questions
    key = (ctx.gold_key, id(q), len(q), tuple((s.name, s.revision, tuple(s.definition.items())) for s in saved),
           None if tags_of is None else hash(tuple(tags_of.items())))
    return MEMBERSHIP.get_or_build(key, lambda: S.membership(q, saved, tags_of))


def saved_breakdown(ctx: Context) -> pd.DataFrame | None:
    """The overview's breakdown of the saved slices (run, label, count, metrics), None when none is saved."""
    saved = saved_slices(ctx)
    if not saved:
        return None
    t = tags(ctx) if any(S.TAG_FIELD in s.definition for s in saved) else None
    # each run on the questions it attempted, as the leaderboard and the other breakdowns (in the engine)
    return ctx.analysis.breakdown_by_labels(membership(ctx, saved, t))


def questions_with_fields(ctx: Context, runs: Sequence[str] | None = None, with_tags: bool = False) -> pd.DataFrame:
    """The question frame with SAVED_FIELD when slices are saved (and, with_tags, TAG_FIELD when some
    question carries a tag); the frame itself otherwise."""
    saved = saved_slices(ctx)
    q = ctx.analysis.questions
    t = tags(ctx, runs) if with_tags or any(S.TAG_FIELD in s.definition for s in saved) else None
    extra = {}
    if saved:
        extra[S.SAVED_FIELD] = membership(ctx, saved, t)
    if with_tags and t is not None and bool(t.map(bool).any()):
        extra[S.TAG_FIELD] = t
    return q.assign(**extra) if extra else q


def _locked() -> bool:
    return notes_panel.store().problem is not None


def save_form(ctx: Context, definition: Mapping[str, Sequence[str]], key: str, *, left_out: Sequence[str] = (),
              suggested: str = "", describe: str = "") -> SavedSlice | None:
    """A form saving `definition` under a name, with the session's name and a note. A name in use is
    replaced only when asked (the box ticked), from the revision just read: someone saving it in
    between is a Conflict, said with what they saved."""
    if not ctx.benchmark:
        return None
    st.caption(md_escape(f"Saves: {describe or S.describe(definition)}") if definition else
               "No field or tag filter to save: choose values in the filters first.")
    if left_out:
        st.caption(md_escape("Not kept in a saved slice (they depend on the runs' answers, or a field the database "
                             f"cannot name): {', '.join(left_out)}."))
    name = notes_panel.author(key)
    current = by_name(ctx)
    with st.form(f"saved_form_{key}", border=True):
        title = st.text_input("Slice name", value=suggested, key=f"saved_name_{key}", max_chars=200)
        note = st.text_area("Note", key=f"saved_note_{key}", height=68, max_chars=10_000,
                            placeholder="why this slice matters")
        replace_old = st.checkbox("Replace a saved slice of the same name", key=f"saved_replace_{key}")
        pressed = st.form_submit_button("Save slice", icon=":material/bookmark_add:", key=f"saved_go_{key}",
                                        disabled=_locked() or not definition)
    if not pressed:
        return None
    if not name:
        st.error("Type your name above first: every saved slice records who saved it.", icon=":material/person:")
        return None
    old = current.get(title.strip())
    if old is not None and not replace_old:
        st.error(md_escape(f"A slice named “{old.name}” is saved already (by {old.author}: {old.describe()}). Choose "
                           "another name, or tick “Replace a saved slice of the same name”."), icon=":material/bookmark:")
        return None
    try:
        made = notes_panel.store().save_slice(ctx.benchmark, title, definition=definition, author=name, note=note,
                                              expected_revision=old.revision if old else 0)
    except Conflict as c:
        st.error(md_escape(c.message), icon=":material/sync_problem:")
        return None
    except (InvalidInput, AnnotationsUnavailable) as exc:
        output.show_error(exc)
        return None
    st.success(md_escape(f"Saved slice “{made.name}” ({made.describe()})" + (", replacing the one of that name." if old else ".")),
               icon=":material/bookmark:")
    return made


def open_saved(s: SavedSlice, run: str | None = None) -> None:
    """Open the question explorer on a saved slice's filters (its widgets reseeded from the view)."""
    viewstate.set_view(S.view_of(viewstate.view(), s, run))
    st.session_state[APPLIED] = s.name
    for key in [k for k in st.session_state if str(k).startswith(EXPLORER_PREFIX)]:
        del st.session_state[key]
    viewstate.switch_to(viewstate.QUESTIONS_PAGE)


def apply_from_view(ctx: Context, view: View) -> View:
    """The explorer's view with the saved slice the URL names (`?slice=NAME`) applied once: its
    filters replace the view's; an unknown name is said and dropped."""
    if not view.saved or st.session_state.get(APPLIED) == view.saved:
        return view
    st.session_state[APPLIED] = view.saved
    s = by_name(ctx).get(view.saved)
    if s is None:
        st.warning(md_escape(f"No saved slice named “{view.saved}” in this benchmark's annotations: the filters are "
                             "as the rest of the link says."), icon=":material/bookmark_remove:")
        new = replace(view, saved="")
        viewstate.set_view(new)
        return new
    new = S.view_of(view, s)
    for key in [k for k in st.session_state if str(k).startswith(EXPLORER_PREFIX)]:
        del st.session_state[key]
    viewstate.set_view(new)
    return new


def keep_name(view: View, ctx: Context) -> View:
    """The view keeps the saved slice's name (in the URL) only while its filters are the slice's."""
    if not view.saved:
        return view
    s = by_name(ctx).get(view.saved)
    if s is None or not S.same_filters(view, s):
        view.saved = ""
    return view


def manage(ctx: Context, key: str, run: str | None = None) -> None:
    """Every saved slice of the benchmark: a table (name, definition, questions, who, note), and
    Open in the explorer / Delete for the one picked."""
    saved = saved_slices(ctx)
    if not saved:
        st.caption("No saved slice yet. Save the explorer's filters, or a slice the Weak slices page found: it is "
                   "kept for everyone using this benchmark and becomes a breakdown field of the overview, Compare runs, "
                   "the finder and the report.")
        return
    t = tags(ctx) if any(S.TAG_FIELD in s.definition for s in saved) else None
    table = S.listing(saved, ctx.analysis.questions, t, membership(ctx, saved, t))
    st.dataframe(table, hide_index=True, width="stretch", key=f"saved_table_{key}")
    names = [s.name for s in saved]
    c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    pick = c1.selectbox("Saved slice", names, key=f"saved_pick_{key}")
    chosen = next(s for s in saved if s.name == pick)
    if c2.button("Open", key=f"saved_open_{key}", icon=":material/arrow_forward:", width="stretch"):
        open_saved(chosen, run)
    if c3.button("Delete", key=f"saved_delete_{key}", icon=":material/delete:", width="stretch", disabled=_locked()):
        try:
            notes_panel.store().delete_slice(ctx.benchmark, chosen.name, expected_revision=chosen.revision)
        except Conflict as c:
            st.error(md_escape(c.message), icon=":material/sync_problem:")
        except (InvalidInput, AnnotationsUnavailable) as exc:
            output.show_error(exc)
        else:
            st.toast(md_escape(f"Deleted the saved slice “{chosen.name}”."), icon=":material/check:")
            st.rerun()
    link = page_url(W.EXPLORER, with_source(View(saved=chosen.name), viewstate.view()))  # a new session: the folder open too
    st.caption(f"Link to it: [{md_escape(link)}]({link}) (opens the explorer with its filters, on this benchmark).")

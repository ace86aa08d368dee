"""The annotations in the app (issue 21): notes and tags on an answer and on a question, the tag
vocabulary, gold corrections, the overview's failure modes, the comparison's "modes A has that B
has not", and the Data page's list, export and import.

Every page calls one function here with the page's context (`dashboard.shell.context.Context`):
`annotate` (question detail, Evidence page, the comparison's question), `failure_modes`
(overview), `modes_a_not_b` (Compare runs), `data_section` (Data page), `explorer_filter` and
`explorer_columns` (the explorer). The database is one per server process (`cache.annotation_store`);
a session's name is typed once (session state) and saved with every note.

Saving names the revision the form was drawn with: when someone saved in between, `Conflict` is
shown with their note, and the next Save replaces it knowingly. A database that cannot be written
is said once per session; the forms are then disabled and the pages work on.

User text (notes, tags, authors, answers) is shown with st.text / st.code / dataframes, or through
md_escape: never as Markdown or HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.annotations import frames
from dashboard.annotations import store_panel as cache
from dashboard.annotations.corrections import check_answer
from dashboard.annotations.errors import AnnotationsUnavailable, InvalidInput
from dashboard.annotations.exchange import RECOVER, export, import_bytes, import_file
from dashboard.annotations.records import DEFAULT_TAGS, Conflict, Note
from dashboard.annotations.store import AnnotationStore
from dashboard.core.analysis import RECOMPUTED
from dashboard.core.escape import md_escape
from dashboard.core.links import TAG_FIELD, field_label
from dashboard.shell import output, scorer, viewstate
from dashboard.shell.context import Context
from scoring.model import GoldQuestion

NAME = "lens_annotator"  # the session's name, typed once
SAID = "lens_annotations_said"  # the read-only message was shown in this session
SAMPLE_FILE = "annotations/annotations.jsonl"  # in a benchmark folder: the annotations it ships with (the sample does)
SAMPLE_DISMISSED = "lens_sample_annotations_dismissed"
GOLD_WRONG = "gold_wrong"


# ----------------------------------------------------------------------------- the store


def store() -> AnnotationStore:
    return cache.annotation_store()


def notes(ctx: Context) -> list[Note]:
    """Every note of the open benchmark ([] when the database cannot be read)."""
    try:
        return store().notes(ctx.benchmark)
    except AnnotationsUnavailable:
        return []


def vocabulary() -> list[str]:
    try:
        return store().vocabulary()
    except AnnotationsUnavailable:
        return list(DEFAULT_TAGS)


def _read_only(where: str = "") -> bool:
    """Whether notes cannot be saved; the reason is said once per session (a caption afterwards)."""
    s = store()
    if s.problem is None:
        return False
    said = st.session_state.setdefault(SAID, set())
    if s.problem.message not in said:
        said.add(s.problem.message)
        st.warning(md_escape(s.problem.message), icon=":material/edit_off:")
    else:
        st.caption("Annotations are read-only (the database cannot be written; the Data page says why).")
    return True


def _author(key: str, label: str = "Your name (saved with every note)") -> str:
    """The session's name: a text box (one per form that records who wrote something; a page may show
    two, e.g. the notes' and the saved slices'), its value kept for the session across pages in NAME.
    Each box remembers the name it last showed: a box whose value differs from that was typed in, and
    its value becomes NAME; otherwise, if NAME moved on (typed in another box), the box is brought up to
    NAME. Read from the widget's state on every run, not only in on_change: a commit whose rerun was
    merged with the reading poller's fragment rerun lost its callback, and the name an earlier commit
    had set was saved with the note while the box showed the newer one."""
    wkey, seen_key = f"ann_name_{key}", f"ann_name_seen_{key}"
    name = st.session_state.get(NAME, "")
    if wkey in st.session_state:
        typed = str(st.session_state[wkey]).strip()
        seen = st.session_state.get(seen_key, typed)
        if typed != seen:  # typed in this box since it was last drawn
            name = st.session_state[NAME] = typed
        elif typed != name:  # typed in another box of this session since this one was drawn
            st.session_state[wkey] = name
    st.session_state[seen_key] = name

    def keep() -> None:
        st.session_state[NAME] = st.session_state[seen_key] = str(st.session_state[wkey]).strip()

    # the session's name in the call (not only in the widget's state): a box re-created after Streamlit
    # dropped its state comes back with the name, never empty
    st.text_input(label, value=name, key=wkey, on_change=keep, max_chars=100,
                  placeholder="type it once for this browser session")
    return st.session_state.get(NAME, "")


def author(key: str, label: str = "Your name (saved with the slice)") -> str:
    """The session's name box (`_author`) for other panels: a saved slice records who saved it."""
    return _author(key, label)


# ----------------------------------------------------------------------------- one note's form


def _read_note(ctx: Context, qid: str, run: str, key: str) -> tuple[Note | None, bool]:
    """(the stored note, whether it could be read). While the database cannot be read, the note
    last read in this session stands in for it (None: never read), so nothing on the page takes
    "cannot be read" for "there is no note"."""
    s = store()
    try:
        current = s.note(ctx.benchmark, qid, run)
        known = s.readable  # False: the read returned nothing because nothing could be read
    except AnnotationsUnavailable:
        current, known = None, False
    if known:
        st.session_state[f"ann_last_{key}"] = current
        return current, True
    return st.session_state.get(f"ann_last_{key}"), False


def _retry_box(key: str) -> None:
    """The database cannot be read now: the form keeps what was typed; a button tries it again."""
    # the cause is said once, above the forms (_read_only): not again per form
    st.caption("Not saved: what you typed stays in this form. Save works again once the database is back; the page "
               "tries it on every rerun.")
    _try_again(key)


def _try_again(key: str) -> None:
    """The button that tries the database again at once. Under what it is about, as wide as its label:
    in a narrow column beside the sentence it read "Tr…" at 1,400 px and lost its words at 800."""
    if st.button("Try again", key=f"ann_retry_{key}", icon=":material/refresh:", width="content"):
        store().reopen()
        st.rerun()


def database_away(key: str, what: str) -> bool:
    """When the annotations database cannot be read now (a server away, a file that cannot be opened):
    says so where its contents would be -- `what` cannot be shown (the end of a sentence: "the failure
    modes ... cannot be counted") -- with why and a Try again button, and returns True; never "nothing yet",
    which is what reads that return nothing would show. False when it can be read."""
    s = store()
    if s.readable:
        return False
    problem = s.problem
    how = "reached" if problem is None or problem.reason == "unreachable" else "read"
    st.warning(md_escape(f"The annotations database cannot be {how} now, so {what}. They show here once it is back: "
                         "the page tries it again on every rerun."), icon=":material/cloud_off:")
    if problem is not None:
        st.caption(md_escape(problem.message))
    _try_again(key)
    return True


def _note_form(ctx: Context, qid: str, run: str, key: str, vocab: list[str], name: str, locked: bool,
               retry: bool = True) -> Note | None:
    """The note of (question, run) -- run "" for the question itself -- as a form. Returns the stored note.
    `retry`: this form offers "Try again" when the database cannot be read (one form of a block does)."""
    s = store()
    rev_key, text_key, tags_key, base_key = f"ann_rev_{key}", f"ann_text_{key}", f"ann_tags_{key}", f"ann_base_{key}"
    drawn = st.session_state.get(rev_key)  # the revision the form showed when it was last drawn
    current, known = _read_note(ctx, qid, run, key)
    stored = current.revision if current else 0
    submitting = bool(st.session_state.get(f"ann_save_{key}"))  # this run is the form's Save
    # what the form holds that it was not drawn with (typed, not saved): kept whatever the store says
    unsaved = text_key in st.session_state and st.session_state.get(base_key) != (
        st.session_state.get(text_key), list(st.session_state.get(tags_key) or []))
    if drawn is None or text_key not in st.session_state or (
            known and drawn != stored and not submitting and not unsaved and not st.session_state.get(f"ann_keep_{key}")):
        # first drawn, or someone saved since and this form holds nothing unsaved: show what is stored
        # (a database that cannot be read reseeds nothing: "cannot be read" is not "no note")
        st.session_state[text_key] = current.text if current else ""
        st.session_state[tags_key] = list(current.tags) if current else []
        drawn = st.session_state[rev_key] = stored
        st.session_state[base_key] = (st.session_state[text_key], list(st.session_state[tags_key]))
    st.session_state.pop(f"ann_keep_{key}", None)
    if not known and retry:
        _retry_box(key)
    options = list(dict.fromkeys([*vocab, *st.session_state.get(tags_key, [])]))
    what = "this answer" if run else "the question (its gold)"
    with st.form(f"ann_form_{key}", border=True):
        st.text_area(f"Note on {what}", key=text_key, height=90, max_chars=10_000,
                     placeholder="what went wrong, in a sentence")
        st.multiselect("Tags", options, key=tags_key, placeholder="failure modes")
        saved = st.form_submit_button("Save", icon=":material/save:", disabled=locked, key=f"ann_save_{key}")
    if current is not None:
        st.caption(md_escape(f"Last saved by {current.author} at {current.updated[:16].replace('T', ' ')} UTC "
                             f"(revision {current.revision})."))
    if not saved:
        return current
    if not name:
        st.error("Type your name above first: every note records who wrote it.", icon=":material/person:")
        st.session_state[f"ann_keep_{key}"] = True
        return current
    try:
        note = s.save_note(ctx.benchmark, qid, run, text=st.session_state[text_key], tags=st.session_state[tags_key],
                           author=name, expected_revision=drawn)
    except Conflict as c:
        st.error(md_escape(c.message), icon=":material/sync_problem:")
        if isinstance(c.current, Note):
            st.caption("Their note, as stored now:")
            st.text(c.current.text or "(no text)")
        st.caption("Your text is still in the form: Save again to replace theirs with it.")
        st.session_state[rev_key] = c.current.revision if c.current is not None else 0
        st.session_state[f"ann_keep_{key}"] = True
        return c.current if isinstance(c.current, Note) else None
    except (InvalidInput, AnnotationsUnavailable) as exc:
        output.show_error(exc)
        st.session_state[f"ann_keep_{key}"] = True
        return current
    st.session_state[rev_key] = note.revision
    st.session_state[base_key] = (note.text, list(note.tags))
    st.toast("Note saved.", icon=":material/check:")
    st.rerun()  # every table of the page (tag columns, counts) drawn again with it


def _correction_form(ctx: Context, q: GoldQuestion, key: str, name: str, locked: bool) -> None:
    """A question tagged gold_wrong: its corrected gold answer (read as its format), or "exclude"."""
    s = store()
    try:
        current = s.correction(ctx.benchmark, q.qid)
        known = s.readable
    except AnnotationsUnavailable:
        current, known = None, False
    if known:
        st.session_state[f"ann_clast_{key}"] = current
    else:  # cannot be read now: the correction last read stands (its form keeps what was typed)
        current = st.session_state.get(f"ann_clast_{key}")
    rev_key = f"ann_crev_{key}"
    drawn = st.session_state.get(rev_key, current.revision if current else 0)
    st.markdown("**Gold correction**")
    if current is not None:
        st.caption(md_escape(f"Now: {current.describe()} — by {current.author} at "
                             f"{current.updated[:16].replace('T', ' ')} UTC."))
    with st.form(f"ann_cform_{key}", border=True):
        action = st.radio("Correction", ["answer", "exclude"], horizontal=True, key=f"ann_caction_{key}",
                          index=1 if current is not None and current.exclude else 0,
                          format_func={"answer": "the gold answer should be", "exclude": "exclude this question"}.get)
        answer = st.text_input("Corrected gold answer", key=f"ann_canswer_{key}",
                               value=current.answer if current is not None else "",
                               help=f"Read as the question's format ({q.answer_format}); ignored when excluding.")
        c1, c2 = st.columns(2)
        saved = c1.form_submit_button("Save correction", icon=":material/save:", disabled=locked)
        removed = c2.form_submit_button("Remove correction", icon=":material/delete:",
                                        disabled=locked or current is None)
    st.session_state[rev_key] = current.revision if current else 0
    if not (saved or removed):
        return
    if not name:
        st.error("Type your name above first: every correction records who made it.", icon=":material/person:")
        return
    try:
        if removed:
            s.delete_correction(ctx.benchmark, q.qid, expected_revision=drawn)
            st.toast("Correction removed.", icon=":material/check:")
            st.rerun()
        else:
            why = None if action == "exclude" else check_answer(q, answer)
            if why:
                st.error(md_escape(f"Not saved: {why}."), icon=":material/error:")
                return
            fixed = s.save_correction(ctx.benchmark, q.qid, answer=answer, exclude=action == "exclude", author=name,
                                      expected_revision=drawn)
            st.session_state[rev_key] = fixed.revision
            st.toast("Correction saved. Turn on “with gold corrections” in the sidebar to rescore.", icon=":material/check:")
            st.rerun()
    except Conflict as c:
        st.error(md_escape(c.message), icon=":material/sync_problem:")
    except (InvalidInput, AnnotationsUnavailable) as exc:
        output.show_error(exc)


def vocabulary_editor(key: str) -> None:
    """Add, rename or remove a tag of the shared vocabulary."""
    s = store()
    locked = s.problem is not None
    vocab = vocabulary()
    with st.expander("Tag vocabulary", icon=":material/sell:"):
        st.caption("The tags offered on every note, shared by everyone using this database: " + md_escape(", ".join(vocab)))
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        new = c1.text_input("New tag", key=f"ann_vnew_{key}", placeholder="lowercase, digits, _ and -")
        if c2.button("Add", key=f"ann_vadd_{key}", disabled=locked or not new.strip()):
            _vocab_do(lambda: s.add_tag(new), "added")
        c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        old = c1.selectbox("Tag", vocab, key=f"ann_vold_{key}")
        renamed = c2.text_input("Rename to", key=f"ann_vren_{key}")
        if c3.button("Rename", key=f"ann_vrename_{key}", disabled=locked or not renamed.strip() or old is None):
            _vocab_do(lambda: s.rename_tag(old, renamed), "renamed")
        try:
            used = s.tag_usage().get(old, 0) if old else 0
        except AnnotationsUnavailable:
            used = 0
        if st.button(f"Remove {old!s} ({used} note{'s' * (used != 1)} carry it)" if old else "Remove",
                     key=f"ann_vremove_{key}", disabled=locked or old is None, icon=":material/delete:"):
            _vocab_do(lambda: s.remove_tag(old), "removed")


def _vocab_do(action, done: str) -> None:
    try:
        action()
    except (InvalidInput, AnnotationsUnavailable) as exc:
        output.show_error(exc)
        return
    st.toast(f"Tag {done}.", icon=":material/check:")
    st.rerun()


# ----------------------------------------------------------------------------- the page block


def annotate(ctx: Context, q: GoldQuestion, runs: Sequence[str], key: str) -> None:
    """Notes and tags on the question and on one chosen run's answer, the gold correction of a
    question tagged gold_wrong, and the vocabulary: the block the question views call."""
    if not ctx.benchmark:
        return
    with st.container(border=True):
        st.markdown("**Triage notes**")
        locked = _read_only()
        name = _author(key)
        vocab = vocabulary()
        left, right = st.columns(2)
        runs = [r for r in runs if r]
        with left:  # "Try again" once a block: beside the answer's note when there is one
            qnote = _note_form(ctx, q.qid, "", f"{key}_q_{q.qid}", vocab, name, locked, retry=not runs)
            if qnote is not None and GOLD_WRONG in qnote.tags:
                _correction_form(ctx, q, f"{key}_{q.qid}", name, locked)
            else:
                st.caption(f"Tag the question {GOLD_WRONG} to correct its gold answer or exclude it.")
        with right:
            if not runs:
                st.caption("Choose a run to note on its answer.")
            else:
                run = st.selectbox("Answer of run", runs, key=f"ann_run_{key}") if len(runs) > 1 else runs[0]
                if len(runs) == 1:
                    st.caption(md_escape(f"Answer of run {run}"))
                _note_form(ctx, q.qid, run, f"{key}_a_{q.qid}_{run}", vocab, name, locked)
        vocabulary_editor(key)


# ----------------------------------------------------------------------------- the explorer


def explorer_filter(ctx: Context, view, key: str = "x_ann") -> None:
    """The explorer's annotation filter (tags, untagged, has note), seeded from and written to the view."""
    vocab = vocabulary()
    options = [frames.UNTAGGED, *vocab, *[t for t in view.tags if t not in vocab and t != frames.UNTAGGED]]
    viewstate.seed(f"{key}_tags", [t for t in view.tags if t in options])
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    view.tags = c1.multiselect("Annotation tags (the question or a chosen run's answer)", options, key=f"{key}_tags",
                               placeholder="any", help=f"{frames.UNTAGGED}: no tag at all.")
    viewstate.seed(f"{key}_note", view.noted)
    view.noted = c2.checkbox("has a note", key=f"{key}_note")


def filter_ids(ctx: Context, view, question_ids) -> set[str] | None:
    """The question ids the view's annotation filter keeps (None: no such filter)."""
    if not view.tags and not view.noted:
        return None
    return frames.matching_ids(question_ids, notes(ctx), view.runs, view.tags, view.noted)


def with_tag_columns(ctx: Context, frame: pd.DataFrame, runs: Sequence[str]) -> pd.DataFrame:
    """The explorer's table (a `question_id` column) with the tag columns joined on, for the table and its CSV."""
    if "question_id" not in frame.columns:
        return frame
    return frame.join(frames.tag_columns(list(frame["question_id"]), notes(ctx), runs), on="question_id")


def notes_stamp(ctx: Context) -> tuple:
    """What the notes are now, for memo keys (a saved note changes it)."""
    return tuple(sorted((n.question_id, n.run, n.revision) for n in notes(ctx)))


# ----------------------------------------------------------------------------- the overview


def _plain_board(ctx: Context) -> pd.DataFrame | None:
    """The leaderboard of the recomputed runs without gold corrections (in the engine under the plain gold)."""
    if ctx.plain is None:
        return None
    ws, gold_key = ctx.plain
    board = scorer.board(ws, gold_key, ctx.profile)
    return board[board["Source"] == RECOMPUTED].reset_index(drop=True)


def score_changes(ctx: Context) -> pd.DataFrame | None:
    """How each recomputed run's Accuracy and rank move with the gold corrections (None: not on)."""
    before = _plain_board(ctx) if ctx.corrections is not None and ctx.corrections.changed else None
    if before is None:
        return None
    after = ctx.analysis.leaderboard()
    after = after[after["Source"] == RECOMPUTED]
    return frames.score_changes(before, after)


def corrections_summary(ctx: Context) -> None:
    """The sidebar toggle's effect: a table of score and rank changes, or how to turn it on."""
    changes = score_changes(ctx)
    if changes is not None:
        st.markdown("**With gold corrections:** " + md_escape(str(ctx.corrections)))
        st.dataframe(changes, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.2f") for c in changes.columns if "(%)" in c or "points" in c})
        return
    n = len(cache.corrections(ctx.benchmark)) if ctx.benchmark else 0
    if n and not viewstate.view().corrected:
        st.caption(f"{n} gold correction{'s' * (n != 1)} recorded: turn on “with gold corrections” in the sidebar "
                   "to rescore every run with them and see how the scores and ranks move.")


def offer_sample(ctx: Context, key: str) -> bool:
    """When the open benchmark ships an annotations file and the database has nothing for it: offer to import it.
    True when it was imported in this run (what the caller read of the notes before is out of date)."""
    bench = ctx.workspace.discovery.benchmark
    path = Path(bench) / SAMPLE_FILE if bench is not None else None
    if path is None or not path.is_file() or st.session_state.get(SAMPLE_DISMISSED) or not ctx.benchmark:
        return False
    try:
        if store().benchmarks().get(ctx.benchmark):
            return False
    except AnnotationsUnavailable:
        return False
    box = st.container(border=True)
    box.info(md_escape(f"This benchmark comes with triage notes ({SAMPLE_FILE}): import them into the annotations "
                       f"database ({store().path}) to see failure modes, tags and a gold correction in every view."),
             icon=":material/note_stack:")
    c1, c2 = box.columns(2)
    if c1.button("Import the sample's notes", key=f"ann_sample_{key}", icon=":material/download:",
                 disabled=store().problem is not None):
        _import_path(ctx, path)
        return True
    if c2.button("Not now", key=f"ann_sample_no_{key}"):
        st.session_state[SAMPLE_DISMISSED] = True
        st.rerun()
    return False


def _import_path(ctx: Context, path: Path) -> None:
    try:
        result = import_file(store(), ctx.benchmark, path, question_ids=ctx.analysis.gold_ids or None)
    except (AnnotationsUnavailable, InvalidInput) as exc:
        output.show_error(exc)
        return
    _said_import(result)


def _damaged_rows(s: AnnotationStore, benchmark: str) -> None:
    """Rows of the database that cannot be read as annotations: named, with the way to recover."""
    if not benchmark:
        return
    bad: list[str] = []
    try:
        s.notes(benchmark, bad=bad)
        s.corrections(benchmark, bad=bad)
        s.saved_slices(benchmark, bad=bad)
    except AnnotationsUnavailable:
        return
    if bad:
        st.warning(md_escape(f"{len(bad)} damaged row{'s' * (len(bad) != 1)} of {s.path} cannot be read and are left out of "
                             f"every view and export. {RECOVER}"), icon=":material/report:")
        st.code("\n".join(bad[:200]), language=None, wrap_lines=True)


def _said_import(result) -> None:
    (st.error if result.unreadable else st.success)(md_escape(result.summary()))
    if result.problems:
        st.code("\n".join(f"{p.location}: {p.message}" for p in result.problems[:200]), language=None, wrap_lines=True)


def failure_modes(ctx: Context, runs: Sequence[str], fields: Sequence[str]) -> None:
    """The overview's section: tag counts per run, per slice of every breakdown, and the gold
    corrections' effect; a tag and run open those questions in the explorer."""
    st.subheader("Failure modes")
    mine = notes(ctx)  # the read that finds out whether the database can be reached
    if database_away("ov_modes", "the failure modes -- the tags of its triage notes -- cannot be counted"):
        return
    corrections_summary(ctx)
    if offer_sample(ctx, "ov"):  # imported just now: their tags are counted in this run
        mine = notes(ctx)
    tagged = [n for n in mine if n.tags]
    if not tagged:
        st.caption("No tagged notes yet. Tag answers in the question explorer (select a question, then Triage notes): "
                   "their failure modes are counted here per run and per slice.")
        return
    vocab = vocabulary()
    table = frames.tag_table(mine, list(runs), vocab)
    st.caption(f"How many answers of each run carry each tag ({len(tagged)} tagged notes; {frames.QUESTION_ROW}: "
               "tags on the questions themselves).")
    st.dataframe(table, hide_index=True, width="stretch", key="ov_modes_table")
    c1, c2 = st.columns([1, 3])
    field_name = c1.selectbox("Per slice of", list(fields), format_func=field_label, key="ov_modes_field")
    by_slice = frames.slice_tag_counts(mine, ctx.analysis.questions, field_name, list(runs))
    c2.dataframe(by_slice, hide_index=True, width="stretch", key="ov_modes_slice")
    with st.expander("Open the questions of a failure mode", icon=":material/arrow_forward:"):
        c1, c2 = st.columns(2)
        tag = c1.selectbox("Tag", list(table["tag"]), key="ov_modes_tag")
        run = c2.selectbox("Run", [None, *runs], key="ov_modes_run",
                           format_func=lambda r: "every run in the charts" if r is None else r)
        if st.button("Show these questions", key="ov_modes_open", icon=":material/arrow_forward:"):
            if run is None:
                viewstate.view().runs = list(runs)
            viewstate.open_slice(run, TAG_FIELD, tag)


# ----------------------------------------------------------------------------- compare runs


def modes_a_not_b(ctx: Context, a: str, b: str) -> None:
    """Compare runs: the failure modes A's answers carry where B's answers to the same questions do not."""
    st.markdown("**Failure modes A has that B does not** (annotation tags)")
    mine = notes(ctx)
    if database_away("cmp_modes", "A's and B's failure modes -- the tags of its triage notes -- cannot be compared"):
        return
    table = frames.modes_not_in(mine, a, b)
    if table.empty:
        st.caption(md_escape(f"No tagged notes on {a}'s answers yet (question explorer: Triage notes)."))
        return
    st.dataframe(table.rename(columns={"A": f"{a} (A)", "B": f"{b} (B)", "only A": "only A (same question)",
                                       "questions": "e.g. questions"}),
                 hide_index=True, width="stretch", key="cmp_modes")


# ----------------------------------------------------------------------------- the Data page


def data_section(ctx: Context) -> None:
    """Where the annotations live, every gold correction with its author, export and import."""
    st.subheader("Annotations")
    s = store()
    st.caption(md_escape(f"Database: {s.path} · benchmark identity {ctx.benchmark or 'none'} (a hash of the gold's "
                         "question ids and answers: moving the folder keeps the notes)."))
    if s.problem is not None:
        st.warning(md_escape(s.problem.message), icon=":material/edit_off:")
    mine = notes(ctx)
    try:
        fixes = s.corrections(ctx.benchmark)
    except AnnotationsUnavailable:
        fixes = []
    cols = st.columns(3)
    cols[0].metric("Notes", len(mine))
    cols[1].metric("Tagged", sum(1 for n in mine if n.tags))
    cols[2].metric("Gold corrections", len(fixes))
    offer_sample(ctx, "data")
    st.markdown("**Gold corrections**")
    if fixes:
        st.dataframe(pd.DataFrame([{"Question": c.question_id, "Correction": c.action,
                                    "Corrected answer": c.answer if not c.exclude else "", "By": c.author,
                                    "When (UTC)": c.updated[:19].replace("T", " "), "Revision": c.revision} for c in fixes]),
                     hide_index=True, width="stretch", key="data_corrections")
    else:
        st.caption("None. Tag a question gold_wrong in its detail to correct its gold answer or exclude it.")
    c1, c2 = st.columns(2)
    if ctx.benchmark:
        c1.download_button("Export annotations (JSONL)", lambda: export(s, ctx.benchmark)[0].encode("utf-8"),
                           file_name="annotations.jsonl", mime="application/jsonl", icon=":material/download:",
                           on_click="ignore", key="data_ann_jsonl")
        c2.download_button("Export annotations (CSV)", lambda: export(s, ctx.benchmark, fmt="csv")[0].encode("utf-8"),
                           file_name="annotations.csv", mime="text/csv", icon=":material/download:",
                           on_click="ignore", key="data_ann_csv")
    _damaged_rows(s, ctx.benchmark)
    up = st.file_uploader("Import annotations (JSONL or CSV written by an export)", type=["jsonl", "csv", "json"],
                          key="data_ann_upload", disabled=s.problem is not None or not ctx.benchmark)
    if up is not None and st.button("Import this file", key="data_ann_import", icon=":material/upload:"):
        bar = st.progress(0.0, text="Importing…")

        def moved(done: int, total: int) -> None:  # after each batch stored (others' saves get in between)
            bar.progress(done / max(1, total), text=f"Imported {done:,} of {total:,} records")

        try:
            result = import_bytes(s, ctx.benchmark, up.getvalue(), up.name, question_ids=ctx.analysis.gold_ids or None,
                                  progress=moved)
        except (AnnotationsUnavailable, InvalidInput) as exc:
            output.show_error(exc)
        else:
            _said_import(result)
        finally:
            bar.empty()
    vocabulary_editor("data")

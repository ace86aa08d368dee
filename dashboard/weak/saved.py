"""Saved slices as a breakdown field (issue 25, section 3). Pure: pandas, no streamlit.

A saved slice (`dashboard.annotations.records.SavedSlice`, kept in the annotations database beside the
notes) is a name and a definition {field: [values]}: a question is in it when, for every field, its
value (any of its values, for a multi-valued field such as evidence_source) is one of those listed.
The fields are the explorer's filter fields with the database's spelling (`definition_field`): the
question frame's columns (reasoning_type, evidence_source, length, position, document, ...), another
gold metadata key `meta.<key>` as `meta_<key>` (the database takes a-z, 0-9 and `_` only), and
`tag`, the triage notes' tags (TAG_FIELD: a question carries the tags of its own note and of every
run's answer; "(untagged)": none).

As a field everywhere a field is, SAVED_FIELD ("saved_slice") labels each question with the names of
the saved slices it is in -- none, one or several (a multi-valued field, like evidence_source): a
question in no saved slice is in no label of it (never "unknown"). `with_fields` adds that column
(and the tags' column) to the question frame, which the overview, Compare runs, the finder and the
report then read like any other field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from dashboard.core.links import META, View
from scoring.registry import METRICS

if TYPE_CHECKING:  # the database module imports SQLAlchemy (0.7 s): not for the types alone
    from dashboard.annotations.records import SavedSlice

SAVED_FIELD = "saved_slice"  # the breakdown field of saved slices (a question: the names of those it is in)
TAG_FIELD = "tag"  # the triage notes' tags as a field (the finder's extra condition, a saved slice's field)
UNTAGGED = "(untagged)"  # dashboard.annotations.frames.UNTAGGED: the tag filter's "no tag"
META_FIELD = "meta_"  # a definition's spelling of the question frame's `meta.<key>`
_KEY = re.compile(r"[a-z0-9_]{1,58}")
MULTI_VALUED = frozenset({"evidence_source", "page_category", SAVED_FIELD, TAG_FIELD})  # tuples of labels
NOT_KEPT = ("score ranges", "status", "answer location", "search text", "has a note")  # explorer filters a slice cannot hold


def definition_field(column: str) -> str | None:
    """A question-frame column (or TAG_FIELD) as a definition's field name; None when the database
    cannot spell it (a metadata key outside a-z, 0-9, `_`)."""
    if column.startswith(META):
        key = column[len(META):]
        return META_FIELD + key if _KEY.fullmatch(key) else None
    return column if re.fullmatch(r"[a-z][a-z0-9_]{0,63}", column) else None


def column_of(name: str) -> str:
    """A definition's field name as the question frame's column (`meta_x` -> `meta.x`)."""
    return META + name[len(META_FIELD):] if name.startswith(META_FIELD) else name


def definition_from_view(view: View) -> tuple[dict[str, list[str]], list[str]]:
    """(definition, what of the view it leaves out): the explorer's field filters and tag filter as a
    saved slice's definition. Score ranges, statuses, answer locations, the search and "has a note"
    depend on the chosen runs' answers, not on the question: they are named as left out."""
    out: dict[str, list[str]] = {}
    left: list[str] = []
    for column, values in view.filters.items():
        name = definition_field(column)
        if not values:
            continue
        if name is None:
            left.append(column)
        else:
            out[name] = sorted(set(values))
    if view.tags:
        out[TAG_FIELD] = sorted(set(view.tags))
    left += [what for what, on in zip(NOT_KEPT, (view.ranges, view.status, view.location, view.search, view.noted)) if on]
    return out, left


def describe(definition: Mapping[str, Sequence[str]]) -> str:
    """A definition in words, as SavedSlice.describe: `field=value & field in {a, b}`."""
    return " & ".join(f"{f} in {{{', '.join(v)}}}" if len(v) > 1 else f"{f}={v[0]}" for f, v in sorted(definition.items()) if v)


def definition_from_conditions(conditions: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """A finder slice's conditions ((field, value), ...) as a definition (None for a field the
    database cannot spell is left to its validation: the caller says why)."""
    out: dict[str, list[str]] = {}
    for column, value in conditions:
        out.setdefault(definition_field(column) or column, []).append(str(value))
    return out


def question_tags(notes: Iterable, question_ids: Iterable[str], runs: Sequence[str] | None = None) -> pd.Series:
    """(question id -> tuple of tags, sorted): the tags of its own note and of `runs`' answers (every
    run's when None). `notes`: dashboard.annotations.records.Note."""
    wanted = None if runs is None else set(runs)
    tags: dict[str, set[str]] = {}
    for n in notes:
        if n.tags and (not n.run or wanted is None or n.run in wanted):
            tags.setdefault(n.question_id, set()).update(n.tags)
    ids = list(question_ids)
    return pd.Series([tuple(sorted(tags.get(q, ()))) for q in ids], index=pd.Index(ids), dtype=object)


def _rows(questions: pd.DataFrame, tags: pd.Series | None) -> pd.DataFrame:
    return questions if tags is None else questions.assign(**{TAG_FIELD: tags.reindex(questions.index)})


def _tag_test(wanted: set[str]):
    return lambda v: bool(set(v or ()) & wanted) or (UNTAGGED in wanted and not v)


def _value_test(wanted: set[str]):
    def test(v: object) -> bool:
        if isinstance(v, (list, tuple, set, frozenset)):
            return bool({str(x) for x in v} & wanted)
        return v is not None and not (isinstance(v, float) and pd.isna(v)) and str(v) in wanted
    return test


def matches(questions: pd.DataFrame, s: SavedSlice, tags: pd.Series | None = None,
            saved_column: pd.Series | None = None) -> pd.Series:
    """Boolean per question (the frame's index): whether it is in saved slice `s`. A field the frame
    does not have (a field of another benchmark) matches nothing; TAG_FIELD reads `tags`
    (`question_tags`; a question without one is UNTAGGED); SAVED_FIELD reads `saved_column`."""
    keep = pd.Series(True, index=questions.index)
    for name, values in s.definition.items():
        if name == TAG_FIELD:
            col = tags.reindex(questions.index) if tags is not None else pd.Series([()] * len(questions), index=questions.index)
            keep &= col.map(_tag_test(set(values))).astype(bool)
            continue
        if name == SAVED_FIELD and saved_column is not None:
            col = saved_column.reindex(questions.index)
        else:
            column = column_of(name)
            if column not in questions.columns:
                return pd.Series(False, index=questions.index)
            col = questions[column]
        if column_of(name) in MULTI_VALUED:
            keep &= col.map(_value_test(set(values))).astype(bool)
        else:  # one value per question: compared as text, a missing value matching nothing
            keep &= col.notna().to_numpy() & col.astype(str).isin(set(values)).to_numpy()
    return keep


def membership(questions: pd.DataFrame, saved: Sequence[SavedSlice], tags: pd.Series | None = None) -> pd.Series:
    """(question id -> tuple of the names of the saved slices it is in, in `saved`'s order). A slice
    defined on SAVED_FIELD reads the membership of the slices that are not (one level)."""
    found = {s.name: matches(questions, s, tags).to_numpy() for s in saved if SAVED_FIELD not in s.definition}

    def names() -> pd.Series:
        order = [s.name for s in saved if s.name in found]
        return pd.Series([tuple(n for n in order if found[n][i]) for i in range(len(questions))],
                         index=questions.index, dtype=object)

    if len(found) < len(saved):
        level = names()
        for s in saved:
            if s.name not in found:
                found[s.name] = matches(questions, s, tags, level).to_numpy()
    return names()


def with_fields(questions: pd.DataFrame, saved: Sequence[SavedSlice], tags: pd.Series | None = None) -> pd.DataFrame:
    """The question frame with SAVED_FIELD (the names of the saved slices each question is in) and,
    when `tags` is given, TAG_FIELD (its tags): multi-valued fields like evidence_source."""
    out = questions.assign(**{SAVED_FIELD: membership(questions, saved, tags)})
    return _rows(out, tags)


def breakdown(scores: pd.DataFrame, questions: pd.DataFrame, saved: Sequence[SavedSlice],
              tags: pd.Series | None = None, member: pd.Series | None = None) -> pd.DataFrame:
    """The overview's breakdown of SAVED_FIELD (as `dashboard.core.analysis.breakdown`): run, label
    (a saved slice's name), count, and the mean of each metric over the run's scored questions in it.
    `member`: `membership(questions, saved, tags)` when the caller has it."""
    member = membership(questions, saved, tags) if member is None else member
    labels = member.explode().dropna()
    if labels.empty:
        return pd.DataFrame(columns=["run", "label", "count", *METRICS])
    pairs = pd.DataFrame({"question_id": labels.index.astype(str), "label": labels.to_numpy(dtype=object)})
    merged = scores[["run", "question_id", *METRICS]].merge(pairs, on="question_id", how="inner")
    out = merged.groupby(["run", "label"], sort=True).agg(count=("run", "size"), **{m: (m, "mean") for m in METRICS})
    return out.reset_index()


def view_of(view: View, s: SavedSlice, run: str | None = None) -> View:
    """The explorer's view of a saved slice: its field filters and tag filter, nothing else (the runs
    stay, or become `run`); the slice's name kept (query `slice`)."""
    filters = {column_of(k): list(v) for k, v in s.definition.items() if k not in (TAG_FIELD, SAVED_FIELD)}
    return replace(view, runs=[run] if run else list(view.runs), filters=filters,
                   tags=list(s.definition.get(TAG_FIELD, ())), noted=False, location=[], ranges={}, status=[],
                   search="", question="", match="every", page=0, saved=s.name)


def same_filters(view: View, s: SavedSlice) -> bool:
    """Whether the view's filters are still exactly the saved slice's (else the link drops its name)."""
    definition, left = definition_from_view(view)
    return not left and {k: tuple(v) for k, v in definition.items()} == {
        k: tuple(v) for k, v in s.definition.items() if k != SAVED_FIELD}


def listing(saved: Sequence[SavedSlice], questions: pd.DataFrame, tags: pd.Series | None = None,
            member: pd.Series | None = None) -> pd.DataFrame:
    """The saved slices as a table: name, definition in words, questions in it, who saved it, note, when."""
    if member is None:
        member = membership(questions, saved, tags) if len(questions) else pd.Series(dtype=object)
    counts = member.explode().value_counts() if len(member) else pd.Series(dtype=int)
    return pd.DataFrame([{"Name": s.name, "Definition": s.describe(), "Questions": int(counts.get(s.name, 0)),
                          "Saved by": s.author, "Note": s.note, "Updated (UTC)": s.updated[:16].replace("T", " ")}
                         for s in saved], columns=["Name", "Definition", "Questions", "Saved by", "Note", "Updated (UTC)"])

"""The annotations as tables for the pages: tag columns of the explorer, its tag/note filter, counts
of each tag per run and per slice, the failure modes one run has that another has not, and how
gold corrections move the leaderboard. Pure (pandas, no streamlit): every function takes the notes
(`records.Note`) it works on, read once per rerun by the panel.

A note on an answer has the run's name; a note on the question itself has run "". A question's
tags "for some runs" are the tags of its own note and of those runs' answers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import pandas as pd

from dashboard.core.analysis import run_column

from .records import Note

__all__ = ["UNTAGGED", "QUESTION_ROW", "TAGS_COLUMN", "NOTES_COLUMN", "tags_by_question", "noted_questions",
           "matching_ids", "tag_columns", "tag_counts", "tag_table", "slice_tag_counts", "modes_not_in",
           "examples", "score_changes"]

UNTAGGED = "(untagged)"  # the filter value "no tag": never a tag name (tags start with a-z or 0-9)
QUESTION_ROW = "(question)"  # the row of tag counts of notes on questions (the gold), not on an answer
TAGS_COLUMN, NOTES_COLUMN = "Tags", "Notes"


def _relevant(notes: Iterable[Note], runs: Sequence[str] | None) -> list[Note]:
    """The question notes and, of the answer notes, those of `runs` (all when None)."""
    wanted = None if runs is None else set(runs)
    return [n for n in notes if not n.run or wanted is None or n.run in wanted]


def tags_by_question(notes: Iterable[Note], runs: Sequence[str] | None = None) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for n in _relevant(notes, runs):
        out[n.question_id].update(n.tags)
    return dict(out)


def noted_questions(notes: Iterable[Note], runs: Sequence[str] | None = None) -> set[str]:
    """The questions with a note that says something (non-empty text), on them or on one of `runs`' answers."""
    return {n.question_id for n in _relevant(notes, runs) if n.text.strip()}


def matching_ids(question_ids: Iterable[str], notes: Iterable[Note], runs: Sequence[str] | None,
                 tags: Sequence[str], has_note: bool) -> set[str]:
    """The question ids passing the explorer's annotation filter: with `tags`, a question carrying
    any of them (UNTAGGED: carrying none); with `has_note`, a question with a note of some text."""
    notes = list(notes)
    ids = set(question_ids)
    if tags:
        by_q = tags_by_question(notes, runs)
        wanted = set(tags) - {UNTAGGED}
        ids = {q for q in ids if (by_q.get(q, set()) & wanted) or (UNTAGGED in tags and not by_q.get(q))}
    if has_note:
        ids &= noted_questions(notes, runs)
    return ids


def tag_columns(question_ids: Sequence[str], notes: Iterable[Note], runs: Sequence[str]) -> pd.DataFrame:
    """Indexed by question id: `Tags` (every tag of the question and of the runs' answers, sorted,
    joined by "; "), `Notes` (how many notes), then one `<run> · Tags` column per run."""
    notes = _relevant(notes, runs)
    index = pd.Index(list(question_ids), name=None)
    by_q = tags_by_question(notes, runs)
    counts = Counter(n.question_id for n in notes)
    per_run: dict[tuple[str, str], tuple[str, ...]] = {(n.question_id, n.run): n.tags for n in notes if n.run}
    frame = pd.DataFrame(index=index)
    frame[TAGS_COLUMN] = ["; ".join(sorted(by_q.get(q, ()))) for q in index]
    frame[NOTES_COLUMN] = [counts.get(q, 0) for q in index]
    for run in runs:
        frame[run_column(run, TAGS_COLUMN)] = ["; ".join(per_run.get((q, run), ())) for q in index]
    return frame


def tag_counts(notes: Iterable[Note], runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Long form: run (QUESTION_ROW for notes on questions), tag, count of notes carrying it."""
    counter: Counter[tuple[str, str]] = Counter()
    for n in _relevant(notes, runs):
        for t in n.tags:
            counter[(n.run or QUESTION_ROW, t)] += 1
    rows = [{"run": r, "tag": t, "count": c} for (r, t), c in sorted(counter.items())]
    return pd.DataFrame(rows, columns=["run", "tag", "count"])


def tag_table(notes: Iterable[Note], runs: Sequence[str], vocabulary: Sequence[str]) -> pd.DataFrame:
    """Tags × (runs, then QUESTION_ROW when questions carry tags): how many answers (questions) carry
    each tag; the vocabulary's order, then tags no longer in it; rows of no use dropped."""
    long = tag_counts(notes, runs)
    cols = list(runs) + ([QUESTION_ROW] if (long["run"] == QUESTION_ROW).any() else [])
    tags = list(vocabulary) + sorted(set(long["tag"]) - set(vocabulary))
    wide = long.pivot_table(index="tag", columns="run", values="count", aggfunc="sum", fill_value=0) if len(long) else pd.DataFrame()
    out = wide.reindex(index=tags, columns=cols, fill_value=0).fillna(0).astype(int) if len(long) else pd.DataFrame(0, index=tags, columns=cols)
    out = out[out.sum(axis=1) > 0]
    out.index.name = "tag"
    return out.reset_index()


def slice_tag_counts(notes: Iterable[Note], questions: pd.DataFrame, field_name: str,
                     runs: Sequence[str]) -> pd.DataFrame:
    """For one breakdown field of the questions frame (indexed by question id): tag × label, the
    number of tagged answers of `runs` (and tagged questions) whose question has that label.
    Evidence source counts a question once per source."""
    counter: Counter[tuple[str, str]] = Counter()
    col = questions[field_name] if field_name in questions.columns else None
    for n in _relevant(notes, runs):
        if col is None or n.question_id not in col.index:
            continue
        value = col.loc[n.question_id]
        labels = list(value) if isinstance(value, (tuple, list)) else [value]
        for label in labels or ["unknown"]:
            for t in n.tags:
                counter[(t, str(label))] += 1
    rows = [{"tag": t, "label": lab, "count": c} for (t, lab), c in sorted(counter.items())]
    frame = pd.DataFrame(rows, columns=["tag", "label", "count"])
    if frame.empty:
        return pd.DataFrame(columns=["tag"])
    return frame.pivot_table(index="tag", columns="label", values="count", aggfunc="sum", fill_value=0).reset_index().rename_axis(None, axis=1)


def modes_not_in(notes: Iterable[Note], a: str, b: str) -> pd.DataFrame:
    """The failure modes of run `a` that baseline `b` has not: per tag, how many of A's answers carry
    it, how many of B's, and on how many questions A's answer carries it while B's does not (with
    up to three of those question ids). Sorted by that last count."""
    answer_tags: dict[tuple[str, str], set[str]] = {}
    for n in notes:
        if n.run in (a, b):
            answer_tags[(n.run, n.question_id)] = set(n.tags)
    tags = sorted({t for (run, _), ts in answer_tags.items() if run == a for t in ts})
    rows = []
    for t in tags:
        in_a = sorted(q for (run, q), ts in answer_tags.items() if run == a and t in ts)
        in_b = [q for (run, q), ts in answer_tags.items() if run == b and t in ts]
        only = [q for q in in_a if t not in answer_tags.get((b, q), set())]
        rows.append({"tag": t, "A": len(in_a), "B": len(in_b), "only A": len(only), "questions": ", ".join(only[:3])})
    frame = pd.DataFrame(rows, columns=["tag", "A", "B", "only A", "questions"])
    return frame.sort_values(["only A", "tag"], ascending=[False, True], kind="stable").reset_index(drop=True)


def examples(notes: Iterable[Note], run: str, tag: str, n: int = 3) -> list[Note]:
    """Up to `n` notes of `run` (QUESTION_ROW: of questions) carrying `tag`, those with text first."""
    mine = [x for x in notes if tag in x.tags and (x.run == run or (run == QUESTION_ROW and not x.run))]
    return sorted(mine, key=lambda x: (not x.text.strip(), x.question_id))[:n]


def score_changes(before: pd.DataFrame, after: pd.DataFrame, metric_column: str = "Accuracy (%)") -> pd.DataFrame:
    """Two leaderboards (dashboard.core.analysis.leaderboard: Run, Questions, the metrics in %) --
    without and with gold corrections -- as one table: each run's questions, score before and
    after, the change, and its rank (1 = best by `metric_column`, ties share the better rank) before
    and after. Runs only on one side are left out."""
    def ranked(board: pd.DataFrame) -> pd.DataFrame:
        out = board[["Run", "Questions", metric_column]].copy()
        out["rank"] = out[metric_column].rank(ascending=False, method="min").astype(int)
        return out.set_index("Run")

    b, a = ranked(before), ranked(after)
    runs = [r for r in before["Run"] if r in a.index]
    label = metric_column.removesuffix(" (%)")
    rows = [{"Run": r, "Questions before": int(b.at[r, "Questions"]), "Questions after": int(a.at[r, "Questions"]),
             f"{label} before (%)": float(b.at[r, metric_column]), f"{label} after (%)": float(a.at[r, metric_column]),
             "Change (points)": float(a.at[r, metric_column] - b.at[r, metric_column]),
             "Rank before": int(b.at[r, "rank"]), "Rank after": int(a.at[r, "rank"]),
             "Rank change": int(b.at[r, "rank"] - a.at[r, "rank"])} for r in runs]
    frame = pd.DataFrame(rows, columns=["Run", "Questions before", "Questions after", f"{label} before (%)",
                                        f"{label} after (%)", "Change (points)", "Rank before", "Rank after", "Rank change"])
    return frame.sort_values(["Rank after", "Run"], kind="stable").reset_index(drop=True)

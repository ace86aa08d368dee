"""Frames for the metric disagreement page: the categories of every question × run
(scoring.categories), counts per run and per slice, scatter data, answerability rates, the
sensitivity table and the exports. No streamlit here.

A run whose scores were loaded from a file (not recomputed) has no Judgement, so it has no
categories: `category_frame` leaves it out and the page says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

import pandas as pd

from dashboard.core.links import field_label, value_label
from scoring.categories import CATEGORIES, CATEGORY_IDS, CATEGORY_LABELS, answerable, classify
from scoring.evaluate import RunResult
from scoring.metrics import Judgement
from scoring.sensitivity import ProfileComparison

FRAME_COLUMNS = ["run", "question_id", "category", "categories", "accuracy", "token_f1", "anls", "fuzzy",
                 "decision", "status", "answerable", "prediction", "right"]
EXPORT_COLUMNS = ["run", "question_id", "category", "prediction", "gold", "accuracy", "token_f1", "anls", "fuzzy",
                  "decision", "categories", "status", "answer_format", "question"]
ALL = "all questions"
JITTER = 0.03  # ± on a 0..1 axis: spreads identical scores into a visible cloud
SCATTER_CAP = 20_000  # points drawn per chart; beyond this a deterministic sample is drawn
PAIRS = {  # scatter axes: (x, y)
    "token_f1 / anls": ("token_f1", "anls"),
    "anls / fuzzy": ("anls", "fuzzy"),
    "token_f1 / fuzzy": ("token_f1", "fuzzy"),
}
# scoring.extra.fuzzy, named by what it measures (it is the score of the project's seed 001, which
# says nothing to a user): the best of three string similarities of the normalised texts.
FUZZY_LABEL = "Fuzzy match (string similarity)"
FUZZY_DEFINITION = ("Fuzzy match: how alike the answer and the gold read as strings, 0–1 — the best of rapidfuzz's "
                    "token-sort, token-set and partial-ratio similarities of the two normalised texts (lower case, "
                    "brackets and quotes dropped); a text of over 20 characters found inside the other scores "
                    "0.85 + 0.15 × their length ratio.")
SCORE_LABELS = {"accuracy": "Accuracy", "token_f1": "Token F1", "anls": "ANLS", "fuzzy": FUZZY_LABEL}
# The rule that decided an answer's Accuracy (scoring.metrics' Judgement.decided_by codes), in words: what the
# page's tables and traces show (the CSV and JSON exports keep the codes, as the command line writes them).
RULE_LABELS = {
    "missing": "No prediction",
    "failed_status": "A failed status",
    "refusal_phrase": "A refusal phrase found",
    "no_refusal_phrase": "No refusal phrase found",
    "boolean_unreadable": "Neither yes nor no read",
    "boolean_polarity": "Yes or no compared",
    "numeric_gold_zero": "Numbers compared (the gold is 0)",
    "numeric_tolerance": "Numbers compared (relative error)",
    "choice_letter": "Option letters compared",
    "containment": "The gold inside the answer",
    "similarity": "Strings alike enough",
    "both_empty": "Both empty",
    "no_match": "The gold not inside, strings not alike enough",
    "exact_answer": "Equal to an acceptable answer",
    "no_exact_answer": "Equal to no acceptable answer",
    "mmlongbench_eval_score": "MMLongBench-Doc's own evaluator",
    "mmlongbench_fallback": "MMLongBench-Doc's fallback rule",
    "harness_rule": "The harness's own rule",
}


# A reason of the LLM judge's (dashboard/judge): the answers where the judge's verdict and the rules' differ. Not
# one of scoring.categories' (those read the three metrics of one answer; this reads a judge's reply).
JUDGE_DISAGREES = "judge_disagrees"
JUDGE_REASONS = {JUDGE_DISAGREES: "The LLM judge and the rules disagree: the judge's extracted answer is scored one way, "
                                  "the raw response by the rules the other (the Judge page shows the reply)."}


def category_label(category: str) -> str:
    """A disagreement category in words ("right_but_verbose" -> "Right but verbose")."""
    if category == JUDGE_DISAGREES:
        return "Judge and rules disagree"
    return CATEGORY_LABELS.get(category, category)


def rule_label(rule: str) -> str:
    """The rule that decided Accuracy, in words (RULE_LABELS; an unknown code with its underscores as spaces)."""
    return RULE_LABELS.get(rule) or str(rule).replace("_", " ").capitalize()


def in_words(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of this page as the page shows it: categories, rules and answer formats in words (the
    CSV downloads keep the codes). Columns: `category`, `categories` (joined by ';'), `decision` and
    `rule <profile>` (rule codes), `answer_format`; the others as they are."""
    out = frame.copy()
    for col in out.columns:
        if col == "category":
            out[col] = out[col].map(category_label)
        elif col == "categories":
            out[col] = out[col].map(lambda cs: "; ".join(category_label(c) for c in (cs.split(";") if isinstance(cs, str) else cs) if c))
        elif col == "decision" or str(col).startswith("rule "):
            out[col] = out[col].map(rule_label)
        elif col == "answer_format":
            out[col] = out[col].map(lambda v: value_label("answer_format", v))
    return out


def run_categories(run: RunResult, responses: dict | None = None) -> pd.DataFrame:
    """One row per question of a scored run: its categories (primary first), scores, fuzzy, the rule
    that decided Accuracy, status, whether it is answerable, the prediction as reported, and whether
    it is right (`right`: scoring.profiles.Profile.is_right, the one definition).
    `responses`: the raw answers by question id, where the run has them (extraction_miss needs them)."""
    rows = []
    for r in run.results:
        j = r.judgement
        c = classify(j, with_fuzzy=True, response=responses.get(r.qid) if responses else None)
        rows.append((run.name, r.qid, c.categories[0], c.categories, j.accuracy, j.token_f1, j.anls, c.fuzzy or 0.0,
                     j.decided_by, j.status, answerable(j), j.reported_prediction, j.profile.is_right(j.accuracy)))
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def category_frame(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The per-run frames of `run_categories` stacked (an empty frame with the columns when none)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=FRAME_COLUMNS)
    return pd.concat(parts, ignore_index=True)


def has_category(frame: pd.DataFrame, category: str, mode: str = "primary") -> pd.Series:
    """Rows whose primary category is `category` (mode "primary") or that carry it (mode "any")."""
    if mode == "any":
        return frame["categories"].map(lambda cs: category in cs).astype(bool)
    return frame["category"] == category


def counts(frame: pd.DataFrame, runs: Sequence[str], mode: str = "primary") -> pd.DataFrame:
    """Runs (rows, in the order given) × categories (columns, contract order): questions per category.
    With mode "primary" each question counts once (its row sums to the run's questions); with "any" a
    question counts in every category it carries."""
    data = frame[frame["run"].isin(runs)]
    out = pd.DataFrame(0, index=pd.Index(list(runs), name="run"), columns=list(CATEGORY_IDS), dtype="int64")
    if len(data):
        col = data["categories"].explode() if mode == "any" else data["category"]
        runs_col = data.loc[col.index, "run"] if mode == "any" else data["run"]
        tab = pd.crosstab(runs_col.to_numpy(), col.to_numpy())
        for c in tab.columns:
            for r in tab.index:
                if r in out.index:
                    out.loc[r, c] = int(tab.loc[r, c])
    return out


def slice_labels(questions: pd.DataFrame, field_name: str) -> pd.DataFrame:
    """question_id, label: one row per question and label of the field (evidence sources: several)."""
    if field_name in ("", ALL):
        return pd.DataFrame({"question_id": questions["question_id"].to_numpy(), "label": ALL})
    labels = questions[["question_id", field_name]].rename(columns={field_name: "label"})
    if field_name == "evidence_source":
        labels = labels.explode("label")
    elif field_name == "document":  # a cross-document question counts under each of its documents
        labels = labels.assign(label=labels["label"].map(lambda v: v.split(", ") if isinstance(v, str) and v else [v]))
        labels = labels.explode("label")
    labels["label"] = labels["label"].fillna("unknown").astype(str)
    return labels.reset_index(drop=True)


def slice_counts(frame: pd.DataFrame, questions: pd.DataFrame, runs: Sequence[str], field_name: str,
                 mode: str = "primary") -> pd.DataFrame:
    """Labels of `field_name` (rows) × categories (columns) over the chosen runs: (question, run)
    pairs per category, plus a "questions" column (pairs in the slice). Evidence sources count a
    question once per source."""
    data = frame[frame["run"].isin(runs)]
    merged = data.merge(slice_labels(questions, field_name), on="question_id", how="inner")
    labels = sorted(merged["label"].unique()) if len(merged) else []
    out = pd.DataFrame(0, index=pd.Index(labels, name=field_label(field_name) if field_name else "slice"),
                       columns=["questions", *CATEGORY_IDS], dtype="int64")
    if not len(merged):
        return out
    out["questions"] = merged.groupby("label").size().reindex(labels).fillna(0).astype("int64")
    col = merged["categories"].explode() if mode == "any" else merged["category"]
    tab = pd.crosstab(merged.loc[col.index, "label"].to_numpy(), col.to_numpy())
    for c in tab.columns:
        out[c] = tab[c].reindex(labels).fillna(0).astype("int64").to_numpy()
    return out


def select(frame: pd.DataFrame, questions: pd.DataFrame, runs: Sequence[str], category: str = "",
           field_name: str = "", label: str = "", mode: str = "primary") -> pd.DataFrame:
    """The (run, question) rows of the chosen runs in a category (any when ""), in a slice."""
    data = frame[frame["run"].isin(runs)]
    if category:
        data = data[has_category(data, category, mode)]
    if field_name and label and field_name != ALL:
        ids = set(slice_labels(questions, field_name).query("label == @label")["question_id"])
        data = data[data["question_id"].isin(ids)]
    return data


def table(rows: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """The disagreement table (and its CSV): rows of `select` with the gold, question and format;
    categories joined by ';'."""
    q = questions.set_index("question_id")[["gold", "question", "answer_format"]]
    out = rows.join(q, on="question_id")
    out = out.assign(categories=out["categories"].map(";".join))
    return out[EXPORT_COLUMNS].reset_index(drop=True)


def counts_json(frame: pd.DataFrame, runs: Sequence[str], profile: str) -> str:
    """The category counts as JSON: profile, definitions, and per run the primary and any counts."""
    primary, anyof = counts(frame, runs, "primary"), counts(frame, runs, "any")
    out = {
        "profile": profile,
        "categories": dict(CATEGORIES),
        "runs": {r: {"questions": int(primary.loc[r].sum()),
                     "primary": {c: int(primary.loc[r, c]) for c in CATEGORY_IDS},
                     "any": {c: int(anyof.loc[r, c]) for c in CATEGORY_IDS}} for r in runs},
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _jitter(keys: Iterable[str], salt: str) -> list[float]:
    """A deterministic offset in [-JITTER, JITTER] per key: the same point sits still across reruns."""
    out = []
    for k in keys:
        h = int.from_bytes(hashlib.blake2b(f"{salt}|{k}".encode(), digest_size=4).digest(), "big")
        out.append((h / 0xFFFFFFFF * 2 - 1) * JITTER)
    return out


def scatter_points(frame: pd.DataFrame, runs: Sequence[str], x: str, y: str,
                   cap: int = SCATTER_CAP) -> tuple[pd.DataFrame, int]:
    """The points of a metric-pair scatter: x, y (jittered, clipped to [-0.03, 1.03]), the raw
    scores, accuracy, `right` (from the frame, when it has it), run, question id and category. At
    most `cap` points: beyond it, a sample that is the same on every rerun. Returns (points, total
    before sampling)."""
    data = frame[frame["run"].isin(runs)]
    total = len(data)
    if total > cap:
        data = data.sample(n=cap, random_state=0)
    keys = (data["run"] + "\x1f" + data["question_id"]).tolist()
    pts = pd.DataFrame({
        "run": data["run"].to_numpy(), "question_id": data["question_id"].to_numpy(),
        "category": data["category"].to_numpy(), "accuracy": data["accuracy"].to_numpy(),
        **({"right": data["right"].to_numpy(dtype=bool)} if "right" in data.columns else {}),
        "x_raw": data[x].to_numpy(dtype=float), "y_raw": data[y].to_numpy(dtype=float),
    })
    pts["x"] = (pts["x_raw"] + _jitter(keys, "x")).clip(-0.03, 1.03)
    pts["y"] = (pts["y_raw"] + _jitter(keys, "y")).clip(-0.03, 1.03)
    return pts, total


def answerability(frame: pd.DataFrame, questions: pd.DataFrame, runs: Sequence[str], field_name: str = "") -> pd.DataFrame:
    """Per run (and label of `field_name`, when given): unanswerable questions and the rate of
    invented answers on them; answerable questions and the rate of false refusals on them. Rates
    in % (NaN when there is no such question)."""
    data = frame[frame["run"].isin(runs)]
    merged = data.merge(slice_labels(questions, field_name), on="question_id", how="inner")
    merged = merged.assign(
        invented=merged["categories"].map(lambda cs: "invented_answer" in cs).astype(bool),
        refused=merged["categories"].map(lambda cs: "false_refusal" in cs).astype(bool))
    keys = ["run", "label"]
    rows = []
    for (run, label), g in merged.groupby(keys, sort=False):
        un = g[~g["answerable"].astype(bool)]
        ans = g[g["answerable"].astype(bool)]
        rows.append({"run": run, "label": label, "unanswerable": len(un), "invented": int(un["invented"].sum()),
                     "invented (%)": 100 * un["invented"].mean() if len(un) else float("nan"),
                     "answerable": len(ans), "false refusals": int(ans["refused"].sum()),
                     "false refusals (%)": 100 * ans["refused"].mean() if len(ans) else float("nan")})
    cols = ["run", "label", "unanswerable", "invented", "invented (%)", "answerable", "false refusals",
            "false refusals (%)"]
    out = pd.DataFrame(rows, columns=cols)
    order = {r: i for i, r in enumerate(runs)}
    out = out.sort_values(["run", "label"], key=lambda s: s.map(order) if s.name == "run" else s, kind="stable")
    return out.reset_index(drop=True)


# ----------------------------------------------------------------------------- sensitivity


def sensitivity_headline(comparisons: Sequence[ProfileComparison]) -> pd.DataFrame:
    """One row per profile (the base first): the headline scores in %, and the questions whose
    Accuracy the profile changes (gained, lost) relative to the base."""
    if not comparisons:
        return pd.DataFrame(columns=["Profile", "Accuracy (%)", "Token F1 (%)", "ANLS (%)", "Gained", "Lost"])
    base = comparisons[0].base
    rows = [{"Profile": base.profile.name + " (current)", **_pct(base.overall), "Gained": 0, "Lost": 0}]
    for c in comparisons:
        rows.append({"Profile": c.other.profile.name, **_pct(c.other.overall), "Gained": c.gained, "Lost": c.lost})
    return pd.DataFrame(rows)


def _pct(overall: dict) -> dict:
    return {"Accuracy (%)": 100 * overall["accuracy"], "Token F1 (%)": 100 * overall["token_f1"],
            "ANLS (%)": 100 * overall["anls"]}


def sensitivity_changes(comparison: ProfileComparison, questions: pd.DataFrame) -> pd.DataFrame:
    """The questions whose Accuracy changes under the other profile, with both rules and predictions."""
    other = {r.qid: r for r in comparison.other.results}
    base = {r.qid: r for r in comparison.base.results}
    rows = []
    for ch in comparison.changes:
        rows.append({"question_id": ch.qid, "change": ch.direction,
                     f"Accuracy {comparison.profiles[0]}": ch.base_accuracy,
                     f"Accuracy {comparison.profiles[1]}": ch.other_accuracy,
                     f"rule {comparison.profiles[0]}": ch.base_rule, f"rule {comparison.profiles[1]}": ch.other_rule,
                     "prediction": base[ch.qid].effective,
                     "scored as": other[ch.qid].judgement.scored_text if ch.qid in other else ""})
    out = pd.DataFrame(rows, columns=["question_id", "change", f"Accuracy {comparison.profiles[0]}",
                                      f"Accuracy {comparison.profiles[1]}", f"rule {comparison.profiles[0]}",
                                      f"rule {comparison.profiles[1]}", "prediction", "scored as"])
    q = questions.set_index("question_id")[["gold", "answer_format"]]
    return out.join(q, on="question_id")


def sensitivity_slices(comparison: ProfileComparison, questions: pd.DataFrame, field_name: str) -> pd.DataFrame:
    """Per label of a field of the question frame: questions of the run, gained, lost, and the
    Accuracy change in points (gained - lost over the slice's questions)."""
    direction = {c.qid: c.direction for c in comparison.changes}
    ids = pd.DataFrame({"question_id": [r.qid for r in comparison.base.results]})
    merged = ids.merge(slice_labels(questions, field_name), on="question_id", how="inner")
    merged["d"] = merged["question_id"].map(direction)
    rows = []
    for label, g in merged.groupby("label", sort=True):
        n, gained, lost = len(g), int((g["d"] == "gained").sum()), int((g["d"] == "lost").sum())
        rows.append({"label": label, "questions": n, "gained": gained, "lost": lost,
                     "Δ Accuracy (points)": 100 * (gained - lost) / n if n else 0.0})
    return pd.DataFrame(rows, columns=["label", "questions", "gained", "lost", "Δ Accuracy (points)"])


# ----------------------------------------------------------------------------- why, per question


def why_diffs(j) -> list[tuple[str, str]]:
    """(title, plain text) of the character diffs of one Judgement: the scored prediction against
    the gold as ANLS compares them (stripped, lower-cased), then the normalised strings that
    Accuracy and token F1 compare. `[-x-]` only in the prediction, `{+x+}` only in the gold."""
    from dashboard.core.textdiff import char_diff, diff_text

    pred = j.scored_text if j.prediction is not None else ""
    golds = j.answers if j.profile.multi_answer else j.answers[:1]
    out = []
    for g in golds or ("",):
        head = f" (acceptable answer {g!r})" if len(golds) > 1 else ""
        out.append((f"As ANLS compares them (stripped, lower case){head}",
                    diff_text(char_diff(pred.strip().lower(), g.strip().lower())) or "(both empty)"))
    if not j.profile.multi_answer:
        normalised = diff_text(char_diff(j.normalized_prediction, j.normalized_gold)) or "(both normalise to empty)"
        if normalised == out[0][1]:
            out[0] = ("As ANLS compares them, and after normalisation (what Accuracy and token F1 compare): the same",
                      normalised)
        else:
            out.append(("After normalisation (what Accuracy and token F1 compare)", normalised))
    return out


def token_overlap(j) -> tuple[pd.DataFrame, str]:
    """The token overlap behind token F1: a frame of shared, missing (gold only) and extra
    (prediction only) normalised tokens, and the F1 arithmetic as one line of text."""
    shared, missing, extra = j.shared_tokens, j.gold_only_tokens, j.prediction_only_tokens
    frame = pd.DataFrame({
        "Tokens": ["shared", "missing (gold only)", "extra (prediction only)"],
        "Count": [len(shared), len(missing), len(extra)],
        "Which": [" · ".join(t) if t else "—" for t in (shared, missing, extra)],
    })
    n_pred, n_gold = len(shared) + len(extra), len(shared) + len(missing)
    if j.profile.multi_answer:
        note = f"Token F1 {j.token_f1:.3f}: the best over the acceptable answers (overlap shown for the first)."
    elif not j.scored:
        note = "Token F1 0: the status decided, no text was compared."
    elif not shared:
        note = f"Token F1 {j.token_f1:.3f}: no shared token (prediction {n_pred}, gold {n_gold} distinct tokens)."
    else:
        note = (f"Token F1 {j.token_f1:.3f} = 2·P·R / (P + R), precision P = {len(shared)}/{n_pred}, "
                f"recall R = {len(shared)}/{n_gold} (distinct normalised tokens).")
    return frame, note


def profile_leaderboard(scored: dict[str, dict[str, RunResult]], base: str) -> pd.DataFrame:
    """How the leaderboard moves with the scoring rule: per run (rows, by Accuracy under `base`),
    Accuracy in % and rank under each profile, and the rank change from `base` (positive = up).
    `scored`: run -> profile -> RunResult."""
    profiles = list(dict.fromkeys(p for by in scored.values() for p in by))
    acc = {p: {r: 100 * by[p].overall["accuracy"] for r, by in scored.items() if p in by} for p in profiles}
    ranks = {p: {r: k + 1 for k, r in enumerate(sorted(acc[p], key=lambda r: (-acc[p][r], r)))} for p in profiles}
    rows = []
    for run in sorted(scored, key=lambda r: ranks[base].get(r, 10**9)):
        row: dict = {"Run": run}
        for p in profiles:
            row[f"Accuracy (%) {p}"] = acc[p].get(run, float("nan"))
            row[f"Rank {p}"] = ranks[p].get(run)
            if p != base and run in ranks[p] and run in ranks[base]:
                row[f"Rank change {p}"] = ranks[base][run] - ranks[p][run]
        rows.append(row)
    return pd.DataFrame(rows)


def trace_frame(ex: Judgement) -> pd.DataFrame:
    """The Accuracy trace of a scoring.metrics.Judgement as (step, value) text rows, the rule that
    decided in words."""
    rows = [(step, rule_label(value) if step == "Rule that decided" else value) for step, value in ex.trace()]
    return pd.DataFrame(rows, columns=["Step", "Value"])

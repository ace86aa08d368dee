"""Runs held in columns (dashboard/core/runs.py, the app's path since issue 27) against today's row
path (every record built: scoring.evaluate, dashboard.core.store.load_run): the same numbers,
records, tables and CSVs, on the sample benchmarks and on a generated 20-run benchmark whose
prediction files carry every case the join has -- missing and extra ids, overflow and failed
statuses, empty texts, repeated ids, evidence, non-ASCII text -- under several profiles."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.core import runs as column_runs
from dashboard.core import store as S
from dashboard.core.analysis import RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.core.predictions import PredictionTable
from dashboard.data import frames
from dashboard.data.workspace import load_workspace
from scoring.evaluate import evaluate
from scoring.runner import columns_of, overall_of, prediction_texts, predictions_by_id, record_of, score_runs

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
CAMPAIGN = SAMPLE / "campaign"


def generated(tmp: Path, runs: int = 20, seed: int = 27) -> Path:
    """The campaign sample's gold and documents with `runs` generated prediction files."""
    bench = tmp / "generated"
    bench.mkdir()
    for name in ("qa_single_doc.jsonl", "documents.jsonl"):
        shutil.copy(CAMPAIGN / name, bench / name)
    gold = [json.loads(line) for line in (CAMPAIGN / "qa_single_doc.jsonl").read_text().splitlines() if line.strip()]
    rng = random.Random(seed)
    (bench / "runs").mkdir()
    statuses = ["success"] * 12 + ["timeout", "error", "context_overflow", "vision_unsupported", "", "SUCCESS"]
    for k in range(runs):
        rows = []
        whole = k % 5 == 4  # every gold question answered, in gold order (as harnesses write): joined without a lookup
        for q in gold:
            if rng.random() < 0.06 and not whole:
                continue  # missing
            value = str(q["answer"]["value"])
            pick = rng.random()
            text = (value if pick < 0.45 else value.upper() if pick < 0.55 else f"The answer is {value}." if pick < 0.65
                    else "" if pick < 0.7 else f"{value} — größer, 数字 {rng.randint(0, 99)}" if pick < 0.8
                    else f"not {rng.randint(1, 10_000)}")
            row = {"question_id": q["question_id"], "prediction": text, "status": rng.choice(statuses)}
            if rng.random() < 0.3:
                row["evidence_pages"] = sorted(rng.sample(range(1, 30), rng.randint(1, 3)))
            rows.append(row)
        if not whole:
            for e in range(k % 3):  # ids of no gold question
                rows.append({"question_id": f"elsewhere_{k}_{e}", "prediction": "x", "status": "success"})
            if k % 4 == 1 and rows:  # a repeated id: the later row is scored
                rows.append(dict(rows[0], prediction="the later answer"))
            rng.shuffle(rows)
        (bench / "runs" / f"gen-{k:02d}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                                          encoding="utf-8")
    return bench


def _both(ws, profile: str, store: S.ScoreStore) -> tuple[list[Run], list[Run], list[Run]]:
    """(runs by the row path, runs in columns just scored, runs in columns read back from the store)."""
    gold = ws.gold.items
    rows, fresh, stored = [], [], []
    scorable = [pf for pf in ws.predictions if pf.loaded.items]
    assert all(isinstance(pf.loaded.items, PredictionTable) for pf in scorable)

    def make(k, _plan, decisions):
        pf = scorable[k]
        key = S.run_key("gold", pf.sha256 or pf.run, profile)
        column_runs.save_decisions(store, key, gold, pf.loaded.items, decisions)
        acc, f1, an = (np.array([d[i] for d in decisions]) for i in range(3))
        return column_runs.column_run(gold, pf.loaded.items, acc, f1, an, profile=profile, name=pf.run,
                                      decisions_later=lambda: decisions)

    made = dict(score_runs(gold, [(pf.run, pf.loaded.items) for pf in scorable], profile=profile, parallel=False, make=make))
    for k, pf in enumerate(scorable):
        want = evaluate(gold, list(pf.loaded.items), profile=profile, name=pf.run)
        rows.append(Run(pf.run, RECOMPUTED, str(pf.path), want))
        fresh.append(Run(pf.run, RECOMPUTED, str(pf.path), made[k]))
        back = column_runs.load_column_run(store, S.run_key("gold", pf.sha256 or pf.run, profile), gold, pf.loaded.items,
                                           profile, pf.run)
        assert back is not None
        stored.append(Run(pf.run, RECOMPUTED, str(pf.path), back))
    return rows, fresh, stored


def _same_run(want, got) -> None:
    assert columns_of(got) == columns_of(want)
    assert overall_of(got) == overall_of(want) == want.overall
    assert got.failed_count == want.failed_count
    for attr in ("name", "signature", "gold_count", "prediction_count", "missing_ids", "extra_ids", "problems", "groups"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert prediction_texts(got) == prediction_texts(want)
    assert dict(predictions_by_id(got)) == dict(predictions_by_id(want))
    for r, mine in zip(want.results, got.results):
        assert _fields(record_of(got, r.qid)) == _fields(r) == _fields(mine)
    assert record_of(got, "no such question") is None
    assert got.report() == want.report()  # every record, the breakdowns and the release report
    assert got.csv_text() == want.csv_text()


def _fields(r) -> tuple:
    """A record's question, prediction and every field of its judgement (Judgement compares by identity)."""
    j = r.judgement
    return r.question, r.prediction, tuple(getattr(j, f) for f in j.__dataclass_fields__)


CASES = [(SAMPLE, "xldocbench"), (SAMPLE, "xldocbench-1519"), (CAMPAIGN, "xldocbench"), (SAMPLE / "mmlongbench", "mmlongbench-doc"),
         ("generated", "xldocbench"), ("generated", "xldocbench-1519"), ("generated", "docvqa"),
         ("generated", "mmlongbench-doc")]


@pytest.mark.parametrize("bench, profile", CASES, ids=lambda v: Path(v).name if isinstance(v, Path) else str(v))
def test_runs_in_columns_equal_the_row_path(tmp_path, bench, profile):
    folder = generated(tmp_path) if bench == "generated" else bench
    ws = load_workspace(Sources(folder))
    store = S.ScoreStore(tmp_path / "cache")
    rows, fresh, stored = _both(ws, profile, store)
    assert len(rows) >= (20 if bench == "generated" else 2)
    if bench == "generated":  # both joins are taken: files in gold order (no lookup) and files in any order
        in_order = [[p.qid for p in pf.loaded.items] == [q.qid for q in ws.gold.items] for pf in ws.predictions]
        assert 0 < sum(in_order) < len(in_order)
    for want, got_fresh, got_stored in zip(rows, fresh, stored):
        _same_run(want.result, got_fresh.result)
        _same_run(want.result, got_stored.result)
    gold = ws.gold.items
    a = Analysis.build(rows, gold, ws.page_counts, profile)
    for got in (fresh, stored):
        b = Analysis.build(got, gold, ws.page_counts, profile)
        pd.testing.assert_frame_equal(b.leaderboard(), a.leaderboard())  # first: from the runs' columns alone
        if all(r.result is not None for r in got):
            assert b._scores is None and b._questions is None  # neither frame is built for the leaderboard
            assert b.question_count == len(a.questions) and b.gold_ids == set(a.questions.index)
        pd.testing.assert_frame_equal(b.scores, a.scores)
        for field in ("answer_format", "reasoning_type", "evidence_source", "length", "position", "domain"):
            pd.testing.assert_frame_equal(b.breakdown(field), a.breakdown(field))
        assert b.scores.to_csv(index=False) == a.scores.to_csv(index=False)
        assert b.joins() == a.joins()
        pd.testing.assert_frame_equal(frames.join_frame(got, set(a.questions.index)),
                                      frames.join_frame(rows, set(a.questions.index)))
        for w, g in zip(rows, got):
            official = [S_row for S_row in _official_like(w)]
            pd.testing.assert_frame_equal(frames.repro_frame(g.result, official), frames.repro_frame(w.result, official))
            assert frames.compared_count(g.result, official) == frames.compared_count(w.result, official)


def _official_like(run: Run) -> list:
    """Score rows that differ from the run's on some questions (for the reproducibility table)."""
    from scoring.model import ScoreRow

    out = []
    for i, r in enumerate(run.result.results[:60]):
        bump = 0.25 if i % 3 == 0 else 0.0
        out.append(ScoreRow(r.qid, run.name, min(1.0, r.accuracy + bump), r.token_f1, r.anls))
    return out


def test_a_table_reads_like_the_list_it_came_from(tmp_path):
    """PredictionTable is the loader's list, record for record, before and after its texts move
    into an alignment (`aligned` gives up the file-order text column)."""
    bench = generated(tmp_path, runs=3)
    from scoring.loaders import load_predictions

    ws = load_workspace(Sources(bench))
    for pf in ws.predictions:
        want = load_predictions(pf.path).items
        table = pf.loaded.items
        assert isinstance(table, PredictionTable)
        assert table == want and list(table) == want and [table[i] for i in range(len(want))] == want
        table.aligned(ws.gold.items)
        assert table == want and table[-1] == want[-1] and table[1:4] == want[1:4]
        assert all(table.get(p.qid) == p for p in want) and table.get("nope") is None
        # a second gold (other ids, in another order) after the columns moved into the first alignment
        other = list(reversed(ws.gold.items[::2]))
        al = table.aligned(other)
        by_id = {p.qid: p for p in want}
        for q, r, st, text in zip(other, al.rows.tolist(), al.status.tolist(), al.reported.to_pylist()):
            p = by_id.get(q.qid)
            assert (r >= 0) == (p is not None)
            if p is None:
                assert (st, text) == ("missing", "")
            else:
                assert want[r] == p and st == p.status
                assert text == ("CONTEXT_OVERFLOW" if p.status in ("context_overflow", "vision_unsupported") else p.text)
        assert sorted(al.extra_rows.tolist()) == [k for k, p in enumerate(want) if p.qid not in {q.qid for q in other}]
        assert table == want


@pytest.mark.parametrize("bench", [SAMPLE, CAMPAIGN, SAMPLE / "mmlongbench", "generated"],
                         ids=lambda v: Path(v).name if isinstance(v, Path) else str(v))
def test_breakdowns_by_integer_keys_equal_grouping_on_strings(tmp_path, bench):
    """Analysis.breakdown groups on integer keys; its frames equal grouping on the run and label
    strings (the way it was computed before), bit for bit, for every field the gold has."""
    from dashboard.core.analysis import breakdown, breakdown_by_strings, filter_fields

    folder = generated(tmp_path) if bench == "generated" else bench
    ws = load_workspace(Sources(folder))
    profile = "mmlongbench-doc" if "mmlongbench" in str(folder) else "xldocbench"
    rows, _fresh, _stored = _both(ws, profile, S.ScoreStore(tmp_path / "cache"))
    an = Analysis.build(rows, ws.gold.items, ws.page_counts, profile)
    fields = [f for f in {*filter_fields(an.questions), "length", "position", "evidence_source", "page_category"}
              if f in an.questions.columns]
    assert len(fields) >= 5
    # issue 34: the analysis' breakdowns are over the questions each run attempted (its `missing` rows, kept
    # in the frame for the explorer, are left out)
    attempted = an.scores[an.scores["status"].astype(str) != "missing"].reset_index(drop=True)
    for field in fields:
        got, want = an.breakdown(field), breakdown_by_strings(attempted, an.questions, field)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        every = breakdown_by_strings(an.scores, an.questions, field)
        pd.testing.assert_frame_equal(breakdown(an.scores, an.questions, field), every, check_exact=True)


def test_breakdown_edge_labels_equal_grouping_on_strings():
    """Nulls, empty label tuples, a question in no page category, labels whose order differs by
    case and accents, a score row of no question: the same frame as grouping on strings."""
    from dashboard.core.analysis import PAGE_CATEGORY, breakdown, breakdown_by_strings

    questions = pd.DataFrame({
        "question_id": ["a", "b", "c", "d", "e"],
        "domain": ["Zeta", None, "alpha", "Älpha", "zeta"],
        "evidence_source": [("table", "chart"), (), ("chart",), ("table", "table"), ("Text",)],
        PAGE_CATEGORY: [("single-page",), (), ("cross-page", "unanswerable"), (), ("single-page",)],
    }).set_index("question_id", drop=False).rename_axis(None)
    rng = np.random.default_rng(5)
    scores = pd.DataFrame({"run": rng.choice(["run b", "Run a", "rün c"], 60),
                           "question_id": rng.choice(["a", "b", "c", "d", "e", "nowhere"], 60),
                           **{m: rng.random(60) for m in ("accuracy", "token_f1", "anls")}})
    for field in ("domain", "evidence_source", PAGE_CATEGORY):
        pd.testing.assert_frame_equal(breakdown(scores, questions, field), breakdown_by_strings(scores, questions, field),
                                      check_exact=True)


def test_rows_of_equals_filtering_by_run_name(tmp_path):
    """Analysis.rows_of takes runs' blocks of rows; the frame equals `scores[scores["run"].isin(runs)]`
    for any choice of runs (order, repeats, unknown names, none), on `display_scores` too, and a
    frame whose runs' rows are not consecutive is filtered by name."""
    ws = load_workspace(Sources(generated(tmp_path, runs=6)))
    rows, _fresh, _stored = _both(ws, "xldocbench", S.ScoreStore(tmp_path / "cache"))
    an = Analysis.build(rows, ws.gold.items, ws.page_counts, "xldocbench")
    names = an.run_names
    for pick in ([names[3]], [names[4], names[1]], [names[0], names[0], "nobody"], [], names, ["nobody"]):
        want = an.scores[an.scores["run"].isin(pick)]
        pd.testing.assert_frame_equal(an.rows_of(pick), want)
        pd.testing.assert_frame_equal(an.rows_of(pick, an.display_scores()), want)
    shuffled = Analysis(an.runs, an.questions, an.scores.sample(frac=1.0, random_state=3))
    pick = [names[2], names[5]]
    pd.testing.assert_frame_equal(shuffled.rows_of(pick), shuffled.scores[shuffled.scores["run"].isin(pick)])


def test_right_runs_by_position_equal_by_id(tmp_path):
    """Analysis.right_runs finds a question's rows by position: the same runs as comparing ids."""
    from dashboard.core.analysis import right_runs

    ws = load_workspace(Sources(generated(tmp_path, runs=5)))
    rows, fresh, _stored = _both(ws, "xldocbench", S.ScoreStore(tmp_path / "cache"))
    for runs in (rows, fresh):
        an = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
        seen = [an.right_runs(q) for q in an.questions.index]
        assert seen == [right_runs(an.scores, q) for q in an.questions.index] and any(seen)
        assert an.right_runs("no such question") == set()


def test_overall_of_columns_equals_summing_lists():
    """overall_of sums a run's numpy columns without a float object per question; the figures equal
    `scoring.aggregate.bucket` over the lists, bit for bit, on seeded columns of every size."""
    from scoring.aggregate import bucket
    from scoring.runner import _LeftToRight

    def left_to_right(values) -> float:  # what sum() of floats does before Python 3.12
        total = 0.0
        for x in values.tolist():
            total += x
        return total

    rng = np.random.default_rng(27)
    for n in (1, 2, 7, 1_000, 20_000, 33_333):
        cols = [np.where(rng.random(n) < 0.4, rng.random(n), rng.integers(0, 2, n).astype(float)) for _ in range(3)]
        assert [next(iter(_LeftToRight(c))) for c in cols] == [left_to_right(c) for c in cols]
        if sys.version_info < (3, 12):  # where overall_of uses it: the same figures as summing the lists
            assert bucket(*(_LeftToRight(c) for c in cols)) == bucket(*(c.tolist() for c in cols))  # type: ignore[arg-type]


def test_frames_built_once_on_first_use_and_no_cycle(tmp_path):
    """The question and score frames are built when first asked for, once, sharing one question frame;
    an analysis is freed by reference counting (the app freezes the collector's view of it)."""
    import gc
    import weakref

    ws = load_workspace(Sources(SAMPLE))
    _rows, runs, _stored = _both(ws, "xldocbench", S.ScoreStore(tmp_path / "cache"))
    was = gc.isenabled()
    gc.disable()
    try:
        an = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
        assert an._questions is None and an._scores is None
        board = an.leaderboard()
        assert an._questions is None and an._scores is None
        scores = an.scores  # builds the question frame too: the same one `questions` gives
        assert an.questions is an.questions and an._questions is not None and an.scores is scores
        pd.testing.assert_frame_equal(board, Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench").leaderboard())
        for touched in (False, True):
            fresh = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
            if touched:
                fresh.breakdown("domain")
            ref = weakref.ref(fresh)
            del fresh
            assert ref() is None
    finally:
        if was:
            gc.enable()

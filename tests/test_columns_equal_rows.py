"""Runs held in columns (dashboard/core/runs.py, the app's path since issue 27) -- just scored, and made
again from their scores in the engine (`runs.from_engine`, what a page gets after a restart) -- against
the row path (every record built: scoring.evaluate): the same numbers, records, tables and CSVs, on the
sample benchmarks and on a generated 20-run benchmark whose prediction files carry every case the join
has -- missing and extra ids, overflow and failed statuses, empty texts, repeated ids, evidence,
non-ASCII text -- under several profiles; and the analysis the engine backs (its leaderboard, rows,
breakdowns by the engine's summaries and by labels joined in the engine) against pandas over its rows."""

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
from dashboard.core.analysis import RECOMPUTED, Analysis, Run
from dashboard.core.paths import Sources
from dashboard.core.predictions import PredictionTable
from dashboard.data import frames
from dashboard.data.workspace import load_workspace
from scoring.evaluate import evaluate, score_runs
from scoring.runner import columns_of, overall_of, prediction_texts, predictions_by_id, record_of

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


def _both(ws, profile: str) -> tuple[list[Run], list[Run], list[Run]]:
    """(runs by the row path, runs in columns just scored as the app scores them -- `score_runs(columns=True)`
    and `runs.held_run` --, runs in columns made again from their scores in the engine -- ingested as the app
    ingests them, read back by `queries.run_values`)."""
    from scoring.engine import queries as Q

    gold = ws.gold.items
    rows, fresh, stored = [], [], []
    scorable = [pf for pf in ws.predictions if pf.loaded.loaded]
    assert all(column_runs.scored_in_columns(pf.loaded.items) for pf in scorable)

    def held(k, the_plan, scored):
        pf = scorable[k]
        return column_runs.held_run(gold, pf.loaded.items, the_plan, scored, profile=profile, name=pf.run)

    batch = [(pf.run, pf.loaded.items) for pf in scorable]
    made = dict(score_runs(gold, batch, profile=profile, parallel=False, make=held, columns=True))
    for k, pf in enumerate(scorable):
        want = evaluate(gold, list(pf.loaded.items), profile=profile, name=pf.run)
        rows.append(Run(pf.run, RECOMPUTED, str(pf.path), want))
        fresh.append(Run(pf.run, RECOMPUTED, str(pf.path), made[k]))
    engine = Analysis.build(fresh, gold, ws.page_counts, profile).store  # ingested into the engine (in memory)
    for pf in scorable:
        with engine.read() as con:
            values = Q.run_values(con, engine.ids[pf.run], len(gold))
        stored.append(Run(pf.run, RECOMPUTED, str(pf.path),
                          column_runs.from_engine(gold, pf.loaded.items, values, profile=profile, name=pf.run)))
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
    rows, fresh, stored = _both(ws, profile)
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
        pd.testing.assert_frame_equal(b.leaderboard(), a.leaderboard())
        assert b.question_count == len(a.questions) and b.gold_ids == set(a.questions.index)
        pd.testing.assert_frame_equal(b.rows_of(b.run_names), a.rows_of(a.run_names))
        for field in ("answer_format", "reasoning_type", "evidence_source", "length", "position", "domain"):
            pd.testing.assert_frame_equal(b.breakdown(field), a.breakdown(field))
        assert b.rows_of(b.run_names).to_csv(index=False) == a.rows_of(a.run_names).to_csv(index=False)
        assert b.joins() == a.joins()
        pd.testing.assert_frame_equal(frames.join_frame(b), frames.join_frame(a))
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


@pytest.mark.parametrize("bench", [SAMPLE, SAMPLE / "mmlongbench", "generated"],
                         ids=lambda v: Path(v).name if isinstance(v, Path) else str(v))
def test_breakdowns_from_the_engine_equal_pandas_over_the_rows(tmp_path, bench):
    """Analysis.breakdown reads the engine's summaries (a field the engine coded) or joins the page's
    labels with the rows in the engine (any other field, or runs compared on the questions they share);
    both equal pandas grouping the rows the run attempted on the run and label strings, for every field
    the gold has, and for the charted runs over the questions they all attempted."""
    from dashboard.core.analysis import MULTI_LABEL, filter_fields

    folder = generated(tmp_path) if bench == "generated" else bench
    ws = load_workspace(Sources(folder))
    profile = "mmlongbench-doc" if "mmlongbench" in str(folder) else "xldocbench"
    rows, _fresh, _stored = _both(ws, profile)
    an = Analysis.build(rows, ws.gold.items, ws.page_counts, profile)
    fields = [f for f in {*filter_fields(an.questions), "length", "position", "evidence_source", "page_category"}
              if f in an.questions.columns]
    assert len(fields) >= 5 and {f for f in fields if f in an.store.fields} and {f for f in fields if f not in an.store.fields}
    every = an.rows_of(an.run_names)
    attempted = every[every["status"].astype(str) != "missing"]

    def by_strings(scores: pd.DataFrame, field: str) -> pd.DataFrame:
        col = an.questions[field].reindex(scores["question_id"]).reset_index(drop=True)
        if field in MULTI_LABEL:
            col = col.map(lambda v: [x for x in (list(v) or [None]) if not (x is None and field == "page_category")])
        base = scores[["run", *METRICS_]].reset_index(drop=True).assign(label=col).explode("label")
        base = base[base["label"].notna() | (field != "page_category")]
        base["label"] = base["label"].map(lambda v: "unknown" if v is None or v != v else str(v))
        out = base.groupby(["run", "label"], sort=True).agg(count=("run", "size"), **{m: (m, "mean") for m in METRICS_})
        return out.reset_index()

    for field in fields:
        got, want = an.breakdown(field), by_strings(attempted, field)
        assert list(zip(got["run"], got["label"], got["count"])) == list(zip(want["run"], want["label"], want["count"])), field
        for m in METRICS_:
            assert np.allclose(got[m], want[m], rtol=0, atol=1e-12), (field, m)
    charted = an.run_names[:4]
    common = an.shared(charted)
    if common.differs:  # the generated runs miss questions: compared on those all four attempted
        on = attempted[attempted["run"].isin(charted) & attempted["question_id"].isin(an.questions.index[common.mask])]
        for field in fields:
            got, want = an.breakdown(field, charted), by_strings(on, field)
            assert list(zip(got["run"], got["label"], got["count"])) == list(zip(want["run"], want["label"], want["count"]))


METRICS_ = ("accuracy", "token_f1", "anls")


def test_rows_of_equals_filtering_by_run_name(tmp_path):
    """Analysis.rows_of reads these runs' rows from the engine; the frame equals filtering every run's rows
    by name, in the analysis's run order, for any choice of runs (order, repeats, unknown names, none), and
    `display_rows` cuts nothing here."""
    ws = load_workspace(Sources(generated(tmp_path, runs=6)))
    rows, _fresh, _stored = _both(ws, "xldocbench")
    an = Analysis.build(rows, ws.gold.items, ws.page_counts, "xldocbench")
    names = an.run_names
    every = an.rows_of(names)
    assert len(every) == len(names) * len(an.questions)  # a recomputed run: a row per gold question
    for pick in ([names[3]], [names[4], names[1]], [names[0], names[0], "nobody"], [], names, ["nobody"]):
        want = every[every["run"].isin(pick)].reset_index(drop=True)
        pd.testing.assert_frame_equal(an.rows_of(pick), want)
        shown, cut = an.display_rows(pick)
        assert not cut
        pd.testing.assert_frame_equal(shown, want)


def test_right_runs_from_the_engine_equal_the_rows(tmp_path):
    """Analysis.right_runs asks the engine for one question's right runs: those whose row says right."""
    ws = load_workspace(Sources(generated(tmp_path, runs=5)))
    rows, fresh, _stored = _both(ws, "xldocbench")
    for runs in (rows, fresh):
        an = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
        every = an.rows_of(an.run_names)
        seen = [an.right_runs(q) for q in an.questions.index]
        assert seen == [set(every[(every["question_id"] == q) & every["right"]]["run"]) for q in an.questions.index]
        assert any(seen) and an.right_runs("no such question") == set()
        assert an.right_sets() == {r: set(every[(every["run"] == r) & every["right"]]["question_id"]) for r in an.run_names}


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


def test_no_frame_of_every_row_and_no_cycle(tmp_path):
    """The leaderboard and a breakdown read the engine, building no frame of the runs' rows; the question
    frame is built once; an analysis -- and its engine in memory -- is freed by reference counting (the
    app freezes the collector's view of it)."""
    import gc
    import weakref

    ws = load_workspace(Sources(SAMPLE))
    _rows, runs, _stored = _both(ws, "xldocbench")
    was = gc.isenabled()
    gc.disable()
    try:
        an = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
        board = an.leaderboard()
        an.breakdown("domain")
        assert not any(k[0] in ("rows", "display") for k in an._memo._items)  # no rows frame was built for them
        assert an.questions is an.questions
        pd.testing.assert_frame_equal(board, Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench").leaderboard())
        for touched in (False, True):
            fresh = Analysis.build(runs, ws.gold.items, ws.page_counts, "xldocbench")
            if touched:
                fresh.breakdown("domain")
                fresh.rows_of(fresh.run_names[:2])
            ref, engine = weakref.ref(fresh), weakref.ref(fresh.store.engine)
            del fresh
            assert ref() is None and engine() is None
    finally:
        if was:
            gc.enable()

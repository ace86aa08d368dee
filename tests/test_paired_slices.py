"""The one per-slice paired table (scoring/paired_slices.py): the gate's compare.json and the Compare
page give the same slices, p and Benjamini-Hochberg q for the same two runs; slices with too few
documents stay out of the family (19 documents out, 20 in); a hand-made table's q are scipy's BH over
the tested slices only; and an Accuracy of exactly 0.5 reads as right where a frame has no `right`
column (MMLongBench-Doc's threshold, `Profile.right_mask`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from app_kit import app_on
from dashboard.compare import frames as C
from dashboard.core.analysis import RECOMPUTED, Analysis, Run
from dashboard.core.links import slice_label
from dashboard.core.paths import Sources
from dashboard.data.workspace import load_workspace
from scoring.cli import main
from scoring.evaluate import evaluate
from scoring.paired_slices import SLICE_RESAMPLES, paired_table
from scoring.profiles import RIGHT_EPS
from scoring.stats import Clusters, paired_by_document

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGN = ROOT / "sample_runs" / "campaign"  # 408 questions in 40 documents, page counts declared
NEW, OLD = "ckpt-0520", "ckpt-0410"
METRICS = ("accuracy", "token_f1", "anls")


# ----------------------------------------------------------------------------- the command line and the page agree


@pytest.fixture(scope="module")
def cli_json(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("gate") / "compare.json"
    code = main(["--gold-files", str(CAMPAIGN / "qa_single_doc.jsonl"), "--predictions", str(CAMPAIGN / "runs" / f"{NEW}.jsonl"),
                 "--baseline", str(CAMPAIGN / "runs" / f"{OLD}.jsonl"), "--compare-json", str(out)])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def campaign() -> Analysis:
    ws = load_workspace(Sources(CAMPAIGN))
    runs = [Run(pf.run, RECOMPUTED, str(pf.path), evaluate(ws.gold.items, pf.loaded.items, profile="xldocbench", name=pf.run))
            for pf in ws.predictions]
    return Analysis.build(runs, ws.gold.items, ws.page_counts, declared_pages=ws.declared_pages())


def page_table(an: Analysis) -> pd.DataFrame:
    """The Compare page's table of NEW against OLD, as dashboard/compare/panel.py computes it."""
    pairs = C.paired(an.attempted_scores([NEW, OLD])[0], NEW, OLD)
    return C.deltas(pairs, an.questions, C.pair_fields(pairs, an.questions, an.gold, an.declared_pages), C.Settings())


def test_the_gate_and_the_compare_page_give_the_same_q_for_every_slice(cli_json, campaign):
    table = page_table(campaign).set_index(["field", "label"])
    rows = {(r["field"], r["value"]): r for r in cli_json["slices"]}
    page = table.drop(index=(C.OVERALL_FIELD, C.OVERALL_LABEL))
    assert set(rows) == set(page.index)  # the same slices: the finder's fields, evidence position included
    assert {"position", "reasoning_type", "evidence_source"} <= {f for f, _ in rows}
    tested = 0
    for key, r in rows.items():
        for m in METRICS:
            mine, theirs = page.loc[key], r[m]
            assert (mine["questions"], mine["documents"]) == (r["questions"], theirs["units"])
            assert mine[f"{m}_delta"] == pytest.approx(theirs["delta"], abs=1e-12)
            assert mine[f"{m}_p"] == pytest.approx(theirs["p"], rel=1e-12), (key, m)
            if theirs["q"] is None:
                assert math.isnan(mine[f"{m}_q"]) and bool(mine["too_few"]), (key, m)
            else:
                tested += 1
                assert mine[f"{m}_q"] == pytest.approx(theirs["q"], rel=1e-12), (key, m)
                assert [mine[f"{m}_low"], mine[f"{m}_high"]] == pytest.approx(theirs["ci"], abs=1e-12)
    assert tested >= 3 * 10  # a real family on every metric (token F1 and ANLS: Monte Carlo p's, the same seed)
    top = table.loc[(C.OVERALL_FIELD, C.OVERALL_LABEL)]
    for m in METRICS:
        o = cli_json["overall"][m]
        assert (top[f"{m}_delta"], top[f"{m}_p"]) == pytest.approx((o["delta"], o["p"]), rel=1e-12)
        assert [top[f"{m}_low"], top[f"{m}_high"]] == pytest.approx(o["ci"], rel=1e-12)


def test_the_compare_page_shows_those_q(monkeypatch, cli_json):
    at = app_on(monkeypatch, CAMPAIGN, {"a": NEW, "b": OLD}, timeout=120)
    at.switch_page("views/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    want = {slice_label(r["field"], r["value"]): r for r in cli_json["slices"]}
    for m in ("accuracy", "token_f1"):
        at.segmented_control(key="cmp_metric").set_value(m).run()
        shown = next(d.value for d in at.dataframe if "q" in d.value.columns and "Slice" in d.value.columns)
        shown = shown[shown["Slice"] != "All questions"].set_index("Slice")
        assert set(shown.index) == set(want)
        for name, r in want.items():
            q = r[m]["q"]
            assert (pd.isna(shown.loc[name, "q"]) if q is None else shown.loc[name, "q"] == pytest.approx(q, rel=1e-12)), name
    assert any("Benjamini-Hochberg across the" in c.value for c in at.caption)
    assert not any("Holm" in c.value for c in at.caption)


# ----------------------------------------------------------------------------- the family


def documents_table(sizes: dict[str, int], *, per_doc: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray, Clusters, dict]:
    """One field `f` whose value v holds `sizes[v]` documents of `per_doc` questions; run A right on
    most, B on fewer, with token-F1-like fractional scores in a second row."""
    rng = np.random.default_rng(seed)
    values = [v for v, g in sizes.items() for _ in range(g * per_doc)]
    n = len(values)
    codes = np.repeat(np.arange(n // per_doc), per_doc)
    acc_a, acc_b = (rng.random(n) < 0.8).astype(float), (rng.random(n) < 0.5).astype(float)
    a = np.vstack([acc_a, acc_a * rng.uniform(0.5, 1, n)])
    b = np.vstack([acc_b, acc_b * rng.uniform(0.5, 1, n)])
    return a, b, Clusters(codes, "document", int(codes.max()) + 1), {"f": values}


def test_a_slice_of_19_documents_is_out_of_the_family_and_one_of_20_in():
    a, b, clusters, fields = documents_table({"few": 19, "enough": 20, "many": 35})
    table = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=500)
    rows = {r.value: r for r in table.slices}
    assert [rows[v].first().units for v in ("few", "enough", "many")] == [19, 20, 35]
    for m in ("accuracy", "token_f1"):
        assert rows["few"].q[m] is None and rows["few"].results[m].too_few  # no q: not tested
        assert rows["few"].results[m].p is not None  # its p is still reported
        assert math.isnan(rows["few"].results[m].low)
        assert rows["enough"].q[m] is not None and not rows["enough"].results[m].too_few
        # BH over the two tested slices only (with "few" in the family every q would be larger)
        ps = [rows[v].results[m].p for v in ("enough", "many")]
        assert [rows[v].q[m] for v in ("enough", "many")] == pytest.approx(list(sps.false_discovery_control(ps)), rel=1e-12)
        assert table.tested[m] == 2


def test_the_family_is_bh_of_the_tested_p_values_worked_by_hand():
    # three slices of 0/1 Accuracy, one question per document (the exact sign-flip p is McNemar's):
    # "x": 24 documents, A right on all, B on none -> p = 2/2^24; "y": 30 documents, 10 won by A and
    # 5 by B, 15 tied -> p = P(|Bin(15, 1/2) - 7.5| >= 2.5) = 0.30175...; "z": 5 documents (too few)
    a = np.array([1.0] * 24 + [1.0] * 10 + [0.0] * 5 + [1.0] * 15 + [1.0] * 5)
    b = np.array([0.0] * 24 + [0.0] * 10 + [1.0] * 5 + [1.0] * 15 + [0.0] * 5)
    fields = {"f": ["x"] * 24 + ["y"] * 30 + ["z"] * 5}
    codes = np.arange(a.size)
    table = paired_table(a, b, Clusters(codes, "document", a.size), fields, metrics=("accuracy",), slice_resamples=200)
    x, y, z = table.slices
    p_x, p_y = 2 / 2 ** 24, float(sps.binomtest(5, 15, 0.5).pvalue)
    assert x.results["accuracy"].p == pytest.approx(p_x, rel=1e-12) and y.results["accuracy"].p == pytest.approx(p_y)
    # BH with m = 2: the larger p keeps its value, the smaller is min(p_x * 2 / 1, p_y)
    assert (x.q["accuracy"], y.q["accuracy"], z.q["accuracy"]) == pytest.approx((2 * p_x, p_y, None))
    assert table.tested == {"accuracy": 2}


def test_the_saved_slices_are_a_family_of_their_own():
    a, b, clusters, fields = documents_table({"u": 25, "v": 25, "w": 30})
    alone = paired_table(a[0], b[0], clusters, fields, metrics=("accuracy",), slice_resamples=300)
    saved = [("mine",) if i % 3 else () for i in range(a.shape[1])]
    both = paired_table(a[0], b[0], clusters, {**fields, "saved_slice": saved}, metrics=("accuracy",),
                        own_family=("saved_slice",), slice_resamples=300)
    assert [r.q for r in both.slices if r.field == "f"] == [r.q for r in alone.slices]  # the benchmark's q unchanged
    mine = next(r for r in both.slices if r.field == "saved_slice")
    assert mine.q["accuracy"] == pytest.approx(mine.results["accuracy"].p)  # a family of one
    assert both.family == {"f": "benchmark", "saved_slice": "saved_slice"}


def test_each_row_is_paired_by_document_on_its_questions():
    a, b, clusters, fields = documents_table({"u": 22, "v": 8})
    table = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=400, seed=3)
    u = table.slices[0]
    assert (u.field, u.value, u.name, u.label) == ("f", "u", "f=u", "F: u")
    single = paired_by_document(a[1, u.positions], b[1, u.positions], clusters.codes[u.positions], resamples=400, seed=3)
    assert u.results["token_f1"] == single
    assert table.overall.results["accuracy"].units == 30 and table.overall.questions == a.shape[1]
    assert SLICE_RESAMPLES == 2_000
    with pytest.raises(ValueError, match="method"):
        paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), method="holm")


def same_rows(got, want) -> bool:
    """Two tables' rows equal value for value (a NaN equal to a NaN: one sent back by a worker process is
    another float object, and `nan == nan` is False)."""
    def equal(p, q) -> bool:
        return all(u == v or (isinstance(u, float) and math.isnan(u) and isinstance(v, float) and math.isnan(v))
                   for u, v in ((getattr(p, f), getattr(q, f)) for f in p.__dataclass_fields__))

    rows = [(got.overall, want.overall), *zip(got.slices, want.slices)]
    return len(got.slices) == len(want.slices) and all(
        (r.field, r.value, r.q, list(r.results)) == (w.field, w.value, w.q, list(w.results)) and np.array_equal(r.positions, w.positions)
        and all(equal(r.results[m], w.results[m]) for m in r.results) for r, w in rows)


@pytest.mark.parametrize("where", ["processes", "threads"])
def test_the_rows_in_worker_processes_or_on_threads_are_the_rows_in_turn(monkeypatch, where):
    """From THREADED_FROM questions x metrics the slices' rows are computed in the shared pool's worker processes
    when it is idle, else on threads: each row with its own generator, in the slices' order, so the table is
    the serial one number for number."""
    import scoring.paired_slices as PS
    from scoring import workers

    a, b, clusters, fields = documents_table({"u": 22, "v": 8, "w": 25})
    fields = {**fields, "g": [("even", "odd")[i % 2] for i in range(a.shape[1])]}
    monkeypatch.setattr(PS, "usable_cores", lambda: 2)
    monkeypatch.setattr(PS, "THREADED_FROM", 10**12)
    serial = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=300, seed=5)
    monkeypatch.setattr(PS, "THREADED_FROM", 0)
    sent: list[int] = []
    if where == "processes":
        pool = workers.shared_pool()
        assert pool is not None, "this test needs the shared pool of worker processes (two cores)"
        real_submit = pool.submit
        monkeypatch.setattr(pool, "submit", lambda fn, *args: sent.append(len(args[0][4])) or real_submit(fn, *args))
        monkeypatch.setattr(PS, "idle_shared_pool", lambda: pool)
    else:
        monkeypatch.setattr(PS, "idle_shared_pool", lambda: None)  # the pool busy with a scoring
    parallel = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=300, seed=5)
    assert len(parallel.slices) == len(serial.slices) >= 5
    assert same_rows(parallel, serial)
    assert sent == ([3, 2] if where == "processes" else [])  # one job per field: f's three values, g's two


@pytest.mark.parametrize("how", ["its worker dies", "it was shut down"])
def test_a_pool_that_cannot_take_the_rows_leaves_them_to_threads(monkeypatch, how):
    """A worker process that dies (killed, out of memory) breaks the pool: the table is still made, on threads,
    the same numbers, and the broken pool is discarded (the next use starts another). A pool another part shut
    down meanwhile refuses the jobs: the same table, on threads, and nothing discarded."""
    from concurrent.futures import ProcessPoolExecutor

    import scoring.paired_slices as PS

    a, b, clusters, fields = documents_table({"u": 22, "v": 8, "w": 25})
    monkeypatch.setattr(PS, "usable_cores", lambda: 2)
    serial = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=300, seed=5)
    monkeypatch.setattr(PS, "THREADED_FROM", 0)
    discarded: list[bool] = []
    dies = how == "its worker dies"
    with ProcessPoolExecutor(max_workers=1, initializer=int if dies else None, initargs=("not a number",) if dies else ()) as pool:
        if not dies:
            pool.shutdown()
        monkeypatch.setattr(PS, "idle_shared_pool", lambda: pool)
        monkeypatch.setattr(PS, "discard_shared_pool", lambda: discarded.append(True))
        got = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=300, seed=5)
    assert same_rows(got, serial) and discarded == ([True] if dies else [])


@pytest.mark.parametrize("threads", [1, 2, "processes"])
def test_the_overall_row_is_handed_over_before_any_slice_is_waited_for(monkeypatch, threads):
    """`on_overall` gets the all-questions row the moment it is drawn: in turn, before any slice's row is
    computed; on threads, before the table waits for any slice (a slice's row is held until the overall
    row has been handed over, so a late hand-over would never finish: the hang guard fails it)."""
    import threading

    import scoring.paired_slices as PS

    a, b, clusters, fields = documents_table({"u": 22, "v": 8, "w": 25})
    monkeypatch.setattr(PS, "usable_cores", lambda: 1 if threads == 1 else 2)
    monkeypatch.setattr(PS, "THREADED_FROM", 0)
    if threads == "processes":  # the slices in worker processes: the overall row is drawn here, then handed over
        from scoring import workers

        monkeypatch.setattr(PS, "idle_shared_pool", workers.shared_pool)
        table = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=200, seed=1,
                             on_overall=(given := []).append)
        assert given == [table.overall] and len(table.slices) == 3
        return
    monkeypatch.setattr(PS, "idle_shared_pool", lambda: None)  # in turn, or on threads
    handed = threading.Event()
    rows_before: list[int] = []
    computed: list[int] = []
    real = PS.paired_by_document_rows

    def rows(x, *args, **kwargs):
        if x.shape[1] < a.shape[1]:  # a slice's row: waits for the overall row's hand-over
            assert handed.wait(timeout=120), "the overall row was not handed over before a slice was waited for"
        computed.append(x.shape[1])
        return real(x, *args, **kwargs)

    def on_overall(row):
        rows_before.append(len(computed))
        got.append(row)
        handed.set()

    monkeypatch.setattr(PS, "paired_by_document_rows", rows)
    got: list = []
    table = paired_table(a, b, clusters, fields, metrics=("accuracy", "token_f1"), slice_resamples=200, seed=1,
                         on_overall=on_overall)
    assert len(got) == 1 and got[0] is table.overall and rows_before == [1] and len(computed) == 1 + len(table.slices)




def test_the_pool_is_taken_only_when_it_runs_and_nothing_runs_on_it(tmp_path):
    """`idle_shared_pool` never starts the pool (`warm_shared_pool` does, in the background: the caller uses its
    threads meanwhile); once it runs with nothing on it, it is handed out; while a worker is busy (here: reading
    a FIFO no one writes yet), it is not. States waited for, never moments (the hang guards are 120 s)."""
    import os
    import time

    from scoring import workers

    workers.discard_shared_pool()
    assert workers.idle_shared_pool() is None  # not running
    workers.warm_shared_pool()
    deadline = time.monotonic() + 120
    while (pool := workers.idle_shared_pool()) is None:
        assert time.monotonic() < deadline, "the shared pool never became idle"
        time.sleep(0.05)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with workers.bare_main():
        busy = pool.submit(fifo.read_text)  # blocks in the worker until something writes to the FIFO
    assert workers.idle_shared_pool() is None
    with open(fifo, "w") as fh:  # opens once the worker has opened it for reading
        fh.write("done")
    assert busy.result(timeout=120) == "done"
    while workers.idle_shared_pool() is None:  # the done-callback runs in the pool's own thread
        assert time.monotonic() < deadline + 120, "the shared pool stayed busy"
        time.sleep(0.05)


# ----------------------------------------------------------------------------- right at exactly 0.5


def test_an_accuracy_of_exactly_one_half_is_right_without_a_right_column():
    """A score frame built by hand (no `right` column) reads Accuracy by MMLongBench-Doc's threshold:
    0.5 is right (the mutant `>` read it as wrong), 0.49 is not."""
    assert C.is_right(np.array([0.5, 0.49, 1.0, 0.0, math.nan])).tolist() == [True, False, True, False, False]
    # a mean of floats a hair under the mark is right, down to the one definition's RIGHT_EPS and no further
    assert C.is_right([0.5 - 1e-12, 0.5 - RIGHT_EPS, 0.5 - 2 * RIGHT_EPS]).tolist() == [True, True, False]
    assert C.flip_of(0.5, 0.49) == C.ONLY_A and C.flip_of(0.49, 0.5) == C.ONLY_B and C.flip_of(0.5, 0.5) == C.BOTH_RIGHT
    rows = [{"run": r, "question_id": q, "accuracy": acc, "token_f1": acc, "anls": acc, "status": "success", "prediction": "x"}
            for r, accs in (("A", (0.5, 0.5, 0.25)), ("B", (0.49, 0.5, 1.0))) for q, acc in zip(("q1", "q2", "q3"), accs)]
    pairs = C.paired(pd.DataFrame(rows), "A", "B")
    assert pairs["flip"].tolist() == [C.ONLY_A, C.BOTH_RIGHT, C.ONLY_B]

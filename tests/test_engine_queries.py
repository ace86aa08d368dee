"""The engine's queries (scoring/engine/queries.py) equal what the app computes in memory today, on the
sample, its campaign, a generated 20-run benchmark and every other layout the app opens (MMLongBench-Doc,
DocVQA, the harnesses' outputs): the leaderboard, every breakdown, the flip tables, the per-document sums
the document bootstrap and sign-flip test resample, and the finder's candidate counts. The golden values
are computed in the test by today's code (dashboard.core.analysis, dashboard.compare.frames,
dashboard.weak.frames, scoring.slices)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.compare import frames as C
from dashboard.core.analysis import MULTI_LABEL
from dashboard.core.links import META
from dashboard.weak import frames as W
from engine_kit import SAMPLE, embedded, generated_campaign, ingest_all, reference
from scoring.engine import queries as Q
from scoring.registry import METRICS
from scoring.slices import _condition_members, find_weak_slices
from scoring.stats import paired_by_document, sign_flip_p

DATASETS = ["sample", "campaign", "generated", "mmlongbench", "docvqa", "lmms-eval", "vlmevalkit"]


@pytest.fixture(scope="module", params=DATASETS)
def world(request, tmp_path_factory):
    """(reference Analysis, engine, benchmark key, run name -> run_id) for one dataset."""
    name = request.param
    bench = {"sample": SAMPLE, "campaign": SAMPLE / "campaign", "mmlongbench": SAMPLE / "mmlongbench",
             "docvqa": SAMPLE / "docvqa", "lmms-eval": SAMPLE / "harness" / "lmms-eval",
             "vlmevalkit": SAMPLE / "harness" / "vlmevalkit"}.get(name)
    if bench is None:
        bench = generated_campaign(tmp_path_factory.mktemp("campaign") / "c")
    ws, profile, an = reference(bench)
    assert len(an.runs) >= (20 if name == "generated" else 1), name
    engine = embedded(tmp_path_factory.mktemp("engine") / "lens.duckdb")
    key, ids = ingest_all(engine, bench)
    assert set(ids) == {r.name for r in an.runs}
    with engine.read() as con:
        yield name, an, con, key, ids


def test_the_leaderboard_equals_the_apps(world):
    name, an, con, key, ids = world
    board = an.leaderboard().set_index("Run")
    got = {r["name"]: r for r in Q.leaderboard(con, key)}
    assert set(got) == set(board.index)
    for run, row in board.iterrows():
        g = got[run]
        assert (g["questions"], g["attempted"], g["answered"], g["missing"], g["failed"]) == (
            row["Questions"], row["Attempted"], row["Answered"], row["Missing"], row["Failed"]), (name, run)
        for m, col in zip(METRICS, ("Accuracy (%)", "Token F1 (%)", "ANLS (%)")):
            assert 100 * g[m] == pytest.approx(row[col], abs=1e-9), (name, run, m)
        assert g["signature"] == an.run(run).signature
    # the same order (by Accuracy), where the app does not rank by the questions the runs share
    if "Shared Acc (%)" not in board.columns:
        assert [r["name"] for r in Q.leaderboard(con, key)] == list(board.index)


def test_every_breakdown_equals_the_apps(world):
    name, an, con, key, ids = world
    fields = [f for f in ("split", "domain", "reasoning_type", "difficulty", "doc_type", "answer_format", "evidence_source",
                          "length", "position", "page_category") if f in an.questions.columns]
    assert fields
    for field in fields:
        want = an.breakdown(field)
        got = Q.breakdown(con, field, key)
        assert [(r["name"], r["label"], r["count"]) for r in got] == list(zip(want["run"], want["label"], want["count"])), \
            (name, field)
        for m in METRICS:
            assert np.allclose([r[m] for r in got], want[m].to_numpy(float), rtol=0, atol=1e-12), (name, field, m)


def _pairs(an) -> list[tuple[str, str]]:
    """A few pairs of runs (a run against itself where the benchmark holds one)."""
    names = [r.name for r in an.runs]
    if len(names) == 1:
        return [(names[0], names[0])]
    return [(a, b) for a, b in zip(names, names[1:])][:4] + ([(names[-1], names[0])] if len(names) > 2 else [])


def test_the_flip_tables_equal_the_compare_pages(world):
    name, an, con, key, ids = world
    for a, b in _pairs(an):
        pairs = C.paired(an.rows_of(an.run_names), a, b)
        want = C.flip_table(pairs, an.questions)
        got = Q.flip_table(con, ids[a], ids[b])
        assert len(got) == len(want), (name, a, b)
        for g, (_, w) in zip(got, want.iterrows()):
            assert (g["field"], g["label"], g["questions"], g["both_right"], g["only_a"], g["only_b"], g["both_wrong"],
                    g["documents"], g["unit"]) == (w["field"], w["label"], w["questions"], w[C.BOTH_RIGHT], w[C.ONLY_A],
                                                   w[C.ONLY_B], w[C.BOTH_WRONG], w["documents"], w["unit"]), (name, a, b)
            for k in ("p", "p_mcnemar"):
                assert (math.isnan(g[k]) and math.isnan(w[k])) or g[k] == pytest.approx(w[k], rel=1e-12), (name, a, b, k)


def test_the_document_sums_are_what_the_document_bootstrap_resamples(world):
    """Per document, in the order scoring.stats numbers them (first paired question): the paired
    questions and the sums of A - B, as paired_by_document computes them from the questions; its
    sign-flip p from these sums."""
    name, an, con, key, ids = world
    for a, b in _pairs(an):
        pairs = C.paired(an.rows_of(an.run_names), a, b)
        codes, _unit = C.cluster_codes(an.questions, pairs.index)
        _, codes = np.unique(codes, return_inverse=True)  # renumbered as scoring.stats does
        got = Q.document_sums(con, ids[a], ids[b])
        assert got["n"].tolist() == np.bincount(codes).tolist(), (name, a, b)
        for m in METRICS:
            d = pairs[f"{m}_a"].to_numpy(float) - pairs[f"{m}_b"].to_numpy(float)
            assert np.allclose(got[m], np.bincount(codes, weights=d), rtol=0, atol=1e-9), (name, a, b, m)
            p = paired_by_document(pairs[f"{m}_a"].to_numpy(float), pairs[f"{m}_b"].to_numpy(float),
                                     C.clusters_at(*C.cluster_codes(an.questions, pairs.index), np.arange(len(pairs))),
                                     resamples=2_000).p
            assert sign_flip_p(got[m], resamples=2_000)[0] == pytest.approx(p, abs=1e-12), (name, a, b, m)
        right = pairs["right_a"].to_numpy(float) - pairs["right_b"].to_numpy(float)
        assert got["right"].tolist() == np.bincount(codes, weights=right).astype(int).tolist()


def test_the_finders_candidate_counts_equal_the_finders(world):
    """Per condition field = value of the fields the finder lists (dashboard.weak.frames.inputs, as the
    Weak slices page calls it: scoring.slice_fields on declared page counts), the questions and
    documents, and how many single conditions the finder tests -- from the engine's summaries."""
    name, an, con, key, ids = world
    for run in [r.name for r in an.runs][:3]:
        data = W.inputs(an.questions, an.rows_of(an.run_names), an.gold, run, "accuracy", page_counts=an.declared_pages)
        fields = {f: v for f, v in data.fields.columns.items() if not f.startswith(META)}
        got = Q.finder_counts(con, ids[run])
        assert sorted(got["fields"]) == sorted(fields), (name, run)  # the same fields, the meta.* keys aside
        order = np.argsort(data.clusters.codes, kind="stable")
        conds = _condition_members(fields, order)
        assert got["questions"] == len(data.outcome) and got["documents"] == data.clusters.units, (name, run)
        doc = data.clusters.codes[order]
        want = {(f, v): (int(m.size), int(np.unique(doc[m]).size)) for f, v, m in zip(conds.field, conds.value, conds.members)}
        assert {(c["field"], c["label"]): (c["questions"], c["documents"]) for c in got["conditions"]} == want, (name, run)
        assert sorted(got["skipped_fields"]) == sorted(conds.skipped), (name, run)
        found = find_weak_slices(data.outcome, fields, data.clusters, max_conditions=1)
        assert got["candidates"] == found.tested and got["min_questions"] == found.min_questions, (name, run)


def test_multi_label_fields_are_lists_in_the_rows(world):
    """evidence_source (and page_category) hold every label a question names, in its order."""
    name, an, con, key, ids = world
    run = an.runs[0].name
    rows = con.execute("SELECT q, evidence_source FROM scores WHERE run_id = ? ORDER BY q", [ids[run]]).fetchall()
    labels = dict(con.execute("SELECT code, label FROM labels WHERE run_id = ? AND field = 'evidence_source'",
                              [ids[run]]).fetchall())
    qids = an.questions.index.tolist()
    col = an.questions["evidence_source"]
    assert "evidence_source" in MULTI_LABEL
    for q, codes in rows[:200]:
        assert tuple(labels[c] for c in codes) == tuple(col.loc[qids[q]]) or col.loc[qids[q]] == ()


def test_the_checkpoint_matrix_equals_the_runs_columns(world):
    """The trends' and the checkpoint matrix's data (queries.checkpoint_matrix) equal what
    scoring.trends.checkpoint_scores reads from the runs held in memory, exactly: runs in the order asked
    (here the reverse of the analysis's), questions in the order asked (shuffled, some left out, one the
    gold does not hold), each metric, attempted, and right as each run's profile reads its Accuracy."""
    from scoring.trends import checkpoint_scores

    name, an, con, key, ids = world
    runs = [r.name for r in an.runs if r.recomputed][::-1]
    assert runs, name
    rng = np.random.default_rng(7)
    gold = list(an.gold)
    asked = [gold[i] for i in rng.permutation(len(gold))[: max(1, len(gold) * 9 // 10)]] + ["no-such-question"]
    results = [an.result_of(r) for r in runs]
    want, answered = checkpoint_scores(results, asked, list(METRICS))
    right = np.array([res.profile.right_mask(want["accuracy"][k]) for k, res in enumerate(results)]).reshape(answered.shape)
    at = {q: i for i, q in enumerate(gold)}
    got = Q.checkpoint_matrix(con, [ids[r] for r in runs], [at.get(q, -1) for q in asked], METRICS)
    mine = an.checkpoint_matrix(runs, asked, METRICS)  # the analysis's own engine (DuckDB in memory), by name
    for found in (got, mine):
        for m in METRICS:
            assert found[m].dtype == np.float64 and np.array_equal(found[m], want[m]), (name, m)
        assert np.array_equal(found["attempted"], answered), name
        assert np.array_equal(found["is_right"], right), name
        assert not found["attempted"][:, -1].any() and not found["accuracy"][:, -1].any()  # the id the gold lacks
    assert Q.checkpoint_matrix(con, [], [0, 1], ["accuracy"])["accuracy"].shape == (0, 2)
    with pytest.raises(KeyError):
        an.checkpoint_matrix(["no-such-run"], asked, ["accuracy"])


def test_the_questions_every_run_attempted_are_the_runs_columns(world):
    """queries.attempted_by_all equals the questions the runs held in memory all attempted, for every run
    and for every pair (a run that skipped questions among them on the harness datasets), whatever the
    order of the ids and with an id given twice: one row per (run, question) counts each run once."""
    from scoring.trends import checkpoint_scores

    name, an, con, key, ids = world
    runs = [r.name for r in an.runs if r.recomputed]
    gold = list(an.gold)
    _, answered = checkpoint_scores([an.result_of(r) for r in runs], gold, ["accuracy"])
    groups = [runs, *([a, b] for a, b in zip(runs, runs[1:]))]
    for group in groups:
        want = np.flatnonzero(answered[[runs.index(r) for r in group]].all(axis=0))
        asked = [ids[r] for r in group][::-1] + [ids[group[0]]]
        assert np.array_equal(Q.attempted_by_all(con, asked), want), (name, group)
    assert Q.attempted_by_all(con, []).size == 0


def test_the_means_over_some_questions_are_the_runs_columns(world):
    """queries.means_over equals each run's mean over the asked questions it attempted, counted from the runs
    held in memory (math.fsum), to the last bits a sum's order may change: for every run, asked in reverse with
    one id twice, over a random third of the questions given shuffled and with repeats (each counted once), over
    none, and for a run asked about questions it never attempted (n 0, NaN)."""
    from scoring.trends import checkpoint_scores

    name, an, con, key, ids = world
    runs = [r.name for r in an.runs if r.recomputed]
    gold = list(an.gold)
    values, answered = checkpoint_scores([an.result_of(r) for r in runs], gold, list(METRICS))
    rng = np.random.default_rng(11)
    some = rng.permutation(len(gold))[: max(1, len(gold) // 3)]
    asked = [ids[r] for r in runs][::-1] + [ids[runs[0]]]
    for positions in (some, np.concatenate([some[::-1], some[:5]])):
        got = Q.means_over(con, asked, positions)
        assert sorted(got) == sorted(set(asked)), name
        at = np.zeros(len(gold), dtype=bool)
        at[some] = True
        for k, r in enumerate(runs):
            kept = at & answered[k]
            assert got[ids[r]]["n"] == int(kept.sum()), (name, r)
            for m in METRICS:
                want = math.fsum(values[m][k][kept]) / kept.sum() if kept.any() else math.nan
                assert math.isclose(got[ids[r]][m], want, rel_tol=1e-12, abs_tol=1e-15) or (math.isnan(want) and math.isnan(got[ids[r]][m])), (name, r, m)
    never = np.flatnonzero(~answered[0])
    if never.size:
        alone = Q.means_over(con, [ids[runs[0]]], never)[ids[runs[0]]]
        assert alone["n"] == 0 and all(math.isnan(alone[m]) for m in METRICS), name
    assert Q.means_over(con, [], some) == {} and Q.means_over(con, asked, [])[ids[runs[0]]]["n"] == 0


def test_the_trends_and_the_matrix_read_the_engine_as_they_read_the_columns(world):
    """The Trends page's search and the matrix page's grid, built from the engine, equal what the runs'
    columns gave (scoring.trends.checkpoint_scores and Profile.right_mask): the same trends, alarms and
    cell states."""
    from dashboard.matrix import frames as M
    from dashboard.trends import frames as F
    from scoring.stats import document_clusters
    from scoring.trends import checkpoint_scores, search

    name, an, con, key, ids = world
    runs = [r.name for r in an.runs if r.recomputed]
    assert len(runs) >= (20 if name == "generated" else 1), name
    steps = list(range(100, 100 * (len(runs) + 1), 100))
    qids = [str(q) for q in an.questions.index]
    got = F.trend_search(an, runs, steps, "accuracy", an.questions)
    results = [an.result_of(r) for r in runs]
    scores, answered = checkpoint_scores(results, qids, ["accuracy"])
    want = search({"accuracy": scores["accuracy"]}, document_clusters([an.gold[q].document_ids for q in qids]),
                  F.fields_of(an.questions, an.gold, an.declared_pages), steps, runs=runs, answered=answered,
                  right=results[0].profile.right_mask(scores["accuracy"]))
    assert got.summary() == want.summary()
    assert [(t.slice, t.questions, t.documents, t.score.tolist()) for t in got.trends["accuracy"]] == \
        [(t.slice, t.questions, t.documents, t.score.tolist()) for t in want.trends["accuracy"]]
    assert [(a.slice, a.step, a.p, a.q, list(a.forgotten)) for a in got.alarms] == \
        [(a.slice, a.step, a.p, a.q, list(a.forgotten)) for a in want.alarms]
    g = M.grid(an, runs, steps, qids)
    acc = scores["accuracy"]
    state = np.full(acc.shape, M.WRONG, dtype=np.uint8)
    for row, res in enumerate(results):
        r = res.profile.right_mask(acc[row])
        state[row][r] = M.RIGHT
        state[row][~r & (acc[row] > 0)] = M.PARTIAL
    state[~answered] = M.MISSING
    assert np.array_equal(g.state, state) and np.array_equal(g.accuracy, acc.astype(np.float32))
    assert (g.state == M.RIGHT).any() and (g.state == M.WRONG).any()


def test_a_cells_answer_is_the_runs_columns(world):
    """The checkpoint matrix's clicked cell (dashboard.matrix.frames.answer, through Analysis.answer and
    queries.answer: one (run, question) row and its text) equals what the run's own columns hold for that
    question -- prediction, Accuracy (not another metric), status, answered -- for every recomputed run
    (not another run's row) on its unanswered, failed and partly right questions and a sample of the rest;
    {} for a question the gold lacks; a KeyError for a run that is not loaded or not recomputed."""
    from dashboard.matrix import frames as M
    from scoring.runner import column_list, compact_columns

    name, an, con, key, ids = world
    runs = [r.name for r in an.runs if r.recomputed]
    gold = list(an.gold)
    at = {q: i for i, q in enumerate(gold)}
    rng = np.random.default_rng(11)
    differs = {"accuracy": False, "run": False}
    for run in runs:
        c = {k: column_list(v) for k, v in compact_columns(an.result_of(run)).items()}
        where = {q: i for i, q in enumerate(map(str, c["question_id"]))}
        odd = [q for q, i in where.items() if not c["answered"][i] or c["status"][i] != "success"
               or 0 < c["accuracy"][i] < 1 or c["accuracy"][i] != c["token_f1"][i]][:15]
        for qid in dict.fromkeys([*odd, *(gold[i] for i in rng.permutation(len(gold))[:15])]):
            i = where[qid]
            want = {"prediction": "" if c["prediction"][i] is None else str(c["prediction"][i]),
                    "accuracy": float(c["accuracy"][i]), "status": str(c["status"][i]), "answered": bool(c["answered"][i])}
            assert M.answer(an, run, qid) == want, (name, run, qid)
            row = Q.answer(con, ids[run], at[qid])  # the engine the command line ingests into: the same row
            assert row is not None and (row["prediction"] or "", row["accuracy"], row["status"], row["attempted"]) == \
                (want["prediction"], want["accuracy"], want["status"], want["answered"]), (name, run, qid)
            differs["accuracy"] |= c["accuracy"][i] != c["token_f1"][i]
            differs["run"] = differs["run"] or any(M.answer(an, other, qid) != want for other in runs[:3] if other != run)
    assert differs["accuracy"] and (differs["run"] or len(runs) == 1), (name, differs)  # the mutants would show
    assert M.answer(an, runs[0], "no-such-question") == {}
    assert Q.answer(con, ids[runs[0]], len(gold) + 5) is None
    with pytest.raises(KeyError):
        M.answer(an, "no-such-run", gold[0])
    official = [r.name for r in an.runs if not r.recomputed]
    if official:
        with pytest.raises(KeyError):
            M.answer(an, official[0], gold[0])

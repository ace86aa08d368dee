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

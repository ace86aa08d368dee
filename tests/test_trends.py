"""Checkpoint trends and their alarms (scoring/trends.py), by seeded simulations with a known truth: a
planted lasting drop in one slice is found at its checkpoint (+-1) in most seeds; a gentle improvement with
noise raises nothing; one bad checkpoint that recovers raises nothing. Each is shown to fail under a mutant
of the rule (the mutant is run here too, and the assertion it breaks is checked to break). The numbers an
alarm reports are recomputed by hand from the raw scores: paired by question, documents as the unit, never
smoothed; q is Benjamini-Hochberg over every (slice, checkpoint) tested."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import scoring.trends as T
from scoring.stats import cluster_robust_se, document_clusters, sign_flip_p

SLICE = "reasoning_type=counting"
SEEDS = range(20)
RISE = (-1.5, -0.8, -0.2, 0.3, 0.6, 0.8, 0.9, 1.0, 1.05, 1.1)  # a training curve: fast, then gently
GENTLE = tuple(0.5 + 0.05 * k for k in range(10))


def simulate(seed: int, *, drop_at: int | None = None, bad_at: int | None = None, drop: float = -1.5,
             levels=RISE, docs: int = 60, per_doc: int = 8, share: float = 0.7):
    """Ten checkpoints of one model on `docs` documents: a question is right with probability
    sigmoid(level of the checkpoint + question and document difficulty), checkpoints sharing most of their
    draws (`share`); from `drop_at` on (or at `bad_at` only) the counting questions get `drop` more."""
    rng = np.random.default_rng(seed)
    n = docs * per_doc
    doc = np.repeat(np.arange(docs), per_doc)
    kinds = rng.choice(["lookup", "counting", "comparison", "summary"], size=n)
    source = rng.choice(["Text", "Table", "Chart"], size=n)
    difficulty = rng.normal(0, 1, n) + rng.normal(0, 0.5, docs)[doc]
    planted = kinds == "counting"
    shared = rng.random(n)
    y = np.zeros((len(levels), n))
    for k, level in enumerate(levels):
        hit = (drop_at is not None and k >= drop_at) or k == bad_at
        logit = difficulty + level + (drop * planted if hit else 0.0)
        u = np.where(rng.random(n) < share, shared, rng.random(n))
        y[k] = u < 1 / (1 + np.exp(-logit))
    fields = {"reasoning_type": list(kinds), "evidence_source": [(s,) for s in source],
              "domain": [f"d{d % 5}" for d in doc]}
    return y, document_clusters([[f"doc{d}"] for d in doc]), fields


def alarms_of(y, clusters, fields, **options):
    return T.search({"accuracy": y}, clusters, fields, [100 * (k + 1) for k in range(y.shape[0])], **options).alarms


def planted_found(**options) -> tuple[int, int]:
    """(seeds where the planted slice alarms at checkpoint 6 +-1, seeds with an alarm on a slice that holds no
    planted question)."""
    found = elsewhere = 0
    for seed in SEEDS:
        alarms = alarms_of(*simulate(seed, drop_at=6), **options)
        found += any(a.slice == SLICE and abs(a.index - 6) <= 1 for a in alarms)
        elsewhere += any("counting" not in a.slice and a.slice != T.OVERALL for a in alarms)
    return found, elsewhere


def test_a_planted_lasting_drop_is_found_at_its_checkpoint():
    found, elsewhere = planted_found()
    assert found >= 16 and elsewhere <= 2, (found, elsewhere)
    # mutant: "before" = every earlier checkpoint (not the recent level): the early rise hides the drop
    assert planted_found(before=100)[0] < 16


def alarmed_seeds(**kw) -> int:
    return sum(bool(alarms_of(*simulate(seed, **kw))) for seed in SEEDS)


def test_a_gentle_improvement_with_noise_raises_nothing():
    assert alarmed_seeds(levels=GENTLE) <= 2
    assert alarmed_seeds(levels=RISE) <= 2


@pytest.mark.parametrize("bad", [5, 6, 7])
def test_one_bad_checkpoint_that_recovers_raises_nothing(bad, monkeypatch):
    assert alarmed_seeds(bad_at=bad, drop=-3.0, levels=GENTLE) <= 2
    if bad == 7:  # mutant: no "still down at the end" (the second half's test is the first half's): the dip alarms
        real = T._differences

        def mutant(*args, **kwargs):
            mean, first, _, scale = real(*args, **kwargs)
            return mean, first, first, scale

        monkeypatch.setattr(T, "_differences", mutant)
        assert alarmed_seeds(bad_at=bad, drop=-3.0, levels=GENTLE) > 2


def bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q, written out: q_(i) = min over j >= i of m p_(j) / j."""
    m = p.size
    order = np.argsort(p)
    ranked = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def test_q_is_benjamini_hochberg_over_every_slice_and_checkpoint():
    y, clusters, fields = simulate(3, drop_at=6, drop=-2.5)
    found = T.search({"accuracy": y}, clusters, fields, list(range(10)))
    assert found.tests == found.family.size == found.slices_tested * found.candidates > 100
    q = bh(found.family)
    assert found.alarms
    for a in found.alarms:
        at = np.flatnonzero(found.family == a.p)
        assert a.q == pytest.approx(float(q[at[0]]), rel=1e-12)
        assert a.q > a.p  # adjusted: a family of hundreds of tests (a mutant with q = p fails here)


def test_an_alarm_is_three_paired_tests_by_document_on_the_raw_scores(monkeypatch):
    y, clusters, fields = simulate(1, drop_at=6, drop=-2.5)
    approximated = T.search({"accuracy": y}, clusters, fields, list(range(10)), right=y == 1)
    monkeypatch.setattr(T, "REFINE_MARGIN", math.inf)  # every test computed exactly
    found = T.search({"accuracy": y}, clusters, fields, list(range(10)), right=y == 1)
    for a, b in zip(approximated.alarms, found.alarms):  # the tail: close to the exact p, where it decides nothing
        assert (a.slice, a.step) == (b.slice, b.step) and b.p / 3 < a.p < 3 * b.p
    a = next(a for a in found.alarms if a.slice == SLICE)
    k, K, w = a.index, y.shape[0], min(a.index, T.BEFORE)
    mask = np.array([v == "counting" for v in fields["reasoning_type"]])
    ys = y[:, mask]
    docs = np.asarray(clusters.codes)[mask]
    before = ys[k - w:k].mean(axis=0)
    half = k + (K - k + 1) // 2

    def one_sided(rows: np.ndarray) -> float:
        sums = np.bincount(docs, weights=rows.mean(axis=0) - before)  # documents as the unit, raw scores
        # times w x (checkpoints averaged): whole numbers, for the exact test (a positive scale changes no p)
        return sign_flip_p(np.rint(sums * w * rows.shape[0]))[0] / 2

    assert a.p_mean == pytest.approx(one_sided(ys[k:]), rel=1e-9)
    assert a.p_first == pytest.approx(one_sided(ys[k:half]), rel=1e-9)
    assert a.p_last == pytest.approx(one_sided(ys[half:]), rel=1e-9)
    assert a.p == max(a.p_mean, a.p_first, a.p_last)
    assert a.before == pytest.approx(float(before.mean())) and a.after == pytest.approx(float(ys[k:].mean()))
    assert a.ci_low <= a.gap <= a.ci_high < 0 and a.documents == len(set(docs.tolist()))
    assert a.best == pytest.approx(max(float(ys[j].mean()) for j in range(k)))
    # the questions it lost: right just before the change, wrong at it and at the latest
    right = y.astype(bool)
    lost = np.flatnonzero(mask & right[k - 1] & ~right[k] & ~right[-1])
    assert list(a.forgotten) == lost.tolist()


def test_the_trend_is_the_score_per_checkpoint_with_its_interval_by_document():
    y, clusters, fields = simulate(2)
    found = T.search({"accuracy": y}, clusters, fields, list(range(10)))
    t = found.trend("accuracy", SLICE)
    mask = np.array([v == "counting" for v in fields["reasoning_type"]])
    docs = np.asarray(clusters.codes)[mask]
    g = len(set(docs.tolist()))
    for k in range(10):
        assert t.score[k] == pytest.approx(y[k, mask].mean())
        half = sps.t.ppf(0.975, g - 1) * cluster_robust_se(y[k, mask], docs)
        assert t.high[k] - t.score[k] == pytest.approx(half)
    # the noise band: the median move between neighbouring checkpoints, and a smoothed line for the eye only
    assert t.noise == pytest.approx(float(np.median(np.abs(np.diff(t.score)))) / (0.6744897501960817 * math.sqrt(2)))
    assert t.smooth[4] == pytest.approx(float(np.median(t.score[3:6])))
    assert found.trends["accuracy"][0].slice == T.OVERALL and found.trends["accuracy"][0].questions == y.shape[1]


def test_smoothing_is_for_display_and_noise_is_robust_to_a_step():
    x = np.array([0.5, 0.52, 0.49, 0.51, 0.2, 0.21, 0.19, 0.2])
    s = T.smoothed(x)
    assert s[0] == pytest.approx(0.51) and s[-1] == pytest.approx(0.195) and s[2] == pytest.approx(0.51)
    assert T.noise_sigma(x) < 0.03  # the one step of 0.31 does not widen the band
    assert math.isnan(T.noise_sigma(np.array([0.5])))


def test_too_few_checkpoints_or_documents_is_not_enough_evidence():
    y, clusters, fields = simulate(0, drop_at=1)
    two = T.search({"accuracy": y[:2]}, clusters, fields, [1, 2])
    assert two.candidates == 0 and two.tests == 0 and not two.alarms
    assert "not enough evidence" in two.summary()
    few = T.search({"accuracy": y[:, :40]}, np.asarray(clusters.codes)[:40], {k: v[:40] for k, v in fields.items()},
                   list(range(10)))
    assert few.tests == 0 and "not enough evidence" in few.summary()  # 5 documents: nothing can be tested
    assert all(not t.tested for t in few.trends["accuracy"])


def test_questions_not_answered_by_every_checkpoint_are_left_out_and_nan_is_refused():
    y, clusters, fields = simulate(0)
    answered = np.ones_like(y, dtype=bool)
    answered[4, :16] = False
    found = T.search({"accuracy": y}, clusters, fields, list(range(10)), answered=answered)
    assert found.left_out == 16 and found.questions == y.shape[1] - 16
    assert "16 left out" in found.summary()
    bad = y.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        T.search({"accuracy": bad}, clusters, fields, list(range(10)))
    with pytest.raises(ValueError, match="steps"):
        T.search({"accuracy": y}, clusters, fields, [1, 2])


def test_slices_are_one_or_two_conditions_and_a_repeated_set_is_listed_once():
    codes = np.repeat(np.arange(30), 4)
    fields = {"a": ["x", "y"] * 60, "b": ["x", "y"] * 60, "c": [("p", "q") if i % 3 else ("p",) for i in range(120)]}
    defs = T.slice_defs(fields, codes, min_questions=10, min_documents=5)
    names = [d.name for d in defs]
    assert names[0] == T.OVERALL and "a=x" in names and "b=x" not in names  # b=x holds a=x's questions
    assert "a=x & c=q" in names and all(n.count("&") <= 1 for n in names)
    c_q = next(d for d in defs if d.name == "c=q")
    assert c_q.members.size == 80  # a multi-valued field: a question in each of its values' slices


def test_a_drop_in_one_slice_folds_the_slices_it_explains():
    y, clusters, fields = simulate(1, drop_at=6, drop=-2.5)
    found = T.search({"accuracy": y}, clusters, fields, list(range(10)))
    kept = [a.slice for a in found.alarms]
    assert kept[0] == SLICE
    assert all("counting" in a.slice or a.slice == T.OVERALL for a in found.folded)
    assert not any(a.slice.startswith("reasoning_type=counting &") for a in found.alarms)  # children fold under it
    rows = T.alarm_rows(found)
    assert [list(r) for r in rows[:1]] == [T.CSV_COLUMNS] and rows[0]["slice"] == SLICE and rows[0]["rank"] == 1
    assert rows[0]["step"] == found.steps[found.alarms[0].index] and rows[0]["q"] >= rows[0]["p"] > 0

"""The Compare page's tables never show p = 0 (dashboard.compare.frames on a collapse over 1,100
documents: every exact tail, McNemar and adjusted p underflowed to 0.0 before scoring.stats floored them at
the smallest p those documents can give)."""

import numpy as np
import pandas as pd

from dashboard.compare import frames as C

DOCUMENTS = 1_100


def _collapse() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One question per document; A right on every one, B on none (token F1 / ANLS alike, continuous)."""
    ids = [f"q{i:04d}" for i in range(DOCUMENTS)]
    questions = pd.DataFrame({"question_id": ids, "domain": ["law" if i % 2 else "med" for i in range(DOCUMENTS)],
                              "document": [f"d{i:04d}" for i in range(DOCUMENTS)]}, index=ids)
    rng = np.random.default_rng(4)
    f1 = {"A": rng.uniform(0.7, 1.0, DOCUMENTS), "B": rng.uniform(0.0, 0.3, DOCUMENTS)}
    rows = [{"run": r, "question_id": q, "accuracy": 1.0 if r == "A" else 0.0, "token_f1": float(f1[r][k]),
             "anls": float(f1[r][k]), "status": "success", "prediction": f"{r}{k}"} for r in ("A", "B") for k, q in enumerate(ids)]
    return questions, pd.DataFrame(rows)


def test_no_p_column_of_the_compare_tables_is_zero():
    questions, scores = _collapse()
    pairs = C.paired(scores, "A", "B")
    deltas = C.deltas(pairs, questions, {"domain": questions["domain"].reindex(pairs.index).tolist()},
                      C.Settings(resamples=200, slice_resamples=200))
    columns = [c for c in deltas.columns if c in ("p", "q") or c.endswith(("_p", "_q", "p_mcnemar"))]
    assert len(columns) == 9
    values = deltas[columns].to_numpy(float)
    assert np.all(values[~np.isnan(values)] > 0), deltas[columns]
    assert deltas.loc[0, "accuracy_p"] > 0 and deltas.loc[0, "p_mcnemar"] > 0  # 2/2^1100 underflows: floored, not 0
    flips = C.flip_table(pairs, questions, ["domain"])
    assert (flips["p"] > 0).all() and (flips["p_mcnemar"] > 0).all()

"""A seeded synthetic benchmark for the weak-slice finder: questions in documents, eight metadata
fields (three set per document, five per question; evidence_source multi-valued), per-question 0/1
scores with a per-document ability shift, and optionally one planted weakness."""

from __future__ import annotations

import numpy as np

DOC_FIELDS = {"domain": ["finance", "science", "legal", "news", "health"],
              "doc_type": ["report", "paper", "form", "slides"],
              "length": ["1-10 pages", "11-50 pages", "51-200 pages", "over 200 pages"]}
QUESTION_FIELDS = {"reasoning_type": ["lookup", "counting", "comparison", "arithmetic", "summary", "temporal"],
                   "answer_format": ["Str", "Int", "Float", "List"],
                   "difficulty": ["easy", "medium", "hard"],
                   "position": ["first third", "middle third", "last third"]}
SOURCES = ["text", "table", "chart", "image", "layout"]


def synthetic(seed: int, n: int = 20_000, documents: int = 1_000, planted: float = 0.0, base: float = 0.6,
              doc_sd: float = 0.15) -> tuple[np.ndarray, dict[str, list], np.ndarray, np.ndarray]:
    """(scores, fields, document ids, planted mask). The planted weakness lowers the chance of a
    right answer by `planted` on counting questions whose evidence includes a chart (and nowhere else)."""
    rng = np.random.default_rng(seed)
    doc_of = np.sort(rng.integers(0, documents, size=n))
    fields: dict[str, list] = {}
    for name, values in DOC_FIELDS.items():
        per_doc = rng.integers(0, len(values), size=documents)
        fields[name] = [values[v] for v in per_doc[doc_of]]
    for name, values in QUESTION_FIELDS.items():
        fields[name] = [values[v] for v in rng.integers(0, len(values), size=n)]
    first = rng.integers(0, len(SOURCES), size=n)
    second = rng.integers(0, len(SOURCES), size=n)
    two = rng.random(n) < 0.3
    fields["evidence_source"] = [(SOURCES[a], SOURCES[b]) if t and a != b else (SOURCES[a],)
                                 for a, b, t in zip(first, second, two)]
    mask = np.array([r == "counting" and "chart" in s for r, s in zip(fields["reasoning_type"], fields["evidence_source"])])
    shift = rng.normal(0.0, doc_sd, size=documents)[doc_of]
    p = np.clip(base + shift - planted * mask, 0.02, 0.98)
    scores = (rng.random(n) < p).astype(float)
    return scores, fields, doc_of, mask

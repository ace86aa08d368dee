"""The records a guarded reader sends back to the app are pickled (scoring/guard.py).
`dataclass(frozen=True, slots=True)` pickles a record by calling `dataclasses.fields()` on every object, which
made 20,000 gold questions take 0.7 s to pickle and 1.0 s to unpickle; `scoring.model.quick_state` gives each
such record a tuple of its fields instead. Here: no slotted dataclass of `scoring` is left with those methods,
a record survives the round trip whole, and neither way calls `fields()`."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
import pkgutil
from pathlib import Path

import pytest

import scoring
from scoring import guard
from scoring.model import DocRef, EvidenceItem, GoldQuestion, PredictedEvidence, Prediction
from scoring.problems import LoadResult, Problem

ROOT = Path(__file__).resolve().parent.parent


def _slotted_dataclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(scoring.__path__, "scoring."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == info.name and dataclasses.is_dataclass(value)
                    and "__slots__" in vars(value)):
                found.append(value)
    return found


def test_no_frozen_slotted_record_of_scoring_pickles_through_fields():
    classes = _slotted_dataclasses()
    assert len(classes) >= 15, [c.__name__ for c in classes]  # the walk found the records
    plain = [f"{c.__module__}.{c.__qualname__}" for c in classes if c.__getstate__.__qualname__.startswith("_dataclass")]
    assert not plain, f"frozen slotted records pickled by dataclasses' own state methods (add @quick_state): {plain}"
    assert any(dataclasses.fields(c) and c.__dataclass_params__.frozen for c in classes)  # there are some to check


def _gold() -> LoadResult:
    item = EvidenceItem("Page 2", (2, 3), "a quote", "Table", (0.1, 0.2, 0.3, 0.4))
    questions = [GoldQuestion(f"q{k}", "How many?", ("616", "six"), "Int", "numeric_tolerance", "single_doc",
                              {"domain": "finance", "nested": {"a": [1, 2]}}, (DocRef("d1", "", (2,), (item,)),),
                              "gold.jsonl", k + 1, raw_format=None, format_given=False) for k in range(50)]
    problems = [Problem.error("gold.jsonl", 7, "answer.value", "a value", "null"), Problem.warning("gold.jsonl", None, None, "x", "y")]
    return LoadResult(items=questions, problems=problems, files=["gold.jsonl"], rows_read=52, skipped=1, blank_lines=1)


def test_a_load_result_survives_the_round_trip_without_calling_fields(monkeypatch):
    res = _gold()
    preds = [Prediction("q1", "616", "success", "run.jsonl", 3, (2,), (PredictedEvidence((2,), "a quote"),))]

    def refused(*_a, **_k):
        raise AssertionError("dataclasses.fields called while pickling")

    monkeypatch.setattr(dataclasses, "fields", refused)
    for value in (res, preds):
        back = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == value
    back = pickle.loads(pickle.dumps(res))
    assert back.items[0].documents[0].evidence_items[0].bbox == (0.1, 0.2, 0.3, 0.4)
    assert back.items[0].raw_format is None and back.items[0].format_given is False
    with pytest.raises(dataclasses.FrozenInstanceError):  # frozen records stay frozen after the trip
        back.items[0].documents[0].url = "x"


def test_a_guarded_job_brings_the_records_back_whole(tmp_path):
    """The gold read in a supervised child (as the app reads a large one) equals the gold read here."""
    import json

    from scoring.loaders import load_gold

    rows = [{"question_id": f"q{k}", "task_type": "single_doc", "question": "How many?",
             "answer": {"value": "616" if k % 2 else None, "format": "Int" if k % 3 else "", "verification_rule": "numeric_tolerance"},
             "document": {"document_id": "d1", "evidence_pages": [2],
                          "evidence_items": [{"locator": "Page 2", "pages": [2], "quote": "q", "source_type": "Table"}]},
             "metadata": {"domain": "finance", "evidence_sources": ["Table", "Text"]}} for k in range(40)]
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n", encoding="utf-8")
    assert guard.here([path], bounded=True)  # small: read here ...
    mine = load_gold(path)
    theirs = guard.job(load_gold, [path])  # ... and in a supervised child, pickled back
    assert len(mine.items) == 40 and mine.problems
    assert theirs == mine

"""The URL parameters of dashboard/core/links.py, declared once in PARAMS (attribute, key, codec):
every View attribute is declared exactly once, no two parameters write the same query key, and every
declared parameter survives its link alone -- as to_params writes it and as st.query_params gives it
back (every value a list)."""

from __future__ import annotations

import dataclasses

import pytest

from dashboard.core.links import FILTER_PREFIX, PARAMS, SAVED_KEY, View, from_params, to_params

# A value other than the default for every declared parameter (a new parameter must add one here).
EXAMPLES: dict[str, object] = {
    "runs": ["b", "a"],
    "profile": "lmms-eval",  # a harness profile is a profile too
    "filters": {"domain": ["finance_business", "legal"], "meta.region": ["EU"]},
    "ranges": {"accuracy": (0, 0), "anls": (50, 100)},
    "match": "any",
    "status": ["missing", "failed"],
    "location": ["other_page", "not_in_document"],
    "search": "total & 100%",
    "question": "q1",
    "data": "/srv/outputs",
    "bench": "docvqa_val",
    "tab": "domain",
    "metric": "anls",
    "charts": [],
    "hide_loaded": True,
    "tags": ["reasoning_error", "(untagged)"],
    "noted": True,
    "evals": ["ModelA/DocVQA_VAL@T20260301-090000"],
    "corrected": True,
    "page": 55,
    "zoom": 200,
    "layers": [],
    "saved": "counting over charts",
    "compare": {"a": "alpha", "b": "beta", "cmp_metric": "anls"},
    "weak": {"wk_run": "alpha", "wk_base": "beta"},
    "disagree": {"cat": "format_only", "dis_hs_by": "domain"},
    "steps": ["1200:run-a", "-:baseline", "300@run7:odd:name"],
    "trend": {"tr_series": "run7", "tr_slice": "domain=legal & reasoning_type=counting", "tr_metric": "anls"},
    "matrix": {"mx_series": "run7", "mx_by": "documents", "mx_sort": "flips", "mx_page": "3", "mx_q": "q1",
               "mx_run": "ckpt-0520", "mx_at": "740"},
}


def as_query(params: dict[str, str | list[str]]) -> dict[str, list[str]]:
    """What st.query_params.get_all gives back for what from_dict was given."""
    return {k: v if isinstance(v, list) else [v] for k, v in params.items()}


def one(attr: str) -> View:
    view = View(**{attr: EXAMPLES[attr]})
    if attr == "match":  # "any" only means something with a score range
        view = dataclasses.replace(view, ranges={"anls": (50, 100)})
    return view


def test_every_view_attribute_is_declared_once_with_an_example():
    declared = [p.attr for p in PARAMS]
    assert len(declared) == len(set(declared))
    assert set(declared) == {f.name for f in dataclasses.fields(View)}
    assert set(EXAMPLES) == set(declared)


def test_the_default_view_writes_no_parameter():
    assert to_params(View()) == {}
    assert from_params({}) == View()


@pytest.mark.parametrize("attr", [p.attr for p in PARAMS])
def test_each_declared_parameter_survives_its_link(attr):
    view = one(attr)
    assert getattr(view, attr) != getattr(View(), attr)  # the round trip proves something
    written = to_params(view)
    assert written  # a value other than the default is written
    assert all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
               for v in written.values())
    assert from_params(written) == view
    assert from_params(as_query(written)) == view


def test_no_two_parameters_write_the_same_key():
    keys: dict[str, str] = {}
    for p in PARAMS:
        if p.attr == "match":
            continue  # written together with the ranges it qualifies
        for key in to_params(one(p.attr)):
            assert key not in keys, f"{key} written by {keys[key]} and {p.attr}"
            keys[key] = p.attr
    assert keys["run"] == "runs" and keys[SAVED_KEY] == "saved" and keys[FILTER_PREFIX + "domain"] == "filters"


def test_every_parameter_at_once_survives_its_link():
    view = View(**EXAMPLES)
    assert from_params(as_query(to_params(view))) == view


@pytest.mark.parametrize("attr,expected", [
    ("charts", {"chart": [""]}),  # every run taken out of the charts
    ("layers", {"layer": [""]}),  # every layer hidden
    ("page", {"page": "55"}),
    ("noted", {"note": "1"}),
    ("corrected", {"gold": "corrected"}),
    ("hide_loaded", {"loaded": "hide"}),
    ("ranges", {"accuracy": "0-0", "anls": "50-100"}),
    ("match", {"anls": "50-100", "match": "any"}),
    ("filters", {"f.domain": ["finance_business", "legal"], "f.meta.region": ["EU"]}),
    ("compare", {"a": "alpha", "b": "beta", "cmp_metric": "anls"}),
])
def test_the_query_each_codec_writes(attr, expected):
    assert to_params(one(attr)) == expected


@pytest.mark.parametrize("query,attr,expected", [
    ({"profile": "no-such-profile"}, "profile", View().profile),
    ({"metric": "bleu"}, "metric", "accuracy"),
    ({"match": "any"}, "match", "every"),  # no range: "any" means nothing
    ({"page": "5x"}, "page", 0),
    ({"zoom": "²"}, "zoom", 0),
    ({"eval": ["no-at-sign", "M/D@T1", "M/D@T1"]}, "evals", ["M/D@T1"]),
    ({"run": ["a", "b", "a", ""]}, "runs", ["a", "b"]),
    ({"status": ["missing", "missing"]}, "status", ["missing", "missing"]),
    ({"accuracy": "90-10"}, "ranges", {"accuracy": (10, 90)}),
    ({"accuracy": "0-100"}, "ranges", {}),
    ({"f.": ["x"], "f.domain": [""]}, "filters", {}),
])
def test_what_a_codec_reads_from_a_hand_written_link(query, attr, expected):
    assert getattr(from_params(query), attr) == expected

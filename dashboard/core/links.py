"""The view a link restores -- runs, profile, filters, selected question, data folder -- and its
query-string form. No streamlit here: `to_params` gives what `st.query_params.from_dict` takes,
`from_params` reads what `st.query_params` holds (values as str or list of str).

    ?run=a&run=b&profile=xldocbench-1519&f.domain=finance_business&accuracy=0-0&match=any&status=missing&q=total&sel=q1
    ?run=a&loc=other_page&loc=not_in_document   (answer location, any chosen run: the explorer's evidence filter)
    ?metric=anls&tab=domain&loaded=hide        (the overview's metric, open breakdown tab, loaded-score runs hidden)
    ?tag=reasoning_error&tag=(untagged)&note=1&gold=corrected   (annotation filter; scores with gold corrections)
    ?sel=q1&page=55&zoom=200&layer=Gold%20boxes&layer=a:%20answer   (the evidence viewer: page, zoom in %, layers)
    ?slice=counting%20over%20charts        (a saved slice: the explorer applies its filters; dashboard/weak/saved.py)
    ?wk_run=a&wk_base=b&wk_metric=anls     (the Weak slices page: run, baseline -- pair mode -- and metric)
    ?data=/srv/outputs&bench=docvqa_val&profile=lmms-eval   (a harness folder as the benchmark: its task, its profile)
    ?eval=ModelA/DocVQA_VAL@T20260301-090000   (VLMEvalKit: an older eval id of a (model, dataset) loaded; the newest unless named)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, PROFILES
from scoring.registry import METRICS  # the pages and tables import it from here

FIELDS = {
    "split": "Split",
    "domain": "Domain",
    "reasoning_type": "Reasoning type",
    "difficulty": "Difficulty",
    "doc_type": "Document type",
    "answer_format": "Answer format",
    "evidence_source": "Evidence source",
    "length": "Document length",
    "position": "Evidence position",
    "document": "Document",
}
META = "meta."  # prefix of the other metadata keys found in the gold
FILTER_PREFIX = "f."
PERCENT_MAX = 100  # score ranges are whole percentages, 0..PERCENT_MAX
FULL_RANGE = (0, PERCENT_MAX)
# The comparison page's part of the view (dashboard/views/compare.py, present.py): run A, baseline B,
# the selected slice (`field:label`), flip cell, question, metric, tab, and the many-runs view's run
# and reference -- kept as strings under their own query keys.
COMPARE_KEYS = ("a", "b", "cmp_slice", "cmp_flip", "cmp_q", "cmp_metric", "cmp_tab", "cmp_run", "cmp_vs")
# The disagreement page's part (dashboard/views/disagreement.py): category, count mode (primary/any),
# slice field and label, the selected (question, run), the scatter's metric pair and the field the harness
# comparison is counted per (`dis_hs_by`); runs are View.runs.
DISAGREE_KEYS = ("cat", "dis_mode", "dis_by", "dis_slice", "dis_q", "dis_run", "dis_pair", "dis_hs_by")
# The explorer's answer-location filter (dashboard/evidence/grounding.py's keys: evidence_page, other_page,
# not_in_document, no_document, not_searched) under the query key `loc`; a chart slice of this field
# opens it (View.with_slice).
LOCATION_FIELD = "answer_location"
# The explorer's annotation-tag filter (dashboard/annotations: a tag, or "(untagged)") under the query key
# `tag`; a chart slice of this field opens it.
TAG_FIELD = "annotation_tag"
# A saved slice (dashboard/annotations/db.py saved_slices, dashboard/weak/saved.py) by name, under the query
# key `slice`: the explorer applies its filters (and keeps the name in the URL while they are unchanged).
SAVED_KEY = "slice"
# The Weak slices page's part (dashboard/views/weak.py): run, baseline (pair mode) and metric.
WEAK_KEYS = ("wk_run", "wk_base", "wk_metric")


@dataclass
class View:
    runs: list[str] = field(default_factory=list)
    profile: str = DEFAULT_PROFILE
    filters: dict[str, list[str]] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)  # metric -> (lo, hi) in %
    status: list[str] = field(default_factory=list)
    location: list[str] = field(default_factory=list)  # answer locations (any chosen run), query key `loc`
    search: str = ""
    question: str = ""
    data: str = ""  # a benchmark folder chosen in the data panel
    bench: str = ""  # a harness folder opened as the benchmark: its task (dataset) chosen, query key `bench`
    match: str = "every"  # score ranges hold for "every" chosen run, or for "any" of them
    metric: str = "accuracy"  # the overview's metric
    charts: list[str] | None = None  # the runs the overview's charts show (None: the default pick; []: none)
    tab: str = ""  # the overview's open breakdown tab (a field name; "" = the first)
    hide_loaded: bool = False  # leave runs with loaded (not recomputed) scores out of the overview
    compare: dict[str, str] = field(default_factory=dict)  # COMPARE_KEYS -> value
    disagree: dict[str, str] = field(default_factory=dict)  # DISAGREE_KEYS -> value
    tags: list[str] = field(default_factory=list)  # annotation tags (any chosen run or the question), query key `tag`
    noted: bool = False  # only questions with a note, query `note=1`
    corrected: bool = False  # every run scored with the gold corrections, query `gold=corrected`
    # The evidence viewer (dashboard/evidence/panel.py) of the selected question: the page shown (0: its
    # first evidence page), the zoom in % (0: the default) and the layers drawn (None: the default ones;
    # []: none, query `layer=`), query keys `page`, `zoom`, `layer` (repeatable).
    page: int = 0
    zoom: int = 0
    layers: list[str] | None = None
    saved: str = ""  # a saved slice's name (query key `slice`): the explorer applies its filters
    weak: dict[str, str] = field(default_factory=dict)  # WEAK_KEYS -> value
    evals: list[str] = field(default_factory=list)  # `<model>/<dataset>@<eval id>` loaded instead of the newest, query key `eval`

    def with_question(self, question: str) -> View:
        """The view on another question: the evidence viewer's page belongs to the question it was
        set on, so it goes back to that question's first evidence page (zoom and layers stay)."""
        return self if question == self.question else replace(self, question=question, page=0)

    def with_slice(self, run: str | None, field_name: str, label: str) -> View:
        """The explorer view of one chart slice: that run (if any) and that label, nothing else. A
        slice of LOCATION_FIELD (the overview's answer locations) sets the location filter."""
        located, tagged = field_name == LOCATION_FIELD, field_name == TAG_FIELD
        return replace(self, runs=[run] if run else list(self.runs),
                       filters={} if located or tagged else {field_name: [label]},
                       location=[label] if located else [], tags=[label] if tagged else [], noted=False,
                       ranges={}, status=[], search="", question="", match="every", page=0, saved="")


def field_label(name: str) -> str:
    return FIELDS.get(name) or name.removeprefix(META).replace("_", " ").capitalize()


def _range_text(lo: int, hi: int) -> str:
    return f"{lo}-{hi}"


def _parse_range(text: str) -> tuple[int, int] | None:
    lo, sep, hi = text.partition("-")
    if not sep or not lo.strip().isdecimal() or not hi.strip().isdecimal():  # isdigit() passes "²", which int() refuses
        return None
    a, b = sorted((min(PERCENT_MAX, int(lo)), min(PERCENT_MAX, int(hi))))
    return (a, b)


def to_params(view: View) -> dict[str, str | list[str]]:
    """Only what differs from the default view, so a plain link stays short."""
    out: dict[str, str | list[str]] = {}
    if view.runs:
        out["run"] = list(view.runs)
    if view.profile != DEFAULT_PROFILE:
        out["profile"] = view.profile
    for name, values in sorted(view.filters.items()):
        if values:
            out[FILTER_PREFIX + name] = list(values)
    for metric in METRICS:
        rng = view.ranges.get(metric)
        if rng and tuple(rng) != FULL_RANGE:
            out[metric] = _range_text(*rng)
    if view.ranges and view.match == "any":
        out["match"] = "any"
    if view.status:
        out["status"] = list(view.status)
    if view.location:
        out["loc"] = list(view.location)
    for key, value in (("q", view.search), ("sel", view.question), ("data", view.data), ("bench", view.bench),
                       ("tab", view.tab)):
        if value:
            out[key] = value
    if view.metric != "accuracy":
        out["metric"] = view.metric
    if view.charts is not None:
        out["chart"] = list(view.charts) or [""]  # `chart=`: every run taken out of the charts
    if view.hide_loaded:
        out["loaded"] = "hide"
    if view.tags:
        out["tag"] = list(view.tags)
    if view.noted:
        out["note"] = "1"
    if view.evals:
        out["eval"] = list(view.evals)
    if view.corrected:
        out["gold"] = "corrected"
    if view.page > 0:
        out["page"] = str(view.page)
    if view.zoom > 0:
        out["zoom"] = str(view.zoom)
    if view.layers is not None:
        out["layer"] = list(view.layers) or [""]  # `layer=`: every layer hidden
    if view.saved:
        out[SAVED_KEY] = view.saved
    out.update({k: view.compare[k] for k in COMPARE_KEYS if view.compare.get(k)})
    out.update({k: view.weak[k] for k in WEAK_KEYS if view.weak.get(k)})
    out.update({k: view.disagree[k] for k in DISAGREE_KEYS if view.disagree.get(k)})
    return out


def _values(params: Mapping[str, str | list[str]], key: str) -> list[str]:
    value = params.get(key)
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [v for v in items if isinstance(v, str) and v != ""]


def _first(params: Mapping[str, str | list[str]], key: str) -> str:
    values = _values(params, key)
    return values[0] if values else ""


def _count(text: str) -> int:
    """A positive whole number of a link (page, zoom), else 0 (the default)."""
    text = text.strip()
    return int(text) if text.isdecimal() and text.isascii() and len(text) <= 9 else 0


def from_params(params: Mapping[str, str | list[str]]) -> View:
    """Read a view back; anything unreadable is ignored (an unknown profile gives the default)."""
    profile = _first(params, "profile")
    ranges = {}
    for metric in METRICS:
        rng = _parse_range(_first(params, metric))
        if rng and rng != FULL_RANGE:
            ranges[metric] = rng
    filters = {key[len(FILTER_PREFIX):]: _values(params, key) for key in params
               if key.startswith(FILTER_PREFIX) and len(key) > len(FILTER_PREFIX) and _values(params, key)}
    return View(
        runs=list(dict.fromkeys(_values(params, "run"))),
        profile=profile if profile in PROFILES or profile in HARNESS_PROFILES else DEFAULT_PROFILE,
        filters=filters,
        ranges=ranges,
        status=_values(params, "status"),
        location=list(dict.fromkeys(_values(params, "loc"))),
        search=_first(params, "q"),
        question=_first(params, "sel"),
        data=_first(params, "data"),
        bench=_first(params, "bench"),
        match="any" if _first(params, "match") == "any" and ranges else "every",
        metric=metric if (metric := _first(params, "metric")) in METRICS else "accuracy",
        charts=list(dict.fromkeys(_values(params, "chart"))) if "chart" in params else None,
        tab=_first(params, "tab"),
        hide_loaded=_first(params, "loaded") == "hide",
        tags=list(dict.fromkeys(_values(params, "tag"))),
        noted=_first(params, "note") == "1",
        corrected=_first(params, "gold") == "corrected",
        page=_count(_first(params, "page")),
        zoom=_count(_first(params, "zoom")),
        layers=list(dict.fromkeys(_values(params, "layer"))) if "layer" in params else None,
        compare={k: _first(params, k) for k in COMPARE_KEYS if _first(params, k)},
        disagree={k: _first(params, k) for k in DISAGREE_KEYS if _first(params, k)},
        saved=_first(params, SAVED_KEY),
        weak={k: _first(params, k) for k in WEAK_KEYS if _first(params, k)},
        evals=list(dict.fromkeys(v for v in _values(params, "eval") if "@" in v)),
    )

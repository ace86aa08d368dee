"""The view a link restores -- runs, profile, filters, selected question, data folder -- and its
query-string form. No streamlit here: `to_params` gives what `st.query_params.from_dict` takes,
`from_params` reads what `st.query_params` holds (values as str or list of str). Every parameter is declared
once, in PARAMS (the View attribute, its query key, its codec); both walk it.

    ?run=a&run=b&profile=xldocbench-1519&f.domain=finance_business&accuracy=0-0&match=any&status=missing&q=total&sel=q1
    ?run=a&loc=other_page&loc=not_in_document   (answer location, any chosen run: the explorer's evidence filter)
    ?metric=anls&tab=domain&loaded=hide        (the overview's metric, open breakdown tab, loaded-score runs hidden)
    ?tag=reasoning_error&tag=(untagged)&note=1&gold=corrected   (annotation filter; scores with gold corrections)
    ?sel=q1&page=55&zoom=200&layer=Gold%20boxes&layer=a:%20answer   (the evidence viewer: page, zoom in %, layers)
    ?slice=counting%20over%20charts        (a saved slice: the explorer applies its filters; dashboard/weak/saved.py)
    ?wk_run=a&wk_base=b&wk_metric=anls     (the Weak slices page: run, baseline -- pair mode -- and metric)
    ?data=/srv/outputs&bench=docvqa_val&profile=lmms-eval   (a harness folder as the benchmark: its task, its profile)
    ?eval=ModelA/DocVQA_VAL@T20260301-090000   (VLMEvalKit: an older eval id of a (model, dataset) loaded; the newest unless named)
    ?step=1200:run-a&step=-:baseline         (checkpoint steps set by hand: run-a at step 1200, baseline no checkpoint)
    ?tr_series=run7&tr_slice=domain%3Dlegal&tr_metric=anls   (the Trends page: series, slice, metric)
    ?mx_series=run7&mx_sort=forgotten&mx_page=3&mx_q=q1&mx_run=ckpt-0520   (the matrix page)

A link the app builds for another tab or another person (`page_url`: the weak slices' "Open in explorer",
a saved slice's "Link to it") opens a new session, which knows only its URL: it carries the view's source
(`with_source`: SOURCE) or it shows the configured benchmark instead of the one open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from scoring.profiles import DEFAULT_PROFILE, HARNESS_PROFILES, PROFILES
from scoring.registry import METRICS  # the pages and tables import it from here
from scoring.slice_fields import FIELD_LABELS
from scoring.slice_fields import field_label as finder_label

# the filter fields in the explorer's order, named as the finder names them (scoring/slice_fields.py)
FIELDS = {k: FIELD_LABELS[k] for k in ("split", "domain", "reasoning_type", "difficulty", "doc_type", "answer_format",
                                       "evidence_source", "length", "position")} | {"document": "Document"}
META = "meta."  # prefix of the other metadata keys found in the gold (scoring.slice_fields.META)
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
# A saved slice (dashboard/annotations/store.py saved_slices, dashboard/weak/saved.py) by name, under the query
# key `slice`: the explorer applies its filters (and keeps the name in the URL while they are unchanged).
SAVED_KEY = "slice"
# The Weak slices page's part (dashboard/views/weak.py): run, baseline (pair mode) and metric.
WEAK_KEYS = ("wk_run", "wk_base", "wk_metric")
# The Trends page's part (dashboard/views/trends.py): the series, the slice charted and the metric.
TREND_KEYS = ("tr_series", "tr_slice", "tr_metric")
# The matrix page's part (dashboard/views/matrix.py): the series (or every run), rows of questions or
# documents, the order, the page, the cell opened (question or document, run) and "right before, wrong at
# this step" (`mx_at`, an alarm's questions); its filters are the view's field filters and search.
MATRIX_KEYS = ("mx_series", "mx_by", "mx_sort", "mx_page", "mx_q", "mx_run", "mx_at")


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
    # checkpoint steps set by hand on the Data page (dashboard/trends/frames.py), query key `step`
    # (repeatable): `STEP:RUN`, `STEP@SERIES:RUN`, or `-:RUN` (the run is no checkpoint)
    steps: list[str] = field(default_factory=list)
    trend: dict[str, str] = field(default_factory=dict)  # TREND_KEYS -> value
    matrix: dict[str, str] = field(default_factory=dict)  # MATRIX_KEYS -> value

    def with_slice(self, run: str | None, field_name: str, label: str) -> View:
        """The explorer view of one chart slice: that run (if any) and that label, nothing else. A
        slice of LOCATION_FIELD (the overview's answer locations) sets the location filter."""
        located, tagged = field_name == LOCATION_FIELD, field_name == TAG_FIELD
        return replace(self, runs=[run] if run else list(self.runs),
                       filters={} if located or tagged else {field_name: [label]},
                       location=[label] if located else [], tags=[label] if tagged else [], noted=False,
                       ranges={}, status=[], search="", question="", match="every", page=0, saved="")


def field_label(name: str) -> str:
    """A field's name in words, as the finder writes it ("Evidence pages" for meta.evidence_page_count)."""
    return FIELDS.get(name) or finder_label(name)


# A field's value as a table shows it, where the value alone would mislead: the answer format "None"
# (XL-DocBench's and MMLongBench-Doc's unanswerable questions) read as a missing value.
VALUE_LABELS = {("answer_format", "None"): "None (unanswerable)"}


def value_label(field_name: str, value: object) -> str:
    """How `value` of field `field_name` reads in a table or a slice's name (VALUE_LABELS, else as it is)."""
    text = str(value)
    return VALUE_LABELS.get((field_name, text), text)


def slice_label(field_name: str, label: str) -> str:
    """A slice in words: "Answer format: None (unanswerable)", "Domain: finance"."""
    return f"{field_label(field_name)}: {value_label(field_name, label)}"


# ----------------------------------------------------------------------------- the URL parameters
#
# Every part of a View that a link carries, declared once: the View attribute, its query key (or keys)
# and the codec that writes it (only when it differs from the default, so a plain link stays short)
# and reads it back (anything unreadable gives the default). to_params and from_params walk PARAMS;
# the order is the order of a link's query.

Params = Mapping[str, str | list[str]]
Written = dict[str, str | list[str]]


def _values(params: Params, key: str) -> list[str]:
    value = params.get(key)
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [v for v in items if isinstance(v, str) and v != ""]


def _first(params: Params, key: str) -> str:
    values = _values(params, key)
    return values[0] if values else ""


def _count(text: str) -> int:
    """A positive whole number of a link (page, zoom), else 0 (the default)."""
    text = text.strip()
    return int(text) if text.isdecimal() and text.isascii() and len(text) <= 9 else 0


def _range_text(lo: int, hi: int) -> str:
    return f"{lo}-{hi}"


def _parse_range(text: str) -> tuple[int, int] | None:
    lo, sep, hi = text.partition("-")
    if not sep or not lo.strip().isdecimal() or not hi.strip().isdecimal():  # isdigit() passes "²", which int() refuses
        return None
    a, b = sorted((min(PERCENT_MAX, int(lo)), min(PERCENT_MAX, int(hi))))
    return (a, b)


def _ranges(params: Params) -> dict[str, tuple[int, int]]:
    out = {}
    for metric in METRICS:
        rng = _parse_range(_first(params, metric))
        if rng and rng != FULL_RANGE:
            out[metric] = rng
    return out


class Codec:
    """How one View attribute is written to a link's query and read back from it."""

    def write(self, key: str, value: Any, view: View) -> Written:
        raise NotImplementedError

    def read(self, key: str, params: Params) -> Any:
        raise NotImplementedError


class Text(Codec):
    """A string, left out when empty."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: value} if value else {}

    def read(self, key: str, params: Params) -> Any:
        return _first(params, key)


@dataclass(frozen=True)
class Words(Codec):
    """A list of strings under a repeated key, left out when empty; read back in order, repeats dropped
    (`unique`), only those `keep` accepts."""
    unique: bool = True
    keep: Callable[[str], bool] | None = None

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: list(value)} if value else {}

    def read(self, key: str, params: Params) -> Any:
        values = [v for v in _values(params, key) if self.keep is None or self.keep(v)]
        return list(dict.fromkeys(values)) if self.unique else values


class Choices(Codec):
    """A list that may be unset (None: the default pick) or empty (`key=` in the link, [])."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {} if value is None else {key: list(value) or [""]}

    def read(self, key: str, params: Params) -> Any:
        return list(dict.fromkeys(_values(params, key))) if key in params else None


@dataclass(frozen=True)
class OneOf(Codec):
    """One of `allowed` (a callable telling), the default when it is not."""
    default: str
    allowed: Callable[[str], bool]

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: value} if value != self.default else {}

    def read(self, key: str, params: Params) -> Any:
        value = _first(params, key)
        return value if self.allowed(value) else self.default


@dataclass(frozen=True)
class Flag(Codec):
    """True as `key=on`, False when absent."""
    on: str

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: self.on} if value else {}

    def read(self, key: str, params: Params) -> Any:
        return _first(params, key) == self.on


class Count(Codec):
    """A positive whole number (0, the default, left out)."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: str(value)} if value > 0 else {}

    def read(self, key: str, params: Params) -> Any:
        return _count(_first(params, key))


class Filters(Codec):
    """Field -> labels, each field under `key` + its name (`f.domain=finance`)."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key + name: list(values) for name, values in sorted(value.items()) if values}

    def read(self, key: str, params: Params) -> Any:
        return {k[len(key):]: _values(params, k) for k in params
                if k.startswith(key) and len(k) > len(key) and _values(params, k)}


class Ranges(Codec):
    """Metric -> (lo, hi) in %, each metric under its own key (`anls=50-100`); the full range left out."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {m: _range_text(*value[m]) for m in METRICS if value.get(m) and tuple(value[m]) != FULL_RANGE}

    def read(self, key: str, params: Params) -> Any:
        return _ranges(params)


class Match(Codec):
    """Whether score ranges hold for "every" chosen run or "any": only meaningful with a range."""

    def write(self, key: str, value: Any, view: View) -> Written:
        return {key: "any"} if view.ranges and value == "any" else {}

    def read(self, key: str, params: Params) -> Any:
        return "any" if _first(params, key) == "any" and _ranges(params) else "every"


@dataclass(frozen=True)
class Keyed(Codec):
    """A page's part of the view: `keys` -> value, each under its own query key."""
    keys: tuple[str, ...]

    def write(self, key: str, value: Any, view: View) -> Written:
        return {k: value[k] for k in self.keys if value.get(k)}

    def read(self, key: str, params: Params) -> Any:
        return {k: _first(params, k) for k in self.keys if _first(params, k)}


@dataclass(frozen=True)
class Param:
    attr: str  # the View attribute
    key: str  # its query key (a prefix for Filters; the page's own keys for Keyed, the metrics' for Ranges)
    codec: Codec


PARAMS: tuple[Param, ...] = (
    Param("runs", "run", Words()),
    Param("profile", "profile", OneOf(DEFAULT_PROFILE, lambda p: p in PROFILES or p in HARNESS_PROFILES)),
    Param("filters", FILTER_PREFIX, Filters()),
    Param("ranges", "", Ranges()),
    Param("match", "match", Match()),
    Param("status", "status", Words(unique=False)),
    Param("location", "loc", Words()),
    Param("search", "q", Text()),
    Param("question", "sel", Text()),
    Param("data", "data", Text()),
    Param("bench", "bench", Text()),
    Param("tab", "tab", Text()),
    Param("metric", "metric", OneOf("accuracy", lambda m: m in METRICS)),
    Param("charts", "chart", Choices()),  # `chart=`: every run taken out of the charts
    Param("hide_loaded", "loaded", Flag("hide")),
    Param("tags", "tag", Words()),
    Param("noted", "note", Flag("1")),
    Param("evals", "eval", Words(keep=lambda v: "@" in v)),
    Param("corrected", "gold", Flag("corrected")),
    Param("page", "page", Count()),
    Param("zoom", "zoom", Count()),
    Param("layers", "layer", Choices()),  # `layer=`: every layer hidden
    Param("saved", SAVED_KEY, Text()),
    Param("compare", "", Keyed(COMPARE_KEYS)),
    Param("weak", "", Keyed(WEAK_KEYS)),
    Param("disagree", "", Keyed(DISAGREE_KEYS)),
    Param("steps", "step", Words(keep=lambda v: ":" in v)),
    Param("trend", "", Keyed(TREND_KEYS)),
    Param("matrix", "", Keyed(MATRIX_KEYS)),
)


def to_params(view: View) -> dict[str, str | list[str]]:
    """Only what differs from the default view, so a plain link stays short."""
    out: dict[str, str | list[str]] = {}
    for p in PARAMS:
        out.update(p.codec.write(p.key, getattr(view, p.attr), view))
    return out


def from_params(params: Mapping[str, str | list[str]]) -> View:
    """Read a view back; anything unreadable is ignored (an unknown profile gives the default)."""
    return View(**{p.attr: p.codec.read(p.key, params) for p in PARAMS})


# What a view shows and how it is scored, beside what it looks at: the benchmark folder opened (`data`),
# the harness task in it (`bench`), the older evals loaded (`eval`), the profile and the gold corrections.
SOURCE = ("data", "bench", "evals", "profile", "corrected")


def with_source(view: View, source: View) -> View:
    """`view` showing what `source` shows: its SOURCE attributes (the rest of `view` kept)."""
    return replace(view, **{attr: getattr(source, attr) for attr in SOURCE})


def page_url(page: str, view: View) -> str:
    """The URL of `page` (its path relative to the app: "questions", "compare") showing `view`: the
    link that opens it in a new tab or another person's browser (a new session, which knows only
    its URL: give it `with_source` of the view it comes from)."""
    query = urlencode(to_params(view), doseq=True)
    return f"{page}?{query}" if query else page

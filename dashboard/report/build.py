"""The stakeholder report: one self-contained HTML file that opens with no network.

    python -m dashboard.report --benchmark DIR --runs A B [...] [--baseline NAME] [--profile NAME] --output report.html

Runs are named as everywhere else: a prediction file's name without its extension, looked up in the
benchmark's runs/ folder (a path to a prediction file is accepted too; so is a system that only has
official scores in results/). Run A is the first run that is not the baseline; the baseline is
`--baseline`, else the second run listed. Exit codes: 0 written, 2 bad arguments (an unknown run
name: the available ones are listed), 1 nothing could be scored.

The file holds Plotly's JavaScript once (`plotly.offline.get_plotlyjs()`, inlined), every chart as
a div drawn by it, and page thumbnails as PNG data URIs with the evidence boxes as an SVG overlay:
no request leaves the file. The page is the Jinja2 templates in templates/ (report.html and one per
section), rendered with autoescaping: user data (questions, answers, quotes, run, document and file
names, slice labels, the title) is handed to them as plain text and escaped there; chart labels go
through `dashboard.core.escape.plotly_text`. No streamlit here: the app calls `build_report`.

Thumbnails: the evidence page of each failure, rendered by `dashboard.evidence.render` (capped at
`THUMB_WIDTH` pixels wide), with the gold quotes' boxes from `dashboard.evidence.locate`.

Statistics: documents are the unit of every interval and p-value (dashboard/compare/frames.py,
`scoring.stats.paired_by_document`); each says how many documents it rests on, under 20 documents
the report says "too few documents to tell" with the smallest detectable gap, and McNemar's
question-level p is secondary. "Where A is weakest" is the weak-slice finder's answer
(dashboard/weak, scoring/slices.py) -- the same sentence, slices and numbers as the Weak slices page,
Compare's "All runs" and the Presentation: gap = slice − rest (negative: worse), false discoveries
controlled, a found slice's interval adjusted for the search; "not enough evidence" otherwise, and
"each slice needs 20 documents; this benchmark has N" when no slice could be tested. The header gives the benchmark's own Acc and F1 where the
runs have them (MMLongBench-Doc) and says when gold corrections were applied, and how many.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from dashboard.compare import charts
from dashboard.compare import frames as C
from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run
from dashboard.core.links import field_label
from dashboard.core.paths import Sources
from dashboard.core.textdiff import char_diff
from dashboard.data.workspace import Workspace, load_workspace
from dashboard.documents.pdf import DocumentError, page_text
from dashboard.evidence.locate import locate_in_document
from dashboard.evidence.render import render_page, to_pixels
from dashboard.weak import charts as weak_charts
from dashboard.weak import frames as W
from dashboard.weak import saved as S
from scoring.evaluate import evaluate
from scoring.model import GoldQuestion
from scoring.profiles import DEFAULT_PROFILE
from scoring.slice_worker import SearchFailed
from scoring.slices import SliceSearch

THUMB_WIDTH = 520  # px
MAX_THUMB_PIXELS = 1_200_000
WEAK_ROWS = 8
Progress = Callable[[str], None]


class ReportError(Exception):
    """A problem with the arguments (exit 2) or the data (exit 1), said plainly."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# ----------------------------------------------------------------------------- loading


def resolve(ws: Workspace, wanted: Sequence[str]) -> list[str]:
    """Run names for the `--runs` arguments: names of prediction files (or official-score systems)
    of the workspace, or paths to prediction files."""
    names = [pf.run for pf in ws.predictions if pf.loaded.loaded]
    official = [s for s in ws.official() if s not in names]
    by_path = {pf.path.resolve(): pf.run for pf in ws.predictions}
    out, unknown = [], []
    for item in wanted:
        path = Path(item)
        if item in names or item in official:
            out.append(item)
        elif path.is_file() and path.resolve() in by_path:
            out.append(by_path[path.resolve()])
        else:
            unknown.append(item)
    if unknown:
        available = ", ".join(names + official) or "none (no prediction file in runs/ and no score file in results/)"
        raise ReportError(f"unknown run{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. Available runs: {available}")
    return list(dict.fromkeys(out))


def load(benchmark: Path, runs: Sequence[str], profile: str = DEFAULT_PROFILE,
         progress: Progress | None = None) -> tuple[Workspace, Analysis, list[str]]:
    """Read the benchmark (plus any run given as a path), score the chosen runs with `profile`."""
    if not benchmark.is_dir():
        raise ReportError(f"--benchmark {benchmark}: no such folder")
    extra = tuple(Path(r) for r in runs if Path(r).is_file() and Path(r).suffix.lower() in (".json", ".jsonl")
                  and not (benchmark / "runs" / Path(r).name).resolve() == Path(r).resolve())
    ws = load_workspace(Sources(benchmark, runs=extra))
    if not ws.gold.items:
        raise ReportError(f"{benchmark}: no gold questions could be read (qa_*.jsonl)", 1)
    names = resolve(ws, runs)
    official = ws.official()
    chosen: list[Run] = []
    for name in names:
        pf = next((p for p in ws.predictions if p.run == name), None)
        if pf is not None:
            if progress:
                progress(f"scoring {name} with {profile} ({pf.loaded.loaded} predictions)")
            result = evaluate(ws.gold.items, pf.loaded.items, profile=profile, name=name)
            chosen.append(Run(name, RECOMPUTED, ws.label(str(pf.path)), result, official.get(name, [])))
        else:
            rows = official[name]
            chosen.append(Run(name, OFFICIAL, ws.label(rows[0].file), None, rows))
    return ws, Analysis.build(chosen, ws.gold.items, ws.page_counts, profile, ws.declared_pages()), names


def pick_pair(runs: list[str], baseline: str | None) -> tuple[str | None, str | None]:
    """(A, baseline B): B is `baseline` (which must be one of the runs), else the second run; A is
    the first run that is not B. One run: (that run, None)."""
    if baseline is not None and baseline not in runs:
        raise ReportError(f"--baseline {baseline}: not among the runs ({', '.join(runs)})")
    if not runs:
        return None, None
    b = baseline if baseline is not None else (runs[1] if len(runs) > 1 else None)
    a = next((r for r in runs if r != b), None)
    return a, b


# ----------------------------------------------------------------------------- thumbnails


@dataclass
class Thumb:
    png: bytes
    width: int
    height: int
    boxes: list[tuple[float, float, float, float]]  # in image pixels
    caption: str
    note: str = ""


def _located(path: Path, page_no: int, quotes: list[str]) -> list[tuple[float, float, float, float]] | None:
    """Boxes of the quotes on the page from dashboard.evidence.locate (normalised, fuzzy); None when it fails."""
    rects: list[tuple[float, float, float, float]] = []
    try:
        for quote in quotes:
            if quote.strip():
                rects += [tuple(r) for r in locate_in_document(path, page_no, quote).rects]  # type: ignore[misc]
    except Exception:
        return None
    return rects


def _page_size(path: Path, page_no: int) -> tuple[float, float] | None:
    """The page's shown size in points (rotation applied), through the one PDF module; None when
    the page cannot be read (a damaged or missing file, a page it does not have)."""
    try:
        pt = page_text(path, page_no)
    except DocumentError:
        return None
    return (pt.height, pt.width) if pt.rotation % 180 else (pt.width, pt.height)


def page_thumbnail(path: Path, page_no: int, quotes: list[str], caption: str, width: int = THUMB_WIDTH) -> Thumb | None:
    """Page `page_no` (1-based) as PNG, `width` px wide at most, with the quotes' boxes; None when it
    cannot be rendered."""
    size = _page_size(path, page_no)
    if size is None:
        return None
    zoom = min(width / max(1.0, size[0]), (MAX_THUMB_PIXELS / max(1.0, size[0] * size[1])) ** 0.5, 4.0)
    rects = _located(path, page_no, quotes) or []
    try:
        r = render_page(path, page_no, zoom)
        png, w, h = r.png, r.width, r.height
        boxes = [to_pixels(rect, r.matrix) for rect in rects]
    except Exception:  # a broken or missing PDF: no thumbnail, said in the report
        return None
    note = "" if boxes or not quotes else "the gold quote was not found on this page"
    return Thumb(png, w, h, list(boxes), caption, note)


def evidence_thumbnail(q: GoldQuestion, ws: Workspace | None) -> Thumb | None:
    if ws is None:
        return None
    for ref in q.documents:
        if not ref.evidence_pages:
            continue
        loc = ws.locations.get(ref.document_id)
        if loc is None or loc.path is None or loc.path.suffix.lower() != ".pdf":
            continue
        page = ref.evidence_pages[0]
        quotes = [it.quote for it in ref.evidence_items if page in it.pages and it.quote]
        return page_thumbnail(loc.path, page, quotes, f"{ref.document_id}, page {page}")
    return None


# ----------------------------------------------------------------------------- templates

# Every value a template shows is HTML-escaped (autoescape, whatever the template's name); a value is
# shown unescaped only when it is `Markup`, and build_report makes exactly two kinds of it: Plotly's
# JavaScript bundle and the chart divs Plotly draws from figures whose labels went through
# `dashboard.core.escape.plotly_text` (Plotly's JSON writes `</` as `<\/`, so no text ends a script).
# Thumbnails are numbers and a base64 string put into the template's own <img>/<svg> markup.
ENV = Environment(loader=PackageLoader("dashboard.report", "templates"), undefined=StrictUndefined,
                  autoescape=select_autoescape(("html",), default_for_string=True, default=True),
                  trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def text(value: object) -> str:
    """What a cell or a line shows for a value: "" for None, else its str()."""
    return "" if value is None else str(value)


def pct(x: float, digits: int = 1) -> str:
    return "—" if pd.isna(x) else f"{100 * x:.{digits}f}"


def pp(x: float, digits: int = 1) -> str:
    return "—" if pd.isna(x) else f"{100 * x:+.{digits}f}"


def interval(lo: float, hi: float, signed: bool = True) -> str:
    f = pp if signed else pct
    return "—" if pd.isna(lo) else f"{f(lo)} to {f(hi)}"


def pvalue(p: float) -> str:
    if pd.isna(p):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def slice_text(field_name: str, label: str) -> str:
    return "All questions" if field_name == C.OVERALL_FIELD else f"{field_label(field_name)}: {label}"


def table_data(frame: pd.DataFrame, numeric: Sequence[str] = ()) -> dict:
    """A frame as the `parts.table` macro takes it: column names, rows of (column, text) pairs."""
    columns = [text(c) for c in frame.columns]
    return {"columns": columns, "numeric": {text(c) for c in numeric},
            "rows": [list(zip(columns, (text(v) for v in row))) for row in frame.itertuples(index=False)]}


def thumb_data(t: Thumb | None) -> dict | None:
    """A thumbnail as the `parts.thumb` macro takes it: sizes, the PNG as base64, box rectangles."""
    if t is None:
        return None
    return {"data": base64.b64encode(t.png).decode("ascii"), "width": int(t.width), "height": int(t.height),
            "caption": t.caption, "note": t.note,
            "rects": [(f"{x0:.1f}", f"{y0:.1f}", f"{max(1.0, x1 - x0):.1f}", f"{max(1.0, y1 - y0):.1f}")
                      for x0, y0, x1, y1 in t.boxes]}


class _Charts:
    """Chart divs, numbered in the page; Plotly's JavaScript goes into the page head once."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig) -> Markup:
        self.count += 1
        div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart-{self.count}",
                          config={"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]})
        return Markup(div)  # Plotly's own markup; labels escaped by plotly_text, see ENV


# ----------------------------------------------------------------------------- the report


def build_report(analysis: Analysis, runs: list[str], baseline: str | None = None, *, workspace: Workspace | None = None,
                 profile: str = DEFAULT_PROFILE, title: str = "", settings: C.Settings | None = None,
                 failures: int = 8, progress: Progress | None = None, notes: Sequence | None = None,
                 changes: pd.DataFrame | None = None, changes_summary: str = "", saved: Sequence = (),
                 searches: dict | None = None, trend: dict | None = None) -> str:
    """The whole report as one HTML string (see the module docstring). Sections are numbered in the
    order they appear: the headline, where A is weakest (the finder: A against the rest of A, and with
    a baseline where A lost more to B), the flips (two runs or more), the ranks (three runs or more),
    the failures, the failure modes.
    `saved`: the benchmark's saved slices (dashboard.annotations.records.SavedSlice), a breakdown field of the
    per-slice table and of the finder; `searches`: finder results already made ((run, baseline) ->
    scoring.slices.SliceSearch, as the app's store keeps them), the rest computed here. `trend`: the
    checkpoint trend of the series open in the app (dashboard.trends.frames.report_section), a section of
    its own after the others."""
    import plotly.offline

    settings = settings or C.Settings()
    say = progress or (lambda _msg: None)
    an = analysis
    runs = [r for r in runs if r in an.run_names]
    a, b = pick_pair(runs, baseline if baseline in runs else None)
    chart = _Charts()
    bench = workspace.discovery.benchmark if workspace is not None else None
    signature = next((run.signature for run in map(an.run, runs) if run is not None and run.recomputed), "")
    name = title or f"DocBench Lens report: {bench.name if bench else 'benchmark'}"
    own = C.benchmark_scores(an, runs)
    page = {"name": name, "questions": len(an.questions), "runs": runs, "profile": profile, "signature": signature,
            "stamp": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "plotlyjs": "", "sections": [],
            "documents": int(an.questions["cluster"].nunique()) if "cluster" in an.questions.columns else 0,
            "unit": C.unit_of(an.questions),
            "own": [{"run": r, "acc": pct(acc), "f1": pct(f1)} for r, (acc, f1) in own.items()],
            "corrections": changes_summary}
    if not runs or a is None:
        return render(page)

    sections: list[dict] = []
    say("intervals per run")
    iv = C.run_intervals(an.attempted_scores(runs, shared=False)[0], runs, settings, an.questions)
    sections.append(_headline(an, iv, a, b, settings, chart, own))
    questions = S.with_fields(an.questions, list(saved)) if saved else an.questions
    say(f"weak slices of {a} (the finder)")
    weakest, weak = _weakest(an, questions, a, b, searches or {}, chart)
    sections.append(weakest)
    pairs = C.paired(an.attempted_scores([a, b])[0], a, b) if b else None
    if b and pairs is not None:
        say(f"flips and per-slice deltas, {a} against {b}")
        sections.append(_flips(an, pairs, a, b, settings, chart, questions if saved else None))
    if len(runs) > 2:
        sections.append(_ranks(an, runs))
    if pairs is not None or b is None:
        say("most telling failures")
        sections.append(_failures(an, workspace, pairs if pairs is not None else _self_pairs(an, a), weak, a, b, failures))
    if notes or changes is not None:  # the annotations' failure modes (dashboard/annotations), when there are any
        sections.append(_failure_modes(list(notes or ()), runs, changes, changes_summary))
    judged = _judge(workspace, runs, notes) if workspace is not None else None  # the LLM judge (dashboard/judge)
    if judged is not None:
        sections.append(judged)
        page["signature"] = str(page["signature"]) + "".join(f" | {j}" for j in judged["judges"])
    if trend:  # the open series' checkpoint trend (templates/trend.html)
        section = dict(trend)
        figure = section.pop("figure", None)
        section["chart"] = chart(figure) if figure is not None else ""
        sections.append(section)
    for number, section in enumerate(sections, 1):
        section["number"] = number
    sections.append({"template": "method.html", "resamples": f"{settings.resamples:,}", "seed": settings.seed,
                     "slice_resamples": f"{settings.slice_resamples:,}", "min_documents": C.MIN_DOCUMENTS,
                     "unit": C.unit_of(an.questions)})
    page["sections"] = sections
    page["plotlyjs"] = Markup(plotly.offline.get_plotlyjs())  # the Plotly bundle itself
    return render(page)


def _judge(ws: Workspace, runs: list[str], notes: Sequence | None) -> dict | None:
    """The LLM judge's section (dashboard/judge/frames.py `report_table`): None when no run here went through a judge."""
    from dashboard.judge import frames as J
    from scoring.judge.agreement import MIN_UNITS

    table, idents = J.report_table(ws, runs, notes or ())
    if table.empty:
        return None
    return {"template": "judge.html", "table": table_data(table), "judges": [i.signature for i in idents],
            "min_units": MIN_UNITS}


def render(page: dict) -> str:
    """The page from templates/report.html."""
    return ENV.get_template("report.html").render(page)


def _failure_modes(notes: list, runs: list[str], changes: pd.DataFrame | None, summary: str, per_tag: int = 2) -> dict:
    """Tag counts per run (the annotations' notes), a few examples per tag, and the score changes
    with gold corrections: every text escaped by the template."""
    from dashboard.annotations import frames as A

    table = A.tag_table(notes, runs, [])
    examples: list[dict[str, str]] = []
    for tag in table["tag"]:
        for run in [*runs, A.QUESTION_ROW]:
            for n in A.examples(notes, run, tag, per_tag):
                if len([e for e in examples if e["tag"] == tag]) < per_tag and n.text.strip():
                    examples.append({"tag": text(tag), "run": text(n.run or A.QUESTION_ROW), "qid": text(n.question_id),
                                     "text": text(n.text)[:300], "author": text(n.author)})
    return {"template": "failure_modes.html", "table": table_data(table, numeric=[c for c in table.columns if c != "tag"]),
            "question_row": A.QUESTION_ROW if A.QUESTION_ROW in table.columns else "", "examples": examples,
            "changes": table_data(changes, numeric=[c for c in changes.columns if c != "Run"]) if changes is not None else None,
            "summary": summary}


def _self_pairs(an: Analysis, a: str) -> pd.DataFrame:
    return C.paired(an.attempted_scores([a])[0], a, a)


def _runs_chart(iv: pd.DataFrame):
    """Accuracy per run, with room on the left for the y-axis ticks and title (they were clipped)."""
    fig = charts.runs_chart(iv, "accuracy")
    fig.update_yaxes(automargin=True)
    fig.update_layout(margin=dict(l=70))
    return fig


def few_cell(gap: float) -> str:
    """A table cell instead of an interval: too few documents, and the smallest gap detectable."""
    if pd.isna(gap) or gap == float("inf") or gap == 0:
        return "too few documents to tell"
    return f"too few documents to tell; ±{100 * gap:.1f} detectable"


def too_few_text(documents: int, unit: str, gap: float) -> str:
    return f"too few documents to tell ({C.units_text(documents, unit)}; {C.detectable_text(gap)})"


def _headline(an: Analysis, iv: pd.DataFrame, a: str, b: str | None, settings: C.Settings, chart: _Charts,
              own: dict[str, tuple[float, float]] | None = None) -> dict:
    section: dict = {"template": "headline.html", "a": a, "b": b, "top": None}
    if b:
        pairs = C.paired(an.attempted_scores([a, b])[0], a, b)
        top = C.headline(C.deltas(pairs, an.questions, None, settings))
        if top:
            d = top["accuracy_delta"]
            said = C.verdict(top)
            docs, unit = int(top["documents"]), str(top["unit"])
            section["top"] = {
                "size": f"{abs(100 * d):.1f}", "better": "ahead of" if d > 0 else "behind" if d < 0 else "level with",
                "questions": top["questions"], "units": C.units_text(docs, unit), "only_a": top["only_a"], "only_b": top["only_b"],
                "too_few": said == "too few",
                "evidence": (C.detectable_text(top["accuracy_detectable"]) if said == "too few" else
                             f"95 % interval {interval(top['accuracy_low'], top['accuracy_high'])} pp by documents, "
                             f"p by document {pvalue(top['p'])}"),
                "p_mcnemar": pvalue(top["p_mcnemar"]),
                "verdict": ("too few documents to tell whether the difference is real" if said == "too few" else
                            "a real difference" if said == "real" else "not distinguishable from chance on these documents"),
                "cards": [{"metric": C.METRIC_LABELS[m], "delta": pp(top[f"{m}_delta"]),
                           "cls": "" if said == "too few" else "pos" if top[f"{m}_low"] > 0 else "neg" if top[f"{m}_high"] < 0 else "",
                           "interval": (too_few_text(docs, unit, top[f"{m}_detectable"]) if bool(top["too_few"]) else
                                        f"95 % interval {interval(top[f'{m}_low'], top[f'{m}_high'])} pp by documents"),
                           "score_a": pct(top[f"{m}_a"]), "score_b": pct(top[f"{m}_b"])} for m in C.METRICS],
            }
    own = own or {}
    rows = []
    for r in iv.itertuples(index=False):
        row = {"Run": r.run, "Questions": r.questions, "Documents": r.documents}
        if own:
            acc_f1 = own.get(r.run)
            row["Acc, benchmark (%)"] = pct(acc_f1[0]) if acc_f1 else "—"
            row["F1, benchmark (%)"] = pct(acc_f1[1]) if acc_f1 else "—"
        for m in C.METRICS:
            row[f"{C.METRIC_LABELS[m]} (%)"] = pct(getattr(r, m))
            low, high = getattr(r, f"{m}_low"), getattr(r, f"{m}_high")
            row[f"{C.METRIC_LABELS[m]} 95 % interval"] = (interval(low, high, signed=False) if not pd.isna(low)
                                                           else "too few documents to tell")
        rows.append(row)
    frame = pd.DataFrame(rows).sort_values("Accuracy (%)", key=lambda s: s.map(lambda v: -float(v) if v != "—" else 0), kind="stable")
    section["table"] = table_data(frame, numeric=[c for c in frame.columns if c != "Run" and "interval" not in c])
    section["chart"] = chart(_runs_chart(iv))
    return section


def _flips(an: Analysis, pairs: pd.DataFrame, a: str, b: str, settings: C.Settings, chart: _Charts,
           questions: pd.DataFrame | None = None) -> dict:
    q = an.questions if questions is None else questions
    fields = (*C.BREAKDOWNS, C.SAVED_FIELD) if C.SAVED_FIELD in q.columns else C.BREAKDOWNS
    flips = C.flip_table(pairs, q, fields)
    table = C.deltas(pairs, q, C.pair_fields(pairs, q, an.gold, values=an.question_values()), settings)
    top = flips.iloc[0]
    slices = flips.iloc[1:].assign(_d=flips.iloc[1:][["only A", "only B"]].sum(axis=1)).sort_values("_d", ascending=False, kind="stable")
    sig = C.holding_slices(table)
    few = table["too_few"].astype(bool)
    frame = pd.DataFrame({
        "Slice": [slice_text(f, lab) for f, lab in zip(table["field"], table["label"])],
        "Questions": [f"{n}{' (few)' if s else ''}" for n, s in zip(table["questions"], table["small"])],
        "Documents": [str(n) for n in table["documents"]],
        **{f"Δ {C.METRIC_LABELS[m]} (pp)": [f"{pp(d)} [{few_cell(gap) if tf else interval(lo, hi)}]"
                                             for d, lo, hi, tf, gap in zip(table[f"{m}_delta"], table[f"{m}_low"], table[f"{m}_high"],
                                                                           few, table[f"{m}_detectable"])]
           for m in C.METRICS},
        "Only A / only B": [f"{x} / {y}" for x, y in zip(table["only_a"], table["only_b"])],
        "q by document": ["—" if tf and f != C.OVERALL_FIELD else pvalue(p)
                          for p, tf, f in zip(table["q"], few, table["field"])],
        "McNemar p (questions)": [pvalue(p) for p in table["p_mcnemar"]],
    })
    return {
        "template": "flips.html", "a": a, "b": b,
        "top": {"questions": top["questions"], "both_right": top["both right"], "only_a": top["only A"],
                "only_b": top["only B"], "both_wrong": top["both wrong"], "p": pvalue(top["p"]),
                "too_few": int(top["documents"]) < C.MIN_DOCUMENTS,
                "units": C.units_text(int(top["documents"]), str(top["unit"])), "p_mcnemar": pvalue(top["p_mcnemar"])},
        "flips_chart": chart(charts.flips_chart(pd.concat([flips.iloc[:1], slices.drop(columns="_d").head(12)]), a, b)),
        "delta_chart": chart(charts.delta_chart(table, "accuracy", a, b)),
        "tested": C.tested_count(table), "slices": int((table["field"] != C.OVERALL_FIELD).sum()),
        "min_documents": C.MIN_DOCUMENTS,
        "significant": [(slice_text(f, lab), pp(d)) for f, lab, d in zip(sig["field"], sig["label"], sig["accuracy_delta"])],
        "table": table_data(frame, numeric=["Questions", "Documents", "Only A / only B", "q by document",
                                            "McNemar p (questions)"]),
    }


def found_rows(result: SliceSearch, top: int = WEAK_ROWS) -> pd.DataFrame:
    """The top kept slices of a search as report rows: rank, the conditions in words, the gap (pp,
    negative: worse) with its interval adjusted for the search, one-sided p, q, questions, documents,
    excess failures and how many slices each explains."""
    return pd.DataFrame([{"Rank": str(k), "Slice": s.label, W.INTERVAL: W.interval_text(s), "p": W.p_text(s.p),
                          "q": W.p_text(s.q), "Questions": str(s.n), "Documents": str(s.documents),
                          "Excess failures": f"{s.excess_failures:.1f}", "Explains": str(len(s.explains))}
                         for k, s in enumerate(result.weak[:top], 1)],
                        columns=["Rank", "Slice", W.INTERVAL, "p", "q", "Questions", "Documents", "Excess failures",
                                 "Explains"])


def _weakest(an: Analysis, questions: pd.DataFrame, a: str, b: str | None, searches: dict,
             chart: _Charts) -> tuple[dict, list[tuple[str, list[str], float]]]:
    """"Where A is weakest": the weak-slice finder's answer -- the one the Weak slices page, Compare's
    "All runs" and the Presentation give -- for A against the rest of A, and in pair mode where A lost
    more to B than elsewhere: its sentence, the forest plot (A) and the top slices with their intervals
    adjusted for the search; or why not. Also A's weak slices as (label, question ids, weight) for the
    telling failures."""
    parts = []
    weak: list[tuple[str, list[str], float]] = []
    for run, base, title in ((a, "", f"Where {a} is weaker than on its other questions"),
                             *(((a, b, f"Where {a} lost more to {b} than elsewhere"),) if b else ())):
        scores = an.attempted_scores([run, base] if base else [run])[0]  # a missing answer is no answer
        data = W.inputs(questions, scores, an.gold, run, "accuracy", base, an.declared_pages, an.question_values())
        part: dict = {"title": title, "sentence": [], "settings": "", "chart": None, "table": None}
        parts.append(part)
        small = W.too_small(data, W.Settings())
        if small:
            part["sentence"] = W.small_sentence(small)
            continue
        try:
            result = searches.get((run, base)) or W.search(data, W.Settings())
        except SearchFailed as exc:
            part["sentence"] = [(f"The weak-slice search was stopped: {exc}.", False)]
            continue
        part["sentence"] = W.sentence(result, run, "Accuracy", base)
        part["settings"] = f"{W.settings_text(result)} {W.fields_text(result)}"
        if result.weak:
            part["table"] = table_data(found_rows(result), numeric=["Rank", "p", "q", "Questions", "Documents",
                                                                    "Excess failures", "Explains"])
            if not base:
                part["chart"] = chart(weak_charts.forest(result, "Accuracy", top=WEAK_ROWS))
                weak = [(s.label, W.members(data, s.conditions), s.excess_failures) for s in result.weak[:10]]
    return {"template": "weakest.html", "a": a, "b": b, "parts": parts}, weak


def _ranks(an: Analysis, runs: list[str]) -> dict:
    long = C.slice_scores(an.attempted_scores(runs)[0], an.questions, runs, "accuracy")
    wide = C.rank_table(long)
    frame = wide.assign(Slice=[slice_text(f, lab) for f, lab in zip(wide["field"], wide["label"])])
    frame = frame[["Slice", "questions", *runs]].rename(columns={"questions": "Questions"})
    return {"template": "ranks.html", "table": table_data(frame, numeric=["Questions", *runs])}


def _failures(an: Analysis, ws: Workspace | None, pairs: pd.DataFrame, weak: list[tuple[str, list[str], float]], a: str,
              b: str | None, k: int) -> dict:
    told = C.telling_failures(pairs, an.questions, weak, k=max(5, min(10, k)))
    gold = {q.qid: q for q in (ws.gold.items if ws is not None else [])}
    shown = []
    for qid, row in told.iterrows():
        q = an.questions.loc[qid]
        g = gold.get(qid)
        thumb = evidence_thumbnail(g, ws) if g is not None else None
        answers = []
        for side, run in (("A", a), ("B", b)):
            if run is None:
                continue
            x = side.lower()
            answers.append({"run": run, "side": side, "text": text(row[f"prediction_{x}"]) or "(empty)",
                            "scores": " · ".join(f"{C.METRIC_LABELS[m]} {pct(row[f'{m}_{x}'], 0)} %" for m in C.METRICS)})
        shown.append({
            "qid": text(qid),
            "outcome": text({C.ONLY_B: f"only {b} right", C.BOTH_WRONG: "both wrong"}.get(row["flip"], row["flip"]) if b else "wrong"),
            "meta": " · ".join(v for v in (text(q.get(k, "")) for k in ("answer_format", "reasoning_type", "document"))
                               if v and v != C.UNKNOWN),  # a field the gold leaves "unknown" says nothing
            "why": ", ".join(row["why"]) if row["why"] else "—",
            "question": text(q.get("question", "")), "gold": text(q.get("gold", "")), "answers": answers,
            "diff": char_diff(str(row["prediction_a"]) or "", str(row["prediction_b"]) or "") if b else None,
            "thumb": thumb_data(thumb),
            "missing": ("no evidence page: the document is not in docs/ or the question names no evidence page"
                        if g is not None else "no document"),
        })
    return {"template": "failures.html", "a": a, "b": b, "failures": shown}

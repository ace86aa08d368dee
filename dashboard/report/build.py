"""The stakeholder report: one self-contained HTML file that opens with no network.

    python -m dashboard.report --benchmark DIR --runs A B [...] [--baseline NAME] [--profile NAME] --output report.html

Runs are named as everywhere else: a prediction file's name without its extension, looked up in the
benchmark's runs/ folder (a path to a prediction file is accepted too; so is a system that only has
official scores in results/). Run A is the first run that is not the baseline; the baseline is
`--baseline`, else the second run listed. Exit codes: 0 written, 2 bad arguments (an unknown run
name: the available ones are listed), 1 nothing could be scored.

The file holds Plotly's JavaScript once (`plotly.offline.get_plotlyjs()`, inlined), every chart as
a div drawn by it, and page thumbnails as PNG data URIs with the evidence boxes as an SVG overlay:
no request leaves the file. User data (questions, answers, run and file names) is HTML-escaped;
chart labels go through `tables.plotly_text`. No streamlit here: the app calls `build_report`.

Thumbnails: the evidence page of each failure, rendered with PyMuPDF under the workspace's PDF
lock (capped at `THUMB_WIDTH` pixels wide); boxes come from `dashboard.evidence.locate_in_document`
when that module is present, else from PyMuPDF's `search_for` of each gold quote on the page.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from dashboard.compare import charts
from dashboard.compare import frames as C
from dashboard.core.analysis import OFFICIAL, RECOMPUTED, Analysis, Run
from dashboard.core.links import field_label
from dashboard.core.paths import Sources
from dashboard.core.textdiff import char_diff
from dashboard.core.workspace import Workspace, load_workspace
from dashboard.evidence.pdf import PDF_LOCK
from scoring.evaluate import evaluate
from scoring.model import GoldQuestion
from scoring.profiles import DEFAULT_PROFILE

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
    names = [pf.run for pf in ws.predictions if pf.loaded.items]
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
                progress(f"scoring {name} with {profile} ({len(pf.loaded.items)} predictions)")
            result = evaluate(ws.gold.items, pf.loaded.items, profile=profile, name=name)
            chosen.append(Run(name, RECOMPUTED, ws.label(str(pf.path)), result, official.get(name, [])))
        else:
            rows = official[name]
            chosen.append(Run(name, OFFICIAL, ws.label(rows[0].file), None, rows))
    return ws, Analysis.build(chosen, ws.gold.items, ws.page_counts), names


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


def _quote_rects(path: Path, page_no: int, quotes: list[str], page) -> list[tuple[float, float, float, float]]:
    """Rectangles (PDF points) of the quotes on the page; caller holds the lock and the open page."""
    rects = []
    for quote in quotes:
        if not quote.strip():
            continue
        try:
            rects += [(r.x0, r.y0, r.x1, r.y1) for r in page.search_for(quote[:200])]
        except Exception:  # a quote PyMuPDF cannot search is simply not boxed
            continue
    return rects


def _located(path: Path, page_no: int, quotes: list[str]) -> list[tuple[float, float, float, float]] | None:
    """Boxes from dashboard.evidence (normalised, fuzzy) when that module is there; None otherwise."""
    try:
        from dashboard.evidence.locate import locate_in_document
    except ImportError:
        return None
    rects: list[tuple[float, float, float, float]] = []
    try:
        for quote in quotes:
            if quote.strip():
                rects += [tuple(r) for r in locate_in_document(path, page_no, quote).rects]  # type: ignore[misc]
    except Exception:
        return None
    return rects


def _page_size(path: Path, page_no: int) -> tuple[float, float] | None:
    import pymupdf

    with PDF_LOCK:
        try:
            with pymupdf.open(path) as doc:
                if not 1 <= page_no <= doc.page_count:
                    return None
                r = doc[page_no - 1].rect
                return (r.width, r.height)
        except Exception:  # unreadable: no thumbnail
            return None


def _render_own(path: Path, page_no: int, zoom: float, rects: list | None, quotes: list[str]):
    """(png, width, height, boxes in pixels) rendered here, for when dashboard/pagerender.py is absent."""
    import pymupdf

    with PDF_LOCK:
        with pymupdf.open(path) as doc:
            page = doc[page_no - 1]
            pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            found = rects if rects is not None else _quote_rects(path, page_no, quotes, page)
            mat = page.rotation_matrix * pymupdf.Matrix(zoom, zoom) * pymupdf.Matrix(1, 0, 0, 1, -pix.x, -pix.y)
            boxes = [tuple(pymupdf.Rect(r) * mat) for r in found]
            return pix.tobytes("png"), pix.width, pix.height, boxes


def page_thumbnail(path: Path, page_no: int, quotes: list[str], caption: str, width: int = THUMB_WIDTH) -> Thumb | None:
    """Page `page_no` (1-based) as PNG, `width` px wide at most, with the quotes' boxes. Rendered by
    dashboard.pagerender when present (else here, the same way); None when it cannot be rendered."""
    size = _page_size(path, page_no)
    if size is None:
        return None
    zoom = min(width / max(1.0, size[0]), (MAX_THUMB_PIXELS / max(1.0, size[0] * size[1])) ** 0.5, 4.0)
    rects = _located(path, page_no, quotes)
    try:
        try:
            from dashboard.evidence.render import render_page, to_pixels
        except ImportError:
            png, w, h, boxes = _render_own(path, page_no, zoom, rects, quotes)
        else:
            if rects is None:
                rects = []
            r = render_page(path, page_no, zoom)
            png, w, h = r.png, r.width, r.height
            boxes = [to_pixels(rect, r.matrix) for rect in rects]
    except Exception:  # a broken or missing PDF: no thumbnail, said in the report
        return None
    note = "" if boxes or not quotes else "the gold quote was not found on this page"
    return Thumb(png, w, h, [tuple(b) for b in boxes], caption, note)


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


# ----------------------------------------------------------------------------- HTML pieces

CSS = """
:root { --ink:#0f172a; --muted:#475569; --line:#e2e8f0; --a:#2563eb; --b:#d97706; --bad:#dc2626; --good:#059669; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0; background: #f8fafc; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 60px; }
h1 { font-size: 28px; margin: 0 0 4px; } h2 { font-size: 21px; margin: 40px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 0 0 6px; }
.meta, .note { color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; margin: 12px 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .big { font-size: 28px; font-weight: 650; } .pos { color: var(--good); } .neg { color: var(--bad); }
.message { font-size: 18px; background: #fff; border-left: 4px solid var(--a); padding: 10px 14px; margin: 12px 0; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13.5px; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f1f5f9; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px; margin: 10px 0; padding: 4px; }
.failure { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px; margin: 14px 0;
           display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 16px; }
@media (max-width: 820px) { .failure { grid-template-columns: minmax(0, 1fr); } }
pre { white-space: pre-wrap; word-break: break-word; background: #f1f5f9; padding: 6px 8px; border-radius: 4px; margin: 2px 0 8px; font-size: 13px; }
.label { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; } @media (max-width: 600px) { .pair { grid-template-columns: 1fr; } }
del { background: #fee2e2; color: #991b1b; text-decoration: line-through; } ins { background: #dcfce7; color: #166534; text-decoration: none; }
figure { margin: 0; } figcaption { font-size: 12px; color: var(--muted); }
.thumb { position: relative; display: inline-block; border: 1px solid var(--line); }
.thumb img { display: block; max-width: 100%; height: auto; } .thumb svg { position: absolute; inset: 0; width: 100%; height: 100%; }
.warn { color: #b45309; }
"""


def esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


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


def table_html(frame: pd.DataFrame, numeric: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = "".join(f'<td class="num">{esc(v)}</td>' if c in numeric else f"<td>{esc(v)}</td>"
                        for c, v in zip(frame.columns, row))
        rows.append(f"<tr>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def diff_html(a: str, b: str) -> str:
    parts = []
    for kind, text in char_diff(a or "", b or ""):
        if kind == "equal":
            parts.append(esc(text))
        elif kind == "delete":
            parts.append(f"<del>{esc(text)}</del>")
        elif kind == "insert":
            parts.append(f"<ins>{esc(text)}</ins>")
        else:
            parts.append(f'\n<span class="note">[{esc(text)}]</span>')
    return "".join(parts)


def thumb_html(t: Thumb | None, missing: str) -> str:
    if t is None:
        return f'<p class="note">{esc(missing)}</p>'
    data = base64.b64encode(t.png).decode("ascii")
    rects = "".join(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(1.0, x1 - x0):.1f}" height="{max(1.0, y1 - y0):.1f}" '
                    'fill="rgba(250,204,21,0.25)" stroke="#dc2626" stroke-width="2"/>' for x0, y0, x1, y1 in t.boxes)
    note = f"; {esc(t.note)}" if t.note else ("; gold evidence boxed in red" if t.boxes else "")
    return (f'<figure><div class="thumb" style="width:{t.width}px;max-width:100%">'
            f'<img alt="{esc(t.caption)}" width="{t.width}" height="{t.height}" src="data:image/png;base64,{data}">'
            f'<svg viewBox="0 0 {t.width} {t.height}" preserveAspectRatio="none">{rects}</svg></div>'
            f"<figcaption>{esc(t.caption)}{note}</figcaption></figure>")


class _Charts:
    """Chart divs; Plotly's JavaScript goes into the page head once."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig) -> str:
        self.count += 1
        div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart-{self.count}",
                          config={"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]})
        return f'<div class="chart">{div}</div>'


# ----------------------------------------------------------------------------- the report


def build_report(analysis: Analysis, runs: list[str], baseline: str | None = None, *, workspace: Workspace | None = None,
                 profile: str = DEFAULT_PROFILE, title: str = "", settings: C.Settings | None = None,
                 failures: int = 8, progress: Progress | None = None) -> str:
    """The whole report as one HTML string (see the module docstring)."""
    import plotly.offline

    settings = settings or C.Settings()
    say = progress or (lambda _msg: None)
    an = analysis
    runs = [r for r in runs if r in an.run_names]
    a, b = pick_pair(runs, baseline if baseline in runs else None)
    chart = _Charts()
    body: list[str] = []
    bench = workspace.discovery.benchmark if workspace is not None else None
    signature = next((an.run(r).signature for r in runs if an.run(r) and an.run(r).result), "")
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    name = title or f"DocBench Lens report: {bench.name if bench else 'benchmark'}"
    body.append(f"<header><h1>{esc(name)}</h1><p class='meta'>{len(an.questions)} questions · runs: {esc(', '.join(runs))}"
                f" · profile {esc(profile)} · generated {stamp}<br>signature: {esc(signature)}</p></header>")
    if not runs or a is None:
        body.append("<p class='message'>No run to report on.</p>")
        return _page(name, body)

    say("intervals per run")
    iv = C.run_intervals(an.scores, runs, settings)
    body.append(_headline(an, iv, a, b, settings, chart, say))
    say(f"weakest slices of {a}")
    weak = C.weakest(an.scores, an.questions, a, "accuracy", runs=runs, settings=settings)
    body.append(_weakest(weak, a, chart))
    pairs = C.paired(an.scores, a, b) if b else None
    if b and pairs is not None:
        say(f"flips and per-slice deltas, {a} against {b}")
        body.append(_flips(an, pairs, a, b, settings, chart))
    if len(runs) > 2:
        body.append(_ranks(an, runs))
    if pairs is not None or b is None:
        say("most telling failures")
        body.append(_failures(an, workspace, pairs if pairs is not None else _self_pairs(an, a), weak, a, b, failures))
    body.append(_method(settings))
    return _page(name, body, plotly.offline.get_plotlyjs())


def _self_pairs(an: Analysis, a: str) -> pd.DataFrame:
    return C.paired(an.scores, a, a)


def _page(name: str, body: list[str], plotlyjs: str = "") -> str:
    script = f"<script>{plotlyjs}</script>" if plotlyjs else ""
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
            "style-src 'unsafe-inline'; img-src data:; font-src data:\">"
            f"<title>{esc(name)}</title><style>{CSS}</style>{script}</head><body><main>"
            + "\n".join(body) + "</main></body></html>\n")


def _headline(an: Analysis, iv: pd.DataFrame, a: str, b: str | None, settings: C.Settings, chart: _Charts, say: Progress) -> str:
    out = ["<section><h2>1. Headline</h2>"]
    if b:
        pairs = C.paired(an.scores, a, b)
        top = C.headline(C.deltas(pairs, an.questions, [], settings))
        if top:
            d, lo, hi = top["accuracy_delta"], top["accuracy_low"], top["accuracy_high"]
            real = top["p_mcnemar"] < 0.05 and (lo > 0 or hi < 0)
            verdict = ("a real difference" if real else "not distinguishable from chance on these questions")
            better = "ahead of" if d > 0 else "behind" if d < 0 else "level with"
            out.append(f"<p class='message'><b>{esc(a)}</b> is {abs(100 * d):.1f} percentage points {better} "
                       f"<b>{esc(b)}</b> on Accuracy over {top['questions']} shared questions "
                       f"(95 % interval {interval(lo, hi)} pp; {top['only_a']} questions only {esc(a)} gets right, "
                       f"{top['only_b']} only {esc(b)}; McNemar p {pvalue(top['p_mcnemar'])}): {verdict}.</p>")
            cards = []
            for m in C.METRICS:
                dm = top[f"{m}_delta"]
                cls = "pos" if top[f"{m}_low"] > 0 else "neg" if top[f"{m}_high"] < 0 else ""
                cards.append(f"<div class='card'><div class='label'>Δ {C.METRIC_LABELS[m]}, {esc(a)} − {esc(b)}</div>"
                             f"<div class='big {cls}'>{pp(dm)} pp</div><div class='note'>95 % interval {interval(top[f'{m}_low'], top[f'{m}_high'])} pp"
                             f"<br>{pct(top[f'{m}_a'])} % against {pct(top[f'{m}_b'])} %</div></div>")
            out.append(f"<div class='cards'>{''.join(cards)}</div>")
    rows = []
    for r in iv.itertuples(index=False):
        row = {"Run": r.run, "Questions": r.questions}
        for m in C.METRICS:
            row[f"{C.METRIC_LABELS[m]} (%)"] = pct(getattr(r, m))
            row[f"{C.METRIC_LABELS[m]} 95 % interval"] = interval(getattr(r, f"{m}_low"), getattr(r, f"{m}_high"), signed=False)
        rows.append(row)
    frame = pd.DataFrame(rows).sort_values("Accuracy (%)", key=lambda s: s.map(lambda v: -float(v) if v != "—" else 0), kind="stable")
    out.append(table_html(frame, numeric=[c for c in frame.columns if c != "Run"]))
    out.append(chart(charts.runs_chart(iv, "accuracy")))
    out.append("</section>")
    return "".join(out)


def _weakest(weak: pd.DataFrame, a: str, chart: _Charts) -> str:
    out = [f"<section><h2>2. Where {esc(a)} is weakest</h2>"
           "<p class='note'>Slices ranked by questions × gap between the run's overall Accuracy and its Accuracy on the slice: "
           "large slices with a large gap first. Intervals: 95 % bootstrap over the slice's questions.</p>"]
    top = weak[weak["weight"] > 0].head(WEAK_ROWS)
    if top.empty:
        out.append("<p class='message'>No slice scores below the run's overall Accuracy.</p></section>")
        return "".join(out)
    first = top.iloc[0]
    out.append(f"<p class='message'>Weakest: <b>{esc(slice_text(first['field'], first['label']))}</b>, "
               f"{pct(first['score'])} % Accuracy on {first['questions']} questions against {pct(first['reference'])} % overall "
               f"(gap {100 * first['gap']:.1f} pp, 95 % interval {interval(first['gap_low'], first['gap_high'])}).</p>")
    out.append(chart(charts.weakest_chart(top, "accuracy", a, C.OWN)))
    frame = pd.DataFrame({
        "Slice": [slice_text(f, lab) for f, lab in zip(top["field"], top["label"])],
        "Questions": [f"{n}{' (few)' if s else ''}" for n, s in zip(top["questions"], top["small"])],
        "Accuracy (%)": [pct(v) for v in top["score"]],
        "Gap (pp)": [f"{100 * v:.1f}" for v in top["gap"]],
        "Gap 95 % interval (pp)": [interval(lo, hi) for lo, hi in zip(top["gap_low"], top["gap_high"])],
        "Questions × gap": [f"{v:.1f}" for v in top["weight"]],
    })
    out.append(table_html(frame, numeric=["Questions", "Accuracy (%)", "Gap (pp)", "Gap 95 % interval (pp)", "Questions × gap"]))
    out.append("</section>")
    return "".join(out)


def _flips(an: Analysis, pairs: pd.DataFrame, a: str, b: str, settings: C.Settings, chart: _Charts) -> str:
    flips = C.flip_table(pairs, an.questions)
    table = C.deltas(pairs, an.questions, C.BREAKDOWNS, settings)
    top = flips.iloc[0]
    out = [f"<section><h2>3. What flipped: {esc(a)} (A) against baseline {esc(b)} (B)</h2>",
           f"<p class='message'>Of {top['questions']} shared questions, both are right on {top['both right']}, "
           f"only {esc(a)} on {top['only A']}, only {esc(b)} on {top['only B']}, both wrong on {top['both wrong']}.</p>"]
    slices = flips.iloc[1:].assign(_d=flips.iloc[1:][["only A", "only B"]].sum(axis=1)).sort_values("_d", ascending=False, kind="stable")
    out.append(chart(charts.flips_chart(pd.concat([flips.iloc[:1], slices.drop(columns="_d").head(12)]), a, b)))
    out.append(chart(charts.delta_chart(table, "accuracy", a, b)))
    sig = table[(table["field"] != C.OVERALL_FIELD) & (table["p_holm"] < 0.05)]
    if len(sig):
        out.append("<p>Slices where the Accuracy difference holds after Holm's correction across all "
                   f"{int((table['field'] != C.OVERALL_FIELD).sum())} slices: "
                   + ", ".join(f"<b>{esc(slice_text(f, lab))}</b> ({pp(d)} pp)" for f, lab, d in
                               zip(sig["field"], sig["label"], sig["accuracy_delta"])) + ".</p>")
    else:
        out.append(f"<p class='note'>No single slice's Accuracy difference holds after Holm's correction across the "
                   f"{int((table['field'] != C.OVERALL_FIELD).sum())} slices tested (p &lt; 0.05).</p>")
    frame = pd.DataFrame({
        "Slice": [slice_text(f, lab) for f, lab in zip(table["field"], table["label"])],
        "Questions": [f"{n}{' (few)' if s else ''}" for n, s in zip(table["questions"], table["small"])],
        **{f"Δ {C.METRIC_LABELS[m]} (pp)": [f"{pp(d)} [{interval(lo, hi)}]" for d, lo, hi in
                                             zip(table[f"{m}_delta"], table[f"{m}_low"], table[f"{m}_high"])] for m in C.METRICS},
        "Only A / only B": [f"{x} / {y}" for x, y in zip(table["only_a"], table["only_b"])],
        "p (Holm)": [pvalue(p) for p in table["p_holm"]],
    })
    out.append("<details><summary>Every slice: deltas with 95 % intervals, flips, Holm-adjusted McNemar p</summary>"
               + table_html(frame, numeric=[c for c in frame.columns if c != "Slice"]) + "</details>")
    out.append("</section>")
    return "".join(out)


def _ranks(an: Analysis, runs: list[str]) -> str:
    long = C.slice_scores(an.scores, an.questions, runs, "accuracy")
    wide = C.rank_table(long)
    frame = wide.assign(Slice=[slice_text(f, lab) for f, lab in zip(wide["field"], wide["label"])])
    frame = frame[["Slice", "questions", *runs]].rename(columns={"questions": "Questions"})
    return ("<section><h2>4. Ranks of every run per slice</h2><p class='note'>Accuracy rank (1 = best; ties share a rank).</p>"
            f"<details><summary>Show the ranks</summary>{table_html(frame, numeric=['Questions', *runs])}</details></section>")


def _failures(an: Analysis, ws: Workspace | None, pairs: pd.DataFrame, weak: pd.DataFrame, a: str, b: str | None, k: int) -> str:
    told = C.telling_failures(pairs, an.questions, weak, k=max(5, min(10, k)))
    out = [f"<section><h2>5. The most telling failures of {esc(a)}</h2>",
           "<p class='note'>Questions " + esc(a) + " gets wrong" + (f" — first those the baseline {esc(b)} gets right" if b else "")
           + ", in its weakest slices first, one per document before a second.</p>"]
    if told.empty:
        out.append(f"<p class='message'>{esc(a)} answers every shared question right.</p></section>")
        return "".join(out)
    gold = {q.qid: q for q in (ws.gold.items if ws is not None else [])}
    for qid, row in told.iterrows():
        q = an.questions.loc[qid]
        g = gold.get(qid)
        thumb = evidence_thumbnail(g, ws) if g is not None else None
        missing = ("no evidence page: the document is not in docs/ or the question names no evidence page"
                   if g is not None else "no document")
        scores_a = " · ".join(f"{C.METRIC_LABELS[m]} {pct(row[f'{m}_a'], 0)} %" for m in C.METRICS)
        answers = [f"<div><div class='label'>{esc(a)} (A) — {scores_a}</div><pre>{esc(row['prediction_a']) or '(empty)'}</pre></div>"]
        if b:
            scores_b = " · ".join(f"{C.METRIC_LABELS[m]} {pct(row[f'{m}_b'], 0)} %" for m in C.METRICS)
            answers.append(f"<div><div class='label'>{esc(b)} (B) — {scores_b}</div><pre>{esc(row['prediction_b']) or '(empty)'}</pre></div>")
        diff = (f"<div class='label'>Character difference A → B (<del>only in A</del> <ins>only in B</ins>)</div>"
                f"<pre>{diff_html(str(row['prediction_a']), str(row['prediction_b']))}</pre>") if b else ""
        why = ", ".join(row["why"]) if row["why"] else "—"
        outcome = {C.ONLY_B: f"only {b} right", C.BOTH_WRONG: "both wrong"}.get(row["flip"], row["flip"]) if b else "wrong"
        out.append(
            f"<article class='failure'><div><h3>{esc(qid)} · {esc(outcome)}</h3>"
            f"<div class='note'>{esc(q.get('answer_format', ''))} · {esc(q.get('reasoning_type', ''))} · {esc(q.get('document', ''))}"
            f" · weak slices: {esc(why)}</div>"
            f"<div class='label'>Question</div><pre>{esc(q.get('question', ''))}</pre>"
            f"<div class='label'>Gold answer</div><pre>{esc(q.get('gold', ''))}</pre>"
            f"<div class='pair'>{''.join(answers)}</div>{diff}</div>"
            f"<div>{thumb_html(thumb, missing)}</div></article>")
    out.append("</section>")
    return "".join(out)


def _method(settings: C.Settings) -> str:
    return ("<section><h2>How to read this</h2><p class='note'>Scores are means over questions in percent; differences in "
            "percentage points (pp). Intervals are 95 % percentile bootstrap intervals from resampling questions "
            f"({settings.resamples:,} resamples, seed {settings.seed}); for two runs the questions are resampled in pairs. "
            "A question counts as right when its Accuracy is at least 0.5. McNemar's exact test uses only the questions "
            "one run gets right and the other wrong; across slices its p-values are Holm-adjusted. Slices under 20 questions "
            "are marked “(few)”: their intervals are wide. A question with several evidence sources counts in each.</p></section>")


# ----------------------------------------------------------------------------- command line

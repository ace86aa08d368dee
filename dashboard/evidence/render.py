"""Rendering document pages to PNG and drawing boxes on them. No streamlit here.

A rendered page comes with the matrix that maps a rectangle in `Page.search_for` space
(unrotated points, origin at the CropBox's top-left corner; what dashboard/evidence/locate.py returns)
to pixels of the image: rotation, CropBox offset and zoom included, so boxes line up on rotated
pages, cropped pages and documents whose pages differ in size.

PDFs and page images (PNG, JPG, ... as in DocVQA) are opened the same way by PyMuPDF. Open,
render and close happen inside one call under the module-level lock shared with the workspace:
PyMuPDF is not thread-safe and Streamlit runs sessions in threads. A render is capped in pixels; a
heavy page (large compressed content streams or images: dashboard/documents/pdf.py heavy_page) is
rendered by a worker process with a time budget, never under the lock.
Caching (PNG bytes keyed by file, mtime, page and zoom) lives in dashboard/shell/cache.py.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dashboard.documents.guard import PDF_LOCK, heavy_page
from dashboard.documents.pagetext import Rect
from dashboard.documents.pdf import (
    REFUSED,
    DocumentError,
    WorkRefused,
    damage_reason,
    mtime,
    mupdf_errors,
    open_document,
    run_limited,
)

MAX_PIXELS = 12_000_000  # a render never has more pixels than this (about 3,500 × 3,500)
MAX_SIDE = 6_000  # nor a side longer than this
ZOOMS = (0.75, 1.0, 1.5, 2.0, 3.0)

# Okabe & Ito's palette, safe for the common forms of colour blindness.
GOLD_EVIDENCE = "#009E73"  # bluish green
GOLD_BOX = "#56B4E9"  # sky blue
GOLD_ANSWER = "#E69F00"  # orange
RUN_COLOURS = ("#D55E00", "#CC79A7", "#0072B2", "#F0E442", "#000000")  # vermillion, purple, blue, yellow, black
SWATCHES = {GOLD_EVIDENCE: "green", GOLD_BOX: "blue", GOLD_ANSWER: "orange", "#D55E00": "red", "#CC79A7": "violet",
            "#0072B2": "blue", "#F0E442": "yellow", "#000000": "gray"}  # nearest Streamlit Markdown colour


@dataclass(frozen=True)
class Rendered:
    png: bytes
    width: int  # pixels
    height: int
    zoom: float  # the zoom used (lower than asked when capped)
    matrix: tuple[float, float, float, float, float, float]  # search_for space -> pixels
    page: int  # 1-based
    page_count: int
    points: tuple[float, float]  # the page's unrotated width and height in points
    rotation: int
    capped: bool = False


def capped_zoom(width_pt: float, height_pt: float, zoom: float) -> tuple[float, bool]:
    """The zoom to render at: `zoom`, lowered so the image stays within MAX_PIXELS and MAX_SIDE."""
    w, h = max(width_pt, 1.0) * zoom, max(height_pt, 1.0) * zoom
    factor = min(1.0, math.sqrt(MAX_PIXELS / (w * h)), MAX_SIDE / w, MAX_SIDE / h)
    return (zoom * factor, factor < 1.0)


def render_page(path: Path, page: int, zoom: float = 1.0) -> Rendered:
    """Page `page` (1-based) of a PDF or image as PNG bytes; raises DocumentError for a page the
    document does not have, a file that cannot be opened or is damaged, and a heavy page
    (pdf.heavy_page) whose render in a worker process did not finish within pdf.WORK_BUDGET_S."""
    key = (str(path), mtime(path), page, zoom)
    refused = REFUSED.get(key)
    if refused is not None:
        raise WorkRefused(refused)
    with PDF_LOCK:
        with mupdf_errors(path, f"page {page}"), open_document(path) as doc:
            n = doc.page_count
            if not 1 <= page <= n:
                raise DocumentError(f"page {page} is beyond the document ({n} page{'s' if n != 1 else ''})")
            p = doc[page - 1]
            heavy = heavy_page(doc, p, zoom)  # its render's size too (issue 29.5)
            if heavy is None:
                return _render(p, path, page, n, zoom)
    # rendered by a worker process with a time budget, the lock not held meanwhile
    return run_limited(_render_job, (str(path), page, zoom), key, f"page {page} of {path.name}", "rendered", heavy)


def _render_job(path: str, page: int, zoom: float) -> Rendered:
    """render_page's rendering in a worker process (its own PyMuPDF: no lock)."""
    where = Path(path)
    with mupdf_errors(where, f"page {page}"), open_document(where) as doc:
        n = doc.page_count
        if not 1 <= page <= n:
            raise DocumentError(f"page {page} is beyond the document ({n} page{'s' if n != 1 else ''})")
        return _render(doc[page - 1], where, page, n, zoom)


def _render(p, path: Path, page: int, n: int, zoom: float) -> Rendered:
    import pymupdf

    z, capped = capped_zoom(p.rect.width, p.rect.height, zoom)
    try:
        pix = p.get_pixmap(matrix=pymupdf.Matrix(z, z), alpha=False)
    except Exception as exc:  # a damaged page (MuPDF's own error types included)
        raise DocumentError(f"page {page} of {path.name} cannot be rendered: this PDF is damaged: "
                            f"{damage_reason(exc, path)}") from None
    m = p.rotation_matrix * pymupdf.Matrix(z, z) * pymupdf.Matrix(1, 0, 0, 1, -pix.x, -pix.y)
    png = pix.tobytes("png")
    return Rendered(png, pix.width, pix.height, z, (m.a, m.b, m.c, m.d, m.e, m.f), page, n,
                    (p.cropbox.width, p.cropbox.height), p.rotation, capped)


def to_pixels(rect: Rect, matrix: Sequence[float]) -> Rect:
    """A rectangle in search_for space as (x0, y0, x1, y1) pixels of the rendered image."""
    a, b, c, d, e, f = matrix
    xs, ys = [], []
    for x, y in ((rect[0], rect[1]), (rect[2], rect[1]), (rect[0], rect[3]), (rect[2], rect[3])):
        xs.append(a * x + c * y + e)
        ys.append(b * x + d * y + f)
    return (min(xs), min(ys), max(xs), max(ys))


def from_normalised(box: Rect, width_pt: float, height_pt: float) -> Rect:
    """A 0–1 box (fractions of the page's unrotated width and height) in points."""
    return (box[0] * width_pt, box[1] * height_pt, box[2] * width_pt, box[3] * height_pt)


def looks_normalised(box: Rect) -> bool:
    """All four values within 0..1: a box in fractions of the page (a box of at most one point in
    PDF units is not a plausible evidence region)."""
    return all(0.0 <= v <= 1.0 for v in box)


@dataclass(frozen=True)
class Box:
    rect: Rect  # search_for space (points)
    colour: str  # "#RRGGBB"
    label: str
    layer: str
    dashed: bool = False
    fill: bool = True  # False: outline only (a frame around a whole cited page)


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return (int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16))


def draw_overlay(rendered: Rendered, boxes: Sequence[Box], width: int = 3, fill_alpha: int = 40) -> bytes:
    """The rendered page with each box drawn: a translucent fill and an opaque outline of the
    box's colour (dashed boxes: a dashed outline), as PNG bytes."""
    from PIL import Image, ImageDraw

    base = Image.open(io.BytesIO(rendered.png)).convert("RGBA")
    layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for box in (b for b in boxes if b.fill):
        x0, y0, x1, y1 = to_pixels(box.rect, rendered.matrix)
        x0, y0 = math.floor(x0) - 1, math.floor(y0) - 1
        x1, y1 = math.ceil(x1) + 1, math.ceil(y1) + 1
        draw.rectangle((x0, y0, x1, y1), fill=(*_rgb(box.colour), fill_alpha))
    out = Image.alpha_composite(base, layer)
    draw = ImageDraw.Draw(out)
    for box in boxes:
        x0, y0, x1, y1 = to_pixels(box.rect, rendered.matrix)
        x0, y0 = math.floor(x0) - 1, math.floor(y0) - 1
        x1, y1 = math.ceil(x1) + 1, math.ceil(y1) + 1
        rgb = _rgb(box.colour)
        if not box.dashed:
            draw.rectangle((x0 - width + 1, y0 - width + 1, x1 + width - 1, y1 + width - 1), outline=rgb, width=width)
        else:
            _dashed(draw, (x0, y0, x1, y1), rgb, width)
    buf = io.BytesIO()
    out.convert("RGB").save(buf, format="PNG", compress_level=1)  # 40 % faster, 5 % larger
    return buf.getvalue()


def _dashed(draw, rect, rgb, width, dash=8, gap=5) -> None:
    x0, y0, x1, y1 = rect
    for (ax, ay, bx, by) in ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)):
        length = math.hypot(bx - ax, by - ay)
        if length == 0:
            continue
        ux, uy = (bx - ax) / length, (by - ay) / length
        t = 0.0
        while t < length:
            e = min(t + dash, length)
            draw.line((ax + ux * t, ay + uy * t, ax + ux * e, ay + uy * e), fill=rgb, width=width)
            t = e + gap


def _rgba(colour: str, alpha: float) -> str:
    r, g, b = _rgb(colour)
    return f"rgba({r},{g},{b},{alpha})"


def _window(boxes: Sequence[Box], rendered: Rendered, m: float) -> tuple[float, float]:
    """The top-left corner (pixels) of the magnified view: centred on the first gold box of the page
    (evidence, then boxes, then answer), else the page's top-left corner; kept inside the page."""
    if m <= 1:
        return 0.0, 0.0
    w, h = rendered.width, rendered.height
    gold = [b for colour in (GOLD_EVIDENCE, GOLD_BOX, GOLD_ANSWER) for b in boxes if b.colour == colour]
    if not gold:
        return 0.0, 0.0
    x0, y0, x1, y1 = to_pixels(gold[0].rect, rendered.matrix)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return min(max(0.0, cx - w / m / 2), w - w / m), min(max(0.0, cy - h / m / 2), h - h / m)


def page_figure(rendered: Rendered, boxes: Sequence[Box], title: str = "", height: int | None = None,
                magnify: float = 1.0):
    """A Plotly figure: the page image with one outlined, translucent box per Box. Boxes of one
    layer share a legend entry (click it to hide the layer); hovering a box shows its label.
    Labels are escaped for Plotly (they may hold model output). Built in one go from plain dicts
    (a figure grown trace by trace and by update_* calls took several times longer to build).

    `magnify` > 1 shows 1/magnify of the page's width and height (around its first gold box, else its
    top-left corner) in the same box, so the
    page is magnified inside the chart whatever the column's width, and is moved by dragging (pan);
    a double click returns to that view. (A chart made taller instead was capped at the column's
    width by the browser and centred the page in blank space the page had to be scrolled through.)"""
    import base64

    import plotly.graph_objects as go

    from dashboard.core.escape import plotly_text

    w, h = rendered.width, rendered.height
    traces = []
    shown: set[str] = set()
    for box in boxes:
        x0, y0, x1, y1 = to_pixels(box.rect, rendered.matrix)
        x0, y0, x1, y1 = x0 - 2, y0 - 2, x1 + 2, y1 + 2
        traces.append(dict(
            type="scatter", x=[x0, x1, x1, x0, x0], y=[y0, y0, y1, y1, y0], mode="lines",
            fill="toself" if box.fill else "none", fillcolor=_rgba(box.colour, 0.18),
            line=dict(color=box.colour, width=2, dash="dash" if box.dashed else "solid"),
            name=plotly_text(box.layer), legendgroup=box.layer, showlegend=box.layer not in shown,
            hoveron="fills+points" if box.fill else "points", text=plotly_text(box.label),
            hovertemplate="%{text}<extra></extra>"))
        shown.add(box.layer)
    image = dict(source="data:image/png;base64," + base64.b64encode(rendered.png).decode("ascii"),
                 xref="x", yref="y", x=0, y=0, sizex=w, sizey=h, xanchor="left", yanchor="top",
                 sizing="stretch", layer="below")
    m = max(1.0, float(magnify))
    x0, y0 = _window(boxes, rendered, m)
    layout = dict(
        images=[image], xaxis=dict(range=[x0, x0 + w / m], visible=False, constrain="domain"),
        # the page at the top of the chart when the column is narrower than the page's aspect needs (at 800 px
        # it was centred in the chart's height: 90 px of blank above it, pushing it below the fold)
        yaxis=dict(range=[y0 + h / m, y0], visible=False, scaleanchor="x", constrain="domain", constraintoward="top"),
        height=height or max(420, min(1100, round(760 * h / max(w, 1)))), margin=dict(l=0, r=0, t=30 if title else 4, b=0),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0, title_text=""),
        plot_bgcolor="white", dragmode="pan" if m > 1 else "zoom", hoverlabel=dict(namelength=-1))
    if title:
        layout["title"] = dict(text=plotly_text(title), font=dict(size=13))
    return go.Figure(data=traces, layout=layout)

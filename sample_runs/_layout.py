"""Small deterministic page-layout engine on top of PyMuPDF (base-14 fonts only).

Used by make_sample.py. Everything drawn on a page goes through one `pymupdf.Shape`
per page, committed once in `Builder.save`, so each page has a single content stream.
Positions of the facts that the gold questions cite are recorded as *anchors*:
``anchors[key] = {"page": 1-based index, "quote": text on one line, "bbox": [..] or None}``.
"""

from __future__ import annotations

import pymupdf

A4 = (595.0, 842.0)
BLACK = (0, 0, 0)
GREY = (0.45, 0.45, 0.45)
RULE = (0.55, 0.55, 0.55)
LIGHT = (0.85, 0.85, 0.85)
FILL = (0.92, 0.93, 0.95)

BOLD = {"helv": "hebo", "tiro": "tibo", "cour": "cobo", "heit": "hebi", "tiit": "tibi"}
ITALIC = {"helv": "heit", "tiro": "tiit", "cour": "coit"}

_WIDTHS: dict[tuple[str, str, float], float] = {}


def text_width(s: str, font: str, size: float) -> float:
    total = 0.0
    for word in s.split(" "):
        k = (word, font, size)
        w = _WIDTHS.get(k)
        if w is None:
            w = pymupdf.get_text_length(word, fontname=font, fontsize=size)
            _WIDTHS[k] = w
        total += w
    k = (" ", font, size)
    if k not in _WIDTHS:
        _WIDTHS[k] = pymupdf.get_text_length(" ", fontname=font, fontsize=size)
    return total + _WIDTHS[k] * s.count(" ")


def wrap(text: str, width: float, font: str, size: float, protect=()) -> list[str]:
    """Greedy word wrap; substrings in `protect` are never broken across lines."""
    for p in protect:
        if p not in text:
            raise ValueError(f"protected span {p!r} not in text")
        text = text.replace(p, p.replace(" ", "\x00"))
    words = text.split()
    lines: list[str] = []
    cur = ""
    for w in words:
        trial = w if not cur else cur + " " + w
        if cur and text_width(trial.replace("\x00", " "), font, size) > width:
            lines.append(cur)
            cur = w
        else:
            cur = trial
    if cur:
        lines.append(cur)
    return [ln.replace("\x00", " ") for ln in lines]


class Recorder:
    """Stands in for a pymupdf.Shape: records drawing calls and replays them at save time.
    (PyMuPDF orphans earlier Page objects when a new page is inserted, so pages are only
    materialised in Builder.save, one at a time.)"""

    def __init__(self):
        self.ops = []

    def __getattr__(self, name):
        if name not in ("insert_text", "draw_line", "draw_rect", "draw_circle", "draw_polyline", "finish"):
            raise AttributeError(name)

        def rec(*args, **kw):
            self.ops.append((name, args, kw))
        return rec

    def replay(self, shape):
        for name, args, kw in self.ops:
            getattr(shape, name)(*args, **kw)


class Builder:
    def __init__(self, *, body_font="helv", body_size=10.0, margins=(64, 72, 64, 74),
                 lead=1.42, header=None, footer=None, heading_font=None, heading_color=BLACK,
                 page_size=A4):
        self.doc = pymupdf.open()
        self.W, self.H = page_size
        self.ml, self.mt, self.mr, self.mb = margins
        self.body_font = body_font
        self.body_size = body_size
        self.lead = lead
        self.heading_font = heading_font or BOLD[body_font]
        self.heading_color = heading_color
        self.header = header  # callable(pno) -> (left, right) or None
        self.footer = footer  # callable(pno) -> (left, right) or None
        self.pages: list[Recorder] = []
        self.anchors: dict[str, dict] = {}
        self.toc: list[tuple[int, str, int]] = []
        self.no_chrome: set[int] = set()
        self.columns = 1
        self.col = 0
        self.col_top = self.mt
        self.gap = 18.0
        self.new_page()

    # ----- geometry -------------------------------------------------------------
    @property
    def pno(self) -> int:
        return len(self.pages)

    @property
    def shape(self) -> Recorder:
        return self.pages[-1]

    @property
    def bottom(self) -> float:
        return self.H - self.mb

    @property
    def full_width(self) -> float:
        return self.W - self.ml - self.mr

    @property
    def cw(self) -> float:
        if self.columns == 1:
            return self.full_width
        return (self.full_width - self.gap) / 2

    @property
    def cx(self) -> float:
        if self.columns == 1 or self.col == 0:
            return self.ml
        return self.ml + self.cw + self.gap

    def new_page(self):
        self.pages.append(Recorder())
        self.y = self.mt
        self.col = 0
        self.col_top = self.mt

    def next_area(self):
        if self.columns == 2 and self.col == 0:
            self.col = 1
            self.y = self.col_top
        else:
            self.new_page()

    def ensure(self, h: float):
        if self.y + h > self.bottom:
            self.next_area()

    def page_break(self):
        if self.y > self.col_top + 1 or self.col == 1:
            self.new_page()

    def begin_columns(self):
        self.columns = 2
        self.col = 0
        self.col_top = self.y

    def end_columns(self):
        if self.col == 1:
            self.new_page()
        self.columns = 1
        self.col = 0

    def space(self, h: float):
        self.y += h

    # ----- primitives -----------------------------------------------------------
    def text(self, x, y, s, font=None, size=None, color=BLACK, rotate=0):
        self.shape.insert_text((x, y), s, fontname=font or self.body_font,
                               fontsize=size or self.body_size, color=color, rotate=rotate)

    def text_right(self, x1, y, s, font=None, size=None, color=BLACK):
        font = font or self.body_font
        size = size or self.body_size
        self.text(x1 - text_width(s, font, size), y, s, font, size, color)

    def text_center(self, xc, y, s, font=None, size=None, color=BLACK):
        font = font or self.body_font
        size = size or self.body_size
        self.text(xc - text_width(s, font, size) / 2, y, s, font, size, color)

    def line(self, p1, p2, color=RULE, width=0.5, dashes=None):
        self.shape.draw_line(p1, p2)
        self.shape.finish(color=color, width=width, dashes=dashes)

    def rect(self, r, color=RULE, fill=None, width=0.5):
        self.shape.draw_rect(pymupdf.Rect(r))
        self.shape.finish(color=color, fill=fill, width=width)

    def arrow(self, p1, p2, color=BLACK, width=0.8):
        p1, p2 = pymupdf.Point(p1), pymupdf.Point(p2)
        self.shape.draw_line(p1, p2)
        self.shape.finish(color=color, width=width)
        d = p2 - p1
        n = abs(d) or 1.0
        u = pymupdf.Point(d.x / n, d.y / n)
        v = pymupdf.Point(-u.y, u.x)
        a = p2 - u * 6 + v * 3
        b = p2 - u * 6 - v * 3
        self.shape.draw_polyline([p2, a, b, p2])
        self.shape.finish(color=color, fill=color, width=width, closePath=True)

    def anchor(self, key, quote, bbox=None, page=None):
        if key in self.anchors:
            raise KeyError(f"duplicate anchor {key}")
        self.anchors[key] = {"page": page or self.pno, "quote": quote,
                             "bbox": [round(v, 1) for v in bbox] if bbox else None}

    # ----- flowing content ------------------------------------------------------
    def para(self, text, font=None, size=None, marks=None, indent=0.0, after=None,
             color=BLACK, first_indent=0.0):
        font = font or self.body_font
        size = size or self.body_size
        marks = marks or {}
        lh = size * self.lead
        width = self.cw - indent
        lines = wrap(text, width - first_indent, font, size, protect=list(marks.values()))
        # re-wrap lines after the first at full width
        if first_indent and len(lines) > 1:
            rest = " ".join(lines[1:])
            prot = [m for m in marks.values() if m in rest]
            lines = lines[:1] + wrap(rest, width, font, size, protect=prot)
        found = {}
        for i, ln in enumerate(lines):
            self.ensure(lh)
            x = self.cx + indent + (first_indent if i == 0 else 0)
            self.text(x, self.y + size, ln, font, size, color)
            for k, m in marks.items():
                if k not in found and m in ln:
                    found[k] = True
                    self.anchor(k, m)
            self.y += lh
        missing = set(marks) - set(found)
        if missing:
            raise ValueError(f"marks not placed on one line: {missing}")
        self.y += size * 0.6 if after is None else after

    def heading(self, text, level=1, toc=True, anchor=None, keep=60):
        sizes = {0: 20, 1: 15, 2: 12, 3: 10.5}
        size = sizes[level]
        if level <= 1 and self.columns == 1:
            keep = max(keep, 90)
        self.ensure(size * 1.6 + keep)
        if self.y > self.col_top + 1:
            self.y += size * 0.7
        font = self.heading_font
        lines = wrap(text, self.cw, font, size)
        for ln in lines:
            self.text(self.cx, self.y + size, ln, font, size, self.heading_color)
            self.y += size * 1.3
        self.y += size * 0.35
        if toc:
            self.toc.append((level, text, self.pno))
        if anchor:
            self.anchor(anchor, lines[0])

    def bullets(self, items, marks=None, size=None, bullet="-", font=None):
        size = size or self.body_size
        marks = marks or {}
        for it in items:
            sub = {k: v for k, v in marks.items() if v in it}
            self.ensure(size * self.lead)
            self.text(self.cx + 6, self.y + size, bullet, font, size)
            self.para(it, font=font, size=size, marks=sub, indent=18, after=2)

    # ----- tables ---------------------------------------------------------------
    def table(self, caption, header, rows, widths, *, size=8.5, align=None, anchors=None,
              split_at=None, grid=False, caption_anchor=None, note=None, bold_rows=(),
              font=None, cap_font=None):
        """Ruled table; splits across pages (repeating the header) when it does not fit.

        widths: fractions of the current column width. align: per column 'l' or 'r'.
        anchors: key -> (row index, col index): records the page of that cell (quote = cell text).
        split_at: force a page break before this row index (for a table that continues).
        """
        font = font or self.body_font
        bfont = BOLD.get(font, font)
        cap_font = cap_font or bfont
        ncol = len(header)
        align = align or (["l"] + ["r"] * (ncol - 1))
        anchors = anchors or {}
        pad = 3.0
        lh = size * 1.25
        total_w = self.cw
        colw = [f * total_w for f in widths]

        def cell_lines(row, fnt):
            return [wrap(str(c), colw[j] - 2 * pad, fnt, size) or [""] for j, c in enumerate(row)]

        def row_h(lines):
            return max(len(c) for c in lines) * lh + 2 * pad + 1

        head_lines = cell_lines(header, bfont)
        hh = row_h(head_lines)

        def draw_caption(cont):
            cap = caption + (" (continued)" if cont else "")
            for ln in wrap(cap, total_w, cap_font, size + 1):
                self.text(self.cx, self.y + size + 1, ln, cap_font, size + 1)
                self.y += (size + 1) * 1.35
            if caption_anchor and not cont:
                self.anchor(caption_anchor, wrap(caption, total_w, cap_font, size + 1)[0])
            self.y += 2

        def draw_row(lines, y, fnt, fill=None, h=None):
            x = self.cx
            h = h or row_h(lines)
            if fill:
                self.rect((x, y, x + total_w, y + h), color=None, fill=fill, width=0)
            for j, cl in enumerate(lines):
                for i, ln in enumerate(cl):
                    ty = y + pad + size + i * lh - 1
                    if align[j] == "r":
                        self.text_right(x + colw[j] - pad, ty, ln, fnt, size)
                    elif align[j] == "c":
                        self.text_center(x + colw[j] / 2, ty, ln, fnt, size)
                    else:
                        self.text(x + pad, ty, ln, fnt, size)
                x += colw[j]
            return h

        def vlines(y0, y1):
            if not grid:
                return
            x = self.cx
            xs = [x]
            for w in colw:
                x += w
                xs.append(x)
            for xv in xs:
                self.shape.draw_line((xv, y0), (xv, y1))
            self.shape.finish(color=RULE, width=0.4)

        def start(cont):
            self.ensure((size + 1) * 1.35 + hh + 2 * lh + 10)
            draw_caption(cont)
            top = self.y
            self.line((self.cx, top), (self.cx + total_w, top), BLACK, 0.9)
            draw_row(head_lines, top, bfont, fill=FILL, h=hh)
            self.y = top + hh
            self.line((self.cx, self.y), (self.cx + total_w, self.y), BLACK, 0.6)
            return top

        top = start(False)
        broken = False
        for i, row in enumerate(rows):
            fnt = bfont if i in bold_rows else font
            lines = cell_lines(row, fnt)
            h = row_h(lines)
            if self.y + h > self.bottom or (split_at is not None and i == split_at and not broken):
                broken = True
                self.line((self.cx, self.y), (self.cx + total_w, self.y), BLACK, 0.9)
                vlines(top, self.y)
                self.next_area()
                top = start(True)
            draw_row(lines, self.y, fnt, h=h)
            for k, (ri, ci) in anchors.items():
                if ri == i:
                    if len(lines[ci]) != 1:
                        raise ValueError(f"anchored cell {k} wraps")
                    self.anchor(k, str(row[ci]))
            self.y += h
            if i < len(rows) - 1:
                self.line((self.cx, self.y), (self.cx + total_w, self.y), LIGHT, 0.4)
        self.line((self.cx, self.y), (self.cx + total_w, self.y), BLACK, 0.9)
        vlines(top, self.y)
        self.y += 4
        if note:
            for ln in wrap(note, total_w, ITALIC.get(font, font), size - 0.5):
                self.ensure(size * 1.3)
                self.text(self.cx, self.y + size - 0.5, ln, ITALIC.get(font, font), size - 0.5, GREY)
                self.y += size * 1.25
        self.y += 10

    # ----- charts ---------------------------------------------------------------
    def _figure_caption(self, caption, key, size, x0, width, bbox, font):
        """Caption under a chart or figure; the anchor's bbox covers the drawing and its caption."""
        lines = wrap(caption, width, font, size)
        for ln in lines:
            self.text(x0, self.y + size, ln, font, size)
            self.y += size * 1.3
        bbox = (bbox[0], bbox[1], bbox[2], self.y + 2)
        self.anchor(key, lines[0], bbox=bbox)
        self.y += 10

    def bar_chart(self, caption, cats, values, *, key, ylabel, ymax, ystep, height=200,
                  fmt="{:.1f}", color=(0.18, 0.38, 0.62), highlight=None, xlabel=None,
                  size=7.5, series2=None, legend=None, cap_font=None):
        """Vertical bar chart with gridlines, tick labels, axis titles and value labels.
        series2: optional second value list drawn as a paired lighter bar."""
        cap_font = cap_font or BOLD[self.body_font]
        total_h = height + 14 + 2 * 12
        self.ensure(total_h)
        x0, y0 = self.cx, self.y
        w = self.cw
        left, right, top, bot = x0 + 46, x0 + w - 8, y0 + 14, y0 + height - 30
        font = self.body_font
        # gridlines + y ticks
        v = 0.0
        while v <= ymax + 1e-9:
            yy = bot - (bot - top) * v / ymax
            self.line((left, yy), (right, yy), LIGHT if v else BLACK, 0.4 if v else 0.8)
            self.text_right(left - 4, yy + 2.5, (f"{v:,.0f}" if ystep >= 1 else f"{v:.1f}"), font, size)
            v += ystep
        self.line((left, top - 4), (left, bot), BLACK, 0.8)
        # y axis title (rotated)
        self.text(x0 + 9, (top + bot) / 2 + text_width(ylabel, font, size) / 2, ylabel, font, size,
                  rotate=90)
        n = len(cats)
        slot = (right - left) / n
        bw = slot * (0.34 if series2 else 0.56)
        for i, (c, val) in enumerate(zip(cats, values)):
            cxm = left + slot * (i + 0.5)
            col = color if (highlight is None or i == highlight) else (0.55, 0.67, 0.82)
            if series2:
                v2 = series2[i]
                h2 = (bot - top) * v2 / ymax
                xa = cxm - bw - 1
                self.rect((xa, bot - h2, xa + bw, bot), color=None, fill=(0.7, 0.78, 0.88), width=0)
                self.text_center(xa + bw / 2, bot - h2 - 3, fmt.format(v2), font, size - 0.5, GREY)
                xb = cxm + 1
            else:
                xb = cxm - bw / 2
            h = (bot - top) * val / ymax
            self.rect((xb, bot - h, xb + bw, bot), color=None, fill=col, width=0)
            self.text_center(xb + bw / 2, bot - h - 3, fmt.format(val), font, size - 0.5)
            parts = wrap(c, slot - 2, font, size)
            for k, p in enumerate(parts[:2]):
                self.text_center(cxm, bot + 10 + k * (size + 1.5), p, font, size)
        if xlabel:
            self.text_center((left + right) / 2, bot + 31, xlabel, font, size)
        if legend:
            lx = right - 150
            for k, (name, col) in enumerate(legend):
                self.rect((lx + k * 78, top - 12, lx + k * 78 + 8, top - 5), color=None, fill=col, width=0)
                self.text(lx + k * 78 + 11, top - 5, name, font, size)
        bbox = (x0, y0, x0 + w, y0 + height)
        self.y = y0 + height + 4
        self._figure_caption(caption, key, size + 1, x0, w, bbox, cap_font)
        return bbox

    def line_chart(self, caption, xcats, series, *, key, ylabel, ymin, ymax, ystep, xlabel,
                   height=210, size=7.5, label_points=False, fmt="{:.1f}", cap_font=None):
        """series: list of (name, values, color, dashes)."""
        cap_font = cap_font or BOLD[self.body_font]
        self.ensure(height + 30)
        x0, y0 = self.cx, self.y
        w = self.cw
        left, right, top, bot = x0 + 46, x0 + w - 10, y0 + 22, y0 + height - 30
        font = self.body_font

        def Y(v):
            return bot - (bot - top) * (v - ymin) / (ymax - ymin)

        v = ymin
        while v <= ymax + 1e-9:
            yy = Y(v)
            self.line((left, yy), (right, yy), LIGHT if v != ymin else BLACK, 0.4 if v != ymin else 0.8)
            self.text_right(left - 4, yy + 2.5, (f"{v:,.0f}" if ystep >= 1 else f"{v:.1f}"), font, size)
            v += ystep
        self.line((left, top - 4), (left, bot), BLACK, 0.8)
        self.text(x0 + 9, (top + bot) / 2 + text_width(ylabel, font, size) / 2, ylabel, font, size,
                  rotate=90)
        n = len(xcats)
        step = (right - left) / n

        def X(i):
            return left + step * (i + 0.5)

        for i, c in enumerate(xcats):
            self.line((X(i), bot), (X(i), bot + 3), BLACK, 0.6)
            self.text_center(X(i), bot + 11, str(c), font, size)
        self.text_center((left + right) / 2, bot + 24, xlabel, font, size)
        for k, (name, vals, col, dashes) in enumerate(series):
            pts = [pymupdf.Point(X(i), Y(val)) for i, val in enumerate(vals)]
            self.shape.draw_polyline(pts)
            self.shape.finish(color=col, width=1.4, dashes=dashes, closePath=False)
            for i, p in enumerate(pts):
                self.shape.draw_circle(p, 2.0)
                self.shape.finish(color=col, fill=col, width=0.5)
                if label_points:
                    dy = -5 if k == 0 else 10
                    self.text_center(p.x, p.y + dy, fmt.format(vals[i]), font, size - 0.5, col)
            lx = left + 8 + k * 120
            self.line((lx, y0 + 6), (lx + 16, y0 + 6), col, 1.4, dashes)
            self.text(lx + 20, y0 + 8.5, name, font, size)
        bbox = (x0, y0, x0 + w, y0 + height)
        self.y = y0 + height + 4
        self._figure_caption(caption, key, size + 1, x0, w, bbox, cap_font)
        return bbox

    def box(self, r, lines, *, size=8, fill=FILL, color=BLACK, font=None, bold_first=False):
        r = pymupdf.Rect(r)
        self.rect(r, color=color, fill=fill, width=0.7)
        font = font or self.body_font
        total = len(lines) * size * 1.25
        yy = r.y0 + (r.height - total) / 2 + size
        for i, ln in enumerate(lines):
            f = BOLD.get(font, font) if (bold_first and i == 0) else font
            self.text_center((r.x0 + r.x1) / 2, yy, ln, f, size)
            yy += size * 1.25

    # ----- finishing ------------------------------------------------------------
    def save(self, path, metadata, before_commit=None):
        n = self.pno
        for i, shape in enumerate(self.pages, start=1):
            if i in self.no_chrome:
                continue
            if self.header:
                left, right = self.header(i, n)
                yb = self.mt - 24
                if left:
                    shape.insert_text((self.ml, yb), left, fontname=self.body_font, fontsize=7.5, color=GREY)
                if right:
                    wr = text_width(right, self.body_font, 7.5)
                    shape.insert_text((self.W - self.mr - wr, yb), right, fontname=self.body_font,
                                      fontsize=7.5, color=GREY)
                shape.draw_line((self.ml, yb + 5), (self.W - self.mr, yb + 5))
                shape.finish(color=RULE, width=0.5)
            if self.footer:
                left, right = self.footer(i, n)
                yb = self.H - self.mb + 38
                shape.draw_line((self.ml, yb - 12), (self.W - self.mr, yb - 12))
                shape.finish(color=RULE, width=0.5)
                if left:
                    shape.insert_text((self.ml, yb), left, fontname=self.body_font, fontsize=7.5, color=GREY)
                if right:
                    wr = text_width(right, self.body_font, 8)
                    shape.insert_text((self.W - self.mr - wr, yb), right, fontname=self.body_font,
                                      fontsize=8, color=BLACK)
        if before_commit:
            before_commit(self)
        for rec in self.pages:
            page = self.doc.new_page(width=self.W, height=self.H)
            shape = page.new_shape()
            rec.replay(shape)
            shape.commit()
        meta = {"creator": "sample_runs/make_sample.py", "producer": "PyMuPDF (pymupdf-lite)",
                "creationDate": "D:20240301120000Z", "modDate": "D:20240301120000Z",
                "subject": "", "keywords": "", "trapped": ""}
        meta.update(metadata)
        self.doc.set_metadata(meta)
        self.doc.save(path, garbage=4, deflate=True, no_new_id=True)
        self.doc.close()
        return n

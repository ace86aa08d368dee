"""The one lock of PDF access, and what may be done under it. PyMuPDF is not thread-safe and Streamlit
runs sessions in threads: every open, read, render and close happens inside one call holding
PDF_LOCK (dashboard/documents/pdf.py and ocr.py, dashboard/evidence/render.py). A page too heavy to read or render within
about a second (`heavy_page`, judged from bounded work: raw stream sizes, content inflated at most
HEAVY_CONTENT_BYTES, counts of forms and image pixels, the render's size) is never worked on under
it: pdf.py sends it to a worker process with a time budget. No streamlit here.

What a hold costs on this machine (issue 29.5; bench-free numbers from tests/test_pdf_lock_holds.py):
MuPDF interprets about 0.3 MB of content a second when it extracts characters (a page of 400,000
glyphs in a 3 KB Flate stream: 1.4 s), draws a form XObject in about 0.4 ms, decodes an image at
about 50 megapixels a second, and encodes a rendered PNG at about 25 megapixels a second. The
thresholds keep one page's hold near a quarter of a second."""

from __future__ import annotations

import re
import threading
import zlib

PDF_LOCK = threading.Lock()  # PyMuPDF is not thread-safe; Streamlit runs sessions in threads
HEAVY_STREAM_BYTES = 256_000  # compressed content and form streams of a page beyond this: a worker's job
HEAVY_CONTENT_BYTES = 128 * 1024  # so is content that inflates beyond this (a text bomb: small stream, many glyphs)
FORM_COST_BYTES = 256  # one form XObject drawn costs about as much as this much content
HEAVY_FORMS = 512  # a page drawing more form XObjects than this is a worker's job (counted before any is read)
HEAVY_IMAGE_PIXELS = 16_000_000  # so are images with more pixels than this in all (39 MP of noise: 0.7 s to render)
HEAVY_RENDER_PIXELS = 6_000_000  # and a render with more pixels than this (its PNG: 0.25 s; 12 MP: 1 s)
UNKNOWN_FILTER_RATIO = 8  # a stream under a filter not inflated here (LZW, ASCII85, ...) counts this many times its size

_NAMES = re.compile(r"/([A-Za-z0-9]+)")


def _content_bytes(doc, xref: int, raw: bytes, cap: int) -> int:
    """How many bytes stream `xref` (raw bytes `raw`) inflates to, counted no further than `cap`:
    none or Flate is inflated at most `cap` + 1 bytes (bounded work however large the bomb); another
    filter is estimated at UNKNOWN_FILTER_RATIO times its raw size."""
    try:
        kind, value = doc.xref_get_key(xref, "Filter")
    except (RuntimeError, ValueError):
        kind, value = "null", ""
    names = _NAMES.findall(value) if kind in ("name", "array") else []
    if not names:
        return len(raw)
    if names in (["FlateDecode"], ["Fl"]):
        try:
            return len(zlib.decompressobj().decompress(raw, cap + 1))
        except zlib.error:  # MuPDF reads what it can of a damaged stream: about its raw size
            return len(raw)
    return len(raw) * UNKNOWN_FILTER_RATIO


def heavy_page(doc, p, zoom: float | None = None) -> str | None:
    """Why page `p` of the open document is too heavy to read or render under the lock ("1.0 MB of
    compressed content streams", "0.4 MB of content", "900 form XObjects", "60,000,000 image
    pixels", and with the render's `zoom`: "8,300,000 pixels to render"), or None for an ordinary
    page (and, but for the render's size, for a page image, whose size the render's pixel cap bounds).
    Its own work is bounded: at most HEAVY_CONTENT_BYTES + 1 bytes inflated, no form read when
    there are more than HEAVY_FORMS."""
    if zoom is not None:
        pixels = abs(p.rect.width * p.rect.height) * zoom * zoom
        if pixels > HEAVY_RENDER_PIXELS:
            return f"{pixels:,.0f} pixels to render"
    if not doc.is_pdf:
        return None
    contents = [x for x in p.get_contents() if x > 0]
    try:
        forms = {x[0] for x in p.get_xobjects() if x[0] > 0}
    except (RuntimeError, ValueError):  # a broken resource dictionary: judged by the contents alone
        forms = set()
    if len(forms) > HEAVY_FORMS:
        return f"{len(forms):,} form XObjects"
    size = content = 0
    for x in [*contents, *sorted(forms - set(contents))]:
        if not doc.xref_is_stream(x):
            continue
        raw = doc.xref_stream_raw(x)
        size += len(raw)
        if content <= HEAVY_CONTENT_BYTES:
            content += _content_bytes(doc, x, raw, HEAVY_CONTENT_BYTES - content)
    if size > HEAVY_STREAM_BYTES:
        return f"{size / 1e6:.1f} MB of compressed content streams"
    cost = content + FORM_COST_BYTES * len(forms)
    if cost > HEAVY_CONTENT_BYTES:
        return f"{content / 1e6:.1f} MB of content and {len(forms):,} form XObjects to interpret"
    pixels = sum(max(0, int(im[2])) * max(0, int(im[3])) for im in p.get_images(full=True))
    if pixels > HEAVY_IMAGE_PIXELS:
        return f"{pixels:,} image pixels"
    return None

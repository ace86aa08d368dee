"""The one lock of PDF access, and what may be done under it. PyMuPDF is not thread-safe and Streamlit
runs sessions in threads: every open, read, render and close happens inside one call holding
PDF_LOCK (dashboard/evidence/pdf.py, render.py, ocr.py). A page too heavy to read or render within
about a second (`heavy_page`, judged from raw sizes, nothing inflated) is never worked on under it:
pdf.py sends it to a worker process with a time budget. No streamlit here."""

from __future__ import annotations

import threading

PDF_LOCK = threading.Lock()  # PyMuPDF is not thread-safe; Streamlit runs sessions in threads
HEAVY_STREAM_BYTES = 256_000  # compressed content and form streams of a page beyond this: a worker's job
HEAVY_IMAGE_PIXELS = 40_000_000  # so are images with more pixels than this in all


def heavy_page(doc, p) -> str | None:
    """Why page `p` of the open document is too heavy to read or render under the lock ("1.0 MB of
    compressed content streams", "60,000,000 image pixels"), or None for an ordinary page (and for
    a page image, whose size the render's pixel cap bounds)."""
    if not doc.is_pdf:
        return None
    xrefs = set(p.get_contents())
    try:
        xrefs |= {x[0] for x in p.get_xobjects()}
    except (RuntimeError, ValueError):  # a broken resource dictionary: judged by the contents alone
        pass
    size = 0
    for x in xrefs:
        if x > 0 and doc.xref_is_stream(x):
            size += len(doc.xref_stream_raw(x))
    if size > HEAVY_STREAM_BYTES:
        return f"{size / 1e6:.1f} MB of compressed content streams"
    pixels = sum(max(0, int(im[2])) * max(0, int(im[3])) for im in p.get_images(full=True))
    if pixels > HEAVY_IMAGE_PIXELS:
        return f"{pixels:,} image pixels"
    return None

"""Damaged and hostile PDFs written byte by byte (issue 17 items 2 and 3): a page tree whose parent
chain has a cycle, one whose kids cycle, a `/Count 2147483648`, and a decompression bomb (a small
Flate content stream that inflates to many MiB of blanks)."""

from __future__ import annotations

import zlib
from pathlib import Path


def pdf_bytes(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; object 1 is the catalog) with a correct xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"

PARENT_CYCLE = pdf_bytes([  # three objects: the page's parent names the page as its parent
    CATALOG,
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 3 0 R >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"])

KIDS_CYCLE = pdf_bytes([  # the page tree's kid is a node whose kid is the root again
    CATALOG,
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>"])

HUGE_COUNT = pdf_bytes([
    CATALOG,
    b"<< /Type /Pages /Kids [3 0 R] /Count 2147483648 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"])


def bomb_bytes(mib: int) -> bytes:
    """One page whose Flate content stream inflates to `mib` MiB of blanks (about 1 KB per MiB)."""
    z = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    data = b"".join(z.compress(chunk) for _ in range(mib)) + z.flush()
    return pdf_bytes([
        CATALOG,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"])


DAMAGED = {"parent_cycle": PARENT_CYCLE, "kids_cycle": KIDS_CYCLE, "huge_count": HUGE_COUNT}


def write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.pdf"
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------- ordinary heavy pages (issue 29.5)
#
# Documents that are not damaged and not bombs by compressed size, but whose work under the PDF lock
# took just over a second: a page whose MediaBox has negative, very large coordinates; a document of
# 100,000 objects; a long document whose every page carries a lot of text; a page holding a
# 39-megapixel picture of noise (just under guard.HEAVY_IMAGE_PIXELS).


def negative_mediabox_bytes(extent: int = 14_400) -> bytes:
    """One page with MediaBox [-extent -extent 0 0] (a 400-inch square lying left of and below the
    origin) holding a little text at its corner."""
    content = b"BT /F1 24 Tf %d %d Td (negative mediabox page) Tj ET" % (-extent + 72, -extent + 72)
    return pdf_bytes([
        CATALOG,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [%d %d 0 0] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>" % (-extent, -extent),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def many_objects_bytes(objects: int = 100_000, pages: int = 200) -> bytes:
    """`pages` pages whose text is drawn by `objects` small form XObjects in all (one word each),
    every one a PDF object of its own: a document of about `objects` objects."""
    per_page = max(1, objects // pages)
    body: list[bytes] = [CATALOG, b""]  # object 2 (the page tree) is written last
    font = 3
    body.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for k in range(pages):
        first = len(body) + 4  # the page, its contents, its resources, then its forms
        names = b" ".join(b"/X%d %d 0 R" % (j, first + j) for j in range(per_page))
        content = b"".join(b"q 1 0 0 1 %d %d cm /X%d Do Q\n" % (20 + 60 * (j % 9), 20 + 10 * (j // 9 % 75), j)
                           for j in range(per_page))
        page_no = len(body) + 1
        kids.append(page_no)
        body.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources %d 0 R >>"
                    % (page_no + 1, page_no + 2))
        body.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        body.append(b"<< /XObject << " + names + b" >> >>")
        for j in range(per_page):
            form = b"BT /F1 6 Tf 0 0 Td (w%d.%d) Tj ET" % (k, j)
            body.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 60 10] /Resources << /Font << /F1 %d 0 R >> >> "
                        b"/Length %d >>\nstream\n" % (font, len(form)) + form + b"\nendstream")
    body[1] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % n for n in kids) + b"] /Count %d >>" % len(kids)
    return pdf_bytes(body)


def text_bomb_bytes(pages: int = 3_000, glyphs_per_page: int = 400_000) -> bytes:
    """`pages` pages sharing one Flate content stream that draws `glyphs_per_page` characters (small
    when compressed, far under guard.HEAVY_STREAM_BYTES: a text bomb, not a decompression bomb)."""
    line = b"(" + b"lorem ipsum dolor sit amet 12345 " * 3 + b") Tj 0 -1 Td\n"
    lines = max(1, glyphs_per_page // (len(line) - 10))
    content = zlib.compress(b"BT /F1 1 Tf 10 780 Td\n" + line * lines + b"ET", 9)
    body = [CATALOG, b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"]
    kids = []
    for _ in range(pages):
        kids.append(len(body) + 1)
        body.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                    b"/Resources << /Font << /F1 3 0 R >> >> >>")
    body[1] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % n for n in kids) + b"] /Count %d >>" % len(kids)
    return pdf_bytes(body)


def noise_page_bytes(megapixels: float = 39.0, seed: int = 29) -> bytes:
    """One letter page covered by a picture of grey noise of `megapixels` million pixels (seeded)."""
    import random

    side = int((megapixels * 1e6) ** 0.5)
    data = zlib.compress(random.Random(seed).randbytes(side * side), 1)
    return pdf_bytes([
        CATALOG,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /XObject << /Im 5 0 R >> >> >>",
        b"<< /Length 30 >>\nstream\nq 612 0 0 792 0 0 cm /Im Do Q\nendstream",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % (side, side, len(data)) + data + b"\nendstream"])

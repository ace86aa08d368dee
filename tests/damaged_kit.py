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

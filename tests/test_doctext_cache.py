"""Document text on disk (dashboard/documents/pdf.py, stored_text / store_text): a document read once
is read back after a restart without any PDF work; a tampered, truncated, foreign or symlinked entry
is read again; an incomplete reading is never stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from dashboard.documents import ocr, pdf
from dashboard.documents.pdf import WorkRefused

ROOT = Path(__file__).resolve().parent.parent
PAGES = 30  # over pdf.DISK_MIN_PAGES, under PARALLEL_MIN_PAGES (read in this process, where it is counted)


def _pdf(path: Path, pages: int = PAGES, word: str = "page") -> Path:
    doc = pymupdf.open()
    for k in range(pages):
        doc.new_page().insert_text((72, 72), f"{word} {k + 1} holds 1,250.5 units")
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("LENS_CACHE_DIR", str(folder))
    pdf.clear_caches()
    ocr.clear()
    yield folder / "doctext"
    pdf.clear_caches()
    ocr.clear()


@pytest.fixture
def reads(monkeypatch):
    """How many times a PDF is opened and pages are read in this process."""
    counts = {"open": 0, "pages": 0}
    real_open, real_pages = pdf.open_document, pdf._read_pages

    def opened(path):
        counts["open"] += 1
        return real_open(path)

    def paged(*args, **kwargs):
        counts["pages"] += 1
        return real_pages(*args, **kwargs)

    monkeypatch.setattr(pdf, "open_document", opened)
    monkeypatch.setattr(pdf, "_read_pages", paged)
    return counts


def _restart() -> None:
    """What a new process starts with: nothing in memory (the disk cache stays)."""
    pdf.clear_caches()
    ocr.clear()


def test_a_restart_reads_the_text_from_disk_without_pdf_work(cache, reads, tmp_path):
    path = _pdf(tmp_path / "manual.pdf")
    first = pdf.doc_text(path)
    assert reads["pages"] > 0 and len(first.pages) == PAGES and 1250.5 in first.numbers[3]
    assert len(list(cache.glob("*.json"))) == 1
    _restart()
    reads.update(open=0, pages=0)
    again = pdf.doc_text(path)
    assert reads == {"open": 0, "pages": 0}
    assert again.pages == first.pages and again.numbers == first.numbers
    assert pdf.page_count(path) == PAGES and reads["open"] == 0  # the count came with it
    assert pdf.doc_text(path) is again  # then from memory


def test_a_fresh_process_does_no_pdf_work_for_a_document_read_before(cache, tmp_path):
    path = _pdf(tmp_path / "manual.pdf")
    pdf.doc_text(path)
    script = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from dashboard.documents import pdf\n"
        "calls = []\n"
        "def no(*a, **k):\n"
        "    calls.append(a)\n"
        "    raise AssertionError('PDF work')\n"
        "pdf.open_document = no\n"
        "pdf._read_pages = no\n"
        "dt = pdf.doc_text(Path(sys.argv[1]))\n"
        "print(json.dumps({'calls': len(calls), 'pages': len(dt.pages), 'first': dt.pages[0]}))\n"
    )
    env = {**os.environ, "LENS_CACHE_DIR": str(cache.parent), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"calls": 0, "pages": PAGES, "first": pdf.doc_text(path).pages[0]}


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob("*.json")
    return entry


@pytest.mark.parametrize("damage", ["flip a byte of the text", "truncate", "other version", "other key",
                                    "page count", "not json"])
def test_a_damaged_entry_is_read_again_never_trusted(cache, reads, tmp_path, damage):
    path = _pdf(tmp_path / "manual.pdf")
    first = pdf.doc_text(path)
    entry = _entry(cache)
    data = entry.read_bytes()
    head, _, body = data.partition(b"\n")
    meta = json.loads(head)
    if damage == "flip a byte of the text":
        i = body.index(b"page 7 holds")
        data = head + b"\n" + body[:i] + b"PAGE" + body[i + 4:]
    elif damage == "truncate":
        data = data[: len(data) - 40]
    elif damage == "not json":
        data = b"\x00\xff garbage"
    else:
        if damage == "other version":
            meta["v"] = meta["v"] + 1
        elif damage == "other key":
            meta["sha256"] = "0" * 64
        else:  # a header that agrees with a body of another page count
            text, numbers = json.loads(body)
            body = json.dumps([text[:-1], numbers[:-1]]).encode()
            meta.update(bytes=len(body), digest=__import__("hashlib").sha256(body).hexdigest())
        data = json.dumps(meta).encode() + b"\n" + body
    entry.write_bytes(data)
    _restart()
    reads.update(open=0, pages=0)
    again = pdf.doc_text(path)
    assert reads["pages"] > 0, "a damaged entry was trusted"
    assert again.pages == first.pages and again.numbers == first.numbers
    _restart()
    reads.update(open=0, pages=0)
    assert pdf.doc_text(path).pages == first.pages and reads["pages"] == 0  # written again, good this time


def test_a_symlinked_entry_or_folder_is_not_used(cache, reads, tmp_path):
    path = _pdf(tmp_path / "manual.pdf")
    pdf.doc_text(path)
    entry = _entry(cache)
    elsewhere = tmp_path / "elsewhere.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    _restart()
    reads.update(open=0, pages=0)
    pdf.doc_text(path)
    assert reads["pages"] > 0, "an entry that is a symbolic link was followed"
    assert not entry.is_symlink() and elsewhere.exists()  # replaced by a real entry; the target left alone

    # the folder itself a symbolic link: neither read nor written through
    target = tmp_path / "target"
    cache.rename(target)
    cache.symlink_to(target, target_is_directory=True)
    before = sorted(p.name for p in target.iterdir())
    _restart()
    reads.update(open=0, pages=0)
    pdf.doc_text(_pdf(tmp_path / "other.pdf", word="leaf"))
    pdf.clear_caches()
    done = reads["pages"]
    pdf.doc_text(path)
    assert done > 0 and reads["pages"] > done, "a cache folder that is a symbolic link was used"
    assert sorted(p.name for p in target.iterdir()) == before


def test_an_incomplete_reading_is_not_stored(cache, tmp_path, monkeypatch):
    path = _pdf(tmp_path / "manual.pdf")
    # a heavy page refused by its worker: that page reads as empty, the document is not kept on disk
    monkeypatch.setattr(pdf, "heavy_page", lambda doc, p: "a heavy page" if p.number == 4 else None)

    def refuse(*args, **kwargs):
        raise WorkRefused("page 5 was not read")

    monkeypatch.setattr(pdf, "run_limited", refuse)
    assert pdf.doc_text(path).pages[4] == ""
    assert not list(cache.glob("*.json"))
    monkeypatch.undo()

    # pages left for OCR's next request (its page cap reached): not kept either
    monkeypatch.setenv("LENS_CACHE_DIR", str(cache.parent))
    _restart()
    real = ocr.fill_doc_pages
    monkeypatch.setattr(ocr, "fill_doc_pages", lambda *a, **k: (real(*a, **k)[0], False))
    pdf.doc_text(path)
    assert not list(cache.glob("*.json"))
    monkeypatch.setattr(ocr, "fill_doc_pages", real)
    _restart()
    pdf.doc_text(path)
    assert len(list(cache.glob("*.json"))) == 1  # complete: kept


def test_a_short_document_is_not_kept_and_a_changed_file_is_read_again(cache, reads, tmp_path):
    short = _pdf(tmp_path / "short.pdf", pages=pdf.DISK_MIN_PAGES - 1)
    pdf.doc_text(short)
    assert not cache.exists() or not list(cache.glob("*.json"))
    path = _pdf(tmp_path / "manual.pdf")
    pdf.doc_text(path)
    _pdf(path, word="changed")  # new content, new key
    _restart()
    reads.update(open=0, pages=0)
    assert pdf.doc_text(path).pages[0].startswith("changed") and reads["pages"] > 0
    assert len(list(cache.glob("*.json"))) == 2

"""Issue 27, item 2 (every chart): what the overview does after its leaderboard costs little.
Without an annotations database (a fresh machine) the overview reads no saved slice, note or
correction, imports no SQLAlchemy and creates no database file, and draws the failure-mode section
as the annotations panel would; with one, both are read as before. The located answers (the
evidence table) are kept on disk in the cache folder by their content: a server start reads them
back instead of locating every answer again, and a changed PDF or run locates again. The charts
are drawn last, each in its place."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from app_kit import app_on
from dashboard.annotations import store_panel
from dashboard.core.escape import md_escape
from dashboard.documents import ocr, pdf
from dashboard.evidence import locate_panel, locating
from dashboard.evidence import panel as evidence_panel
from dashboard.overview import panel as P
from dashboard.shell import cache as shell_cache

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"


# ----------------------------------------------------------------------------- no annotations database


def test_the_absent_file_is_where_the_database_module_puts_it(tmp_path, monkeypatch):
    from dashboard.annotations import location
    from dashboard.annotations import panel as notes_panel

    assert store_panel.FILE_NAME == location.FILE_NAME
    assert (P.SAMPLE_FILE, P.SAMPLE_DISMISSED) == (notes_panel.SAMPLE_FILE, notes_panel.SAMPLE_DISMISSED)
    monkeypatch.setattr(sys, "argv", ["app.py"])
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    assert store_panel.absent_file() == location.resolve_location() == tmp_path / "data" / "annotations.sqlite3"
    for url in (f"sqlite:///{tmp_path}/a.sqlite3", f"sqlite+pysqlite:///{tmp_path}/b.sqlite3", str(tmp_path / "c.db")):
        monkeypatch.setenv("LENS_DATABASE_URL", url)
        assert store_panel.absent_file() == location.resolve_location(), url
        location.resolve_location().write_bytes(b"")  # it exists now: read as before
        assert store_panel.absent_file() is None
    for url in ("postgresql://lens@localhost:5432/lens", "mysql://x@y/z", "sqlite:///"):
        monkeypatch.setenv("LENS_DATABASE_URL", url)
        assert store_panel.absent_file() is None, url  # a server, or a URL the store says is wrong
    monkeypatch.setattr(sys, "argv", ["app.py", "--annotations", str(tmp_path / "given.sqlite3")])
    assert store_panel.absent_file() == location.resolve_location(str(tmp_path / "given.sqlite3")) == tmp_path / "given.sqlite3"


CHILD = """
import json, os, sys
sys.path.insert(0, {tests!r})
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=180).run()
print(json.dumps({{"errors": [str(e.value) for e in at.exception], "sqlalchemy": "sqlalchemy" in sys.modules,
                  "db": os.path.exists(os.path.join(os.environ["LENS_DATA_DIR"], "annotations.sqlite3")),
                  "subheaders": [e.value for e in at.subheader], "buttons": [b.label for b in at.button],
                  "charts": len(at.get("plotly_chart"))}}))
"""


def test_without_a_database_the_overview_imports_no_sqlalchemy_and_creates_none(tmp_path):
    """In a fresh interpreter (SQLAlchemy is not loaded by anything before): the sample's overview."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env |= {"LENS_BENCHMARK": str(SAMPLE), "LENS_CACHE_DIR": str(tmp_path / "cache"), "LENS_DATA_DIR": str(tmp_path / "data")}
    code = CHILD.format(tests=str(ROOT / "tests"), app=str(ROOT / "dashboard" / "app.py"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["errors"] == []
    assert got["sqlalchemy"] is False and got["db"] is False
    assert got["subheaders"] == ["Leaderboard", "Breakdowns", "Where the answers are", "Failure modes"]
    assert "Import the sample's notes" in got["buttons"] and got["charts"] == 4


def _section(at) -> list[tuple[str, str]]:
    """The failure-mode section as drawn: each element's kind and text, from its heading on."""
    out: list[tuple[str, str]] = []
    for el in _walk(at.main):
        text = str(el.label if el.type == "button" else getattr(el, "value", ""))
        if out or (el.type == "subheader" and text == "Failure modes"):
            out.append((el.type, text))
    return out


def _walk(node):
    kind = getattr(node, "type", None)
    if kind not in (None, "block", "main", "sidebar", "root", "flex_container", "expandable", "tab_container",
                    "tab", "column", "vertical", "horizontal"):
        yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A new cache and user-data folder (no annotations database), and nothing located in memory."""
    monkeypatch.setenv("LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    _restart()
    yield tmp_path
    _restart()


def _restart() -> None:
    """What a new server process starts with: nothing located or read in memory (the disk kept)."""
    shell_cache.evidence_tables().clear()
    with locate_panel._DISK_LOCK:
        locate_panel._KEYS.clear()
        locate_panel._ON_DISK.clear()
    pdf.clear_caches()
    ocr.clear()


def test_the_failure_mode_section_is_the_same_with_an_empty_database_and_its_import_works(fresh, monkeypatch):
    from dashboard.annotations.store import AnnotationStore

    at = app_on(monkeypatch, SAMPLE, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    where = fresh / "data" / "annotations.sqlite3"
    assert not where.exists()
    without = _section(at)
    assert without[0] == ("subheader", "Failure modes")
    assert ("button", "Import the sample's notes") in without and ("caption", P.NO_TAGS) in without
    assert any(md_escape(str(where)) in text for _, text in without)  # the offer names the file the import will make

    AnnotationStore(where)  # an empty database, made as the store makes it
    assert store_panel.absent_file() is None
    with_db = app_on(monkeypatch, SAMPLE, timeout=180)
    assert not with_db.exception
    assert _section(with_db) == without

    where.unlink()
    for extra in where.parent.glob("annotations.sqlite3-*"):
        extra.unlink()
    store_panel.annotations_db.clear()  # the server's store object (of the file removed), forgotten
    at = app_on(monkeypatch, SAMPLE, timeout=180)
    assert store_panel.absent_file() == where
    at.button(key="ann_sample_ov").click().run()  # pressed on the section drawn without a database
    assert not at.exception, [e.value for e in at.exception]
    assert where.exists() and AnnotationStore(where).benchmarks()  # the sample's notes imported
    assert ("caption", P.NO_TAGS) not in _section(at)  # and their tags counted here


def test_not_now_hides_the_offer_without_a_database(fresh, monkeypatch):
    at = app_on(monkeypatch, SAMPLE, timeout=180)
    at.button(key="ann_sample_no_ov").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert ("button", "Import the sample's notes") not in _section(at)
    assert not (fresh / "data" / "annotations.sqlite3").exists()


# ----------------------------------------------------------------------------- the located answers on disk


def _counted(monkeypatch) -> list[pd.DataFrame]:
    """Every evidence_table computed by the app from now on (its result kept)."""
    made: list[pd.DataFrame] = []
    real = evidence_panel.evidence_table

    def counted(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(evidence_panel, "evidence_table", counted)
    return made


def _rates(at) -> pd.DataFrame:
    """The overview's evidence-rate table (the dataframe with the Answers searched column)."""
    return next(d.value for d in at.dataframe if "answers_searched" in d.value.columns)


def test_the_located_answers_are_read_back_from_disk_and_located_again_when_a_pdf_or_run_changes(fresh, monkeypatch):
    bench = fresh / "bench"
    shutil.copytree(SAMPLE, bench, ignore=shutil.ignore_patterns("annotations"))
    made = _counted(monkeypatch)
    at = app_on(monkeypatch, bench, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    assert len(made) == 1
    entries = list((fresh / "cache" / "located").glob("*.parquet"))
    assert len(entries) == 1
    first = _rates(at)
    # the entry holds the table as computed, value for value and dtype for dtype (NaN where it had None)
    back = locating.LocatedStore()._read(entries[0], entries[0].stem)
    pd.testing.assert_frame_equal(back, made[0])
    assert len(back) == 77 * 7 - 2 and back["answer_location"].isna().any()  # two answers missing in the sample

    _restart()  # a server start: read back, not located again
    at = app_on(monkeypatch, bench, timeout=180)
    assert not at.exception
    assert len(made) == 1
    pd.testing.assert_frame_equal(_rates(at), first)

    # a PDF changed (bytes appended after its end: the same pages): located again, under another name
    pdfs = sorted((bench / "docs").rglob("*.pdf"))
    assert pdfs
    with open(pdfs[0], "ab") as fh:
        fh.write(b"\n% changed\n")
    _restart()
    at = app_on(monkeypatch, bench, timeout=180)
    assert not at.exception
    assert len(made) == 2 and len(list((fresh / "cache" / "located").glob("*.parquet"))) == 2

    # a run's answer changed: located again
    run = bench / "runs" / "small-9b.jsonl"
    text = run.read_text(encoding="utf-8")
    assert '"answer": "warehousing"' in text
    run.write_text(text.replace('"answer": "warehousing"', '"answer": "a warehouse"'), encoding="utf-8")
    _restart()
    at = app_on(monkeypatch, bench, timeout=180)
    assert not at.exception
    assert len(made) == 3

    # a damaged entry is not trusted: located again and written anew
    newest = max((fresh / "cache" / "located").glob("*.parquet"), key=lambda p: p.stat().st_mtime_ns)
    newest.write_bytes(b"PAR1 not a table")
    _restart()
    at = app_on(monkeypatch, bench, timeout=180)
    assert not at.exception
    assert len(made) == 4
    pd.testing.assert_frame_equal(locating.LocatedStore()._read(newest, newest.stem), made[-1])


def test_a_located_entry_with_another_key_or_bad_values_is_a_miss(fresh):
    table = pd.DataFrame([
        {"question_id": "q1", "run": "a", "evidence_precision": 0.5, "evidence_recall": None, "grounding": None,
         "answer_location": "evidence_page", "answer_pages_evidence": [3], "answer_pages_elsewhere": []},
        {"question_id": "q2", "run": "a", "evidence_precision": None, "evidence_recall": 1.0, "grounding": 0.25,
         "answer_location": None, "answer_pages_evidence": [], "answer_pages_elsewhere": [1, 4]},
    ], columns=locating.COLUMNS).astype({c: "Float64" for c in ("evidence_precision", "evidence_recall", "grounding")})
    store = locating.LocatedStore()
    key, other = "a" * 64, "b" * 64
    path = store.put(key, table)
    assert path is not None
    pd.testing.assert_frame_equal(store.get(key), table)
    assert store.get(other) is None
    shutil.copy(path, store.path(other))  # another key's entry under this name
    assert store.get(other) is None and not store.path(other).exists()  # a miss, removed
    bad = table.copy()
    bad.loc[0, "answer_location"] = "somewhere"
    store.put(other, bad)
    assert store.get(other) is None
    worse = table.astype({"grounding": "float64"})
    worse.loc[1, "grounding"] = 7.0
    store.put(other, worse)
    assert store.get(other) is None


def test_located_answers_nobody_used_for_a_month_are_swept(fresh):
    """A changed run or PDF leaves its old located answers behind (their key names what they were made
    from): the sweep removes those unused for UNUSED_DAYS; a read or a second put of the same entry marks it
    used. Ages are set on the files."""
    import os
    import time

    from dashboard.core import digests as D

    table = pd.DataFrame([{"question_id": "q1", "run": "a", "evidence_precision": 0.5, "evidence_recall": None,
                           "grounding": None, "answer_location": "evidence_page", "answer_pages_evidence": [3],
                           "answer_pages_elsewhere": []}],
                         columns=locating.COLUMNS).astype({c: "Float64" for c in ("evidence_precision", "evidence_recall", "grounding")})
    store = locating.LocatedStore()
    keys = ["c" * 64, "d" * 64, "e" * 64]
    paths = [store.put(k, table) for k in keys]
    now = time.time()
    old = now - (D.UNUSED_DAYS + 1) * D.DAY
    for p in paths:
        os.utime(p, (old, old))
    assert store.get(keys[0]) is not None  # read: used
    assert store.put(keys[1], table) == paths[1]  # put again (kept as it was): used
    assert store.sweep(now, once=False) == 1
    assert [p.is_file() for p in paths] == [True, True, False]


# ----------------------------------------------------------------------------- the charts last


def test_every_chart_is_drawn_in_its_place_after_the_rest_of_the_page(fresh, monkeypatch):
    """The charts are sent last (Plotly's chunk is then served by an idle server), but each stands
    where it belongs: the heatmaps under their caption, the bar chart in its tab, the locations
    chart in its section."""
    at = app_on(monkeypatch, SAMPLE, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    order = [(el.type, str(getattr(el, "value", ""))) for el in _walk(at.main)
             if el.type in ("plotly_chart", "subheader")]
    kinds = [k if k == "plotly_chart" else v for k, v in order]
    assert kinds == ["Leaderboard", "plotly_chart", "plotly_chart", "Breakdowns", "plotly_chart",
                     "Where the answers are", "plotly_chart", "Failure modes"], kinds
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert len(set(keys)) == 4

"""The Evidence page with the annotations database down (LENS_DATABASE_URL naming a PostgreSQL server
that is stopped): the page says so once -- the reason above the notes, and one "Try again" beside
the answer's note -- not once per note form (it said it three times: the warning and each form's
box). Its own PostgreSQL server, stopped before the app opens."""

from __future__ import annotations

import re
from pathlib import Path

import pg_kit

ROOT = Path(__file__).resolve().parent.parent
QID, RUN = "adubench_single_000024", "longctx-ocr"


def _said(at) -> list[str]:
    texts = [e.value for kind in ("warning", "error", "info", "caption", "markdown") for e in at.get(kind)]
    return [re.sub(r"\\(.)", r"\1", str(t)) for t in texts]


def test_the_evidence_page_says_once_that_the_database_cannot_be_reached(tmp_path, monkeypatch):
    from app_kit import app_on
    from dashboard.annotations import store as annotations_store

    monkeypatch.setattr(annotations_store, "DEFAULT_RETRY_INTERVAL", 0.0)  # the app's store tries the server again on every look
    with pg_kit.running() as pg:
        url = pg.fresh_database("evaway")
        pg.stop()
        monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
        at = app_on(monkeypatch, ROOT / "sample_runs", {"sel": QID, "run": RUN}, timeout=120,
                    env={"LENS_DATABASE_URL": url})
        for _ in range(2):  # the first look and a rerun (where the reason is a caption)
            at.switch_page("views/evidence.py").run()
            assert not at.exception, [e.value for e in at.exception]
            said = _said(at)
            about = [t for t in said if re.search(r"cannot be (reached|read)|read-only", t)]
            assert len(about) == 1, about
            assert pg_kit.PASSWORD not in " ".join(said)
            assert [b.key for b in at.button if b.label == "Try again"] == [f"ann_retry_ev_a_{QID}_{RUN}"]
            assert all(b.disabled for b in at.button if b.label == "Save")
        assert sum("what you typed stays in this form" in t for t in _said(at)) == 1

"""Opening the dashboard in streamlit.testing.v1.AppTest on a benchmark folder. AppTest cannot pass
command-line arguments, so the folder goes through LENS_BENCHMARK (the other LENS_* sources are
cleared, so a test sees that folder alone)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")


def app_on(monkeypatch, bench: Path, params: dict | None = None, *, timeout: float = 30,
           env: dict[str, str] | None = None) -> AppTest:
    """The app on `bench` with the URL's query `params` (and extra environment `env`), run once."""
    monkeypatch.setenv("LENS_BENCHMARK", str(bench))
    for name in ("LENS_RUNS", "LENS_SCORES", "LENS_DATA_ROOTS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params.update(params or {})
    return at.run()

"""Where the files the app ships with are, in a checkout and in an installed package. No streamlit here.

- the sample benchmark the app opens without arguments: the repository's `sample_runs/`, which a
  built wheel carries as `dashboard/sample_runs/` (pyproject.toml maps the one folder to the other);
- the app's Streamlit settings: the repository's top-level `.streamlit/config.toml` (Streamlit's own
  place for a project's settings, read from the working folder), which a built wheel carries as
  `dashboard/.streamlit/config.toml`, beside the app script, where Streamlit reads it too.
  `docbench-lens` starts Streamlit in the folder that holds `.streamlit/`, so either applies from
  any folder.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
APP = PACKAGE / "app.py"
SETTINGS_CANDIDATES = (
    PACKAGE / ".streamlit" / "config.toml",  # an installed wheel
    PACKAGE.parent / ".streamlit" / "config.toml",  # a checkout, or an editable install
)
SETTINGS = next((p for p in SETTINGS_CANDIDATES if p.is_file()), SETTINGS_CANDIDATES[-1])
SETTINGS_HOME = SETTINGS.parent.parent  # the folder Streamlit is started in (it reads ./.streamlit/)
SAMPLE_MARKER = "qa_single_doc.jsonl"  # a folder holding this gold file is taken for the sample
SAMPLE_CANDIDATES = (
    PACKAGE / "sample_runs",  # an installed wheel
    PACKAGE.parent / "sample_runs",  # a checkout, or an editable install
)


def sample_benchmark() -> Path:
    """The first candidate folder that holds the sample, else the checkout's path (whose absence the
    Data page then reports as a missing benchmark folder)."""
    for folder in SAMPLE_CANDIDATES:
        if (folder / SAMPLE_MARKER).is_file():
            return folder
    return SAMPLE_CANDIDATES[-1]

"""Every setting the app reads from the environment, declared once: name, default, help.

Code asks `BENCHMARK.value(environ)` (or `.paths(environ)` for a list) instead of reading
`os.environ` itself, so a setting has one spelling, one default and one sentence that the
settings table of docs/settings.md is checked against (tests/test_settings.py). No streamlit here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scoring import guard
from scoring.judge import client as judge_client

# declared in scoring/ (the engine and the read guard, scoring/guard.py, read them there, without the dashboard);
# listed in SETTINGS below
from scoring.settings import (  # noqa: F401  (the app imports them here)
    APP_FOLDER,
    CACHE_DIR,
    ENGINE_SETTINGS,
    READ_BUDGET,
    READ_MEMORY,
    READ_SETTINGS,
    Setting,
    cache_root,
)

BENCHMARK = Setting("LENS_BENCHMARK", "the sample benchmark (sample_runs/)",
                    "the benchmark folder the app opens, as `--benchmark`")
RUNS = Setting("LENS_RUNS", "the benchmark's runs/ and results/", "prediction files or folders, as `--runs`", is_list=True)
SCORES = Setting("LENS_SCORES", "the benchmark's results/", "score files, as `--scores`", is_list=True)
DATA_ROOTS = Setting("LENS_DATA_ROOTS", "none",
                     "more folders the Data panel, or a link's `data` parameter, may open", is_list=True)
DATA_DIR = Setting("LENS_DATA_DIR", "$XDG_DATA_HOME/docbench-lens, else ~/.local/share/docbench-lens",
                   "the user data folder that holds the annotations database")
DATABASE_URL = Setting("LENS_DATABASE_URL", "annotations.sqlite3 in LENS_DATA_DIR",
                       "the annotations database: `sqlite:///PATH` or `postgresql://user:password@host:port/database` "
                       "(a team's shared server; `pip install 'docbench-lens[server]'`)")

OCR_BUDGET = Setting("LENS_OCR_BUDGET_S", "120",
                     "seconds of OCR one page may take before it is abandoned (its worker killed) and named on the page")
ADDRESS = Setting("LENS_ADDRESS", "127.0.0.1",
                  "the address `docbench-lens` has the server listen on, as `--address`: 127.0.0.1 is this machine alone; "
                  "for a team, a private interface's address that only its proxy reaches (`streamlit run` takes "
                  "`--server.address`)")


# the LLM judge (dashboard/judge): the names are the command line's too (scoring/judge/client.py)
JUDGE_URL = Setting(judge_client.URL_ENV, "none: Re-judge is off",
                    "an OpenAI-compatible server (vLLM, Ollama, llama.cpp's server) the Judge page's Re-judge asks, e.g. "
                    "`http://127.0.0.1:8000/v1`; a `user:password@` in it is used and never shown")
JUDGE_MODEL = Setting(judge_client.MODEL_ENV, "none", "the model that server serves as the judge")
JUDGE_API_KEY = Setting(judge_client.API_KEY_ENV, "none",
                        "the judge server's key, when it needs one: sent as a Bearer token, never shown or logged")

SETTINGS = (BENCHMARK, RUNS, SCORES, DATA_ROOTS, CACHE_DIR, DATA_DIR, DATABASE_URL, OCR_BUDGET, ADDRESS, JUDGE_URL, JUDGE_MODEL,
            JUDGE_API_KEY, *ENGINE_SETTINGS, *READ_SETTINGS)

OCR_BUDGET_DEFAULT_S = 120.0
LOOPBACK = "127.0.0.1"  # where the server listens unless told otherwise: nobody else on the network reaches it


def address(environ: Mapping[str, str] | None = None) -> str:
    """$LENS_ADDRESS (spaces around it dropped), else 127.0.0.1."""
    return ADDRESS.value(environ).strip() or LOOPBACK


def ocr_budget_s(environ: Mapping[str, str] | None = None) -> float:
    """$LENS_OCR_BUDGET_S as seconds (a positive number, at most a day); unset, empty or not such a
    number: 120."""
    try:
        value = float(OCR_BUDGET.value(environ).strip() or OCR_BUDGET_DEFAULT_S)
    except ValueError:
        return OCR_BUDGET_DEFAULT_S
    return value if 0 < value <= 86_400 else OCR_BUDGET_DEFAULT_S


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user data folder: $LENS_DATA_DIR, else $XDG_DATA_HOME/docbench-lens (an absolute one only, as
    the XDG spec says), else ~/.local/share/docbench-lens ($HOME when set). Empty variables count as unset."""
    env = os.environ if environ is None else environ
    if DATA_DIR.value(env):
        return Path(DATA_DIR.value(env)).expanduser()
    xdg = env.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_FOLDER
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "share" / APP_FOLDER


def read_limits(environ: Mapping[str, str] | None = None) -> guard.Limits:
    """$LENS_READ_MEMORY and $LENS_READ_BUDGET_S as read (scoring.guard.limits: defaults 1 GB and 60 s)."""
    return guard.limits(environ)

"""Every setting the app reads from the environment, declared once: name, default, help.

Code asks `BENCHMARK.value(environ)` (or `.paths(environ)` for a list) instead of reading
`os.environ` itself, so a setting has one spelling, one default and one sentence that the README's
settings table is checked against (tests/test_settings.py). No streamlit here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scoring import guard

APP_FOLDER = "docbench-lens"  # the app's folder name under the user's cache and data folders


@dataclass(frozen=True)
class Setting:
    name: str
    default: str  # what applies when the variable is unset or empty, in words
    help: str
    is_list: bool = False  # several paths separated by os.pathsep

    def value(self, environ: Mapping[str, str] | None = None) -> str:
        """The variable's text, '' when unset."""
        return (os.environ if environ is None else environ).get(self.name, "")

    def paths(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """The variable split on os.pathsep, empty parts dropped."""
        return [p for p in self.value(environ).split(os.pathsep) if p]


BENCHMARK = Setting("LENS_BENCHMARK", "the sample benchmark (sample_runs/)",
                    "the benchmark folder the app opens, as `--benchmark`")
RUNS = Setting("LENS_RUNS", "the benchmark's runs/ and results/", "prediction files or folders, as `--runs`", is_list=True)
SCORES = Setting("LENS_SCORES", "the benchmark's results/", "score files, as `--scores`", is_list=True)
DATA_ROOTS = Setting("LENS_DATA_ROOTS", "none",
                     "more folders the Data panel, or a link's `data` parameter, may open", is_list=True)
CACHE_DIR = Setting("LENS_CACHE_DIR", "$XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens",
                    "the app's cache folder: scored rows, predictions, uploads, page text")
DATA_DIR = Setting("LENS_DATA_DIR", "$XDG_DATA_HOME/docbench-lens, else ~/.local/share/docbench-lens",
                   "the user data folder that holds the annotations database")
DATABASE_URL = Setting("LENS_DATABASE_URL", "annotations.sqlite3 in LENS_DATA_DIR",
                       "the annotations database: `sqlite:///PATH` or `postgresql://user:password@host:port/database` "
                       "(a team's shared server; `pip install 'docbench-lens[server]'`)")

OCR_BUDGET = Setting("LENS_OCR_BUDGET_S", "120",
                     "seconds of OCR one page may take before it is abandoned (its worker killed) and named on the page")
# The read limits of a user's file (scoring/guard.py), read by the command line too: their names and the
# parsing of their values live there, in scoring/ (which never imports dashboard); they are listed here.
READ_MEMORY = Setting(guard.MEMORY_VARIABLE, guard.DEFAULT_MEMORY_TEXT,
                      "the memory one file a user or a harness left may take while it is read (`1G`, `512M`, `2G`), in a "
                      "worker process; a file that needs more is named on the Data page and not read, the rest loads")
READ_BUDGET = Setting(guard.BUDGET_VARIABLE, f"{guard.DEFAULT_BUDGET_S:g}",
                      "seconds one such file may take to read before its worker is killed and the file named, not read")

SETTINGS = (BENCHMARK, RUNS, SCORES, DATA_ROOTS, CACHE_DIR, DATA_DIR, DATABASE_URL, OCR_BUDGET, READ_MEMORY, READ_BUDGET)


def read_limits(environ: Mapping[str, str] | None = None) -> guard.Limits:
    """$LENS_READ_MEMORY and $LENS_READ_BUDGET_S as read (scoring.guard.limits: defaults 1 GB and 60 s)."""
    return guard.limits(environ)

OCR_BUDGET_DEFAULT_S = 120.0


def ocr_budget_s(environ: Mapping[str, str] | None = None) -> float:
    """$LENS_OCR_BUDGET_S as seconds (a positive number, at most a day); unset, empty or not such a
    number: 120."""
    try:
        value = float(OCR_BUDGET.value(environ).strip() or OCR_BUDGET_DEFAULT_S)
    except ValueError:
        return OCR_BUDGET_DEFAULT_S
    return value if 0 < value <= 86_400 else OCR_BUDGET_DEFAULT_S


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """The app's own cache folder: $LENS_CACHE_DIR, else $XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens."""
    env = os.environ if environ is None else environ
    if CACHE_DIR.value(env):
        return Path(CACHE_DIR.value(env)).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / APP_FOLDER


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

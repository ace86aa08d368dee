"""The settings `scoring/` reads from the environment, declared once: what a setting is (`Setting`),
where the cache folder is (`cache_root`), the engine's settings (scoring/engine/) and the read limits of a
user's file (scoring/guard.py). No dashboard here;
dashboard/core/settings.py imports these and lists them with the app's own in its SETTINGS (the
settings table of docs/settings.md is checked against that list).

Code asks `ENGINE_MEMORY.value(environ)` instead of reading `os.environ` itself, so a setting has
one spelling, one default and one sentence.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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


CACHE_DIR = Setting("LENS_CACHE_DIR", "$XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens",
                    "the app's cache folder: the engine's database of scored runs (`engine/lens.duckdb`), parsed prediction "
                    "files, uploads, page text")
ENGINE_MEMORY = Setting("LENS_ENGINE_MEMORY", "1GB",
                        "the memory DuckDB may use for the scored runs (`memory_limit`: e.g. 512MB, 2GB); beyond it, it "
                        "spills to the cache folder")
LAKE_CATALOG = Setting("LENS_LAKE_CATALOG", "none (one user: DuckDB in the cache folder)",
                       "a team's DuckLake catalog: `postgresql://user@host:port/database` (the password from "
                       "~/.pgpass or PGPASSWORD; `pip install 'docbench-lens[server]'`)")
LAKE_DATA = Setting("LENS_LAKE_DATA", "none", "the folder every server reaches that holds the DuckLake's data files, "
                                              "with LENS_LAKE_CATALOG")

ENGINE_SETTINGS = (ENGINE_MEMORY, LAKE_CATALOG, LAKE_DATA)

# the read limits of a file a user or a harness left (scoring/guard.py parses them; the CLI reads them too)
READ_MEMORY = Setting("LENS_READ_MEMORY", "1G",
                      "the memory one file a user or a harness left may take while it is read (`1G`, `512M`, `2G`), in a "
                      "worker process; a file that needs more is named on the Data page (and by the CLI) and not read, the "
                      "rest loads. JSON, JSON-lines and CSV files may take 8 times their size when that is more")
READ_BUDGET = Setting("LENS_READ_BUDGET_S", "60",
                      "seconds one such file may take to read before its worker is killed and the file named, not read "
                      "(JSON, JSON-lines and CSV files: a second per 4 MB when that is more)")

READ_SETTINGS = (READ_MEMORY, READ_BUDGET)


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """The app's own cache folder: $LENS_CACHE_DIR, else $XDG_CACHE_HOME/docbench-lens, else ~/.cache/docbench-lens."""
    env = os.environ if environ is None else environ
    if CACHE_DIR.value(env):
        return Path(CACHE_DIR.value(env)).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / APP_FOLDER


ENGINE_MEMORY_DEFAULT = "1GB"
_MEMORY = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(B|KB|KIB|MB|MIB|GB|GIB|TB|TIB)\s*", re.IGNORECASE)
MEMORY_MIN_BYTES = 64 * 2**20  # below this DuckDB cannot hold a run's rows while it writes them


def engine_memory(environ: Mapping[str, str] | None = None) -> str:
    """$LENS_ENGINE_MEMORY as DuckDB's `memory_limit` text (e.g. "1GB"); unset or empty: 1GB. A value that
    is not an amount of memory (a number and one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB) or is below 64 MB:
    ValueError naming the variable."""
    text = ENGINE_MEMORY.value(environ).strip()
    if not text:
        return ENGINE_MEMORY_DEFAULT
    m = _MEMORY.fullmatch(text)
    if m is None:
        raise ValueError(f"{ENGINE_MEMORY.name}={text!r} is not an amount of memory (e.g. 512MB, 2GB)")
    number, unit = float(m.group(1)), m.group(2).upper()
    scale = {"B": 1, "KB": 1e3, "KIB": 2**10, "MB": 1e6, "MIB": 2**20, "GB": 1e9, "GIB": 2**30, "TB": 1e12, "TIB": 2**40}[unit]
    if number * scale < MEMORY_MIN_BYTES:
        raise ValueError(f"{ENGINE_MEMORY.name}={text!r} is below 64MB, too little to hold a run while it is written")
    return f"{m.group(1)}{unit}"

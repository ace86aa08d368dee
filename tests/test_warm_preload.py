"""The pool started ahead of a page (`workers.warm_shared_pool`) has its forkserver import scipy, once, when
it is the first to start it: its workers then fork with scipy loaded instead of each importing it (0.8 CPU-s a
worker, on the cores the page wanted). A forkserver a reader job started first goes on as it was, without
scipy (its reader children stay small). Each case runs in a fresh interpreter: the forkserver is one a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import os, sys, time
import multiprocessing.forkserver as F
from scoring import workers
workers.usable_cores = lambda: 2  # the warm pool needs two cores; the case is about the forkserver
if sys.argv[1] == "reader-first":
    p = workers.forkserver_context().Process(target=os.getpid)
    p.start(); p.join(120)  # hang guard
    assert p.exitcode == 0, p.exitcode
workers.warm_shared_pool()
deadline = time.monotonic() + 120  # a state waited for (the warm jobs done), with a hang guard
while (pool := workers.idle_shared_pool()) is None:
    assert time.monotonic() < deadline, "the warm pool never became idle"
    time.sleep(0.05)
assert pool.submit(os.getpid).result(timeout=120) != os.getpid()
maps = open(f"/proc/{F._forkserver._forkserver_pid}/maps").read()
print("scipy in the forkserver:", "/scipy/" in maps)
workers.discard_shared_pool()
"""


def _forkserver_has_scipy(case: str) -> bool:
    done = subprocess.run([sys.executable, "-c", CHILD, case], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    line = done.stdout.strip().splitlines()[-1]
    return line.endswith("True")


def test_the_pool_started_ahead_starts_its_forkserver_with_scipy():
    assert _forkserver_has_scipy("warm-first")


def test_a_forkserver_a_reader_started_first_stays_without_it():
    assert not _forkserver_has_scipy("reader-first")

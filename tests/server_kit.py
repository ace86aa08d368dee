"""A real app server for the tests that need its process (where it listens, what it logs): started
with any command line, waited for until it answers its health check (a state, with a hang guard),
always stopped."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from browser_kit import _healthy, server_env

START_TIMEOUT = 120  # s, a hang guard: a server answers its health check within a few seconds


@contextlib.contextmanager
def started(cmd: list[str], base: str, log: Path, cwd: Path, env_extra: dict[str, str] | None = None
            ) -> Iterator[subprocess.Popen]:
    """`cmd` run in `cwd` (environment: browser_kit.server_env plus `env_extra`, output to `log`), once
    `base`/_stcore/health answers 200; terminated (killed if it must be) afterwards."""
    with open(log, "w") as sink:
        proc = subprocess.Popen(cmd, cwd=cwd, env=server_env(env_extra), stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(base):
            assert proc.poll() is None, f"the server exited ({proc.returncode}):\n{log.read_text(errors='replace')}"
            assert time.monotonic() < deadline, f"no health answer (hang guard):\n{log.read_text(errors='replace')}"
            time.sleep(0.25)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

"""The `docbench-lens` command in headless Chromium: started from a folder that holds nothing of the
project, the app opens the sample benchmark it ships with, and the settings that ship beside
dashboard/app.py apply (the theme's blue, #2563EB, instead of Streamlit's red, #FF4B4B) -- before
they moved there from the repository's root, an installed app ran with Streamlit's defaults."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from browser_kit import OUT, _free_port, _healthy, _tail, check_clean, open_page, shot, wait_idle

pytestmark = pytest.mark.browser

COLD_START_MS = 120_000  # the first page of a fresh server, on a busy machine
THEME_BLUE, STREAMLIT_RED = "rgb(37, 99, 235)", "rgb(255, 75, 75)"
COLOURS = """() => {
  const seen = new Set();
  for (const el of document.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    for (const v of [cs.color, cs.backgroundColor, cs.borderTopColor]) seen.add(v);
  }
  return [...seen];
}"""


def test_command_opens_the_shipped_sample_with_the_shipped_theme(tmp_path, browser):
    # `browser`: the session's Chromium (conftest.py); a second Playwright in one process would fail
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / "launcher.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    with open(log, "w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "dashboard.launch", "--port", str(port), "--headless"],
                                cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _healthy(base):
            assert proc.poll() is None, f"the launcher exited with {proc.returncode}:\n{_tail(log)}"
            assert time.monotonic() < deadline, f"no answer from {base}:\n{_tail(log)}"
            time.sleep(0.25)
        errors: list[str] = []
        page = open_page(browser, base, errors)
        page.goto(base + "/")
        page.get_by_role("heading", name="Overview").wait_for(timeout=COLD_START_MS)
        wait_idle(page, timeout=COLD_START_MS / 1000)  # a fresh server scores the sample's runs first
        page.get_by_text("77 gold questions").first.wait_for()  # the sample: 69 + 8 questions
        shot(page, "launcher-overview.png")
        colours = page.evaluate(COLOURS)
        assert THEME_BLUE in colours and STREAMLIT_RED not in colours
        check_clean(page, errors, log, "launcher")
        # a served app watches no source file (.streamlit/config.toml: server.fileWatcherType): Streamlit's
        # watchers hold an inotify instance, and each new session looked every imported module's path up
        assert _inotify(proc.pid) == 0, "the server watches files: a session looks every module's path up"
        page.context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _inotify(pid: int) -> int:
    """How many inotify instances the process holds open (Linux: /proc/PID/fd)."""
    fds = f"/proc/{pid}/fd"
    return sum(1 for fd in os.listdir(fds) if _target(os.path.join(fds, fd)) == "anon_inode:inotify")


def _target(link: str) -> str:
    try:
        return os.readlink(link)
    except OSError:  # closed meanwhile
        return ""

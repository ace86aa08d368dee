"""Shared pieces of the headless-Chromium tests: starting `streamlit run` on a free port, opening
pages that record console errors and refuse every request that would leave the machine, waiting
until the app is idle, and the checks every step makes (no exception box, no browser error, no
request off the machine, no traceback in the server log).

Needs Debian's Chromium (`apt-get install -y chromium`, /usr/bin/chromium) and the `playwright`
Python package (`pip install -e '.[test]'`); never `playwright install`. Without them a browser test
is skipped, unless LENS_REQUIRE_BROWSER=1 (as in CI), where it fails.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
OUT = ROOT / "test-output" / "browser"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1400, "height": 1100}
SERVER_START_TIMEOUT = 60  # s, until /_stcore/health answers 200
STEP_TIMEOUT = 30_000  # ms, for any one wait in the browser
ROW_PX = 35  # st.dataframe's row height and header height (glide-data-grid default in Streamlit)


# ----------------------------------------------------------------------------- prerequisites


def _unavailable(reason: str) -> None:
    if os.environ.get("LENS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (LENS_REQUIRE_BROWSER=1, so this is a failure, not a skip)")
    pytest.skip(reason)


def _chromium() -> str:
    path = "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else shutil.which("chromium")
    if not path:
        _unavailable("Chromium not found: install it with `apt-get install -y chromium` (never `playwright install`)")
    return path


def _playwright():
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is missing: `pip install -e '.[test]'`")
    # Every `expect(...)` waits as long as any other step: a page opened from a link shows its
    # widgets as placeholders until the script's first run reaches them, which takes seconds on a
    # busy machine (the default is 5 s).
    expect.set_options(timeout=STEP_TIMEOUT)
    return sync_playwright


# ----------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _tail(path: Path, n: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else "(no log)"


# ----------------------------------------------------------------------------- no connection off the machine
#
# The browser side refuses requests to other hosts (open_page). The server side is watched from
# outside: while a test server runs, its sockets (found through /proc/<pid>/fd) are looked up in
# /proc/<pid>/net/{tcp,tcp6,udp,udp6} a few times a second, and any whose remote address is not
# loopback or unspecified (a listening socket) fails the run when the server stops.

PROC_NET = ("tcp", "tcp6", "udp", "udp6")
WATCH_EVERY = 0.2  # s between two looks at the server's sockets


def _address(hex_addr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address of /proc/net/tcp*: 8 hex digits (IPv4, little-endian) or 32 (IPv6, four
    little-endian 32-bit words)."""
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    if len(raw) == 16:
        return ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
    raise ValueError(f"not an address of /proc/net: {hex_addr!r}")


def proc_net_entries(text: str) -> list[tuple[str, str, int]]:
    """(local "addr:port", remote "addr:port", socket inode) of each line of a /proc/net/{tcp,udp}[6]
    file (the header line skipped)."""
    out = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10:
            continue
        (la, lp), (ra, rp) = (f.split(":") for f in fields[1:3])
        out.append((f"{_address(la)}:{int(lp, 16)}", f"{_address(ra)}:{int(rp, 16)}", int(fields[9])))
    return out


def off_machine(remote: str) -> bool:
    """Whether a remote "addr:port" of /proc/net leaves the machine: not loopback (127/8, ::1, or
    IPv4-mapped loopback) and not unspecified (0.0.0.0 / :: -- listening or unconnected sockets)."""
    ip = ipaddress.ip_address(remote.rsplit(":", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    ip = mapped or ip
    return not (ip.is_loopback or ip.is_unspecified)


def _process_tree(pid: int) -> list[int]:
    """pid and its descendants (the scoring pool's workers), from /proc/<pid>/task/*/children."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                continue
    return out


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def outgoing(pid: int, off=None) -> list[str]:
    """The connections of process `pid` (and its children) to an address off the machine, as
    "tcp 10.0.0.5:443 (from 172.17.0.2:51234)"; [] when there is none or /proc cannot be read. `off`: the
    rule (default `off_machine`), passed rather than patched, so a test's rule never reaches the watch
    of the session's server running in another thread."""
    off = off or off_machine
    out = []
    for p in _process_tree(pid):
        inodes = _socket_inodes(p)
        if not inodes:
            continue
        for kind in PROC_NET:
            try:
                text = Path(f"/proc/{p}/net/{kind}").read_text()
            except OSError:
                continue
            for local, remote, inode in proc_net_entries(text):
                if inode in inodes and off(remote):
                    out.append(f"{kind} {remote} (from {local}, pid {p})")
    return out


class Watch:
    """Looks at a process's sockets every WATCH_EVERY seconds in a thread until stopped; `seen`
    holds every connection off the machine it met."""

    def __init__(self, pid: int, off=None) -> None:
        self.pid, self.seen, self.off = pid, [], off
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lens-net-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for c in outgoing(self.pid, self.off):
                if c not in self.seen:
                    self.seen.append(c)
            self._stop.wait(WATCH_EVERY)

    def stop(self) -> list[str]:
        self._stop.set()
        self._thread.join(timeout=10)
        for c in outgoing(self.pid, self.off):  # a last look
            if c not in self.seen:
                self.seen.append(c)
        return self.seen


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def server_env(env_extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test server's environment: no LENS_* variable but the cache and user data folders (unless
    `env_extra` sets them), and no proxy variables (so nothing is routed off the machine through one)."""
    keep = {k: v for k, v in os.environ.items()
            if (not k.startswith("LENS_") or k in ("LENS_CACHE_DIR", "LENS_DATA_DIR")) and k not in PROXY_VARIABLES}
    return keep | (env_extra or {})


@contextmanager
def serve(env_extra: dict[str, str] | None = None, name: str = "server", launcher: Path | None = None):
    """`streamlit run dashboard/app.py` on a free port, from the repo root. Without `env_extra` it
    opens sample_runs/ (the default: LENS_* variables are removed); `env_extra` sets LENS_BENCHMARK
    and friends. Yields (base URL, log path); the server is always terminated. While it runs its
    sockets are watched (`Watch`): a connection off the machine, or the log line of Streamlit
    looking up its external address, fails the test that used it once the server stops. `launcher`: a
    script run instead of `python -m streamlit` (with the same arguments), e.g. one that patches the app
    in-process before starting Streamlit (tests/held_reading.py)."""
    _chromium()
    _playwright()
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"{name}.log"
    port = _free_port()
    env = server_env(env_extra)
    starter = [sys.executable, str(launcher)] if launcher is not None else [sys.executable, "-m", "streamlit"]
    cmd = [*starter, "run", "dashboard/app.py", "--server.headless", "true",
           "--server.port", str(port), "--browser.gatherUsageStats", "false",
           # no "File change. Rerun?" widget when a source file changes during a run (a shared working tree)
           "--server.fileWatcherType", "none"]
    url = f"http://localhost:{port}"
    with open(log, "w") as sink:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    watch = Watch(proc.pid)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"no 200 from {url}/_stcore/health within {SERVER_START_TIMEOUT} s:\n{_tail(log)}")
            time.sleep(0.25)
        yield url, log
    finally:
        seen = watch.stop()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    assert not seen, "the server connected off the machine:\n" + "\n".join(seen)
    text = log.read_text(errors="replace")
    assert "external IP" not in text, f"the server looked up its external address:\n{_tail(log)}"


@contextmanager
def launch():
    """Headless Debian Chromium driven by Playwright; always closed."""
    with _playwright()() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


# ----------------------------------------------------------------------------- page helpers


def harmless(msg, base: str) -> bool:
    """The only console errors tolerated: opened directly on a page URL (a deep link such as
    /questions?…), Streamlit's frontend first tries that path as the app's base: GET
    /<page>/_stcore/health and /<page>/_stcore/host-config answer 404, then it uses /
    (streamlit/streamlit#7074, open). Anything else, from any other URL or with another status,
    fails the test."""
    url = (msg.location or {}).get("url", "")
    parts = urlsplit(url)
    return (msg.text == "Failed to load resource: the server responded with a status of 404 (Not Found)"
            and url.startswith(base + "/") and parts.path.count("/") == 3
            and parts.path.split("/")[2] == "_stcore" and parts.path.split("/")[3] in ("health", "host-config"))


LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


# The requests routed through `guard`: every URL but one to this machine's own server, matched by the browser's
# driver -- routing every request ("**/*") sent each of a page's ~40 loads through this process and back (0.2 s
# a visit). Whatever it lets through is local by `is_local`'s rule; what it routes, `is_local` decides
# (tests/test_browser_guard.py: hosts that only look local are caught).
NOT_LOCAL = re.compile(r"^(?!(?:data|blob|about):|(?:https?|wss?)://(?:"
                       + "|".join(map(re.escape, sorted(LOCAL_HOSTS)))  # one list of local hosts for both
                       + r")(?::\d+)?(?:[/?#]|$))")


def is_local(url: str) -> bool:
    """A request the app may make: to its own server (or an inline data:/blob: URL)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname in LOCAL_HOSTS


def open_page(browser, base: str, errors: list[str], viewport: dict | None = None):
    """A page in a fresh context (a new Streamlit session). Console errors and page errors are
    collected in `errors`; every request to another host is aborted and recorded there too, so
    `check_clean` fails on anything that would leave the machine."""
    context = browser.new_context(viewport=viewport or VIEWPORT)

    def guard(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            errors.append(f"request off the machine: {route.request.method} {route.request.url}")
            route.abort()

    context.route(NOT_LOCAL, guard)
    page = context.new_page()
    page.set_default_timeout(STEP_TIMEOUT)
    page.on("console", lambda m: None if m.type != "error" or harmless(m, base)
            else errors.append(f"console error: {m.text} @ {(m.location or {}).get('url', '')}"))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    return page


IDLE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && !document.querySelector('[data-stale="true"]');
}"""


def wait_idle(page, timeout: float = STEP_TIMEOUT / 1000, settle: float = 0.6) -> None:
    """Until the script has finished its run (and any rerun it asked for): the app reports
    `notRunning`, no status widget, no stale element -- continuously for `settle` seconds."""
    deadline = time.monotonic() + timeout
    since = None
    while time.monotonic() < deadline:
        if page.evaluate(IDLE):
            since = since or time.monotonic()
            if time.monotonic() - since >= settle:
                return
        else:
            since = None
        page.wait_for_timeout(100)
    raise AssertionError(f"the app did not become idle within {timeout} s")


def settle(page, heading: str) -> None:
    """After an action: until the heading (or an exception box) shows, then until the app is idle."""
    page.get_by_role("heading", name=heading).or_(page.locator('[data-testid="stException"]')).first.wait_for()
    wait_idle(page)


def check_clean(page, errors: list[str], log: Path, step: str) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, f"{step}: Streamlit exception shown:\n" + "\n".join(boxes.all_inner_texts())
    assert not errors, f"{step}: browser errors:\n" + "\n".join(errors)
    assert "Traceback" not in log.read_text(errors="replace"), f"{step}: traceback in the server log:\n{_tail(log)}"


FITTED = """el => { const f = el._fullLayout; if (!f) return false;
  const w = el.getBoundingClientRect().width;
  return w > 0 && Math.abs(f.width - w) <= 1 && el.querySelector('.main-svg') !== null; }"""


def wait_fitted(plot, timeout: float = STEP_TIMEOUT) -> None:
    """Until a Plotly chart (`.js-plotly-plot`) is laid out at its container's width: the relayout a
    chart makes once it is scrolled into view has happened (a state, where a pause guessed at one)."""
    plot.page.wait_for_function(FITTED, arg=plot.element_handle(), timeout=timeout)


def shot(page, name: str) -> None:
    page.screenshot(path=str(OUT / name))



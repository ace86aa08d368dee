"""The app listens on 127.0.0.1 unless told otherwise (issue 35, item 5): started by `docbench-lens`
(dashboard/launch.py) or by `streamlit run` in a checkout (.streamlit/config.toml), a real server
accepts no connection on this machine's other addresses, and its listening socket is bound to
127.0.0.1 alone (read from /proc, so the check holds on a machine whose only address is loopback).
`--address` / LENS_ADDRESS bind elsewhere: the same probe then connects, which shows it can fail."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pg_kit
import server_kit
from browser_kit import PROC_NET, _process_tree, _socket_inodes, proc_net_entries
from dashboard import launch
from dashboard.core import settings

ROOT = Path(__file__).resolve().parent.parent
CONNECT_TIMEOUT = 10  # s for one connection attempt (a refusal is immediate)


def machine_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (`ip -4 -o addr`, else the host name's)."""
    found: set[str] = set()
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            found.add(parts[parts.index("inet") + 1].split("/")[0])
    with contextlib.suppress(OSError):
        found.add(socket.gethostbyname(socket.gethostname()))
    return sorted(a for a in found if not ipaddress.ip_address(a).is_loopback)


def listening_on(pid: int, port: int) -> set[str]:
    """The local addresses the process tree of `pid` listens on at `port` (from /proc/<pid>/net)."""
    found = set()
    for p in _process_tree(pid):
        inodes = _socket_inodes(p)
        for kind in PROC_NET[:2]:  # tcp, tcp6
            with contextlib.suppress(OSError):
                for local, remote, inode in proc_net_entries(Path(f"/proc/{p}/net/{kind}").read_text()):
                    address, _, local_port = local.rpartition(":")
                    if inode in inodes and int(local_port) == port and remote.endswith(":0"):
                        found.add(address)
    return found


def accepts(address: str, port: int) -> bool:
    """Whether a TCP connection to address:port is accepted."""
    try:
        with socket.create_connection((address, port), timeout=CONNECT_TIMEOUT):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def started(cmd: list[str], port: int, tmp_path: Path, env_extra: dict[str, str] | None = None,
            cwd: Path | None = None) -> Iterator[subprocess.Popen]:
    with server_kit.started(cmd, f"http://127.0.0.1:{port}", tmp_path / f"server_{port}.log", cwd or tmp_path,
                            {"LENS_DATA_DIR": str(tmp_path / "data"), **(env_extra or {})}) as proc:
        yield proc


def _loopback_only(proc: subprocess.Popen, port: int) -> None:
    assert listening_on(proc.pid, port) == {"127.0.0.1"}
    for address in machine_addresses():  # none on a loopback-only machine: the /proc check above holds
        assert not accepts(address, port), f"the server accepted a connection on {address}:{port}"


def test_the_launcher_listens_on_loopback_alone(tmp_path):
    port = pg_kit.free_port()
    cmd = [sys.executable, "-m", "dashboard.launch", "--headless", "--port", str(port)]
    with started(cmd, port, tmp_path) as proc:
        _loopback_only(proc, port)


def test_streamlit_run_in_the_checkout_listens_on_loopback_alone(tmp_path):
    """`streamlit run dashboard/app.py` from the repository root reads .streamlit/config.toml."""
    port = pg_kit.free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.fileWatcherType", "none"]
    with started(cmd, port, tmp_path, cwd=ROOT) as proc:
        _loopback_only(proc, port)


def test_an_address_given_binds_there(tmp_path):
    """LENS_ADDRESS (and --address, which wins over it) binds elsewhere: every interface here, where
    the same probe connects on the machine's other addresses."""
    port = pg_kit.free_port()
    cmd = [sys.executable, "-m", "dashboard.launch", "--headless", "--port", str(port), "--address", "0.0.0.0"]
    with started(cmd, port, tmp_path, env_extra={"LENS_ADDRESS": "127.0.0.1"}) as proc:
        assert listening_on(proc.pid, port) == {"0.0.0.0"}
        for address in machine_addresses():
            assert accepts(address, port), address
    args = launch.build_parser().parse_args(["--address", " 10.0.0.5 "])
    assert launch.listen_address(args, {}) == "10.0.0.5"
    assert launch.listen_address(launch.build_parser().parse_args([]), {"LENS_ADDRESS": "10.0.0.6"}) == "10.0.0.6"
    assert launch.listen_address(launch.build_parser().parse_args([]), {}) == settings.LOOPBACK == "127.0.0.1"


def test_a_bad_address_is_refused_in_one_sentence(capsys):
    for given in ("", "http://x", "a b"):
        try:
            launch.build_parser().parse_args(["--address", given])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(given)
        assert "expected a host name or an IP address" in capsys.readouterr().err

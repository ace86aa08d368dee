"""Many users at once (issue 12): a script, not a test -- it prints figures and asserts nothing.

    .venv/bin/python bench/bench_load.py [--sessions 24] [--seconds 60] [--think 0.3] [--page evidence]
                                         [--benchmark DIR] [--runs R ...] [--profile FILE [--cprofile]]

Starts `streamlit run dashboard/app.py` on a free loopback port (its own cache folder in a
temporary directory), then drives `--sessions` simultaneous sessions for a bounded time by
Streamlit's own websocket protocol (what the browser's frontend sends: a `rerun_script` BackMsg
with the query string, the page and the widget states; the server answers with ForwardMsgs until
`script_finished`). Each session

1. opens the app (the default page, Overview) and then the page named by `--page` (default: the
   Evidence page, which renders evidence pages of the PDFs; `questions` for the question
   explorer) with its own starting question in the URL (`?sel=<question id>`) and checks that the
   page shows that question;
2. then, until the time is up, switches to another question by setting the page's question
   selectbox (as a click would), waits for the script to finish, fetches the media the page
   references (the thumbnails of neighbouring pages, as the browser would), checks that what came
   back names the question it asked for -- never another session's -- and pauses a random
   0..`--think` s before the next switch.

The defaults are a stress test, not a person: 24 sessions, each clicking again 0-0.3 s after its
page arrived (`--think 0.3`), for 60 s. A person reading a page before the next click is nearer
`--think 5` (a pause of 0-5 s, 2.5 s on average); bench/README.md ("Load") gives the figures for
both, with 20 sessions as issue 12 asks.

It reports: sessions, switches, errors (exception boxes, scripts that did not finish, timeouts,
a session seeing another question, broken connections), p50 / p95 / max latency of a switch (send
-> script finished, media fetched), the server's CPU time per switch once every session has
opened (from /proc: with one GIL, latency under load is about this times the sessions waiting),
this client's own CPU (it shares the cores), the server's peak resident memory (the server and
its children, sampled from /proc every 100 ms) beside the configured cache sizes.

`--profile FILE` runs the same server under bench/_serve_profiled.py: the CPU time of every script
run, the garbage collector's pauses by generation, the runs that ended with the collector disabled
(a process-wide gc.disable() around scoring must not leak into serving), and with `--cprofile` the
functions the script runs spent their time in (cProfile slows them; use it to see where, not how
fast). bench/profile_page.py profiles one session's switches in AppTest, without a server.

The server runs with `--server.fileWatcherType none`, as a served app should: with the watcher
on, an edit to any file under dashboard/ makes Streamlit drop those modules from sys.modules on
the next rerun, and sessions running at that moment fail (`KeyError: 'dashboard'`,
`'NoneType' object has no attribute '__dict__'` in a dataclass, st.cache_data failing to pickle a
class that was just re-imported) -- seen here while other people edited the tree.

The machine's cores are shared by everything running on it, this client included: the figures
are for this machine now (the load average is printed with them).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402  (installed with streamlit's dependencies)
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from dashboard.core.escape import md_escape  # noqa: E402
from scoring.loaders import load_gold  # noqa: E402

SWITCH_TIMEOUT = 60.0  # s: a switch slower than this counts as an error
PAGES = {"evidence": "Question", "questions": None}  # page -> label of its question selectbox (None: by URL only)


# ----------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(pid: int) -> list[int]:
    """A process and all its descendants, from /proc."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except OSError:
            continue
    return out


def _rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc (kB)."""
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total


def _cpu_s(pid: int) -> float:
    """CPU time (user + system) of a process and all its descendants so far, from /proc (s)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.samples, self.stop = pid, 0, [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            kb = _rss_kb(self.pid)
            self.samples.append(kb)
            self.peak = max(self.peak, kb)
            time.sleep(0.1)


def start_server(benchmark: Path, cache: Path, profile: Path | None = None,
                 mode: str = "cpu") -> tuple[subprocess.Popen, str, Path]:
    port = _free_port()
    log = cache / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env |= {"LENS_BENCHMARK": str(benchmark), "LENS_CACHE_DIR": str(cache / "cache")}
    if profile is not None:  # the same server with each script run measured (bench/_serve_profiled.py)
        env |= {"BENCH_PROFILE_OUT": str(profile), "BENCH_PROFILE_MODE": mode}
    launcher = [str(HERE / "_serve_profiled.py")] if profile is not None else ["-m", "streamlit"]
    cmd = [sys.executable, *launcher, "run", str(ROOT / "dashboard" / "app.py"), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]  # served, not developed: no hot reload (see the note in main)
    with open(log, "w") as sink:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base, log
        except OSError:
            time.sleep(0.25)
        if proc.poll() is not None:
            break
    proc.terminate()
    raise SystemExit(f"the server did not start:\n{log.read_text()[-2000:]}")


# ----------------------------------------------------------------------------- one session


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    first_loads: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    switches: int = 0
    media_bytes: int = 0
    opened: int = 0  # sessions past their first page
    steady: tuple[float, int] | None = None  # (server CPU s, switches) when the last session opened


@dataclass
class Run:
    """What one script run sent back."""

    status: str = ""
    texts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    media: list[str] = field(default_factory=list)
    selectbox: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # label -> (id, options)
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash


def _collect(msg: ForwardMsg, run: Run) -> None:
    kind = msg.WhichOneof("type")
    if kind == "navigation":
        for p in msg.navigation.app_pages:
            run.pages[p.url_pathname] = p.page_script_hash
    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        el = msg.delta.new_element
        what = el.WhichOneof("type")
        if what == "exception":
            run.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:300])
        elif what == "markdown":
            run.texts.append(el.markdown.body)
        elif what == "code":
            run.texts.append(el.code.code_text[:2000])
        elif what == "selectbox":
            run.selectbox[el.selectbox.label] = (el.selectbox.id, list(el.selectbox.options))
        elif what == "imgs":
            run.media += [img.url for img in el.imgs.imgs if img.url.startswith("/")]
        elif what == "plotly_chart":
            run.texts.append(el.plotly_chart.spec[:200_000])
            run.media += re.findall(r'"(/media/[^"]+)"', el.plotly_chart.spec)
    elif kind == "script_finished":
        run.status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)


async def _rerun(ws, query: str, page_hash: str = "", widget: tuple[str, str] | None = None) -> Run:
    back = BackMsg()
    back.rerun_script.query_string = query
    back.rerun_script.page_script_hash = page_hash
    if widget is not None:
        state = back.rerun_script.widget_states.widgets.add()
        state.id, state.string_value = widget
    await ws.send(back.SerializeToString())
    run = Run()
    while True:
        data = await asyncio.wait_for(ws.recv(), timeout=SWITCH_TIMEOUT)
        msg = ForwardMsg()
        msg.ParseFromString(data)
        _collect(msg, run)
        if run.status in ("FINISHED_SUCCESSFULLY", "FINISHED_WITH_COMPILE_ERROR"):
            return run
        # FINISHED_EARLY_FOR_RERUN: the app asked for a rerun (st.rerun, st.switch_page); keep reading


def _shows(run: Run, qid: str) -> bool:
    escaped = md_escape(qid)
    return any(qid in t or escaped in t for t in run.texts)


def _fetch(base: str, paths: list[str]) -> int:
    size = 0
    for p in paths:
        with urllib.request.urlopen(base + p, timeout=30) as r:
            size += len(r.read())
    return size


async def session(k: int, base: str, page: str, qids: list[str], runs: list[str], seconds: float, think: float,
                  res: Result, sessions: int = 0, server_pid: int = 0) -> None:
    rnd = random.Random(k)
    mine = qids[k % len(qids)]
    query = urlencode([("sel", mine), *(("run", r) for r in runs)])
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    try:
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=60,
                                      ping_interval=None) as ws:
            t0 = time.perf_counter()
            first = await _rerun(ws, query)  # the default page, with this session's question in the URL
            hash_ = first.pages.get(page, "")
            if not hash_:
                res.errors.append(f"session {k}: no page {page!r} in the navigation ({sorted(first.pages)})")
                return
            run = await _rerun(ws, query, hash_)
            res.first_loads.append(time.perf_counter() - t0)
            if run.exceptions:
                res.errors.append(f"session {k}: exception on opening: {run.exceptions[0]}")
            if not _shows(run, mine):
                res.errors.append(f"session {k}: opened on {mine!r} but the page does not show it")
            await asyncio.to_thread(_fetch, base, run.media)
            res.opened += 1
            if res.opened == sessions and server_pid:
                res.steady = (_cpu_s(server_pid), res.switches)
            label = PAGES[page]
            until = time.monotonic() + seconds  # the bounded time counts from this session's first page
            while time.monotonic() < until:
                want = rnd.choice([q for q in qids if q != mine] or qids)
                widget = None
                if label is not None:
                    if label not in run.selectbox:
                        res.errors.append(f"session {k}: no {label!r} selectbox on the page")
                        return
                    widget = (run.selectbox[label][0], want)
                    sent = (hash_, widget)
                else:
                    sent = (hash_, None)
                t = time.perf_counter()
                try:
                    run = await _rerun(ws, urlencode([("sel", want), *(("run", r) for r in runs)]), *sent)
                except TimeoutError:
                    res.errors.append(f"session {k}: no script_finished within {SWITCH_TIMEOUT:.0f} s")
                    return
                res.media_bytes += await asyncio.to_thread(_fetch, base, run.media)
                res.latencies.append(time.perf_counter() - t)
                res.switches += 1
                if run.exceptions:
                    res.errors.append(f"session {k}: exception after switching to {want!r}: {run.exceptions[0]}")
                if label is not None and not _shows(run, want):
                    others = [q for q in qids if q != want and _shows(run, q) and q in (mine,)]
                    res.errors.append(f"session {k}: asked for {want!r}, the page shows "
                                      f"{'another question' if others else 'something else'}")
                mine = want
                await asyncio.sleep(rnd.uniform(0.0, think))  # the pause before the next click
    except Exception as exc:  # a broken connection is an error of the run, not of this script
        res.errors.append(f"session {k}: {type(exc).__name__}: {exc}"[:300])


# ----------------------------------------------------------------------------- main


async def drive(base: str, sessions: int, seconds: float, page: str, qids: list[str], runs: list[str],
                think: float, server_pid: int = 0) -> Result:
    res = Result()
    await asyncio.gather(*(session(k, base, page, qids, runs, seconds, think, res, sessions, server_pid)
                           for k in range(sessions)))
    return res


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the sessions switch questions")
    ap.add_argument("--benchmark", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--page", choices=sorted(PAGES), default="evidence")
    ap.add_argument("--runs", nargs="*", default=None, help="runs to show (default: the first two prediction files)")
    ap.add_argument("--think", type=float, default=0.3,
                    help="each session pauses a random 0..THINK s between switches (default 0.3: nearly continuous clicking)")
    ap.add_argument("--profile", type=Path, default=None, metavar="FILE",
                    help="run the server under bench/_serve_profiled.py: the CPU time of every script run, "
                         "written to FILE at the end (with --cprofile: and where it went)")
    ap.add_argument("--cprofile", action="store_true", help="with --profile: cProfile every script run (slower)")
    args = ap.parse_args()

    gold_files = [p for p in sorted(args.benchmark.glob("*.jsonl")) if p.name != "documents.jsonl"]
    gold = load_gold(gold_files).items
    qids = [q.qid for q in gold if q.documents] or [q.qid for q in gold]
    runs = args.runs if args.runs is not None else sorted(p.stem for p in (args.benchmark / "runs").glob("*.json*"))[:2]
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        proc, base, log = start_server(args.benchmark, Path(tmp), args.profile.resolve() if args.profile else None,
                                       "cprofile" if args.cprofile else "cpu")
        sampler = Sampler(proc.pid)
        sampler.start()
        idle_kb = _rss_kb(proc.pid)
        try:
            t0, client0 = time.perf_counter(), time.process_time()
            res = asyncio.run(drive(base, args.sessions, args.seconds, args.page, qids, runs, args.think, proc.pid))
            wall, client = time.perf_counter() - t0, time.process_time() - client0
            cpu_end = _cpu_s(proc.pid)
        finally:
            sampler.stop.set()
            sampler.join()
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        server_log = log.read_text(errors="replace")
    tracebacks = server_log.count("Traceback")
    if tracebacks:
        keep = HERE / "out" / "bench_load_server.log"
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text(server_log)
        print(f"(the server's log, with its tracebacks: {keep.relative_to(ROOT)})")
    lat = res.latencies
    print(f"bench_load: {args.sessions} sessions on {args.page!r} for {args.seconds:.0f} s, pauses 0-{args.think:g} s, "
          f"{len(qids)} questions of {args.benchmark.name}, runs {runs}")
    print(f"  wall time                  {wall:8.1f} s   (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"  switches                   {res.switches:8d}  ({res.switches / max(wall, 1e-9):.1f} per s)")
    print(f"  errors                     {len(res.errors):8d}")
    print(f"  tracebacks in server log   {tracebacks:8d}")
    print(f"  first load   p50 / max     {_pct(res.first_loads, .5):8.2f} / {max(res.first_loads, default=float('nan')):.2f} s")
    print(f"  switch       p50 / p95     {_pct(lat, .5):8.2f} / {_pct(lat, .95):.2f} s  (max {max(lat, default=float('nan')):.2f} s,"
          f" mean {statistics.fmean(lat) if lat else float('nan'):.2f} s)  target p95 < 2 s")
    if res.steady is not None and res.switches > res.steady[1]:
        cpu, n = cpu_end - res.steady[0], res.switches - res.steady[1]
        print(f"  server CPU per switch      {cpu / n * 1000:8.0f} ms  (after every session opened: {cpu:.1f} s CPU over "
              f"{n} switches; the script runs hold one GIL, so about this much server time per switch)")
    print(f"  this client's CPU          {client:8.1f} s   (on the same cores as the server)")
    print(f"  media fetched              {res.media_bytes / 1e6:8.1f} MB")
    print(f"  server RSS idle / peak     {idle_kb / 1024:8.0f} / {sampler.peak / 1024:.0f} MB "
          f"(server and children; last {sampler.samples[-1] / 1024 if sampler.samples else 0:.0f} MB)")
    print(f"  configured cache sizes     {_cache_sizes()}")
    for e in res.errors[:20]:
        print("  error:", e)
    if len(res.errors) > 20:
        print(f"  … and {len(res.errors) - 20} more errors")


def _cache_sizes() -> str:
    """The max_entries of every st.cache_* in dashboard/cache.py and its store capacities (read from
    the source: importing it outside a Streamlit runtime only logs warnings)."""
    src = (ROOT / "dashboard" / "cache.py").read_text()
    found = re.findall(r"@st\.cache_(?:data|resource)\(([^)]*)\)\s*\ndef (\w+)", src)
    entries = re.compile(r"max_entries=(\d+)")
    parts = [f"{name} {entries.search(a).group(1) if entries.search(a) else 'unbounded'}" for a, name in found]
    parts += [f"{m.group(1)} = {m.group(2)}" for m in re.finditer(r"^([A-Z_]*CAPACITY[A-Z_]*) = (\d+)", src, re.M)]
    return ", ".join(parts)


if __name__ == "__main__":
    main()

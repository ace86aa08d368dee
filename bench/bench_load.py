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

`--scenario hostile` (issue 17, "Measure"): a copy of the benchmark in a temporary folder gains a
decompression-bomb PDF (one page whose 300 KB Flate stream inflates to 300 MiB), the three damaged
PDFs of tests/damaged_kit.py (a parent cycle, a kids cycle, `/Count 2147483648`), a question on
each, and a run `huge-answer` (the first run's predictions, with one answer on a real PDF replaced
by 1,000,000 letters). Session 0 opens the bomb's question on the Evidence page and then keeps
switching between the bomb and the damaged PDFs; session 1 opens the 1 MB answer with run
`huge-answer` and keeps switching between it and another question; the other `--sessions - 2`
browse as above. Reported apart: the others' switches (p50 / p95 / max) and the health endpoint
(`/_stcore/health`, polled every 0.25 s by a thread of its own): its worst latency. A switch that
does not finish within `--switch-timeout` s ends its session and is counted as a stall; the whole
run is capped by `--cap` s (the code before the resilience work may hang: that is what is measured).
`--app-root DIR` serves the app of another checkout (e.g. `git worktree add /tmp/before 35680db`)
with this client and this venv: the server runs in DIR with PYTHONPATH=DIR.

`--scenario inputs` (issue 35): `--sessions` - 1 sessions switch questions on the question explorer,
half of them on sample_runs/ and half on a 13 x 1,519 benchmark (bench/make_synthetic_benchmark.py,
opened by the link's `data` parameter), while one more session opens, `--hostile-after` s in and one
after the other, the Data page of each hostile input of issue 35 (tests/guard_kit.py): VLMEvalKit
workbooks of a few KB with a cell at column ZZZZZZZZZ, with a dimension of A1:XFD1048576 and a date
style, with shared strings inflating to 250 MB; an lmms-eval run whose `target` is a 16 MB literal; a
2 GB sparse lmms-eval samples file; a prediction file whose answer is a 48 MB nested list. Reported:
the others' page times (p50 / p95 / max) and first loads, the health endpoint (every 0.25 s: p50, p99,
max, failures), the server's peak RSS with its children, and per input how long its Data page took and
whether it names the file. `--server-memory GB` caps the server's address space: for a checkout that
reads the inputs in its own process (the figures "before" in bench/README.md).

The machine's cores are shared by everything running on it, this client included: the figures
are for this machine now (the load average is printed with them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
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

sys.path.insert(0, str(HERE))
from bench_dashboard import free_port  # noqa: E402

SWITCH_TIMEOUT = 60.0  # s: a switch slower than this counts as an error (--switch-timeout)
PAGES = {"evidence": "Question", "questions": None}  # page -> label of its question selectbox (None: by URL only)


# ----------------------------------------------------------------------------- the server


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
                 mode: str = "cpu", app_root: Path = ROOT, env_extra: dict[str, str] | None = None,
                 memory_cap: int = 0) -> tuple[subprocess.Popen, str, Path]:
    """`memory_cap` (bytes): the server's address space limited (RLIMIT_AS), so that a server of another
    checkout that reads a hostile input in its own process fails there instead of taking the machine."""
    port = free_port()
    log = cache / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env |= {"LENS_BENCHMARK": str(benchmark), "LENS_CACHE_DIR": str(cache / "cache"), **(env_extra or {})}
    if app_root != ROOT:  # another checkout's app, imported from there (not from this tree's editable install)
        env["PYTHONPATH"] = str(app_root)
    if profile is not None:  # the same server with each script run measured (bench/_serve_profiled.py)
        env |= {"BENCH_PROFILE_OUT": str(profile), "BENCH_PROFILE_MODE": mode}
    launcher = [str(HERE / "_serve_profiled.py")] if profile is not None else ["-m", "streamlit"]
    cmd = [sys.executable, *launcher, "run", str(app_root / "dashboard" / "app.py"), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]  # served, not developed: no hot reload (see the note in main)
    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

    with open(log, "w") as sink:
        proc = subprocess.Popen(cmd, cwd=app_root, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=cap if memory_cap else None)
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


def stop_server(proc: subprocess.Popen, sampler: Sampler, health: threading.Thread | None = None) -> None:
    """The pollers stopped, then the server (killed if it does not end within 20 s)."""
    if health is not None:
        health.stop.set()  # type: ignore[attr-defined]
        health.join(timeout=5)
    sampler.stop.set()
    sampler.join()
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


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
    stalls: int = 0  # switches (or first opens) that did not finish within SWITCH_TIMEOUT


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


async def _rerun(ws, query: str, page_hash: str = "", widget: tuple[str, str] | None = None,
                 timeout: float | None = None) -> Run:
    back = BackMsg()
    back.rerun_script.query_string = query
    back.rerun_script.page_script_hash = page_hash
    if widget is not None:
        state = back.rerun_script.widget_states.widgets.add()
        state.id, state.string_value = widget
    await ws.send(back.SerializeToString())
    run = Run()
    while True:
        data = await asyncio.wait_for(ws.recv(), timeout=timeout or SWITCH_TIMEOUT)
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
                  res: Result, sessions: int = 0, server_pid: int = 0, cycle: list[str] | None = None,
                  extra: tuple[tuple[str, str], ...] = ()) -> None:
    """One session; with `cycle`, it opens cycle[0] and then switches through the cycle in order; `extra`:
    more query parameters on every URL (`data`: another benchmark folder)."""
    rnd = random.Random(k)
    mine = cycle[0] if cycle else qids[k % len(qids)]
    query = urlencode([("sel", mine), *(("run", r) for r in runs), *extra])
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    try:
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=60,
                                      ping_interval=None) as ws:
            t0 = time.perf_counter()
            try:
                first = await _rerun(ws, query)  # the default page, with this session's question in the URL
                hash_ = first.pages.get(page, "")
                if not hash_:
                    res.errors.append(f"session {k}: no page {page!r} in the navigation ({sorted(first.pages)})")
                    return
                run = await _rerun(ws, query, hash_)
            except TimeoutError:
                res.stalls += 1
                res.errors.append(f"session {k}: its first page did not finish within {SWITCH_TIMEOUT:.0f} s")
                return
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
            step = 0
            while time.monotonic() < until:
                step += 1
                want = cycle[step % len(cycle)] if cycle else rnd.choice([q for q in qids if q != mine] or qids)
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
                    run = await _rerun(ws, urlencode([("sel", want), *(("run", r) for r in runs), *extra]), *sent)
                except TimeoutError:
                    res.stalls += 1
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


# ----------------------------------------------------------------------------- the hostile scenario

BOMB_MIB = 300  # a 300 KB Flate stream inflating to 300 MiB (above the heavy-page threshold, as in the tests)
HUGE_LETTERS = 1_000_000
HUGE_RUN = "huge-answer"


def _damaged_kit():
    """tests/damaged_kit.py: the byte-writing of the damaged PDFs and the bomb, shared with the tests."""
    sys.path.insert(0, str(ROOT / "tests"))
    import damaged_kit  # noqa: PLC0415

    return damaged_kit


def build_hostile(benchmark: Path, out: Path) -> tuple[Path, list[str], list[str], str]:
    """A copy of `benchmark` in `out` with the bomb, the damaged PDFs, a question on each and the run
    `huge-answer`. Returns the folder, the bomb session's cycle of questions, the 1 MB session's
    cycle and the first run (whose predictions `huge-answer` copies)."""
    kit = _damaged_kit()
    dst = out / benchmark.name
    shutil.copytree(benchmark, dst)
    gold_file = dst / "qa_single_doc.jsonl"
    template = json.loads(gold_file.read_text().splitlines()[0])
    doc_template = json.loads((dst / "documents.jsonl").read_text().splitlines()[0])
    pdfs = {"bomb": kit.bomb_bytes(BOMB_MIB), **kit.DAMAGED}
    questions, documents = [], []
    for n, (name, data) in enumerate(pdfs.items(), 1):
        doc_id = f"doc_{name}"
        kit.write(dst / "docs", doc_id, data)
        documents.append(doc_template | {"document_id": doc_id, "title": f"hostile: {name}", "page_count": 1,
                                         "file_size_bytes": len(data)})
        q = json.loads(json.dumps(template))
        q["question_id"] = f"hostile_{n:06d}_{name}"
        q["document"] = q["document"] | {"document_id": doc_id, "evidence_pages": [1]}
        for item in q["document"].get("evidence_items", []):
            item["pages"] = [1]
        questions.append(q)
    with open(gold_file, "a") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in questions)
    with open(dst / "documents.jsonl", "a") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in documents)
    # the 1 MB answer: the first run's predictions, one answer (on a real PDF) replaced by a million letters
    first = sorted(p for p in (benchmark / "runs").glob("*.json*"))[0]
    from scoring.loaders import load_predictions  # noqa: PLC0415

    preds = {pred.qid: pred for pred in load_predictions(first).items}
    target = template["question_id"]
    rnd = random.Random(17)
    huge = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(HUGE_LETTERS))
    with open(dst / "runs" / f"{HUGE_RUN}.jsonl", "w") as fh:
        for qid, pred in preds.items():
            fh.write(json.dumps({"question_id": qid, "prediction": huge if qid == target else pred.text}) + "\n")
    other = next(qid for qid in preds if qid != target)
    return dst, [q["question_id"] for q in questions], [target, other], first.stem


class HealthPoller(threading.Thread):
    """GET /_stcore/health every `every` s, one request at a time; the latency of each."""

    def __init__(self, base: str, every: float = 0.25, timeout: float = 600.0) -> None:
        super().__init__(daemon=True)
        self.base, self.every, self.timeout = base, every, timeout
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.inflight: float | None = None  # when the request still waiting started

    def run(self) -> None:
        while not self.stop.is_set():
            t = self.inflight = time.perf_counter()
            try:
                with urllib.request.urlopen(self.base + "/_stcore/health", timeout=self.timeout) as r:
                    r.read()
            except OSError as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}"[:200])
            self.latencies.append(time.perf_counter() - t)
            self.inflight = None
            self.stop.wait(self.every)

    def worst(self) -> float:
        """The slowest request, counting one still waiting as its time so far."""
        waiting = [time.perf_counter() - self.inflight] if self.inflight is not None else []
        return max(self.latencies + waiting, default=float("nan"))


async def drive_hostile(base: str, sessions: int, seconds: float, qids: list[str], runs: list[str], think: float,
                        bomb: list[str], huge: list[str], server_pid: int,
                        cap: float) -> tuple[Result, Result, Result, bool]:
    """Session 0 on the bomb and the damaged PDFs, session 1 on the 1 MB answer, the rest browsing;
    all of it cancelled after `cap` s. Returns the three results and whether it finished in time."""
    others, bomb_res, huge_res = Result(), Result(), Result()
    browse = [q for q in qids if q not in bomb]
    tasks = [session(0, base, "evidence", qids, runs, seconds, think, bomb_res, cycle=bomb),
             session(1, base, "evidence", qids, [HUGE_RUN], seconds, think, huge_res, cycle=huge),
             *(session(k, base, "evidence", browse, runs, seconds, think, others, sessions - 2, server_pid)
               for k in range(2, sessions))]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=cap)
        return others, bomb_res, huge_res, True
    except TimeoutError:
        return others, bomb_res, huge_res, False


def hostile(args) -> None:
    app_root = (args.app_root or ROOT).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        tmp = Path(tmp)
        bench, bomb, huge, first_run = build_hostile(args.benchmark, tmp)
        gold_files = [p for p in sorted(bench.glob("*.jsonl")) if p.name != "documents.jsonl"]
        qids = [q.qid for q in load_gold(gold_files).items if q.documents]
        runs = args.runs if args.runs is not None else sorted(
            p.stem for p in (args.benchmark / "runs").glob("*.json*"))[:2]
        proc, base, log = start_server(bench, tmp, app_root=app_root)
        sampler, health = Sampler(proc.pid), HealthPoller(base)
        sampler.start()
        health.start()
        t0 = time.perf_counter()
        try:
            others, bomb_res, huge_res, finished = asyncio.run(drive_hostile(
                base, args.sessions, args.seconds, qids, runs, args.think, bomb, huge, proc.pid, args.cap))
        finally:
            wall, health_worst, hl = time.perf_counter() - t0, health.worst(), list(health.latencies)
            stop_server(proc, sampler, health)
        server_log = log.read_text(errors="replace")
    label = "this checkout" if app_root == ROOT else str(app_root)
    try:
        commit = subprocess.run(["git", "-C", str(app_root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    lat = others.latencies
    print(f"bench_load --scenario hostile: the app of {label} ({commit}); 1 session on the bomb "
          f"({BOMB_MIB} MiB) and damaged PDFs, 1 on a {HUGE_LETTERS:,}-letter answer, {args.sessions - 2} browsing "
          f"the Evidence page for {args.seconds:.0f} s, pauses 0-{args.think:g} s, runs {runs}")
    print(f"  wall time                  {wall:8.1f} s   (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
          + ("" if finished else f"  -- did not finish within the cap of {args.cap:.0f} s"))
    print(f"  others: switches           {others.switches:8d}  (sessions opened {others.opened} of {args.sessions - 2})")
    print(f"  others: switch p50 / p95   {_pct(lat, .5):8.2f} / {_pct(lat, .95):.2f} s  (max {max(lat, default=float('nan')):.2f} s)")
    print(f"  others: first load p50/max {_pct(others.first_loads, .5):8.2f} / {max(others.first_loads, default=float('nan')):.2f} s")
    print(f"  others: stalls > {SWITCH_TIMEOUT:.0f} s      {others.stalls:8d}   errors {len(others.errors)}")
    print(f"  health: requests / worst   {len(hl):8d} / {health_worst:.2f} s  (p50 {_pct(hl, .5) * 1000:.0f} ms,"
          f" p99 {_pct(hl, .99):.2f} s, failures {len(health.failures)})")
    for name, r in (("bomb session", bomb_res), ("1 MB session", huge_res)):
        print(f"  {name}: first load {max(r.first_loads, default=float('nan')):.2f} s, switches {r.switches}, "
              f"max {max(r.latencies, default=float('nan')):.2f} s, stalls {r.stalls}, errors {len(r.errors)}")
    print(f"  server RSS peak            {sampler.peak / 1024:8.0f} MB;  tracebacks in server log {server_log.count('Traceback')}")
    for e in (others.errors + bomb_res.errors + huge_res.errors)[:12]:
        print("  error:", e)


# ----------------------------------------------------------------------------- hostile inputs (issue 35)


def _guard_kit():
    """tests/guard_kit.py: the hostile inputs of the read guard's tests (scoring/guard.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import guard_kit  # noqa: PLC0415

    return guard_kit


OPEN_TIMEOUT = 300.0  # s: a hostile input's Data page (its folder read and its other runs scored) under load
NESTED_MB = 48  # 16 M empty lists, 1.8 GB parsed: over the default read limit (a 24 MB one, 0.9 GB, reads under it)


def build_inputs(roots: Path) -> dict[str, tuple[Path, str]]:
    """Each hostile input of issue 35 in a folder of its own under `roots`: name -> (the folder a link's
    `data` opens, the file in it that must be named)."""
    kit = _guard_kit()
    out: dict[str, tuple[Path, str]] = {}
    for name, make in (("xlsx: a cell at column ZZZZZZZZZ (1.7 KB)", kit.far_column_xlsx),
                       ("xlsx: dimension A1:XFD1048576, a date style (2 KB)", kit.dimension_xlsx),
                       ("xlsx: shared strings inflating to 250 MB", kit.strings_bomb_xlsx)):
        where = roots / f"input{len(out)}"
        folder = kit.vlmevalkit_model(where)
        out[name] = (folder.parent, make(folder).name)
    for name, make in (("lmms-eval: a target of 16 MB (8 M items)", kit.lmms_with_hostile_target),
                       ("lmms-eval: a 2 GB sparse samples file", kit.sparse_samples)):
        where = roots / f"input{len(out)}"
        where.mkdir()
        folder = make(where)
        out[name] = (folder, max(folder.rglob("*_samples_*.jsonl"), key=lambda f: f.stat().st_size).name)
    where = roots / f"input{len(out)}" / "sample"
    shutil.copytree(ROOT / "sample_runs", where, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    first = sorted((where / "runs").glob("*.jsonl"))[0]
    qid = json.loads(first.read_text().splitlines()[0])["question_id"]
    kit.nested_list_predictions(where / "runs" / "hostile.jsonl", qid, mb=NESTED_MB)
    out[f"JSON lines: a {NESTED_MB} MB nested-list answer"] = (where, "hostile.jsonl")
    return out


@dataclass
class Opened:
    name: str
    seconds: float = float("nan")
    named: bool = False
    error: str = ""


async def open_inputs(base: str, inputs: dict[str, tuple[Path, str]], pause: float, start_after: float) -> list[Opened]:
    """One session after another opens each hostile input's Data page (`?data=<folder>`); how long each
    took and whether the page names the hostile file."""
    await asyncio.sleep(start_after)
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    out = []
    for name, (folder, file) in inputs.items():
        got = Opened(name)
        query = urlencode([("data", str(folder))])
        t = time.perf_counter()
        try:
            async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=60,
                                          ping_interval=None) as ws:
                first = await _rerun(ws, query, timeout=OPEN_TIMEOUT)
                run = await _rerun(ws, query, first.pages.get("data", ""), timeout=OPEN_TIMEOUT)
            got.seconds = time.perf_counter() - t
            got.named = any(file in text for text in run.texts)
            got.error = run.exceptions[0] if run.exceptions else ""
        except Exception as exc:  # a broken connection or a timeout is this input's result
            got.seconds, got.error = time.perf_counter() - t, f"{type(exc).__name__}: {exc}"[:200]
        out.append(got)
        await asyncio.sleep(pause)
    return out


def _own_peak_mb(pid: int) -> int:
    """The server process's own peak resident memory (VmHWM), its children not counted (MB; 0 if gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0) // 1024
    except OSError:
        return 0


def inputs(args) -> None:
    """--scenario inputs: `--sessions` - 1 sessions switching questions on the question explorer, half on
    the sample and half on a 13 x 1,519 benchmark (bench/make_synthetic_benchmark.py, opened by `data`),
    while one more session opens each hostile input of issue 35 in turn."""
    import make_synthetic_benchmark  # noqa: PLC0415

    app_root = (args.app_root or ROOT).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as tmp:
        tmp = Path(tmp)
        roots = tmp / "roots"
        synth = roots / "synthetic"
        synth.mkdir(parents=True)
        make_synthetic_benchmark.generate(synth)
        hostile = build_inputs(roots)
        sample_q = [q.qid for q in load_gold([p for p in sorted(args.benchmark.glob("*.jsonl"))
                                              if p.name != "documents.jsonl"]).items]
        synth_q = [q.qid for q in load_gold(sorted(synth.glob("qa_*.jsonl"))).items]
        env = {"LENS_DATA_ROOTS": str(roots)}
        proc, base, log = start_server(args.benchmark, tmp, app_root=app_root, env_extra=env,
                                       memory_cap=int(args.server_memory * (1 << 30)))
        sampler, health = Sampler(proc.pid), HealthPoller(base, every=0.25, timeout=120)
        sampler.start()
        health.start()
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        others = Result()
        browsing = args.sessions - 1

        async def drive_all() -> list[Opened]:
            tasks = [session(k, base, "questions", synth_q if k % 2 else sample_q, [], args.seconds, args.think,
                             others, browsing, proc.pid, extra=(("data", str(synth)),) if k % 2 else ())
                     for k in range(browsing)]
            opening = asyncio.ensure_future(open_inputs(base, hostile, pause=2.0, start_after=args.hostile_after))
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.cap)
            return await asyncio.wait_for(opening, timeout=args.cap)

        try:
            opened = asyncio.run(drive_all())
        except TimeoutError:
            opened = []
        finally:
            wall, hl, worst = time.perf_counter() - t0, list(health.latencies), health.worst()
            own = _own_peak_mb(proc.pid)
            stop_server(proc, sampler, health)
        server_log = log.read_text(errors="replace")
    lat = others.latencies
    label = "this checkout" if app_root == ROOT else str(app_root)
    print(f"bench_load --scenario inputs: the app of {label}; {browsing} sessions on the question explorer "
          f"(half sample_runs/, half 13 x 1,519 by `data`), pauses 0-{args.think:g} s, for {args.seconds:.0f} s; "
          f"one more session opens {len(hostile)} hostile inputs one after the other"
          + (f"; server address space capped at {args.server_memory:g} GB" if args.server_memory else ""))
    print(f"  wall time                  {wall:8.1f} s   (load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after, "
          f"{os.cpu_count()} cores)")
    print(f"  others: switches           {others.switches:8d}  (sessions opened {others.opened} of {browsing}; "
          f"errors {len(others.errors)}, stalls > {SWITCH_TIMEOUT:.0f} s {others.stalls})")
    print(f"  others: page p50 / p95     {_pct(lat, .5):8.2f} / {_pct(lat, .95):.2f} s  (max {max(lat, default=float('nan')):.2f} s)")
    print(f"  others: first load p50/max {_pct(others.first_loads, .5):8.2f} / "
          f"{max(others.first_loads, default=float('nan')):.2f} s")
    print(f"  health: requests           {len(hl):8d}   p50 {_pct(hl, .5) * 1000:.0f} ms, p99 {_pct(hl, .99):.2f} s, "
          f"max {worst:.2f} s, failures {len(health.failures)}")
    print(f"  server RSS peak            {sampler.peak / 1024:8.0f} MB (server and its children, sampled); the server's "
          f"own {own} MB (VmHWM); tracebacks in server log {server_log.count('Traceback')}")
    for got in opened:
        print(f"  input: {got.name:<52} {got.seconds:6.1f} s  named: {'yes' if got.named else 'NO'}"
              + (f"  error: {got.error}" if got.error else ""))
    for e in others.errors[:12]:
        print("  error:", e)


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
    ap.add_argument("--scenario", choices=["browse", "hostile", "inputs"], default="browse",
                    help="hostile: one session on a decompression bomb, one on a 1 MB answer, the rest browsing; "
                         "inputs: one session opens each hostile input of issue 35 while the rest browse")
    ap.add_argument("--hostile-after", type=float, default=20.0,
                    help="inputs: seconds after the start before the hostile inputs are opened (the others' first loads)")
    ap.add_argument("--server-memory", type=float, default=0.0, metavar="GB",
                    help="inputs: cap the server's address space (for a checkout that reads the inputs in its own process)")
    ap.add_argument("--app-root", type=Path, default=None, help="serve the app of this checkout (default: this one)")
    ap.add_argument("--switch-timeout", type=float, default=60.0, help="a switch slower than this is a stall")
    ap.add_argument("--cap", type=float, default=300.0, help="hostile: cancel everything after this many seconds")
    args = ap.parse_args()
    global SWITCH_TIMEOUT  # noqa: PLW0603  (read by _rerun and the reports)
    SWITCH_TIMEOUT = args.switch_timeout
    if args.scenario == "hostile":
        hostile(args)
        return
    if args.scenario == "inputs":
        inputs(args)
        return

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
            stop_server(proc, sampler)
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
    """The max_entries of every st.cache_* in dashboard/shell/cache.py, dashboard/evidence/panel.py and
    dashboard/annotations/store_panel.py, and the store capacities (read from the source: importing
    them outside a Streamlit runtime only logs warnings)."""
    src = "\n".join((ROOT / "dashboard" / rel).read_text() for rel in ("shell/cache.py", "evidence/panel.py", "annotations/store_panel.py"))
    found = re.findall(r"@st\.cache_(?:data|resource)\(([^)]*)\)\s*\ndef (\w+)", src)
    entries = re.compile(r"max_entries=(\d+)")
    parts = [f"{name} {entries.search(a).group(1) if entries.search(a) else 'unbounded'}" for a, name in found]
    parts += [f"{m.group(1)} = {m.group(2)}" for m in re.finditer(r"^([A-Z_]*CAPACITY[A-Z_]*) = (\d+)", src, re.M)]
    return ", ".join(parts)


if __name__ == "__main__":
    main()

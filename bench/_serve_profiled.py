"""`streamlit run ...` with every script run measured (bench_load.py --profile FILE): the CPU time
of the script thread (time.thread_time) and the wall time of each run, and with
BENCH_PROFILE_MODE=cprofile a cProfile of each run merged into one table. At exit it writes to FILE
the runs' count, CPU and wall per run, the process's CPU beside it (the rest: the event loop
sending the messages, serving media, other threads), the garbage collector's pauses by generation
(gc.callbacks, all threads), how many runs ended with the collector disabled (a process-wide
gc.disable() around loading or scoring must not outlive it) and the top functions of the profile."""

from __future__ import annotations

import atexit
import collections
import cProfile
import gc
import io
import os
import pstats
import resource
import signal
import statistics
import sys
import threading
import time

OUT = os.environ.pop("BENCH_PROFILE_OUT")
MODE = os.environ.pop("BENCH_PROFILE_MODE", "cpu")
lock = threading.Lock()
cpu: list[float] = []
wall: list[float] = []
stats: list[pstats.Stats] = []
gc_disabled_at_end = 0
pauses: dict[int, list[float]] = collections.defaultdict(list)
gc_started: dict[str, float] = {}


def on_gc(phase: str, info: dict) -> None:
    if phase == "start":
        gc_started["t"] = time.perf_counter()
    elif "t" in gc_started:
        pauses[info["generation"]].append(time.perf_counter() - gc_started.pop("t"))


def install() -> None:
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script

    def measured(self, *a, **kw):
        prof = cProfile.Profile() if MODE == "cprofile" else None
        c, w = time.thread_time(), time.perf_counter()
        if prof is not None:
            prof.enable()
        try:
            return original(self, *a, **kw)
        finally:
            if prof is not None:
                prof.disable()
            dc, dw = time.thread_time() - c, time.perf_counter() - w
            global gc_disabled_at_end
            with lock:
                gc_disabled_at_end += not gc.isenabled()
                cpu.append(dc)
                wall.append(dw)
                if prof is not None:
                    if stats:
                        stats[0].add(prof)
                    else:
                        stats.append(pstats.Stats(prof))

    script_runner.ScriptRunner._run_script = measured


def dump() -> None:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    with open(OUT, "w") as fh:
        if cpu:
            fh.write(f"script runs {len(cpu)}: CPU per run median {statistics.median(cpu) * 1000:.0f} ms, mean "
                     f"{statistics.fmean(cpu) * 1000:.0f} ms, total {sum(cpu):.1f} s; wall per run median "
                     f"{statistics.median(wall) * 1000:.0f} ms\n")
        fh.write(f"process CPU {ru.ru_utime + ru.ru_stime:.1f} s (of which script threads {sum(cpu):.1f} s)\n")
        for gen in sorted(pauses):
            xs = pauses[gen]
            fh.write(f"gc generation {gen}: {len(xs)} collections, {sum(xs) * 1000:.0f} ms in all, longest "
                     f"{max(xs) * 1000:.1f} ms\n")
        fh.write(f"script runs that ended with the collector disabled: {gc_disabled_at_end}; enabled at exit: "
                 f"{gc.isenabled()}\n")
        if stats:
            for order in ("cumulative", "tottime"):
                out = io.StringIO()
                stats[0].stream = out
                stats[0].strip_dirs().sort_stats(order).print_stats(70)
                text = out.getvalue()
                fh.write(text[text.find("   ncalls"):])


gc.callbacks.append(on_gc)
atexit.register(dump)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
install()

from streamlit.web.cli import main  # noqa: E402

sys.argv = ["streamlit", *sys.argv[1:]]
main()

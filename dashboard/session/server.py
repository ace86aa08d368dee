"""`python -m dashboard.session.server run <app.py> [Streamlit's options] [-- the app's arguments]`: Streamlit's
server (its own command line, in this process) that reads the configured benchmark while it starts.

`docbench-lens serve` runs this. Streamlit runs the app's script only when a browser connects, so a
restarted server used to start reading the benchmark then: after the server's own start and the
browser's loading of the page (1-2 s together). Here a thread reads, scores and builds what the first
visit shows (`dashboard.session.load.warm`, under the keys that visit makes) as soon as the process
starts; the first browser's script finds it in the caches, or waits for the read under way (Streamlit's
cache computes a value once, with a lock per key). Nothing here changes what any page shows.

The console says when the benchmark is ready, and in one sentence (no traceback) why it could not be
read ahead -- the first visit then reads it and shows the problem where the user is looking.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Sequence

WARM_THREAD = "lens-warm"  # the thread's name
CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"  # warns of a call made outside a session


def app_arguments(argv: Sequence[str]) -> list[str]:
    """The app's own arguments: what follows `--` in `streamlit run`'s command line."""
    args = list(argv)
    return args[args.index("--") + 1:] if "--" in args else []


def warm(app_args: Sequence[str], say=print) -> bool:
    """Read, score and build the configured benchmark's first view (dashboard.session.load.warm); True when done."""
    started = time.perf_counter()
    try:
        from dashboard.core.paths import sources_from
        from dashboard.session.load import warm as warm_caches

        sources = sources_from(list(app_args), os.environ)
        profile = warm_caches(sources)
    except BaseException as exc:  # noqa: BLE001  (a daemon thread: st.stop() raises a BaseException; the visit will say it)
        from scoring.redact import password_of, redact

        known = [password_of(v) for v in os.environ.values() if "://" in v]  # a database URL's password, wherever it shows
        # masked before it is cut: a password cut in two would no longer be found
        say(f"  DocBench Lens: the benchmark was not read ahead ({type(exc).__name__}: {redact(str(exc), known)[:300]}); "
            "the first visit reads it.", file=sys.stderr, flush=True)
        return False
    where = sources.benchmark or "the files given"
    say(f"  DocBench Lens: {where} read and scored ({profile}) in {time.perf_counter() - started:.1f} s, "
        "ready for the first visit.", file=sys.stderr, flush=True)
    return True


def _not_from_warming(record: logging.LogRecord) -> bool:
    return record.threadName != WARM_THREAD


def start_warming(argv: Sequence[str]) -> threading.Thread:
    """`warm` in a daemon thread (the server does not wait for it, nor stops for it). Streamlit's warning that
    a thread calls it without a session ("missing ScriptRunContext", once per call) is dropped for this thread:
    that is what it is meant to do."""
    logging.getLogger(CONTEXT_LOGGER).addFilter(_not_from_warming)
    thread = threading.Thread(target=warm, args=(app_arguments(argv),), name=WARM_THREAD, daemon=True)
    thread.start()
    return thread


def main(argv: Sequence[str] | None = None) -> None:
    from streamlit.web.cli import main as streamlit_main

    args = list(sys.argv[1:] if argv is None else argv)
    start_warming(args)
    streamlit_main(args, prog_name="streamlit")


if __name__ == "__main__":
    main()

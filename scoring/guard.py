"""Files a user or a harness left are read where they can be killed (issue 35.1). No streamlit here.

Every reader of a user's file (gold, predictions, scores, documents, harness folders, uploads) runs
inside a *bracket*, `reading(path)`: a process reading inside a bracket has a memory limit
(`RLIMIT_AS`: its address space may grow by at most the read's memory limit) and a CPU limit
(`RLIMIT_CPU`), and tells its *supervisor* -- another process -- when the bracket opens and closes,
so that the supervisor can kill it when the read outlasts its wall-clock budget. A process that
runs out of memory, is killed, or crashes inside a bracket costs that one file: the supervisor
starts the work again with the file *refused* -- its bracket then gives the call site a `Problem`
("x.xlsx needs more than 1 GB to read; not read", "x.jsonl was not read within 60 s (the budget,
LENS_READ_BUDGET_S); not read") instead of reading it -- and the rest loads. The work is started
again at most MAX_REFUSALS times; after that every file it had not finished reading is refused.

Two ways to be supervised:

- `job(fn, ...)` (the app's server, a library caller, a test): `fn` runs in a child process started
  from the forkserver (a clean interpreter: neither the server's heap nor its threads), its result
  pickled back -- our own result objects only; a user's file is never unpickled. A call from a
  process that is already supervised, or one whose every file is small and of a format whose bytes
  bound the memory its parsing takes (JSON, JSON lines, CSV: `bounded=True`; never a workbook,
  whose 2 KB can claim a billion cells, nor lmms-eval's Python literals), runs `fn` here.
- `supervise()` (the command line, `python -m scoring`): the process forks once at its start; the
  parent becomes the supervisor and the child runs the command. A file that stops the child is
  refused and the command runs again from the start in a new child, its output up to the refused
  file not printed twice; the supervisor exits with the child's status. Nothing is transferred
  between processes, so the normal path costs one fork (bench/bench_scoring.py measures it).

The limits are settings: LENS_READ_MEMORY (default 1G; "512M", "2G", "1.5G" or bytes) and
LENS_READ_BUDGET_S (default 60 seconds), declared in scoring/settings.py because the command line reads
them too (dashboard/core/settings.py lists them with the app's other settings); parsed here. For the
formats whose bytes bound the memory and time parsing takes (`bounded=True`), a large file may take
BOUNDED_FACTOR times its size of memory and a second per BOUNDED_RATE bytes when that is more than
the settings: a legitimate 400 MB gold file (a million questions) reads, a hostile one that
expands 25 times does not.

Where `resource` is missing (not a Unix) nothing can be limited: the readers run here, unguarded.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ._gc import paused_gc
from .problems import Problem
from .settings import READ_BUDGET, READ_MEMORY
from .workers import bare_main, die_with_parent, forkserver_context, no_pool_here

try:
    import resource
except ImportError:  # pragma: no cover - not a Unix
    resource = None  # type: ignore[assignment]

__all__ = ["MEMORY_VARIABLE", "BUDGET_VARIABLE", "Limits", "limits", "parse_memory", "format_memory", "reading",
           "read", "job", "here", "supervise", "refused", "guarded", "REFUSED_KIND"]

T = TypeVar("T")

MEMORY_VARIABLE = READ_MEMORY.name  # LENS_READ_MEMORY, declared in scoring/settings.py
BUDGET_VARIABLE = READ_BUDGET.name  # LENS_READ_BUDGET_S
DEFAULT_MEMORY = 1 << 30  # READ_MEMORY.default, "1G"
DEFAULT_BUDGET_S = 60.0  # READ_BUDGET.default
MIN_MEMORY = 32 << 20  # a smaller limit is raised to this (an interpreter cannot read anything in less)
MAX_BUDGET_S = 86_400.0
BOUNDED_FACTOR = 8  # a JSON / JSON-lines / CSV file of n bytes may take 8n of memory (gold: about 4n)
BOUNDED_RATE = 4 << 20  # and a second per 4 MB (the loaders parse 20-60 MB a second)
# `job` reads bounded files up to this size here: parsing JSON takes at most ~34 times a file's size (a
# 4 MB line of empty lists, `[],` repeated, took 135 MB; dicts the same, short strings 88 MB), so at most
# ~70 MB a file -- and XL-DocBench's release (1.6 MB of gold, 0.2-0.5 MB a run) opens without a process
INLINE_MAX_BYTES = 2 << 20
MAX_REFUSALS = 8  # files refused before the rest of the work's unread files are refused together
JOB_SLOTS = 2  # jobs of one process that run at once (each may take the memory limit)
POLL_S = 0.2  # how often a supervisor looks at a grandchild reading inside a bracket
MEMORY_EXIT = 86  # a supervised process ran out of memory inside a bracket (the supervisor was told)
REFUSED_KIND = "files over the read limits"
EXPECTED = f"a file read within the read limits ({MEMORY_VARIABLE}, {BUDGET_VARIABLE})"
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_INTERRUPTS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


# ----------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Limits:
    """What one read may take: bytes of address space beyond what its process holds, wall seconds."""

    memory: int = DEFAULT_MEMORY
    budget_s: float = DEFAULT_BUDGET_S


def parse_memory(text: str) -> int | None:
    """A size as LENS_READ_MEMORY gives it -- "1G", "512M", "1.5G", "2GB", "512MiB", "800k", or bytes --
    in bytes (units are powers of 1024); None when it is not such a size."""
    t = text.strip().upper().replace(" ", "")
    for tail in ("IB", "B"):
        if t.endswith(tail) and len(t) > len(tail) and t[-len(tail) - 1] in "KMGT":
            t = t[: -len(tail)]
            break
    unit = t[-1:] if t[-1:] in _UNITS and not t[-1:].isdigit() else ""
    number = t[: len(t) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        return None
    if not (value > 0) or value != value or value == float("inf"):
        return None
    return int(value * _UNITS[unit])


def format_memory(n: int) -> str:
    """Bytes as the messages write them: 1 GB, 1.5 GB, 512 MB (powers of 1024)."""
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if abs(value - round(value)) < 0.05 else f"{value:.1f} {unit}"
    return f"{n} bytes"


def limits(environ: Mapping[str, str] | None = None) -> Limits:
    """LENS_READ_MEMORY and LENS_READ_BUDGET_S as Limits: unset, empty or unreadable values take the
    defaults (1 GB, 60 s); a memory below 32 MB is raised to 32 MB; a budget is at most a day."""
    memory = parse_memory(READ_MEMORY.value(environ)) or DEFAULT_MEMORY
    try:
        budget = float(READ_BUDGET.value(environ).strip() or DEFAULT_BUDGET_S)
    except ValueError:
        budget = DEFAULT_BUDGET_S
    if not 0 < budget <= MAX_BUDGET_S:
        budget = DEFAULT_BUDGET_S
    return Limits(max(memory, MIN_MEMORY), budget)


def _file_size(path: str | Path) -> int:
    try:
        return max(0, os.stat(path).st_size)
    except (OSError, ValueError):
        return 0


def file_limits(path: str | Path, bounded: bool, base: Limits) -> tuple[Limits, bool]:
    """The limits of reading `path`, and whether they were raised for its size (bounded formats only)."""
    if not bounded:
        return base, False
    size = _file_size(path)
    memory, budget = max(base.memory, BOUNDED_FACTOR * size), max(base.budget_s, size / BOUNDED_RATE)
    return Limits(memory, budget), memory > base.memory


# ----------------------------------------------------------------------------- refusals


@dataclass(frozen=True)
class Refusal:
    """Why a file is not read, in words (the Problem's `got`, its name replaced by the call site's)."""

    why: str  # "needs more than 1 GB to read" -- the sentence after the file's name
    kind: str = REFUSED_KIND

    def problem(self, shown: str) -> Problem:
        base = Path(shown).name or shown
        return Problem.error(shown, None, None, EXPECTED, f"{base} {self.why}; not read", kind=self.kind)


def _key(path: str | Path) -> str:
    return hashlib.sha256(os.fsencode(str(path))).hexdigest()[:32]


# ----------------------------------------------------------------------------- this process's part

_LOCK = threading.Lock()


@dataclass
class _State:
    channel: Any = None  # the write end to the supervisor: this process (or an ancestor it forked from) is supervised
    limits: Limits | None = None
    refused: dict[str, Refusal] = field(default_factory=dict)
    done: frozenset[str] | None = None  # the last attempt: any file not read before is refused
    mute_until: str = ""  # the command line's replay: no output until the bracket of this key
    seen_before: frozenset[str] = frozenset()  # the keys the attempt before this one opened
    depth: int = 0  # brackets open in this process
    open: list[str] = field(default_factory=list)  # their keys, the innermost last
    saved: tuple | None = None  # (RLIMIT_AS, RLIMIT_CPU) before the first open bracket


_STATE = _State()
_LOCAL = threading.local()


def guarded() -> bool:
    """Whether a file read here is read where it can be killed: this process is supervised (a job's child,
    the command line's child, or forked from one), or it is a worker process of ours (a pool's: it may
    die; its caller reads the file again in a bracket of its own)."""
    if _STATE.channel is not None:
        return True
    import multiprocessing

    return multiprocessing.parent_process() is not None


def _plain() -> bool:
    return resource is not None and not guarded() and hasattr(os, "fork")


def _send(message: tuple) -> None:
    ch = _STATE.channel
    if ch is None:
        return
    with contextlib.suppress(OSError, ValueError):
        ch.send(message)


def _vm_bytes() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _lower(lim: Limits) -> None:
    """The first open bracket: this process's address space may grow by lim.memory, its CPU by lim.budget_s."""
    _STATE.saved = (resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CPU))
    (_, as_hard), (_, cpu_hard) = _STATE.saved
    vm = _vm_bytes()
    with contextlib.suppress(ValueError, OSError):
        if vm is not None:
            soft = vm + lim.memory
            resource.setrlimit(resource.RLIMIT_AS, (soft if as_hard < 0 else min(soft, as_hard), as_hard))
        cpu = int(_cpu_s() + lim.budget_s) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (cpu if cpu_hard < 0 else min(cpu, cpu_hard), cpu_hard))


def _restore() -> None:
    saved, _STATE.saved = _STATE.saved, None
    if saved is None:
        return
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, saved[0])
        resource.setrlimit(resource.RLIMIT_CPU, saved[1])


def _after_fork_in_child() -> None:
    """A process forked inside a bracket (a scoring part the gold's reading starts) is not reading:
    it gets the limits of before the bracket back."""
    if _STATE.depth:
        _restore()
        _STATE.depth = 0
        _STATE.open = []
    _LOCAL.__dict__.clear()


def _uncaught(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    """A supervised process's MemoryError that reached the top while a bracket was open (raised in a frame
    above the bracket's own, e.g. a loop over a reader's lines): the file of the innermost bracket is
    refused, as if the bracket had seen it."""
    if issubclass(kind, MemoryError) and _STATE.open:
        _out_of_memory(_STATE.open[-1])
    _PREVIOUS_HOOK(kind, value, tb)


_PREVIOUS_HOOK = sys.excepthook


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def refused(path: str | Path, shown: str | None = None) -> Problem | None:
    """The Problem that refuses `path` in this supervised work, or None (it may be read)."""
    got = _STATE.refused.get(_key(path))
    return got.problem(str(shown if shown is not None else path)) if got is not None else None


@contextlib.contextmanager
def reading(path: str | Path, shown: str | None = None, *, bounded: bool = False) -> Iterator[Problem | None]:
    """Read `path` inside this block where it can be killed. Yields None -- read it -- or the Problem
    that refuses it (the block then reads nothing and reports that Problem). `shown` is how the file is
    named to the user (default: the path); `bounded`: the format's bytes bound what parsing it takes
    (JSON, JSON lines, CSV), so its limits grow with its size.

    In a process that is neither supervised nor a worker of ours (the server itself, a library caller) the
    block runs unguarded: those callers go through `job` or `read`, which supervise it."""
    name = str(shown if shown is not None else path)
    if resource is None or not guarded():
        yield None
        return
    key = _key(path)
    open_here: set[str] = _LOCAL.__dict__.setdefault("keys", set())
    if key in open_here:  # the same file again inside its own bracket (a loader calling another)
        yield None
        return
    if _STATE.mute_until and (key == _STATE.mute_until or key not in _STATE.seen_before):
        _unmute()
    why = _STATE.refused.get(key)
    if why is None and _STATE.done is not None and key not in _STATE.done:
        why = Refusal(f"was skipped after {MAX_REFUSALS} other files went over the read limits")
    if why is not None:
        yield why.problem(name)
        return
    lim, scaled = file_limits(path, bounded, _STATE.limits or limits())
    for stream in (sys.stdout, sys.stderr):  # what was printed before the read is out before it can stop
        with contextlib.suppress(Exception):
            stream.flush()
    with _LOCK:
        if _STATE.depth == 0:
            _lower(lim)
        _STATE.depth += 1
        _STATE.open.append(key)
    open_here.add(key)
    _send(("B", os.getpid(), key, name[-300:], lim.memory, lim.budget_s, scaled))
    try:
        yield None
    except MemoryError:
        _out_of_memory(key)
        raise
    finally:
        open_here.discard(key)
        with _LOCK:
            _STATE.depth -= 1
            with contextlib.suppress(ValueError):
                _STATE.open.remove(key)
            if _STATE.depth == 0:
                _restore()
        _send(("E", os.getpid(), key))


def _out_of_memory(key: str) -> None:
    """A MemoryError left a bracket: the supervisor refuses the file and starts the work again; this
    process (whose objects are half-built) ends here. A disposable worker just ends (its caller reads
    the file again in its own bracket)."""
    _restore()
    _send(("M", os.getpid(), key))
    os._exit(MEMORY_EXIT)


def read(fn: Callable[..., T], path: str | Path, *args: Any, shown: str | None = None, bounded: bool = False,
         refused: Callable[[Problem], T], **kwargs: Any) -> T:
    """`fn(path, *args, **kwargs)` inside a bracket; `refused(problem)` when the file is refused. From a
    process that is not supervised, the call runs as a `job` (see there)."""
    if _plain():
        done, value = job(_read_in_job, fn, path, args, kwargs, shown, bounded, paths=[path], bounded=bounded,
                          failed=lambda p: (False, p))
        return value if done else refused(value)
    with reading(path, shown, bounded=bounded) as problem:
        if problem is not None:
            return refused(problem)
        return fn(path, *args, **kwargs)


def _read_in_job(fn: Callable, path: str | Path, args: tuple, kwargs: dict, shown: str | None,
                 bounded: bool) -> tuple[bool, Any]:
    with reading(path, shown, bounded=bounded) as problem:
        if problem is not None:
            return False, problem
        return True, fn(path, *args, **kwargs)


def _harmless(paths: Sequence[str | Path], bounded: bool) -> bool:
    """Whether every path is a regular file of at most INLINE_MAX_BYTES of a bounded format (or missing:
    its loader says so), so that reading them here cannot take more than about 70 MB each."""
    if not bounded:
        return False
    import stat as st

    for p in paths:
        try:
            info = os.stat(p)
        except (OSError, ValueError):
            continue
        if not st.S_ISREG(info.st_mode) or info.st_size > INLINE_MAX_BYTES:
            return False
    return True


_SLOTS = threading.BoundedSemaphore(JOB_SLOTS)


def here(paths: Sequence[str | Path] = (), *, bounded: bool = False) -> bool:
    """Whether `job` runs its function in this process: this process is supervised or a worker of ours, or
    every one of `paths` is a small file of a bounded format (see `job`)."""
    return not _plain() or (bool(paths) and _harmless(paths, bounded))


def job(fn: Callable[..., T], *args: Any, paths: Sequence[str | Path] = (), bounded: bool = False,
        failed: Callable[[Problem], T] | None = None, shown: str | None = None, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` where the files it reads (inside `reading` brackets) can be killed: here when
    this process is already supervised (or a worker of ours), or when every one of `paths` is a small file of
    a bounded format; else in a supervised child process (forkserver), its result pickled back. A child
    that stops outside any bracket, or that cannot start, gives `failed(problem)` (which must be given
    then), the problem naming `shown` (default: the first path)."""
    if here(paths, bounded=bounded):
        return fn(*args, **kwargs)
    what = str(shown if shown is not None else (paths[0] if paths else getattr(fn, "__name__", "a file")))
    with _SLOTS:
        outcome = _supervised_job(fn, args, kwargs, limits())
    if outcome.kind == "result":
        return outcome.value
    why = outcome.text or _status_text(outcome.status)
    problem = Refusal(f"could not be read: its reader stopped ({why})", kind="files whose reader stopped").problem(what)
    if failed is None:
        raise RuntimeError(problem.got)
    return failed(problem)


# ----------------------------------------------------------------------------- the supervisor


@dataclass
class _Outcome:
    kind: str  # "result", "refused", "exited" (status), "died" (status, text)
    value: Any = None
    key: str = ""
    refusal: Refusal | None = None
    status: int = 0  # an exit code, or minus the signal
    text: str = ""


@dataclass
class _Bracket:
    pid: int
    key: str
    name: str
    memory: int
    budget_s: float
    scaled: bool
    start: float


class _Child:
    """What a supervisor watches: a connection it reads, something that becomes ready when the child ends."""

    pid: int
    sentinel: Any

    def kill(self) -> None:
        raise NotImplementedError

    def status(self) -> int:
        """After it ended: its exit code, or minus the signal that ended it."""
        raise NotImplementedError


class _JobChild(_Child):
    def __init__(self, fn: Callable, args: tuple, kwargs: dict, state: dict) -> None:
        ctx: Any = forkserver_context()
        self.conn, child = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_job_main, args=(child, fn, args, kwargs, state), daemon=True,
                                name="lens-reader")
        with bare_main():
            self.proc.start()
        child.close()
        self.pid, self.sentinel = self.proc.pid or 0, self.proc.sentinel

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.proc.kill()

    def status(self) -> int:
        self.proc.join()
        code = self.proc.exitcode
        return 0 if code is None else code

    def close(self) -> None:
        self.conn.close()
        with contextlib.suppress(ValueError):
            self.proc.close()


def _received(conn) -> tuple:
    """The next message from a job's child. Its result is a reader's records, tens of thousands of small
    objects, unpickled with the cyclic collector paused (as `load_gold` pauses it around its whole job):
    with it running, its passes took half of the unpickling (20,000 gold questions: 0.60-0.84 s, 0.24 s paused)."""
    with paused_gc():
        return conn.recv()


def _job_main(conn, fn: Callable, args: tuple, kwargs: dict, state: dict) -> None:
    """A job's child: supervised through `conn`; sends ("R", result) or ("X", what went wrong)."""
    die_with_parent()
    no_pool_here()  # its reads are bracketed one after the other, never handed to other processes
    _become_supervised(conn, state)
    with contextlib.suppress(ValueError, OSError):  # a crash leaves no core file behind
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    try:
        value = fn(*args, **kwargs)
        with paused_gc():  # pickling tens of thousands of records: no collector passes over them meanwhile
            conn.send(("R", value))
    except MemoryError:
        if _STATE.open:  # raised above a bracket's own frame while it was open: that file's
            _out_of_memory(_STATE.open[-1])
        _send(("X", "out of memory outside the reading of a file"))
        os._exit(MEMORY_EXIT)
    except BaseException as exc:  # noqa: BLE001 - a bug of ours: said to the caller, which names the file
        _send(("X", f"{type(exc).__name__}: {str(exc)[:300]}"))
        os._exit(1)


def _become_supervised(channel, state: dict) -> None:
    _STATE.channel = channel
    _STATE.limits = state["limits"]
    _STATE.refused = dict(state["refused"])
    _STATE.done = state.get("done")
    _STATE.mute_until = state.get("mute_until", "")
    _STATE.seen_before = state.get("seen_before", frozenset())


def _supervised_job(fn: Callable, args: tuple, kwargs: dict, lim: Limits) -> _Outcome:
    """Run the job in a child, again with each refused file until it ends otherwise."""
    state: dict[str, Any] = {"limits": lim, "refused": {}}
    finished: set[str] = set()
    for attempt in range(MAX_REFUSALS + 1):
        if attempt == MAX_REFUSALS:
            state["done"] = frozenset(finished)
        try:
            child = _JobChild(fn, args, kwargs, state)
        except (OSError, ValueError, ImportError, RuntimeError) as exc:
            return _Outcome("died", status=1, text=f"no reader process could start: {exc}")
        try:
            outcome = _watch(child, finished)
        finally:
            child.close()
        if outcome.kind != "refused":
            return outcome
        state["refused"] = {**state["refused"], outcome.key: outcome.refusal}
    return _Outcome("died", status=1, text="too many files over the read limits")


def _alive(pid: int) -> bool:
    """Whether a process (a grandchild, which this one cannot wait for) still runs: not gone, not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def _kill_pid(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _watch(child: _Child, finished: set[str]) -> _Outcome:
    """Read the child's messages until it ends; kill it when a read outlasts its budget or a grandchild
    dies inside a bracket. `finished` collects the keys whose brackets closed."""
    from multiprocessing.connection import wait

    conn = child.conn  # type: ignore[attr-defined]
    open_: dict[tuple[int, str], _Bracket] = {}
    memory: tuple[int, str] | None = None
    result: Any = None
    have_result, text = False, ""
    waiting = [conn, child.sentinel]
    while True:
        now = time.monotonic()
        timeout = None
        if open_:
            timeout = max(0.0, min(b.start + b.budget_s for b in open_.values()) - now)
            if any(pid != child.pid for pid, _ in open_):
                timeout = min(timeout, POLL_S)
        ready = wait(waiting, timeout)
        if conn in ready:
            try:
                msg = _received(conn)
            except (EOFError, OSError):
                waiting = [child.sentinel]
                continue
            tag = msg[0]
            if tag == "B":
                _, pid, key, name, mem, budget, scaled = msg
                open_[(pid, key)] = _Bracket(pid, key, name, mem, budget, scaled, time.monotonic())
            elif tag == "E":
                if open_.pop((msg[1], msg[2]), None) is not None:
                    finished.add(msg[2])
            elif tag == "M":
                memory = (msg[1], msg[2])
            elif tag == "R":
                result, have_result = msg[1], True
            elif tag == "X":
                text = msg[1]
            if memory is not None:  # the process is ending; a grandchild's parent is killed with it
                b = open_.get(memory)
                child.kill()
                child.status()
                if b is None:
                    return _Outcome("died", status=MEMORY_EXIT, text="out of memory")
                return _Outcome("refused", key=b.key, refusal=_memory_refusal(b))
            continue
        if child.sentinel in ready:
            status = child.status()
            with contextlib.suppress(EOFError, OSError):  # what it sent before it ended
                while conn.poll():
                    msg = _received(conn)
                    if msg[0] == "R":
                        result, have_result = msg[1], True
                    elif msg[0] == "X":
                        text = msg[1]
                    elif msg[0] == "M":
                        memory = (msg[1], msg[2])
                    elif msg[0] == "B":
                        open_[(msg[1], msg[2])] = _Bracket(msg[1], msg[2], msg[3], msg[4], msg[5], msg[6], time.monotonic())
                    elif msg[0] == "E" and open_.pop((msg[1], msg[2]), None) is not None:
                        finished.add(msg[2])
            if have_result:
                return _Outcome("result", value=result)
            mine = [b for (pid, _), b in open_.items() if pid == child.pid]
            if memory is not None and memory in open_:
                return _Outcome("refused", key=memory[1], refusal=_memory_refusal(open_[memory]))
            if mine and status < 0 and -status not in _INTERRUPTS:
                b = max(mine, key=lambda b: b.start)
                return _Outcome("refused", key=b.key, refusal=_crash_refusal(b, -status))
            return _Outcome("exited" if status >= 0 and not text else "died", status=status, text=text)
        now = time.monotonic()
        late = [b for b in open_.values() if now - b.start >= b.budget_s]
        if late:
            b = min(late, key=lambda b: b.start)
            if b.pid != child.pid:
                _kill_pid(b.pid)
            child.kill()
            child.status()
            return _Outcome("refused", key=b.key, refusal=_time_refusal(b))
        for b in [b for b in open_.values() if b.pid != child.pid]:
            if not _alive(b.pid):
                child.kill()
                child.status()
                return _Outcome("refused", key=b.key, refusal=_crash_refusal(b, 0))


def _memory_text(b: _Bracket) -> str:
    return format_memory(b.memory) + (f" ({BOUNDED_FACTOR} times its size)" if b.scaled else "")


def _memory_refusal(b: _Bracket) -> Refusal:
    return Refusal(f"needs more than {_memory_text(b)} to read")


def _time_refusal(b: _Bracket) -> Refusal:
    return Refusal(f"was not read within {b.budget_s:g} s (the budget, {BUDGET_VARIABLE})")


def _crash_refusal(b: _Bracket, sig: int) -> Refusal:
    if sig == signal.SIGXCPU:
        return Refusal(f"was not read within {b.budget_s:g} s of CPU (the budget, {BUDGET_VARIABLE})")
    name = _signal_name(sig) if sig else "it ended"
    return Refusal(f"stopped its reader ({name}; it may need more than {_memory_text(b)} to read)")


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _status_text(status: int) -> str:
    return _signal_name(-status) if status < 0 else f"exit status {status}"


# ----------------------------------------------------------------------------- the command line


class _Muted:
    """sys.stdout / sys.stderr of a replayed command: silent until the replay reaches the refused file
    (what it would print before was printed by the attempt before)."""

    def __init__(self, stream) -> None:
        self._stream, self.muted = stream, True

    def write(self, text: str) -> int:
        return len(text) if self.muted else self._stream.write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _unmute() -> None:
    _STATE.mute_until = ""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, _Muted):
            stream.muted = False


class _ForkedChild(_Child):
    def __init__(self, pid: int, conn) -> None:
        self.pid, self.conn = pid, conn
        self.sentinel = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
        self._status: int | None = None

    def kill(self) -> None:
        _kill_pid(self.pid)

    def status(self) -> int:
        if self._status is None:
            while True:
                try:
                    _, st = os.waitpid(self.pid, 0)
                    break
                except InterruptedError:
                    continue
                except ChildProcessError:
                    st = 0
                    break
            self._status = -os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
        return self._status

    def close(self) -> None:
        self.conn.close()
        if self.sentinel is not None:
            os.close(self.sentinel)


def supervise() -> None:
    """Make the rest of this command's run supervised: fork now; the child returns from here and runs
    the command (its reads bracketed), this process waits and exits with the child's status, starting
    the command again with each file that stopped it refused. Call it first thing in a command's
    process entry point (one thread, nothing printed yet). Does nothing where it cannot work (no
    fork or pidfd, another thread alive, already supervised)."""
    if not _plain() or not hasattr(os, "pidfd_open") or threading.active_count() > 1:
        return
    import multiprocessing

    lim = limits()
    state: dict[str, Any] = {"limits": lim, "refused": {}}
    finished: set[str] = set()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    attempt = 0
    while True:
        if attempt == MAX_REFUSALS:
            state["done"] = frozenset(finished)
        receive, send = multiprocessing.Pipe(duplex=False)
        try:
            pid = os.fork()
        except OSError:
            return  # cannot fork: the command runs here, unguarded
        if pid == 0:
            receive.close()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            die_with_parent()
            _become_supervised(send, state)
            sys.excepthook = _uncaught
            if state.get("mute_until"):
                sys.stdout, sys.stderr = _Muted(sys.stdout), _Muted(sys.stderr)
            return
        send.close()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's ^C reaches the child, which ends the command
        for sig in (signal.SIGTERM, signal.SIGHUP):  # a kill of the command is passed on
            signal.signal(sig, functools.partial(_pass_on, pid))
        child = _ForkedChild(pid, receive)
        try:
            outcome = _watch(child, finished)
        finally:
            child.close()
        if outcome.kind == "refused" and attempt < MAX_REFUSALS:
            attempt += 1
            state = {**state, "refused": {**state["refused"], outcome.key: outcome.refusal},
                     "mute_until": outcome.key, "seen_before": frozenset(finished | {outcome.key})}
            continue
        _exit_like(outcome)


def _pass_on(pid: int, sig: int, _frame: Any) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


def _exit_like(outcome: _Outcome) -> None:
    """End the supervisor as the child ended: its exit code, or the signal that killed it."""
    status = outcome.status
    if outcome.kind == "refused":  # refused once too often: the command could not finish
        print(f"ERROR: {outcome.refusal.why if outcome.refusal else 'a file over the read limits'}", file=sys.stderr)
        status = 1
    if status < 0:
        sig = -status
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        status = 128 + sig
    os._exit(status)

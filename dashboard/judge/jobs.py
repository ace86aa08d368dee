"""Re-judge jobs of the app: one background thread per (run, judge), shared by every session, with its
progress, a stop, and the JudgeRun it leaves (no streamlit).

    job = start(key, answers, client, prompt, cache)     the job of that key (a running one is returned as it is)
    job.done, job.total, job.running, job.run, job.error
    job.stop.set()                                       stop asking: the requests in flight finish, nothing more is sent

The replies are in the reply cache as they come (scoring.judge.cache), so a stopped or failed job
loses nothing: the next one asks only what has no reply.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from scoring.judge.answers import JudgedAnswer
from scoring.judge.cache import ReplyCache
from scoring.judge.client import JudgeClient, JudgeError
from scoring.judge.prompts import JudgePrompt
from scoring.judge.rejudge import JudgeRun, rejudge

__all__ = ["JudgeJob", "start", "get", "generation"]

_JOBS: dict[tuple, JudgeJob] = {}
_LOCK = threading.Lock()
_GENERATION = [0]  # bumped each time a job ends: what was read back from the cache is read again


class JudgeJob:
    def __init__(self, answers: Sequence[JudgedAnswer], client: JudgeClient, prompt: JudgePrompt, cache: ReplyCache,
                 concurrency: int) -> None:
        self.total, self.done = len(answers), 0
        self.run: JudgeRun | None = None
        self.error = ""
        self.stop = threading.Event()
        self.finished = threading.Event()
        self._args = (list(answers), client, prompt, cache, concurrency)
        self.thread = threading.Thread(target=self._work, name="lens-judge-job", daemon=True)

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def _work(self) -> None:
        answers, client, prompt, cache, concurrency = self._args
        try:
            self.run = rejudge(answers, client, prompt, cache, concurrency=concurrency, progress=self._progress, stop=self.stop)
        except JudgeError as exc:
            self.error = exc.message
        except Exception as exc:  # a bug must not leave the page waiting for ever: said, in one sentence
            self.error = f"the re-judge stopped ({type(exc).__name__})"
        finally:
            client.close()
            with _LOCK:
                _GENERATION[0] += 1
            self.finished.set()

    @property
    def running(self) -> bool:
        return not self.finished.is_set()


def start(key: tuple, answers: Sequence[JudgedAnswer], client: JudgeClient, prompt: JudgePrompt, cache: ReplyCache,
          concurrency: int = 4) -> JudgeJob:
    with _LOCK:
        job = _JOBS.get(key)
        if job is not None and job.running:
            return job
        job = _JOBS[key] = JudgeJob(answers, client, prompt, cache, concurrency)
    job.thread.start()
    return job


def get(key: tuple) -> JudgeJob | None:
    with _LOCK:
        return _JOBS.get(key)


def generation() -> int:
    with _LOCK:
        return _GENERATION[0]

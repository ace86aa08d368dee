"""The judge's options on `python -m scoring` (MMLongBench-Doc's result files, VLMEvalKit and LongDocURL
outputs), added to a command line's parser as the gate's are (scoring/gate.py):

    --judge-url URL --judge-model NAME [--judge-prompt FILE] [--judge-cache DIR] [--judge-concurrency N]

- `--judge-url`: an OpenAI-compatible server (`http://host:8000/v1`; `/v1` is added to a bare
  server). Its key, when it needs one, comes from LENS_JUDGE_API_KEY (never an option: a command
  line is visible to every user of the machine); a `user:password@` in the URL is used, never printed.
- `--judge-model`: the model to ask (LENS_JUDGE_MODEL when not given); the id the server reports for
  it is the judge's identity.
- `--judge-prompt`: the extraction prompt; by default the benchmark's own,
  `eval/prompt_for_answer_extraction.md` of the clone the gold comes from (--gold-files, --data-dir).
- `--judge-cache`: where replies are kept (default: judge/ in the user's cache folder).

Without --judge-url nothing is asked of any server: the report's `judge` object holds the verdicts of
the judge whose output the files hold (none: no `judge` key, and every output as before).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from .answers import JudgedAnswer
from .cache import ReplyCache, default_folder
from .client import API_KEY_ENV, MODEL_ENV, JudgeClient, JudgeError
from .prompts import JudgePrompt, PromptError, find_prompt, read_prompt
from .rejudge import DEFAULT_CONCURRENCY, JudgeIdentity, JudgeRun, parameters_for, rejudge

__all__ = ["add_arguments", "wants", "refusal", "Judge", "open_judge", "judge_answers", "pooled"]

MAX_CONCURRENCY = 64


def add_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("LLM judge (re-judge on your own OpenAI-compatible server)")
    g.add_argument("--judge-url", metavar="URL", help="the judge's OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
                   f"(its key, if any: ${API_KEY_ENV})")
    g.add_argument("--judge-model", metavar="NAME", help=f"the model the server serves as the judge (default ${MODEL_ENV})")
    g.add_argument("--judge-prompt", metavar="FILE",
                   help="the extraction prompt (default: the benchmark's eval/prompt_for_answer_extraction.md)")
    g.add_argument("--judge-cache", metavar="DIR", help=f"where the replies are kept (default {default_folder()})")
    g.add_argument("--judge-concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"requests in flight at once (default {DEFAULT_CONCURRENCY})")


def wants(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "judge_url", None))


def refusal(args: argparse.Namespace) -> str | None:
    """Why the judge's options cannot be used as given (a usage error), or None."""
    given = [o for o in ("judge_model", "judge_prompt", "judge_cache") if getattr(args, o, None)]
    if given and not wants(args):
        return f"--{given[0].replace('_', '-')} needs --judge-url"
    if wants(args) and not (args.judge_model or os.environ.get(MODEL_ENV, "").strip()):
        return f"--judge-url needs --judge-model (or ${MODEL_ENV})"
    if wants(args) and not 1 <= args.judge_concurrency <= MAX_CONCURRENCY:
        return f"--judge-concurrency takes 1 to {MAX_CONCURRENCY}"
    return None


@dataclass
class Judge:
    client: JudgeClient
    prompt: JudgePrompt
    cache: ReplyCache
    model: str  # the id the server reports
    concurrency: int

    @property
    def identity(self) -> JudgeIdentity:
        return JudgeIdentity(self.model, self.prompt.sha256, parameters_for(self.prompt))


def open_judge(args: argparse.Namespace, near: Sequence[str | Path | None], err: TextIO | None = None) -> Judge | None:
    """The judge the options name, its prompt read and its model id asked of the server; None (the
    error said, `ERROR: ...`) when the prompt cannot be found or read or the server cannot say."""
    err = err or sys.stderr
    if args.judge_prompt:
        path: Path | None = Path(args.judge_prompt)
    else:
        path = next((p for p in (find_prompt(n) for n in near) if p is not None), None)
        if path is None:
            print("ERROR: --judge-url: no extraction prompt: the benchmark's eval/prompt_for_answer_extraction.md is not "
                  "beside the gold given; name one with --judge-prompt FILE", file=err)
            return None
    try:
        prompt = read_prompt(path)  # type: ignore[arg-type]
    except PromptError as exc:
        print(f"ERROR: --judge-prompt: {exc}", file=err)
        return None
    model = args.judge_model or os.environ.get(MODEL_ENV, "").strip()
    try:
        client = JudgeClient(args.judge_url, model, api_key=os.environ.get(API_KEY_ENV, "").strip())
        server_model = client.server_model()
    except JudgeError as exc:
        print(f"ERROR: --judge-url: {exc.message}", file=err)
        return None
    cache = ReplyCache(Path(args.judge_cache) if args.judge_cache else default_folder())
    return Judge(client, prompt, cache, server_model, args.judge_concurrency)


def judge_answers(judge: Judge, answers: Sequence[JudgedAnswer], label: str = "", err: TextIO | None = None) -> JudgeRun:
    """Every answer judged (scoring.judge.rejudge), progress said on stderr every tenth."""
    err = err or sys.stderr
    step = max(1, len(answers) // 10)
    said = [0]

    def progress(done: int, total: int) -> None:
        if total >= 50 and done - said[0] >= step and done < total:
            said[0] = done
            print(f"judge{' ' + label if label else ''}: {done:,} of {total:,} answers", file=err, flush=True)

    return rejudge(answers, judge.client, judge.prompt, judge.cache, concurrency=judge.concurrency,
                   progress=progress, model=judge.model)


def pooled(parts: Sequence[tuple[str, Sequence[JudgedAnswer], JudgeRun | None, str | None]]
           ) -> tuple[list[JudgedAnswer], JudgeRun | None, str | None]:
    """Several runs' (name, answers, re-judge or None, the files' judge's name or None) as one: each answer
    keyed by run and question, the re-judges' verdicts and counts added up, the files' judge named when all
    runs name the same (the report's top-level `judge` over several runs)."""
    answers: list[JudgedAnswer] = []
    runs = [r for _, _, r, _ in parts if r is not None]
    total = JudgeRun(runs[0].identity) if runs else None
    names = {m for _, _, _, m in parts}
    for name, those, run, _ in parts:
        for a in those:
            key = f"{name}\x1f{a.qid}"
            answers.append(replace(a, qid=key))
            if run is not None and total is not None and a.qid in run.verdicts:
                total.verdicts[key] = run.verdicts[a.qid]
        if run is not None and total is not None:
            total.requests += run.requests
            total.cached += run.cached
            total.tries += run.tries
            total.errors += [(f"{name}: {q}", why) for q, why in run.errors]
            total.unasked += run.unasked
    return answers, total, names.pop() if len(names) == 1 else None

"""Judge every answer again on the user's own server.

    run = rejudge(answers, client, prompt, cache, concurrency=4, progress=cb, stop=event)

Each answer is looked up in the cache by (question, prediction sha256, the model id the server
reports, prompt sha256, parameters); the others are asked, `concurrency` at a time, each reply kept
in the cache as it comes. The reply is read as the benchmark's code reads it (`JudgePrompt.read`) and
the answer scored by the benchmark's rules (scoring.judge.verdicts). An answer whose request failed
after its retries is `judge_error` with the reason; it is not cached, so the next run asks it again.
`stop` (a threading.Event) stops asking: the requests in flight finish, the rest are left unasked
(`JudgeRun.unasked`). `progress(done, total)` is called from the calling thread as answers complete.

The judge's identity (`JudgeIdentity`: the model id the server reports, the prompt's sha256, the
parameters) goes into every output: the report's `judge` object and its signature.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from .answers import JudgedAnswer
from .cache import ReplyCache, cache_key
from .client import PARAMETERS, JudgeClient, JudgeError, Reply
from .prompts import JudgePrompt
from .verdicts import JUDGE_ERROR, LONGDOCURL_RULES, UNPARSABLE, Verdict, scored_verdict

__all__ = ["DEFAULT_CONCURRENCY", "JudgeIdentity", "JudgeRun", "rejudge", "verdict_of_reply", "parameters_for", "read_back"]

DEFAULT_CONCURRENCY = 4
LONGDOCURL_MAX_TOKENS = 512  # its extraction can be a list of answers in tags


def parameters_for(prompt: JudgePrompt) -> dict[str, Any]:
    """The sampling parameters sent with a prompt: PARAMETERS (MMLongBench-Doc's extractor sends
    max_tokens 256), with more tokens for LongDocURL's tagged reply."""
    from .prompts import LONGDOCURL_STYLE

    params = dict(PARAMETERS)
    if prompt.style == LONGDOCURL_STYLE:
        params["max_tokens"] = LONGDOCURL_MAX_TOKENS
    return params


@dataclass(frozen=True)
class JudgeIdentity:
    model: str  # the model id the server reports
    prompt_sha256: str
    parameters: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "prompt_sha256": self.prompt_sha256, "parameters": dict(self.parameters)}

    @property
    def signature(self) -> str:
        """The part of a report's signature that names the judge."""
        params = json.dumps(dict(self.parameters), sort_keys=True, separators=(",", ":"))
        return f"judge:{self.model}|judge_prompt:sha256:{self.prompt_sha256[:16]}|judge_params:{params}"

    @property
    def key(self) -> str:
        """One string per identity (the app keeps a run per judge)."""
        return json.dumps(self.as_dict(), sort_keys=True)


@dataclass
class JudgeRun:
    identity: JudgeIdentity
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # question id -> verdict (the answers judged)
    requests: int = 0  # answers asked of the server in this run
    cached: int = 0  # answers whose reply came from the cache
    tries: int = 0  # HTTP requests made, retries included
    errors: list[tuple[str, str]] = field(default_factory=list)  # (question id, why no reply)
    unasked: list[str] = field(default_factory=list)  # stopped before these were asked
    stopped: bool = False
    reply_models: set[str] = field(default_factory=set)  # the model names the replies gave


def verdict_of_reply(answer: JudgedAnswer, reply: Reply, prompt: JudgePrompt) -> Verdict:
    """The verdict on one answer from the judge's reply."""
    text = reply.text
    extracted = prompt.read(text)
    if extracted is None:
        why = "an empty reply" if not text.strip() else (
            "the reply has no <concise_answer>…</concise_answer> and <answer_format> tags" if prompt.style == "longdocurl"
            else "the reply has no `Extracted answer:` before `Answer format:`")
        if reply.finish_reason == "length":
            why += " (cut at max_tokens)"
        return Verdict(UNPARSABLE, None, text, "", None, why)
    stored = answer.stored
    score = None
    if answer.rules == LONGDOCURL_RULES and stored is not None and stored.answer == extracted and stored.score is not None:
        score = stored.score  # LongDocURL's own score_v3 of that same answer
    return scored_verdict(extracted, rules=answer.rules, gold=answer.gold, answer_format=answer.answer_format, reply=text,
                          score=score)


def rejudge(answers: Sequence[JudgedAnswer], client: JudgeClient, prompt: JudgePrompt, cache: ReplyCache, *,
            parameters: Mapping[str, Any] | None = None, concurrency: int = DEFAULT_CONCURRENCY,
            progress: Callable[[int, int], None] | None = None, stop: threading.Event | None = None,
            model: str | None = None) -> JudgeRun:
    """Every answer judged (see the module text). `model`: the server's id for the judge when known
    (else asked: JudgeError when the server cannot say, and nothing is judged)."""
    params = dict(parameters if parameters is not None else parameters_for(prompt))
    ident = JudgeIdentity(model or client.server_model(), prompt.sha256, params)
    run = JudgeRun(ident)
    cache.note_judge(ident.as_dict(), prompt.style)
    total = len(answers)
    todo: list[tuple[JudgedAnswer, str]] = []
    for a in answers:
        key = cache_key(a.question, a.response, ident.model, prompt.sha256, params)
        hit = cache.get(key)
        if hit is not None:
            run.verdicts[a.qid] = verdict_of_reply(a, hit, prompt)
            run.cached += 1
            if hit.model:
                run.reply_models.add(hit.model)
        else:
            todo.append((a, key))
    done = run.cached
    if progress is not None:
        progress(done, total)
    if not todo:
        return run

    def ask(a: JudgedAnswer, key: str) -> tuple[Reply | None, JudgeError | None] | None:
        if stop is not None and stop.is_set():
            return None
        try:
            reply = client.chat(prompt.messages(a.question, a.response), params, model=ident.model)
        except JudgeError as exc:
            return None, exc
        cache.put(key, reply, ident.as_dict())
        return reply, None

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="lens-judge") as pool:
        futures = {pool.submit(ask, a, key): a for a, key in todo}
        for fut in as_completed(futures):
            a = futures[fut]
            got = fut.result()
            if got is None:
                run.unasked.append(a.qid)
                run.stopped = True
                continue
            reply, error = got
            run.requests += 1
            if error is not None:
                run.tries += error.tries
                run.errors.append((a.qid, error.message))
                run.verdicts[a.qid] = Verdict(JUDGE_ERROR, None, "", f"{error.tries} tries", None, error.message)
            else:
                assert reply is not None
                run.tries += reply.tries
                if reply.model:
                    run.reply_models.add(reply.model)
                run.verdicts[a.qid] = verdict_of_reply(a, reply, prompt)
            done += 1
            if progress is not None:
                progress(done, total)
    order = {a.qid: k for k, a in enumerate(answers)}
    run.errors.sort(key=lambda e: order.get(e[0], 0))
    run.unasked.sort(key=lambda q: order.get(q, 0))
    run.verdicts = {a.qid: run.verdicts[a.qid] for a in answers if a.qid in run.verdicts}
    return run


def read_back(answers: Sequence[JudgedAnswer], cache: ReplyCache, identity: JudgeIdentity, prompt: JudgePrompt) -> JudgeRun:
    """The verdicts a judge's cached replies give, without asking any server (a restarted app): the
    answers with no reply in the cache are left out (`JudgeRun.unasked`)."""
    run = JudgeRun(identity)
    for a in answers:
        hit = cache.get(cache_key(a.question, a.response, identity.model, identity.prompt_sha256, identity.parameters))
        if hit is None:
            run.unasked.append(a.qid)
            continue
        run.verdicts[a.qid] = verdict_of_reply(a, hit, prompt)
        run.cached += 1
        if hit.model:
            run.reply_models.add(hit.model)
    return run

"""A small OpenAI-compatible server the judge tests start on a free port of 127.0.0.1 (the real
servers -- vLLM, Ollama, llama.cpp -- cannot run on these machines, so the protocol is what is tested):
GET /v1/models and POST /v1/chat/completions, in a thread.

What it answers is decided per request by `script(body) -> Action`, from the request's messages:

    reply(text)        200 with that content
    malformed()        200 with a body that is not JSON
    no_choices()       200 with JSON that is not a chat-completions reply
    empty()            200 with an empty content
    slow(seconds)      waits that long (or until the server stops), then a canned reply
    status(code)       that HTTP status with an error body

`die_after=N`: after N replies the server dies -- the request that finds it dead gets its connection
closed without a reply and the listener is closed, so later connections are refused. Every chat
request's JSON body is kept in `requests` (the replies in `replied`), under a lock.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Action", "reply", "malformed", "no_choices", "empty", "slow", "status", "FakeJudge", "analysis_of",
           "extraction", "free_port"]


@dataclass(frozen=True)
class Action:
    kind: str
    text: str = ""
    seconds: float = 0.0
    code: int = 200


def reply(text: str) -> Action:
    return Action("reply", text)


def malformed() -> Action:
    return Action("malformed")


def no_choices() -> Action:
    return Action("no_choices")


def empty() -> Action:
    return Action("reply", "")


def slow(seconds: float, text: str = "Extracted answer: late\nAnswer format: String") -> Action:
    return Action("slow", text, seconds)


def status(code: int) -> Action:
    return Action("status", code=code)


def extraction(answer: str, fmt: str = "String") -> str:
    """A reply in MMLongBench-Doc's format."""
    return f"Extracted answer: {answer}\nAnswer format: {fmt}"


def analysis_of(body: dict[str, Any]) -> str:
    """The model response a chat request carries (MMLongBench-Doc: the assistant message's
    `Analysis:`; LongDocURL: the one user message's last `Analysis: `)."""
    text = body["messages"][-1]["content"]
    marker = "\nAnalysis:" if "\nAnalysis:" in text else "Analysis:"
    tail = text.rsplit(marker, 1)[-1]
    return tail[:-1] if tail.endswith("\n") else tail.lstrip(" ")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeJudge

    def handle_error(self, request: Any, client_address: Any) -> None:  # a connection closed on purpose: quiet
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: a dead server refuses the next one

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner  # type: ignore[attr-defined]
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, b'{"error": "not found"}')
            return
        owner.model_requests += 1
        self._send(200, json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in owner.models]}).encode())

    def do_POST(self) -> None:  # noqa: N802
        owner: FakeJudge = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": "not found"}')
            return
        with owner.lock:
            owner.requests.append(body)
            owner.headers.append(dict(self.headers))
            dead = owner.die_after is not None and len(owner.replied) >= owner.die_after
            if dead and not owner.dead.is_set():
                owner.dead.set()
                threading.Thread(target=owner.stop, daemon=True).start()
        if dead:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # no reply: the connection is closed
            return
        action = owner.script(body)
        if action.kind == "status":
            self._send(action.code, json.dumps({"error": {"message": f"canned {action.code}"}}).encode())
            return
        if action.kind == "malformed":
            self._send(200, b'{"choices": [ {"message": ')
            return
        if action.kind == "no_choices":
            self._send(200, b'{"object": "chat.completion", "data": []}')
            return
        if action.kind == "slow":
            owner.released.wait(action.seconds)
        with owner.lock:
            owner.replied.append(analysis_of(body))
        self._send(200, json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "model": owner.reply_model or body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": action.text}, "finish_reason": "stop"}],
        }).encode())


class FakeJudge:
    """The server (module text). Use as a context manager; `url` is its API root."""

    def __init__(self, script: Callable[[dict[str, Any]], Action] | None = None, *, models: tuple[str, ...] = ("judge-7b",),
                 die_after: int | None = None, reply_model: str = "", port: int | None = None) -> None:
        self.script = script or (lambda body: reply(extraction(analysis_of(body))))
        self.models = models
        self.die_after = die_after
        self.reply_model = reply_model
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.replied: list[str] = []
        self.model_requests = 0
        self.dead = threading.Event()
        self.released = threading.Event()
        self._server = _Server(("127.0.0.1", port or 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeJudge:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self.lock:
            if self._stopped:
                return
            self._stopped = True
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeJudge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

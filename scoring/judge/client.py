"""A plain HTTP client for an OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp's
server, ...): `requests`, no vendor SDK.

    client = JudgeClient("http://127.0.0.1:8000/v1", "qwen2.5-7b-instruct", api_key="")
    client.server_model()                      # the model id the server reports for that name (GET /models)
    client.chat(messages, PARAMETERS)          # one reply (Reply), retried at the SAME settings, else JudgeError

- The URL may be the server (`http://host:8000`, `/v1` is added) or its API root (`.../v1`); a
  `user:password@` in it is sent as basic authentication and never shown: `shown_url` is the URL a
  page or a message may name (no credentials, no query). The key (`LENS_JUDGE_API_KEY`) is sent as
  `Authorization: Bearer` and never shown or logged; error messages are made here, never copied from
  the transport, and scrubbed of both.
- Every sampling parameter is sent explicitly (PARAMETERS: temperature 0, top_p 1, no penalties, a
  repetition penalty of 1, seed 0, one choice), since a server otherwise applies the model's own
  generation defaults (vLLM reads them from the model's generation_config).
- A failure -- no connection, a timeout, HTTP 408/429/5xx, a body that is not a chat-completions
  reply -- is tried again `retries` times with the same body, after `backoff` x 2^k seconds (at most
  `max_backoff`); other HTTP errors (400, 401, 404) are not tried again. Then `JudgeError`, whose
  message says what happened on the last try and how many tries there were.
- Bounded: a reply body over MAX_REPLY_BYTES is refused; each read waits at most `timeout` seconds.
- One `requests.Session` per thread (the re-judge asks from several threads).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..model import quick_state

if TYPE_CHECKING:  # imported where used: `python -m scoring` without a judge never loads it
    import requests

__all__ = ["URL_ENV", "MODEL_ENV", "API_KEY_ENV", "PARAMETERS", "MAX_REPLY_BYTES", "Reply", "JudgeError", "JudgeClient",
           "shown_url", "api_root"]

URL_ENV = "LENS_JUDGE_URL"
MODEL_ENV = "LENS_JUDGE_MODEL"
API_KEY_ENV = "LENS_JUDGE_API_KEY"
PARAMETERS: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 256, "frequency_penalty": 0.0,
                              "presence_penalty": 0.0, "repetition_penalty": 1.0, "seed": 0, "n": 1}
MAX_REPLY_BYTES = 1_000_000
_RETRIED_STATUS = frozenset({408, 409, 425, 429})
RETRIES = 3  # tries after the first
BACKOFF_S = 0.5  # seconds before the first retry; doubled each time, at most MAX_BACKOFF_S
MAX_BACKOFF_S = 8.0


@quick_state
@dataclass(frozen=True, slots=True)
class Reply:
    text: str  # choices[0].message.content ("" when the server sent none)
    model: str = ""  # the model the reply names
    finish_reason: str = ""
    tries: int = 1  # requests made for it (1: no retry)


class JudgeError(Exception):
    """No reply: `message` (credential-free) says why; `tries` how many requests were made."""

    def __init__(self, message: str, tries: int = 1) -> None:
        super().__init__(message)
        self.message, self.tries = message, tries


def shown_url(url: str) -> str:
    """The URL as a page or a log may name it: scheme, host, port and path, without credentials or query."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(a URL that cannot be read)"
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def api_root(url: str) -> str:
    """The API root requests go under: the URL without credentials, query and a trailing `/`, with
    `/v1` added when it names the server only, and a trailing `/chat/completions` dropped."""
    root = shown_url(url).rstrip("/")
    if root.endswith("/chat/completions"):
        root = root[: -len("/chat/completions")]
    if not urlsplit(root).path:
        root += "/v1"
    return root


class JudgeClient:
    def __init__(self, url: str, model: str, *, api_key: str = "", timeout: float = 120.0, connect_timeout: float = 10.0,
                 retries: int | None = None, backoff: float | None = None, max_backoff: float | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise JudgeError(f"not an http(s) URL: {shown_url(url)}", tries=0)
        self.url = shown_url(url)
        self.root = api_root(url)
        self.model = model
        # messages are made here and never name these; scrubbed all the same (a short one would garble words)
        self._secrets = [s for s in (api_key, parts.password, parts.username) if s and len(s) >= 4]
        # the key, when given, is the one credential sent (a Bearer token); else the URL's user and password
        self._auth = (parts.username or "", parts.password or "") if (parts.username or parts.password) and not api_key else None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.timeout = (connect_timeout, timeout)
        self.retries = max(0, RETRIES if retries is None else retries)
        self.backoff = BACKOFF_S if backoff is None else backoff
        self.max_backoff = MAX_BACKOFF_S if max_backoff is None else max_backoff
        self.sleep = sleep or time.sleep
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()

    # -- plumbing

    def _session(self) -> requests.Session:
        import requests

        s = getattr(self._local, "session", None)
        if s is None:
            s = self._local.session = requests.Session()
            s.trust_env = False  # no proxy from the environment: the judge is the server the user named
            if self._auth:
                s.auth = self._auth
            with self._lock:
                self._sessions.append(s)
        return s

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for s in sessions:
            s.close()

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _once(self, method: str, path: str, body: Mapping[str, Any] | None) -> tuple[bool, Any]:
        """(True, the JSON body) or (False, (retry?, message))."""
        import requests

        url = self.root + path
        try:
            r = self._session().request(method, url, headers=self._headers, timeout=self.timeout, stream=True,
                                        data=None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                        allow_redirects=False)
        except requests.exceptions.ConnectTimeout:
            return False, (True, f"no connection to {self.url} within {self.timeout[0]:g} s")
        except requests.exceptions.ReadTimeout:
            return False, (True, f"no reply within {self.timeout[1]:g} s")
        except requests.exceptions.ConnectionError as exc:
            refused = "refused" in str(exc).lower()
            return False, (True, f"{'connection refused by' if refused else 'cannot reach'} {self.url}")
        except requests.exceptions.RequestException as exc:
            return False, (True, f"the request failed ({type(exc).__name__})")
        with r:
            try:
                data = self._body(r)
            except requests.exceptions.ReadTimeout:
                return False, (True, f"the reply stopped for more than {self.timeout[1]:g} s")
            except (requests.exceptions.RequestException, OSError) as exc:
                return False, (True, f"the connection broke while the reply was read ({type(exc).__name__})")
            except ValueError as exc:
                return False, (True, str(exc))
            if r.status_code != 200:
                detail = data[:200].decode("utf-8", "replace").strip().replace("\n", " ")
                retry = r.status_code >= 500 or r.status_code in _RETRIED_STATUS
                return False, (retry, f"HTTP {r.status_code}" + (f": {detail}" if detail else ""))
            try:
                return True, json.loads(data)
            except ValueError:
                return False, (True, "not a JSON reply")

    @staticmethod
    def _body(r: requests.Response) -> bytes:
        chunks, size = [], 0
        for chunk in r.iter_content(65_536):
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise ValueError(f"a reply over {MAX_REPLY_BYTES:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None, read: Callable[[Any], Any]) -> tuple[Any, int]:
        """(what `read` makes of the reply, how many requests it took), or JudgeError."""
        tries = 0
        while True:
            tries += 1
            ok, got = self._once(method, path, body)
            if ok:
                try:
                    return read(got), tries
                except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                    retry, message = True, f"not a {'chat-completions' if path.endswith('completions') else 'models'} reply"
            else:
                retry, message = got
            if not retry or tries > self.retries:
                raise JudgeError(self.scrub(message + (f" (after {tries} tries)" if tries > 1 else "")), tries)
            self.sleep(min(self.max_backoff, self.backoff * 2 ** (tries - 1)))

    # -- the API

    def models(self) -> list[str]:
        """The model ids the server lists (GET /models)."""
        def read(data: Any) -> list[str]:
            return [str(m["id"]) for m in data["data"]]
        return self._request("GET", "/models", None, read)[0]

    def server_model(self) -> str:
        """The id the server reports for the model asked for: the one it lists under that name (JudgeError
        when it lists no such model, naming those it has)."""
        listed = self.models()
        if self.model in listed:
            return self.model
        folded = [m for m in listed if m.lower() == self.model.lower()]
        if len(folded) == 1:
            return folded[0]
        shown = ", ".join(listed[:10]) + (f" and {len(listed) - 10} more" if len(listed) > 10 else "")
        raise JudgeError(self.scrub(f"{self.url} does not serve {self.model!r}; it serves: {shown or 'no model'}"), 1)

    def chat(self, messages: list[dict[str, str]], parameters: Mapping[str, Any], model: str | None = None) -> Reply:
        """One chat completion with `parameters` sent as they are; JudgeError after the retries."""
        body = {"model": model or self.model, "messages": messages, **parameters, "stream": False}

        def read(data: Any) -> Reply:
            choice = data["choices"][0]
            content = choice["message"].get("content")
            if content is not None and not isinstance(content, str):
                raise TypeError("content")
            return Reply(content or "", str(data.get("model") or ""), str(choice.get("finish_reason") or ""))
        reply, tries = self._request("POST", "/chat/completions", body, read)
        return replace(reply, tries=tries)

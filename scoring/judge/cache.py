"""Every judge reply on disk, so that a second run asks only about the answers that got none and a
restarted app reads the rest back.

The key of a reply is the sha256 of (question, the prediction's sha256, the model id the server
reports, the prompt's sha256, the parameters) written as canonical JSON: the same answer asked of
another model, with another prompt or other settings is another entry. An entry is one JSON file,
`<folder>/<key[:2]>/<key>.json`, written to a temporary file and renamed (a reader never sees half of
one; two processes writing the same reply write the same bytes). Only replies are kept: an answer
that got no reply (judge_error) is asked again next time. An entry that does not read back (cut
short, edited) is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .client import Reply

__all__ = ["ReplyCache", "cache_key", "sha256_text", "default_folder", "MAX_ENTRY_BYTES"]

MAX_ENTRY_BYTES = 2_000_000


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_key(question: str, prediction: str, model: str, prompt_sha256: str, parameters: Mapping[str, Any]) -> str:
    """The entry of one (question, prediction, model id, prompt, parameters)."""
    ident = {"question": question, "prediction_sha256": sha256_text(prediction), "model": model,
             "prompt_sha256": prompt_sha256, "parameters": dict(parameters)}
    return sha256_text(json.dumps(ident, sort_keys=True, ensure_ascii=True, separators=(",", ":")))


def default_folder(environ: Mapping[str, str] | None = None) -> Path:
    """Where replies are kept when --judge-cache is not given: judge/ in the app's cache folder
    (`scoring.settings.cache_root`: $LENS_CACHE_DIR, else $XDG_CACHE_HOME/docbench-lens, else
    ~/.cache/docbench-lens), so the command line and the app's Re-judge read each other's replies."""
    from ..settings import cache_root

    return cache_root(environ) / "judge"


class ReplyCache:
    """Replies by key in a folder (made when first written). `None` folder: nothing kept."""

    def __init__(self, folder: str | Path | None) -> None:
        self.folder = Path(folder) if folder is not None else None

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Reply | None:
        if self.folder is None or len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            return None
        try:
            with open(self._path(key), "rb") as fh:
                data = fh.read(MAX_ENTRY_BYTES + 1)
            if len(data) > MAX_ENTRY_BYTES:
                return None
            entry = json.loads(data)
            if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("reply"), str):
                return None
            return Reply(entry["reply"], str(entry.get("reply_model") or ""), str(entry.get("finish_reason") or ""))
        except (OSError, ValueError, RecursionError):
            return None

    def put(self, key: str, reply: Reply, identity: Mapping[str, Any] | None = None) -> bool:
        """Keep a reply; False (nothing raised) when the folder cannot be written."""
        if self.folder is None:
            return False
        path = self._path(key)
        entry = {"key": key, "reply": reply.text, "reply_model": reply.model, "finish_reason": reply.finish_reason,
                 **({"judge": dict(identity)} if identity else {})}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(entry, fh, ensure_ascii=True)  # a lone surrogate in a reply is written escaped
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return False
        return True

    # -- the judges whose replies are here (so that a restarted app reads them back without asking a server)

    def note_judge(self, identity: Mapping[str, Any], style: str) -> None:
        """Remember a judge (its identity and its prompt's style) as having replies here."""
        if self.folder is None:
            return
        entry = {"identity": dict(identity), "style": style}
        name = sha256_text(json.dumps(entry["identity"], sort_keys=True))
        path = self.folder / "judges" / f"{name}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh, ensure_ascii=True, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            return

    def judges(self, limit: int = 50) -> list[tuple[dict[str, Any], str]]:
        """(identity, style) of the judges noted here, the most recently noted first (at most `limit`)."""
        if self.folder is None:
            return []
        try:
            files = sorted((self.folder / "judges").glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
        except OSError:
            return []
        out = []
        for f in files:
            try:
                with open(f, "rb") as fh:
                    entry = json.loads(fh.read(MAX_ENTRY_BYTES))
                ident = entry["identity"]
                if isinstance(ident, dict) and isinstance(ident.get("model"), str) and isinstance(ident.get("parameters"), dict) \
                        and isinstance(ident.get("prompt_sha256"), str):
                    out.append((ident, str(entry.get("style", ""))))
            except (OSError, ValueError, KeyError, TypeError, RecursionError):
                continue
        return out

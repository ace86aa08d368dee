"""The benchmark's own extraction prompt, and the messages its code sends a judge.

    find_prompt(start)          eval/prompt_for_answer_extraction.md of the benchmark a path belongs to
    read_prompt(path)           a JudgePrompt (its text, sha256 and style), or PromptError with the reason
    prompt.messages(q, r)       the chat messages for one question and response, as the benchmark sends them
    prompt.read(reply)          the answer its code takes from a reply (None: no answer)

Two styles, told by the prompt's text:

- MMLongBench-Doc (`eval/extract_answer.py`): the prompt as the user's message, then an assistant
  message holding "\\n\\nQuestion:{question}\\nAnalysis:{response}\\n"; the answer is what follows
  `Extracted answer:` up to `Answer format:`.
- LongDocURL (its prompt asks for `<concise_answer>` tags; `eval/api_models/eval_api_models.py`): one
  user message, its system sentence + the prompt + "\\nQuestion: " + question + "\\nAnalysis: " +
  response; the answer is inside `<concise_answer>...</concise_answer>`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .verdicts import read_longdocurl_reply, read_mmlongbench_reply

__all__ = ["PROMPT_FILE", "MMLONGBENCH_STYLE", "LONGDOCURL_STYLE", "MAX_PROMPT_BYTES", "JudgePrompt", "PromptError",
           "find_prompt", "read_prompt"]

PROMPT_FILE = Path("eval") / "prompt_for_answer_extraction.md"  # where both benchmarks keep it
MMLONGBENCH_STYLE = "mmlongbench-doc"
LONGDOCURL_STYLE = "longdocurl"
MAX_PROMPT_BYTES = 1_000_000
# LongDocURL's code puts its system sentence in front of the extraction prompt, in the one user message
LONGDOCURL_SYSTEM = ("You are an expert in visual document question-answering, please answer our questions based on "
                     "the given images.\n")


class PromptError(ValueError):
    """A prompt that cannot be used, with the reason in one sentence."""


@dataclass(frozen=True)
class JudgePrompt:
    text: str
    sha256: str  # of the file's bytes
    style: str  # MMLONGBENCH_STYLE or LONGDOCURL_STYLE
    path: str = ""

    def messages(self, question: str, response: str) -> list[dict[str, str]]:
        if self.style == LONGDOCURL_STYLE:
            return [{"role": "user", "content": LONGDOCURL_SYSTEM + self.text + "\nQuestion: " + question + "\nAnalysis: " + response}]
        return [{"role": "user", "content": self.text},
                {"role": "assistant", "content": f"\n\nQuestion:{question}\nAnalysis:{response}\n"}]

    def read(self, reply: str) -> str | None:
        return read_longdocurl_reply(reply) if self.style == LONGDOCURL_STYLE else read_mmlongbench_reply(reply)


def style_of(text: str) -> str:
    return LONGDOCURL_STYLE if "<concise_answer>" in text else MMLONGBENCH_STYLE


def read_prompt(path: str | Path) -> JudgePrompt:
    """The prompt in a file (UTF-8, at most MAX_PROMPT_BYTES), or PromptError saying why not."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_PROMPT_BYTES + 1)
    except FileNotFoundError:
        raise PromptError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise PromptError(f"{p}: a folder, not a prompt file") from None
    except OSError as exc:
        raise PromptError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptError(f"{p}: over {MAX_PROMPT_BYTES:,} bytes; an extraction prompt is a page of text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise PromptError(f"{p}: empty")
    return JudgePrompt(text=text, sha256=hashlib.sha256(data).hexdigest(), style=style_of(text), path=str(p))


def find_prompt(start: str | Path | None) -> Path | None:
    """The benchmark's own extraction prompt near a path of it (its samples.json, a results file, the
    clone itself): `eval/prompt_for_answer_extraction.md` in that folder or one of its three parents."""
    if start is None:
        return None
    p = Path(start)
    folder = p if p.is_dir() else p.parent
    for candidate in [folder, *list(folder.parents)[:3]]:
        f = candidate / PROMPT_FILE
        if f.is_file():
            return f
    return None

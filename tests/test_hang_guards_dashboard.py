"""Hang guards (issue 17 item 1): every dashboard function that sees model, gold or page text runs
on 1 MB adversarial texts in a child process with a generous limit, so that a pattern gone
quadratic again fails the suite instead of stalling it. Each function's inputs together take a
few seconds when linear (printed per input by the child); the limit is 20x that and more. Before
the fixes: 16,000 letters through _answer_number took 10.6 s (1 MB: hours), a hyphen and 16,000
newlines through norm_text 6.8 s, 16,000 blanks through quote_parts 2.8 s, and char_diff of
1,000 characters of "the the …" against their reverse 13.5 s."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
LIMIT_S = 90  # per function, all its inputs: each takes well under 3 s when linear

INPUTS = {
    "letters": "a" * MB,
    "digits": "1" * MB,
    "comma groups": "1," * (MB // 2),
    "point groups": "1." * (MB // 2),
    "hyphenated": "a-" * (MB // 2),
    "hyphen newlines": "a-" + "\n" * MB + " ",
    "blanks": "x" + " " * MB + "x",
    "nested brackets": "[" * (MB // 2) + "]" * (MB // 2),
    "answer labels": "answer:" * (MB // 7),
    "the answer is": "the answer is " * (MB // 14),
    "bold runs": "**" * (MB // 2),
    "open bold": "**a" * (MB // 3),
    "underscores": "__a" * (MB // 3),
    "dots": "." * MB,
    "letters then digit": "a" * MB + "1",
    "ellipses": "a ... " * (MB // 6),
    "bracketed ellipses": "[ " * (MB // 2),
    "list elements": "['a', " * (MB // 6) + "]",
    "comma words": "ab, " * (MB // 4),
    "and words": "ab and " * (MB // 7),
}

# name -> (setup statements, call with `s` the text)
FUNCTIONS = {
    "norm_text": ("from dashboard.documents.pagetext import norm_text", "norm_text(s)"),
    "numbers_in": ("from dashboard.documents.pagetext import numbers_in", "numbers_in(s)"),
    "token_value": ("from dashboard.documents.pagetext import token_value", "token_value(s)"),
    "page_text_from_rawdict": (
        "from dashboard.documents.pagetext import page_text_from_rawdict\n"
        "def raw(s):\n"
        "    lines = [s[i:i + 5000] for i in range(0, min(len(s), 200_000), 5000)]\n"
        "    return {'blocks': [{'type': 0, 'lines': [{'spans': [{'chars': [{'c': c, 'bbox': (0, 0, 1, 1)} for c in ln]}]}"
        " for ln in lines]}]}",
        "page_text_from_rawdict(raw(s), 1, 600, 800, 0)"),
    "quote_parts": ("from dashboard.evidence.locate import quote_parts", "quote_parts(s)"),
    "answer_candidates": ("from dashboard.evidence.locate import answer_candidates", "answer_candidates(s)"),
    "answer_elements": ("from dashboard.evidence.locate import answer_elements, phrase_parts",
                        "answer_elements(s); answer_elements(s[:3999] + ']'); phrase_parts(s); phrase_parts(s[:60])"),
    "_answer_number": ("from dashboard.evidence.locate import _answer_number", "_answer_number(s)"),
    "answer_rects": (
        "from dashboard.evidence.locate import answer_rects\n"
        "from dashboard.documents.pagetext import page_text_from_rawdict\n"
        "chars = [{'c': c, 'bbox': (0, 0, 1, 1)} for c in 'page 12 of the report: 1,250 units and HX-420']\n"
        "PAGE = page_text_from_rawdict({'blocks': [{'lines': [{'spans': [{'chars': chars}]}]}]}, 1, 600, 800, 0)",
        "answer_rects(PAGE, s)"),
    "answer_pages (page text)": (
        "from dashboard.evidence.locate import answer_pages\n"
        "from dashboard.documents.pagetext import DocText, numbers_in",
        "answer_pages(DocText([s], [numbers_in(s)]), '1'); answer_pages(DocText([s], [numbers_in(s)]), 'a-a')"),
    "answer_pages (answer)": (
        "from dashboard.evidence.locate import answer_pages\n"
        "from dashboard.documents.pagetext import DocText, numbers_in\n"
        "TEXT = 'the total was 1,250 units in 2019 ' * 300\n"
        "DOC = DocText([TEXT] * 3, [numbers_in(TEXT)] * 3)",
        "answer_pages(DOC, s)"),
    "locate_quote (quote)": (
        "from dashboard.evidence.locate import locate_quote\n"
        "from dashboard.documents.pagetext import page_text_from_rawdict\n"
        "chars = [{'c': c, 'bbox': (0, 0, 1, 1)} for c in 'the revenue grew by 12 percent in 2019 ' * 200]\n"
        "PAGE = page_text_from_rawdict({'blocks': [{'lines': [{'spans': [{'chars': chars}]}]}]}, 1, 600, 800, 0)",
        "locate_quote(PAGE, s)"),
    "locate_quote (page)": (
        "from dashboard.evidence.locate import locate_quote\n"
        "from dashboard.documents.pagetext import page_text_from_rawdict\n"
        "def page(s):\n"
        "    s = s[:300_000]\n"
        "    return page_text_from_rawdict({'blocks': [{'lines': [{'spans': [{'chars': "
        "[{'c': c, 'bbox': (0, 0, 1, 1)} for c in s]}]}]}]}, 1, 600, 800, 0)",
        "p = page(s); locate_quote(p, 'a quote of about sixty characters that is not on the page at all'); "
        "locate_quote(p, 'x' * 2000)"),
    "_word_spans": ("from dashboard.evidence.locate import _word_spans",
                    "_word_spans(s, 'a a'); _word_spans(s, 'a-1'); _word_spans(s, s[:2000]); _word_spans(s[:2000], s)"),
    "renders_gold": ("from dashboard.evidence.locate import renders_gold, spelled",
                     "renders_gold(s, s); renders_gold(s[:150] + '\u03b2', s[:150] + 'beta'); spelled(s)"),
    "md_escape": ("from dashboard.core.escape import md_escape", "md_escape(s)"),
    "clip_text": ("from dashboard.core.escape import clip_text", "clip_text(s)"),
    "char_diff": ("from dashboard.core.textdiff import char_diff, diff_text",
                  "diff_text(char_diff(s, s[::-1])); diff_text(char_diff(s, s[1:] + 'z'))"),
    "similarity": ("from dashboard.core.textdiff import similarity", "similarity(s, s[::-1])"),
}

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
{setup}
for name, s in json.load(sys.stdin).items():
    t = time.perf_counter()
    {call}
    print(f"{{name}}: {{time.perf_counter() - t:.3f}} s", flush=True)
print("done", flush=True)
"""


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_linear_on_1mb_adversarial_text(function):
    setup, call = FUNCTIONS[function]
    code = CHILD.format(root=str(ROOT), setup=setup, call=call)
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], input=json.dumps(INPUTS),
                              capture_output=True, text=True, timeout=LIMIT_S, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        last = out.strip().splitlines()
        pytest.fail(f"{function} did not finish within {LIMIT_S} s; finished inputs: {last}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("done"), done.stdout
    print(done.stdout)


def test_identifier_pattern_matches_as_before():
    """The one-letter _IDENTIFIER finds a name with digits exactly where the old `[^\\W\\d_]+` did."""
    import random
    import re

    from dashboard.evidence.locate import _IDENTIFIER

    old = re.compile(r"(?<![\d.])[^\W\d_]+-?\d")
    rng = random.Random(17)
    for _ in range(20_000):
        s = "".join(rng.choice("ab1.-_ é9") for _ in range(rng.randint(0, 8)))
        assert bool(old.search(s)) == bool(_IDENTIFIER.search(s)), s
    for s in ("hx-420", "m30", "a100", "1.5m", "12 km", "2019a", "x"):
        assert bool(old.search(s)) == bool(_IDENTIFIER.search(s)), s


def test_line_hyphen_and_ellipsis_keep_their_meaning():
    from dashboard.documents.pagetext import norm_text
    from dashboard.evidence.locate import quote_parts

    assert norm_text("well-\n  known") == "wellknown"
    assert norm_text("well- \n\n known") == "wellknown"
    assert norm_text("well -\nknown") == "well - known"  # the hyphen follows a blank, not a letter: kept
    assert norm_text("2019-\n2020") == "2019- 2020"
    assert quote_parts("first part … second part") == ["first part", "second part"]
    assert quote_parts("first part [ ... ] second . . part....end") == ["first part", "second . . part", "end"]
    assert quote_parts("no ellipsis") == ["no ellipsis"]

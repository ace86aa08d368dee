"""The one JSON-lines reader, `loaders.read_json_lines` (issue 36), pinned on every kind of bad input.

Each file below was read by the line-by-line reader and by the block reader when there were two,
which agreed; what they gave -- values, line numbers, problems (line, severity, field, expected,
got, kind), rows read, blank lines, skipped -- is written out here, so that the one reader left is
held to it. Every file is read at several block sizes (`loaders.BLOCK`), so lines cut by a block's
end, and blocks read line by line or in one pass, are all met: the answer never depends on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring import loaders
from scoring.problems import LoadResult

LINES = [
    '{"a": 1}',
    "",
    "  ",
    '{"b": "x\\u00e9"}',
    "not json",
    '{"n": 1234567890123456789012}',
    '{"s": "\\ud800"}',
    "[1, 2]",
    '"str"',
    "\t",
    '{"c": "é"}',
]
FOLDER = "folder.jsonl"  # made a directory: a file that cannot be read

CASES: dict[str, bytes | None] = {
    "plain.jsonl": ("\n".join(LINES) + "\n").encode("utf-8"),
    "no_end.jsonl": "\n".join(LINES).encode("utf-8"),
    "bom.jsonl": b"\xef\xbb\xbf" + ("\n".join(LINES) + "\n").encode("utf-8"),
    "bom_alone.jsonl": b"\xef\xbb\xbf",
    "crlf.jsonl": ("\r\n".join(LINES) + "\r\n").encode("utf-8"),
    "lone_cr.jsonl": b'{"a": 1}\r{"b": 2}\r\n\r{"c": 3}\n{"d": "\r"}\n',
    "cr_space.jsonl": b'{"a": 1}\r \n{"b": 2}\r',
    "utf16.jsonl": ("\n".join(LINES[:4]) + "\r\n").encode("utf-16"),
    "utf16_no_bom.jsonl": ('{"a": 1}\n\n{"b": "é"}\r{"c": 3}\n').encode("utf-16-le"),
    "utf32.jsonl": ('{"a": 1}\r\n{"b": 2}\nnope\n').encode("utf-32"),
    "empty.jsonl": b"",
    "blank.jsonl": b"\n  \n",
    "blank_between.jsonl": b'{"a": 1}\n\n{"b": 2}\n \n\t\n{"c": 3}\n{"d": 4}\n\n',
    "bad_utf8.jsonl": b'{"a": "\xff"}\n{"b": 1}\n',
    "digits.jsonl": (
        b'{"n": 1234567890123456789}\n{"m": 123456789012345678}\n{"s": "1234567890123456789"}\n'
        b'{"f": 1234567890123456789.5}\n{"k": -99999999999999999999}\n'
    ),
    "surrogates.jsonl": b'{"s": "\\ud83d\\ude00"}\n{"s": "\\uD800x"}\n{"s": "\\udc00"}\n{"\\ud800": 1}\n{"ok": 1}\n',
    "not_json.jsonl": (
        b'{oops\n{"a": 1}\n[1,\n{"a" 2}\nNaNx\n' + b"[" * 3000 + b"]" * 3000 + b"\n" + b"1" * 5000 + b"\n'single'\n{\"a\": 1}}\n"
    ),
    # lines longer than a block, one over HUGE_LINE, one first with a BOM, one last without an end
    "long_lines.jsonl": b"\xef\xbb\xbf"
    + (
        '{"x": "' + "y" * 200_000 + '"}\n{"a": 1}\n\n{"h": "' + "z" * 1_100_000 + '"}\n{"b": 2}\r\n{"t": "' + "w" * 70_000 + '"}'
    ).encode("utf-8"),
    "absent.jsonl": None,
    FOLDER: None,
}
BLOCKS = [7, 64, 1 << 16]


def shape(value):
    """A value as pinned: a long string by its first characters and its length."""
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:3]}...({len(value):,})"
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, dict):
        return {shape(k): shape(v) for k, v in value.items()}
    return value


def outcome(path: Path, got: list, res: LoadResult) -> dict:
    """What a reading gave: values by line, problems, counts, and whether the file was unreadable."""
    assert res.files == [str(path)] and all(p.file == str(path) for p in res.problems)
    assert res.unreadable in ([], [str(path)])
    return {
        "values": [(line, shape(value)) for line, value in got],
        "problems": [(p.line, p.severity, p.field, p.expected, p.got, p.kind) for p in res.problems],
        "counts": (res.rows_read, res.blank_lines, res.skipped),
        "unreadable": bool(res.unreadable),
    }


def read(path: Path, universal: bool) -> dict:
    res: LoadResult = LoadResult()
    got = list(loaders.read_json_lines(path, res, universal=universal))
    return outcome(path, got, res)


def made(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    if name == FOLDER:
        path.mkdir()
    elif CASES[name] is not None:
        path.write_bytes(CASES[name])
    return path


# what the two readers gave (they agreed), per file: one outcome, or (without universal, with universal)
PINS = {
    "plain.jsonl": {
        "values": [
            (1, {"a": 1}),
            (4, {"b": "xé"}),
            (6, {"n": 1234567890123456789012}),
            (7, {"s": "�"}),
            (8, [1, 2]),
            (9, "str"),
            (11, {"c": "é"}),
        ],
        "problems": [
            (5, "error", None, "a JSON value", "invalid JSON (Expecting value at column 1)", "lines that are not JSON"),
            (
                7,
                "warning",
                None,
                "text that can be written as UTF-8",
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)",
                "",
            ),
        ],
        "counts": (8, 3, 1),
        "unreadable": False,
    },
    "bom.jsonl": {
        "values": [
            (1, {"a": 1}),
            (4, {"b": "xé"}),
            (6, {"n": 1234567890123456789012}),
            (7, {"s": "�"}),
            (8, [1, 2]),
            (9, "str"),
            (11, {"c": "é"}),
        ],
        "problems": [
            (1, "warning", None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)", ""),
            (5, "error", None, "a JSON value", "invalid JSON (Expecting value at column 1)", "lines that are not JSON"),
            (
                7,
                "warning",
                None,
                "text that can be written as UTF-8",
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)",
                "",
            ),
        ],
        "counts": (8, 3, 1),
        "unreadable": False,
    },
    "bom_alone.jsonl": {
        "values": [],
        "problems": [
            (1, "warning", None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)", ""),
            (None, "warning", None, "at least one record", "an empty file", ""),
        ],
        "counts": (0, 0, 0),
        "unreadable": False,
    },
    "lone_cr.jsonl": (
        {
            "values": [(2, {"c": 3})],
            "problems": [
                (1, "error", None, "a JSON value", "invalid JSON (Extra data at column 10)", "lines that are not JSON"),
                (
                    3,
                    "error",
                    None,
                    "a JSON value",
                    "invalid JSON (Invalid control character at at column 8)",
                    "lines that are not JSON",
                ),
            ],
            "counts": (3, 0, 2),
            "unreadable": False,
        },
        {
            "values": [(1, {"a": 1}), (2, {"b": 2}), (4, {"c": 3})],
            "problems": [
                (
                    5,
                    "error",
                    None,
                    "a JSON value",
                    "invalid JSON (Invalid control character at at column 8)",
                    "lines that are not JSON",
                ),
                (
                    6,
                    "error",
                    None,
                    "a JSON value",
                    "invalid JSON (Invalid control character at at column 3)",
                    "lines that are not JSON",
                ),
            ],
            "counts": (5, 1, 2),
            "unreadable": False,
        },
    ),
    "cr_space.jsonl": (
        {"values": [(1, {"a": 1}), (2, {"b": 2})], "problems": [], "counts": (2, 0, 0), "unreadable": False},
        {"values": [(1, {"a": 1}), (3, {"b": 2})], "problems": [], "counts": (2, 1, 0), "unreadable": False},
    ),
    "utf16.jsonl": {
        "values": [(1, {"a": 1}), (4, {"b": "xé"})],
        "problems": [
            (
                None,
                "warning",
                None,
                "UTF-8 text",
                "UTF-16 text (read as UTF-16; save the file as UTF-8 to silence this)",
                "files not in UTF-8",
            )
        ],
        "counts": (2, 2, 0),
        "unreadable": False,
    },
    "utf16_no_bom.jsonl": {
        "values": [(1, {"a": 1}), (3, {"b": "é"}), (4, {"c": 3})],
        "problems": [
            (
                None,
                "warning",
                None,
                "UTF-8 text",
                "UTF-16 text without a byte-order mark (read as UTF-16; save the file as UTF-8 to silence this)",
                "files not in UTF-8",
            )
        ],
        "counts": (3, 1, 0),
        "unreadable": False,
    },
    "utf32.jsonl": {
        "values": [(1, {"a": 1}), (2, {"b": 2})],
        "problems": [
            (
                None,
                "warning",
                None,
                "UTF-8 text",
                "UTF-32 text (read as UTF-32; save the file as UTF-8 to silence this)",
                "files not in UTF-8",
            ),
            (3, "error", None, "a JSON value", "invalid JSON (Expecting value at column 1)", "lines that are not JSON"),
        ],
        "counts": (3, 0, 1),
        "unreadable": False,
    },
    "empty.jsonl": {
        "values": [],
        "problems": [(None, "warning", None, "at least one record", "an empty file", "")],
        "counts": (0, 0, 0),
        "unreadable": False,
    },
    "blank.jsonl": {
        "values": [],
        "problems": [(None, "warning", None, "at least one record", "an empty file", "")],
        "counts": (0, 0, 0),
        "unreadable": False,
    },
    "blank_between.jsonl": {
        "values": [(1, {"a": 1}), (3, {"b": 2}), (6, {"c": 3}), (7, {"d": 4})],
        "problems": [],
        "counts": (4, 4, 0),
        "unreadable": False,
    },
    "bad_utf8.jsonl": {
        "values": [(1, {"a": "�"}), (2, {"b": 1})],
        "problems": [(1, "warning", None, "UTF-8 text", "byte ff at offset 7 (replaced by U+FFFD)", "lines that are not UTF-8")],
        "counts": (2, 0, 0),
        "unreadable": False,
    },
    "digits.jsonl": {
        "values": [
            (1, {"n": 1234567890123456789}),
            (2, {"m": 123456789012345678}),
            (3, {"s": "1234567890123456789"}),
            (4, {"f": 1.2345678901234568e18}),
            (5, {"k": -99999999999999999999}),
        ],
        "problems": [],
        "counts": (5, 0, 0),
        "unreadable": False,
    },
    "surrogates.jsonl": {
        "values": [(1, {"s": "😀"}), (2, {"s": "�x"}), (3, {"s": "�"}), (4, {"�": 1}), (5, {"ok": 1})],
        "problems": [
            (
                2,
                "warning",
                None,
                "text that can be written as UTF-8",
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)",
                "",
            ),
            (
                3,
                "warning",
                None,
                "text that can be written as UTF-8",
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)",
                "",
            ),
            (
                4,
                "warning",
                None,
                "text that can be written as UTF-8",
                "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair; replaced by U+FFFD)",
                "",
            ),
        ],
        "counts": (5, 0, 0),
        "unreadable": False,
    },
    "not_json.jsonl": {
        "values": [(2, {"a": 1})],
        "problems": [
            (
                1,
                "error",
                None,
                "a JSON value",
                "invalid JSON (Expecting property name enclosed in double quotes at column 2)",
                "lines that are not JSON",
            ),
            (3, "error", None, "a JSON value", "invalid JSON (Expecting value at column 1)", "lines that are not JSON"),
            (4, "error", None, "a JSON value", "invalid JSON (Expecting ':' delimiter at column 6)", "lines that are not JSON"),
            (5, "error", None, "a JSON value", "invalid JSON (Extra data at column 4)", "lines that are not JSON"),
            (6, "error", None, "a JSON value", "JSON nested too deeply to read", "lines that are not JSON"),
            (7, "error", None, "a JSON value", "invalid JSON (an integer of more than 4,300 digits)", "lines that are not JSON"),
            (8, "error", None, "a JSON value", "invalid JSON (Expecting value at column 1)", "lines that are not JSON"),
            (9, "error", None, "a JSON value", "invalid JSON (Extra data at column 9)", "lines that are not JSON"),
        ],
        "counts": (9, 0, 8),
        "unreadable": False,
    },
    "long_lines.jsonl": {
        "values": [
            (1, {"x": "yyy...(200,000)"}),
            (2, {"a": 1}),
            (4, {"h": "zzz...(1,100,000)"}),
            (5, {"b": 2}),
            (6, {"t": "www...(70,000)"}),
        ],
        "problems": [
            (1, "warning", None, "UTF-8 without a byte-order mark", "a UTF-8 BOM (ignored)", ""),
            (4, "warning", None, "a line under 1 MiB", "1,100,010 bytes", "very long lines"),
        ],
        "counts": (5, 1, 0),
        "unreadable": False,
    },
    "absent.jsonl": {
        "values": [],
        "problems": [(None, "error", None, "a readable file", "no such file", "")],
        "counts": (0, 0, 0),
        "unreadable": True,
    },
    "folder.jsonl": {
        "values": [],
        "problems": [(None, "error", None, "a readable file", "a directory", "")],
        "counts": (0, 0, 0),
        "unreadable": True,
    },
}
PINS["no_end.jsonl"] = PINS["crlf.jsonl"] = PINS["plain.jsonl"]  # a last line without an end, CRLF: the same


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("universal", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_the_one_reader_gives_what_both_readers_gave(tmp_path, monkeypatch, name, universal, block):
    monkeypatch.setattr(loaders, "BLOCK", block)
    pin = PINS[name]
    want = pin[universal] if isinstance(pin, tuple) else pin
    assert read(made(tmp_path, name), universal) == want


WIDE = {"utf16.jsonl": "utf-16", "utf16_no_bom.jsonl": "utf-16-le", "utf32.jsonl": "utf-32"}


def test_every_line_is_counted_once(tmp_path):
    """Rows read are the values given plus the rows skipped, and with the blank lines they are the
    file's lines, counted here apart: at "\\n", or -- with `universal`, and in UTF-16/32 text -- at
    every line end."""
    for name, data in CASES.items():
        path = made(tmp_path, name)
        for universal in (False, True):
            res: LoadResult = LoadResult()
            got = list(loaders.read_json_lines(path, res, universal=universal))
            numbers = [n for n, _ in got]
            assert res.rows_read == len(got) + res.skipped and numbers == sorted(set(numbers)), name
            if not res.rows_read:
                continue
            text = data.decode(WIDE[name]).encode("utf-8") if name in WIDE else data.removeprefix(b"\xef\xbb\xbf")
            total = len(text.splitlines()) if universal or name in WIDE else text.count(b"\n") + (not text.endswith(b"\n"))
            assert res.rows_read + res.blank_lines == total, (name, universal)

"""orjson where it gives exactly the json module's values and bytes: the loaders' parser and the
report's per-question rows (the CLI's golden files are pinned in test_reference_agreement.py)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import csv_kit
from scoring import writers as E
from scoring.loaders import _loads

TEXTS = [
    "NaN", "[Infinity, -Infinity]", "[1e400]", "123456789012345678901234567890", "-9223372036854775809",
    "18446744073709551616", "[9223372036854775807, -9223372036854775808]", '"\\ud800"', '"\\ud83d\\ude00"',
    '{"a": 1, "a": 2}', "-0", "-0.0", "1.5e-7", "1e-7", "[0.1, 2.5e-320, 5e-324]", "1.7976931348623157e308",
    '{"q": "x\\u0000y\\n\\t\\"\\\\", "n": null, "t": true, "f": false}', '"ü€𝄞"', "[]", "{}", '{"a": [[[[]]]]}',
    '{"id": 12345678901234567890123}', '"line\\u2028sep"',
]


@pytest.mark.parametrize("text", TEXTS)
def test_loads_gives_json_values(text):
    for t in (text, text.encode("utf-8")):
        assert repr(_loads(t)) == repr(json.loads(t))


@pytest.mark.parametrize("text", ["{", "[1,]", "tru", '{"a" 1}', "", "  ", "1 2", '"\\x"', "[" * 3000 + "]" * 3000])
def test_loads_errors_are_json_errors(text):
    with pytest.raises((json.JSONDecodeError, RecursionError)) as got:
        _loads(text)
    with pytest.raises(type(got.value)) as want:
        json.loads(text)
    assert str(got.value) == str(want.value)


def _row(rng: random.Random) -> dict:
    score = rng.choice([0.0, 1.0, 1e-06, 5e-05, 9.9e-05, 0.0001, round(rng.random(), 6), rng.random(), float("nan")])
    text = rng.choice(["plain", "ü € 𝄞", "quote \" back \\ slash", "ctl \x00\x01\x1f\x7f", "nl\nr\rt\t",
                       "\u2028\u2029", "", "<script>"])
    meta = rng.choice(["finance", None, True, 7, 2**63, 2**64 + 1, 0.5, float("nan"), 1e-07, ["a", 1], {"k": [1.5]}])
    return {"question_id": f"q{rng.randrange(10**6)}", "prediction": text, "gold_answer": text[::-1],
            "answer_format": rng.choice(["Str", None, ""]), "status": "success", "accuracy": score,
            "token_f1": rng.choice([score, 0.5, 0.333333]), "anls": rng.choice([0.0, score]),
            "split": rng.choice(["single_doc", None]), "domain": meta, "reasoning_type": rng.choice(["x", 3])}


def test_rows_json_equals_the_json_modules_bytes():
    rng = random.Random(13)
    for _ in range(300):
        batch = [_row(rng) for _ in range(rng.randint(1, 40))]
        want = ",\n    ".join(json.dumps(r, ensure_ascii=False, indent=2).replace("\n", "\n    ") for r in batch)
        assert E.rows_json(batch) == want
    safe = [{"question_id": "q", "prediction": "ü", "gold_answer": "a", "answer_format": "Str", "status": "ok",
             "accuracy": 1.0, "token_f1": 0.5, "anls": 0.25, "split": "s", "domain": None, "reasoning_type": True}] * 3
    assert all(map(E._orjson_safe, safe))  # the common row does take the orjson path
    assert E.rows_json(safe) == ",\n    ".join(json.dumps(r, ensure_ascii=False, indent=2).replace("\n", "\n    ")
                                              for r in safe)


# ----------------------------------------------------------------------------- the CSV, and checks made per batch

CELLS = st.one_of(st.text(), st.none(), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.integers(),
                  st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
                  st.sampled_from(["", " ", '"', ",", "\r", "\n", "\r\n", "\x00", 'a"b', " x ", "\t", "ü€𝄞", "\ud800",
                                   "=1+1", "-5", "+x", "@SUM(A1)", "\tx", "\rx", "'=x", "''-", "'", "'tis", "a\n=b", "x\x00=y"]))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(CELLS, min_size=len(E.CSV_COLUMNS), max_size=len(E.CSV_COLUMNS)), max_size=6))
def test_csv_text_is_what_csv_writer_writes(rows):
    """csv_text and csv_columns write what csv.writer writes of the rows with every text cell made
    spreadsheet-safe (tests/csv_kit.py states the rule again): the same bytes on any row."""
    import csv
    import io

    buf = io.StringIO(newline="")
    csv.writer(buf).writerows([[csv_kit.made_safe(v) for v in r] for r in rows])
    assert E.csv_text([dict(zip(E.CSV_COLUMNS, r)) for r in rows]) == buf.getvalue()
    assert E.csv_columns([list(c) for c in zip(*rows)]) == buf.getvalue()


SCORES = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 1e-06, 5e-05, 9.9e-05, 0.0001, float("nan"), 1.0000001, float("inf")]),
                   st.floats(0, 1))
RAW = st.one_of(st.text(max_size=3), st.none(), st.booleans(), st.integers(), st.floats(), st.lists(st.integers(), max_size=1))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(RAW, st.booleans(), RAW, RAW, RAW, SCORES, SCORES, SCORES), max_size=8))
def test_columns_are_safe_agrees_with_the_row_by_row_check(cases):
    from scoring.model import GoldQuestion, Prediction

    qs, prs, a, f, n = [], [], [], [], []
    for k, (fmt, given_fmt, split, domain, rtype, acc, f1, an) in enumerate(cases):
        meta = {"domain": domain, "reasoning_type": rtype}
        qs.append(GoldQuestion(f"q{k}", "?", ("x",), "Str", "", split, meta, raw_format=fmt, format_given=given_fmt))
        prs.append(Prediction(f"q{k}", "p", "success"))
        a.append(acc)
        f.append(f1)
        n.append(an)
    columns = E.row_columns(qs, prs, a, f, n)
    rows = E.dicts_of(columns)
    want = all(map(E._orjson_safe, rows))
    got = E.columns_are_safe(columns)
    assert want or not got  # never safe where a row is not (it may be stricter: unrounded scores, unused raw formats)
    if all(type(q.raw_format) in E._PLAIN for q in qs) and all(x == 0.0 or 1e-4 <= x <= 1.0 for x in a + f + n):
        assert got == want
    assert E.rows_json(rows, safe=got) == E.rows_json(rows)  # the same bytes either way


def test_float_cells_written_by_orjson_are_reprs():
    """The CSV's score columns go through orjson when every value is 0 or in [1e-4, 1]: the same
    text as repr, on every 6-decimal value and on random doubles there; outside it, repr itself."""
    rng = random.Random(5)
    six = [k / 1_000_000 for k in range(100, 1_000_001)] + [0.0]
    randoms = [rng.uniform(1e-4, 1.0) for _ in range(200_000)] + [1e-4, 1.0, 0.1 + 0.2, 2 / 3]
    for col in (six, randoms):
        assert list(E._float_texts(col)) == list(map(repr, col))
    for odd in ([0.5, 5e-05], [0.5, float("nan")], [0.5, 1.5], [-0.0, 0.25], [0.5, float("inf")]):
        assert list(E._float_texts(odd)) == list(map(repr, odd))
    assert isinstance(E._float_texts([0.5, 0.25]), list)  # the orjson path was taken

"""Property-based fuzzing of every loader (issue 12): random bytes, random JSON values and random
text never raise; good rows mixed with bad ones are all kept, in order, and every bad row is
reported with its file and line; the counts add up. LENS_FUZZ_EXAMPLES=1500 runs each property
longer (default 150-200 examples); the examples come from a fixed seed (tests/conftest.py), and
LENS_FUZZ_RANDOM=1 draws new ones each run."""

from __future__ import annotations

import codecs
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.loaders import ID_FIELDS, load_documents, load_gold, load_predictions, load_scores, load_summary
from scoring.problems import ERROR, LoadResult

EXAMPLES = int(os.environ.get("LENS_FUZZ_EXAMPLES", 150))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
# keys a loader looks at, so that random objects reach the deeper code
KEYS = [*ID_FIELDS, "question", "answer", "value", "format", "verification_rule", "metadata", "document", "documents",
        "evidence_pages", "evidence_items", "bbox", "pages", "status", "prediction", "model_answer", "response",
        "output", "system", "accuracy", "token_f1", "anls", "scores", "per_question", "systems", "items",
        "document_id", "page_count", "questionId", "answers", "question_types", "evidence", "page", "task_type"]
loader_object = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats() | st.text(max_size=12) | st.sampled_from(KEYS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=6),
    max_leaves=16,
)

LOADERS = {
    "gold.jsonl": load_gold, "gold.json": load_gold,
    "preds.jsonl": load_predictions, "preds.json": load_predictions,
    "documents.jsonl": load_documents,
    "scores.jsonl": load_scores, "run.report.json": load_scores, "run.per_question.csv": load_scores,
    "summary.json": load_summary,
}


def _check(res: LoadResult, path: Path) -> None:
    assert isinstance(res, LoadResult)
    for p in res.problems:
        assert p.file == str(path) and p.severity in ("error", "warning")
        assert p.line is None or p.line >= 1
        str(p)  # every problem prints


def _run_all(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        for name, loader in LOADERS.items():
            path = Path(d) / name
            path.write_bytes(data)
            _check(loader(path), path)


@SETTINGS
@given(data=st.binary(max_size=400))
def test_random_bytes(data):
    _run_all(data)


@SETTINGS
@given(prefix=st.sampled_from([b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE,
                               codecs.BOM_UTF32_BE, b"\x00", b"{", b"[\n"]),
       text=st.text(max_size=200), codec=st.sampled_from(["utf-8", "utf-16-le", "utf-16-be", "latin-1", "utf-32-le"]))
def test_random_text_in_any_encoding(prefix, text, codec):
    _run_all(prefix + text.encode(codec, errors="replace"))


@SETTINGS
@given(values=st.lists(loader_object, max_size=8), as_document=st.booleans(), indent=st.sampled_from([None, 2]))
def test_random_json_values(values, as_document, indent):
    if as_document:
        data = json.dumps(values if len(values) != 1 else values[0], indent=indent).encode()
    else:
        data = "\n".join(json.dumps(v) for v in values).encode()
    _run_all(data)


@SETTINGS
@given(value=json_value)
def test_random_json_document(value):
    _run_all(json.dumps(value).encode())


# ----------------------------------------------------------------------------- good rows kept, bad rows named

BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
bad_line = st.one_of(
    # not a line opening with a byte-order mark: as a file's first line it is the file's encoding, not a bad row
    # (a line holding only b"\xef\xbb\xbf" is then blank), which test_random_text_in_any_encoding tries
    st.binary(min_size=1, max_size=30).filter(lambda b: b.strip() and b"\n" not in b and b"\r" not in b
                                              and not b.startswith(BOMS)),
    json_value.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["question", "answer", "prediction", "status", "x"]), json_value, max_size=3)
    .map(lambda v: json.dumps(v).encode()),
)


def _good_gold(k: int, text: str) -> bytes:
    return json.dumps({"question_id": f"g{k}", "question": text, "answer": {"value": text, "format": "Str"}}).encode()


def _good_prediction(k: int, text: str) -> bytes:
    return json.dumps({"question_id": f"g{k}", "prediction": text}).encode()


@settings(max_examples=max(EXAMPLES, 200), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.lists(st.one_of(st.tuples(st.just("good"), st.text(max_size=15)), st.tuples(st.just("bad"), bad_line),
                               st.tuples(st.just("blank"), st.sampled_from([b"", b"  ", b"\t"]))), max_size=25),
       kind=st.sampled_from(["gold", "predictions"]), crlf=st.booleans())
def test_good_rows_kept_bad_rows_named(plan, kind, crlf):
    lines, good, bad = [], [], []
    for number, (what, payload) in enumerate(plan, start=1):
        if what == "good":
            k = len(good)
            lines.append(_good_gold(k, payload) if kind == "gold" else _good_prediction(k, payload))
            good.append((f"g{k}", payload))
        elif what == "bad":
            lines.append(payload)
            bad.append(number)
        else:
            lines.append(payload)
    data = (b"\r\n" if crlf else b"\n").join(lines) + b"\n"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{kind}.jsonl"
        path.write_bytes(data)
        res = load_gold(path) if kind == "gold" else load_predictions(path)
        _check(res, path)
        if kind == "gold":
            assert [(q.qid, q.question) for q in res.items] == good
        else:
            assert [(p.qid, p.text) for p in res.items] == good
        # a bad line that is a JSON value on its own might still open a "pretty" document: only
        # when the file is not such a document must every bad line be named
        if not any(p.got.startswith("one JSON document over several lines") for p in res.problems):
            errors = {p.line for p in res.problems if p.severity == ERROR}
            assert set(bad) <= errors, (bad, [str(p) for p in res.problems])
            assert res.rows_read == res.loaded + res.skipped


line_piece = st.sampled_from([b'{"question_id": "q", "prediction": "a"}', b'{"question_id": "r", "prediction": "' + b"x" * 40 + b'"}',
                              b"", b" ", b"{oops", b"\r", b"z" * 90, b"\x00" * 70])


@SETTINGS
@given(st.lists(st.tuples(st.lists(line_piece, min_size=1, max_size=3), st.sampled_from([b"\n", b"\r\n", b""])), max_size=12),
       st.booleans())
def test_lines_over_the_cap_are_read_past_alike_at_any_block_size(lines, universal):
    """Issue 35: a line longer than MAX_LINE is read past (never held) by the JSON-lines reader, with
    the same values, problems and counts whatever the block size (a line cut by a block's end, or
    longer than several); every line is counted once (rows read are the values and the skipped rows,
    and with the blank lines they are the file's lines); each value is given its own line's number.
    Issue 36 left one reader: this compared the block reader with the line-by-line one."""
    import scoring.loaders as loaders

    data = b"".join(b"".join(pieces) + end for pieces, end in lines)
    saved = loaders.MAX_LINE, loaders.HUGE_LINE, loaders.BLOCK
    outcomes = []
    try:
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "p.jsonl"
            f.write_bytes(data)
            for block in (8, 32, 1 << 16):
                loaders.MAX_LINE, loaders.HUGE_LINE, loaders.BLOCK = 100, 60, block
                res: LoadResult = LoadResult()
                got = list(loaders.read_json_lines(f, res, universal=universal))
                outcomes.append((got, [(str(p), p.kind) for p in res.problems], (res.rows_read, res.skipped, res.blank_lines)))
    finally:
        loaders.MAX_LINE, loaders.HUGE_LINE, loaders.BLOCK = saved
    assert outcomes[0] == outcomes[1] == outcomes[2]
    got, problems, (rows_read, skipped, blank) = outcomes[0]
    assert rows_read == len(got) + skipped
    if rows_read and not (universal and (any(kind == "lines too long to read" for _, kind in problems) or b"\r\r" in data)):
        # (not counted here: an over-long line is one line, lone CRs in it or not; and CRs in a row
        # at a line's end end it once -- "x\r\r\n" is one line, as the line-by-line reader read it)
        split = data.splitlines() if universal else data.split(b"\n")
        total = len(split) - (not universal and data.endswith(b"\n"))
        assert rows_read + blank == total
        assert all(json.loads(split[number - 1]) == value for number, value in got)  # each value at its own line

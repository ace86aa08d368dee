"""The report's JSON and CSV bytes: the per-question rows as the release writes them, and their text;
and the one CSV writer of the command line and the app (`write_csv`, `csv_string`, `frame_csv`), which
writes every text cell safe to open in a spreadsheet (`safe_cell`).

Spreadsheet-safe cells (OWASP's rule for CSV injection): a text cell that begins with `=`, `+`, `-`,
`@`, a tab or a carriage return -- after any single quotes -- is written with one single quote in
front (`=HYPERLINK(...)` -> `'=HYPERLINK(...)`, `'=x` -> `''=x`), so that a spreadsheet shows it as
text instead of running it. What is text is decided by the value's type, never by its look: numbers
(bool, int, float, Decimal, numpy numbers: `numbers.Number`) and empty cells are written as they
are (the score -0.5 stays -0.5), while a string is text whatever it holds (a prediction "-5" is
written '-5). Any other value is text as str() writes it. `restore_cell` undoes the quote on a
cell read back, exactly: the rule is one-to-one. The release evaluator writes its CSV without this
rule, so our per-question CSV differs from its bytes in those cells alone (the JSON report does not).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from math import isnan
from numbers import Number
from pathlib import Path
from typing import IO, Any

import orjson

from .metrics import OVERFLOW_STATUSES, OVERFLOW_TEXT
from .model import GoldQuestion, Prediction
from .registry import MISSING_STATUS

CSV_COLUMNS = (
    "question_id", "prediction", "gold_answer", "answer_format", "status",
    "accuracy", "token_f1", "anls", "split", "domain", "reasoning_type",
)


def row_dicts(questions: Sequence[GoldQuestion], predictions: Sequence[Prediction | None], accuracy: Sequence[float],
              token_f1: Sequence[float], anls: Sequence[float]) -> list[dict]:
    """The release per-question rows of aligned columns (a prediction None: missing), as
    `QuestionResult.row()` writes them -- for a caller holding scores without records."""
    return dicts_of(row_columns(questions, predictions, accuracy, token_f1, anls))


def row_columns(questions: Sequence[GoldQuestion], predictions: Sequence[Prediction | None], accuracy: Sequence[float],
                token_f1: Sequence[float], anls: Sequence[float]) -> list[list]:
    """The fields of `row_dicts`' rows as columns, in CSV_COLUMNS order (`csv_columns` writes them
    as CSV, `dicts_of` makes the rows)."""
    return [
        [q.qid for q in questions],
        ["" if pr is None else (OVERFLOW_TEXT if pr.status in OVERFLOW_STATUSES else pr.text) for pr in predictions],
        [q.answers[0] if q.answers else "" for q in questions],
        [q.raw_format if q.format_given else "Str" for q in questions],
        [MISSING_STATUS if pr is None else pr.status for pr in predictions],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in accuracy],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in token_f1],
        [x if x == 0.0 or x == 1.0 else round(x, 6) for x in anls],
        [q.split for q in questions],
        [q.metadata.get("domain", "unknown") for q in questions],
        [q.metadata.get("reasoning_type", "unknown") for q in questions],
    ]


def dicts_of(columns: Sequence[Sequence]) -> list[dict]:
    """The row dicts of `row_columns` (keys in CSV_COLUMNS order: the report's bytes depend on it)."""
    return [{"question_id": qid, "prediction": pred, "gold_answer": gold, "answer_format": fmt, "status": status,
             "accuracy": acc, "token_f1": f1, "anls": an, "split": split, "domain": domain, "reasoning_type": rtype}
            for qid, pred, gold, fmt, status, acc, f1, an, split, domain, rtype in zip(*columns)]


_SCALARS = frozenset({str, int, float, bool, type(None)})


_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",\n      ", ": "))


def _unencodable(obj: object) -> None:
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


# JSONEncoder.encode builds a new C encoder on every call; for a million rows, build it once
# (same arguments as _ROW_ENCODER's: no circular check, no indent, ensure_ascii=False)
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
if _c_make_encoder is not None:
    _C_ROW_ENCODER = _c_make_encoder(None, _unencodable, json.encoder.encode_basestring, None,
                                     ": ", ",\n      ", False, False, True)

    def _encode_row(row: dict) -> str:
        return "".join(_C_ROW_ENCODER(row, 0))
else:  # pragma: no cover - CPython always has the C encoder
    _encode_row = _ROW_ENCODER.encode  # type: ignore[assignment]


def _row_json(row: dict) -> str:
    """One per-question row as `json.dumps(..., indent=2)` prints it two levels deep. With
    `indent`, the json module falls back to its pure-Python encoder (~40 us a row); a flat row
    of scalars gets the same text from the C encoder with the indent written into the item
    separator. Rows holding a list or object (raw metadata can) take the slow, exact path."""
    # only the raw metadata fields and the raw answer format can hold a list or object
    if (type(row["split"]) in _SCALARS and type(row["domain"]) in _SCALARS and type(row["reasoning_type"]) in _SCALARS
            and type(row["answer_format"]) in _SCALARS):
        return "{\n      " + _encode_row(row)[1:-1] + "\n    }"
    # JSON strings hold no raw newline, so re-indenting the generic output is safe
    try:
        return json.dumps(row, ensure_ascii=False, indent=2).replace("\n", "\n    ")
    except RecursionError:  # a raw value nested too deeply for the indenting (pure-Python) encoder
        return _deep_row_json(row)


def _deep_row_json(row: dict) -> str:
    """A row holding a value nested too deeply to indent (issue 18: 980 levels): that value written
    on one line by the C encoder -- the same JSON value, only not indented -- or, deeper still,
    as its text (a string). Never raises."""
    items = []
    for key, value in row.items():
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (RecursionError, ValueError):
            text = json.dumps(_text_of(value), ensure_ascii=False)
        items.append(f"{json.dumps(key)}: {text}")
    return "{\n      " + ",\n      ".join(items) + "\n    }"


def _text_of(value: object) -> str:
    try:
        return repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to write>"


_TINY = 1e-4  # below this json writes 1e-05 and orjson 1e-5; from here to 1 both write the same digits


_PLAIN = frozenset({str, bool, type(None)})


def _orjson_safe(row: dict) -> bool:
    """True when orjson writes this row with exactly the json module's bytes. Strings are the same
    for every code point (orjson refuses lone surrogates: that batch then takes the json path);
    booleans and null too; scores only when 0 or in [1e-4, 1] (json writes 1e-05, orjson 1e-5;
    checked over every 6-decimal value and 4M random floats in [1e-4, 1]). The id, prediction,
    gold and status are strings by construction; the raw fields (format, split, domain,
    reasoning type) must be strings, booleans or null -- numbers, lists and objects take the json
    path."""
    a, f, n = row["accuracy"], row["token_f1"], row["anls"]
    if not ((a == 0.0 or _TINY <= a <= 1.0) and (f == 0.0 or _TINY <= f <= 1.0) and (n == 0.0 or _TINY <= n <= 1.0)):
        return False  # NaN fails every comparison: json writes NaN, orjson null
    return (type(row["answer_format"]) in _PLAIN and type(row["split"]) in _PLAIN and type(row["domain"]) in _PLAIN
            and type(row["reasoning_type"]) in _PLAIN and type(row["prediction"]) is str
            and type(row["gold_answer"]) is str and type(row["question_id"]) is str and type(row["status"]) is str)


ROW_SEP = ",\n    "  # between two rows' JSON in the report's per_question list (two levels deep)


def rows_json(batch: list[dict], *, safe: bool | None = None) -> str:
    """`ROW_SEP.join(map(_row_json, batch))`: the rows two levels deep, as json.dumps(indent=2)
    nests them in the report. orjson writes the whole batch in one call when every row is safe
    for it (`_orjson_safe`; `safe`: the caller has checked, `columns_are_safe`) -- several times
    faster, the same bytes (the release-agreement golden files and tests/test_fast_json.py pin
    them); any other batch takes the json path."""
    if (safe if safe is not None else all(map(_orjson_safe, batch))):
        try:
            text = orjson.dumps(batch, option=orjson.OPT_INDENT_2)
        except TypeError:  # orjson.JSONEncodeError: e.g. a lone surrogate
            pass
        else:
            # b'[\n  {\n    "k": v,\n ...\n  }\n]': drop the brackets, indent every line two more spaces
            return text[4:-2].decode("utf-8").replace("\n", "\n  ")
    return ROW_SEP.join(map(_row_json, batch))


def columns_are_safe(columns: Sequence[Sequence]) -> bool:
    """`all(map(_orjson_safe, dicts_of(columns)))` for row columns in CSV_COLUMNS order, read a
    column at a time: the id, prediction, gold and status are strings; the raw fields (format,
    split, domain, reasoning type) strings, booleans or null; every score 0 or in [1e-4, 1]."""
    qid, pred, gold, fmt, status, acc, f1, an, split, domain, rtype = columns
    if any(set(map(type, col)) - _STR for col in (qid, pred, gold, status)):
        return False
    if any(not set(map(type, col)) <= _PLAIN for col in (fmt, split, domain, rtype)):
        return False
    for col in (acc, f1, an):
        if col and (isnan(sum(col)) or max(col) > 1.0 or min(filter(None, col), default=1.0) < _TINY):
            return False
    return True


def csv_text(rows: list[dict]) -> str:
    """The rows as `csv.writer` (excel dialect, minimal quoting, "\r\n") writes them: a field is
    written as str() gives it (repr for floats, "" for null), quoted when it holds a quote, a
    comma or a line break, quotes doubled inside. Written by csv.writer itself (issue 22): the
    same bytes as `csv_columns` (tests/test_fast_json.py) and faster on row dicts (200,000 rows:
    0.56 s against 0.85 s through columns). Text cells are spreadsheet-safe (`safe_cell`): when the
    text written holds a cell that may begin like a formula (`_may_hold_formula`, a superset), the
    rows are written again by `csv_columns`, which applies the rule cell by cell. A value nested
    too deeply for str() goes through `csv_columns` too, which writes its placeholder."""
    buf = io.StringIO(newline="")
    try:
        csv.writer(buf).writerows(map(dict.values, rows))
    except RecursionError:
        return csv_columns(list(zip(*map(dict.values, rows))))
    text = buf.getvalue()
    return csv_columns(list(zip(*map(dict.values, rows)))) if _may_hold_formula(text) else text


_STR, _FLOAT = {str}, {float}


def csv_columns(columns: Sequence[Sequence]) -> str:
    """`csv_text` of the rows these columns hold (the rows' values, column by column). Kept by
    hand rather than `csv.writer().writerows(zip(*columns))` (issue 22 asked): the same bytes, but
    csv.writer is slower on columns (200,000 rows: 0.75 s against 0.67 s), because a column of
    strings none of which needs quoting is taken whole here and a column of floats by repr in C."""
    if not columns or not len(columns[0]):
        return ""
    cells: list[Iterable[str]] = []
    for col in columns:
        kinds = set(map(type, col))
        if kinds == _STR:  # strings: taken whole when none needs quoting or the quote of safe_cell, else cell by cell
            joined = "\x00".join(col)
            if _formula_like(col[0]) or _FORMULA_IN_COLUMN.search(joined):
                col = [_safe_text(s) for s in col]
            cells.append([('"' + s.replace('"', '""') + '"') if ('"' in s or "," in s or "\n" in s or "\r" in s) else s
                          for s in col] if _needs_quotes(joined) else col)
        elif kinds == _FLOAT:
            cells.append(_float_texts(col))
        else:
            cells.append(map(_csv_cell, col))
    return "\r\n".join(map(",".join, zip(*cells))) + "\r\n"


def _float_texts(col: Sequence[float]) -> Iterable[str]:
    """`map(repr, col)`; written by orjson in one call when every value is 0 or in [1e-4, 1],
    where its digits are repr's (see `_orjson_safe`)."""
    if not isnan(sum(col)) and max(col) <= 1.0 and min(filter(None, col), default=1.0) >= _TINY:
        return orjson.dumps(col).decode("ascii")[1:-1].split(",")
    return map(repr, col)


def _needs_quotes(s: str) -> bool:
    return '"' in s or "," in s or "\n" in s or "\r" in s


def _csv_cell(v: object) -> str:
    """One cell as csv.writer writes `safe_cell(v)`."""
    if type(v) is str:
        s = _safe_text(v)
    else:
        try:
            s = "" if v is None else (repr(v) if isinstance(v, float) else str(v))
        except RecursionError:  # a raw value nested too deeply for str(): its placeholder, never a crash
            s = _text_of(v)
        if not isinstance(v, Number):
            s = _safe_text(s)
    return '"' + s.replace('"', '""') + '"' if _needs_quotes(s) else s


# ----------------------------------------------------------------------------- the one CSV writer

FORMULA_STARTS = "=+-@\t\r"  # what a text cell may not begin with (after single quotes): OWASP's list
_FIRST = frozenset(FORMULA_STARTS + "'")
# A cell that may begin with a formula in a CSV text: at the text's start, after a comma or after a line
# feed, an opening quote, single quotes, then one of FORMULA_STARTS. Every such cell matches, and some
# others (a negative number, an empty last cell before "\r\n", a line break inside a quoted cell),
# which are then written cell by cell. Three patterns, each led by a literal (searched by the regex
# engine's fast scan: one pattern `(?:^|,)...` took 0.21 s on 16 MB, these 0.06 s together).
_AFTER = "\"?'*[" + re.escape(FORMULA_STARTS) + "]"
_FORMULA_AT_START, _FORMULA_AFTER_COMMA, _FORMULA_AFTER_LF = re.compile(_AFTER), re.compile("," + _AFTER), re.compile("\n" + _AFTER)
_FORMULA_IN_COLUMN = re.compile("\x00'*[" + re.escape(FORMULA_STARTS) + "]")  # a column's cells joined by NUL (the first apart)


def _may_hold_formula(text: str) -> bool:
    return bool(_FORMULA_AT_START.match(text) or _FORMULA_AFTER_COMMA.search(text) or _FORMULA_AFTER_LF.search(text))


def _formula_like(text: str) -> bool:
    """`text` begins with one of FORMULA_STARTS after any single quotes."""
    rest = text.lstrip("'")
    return rest[:1] != "" and rest[0] in FORMULA_STARTS


def _safe_text(text: str) -> str:
    return "'" + text if text[:1] in _FIRST and _formula_like(text) else text


def safe_cell(value: Any) -> Any:
    """One cell as every CSV of ours writes it (module docstring): a number (`numbers.Number`: bool,
    int, float, Decimal, numpy's) or None as it is; text -- a str, or another value's str() -- that
    begins with =, +, -, @, a tab or a carriage return after any single quotes, with one single
    quote in front; any other value as it is."""
    if type(value) is str:
        return _safe_text(value)
    if value is None or isinstance(value, Number):
        return value
    try:
        text = str(value)
    except RecursionError:  # nested too deeply to write: csv_columns writes its placeholder
        return value
    return "'" + text if text[:1] in _FIRST and _formula_like(text) else value


def restore_cell(text: str) -> str:
    """A text cell read back from a CSV of ours as it was before `safe_cell` (its one added quote
    removed); any other text as it is."""
    return text[1:] if text[:1] == "'" and _formula_like(text) else text


def safe_row(row: Iterable[Any], float_format: Any = None) -> list:
    """`safe_cell` of every cell; floats written with `float_format` (a function) when given."""
    if float_format is None:
        return [safe_cell(v) for v in row]
    return [float_format(v) if isinstance(v, float) else safe_cell(v) for v in row]


def write_csv(fh: IO[str], rows: Iterable[Iterable[Any]], header: Sequence[str] | None = None, *,
              float_format: Any = None, lineterminator: str = "\r\n") -> int:
    """Write `header` (when given) and `rows` to `fh` as csv.writer does (excel dialect, minimal
    quoting), every cell through `safe_cell`; floats with `float_format` (e.g. `lambda v: format(v,
    ".6g")`) when given -- a number stays a number whatever its digits. Returns the number of rows.
    Every CSV the command line or the app writes goes through this module (tests/test_csv_safety.py)."""
    writer = csv.writer(fh, lineterminator=lineterminator)
    if header is not None:
        writer.writerow(safe_row(header))
    n = 0
    for row in rows:
        writer.writerow(safe_row(row, float_format))
        n += 1
    return n


def csv_string(rows: Iterable[Iterable[Any]], header: Sequence[str] | None = None, **kwargs: Any) -> str:
    """`write_csv` into a string."""
    buf = io.StringIO(newline="")
    write_csv(buf, rows, header, **kwargs)
    return buf.getvalue()


_NUMERIC_KINDS = frozenset("biufc")  # numpy dtype kinds of bool, int, unsigned, float and complex columns


def frame_csv(frame: Any) -> bytes:
    """A pandas DataFrame as a CSV download: `frame.to_csv(index=False)` (its empty cells for NaN and
    None) in UTF-8 with "\r\n" line ends -- as every CSV of ours: with pandas' "\n" a cell holding a
    carriage return is not quoted, and a spreadsheet starts a new row there --, the column names and
    every cell of a column that is not numeric through `safe_cell` (a numeric column holds numbers
    only). Duck-typed: scoring imports no pandas."""
    text = frame.to_csv(index=False, lineterminator="\r\n")
    if not _may_hold_formula(text):
        return text.encode("utf-8")
    safe = frame.copy()
    for i, dtype in enumerate(frame.dtypes):
        if getattr(dtype, "kind", "O") not in _NUMERIC_KINDS:
            safe.isetitem(i, [safe_cell(v) for v in frame.iloc[:, i].tolist()])
    safe.columns = [safe_cell(c) for c in frame.columns]
    return safe.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def open_for_writing(path: str | Path) -> IO[str]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8", newline="")

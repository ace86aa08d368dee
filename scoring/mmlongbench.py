"""MMLongBench-Doc as released: its per-question score, its Acc and F1, its text report, and
its two file kinds (`data/samples.json`, `results/res_<model>.json`) read into our records.

The rules below were learned by reading the benchmark's evaluator (`eval/eval_score.py` and
`run_api.py` of mayubo2333/MMLongBench-Doc) and are written here in our own terms. Wherever the
evaluator returns a value, `eval_score` returns the same value. Where it would raise, or would
run model text through Python's `eval`, nothing is executed: the row gets a score from one of
the documented fallback rules (`FALLBACK_RULES`), and `judge_mmlongbench` names the rule in its
`note` so the dashboard can show it by question id.

How the evaluator scores one answer (gold `gt`, extracted prediction `pred`, format `fmt`):

* cleaning (`clean_string`): text form, lower case, strip; every parenthesised group `(...)` is
  removed together with the white space before it; one quote character at each end is removed;
  leading `$` and trailing `%` characters are removed. (Its lines meant to cut `mile`, `miles`,
  `million` have no effect: their results are discarded.)
* `Int`: `int(gt) == int(float(pred))` -- a decimal prediction is truncated (`5.9` scores for
  `5`). When either conversion fails the prediction is replaced by `""` and the *unconverted*
  gold is compared with it, so an empty gold scores 1 whatever the answer.
* `Float`: both sides cleaned and read with `float()`; equal when the prediction is within 1 %
  (relative) of the gold, the gold / 100 or the gold * 100, or equal to one of them after rounding
  both to the shorter number of decimals of the two (at least 2, 3 for a number printed without a
  `.`).
* `Str` and `None`: the cleaned gold is "exact-match" text (a URL, a `.py`/`ipynb` name, text
  starting `page`, a telephone-like or date-like number, a.m./p.m., an e-mail address): 1 when the
  cleaned strings are equal. Otherwise ANLS: 1 - distance / length, with the length of the longer
  *upper-cased* string, kept only when strictly above 0.5.
* any other format (`List`, but also unknown ones): text starting with `[` is read as a Python
  literal, anything that is not a list becomes a one-element list; lists of different lengths
  score 0. Otherwise the cleaned elements of each side are sorted; when the first gold element
  reads as a float or is exact-match text the two sides must be equal joined with `-`, else the
  score is the minimum ANLS of the pairs in sorted order.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from . import guard
from .limits import LITERAL_MAX_CHARS, LITERAL_MAX_DEPTH, LITERAL_MAX_ITEMS
from .model import DocRef, DocumentRecord, GoldQuestion, Prediction, ScoreRow
from .problems import LoadResult, Problem, kind_of, short_value
from .reading import read_literal
from .text import drop_parenthesised, to_str

__all__ = [
    "FORMATS",
    "NOT_ANSWERABLE",
    "NOT_EVALUATED",
    "LITERAL_MAX_CHARS",
    "LITERAL_MAX_DEPTH",
    "FALLBACK_RULES",
    "QID_PREFIX",
    "MMJudgement",
    "ResultExtras",
    "ResultsLoad",
    "clean_string",
    "is_exact_match_text",
    "release_anls",
    "float_matches",
    "read_literal",
    "judge_mmlongbench",
    "eval_score",
    "judge_question",
    "acc_and_f1",
    "show_results",
    "evidence_categories",
    "qid_for",
    "position_of",
    "run_name",
    "extract_pred",
    "load_samples",
    "load_results",
    "document_records",
    "gold_rows",
    "rescored_rows",
    "extraction_miss",
]

FORMATS = ("Int", "Float", "Str", "List", "None")
NOT_ANSWERABLE = "Not answerable"
QID_PREFIX = "mmlongbench_"

# The rules for the rows the released evaluator cannot score without raising or executing text.
FALLBACK_RULES: dict[str, str] = {
    "gold_not_literal": "format List (or unknown): the gold starts with '[' but is not a Python literal "
                        f"(or is longer than {LITERAL_MAX_CHARS:,} characters, has more than {LITERAL_MAX_ITEMS:,} items or is nested "
                        f"deeper than {LITERAL_MAX_DEPTH}); "
                        "the release would eval it. Scored 0.",
    "pred_not_literal": "format List (or unknown): the prediction starts with '[' but is not a Python literal "
                        f"(or is longer than {LITERAL_MAX_CHARS:,} characters, has more than {LITERAL_MAX_ITEMS:,} items or is nested "
                        f"deeper than {LITERAL_MAX_DEPTH}); "
                        "the release would eval it (and raise, or run it). Scored 0.",
    "empty_lists": "format List (or unknown): gold and prediction are both empty lists; the release raises "
                   "IndexError. Scored 1 (two empty lists are equal joined with '-', the rule it would apply).",
    "float_gold_not_number": "format Float: the gold does not read as a number; the release raises ValueError. "
                             "Scored by the Str rule (cleaned strings: exact-match text must be equal, else ANLS above 0.5).",
}


# ----------------------------------------------------------------------------- cleaning


def clean_string(value: Any) -> str:
    """The evaluator's cleaning of one answer (see the module text)."""
    s = str(value).lower().strip()
    s = drop_parenthesised(s).strip()
    if s[:1] in ("'", '"'):
        s = s[1:]
    if s[-1:] in ("'", '"'):
        s = s[:-1]
    s = s.strip().lstrip("$").strip()
    return s.strip().rstrip("%").strip()


# One anchored match each, no quantified group over a class it overlaps: linear time.
_PHONE_LIKE = re.compile(r"\d+(?:[-\s]\d+)?")
_DATE_LIKE = re.compile(r"\d{4}[-\s]\d{2}(?:[-\s]\d{2})?")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_EMAIL_DOMAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _is_email(s: str) -> bool:
    """`local@domain.tld` as the evaluator's pattern accepts it, checked without backtracking: one
    `@`, a non-empty local part of letters, digits and `._%+-`, a domain of letters, digits, `.`
    and `-` whose last `.` has at least one character before it and two or more ASCII letters
    (only) after it."""
    at = s.find("@")
    if at <= 0 or s.find("@", at + 1) >= 0:
        return False
    local, domain = s[:at], s[at + 1:]
    if not _EMAIL_LOCAL.issuperset(local) or not _EMAIL_DOMAIN.issuperset(domain):
        return False
    dot = domain.rfind(".")
    tld = domain[dot + 1:]
    return dot >= 1 and len(tld) >= 2 and _ASCII_LETTERS.issuperset(tld)


def is_exact_match_text(s: str) -> bool:
    """Whether cleaned gold text is compared for equality instead of by ANLS."""
    return (
        "https://" in s
        or s.endswith(".py")
        or s.endswith("ipynb")
        or s.startswith("page")
        or "a.m." in s
        or "p.m." in s
        or _PHONE_LIKE.fullmatch(s) is not None
        or _DATE_LIKE.fullmatch(s) is not None
        or _is_email(s)
    )


def _reads_as_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- the measures


def release_anls(gold: str, pred: str) -> float:
    """The evaluator's ANLS of two (already cleaned) strings: 1 - d / L where d is the Levenshtein
    distance of the strings as given and L the length of the longer one *after upper-casing*
    (`ß` counts 2); 1.0 when L is 0; 0.0 unless strictly above 0.5. Not `scoring.metrics.anls`,
    which keeps 0.5 itself and measures the strings as they are. A distance cut-off keeps long,
    dissimilar strings cheap; the kept value is the exact formula."""
    length = max(len(gold.upper()), len(pred.upper()))
    if length == 0:
        return 1.0
    cutoff = length // 2 + 1  # a distance above this gives 1 - d/L < 0.5
    if abs(len(gold) - len(pred)) > cutoff:
        return 0.0
    d = Levenshtein.distance(gold, pred, score_cutoff=cutoff)
    if d > cutoff:
        return 0.0
    value = 1.0 - float(d) / float(length)
    return value if value > 0.5 else 0.0


def _decimals(x: float) -> int:
    text = str(x)
    return len(text.split(".")[-1]) if "." in text else 3


def float_matches(gold: float, pred: float) -> bool:
    """The evaluator's number comparison for `Float` (percentages allowed, 1 % tolerance): the
    prediction matches gold / 100, gold or gold * 100 within a relative 1 %, or equals one of them
    once both are rounded to the fewer decimals of the two printed numbers (at least 2)."""
    for target in (gold / 100, gold, gold * 100):
        try:
            if math.isclose(target, pred, rel_tol=0.01):
                return True
            digits = max(min(_decimals(pred), _decimals(target)), 2)
            if round(pred, digits) == round(target, digits):
                return True
        except (ValueError, OverflowError, TypeError):
            continue
    return False


@dataclass(frozen=True, slots=True)
class MMJudgement:
    """One answer's score under the released evaluator, and the fallback rule (a key of
    FALLBACK_RULES) when the evaluator itself would have raised or executed text."""

    score: float
    note: str | None = None

    @property
    def explanation(self) -> str:
        return FALLBACK_RULES.get(self.note or "", "")


def _judge_int(gt: Any, pred: Any) -> MMJudgement:
    try:
        g, p = int(gt), int(float(pred))
    except Exception:  # the evaluator's bare except: the prediction becomes "", gt stays as it was
        return MMJudgement(1.0 if gt == "" else 0.0)
    return MMJudgement(1.0 if g == p else 0.0)


def _judge_text(gt: Any, pred: Any) -> float:
    g, p = clean_string(gt), clean_string(pred)
    if is_exact_match_text(g):
        return 1.0 if g == p else 0.0
    return release_anls(g, p)


def _judge_float(gt: Any, pred: Any) -> MMJudgement:
    try:
        g = float(clean_string(gt))
    except ValueError:
        # The evaluator then reads the raw gold once more (strip, trailing %) and raises if that fails.
        try:
            float(str(gt).strip().rstrip("%").strip())
        except ValueError:
            return MMJudgement(_judge_text(gt, pred), "float_gold_not_number")
        return MMJudgement(0.0)  # the prediction was replaced by "", which is no number
    try:
        p = float(clean_string(pred))
    except ValueError:
        return MMJudgement(0.0)
    return MMJudgement(1.0 if float_matches(g, p) else 0.0)


def _as_list(value: Any, note: str) -> tuple[list[Any] | None, str | None]:
    if isinstance(value, str) and value.startswith("["):
        ok, value = read_literal(value)
        if not ok:
            return None, note
    return (value if isinstance(value, list) else [value]), None


def _judge_list(gt: Any, pred: Any) -> MMJudgement:
    golds, note = _as_list(gt, "gold_not_literal")
    if golds is None:
        return MMJudgement(0.0, note)
    preds, note = _as_list(pred, "pred_not_literal")
    if preds is None:
        return MMJudgement(0.0, note)
    if len(golds) != len(preds):
        return MMJudgement(0.0)
    if not golds:
        return MMJudgement(1.0, "empty_lists")
    g = sorted(clean_string(v) for v in golds)
    p = sorted(clean_string(v) for v in preds)
    if _reads_as_float(g[0]) or is_exact_match_text(g[0]):
        return MMJudgement(1.0 if "-".join(g) == "-".join(p) else 0.0)
    return MMJudgement(min(release_anls(a, b) for a, b in zip(g, p)))


def judge_mmlongbench(gt: Any, pred: Any, answer_format: Any) -> MMJudgement:
    """The released evaluator's score of `pred` against `gt` under `answer_format` (values as read
    from JSON: str, numbers, booleans, null, lists, objects), with the fallback note where it applies.
    Never raises and never executes anything."""
    if answer_format == "Int":
        return _judge_int(gt, pred)
    if answer_format == "Float":
        return _judge_float(gt, pred)
    if answer_format in ("Str", "None"):
        return MMJudgement(_judge_text(gt, pred))
    return _judge_list(gt, pred)


def eval_score(gt: Any, pred: Any, answer_type: Any) -> float:
    """The released `eval_score(gt, pred, answer_type)` (fallback rules where it raises or evals)."""
    return judge_mmlongbench(gt, pred, answer_type).score


def judge_question(question: GoldQuestion, pred: Any) -> MMJudgement:
    """`judge_mmlongbench` of a question loaded by `load_samples` (its gold value as read)."""
    gold = question.metadata.get("answer", question.gold_answer)
    return judge_mmlongbench(gold, pred, question.raw_format if question.format_given else "Str")


# ----------------------------------------------------------------------------- Acc, F1, the report


def _has_score(row: Mapping[str, Any]) -> bool:
    return isinstance(row.get("score"), (int, float))  # bool included: the evaluator's sum() adds them


def acc_and_f1(rows: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """The released `eval_acc_and_f1` over benchmark-shaped rows (`answer`, `pred`, `score`).

    Rows with a numeric `score` are the evaluated ones (none: 0.0, 0.0); the evaluator takes every
    row with a `score` key and raises on a non-numeric one, which here counts as not evaluated.
    Acc is the mean score of the evaluated rows.
    Recall = the summed scores of answerable rows (`answer` is not exactly "Not answerable") over
    the number of answerable rows; precision = that same sum over the number of rows whose `pred`
    is not exactly "Not answerable"; F1 = 2PR / (P + R), 0.0 when P + R is not above 0 -- and 0.0
    when either count is 0 or an evaluated row lacks `answer` or `pred` (the evaluator's bare
    except). Sums are Python's built-in sum in row order, as there (so the last bits follow the
    interpreter: Python 3.12 changed sum() of floats to a compensated sum)."""
    evaluated = [r for r in rows if _has_score(r)]
    if not evaluated:
        return 0.0, 0.0
    acc = sum(r["score"] for r in evaluated) / len(evaluated)
    try:
        answerable = [r for r in evaluated if r["answer"] != NOT_ANSWERABLE]
        gained = sum(r["score"] for r in answerable)
        recall = gained / len(answerable)
        precision = gained / len([r for r in evaluated if r["pred"] != NOT_ANSWERABLE])
        f1 = 2 * recall * precision / (recall + precision) if (recall + precision) > 0.0 else 0.0
    except Exception:  # KeyError (no answer or pred), ZeroDivisionError (an empty count): the evaluator's bare except
        f1 = 0.0
    return acc, f1


_CONTAINERS = (str, bytes, list, tuple, dict, set, frozenset)


def _evidence_value(value: Any) -> Any:
    """An `evidence_pages` / `evidence_sources` value as the report reads it: a string is read as
    a Python literal (never executed); one that is not a literal, and a missing or null value,
    read as an empty list; a number or other scalar as a one-element list (the evaluator raises
    on all of these)."""
    if isinstance(value, str):
        ok, value = read_literal(value)
        if not ok:
            return []
    if value is None:
        return []
    return value if isinstance(value, _CONTAINERS) else [value]


def _key(value: Any) -> Any:
    """A grouping key: the value itself, or its str() when it cannot be a dict key."""
    try:
        hash(value)
    except TypeError:
        return str(value)
    return value


SEPARATOR = "-" * 23
NOT_EVALUATED = "rows not evaluated yet"  # the problem kind of a result row without `pred` (skipped)


def evidence_categories(evidence_pages: Any, answer: Any) -> tuple[str, ...]:
    """The report's page categories of one question, overlaps included: `single-page` (exactly one
    evidence page, unanswerable questions too), `cross-page` (any other number of pages -- none
    included -- and answerable), `unanswerable` (answer exactly "Not answerable")."""
    n = len(_evidence_value(evidence_pages))
    out = []
    if n == 1:
        out.append("single-page")
    elif answer != NOT_ANSWERABLE:
        out.append("cross-page")
    if answer == NOT_ANSWERABLE:
        out.append("unanswerable")
    return tuple(out)


def show_results(rows: Iterable[Mapping[str, Any]]) -> str:
    """The text the released `show_results` writes to `res_<model>.txt`, for benchmark-shaped rows
    in file order (`answer`, `pred`, `score`, `doc_type`, and `evidence_pages`/`evidence_sources`
    as literal strings or lists). Write it with UTF-8 and no newline translation.

    Lines, each ending in "\\n" (numbers printed by str(): `0.5`, `0.30000000000000004`, `0.0`):
      Overall Acc: {acc} | Question Number: {rows}
      Overall F1-score: {f1} | Question Number: {rows}
      -----------------------
      Single-page | Accuracy: {acc} | Question Number: {n}
      Cross-page | Accuracy: {acc} | Question Number: {n}
      Unanswerable | Accuracy: {acc} | Question Number: {n}
      -----------------------
      Evidence Sources: {source} | Accuracy: {acc} | Question Number: {n}    (first-seen order)
      -----------------------
      Document Type: {doc_type} | Accuracy: {acc} | Question Number: {n}     (first-seen order)
    "Question Number" counts every row of the group, evaluated or not; each Accuracy is the Acc of
    `acc_and_f1` over the group. Where the evaluator raises, the report reads on: a missing
    `answer` is answerable, a missing `doc_type` is grouped as None, a source or document type
    that cannot be a dict key is grouped as its str(), and evidence values as `_evidence_value`."""
    rows = list(rows)
    pages = [_evidence_value(r.get("evidence_pages")) for r in rows]
    n = len(rows)
    acc, f1 = acc_and_f1(rows)
    lines = [f"Overall Acc: {acc} | Question Number: {n}", f"Overall F1-score: {f1} | Question Number: {n}", SEPARATOR]
    single = [r for r, p in zip(rows, pages) if len(p) == 1]
    cross = [r for r, p in zip(rows, pages) if len(p) != 1 and r.get("answer") != NOT_ANSWERABLE]
    unanswerable = [r for r in rows if r.get("answer") == NOT_ANSWERABLE]
    for label, group in (("Single-page", single), ("Cross-page", cross), ("Unanswerable", unanswerable)):
        lines.append(f"{label} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    lines.append(SEPARATOR)
    by_source: dict[Any, list[Mapping[str, Any]]] = {}
    by_type: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        for source in _evidence_value(r.get("evidence_sources")):
            by_source.setdefault(_key(source), []).append(r)
        by_type.setdefault(_key(r.get("doc_type")), []).append(r)
    for source, group in by_source.items():
        lines.append(f"Evidence Sources: {source} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    lines.append(SEPARATOR)
    for doc_type, group in by_type.items():
        lines.append(f"Document Type: {doc_type} | Accuracy: {acc_and_f1(group)[0]} | Question Number: {len(group)}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- files


def qid_for(position: int) -> str:
    """The question id of the sample at 0-based `position` in samples.json: mmlongbench_0007."""
    return f"{QID_PREFIX}{position:04d}"


def position_of(qid: str) -> int | None:
    """The samples.json position named by a question id of `qid_for`, or None."""
    if not qid.startswith(QID_PREFIX):
        return None
    tail = qid[len(QID_PREFIX):]
    return int(tail) if tail.isascii() and tail.isdigit() else None


def run_name(path: str | Path) -> str:
    """The run's name from its result file: `res_gpt-4o.json` -> `gpt-4o`."""
    name = Path(path).name
    if name.lower().endswith(".json"):
        name = name[:-5]
    return name[4:] if name.startswith("res_") else name


def extract_pred(extracted_res: Any) -> str | None:
    """The scored answer run_api.py cuts from the extractor's text: what follows the first
    "Extracted answer:" and precedes the first "Answer format:", stripped; None when the text has
    no "Extracted answer:" before its first "Answer format:" (run_api.py stops with IndexError)."""
    if not isinstance(extracted_res, str):
        return None
    head = extracted_res.split("Answer format:")[0]
    marker = head.find("Extracted answer:")
    if marker < 0:
        return None
    return head[marker + len("Extracted answer:"):].split("Extracted answer:")[0].strip()


def _read_list(path: Path, res: LoadResult[Any]) -> list[Any] | None:
    """The one JSON list a samples or results file holds, or None with the problem recorded."""
    name = str(path)
    res.files.append(name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        got = {FileNotFoundError: "no such file", IsADirectoryError: "a directory"}.get(type(exc), exc.strerror or str(exc))
        res.problems.append(Problem.error(name, None, None, "a readable file", got))
        res.unreadable.append(name)
        return None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        res.problems.append(Problem.error(name, None, None, "UTF-8 text", f"an invalid byte at offset {exc.start}"))
        res.unreadable.append(name)
        return None
    except (json.JSONDecodeError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nesting too deep"
        res.problems.append(Problem.error(name, line, None, "a JSON document", why))
        res.unreadable.append(name)
        return None
    if not isinstance(doc, list):
        res.problems.append(Problem.error(name, None, None, "a JSON list of samples", kind_of(doc)))
        res.unreadable.append(name)
        return None
    res.rows_read += len(doc)
    return doc


def _literal_field(row: dict, key: str, where: str, name: str, res: LoadResult[Any]) -> Any:
    """An evidence field: a string holding a Python literal (read with ast.literal_eval), or
    already a JSON list. A missing, non-literal or non-list value is a warning; the question stays."""
    if key not in row:
        res.problems.append(Problem.warning(name, None, where, "a Python literal list such as \"[5]\"", "no such field"))
        return []
    raw = row[key]
    value = raw
    if isinstance(raw, str):
        ok, value = read_literal(raw)
        if not ok:
            res.problems.append(Problem.warning(name, None, where, "a Python literal list such as \"[5]\"", kind_of(raw)))
            return []
    if not isinstance(value, list):
        res.problems.append(Problem.warning(name, None, where, "a list", kind_of(raw) + f" (read as {type(value).__name__})"))
    return value


def _pages(value: Any, raw: Any, where: str, name: str, res: LoadResult[Any]) -> tuple[int, ...]:
    items = value if isinstance(value, (list, tuple)) else [value] if isinstance(value, int) else []
    pages = [p for p in items if isinstance(p, int) and not isinstance(p, bool) and p >= 1]
    if len(pages) != len(items):
        res.problems.append(Problem.warning(name, None, where, "1-based page numbers", short_value(raw)))
    return tuple(pages)


def load_samples(path: str | Path) -> LoadResult[GoldQuestion]:
    """`_load_samples` where the file can be killed (scoring/guard.py): over the read limits, it is named
    and not read. Its size bounds what reading it takes (`bounded`): the file is one JSON document, and
    each Python literal in it is parsed only up to LITERAL_MAX_CHARS and LITERAL_MAX_DEPTH (`read_literal`)."""
    return guard.read(_load_samples, path, bounded=True, refused=_unread)


def _unread(problem: Problem) -> LoadResult[Any]:
    res: LoadResult[Any] = LoadResult(problems=[problem], unreadable=[problem.file])
    return res


def _load_samples(path: str | Path) -> LoadResult[GoldQuestion]:
    """`data/samples.json`: one JSON list of samples. The question id is `qid_for(position)`
    (the 0-based position in the list, counted over every element). Problems name the file,
    line None and the field as `[index].field`.

    A sample becomes a GoldQuestion with `answers = (text of answer,)`, `answer_format` as text
    (raw value kept), `split` "unknown", one DocRef whose `document_id` is the PDF file name
    (`doc_id`) and whose evidence pages are the 1-based pages of `evidence_pages` (the
    benchmark numbers pages from 1, as we do; a 0 or a non-integer is left out, with a warning),
    and metadata: `doc_id`, `doc_type`, `evidence_pages` and `evidence_sources` (the lists as
    read, unfiltered: the report counts them), `evidence_page_count`, `answer` (the gold value
    as read, for exact scoring), `position`.

    An element that is not an object, or has no `answer`, is skipped (error). A missing
    `question`, `doc_id`, `doc_type` or `answer_format` and a bad evidence literal are warnings
    and the question is kept (an absent format scores as Str)."""
    path = Path(path)
    name = str(path)
    res: LoadResult[GoldQuestion] = LoadResult()
    doc = _read_list(path, res)
    if doc is None:
        return res
    for k, row in enumerate(doc):
        where = f"[{k}]"
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, None, where, "a JSON object", kind_of(row), kind="samples that are not JSON objects"))
            continue
        if "answer" not in row:
            res.skipped += 1
            res.problems.append(Problem.error(name, None, f"{where}.answer", "the gold answer", "no such field"))
            continue
        for key in ("doc_id", "question", "doc_type"):
            if not isinstance(row.get(key), str):
                got = "no such field" if key not in row else kind_of(row[key])
                res.problems.append(Problem.warning(name, None, f"{where}.{key}", "a string", got))
        format_given = "answer_format" in row
        raw_format = row.get("answer_format", "Str")
        if not format_given:
            res.problems.append(Problem.warning(name, None, f"{where}.answer_format", "one of " + ", ".join(FORMATS),
                                                "no such field (scored as Str)"))
        elif raw_format not in FORMATS:
            res.problems.append(Problem.warning(name, None, f"{where}.answer_format", "one of " + ", ".join(FORMATS),
                                                kind_of(raw_format) + " (scored as List, as the evaluator does)"))
        pages_value = _literal_field(row, "evidence_pages", f"{where}.evidence_pages", name, res)
        sources_value = _literal_field(row, "evidence_sources", f"{where}.evidence_sources", name, res)
        doc_id = to_str(row.get("doc_id"))
        pages = _pages(pages_value, row.get("evidence_pages"), f"{where}.evidence_pages", name, res)
        metadata = {
            "doc_id": doc_id,
            "doc_type": row.get("doc_type"),
            "evidence_pages": pages_value,
            "evidence_sources": sources_value if isinstance(sources_value, list) else [sources_value],
            "evidence_page_count": len(_evidence_value(pages_value)),
            "answer": row["answer"],
            "position": k,
        }
        res.items.append(GoldQuestion(
            qid=qid_for(k),
            question=to_str(row.get("question")),
            answers=(to_str(row["answer"]),),
            answer_format=to_str(raw_format) if format_given else "Str",
            verification_rule="",
            split="unknown",
            metadata=metadata,
            documents=(DocRef(document_id=doc_id, evidence_pages=pages),) if doc_id else (),
            file=name,
            line=None,
            raw_format=raw_format,
            format_given=format_given,
        ))
    return res


def document_records(gold: Iterable[GoldQuestion]) -> list[DocumentRecord]:
    """One DocumentRecord per PDF the questions name, in first-seen order: `file` is the PDF's
    file name inside the benchmark's `data/documents/`, `doc_type` the first question's."""
    seen: dict[str, DocumentRecord] = {}
    for q in gold:
        doc_id = to_str(q.metadata.get("doc_id"))
        if doc_id and doc_id not in seen:
            seen[doc_id] = DocumentRecord(document_id=doc_id, file=doc_id)
    return list(seen.values())


@dataclass(frozen=True, slots=True)
class ResultExtras:
    """What a result row holds beyond the scored `pred` (Prediction has no place for it)."""

    response: Any  # the model's raw answer
    extracted_res: Any  # the extractor's "Extracted answer: … Answer format: …"
    pred: Any  # `pred` as read (the Prediction holds its text form)
    index: int  # the row's 0-based position in the result file
    joined_by: str  # "position" or "doc_id+question"


@dataclass(slots=True)
class ResultsLoad(LoadResult[Prediction]):
    """A result file read against the gold: `items` are the Predictions (text = `pred`, in file
    order), `official` the file's `score` values (accuracy = score; token_f1 and anls are NaN: the
    file has none), `extras` the raw `response`/`extracted_res` by question id, `rows` every
    object row of the file in order and `row_qids` the question id each joined to (None if it
    did not)."""

    run: str = ""
    official: list[ScoreRow] = field(default_factory=list)
    extras: dict[str, ResultExtras] = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    row_qids: list[str | None] = field(default_factory=list)


def load_results(path: str | Path, gold: Sequence[GoldQuestion] | LoadResult[GoldQuestion]) -> ResultsLoad:
    """`_load_results` where the file can be killed (scoring/guard.py): over the read limits, it is named
    and not read (its size bounds what reading it takes, as `load_samples`'s does)."""
    return guard.read(_load_results, path, gold, bounded=True, refused=lambda problem: ResultsLoad(
        problems=[problem], unreadable=[problem.file], run=run_name(path)))


def _load_results(path: str | Path, gold: Sequence[GoldQuestion] | LoadResult[GoldQuestion]) -> ResultsLoad:
    """`results/res_<model>.json` joined to the questions of `load_samples`.

    A row is joined to the question at its own position when its `doc_id` and `question` equal
    that question's; otherwise (a reordered or filtered file) to the first question not yet
    joined with the same (`doc_id`, `question`) -- preferring one whose gold `answer` equals the
    row's, since samples.json repeats one pair. A row that joins nowhere, or to a question already
    joined, is an error and skipped. A row without `pred` (not evaluated yet: run_api.py writes
    the file after every sample) is skipped with a warning. A `score` that is not a number is an
    error (the prediction is still loaded); an `answer` other than the gold's is a warning."""
    path = Path(path)
    name = str(path)
    questions = list(gold.items if isinstance(gold, LoadResult) else gold)
    res = ResultsLoad(run=run_name(path))
    doc = _read_list(path, res)
    if doc is None:
        return res
    by_position: dict[int, GoldQuestion] = {}
    by_pair: dict[tuple[str, str], list[GoldQuestion]] = {}
    for question in questions:
        pos = position_of(question.qid)
        if pos is not None:
            by_position[pos] = question
        by_pair.setdefault((to_str(question.metadata.get("doc_id")), question.question), []).append(question)
    used: set[str] = set()
    moved = 0
    for k, row in enumerate(doc):
        where = f"[{k}]"
        if not isinstance(row, dict):
            res.skipped += 1
            res.problems.append(Problem.error(name, None, where, "a JSON object", kind_of(row), kind="rows that are not JSON objects"))
            continue
        res.rows.append(row)
        res.row_qids.append(None)
        pair = (to_str(row.get("doc_id")), to_str(row.get("question")))
        here = by_position.get(k)
        free = [c for c in by_pair.get(pair, []) if c.qid not in used]
        same = [c for c in free if c.metadata.get("answer", c.gold_answer) == row["answer"]] if "answer" in row else free
        # its own position when the answer agrees, else a question of that pair with the same answer,
        # else its own position, else the first question of that pair not yet joined
        q: GoldQuestion | None = None
        for group in (same, free):
            q = next((c for c in group if c is here), None) or (group[0] if group is same and group else None)
            if q is not None:
                break
        q = q or (free[0] if free else None)
        if q is None:
            res.skipped += 1
            taken = bool(by_pair.get(pair))
            res.problems.append(Problem.error(
                name, None, where,
                "a question not joined before" if taken else "a (doc_id, question) pair of samples.json",
                f"doc_id {short_value(pair[0])}, question {short_value(pair[1])}" + (" again" if taken else ""),
                kind="repeated rows" if taken else "rows not in samples.json"))
            continue
        joined_by = "position" if q is here else "doc_id+question"
        used.add(q.qid)
        res.row_qids[-1] = q.qid
        if joined_by != "position":
            moved += 1
        if "answer" in row and row["answer"] != q.metadata.get("answer", q.gold_answer):
            res.problems.append(Problem.warning(name, None, f"{where}.answer", f"the answer of {q.qid} in samples.json",
                                                kind_of(row["answer"]), kind="answers that differ from samples.json"))
        if "pred" not in row:
            res.skipped += 1
            res.problems.append(Problem.warning(name, None, f"{where}.pred", "the scored answer", "no such field (not evaluated yet)",
                                                skipped=True, kind=NOT_EVALUATED))
            continue
        text = to_str(row["pred"])
        res.items.append(Prediction(qid=q.qid, text=text, status="success", file=name, line=None))
        res.extras[q.qid] = ResultExtras(response=row.get("response"), extracted_res=row.get("extracted_res"),
                                         pred=row["pred"], index=k, joined_by=joined_by)
        if "score" in row:
            score = row["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
                res.problems.append(Problem.error(name, None, f"{where}.score", "a number in 0..1", kind_of(score),
                                                  skipped=False, kind="scores that are not numbers"))
            else:
                res.official.append(ScoreRow(qid=q.qid, system=res.run, accuracy=float(score), token_f1=math.nan,
                                             anls=math.nan, prediction=text, file=name, line=None))
    if moved:
        res.problems.append(Problem.warning(name, None, None, "rows in samples.json order",
                                            f"{moved} rows joined by (doc_id, question) instead", kind="rows out of order"))
    return res


def gold_rows(gold: Iterable[GoldQuestion], preds: Mapping[str, str], scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """Benchmark-shaped rows for `acc_and_f1` / `show_results` from our records, in gold order:
    every question (Question Number counts them all), `pred` and `score` where given."""
    out: list[dict[str, Any]] = []
    for q in gold:
        row: dict[str, Any] = {
            "doc_id": q.metadata.get("doc_id"), "doc_type": q.metadata.get("doc_type"), "question": q.question,
            "answer": q.metadata.get("answer", q.gold_answer), "answer_format": q.raw_format,
            "evidence_pages": q.metadata.get("evidence_pages", []), "evidence_sources": q.metadata.get("evidence_sources", []),
        }
        if q.qid in preds:
            row["pred"] = preds[q.qid]
        if q.qid in scores:
            row["score"] = scores[q.qid]
        out.append(row)
    return out


def rescored_rows(results: ResultsLoad, scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """The result file's rows in file order (what its own report covers), each joined row's
    `score` replaced by `scores[qid]` where given: `show_results` of these is the report of the
    recomputed scores."""
    out = []
    for row, qid in zip(results.rows, results.row_qids):
        copy = dict(row)
        if qid is not None and qid in scores:
            copy["score"] = scores[qid]
        out.append(copy)
    return out


# ----------------------------------------------------------------------------- extraction misses


_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:,\d{3})*(?:\.\d+)?")  # no two quantifiers can share a character
_NUMBER_MAX = 40  # longer digit runs are not read as numbers
_WORD_SEARCH_MAX = 1000  # a longer gold is looked for as a plain substring


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER.finditer(text):
        token = m.group()
        if len(token) <= _NUMBER_MAX:
            out.append(float(token.replace(",", "")))
    return out


def _occurs(needle: str, hay: str) -> bool:
    """`needle` (lower case) in `hay` (lower case), not glued to a letter or digit where the needle
    itself starts or ends with one (gold `yes` is not found in `yesterday`)."""
    if not needle:
        return False
    if len(needle) > _WORD_SEARCH_MAX:
        return needle in hay
    left = r"(?<!\w)" if re.match(r"\w", needle[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", needle[-1]) else ""
    return re.search(left + re.escape(needle) + right, hay) is not None


def extraction_miss(gold: Any, answer_format: Any, response: Any, pred_score: float | None) -> bool:
    """True when the extracted `pred` scored 0 although the gold answer, read as its format reads
    it, occurs in the raw `response`: for Int a number of the response equal to int(gold); for
    Float a number the evaluator's comparison accepts (1 %, percentages); for Str and None the
    cleaned gold, case-insensitively and not inside a longer word; for List (and unknown formats)
    every element of the gold list so (numbers as numbers). Linear in the response's length."""
    if pred_score is None or pred_score != 0 or not isinstance(response, str) or not response:
        return False
    hay = response.lower()
    if answer_format == "Int":
        try:
            target = int(gold)
        except Exception:
            return False
        return any(v == target for v in _numbers(response))
    if answer_format == "Float":
        try:
            g = float(clean_string(gold))
        except ValueError:
            return False
        return any(float_matches(g, v) for v in _numbers(response))
    if answer_format in ("Str", "None"):
        return _occurs(clean_string(gold), hay)
    elements, _ = _as_list(gold, "")
    if elements is None:
        elements = [gold]
    wanted = [e for e in (clean_string(v) for v in elements) if e]
    if not wanted:
        return False
    found = set(_numbers(response)) if any(_reads_as_float(e) for e in wanted) else set()
    for e in wanted:
        if _reads_as_float(e) and _NUMBER.fullmatch(e):
            if float(e.replace(",", "")) not in found:
                return False
        elif not _occurs(e, hay):
            return False
    return True

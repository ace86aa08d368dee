"""Independent, plain pure-Python reference of the XL-DocBench release evaluator.

Written from the written contract of the release evaluator ALONE (Parts A and B, sections
1-7, now in ``scoring/README.md``), without reading ``scoring/``'s code: its value is being a second implementation that shares no
code, no helpers and no shortcuts with the project's fast path.  Standard library only,
and written the way the release's ``evaluate.py`` most plausibly is: a Python double loop
for the edit distance, ``re`` for normalisation, ``set`` token F1, ANLS with the 0.5
threshold, the release's number reader, and the release's (un-hardened) file readers.

Public surface used by the tests and the benchmark:

* ``score_one(gold_value, fmt, rule, prediction, status) -> (acc, f1, anls)`` (unrounded);
* ``evaluate_files(gold_files, predictions_path, *, ignore_missing=False,
  prediction_field=None, per_question=True) -> dict`` (the release's report object);
* ``report_json_text(report)`` / ``csv_text(report_or_rows)``: the release's writers;
* ``main(argv)``: a minimal copy of the release command line, used to produce the
  checked-in expected files under ``tests/fixtures/cli/expected/``.

Choices made where the spec leaves room (each is the most literal reading; see the
report in tests/test_reference_agreement.py for the ones that were cross-checked):

* the verification rule is searched as written for ``numeric``/``tolerance`` (the release
  does not lower-case it: ``Numeric_Tolerance`` is not numeric);
* the single-choice letter is looked for in the upper-cased raw prediction AND the
  upper-cased raw gold (``\\b([A-D])\\b``);
* ``--prediction-field NAME`` reads that field as is (the ``answer`` object special case
  belongs to the default field search only);
* ``answer.format`` (sections 3 and 7): the answer type reads its string form, ``Str`` when
  absent, null or empty; the per-question row echoes the raw value as written (``""`` stays
  ``""``, null stays null), ``Str`` only when the key is absent; the breakdown label is the
  string form of the raw value, or ``unknown`` when that is empty (absent, null or ``""``).
  Changed (issue 12): this reference used to file a gold without ``format`` under the label
  ``Str`` and echo an empty format as ``Str`` in its rows, against section 7's "a label is the
  string form of the value, or unknown when that is empty" and "answer_format (raw, default Str)".
  tests/fixtures/cli/expected/ was regenerated with this change: two golds there (one with
  ``"format": null``, one without the key) moved from the ``Str`` label to ``unknown``, and
  the null one's row now says ``null`` (CSV: an empty cell).
* ``evidence_sources``: a missing key is an empty list; any non-list value (null included)
  is a one-element list; every element's label is its string form, or ``unknown``.

Changed (issue 18, a comparison with the public release evaluator on 30,000 generated rows):
lists and objects become text with json's default separators (``["a", "b"]``, a space after
``,`` and ``:``; keys still sorted), not the compact form the written contract had; an id field's
value becomes text by ``str()`` (``{'a': 1}``); the per-question ``split`` is ``task_type``'s text
(``True``, ``""`` for null, JSON text for a list), ``unknown`` when the key is absent. Files were
already read as text files (universal newlines: a lone CR ends a line). tests/fixtures/cli/expected/
was regenerated with this change (case ``raw_meta``: labels of a list and an object, splits null and 2).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
from pathlib import Path

PROFILE = "xldocbench-1519"

ID_FIELDS = ("question_id", "global_qa_id", "global_id", "id")
PREDICTION_FIELDS = ("prediction", "model_answer", "answer", "response", "output")
OVERFLOW_STATUSES = ("context_overflow", "vision_unsupported")
OVERFLOW_TEXT = "CONTEXT_OVERFLOW"

FORMAT_TYPES = {
    "Str": "entity",
    "Int": "numeric",
    "Float": "numeric",
    "None": "unanswerable",
    "Bool": "boolean",
    "Boolean": "boolean",
    "Percentage": "percentage",
}

PREFIXES = ("the answer is", "answer:", "answer is")
UNANSWERABLE_PHRASES = (
    "not answerable",
    "unanswerable",
    "cannot be determined",
    "cannot be answered",
    "not enough information",
    "context_overflow",
)
TRUE_WORDS = ("yes", "true", "correct")
FALSE_WORDS = ("no", "false", "incorrect")

PUNCT_RE = re.compile(r"[^\w\s\.\-%]")
ARTICLE_RE = re.compile(r"\b(a|an|the)\b")
SPACE_RE = re.compile(r"\s+")
NUMBER_RE = re.compile(r"[-+]?\d*\.?\d+")
CHOICE_RE = re.compile(r"\b([A-D])\b")

ROW_FIELDS = (
    "question_id",
    "prediction",
    "gold_answer",
    "answer_format",
    "status",
    "accuracy",
    "token_f1",
    "anls",
    "split",
    "domain",
    "reasoning_type",
)
BREAKDOWN_GROUPS = (
    "split",
    "domain",
    "reasoning_type",
    "answer_format",
    "difficulty",
    "doc_type",
    "evidence_source",
)


# --------------------------------------------------------------------------- values


def to_text(value) -> str:
    """Section 1c: how any JSON value becomes a string."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def id_text(value) -> str:
    """An id field's value as text: ``str()``, "" for null."""
    return "" if value is None else str(value)


# ---------------------------------------------------------------------- text metrics


def normalize(text: str) -> str:
    """Section 4, steps 1-5."""
    s = text.strip().lower()
    for prefix in PREFIXES:
        if s.startswith(prefix):
            s = s[len(prefix):].strip()
    s = PUNCT_RE.sub("", s)
    s = ARTICLE_RE.sub(" ", s)
    s = SPACE_RE.sub(" ", s).strip()
    return s


def edit_distance(a: str, b: str) -> int:
    """Plain Levenshtein distance on code points: dynamic programming, double loop."""
    if a == b:
        return 0
    if not a:
        return len(b)
    if not b:
        return len(a)
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        ca = a[i - 1]
        for j in range(1, len(b) + 1):
            cost = 0 if ca == b[j - 1] else 1
            current[j] = min(
                previous[j] + 1,  # deletion
                current[j - 1] + 1,  # insertion
                previous[j - 1] + cost,  # substitution
            )
        previous = current
    return previous[len(b)]


def similarity(a: str, b: str) -> float:
    """Normalised-Levenshtein similarity (section 5, shared with ANLS)."""
    a = a.strip().lower()
    b = b.strip().lower()
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return 1.0 - edit_distance(a, b) / max(len(a), len(b))


def token_f1(pred_norm: str, gold_norm: str) -> float:
    """Section 6: set-based token F1 on normalised strings."""
    pred_tokens = set(pred_norm.split())
    gold_tokens = set(gold_norm.split())
    if not gold_tokens:
        return 1.0 if not pred_tokens else 0.0
    if not pred_tokens:
        return 0.0
    common = len(pred_tokens & gold_tokens)
    if common == 0:
        return 0.0
    precision = common / len(pred_tokens)
    recall = common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def anls(prediction: str, gold: str) -> float:
    """Section 6: similarity of the raw strings, kept when >= 0.5."""
    value = similarity(prediction, gold)
    return value if value >= 0.5 else 0.0


# ------------------------------------------------------------------- accuracy rules


def read_number(norm: str):
    """The release's number reader: on normalised text, drop commas and ASCII spaces."""
    compact = norm.replace(",", "").replace(" ", "")
    match = NUMBER_RE.search(compact)
    if match is None:
        return None
    return float(match.group(0))


def read_choice(raw: str):
    match = CHOICE_RE.search(raw.upper())
    return match.group(1) if match else None


def answer_type(fmt, rule) -> str:
    """Section 3."""
    raw_format = to_text(fmt) or "Str"
    if raw_format in FORMAT_TYPES:
        return FORMAT_TYPES[raw_format]
    rule_text = to_text(rule)
    if "numeric" in rule_text or "tolerance" in rule_text:
        return "numeric"
    return raw_format.lower()


def entity_accuracy(p: str, g: str) -> float:
    if g and g in p:
        return 1.0
    if similarity(p, g) >= 0.8:
        return 1.0
    return 0.0


def accuracy(prediction: str, gold: str, kind: str) -> float:
    """Section 5. ``prediction``/``gold`` are the raw strings."""
    p = normalize(prediction)
    g = normalize(gold)
    if kind == "unanswerable":
        for phrase in UNANSWERABLE_PHRASES:
            if phrase in p:
                return 1.0
        return 0.0
    if kind == "boolean":
        if any(word in p for word in TRUE_WORDS):
            pred_value = True
        elif any(word in p for word in FALSE_WORDS):
            pred_value = False
        else:
            return 0.0
        gold_value = any(word in g for word in TRUE_WORDS)
        return 1.0 if pred_value == gold_value else 0.0
    if kind in ("numeric", "percentage"):
        pred_number = read_number(p)
        gold_number = read_number(g)
        if pred_number is not None and gold_number is not None:
            if gold_number == 0:
                return 1.0 if abs(pred_number) < 1e-6 else 0.0
            return 1.0 if abs(pred_number - gold_number) / abs(gold_number) <= 0.05 else 0.0
        return entity_accuracy(p, g)
    if kind == "single_choice":
        pred_letter = read_choice(prediction)
        gold_letter = read_choice(gold)
        if pred_letter is not None and gold_letter is not None:
            return 1.0 if pred_letter == gold_letter else 0.0
        return entity_accuracy(p, g)
    return entity_accuracy(p, g)


def effective_prediction(prediction: str, status: str) -> str:
    if status in OVERFLOW_STATUSES:
        return OVERFLOW_TEXT
    return prediction


def score_one(gold_value, fmt, rule, prediction, status="success"):
    """Score one question: returns unrounded (accuracy, token_f1, anls).

    ``gold_value`` may be any JSON value (it is turned into a string); ``prediction`` is
    the prediction text, or ``None`` for "no prediction" (scored as "" with status
    ``missing``); ``status`` is the row status (overflow statuses replace the text).
    """
    if prediction is None:
        prediction = ""
        status = "missing"
    status = to_text(status) or "success"
    gold = to_text(gold_value)
    text = effective_prediction(to_text(prediction), status)
    kind = answer_type(fmt, rule)
    return (
        accuracy(text, gold, kind),
        token_f1(normalize(text), normalize(gold)),
        anls(text, gold),
    )


# ------------------------------------------------------------------------- readers


def _record_id(record):
    for field in ID_FIELDS:
        value = id_text(record.get(field)).strip()
        if value:
            return value
    return None


def _read_jsonl_objects(path, what):
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: invalid JSON in {what} file: {exc}") from exc
            if not isinstance(value, dict):
                raise ValueError(f"{path}:{number}: {what} line is not a JSON object")
            rows.append(value)
    return rows


def load_gold(gold_files):
    """Section 1b: gold records in file order, ids unique across files."""
    records = []
    seen = set()
    for path in gold_files:
        if not os.path.isfile(path):
            raise ValueError(f"gold file not found: {path}")
        for record in _read_jsonl_objects(path, "gold"):
            qid = _record_id(record)
            if qid is None:
                raise ValueError(f"{path}: gold record without a question id")
            if qid in seen:
                raise ValueError(f"duplicate question id in gold files: {qid}")
            seen.add(qid)
            records.append((qid, record))
    return records


def prediction_text(row, prediction_field=None) -> str:
    """Section 1c: the prediction text of one row."""
    if not isinstance(row, dict):
        return to_text(row)
    if prediction_field:
        return to_text(row.get(prediction_field))
    for field in PREDICTION_FIELDS:
        if field in row:
            value = row[field]
            if field == "answer" and isinstance(value, dict):
                value = value.get("value")
            return to_text(value)
    return ""


def row_status(row) -> str:
    if not isinstance(row, dict):
        return "success"
    return to_text(row.get("status")) or "success"


def load_predictions(path, prediction_field=None):
    """Section 1c: ``{question_id: (prediction_text, status)}``."""
    path = str(path)
    if path.lower().endswith(".jsonl"):
        data = _read_jsonl_objects(path, "prediction")
    else:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)

    pairs = []
    if isinstance(data, list):
        for index, row in enumerate(data):
            if not isinstance(row, dict):
                raise ValueError(f"{path}: prediction #{index} is not a JSON object")
            qid = _record_id(row)
            if qid is None:
                raise ValueError(f"{path}: prediction #{index} has no question id")
            pairs.append((qid, row))
    elif isinstance(data, dict):
        items = data.get("items")
        mapping = items if isinstance(items, dict) else data
        for key, row in mapping.items():
            pairs.append((key, row))
    else:
        raise ValueError(f"{path}: unsupported predictions shape: {type(data).__name__}")

    predictions = {}
    for qid, row in pairs:
        predictions[qid] = (prediction_text(row, prediction_field), row_status(row))
    return predictions


# --------------------------------------------------------------------- aggregation


def _label(value) -> str:
    return to_text(value) or "unknown"


def _bucket(scores):
    count = len(scores)
    if count == 0:
        return {"count": 0, "accuracy": 0.0, "token_f1": 0.0, "anls": 0.0}
    return {
        "count": count,
        "accuracy": round(sum(s[0] for s in scores) / count, 6),
        "token_f1": round(sum(s[1] for s in scores) / count, 6),
        "anls": round(sum(s[2] for s in scores) / count, 6),
    }


def evaluate_records(gold_records, predictions, *, ignore_missing=False, per_question=True):
    overall = []
    groups = {name: {} for name in BREAKDOWN_GROUPS}
    rows = []
    missing = 0

    for qid, record in gold_records:
        answer = record.get("answer")
        if not isinstance(answer, dict):
            answer = {"value": answer}
        gold = to_text(answer.get("value"))
        raw_format = to_text(answer.get("format")) or "Str"  # decides the answer type (section 3)
        rule = answer.get("verification_rule")
        metadata = record.get("metadata")
        if not isinstance(metadata, dict):
            metadata = {}

        if qid in predictions:
            prediction, status = predictions[qid]
        else:
            missing += 1
            if ignore_missing:
                continue
            prediction, status = "", "missing"
        prediction = effective_prediction(prediction, status)
        kind = answer_type(raw_format, rule)
        scores = (
            accuracy(prediction, gold, kind),
            token_f1(normalize(prediction), normalize(gold)),
            anls(prediction, gold),
        )
        overall.append(scores)

        sources = metadata.get("evidence_sources", [])
        if not isinstance(sources, list):
            sources = [sources]
        if not sources:
            sources = [None]
        labels = {
            "split": [_label(record.get("task_type"))],
            "domain": [_label(metadata.get("domain"))],
            "reasoning_type": [_label(metadata.get("reasoning_type"))],
            "answer_format": [_label(answer.get("format"))],
            "difficulty": [_label(metadata.get("difficulty"))],
            "doc_type": [_label(metadata.get("doc_type"))],
            "evidence_source": [_label(source) for source in sources],
        }
        for group, group_labels in labels.items():
            for label in group_labels:
                groups[group].setdefault(label, []).append(scores)

        rows.append(
            {
                "question_id": qid,
                "prediction": prediction,
                "gold_answer": gold,
                "answer_format": answer.get("format", "Str"),
                "status": status,
                "accuracy": round(scores[0], 6),
                "token_f1": round(scores[1], 6),
                "anls": round(scores[2], 6),
                "split": to_text(record["task_type"]) if "task_type" in record else "unknown",
                "domain": metadata.get("domain", "unknown"),
                "reasoning_type": metadata.get("reasoning_type", "unknown"),
            }
        )

    report = {
        "gold_count": len(gold_records),
        "prediction_count": len(predictions),
        "evaluated_count": len(overall),
        "missing_prediction_count": missing,
        "extra_prediction_count": len(set(predictions) - {qid for qid, _ in gold_records}),
        "overall": _bucket(overall),
        "breakdowns": {
            group: {label: _bucket(groups[group][label]) for label in sorted(groups[group])}
            for group in BREAKDOWN_GROUPS
        },
        "per_question": rows,
    }
    if not per_question:
        del report["per_question"]
    return report


def evaluate_files(
    gold_files, predictions_path, *, ignore_missing=False, prediction_field=None, per_question=True
) -> dict:
    gold_records = load_gold([str(p) for p in gold_files])
    predictions = load_predictions(predictions_path, prediction_field)
    return evaluate_records(
        gold_records, predictions, ignore_missing=ignore_missing, per_question=per_question
    )


# ------------------------------------------------------------------------- writers


def report_json_text(report) -> str:
    return json.dumps(report, ensure_ascii=False, indent=2)


def csv_text(report_or_rows) -> str:
    rows = report_or_rows["per_question"] if isinstance(report_or_rows, dict) else report_or_rows
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(ROW_FIELDS))
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return buffer.getvalue()


# ------------------------------------------------------------------------------ CLI


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Reference XL-DocBench release evaluator")
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--gold-files", nargs="+", default=None)
    parser.add_argument("--prediction-field", default=None)
    parser.add_argument("--ignore-missing", action="store_true")
    parser.add_argument("--output", default=None)
    parser.add_argument("--per-question-csv", default=None)
    parser.add_argument("--no-per-question-json", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.gold_files:
            gold_files = args.gold_files
        else:
            here = Path(__file__).resolve().parent
            data_dir = Path(args.data_dir) if args.data_dir else (
                here / "data" if (here / "data").is_dir() else here
            )
            gold_files = [str(data_dir / "qa_single_doc.jsonl"), str(data_dir / "qa_cross_doc.jsonl")]
        report = evaluate_files(
            gold_files,
            args.predictions,
            ignore_missing=args.ignore_missing,
            prediction_field=args.prediction_field,
        )
        if args.per_question_csv:
            path = Path(args.per_question_csv)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(csv_text(report).encode("utf-8"))
        if args.no_per_question_json:
            report.pop("per_question", None)
        if args.output:
            path = Path(args.output)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(report_json_text(report).encode("utf-8"))
        print(f"Gold questions: {report['gold_count']}")
        print(f"Predictions: {report['prediction_count']}")
        print(f"Evaluated: {report['evaluated_count']}")
        print(f"Missing predictions: {report['missing_prediction_count']}")
        print(f"Extra predictions: {report['extra_prediction_count']}")
        overall = report["overall"]
        print(f"Accuracy: {overall['accuracy'] * 100:.2f}")
        print(f"Token F1: {overall['token_f1'] * 100:.2f}")
        print(f"ANLS: {overall['anls'] * 100:.2f}")
        return 0
    except Exception as exc:  # the release prints every failure the same way
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

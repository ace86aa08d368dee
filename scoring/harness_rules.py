"""The evaluation harnesses' own per-question rules and aggregates, reproduced from their published
code in our words (profiles `lmms-eval` and `vlmevalkit`; scoring/README.md, "Harness profiles").
Quirks are kept, not fixed. Nothing here executes text: where a harness runs `eval` on a cell,
`ast.literal_eval` reads it, and a cell that is no literal is scored as the harness's exception
path scores it (0), with a note.

lmms-eval (EvolvingLMMs-Lab/lmms-eval, `lmms_eval/api/metrics.py` `anls`; `lmms_eval/tasks/
mmlongbench_doc/utils.py`) and VLMEvalKit (open-compass/VLMEvalKit, `vlmeval/dataset/utils/
vqa_eval.py` `anls_compute`/`hit_calculate`; `vlmeval/dataset/mmlongbenchdoc.py` `eval_score`,
`get_f1`, `MMLongBench_acc`)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

from .mmlongbench_rule import float_matches
from .reading import read_literal
from .text import MAX_EDIT_CHARS, drop_parenthesised

__all__ = [
    "lmms_anls", "lmms_anls_any", "lmms_first_number", "lmms_mmlongbench_score", "lmms_answerable", "lmms_mean", "lmms_mmlongbench_f1",
    "vlm_answers", "vlm_anls_distance", "vlm_docvqa_score", "vlm_overall", "vlm_mmlongbench_score",
    "vlm_get_f1", "vlm_categories", "VLM_CATEGORIES", "infer_mmlongbench_format",
]


def _distance(a: str, b: str) -> int:
    """Levenshtein distance, with the project's bound on work (scoring/README.md section 6): two
    texts both longer than MAX_EDIT_CHARS are 0 apart when equal, else as far as the longer is long."""
    if len(a) > MAX_EDIT_CHARS and len(b) > MAX_EDIT_CHARS:
        return 0 if a == b else max(len(a), len(b))
    return Levenshtein.distance(a, b)


def _literal(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is a Python literal (ast.literal_eval, never eval), read only under
    the literal caps (scoring/limits.py: characters, items, nesting)."""
    return read_literal(text)


# ----------------------------------------------------------------------------- lmms-eval


def lmms_anls(answers: Sequence[Any], prediction: str, threshold: float = 0.5) -> float | int:
    """lmms-eval's `anls` of one sample: for each answer, the Levenshtein distance of the
    lower-cased, whitespace-collapsed strings over the longer of the *raw* upper-cased lengths;
    1 - the smallest; the int 0 when that is below 0.5 (exactly 0.5 is kept). `prediction` is
    what the harness scored: the filtered response, stripped."""
    det = " ".join(prediction.strip().lower().split())
    values = []
    for answer in answers:
        answer = str(answer)
        gt = " ".join(answer.strip().lower().split())
        dist = _distance(gt, det)
        length = max(len(answer.upper()), len(prediction.upper()))
        values.append(0.0 if length == 0 else float(dist) / float(length))
    if not values:
        return 0
    result = 1 - min(values)
    return 0 if result < threshold else result


def lmms_anls_any(answers: Sequence[Any], prediction: str) -> float:
    """lmms-eval up to v0.2.4 (before v0.3.0): a list target took the "multiple targets" path, which
    scores each answer alone and keeps 1.0 when any scores (ANLS at least 0.5), else 0.0."""
    return 1.0 if any(lmms_anls([a], prediction) for a in answers) else 0.0


def _lmms_clean(value: Any) -> str:
    text = str(value or "").lower().strip()
    text = drop_parenthesised(text).strip()
    text = re.sub(r"^['\"]|['\"]$", "", text).strip()
    text = text.lstrip("$").strip()
    text = text.rstrip("%").strip()
    for suffix in (" miles", " mile", " million"):
        if text.endswith(suffix):
            text = text[: -len(suffix)].strip()
    return " ".join(text.split())


_EXACT_PATTERNS = (re.compile(r"\b\d+(-\d+|\s\d+)?\b"), re.compile(r"\b\d{4}[-\s]\d{2}[-\s]\d{2}\b"),
                   re.compile(r"\b\d{4}[-\s]\d{2}\b"), re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}"))


def _lmms_exact_candidate(text: str) -> bool:
    if "https://" in text or "http://" in text or text.endswith((".py", ".ipynb")) or text.startswith("page"):
        return True
    if "a.m." in text or "p.m." in text:
        return True
    return any(p.fullmatch(text) for p in _EXACT_PATTERNS)


def _lmms_anls_text(gt: str, pred: str, threshold: float = 0.5) -> float:
    if not gt and not pred:
        return 1.0
    if not gt or not pred:
        return 0.0
    value = 1.0 - float(_distance(gt, pred)) / float(max(len(gt), len(pred)))
    return 0.0 if value <= threshold else value


_FIRST_NUMBER = re.compile(r"[-+]?\d*\.?\d+")


def lmms_first_number(value: Any) -> float | None:
    m = _FIRST_NUMBER.search(str(value or "").replace(",", ""))
    if m is None:
        return None
    try:
        return float(m.group(0))
    except ValueError:
        return None


def _lmms_float_equal(reference: float, prediction: float) -> bool:
    """lmms-eval's mmlongbench_doc number comparison: MMLongBench-Doc's own (scoring.mmlongbench
    float_matches: gold / 100, gold or gold * 100 within 1 %, or equal once rounded), copied there as is."""
    return float_matches(reference, prediction)


def _lmms_list(value: Any) -> list[str]:
    parsed: Any = value
    if isinstance(value, str):
        ok, lit = _literal(value)
        parsed = lit if ok else value
    if isinstance(parsed, list):
        return [str(item) for item in parsed]
    if parsed is None:
        return []
    return [str(parsed)]


_LMMS_FORMATS = {"int": "int", "integer": "int", "float": "float", "str": "str", "string": "str", "list": "list", "none": "none"}


def lmms_mmlongbench_score(answer: Any, prediction: str, answer_format: Any) -> float:
    """lmms-eval's mmlongbench_doc score of a stripped response: Int and Float read the first
    number of each side (`63 million` -> 63); None needs exactly `not answerable` after cleaning;
    lists via literal_eval, sorted, exact when the first gold item holds a number, else the
    smallest ANLS; Str exact for URL/number/date/e-mail-like gold, else ANLS above 0.5. A number
    too large for a float (where the harness itself would raise) scores 0."""
    try:
        return _lmms_mm_score(answer, prediction, answer_format)
    except (OverflowError, ValueError):
        return 0.0


def _lmms_mm_score(answer: Any, prediction: str, answer_format: Any) -> float:
    fmt = _LMMS_FORMATS.get(str(answer_format or "Str").strip().lower(), "str")
    if fmt in ("int", "float"):
        g, p = lmms_first_number(answer), lmms_first_number(prediction)
        if g is None or p is None:
            return 0.0
        if fmt == "int":
            return float(int(g) == int(p))
        return float(_lmms_float_equal(g, p))
    if fmt == "none":
        return float(_lmms_clean(prediction) == "not answerable")
    if fmt == "list":
        gold_items = sorted(_lmms_clean(x) for x in _lmms_list(answer))
        pred_items = sorted(_lmms_clean(x) for x in _lmms_list(prediction))
        if len(gold_items) != len(pred_items):
            return 0.0
        if not gold_items:
            return 1.0
        if lmms_first_number(gold_items[0]) is not None or _lmms_exact_candidate(gold_items[0]):
            return float(gold_items == pred_items)
        return min(_lmms_anls_text(g, p) for g, p in zip(gold_items, pred_items))
    g_text, p_text = _lmms_clean(answer), _lmms_clean(prediction)
    if _lmms_exact_candidate(g_text):
        return float(g_text == p_text)
    return _lmms_anls_text(g_text, p_text)


def lmms_answerable(value: Any) -> bool:
    return _lmms_clean(value) != "not answerable"


def lmms_mean(values: Sequence[float]) -> float:
    """lmms-eval's `mean` aggregation (Python's sum in sample order over the count)."""
    return sum(values) / len(values) if values else 0.0


def lmms_mmlongbench_f1(items: Sequence[tuple[float, bool, bool]]) -> float:
    """(score, gold answerable, predicted answerable) per sample -> lmms-eval's F1: recall over
    gold-answerable samples, precision over predicted-answerable ones, 0 when both are 0."""
    if not items:
        return 0.0
    gt = [s for s, g, _ in items if g]
    pr = [s for s, _, p in items if p]
    recall = sum(float(s) for s in gt) / len(gt) if gt else 0.0
    precision = sum(float(s) for s in pr) / len(pr) if pr else 0.0
    if recall + precision == 0.0:
        return 0.0
    return (2.0 * recall * precision) / (recall + precision)


def infer_mmlongbench_format(answer: str) -> str:
    """MMLongBench-Doc's answer format guessed from the answer text, for lmms-eval lines (which do
    not carry it): `Not answerable` -> None, a list literal -> List, an integer -> Int, a decimal
    -> Float, else Str. The benchmark's samples.json (--gold-files) gives the real one."""
    text = answer.strip()
    if text == "Not answerable":
        return "None"
    if text.startswith("["):
        ok, value = _literal(text)
        if ok and isinstance(value, list):
            return "List"
    if re.fullmatch(r"-?\d+", text):
        return "Int"
    if re.fullmatch(r"-?\d*\.\d+%?|-?\d+%", text):
        return "Float"
    return "Str"


# ----------------------------------------------------------------------------- VLMEvalKit


def vlm_answers(answer: Any) -> tuple[list[str], str]:
    """The answers VLMEvalKit's `process_line` scores: the cell's text `eval`'d when that gives a
    list (read here with literal_eval), else the text itself as the one answer. (answers, note)."""
    answers, note = _vlm_answers(str(answer))
    return list(answers), note


@functools.lru_cache(maxsize=65_536)
def _vlm_answers(text: str) -> tuple[tuple[str, ...], str]:
    ok, value = _literal(text)
    if ok and isinstance(value, list):
        return tuple(str(v) for v in value), ""
    if not ok and text.lstrip().startswith("["):
        return (text,), "the answer cell is not a Python literal; VLMEvalKit would run it through eval"
    return (text,), ""


def vlm_anls_distance(gt: str, prediction: str) -> float:
    """`anls_compute`: the normalised distance (not the similarity) of the lower-cased,
    whitespace-collapsed strings; the denominator is the longer raw upper-cased length, and the
    prediction is *not* stripped for it (lmms-eval strips it first)."""
    a = " ".join(gt.strip().lower().split())
    b = " ".join(prediction.strip().lower().split())
    length = max(len(gt.upper()), len(prediction.upper()))
    return 0.0 if length == 0 else float(_distance(a, b)) / float(length)


def vlm_docvqa_score(distances: Sequence[float]) -> float:
    """`hit_calculate` for DocVQA/InfoVQA: 0.0 when 1 - min(distance) is below 0.5, else that."""
    if not distances:
        return 0.0
    import numpy as np  # here, not at the top: `python -m scoring` imports this module to detect harness files

    best = 1 - float(np.min(np.asarray(distances, dtype=float)))
    return 0.0 if best < 0.5 else best


def vlm_overall(scores: Sequence[float]) -> float:
    """`np.mean(hit) * 100` (numpy's pairwise sum, as the harness)."""
    if not len(scores):
        return math.nan
    import numpy as np

    return float(np.mean(np.asarray(scores, dtype=float)) * 100)


def _vlm_clean(s: Any) -> str:
    # the harness's three `rstrip('mile')` lines discard their result: `63 million` stays as it is
    s = str(s).lower().strip()
    s = drop_parenthesised(s).strip()
    s = re.sub(r"^['\"]|['\"]$", "", s).strip()
    s = s.strip().lstrip("$").strip()
    return s.strip().rstrip("%").strip()


def _vlm_exact(s: str) -> bool:
    if "https://" in s or s.endswith(".py") or s.endswith("ipynb") or s.startswith("page"):
        return True
    if "a.m." in s or "p.m." in s:
        return True
    return any(p.fullmatch(s) for p in _EXACT_PATTERNS)


def _vlm_anls(gt: str, pred: str) -> float:
    length = max(len(gt.upper()), len(pred.upper()))
    value = 0.0 if length == 0 else float(_distance(gt, pred)) / float(length)
    anls = 1.0 - value
    return 0.0 if anls <= 0.5 else anls


def _vlm_float(x: Any) -> float:
    return float(str(x).strip().rstrip("%").strip())


def _vlm_list(value: Any, what: str) -> list:
    """A List answer as VLMEvalKit reads it: text starting with `[` is a Python literal (read with
    ast.literal_eval where the harness evals it; not one: ValueError naming `what`), any other value a
    list of itself."""
    if isinstance(value, str) and value.startswith("["):
        ok, parsed = _literal(value)
        if not ok:
            raise ValueError(f"{what} is not a Python literal (VLMEvalKit would eval it)")
        value = parsed
    return value if isinstance(value, list) else [value]


def _vlm_float_equal(reference: Any, prediction: Any) -> bool:
    ref = _vlm_float(reference)  # raises as the harness does (its caller scores 0)
    try:
        pred = _vlm_float(prediction)
    except Exception:
        return False
    return float_matches(ref, pred)  # VLMEvalKit's copy of MMLongBench-Doc's rule, unchanged


def _isfloat(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def vlm_mmlongbench_score(answer: Any, pred: Any, answer_format: Any) -> tuple[float, str]:
    """VLMEvalKit's `eval_score(answer, pred, answer_format)` on the values as pandas read them
    from the judge's sheet (NaN for missing cells), with the exception path of `MMLongBench_acc`
    (any error scores 0.0). A NaN format (every `None` row after the TSV round trip) takes the
    list branch. (score, note)."""
    try:
        return _vlm_eval_score(answer, pred, answer_format)
    except Exception as exc:  # the harness's bare except around eval_score
        return 0.0, f"VLMEvalKit's eval_score raises here ({type(exc).__name__}): 0"


def _vlm_eval_score(gt: Any, pred: Any, answer_type: Any) -> tuple[float, str]:
    note = ""
    if answer_type == "Int":
        try:
            gt, pred = int(gt), int(float(pred))
        except Exception:
            pred = ""
        return float(gt == pred), note
    if answer_type == "Float":
        try:
            gt = float(_vlm_clean(str(gt)))
            pred = float(_vlm_clean(str(pred)))
        except Exception:
            pred = ""
        return float(_vlm_float_equal(gt, pred)), note
    if answer_type == "Str":
        g, p = _vlm_clean(gt), _vlm_clean(pred)
        return (float(g == p) if _vlm_exact(g) else _vlm_anls(g, p)), note
    gt = _vlm_list(gt, "the gold list")
    pred = _vlm_list(pred, "the judge's pred")
    if len(gt) != len(pred):
        return 0.0, note
    g_items = sorted(_vlm_clean(a) for a in gt)
    p_items = sorted(_vlm_clean(a) for a in pred)
    if _isfloat(g_items[0]) or _vlm_exact(g_items[0]):  # an empty gold list raises IndexError: 0
        return float("-".join(g_items) == "-".join(p_items)), note
    return float(min(_vlm_anls(g, p) for g, p in zip(g_items, p_items))), note


def vlm_get_f1(rows: Sequence[tuple[Any, Any, float]]) -> float | None:
    """`get_f1` over (answer, pred, score) as read: recall = score sum over rows whose answer is not
    the text `Not answerable`, over their count; precision = score sum over rows whose pred is not
    that text, over theirs. None where the harness divides by zero (it then writes no score file)."""
    gt = [s for a, _, s in rows if not (isinstance(a, str) and a == "Not answerable")]
    pr = [s for _, p, s in rows if not (isinstance(p, str) and p == "Not answerable")]
    try:
        recall = sum(gt) / len(gt)
        precision = sum(pr) / len(pr)
        return 2 * recall * precision / (recall + precision)
    except ZeroDivisionError:
        return None


VLM_CATEGORIES = ("overall_f1", "overall_acc", "text", "layout", "table", "chart", "image", "single-page", "multi-page",
                  "unanswerable")
_SOURCE_OF = {"text": "Pure-text (Plain-text)", "layout": "Generalized-text (Layout)", "table": "Table",
              "chart": "Chart", "image": "Figure"}


def vlm_categories(evidence_sources: Any, evidence_pages: Any) -> tuple[set[str], str]:
    """The `_score.csv` categories a row counts in (its evidence cells `eval`'d: literal_eval
    here). (categories, note); a cell that is no literal makes the harness fail (note)."""
    out: set[str] = set()
    sources: Any
    pages: Any
    ok_s, sources = _literal(evidence_sources) if isinstance(evidence_sources, str) else (False, None)
    ok_p, pages = _literal(evidence_pages) if isinstance(evidence_pages, str) else (False, None)
    if not (ok_s and ok_p):
        return out, "an evidence cell is not a Python literal: VLMEvalKit's MMLongBench_acc fails on it"
    for cat, source in _SOURCE_OF.items():
        try:
            if source in sources:
                out.add(cat)
        except TypeError:
            pass
    try:
        n = len(pages)
    except TypeError:
        return out, "evidence_pages has no length: VLMEvalKit's MMLongBench_acc fails on it"
    out.add("single-page" if n == 1 else "multi-page" if n > 1 else "unanswerable")
    return out, ""


def vlm_mmlongbench_aggregate(rows: Sequence[tuple[Any, Any, float, set[str]]]) -> dict[str, float | None]:
    """The `avg_score` column of `_score.csv` from (answer, pred, score, categories) per row."""
    out: dict[str, float | None] = {}
    if not rows:
        return out
    out["overall_f1"] = vlm_get_f1([(a, p, s) for a, p, s, _ in rows])
    total = 0.0
    for _, _, s, _ in rows:
        total += s
    out["overall_acc"] = total / len(rows)
    for cat in VLM_CATEGORIES[2:]:
        scores = [s for _, _, s, cats in rows if cat in cats]
        out[cat] = sum(scores) / len(scores) if scores else 0.0
    return out

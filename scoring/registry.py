"""Names every part of the project shares, declared once: the three headline metrics, the status
vocabulary, the defaults of a prediction row and the fewest documents a claim rests on. Loaders, scoring, reports and the dashboard
import these instead of keeping their own lists."""

from __future__ import annotations

__all__ = [
    "METRICS", "METRIC_LABELS", "METRIC_SHORT_LABELS", "PASS_THRESHOLDS",
    "DEFAULT_STATUS", "MISSING_STATUS", "SUCCESS_STATUSES", "OVERFLOW_STATUSES", "OVERFLOW_TEXT",
    "FAILURE_MARKERS", "MIN_DOCUMENTS", "is_success_status", "is_failure_marker",
]

# The three headline metrics, in report order.
METRICS: tuple[str, ...] = ("accuracy", "token_f1", "anls")
METRIC_LABELS: dict[str, str] = {"accuracy": "Accuracy", "token_f1": "Token F1", "anls": "ANLS"}
METRIC_SHORT_LABELS: dict[str, str] = {"accuracy": "Acc", "token_f1": "F1", "anls": "ANLS"}
# Token F1 and ANLS "pass" a question at or above these values. Accuracy has no entry: whether an
# answer is right depends on the profile (all or nothing, or MMLongBench-Doc's partial score), and is
# decided in one place, scoring.profiles (Profile.is_right, Profile.right_at).
PASS_THRESHOLDS: dict[str, float] = {"token_f1": 0.5, "anls": 0.5}

# Statuses of a prediction row.
DEFAULT_STATUS = "success"  # a row without a status (absent, null or empty)
MISSING_STATUS = "missing"  # a gold question without a prediction row
SUCCESS_STATUSES = frozenset({"success", "ok", "completed"})  # compared trimmed, case-insensitively
# The release replaces the prediction of these statuses (compared as written) by OVERFLOW_TEXT.
OVERFLOW_STATUSES = frozenset({"context_overflow", "vision_unsupported"})
OVERFLOW_TEXT = "CONTEXT_OVERFLOW"
# Answers that are not an answer but a benchmark's mark of a failed extraction: MMLongBench-Doc's
# run_api.py writes `Fail to answer` as `pred` when its extractor gave nothing (58-149 answers a
# run in its release). Compared trimmed and case-insensitively, a final period ignored. Such an
# answer is neither a refusal nor an invented answer: the categories file it under
# failed_or_missing and the answer locator under its own outcome.
FAILURE_MARKERS = frozenset({"fail to answer"})
# Documents are the unit of every interval and test (scoring/stats.py): with fewer than this many
# (in a comparison, or in a slice the finder, the gate or the trends test), there is no interval and
# no test, only "too few documents to tell".
MIN_DOCUMENTS = 20


def is_success_status(status: str | None) -> bool:
    """True for a status that reports a successful answer: empty or blank (no status), or one of
    SUCCESS_STATUSES after trimming, in any case."""
    s = (status or "").strip()
    return not s or s.lower() in SUCCESS_STATUSES


def is_failure_marker(text: object) -> bool:
    """True for an answer that is a FAILURE_MARKERS phrase (`Fail to answer`, ` fail to answer. `)."""
    return isinstance(text, str) and len(text) < 40 and text.strip().rstrip(".").strip().casefold() in FAILURE_MARKERS

"""One shape for everything that can be wrong with an input (learned from datasette: one error
shape, everywhere). A loader never raises on user data: it returns what it loaded plus these."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .model import quick_state, to_str

T = TypeVar("T")

ERROR = "error"  # the row (or file) was skipped
WARNING = "warning"  # the row was loaded, but something in it is off


@quick_state
@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input. Build it with `Problem.error(...)` (the row or file was
    skipped) or `Problem.warning(...)` (loaded anyway, unless `skipped=True`); `kind` names the
    problem in the plural ("extra predictions") for `summarise`."""

    file: str
    line: int | None  # 1-based line (JSONL/CSV) or None for a whole-file problem
    field: str | None
    expected: str
    got: str
    severity: str = ERROR
    skipped: bool = True
    kind: str = ""

    @classmethod
    def error(cls, file: str, line: int | None, field: str | None, expected: str, got: str, *,
              skipped: bool = True, kind: str = "") -> Problem:
        """Something that stopped a row or a file from loading (skipped unless told otherwise)."""
        return cls(file, line, field, expected, got, ERROR, skipped, kind)

    @classmethod
    def warning(cls, file: str, line: int | None, field: str | None, expected: str, got: str, *,
                skipped: bool = False, kind: str = "") -> Problem:
        """Something off in a row or file that was loaded anyway (unless `skipped`)."""
        return cls(file, line, field, expected, got, WARNING, skipped, kind)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    @property
    def message(self) -> str:
        where = f"{self.field}: " if self.field else ""
        tail = "skipped" if self.skipped else "loaded anyway"
        return f"{where}expected {self.expected}, got {self.got} ({tail})"

    @property
    def group(self) -> tuple:
        """What makes two problems "of one kind": file, severity, and the kind (or field and expectation)."""
        return (self.file, self.severity, self.kind or (self.field, self.expected))

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


@quick_state
@dataclass(frozen=True, slots=True)
class Omitted:
    """The problems of one kind left out after the first few: shown as one line,
    `file: severity: … and 206,380 more extra predictions`. It has the attributes a problem
    line is drawn from (file, line, field, severity, message), so it can be listed among them."""

    file: str
    severity: str
    count: int
    noun: str
    line: None = None
    field: None = None

    @property
    def message(self) -> str:
        return f"… and {self.count:,} more {self.noun}"

    @property
    def location(self) -> str:
        return self.file

    def __str__(self) -> str:
        return f"{self.file}: {self.severity}: {self.message}"


SUMMARY_LIMIT = 20  # problems of one kind listed before the rest are summarised


def summarise(problems: Iterable[Problem], limit: int = SUMMARY_LIMIT) -> list[Problem | Omitted]:
    """The problems in their order, keeping the first `limit` of each kind (same file, severity
    and kind -- or field and expectation); each kind with more gets one `Omitted` line right after
    its last kept problem, counting the rest. Pure: used by the CLI's stderr and the Data page."""
    kept: list[Problem | Omitted] = []
    seen: dict[tuple, int] = {}
    last: dict[tuple, int] = {}  # index in `kept` of each kind's last kept problem
    sample: dict[tuple, Problem] = {}
    for p in problems:
        key = p.group
        n = seen.get(key, 0) + 1
        seen[key] = n
        if n <= limit:
            kept.append(p)
            last[key] = len(kept) - 1
            sample.setdefault(key, p)
    extra = sorted(((last[k], k) for k, n in seen.items() if n > limit), reverse=True)
    for index, key in extra:  # from the end, so earlier indices stay valid
        p = sample[key]
        noun = p.kind or f"problems like these ({p.field + ': ' if p.field else ''}expected {p.expected})"
        kept.insert(index + 1, Omitted(p.file, p.severity, seen[key] - limit, noun))
    return kept


@dataclass(slots=True)
class LoadResult(Generic[T]):
    """What a loader could load, what went wrong, and the counts that prove nothing was lost:
    `rows_read == loaded + skipped` (blank lines are counted apart)."""

    items: list[T] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    rows_read: int = 0
    skipped: int = 0
    blank_lines: int = 0
    unreadable: list[str] = field(default_factory=list)  # files that could not be read or parsed at all

    @property
    def loaded(self) -> int:
        return len(self.items)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    def counts(self) -> dict[str, int]:
        return {
            "rows_read": self.rows_read,
            "loaded": self.loaded,
            "skipped": self.skipped,
            "blank_lines": self.blank_lines,
            "problems": len(self.problems),
        }

    def extend(self, other: LoadResult[T]) -> None:
        self.items.extend(other.items)
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.rows_read += other.rows_read
        self.skipped += other.skipped
        self.blank_lines += other.blank_lines
        self.unreadable.extend(other.unreadable)


def short_value(value: Any, limit: int = 60) -> str:
    """A value as a problem quotes it: its text, at most `limit` characters, line breaks shown as \\n."""
    text = value if isinstance(value, str) else to_str(value)
    text = text.replace("\n", "\\n")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def kind_of(value: Any) -> str:
    """What a value is, as a problem names what was found instead (`null`, `string 'junk'`, `a list of 3`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {value}"
    if isinstance(value, (int, float)):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {short_value(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__

"""One shape for everything that can be wrong with an input (learned from datasette: one error
shape, everywhere). A loader never raises on user data: it returns what it loaded plus these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

ERROR = "error"  # the row (or file) was skipped
WARNING = "warning"  # the row was loaded, but something in it is off


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int | None  # 1-based line (JSONL/CSV) or None for a whole-file problem
    field: str | None
    expected: str
    got: str
    severity: str = ERROR
    skipped: bool = True

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    @property
    def message(self) -> str:
        where = f"{self.field}: " if self.field else ""
        tail = "skipped" if self.skipped else "loaded anyway"
        return f"{where}expected {self.expected}, got {self.got} ({tail})"

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "expected": self.expected,
            "got": self.got,
            "severity": self.severity,
            "skipped": self.skipped,
        }


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

    def extend(self, other: "LoadResult[T]") -> None:
        self.items.extend(other.items)
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.rows_read += other.rows_read
        self.skipped += other.skipped
        self.blank_lines += other.blank_lines
        self.unreadable.extend(other.unreadable)

"""One shape of an error shown to the user (issue 29.6): core.escape.error_text says what the user is
told of a problem, shell.output.show_error shows it; no page spells `getattr(exc, "message", None) or
str(exc)` again."""

from __future__ import annotations

from pathlib import Path

from dashboard.annotations.errors import InvalidInput
from dashboard.core.escape import error_text

ROOT = Path(__file__).resolve().parent.parent


class Told(Exception):
    def __init__(self, message: str) -> None:
        super().__init__("internal detail")
        self.message = message


def test_the_sentence_of_a_problem():
    assert error_text(Told("The database at postgresql://ana@db/lens is down.")) == \
        "The database at postgresql://ana@db/lens is down."
    assert error_text(ValueError("bad value")) == "bad value"
    assert error_text(KeyError()) == "KeyError"  # an exception without text is named by its kind
    assert error_text("plain sentence") == "plain sentence"
    assert error_text(InvalidInput("note text: too long")) == "note text: too long"


def test_no_page_spells_the_error_shape_again():
    spelled = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "dashboard").rglob("*.py"))
               for n, line in enumerate(p.read_text().splitlines(), start=1)
               if 'getattr(exc, "message"' in line or "getattr(e, \"message\"" in line]
    assert spelled == []

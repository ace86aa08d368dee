"""The worked examples of scoring/README.md are what `scoring.metrics.judge` computes: every table row
of its "Worked examples" section is read from the file and scored again, so the contract cannot drift
from the code (or the code from the contract)."""

import re
from pathlib import Path

import pytest

from scoring.metrics import judge
from scoring.text import normalize_answer

README = Path(__file__).resolve().parent.parent / "scoring" / "README.md"
TEXT = README.read_text(encoding="utf-8")
CODE = re.compile(r"`([^`]*)`")


def section(title: str) -> str:
    start = TEXT.index(f"\n# {title}\n")
    end = TEXT.find("\n# ", start + 1)
    return TEXT[start:end if end > 0 else None]


def rows(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out[1:] if out else out  # without the header


def code(cell: str) -> str:
    return CODE.findall(cell)[0].replace("\\n", "\n")


def scores(cell: str) -> tuple[float, float, float] | None:
    parts = [p.strip() for p in cell.split(",")]
    return tuple(float(p) for p in parts) if len(parts) == 3 else None


def prediction(cell: str) -> tuple[str | None, str | None]:
    if cell.startswith("(no prediction)"):
        return None, None
    status = re.search(r"status `([^`]*)`", cell)
    return code(cell), status.group(1) if status else None


def single_answer_cases():
    out = []
    for pred_cell, gold_cell, release, default, _ in rows(section("Worked examples").split("Profile `docvqa`")[0]):
        gold, fmt = code(gold_cell), re.search(r"\((\w+)\)", gold_cell).group(1)
        preds = [prediction(p) for p in pred_cell.split(" / ")] if " / " in pred_cell else [prediction(pred_cell)]
        for profile, cell in (("xldocbench-1519", release), ("xldocbench", release if default == "same" else default)):
            if len(preds) > 1:  # `a` / `b` with Accuracy `x / y`
                for (p, st), acc in zip(preds, cell.split(" / ")):
                    out.append(pytest.param(p, [gold], fmt, st, profile, (float(acc), None, None), id=f"{profile}:{p}"))
            else:
                (p, st), = preds
                out.append(pytest.param(p, [gold], fmt, st, profile, scores(cell), id=f"{profile}:{p}"))
    return out


def docvqa_cases():
    out = []
    for pred_cell, answers_cell, cell, _ in rows(section("Worked examples").split("Profile `docvqa`")[1]):
        out.append(pytest.param(code(pred_cell), CODE.findall(answers_cell), scores(cell), id=code(pred_cell)[:30]))
    return out


SINGLE = single_answer_cases()
DOCVQA = docvqa_cases()


def test_the_tables_were_read():
    assert len(SINGLE) >= 40 and len(DOCVQA) >= 4


@pytest.mark.parametrize("pred,answers,fmt,status,profile,expected", SINGLE)
def test_worked_example(pred, answers, fmt, status, profile, expected):
    rule = "numeric_tolerance" if fmt in ("Int", "Float") else ""
    j = judge(pred, answers, fmt, rule, status=status, profile=profile)
    got = (j.accuracy, round(j.token_f1, 6), round(j.anls, 6))
    assert got[:1] == expected[:1] if expected[1] is None else got == expected


@pytest.mark.parametrize("pred,answers,expected", DOCVQA)
def test_docvqa_worked_example(pred, answers, expected):
    j = judge(pred, answers, profile="docvqa")
    assert (j.accuracy, round(j.token_f1, 6), round(j.anls, 6)) == expected


def test_normalisation_table():
    table = rows(section("Part B: the release evaluator (profile `xldocbench-1519`)").split("## 4.")[1].split("## 5.")[0])
    assert len(table) >= 6
    for text_cell, normalised_cell, _ in table:
        texts, normalised = CODE.findall(text_cell), CODE.findall(normalised_cell)
        if len(normalised) == 1 and len(texts) > 1:  # `A`, `thE` -> `` (empty)
            normalised = normalised * len(texts)
        assert [normalize_answer(t) for t in texts] == normalised, text_cell


def test_signature_examples_are_the_profiles_signatures():
    from scoring.profiles import PROFILES, signature

    block = section("The signature").split("```")[1]
    assert block.split() == [signature(name) for name in PROFILES]

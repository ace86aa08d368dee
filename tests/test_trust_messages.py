"""Issue 18, "Nothing ranked wrongly" (items 2, 3, 5, 6) and the messages of item 7: every message says
the reason that applied, where the user looks (the overview, the page in use, the question detail),
and a run that matches no gold question is listed but never ranked, charted or compared."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.core.analysis import Join, join_warning
from dashboard.data.frames import GoldTrouble, Skipped, skipped_warning
from dashboard.evidence import grounding
from dashboard.evidence import locate as ev
from scoring.categories import categorize
from scoring.evaluate import evaluate
from scoring.loaders import load_gold, load_predictions
from scoring.model import DocRef, GoldQuestion, Prediction

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI = FIXTURES / "mini_bench"
sys.path.insert(0, str(FIXTURES / "evidence"))
import make_fixtures as mf  # noqa: E402  # the evidence tests' PDFs

GOLD_IDS = [f"adubench_single_00000{k}" for k in range(1, 9)] + ["adubench_cross_000001", "adubench_cross_000002"]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    target = tmp_path / "bench"
    shutil.copytree(MINI, target, ignore=shutil.ignore_patterns("malformed"))
    return target


def write_run(bench: Path, name: str, rows: list[dict]) -> None:
    (bench / "runs" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def unescape(text: str) -> str:
    """Markdown text as read: md_escape's backslashes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def texts(at) -> list[str]:
    return [unescape(str(e.value)) for kind in ("warning", "info", "markdown", "caption", "error", "title")
            for e in getattr(at, kind)]


def clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def board(at):
    return next(d.value for d in at.dataframe if "Accuracy (%)" in d.value.columns).set_index("Run")


# ----------------------------------------------------------------------------- item 5: joins


def foreign_bench(bench: Path) -> Path:
    """A run of another benchmark (no id matches) and one matching a third of the gold."""
    write_run(bench, "foreign", [{"question_id": f"other_{k}", "prediction": "x"} for k in range(5)])
    write_run(bench, "third", [{"question_id": q, "prediction": "616"} for q in GOLD_IDS[:3]]
              + [{"question_id": "elsewhere_7", "prediction": "y"}])
    return bench


def test_a_run_matching_no_gold_is_listed_not_ranked(monkeypatch, bench):
    at = app_on(monkeypatch, foreign_bench(bench))
    clean(at)
    lb = board(at)
    assert "foreign" not in lb.index and "third" in lb.index  # a third is ranked (and warned about)
    unranked = next(d.value for d in at.dataframe if "Example id" in d.value.columns)
    assert list(unranked["Run"]) == ["foreign"] and unranked["Matched"].tolist() == [0]
    assert any(t.startswith("**Not ranked**") for t in texts(at))
    warn = next(t for t in texts(at) if "gold questions" in t and "matched" in t)
    assert "run foreign matched 0 of 10 gold questions (e.g. unmatched id 'other_0'): not ranked, charted or compared" in warn
    # issue 34: a run whose rows match the gold but cover a part of it answered a subset (not "another benchmark")
    assert ("run third answered a subset (3 of 10 questions): it is scored on the questions it attempted (third: 1 row "
            "matches no gold question, e.g. id 'elsewhere_7')") in warn
    assert "foreign" not in at.multiselect(key="ov_runs").options  # not charted


def test_compare_and_presentation_never_offer_it(monkeypatch, bench):
    at = app_on(monkeypatch, foreign_bench(bench), {"a": "foreign", "b": "alpha"}, timeout=60)
    at.switch_page("views/compare.py").run()
    clean(at)
    for key in ("cmp_a", "cmp_b"):
        assert "foreign" not in at.selectbox(key=key).options and "third" in at.selectbox(key=key).options
    assert any("run foreign matched 0 of 10" in t for t in texts(at))  # said on the page in use
    at.switch_page("views/present.py").run()
    clean(at)
    shown = texts(at)
    assert not any("foreign" in t and "unlikely to be chance" in t for t in shown)
    assert not any(t.startswith("foreign against") or "against foreign" in t for t in shown)


def test_join_warning_text():
    assert join_warning([]) == ""
    short = Join("r", 3, 10, "x1")
    assert short.short and short.ranked and not Join("r", 5, 10).short
    assert not Join("r", 0, 10).ranked and Join("r", 0, 0).ranked  # no gold at all: nothing to judge
    assert join_warning([short]).startswith("run r matched 3 of 10 gold questions (e.g. unmatched id 'x1'). ")


# ----------------------------------------------------------------------------- items 2 and 3: the gold


def test_dropped_and_unmatchable_gold_on_the_overview_and_the_question(monkeypatch, bench):
    gold = bench / "qa_single_doc.jsonl"
    lines = gold.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines]
    rows[2]["answer"]["value"] = None  # adubench_single_000003: no gold answer
    lines = [json.dumps(r) for r in rows] + ['{"question_id": "broken"', json.dumps(rows[0])]  # unreadable, repeated
    text = "\n".join(lines).replace('"value": "250"', '"value": NaN') + "\n"  # adubench_single_000005: NaN
    gold.write_text(text, encoding="utf-8")
    at = app_on(monkeypatch, bench)
    clean(at)
    warnings = [unescape(w.value) for w in at.warning]
    assert "2 gold rows were dropped (1 row could not be read, 1 row repeated a question id (the first row is kept)): " \
           "the leaderboard scores the 10 questions loaded, without them." in warnings
    marked = next(w for w in warnings if "no right answer can match" in w)
    assert marked.startswith("2 questions have a gold answer no right answer can match (no gold answer: 1, "
                             "gold answer is nan: 1)")
    assert any("file:line" in p.proto.label for p in at.get("page_link"))

    at = app_on(monkeypatch, bench, {"sel": "adubench_single_000003"})
    at.switch_page("views/questions.py").run()
    clean(at)
    mark = next(unescape(w.value) for w in at.warning if "gold cannot be matched" in w.value)
    assert "no gold answer (qa_single_doc.jsonl:3)" in mark
    at = app_on(monkeypatch, bench, {"sel": "adubench_single_000001"})
    at.switch_page("views/questions.py").run()
    assert not any("gold cannot be matched" in w.value for w in at.warning)


def test_gold_trouble_words():
    assert GoldTrouble().messages(5) == []
    assert GoldTrouble(unreadable=1).messages(5) == [
        "1 gold row was dropped (1 row could not be read): the leaderboard scores the 5 questions loaded, without it."]


# ----------------------------------------------------------------------------- item 6: failed:zero


def test_failed_answers_zeroed_by_the_profile_are_counted(monkeypatch, bench):
    at = app_on(monkeypatch, bench)  # alpha answers adubench_single_000004 with status "error"
    clean(at)
    note = next(t for t in (unescape(i.value) for i in at.info) if "failed:zero" in t)
    assert note.startswith("Profile xldocbench scored 1 answer 0 because their status is not a success (failed:zero in "
                           "the signature), whatever their text: alpha (1).")
    assert "xldocbench-1519" in note
    pop = at.get("popover")
    assert pop and any("failed or missing predictions score 0" in unescape(m.value) for m in pop[0].markdown)
    at = app_on(monkeypatch, bench, {"profile": "xldocbench-1519"})
    clean(at)
    assert not any("failed:zero" in unescape(i.value) for i in at.info)  # the release scores the text: nothing zeroed


# ----------------------------------------------------------------------------- item 7: each message its reason


def test_a_repeated_id_is_not_called_unreadable(monkeypatch, bench):
    rows = [json.loads(x) for x in (bench / "runs" / "alpha.jsonl").read_text().splitlines()]
    write_run(bench, "alpha", rows + [rows[0]])  # the only problem: adubench_single_000001 twice
    at = app_on(monkeypatch, bench)
    clean(at)
    assert board(at).loc["alpha", "Problems"] == "1 row replaced by a later row with the same id"
    warn = next(unescape(w.value) for w in at.warning if w.value.startswith("alpha"))
    assert warn == ("alpha: of the file's rows, 1 row repeated an id and was replaced by the later row with that id "
                    "(the later answer is scored).")
    assert "could not be read" not in warn and "unknown" not in warn


def test_skipped_words_per_reason():
    assert Skipped(unreadable=3).text() == "3 rows skipped, ids unknown"
    both = Skipped(unreadable=1, replaced=2)
    assert skipped_warning({"r": both}, ["r", "s"]) == (
        "r: of the file's rows, 1 row could not be read (their question ids are unknown, so the scores may leave "
        "questions out); 2 rows repeated an id and were replaced by the later row with that id (the later answer is "
        "scored).")


def test_not_searched_says_which_reason():
    q = ev_question(pages=(1,))
    assert ev.locate_answer("B", q, {}).message == "not searched: a choice letter (B)"
    assert ev.locate_answer("", q, {}).message == "not searched: an empty answer"
    assert ev.locate_answer("N/A", q, {}).message == "not searched: a refusal"
    assert ev.locate_answer("x", q, {}).message == "not searched: a single character, not a text to look for"
    assert ev.answer_candidates("1") == ["1"] and ev.answer_candidates("E") == []


def test_a_digit_is_searched_as_a_number(fx):
    q = ev_question(pages=(1,))
    loc = ev.locate_answer("7", q, {"d1": fx["hostile"]})
    assert loc.searched and "choice letter" not in loc.message


def test_computed_or_invented_is_one_rule_whatever_the_answer_scored(fx):
    # where the gold is decides (locate.not_found_verdict), never whether the answer scored right: the gold
    # of ev_question is not written in hostile.pdf, so every answer not found there is computed, none invented
    q = ev_question(pages=(1,))
    paths = {"d1": fx["hostile"]}
    said = {ev.locate_answer("Zanzibar lighthouse keeper", q, paths, right=right).message for right in (True, False, None)}
    assert said == {"not found verbatim in the document, nor is the gold answer: computed from the page (or read "
                    "from a figure), as the gold is"}


def test_no_evidence_pages_found_is_found_not_wrong_page(fx):
    q = ev_question(pages=())  # as DocVQA: the gold names no evidence page
    loc = ev.locate_answer(mf.WRONG_PAGE_ANSWER, q, {"d1": fx["hostile"]})
    assert (loc.location, loc.message, loc.in_document) == (ev.IN_DOCUMENT, "appears on page 2", True)
    named = ev.locate_answer(mf.WRONG_PAGE_ANSWER, ev_question(pages=(1,)), {"d1": fx["hostile"]})
    assert named.location == ev.OTHER_PAGE and named.message.endswith("not on the evidence pages")
    table = grounding.evidence_table([q], {"r": {q.qid: _pred(q.qid, mf.WRONG_PAGE_ANSWER)}}, lambda _: {"d1": fx["hostile"]})
    rates = grounding.run_rates(table).set_index("run").loc["r"]
    assert rates["answers_searched"] == 1 and rates["answer_only_on_other_page"] == 0
    assert rates["answer_found_no_evidence_page"] == 1
    assert grounding.location_label(ev.IN_DOCUMENT) == "in the document (no evidence page named)"


def _pred(qid: str, text: str) -> Prediction:
    return Prediction(qid=qid, text=text, status="success")


def test_an_exact_match_is_never_fragile(tmp_path):
    gold = tmp_path / "qa.jsonl"
    rows = [("c1", "B", "Str", "choice_exact_match", "B"), ("c2", "A", "Str", "choice_exact_match", "A"),
            ("c3", "UK", "Str", "casefold_exact_match", "Ukraine"), ("c4", "B", "Str", "casefold_exact_match", "b")]
    gold.write_text("".join(json.dumps({"question_id": q, "question": "?", "answer": {"value": g, "format": f,
                                                                                     "verification_rule": r}}) + "\n"
                            for q, g, f, r, _ in rows), encoding="utf-8")
    preds = tmp_path / "run.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "prediction": p}) + "\n" for q, *_, p in rows))
    result = evaluate(load_gold([gold]).items, load_predictions(preds).items, profile="xldocbench")
    cats = {r.qid: categorize(r.judgement) for r in result.results}
    assert "fragile_pass" not in cats["c1"] and "fragile_pass" not in cats["c2"] and "fragile_pass" not in cats["c4"]
    assert cats["c3"][0] == "fragile_pass"  # containment of a two-character gold stays fragile


@pytest.fixture(scope="module")
def fx(tmp_path_factory) -> dict[str, Path]:
    return mf.build(tmp_path_factory.mktemp("evidence"))


def ev_question(pages=(1,)) -> GoldQuestion:
    return GoldQuestion("q1", "?", ("gold",), "Str", "casefold_exact_match", "single_doc", {},
                        documents=(DocRef("d1", evidence_pages=tuple(pages)),))

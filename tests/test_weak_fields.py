"""The fields the weak-slice finder tests (scoring/slice_fields.py), listed once: numeric metadata as
ranges with human labels, ids and free text left out with the reason; the command line and the Weak
slices page test the same fields on the same run and both say which; the CLI's CSV keeps its columns
with ci_low/ci_high the intervals adjusted for the search; and the report, Compare's "All runs" and the
Presentation give one answer -- the same sentence, slices, numbers and signs -- on the campaign sample."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app_kit import app_on
from dashboard.weak import frames as W
from dashboard.weak import panel as weak_panel
from scoring.gate import CSV_COLUMNS
from scoring.model import DocRef, GoldQuestion
from scoring.slice_fields import describe, field_label, numeric_ranges, question_values, slice_fields

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGN = ROOT / "sample_runs" / "campaign"


def _q(i: int, meta: dict, doc: str = "d1", pages: tuple[int, ...] = (1,)) -> GoldQuestion:
    return GoldQuestion(f"q{i}", "?", ("1",), "Int", "numeric_tolerance", "single_doc", meta,
                        documents=(DocRef(document_id=doc, evidence_pages=pages),), raw_format="Int")


def test_numeric_metadata_becomes_ranges_and_ids_and_free_text_are_left_out():
    gold = [_q(i, {"evidence_page_count": i % 9, "position": i, "answer": f"text {i}", "is_unanswerable": i % 5 == 0,
                   "doc_type_coarse": ["report", "paper"][i % 2], "evidence_pages": [1, 2]}) for i in range(60)]
    fs = slice_fields(gold)
    pages = fs.columns["meta.evidence_page_count"]
    # four ranges of about as many questions (21, 14, 13, 12 of 60: a value is never split)
    assert sorted(set(pages)) == ["0–2", "3–4", "5–6", "7–8"] and pages.count("0–2") == 21
    assert fs.raw_values("meta.evidence_page_count", "7–8") == ["7", "8"]  # the explorer filters on these
    assert field_label("meta.evidence_page_count") == "Evidence pages"
    assert describe([("answer_format", "Int"), ("meta.evidence_page_count", "3–4")]) == "Answer format: Int & Evidence pages: 3–4"
    assert {k: v for k, v in fs.left_out.items() if k.startswith("meta.")} == {
        "meta.position": "every question its own value", "meta.answer": "every question its own value"}
    assert set(fs.columns["meta.is_unanswerable"]) == {"True", "False"}
    assert "meta.evidence_pages" not in fs.columns and "meta.evidence_pages" not in fs.left_out  # a list: no label
    assert "length" not in fs.columns and fs.left_out["length"] == "no page counts in documents.jsonl"  # said, on both
    with_pages = slice_fields(gold, {"d1": 30})
    assert set(with_pages.columns["length"]) == {"11–50 pages"} and set(with_pages.columns["position"]) == {"first third"}
    labels, raw = numeric_ranges([1, 1, 2, None, 3])
    assert labels == ["1", "1", "2", None, "3"] and raw == {"1": ("1",), "2": ("2",), "3": ("3",)}


def _mixed_gold() -> list[GoldQuestion]:
    """Questions whose metadata keys come and go, in different orders, with page_category on some only:
    what makes a subset's fields differ from the whole gold's (which keys, in what order, which ranges)."""
    import random

    rnd = random.Random(7)
    out = []
    for i in range(300):
        meta: dict = {"reasoning_type": rnd.choice(["lookup", "compare"])}
        keys = rnd.sample(["pages", "kind", "flag", "ident", "note"], rnd.randint(0, 5))
        for k in keys:
            meta[k] = {"pages": rnd.choice([1, 2, 3, 5, 8, 13, None]), "kind": rnd.choice(["a", "b", "c", ""]),
                       "flag": rnd.random() < 0.3, "ident": i, "note": f"free text {rnd.randint(0, 40)}"}[k]
        if rnd.random() < 0.1:
            meta["page_category"] = rnd.choice([["single-page"], ["cross-page", "single-page"], None])
        out.append(_q(i, meta, doc=f"d{i % 17}", pages=(rnd.randint(1, 30),)))
    return out


@pytest.mark.parametrize("pages", [None, {f"d{k}": 10 + 7 * k for k in range(17)}])
def test_fields_of_a_subset_read_once_equal_slice_fields_of_its_gold(pages):
    """Compare asks the fields of each pair's questions: `question_values(gold).fields(ids)` reads the gold once and
    must give exactly `slice_fields` of those questions' gold -- columns, their order, ranges and what is left out --
    for subsets in any order, including ones where a key, page_category or a range is absent or first met elsewhere."""
    import random

    gold = _mixed_gold()
    values = question_values(gold, pages)
    by_id = {q.qid: q for q in gold}
    rnd = random.Random(3)
    subsets = [[q.qid for q in gold], [], [gold[5].qid], [q.qid for q in gold[::-1]], [q.qid for q in gold if q.metadata.get("flag")]]
    subsets += [rnd.sample([q.qid for q in gold], rnd.randint(1, 300)) for _ in range(40)]
    for ids in subsets:
        extra = {"tag": [("x",) if i % 2 else () for i in range(len(ids))]}
        want = slice_fields([by_id[i] for i in ids], pages, extra)
        got = values.fields(ids, extra)
        assert list(got.columns) == list(want.columns) and got.columns == want.columns
        met = dict.fromkeys(f"meta.{k}" for i in ids for k in by_id[i].metadata)  # first met, in the subset's order
        assert [c for c in got.columns if c.startswith("meta.")] == [c for c in met if c in got.columns]
        assert ("page_category" in got.columns) == any("page_category" in by_id[i].metadata for i in ids)
        assert got.ranges == want.ranges and got.left_out == want.left_out
    assert any("page_category" not in values.fields([q.qid]).columns for q in gold)  # the subsets did differ
    assert values.fields().columns == slice_fields(gold, pages).columns


def _cli_fields(run: str, tmp_path: Path) -> tuple[str, list[dict], str]:
    out = tmp_path / "weak.csv"
    done = subprocess.run([sys.executable, "-m", "scoring", "--gold-files", str(CAMPAIGN / "qa_single_doc.jsonl"),
                           "--predictions", str(CAMPAIGN / "runs" / f"{run}.jsonl"), "--weak-slices", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    return done.stdout, rows, out.read_text(encoding="utf-8").splitlines()[0]


def test_the_command_line_and_the_page_test_the_same_fields_and_say_which(monkeypatch, tmp_path):
    printed, rows, header = _cli_fields("vision-13b", tmp_path)
    assert header == ",".join(CSV_COLUMNS)  # the contract: the columns stay
    cli = re.search(r"fields tested \((\d+)\): ([^;\n]+)", printed)
    tested = re.search(r"(\d[\d,]*) slices tested", printed)
    assert cli and tested
    weak_panel.SEARCHES.discard_where(lambda key: True)
    at = app_on(monkeypatch, CAMPAIGN, timeout=120)
    at.switch_page("views/weak.py").run()
    at.selectbox(key="weak_run").set_value("vision-13b").run()
    at.button(key="weak_go").click().run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Fields tested"))
    assert caption.replace("\\", "").startswith(f"Fields tested ({cli.group(1)}): {cli.group(2)}")
    assert at.metric[0].value == tested.group(1)  # the same number of slices tested
    assert "Evidence annotation status" in cli.group(2)  # the gold's other metadata: a field on both
    # the CSV's interval is the adjusted one: the same as the page's, and wholly below 0
    top = next(d.value for d in at.dataframe if "Conditions" in d.value.columns).iloc[0]
    low, high = float(rows[0]["ci_low"]), float(rows[0]["ci_high"])
    assert high < 0 and top[W.INTERVAL] == f"{W.pp(float(rows[0]['gap']))} [{W.pp(low)}, {W.pp(high)}]"
    assert rows[0]["slice"] == "reasoning_type=counting & evidence_source=Chart"  # machine names in the CSV
    assert "Reasoning type: counting & Evidence source: Chart" in printed  # words on the screen
    assert "ci_low, ci_high: adjusted for the search" in printed


@pytest.fixture(scope="module")
def campaign_answer():
    """The finder on the campaign's vision-13b as the Weak slices page's search makes it."""
    from dashboard.report import build as report

    ws, an, names = report.load(CAMPAIGN, ["vision-13b", "ckpt-0520"])
    found = W.search(W.inputs(an.questions, an.attempted_scores(["vision-13b"])[0], an.gold, "vision-13b", "accuracy", "",
                              an.declared_pages), W.Settings())
    page = report.build_report(an, names, workspace=ws, settings=report.C.Settings(resamples=200))
    return found, page


def test_the_report_all_runs_and_the_presentation_give_one_answer(monkeypatch, campaign_answer):
    found, page = campaign_answer
    said = W.sentence(found, "vision-13b", "Accuracy")
    assert said[2] == ("Reasoning type: counting & Evidence source: Chart", True) and found.weak[0].gap < 0
    markdown = W.markdown(said)
    html = "".join(f"<b>{t}</b>" if b else t for t, b in said).replace("&", "&amp;")
    assert html in page  # the report

    weak_panel.SEARCHES.discard_where(lambda key: True)
    compare = app_on(monkeypatch, CAMPAIGN, {"cmp_tab": "all", "cmp_run": "vision-13b"}, timeout=120)
    compare.switch_page("views/compare.py").run()
    assert not compare.exception
    assert markdown in [m.value for m in compare.markdown]  # Compare's "All runs"
    table = next(d.value for d in compare.dataframe if "Conditions" in d.value.columns)
    assert [list(c) for c in table["Conditions"]] == [[describe([c]) for c in s.conditions] for s in found.weak]
    assert list(table[W.INTERVAL]) == [W.interval_text(s) for s in found.weak]

    present = app_on(monkeypatch, CAMPAIGN, {"a": "vision-13b", "b": "ckpt-0520"}, timeout=120)
    present.switch_page("views/present.py").run()
    assert not present.exception
    assert markdown in [m.value for m in present.markdown]  # the Presentation's slide 2
    forest = next(c for c in present.get("plotly_chart") if "weak slices against the rest" in c.proto.spec)
    assert "#1 Reasoning type: counting &amp; Evidence source: Chart" in forest.proto.spec or \
        "#1 Reasoning type: counting & Evidence source: Chart" in forest.proto.spec


def test_hostile_labels_are_text_in_the_sentence_the_table_and_the_forest():
    """A metadata value that is markup stays text wherever the finder's answer is shown."""
    import numpy as np

    from dashboard.report.build import ENV
    from dashboard.weak.charts import forest
    from scoring.slices import find_weak_slices

    rng = np.random.default_rng(0)
    docs = np.repeat(np.arange(60), 20)
    evil = "<img src=x onerror=alert(1)>**b**"
    kind = np.where(rng.random(docs.size) < 0.3, evil, "plain")
    y = (rng.random(docs.size) < np.where(kind == evil, 0.2, 0.8)).astype(float)
    found = find_weak_slices(y, {"meta.kind": list(kind)}, docs)
    assert found.weak and found.weak[0].conditions == (("meta.kind", evil),)
    labels = list(forest(found, "Accuracy").data[0].y)
    assert labels == ["#1 Kind: &lt;img src=x onerror=alert(1)&gt;**b**"]  # plotly_text: markup shown as written
    said = W.markdown(W.sentence(found, "run<b>", "Accuracy"))
    assert "<img" not in said.replace("\\<img", "") and "\\*\\*b\\*\\*" in said and "run\\<b\\>" in said
    html = ENV.from_string("{% import 'parts.html' as parts %}{{ parts.sentence(s) }}").render(
        s=W.sentence(found, "run<b>", "Accuracy"))
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html and "<b>run&lt;b&gt;</b>" in html

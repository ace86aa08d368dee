"""Issue 34, section 4 ("Smaller things"): links that carry the data they show, the overview's failure
modes while the annotations database is away, no "None" in a table, and the disagreement page's
categories and rules in words and in colours one can tell apart.

- A saved slice's "Link to it" and the weak slices' "Open in explorer" open in a new session, which knows
  only its URL: on a benchmark folder opened in the Data panel they carry `?data=` (and its task,
  profile), and the link opened fresh shows that benchmark with the slice's filters.
- With the annotations server stopped (a real PostgreSQL, tests/pg_kit.py), the overview's failure-mode
  section says the database cannot be reached, offers "Try again" (whole: under the sentence, not in a
  narrow column) and never "No tagged notes yet"; back, it counts again.
- Every table of every page, on the three sample benchmarks (XL-DocBench, MMLongBench-Doc, the harness
  folder) with a question selected, the finder and the pair finder run: no cell reads "None" (a missing
  value is an empty cell; the answer format None reads "None (unanswerable)"), model text aside.
- The disagreement categories' colours: any two apart at a glance, and under simulated colour blindness.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_kit import app_on
from dashboard.core.links import View, from_params, page_url, with_source

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
MMLONGBENCH = SAMPLE / "mmlongbench"
LINK = re.compile(r"\]\((questions\?[^)\s]+)\)")


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def query(link: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(link).query, keep_blank_values=True)


# ----------------------------------------------------------------------------- 1. links carry their data


def test_a_link_for_a_new_session_carries_the_source_of_the_view_it_comes_from():
    source = View(runs=["a"], data="/srv/bench", bench="docvqa_val", profile="lmms-eval", evals=["m/D@T1"],
                  corrected=True, filters={"domain": ["x"]}, question="q1")
    target = with_source(View(saved="charts", filters={"domain": ["y"]}), source)
    assert (target.data, target.bench, target.profile, target.evals, target.corrected) == (
        "/srv/bench", "docvqa_val", "lmms-eval", ["m/D@T1"], True)
    assert (target.saved, target.filters, target.runs, target.question) == ("charts", {"domain": ["y"]}, [], "")
    link = page_url("questions", target)
    assert link.startswith("questions?") and from_params(query(link)) == target
    assert page_url("questions", View()) == "questions"


def test_the_weak_slices_explorer_links_carry_the_folder_open():
    from dashboard.weak import frames as W

    plain = W.explorer_link("run-a", (("domain", "finance"),))
    assert "data" not in query(plain)
    link = W.explorer_link("run-a", (("domain", "finance"),), source=View(data="/srv/other bench", bench="t2"))
    params = query(link)
    assert params["data"] == ["/srv/other bench"] and params["bench"] == ["t2"] and params["f.domain"] == ["finance"]


def test_a_saved_slices_link_opens_the_benchmark_it_was_saved_on(monkeypatch, tmp_path):
    """The sample (XL-DocBench) is the configured benchmark; MMLongBench-Doc's sample is opened through
    ?data=. Its saved slice's link, opened in a new session, shows MMLongBench-Doc with the slice applied
    (without `data` it showed the configured benchmark, where no such slice exists)."""
    monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LENS_DATABASE_URL", raising=False)
    at = app_on(monkeypatch, SAMPLE, {"data": str(MMLONGBENCH), "f.answer_format": "Int"}, timeout=240)
    at.switch_page("views/questions.py").run()
    ok(at)
    shown = at.caption[0].value if at.caption else ""
    at.text_input(key="ann_name_x_saved").input("Ana")
    at.text_input(key="saved_name_x_saved").input("whole numbers")
    ok(at.button(key="saved_go_x_saved").click().run())
    assert any("whole numbers" in s.value for s in at.success)
    at.run()
    links = [m.group(1) for c in at.caption for m in LINK.finditer(c.value)]
    assert len(links) == 1, [c.value for c in at.caption if "Link to it" in c.value]
    params = query(links[0])
    assert params["slice"] == ["whole numbers"] and params["data"] == [str(MMLONGBENCH)]
    assert params["profile"] == ["mmlongbench-doc"]  # its own rule, as the view showed it
    # opened fresh: MMLongBench-Doc, the slice's filter applied
    fresh = app_on(monkeypatch, SAMPLE, {k: v if len(v) > 1 else v[0] for k, v in params.items()}, timeout=240)
    fresh.switch_page("views/questions.py").run()
    ok(fresh)
    count = next(c.value for c in fresh.caption if " questions**" in c.value)
    assert count.split(" · ")[0] == shown.split(" · ")[0]  # "**n of N questions**" as where it was saved
    assert "Int" in count and fresh.session_state["x_f.answer_format"] == ["Int"]
    assert fresh.query_params["slice"] == "whole numbers" and fresh.query_params["data"] == str(MMLONGBENCH)


# ----------------------------------------------------------------------------- 2. the database away


def test_the_overviews_failure_modes_say_the_database_cannot_be_reached(tmp_path, monkeypatch):
    """A real PostgreSQL holding a tagged note, stopped under the open overview: the failure-mode section
    says the database cannot be reached, with its reason (no password) and a Try again button -- not
    "No tagged notes yet" and a disabled import of the benchmark's notes, as before; back, it counts."""
    import pg_kit
    from dashboard.annotations import db
    from dashboard.annotations.db import AnnotationStore
    from dashboard.annotations.identity import benchmark_identity
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    monkeypatch.setattr(db, "DEFAULT_RETRY_INTERVAL", 0.0)  # the app's store tries the server again on every look
    bench = tiny_bench(tmp_path)
    (bench / "annotations").mkdir()
    (bench / "annotations" / "annotations.jsonl").write_text("\n", encoding="utf-8")  # notes it ships: an import offer
    identity = benchmark_identity(load_gold([bench / "qa_single_doc.jsonl"]).items)

    def said(at: AppTest) -> str:
        return " ".join([w.value for w in at.warning] + [c.value for c in at.caption] + [i.value for i in at.info]).replace("\\", "")

    def counted(at: AppTest) -> bool:  # the tag counts, under their caption
        return any(c.value.startswith("How many answers of each run carry each tag") for c in at.caption) and any(
            "tag" in d.value.columns and "reasoning_error" in set(d.value["tag"]) for d in at.dataframe)

    with pg_kit.running() as pg:
        url = pg.fresh_database("overview")
        AnnotationStore(url).save_note(identity, "q2", "b", text="read the wrong row", tags=["reasoning_error"],
                                       author="Ana", expected_revision=0)
        monkeypatch.setenv("LENS_DATA_DIR", str(tmp_path / "data"))
        at = ok(app_on(monkeypatch, bench, timeout=120, env={"LENS_DATABASE_URL": url}))
        assert counted(at) and "cannot be reached" not in said(at)
        pg.stop()
        for _ in range(2):  # every rerun while it is away
            ok(at.run())
            text = said(at)
            assert "The annotations database cannot be reached now, so the failure modes" in text, text
            assert "No tagged notes yet" not in text and not counted(at)
            assert not any(str(b.key).startswith("ann_sample_") for b in at.button)  # no import that cannot happen
            assert pg_kit.PASSWORD not in text and "127.0.0.1" in text  # which server, never its password
            assert [b.label for b in at.button if b.key == "ann_retry_ov_modes"] == ["Try again"]
        ok(at.button(key="ann_retry_ov_modes").click().run())  # tried while still away: the same
        assert "cannot be reached" in said(at) and not counted(at)
        pg.start()
        ok(at.button(key="ann_retry_ov_modes").click().run())  # found again
        assert counted(at) and "cannot be reached" not in said(at)
        assert not any(b.key == "ann_retry_ov_modes" for b in at.button)


# ----------------------------------------------------------------------------- 3. no "None" in a table

PAGES = ("overview", "questions", "disagreement", "evidence", "compare", "weak", "present", "data")
# Columns holding what a model, a gold file or a person wrote, shown as written: a model that answered
# "None" is quoted, not hidden (matched on the column's name, or its last header under a run's group).
VERBATIM = re.compile(r"(?i)prediction|gold|question$|^text$|answer$|response|scored as|^which$|^value$|note")
NONE_WORD = re.compile(r"\bNone\b(?! \(unanswerable\))")


def none_cells(at: AppTest, where: str) -> list[str]:
    """Every table cell of the page that would read "None": a missing value drawn with Streamlit's own
    placeholder (the word None), or a text holding the word (the answer format None is "None
    (unanswerable)"), outside VERBATIM columns."""
    found = []
    for d in at.dataframe:
        frame: pd.DataFrame = d.value
        blank = d.proto.HasField("placeholder") and d.proto.placeholder == ""
        for col in frame.columns:
            name = col[-1] if isinstance(col, tuple) else str(col)
            values = frame[col].tolist()
            for k, v in enumerate(values):
                missing = v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
                if missing and not blank:
                    found.append(f"{where}: {name!r} row {k} is missing, drawn as the word None")
                elif isinstance(v, str) and not VERBATIM.search(name) and NONE_WORD.search(v):
                    found.append(f"{where}: {name!r} row {k} reads {v[:60]!r}")
                elif isinstance(v, (list, tuple)) and any(x is None or x == "None" for x in v):
                    found.append(f"{where}: {name!r} row {k} holds None: {v!r}")
    return found


def visit(monkeypatch, bench: Path, page: str, params: dict | None = None, press: str = "",
          env: dict[str, str] | None = None) -> AppTest:
    at = app_on(monkeypatch, bench, params, timeout=600, env=env)
    if page != "overview":
        at.switch_page(f"views/{page}.py").run()
    ok(at)
    for b in at.button:
        if press and (b.key == press or b.label == press):
            ok(b.click().run())
            break
    return at


# the three samples: XL-DocBench (real PDFs), MMLongBench-Doc as released, a harness folder (VLMEvalKit's task, then
# lmms-eval's); and MMLongBench-Doc with the harness runs joined to it
OPENED = {"xldocbench": (SAMPLE, {}, {}), "mmlongbench": (MMLONGBENCH, {}, {}),
          "harness": (SAMPLE / "harness", {}, {}), "harness-lmms-eval": (SAMPLE / "harness", {"bench": "mmlongbench_doc"}, {}),
          "mmlongbench-with-harness-runs": (MMLONGBENCH, {}, {"LENS_RUNS": str(SAMPLE / "harness")})}


@pytest.mark.parametrize("opened", list(OPENED))
def test_no_table_of_any_page_reads_none(opened, monkeypatch):
    """Every page, then the pages with a question selected, the finder run and the pair finder run."""
    bench, params, env = OPENED[opened]
    found: list[str] = []
    for page in PAGES:
        found += none_cells(visit(monkeypatch, bench, page, params, env=env), page)
    at = visit(monkeypatch, bench, "questions", params, env=env)
    first = at.dataframe[0].value.iloc[0]
    qid, run = first[("Question", "Id")], at.multiselect(key="x_runs").value[0]
    at = visit(monkeypatch, bench, "questions", {**params, "sel": qid, "run": run}, env=env)
    at.session_state[f"why_open_{run}"] = True  # the why panel: categories, diff, token overlap
    found += none_cells(ok(at.run()), "questions, a question selected")
    found += none_cells(visit(monkeypatch, bench, "evidence", {**params, "sel": qid, "run": run}, env=env),
                        "evidence, a question selected")
    found += none_cells(visit(monkeypatch, bench, "disagreement", {**params, "run": run, "dis_run": run, "dis_q": qid}, env=env),
                        "disagreement, an answer selected")
    at = visit(monkeypatch, bench, "weak", params, press="Find weak slices", env=env)
    assert any(m.label == "Slices tested" for m in at.metric)  # the finder ran
    found += none_cells(at, "weak slices, found")
    at = visit(monkeypatch, bench, "compare", params, press="cmp_pair_go", env=env)
    if not any("at least two runs" in i.value for i in at.info):
        assert any("got worse than" in m.value for m in at.markdown)  # the pair finder ran
    found += none_cells(at, "compare, pair finder")
    assert not found, "\n".join(found[:40])


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

import itertools
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
    from dashboard.annotations import store as annotations_store
    from dashboard.annotations.identity import benchmark_identity
    from dashboard.annotations.store import AnnotationStore
    from scoring.loaders import load_gold
    from test_annotations_app import tiny_bench

    monkeypatch.setattr(annotations_store, "DEFAULT_RETRY_INTERVAL", 0.0)  # the app's store tries the server again on every look
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
        # a placeholder of our own ("" by default, "—" where a table says "not reported") is not the word None
        blank = d.proto.HasField("placeholder") and d.proto.placeholder.strip().lower() != "none"
        for col in frame.columns:
            name = col[-1] if isinstance(col, tuple) else str(col)
            values = frame[col].tolist()
            for k, v in enumerate(values):
                missing = v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
                if missing and not blank:
                    found.append(f"{where}: {name!r} row {k} is missing, drawn as the word None")
                elif isinstance(v, str) and not VERBATIM.search(name) and NONE_WORD.search(v):
                    found.append(f"{where}: {name!r} row {k} reads {v[:60]!r}")
                elif isinstance(v, (list, tuple)) and any(x is None or isinstance(x, str) and NONE_WORD.search(x) for x in v):
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
    # the finder ran, or the page said at once why it cannot (a benchmark with fewer documents than a slice needs)
    assert any(m.label == "Slices tested" for m in at.metric) or any(
        "each slice needs" in e.value for e in [*at.info, *at.warning, *at.markdown, *at.caption])
    found += none_cells(at, "weak slices, found")
    at = visit(monkeypatch, bench, "compare", params, press="cmp_pair_go", env=env)
    if not any("at least two runs" in i.value for i in at.info):
        # the pair finder ran, or the page said why it cannot (too few documents for a slice)
        assert any("got worse than" in m.value for m in at.markdown) or any(
            "each slice needs" in e.value for e in [*at.info, *at.warning, *at.markdown, *at.caption])
    found += none_cells(at, "compare, pair finder")
    assert not found, "\n".join(found[:40])


# ----------------------------------------------------------------------------- 4. reasons in words

# One answer decided by each rule scoring.metrics knows (Judgement.decided_by): prediction, gold, format, rule,
# status, profile.
DECIDED_BY = {
    "missing": (None, ["x"], "Str", "", None, "xldocbench"),
    "failed_status": ("x", ["x"], "Str", "", "timeout", "xldocbench"),
    "refusal_phrase": ("not answerable", ["Not answerable"], "None", "", None, "xldocbench"),
    "no_refusal_phrase": ("Paris", ["Not answerable"], "None", "", None, "xldocbench"),
    "boolean_unreadable": ("maybe", ["Yes"], "Bool", "", None, "xldocbench"),
    "boolean_polarity": ("yes", ["Yes"], "Bool", "", None, "xldocbench"),
    "numeric_gold_zero": ("0", ["0"], "Int", "", None, "xldocbench"),
    "numeric_tolerance": ("12", ["12"], "Int", "", None, "xldocbench"),
    "choice_letter": ("(B)", ["B"], "single_choice", "", None, "xldocbench"),
    "containment": ("it is Paris", ["Paris"], "Str", "", None, "xldocbench"),
    "similarity": ("Pari", ["Paris"], "Str", "", None, "xldocbench"),
    "both_empty": ("", [""], "Str", "", None, "xldocbench"),
    "no_match": ("Lyon", ["Paris"], "Str", "", None, "xldocbench"),
    "exact_answer": ("paris", ["Paris"], "Str", "", None, "docvqa"),
    "no_exact_answer": ("lyon", ["Paris"], "Str", "", None, "docvqa"),
    "mmlongbench_eval_score": ("Paris", ["Paris"], "Str", "", None, "mmlongbench-doc"),
    "mmlongbench_fallback": ("[]", ["[]"], "List", "", None, "mmlongbench-doc"),
    "harness_rule": ("Paris", ["Paris"], "Str", "anls", None, "lmms-eval"),
}


def test_every_rule_that_decides_reads_in_words_on_the_page():
    from dashboard.disagreement import frames as dg
    from scoring.metrics import judge

    for code, (prediction, gold, fmt, rule, status, profile) in DECIDED_BY.items():
        j = judge(prediction, gold, fmt, rule, status=status, profile=profile)
        assert j.decided_by == code, (code, j.decided_by)
        words = dg.rule_label(code)
        assert code in dg.RULE_LABELS and words[0].isupper() and "_" not in words, (code, words)
        trace = dict(dg.trace_frame(j).itertuples(index=False))
        assert trace["Rule that decided"] == words
    assert set(dg.RULE_LABELS) == set(DECIDED_BY)  # no label of a rule that no longer exists
    assert len(set(dg.RULE_LABELS.values())) == len(dg.RULE_LABELS)  # no two rules read alike
    shown = dg.in_words(pd.DataFrame({"category": ["right_but_verbose"], "categories": ["right_but_verbose;fragile_pass"],
                                      "decision": ["containment"], "rule xldocbench": ["no_match"], "answer_format": ["None"],
                                      "prediction": ["None"]}))
    assert shown.iloc[0].tolist() == ["Right but verbose", "Right but verbose; Fragile pass", "The gold inside the answer",
                                      dg.RULE_LABELS["no_match"], "None (unanswerable)", "None"]  # the model's own words kept


# ----------------------------------------------------------------------------- 4. the categories' colours
#
# Colour difference CIEDE2000 (Sharma, Wu & Dalal 2005) of sRGB colours, and how they look with the
# common colour-vision deficiencies, simulated at full severity with the matrices of Machado, Oliveira &
# Fernandes (2009) on linear RGB. A difference of about 10 or more reads as another colour at a glance.

CVD = {
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def linear_rgb(hex_colour: str) -> tuple[float, ...]:
    channels = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)


def seen_with(rgb: tuple[float, ...], vision: str) -> tuple[float, ...]:
    if vision == "normal":
        return rgb
    return tuple(min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb)))) for row in CVD[vision])


def lab(rgb: tuple[float, ...]) -> tuple[float, float, float]:
    r, g, b = rgb
    xyz = ((0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047, 0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
           (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883)
    fx, fy, fz = (t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(one: tuple[float, float, float], two: tuple[float, float, float]) -> float:
    (l1, a1, b1), (l2, a2, b2) = one, two
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360 if c1 else 0.0
    h2 = math.degrees(math.atan2(b2, a2)) % 360 if c2 else 0.0
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_l, d_c, d_h = l2 - l1, c2 - c1, 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = -math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))) * 2 * math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7))
    return math.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h))


def closest(palette: dict[str, str], vision: str) -> tuple[float, str, str]:
    """The two categories whose colours are closest as `vision` sees them: (difference, one, other)."""
    return min((ciede2000(lab(seen_with(linear_rgb(palette[x]), vision)), lab(seen_with(linear_rgb(palette[y]), vision))), x, y)
               for x, y in itertools.combinations(palette, 2))


def test_the_colour_difference_matches_the_published_test_data():
    """Sharma, Wu & Dalal's pairs (L*a*b* in, CIEDE2000 out, four decimals), and sRGB white and black."""
    pairs = [((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425), ((50.0, -1.0, 2.0), (50.0, 0.0, 0.0), 2.3669),
             ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492), ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
             ((22.7233, 20.0904, -46.694), (23.0331, 14.973, -42.5619), 2.0373)]
    for one, two, expected in pairs:
        assert ciede2000(one, two) == pytest.approx(expected, abs=1e-4)
    assert lab(linear_rgb("#FFFFFF")) == pytest.approx((100.0, 0.0, 0.0), abs=1e-3)
    assert lab(linear_rgb("#000000")) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    grey = linear_rgb("#777777")
    assert all(seen_with(grey, v) == pytest.approx(grey, abs=1e-3) for v in CVD)  # a grey stays that grey


def test_the_categories_colours_can_be_told_apart_with_colour_blindness_too():
    from dashboard.disagreement.charts import CATEGORY_PALETTE, category_bars
    from scoring.categories import CATEGORY_IDS

    assert list(CATEGORY_PALETTE) == list(CATEGORY_IDS)  # one colour per category, declared once
    assert closest(CATEGORY_PALETTE, "normal")[0] >= 14, closest(CATEGORY_PALETTE, "normal")
    for vision in ("deuteranopia", "protanopia"):  # 1 man in 12 sees one of these two
        assert closest(CATEGORY_PALETTE, vision)[0] >= 9, (vision, closest(CATEGORY_PALETTE, vision))
    assert closest(CATEGORY_PALETTE, "tritanopia")[0] >= 6  # rare: apart, if less so
    white = lab(linear_rgb("#FFFFFF"))
    assert min(ciede2000(lab(linear_rgb(c)), white) for c in CATEGORY_PALETTE.values()) >= 20  # on the page's white
    bars = category_bars(pd.DataFrame([[1] * len(CATEGORY_IDS)], index=["run"], columns=list(CATEGORY_IDS)))
    assert [t.marker.color for t in bars.data] == list(CATEGORY_PALETTE.values())
    assert [t.name for t in bars.data][:2] == ["Failed or missing", "Extraction miss"]  # the legend in words

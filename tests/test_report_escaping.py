"""The stakeholder report escapes every text field it shows (issue 22): a benchmark written in tmp_path
with a hostile value in each field (questions, gold answers, evidence quotes, question and document
ids, document titles, run names, metadata slice labels, predictions, the report's title), built through
the real code path (`build.load` + `build_report`), parsed with html.parser. No element or attribute
may come from those values, each must be shown as text, and Jinja must not have evaluated them."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pymupdf
import pytest
from markupsafe import escape

from dashboard.report import build

# What each field carries; file names (run names, document ids) cannot hold "/", so they get the
# attacks that need none.
ATTACK = "<script>alert(1)</script>\"><img src=x onerror=alert(1)><b onmouseover=alert(1)>b</b>{{ 7*7 }}{% raw %}{# x"
NAME_ATTACK = "<svg onload=alert(1)>\"><img src=x onerror=alert(1)>'{{ 7*7 }}{% raw %}"
RUN_A, RUN_B = f"runA{NAME_ATTACK}", f"runB{NAME_ATTACK}"
DOCS = [f"doc{k}{NAME_ATTACK}" for k in range(3)]
QUESTIONS = 12
DOMAINS = [f"dom{i}{ATTACK}" for i in range(2)]
REASONING = [f"reason{i}{ATTACK}" for i in range(2)]
QUOTE = "<script>alert(1)</script> quoted evidence"
TITLE = f"title{ATTACK}"
# tags and attributes the report's own markup uses; anything else came from data
TAGS = {"html", "head", "meta", "title", "style", "script", "body", "main", "header", "h1", "h2", "h3", "p", "br", "b",
        "section", "div", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "article", "pre", "del", "ins",
        "span", "figure", "img", "svg", "rect", "figcaption"}
ATTRS = {"lang", "charset", "name", "content", "http-equiv", "class", "id", "style", "alt", "width", "height", "src",
         "viewbox", "preserveaspectratio", "x", "y", "fill", "stroke", "stroke-width"}


def qid(i: int) -> str:
    return f"q{i}{ATTACK}"


def question(i: int) -> str:
    return f"question{i}{ATTACK}"


def gold(i: int) -> str:
    return f"gold {i} <script>alert(1)</script>{{{{ 7*7 }}}}{{% raw %}}"


def prediction(run: str, i: int) -> str:
    """Hostile, and far enough from the gold that no rule calls it right."""
    return f"pred{run[3]}{i}\"><img src=x onerror=alert(1)><b onmouseover=alert(1)>b</b>{{{{ 7*7 }}}}{{% raw %}}{{# x — nothing like it"


def a_right(i: int) -> bool:
    return i >= QUESTIONS // 2 and i % 2 == 1  # A: right on half of domain 1 only, so domain 0 is its weakest slice


def b_right(i: int) -> bool:
    return i < QUESTIONS // 2


def write_bench(root: Path) -> Path:
    """12 questions on three documents (real one-page PDFs holding the quote) in two hostile domains;
    run A right on a quarter, run B on the first half: flips, weak slices and failures with thumbnails."""
    (root / "docs").mkdir(parents=True)
    (root / "runs").mkdir()
    for doc in DOCS:
        pdf = pymupdf.open()
        page = pdf.new_page(width=400, height=300)
        page.insert_text((40, 80), QUOTE, fontsize=11)
        pdf.save(root / "docs" / f"{doc}.pdf")
        pdf.close()
    (root / "documents.jsonl").write_text("".join(json.dumps({"document_id": doc, "title": TITLE, "domain": DOMAINS[0]}) + "\n"
                                                  for doc in DOCS))
    with open(root / "qa_single_doc.jsonl", "w", encoding="utf-8") as f:
        for i in range(QUESTIONS):
            f.write(json.dumps({
                "question_id": qid(i), "task_type": "single_doc", "question": question(i),
                "answer": {"value": gold(i), "format": "Str", "verification_rule": "exact_match"},
                "document": {"document_id": DOCS[i % 3], "evidence_pages": [1], "evidence_page_numbering": "pdf_index",
                             "evidence_items": [{"locator": "Page 1", "pages": [1], "quote": QUOTE, "source_type": "Text"}]},
                "metadata": {"domain": DOMAINS[i % 2], "reasoning_type": REASONING[i % 2], "difficulty": f"diff{ATTACK}" if i % 2 else "plain",
                             "evidence_sources": [f"src{ATTACK}"] if i % 2 else ["Text"]},  # a field of one value is no slice
            }) + "\n")
    for run, right in ((RUN_A, a_right), (RUN_B, b_right)):
        with open(root / "runs" / f"{run}.jsonl", "w", encoding="utf-8") as f:
            for i in range(QUESTIONS):
                f.write(json.dumps({"question_id": qid(i), "prediction": gold(i) if right(i) else prediction(run, i)}) + "\n")
    return root


class Page(HTMLParser):
    """Every start tag with its attributes, the scripts' bodies and the text outside scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in = tag if tag in ("script", "style") else None
        if tag == "script":
            self.scripts.append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in is None:
            self.text.append(data)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[str, Page]:
    bench = write_bench(tmp_path_factory.mktemp("hostile") / "bench")
    ws, an, runs = build.load(bench, [RUN_A, RUN_B])
    assert runs == [RUN_A, RUN_B] and len(an.questions) == QUESTIONS
    html = build.build_report(an, runs, RUN_B, workspace=ws, title=TITLE, settings=build.C.Settings(resamples=200))
    parsed = Page()
    parsed.feed(html)
    parsed.close()
    return html, parsed


def test_no_element_or_attribute_comes_from_the_data(report):
    html, page = report
    assert {tag for tag, _ in page.tags} <= TAGS
    assert [(tag, name) for tag, attrs in page.tags for name, _ in attrs if name not in ATTRS] == []  # no onerror, onload…
    images = [dict(attrs) for tag, attrs in page.tags if tag == "img"]
    assert images and all((img["src"] or "").startswith("data:image/png;base64,") for img in images)  # the thumbnails only
    # one script for Plotly's bundle, one per chart, all ours (three documents: no weak slice can be tested,
    # so no forest plot; its labels' escaping: tests/test_weak_fields.py)
    assert html.count("Plotly.newPlot(") == 3
    assert len(page.scripts) == 1 + 3
    assert "plotly.js" in page.scripts[0][:2000]
    assert all(s.strip().startswith("window.PLOTLYENV") for s in page.scripts[1:])
    for raw in ("<script>alert", "<img src=x", "<svg onload", "<b onmouseover", "onerror=alert(1)>"):
        assert raw not in html, raw


def shown_fields(shown: str) -> dict[str, str]:
    """Every hostile value the report must show, by field: the failures' fields for the failures shown."""
    fields = {"title": TITLE, "run A": RUN_A, "run B": RUN_B, "domain 0": DOMAINS[0], "domain 1": DOMAINS[1],
              "reasoning type": REASONING[0], "difficulty": f"diff{ATTACK}", "evidence source": f"src{ATTACK}",
              **{f"document id {k}": doc for k, doc in enumerate(DOCS)}}
    failures = [i for i in range(QUESTIONS) if qid(i) in shown]
    assert len(failures) >= 5 and not any(a_right(i) for i in failures)
    for i in failures:
        fields |= {f"question id {i}": qid(i), f"question {i}": question(i), f"gold {i}": gold(i),
                   f"prediction A {i}": prediction(RUN_A, i)}
        if not b_right(i):
            fields[f"prediction B {i}"] = prediction(RUN_B, i)
    return fields


def test_every_field_is_shown_as_text(report):
    html, page = report
    shown = "".join(page.text)
    fields = shown_fields(shown)
    assert {name: value for name, value in fields.items() if value not in shown} == {}
    # and it is the escaper that put them there: the raw page holds their entities
    assert {name: value for name, value in fields.items() if str(escape(value)) not in html} == {}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    # the quote only places the thumbnail's box: it is never written into the page
    assert QUOTE not in html and "quoted evidence" not in shown
    assert re.search(r"<rect x=", html)  # the quote was found and boxed on a thumbnail


def test_template_syntax_in_the_data_is_not_evaluated(report):
    """Jinja renders values, never templates made of them: `{{ 7*7 }}` stays itself (no 49 where it
    stood), `{% raw %}` and `{#` neither vanish nor open a block or a comment."""
    html, page = report
    shown = "".join(page.text)
    fields = shown_fields(shown)
    assert all("{{ 7*7 }}" in v and "{% raw %}" in v for v in fields.values())
    evaluated = {name: v.replace("{{ 7*7 }}", "49").replace("{% raw %}", "").replace("{# x", "") for name, v in fields.items()}
    assert {name: v for name, v in evaluated.items() if v in shown or v in html} == {}
    assert shown.count("{{ 7*7 }}") >= len(fields)


def test_the_templates_escape_everything():
    """Every template escapes (whatever its name) and none marks a value safe: the charts and Plotly's
    bundle are the only Markup, made in build.py."""
    env = build.ENV
    names = env.list_templates()
    assert {"report.html", "parts.html", "headline.html", "failures.html", "report.css"} <= set(names)
    assert all(env.autoescape(n) for n in [*names, None, "x.txt"])
    for name in names:
        source = env.loader.get_source(env, name)[0]
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup", source), name
    out = env.get_template("parts.html").module.table({"columns": [ATTACK], "numeric": set(), "rows": [[(ATTACK, ATTACK)]]})
    assert "<script>" not in out and out.count("&lt;script&gt;") == 2

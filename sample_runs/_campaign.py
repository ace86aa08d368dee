"""The "campaign" benchmark in sample_runs/campaign/: big enough for documents-as-the-unit statistics.

40 short generated documents (2-4 pages each, PyMuPDF through `_layout.Builder`, text layer present) in
five domains and ten document types, 8-12 questions each, and thirteen simulated runs:

- `ckpt-0410` and `ckpt-0520`: two checkpoints of one model. Both share each document's and each
  question's difficulty; `ckpt-0520` is better by about 8 points, spread over every document (not a
  few documents carrying the difference), so Compare runs calls the difference real by document.
- `ckpt-0100` ... `ckpt-1070` (SERIES, with the two above: ten checkpoints of one training run): rising
  fast, then gently; from `ckpt-0740` on, questions of reasoning_type=aggregation (summing a table) are
  mostly wrong -- one real, lasting drop in one slice, which the Trends page's alarm and
  `python -m scoring --trend` find at `ckpt-0740`.
- `vision-13b`: as good as `ckpt-0410` everywhere but on ONE slice, counting questions over charts
  (reasoning_type=counting & evidence_source=Chart), where it is mostly wrong: the Weak slices finder's
  top slice.
- `rag-baseline`, `small-3b`: weaker runs whose chance of being right is the same for every kind of
  question (only document and question difficulty vary): nothing for the finder to find.

Every fact a question asks about is written at a recorded anchor (`Builder.anchor`, `para(marks=...)`,
table cell anchors, chart captions), so evidence pages and quotes come from the layout. Randomness is
`random.Random(<fixed string>)` only; PDFs are saved with fixed metadata and no random /ID.
"""

from __future__ import annotations

import difflib
import json
import math
import random
import tempfile
from pathlib import Path

from _layout import Builder
from _prose import Prose

FOLDER = "campaign"
N_PER_DOMAIN = 8
URL_HOST = "campaign.docbench.example"

# domain: (prose lexicon, code, (doc_type, coarse) x2, table (metric, categories, noun), chart (metric, categories, noun))
DOMAINS = {
    "finance_business": dict(
        prose="finance", code="FIN", types=(("annual_report", "report"), ("investor_factsheet", "factsheet")),
        orgs=["Alderbank", "Greywater", "Kestrel", "Marlow", "Pennant", "Quayside", "Rookwood", "Stonebridge"],
        suffix="Holdings", table=("Revenue (EUR million)", ["Northern region", "Southern region", "Coastal region",
                                                            "Inland region", "Export markets", "Online channel",
                                                            "Wholesale"], "regions"),
        chart=("Operating margin (%)", ["Logistics", "Retail", "Property", "Energy", "Services", "Leasing",
                                        "Consulting"], "business lines")),
    "medical_clinical": dict(
        prose="medical", code="MED", types=(("clinical_summary", "report"), ("safety_report", "report")),
        orgs=["Bellvale", "Corrin", "Dunmore", "Elsworth", "Fairhollow", "Glenmoor", "Hartwell", "Ivybridge"],
        suffix="Trial", table=("Participants enrolled", ["Site Alder", "Site Birch", "Site Cedar", "Site Dogwood",
                                                         "Site Elm", "Site Fir", "Site Gorse"], "sites"),
        chart=("Adverse events reported", ["Cardiac", "Hepatic", "Renal", "Dermal", "Neural", "Ocular", "Gastric"],
               "body systems")),
    "legal_regulation": dict(
        prose="legal", code="LEG", types=(("regulatory_notice", "legal"), ("compliance_report", "report")),
        orgs=["Ashcombe", "Brantwood", "Calloway", "Denholm", "Eastmere", "Foxley", "Gorsedale", "Holloway"],
        suffix="Authority", table=("Inspections completed", ["Port office", "Rail office", "Air office",
                                                             "Road office", "Water office", "Grid office",
                                                             "Post office"], "offices"),
        chart=("Penalties issued", ["Transport", "Banking", "Telecoms", "Health", "Mining", "Farming", "Tourism"],
               "sectors")),
    "technical_engineering": dict(
        prose="technical", code="TEC", types=(("product_datasheet", "manual"), ("test_report", "report")),
        orgs=["Axton", "Brimley", "Corvex", "Delmar", "Everline", "Fenwick", "Galvia", "Hollis"],
        suffix="Pumps", table=("Rated flow (m3/h)", ["Model P-100", "Model P-150", "Model P-200", "Model P-250",
                                                     "Model P-300", "Model P-350", "Model P-400"], "models"),
        chart=("Noise level (dB)", ["Idle", "Low load", "Half load", "Full load", "Peak load", "Start-up",
                                    "Shut-down"], "operating points")),
    "scientific_academic": dict(
        prose="science", code="SCI", types=(("research_paper", "paper"), ("technical_note", "paper")),
        orgs=["Arden", "Beacon", "Cirrus", "Drumlin", "Ember", "Fjord", "Granite", "Heron"],
        suffix="Lab", table=("Accuracy (%)", ["Baseline", "Retrieval", "Re-ranking", "Chunking", "Distillation",
                                              "Ensemble", "Fine-tuning"], "methods"),
        chart=("Runtime (s)", ["Harbour set", "Meadow set", "Quarry set", "Orchard set", "Tundra set",
                               "Glacier set", "Canyon set"], "datasets")),
}
CITIES = ["Portmere", "Lindhaven", "Carrowby", "Eastwick", "Thornbury", "Wexmoor", "Saltmarsh", "Brackley",
          "Oakhurst", "Fernleigh", "Highcliff", "Redmarsh"]

# slot: (reasoning_type, evidence source or None, answer format, verification rule, difficulty weights)
SLOTS = {
    "docno": ("lookup", "Layout", "Str", "casefold_exact_match", (4, 2, 1, 0)),
    "city": ("lookup", "Text", "Str", "casefold_exact_match", (4, 2, 1, 0)),
    "year": ("temporal", "Text", "Str", "casefold_exact_match", (2, 3, 1, 0)),
    "table_lookup": ("lookup", "Table", "Float", "numeric_tolerance", (2, 3, 1, 0)),
    "table_count": ("counting", "Table", "Int", "numeric_tolerance", (0, 2, 3, 1)),
    "table_sum": ("aggregation", "Table", "Float", "numeric_tolerance", (0, 1, 3, 2)),
    "table_diff": ("comparison", "Table", "Float", "numeric_tolerance", (0, 2, 3, 1)),
    "chart_lookup": ("lookup", "Chart", "Float", "numeric_tolerance", (2, 3, 1, 0)),
    "chart_count": ("counting", "Chart", "Int", "numeric_tolerance", (0, 2, 3, 1)),
    "chart_count2": ("counting", "Chart", "Int", "numeric_tolerance", (0, 1, 3, 2)),
    "chart_rank": ("ranking", "Chart", "Str", "casefold_exact_match", (1, 3, 2, 0)),
    "unanswerable": ("unanswerable", None, "None", "exact_match", (0, 2, 3, 1)),
}
REQUIRED = ("docno", "table_lookup", "table_count", "table_sum", "chart_lookup", "chart_count", "chart_rank")
OPTIONAL = ("city", "year", "table_diff", "chart_count2", "unanswerable")
DIFFICULTIES = ("easy", "medium", "hard", "very_hard")

# runs: base logit, extra logit on the planted slice (counting & Chart), the checkpoint pair's shared draw
RUNS = {
    "ckpt-0520": dict(base=0.82, pair="ckpt"),
    "ckpt-0410": dict(base=0.55, pair="ckpt"),
    "vision-13b": dict(base=0.75, weak=-3.5),
    "rag-baseline": dict(base=0.15),
    "small-3b": dict(base=-0.35),
}
# The rest of the training run the two checkpoints belong to (steps from the names: scoring/steps.py):
# base logits rising fast, then gently; from DROP_FROM on, the planted slice's questions (reasoning_type=
# aggregation: summing a table's column) are much harder -- a real, lasting drop in one slice, which the
# trend's alarm finds at DROP_FROM. Every checkpoint shares the checkpoints' draw (SHARED_DRAW).
SERIES = {
    "ckpt-0100": -0.25, "ckpt-0200": 0.05, "ckpt-0300": 0.30, "ckpt-0630": 0.92, "ckpt-0740": 1.00,
    "ckpt-0850": 1.05, "ckpt-0960": 1.08, "ckpt-1070": 1.12,
}
for _name, _base in SERIES.items():
    RUNS[_name] = dict(base=_base, pair="ckpt")
DROP_FROM = "ckpt-0740"
DROP_SLICE = (("reasoning_type", "aggregation"),)
DROP_LOGIT = -3.2
DROPPED = [name for name, base in SERIES.items() if name >= DROP_FROM]
RUN_NAMES = list(RUNS)
PLANTED = (("reasoning_type", "counting"), ("evidence_source", "Chart"))
PLANTED_RUN = "vision-13b"
SHARED_DRAW = 0.75  # the checkpoints use the same uniform draw on this share of the questions


def _rng(*parts) -> random.Random:
    return random.Random("campaign|" + "|".join(map(str, parts)))


def _f1(x: float) -> str:
    return f"{x:.1f}"


# ------------------------------------------------------------------------------ documents
def _plan(index: int, domain: str, spec: dict) -> dict:
    """Everything one document states, drawn from its own seeded generator."""
    r = _rng("doc", index)
    k = index % N_PER_DOMAIN
    org = f"{spec['orgs'][k]} {spec['suffix']}"
    doc_type, coarse = spec["types"][k % 2]
    year = r.randrange(2004, 2019)
    pages = r.choice((2, 3, 3, 4))  # the chart is on the last page
    t_metric, t_cats, t_noun = spec["table"]
    c_metric, c_cats, c_noun = spec["chart"]
    t_rows = r.sample(t_cats, r.randint(5, 7))
    c_rows = r.sample(c_cats, r.randint(5, 7))
    table = [(c, round(r.uniform(20, 480), 1), round(r.uniform(20, 480), 1)) for c in t_rows]
    while not _thresholds([v for _, _, v in table], 50, 450, 25):
        table = [(c, round(r.uniform(20, 480), 1), round(r.uniform(20, 480), 1)) for c in t_rows]
    chart = [round(r.uniform(8, 92), 1) for _ in c_rows]
    while (len(set(chart)) < len(chart) or sorted(chart)[-1] - sorted(chart)[-2] < 2
           or not _thresholds(chart, 15, 85, 5)):
        chart = [round(r.uniform(8, 92), 1) for _ in c_rows]
    return dict(index=index, domain=domain, spec=spec, org=org, doc_type=doc_type, coarse=coarse, year=year,
                pages=pages, city=r.choice(CITIES), docno=f"CR-{spec['code']}-{1000 + 37 * index}",
                t_metric=t_metric, t_noun=t_noun, table=table, c_metric=c_metric, c_noun=c_noun,
                c_rows=c_rows, chart=chart, title=f"{org}: {doc_type.replace('_', ' ').capitalize()} {2019 + k % 5}",
                document_id=f"camp_{index + 1:04d}")


def _build_pdf(plan: dict, path: Path) -> tuple[dict, int]:
    """Lay the document out; returns its anchors and page count."""
    prose = Prose(plan["spec"]["prose"], seed=hash_seed(plan["document_id"]))
    short = plan["org"]
    b = Builder(body_size=10.0, footer=lambda i, n: (f"{short} | {plan['docno']}", f"{i}"))
    b.heading(plan["title"], level=0, toc=False)
    b.para(f"Document number: {plan['docno']}", font="hebo", size=10, marks={"docno": plan["docno"]})
    if plan["pages"] >= 3:
        b.para(prose.paragraph(4, 6))
    b.para(f"The work described here is led from our office in {plan['city']}. " + prose.paragraph(2, 3),
           marks={"city": f"office in {plan['city']}"})
    header = ["", "2022", "2023"]
    rows = [[c, _f1(a), _f1(v)] for c, a, v in plan["table"]]
    anchors = {f"t_{i}": (i, 2) for i in range(len(rows))}
    b.table(f"Table 1: {plan['t_metric']} by {plan['t_noun'][:-1] if plan['t_noun'].endswith('s') else plan['t_noun']}",
            header, rows, [0.5, 0.25, 0.25], anchors=anchors, caption_anchor="table_cap")
    b.para(prose.paragraph(3, 5))
    b.page_break()  # page 2: the background and the year the programme began
    b.heading("Background", level=1, toc=False)
    b.para(prose.paragraph(4, 6))
    b.para(f"The programme began in {plan['year']} and has been reviewed every year since. " + prose.paragraph(2, 4),
           marks={"year": f"began in {plan['year']}"})
    if plan["pages"] >= 4:  # page 3: discussion
        b.page_break()
        b.heading("Discussion", level=1, toc=False)
        for _ in range(3):
            b.para(prose.paragraph(4, 6))
    if plan["pages"] >= 3:  # the chart on a page of its own (the last)
        b.page_break()
        b.heading("Results", level=1, toc=False)
    b.bar_chart(f"Figure 1: {plan['c_metric']} by {plan['c_noun'][:-1]}", plan["c_rows"], plan["chart"], key="chart",
                ylabel=plan["c_metric"], ymax=100, ystep=20, height=200)
    b.para(prose.paragraph(3, 5))
    n = b.save(str(path), {"title": plan["title"], "author": plan["org"]})
    return b.anchors, n


def hash_seed(s: str) -> int:
    """A stable integer seed from a string (Python's hash() is salted per process)."""
    return int.from_bytes(s.encode("utf-8"), "big") % (2 ** 31 - 1)


# ------------------------------------------------------------------------------ questions
def _thresholds(values: list[float], lo: int, hi: int, step: int) -> list[tuple[int, int]]:
    """Round thresholds with 2..n-2 values above and none closer than step / 4 (a count a reader of the
    drawing can make): [(threshold, count above)]."""
    cands = []
    for t in range(lo, hi + 1, step):
        above = sum(v > t for v in values)
        if 2 <= above <= len(values) - 2 and all(abs(v - t) >= step / 4 for v in values):
            cands.append((t, above))
    return cands


def _threshold(values: list[float], r: random.Random, lo: int, hi: int, step: int) -> tuple[int, int]:
    return r.choice(_thresholds(values, lo, hi, step))


def _questions(plan: dict, anchors: dict) -> list[dict]:
    r = _rng("questions", plan["index"])
    slots = list(REQUIRED) + [s for s in OPTIONAL if r.random() < 0.6]
    while len(slots) < 8:
        slots.append(next(s for s in OPTIONAL if s not in slots))
    slots = [s for s in SLOTS if s in slots]  # a fixed order
    table, chart, c_rows = plan["table"], plan["chart"], plan["c_rows"]
    t_noun, c_noun = plan["t_noun"], plan["c_noun"]
    out = []
    for slot in slots:
        ev: list[tuple[str, list[str]]] = []
        if slot == "docno":
            q, a, ev = "What document number is printed under the title on the first page?", plan["docno"], [("docno", [])]
        elif slot == "city":
            q, a, ev = "From which town's office is the work described in the document led?", plan["city"], [("city", [])]
        elif slot == "year":
            q, a, ev = "In which year did the programme described in the document begin?", str(plan["year"]), [("year", [])]
        elif slot == "table_lookup":
            i = r.randrange(len(table))
            q = f"According to Table 1, what was the 2023 value of {plan['t_metric']} for {table[i][0]}?"
            a, ev = _f1(table[i][2]), [(f"t_{i}", ["Table 1"])]
        elif slot == "table_count":
            t, above = _threshold([v for _, _, v in table], r, 50, 450, 25)
            q = f"How many {t_noun} in Table 1 had a 2023 value of {plan['t_metric']} above {t}?"
            a, ev = str(above), [("table_cap", ["Table 1"])]
        elif slot == "table_sum":
            q = f"What is the total 2023 {plan['t_metric']} over all {t_noun} listed in Table 1?"
            a, ev = _f1(sum(v for _, _, v in table)), [("table_cap", ["Table 1"])]
        elif slot == "table_diff":
            i, j = r.sample(range(len(table)), 2)
            q = (f"By how much did the 2023 {plan['t_metric']} of {table[i][0]} differ from that of {table[j][0]} "
                 "(first minus second) in Table 1?")
            a, ev = _f1(table[i][2] - table[j][2]), [(f"t_{i}", ["Table 1"]), (f"t_{j}", ["Table 1"])]
        elif slot == "chart_lookup":
            i = r.randrange(len(chart))
            q = f"In Figure 1, what is the {plan['c_metric']} shown for {c_rows[i]}?"
            a, ev = _f1(chart[i]), [("chart", ["Figure 1"])]
        elif slot == "chart_count":
            t, above = _threshold(chart, r, 15, 85, 5)
            q = f"How many {c_noun} in Figure 1 have a {plan['c_metric']} above {t}?"
            a, ev = str(above), [("chart", ["Figure 1"])]
        elif slot == "chart_count2":
            t, above = _threshold(chart, r, 15, 85, 5)
            q = f"How many bars in Figure 1 are below {t}?"
            a, ev = str(len(chart) - above), [("chart", ["Figure 1"])]
        elif slot == "chart_rank":
            q = f"Which of the {c_noun} in Figure 1 has the highest {plan['c_metric']}?"
            a, ev = c_rows[max(range(len(chart)), key=chart.__getitem__)], [("chart", ["Figure 1"])]
        else:  # unanswerable: the document gives no 2019 figures
            q = f"What was the {plan['t_metric']} for {table[0][0]} in 2019?"
            a, ev = "Not answerable", []
        rtype, src, fmt, rule, weights = SLOTS[slot]
        items = []
        for key, elems in ev:
            anc = anchors[key]
            item = {"locator": f"Page {anc['page']}", "pages": [anc["page"]], "quote": anc["quote"],
                    "source_type": src, "evidence_kind": "supporting_excerpt", "page_numbering": "annotator_supplied",
                    "mentioned_elements": elems}
            if src == "Chart" and anc.get("bbox"):
                item["bbox"] = anc["bbox"]
            items.append(item)
        out.append(dict(slot=slot, question=q, value=a, format=fmt, rule=rule, reasoning_type=rtype,
                        sources=[src] if src else [], items=items,
                        difficulty=r.choices(DIFFICULTIES, weights=weights)[0],
                        wrong=_wrong(slot, a, plan, r)))
    return out


def _unlike(value: str, options: list[str]) -> list[str]:
    """The options that do not read as a misspelling of `value` (string similarity under 0.5, so that no
    string metric credits them)."""
    return [o for o in options if difflib.SequenceMatcher(None, o.lower(), value.lower()).ratio() < 0.5]


def _wrong(slot: str, value: str, plan: dict, r: random.Random) -> str:
    """A wrong answer of the kind a model gives: another cell or bar, a miscount, an invented value."""
    if slot in ("table_count", "chart_count", "chart_count2"):
        v = int(value)
        return str(v + 1 if v <= 1 or r.random() < 0.6 else v - 1)
    if slot in ("table_lookup", "table_sum", "table_diff", "chart_lookup"):
        v = float(value)
        return _f1(v * r.choice((0.7, 0.8, 1.25, 1.4)) + (3.0 if abs(v) < 5 else 0.0))
    if slot == "year":
        return str(int(value) + r.choice((-2, -1, 1, 2)))
    if slot == "docno":
        return f"AX-{r.randrange(100000, 999999)}"  # a reference number from elsewhere on the page, say
    if slot == "city":
        return r.choice(_unlike(value, CITIES))
    if slot == "chart_rank":
        return r.choice(_unlike(value, plan["c_rows"]) or [c for c in plan["c_rows"] if c != value])
    return _f1(r.uniform(20, 480))  # an invented figure for an unanswerable question


# ------------------------------------------------------------------------------ runs
def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _centred(values: dict[str, float], groupings: list[dict[str, str]], rounds: int = 4) -> dict[str, float]:
    """`values` with the mean of every group of each grouping taken out (alternately, a few rounds): a
    shared difficulty that makes no kind of question harder than another for every run."""
    out = dict(values)
    for _ in range(rounds):
        for group in groupings:
            sums: dict[str, list[float]] = {}
            for key, v in out.items():
                sums.setdefault(group[key], []).append(v)
            means = {g: sum(v) / len(v) for g, v in sums.items()}
            out = {key: v - means[group[key]] for key, v in out.items()}
    return out


def simulate(records: list[dict], wrong: dict[str, str]) -> dict[str, list[dict]]:
    """Each run's prediction rows. A question's chance of being right: sigmoid(run base + document effect +
    question effect [+ the planted slice's drop]). The document and question effects are shared by every
    run, and centred so that no domain, document type, reasoning type, evidence source, answer format or
    difficulty is harder than the rest for every run: only the planted slice is a weakness."""
    ids = [rec["question_id"] for rec in records]
    docs = {rec["question_id"]: rec["document"]["document_id"] for rec in records}
    meta = {rec["question_id"]: rec["metadata"] for rec in records}
    doc_type = {docs[q]: meta[q]["doc_type"] for q in ids}
    doc_effect = _centred({d: _rng("doc-effect", d).gauss(0.0, 0.35) for d in doc_type}, [doc_type])
    kind = {q: f"{meta[q]['reasoning_type']}|{','.join(meta[q]['evidence_sources'])}" for q in ids}
    difficulty = {q: meta[q]["difficulty"] for q in ids}
    q_effect = _centred({q: _rng("q-effect", q).gauss(0.0, 0.4) for q in ids}, [kind, difficulty])
    out: dict[str, list[dict]] = {name: [] for name in RUNS}
    for rec in records:
        qid = rec["question_id"]
        planted = rec["metadata"]["reasoning_type"] == "counting" and "Chart" in rec["metadata"]["evidence_sources"]
        dropped = rec["metadata"]["reasoning_type"] == DROP_SLICE[0][1]
        shared_r = _rng("shared", qid)
        shared_u, use_shared = shared_r.random(), shared_r.random() < SHARED_DRAW
        for name, spec in RUNS.items():
            logit = spec["base"] + doc_effect[docs[qid]] + q_effect[qid] + (spec.get("weak", 0.0) if planted else 0.0)
            if dropped and name in DROPPED:
                logit += DROP_LOGIT
            u = shared_u if spec.get("pair") and use_shared else _rng("u", name, qid).random()
            right = u < _sigmoid(logit)
            out[name].append({"question_id": qid, "prediction": rec["answer"]["value"] if right else wrong[qid]})
    return out


# ------------------------------------------------------------------------------ build
def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def build(out: Path, write) -> dict:
    """Write campaign/ under `out`: documents.jsonl, docs/*.pdf, qa_single_doc.jsonl, runs/*.jsonl.
    Returns counts (documents, questions, pages)."""
    root = out / FOLDER
    (root / "docs").mkdir(parents=True, exist_ok=True)
    docs, records, wrong = [], [], {}
    pages = 0
    index = 0
    for domain, spec in DOMAINS.items():
        for _ in range(N_PER_DOMAIN):
            plan = _plan(index, domain, spec)
            pdf = root / "docs" / f"{plan['document_id']}.pdf"
            anchors, n = _build_pdf(plan, pdf)
            pages += n
            url = f"https://{URL_HOST}/{plan['domain']}/{plan['document_id']}.pdf"
            docs.append({"document_id": plan["document_id"], "url": url, "title": plan["title"], "domain": domain,
                         "page_count": n, "file_size_bytes": pdf.stat().st_size, "source_host": URL_HOST,
                         "doc_type": plan["doc_type"], "pdf_type": "native_digital",
                         "public_metadata": {"language": "en"}})
            for q in _questions(plan, anchors):
                qid = f"campaign_single_{len(records) + 1:06d}"
                unans = q["format"] == "None"
                evp = sorted({it["pages"][0] for it in q["items"]})
                records.append({
                    "question_id": qid, "task_type": "single_doc", "question": q["question"],
                    "answer": {"value": q["value"], "format": q["format"], "verification_rule": q["rule"]},
                    "document": {"document_id": plan["document_id"], "url": url, "evidence_pages": evp,
                                 "evidence_page_numbering": "pdf_index", "evidence_items": q["items"]},
                    "metadata": {"domain": domain, "difficulty": q["difficulty"], "reasoning_type": q["reasoning_type"],
                                 "doc_type": plan["doc_type"], "doc_type_coarse": plan["coarse"],
                                 "evidence_sources": q["sources"],
                                 "evidence_annotation_status": "not_answerable" if unans else "has_evidence",
                                 "is_unanswerable": unans, "n_context_documents": 1, "n_evidence_documents":
                                     0 if unans else 1}})
                wrong[qid] = q["wrong"]
            index += 1
    write(root / "documents.jsonl", _jsonl(docs))
    write(root / "qa_single_doc.jsonl", _jsonl(records))
    for name, rows in simulate(records, wrong).items():
        write(root / "runs" / f"{name}.jsonl", _jsonl(rows))
    return {"documents": len(docs), "questions": len(records), "pages": pages}


if __name__ == "__main__":  # python sample_runs/_campaign.py [OUT]: a quick look, into a temp folder by default
    import sys

    def _write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="campaign-"))
    print(target, build(target, _write))

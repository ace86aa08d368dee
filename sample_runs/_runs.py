"""Simulated prediction files. Each system gets a skill profile; for each question a seeded
random draw (seed = system name + question key, stdlib `random` with a string seed, which is
stable across Python processes) decides whether it answers correctly and in which surface form,
or which kind of mistake it makes. A few hand-picked rows (OVERRIDES) pin down the cases the
dashboard is meant to show: metric disagreements, scoring-profile differences, failure statuses
and unsafe text.
"""

from __future__ import annotations

import random
import re

SYSTEMS = {
    # name: skill profile and file shape
    "longctx-ocr": dict(p=0.77, p_visual=0.74, p_na=0.85, style="concise", field="prediction",
                        shape="jsonl", ext="jsonl", pages=True),
    "longctx-img": dict(p=0.80, p_visual=0.36, p_na=0.80, style="concise", field="model_answer",
                        shape="array", ext="json", pages=True, misread=True),
    "small-9b": dict(p=0.42, p_visual=0.32, p_na=0.35, style="small", field="answer", shape="jsonl",
                     ext="jsonl", id_field="id"),
    "agent-pipeline": dict(p=0.70, p_visual=0.62, p_na=0.70, style="verbose", field="response",
                           shape="items", ext="json"),
    # extra systems: scored into results/ only, their prediction files are not kept
    "simpledoc-gpt": dict(p=0.66, p_visual=0.55, p_na=0.75, style="concise", field="prediction",
                          shape="jsonl", ext="jsonl", extra=True),
    "mdocagent": dict(p=0.58, p_visual=0.50, p_na=0.60, style="semi", field="answer", shape="jsonl",
                      ext="jsonl", extra=True),
    "qwen-35b-img": dict(p=0.55, p_visual=0.30, p_na=0.50, style="concise", field="model_answer",
                         shape="array", ext="json", extra=True, misread=True),
}
RUN_NAMES = [n for n, s in SYSTEMS.items() if not s.get("extra")]
EXTRA_NAMES = [n for n, s in SYSTEMS.items() if s.get("extra")]

MISSING = {("agent-pipeline", "leg_delegated"), ("agent-pipeline", "x_first")}

OVERRIDES = {
    # profile differences in the official (xldocbench-1519) report of longctx-ocr
    ("longctx-ocr", "leg_aldoria_nl"): "89.9%",          # gold "89,9": 1519 reads 899, default 89.9
    ("longctx-ocr", "x_weight"): "8 160 kg",             # 1519 glues "8 160" into 8160, default reads 8
    ("longctx-ocr", "leg_vessels"): "5,210",
    ("longctx-ocr", "fin_rev_5y"): "EUR 6,228.0 million",
    ("longctx-ocr", "fin_co2_pct"): "26.9%",
    ("longctx-ocr", "fin_op_recon"): "0",
    ("longctx-ocr", "nar_lamp"): "A",                     # gold "A" normalises to "" -> 0 everywhere
    ("longctx-ocr", "leg_relief"): "No - 18 bar exceeds the 17.6 bar limit (110% of 16 bar).",
    ("longctx-ocr", "med_placebo_pct"): "33.3%",
    ("longctx-ocr", "fin_margin_rank"): "Warehousing",
    ("longctx-ocr", "med_enrol400"): "Month 9",
    # image model: digits misread in tables and charts, a word-order swap
    ("longctx-img", "sci_colpali"): "LegalLens and LongDocQA",
    ("longctx-img", "fin_ws_growth"): "38.9",
    ("longctx-img", "leg_aldoria_nl"): "89,9",
    ("longctx-img", "tec_weight_diff"): "510",
    ("longctx-img", "sci_gap20"): "100-200",
    ("longctx-img", "fin_co2_choice"): "B",
    # small model: near misses, formats, a refusal, a nested answer object
    ("small-9b", "fin_emp_decline"): "United Kingdom and Germany",
    ("small-9b", "leg_small_fee"): "4.6e2",
    ("small-9b", "nar_dog"): "Boson",
    ("small-9b", "med_mmrm"): "geographical region",
    ("small-9b", "leg_lowest"): "Dunmarck",
    ("small-9b", "tec_area_per_kg"): "HX-240",
    ("small-9b", "leg_lifting"): "six months",
    ("small-9b", "fin_co2_pct"): "0.269",
    ("small-9b", "sci_gap20"): "200\u2013500 pages",
    ("small-9b", "tec_torque"): {"value": "680 Nm"},
    ("small-9b", "fin_days_ye"): {"value": "73"},
    ("small-9b", "med_ole_dose"): "75 mg or 50 mg",
    ("small-9b", "fin_newest_dir"): "Not answerable",
    ("small-9b", "sci_na_gpu"): "NVIDIA A100",
    ("small-9b", "x_na_fees"): "N/A",
    # agent pipeline: verbose, markdown, statuses, unsafe text
    ("agent-pipeline", "fin_margin_rank"): "The answer is **Warehousing**: its 2023 operating margin is 17.13% "
                                            "(37.9 / 221.3), just ahead of Container Terminals at 17.06% "
                                            "(92.4 / 541.7).",
    ("agent-pipeline", "tec_torque"): "<script>alert(1)</script> The answer is 680 Nm (M30 tie bolts, Table 6-1).",
    ("agent-pipeline", "tec_docno"): "![x](http://example.invalid/a.png) The footer reads **KTS-IOM-HX400-EN Rev. D**.",
    ("agent-pipeline", "leg_vessels"): {"status": "context_overflow", "response": ""},
    ("agent-pipeline", "leg_na_fine"): {"status": "context_overflow", "response": ""},
    ("agent-pipeline", "med_na_cro"): {"status": "error", "response": "Not answerable"},
    ("agent-pipeline", "sci_questions"): {"status": "error",
                                          "response": "Tool call failed: page_search timed out after 60 s"},
    ("agent-pipeline", "fin_days_ye"): "The answer is: 74 days",
    ("agent-pipeline", "nar_lost"): "- Seven men were aboard the Clara Vane\n- Five were brought ashore alive\n"
                                    "- **Answer: 2**",
    ("agent-pipeline", "leg_eif"): "The Regulation enters into force on **5 December 2023** (twentieth day after "
                                   "publication on 15 November 2023).",
    ("agent-pipeline", "x_weight"): "Total dry weight: **8.16 × 10^3 kg** (24 × 340 kg)",
    ("agent-pipeline", "fin_rev_5y"): "Answer: 6228",
}

# Rows the evidence viewer is meant to show (dashboard/evidence/locate.py): a wrong-page answer (a value
# printed on another page than the gold evidence, with the run citing that page) and an answer that
# appears nowhere in its document. The texts are the ones the seeded draw gives; pinning them keeps
# the cases when the skill profiles change. `pages` replaces the row's cited evidence_pages.
EVIDENCE_CASES = {
    ("longctx-ocr", "med_mmrm"): {"text": "prior preventive failure", "pages": [4]},  # on p. 4; gold p. 24, 26
    ("longctx-ocr", "med_cf_1to1"): {"text": "306"},  # nowhere in doc_000002
}

DIGIT_SWAP = {"3": "8", "8": "3", "1": "7", "7": "1", "5": "6", "6": "5", "0": "8", "9": "4", "4": "9", "2": "7"}


def _choice_text(question, letter):
    m = re.search(rf"\b{letter}\) (.*?)(?= [A-D]\) |$)", question)
    return m.group(1) if m else ""


def _typo(s, rng):
    letters = [i for i, c in enumerate(s) if c.isalpha()]
    if len(letters) < 4:
        return s
    i = rng.choice(letters[1:-1])
    if rng.random() < 0.5:
        return s[:i] + s[i + 1:]
    return s[:i] + s[i + 1] + s[i] + s[i + 2:] if i + 2 <= len(s) else s


def _num(v):
    return float(v.replace(",", ".")) if "," in v and "." not in v and len(v.split(",")[1]) != 3 else \
        float(v.replace(",", "").rstrip("%"))


def _fmt_like(x, gold):
    dec = 0
    g = gold.rstrip("%")
    if "." in g or ("," in g and len(g.split(",")[1]) != 3):
        dec = len(re.split(r"[.,]", g)[-1])
    s = f"{x:.{dec}f}"
    if "," in g and len(g.split(",")[1]) != 3:
        s = s.replace(".", ",")
    return s + ("%" if gold.endswith("%") else "")


def _misread(v, rng):
    digits = [i for i, c in enumerate(v) if c.isdigit()]
    if not digits:
        return v
    i = rng.choice(digits)
    return v[:i] + DIGIT_SWAP[v[i]] + v[i + 1:]


def correct_surface(h, question, rng, style):
    v = h["value"]
    fmt = h["format"]
    unit = h["unit"]
    opts = [v, v]
    if fmt in ("Int", "Float"):
        if unit:
            opts.append(f"{v} {unit}")
        if h["thousands"]:
            opts.append(h["thousands"])
    elif h["rule"] == "choice_exact_match":
        opts.append(f"{v}) {_choice_text(question, v)}")
    else:
        opts.append(v if v.lower() == v else v.lower())
    opts += h["alts"]
    x = rng.choice(opts)
    return wrap(x, h, rng, style)


REFUSALS = ("Not answerable", "The document does not provide this information.")


def wrap(x, h, rng, style):
    if x in REFUSALS:  # refusals are never dressed up as "The answer is ..."
        return x
    page = h["pages"][0] if h["pages"] else None
    if style == "verbose":
        forms = ["The answer is {x}.", "**{x}**", "Based on the document, the answer is **{x}**.",
                 "- **Answer:** {x}\n- **Evidence:** page {p}", "{x}"]
        f = rng.choice(forms if page else [f for f in forms if "{p}" not in f])
        return f.format(x=x, p=page)
    if style == "semi":
        return rng.choice(["{x}", "{x}", "Answer: {x}", "The answer is {x}"]).format(x=x)
    if style == "small":
        return rng.choice(["{x}", "{x}", "{x}."]).format(x=x)
    return x


def wrong_surface(h, question, rng, prof, visual):
    v = h["value"]
    fmt = h["format"]
    numeric = fmt in ("Int", "Float")
    kinds = [("distractor", 0.55), ("refuse", 0.08), ("near", 0.17), ("far", 0.12), ("approx", 0.08)]
    if prof["style"] == "small":
        kinds = [("distractor", 0.4), ("refuse", 0.2), ("near", 0.15), ("far", 0.15), ("approx", 0.1)]
    if prof.get("misread") and visual:
        kinds = [("misread", 0.5), ("distractor", 0.35), ("near", 0.1), ("refuse", 0.05)]
    r = rng.random()
    acc = 0.0
    kind = kinds[-1][0]
    for k, w in kinds:
        acc += w
        if r < acc:
            kind = k
            break
    if kind == "refuse":
        return rng.choice(["Not answerable", "The document does not provide this information."])
    if kind == "misread":
        x = _misread(v, rng) if any(c.isdigit() for c in v) else rng.choice(h["wrong"])
        return x
    if kind == "near":
        if h["swap"]:
            return h["swap"]
        if h["near"]:
            return h["near"]
        if numeric and _num(v) != 0:
            kind = "far"
        elif not numeric and h["rule"] != "choice_exact_match":
            return _typo(v, rng)
        else:
            kind = "distractor"
    if kind in ("far", "approx") and numeric and _num(v) != 0:
        g = _num(v)
        f = rng.uniform(0.015, 0.045) if kind == "approx" else rng.uniform(0.08, 0.4)
        x = g * (1 + f * rng.choice([-1, 1]))
        if fmt == "Int":
            x = round(x)
            if x == round(g):
                x += 1
        return _fmt_like(x, v)
    return rng.choice(h["wrong"]) if h["wrong"] else "Not answerable"


def refusal(prof, rng):
    if prof["style"] == "verbose":
        return rng.choice(["The answer cannot be determined from the document.",
                           "**Not answerable** - the document does not contain this information.",
                           "Not answerable"])
    if prof["style"] == "small":
        return rng.choice(["Not answerable", "Not answerable", "not answerable"])
    return "Not answerable"


def simulate(name, gold_records, hints):
    """Return the rows of one system: list of (question_id, row dict) in gold order."""
    prof = SYSTEMS[name]
    rows = []
    for rec in gold_records:
        qid = rec["question_id"]
        h = hints[qid]
        if (name, h["key"]) in MISSING:
            continue
        rng = random.Random(f"{name}|{h['key']}")
        visual = any(s in ("Table", "Chart") for s in h["sources"])
        p = prof["p_visual"] if visual else prof["p"]
        if h["difficulty"] == "very_hard":
            p -= 0.12
        status = None
        ok = None
        if h["format"] == "None":
            ok = rng.random() < prof["p_na"]
            text = refusal(prof, rng) if ok else wrap(rng.choice(h["wrong"]), h, rng, prof["style"])
        else:
            ok = rng.random() < p
            if ok:
                text = correct_surface(h, rec["question"], rng, prof["style"])
            else:
                text = wrap(wrong_surface(h, rec["question"], rng, prof, visual), h, rng, prof["style"])
        ov = OVERRIDES.get((name, h["key"]))
        if isinstance(ov, dict) and "status" in ov:
            status = ov["status"]
            text = ov["response"]
            ok = False
        elif ov is not None:
            text = ov
            ok = True  # pages of the gold are reported for pinned rows
        case = EVIDENCE_CASES.get((name, h["key"]))
        if case is not None:
            text, ok = case["text"], False
        row = _row(name, prof, qid, text, status, ok, h, rng)
        if case is not None and "pages" in case:
            row["evidence_pages"] = list(case["pages"])
        rows.append((qid, row))
    return rows


def _row(name, prof, qid, text, status, ok, h, rng):
    idf = prof.get("id_field", "question_id")
    row = {} if prof["shape"] == "items" else {idf: qid}
    row[prof["field"]] = text
    if status:
        row["status"] = status
    if prof.get("pages"):
        if rng.random() < 0.9:
            gold_pages = h["pages"]
            n = h["page_counts"][0]
            if ok and gold_pages:
                pages = list(gold_pages)
                if rng.random() < 0.25:
                    extra = min(n, gold_pages[-1] + 1)
                    pages = sorted(set(pages + [extra]))
            elif gold_pages:
                pages = sorted({max(1, min(n, gold_pages[0] + rng.choice([-7, -3, -1, 2, 5, 11])))})
            elif ok:
                pages = []
            else:
                pages = [rng.randint(1, n)]
            row["evidence_pages"] = pages
        if name == "longctx-ocr" and ok and h["bbox"]:
            b = h["bbox"]
            j = [round(rng.uniform(-4, 4), 1) for _ in range(4)]
            row["evidence"] = [{"document_id": h["doc_ids"][0], "page": h["pages"][0],
                                "bbox": [round(b[0] + j[0], 1), round(b[1] + j[1], 1),
                                         round(b[2] + j[2], 1), round(b[3] + j[3], 1)]}]
    if prof["shape"] == "items":
        row.setdefault("status", "success")
        row["steps"] = rng.randint(3, 14)
    return row


def render(name, rows):
    """Serialise the rows in the system's file shape; returns (file name, text)."""
    import json

    prof = SYSTEMS[name]
    fname = f"{name}.{prof['ext']}"
    if prof["shape"] == "jsonl":
        return fname, "".join(json.dumps(r, ensure_ascii=False) + "\n" for _, r in rows)
    if prof["shape"] == "array":
        return fname, json.dumps([r for _, r in rows], ensure_ascii=False, indent=1) + "\n"
    items = {qid: r for qid, r in rows}
    doc = {"pipeline": {"name": "agent-pipeline", "version": "0.3.1", "max_steps": 16},
           "items": items}
    return fname, json.dumps(doc, ensure_ascii=False, indent=1) + "\n"

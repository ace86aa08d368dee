"""Deterministically generate a large, realistic XL-DocBench-style gold file and a matching run.

    .venv/bin/python bench/make_predictions.py --n 1000000 [--out bench/out] [--seed 1519]

Writes `<out>/gold_<n>.jsonl` (release schema, minimal but realistic fields: question_id,
task_type, question, answer{value, format, verification_rule},
metadata{domain, reasoning_type, difficulty, doc_type, evidence_sources}) and
`<out>/predictions_<n>.jsonl` (one prediction per question; question_id, prediction, status).

Golds are 1-10 words in every format of the release: Str names and phrases
(casefold_exact_match), option letters (Str / choice_exact_match, a few `single_choice`), Int and
Float (numeric_tolerance), percentages (Float / percentage_exact, with "%", without, one decimal
comma style), "Not answerable" (None / exact_match), Yes/No (Bool). Predictions are 1-200
words: a tenth are verbose ("The answer is ..." and a long explanation), the rest are short
variations: exact, case/punctuation changes, near-miss spellings, wrong numbers, refusals,
reordered or partial words, "Answer: X", option letters in brackets. About 1% carry the status
context_overflow and 0.5% error. Same --n and --seed give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

FIRST = ["Violetta", "Ana", "Pieter", "Marta", "José", "Ingrid", "Kwame", "Li", "Sofia", "Jürgen",
         "Amara", "Olivier", "Hana", "Tomasz", "Priya", "Lucía", "Mehmet", "Astrid", "Chen", "Farah"]
LAST = ["Prigozhina", "Müller-Lüdenscheidt", "de Vries", "Kowalski", "Okafor", "Nakamura", "García",
        "Lindqvist", "Haddad", "Rossi", "Novák", "Fitzgerald", "Ivanova", "Nguyen", "Silva", "Dubois"]
NOUNS = ["protection", "ecosystem", "enforcement", "supervisor", "committee", "revenue", "margin",
         "clinical", "trial", "endpoint", "regulation", "directive", "turbine", "pressure", "valve",
         "liability", "dividend", "court", "procedure", "preliminary", "ruling", "dosage", "cohort",
         "narrative", "chapter", "protagonist", "standard", "tolerance", "assembly", "audit", "board",
         "capital", "reserve", "statement", "framework", "annex", "article", "section", "table", "figure"]
ADJ = ["annual", "net", "total", "primary", "secondary", "european", "national", "clinical", "legal",
       "operating", "consolidated", "adjusted", "median", "relative", "technical", "structural"]
FILLER = ("the document states that in the reporting period the figure shown in table was derived from "
          "section of annual report after adjusting for currency effects and one off items which the "
          "authors note are not comparable with previous years according to appendix page notes and "
          "therefore value reported here reflects consolidated basis used by committee its final "
          "assessment while other sources give slightly different numbers").split()
REFUSALS = ["Not answerable", "The question is unanswerable from the document.", "This cannot be determined.",
            "There is not enough information.", "N/A", "None", "I can't determine that from the pages.",
            "Insufficient evidence."]
DOMAINS = ["finance_business", "legal_regulation", "medical_clinical", "narrative_literature",
           "scientific_academic", "technical_engineering"]
DOMAIN_W = [333, 311, 294, 89, 218, 274]
REASONING = ["comparison", "reference_chain", "ranking", "coverage", "temporal", "compliance",
             "aggregation", "set_difference", "reconciliation", "counterfactual", "consistency"]
DOC_TYPES = ["annual_report", "report", "paper", "regulation", "standard", "clinical_guideline", "book", "policy"]
SOURCES = ["Table", "Text", "Chart", "Figure", "Image"]

# (kind, format, rule, weight): roughly the strict release's rule x format mix
KINDS = [
    ("name", "Str", "casefold_exact_match", 25),
    ("phrase", "Str", "casefold_exact_match", 36),
    ("choice", "Str", "choice_exact_match", 1),
    ("single_choice", "single_choice", "choice_exact_match", 1),
    ("int", "Int", "numeric_tolerance", 15),
    ("float", "Float", "numeric_tolerance", 5),
    ("percent", "Float", "percentage_exact", 3),
    ("percent_fmt", "Percentage", "percentage_exact", 1),
    ("none", "None", "exact_match", 12),
    ("bool", "Bool", "casefold_exact_match", 1),
]
KIND_W = [k[3] for k in KINDS]


def _gold_value(rng: random.Random, kind: str) -> str:
    if kind == "name":
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    if kind == "phrase":
        n = rng.randint(1, 10)
        words = [rng.choice(ADJ if i == 0 and n > 1 else NOUNS) for i in range(n)]
        return " ".join(words).capitalize() if rng.random() < 0.5 else " ".join(words)
    if kind in ("choice", "single_choice"):
        return rng.choice("ABCD")
    if kind == "int":
        v = rng.choice([rng.randint(-20, 20), rng.randint(0, 1000), rng.randint(1000, 5_000_000)])
        return f"{v:,}" if v >= 10_000 and rng.random() < 0.3 else str(v)
    if kind == "float":
        return f"{rng.uniform(0, 500):.{rng.randint(1, 3)}f}"
    if kind in ("percent", "percent_fmt"):
        v = f"{rng.uniform(0, 100):.{rng.randint(0, 2)}f}"
        r = rng.random()
        return v + "%" if r < 0.75 else (v.replace(".", ",") if r < 0.8 else v)
    if kind == "none":
        return "Not answerable"
    return rng.choice(["Yes", "No"])


def _typo(rng: random.Random, text: str) -> str:
    if len(text) < 2:
        return text + "s"
    chars = list(text)
    for _ in range(rng.randint(1, 2)):
        i = rng.randrange(len(chars))
        op = rng.random()
        if op < 0.4:
            chars[i] = rng.choice("aeioulnrst")
        elif op < 0.7:
            del chars[i]
            if not chars:
                chars = ["x"]
        else:
            chars.insert(i, rng.choice("aeioulnrst"))
    return "".join(chars)


def _wrong_number(rng: random.Random, gold: str) -> str:
    digits = "".join(c for c in gold if c.isdigit() or c == ".") or "0"
    try:
        v = float(digits.rstrip(".") or 0)
    except ValueError:
        v = 0.0
    w = v * rng.choice([0.5, 0.9, 0.96, 1.04, 1.1, 2.0, 10.0]) + rng.choice([0, 1, -1])
    text = f"{w:.{rng.randint(0, 2)}f}"
    return text + ("%" if "%" in gold else "")


def _explanation(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(words))


def _prediction(rng: random.Random, kind: str, gold: str) -> str:
    if rng.random() < 0.10:  # verbose: 20-200 words
        core = gold if rng.random() < 0.6 else (_typo(rng, gold) if rng.random() < 0.5 else rng.choice(REFUSALS))
        total = rng.randint(20, 200)
        body = _explanation(rng, max(1, total - len(core.split()) - 3))
        return f"The answer is {core}. {body[0].upper()}{body[1:]}."
    r = rng.random()
    if r < 0.30:  # exact, maybe case changed
        return gold if rng.random() < 0.7 else gold.upper()
    if r < 0.42:  # near-miss spelling
        return _typo(rng, gold)
    if r < 0.52:  # wrong / rounded number, or a different name
        if kind in ("int", "float", "percent", "percent_fmt"):
            return _wrong_number(rng, gold)
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}" if kind == "name" else " ".join(rng.choice(NOUNS) for _ in range(rng.randint(1, 4)))
    if r < 0.62:  # refusal
        return rng.choice(REFUSALS)
    if r < 0.70:  # reordered / partial words
        words = gold.split()
        rng.shuffle(words)
        return " ".join(words[: max(1, len(words) - rng.randint(0, 1))])
    if r < 0.80:  # prefixed
        return rng.choice(["Answer: ", "answer is ", "The answer is: ", "**Answer:** "]) + gold
    if r < 0.88:  # with units / context
        return f"{gold} {rng.choice(['cases', 'EUR million', 'days', 'percent', 'in 2023', '(Table 3)'])}"
    if r < 0.94:  # option / boolean style answers
        return rng.choice([f"Option {rng.choice('ABCD')}", f"({gold})", rng.choice(["Yes", "No", "yes, it is", "Incorrect"])])
    return _explanation(rng, rng.randint(1, 12))  # short unrelated text


def generate(n: int, out: Path = OUT, seed: int = 1519) -> tuple[Path, Path]:
    """Write gold_<n>.jsonl and predictions_<n>.jsonl into `out` (streamed; small memory)."""
    out.mkdir(parents=True, exist_ok=True)
    gold_path = out / f"gold_{n}.jsonl"
    pred_path = out / f"predictions_{n}.jsonl"
    rng = random.Random(seed)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    n_cross = max(1, n // 10)
    with open(gold_path, "w", encoding="utf-8", newline="\n") as g, open(pred_path, "w", encoding="utf-8", newline="\n") as p:
        for i in range(n):
            split = "cross_doc" if i % 10 == 9 and n_cross else "single_doc"
            qid = f"adubench_{'cross' if split == 'cross_doc' else 'single'}_{i:07d}"
            kind, fmt, rule, _ = rng.choices(KINDS, KIND_W)[0]
            value = _gold_value(rng, kind)
            sources = [] if kind == "none" else rng.sample(SOURCES, rng.randint(1, 2))
            question = f"What is the {rng.choice(ADJ)} {rng.choice(NOUNS)} reported for the {rng.choice(NOUNS)}?"
            g.write(dumps({
                "question_id": qid, "task_type": split, "question": question,
                "answer": {"value": value, "format": fmt, "verification_rule": rule},
                "metadata": {
                    "domain": rng.choices(DOMAINS, DOMAIN_W)[0],
                    "reasoning_type": "unanswerable" if kind == "none" else rng.choice(REASONING),
                    "difficulty": "very_hard" if rng.random() < 0.45 else "hard",
                    "doc_type": rng.choice(DOC_TYPES),
                    "evidence_sources": sources,
                },
            }) + "\n")
            s = rng.random()
            status = "context_overflow" if s < 0.01 else ("error" if s < 0.015 else "success")
            p.write(dumps({"question_id": qid, "prediction": _prediction(rng, kind, value), "status": status}) + "\n")
    return gold_path, pred_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=1519)
    args = ap.parse_args()
    gold, preds = generate(args.n, args.out, args.seed)
    print(f"wrote {gold} ({gold.stat().st_size / 1e6:.1f} MB) and {preds} ({preds.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

"""The command line's column path (scoring/columnar.py, loaders.load_gold_columns and
load_prediction_columns) against its record path, byte for byte.

`python -m scoring` reads, scores and writes in columns; the record path (`evaluate` +
`write_files`) is what --categories-csv takes, and what the columns replaced. Here both run on the same generated inputs -- every answer format, statuses,
missing and extra ids, repeated ids, unicode, damaged rows of every kind the loaders report,
metadata of every JSON type, several gold files, JSON and JSONL prediction files, each profile
the command line scores itself -- and must print the same lines, exit with the same code and
write the same report and CSV bytes. The pieces are compared too: the column loaders with
`load_gold` / `load_predictions`, the batch scorer with `decide`. (The JSON-lines reader is
pinned on its own in test_loaders_jsonl.py.)
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
from pathlib import Path

import pytest

from scoring import cli, columnar
from scoring.loaders import (
    ABSENT,
    META_KEYS,
    load_gold,
    load_gold_columns,
    load_prediction_columns,
    load_predictions,
)
from scoring.metrics import decide, scores_of
from scoring.profiles import get_profile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import make_predictions  # noqa: E402

FORMATS = ["Str", "Int", "Float", "None", "Bool", "Boolean", "Percentage", "single_choice", "", None, "Weird", 7]
RULES = ["casefold_exact_match", "numeric_tolerance", "percentage_exact", "choice_exact_match", "exact_match", "",
         "Numeric_Tolerance", None]
VALUES = ["Violetta Prigozhina", "12.5", "1,234", "42", "0", "-3", "17%", "12,5 %", "Not answerable", "Yes", "No", "B",
          "the Annual report", "A. B-C", "Zürich – Genève", "東京タワー", "", "  spaced  out  ", "x" * 70, "naïve café",
          "ΟΔΟΣ", "Answer: 12", "the answer is yes", "50.0", "nan", "1e3", "ǅemal", 3, 2.5, True, None,
          ["a", "b"], {"k": 1}]
PREDICTIONS = ["Violetta Prigozhina", "violetta prigozina", "12.50", "1234", "42 EUR million", "The answer is 42.",
               "Answer: 17 %", "17", "not answerable", "This cannot be determined.", "yes", "Incorrect", "(B)",
               "Option B", "an annual report", "Zurich - Geneve", "東京タワー", "", "   ", "x" * 69, "NAIVE CAFE",
               "οδος", "A.", "the", "a an the", "12,5", "Answer:\n12", "line\r\nbreak", 'say "quoted", ok', "-0",
               "1e3", "inf", "ǅEMAL", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", 12, 1.5, False, None, ["x"], {"v": 2}]
STATUSES = ["success", "context_overflow", "vision_unsupported", "error", "", None, "SUCCESS", "timeout", 5]
META_VALUES = ["finance_business", "", None, 0, 0.0, False, True, 1, "legal", ["Table", "Text"], ["Table", "Table"],
               [], ["", None], "Table", {"x": 1}, ABSENT]
DAMAGED_GOLD = ['{"question_id": "broken"', "not json at all", "[1, 2, 3]", '"a string"', "{}", '{"answer": {"value": "x"}}',
                '{"question_id": "   ", "answer": {"value": "x"}}', '{"question_id": 12345, "answer": {"value": "int id"}}',
                '{"global_id": "gid-1", "answer": {"value": "fallback id"}}',
                '{"question_id": "q-noanswer"}', '{"question_id": "q-answer-str", "answer": "just text"}',
                '{"question_id": "q-meta-list", "answer": {"value": "v"}, "metadata": [1, 2]}',
                '{"question_id": "q-nan", "answer": {"value": NaN, "format": "Float"}}',
                '{"question_id": "q-big", "answer": {"value": 123456789012345678901234567890, "format": "Int"}}',
                '{"question_id": "q-surrogate", "answer": {"value": "\\ud800 lone"}}',
                '{"question_id": "q-docs", "answer": {"value": "d"}, "documents": [{"document_id": "doc1", "evidence_pages": [0, 2]}]}',
                '{"question_id": "q-docs-ok", "answer": {"value": "d"}, "document": {"document_id": "doc2", "evidence_pages": [3]}}',
                '{"question_id": "q-docs-bad", "answer": {"value": "d"}, "documents": "doc3"}',
                '{"questionId": "dv-1", "answers": ["0.28", "28%"], "question": "DocVQA style", "docId": 7}',
                '{"question_id": "q-task", "task_type": ["a", "b"], "answer": {"value": "t"}}',
                '{"question_id": "q-task2", "task_type": null, "answer": {"value": "t", "format": null}}']
DAMAGED_PREDICTIONS = ['{"question_id": "broken"', "nonsense", "[1]", "{}", '{"prediction": "no id"}',
                       '{"id": "q00003", "answer": {"value": "from answer object"}}',
                       '{"question_id": "q00004", "response": "other field"}',
                       '{"question_id": "q00005", "prediction": "with pages", "evidence_pages": [1, 0, "x"]}',
                       '{"question_id": "q00006", "prediction": "with evidence", "evidence": [{"page": 2}, {"page": 0}, 5]}',
                       '{"question_id": "q00007"}', '{"question_id": "q00008", "prediction": "\\udc00 lone"}',
                       '{"question_id": "q00009", "prediction": 123456789012345678901234567890}']


def _gold_lines(rng: random.Random, n: int, prefix: str) -> list[str]:
    lines = []
    for i in range(n):
        row: dict = {"question_id": f"{prefix}{i:05d}" if rng.random() > 0.02 else f"  {prefix}{i:05d} ",
                     "question": f"question {i} ✓"}
        if rng.random() > 0.1:
            row["task_type"] = rng.choice(["single_doc", "cross_doc", "", None, 3, "single_doc"])
        answer: dict = {"value": rng.choice(VALUES)}
        if rng.random() > 0.1:
            answer["format"] = rng.choice(FORMATS)
        if rng.random() > 0.1:
            answer["verification_rule"] = rng.choice(RULES)
        row["answer"] = answer
        if rng.random() > 0.1:
            meta = {}
            for key in (*META_KEYS, "other"):
                v = rng.choice(META_VALUES)
                if v is not ABSENT:
                    meta[key] = v
            row["metadata"] = meta if rng.random() > 0.05 else None
        lines.append(json.dumps(row, ensure_ascii=rng.random() < 0.5))
    return lines


def _prediction_rows(rng: random.Random, ids: list[str]) -> list[str]:
    lines = []
    for qid in ids:
        if rng.random() < 0.1:  # missing
            continue
        row: dict = {"question_id": qid.strip() if rng.random() > 0.05 else f" {qid.strip()}", "prediction": rng.choice(PREDICTIONS)}
        status = rng.choice(STATUSES)
        if status is not None or rng.random() < 0.5:
            row["status"] = status
        lines.append(json.dumps(row, ensure_ascii=rng.random() < 0.5))
        if rng.random() < 0.03:  # the same id again: the later row replaces it
            lines.append(json.dumps({"question_id": qid.strip(), "prediction": rng.choice(PREDICTIONS)}))
    lines += [json.dumps({"question_id": f"extra{k}", "prediction": "extra"}) for k in range(3)]
    return lines


def _write(path: Path, lines: list[str], *, newline: str = "\n", bom: bool = False, blank_every: int = 0) -> Path:
    out = []
    for k, line in enumerate(lines):
        out.append(line)
        if blank_every and k % blank_every == blank_every - 1:
            out.append("   ")
    data = newline.join(out) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data.encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    """Two gold files and four prediction files, seeded, with every kind of row (see the module docstring)."""
    rng = random.Random(27)
    tmp = tmp_path_factory.mktemp("columnar")
    single = _gold_lines(rng, 900, "q")
    cross = _gold_lines(rng, 300, "c")
    single[10:10] = DAMAGED_GOLD
    single.append(single[20])  # a repeated id
    cross.append(single[30])  # an id of the other file
    gold = [_write(tmp / "qa_single_doc.jsonl", single, blank_every=97), _write(tmp / "qa_cross_doc.jsonl", cross, newline="\r\n", bom=True)]
    ids = [json.loads(line)["question_id"] for line in single + cross if line.startswith('{"question_id": "') and '"answer"' in line]
    preds = _prediction_rows(rng, ids)
    preds[5:5] = DAMAGED_PREDICTIONS
    run_a = _write(tmp / "run_a.jsonl", preds, blank_every=50)
    run_b = _write(tmp / "run_b.jsonl", _prediction_rows(rng, ids), newline="\r\n")
    mapping = {json.loads(line)["question_id"]: json.loads(line)["prediction"] for line in _prediction_rows(rng, ids[::3])}
    run_c = tmp / "run_c.json"
    run_c.write_text(json.dumps(mapping, ensure_ascii=False), encoding="utf-8")
    lone_cr = tmp / "run_d.jsonl"  # lone CRs end lines only where the release reads its files so
    lone_cr.write_bytes(b'{"question_id": "q00001", "prediction": "a"}\r{"question_id": "q00002", "prediction": "b"}\n'
                        + "\n".join(_prediction_rows(rng, ids[:200])).encode("utf-8"))
    return {"tmp": tmp, "gold": gold, "runs": [run_a, run_b, run_c, lone_cr]}


def _cli(argv: list[str], *, columns: bool, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(cli, "_in_columns", (lambda args: not args.categories_csv) if columns else (lambda args: False))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _both(inputs: dict, monkeypatch, extra: list[str], runs: list[Path], *, several: bool = False) -> dict:
    """Run the command line both ways; assert the same code, printing and files; return the column path's files."""
    files = {}
    results = []
    for columns in (True, False):
        tag = "_".join(a.strip("-") for a in extra)[:80] + f"_{len(runs)}_{several}"
        out = inputs["tmp"] / ("columns" if columns else "records") / tag
        target = [str(out / "report"), str(out / "csv")] if several else [str(out / "report.json"), str(out / "q.csv")]
        argv = ["--gold-files", *map(str, inputs["gold"]), "--predictions", *map(str, runs),
                "--output", target[0], "--per-question-csv", target[1], *extra]
        code, stdout, stderr = _cli(argv, columns=columns, monkeypatch=monkeypatch)
        written = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        results.append((code, stdout, stderr, written))
    (code_c, out_c, err_c, files_c), (code_r, out_r, err_r, files_r) = results
    assert code_c == code_r
    assert out_c == out_r
    assert err_c == err_r
    assert sorted(files_c) == sorted(files_r) and files_c
    for name in files_c:
        assert files_c[name] == files_r[name], name
    files.update(files_c)
    return {"code": code_c, "stdout": out_c, "stderr": err_c, "files": files}


@pytest.mark.parametrize("profile", ["xldocbench", "xldocbench-1519", "docvqa"])
def test_cli_columns_equal_records_every_profile(inputs, monkeypatch, profile):
    got = _both(inputs, monkeypatch, ["--profile", profile], inputs["runs"][:1])
    report = json.loads(got["files"][Path("report.json")])
    # the comparison means something: damaged rows were reported, ids were missing and extra, rows were scored
    assert report["missing_prediction_count"] > 50 and report["extra_prediction_count"] >= 3
    assert report["evaluated_count"] > 1000
    assert "invalid JSON" in got["stderr"] and "an id not used before" in got["stderr"]
    assert "each id once" in got["stderr"] and "lone UTF-16 surrogate" in got["stderr"]
    assert 0.0 < report["overall"]["accuracy"] < 1.0
    labels = report["breakdowns"]["evidence_source"]
    assert "unknown" in labels and "Table" in labels


@pytest.mark.parametrize("extra", [["--ignore-missing"], ["--no-per-question-json"], ["--prediction-field", "prediction"],
                                   ["--profile", "xldocbench-1519", "--ignore-missing"]])
def test_cli_columns_equal_records_options(inputs, monkeypatch, extra):
    _both(inputs, monkeypatch, extra, inputs["runs"][:1])


def test_cli_columns_equal_records_several_runs(inputs, monkeypatch):
    """Four runs -- JSONL with blank lines, CRLF, a JSON mapping, lone CRs -- into folders, under the release profile."""
    got = _both(inputs, monkeypatch, ["--profile", "xldocbench-1519"], inputs["runs"], several=True)
    assert sorted(p.name for p in got["files"]) == ["run_a.csv", "run_a.json", "run_b.csv", "run_b.json", "run_c.csv",
                                                  "run_c.json", "run_d.csv", "run_d.json"]


def test_cli_columns_equal_records_on_a_generated_benchmark(tmp_path, monkeypatch):
    """bench/make_predictions.py's generator (every release format, verbose answers, statuses), 4,000 questions."""
    gold, preds = make_predictions.generate(4_000, tmp_path, seed=5)
    for profile in ("xldocbench-1519", "xldocbench"):
        results = []
        for columns in (True, False):
            out = tmp_path / f"{profile}-{columns}"
            argv = ["--gold-files", str(gold), "--predictions", str(preds), "--profile", profile,
                    "--output", str(out / "r.json"), "--per-question-csv", str(out / "r.csv")]
            results.append((_cli(argv, columns=columns, monkeypatch=monkeypatch),
                            (out / "r.json").read_bytes(), (out / "r.csv").read_bytes()))
        assert results[0] == results[1]
        assert json.loads(results[0][1])["evaluated_count"] == 4_000


def test_column_loaders_equal_record_loaders(inputs):
    for release in (False, True):
        want = load_gold(inputs["gold"], release=release)
        got_res, cols = load_gold_columns(inputs["gold"], release=release)
        assert got_res.problems == want.problems and got_res.counts() | {"loaded": 0} == want.counts() | {"loaded": 0}
        assert got_res.files == want.files and got_res.unreadable == want.unreadable
        assert len(cols) == len(want.items) > 1000
        for k, q in enumerate(want.items):
            assert (cols.qid[k], cols.answers[k], cols.answer_format[k], cols.verification_rule[k], cols.split[k],
                    cols.raw_format[k], cols.format_given[k], cols.question_types[k]) == \
                (q.qid, q.answers, q.answer_format, q.verification_rule, q.split, q.raw_format, q.format_given, q.question_types)
            assert [cols.meta[key][k] for key in META_KEYS] == [q.metadata.get(key, ABSENT) for key in META_KEYS]
            assert cols.release_text.get(k, release) == q.release_text
        for run in inputs["runs"]:
            want_p = load_predictions(run, release=release)
            got_p, pcols = load_prediction_columns(run, release=release)
            assert got_p.problems == want_p.problems and got_p.skipped == want_p.skipped and got_p.rows_read == want_p.rows_read
            assert [(pr.qid, pr.text, pr.status, pr.line) for pr in want_p.items] == \
                list(zip(pcols.qid, pcols.text, pcols.status, pcols.line))


def test_scores_of_equals_decide():
    rng = random.Random(1519)
    alphabet = "aAbtThHeEnN 0123456789.,-%:;!?'\"()[]\n\t\x1f\x0b_é東ǅ"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    texts += [f"{p}{t}" for p, t in zip(["The answer is ", "answer: ", "  ANSWER IS ", "the a an "] * 50, texts)]
    texts += ["the", "a", "an the a", "a.the", "the-a", "%a%", "A.N.", "\x1f", "", " \x1f the"]
    answers_pool = [(t,) for t in [*VALUES[:29], *texts[:200]] if isinstance(t, str)]
    items = []
    for _ in range(4000):
        text = rng.choice([None, *[p for p in PREDICTIONS if isinstance(p, str)], *texts[:300]])
        status = None if text is None else rng.choice(["success", "context_overflow", "error", "", "SUCCESS"])
        answers = rng.choice([*answers_pool, ()])
        items.append((text, status, answers, rng.choice([f for f in FORMATS if isinstance(f, str) and f] + ["Str"]),
                      rng.choice([r for r in RULES if isinstance(r, str)])))
    items.append((None, None, ("0.28", "28%"), "Str", "anls"))
    for name in ("xldocbench", "xldocbench-1519", "docvqa", "mmlongbench-doc"):
        profile = get_profile(name)
        want = [decide(text, answers, fmt, rule, status, profile)[:3] for text, status, answers, fmt, rule in items]
        assert scores_of(items, profile) == want, name


def test_every_size_takes_the_column_path_with_the_cores_it_may_use(inputs, monkeypatch):
    """The CLI reads, scores and writes in columns at every size -- not for --categories-csv, which
    reads every judgement record -- and hands `run_columns` the cores it may use: from
    columnar.FORK_MIN questions scored, parts are forked that many at a time (tests/test_bulk.py)."""
    def wants(categories: bool = False) -> bool:
        argv = ["--gold-files", "g.jsonl", "--predictions", "p.jsonl"] + (["--categories-csv", "c"] if categories else [])
        return cli._in_columns(cli.build_parser().parse_args(argv))

    assert wants() and not wants(categories=True)
    seen = []
    real = columnar.run_columns
    monkeypatch.setattr(columnar, "run_columns", lambda *a, **k: seen.append(k["workers"]) or real(*a, **k))
    monkeypatch.setattr(cli, "usable_cores", lambda: 3)
    out = inputs["tmp"] / "cores"
    code, stdout, _ = _cli(["--gold-files", *map(str, inputs["gold"]), "--predictions", str(inputs["runs"][0]),
                            "--output", str(out / "r.json")], columns=True, monkeypatch=monkeypatch)
    assert code == 0 and "Evaluated:" in stdout
    assert seen == [3]


def test_column_scores_equal_decide():
    """`metrics.column_scores` (the command line's scorer: columns in, three score columns out) gives
    `decide`'s scores question by question -- every status, missing answers, empty and equal texts,
    unicode -- under each profile, and under profiles at the edges of their thresholds (a strict ANLS
    threshold of 0, so equal texts score 0; similarity thresholds 0 and 1; failed answers scoring 0)."""
    from dataclasses import replace

    from scoring.metrics import column_scores

    rng = random.Random(27)
    alphabet = "aAbtThHeEnN 0123456789.,-%:;!?'\"()[]\n\t\x1f\x0b_é東ǅ"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(1500)]
    texts += ["the", "a", "an the a", "a.the", "the-a", "%a%", "A.N.", "\x1f", "", " \x1f the", "  ", "Yes", "no", "42",
              "Not answerable", "B", "x" * 20_001]
    golds = [t for t in [*VALUES[:29], *texts[:150], "x" * 20_001] if isinstance(t, str)]
    rows = []
    for _ in range(5000):
        answers = rng.choice([(g,) for g in golds] + [()])
        draw = rng.random()
        if answers and draw < 0.3:  # the gold itself, or a near miss
            text = answers[0] if draw < 0.15 else answers[0][:-1] + "z"
        else:
            text = rng.choice([None, *[p for p in PREDICTIONS if isinstance(p, str)], *texts])
        status = rng.choice(["success", "context_overflow", "vision_unsupported", "error", "", None, "SUCCESS", " ok "])
        rows.append((text, status, answers, rng.choice([f for f in FORMATS if isinstance(f, str) and f] + ["Str"] * 5),
                     rng.choice([r for r in RULES if isinstance(r, str)])))
    base = get_profile("xldocbench")
    profiles = [get_profile(n) for n in ("xldocbench", "xldocbench-1519", "docvqa", "mmlongbench-doc")] + [
        replace(base, name="strict-zero", anls_threshold=0.0, anls_keeps_threshold=False),
        replace(base, name="kept-zero", anls_threshold=0.0, similarity_threshold=1.0),
        replace(base, name="all-similar", anls_threshold=1.0, similarity_threshold=0.0),
        replace(base, name="failed-zero", failed_status_zero=not base.failed_status_zero),
    ]
    texts_c, statuses, answers_c, formats, rules = (list(c) for c in zip(*rows))
    for profile in profiles:
        want = [decide(text, answers, fmt, rule, status, profile)[:3] for text, status, answers, fmt, rule in rows]
        got = column_scores(texts_c, statuses, answers_c, formats, rules, profile)
        assert list(zip(*got)) == want, profile.name
        # the comparison means something: right and wrong answers, partial F1 and ANLS
        assert {0.0, 1.0} <= set(got[0]) and len(set(got[1])) > 5, profile.name
        if profile.name in ("xldocbench", "xldocbench-1519", "docvqa"):
            assert len(set(got[2])) > 5, profile.name
    # at a strict threshold of 0 an equal text scores 0, but one longer than MAX_EDIT_CHARS scores 1
    strict = column_scores(["abc", "x" * 20_001], ["success"] * 2, [("abc",), ("x" * 20_001,)], ["Str"] * 2, [""] * 2,
                           profiles[4])
    assert strict[2] == [0.0, 1.0]

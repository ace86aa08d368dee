"""An LLM judge as a fourth scorer (issue 38): what the harnesses' judges left, a re-judge on the
user's own OpenAI-compatible server, and how far either can be trusted.

- `verdicts`: the five states of a judged answer and the stored judge's verdict of each answer, read
  from what MMLongBench-Doc (`extracted_res`), VLMEvalKit (`res`, `log`, `pred`) and LongDocURL
  (`pred`, `extraction_response`, `extraction_log`) left in their files;
- `answers`: the answers a judge reads (question, raw response, gold, the stored verdict), built from
  a MMLongBench-Doc result file or a harness run;
- `prompts`: the benchmark's own extraction prompt, the messages its code sends, and its reply's reading;
- `client`: a plain HTTP client for OpenAI-compatible chat completions (retries at the same settings);
- `cache`: every reply on disk, keyed by (question, prediction sha256, model id, prompt sha256, parameters);
- `rejudge`: every answer asked with bounded concurrency, progress and a stop; the judge's identity;
- `agreement`: Cohen's kappa, confusion tables, intervals by document, by slice and by response length;
- `report`: the `judge` object of the command line's JSON report and the per-question columns.

Import the submodules themselves; this package's `__init__` imports nothing.
"""

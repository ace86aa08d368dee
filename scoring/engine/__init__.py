"""Scored runs on an analytical engine: DuckDB embedded (one user, the default), or a DuckLake whose
catalog is the team's PostgreSQL. No Streamlit, Plotly or pandas here.

    connection.py   where the runs live (`target_from`, `Engine`), extensions loaded offline, the lock
    schema.py       the tables: runs, removals, benchmarks, questions, labels, scores, texts, cells, doc_sums
    ingest.py       a scored run in one transaction (`Questions`, `ScoredRun`, `ingest`, `remove`)
    queries.py      leaderboard, breakdowns, flip tables, document sums, the finder's counts, texts
    cli.py          `docbench-lens ingest` (the loading of a benchmark's files is handed in by the caller)
"""

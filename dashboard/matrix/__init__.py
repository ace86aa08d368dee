"""The question x run matrix: questions (or documents) against the runs of a series, ordered by step."""

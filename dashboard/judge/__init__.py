"""The LLM judge (issue 38): how far a judge can be trusted, and a re-judge on the user's own server."""

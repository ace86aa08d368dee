"""LLM judge: how far the judge that scored a run can be trusted -- its verdicts (unparsable and error
rates, the score with and without them), against our rules, another judge and people -- and a re-judge
on the user's own OpenAI-compatible server (LENS_JUDGE_URL). The work is in dashboard/judge/."""

import streamlit as st

from dashboard.judge import panel
from dashboard.shell import context

ctx = context.context()
st.title("LLM judge")
st.caption("How far the judge that extracted the answers can be trusted, and a re-judge on your own server · "
           f"profile {ctx.profile}")
panel.page(ctx)

"""Presentation mode: the comparison of the Compare page (run A, baseline B) as slides -- one message
and one large chart per screen, no controls, the sidebar hidden."""

import streamlit as st

from dashboard.compare import charts
from dashboard.compare import frames as C
from dashboard.compare import panel as P
from dashboard.core.escape import md_escape
from dashboard.shell import ui

HEIGHT = 600  # px of each slide's chart
FONT_SCALE = 17 / 12  # the slides' font against the charts' own: rows grow with it, so every label fits
ctx = ui.context()
an = ctx.analysis
state = ui.view().compare

# Our own style only (no user data): hide the sidebar, its toggle and the toolbar; larger type.
st.html("""<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stHeader"] { display: none; }
.block-container { padding-top: 1.5rem; }
.stMarkdown p { font-size: 1.45rem; line-height: 1.45; }
</style>""")


def slide(number: int, message: str, fig=None) -> None:
    st.caption(f"{number} / 4")
    st.markdown(message)
    if fig is not None:
        fig.update_layout(height=max(HEIGHT, int(FONT_SCALE * (fig.layout.height or 0))), font=dict(size=17), title_font=dict(size=24), margin=dict(t=150),
                          template="plotly_white")
        # theme=None: Streamlit's chart theme would shrink the large presentation fonts back
        st.plotly_chart(fig, width="stretch", key=f"present_{number}", config={"displayModeBar": False}, theme=None)
    st.divider()


if an.questions.empty or len(an.ranked_names) < 2:
    st.title("Presentation")
    st.info("Presenting needs gold questions and at least two runs: open a benchmark with two or more runs.")
else:
    runs = P.runs_by_accuracy(an)
    a: str = state["a"] if state.get("a") in runs else runs[0]
    b: str = state["b"] if state.get("b") in runs and state.get("b") != a else next(r for r in runs if r != a)
    pairs = C.paired(an.scores, a, b)
    st.title(f"{a} against {b}")
    table = P.deltas(an, pairs, a, b)
    top = C.headline(table)
    d, lo, hi = (100 * top[f"accuracy_{k}"] for k in ("delta", "low", "high"))
    side = "ahead of" if d > 0 else "behind" if d < 0 else "level with"
    real = "unlikely to be chance" if top["p_mcnemar"] < 0.05 else "could be chance"
    slide(1, f"**{md_escape(a)}** is **{abs(d):.1f} percentage points {side}** **{md_escape(b)}** on Accuracy "
             f"(95 % interval {lo:+.1f} to {hi:+.1f} pp, {top['questions']} questions): {real}.",
          charts.runs_chart(P.intervals(an, runs), "accuracy"))
    weak = P.weakest(an, a, "accuracy", C.OWN, runs)
    weak = weak[weak["weight"] > 0].head(8)
    if len(weak):
        w = weak.iloc[0]
        slide(2, f"**{md_escape(a)}** is weakest on **{md_escape(P.slice_text(w['field'], w['label']))}**: "
                 f"{100 * w['score']:.0f} % against {100 * w['reference']:.0f} % overall, on {w['questions']} questions.",
              charts.weakest_chart(weak, "accuracy", a, C.OWN))
    else:
        slide(2, f"**{md_escape(a)}** does no worse than its overall Accuracy on any slice.")
    flips = C.flip_table(pairs, an.questions)
    f = flips.iloc[0]
    slide(3, f"**{f['only A']}** questions only {md_escape(a)} gets right, **{f['only B']}** only {md_escape(b)}; "
             f"both right on {f['both right']}, both wrong on {f['both wrong']}.",
          charts.flips_chart(P.most_flipped(flips, 6), a, b))
    sig = table[(table["field"] != C.OVERALL_FIELD) & (table["p_holm"] < 0.05)]
    msg = (f"The difference holds on **{len(sig)}** slices after Holm's correction; the largest: "
           + ", ".join(md_escape(P.slice_text(x, y)) for x, y in sig.sort_values("accuracy_delta", ascending=False)[["field", "label"]].head(3).values)
           if len(sig) else "No single slice's difference holds after Holm's correction across the slices tested.")
    slide(4, msg, charts.delta_chart(table[table["field"].isin([C.OVERALL_FIELD, "reasoning_type", "domain", "difficulty"])],
                                     "accuracy", a, b))
    st.page_link("views/compare.py", label="Leave the presentation", icon=":material/close:")

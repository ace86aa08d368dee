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
    header = P.header_lines(an, [a, b], ctx.corrections)
    if header:
        st.markdown("  \n".join(header))
    table = P.deltas(an, pairs, a, b)
    top = C.headline(table)
    d = 100 * top["accuracy_delta"]
    side = "ahead of" if d > 0 else "behind" if d < 0 else "level with"
    said = C.verdict(top)
    units = P.units_text(int(top["documents"]), top["unit"])
    if said == "too few":
        evidence = (f"on {top['questions']} questions in {units}: too few documents to tell; "
                    f"{P.gap_text(top['accuracy_detectable'])}")
    else:
        evidence = (f"95 % interval {100 * top['accuracy_low']:+.1f} to {100 * top['accuracy_high']:+.1f} pp over {units}, "
                    f"p by document {P.p_text(top['p'])}: "
                    + ("unlikely to be chance" if said == "real" else "could be chance"))
    slide(1, f"**{md_escape(a)}** is **{abs(d):.1f} percentage points {side}** **{md_escape(b)}** on Accuracy ({evidence}).",
          charts.runs_chart(P.intervals(an, runs), "accuracy"))
    weak = P.weakest(an, a, "accuracy", C.OWN, runs)
    weak = weak[weak["weight"] > 0].head(8)
    if len(weak):
        slide(2, P.weakest_sentence(weak, a, "accuracy", C.OWN), charts.weakest_chart(weak, "accuracy", a, C.OWN))
    else:
        slide(2, f"**{md_escape(a)}** does no worse than its overall Accuracy on any slice.")
    flips = C.flip_table(pairs, an.questions)
    f = flips.iloc[0]
    slide(3, f"**{f['only A']}** questions only {md_escape(a)} gets right, **{f['only B']}** only {md_escape(b)}; "
             f"both right on {f['both right']}, both wrong on {f['both wrong']} "
             f"(flipping whole documents between the runs: p {P.p_text(f['p'])} over {P.units_text(int(f['documents']), f['unit'])}).",
          charts.flips_chart(P.most_flipped(flips, 6), a, b))
    tested = C.tested_count(table)
    sig = table[(table["field"] != C.OVERALL_FIELD) & (table["p_holm"] < 0.05)
                & ((table["accuracy_low"] > 0) | (table["accuracy_high"] < 0))]
    if len(sig):
        msg = (f"The difference holds on **{len(sig)}** of the {tested} slices with at least {C.MIN_DOCUMENTS} documents after "
               "Holm's correction; the largest: "
               + ", ".join(md_escape(P.slice_text(x, y)) for x, y in
                           sig.sort_values("accuracy_delta", ascending=False)[["field", "label"]].head(3).values))
    elif tested:
        msg = f"No single slice's difference holds after Holm's correction across the {tested} slices with enough documents."
    else:
        msg = f"No slice has the {C.MIN_DOCUMENTS} documents a test needs: too few documents to tell, slice by slice."
    fields = C.shown_fields(table)
    slide(4, msg, charts.delta_chart(table[table["field"].isin([C.OVERALL_FIELD, *fields])], "accuracy", a, b))
    st.page_link("views/compare.py", label="Leave the presentation", icon=":material/close:")

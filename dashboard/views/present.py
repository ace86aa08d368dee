"""Presentation mode: the comparison of the Compare page (run A, baseline B) as slides -- one message
and one large chart per screen, no controls, the sidebar hidden -- and, when a series of checkpoints is
open (the Trends page), its trend."""

import streamlit as st

from dashboard.compare import charts
from dashboard.compare import frames as C
from dashboard.compare import panel as P
from dashboard.core.escape import md_escape
from dashboard.shell import context, viewstate
from dashboard.trends import panel as trend_panel
from dashboard.weak import charts as weak_charts
from dashboard.weak import frames as W
from dashboard.weak import panel as weak_panel
from dashboard.weak import saved_panel

SLIDES = 5
HEIGHT = 600  # px of each slide's chart
FONT_SCALE = 17 / 12  # the slides' font against the charts' own: rows grow with it, so every label fits
ctx = context.context()
an = ctx.analysis
state = viewstate.view().compare

# Our own style only (no user data): hide the sidebar, its toggle and the toolbar; larger type.
st.html("""<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stHeader"] { display: none; }
.block-container { padding-top: 1.5rem; }
.stMarkdown p { font-size: 1.45rem; line-height: 1.45; }
</style>""")


def slide(number: int, message: str, fig=None) -> None:
    st.caption(f"{number} / {SLIDES}")
    st.markdown(message)
    if fig is not None:
        fig.update_layout(height=max(HEIGHT, int(FONT_SCALE * (fig.layout.height or 0))), font=dict(size=17), title_font=dict(size=24), margin=dict(t=150),
                          template="plotly_white")
        # theme=None: Streamlit's chart theme would shrink the large presentation fonts back
        st.plotly_chart(fig, width="stretch", key=f"present_{number}", config={"displayModeBar": False}, theme=None)
    st.divider()


def weak_message(found, a: str, b: str, top: int = 3) -> str:
    """Slide 5: the top slices where A lost more to B than on the rest (pair mode), each with its gap
    and 95 % interval by document and q, and the number of slices tested; or not enough evidence."""
    head = f"{found.tested:,} slices tested with documents as the unit (Benjamini–Hochberg q < {found.fdr:g})"
    if not found.weak:
        return (f"**Not enough evidence** of a slice where **{md_escape(a)}** lost more to **{md_escape(b)}** than elsewhere "
                f"({head}).")
    parts = [f"**{md_escape(s.name)}**: {100 * s.gap:+.1f} pp (95 % interval by document {100 * s.ci_low:+.1f} to "
             f"{100 * s.ci_high:+.1f}; {s.n} questions in {s.documents} {found.unit}s; q {P.pvalue(s.q)})"
             for s in found.weak[:top]]
    return f"Where **{md_escape(a)}** lost more to **{md_escape(b)}** than elsewhere ({head}): " + "; ".join(parts) + "."


if an.questions.empty or len(an.ranked_names) < 2:
    st.title("Presentation")
    st.info("Presenting needs gold questions and at least two runs: open a benchmark with two or more runs.")
else:
    runs = P.runs_by_accuracy(an)
    a: str = state["a"] if state.get("a") in runs else runs[0]
    b: str = state["b"] if state.get("b") in runs and state.get("b") != a else next(r for r in runs if r != a)
    pairs = C.paired(an.rows_of([a, b]), a, b)
    trend = trend_panel.slide(ctx)  # the open series' checkpoint trend (dashboard/trends): a last slide
    SLIDES += 1 if trend else 0
    st.title(f"{a} against {b}")
    header = P.header_lines(an, [a, b], ctx.corrections)
    if header:
        st.markdown("  \n".join(header))
    table = P.deltas(an, pairs, a, b)
    top = C.headline(table)
    d = 100 * top["accuracy_delta"]
    side = "ahead of" if d > 0 else "behind" if d < 0 else "level with"
    said = C.verdict(top)
    units = C.units_text(int(top["documents"]), top["unit"])
    if said == "too few":
        evidence = (f"on {top['questions']} questions in {units}: too few documents to tell; "
                    f"{C.detectable_text(top['accuracy_detectable'])}")
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
             f"(flipping whole documents between the runs: p {P.p_text(f['p'])} over {C.units_text(int(f['documents']), f['unit'])}).",
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
    # the finder in pair mode (dashboard/weak): its store is the Weak slices page's, so a search made there is reused
    questions = saved_panel.questions_with_fields(ctx, [a, b], with_tags=True)
    found = weak_panel.cached(an, questions, a, b, "accuracy", W.Settings())
    if found is None:
        bar = st.progress(0.0, text="Finding where A lost more to B…")
        found = weak_panel.compute(an, questions, a, b, "accuracy", W.Settings(), bar)
        bar.empty()
    slide(5, weak_message(found, a, b), weak_charts.forest(found, "Accuracy") if found.weak else None)
    if trend:
        slide(6, *trend)
    st.page_link("views/compare.py", label="Leave the presentation", icon=":material/close:")

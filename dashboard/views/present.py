"""Presentation mode: the comparison of the Compare page (run A, baseline B) as slides -- one message
and one large chart per screen, no controls, the sidebar hidden. Where A is weak (slide 2) and where it
lost more to B (slide 5) are the weak-slice finder's answer, the sentence the report and Compare's "All
runs" give (dashboard/weak/frames.py `sentence`); slide 4 counts and names the slices as the report does
(`frames.holding_slices` over the same table, the saved slices included). When a series of checkpoints
is open (the Trends page), its trend is a last slide (dashboard/trends)."""

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


def holds_message(table, tested: int) -> str:
    """Slide 4: how many slices' Accuracy difference holds after the false-discovery control (the report's count,
    over the same table: the saved slices included), the largest first by size, each with its sign."""
    sig = C.holding_slices(table)
    if len(sig):
        return (f"The difference holds on **{len(sig)}** of the {tested} slices with at least {C.MIN_DOCUMENTS} documents "
                "after the false-discovery control (Benjamini-Hochberg); the largest: "
                + ", ".join(f"{md_escape(P.slice_text(x, y))} ({md_escape(W.pp(d))} pp)"
                            for x, y, d in sig[["field", "label", "accuracy_delta"]].head(3).values))
    if tested:
        return f"No single slice's difference holds after the false-discovery control across the {tested} slices with enough documents."
    return f"No slice has the {C.MIN_DOCUMENTS} documents a test needs: too few documents to tell, slice by slice."


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
    table = P.deltas(P.pair_job(an, pairs, a, b, saved_panel.questions_with_fields(ctx)))  # the report's table: saved slices too
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
    charted = P.leading_runs(runs, [a, b])  # 1,000 runs' intervals are neither quick nor readable
    among = P.leading_note(charted, runs, "A and B")
    slide(1, f"**{md_escape(a)}** is **{abs(d):.1f} percentage points {side}** **{md_escape(b)}** on Accuracy ({evidence})."
             + (md_escape(f" The chart: {among}") if among else ""),
          charts.runs_chart(P.intervals(an, charted), "accuracy"))
    # where A is weak: the finder's answer, as in the report and Compare's "All runs" (one search, one store)
    settings = W.Settings()
    weak, weak_said = weak_panel.answer(an, saved_panel.questions_with_fields(ctx, [a], with_tags=True), a, "", "accuracy",
                                        settings, "Finding where A is weak…")
    slide(2, W.markdown(weak_said), weak_charts.forest(weak, "Accuracy", top=P.WEAK_TOP) if weak is not None and weak.weak else None)
    flips = C.flip_table(pairs, an.questions)
    f = flips.iloc[0]
    slide(3, f"**{f['only A']}** questions only {md_escape(a)} gets right, **{f['only B']}** only {md_escape(b)}; "
             f"both right on {f['both right']}, both wrong on {f['both wrong']} "
             f"(flipping whole documents between the runs: p {P.p_text(f['p'])} over {C.units_text(int(f['documents']), f['unit'])}).",
          charts.flips_chart(P.most_flipped(flips, 6), a, b))
    fields = C.shown_fields(table)
    slide(4, holds_message(table, C.tested_count(table)),
          charts.delta_chart(table[table["field"].isin([C.OVERALL_FIELD, *fields])], "accuracy", a, b))
    # the finder in pair mode (dashboard/weak): its store is the Weak slices page's, so a search made there is reused
    found, found_said = weak_panel.answer(an, saved_panel.questions_with_fields(ctx, [a, b], with_tags=True), a, b,
                                          "accuracy", settings, "Finding where A lost more to B…")
    slide(5, W.markdown(found_said), weak_charts.forest(found, "Accuracy", top=P.WEAK_TOP) if found is not None and found.weak else None)
    if trend:
        slide(6, *trend)
    st.page_link("views/compare.py", label="Leave the presentation", icon=":material/close:")

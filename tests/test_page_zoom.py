"""The Evidence viewer's zoom above the default magnifies the page inside the chart (issue 29.4: at
300 % a taller chart was capped at the column's width and left the page centred in blank space to be
scrolled through): the chart keeps the default's height and shows 1/magnify of the page, around its
first gold box, inside the page."""

from __future__ import annotations

from dashboard.evidence.render import GOLD_EVIDENCE, RUN_COLOURS, Box, Rendered, page_figure

PAGE = Rendered(png=b"", width=1000, height=1400, zoom=1.0, matrix=(1.0, 0.0, 0.0, 1.0, 0.0, 0.0), page=1,
                page_count=1, points=(1000.0, 1400.0), rotation=0)


def ranges(fig) -> tuple[list[float], list[float]]:
    return list(fig.layout.xaxis.range), list(fig.layout.yaxis.range)


def test_the_default_zoom_shows_the_whole_page_for_box_zoom():
    fig = page_figure(PAGE, [], height=840)
    assert ranges(fig) == ([0, 1000], [1400, 0]) and fig.layout.dragmode == "zoom" and fig.layout.height == 840


def test_magnified_the_page_is_a_window_dragged_to_move():
    fig = page_figure(PAGE, [], height=840, magnify=2.0)
    assert ranges(fig) == ([0, 500], [700, 0]) and fig.layout.dragmode == "pan" and fig.layout.height == 840


def test_the_window_is_centred_on_the_first_gold_box_and_stays_on_the_page():
    run = Box((0.0, 0.0, 10.0, 10.0), RUN_COLOURS[0], "a run's answer", "run: answer")
    gold = Box((600.0, 1300.0, 700.0, 1340.0), GOLD_EVIDENCE, "evidence", "Gold evidence")
    x, y = ranges(page_figure(PAGE, [run, gold], height=840, magnify=2.0))
    # centred on (650, 1320): x from 400 to 900; y clamped to the page's bottom (700..1400)
    assert x == [400, 900] and y == [1400, 700]

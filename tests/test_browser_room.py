"""The room the figures take, in a real browser (issue 24 item 5): Debian's Chromium against
`streamlit run app.py` (see conftest.py and test_browser_layout.py, whose helpers these tests
use). Waits are for selectors and page conditions, never for time.

* Lecture slides on a phone (390 x 844, a phone's User-Agent and a desktop's), the Attention
  and Training slides among them: the stacked panels get the height they need, the page
  scrolls, no two chart texts overlap (a colour bar's tick labels included), and Back / Next
  stand above the slide's title.
* At 1280 x 720 the first screen of the page shows the default example's repeated rows
  (1, 4 and 7 of "A rose is a rose is a rose."), labelled, inside the window.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_browser_layout import (
    BOX,
    PANELS,
    SCROLL,
    assert_no_collisions,
    wait_drawn,
    wait_step,
)

pytestmark = pytest.mark.browser

# Slides with a chart: 3 and 4 (one panel), 7 (three), 9 (similarity), 11 (word order), 18
# (the shift test's four heatmaps), 20 (a trained table's similarity, then its distance curve)
# and 22 (small-init's table, the first of the two runs' charts, its colour bar under it).
SLIDE_CHARTS = {
    3: (".st-key-embeddings", 1),
    7: (".st-key-embeddings", 3),
    9: (".st-key-similarity", 3),
    11: (".st-key-compare", 8),
    18: (".st-key-attention", 4),
    20: (".st-key-training", 1),
    22: (".st-key-training_small", 1),
}
PANELS_HIGH = """(s) => Array.from(
    document.querySelectorAll(s + ' g.hm, ' + s + ' .cartesianlayer .bg'),
    g => g.getBoundingClientRect().height).filter(h => h > 0)"""
ROW_BOTTOMS = """(selector) => Object.fromEntries(Array.from(
    document.querySelectorAll(selector + ' .yaxislayer-above .ytick text'),
    (t) => [t.textContent, t.getBoundingClientRect().bottom]))"""


@pytest.mark.parametrize("phone", [True, False], ids=["phone", "desktop-user-agent"])
@pytest.mark.parametrize("step", sorted(SLIDE_CHARTS), ids=lambda n: f"slide-{n}")
def test_lecture_slides_on_a_phone_take_the_room_their_panels_need(
    sized: Any,
    server_url: str,
    step: int,
    phone: bool,
) -> None:
    page = sized(390, 844, phone=phone)
    page.goto(f"{server_url}/?lecture=1&step={step}")
    wait_step(page, step)
    chart, layers = SLIDE_CHARTS[step]
    plot = f"{chart} .js-plotly-plot"
    panels = page.evaluate(PANELS, plot)
    assert len(panels) == layers
    heights = page.evaluate(
        "(s) => Array.from(document.querySelectorAll(s + ' g.hm'),"
        " g => g.getBoundingClientRect().height)",
        plot,
    )
    assert min(heights) >= (60 if layers == 8 else 150), f"a squeezed panel: {heights}"
    every = page.evaluate(PANELS_HIGH, plot)  # the heatmaps and the plots' backgrounds
    assert every and min(every) >= 120, f"a squeezed panel: {every}"
    tops = {round(top) for _, top, _ in panels}
    assert len(tops) == layers, "one panel under the other"
    assert_no_collisions(page, plot)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, "nothing wider than the phone"
    nav = [page.locator(f".posviz-nav-{name}").bounding_box() for name in ("back", "next")]
    title = page.locator(".posviz-nav-title").bounding_box()
    assert all(box["y"] + box["height"] <= title["y"] + 0.5 for box in nav), (nav, title)
    assert page.console_errors == []


def test_the_first_screen_at_1280x720_shows_the_repeated_rows(
    sized: Any,
    server_url: str,
) -> None:
    page = sized(1280, 720)
    page.goto(server_url)
    wait_drawn(page)
    plot = ".st-key-embeddings .js-plotly-plot"
    rows = page.evaluate(ROW_BOTTOMS, plot)
    for label in ("1 · ␣rose", "4 · ␣rose", "7 · ␣rose"):
        assert label in rows, f"{label} is not labelled: {sorted(rows)}"
        assert rows[label] <= 720, f"{label} is below the first screen: {rows[label]:.0f} px"
    lesson = page.evaluate(BOX, ".st-key-lesson")  # the sentence that says what to notice
    assert lesson is not None and lesson[1] <= 720, lesson
    assert page.evaluate(SCROLL) == [0, 0]
    assert_no_collisions(page, plot)
    assert page.console_errors == []

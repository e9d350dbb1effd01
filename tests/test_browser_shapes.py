"""The Geometry and Distance & length tabs in a real browser (Debian's Chromium through
Playwright, against `streamlit run app.py` on 127.0.0.1): both draw from a ``tab=`` link at
1920x1080 and on a 390x844 phone with no two texts of a chart overlapping (panel titles, tick
labels, axis titles, colour bar, legend) and nothing outside it; the 3D scatter turns when
dragged and names a position on hover. Waits are for page conditions, never for time."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from test_browser_layout import COLLISIONS, LOAD_TIMEOUT

pytestmark = pytest.mark.browser

GEOMETRY = ".st-key-geometry .js-plotly-plot"
DISTANCE = ".st-key-distance .js-plotly-plot"
# True once the chart's figure is drawn for the size it has (laid out for it: a first figure
# drawn after the component's wait, on a busy machine, is not), with its 3D `scenes` ready (by
# name; a scene without points has no WebGL plot), and Streamlit has finished the run.
DRAWN = """([selector, scenes]) => {
    const gd = document.querySelector(selector);
    if (!gd || !gd._fullLayout) return false;
    const ready = scenes.every(name => gd._fullLayout[name] && gd._fullLayout[name]._scene
                                       && gd._fullLayout[name]._scene.glplot);
    const box = gd.getBoundingClientRect();
    return ready && gd.dataset.fits !== 'false'  // the component: laid out for its room
        && Math.abs(gd._fullLayout.width - box.width) < 1
        && !document.querySelector('[data-stale="true"]')
        && !document.querySelector('[data-testid="stStatusWidget"]');
}"""
# COLLISIONS, with the legend's texts counted too.
WITH_LEGEND = COLLISIONS.replace(
    "['bar', '.colorbar text']]", "['bar', '.colorbar text'], ['legend', '.legendtext']]"
)


def open_tab(
    page: Any, server_url: str, query: str, selector: str, scenes: tuple[str, ...] = ()
) -> None:
    page.goto(f"{server_url}/?{query}")
    page.wait_for_function(DRAWN, arg=[selector, list(scenes)], timeout=LOAD_TIMEOUT)


# What the chart showed when texts collided: what it was laid out for and the box it had.
CHART_STATE = """(selector) => { const gd = document.querySelector(selector);
    const box = gd.getBoundingClientRect(), layout = gd._fullLayout;
    return { fits: gd.dataset.fits, layout: [layout.width, layout.height],
             box: [box.width, box.height], window: [innerWidth, innerHeight] }; }"""


def assert_no_collisions(page: Any, selector: str) -> None:
    count, found = page.evaluate(WITH_LEGEND, selector)
    assert count > 10, "the chart's texts were not found"
    if found:  # say what the chart was laid out for, and what it looked like
        again = page.evaluate(WITH_LEGEND, selector)[1]
        shot = Path(tempfile.mkdtemp(prefix="posviz-collision-")) / "page.png"
        page.screenshot(path=str(shot), full_page=True)
        state = page.evaluate(CHART_STATE, selector)
        raise AssertionError(f"{found}; chart {state}; a second look: {again}; page: {shot}")


@pytest.mark.parametrize(("width", "height", "phone"), [(1920, 1080, False), (390, 844, True)])
def test_both_tabs_draw_without_overlapping_text(
    sized: Any, server_url: str, width: int, height: int, phone: bool
) -> None:
    page = sized(width, height, phone=phone)
    open_tab(page, server_url, "tab=geometry", GEOMETRY, ("scene", "scene2"))
    assert page.locator(f"{GEOMETRY} .gl-container canvas").count() >= 1  # WebGL scenes
    assert_no_collisions(page, GEOMETRY)
    open_tab(page, server_url, "tab=distance&context_length=32", DISTANCE)
    assert_no_collisions(page, DISTANCE)
    legend = page.locator(f"{DISTANCE} .legendtext").all_text_contents()
    assert legend[:2] == ["learned, random init (seed 123)", "sinusoidal (formula)"], legend
    if phone:
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert page.console_errors == []


def test_the_none_scheme_says_there_is_nothing_to_project(sized: Any, server_url: str) -> None:
    """The scheme without a positional table: one scene says there is nothing to project."""
    page = sized(1920, 1080)
    open_tab(page, server_url, "tab=geometry&scheme=none", GEOMETRY, ("scene2",))
    assert_no_collisions(page, GEOMETRY)
    texts = page.locator(f"{GEOMETRY} .annotation-text").all_text_contents()
    assert any("nothing to project" in text for text in texts), texts


# Where the first scene's canvas is on the page, and a listener that keeps the last hover.
SCENE_BOX = """(selector) => {
    const gd = document.querySelector(selector);
    const size = gd._fullLayout._size, domain = gd._fullLayout.scene.domain;
    const box = gd.getBoundingClientRect();
    window.__hovered = null;
    gd.on('plotly_hover', event => { window.__hovered = event.points[0].customdata; });
    return [box.left + size.l + domain.x[0] * size.w, box.top + size.t + (1 - domain.y[1]) * size.h,
            domain.x[1] * size.w - domain.x[0] * size.w, (domain.y[1] - domain.y[0]) * size.h];
}"""
EYE = "(selector) => JSON.stringify(document.querySelector(selector)._fullLayout.scene.camera.eye)"


def test_the_3d_scatter_turns_and_names_a_position_on_hover(sized: Any, server_url: str) -> None:
    page = sized(1920, 1080)
    query = "tab=geometry&scheme=sinusoidal&context_length=64"
    open_tab(page, server_url, query, GEOMETRY, ("scene", "scene2"))
    left, top, width, height = page.evaluate(SCENE_BOX, GEOMETRY)
    before = page.evaluate(EYE, GEOMETRY)
    page.mouse.move(left + width / 2, top + height / 2)
    page.mouse.down()
    page.mouse.move(left + width / 2 + 160, top + height / 2 + 40, steps=12)
    page.mouse.up()
    page.wait_for_function(f"(before) => ({EYE})({GEOMETRY!r}) !== before", arg=before)
    # Sweep the scene row by row until the pointer is over a point: plotly names it on hover
    # (each move is a WebGL pick, costly in a software-rendered browser: stop at the first).
    for row in range(1, 24):
        for column in range(1, 24):
            page.mouse.move(left + width * column / 24, top + height * row / 24)
        if page.evaluate("() => window.__hovered !== null"):
            break
    page.wait_for_function("() => window.__hovered !== null", timeout=LOAD_TIMEOUT)
    position = page.evaluate("() => window.__hovered")
    assert isinstance(position, int) and 0 <= position < 64
    assert page.console_errors == []

"""posviz's chart component in a real browser (Debian's Chromium, Playwright, against the test
session's `streamlit run app.py`): one Plotly graph that lives across reruns, plotly.js loaded
once and then taken from the browser's cache, hover and the theme; and on a page of its own,
plotly.js's builds: loaded before any chart asks, each once, and a chart whose figure needs
another build drawn anew by it. Waits are for page conditions, never for time; nothing is
timed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import plotly.io
import pytest

from devtools.plotly_calls import RECORD_PLOTLY_CALLS

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)
CHART = ".st-key-embeddings .js-plotly-plot"
DIMS = """([selector, dims]) => {
    const gd = document.querySelector(selector);
    return !!gd && !!gd._fullData && gd._fullData.length === 3
        && gd.querySelectorAll('g.hm').length === 3
        && gd._fullData.every(t => t.z[0].length === dims);
}"""
PLOTLY_LOADS = """() => performance.getEntriesByType('resource')
    .filter(r => r.name.includes('.min.js?v='))
    .map(r => [r.name.split('/').slice(-2).join('/'), r.transferSize])"""


def wait_for_dims(page: Any, dims: int) -> None:
    page.wait_for_function(DIMS, arg=[CHART, dims], timeout=LOAD_TIMEOUT)


def test_one_graph_lives_across_reruns_and_changes_with_react(page: Any, server_url: str) -> None:
    page.add_init_script(RECORD_PLOTLY_CALLS)
    page.goto(server_url)
    wait_for_dims(page, 64)
    page.evaluate("(s) => { document.querySelector(s).__posvizMark = 'first'; }", CHART)
    thumb = page.locator(".st-key-emb_dim input[type=range]")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_dims(page, 65)
    thumb.press("ArrowRight")
    wait_for_dims(page, 66)
    assert page.evaluate("(s) => document.querySelector(s).__posvizMark", CHART) == "first"
    assert page.locator(CHART).count() == 1, "one graph, not a new one per figure"
    calls = page.evaluate("() => window.__plotlyCalls.map(c => c.name)")
    assert "newPlot" not in calls and "purge" not in calls, calls
    assert calls.count("react") >= 3, calls
    visibility = page.evaluate("(s) => document.querySelector(s).style.visibility", CHART)
    assert visibility != "hidden", "never drawn hidden"
    assert len(page.evaluate(PLOTLY_LOADS)) == 1, "plotly.js requested once for the page"
    assert page.console_errors == []


def test_plotly_js_comes_from_the_browsers_cache_on_the_next_page(
    browser: Any, server_url: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        first = context.new_page()
        first.goto(server_url)
        first.wait_for_selector(f"{CHART} g.hm", timeout=LOAD_TIMEOUT)
        ((name, transferred),) = first.evaluate(PLOTLY_LOADS)
        assert name.startswith("posviz_app._streamlit.plotly_js/plotly-cartesian.min.js?v="), name
        assert transferred > 300_000, "the first page downloads plotly.js (gzip, 0.5 MB)"
        second = context.new_page()
        second.goto(server_url)
        second.wait_for_selector(f"{CHART} g.hm", timeout=LOAD_TIMEOUT)
        assert second.evaluate(PLOTLY_LOADS) == [[name, 0]], "from the HTTP cache"
    finally:
        context.close()


def test_hover_shows_the_three_values_and_the_theme_colours_the_chart(
    page: Any, server_url: str
) -> None:
    page.goto(server_url)
    wait_for_dims(page, 64)
    cell = page.locator(f"{CHART} .xy .nsewdrag").first
    box = cell.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
    hover = page.locator(f"{CHART} .hoverlayer .hovertext")
    hover.first.wait_for(timeout=LOAD_TIMEOUT)
    text = hover.first.text_content() or ""
    assert "token id" in text and "= input" in text, text
    layout = page.evaluate(
        "(s) => { const l = document.querySelector(s)._fullLayout;"
        " return [l.paper_bgcolor, l.font.color, l.font.family]; }",
        CHART,
    )
    # .streamlit/config.toml: backgroundColor #ffffff, textColor #111111; Plotly's own font.
    assert layout[0] in ("#ffffff", "rgb(255, 255, 255)") and layout[1] in ("#111111", "#111")
    assert "Open Sans" in layout[2]
    # The default template travels beside the layout (encoded once) and is put back into it.
    template = page.evaluate("(s) => document.querySelector(s).layout.template", CHART)
    assert template == plotly.io.templates[plotly.io.templates.default].to_plotly_json()
    assert page.console_errors == []


# --- plotly.js builds: the page loads each once, and a chart changes build safely -----------

# A chart whose figure changes between a heatmap (the cartesian build) and a 3-D scatter (the
# gl3d one) under one key, beside a chart that is always 3-D.
SWITCH_APP = """import plotly.graph_objects as go
import streamlit as st
from posviz_app.chart import show_chart, start_plotly_early
start_plotly_early()
kind = st.radio("kind", ["no chart", "heatmap", "scatter3d"], horizontal=True)
points = go.Scatter3d(x=[0, 1, 2], y=[0, 1, 0], z=[1, 0, 1], mode="markers")
if kind != "no chart":
    switch = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]]) if kind == "heatmap" else points)
    show_chart(switch, key="switch")
    show_chart(go.Figure(points), key="three_d")
"""
SWITCH = ".st-key-switch .js-plotly-plot"
THREE_D = ".st-key-three_d .js-plotly-plot"
# The graph at `selector` shows a `kind` trace, drawn by `build` (3-D: its WebGL scene ready).
SHOWS = """([selector, kind, build]) => {
    const gd = document.querySelector(selector);
    if (!gd || !gd._fullData || gd._fullData.length !== 1 || gd.dataset.plotly !== build) {
        return false;
    }
    if (gd._fullData[0].type !== kind) return false;
    return kind === 'heatmap' ? !!gd.querySelector('g.hm')
        : !!(gd._fullLayout.scene && gd._fullLayout.scene._scene
             && gd._fullLayout.scene._scene.glplot);
}"""
BUILD_LOADS = """() => performance.getEntriesByType('resource')
    .filter(r => r.name.includes('.min.js?v=')).map(r => r.name.split('/').pop().split('?')[0])"""


PREFIX = "lab/posviz"  # served behind a path prefix, as behind a reverse proxy


@pytest.fixture(scope="module")
def switch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """:data:`SWITCH_APP` on a server of its own, under ``server.baseUrlPath`` :data:`PREFIX`."""
    from devtools.server import (
        ROOT,
        START_TIMEOUT,
        free_port,
        server_command,
        stop_process,
        wait_healthy,
    )

    app = tmp_path_factory.mktemp("switch") / "switch_app.py"
    app.write_text(SWITCH_APP, encoding="utf-8")
    port = free_port()
    command = server_command(port, app=app, options={"server.baseUrlPath": PREFIX})
    environment = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        url = f"http://127.0.0.1:{port}/{PREFIX}"
        wait_healthy(url, process, START_TIMEOUT)
        yield f"{url}/"
    finally:
        stop_process(process)


def test_the_page_loads_plotly_js_before_any_chart_asks(page: Any, switch_url: str) -> None:
    """start_plotly_early, at the top of the run, has the cartesian build fetched and evaluated
    on a page that draws no chart yet, and takes no room."""
    page.goto(switch_url)
    page.wait_for_function("() => !!window.Plotly && !!window.Plotly.react", timeout=LOAD_TIMEOUT)
    assert page.evaluate(BUILD_LOADS) == ["plotly-cartesian.min.js"]
    (asked,) = page.evaluate(
        "() => performance.getEntriesByType('resource').map(r => r.name)"
        ".filter(n => n.includes('.min.js?v='))"
    )
    assert asked.startswith(f"{switch_url}component/"), "from the app's own routes, prefix kept"
    assert page.locator(".js-plotly-plot").count() == 0
    loader = page.locator(".st-key-posviz_plotly")
    assert loader.count() == 1 and loader.evaluate("(e) => getComputedStyle(e).display") == "none"
    assert page.console_errors == []


def test_a_chart_that_needs_another_build_is_purged_and_drawn_anew(
    page: Any, switch_url: str
) -> None:
    page.add_init_script(RECORD_PLOTLY_CALLS)
    page.goto(switch_url)
    page.get_by_text("heatmap").click()
    page.wait_for_function(SHOWS, arg=[SWITCH, "heatmap", "cartesian"], timeout=LOAD_TIMEOUT)
    page.wait_for_function(SHOWS, arg=[THREE_D, "scatter3d", "gl3d"], timeout=LOAD_TIMEOUT)
    page.evaluate("(s) => { document.querySelector(s).__posvizMark = 'first'; }", SWITCH)
    page.evaluate("() => { window.__plotlyCalls.length = 0; }")
    page.get_by_text("scatter3d").click()
    page.wait_for_function(SHOWS, arg=[SWITCH, "scatter3d", "gl3d"], timeout=LOAD_TIMEOUT)
    page.get_by_text("heatmap").click()
    page.wait_for_function(SHOWS, arg=[SWITCH, "heatmap", "cartesian"], timeout=LOAD_TIMEOUT)
    calls = page.evaluate(
        "() => window.__plotlyCalls.filter(c => c.chart === 'switch').map(c => c.name)"
    )
    # Each change of build: the build that drew the graph lets go of it, the other draws it.
    assert calls == ["purge", "react", "purge", "react"], calls
    assert page.evaluate("(s) => document.querySelector(s).__posvizMark", SWITCH) == "first"
    assert page.locator(SWITCH).count() == 1, "the same graph, drawn anew"
    assert sorted(page.evaluate(BUILD_LOADS)) == [
        "plotly-cartesian.min.js",
        "plotly-gl3d.min.js",
    ], "each build loaded once for the page"
    # The heatmap drawn again by the cartesian build answers hover; the 3-D chart still turns.
    cell = page.locator(f"{SWITCH} .xy .nsewdrag").first
    box = cell.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.25)
    page.locator(f"{SWITCH} .hoverlayer .hovertext").first.wait_for(timeout=LOAD_TIMEOUT)
    assert page.evaluate("(s) => document.querySelector(s)._fullData[0].type", THREE_D) == (
        "scatter3d"
    )
    # A 3-D scene at the screen's pixel ratio (1 here), not plotly.js's default of 2.
    ratio = "(s) => [window.devicePixelRatio, document.querySelector(s)._context.plotGlPixelRatio]"
    assert page.evaluate(ratio, THREE_D) == [1, 1]
    assert page.console_errors == []

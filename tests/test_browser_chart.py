"""posviz's chart component in a real browser (Debian's Chromium, Playwright, against the test
session's `streamlit run app.py`): one Plotly graph that lives across reruns, plotly.js loaded
once and then taken from the browser's cache, hover and the theme. Waits are for page
conditions, never for time; nothing is timed.
"""

from __future__ import annotations

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
    .filter(r => r.name.includes('/plotly.min.js'))
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
        assert name.startswith("posviz_app._streamlit.plotly/plotly.min.js?v="), name
        assert transferred > 1_000_000, "the first page downloads plotly.js (gzip, 1.5 MB)"
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

"""A real browser against a real server: Debian's Chromium, driven by Playwright, loads
`streamlit run app.py` on 127.0.0.1 (see conftest.py). Waits are for selectors and page
conditions, never for time.

The figure is read from Plotly's graph div: ``gd._fullData[i].z`` is the decoded [rows, dims]
matrix plotly.js draws, and each drawn heatmap is a ``g.hm`` layer.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_browser_page import settle

pytestmark = pytest.mark.browser

SCREENSHOT = "/tmp/posviz_browser.png"  # outside the repository on purpose
LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)
CHART = ".st-key-embeddings .js-plotly-plot"

# [[type, rows, dims], ...] of the drawn traces, or null before three heatmap layers exist.
DRAWN = """(selector) => {
    const gd = document.querySelector(selector);
    if (!gd || !gd._fullData || gd.querySelectorAll('g.hm').length !== 3) return null;
    return gd._fullData.map(t => [t.type, t.z.length, t.z[0].length]);
}"""


# Each panel title as the words it shows, its lines (one <tspan> each) joined by spaces.
TITLE_LINES = """(selector) => Array.from(
    document.querySelectorAll(selector + ' .annotation-text'),
    (text) => {
        const lines = text.querySelectorAll('tspan.line');
        const parts = lines.length
            ? Array.from(lines, (line) => line.textContent) : [text.textContent];
        return parts.join(' ');
    })"""


def drawn(page: Any) -> list[list[object]] | None:
    result = page.evaluate(DRAWN, CHART)
    return None if result is None else list(result)


def wait_for_dims(page: Any, dims: int) -> None:
    """Until all three drawn heatmaps have ``dims`` columns."""
    page.wait_for_function(
        """([selector, dims]) => {
            const gd = document.querySelector(selector);
            return !!gd && !!gd._fullData && gd._fullData.length === 3
                && gd.querySelectorAll('g.hm').length === 3
                && gd._fullData.every(t => t.type === 'heatmap' && t.z[0].length === dims);
        }""",
        arg=[CHART, dims],
        timeout=LOAD_TIMEOUT,
    )


def open_app(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(CHART, timeout=LOAD_TIMEOUT)
    wait_for_dims(page, 64)  # the default emb_dim
    # and settled: the chart's size report and its rerun are over (the shapes line follows
    # the window's measured height; CI once read the page before that rerun and found the
    # short window's one-line form)
    settle(page)


def test_page_loads_with_three_heatmaps_chips_and_shapes(page: Any, server_url: str) -> None:
    open_app(page, server_url)
    assert drawn(page) == [["heatmap", 9, 64]] * 3  # "A rose is a rose is a rose." is 9 tokens
    body = page.inner_text("body")
    assert "Token + position = input embeddings" in body
    assert "8278" in body  # the chip of " rose"
    assert re.search(r"= input embeddings \[B, T, d\]\s+\[1, 9, 64\]", body)
    titles = page.evaluate(TITLE_LINES, CHART)  # a title may wrap onto several lines
    assert [t.split("(")[0].strip() for t in titles[:3]] == [
        "token embeddings",
        "positional embeddings",
        "input embeddings = sum",
    ]
    page.screenshot(path=SCREENSHOT, full_page=True)
    assert page.console_errors == []  # nothing ignored
    assert page.dialogs == []


def test_moving_the_emb_dim_slider_redraws_the_figure(page: Any, server_url: str) -> None:
    open_app(page, server_url)
    thumb = page.locator(".st-key-emb_dim input[type=range]")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_dims(page, 65)
    assert drawn(page) == [["heatmap", 9, 65]] * 3
    thumb.press("End")
    wait_for_dims(page, 768)
    x_range = page.evaluate("(s) => document.querySelector(s)._fullLayout.xaxis.range", CHART)
    assert x_range[1] > 700  # the dimension axis now reaches d = 768
    body = page.inner_text("body")
    assert re.search(r"= input embeddings \[B, T, d\]\s+\[1, 9, 768\]", body)
    assert page.console_errors == []


def test_moving_the_context_length_slider_changes_the_rows(page: Any, server_url: str) -> None:
    open_app(page, server_url)
    thumb = page.locator(".st-key-context_length input[type=range]")
    thumb.focus()
    thumb.press("Home")  # T = 1: nine windows of one token
    page.wait_for_function(
        "(selector) => { const gd = document.querySelector(selector);"
        " return !!gd && gd._fullData.length === 3 && gd._fullData[0].z.length === 1; }",
        arg=CHART,
        timeout=LOAD_TIMEOUT,
    )
    assert drawn(page) == [["heatmap", 1, 64]] * 3
    page.wait_for_selector(".st-key-window input[type=range]", timeout=LOAD_TIMEOUT)
    assert page.console_errors == []


def test_each_test_page_starts_with_nothing_stored(device_pages: Any, server_url: str) -> None:
    """The pages share their context's caches (conftest.py's DevicePages), never what a page
    stored: Streamlit keeps the sidebar's width and state in localStorage."""
    health = f"{server_url}/_stcore/health"  # an origin of the server's, without the app
    first = device_pages.open(390, 844)
    first.goto(health)
    first.evaluate(
        "() => { localStorage.setItem('sidebarWidth', '500'); document.cookie = 'a=1'; }"
    )
    device_pages.close(first)
    second = device_pages.open(390, 844)
    try:
        second.goto(health)
        stored, cookies = second.evaluate("() => [localStorage.length, document.cookie]")
        assert stored == 0 and "a=1" not in cookies.split("; "), (stored, cookies)
        assert first.is_closed() and second.context == first.context, "one context, two pages"
    finally:
        device_pages.close(second)

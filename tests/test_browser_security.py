"""Hostile text in a real Chromium: shown literally everywhere, never run or rendered.

The text arrives by URL (percent-encoded) or typed into the text area. Then: no dialog fires,
no element from the text exists in the page (no ``img[src=x]``, no ``<script>`` with ``alert``,
no ``javascript:`` link, no ``<b>`` element, no Plotly ``<b>``/``<br>``/``<sup>``/``<span>``
rendering in the SVG), the literal characters are readable in the chips, the y tick labels (every
labelled row) and the hover box, and the console stays clean. Waits are on selectors, never on time.
"""

from __future__ import annotations

import itertools
import re
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_browser_layout import wait_drawn

from posviz.plots._identity import MARK_COLOURS

pytestmark = pytest.mark.browser

SCRIPTS = (
    '<img src=x onerror=alert(1)> <script>alert(2)</script> <a href="javascript:alert(3)">x</a>'
)
PLOTLY_TAGS = '<b>bold</b> <br> <sup>s</sup> <span style="color:red">red</span>'
CHART = ".js-plotly-plot .main-svg"
WAIT = 60_000  # ms: the first run of a fresh server imports torch


def own_colour(hex_colour: str) -> str:
    """``#c65102`` as the browser writes a computed colour: ``rgb(198, 81, 2)``."""
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


def chip_texts(page: Any) -> list[str]:
    """Token text of each chip, in order (chips read ``position · token · id``)."""
    badges = page.locator(".stMarkdownBadge").all_inner_texts()
    found = []
    for badge in badges:
        match = re.fullmatch(r"(\d+) · (.*) · (\d+)(?: · ×\d+)?", badge.strip())
        if match:
            found.append(match.group(2).replace("\u2060", ""))  # posviz's invisible joiners
    return found


def tick_texts(page: Any) -> list[str]:
    """Text of the y tick labels as drawn in the SVG, top to bottom."""
    return page.locator(".yaxislayer-above .ytick text").all_text_contents()


def as_typed(shown: str) -> str:
    return shown.replace("␣", " ")


def assert_nothing_injected(page: Any) -> None:
    assert page.locator("img[src='x']").count() == 0, "an <img> from the text was created"
    assert page.locator("a[href^='javascript' i]").count() == 0, "a javascript: link exists"
    scripts_with_alert = page.evaluate(
        "() => Array.from(document.scripts).filter(s => s.textContent.includes('alert(')).length"
    )
    assert scripts_with_alert == 0, "a <script> from the text was inserted"
    assert page.locator('[data-testid="stApp"] b', has_text="bold").count() == 0
    assert page.locator('[data-testid="stApp"] sup').count() == 0
    assert page.locator('[data-testid="stApp"] span[style*="color:red" i]').count() == 0
    # Plotly turns its label tags into <tspan>s: bold, a line break, superscript, a colour.
    # (The panel titles are the app's own bold text, so only ticks and hover are checked.)
    # posviz's own mark of a repeated token's row is let through: the whole label, from its
    # position on ("3 · ..."), bold in one of posviz's outline colours; text from the user
    # is only ever part of a label, after the position.
    styled = page.evaluate(
        """(own) => Array.from(document.querySelectorAll(
                '.js-plotly-plot .yaxislayer-above tspan, .js-plotly-plot .hoverlayer tspan'))
            .filter(t => !(t.closest('.yaxislayer-above')
                           && t.textContent === t.closest('text').textContent
                           && /^\\d+ · /.test(t.textContent)
                           && (own.includes(t.style.fill) || t.style.fontWeight === 'bold')))
            .filter(t => /font-weight:\\s*bold|fill:\\s*red|baseline-shift/i
                .test(t.getAttribute('style') || '')
                || (t.classList.contains('line') && !t.closest('.hoverlayer'))
                || t.querySelector('a')).length""",
        [own_colour(colour) for colour in MARK_COLOURS],
    )
    assert styled == 0, "Plotly rendered markup from the text"
    assert page.locator(".js-plotly-plot a").count() == 0
    assert not page.dialogs, f"a dialog fired: {page.dialogs}"


def hover_row(page: Any, row: int, rows: int) -> str:
    """Hover the middle of ``row`` in the first heatmap; return the hover box's text lines."""
    drag = page.locator(".js-plotly-plot .xy .nsewdrag").first
    hover = page.locator(".hoverlayer .hovertext", has_text=f"position · token: {row} · ").first
    # The box of *this* row, not the previous one. A redraw (the chart's size report, a rerun
    # of a loaded server) drops a hover under a still mouse, as it does in a user's browser
    # until the mouse moves: move it a pixel and back, as a hand does, until the box shows.
    # A redraw can also move the chart (CI once hovered stale coordinates for 60 s), so the
    # point is found again on every try, on screen, from the chart where it now stands.
    # The box can also go between showing and being read (a redraw landing just then): its
    # lines are read at once, and an empty read is a box that went, hovered again.
    lines: list[str] = []
    seen = "nothing"
    for attempt in range(WAIT // 2_000):
        try:
            drag.scroll_into_view_if_needed(timeout=2_000)
            box = drag.bounding_box(timeout=2_000)
            assert box is not None
            x = box["x"] + box["width"] * 0.1 + attempt % 2
            y = box["y"] + box["height"] * (row + 0.5) / rows
            seen = page.evaluate(UNDER_POINT, [x, y])
            height = page.viewport_size["height"]
            if not 0 < y < height:  # the row is off screen: scroll it to the middle
                page.mouse.wheel(0, y - height / 2)
                continue
            page.mouse.move(x, y)
            hover.wait_for(timeout=2_000)
            lines = hover.evaluate(
                "(box) => Array.from(box.querySelectorAll('tspan.line'), (t) => t.textContent)",
                timeout=2_000,
            )
        except PlaywrightTimeout:
            continue
        if lines:
            break
    else:
        shown = page.locator(".hoverlayer .hovertext").all_inner_texts()
        raise AssertionError(
            f"no hover box for row {row} after {WAIT} ms of moving onto it;"
            f" under the mouse: {seen}; hover boxes shown: {shown}"
        )
    assert len(lines) == 4, f"the hover box should have 4 lines (no <br> from the text): {lines}"
    return "\n".join(lines)


# What the mouse would touch at (x, y): a chart's drag layer, or what covers it.
UNDER_POINT = """([x, y]) => {
    const el = document.elementFromPoint(x, y);
    if (!el) return `nothing at (${x}, ${y})`;
    const cls = typeof el.className === 'string' ? el.className : el.className.baseVal;
    return `${el.tagName}.${cls} at (${Math.round(x)}, ${Math.round(y)})`;
}"""


def check_page(page: Any, text: str) -> None:
    page.set_viewport_size({"width": 1600, "height": 2400})  # every heatmap row on screen
    page.locator(CHART).first.wait_for(timeout=WAIT)
    wait_drawn(page)  # laid out again for the new size: a hover before that redraw is lost
    page.locator(".stMarkdownBadge").first.wait_for(timeout=WAIT)
    assert_nothing_injected(page)

    chips = chip_texts(page)
    assert as_typed("".join(chips)) == text, chips
    # Labelled: evenly spaced rows (as many as fit their font), and the rows of the repeated
    # tokens the figure outlines (as many as the axis has room for; the others give way).
    ticks = tick_texts(page)
    positions = [int(tick.split(" · ", 1)[0]) for tick in ticks]
    assert positions == sorted(positions) and len(ticks) >= 8, ticks
    repeated = {i for i, chip in enumerate(chips) if chips.count(chip) > 1}  # one text, one id
    marked = set(positions) & repeated
    spaced = [position for position in positions if position not in marked]
    step = min((b - a for a, b in itertools.pairwise(spaced)), default=1)
    assert all(position % step == 0 for position in spaced), (spaced, step)
    assert marked, "the rows of the most repeated tokens are labelled"
    assert any("<" in tick for tick in ticks), "a labelled row shows a literal tag"
    for position, tick in zip(positions, ticks, strict=True):
        assert tick == f"{position} · {chips[position]}", (tick, chips[position])

    rows = len(chips)
    for row in sorted({0, next(i for i, chip in enumerate(chips) if "<" in chip), rows - 1}):
        hover = hover_row(page, row, rows)
        first = hover.splitlines()[0]  # a repeated token's row also names its twins
        first = re.sub(r" \(same token vector as rows? [^()]*\)$", "", first)
        assert first == f"position · token: {row} · {chips[row]}", hover
        assert_nothing_injected(page)
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize(
    "text", [pytest.param(SCRIPTS, id="scripts"), pytest.param(PLOTLY_TAGS, id="plotly-tags")]
)
def test_hostile_text_from_the_url_is_literal(server_url: str, page: Any, text: str) -> None:
    page.goto(f"{server_url}/?context_length=64&text={quote(text)}")
    check_page(page, text)


def test_hostile_text_typed_into_the_text_area_is_literal(server_url: str, page: Any) -> None:
    page.goto(f"{server_url}/?context_length=64&text=start")
    page.locator(CHART).first.wait_for(timeout=WAIT)
    text = SCRIPTS
    area = page.get_by_test_id("stTextArea").locator("textarea")
    area.fill(text)
    area.press("Control+Enter")
    page.locator(".stMarkdownBadge", has_text="script").first.wait_for(timeout=WAIT)
    page.locator(".yaxislayer-above .ytick text", has_text="0 · <").first.wait_for(timeout=WAIT)
    check_page(page, text)


def test_markdown_from_the_url_in_notices_is_literal(server_url: str, page: Any) -> None:
    """Notices repeat URL text in st.warning (Markdown): no link or emphasis may appear."""
    key = quote("[click me](https://evil.example/login)")
    page.goto(f"{server_url}/?{key}=1&seed={quote('**bold** <b>x</b>')}")
    warnings = page.locator('[data-testid="stAlertContentWarning"]')
    warnings.first.wait_for(timeout=WAIT)
    shown = " ".join(warnings.all_inner_texts()).replace("\u2060", "")  # posviz word joiners
    assert "[click me](https://evil.example/login)" in shown, shown
    assert "**bold**" in shown, shown
    assert page.locator("a[href*='evil.example']").count() == 0, "a link from the URL rendered"
    assert page.locator('[data-testid="stAlertContentWarning"] strong').count() == 0
    assert_nothing_injected(page)

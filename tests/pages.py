"""What the browser tests do on posviz's page, in one place: open a tab by its button
(``devtools.pages``, shared with the benchmarks and the screenshot script), and wait for a
sentence, failing with what the page shows instead."""

from __future__ import annotations

from typing import Any

from devtools.pages import TAB_BUTTONS, TAB_PANEL, open_tab

__all__ = [
    "LOAD_TIMEOUT",
    "SMALLEST",
    "SMALL_TEXTS",
    "TAB_BUTTONS",
    "TAB_PANEL",
    "component_page",
    "open_tab",
    "wait_for_text",
]

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)

SMALLEST = 20  # px: what the guide promises a lecture's reader
# Every visible text of the lecture stage whose computed font is under `min` px: its text, its
# size, its element (HTML and the charts' SVG alike).
SMALL_TEXTS = """(min) => {
    const stage = document.querySelector('.st-key-lecture_stage');
    const found = [];
    const walker = document.createTreeWalker(stage, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const text = walker.currentNode.textContent.trim();
        const element = walker.currentNode.parentElement;
        if (!text || !element) continue;
        const box = element.getBoundingClientRect();
        const style = getComputedStyle(element);
        if (box.width === 0 || box.height === 0 || style.visibility === 'hidden'
            || Number(style.opacity) === 0 || element.closest('.hoverlayer, .modebar')) continue;
        const size = parseFloat(style.fontSize);
        if (size < min - 0.01) found.push([text.slice(0, 50), size, element.tagName]);
    }
    return found;
}"""


def component_page(page: Any, source: str, harness: str) -> Any:
    """``page`` emptied, with a component's module (``posviz_app/*.js``) imported from a blob,
    as Streamlit imports inline JS, as ``window.module``; then ``harness`` (a JS function of
    no arguments) run to set up how a test drives it. No server: the component alone."""
    page.set_content("<!doctype html><html><body></body></html>")
    page.evaluate(
        """async (source) => { const type = 'text/javascript';
            window.module = await import(URL.createObjectURL(new Blob([source], { type }))); }""",
        source,
    )
    page.evaluate(harness)
    return page


def wait_for_text(page: Any, words: str) -> None:
    """Wait for ``words`` on the page; if they never come, fail saying what the page shows
    instead (its text boxes' lengths, its alerts, whether a chart was drawn)."""
    try:
        page.wait_for_function(
            "(words) => document.body.innerText.includes(words)", arg=words, timeout=LOAD_TIMEOUT
        )
    except Exception as error:  # Playwright's TimeoutError
        shown = page.evaluate(
            """() => ({
                boxes: [...document.querySelectorAll('textarea')].map((t) => t.value.length),
                alerts: [...document.querySelectorAll('[data-testid="stAlert"]')]
                    .map((a) => a.innerText),
                chart: document.querySelector('.js-plotly-plot') !== null,
            })"""
        )
        raise AssertionError(f"never shown: {words!r}; the page shows {shown}") from error

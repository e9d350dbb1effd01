"""What the browser tests do on posviz's page, in one place: open a tab by its button
(``devtools.pages``, shared with the benchmarks and the screenshot script), and wait for a
sentence, failing with what the page shows instead."""

from __future__ import annotations

from typing import Any

from devtools.pages import TAB_BUTTONS, TAB_PANEL, open_tab

__all__ = ["LOAD_TIMEOUT", "TAB_BUTTONS", "TAB_PANEL", "open_tab", "wait_for_text"]

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)


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

"""Issue 42, item 2, in a real browser (Debian's Chromium, Playwright, `streamlit run` on
127.0.0.1): with "I love pizza 🍕🍕 and pizza loves me 😀" at T = 8 the window ends inside the
second 🍕 and the dropped tokens start inside it. The Attention tab's row labels, as plotly.js
drew them, and the "Dropped:" line name the character in each of its tokens, as the chips do
("🍕 (1 of 3)"), never as loose bytes ("\\xf0\\x9f", "\\x95"). The names are the reference's
(tests/reference.py: tiktoken and Python's UTF-8 decoder).

Waits are for page conditions, never for time; nothing is timed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from pages import wait_for_text
from reference import character_tokens
from test_browser_layout import ATTENTION, wait_drawn

pytestmark = pytest.mark.browser

PIZZA = "I love pizza 🍕🍕 and pizza loves me 😀"
T = 8
# The row labels plotly.js drew left of the first heatmap (its y axis), top to bottom.
ROW_LABELS = """(selector) => {
    const gd = document.querySelector(selector);
    return Array.from(gd.querySelectorAll('.yaxislayer-above .ytick text'), (t) => t.textContent);
}"""
DROPPED = """() => Array.from(document.querySelectorAll('[data-testid="stMarkdownContainer"]'),
    (m) => m.innerText).find((text) => text.startsWith('Dropped:'))"""


def test_attention_rows_and_the_dropped_line_name_split_characters(
    sized: Any, server_url: str
) -> None:
    page = sized(1920, 1080)
    page.goto(
        f"{server_url}/?{urlencode({'text': PIZZA, 'context_length': T, 'tab': 'attention'})}"
    )
    wait_drawn(page, 4, ATTENTION)
    names = character_tokens(PIZZA)
    assert names[6:9] == ["🍕 (1 of 3)", "🍕 (2 of 3)", "🍕 (3 of 3)"]  # split by the edge
    rows = page.evaluate(ROW_LABELS, ATTENTION)
    assert rows and not any("\\x" in row for row in rows), rows
    assert "6 · 🍕 (1 of 3)" in rows and "7 · 🍕 (2 of 3)" in rows, rows
    wait_for_text(page, "Dropped:")
    dropped = page.evaluate(DROPPED)
    struck = names[len(names) - len(names) % T :]  # after the last full window
    assert dropped is not None and "\\x" not in dropped, dropped
    assert dropped.endswith(" ".join(struck)), (dropped, struck)
    assert page.console_errors == []

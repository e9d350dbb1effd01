"""Lecture type in a real browser (issue 42 item 5): every text a student reads on a slide,
the narration, the question and answer, the navigation and every chart text, is at least
20 px, read as the browser computed it, on every slide at 1280 x 720 (the smallest projector
the lecture promises) and on a phone (390 x 844, a phone's User-Agent).

Debian's Chromium against `streamlit run app.py` (conftest.py); waits are for page conditions.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_browser_layout import STEP_TITLES, wait_step

pytestmark = pytest.mark.browser

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


@pytest.mark.parametrize(
    ("width", "height", "phone"), [(1280, 720, False), (390, 844, True)], ids=["1280x720", "phone"]
)
def test_every_lecture_text_is_at_least_20_px(
    sized: Any, server_url: str, width: int, height: int, phone: bool
) -> None:
    page = sized(width, height, phone=phone)
    page.goto(f"{server_url}/?lecture=1")
    small: dict[int, list[Any]] = {}
    for number in range(1, len(STEP_TITLES) + 1):
        if number > 1:
            page.locator(".posviz-nav-next").click()
        wait_step(page, number)
        found = page.evaluate(SMALL_TEXTS, SMALLEST)
        if found:
            small[number] = found
    assert small == {}, "\n".join(f"slide {n}: {texts}" for n, texts in small.items())
    assert page.console_errors == []

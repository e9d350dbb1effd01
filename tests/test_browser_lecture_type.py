"""Lecture type in a real browser (issue 42 item 5): every text a student reads on a slide,
the narration, the question and answer, the navigation and every chart text, is at least
20 px, read as the browser computed it, on every slide on a phone (390 x 844, a phone's
User-Agent); at 1920 x 1080 and 1280 x 720 (the smallest projector the lecture promises)
test_browser_layout checks it on its walk through the slides.

Debian's Chromium against `streamlit run app.py` (conftest.py); waits are for page conditions.
"""

from __future__ import annotations

from typing import Any

import pytest
from pages import SMALL_TEXTS, SMALLEST
from test_browser_layout import STEP_TITLES, wait_step

pytestmark = pytest.mark.browser


def test_every_lecture_text_is_at_least_20_px_on_a_phone(sized: Any, server_url: str) -> None:
    """(The projectors' sizes, 1920 x 1080 and 1280 x 720, are checked on the same walk
    through the slides as their fit: test_browser_layout.)"""
    page = sized(390, 844, phone=True)
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

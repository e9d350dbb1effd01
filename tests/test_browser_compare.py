"""The Word order tab (compare mode) in a real browser: Debian's Chromium against the test
session's `streamlit run app.py` (see conftest.py). Waits are for page conditions, never time."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 120_000  # ms: the server's first run imports torch
CHART = ".st-key-compare .js-plotly-plot"
QUERY = {"text": "The dog bites the man", "compare": "The man bites the dog"}
# [[type, rows, dims], ...] once eight heatmap layers are drawn, else null.
DRAWN = """(selector) => {
    const gd = document.querySelector(selector);
    if (!gd || !gd._fullData || gd.querySelectorAll('g.hm').length !== 8) return null;
    return gd._fullData.map(t => [t.type, t.z.length, t.z[0].length]);
}"""


def test_a_compare_link_draws_both_texts_and_the_numbers(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/?{urlencode(QUERY)}")
    page.wait_for_function(f"() => ({DRAWN})({CHART!r}) !== null", timeout=LOAD_TIMEOUT)
    assert page.evaluate(DRAWN, CHART) == [["heatmap", 5, 64]] * 8
    page.get_by_text("To this layer both texts are the same bag of tokens").wait_for(
        timeout=LOAD_TIMEOUT
    )
    body = page.inner_text("body")
    assert "1.000000" in body  # the cosine of the mean context vectors, no positions
    assert page.locator('[data-testid="stException"]').count() == 0

    page.get_by_text("Causal mask, as GPT").click()  # the toggle's label
    page.get_by_text("The mask alone breaks the symmetry").wait_for(timeout=LOAD_TIMEOUT)
    page.get_by_text("What the causal mask does and does not mean").wait_for(timeout=LOAD_TIMEOUT)
    assert "causal=1" in page.url
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.dialogs

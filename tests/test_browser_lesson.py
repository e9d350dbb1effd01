"""The lesson features in a real browser: Debian's Chromium, driven by Playwright, against
`streamlit run app.py` on 127.0.0.1 (see conftest.py). Waits are for selectors and page
conditions, never for time.

The figures are read from Plotly's graph divs: ``gd.data[i].visible`` is what lecture mode
sets, and each heatmap plotly.js actually draws is one ``g.hm`` layer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pages import open_tab, wait_for_text

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)
EMBEDDINGS = ".st-key-embeddings .js-plotly-plot"
SIMILARITY = ".st-key-similarity .js-plotly-plot"

# [visible flags, drawn heatmap layers] of a chart, or null while it is not on the page.
PANELS = """(selector) => {
    const gd = document.querySelector(selector);
    if (!gd || !gd.data) return null;
    return [gd.data.map(t => t.visible !== false), gd.querySelectorAll('g.hm').length];
}"""


def wait_for_panels(page: Any, selector: str, shown: int, traces: int = 3) -> None:
    """Until the chart has ``traces`` traces, the first ``shown`` visible and drawn."""
    page.wait_for_function(
        """([selector, shown, traces]) => {
            const gd = document.querySelector(selector);
            return !!gd && !!gd.data && gd.data.length === traces
                && gd.data.filter(t => t.visible !== false).length === shown
                && gd.querySelectorAll('g.hm').length === shown;
        }""",
        arg=[selector, shown, traces],
        timeout=LOAD_TIMEOUT,
    )


def panels(page: Any, selector: str) -> list[object] | None:
    result = page.evaluate(PANELS, selector)
    return None if result is None else list(result)


def test_similarity_tab_draws_three_heatmaps(page: Any, server_url: str) -> None:
    page.goto(server_url)
    page.wait_for_selector(EMBEDDINGS, timeout=LOAD_TIMEOUT)
    open_tab(page, "Similarity")
    wait_for_panels(page, SIMILARITY, 3)
    assert panels(page, SIMILARITY) == [[True, True, True], 3]
    sizes = page.evaluate(
        "(s) => document.querySelector(s)._fullData.map(t => [t.z.length, t.z[0].length])",
        SIMILARITY,
    )
    assert sizes == [[9, 9]] * 3  # "A rose is a rose is a rose." is 9 tokens
    wait_for_text(page, "“␣rose” (1, 4), (1, 7) and (4, 7)")  # all three, not the first two
    assert "5 pairs of positions read 1.000 in the token panel" in page.inner_text("body")
    assert page.console_errors == []
    assert page.dialogs == []


def test_lecture_link_steps_through_the_pipeline(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/?lecture=1")
    next_button = page.locator(".posviz-nav-next")
    back_button = page.locator(".posviz-nav-back")
    page.get_by_role("heading", name="1. Text").wait_for(timeout=LOAD_TIMEOUT)
    assert back_button.is_disabled()
    assert page.locator(EMBEDDINGS).count() == 0  # step 0: the text, no chart yet

    next_button.click()
    page.get_by_role("heading", name="2. Token IDs").wait_for(timeout=LOAD_TIMEOUT)
    assert page.locator(EMBEDDINGS).count() == 0
    wait_for_text(page, "1 · ␣rose · 8278 · ×3")  # the chip of " rose" at position 1

    # token (asked, answered) | + position | the sum asked (still 2 panels), answered. Each
    # click waits for its slide's own title: slide 6 draws as many panels as slide 5, so its
    # panels alone would not say that the click was taken.
    for number, shown in enumerate((1, 1, 2, 2, 3), start=3):
        next_button.click()
        title = re.compile(rf"^{number}\. ")
        page.get_by_role("heading", name=title).wait_for(timeout=LOAD_TIMEOUT)
        wait_for_panels(page, EMBEDDINGS, shown, traces=shown)
        assert panels(page, EMBEDDINGS) == [[True] * shown, shown]
    page.get_by_role("heading", name="7. Input embeddings").wait_for(timeout=LOAD_TIMEOUT)
    wait_for_text(page, "Answer:")
    assert not next_button.is_disabled(), "similarity and word order follow"

    back_button.click()
    wait_for_panels(page, EMBEDDINGS, 2, traces=2)
    assert page.console_errors == []
    assert page.dialogs == []


def test_charts_offer_a_png_download_button(page: Any, server_url: str, tmp_path: Path) -> None:
    page.goto(server_url)
    wait_for_panels(page, EMBEDDINGS, 3)
    camera = page.locator(f"{EMBEDDINGS} .modebar-btn[data-title='Download plot as a PNG']")
    assert camera.count() == 1
    page.hover(EMBEDDINGS)  # the modebar shows on hover
    with page.expect_download(timeout=LOAD_TIMEOUT) as download:
        camera.click()
    assert download.value.suggested_filename == "posviz.png"
    saved = tmp_path / "posviz.png"
    download.value.save_as(saved)
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    open_tab(page, "Similarity")
    wait_for_panels(page, SIMILARITY, 3)
    camera = page.locator(f"{SIMILARITY} .modebar-btn[data-title='Download plot as a PNG']")
    assert camera.count() == 1
    assert page.console_errors == []

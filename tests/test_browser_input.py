"""What the user gives is never lost, in the real browser: pastes past the limit, the seed box,
and GPT-2 chosen where it cannot be had (Debian's Chromium, Playwright, `streamlit run`).

A paste goes through the system clipboard and Ctrl+V, as a person pastes: Playwright writes
the text with ``navigator.clipboard.writeText`` (clipboard permission granted to the page's
origin) and presses Control+V in the box. With Streamlit's ``max_chars`` on the text area this
is the paste the browser refused whole (the old text stayed, no message); AppTest never sees it.

The server of these tests inherits conftest's environment: ``HF_HUB_OFFLINE=1`` and an empty
cache folder, so GPT-2's tables cannot be had.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pages import wait_for_text

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)
CHART = ".st-key-embeddings .js-plotly-plot"
# The seed box: its key names the seed it shows (posviz_app.state.derived_key), seed_box=7.
SEED_BOX = '[class*="st-key-seed_box-"] input'
LIMIT = 25_000  # posviz.config.MAX_TEXT_CHARS, as the page announces it
TEXT = ("The Verdict. " * 3_000)[:30_000]


def open_page(browser: Any, url: str, ready: str = CHART) -> Any:
    """A page on ``url`` whose clipboard Playwright may write, once ``ready`` is shown."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.split("/?")[0])
    page = context.new_page()
    page.console_errors = []
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector(ready, timeout=LOAD_TIMEOUT)
    return page


def paste(page: Any, box: str, text: str) -> None:
    """Select all in the text area ``box`` and paste ``text`` with Ctrl+V, then apply it."""
    area = page.locator(f"{box} textarea")
    area.focus()
    page.keyboard.press("Control+A")
    page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+V")
    # In the box before it is applied (the browser's box has no limit): a failure below is
    # then the page's, not the paste's.
    wait_for_box_length(page, box, len(text))
    page.keyboard.press("Control+Enter")


def wait_for_box_length(page: Any, box: str, length: int) -> None:
    page.wait_for_function(
        "([box, n]) => document.querySelector(box + ' textarea').value.length === n",
        arg=[box, length],
        timeout=LOAD_TIMEOUT,
    )


@pytest.mark.parametrize(
    ("query", "box"),
    [
        pytest.param("", ".st-key-text", id="text"),
        pytest.param("?compare=The+man+bites+the+dog", ".st-key-compare_text", id="word-order"),
    ],
)
def test_a_30000_character_paste_keeps_25000_and_says_so(
    browser: Any, server_url: str, query: str, box: str
) -> None:
    page = open_page(browser, server_url + query, f"{box} textarea")
    try:
        paste(page, box, TEXT)
        wait_for_text(page, "The text had 30,000 characters: posviz keeps the first 25,000")
        wait_for_box_length(page, box, LIMIT)
        assert page.locator(f"{box} textarea").input_value() == TEXT[:LIMIT]
        assert page.console_errors == []
    finally:
        page.context.close()


def test_a_24000_character_paste_is_taken_whole(browser: Any, server_url: str) -> None:
    page = open_page(browser, server_url)
    try:
        paste(page, ".st-key-text", TEXT[:24_000])
        # The server has the whole text: the note under the box counts its characters.
        wait_for_text(page, "This text (24,000 characters) is too long for the page's link")
        assert page.locator(".st-key-text textarea").input_value() == TEXT[:24_000]
        assert "posviz keeps the first" not in page.inner_text("body")
    finally:
        page.context.close()


def test_a_seed_typed_as_text_is_named_and_the_seed_stays(browser: Any, server_url: str) -> None:
    page = open_page(browser, server_url + "/?seed=7")
    try:
        seed = page.locator(SEED_BOX)
        seed.focus()
        page.keyboard.press("Control+A")
        page.keyboard.type("abc")
        page.keyboard.press("Enter")
        wait_for_text(page, "Seed: 'abc' is not a whole number from 0 to 4,294,967,295")
        # the chart reports its size after the run: the notice and the text typed both stay
        page.wait_for_function(
            "(s) => document.querySelector(s).dataset.fits === 'true'", arg=CHART,
            timeout=LOAD_TIMEOUT,
        )  # fmt: skip
        assert "still using 7" in page.inner_text("body")
        assert page.locator(SEED_BOX).input_value() == "abc", "what was typed, to be mended"
        assert parse_qs(urlsplit(page.url).query)["seed"] == ["7"]
    finally:
        page.context.close()


def test_gpt2_unavailable_brings_back_the_users_view(browser: Any, server_url: str) -> None:
    """From ?emb_dim=32&seed=5, GPT-2 chosen with no network and no cache: one message with
    the command to run; the radio on the random init; d 32, seed 5, scheme, all enabled; the
    chart at d = 32; the link without weights."""
    page = open_page(browser, server_url + "/?emb_dim=32&seed=5")
    try:
        page.locator(".st-key-weights label").filter(has_text="GPT-2 124M").click()
        wait_for_text(page, "python -m posviz --fetch-gpt2")
        wait_for_text(page, "Showing the book's random init instead (d = 32, seed 5")
        page.wait_for_function(
            """(selector) => {
                const gd = document.querySelector(selector);
                return !!gd && !!gd._fullData && gd._fullData.length === 3
                    && gd._fullData.every(t => t.z[0].length === 32);
            }""",
            arg=CHART,
            timeout=LOAD_TIMEOUT,
        )
        radios = page.locator(".st-key-weights input[type=radio]")
        assert [radios.nth(i).is_checked() for i in range(radios.count())] == [True, False]
        d = page.locator(".st-key-emb_dim input[type=range]")
        assert d.input_value() == "32" and d.is_enabled()
        seed = page.locator(SEED_BOX)
        assert seed.input_value() == "5" and seed.is_enabled()
        assert page.locator(".st-key-scheme input").is_enabled()
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"emb_dim": ["32"], "seed": ["5"]}
        assert page.inner_text("body").count("--fetch-gpt2") == 1
    finally:
        page.context.close()

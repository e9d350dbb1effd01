"""Every sentence agrees with the chart beside it, in a real browser (issue 24): Debian's
Chromium, driven by Playwright, against `streamlit run app.py` on 127.0.0.1 (see conftest.py).

The reproductions, as users met them: the figure is read from the graph plotly.js drew (its
``_fullData`` and layout), the sentence from the page, and tests/reference.py (never posviz)
says what the sentence must say about that figure.

* T = 1,024, d = 768, a 1,024-token window: the sentence names the token the figure outlines
  first and quotes the largest difference of its drawn cells (the panels draw every 12th
  dimension), saying it is over those;
* the Word-order slides of a link with T = 4 compare the example pair whole, and say so;
* two identical texts are "the same rows", not rows that differ by 0.000;
* a character split over tokens is named in the sentence as the chips name it, never as bytes.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
from reference import (
    axis_rows,
    heatmap_z,
    largest_row_difference,
    outlined_rows,
    panel_places,
    token_ids,
)
from test_browser_page import settle

from benchmarks.texts import long_text

pytestmark = pytest.mark.browser

LOAD_TIMEOUT = 180_000  # ms: the server's first run imports torch (on a busy machine)
CHART = ".st-key-embeddings .js-plotly-plot"
# The figure plotly.js drew, as plain JSON: each heatmap's z and y (from _fullData, decoded)
# and the layout the page sent (shapes, axes with their ticks).
DRAWN_FIGURE = """(selector) => {
    const gd = document.querySelector(selector);
    const data = gd._fullData.map(t => ({
        type: t.type, xaxis: t.xaxis, yaxis: t.yaxis,
        z: t.z ? Array.from(t.z, row => Array.from(row)) : null,
        y: t.y ? Array.from(t.y) : null,
    }));
    return {data, layout: JSON.parse(JSON.stringify(gd.layout))};
}"""


def drawn(page: Any, selector: str = CHART) -> dict[str, Any]:
    figure: dict[str, Any] = page.evaluate(DRAWN_FIGURE, selector)
    return figure


def lesson(page: Any) -> str:
    return str(page.locator(".st-key-lesson").inner_text()).replace("\u2060", "")


def named_token(sentence: str) -> tuple[str, list[int]]:
    """The token the sentence names first and the positions it lists (before "and N more")."""
    found = re.search(r"“(.+?)” is at positions ([\d, and]+?)(?: and \d+ more)?:", sentence)
    assert found is not None, sentence
    positions = [int(p) for p in re.findall(r"\d+", found[2])]
    return found[1], positions


def test_a_1024_token_window_is_named_and_measured_as_drawn(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/?context_length=1024&emb_dim=768")
    settle(page)
    area = page.locator(".st-key-text textarea")
    area.fill(long_text())
    area.press("Control+Enter")
    page.wait_for_function(
        "(s) => { const gd = document.querySelector(s);"
        " return !!gd && !!gd._fullData && gd._fullData[0].z.length === 1024; }",
        arg=CHART,
        timeout=LOAD_TIMEOUT,
    )
    settle(page)
    figure = drawn(page)
    sentence = lesson(page)
    name, listed = named_token(sentence)
    rows, _dash = outlined_rows(figure, "x")[0]  # the token panel's first outlined token
    labels = axis_rows(figure)
    # a long window's row labels are the token alone, a short one's "position · token";
    # twins closer than a label's height share the first one's label (issue 42)
    assert rows[0] in labels, "the named token's first row is labelled"
    assert {labels[row].split(" · ")[-1] for row in rows if row in labels} == {name}, rows
    assert listed == list(rows[: len(listed)])
    columns = heatmap_z(figure, 0).shape[1]
    assert columns < 768, "the panels draw a sample of the dimensions"
    inputs = heatmap_z(figure, 2)[list(rows)]
    quoted = re.search(
        r"input panel, (\w+): largest difference ([\d.]+) over the (\d+) of 768", sentence
    )
    assert quoted is not None, sentence
    assert quoted[1] == panel_places(figure)[2]
    assert float(quoted[2]) == pytest.approx(largest_row_difference(inputs), abs=0.005)
    assert int(quoted[3]) == columns
    assert page.console_errors == []


def test_the_word_order_slides_of_a_short_window_compare_the_pair_whole(
    page: Any, server_url: str
) -> None:
    query = {"text": "Every effort moves you", "context_length": "4", "lecture": "1"}
    page.goto(f"{server_url}/?{urlencode(query | {'step': '10'})}")
    page.get_by_role("heading", name="10. Word order").wait_for(timeout=LOAD_TIMEOUT)
    texts = page.locator(".st-key-word_order_texts").inner_text()
    assert "The dog bites the man" in texts and "The man bites the dog" in texts, texts
    page.locator(".posviz-nav-next").click()
    page.get_by_role("heading", name="11. Word order").wait_for(timeout=LOAD_TIMEOUT)
    plot = ".st-key-compare .js-plotly-plot"
    settle(page, plot)
    answer = page.locator(".st-key-lecture_answer").inner_text()
    assert "not the same tokens" not in answer, answer
    assert "No: without positions each context vector" in answer, answer
    figure = drawn(page, plot)
    rows = {len(trace["z"]) for trace in figure["data"] if trace["type"] == "heatmap"}
    assert rows == {len(token_ids("The dog bites the man"))}, "each text whole, 5 tokens"


def test_two_identical_texts_get_a_sentence_not_a_chart(page: Any, server_url: str) -> None:
    """Identical texts (issue 42): the sentence says there is no order to compare, and no
    chart follows it (its panels said "differ" and "same rows, reordered")."""
    same = "The dog bites the man"
    page.goto(f"{server_url}/?{urlencode({'text': same, 'compare': same, 'tab': 'word-order'})}")
    page.get_by_text("are the same tokens in the same order").wait_for(timeout=LOAD_TIMEOUT)
    page.wait_for_function(  # Streamlit idle: the run that would have drawn a chart is over
        """() => !document.querySelector('[data-stale="true"]')
            && !document.querySelector('[data-testid="stStatusWidget"]')""",
        timeout=LOAD_TIMEOUT,
    )
    body = page.inner_text("body").replace("\u2060", "")
    assert "no order to compare and no chart" in body
    assert page.locator(".st-key-compare .js-plotly-plot").count() == 0
    assert "differ" not in body and "reordered" not in body
    assert "not the same rows" not in body


def test_a_character_split_over_tokens_is_named_as_the_chips_name_it(
    page: Any, server_url: str
) -> None:
    text = "I like 🍣, and 🍣 likes me."
    page.goto(f"{server_url}/?{urlencode({'text': text})}")
    settle(page)
    sentence = lesson(page)
    chips = page.locator(".stMarkdown").filter(has_text="×2").first.inner_text()
    assert "\\x" not in sentence and "\\x" not in chips, sentence
    name, _ = named_token(sentence)
    assert "🍣" in name and name in chips, (name, chips)

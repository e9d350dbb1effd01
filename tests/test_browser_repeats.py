"""Issue 15 in a real browser (Debian's Chromium, Playwright, `streamlit run` on 127.0.0.1):
the lesson made visible, checked by geometry and text. Waits are for page conditions, never
for time; nothing is timed.

* The outlines of a repeated token's rows, read from the drawn figure (Plotly's shape paths),
  sit on the rows whose tick labels name that token, in the token and the input panel; they
  stay there when the window (and so the chart) changes height.
* In lecture mode at 1280x720, with a 16-token sentence, every repeated row has its label
  (and the labels do not collide).
* The lesson sentence is body text (>= 16 px, not a caption) inside the first screen at
  1440x900 and 1280x800, with its numbers.
* The Similarity and Word-order lecture steps ask first and reveal on the next click.
* Repeated-token chips stand out from the others on a projector, and say how often.
* Chips of CJK text name the character each token is part of.
* On a phone the words say top / bottom, never left / right.
"""

from __future__ import annotations

from typing import Any

import pytest
from pages import open_tab
from reference import repeated_groups
from test_browser_layout import COLLISIONS, DRAWN, IDLE, LOAD_TIMEOUT

from posviz.tokenizer import encode

pytestmark = pytest.mark.browser

EMBEDDINGS = ".st-key-embeddings .js-plotly-plot"
SIMILARITY = ".st-key-similarity .js-plotly-plot"
COMPARE = ".st-key-compare .js-plotly-plot"
ROSE = "A rose is a rose is a rose."
FOX = "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"
WHITE = "rgb(255, 255, 255)"

# What a chart drew: its heatmap boxes, tick labels (text, vertical centre) and outlines.
DRAWING = """(selector) => {
    const gd = document.querySelector(selector);
    const box = (el) => { const r = el.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
    return {
        panels: Array.from(gd.querySelectorAll('g.hm'), box),
        ticks: Array.from(gd.querySelectorAll('.yaxislayer-above .ytick text'), (t) => {
            const r = t.getBoundingClientRect();
            return [t.textContent, (r.top + r.bottom) / 2, r.top, r.bottom, r.left, r.right];
        }),
        outlines: Array.from(gd.querySelectorAll('.shapelayer path'), (p) => [
            getComputedStyle(p).stroke, ...box(p)]),
    };
}"""


def wait_drawn(page: Any, selector: str, layers: int) -> None:
    page.wait_for_function(DRAWN, arg=[selector, layers], timeout=LOAD_TIMEOUT)


def wait_idle_text(page: Any, text: str) -> None:
    page.wait_for_function(
        "(text) => document.body.innerText.includes(text)"
        " && !document.querySelector('[data-stale=\"true\"]')"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        arg=text,
        timeout=LOAD_TIMEOUT,
    )


def outlined_rows(drawing: dict[str, Any], panel: int) -> dict[int, str]:
    """Row -> colour of each outline drawn across heatmap ``panel``, the row found from the
    tick label whose vertical centre lies inside the outline (the label names the row)."""
    left, _, right, _ = drawing["panels"][panel]
    found: dict[int, str] = {}
    for stroke, x0, y0, x1, y1 in drawing["outlines"]:
        if stroke == WHITE or abs(x0 - left) > 4 or abs(x1 - right) > 4:
            continue  # a casing, or an outline of another panel
        inside = [text for text, middle, *_ in drawing["ticks"] if y0 < middle < y1]
        assert len(inside) == 1, f"an outline from y={y0} to {y1} holds labels {inside}"
        found[int(inside[0].split(" · ")[0])] = stroke
    return found


def repeated_rows(text: str) -> set[int]:
    return {p for group in repeated_groups(encode(text)).values() for p in group}


def assert_outlines_on_the_repeated_rows(page: Any, text: str, panels: tuple[int, ...]) -> None:
    drawing = page.evaluate(DRAWING, EMBEDDINGS)
    groups = repeated_groups(encode(text))
    for panel in panels:
        rows = outlined_rows(drawing, panel)
        assert set(rows) == repeated_rows(text), (panel, rows)
        for positions in groups.values():  # one colour per token
            assert len({rows[p] for p in positions}) == 1
        labels = {int(t.split(" · ")[0]): t for t, *_ in drawing["ticks"]}
        ids = encode(text)
        for row in rows:  # the label at the outline names that row's token
            same = [p for p in groups[ids[row]] if p != row]
            assert labels[row].startswith(f"{row} · "), labels[row]
            assert all(p in labels for p in same), "its twins are labelled too"


def test_outlines_sit_on_the_repeated_rows(sized: Any, server_url: str) -> None:
    page = sized(1440, 900)
    page.goto(server_url)
    wait_drawn(page, EMBEDDINGS, 3)
    assert_outlines_on_the_repeated_rows(page, ROSE, panels=(0, 2))
    middle = page.evaluate(DRAWING, EMBEDDINGS)
    assert outlined_rows(middle, 1) == {}, "the position panel is not marked"


def test_every_repeated_row_is_labelled_in_lecture_mode_at_1280x720(
    sized: Any, server_url: str
) -> None:
    page = sized(1280, 720)
    page.goto(f"{server_url}/?lecture=1&step=7&text={FOX.replace(' ', '+')}")
    page.get_by_role("heading", name="7. Input").wait_for(timeout=LOAD_TIMEOUT)
    page.wait_for_function(IDLE, timeout=LOAD_TIMEOUT)
    wait_drawn(page, EMBEDDINGS, 3)
    drawing = page.evaluate(DRAWING, EMBEDDINGS)
    labelled = {int(text.split(" · ")[0]) for text, *_ in drawing["ticks"]}
    assert repeated_rows(FOX) == {1, 2, 3, 6, 10, 11, 12, 13}
    assert repeated_rows(FOX) <= labelled, labelled
    count, found = page.evaluate(COLLISIONS, EMBEDDINGS)
    assert count > 10 and found == [], found
    assert_outlines_on_the_repeated_rows(page, FOX, panels=(0, 2))
    # The window grows: the chart follows it, the outlines stay on their rows.
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.wait_for_function(
        """(s) => { const gd = document.querySelector(s);
            return !!gd && gd._fullLayout.height > 500
                && Math.abs(gd._fullLayout.height - gd.getBoundingClientRect().height) < 1; }""",
        arg=EMBEDDINGS,
        timeout=LOAD_TIMEOUT,
    )
    assert_outlines_on_the_repeated_rows(page, FOX, panels=(0, 2))


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 800)])
def test_the_lesson_sentence_is_on_the_first_screen(
    sized: Any, server_url: str, width: int, height: int
) -> None:
    page = sized(width, height)
    page.goto(server_url)
    wait_drawn(page, EMBEDDINGS, 3)
    lesson = page.locator(".st-key-lesson [data-testid='stMarkdownContainer']").first
    text = lesson.inner_text()
    assert "“␣rose” is at positions 1, 4 and 7: its token rows are identical" in text
    assert "largest difference 0.0" in text and "its input rows differ" in text
    box = lesson.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, box
    sizes = lesson.evaluate(
        "(el) => Array.from(el.querySelectorAll('p, strong'),"
        " (p) => parseFloat(getComputedStyle(p).fontSize))"
    )
    assert sizes and min(sizes) >= 16, sizes
    assert lesson.evaluate("(el) => !el.closest('[data-testid=\"stCaptionContainer\"]')")
    scroll = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop")
    assert scroll == 0


def coloured_outlines(page: Any, selector: str) -> int:
    drawing = page.evaluate(DRAWING, selector)
    return sum(stroke != WHITE for stroke, *_ in drawing["outlines"])


def test_similarity_and_word_order_steps_ask_then_reveal(sized: Any, server_url: str) -> None:
    page = sized(1280, 800)
    page.goto(f"{server_url}/?lecture=1&step=8")
    page.get_by_role("heading", name="8. Similarity").wait_for(timeout=LOAD_TIMEOUT)
    wait_drawn(page, SIMILARITY, 3)
    question = page.locator(".st-key-lecture_question").inner_text()
    assert "Which cells of the token panel read 1.0?" in question
    assert coloured_outlines(page, SIMILARITY) == 0, "the question shows no answer"
    page.locator(".posviz-nav-next").click()
    page.get_by_role("heading", name="9. Similarity").wait_for(timeout=LOAD_TIMEOUT)
    wait_idle_text(page, "Answer:")
    wait_drawn(page, SIMILARITY, 3)
    pairs = sum(len(g) * (len(g) - 1) for g in repeated_groups(encode(ROSE)).values())
    assert pairs == 10  # cells off the diagonal holding one token twice, both halves
    assert coloured_outlines(page, SIMILARITY) == 2 * pairs  # token and input panels
    answer = page.locator(".st-key-lecture_answer").inner_text()
    assert "exactly the 5 pairs of one token" in answer and "(1, 4), (1, 7) and (4, 7)" in answer

    page.locator(".posviz-nav-next").click()
    page.get_by_role("heading", name="10. Word order").wait_for(timeout=LOAD_TIMEOUT)
    wait_idle_text(page, "Your guess?")
    question = page.locator(".st-key-lecture_question").inner_text()
    assert (
        "can self-attention tell The dog bites the man and The man bites the dog apart?" in question
    ), "the question names the texts compared"
    assert page.locator(COMPARE).count() == 0, "no numbers before the reveal"
    page.keyboard.press("ArrowRight")  # the clicker's key
    page.get_by_role("heading", name="11. Word order").wait_for(timeout=LOAD_TIMEOUT)
    wait_drawn(page, COMPARE, 8)
    answer = page.locator(".st-key-lecture_answer").inner_text()
    assert "their means have cosine 1.000000" in answer and "With positions the cosine" in answer
    assert page.console_errors == []


def channels(colour: str) -> tuple[int, int, int]:
    red, green, blue = (int(v) for v in colour.removeprefix("rgb(").rstrip(")").split(", ")[:3])
    return red, green, blue


def contrast_with_white(colour: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of ``colour`` against white."""

    def linear(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(v) for v in colour)
    return 1.05 / (0.2126 * red + 0.7152 * green + 0.0722 * blue + 0.05)


CHIPS = """() => Array.from(document.querySelectorAll('[data-testid="stMarkdownContainer"] span'))
    .filter((s) => !s.querySelector('span') && /^\\d+ · .+ · \\d+( · ×\\d+)?$/.test(s.textContent))
    .map((s) => [s.textContent, getComputedStyle(s).backgroundColor])"""


@pytest.mark.parametrize("query", ["", "?lecture=1&step=2"], ids=["page", "lecture"])
def test_repeated_chips_stand_out_and_say_how_often(
    sized: Any, server_url: str, query: str
) -> None:
    page = sized(1920, 1080)
    page.goto(f"{server_url}/{query}")
    page.get_by_text("1 · ␣rose · 8278 · ×3").first.wait_for(timeout=LOAD_TIMEOUT)
    chips = page.evaluate(CHIPS)
    assert len(chips) == 9, chips
    counts = {int(text.split(" · ")[0]): text for text, _ in chips}
    repeated = repeated_rows(ROSE)
    ids = encode(ROSE)
    for row, text in counts.items():
        times = ids.count(ids[row])
        assert text.endswith(f" · ×{times}") == (row in repeated), text
    backgrounds = {text: channels(colour) for text, colour in chips}
    others = [backgrounds[t] for t in backgrounds if "×" not in t]
    for text, colour in backgrounds.items():
        if "×" not in text:
            continue
        assert contrast_with_white(colour) >= 1.25, (text, colour)
        for other in others:
            difference = sum(abs(a - b) for a, b in zip(colour, other, strict=True)) / 3
            assert difference >= 40, (text, colour, other)


def test_cjk_chips_name_their_character(sized: Any, server_url: str) -> None:
    page = sized(1440, 900)
    page.goto(f"{server_url}/?text=東京")
    page.get_by_text("東 (1 of 2)").first.wait_for(timeout=LOAD_TIMEOUT)
    wait_drawn(page, EMBEDDINGS, 3)
    chips = [text for text, _ in page.evaluate(CHIPS)]
    ids = encode("東京")
    assert chips == [
        f"0 · 東 (1 of 2) · {ids[0]}", f"1 · 東 (2 of 2) · {ids[1]}",
        f"2 · 京 (1 of 2) · {ids[2]}", f"3 · 京 (2 of 2) · {ids[3]}",
    ]  # fmt: skip
    ticks = [t for t, *_ in page.evaluate(DRAWING, EMBEDDINGS)["ticks"]]
    assert ticks[:2] == ["0 · 東 (1 of 2)", "1 · 東 (2 of 2)"]
    hover_rows = page.evaluate("(s) => document.querySelector(s).data[0].y", EMBEDDINGS)
    # the hover names the character as the chips do (issue 42); only downloads keep the bytes
    assert hover_rows[:2] == ["0 · 東 (1 of 2)", "1 · 東 (2 of 2)"], hover_rows


def test_a_phone_says_top_and_bottom(sized: Any, server_url: str) -> None:
    page = sized(390, 844, phone=True)
    page.goto(server_url)
    wait_drawn(page, EMBEDDINGS, 3)
    text = page.locator(".st-key-lesson").inner_text()
    assert "(token panel, top:" in text and "(input panel, bottom:" in text
    for word in ("left", "right"):
        assert word not in text.split(), text
    open_tab(page, "Similarity")
    wait_drawn(page, SIMILARITY, 3)
    wait_idle_text(page, "read 1.000 in the token panel (top)")
    text = page.locator(".st-key-lesson").inner_text()
    assert "(bottom)" in text and "left" not in text and "right" not in text

"""The Length tab in a real browser (issue 41, item 2): Debian's Chromium against the
`streamlit run app.py` the test session owns, at a projector's 1920×1080, a laptop's 1280×800
and a phone's 390×844 (its user agent): the figure is drawn for the room it has, no two of its
texts overlap and none leaves it (the helpers of ``test_browser_layout``), the score panels
stand side by side on a screen and one under the other on a phone, and the sentence above it
quotes the runs.

Waits are for page conditions, never for time; nothing is timed.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_browser_layout import PANELS, assert_no_collisions, wait_drawn, wait_step

pytestmark = pytest.mark.browser

PLOT = ".st-key-length .js-plotly-plot"
# The loss panels' lines, as plotly.js drew them: one path per scheme and input length.
LINES = """(s) => document.querySelector(s).querySelectorAll('.scatterlayer .trace').length"""


@pytest.mark.parametrize(
    ("width", "height", "phone"),
    [(1920, 1080, False), (1280, 800, False), (390, 844, True)],
    ids=["1920", "1280", "phone"],
)
def test_the_length_tab_reads_at_every_size(
    sized: Any, server_url: str, width: int, height: int, phone: bool
) -> None:
    page = sized(width, height, phone=phone)
    page.goto(f"{server_url}/?tab=length")
    wait_drawn(page, 2, PLOT)  # the two score heatmaps
    assert page.get_by_text("Trained on 64 tokens and read on held-out text").count() == 1
    assert page.evaluate(LINES, PLOT) > 15  # 5 schemes × 3 inputs, learned's, RoPE + YaRN's
    assert_no_collisions(page, PLOT)
    lefts = page.evaluate(PANELS, PLOT)
    side_by_side = len({round(left) for left, _, _ in lefts}) > 1
    assert side_by_side == (not phone), lefts
    assert page.console_errors == []


# Each "… ends at 64: IndexError" note of a loss panel (wrapped or not), in every chart on the
# page: the bottom of its box and the top of the curves drawn in its panel (the highest point of
# any line there), in page pixels.
NOTE_AND_CURVES = """() => {
    const found = [];
    document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
        const top = gd.getBoundingClientRect().top;
        (gd.layout.annotations || []).forEach((note, i) => {
            if (!String(note.text).includes('IndexError')) return;
            const axis = String(note.yref).split(' ')[0];
            const ax = gd._fullLayout['yaxis' + axis.slice(1)];
            const ys = gd._fullData.filter(t => t.yaxis === axis && t.type === 'scatter')
                .flatMap(t => Array.from(t.y)).filter(y => Number.isFinite(y));
            const box = gd.querySelector(`.annotation[data-index="${i}"]`)
                .getBoundingClientRect();
            found.push([box.bottom, top + ax._offset + ax.l2p(Math.max(...ys)), note.text]);
        });
    });
    return found;
}"""


@pytest.mark.parametrize(
    ("query", "width", "height", "phone"),
    [
        ("lecture=1&step=24", 1280, 720, False),
        ("lecture=1&step=24", 390, 844, True),
        ("tab=length", 1280, 800, False),
    ],
    ids=["slide-1280x720", "slide-phone", "tab-1280x800"],
)
def test_the_learned_tables_end_is_noted_above_the_curves(
    sized: Any, server_url: str, query: str, width: int, height: int, phone: bool
) -> None:
    page = sized(width, height, phone=phone)
    page.goto(f"{server_url}/?{query}")
    if query.startswith("lecture"):
        wait_step(page, 24)
    else:
        wait_drawn(page, 2, PLOT)
    found = page.evaluate(NOTE_AND_CURVES)
    assert found, "no IndexError note drawn"
    for bottom, curves_top, text in found:
        assert bottom <= curves_top + 1, (text, bottom, curves_top)
    assert page.console_errors == []


# The names of the loss panels' lines plotly.js drew (one per scheme and input length).
LINE_NAMES = """(s) => document.querySelector(s)._fullData
    .filter(t => t.type === 'scatter' && String(t.yaxis).match(/^y[0-9]*$/)
            && t.hovertemplate.includes('mean loss'))
    .map(t => t.name)"""


def test_a_change_of_schemes_runs_only_the_tab_and_redraws_its_curves(
    page: Any, server_url: str
) -> None:
    """Issue 41, item 5: the Schemes menu is drawn in the tab's fragment, so removing a scheme
    makes the browser ask for that fragment's run alone (not the page's sidebar and main view:
    a key press's work), and the curves follow the menu."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    reruns: list[Any] = []

    def sent(payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            message = BackMsg.FromString(payload)
            if message.WhichOneof("type") == "rerun_script":
                reruns.append(message.rerun_script)

    page.on("websocket", lambda socket: socket.on("framesent", sent))
    page.goto(f"{server_url}/?tab=length")
    wait_drawn(page, 2, PLOT)
    assert "Sinusoidal" in page.evaluate(LINE_NAMES, PLOT)
    reruns.clear()
    page.locator(
        '.st-key-length_schemes button[aria-label="Remove Sinusoidal (Transformer paper)"]'
    ).click()
    page.wait_for_function(f"(s) => !({LINE_NAMES})(s).includes('Sinusoidal')", arg=PLOT)
    assert reruns, "the browser asked for no run"
    assert all(rerun.fragment_id for rerun in reruns), [r.fragment_id for r in reruns]
    names = page.evaluate(LINE_NAMES, PLOT)
    assert {"RoPE", "ALiBi", "None"} <= set(names), names
    assert page.get_by_text("sinusoidal rises").count() == 0  # the headline follows too
    assert page.console_errors == []

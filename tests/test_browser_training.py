"""The Training tab's controls in a real browser (issue 42 items 4 and 5): Debian's Chromium
against a `streamlit run app.py` this module owns, so that it can read the server's log.

* Play keeps its word: while the run plays, a step chosen by hand (a click on the step slider,
  ArrowLeft on it) stops the playing and the button says "▶ Play" again, without another
  click; the step shown is the one chosen; the server never logs "Couldn't find fragment".
* The 3-D switch is in the link (``components=3d``): a reload opens the scene, a cube seen
  from near enough to fill its cell, its texts apart.

Waits are for page conditions, never for time; nothing is timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pages import LOAD_TIMEOUT
from test_browser_layout import COMPONENTS, assert_no_collisions, wait_drawn

from devtools.server import Server, running_server

pytestmark = pytest.mark.browser

SLIDER = 'input[type="range"][aria-label^="Training step"]'
PLAY = "▶ Play"
PAUSE = "⏸ Pause"
STOP_TIMEOUT = 30_000  # ms: a hand-chosen step relabels the button in its own run, not later
# The Training tab's button label, the step slider's index, and whether Streamlit is idle.
STATE = """() => {
    const input = document.querySelector('input[type="range"][aria-label^="Training step"]');
    const buttons = [...document.querySelectorAll('[data-testid="stButton"]')]
        .map((b) => b.innerText.trim()).filter((t) => t.endsWith('Play') || t.endsWith('Pause'));
    return {button: buttons.join('|'), index: input ? Number(input.value) : null,
            idle: !document.querySelector('[data-stale="true"]')
                && !document.querySelector('[data-testid="stStatusWidget"]')};
}"""


@pytest.fixture(scope="module")
def logged_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A `streamlit run app.py` of this module's own, its output in a log file."""
    log = tmp_path_factory.mktemp("training-server") / "server.log"
    with running_server(log=log) as server:
        yield server


def log_of(server: Server) -> str:
    assert server.log is not None
    return Path(server.log).read_text(encoding="utf-8", errors="replace")


def start_playing(page: Any) -> int:
    """Press Play and wait until the run has moved at least two snapshots; the index shown."""
    page.get_by_role("button", name=PLAY).click()
    page.wait_for_function(
        f"() => ({STATE})().button === '{PAUSE}' && ({STATE})().index >= 2", timeout=LOAD_TIMEOUT
    )
    index: int = page.evaluate(STATE)["index"]
    return index


def wait_stopped(page: Any, how: str) -> dict[str, Any]:
    """Wait until the button says Play again (failing with what the page shows instead)."""
    try:
        page.wait_for_function(
            f"() => ({STATE})().button === '{PLAY}' && ({STATE})().idle", timeout=STOP_TIMEOUT
        )
    except Exception as error:  # Playwright's TimeoutError
        raise AssertionError(f"after {how} the page shows {page.evaluate(STATE)}") from error
    shown: dict[str, Any] = page.evaluate(STATE)
    return shown


def test_a_step_chosen_by_hand_stops_the_play_and_the_button_says_so(
    sized: Any, logged_server: Server
) -> None:
    """▶ Play, then ArrowLeft on the step slider: the playing stops at the step before, the
    button says Play; ▶ Play again, then a click on the slider's track: the same, at the step
    clicked. The server logs no fragment it could not find."""
    page = sized(1280, 800)
    page.goto(f"{logged_server.url}/?tab=training&step=0")
    page.get_by_role("button", name=PLAY).wait_for(timeout=LOAD_TIMEOUT)
    slider = page.locator(SLIDER).first
    # ArrowLeft while playing: one step back from where it stood (a snapshot may have come
    # between reading it and the key, so at most that one).
    before = start_playing(page)
    slider.focus()
    slider.press("ArrowLeft")
    shown = wait_stopped(page, "ArrowLeft")
    assert shown["index"] < before + 1, (before, shown)
    steps = int(slider.get_attribute("max") or 0) + 1
    # A click on the track, a tenth of the way along: that snapshot, and the playing stops.
    start_playing(page)
    slider_box = page.locator('[data-testid="stSlider"]').filter(has=page.locator(SLIDER))
    track = slider_box.locator('[data-testid="stSliderTickBar"]').first.bounding_box()
    assert track is not None  # the tick bar spans the track, just under it
    page.mouse.click(track["x"] + track["width"] * 0.1, track["y"] - 8)
    shown = wait_stopped(page, "a click on the slider")
    assert shown["index"] <= steps // 5, (steps, shown)
    assert "Couldn't find fragment" not in log_of(logged_server)
    assert page.console_errors == []


# The Training scene's proportions and camera, as plotly.js laid it out.
SCENE = """(s) => { const scene = document.querySelector(s)._fullLayout.scene;
  return {aspect: scene.aspectratio, eye: scene.camera.eye}; }"""


def test_the_3d_switch_is_in_the_link_and_its_scene_fills_its_cell(
    sized: Any, logged_server: Server
) -> None:
    """The switch puts ``components=3d`` in the page's link; that link opens the scene (no
    click), a cube whose PC 3 axis is as long as PC 1's, seen from near enough to fill its
    cell; the chart's texts do not overlap."""
    page = sized(1280, 800)
    page.goto(f"{logged_server.url}/?tab=training&step=600")
    plot = ".st-key-training .js-plotly-plot"
    wait_drawn(page, 2, plot)
    page.get_by_text("Components in 3-D", exact=True).click()
    page.wait_for_function(
        "() => new URL(location.href).searchParams.get('components') === '3d'",
        timeout=LOAD_TIMEOUT,
    )
    page.goto(page.url)
    page.wait_for_selector(plot, timeout=LOAD_TIMEOUT)
    page.wait_for_function(f"(s) => ({COMPONENTS})(s).scenes > 0", arg=plot, timeout=LOAD_TIMEOUT)
    # The switch says what the link asked for once the page has settled (on a loaded machine
    # the first run's toggle can be drawn a moment after its chart): waited for, then the
    # scene is checked again, so a switch that came back off and took the scene fails here.
    switch = page.get_by_role("switch", name="Components in 3-D")
    page.wait_for_function(
        "(s) => document.querySelector(s)?.checked === true",
        arg='.st-key-training_3d input[role="switch"], .st-key-training_3d input',
        timeout=LOAD_TIMEOUT,
    )
    wait_drawn(page, 2, plot)
    assert switch.is_checked()
    assert page.evaluate(f"(s) => ({COMPONENTS})(s).scenes", plot) > 0
    scene = page.evaluate(SCENE, plot)
    assert scene["aspect"] == {"x": 1, "y": 1, "z": 1}, scene
    assert sum(value**2 for value in scene["eye"].values()) ** 0.5 < 3.0, scene  # near
    assert_no_collisions(page, plot)
    assert page.console_errors == []


# The legend's texts, each with whether it stands inside the chart and the chart texts it
# overlaps (tick labels, axis titles, panel titles).
LEGEND = """(selector) => {
    const root = document.querySelector(selector);
    const chart = root.getBoundingClientRect();
    const others = [...root.querySelectorAll(
        '[class*="tick"] text, [class*="title"] text, .annotation-text')]
        .map((el) => [el.textContent, el.getBoundingClientRect()]);
    return [...root.querySelectorAll('.legendtext')].map((el) => {
        const r = el.getBoundingClientRect();
        const inside = r.left >= chart.left - 1 && r.right <= chart.right + 1
            && r.top >= chart.top - 1 && r.bottom <= chart.bottom + 1;
        const hits = others.filter(([, o]) => Math.min(r.right, o.right) - Math.max(r.left, o.left)
            > 0.5 && Math.min(r.bottom, o.bottom) - Math.max(r.top, o.top) > 0.5).map(([t]) => t);
        return [el.textContent, inside, hits];
    });
}"""


@pytest.mark.parametrize(
    ("width", "height", "phone"), [(1280, 800, False), (390, 844, True)], ids=["1280", "phone"]
)
def test_twelve_alibi_heads_are_all_in_the_legend(
    sized: Any, logged_server: Server, width: int, height: int, phone: bool
) -> None:
    """Issue 42: with 12 ALiBi heads the legend named only the shown one. Now one entry names
    the other eleven grey lines and their slopes' range, inside the chart, over no other
    text."""
    page = sized(width, height, phone=phone)
    query = "tab=attention&scheme=alibi&heads=12&head=3&emb_dim=96"
    page.goto(f"{logged_server.url}/?{query}")
    plot = ".st-key-attention .js-plotly-plot"
    wait_drawn(page, 4, plot)
    legend = page.evaluate(LEGEND, plot)
    names = sorted(name for name, _, _ in legend)
    assert len(names) == 2, names
    assert names[0].startswith("head 3 (m = ") and names[0].endswith("· shown"), names
    assert names[1].startswith("the other 11 heads, grey (m = "), names
    assert all(inside and not hits for _, inside, hits in legend), legend
    assert page.console_errors == []

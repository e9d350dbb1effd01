"""Lecture mode's navigation (posviz_app/nav.js) on its own, in Chromium, driven as Streamlit
1.67's components v2 drives it (no server): every press counts however often the page draws it.

Streamlit runs the component's function again for each new ``data`` and, where a drawing's module
import resolved after the next drawing began, calls that drawing's cleanup at once, with the
navigation still on the page (``BidiComponent``'s effect in Streamlit's frontend). A press made
before those drawings must survive them; so must one made before the stage is drawn anew in
another element. And a press whose request, or its answer, never arrives is asked for again
once the page has answered an older one and gone quiet. CI once ended on slide 4 after three
clicks on Next from slide 2 (tests/test_browser_page.py), the page answering the last request it
had; these are the ways a press could be lost on the browser's side, each made to happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pages import component_page

pytestmark = pytest.mark.browser
NAV_JS = (Path(__file__).resolve().parent.parent / "posviz_app" / "nav.js").read_text("utf-8")

# A way to draw the module (pages.component_page): each drawing gets `data`, its parent
# element and a setStateValue that records what it sends.
HARNESS = """() => {
    const nav = window.module;
    window.sent = [];
    const setStateValue = (name, value) => window.sent.push([name, value.step, value.seq]);
    window.draw = (parent, step, seq) => nav.default({
        data: { step, count: 24, title: 'slide ' + (step + 1), seq },
        parentElement: parent, setStateValue });
    window.next = () => document.querySelector('.posviz-nav-next').click();
    window.host = (id) => { const el = document.createElement('div'); el.id = id;
        document.body.appendChild(el); return el; };
    window.state = () => { const navs = document.querySelectorAll('.posviz-nav');
        return { navs: navs.length, shown: navs[0] && navs[0].dataset.step,
                 asked: navs[0] && navs[0].dataset.asked, sent: window.sent }; };
}"""


# Next from slide 2, then twice more: slides 3, 4 and 5 asked for, numbered 1, 2 and 3.
COUNTED_ON = [["target", 2, 1], ["target", 3, 2], ["target", 4, 3]]


def harness(page: Any) -> Any:
    return component_page(page, NAV_JS, HARNESS)


def assert_two_more_count_on(page: Any, scenario: str) -> None:
    """``scenario`` (JS statements: slide 2 shown, Next pressed, the stage drawn again some
    way), a moment, then two more clicks on Next: they ask for slides 4 and 5, numbered on from
    the first press, and one navigation stands."""
    state = harness(page).evaluate(
        f"""async () => {{
        {scenario}
        await new Promise((done) => setTimeout(done, 50));
        next(); next();
        return state(); }}"""
    )
    assert state["sent"] == COUNTED_ON, state
    assert (state["navs"], state["asked"]) == (1, "5"), state


def test_a_press_survives_a_superseded_drawings_cleanup(page: Any) -> None:
    """Slide 2 shown; Next; the page draws the navigation twice more with the old data (runs
    that began before the press reached the server), and the first of those drawings' cleanup
    comes late, as Streamlit calls it; two more clicks on Next ask for slides 4 and 5."""
    assert_two_more_count_on(
        page,
        """const parent = host('stage');
        draw(parent, 1, 0);
        next();
        const late = draw(parent, 1, 0);  // its import resolved after the next drawing began
        late();                            // ... so Streamlit runs its cleanup at once
        draw(parent, 1, 0);""",
    )


def test_a_press_survives_the_stage_drawn_anew_elsewhere(page: Any) -> None:
    """Next, then the stage leaves the page (its cleanup runs) and is drawn in a new element
    with the old data before the server answers: the next clicks count on from the first."""
    assert_two_more_count_on(
        page,
        """const first = host('first');
        const cleanup = draw(first, 1, 0);
        next();
        first.remove(); cleanup();
        draw(host('second'), 1, 0);""",
    )


def test_a_request_never_answered_is_sent_again_once_the_page_goes_quiet(page: Any) -> None:
    """Next from slide 2; the page answers only an older press (seq 0) and then nothing: a few
    seconds later (the page's clock, run forward) the navigation asks for slide 3 again under a
    new number, and once the page shows it, asks for nothing more."""
    page.clock.install()
    harness(page).evaluate("() => { window.stage = host('stage'); draw(stage, 1, 0); next(); }")
    page.evaluate("() => draw(stage, 1, 0)")  # the page answers an older press, then nothing
    page.clock.run_for(2_000)
    assert page.evaluate("() => window.sent") == [["target", 2, 1]], "asked again too soon"
    page.clock.run_for(2_000)
    assert page.evaluate("() => window.sent") == [["target", 2, 1], ["target", 2, 2]]
    page.evaluate("() => draw(stage, 2, 2)")  # the page shows slide 3
    page.clock.run_for(60_000)
    state = page.evaluate("() => state()")
    assert state["sent"] == [["target", 2, 1], ["target", 2, 2]], state
    assert (state["shown"], state["asked"]) == ("3", "3"), state


def test_a_navigation_that_has_left_the_page_takes_no_keys(page: Any) -> None:
    """The stage is drawn anew in another element before the old one's cleanup has come: a
    clicker's press moves one slide, not one for each navigation still listening."""
    state = harness(page).evaluate(
        """async () => {
        const first = host('first');
        draw(first, 1, 0);
        first.remove();  // its cleanup has not come yet
        draw(host('second'), 1, 0);
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'PageDown',
                                                                   bubbles: true }));
        return state(); }"""
    )
    assert state["sent"] == [["target", 2, 1]], state

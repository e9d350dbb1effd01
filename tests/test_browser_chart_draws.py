"""The chart component (posviz_app/chart.js) on its own, in Chromium, driven as Streamlit 1.67's
components v2 drives it, with a stand-in for plotly.js that records its calls and finishes a
react only when told (no server): one Plotly.react at a time on a graph, the newest payload
drawn last, and a cleanup that leaves a chart still on the page standing.

A 3D scene takes long to draw on a busy machine; a payload that came meanwhile was drawn at
once, two reacts on one graph (CI once found the Geometry tab's titles on a tick at 390x844,
not reproduced since). And Streamlit runs the cleanup of a call whose module import resolved
after the next call began, with the chart still shown (tests/test_browser_nav.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pages import component_page

pytestmark = pytest.mark.browser
CHART_JS = (Path(__file__).resolve().parent.parent / "posviz_app" / "chart.js").read_text("utf-8")

# plotly.js's stand-in (its react waits for finish()), and draw(title): a payload laid out for
# the host's size, as chart.py encodes it (magic, JSON length, JSON header, no buffers). The
# module (pages.component_page) finds the stand-in where it keeps the builds it has loaded.
HARNESS = """() => {
    window.calls = []; window.pending = []; window.inFlight = 0; window.mostInFlight = 0;
    const graphLayout = (gd, layout) => { gd._fullLayout = { ...layout }; };
    const fake = { version: 'stand-in',
        react: (gd, data, layout) => { calls.push(['react', layout.title]);
            inFlight += 1; mostInFlight = Math.max(mostInFlight, inFlight);
            return new Promise((done) => pending.push(() => {
                inFlight -= 1; graphLayout(gd, layout); done(gd); })); },
        relayout: (gd, update) => { calls.push(['relayout']); return Promise.resolve(gd); },
        purge: () => { calls.push(['purge']); } };
    globalThis.__posvizPlotly.loads.set('stand-in', Promise.resolve(fake));
    window.finish = () => { const next = pending.shift(); if (next) next(); };
    const chart = window.module;
    window.host = document.createElement('div');
    host.style.width = '600px'; document.body.appendChild(host);
    const encode = (title) => {
        const header = { figure: { data: [], layout: { title, height: 300 } }, config: {},
            canvas: { width: 600, height: 300, window_width: innerWidth,
                      window_height: innerHeight },
            fill: false, fitted: false, fill_room: { gap: 0, min: 0 },
            plotly: { name: 'stand-in', path: 'none.js', version: 'stand-in',
                      covers: ['stand-in'] }, buffers: [] };
        const json = new TextEncoder().encode(JSON.stringify(header));
        const bytes = new Uint8Array(8 + json.length);
        const view = new DataView(bytes.buffer);
        view.setUint32(0, 0x315a5650, true); view.setUint32(4, json.length, true);
        bytes.set(json, 8);
        return bytes;
    };
    window.draw = (title) => chart.default({ data: encode(title), parentElement: host,
                                             setStateValue: () => {} });
    window.settled = () => new Promise((done) => setTimeout(done, 50));
}"""


def harness(page: Any) -> Any:
    return component_page(page, CHART_JS, HARNESS)


def test_a_payload_that_comes_while_one_is_drawn_waits_and_only_the_newest_follows(
    page: Any,
) -> None:
    result = harness(page).evaluate(
        """async () => {
        draw('one'); await settled();
        draw('two'); await settled();    // while 'one' is being drawn
        draw('three'); await settled();
        const during = calls.map((call) => call[1]);
        finish(); await settled();        // 'one' is done: 'two' is no longer the newest
        finish(); await settled();
        return { during, calls: calls.map((call) => call[1]), most: mostInFlight,
                 shown: host.querySelector('.posviz-chart')._fullLayout.title,
                 fits: host.querySelector('.posviz-chart').dataset.fits }; }"""
    )
    assert result["during"] == ["one"], result  # one react at a time
    assert result["calls"] == ["one", "three"], result
    assert (result["most"], result["shown"], result["fits"]) == (1, "three", "true"), result


def test_a_cleanup_while_the_chart_is_shown_leaves_it_standing(page: Any) -> None:
    result = harness(page).evaluate(
        """async () => {
        draw('one'); await settled(); finish(); await settled();
        const late = draw('two');  // its import resolved after the next call began ...
        late();                     // ... so Streamlit runs its cleanup at once
        await settled(); finish(); await settled();
        const graphs = host.querySelectorAll('.posviz-chart');
        return { graphs: graphs.length, calls: calls.map((call) => call.join(' ')),
                 shown: graphs[0] && graphs[0]._fullLayout.title }; }"""
    )
    assert result == {"graphs": 1, "calls": ["react one", "react two"], "shown": "two"}, result


def test_a_cleanup_once_the_chart_has_left_the_page_takes_it_down(page: Any) -> None:
    result = harness(page).evaluate(
        """async () => {
        const cleanup = draw('one'); await settled(); finish(); await settled();
        host.remove(); cleanup(); await settled();
        return calls.map((call) => call[0]); }"""
    )
    assert result == ["react", "purge"], result

"""Slider change to updated chart in a real browser (Playwright + Debian Chromium).

Starts its own ``streamlit run app.py`` (``devtools.server.start_server``), moves a slider with
the keyboard and waits, without sleeping, until Plotly has drawn a figure whose ``z`` is a new
object. All times are taken in the page's own clock (``performance.now()``): the key press,
the last websocket message the page sent (the rerun request) and Plotly's ``plotly_afterplot``
event after the new data arrived. Called by ``bench.py`` in a process of its own.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.texts import long_text

# Record the key press, the rerun request and every Plotly draw, in the page's clock.
_INIT_SCRIPT = """
(() => {
  window.__bench = {key: 0, sent: 0, plots: []};
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    window.__bench.sent = performance.now();
    return send.call(this, data);
  };
  window.addEventListener('keydown', () => { window.__bench.key = performance.now(); }, true);
})();
"""

# Hook the current graph div (once per element) and remember what it shows now.
_ARM = """
() => {
  const gd = document.querySelector('.js-plotly-plot');
  if (!gd.__benchHooked) {
    gd.__benchHooked = true;
    gd.on('plotly_afterplot', () => {
      window.__bench.plots.push({t: performance.now(), z: gd.data && gd.data[0].z});
    });
  }
  window.__bench.oldGd = gd;
  window.__bench.oldZ = gd.data[0].z;
  window.__bench.plots = [];
}
"""

# Done when a draw after the key press shows a new z (or React replaced the graph div).
_DRAWN = """
() => {
  const b = window.__bench;
  const gd = document.querySelector('.js-plotly-plot');
  if (!gd || !gd._fullData || !gd.data || gd.data.length !== 3) return false;
  const drawn = b.plots.find(p => p.z !== b.oldZ && p.t >= b.key);
  let t = drawn ? drawn.t : null;
  if (t === null && gd !== b.oldGd && gd.data[0].z !== b.oldZ) t = performance.now();
  if (t === null) return false;
  const z = gd.data[0].z;
  return {t: t, key: b.key, sent: b.sent, shape: z && z.shape ? String(z.shape) : null};
}
"""


def _input(page: Any, label: str) -> Any:
    """The ``<input type=range>`` of the slider whose label starts with ``label``."""
    return page.locator(f'input[type="range"][aria-label^="{label}"]').first


def _press(page: Any, target: Any, key: str, timeout_ms: float = 120_000) -> dict[str, Any]:
    page.evaluate(_ARM)
    target.focus()
    target.press(key)
    handle = page.wait_for_function(_DRAWN, timeout=timeout_ms, polling="raf")
    result: dict[str, Any] = handle.json_value()
    return {
        "s": (result["t"] - result["key"]) / 1000,
        "to_request": max(result["sent"] - result["key"], 0) / 1000,
        "shape": result["shape"],
    }


def browser_timings(*, reps: int, big: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from devtools.chromium import CHROMIUM, CHROMIUM_ARGS
    from devtools.server import start_server

    rows: dict[str, list[dict[str, Any]]] = {}
    notes: list[str] = []
    server = start_server()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.add_init_script(_INIT_SCRIPT)
            start = time.perf_counter()
            page.goto(server.url)
            page.wait_for_function(
                "() => { const g = document.querySelector('.js-plotly-plot');"
                " return g && g._fullData && g._fullData.length === 3; }",
                timeout=120_000,
            )
            notes.append(f"browser: page load to first chart {time.perf_counter() - start:.1f} s")

            emb_dim = _input(page, "Embedding dimension")
            for i in range(reps):  # 64 -> 65 (first visit), then back and forth (revisits)
                key = "ArrowRight" if i % 2 == 0 else "ArrowLeft"
                rows.setdefault("emb_dim ±1 at defaults (T=16, d=64/65)", []).append(
                    _press(page, emb_dim, key)
                )

            text = page.locator('[data-testid="stTextArea"] textarea').first
            text.fill(long_text(0))
            page.evaluate(_ARM)
            text.press("Control+Enter")
            page.wait_for_function(_DRAWN, timeout=120_000, polling="raf")
            page.wait_for_selector('input[type="range"][aria-label^="Window"]', timeout=60_000)
            window = _input(page, "Window")
            for _ in range(reps):
                rows.setdefault("window +1 (long text, T=16, d=64)", []).append(
                    _press(page, window, "ArrowRight")
                )

            if big:
                _press(page, _input(page, "Context length"), "End")  # T = 1024
                _press(page, _input(page, "Embedding dimension"), "End")  # d = 768
                window = _input(page, "Window")
                for _ in range(min(reps, 4)):  # the long text has 5 windows of 1024 tokens
                    rows.setdefault("window +1 (long text, T=1024, d=768)", []).append(
                        _press(page, window, "ArrowRight")
                    )
            browser.close()
    finally:
        server.stop()
    return {"rows": rows, "notes": notes}

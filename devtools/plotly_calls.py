"""A page script that records every call of the page's Plotly, for the browser tests and
``benchmarks/browser_timing.py``: add it before the page loads (Playwright
``page.add_init_script(RECORD_PLOTLY_CALLS)``).

plotly.js sets ``window.Plotly`` when it has loaded (posviz's chart component loads it once per
page); the script wraps its drawing functions as that happens. Each call is pushed onto
``window.__plotlyCalls`` as ``{name, chart, t0, t1, t2, t3, traces, z, shown}``: the chart's
key (``embeddings``, ``similarity``...), the page's clock (``performance.now()``) at the call,
at the end of its synchronous part, when its promise resolved, and at the next animation frame
after that (what the reader sees), the number of traces drawn, the first trace's ``z`` (to tell
new data from old) and whether the graph was visible.
"""

from __future__ import annotations

from typing import Final

RECORD_PLOTLY_CALLS: Final = r"""
(() => {
  const calls = (window.__plotlyCalls = []);
  const wrap = (plotly, name) => {
    const call = plotly[name];
    plotly[name] = function (gd, ...rest) {
      const keyed = gd && gd.closest && gd.closest('[class*="st-key-"]');
      const match = keyed && keyed.className.match(/st-key-([\w-]+)/);
      const record = {name, chart: match ? match[1] : null, t0: performance.now(),
                      t1: 0, t2: 0, t3: 0, traces: 0, z: null, shown: false};
      calls.push(record);
      const out = call.call(this, gd, ...rest);
      record.t1 = performance.now();
      Promise.resolve(out).then(() => {
        record.t2 = performance.now();
        const data = gd && gd.data;
        record.traces = data ? data.length : 0;
        record.z = data && data[0] ? data[0].z : null;
        record.shown = !!gd && gd.style.visibility !== 'hidden' && gd.isConnected;
        requestAnimationFrame(() => { record.t3 = performance.now(); });
      });
      return out;
    };
  };
  let plotly;
  Object.defineProperty(window, 'Plotly', {
    configurable: true,
    get() { return plotly; },
    set(value) {
      plotly = value;
      for (const name of ['newPlot', 'react', 'relayout', 'restyle', 'update', 'purge']) {
        if (value && typeof value[name] === 'function') wrap(value, name);
      }
    },
  });
})();
"""

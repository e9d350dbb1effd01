"""Key press to redrawn chart, and page load to first chart, in a real browser (issue 9).

Run from the repository root (no other server needed; about 3 minutes, ``--quick`` about 1.5)::

    python benchmarks/browser_timing.py              # the targets, as a table
    python benchmarks/browser_timing.py --trace      # and where the renderer's CPU time goes
    python benchmarks/browser_timing.py --floor      # and a 4-line Streamlit app's page load
    python benchmarks/browser_timing.py --experiment has --loads 0   # A/B, see EXPERIMENTS

It starts its own ``streamlit run app.py`` (``devtools.server.start_server``) and Debian's
Chromium (Playwright, ``executable_path``), then measures

* (a) a key press on the embedding-dimension slider at the defaults (d = 64 <-> 65; both
  tables cached after one uncounted round trip);
* (b) a key press on the window slider with a long text at T=1024, d=768;
* (c) a page load on the warm server to the first drawn chart: in a new browser context
  (empty HTTP cache) and again in the same context (HTTP cache warm).

Times are taken in the page's own clock (``performance.now()``; page loads from navigation
start). The page's ``window.Plotly`` is wrapped, so every ``Plotly.react``/``newPlot`` call is
recorded with its start, the end of its synchronous part and the end of its promise. A chart
counts as drawn when the first call that shows new data *visibly* has finished: Streamlit
1.67 remounts the chart for every new figure and first draws it hidden, before it has
measured the element's width, then draws it again at that width. Websocket messages are
recorded as they arrive (time, bytes), which splits a key press into the server's rerun, the
page's handling of the message and Plotly's draws. ``--trace`` adds a sampled CPU profile
(CDP ``Profiler``; plotly.js samples mapped to plotly.js's source modules) and Chromium's
``Performance`` counters (script, style, layout time). Nothing here asserts a time;
``bench.py`` calls :func:`browser_timings` in a process of its own and prints
:func:`print_report`.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/browser_timing.py`: import from the root
    sys.path.insert(0, str(ROOT))

from benchmarks.tables import fmt_time, print_table  # noqa: E402
from benchmarks.texts import long_text  # noqa: E402

VIEWPORT = {"width": 1600, "height": 1000}
QUIET_MS = 300  # a key press is over when nothing was drawn or received for this long
TIMEOUT_MS = 120_000
DEFAULTS = "key press -> redrawn chart, defaults (T=16, d=64)"
BIG = "key press -> redrawn chart, T=1024, d=768 (long text, window)"
LOAD_FRESH = "page load -> first chart, warm server, new context (cold HTTP cache)"
LOAD_WARM = "page load -> first chart, warm server, same context (warm HTTP cache)"
FLOOR_FRESH = "floor: page load -> chart, 4-line app, new context"
FLOOR_WARM = "floor: page load -> chart, 4-line app, same context"
TARGETS = {DEFAULTS: 0.250, BIG: 0.500, LOAD_FRESH: 2.5, LOAD_WARM: 2.5}
# --floor: what Streamlit 1.67 itself costs, an app with nothing but one small Plotly chart.
FLOOR_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st
st.plotly_chart(go.Figure([go.Heatmap(z=np.eye(3, dtype=np.float32))] * 3), theme=None)
"""

# Record in the page's clock: the key press, websocket traffic, and every Plotly call.
_INIT_SCRIPT = r"""
(() => {
  const B = window.__bench = {key: 0, sent: 0, msgs: [], calls: []};
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    B.sent = performance.now();
    return send.call(this, data);
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const d = event.data;
        B.msgs.push({t: performance.now(), bytes: d.byteLength ?? d.size ?? d.length ?? 0});
      });
    }
  };
  window.addEventListener('keydown', () => { B.key = performance.now(); }, true);
  const wrap = (P, name) => {
    const call = P[name];
    P[name] = function (gd, ...rest) {
      const record = {name, t0: performance.now(), t1: 0, t2: 0, z: null, traces: 0, shown: false};
      B.calls.push(record);
      const out = call.call(this, gd, ...rest);
      record.t1 = performance.now();
      Promise.resolve(out).then(() => {
        record.t2 = performance.now();
        const data = gd && gd.data;
        record.traces = data ? data.length : 0;
        record.z = data && data[0] ? data[0].z : null;
        // Streamlit keeps the chart hidden until it knows the element's width.
        record.shown = !!gd && gd.style.visibility !== 'hidden';
      });
      return out;
    };
  };
  if (window.__stripHas) {  // --experiment has, page loads: drop body:has(...) rules at once
    new MutationObserver(() => {
      for (const style of document.querySelectorAll('style')) {
        if (style.textContent.includes('body:has(')) {
          style.textContent = style.textContent.replace(/[^{}]*body:has\([^{]*\{[^}]*\}/g, '');
        }
      }
    }).observe(document, {childList: true, subtree: true});
  }
  let plotly;
  Object.defineProperty(window, 'Plotly', {
    configurable: true,
    get() { return plotly; },
    set(value) {
      plotly = value;
      for (const name of ['newPlot', 'react', 'relayout', 'restyle', 'update']) {
        if (value && typeof value[name] === 'function') wrap(value, name);
      }
    },
  });
})();
"""

# Before a key press: remember the data on screen, forget earlier records.
_ARM = """
() => {
  const B = window.__bench;
  const gd = document.querySelector('.js-plotly-plot');
  B.oldZ = gd && gd.data && gd.data[0] ? gd.data[0].z : null;
  B.key = 0; B.sent = 0; B.msgs = []; B.calls = [];
}
"""

# After a key press (or a page load: since = 0): the first finished Plotly call that shows
# new data in three panels, once nothing more was drawn or received for QUIET_MS.
_DONE = """
([since, quiet]) => {
  const B = window.__bench;
  const start = since ? B.key : 0;
  if (since && !start) return false;
  const calls = B.calls.filter(c => c.t0 >= start);
  const drawn = calls.find(c => c.t2 && c.shown && c.traces === 3 && c.z && c.z !== B.oldZ);
  if (!drawn || calls.some(c => !c.t2)) return false;
  const last = Math.max(...calls.map(c => c.t2), ...B.msgs.map(m => m.t));
  if (performance.now() - last < quiet) return false;
  const clean = ({name, t0, t1, t2, shown}) => ({name, t0, t1, t2, shown});
  const resources = performance.getEntriesByType('resource')
    .filter(r => r.name.includes('/static/'))
    .map(r => ({name: r.name.split('/').pop(), start: r.startTime, end: r.responseEnd,
                bytes: r.transferSize, size: r.decodedBodySize}));
  return {key: start, sent: B.sent, msgs: B.msgs.slice(), calls: calls.map(clean),
          drawn: clean(drawn), resources};
}
"""


# --------------------------------------------------------------------------------------------
# One measured event: its phases from the page's records.


def _phases(record: dict[str, Any], *, load: bool = False) -> dict[str, Any]:
    """Split one key press (or page load) into phases, in seconds."""
    key, drawn, calls = record["key"], record["drawn"], record["calls"]
    msgs = [m for m in record["msgs"] if m["t"] >= (record["sent"] if not load else 0)]
    chart_msg = max(msgs, key=lambda m: m["bytes"]) if msgs else None
    first_call = calls[0] if calls else drawn
    settled = max(c["t2"] for c in calls)
    hidden = [c for c in calls if c["t0"] < drawn["t0"]]
    out: dict[str, Any] = {
        "s": (drawn["t2"] - key) / 1000,
        "settled": (settled - key) / 1000,
        "plotly_calls": len(calls),
        "hidden_draws": sum(c["t2"] - c["t0"] for c in hidden) / 1000,
        "first_draw": (drawn["t2"] - drawn["t0"]) / 1000,
        "first_draw_sync": (drawn["t1"] - drawn["t0"]) / 1000,
        "after_first": (settled - drawn["t2"]) / 1000,
        "chart_msg_kb": chart_msg["bytes"] / 1000 if chart_msg else 0.0,
    }
    if not load:
        out["to_request"] = max(record["sent"] - key, 0) / 1000
        if chart_msg:
            out["server"] = (chart_msg["t"] - record["sent"]) / 1000
            out["msg_to_plotly"] = (first_call["t0"] - chart_msg["t"]) / 1000
            # The rest: between the hidden and the shown draw (Streamlit measures the
            # element's width in a ResizeObserver callback), frames, other tasks.
            named = ("to_request", "server", "msg_to_plotly", "hidden_draws", "first_draw")
            out["waits"] = out["s"] - sum(out[name] for name in named)
    else:
        chunk = next((r for r in record["resources"] if r["name"].startswith("PlotlyChart")), None)
        index = next((r for r in record["resources"] if r["name"].startswith("index")), None)
        first_msg = msgs[0]["t"] if msgs else None
        out |= {
            "index_js": index["end"] / 1000 if index else None,
            "first_ws_msg": first_msg / 1000 if first_msg else None,
            "chart_msg": chart_msg["t"] / 1000 if chart_msg else None,
            "plotly_js_start": chunk["start"] / 1000 if chunk else None,
            "plotly_js_end": chunk["end"] / 1000 if chunk else None,
            "plotly_js_transfer_kb": chunk["bytes"] / 1000 if chunk else None,
            "first_plotly_call": first_call["t0"] / 1000,
        }
    return out


# --------------------------------------------------------------------------------------------
# --trace: a sampled CPU profile per key press, and Chromium's own counters.

_MODULE = re.compile(r'\{"((?:src|node_modules|build|stackgl_modules|lib)/[^"]+)"\(')


_PLOTLY_END = "return window.Plotly="  # the end of plotly.js in Streamlit's PlotlyChart chunk
_STREAMLIT_PLOTLY = "(Streamlit's PlotlyChart, react-plotly)"


class _ModuleMap:
    """Which plotly.js source module a (line, column) of Streamlit's bundle belongs to."""

    def __init__(self) -> None:
        self._lines: dict[str, list[tuple[int, str]]] = {}
        static = Path(_streamlit_static())
        for path in static.glob("PlotlyChart.*.js"):
            marks = self._lines.setdefault(path.name, [])
            for number, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
                for match in _MODULE.finditer(line):
                    marks.append((number * 10**8 + match.start(), match.group(1)))
                end = line.find(_PLOTLY_END)  # Streamlit's own code follows plotly.js
                if end >= 0:
                    marks.append((number * 10**8 + end, _STREAMLIT_PLOTLY))

    def module(self, url: str, line: int, column: int) -> str:
        marks = self._lines.get(url.rsplit("/", 1)[-1])
        if not marks:
            return "?"
        position = line * 10**8 + column
        low, high = 0, len(marks)
        while low < high:  # the last mark at or before position
            mid = (low + high) // 2
            if marks[mid][0] <= position:
                low = mid + 1
            else:
                high = mid
        return marks[low - 1][1] if low else _STREAMLIT_PLOTLY


def _streamlit_static() -> str:
    import streamlit

    return os.path.join(os.path.dirname(streamlit.__file__), "static", "static", "js")


_BUILT_INS = {
    "getBoundingClientRect": "forced style + layout (getBoundingClientRect; Plotly's bBox)",
    "checkVisibility": "forced style (checkVisibility; Streamlit)",
    "toDataURL": "heatmap image encoding (canvas.toDataURL)",
}
_PLOTLY_GROUPS = (  # plotly.js source modules -> what they do, first match wins
    ("src/traces/heatmap/", "plotly: heatmap calc + drawing"),
    ("src/components/colorbar/", "plotly: colour bars"),
    ("src/components/colorscale/", "plotly: colour bars"),
    ("src/plots/cartesian/", "plotly: axes, ticks, layout"),
    ("src/components/annotations/", "plotly: titles (annotations)"),
    ("src/lib/svg_text_utils", "plotly: text (labels)"),
    ("src/components/drawing/", "plotly: text (labels)"),
    ("src/plot_api/", "plotly: plot_api (react diff, defaults)"),
    ("src/plots/plots.js", "plotly: plot_api (react diff, defaults)"),
    ("src/lib/", "plotly: lib (typed arrays, coerce...)"),
    ("node_modules/", "plotly: d3 and other libraries"),
    ("(Streamlit", "Streamlit PlotlyChart (spec parse, theme; page load: plotly.js init)"),
)


def _profile_buckets(profile: dict[str, Any], modules: _ModuleMap) -> Counter[str]:
    """Self time (s) of the profile's samples, by where they ran."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    buckets: Counter[str] = Counter()
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    for index, node_id in enumerate(samples):
        # A sample lasts until the next one (the last one: its own delta).
        seconds = (deltas[index + 1] if index + 1 < len(deltas) else deltas[index]) / 1e6
        frame = nodes[node_id]
        url, name = frame.get("url", ""), frame.get("functionName", "")
        if name in ("(idle)", "(program)", "(garbage collector)", "(root)"):
            bucket = {
                "(program)": "browser native (style, layout, paint, parse)",
                "(garbage collector)": "garbage collection",
            }.get(name, "idle")
        elif "PlotlyChart" in url:
            module = modules.module(url, frame["lineNumber"], frame["columnNumber"])
            bucket = next(
                (g for p, g in _PLOTLY_GROUPS if module.startswith(p)), "plotly: other modules"
            )
        elif "protobuf" in url:
            bucket = "Streamlit: protobuf decode"
        elif "/static/" in url:
            bucket = "Streamlit + React (rerun handling, render)"
        elif not url:  # the browser's own functions, called from the page's scripts
            bucket = _BUILT_INS.get(name, "built-ins: other DOM and JS calls")
        else:
            bucket = f"other scripts ({url.rsplit('/', 1)[-1][:40]})"
        buckets[bucket] += seconds
    return buckets


class _Tracer:
    """CDP ``Profiler`` and ``Performance`` around one key press."""

    METRICS = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 200})  # microseconds
        self.modules = _ModuleMap()
        self._before: dict[str, float] = {}

    def _metrics(self) -> dict[str, float]:
        values = self.cdp.send("Performance.getMetrics")["metrics"]
        return {m["name"]: m["value"] for m in values if m["name"] in self.METRICS}

    def start(self) -> None:
        self._before = self._metrics()
        self.cdp.send("Profiler.start")

    def stop(self) -> dict[str, float]:
        profile = self.cdp.send("Profiler.stop")["profile"]
        after = self._metrics()
        buckets = _profile_buckets(profile, self.modules)
        for name in self.METRICS:
            buckets[f"Chromium {name}"] = after[name] - self._before.get(name, 0.0)
        return dict(buckets)


# --------------------------------------------------------------------------------------------
# The measurements.


def _slider(page: Any, label: str) -> Any:
    """The ``<input type=range>`` of the slider whose label starts with ``label``."""
    return page.locator(f'input[type="range"][aria-label^="{label}"]').first


def _wait_done(page: Any, *, since_key: bool) -> dict[str, Any]:
    handle = page.wait_for_function(
        _DONE, arg=[since_key, QUIET_MS], timeout=TIMEOUT_MS, polling="raf"
    )
    result: dict[str, Any] = handle.json_value()
    return result


def _press(page: Any, target: Any, key: str, tracer: _Tracer | None = None) -> dict[str, Any]:
    page.evaluate(_ARM)
    target.focus()
    if tracer:
        tracer.start()
    target.press(key)
    record = _wait_done(page, since_key=True)
    sample = _phases(record)
    if tracer:
        sample["cpu"] = tracer.stop()
    return sample


# --experiment: every other key press runs with one thing changed in the page, so both
# variants share the machine's load. "has": app.py's style block without its body:has(...)
# rules (lecture mode's see-through top bar), which make every style recalculation walk the page.
EXPERIMENTS = ("has",)
_VARIANT = r"""
([experiment, on]) => {
  if (experiment === 'has') {
    for (const style of document.querySelectorAll('style')) {
      if (!style.textContent.includes('body:has(') && !style.__original) continue;
      style.__original = style.__original || style.textContent;
      style.textContent = on
        ? style.__original.replace(/[^{}]*body:has\([^{]*\{[^}]*\}/g, '')
        : style.__original;
    }
  }
}
"""


def _presses(
    page: Any,
    label: str,
    reps: int,
    keys: list[str],
    tracer: _Tracer | None,
    experiment: str | None = None,
) -> list[dict[str, Any]]:
    """``reps`` presses on the slider ``label``, cycling through ``keys``; with an
    ``experiment``, the odd presses run its variant (``"variant": True`` in their sample)."""
    samples = []
    for i in range(reps):
        variant = experiment is not None and i % 2 == 1
        if experiment:
            page.evaluate(_VARIANT, [experiment, variant])
        sample = _press(page, _slider(page, label), keys[i % len(keys)], tracer)
        samples.append(sample | {"variant": variant})
    if experiment:
        page.evaluate(_VARIANT, [experiment, False])
    return samples


def _split(rows: dict[str, list[dict[str, Any]]], experiment: str | None) -> None:
    """With an experiment, each key-press row becomes two: as is, and with the variant."""
    if not experiment:
        return
    for label in (DEFAULTS, BIG):
        samples = rows.pop(label, [])
        rows[label] = [s for s in samples if not s["variant"]]
        rows[f"{label} [{experiment} variant]"] = [s for s in samples if s["variant"]]


def _load(
    context: Any, url: str, *, trace: bool = False, strip_has: bool = False
) -> dict[str, Any]:
    """Open ``url`` in a new page of ``context``; phases of the load to the first chart."""
    page = context.new_page()
    if strip_has:
        page.add_init_script("window.__stripHas = true;")
    page.add_init_script(_INIT_SCRIPT)
    tracer = _Tracer(page) if trace else None
    if tracer:
        tracer.start()
    page.goto(url)
    record = _wait_done(page, since_key=False)
    sample = _phases(record, load=True)
    if tracer:
        sample["cpu"] = tracer.stop()
    page.close()
    return sample


def run(
    *,
    reps: int,
    big: bool = True,
    loads: int = 3,
    trace: bool = False,
    experiment: str | None = None,
    floor: bool = False,
) -> dict[str, Any]:
    """Start a server and Chromium, measure, stop both; samples per row, and notes."""
    from playwright.sync_api import sync_playwright

    from devtools.chromium import CHROMIUM, CHROMIUM_ARGS
    from devtools.server import start_server

    rows: dict[str, list[dict[str, Any]]] = {}
    notes: list[str] = []
    load_before = os.getloadavg()
    server = start_server()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            try:
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                page.add_init_script(_INIT_SCRIPT)
                start = time.perf_counter()
                page.goto(server.url)
                _wait_done(page, since_key=False)
                notes.append(
                    f"first page load (cold server process): {time.perf_counter() - start:.1f} s"
                )
                tracer = _Tracer(page) if trace else None
                # d = 64 <-> 65: one round trip first, so both tables are cached (a first
                # visit of a (seed, d) builds its 50,257-row table: not a redraw).
                warm = _presses(page, "Embedding dimension", 2, ["ArrowRight", "ArrowLeft"], None)
                notes.append(f"d 64 -> 65, first visit of the table: {fmt_time(warm[0]['s'])}")
                rows[DEFAULTS] = _presses(
                    page, "Embedding dimension", reps, ["ArrowRight", "ArrowLeft"], tracer,
                    experiment,
                )  # fmt: skip
                if big:
                    text = page.locator('[data-testid="stTextArea"] textarea').first
                    text.fill(long_text(0))
                    page.evaluate(_ARM)
                    text.press("Control+Enter")
                    _wait_done(page, since_key=True)
                    page.wait_for_selector(
                        'input[type="range"][aria-label^="Window"]', timeout=TIMEOUT_MS
                    )
                    _press(page, _slider(page, "Context length"), "End")  # T = 1024
                    _press(page, _slider(page, "Embedding dimension"), "End")  # d = 768
                    # The long text has 5 windows of 1,024 tokens: 0 -> 4 -> 0 -> ...
                    keys = ["ArrowRight"] * 4 + ["ArrowLeft"] * 4
                    _presses(page, "Window", 1, keys, None)  # warm-up (first window change)
                    rows[BIG] = _presses(
                        page, "Window", reps, keys[1:] + keys[:1], tracer, experiment
                    )
                page.close()
                context.close()
                labels = [LOAD_FRESH, LOAD_WARM]
                if experiment == "has":
                    labels += [f"{LOAD_FRESH} [has variant]", f"{LOAD_WARM} [has variant]"]
                for label in labels:
                    rows[label] = []
                for _ in range(loads):
                    for variant in [False, True] if experiment == "has" else [False]:
                        suffix = " [has variant]" if variant else ""
                        context = browser.new_context(viewport=VIEWPORT)
                        for label in (LOAD_FRESH, LOAD_WARM):
                            rows[label + suffix].append(
                                _load(context, server.url, trace=trace, strip_has=variant)
                            )
                        context.close()
                if floor:
                    rows |= _floor(browser, loads=max(loads, 1), trace=trace)
            finally:
                browser.close()
    finally:
        server.stop()
    _split(rows, experiment)
    return {"rows": rows, "notes": notes, "load_average": [load_before, os.getloadavg()]}


def _floor(browser: Any, *, loads: int, trace: bool) -> dict[str, list[dict[str, Any]]]:
    """Page loads of :data:`FLOOR_APP` on a server of its own."""
    import tempfile

    from devtools.server import start_server

    rows: dict[str, list[dict[str, Any]]] = {FLOOR_FRESH: [], FLOOR_WARM: []}
    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder) / "floor_app.py"
        app.write_text(FLOOR_APP, encoding="utf-8")
        with start_server(app=app) as server:
            context = browser.new_context(viewport=VIEWPORT)
            _load(context, server.url)  # warm the server
            context.close()
            for _ in range(loads):
                context = browser.new_context(viewport=VIEWPORT)
                rows[FLOOR_FRESH].append(_load(context, server.url, trace=trace))
                rows[FLOOR_WARM].append(_load(context, server.url, trace=trace))
                context.close()
    return rows


def browser_timings(*, reps: int, big: bool, trace: bool = False) -> dict[str, Any]:
    """What ``bench.py``'s browser worker saves: :func:`run` with three page loads."""
    return run(reps=reps, big=big, loads=3, trace=trace)


# --------------------------------------------------------------------------------------------
# Report.


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation between order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _median(samples: list[dict[str, Any]], key: str) -> float | None:
    values = [s[key] for s in samples if s.get(key) is not None]
    return statistics.median(values) if values else None


def print_report(result: dict[str, Any], *, trace: bool = False) -> None:
    """The targets table, each row's phases, and (``trace``) the CPU breakdown."""
    rows = []
    for label, samples in result["rows"].items():
        if not samples:
            continue
        times = [s["s"] for s in samples]
        target = TARGETS.get(label)
        median, p90 = statistics.median(times), _quantile(times, 0.9)
        met = "-" if target is None else ("yes" if median <= target else "no")
        rows.append([
            f"{label} <= {fmt_time(target)}" if target else label,
            f"{fmt_time(median)}, {fmt_time(p90)}, {len(times)}",
            met,
        ])  # fmt: skip
    print("## Browser timings (Chromium, streamlit run; page clock)\n")
    print_table(["target", "measured (median, p90, n)", "met?"], rows)

    phase_rows = []
    for label in _press_rows(result):
        samples = result["rows"].get(label)
        if not samples:
            continue
        phase_rows.append([
            label.split(", ", 1)[1],
            fmt_time(_median(samples, "to_request")),
            fmt_time(_median(samples, "server")),
            f"{_median(samples, 'chart_msg_kb') or 0:.0f} kB",
            fmt_time(_median(samples, "msg_to_plotly")),
            fmt_time(_median(samples, "hidden_draws")),
            fmt_time(_median(samples, "first_draw")),
            fmt_time(_median(samples, "s")),
            fmt_time(_median(samples, "waits")),
            f"{_median(samples, 'plotly_calls') or 0:.0f}",
        ])  # fmt: skip
    if phase_rows:
        print("Key press phases (medians): key -> request sent; request -> chart message "
              "received (server rerun); message -> first Plotly call (decode, React remount, "
              "spec parse); Plotly draws while Streamlit hides the chart (its width not yet "
              "measured); the draw that shows it; the total; waits in it (frames, Streamlit's "
              "ResizeObserver); all Plotly calls of the press.\n")  # fmt: skip
        print_table(
            ["key press", "key->request", "server", "chart msg", "msg->Plotly", "hidden draw",
             "shown draw", "total (drawn)", "waits", "Plotly calls"],
            phase_rows,
        )  # fmt: skip
    load_rows = []
    for label in [r for r in result["rows"] if r.startswith(("page load", "floor"))]:
        samples = result["rows"].get(label)
        if not samples:
            continue
        transfer = _median(samples, "plotly_js_transfer_kb")
        load_rows.append([
            ("floor, " if label.startswith("floor") else "")
            + ("new context" if "new context" in label else "same context")
            + (" [has variant]" if "variant" in label else ""),
            fmt_time(_median(samples, "index_js")),
            fmt_time(_median(samples, "first_ws_msg")),
            fmt_time(_median(samples, "chart_msg")),
            fmt_time(_median(samples, "plotly_js_start")),
            fmt_time(_median(samples, "plotly_js_end")),
            f"{transfer:.0f} kB" if transfer is not None else "-",
            fmt_time(_median(samples, "first_plotly_call")),
            fmt_time(_median(samples, "s")),
        ])  # fmt: skip
    if load_rows:
        print(
            "Page load phases (medians, from navigation start): index.js received; first "
            "websocket message; chart message; plotly.js chunk requested / received "
            "(transferred: 0 = from the HTTP cache); first Plotly call; chart drawn.\n"
        )
        print_table(
            ["page load", "index.js", "first ws msg", "chart msg", "plotly.js asked",
             "plotly.js in", "transferred", "Plotly call", "drawn"],
            load_rows,
        )  # fmt: skip
    if trace:
        _print_cpu(result)
    for note in result.get("notes", []):
        print(f"note: {note}")
    before, after = result.get("load_average", [(0.0,) * 3, (0.0,) * 3])
    print(
        f"note: load average (1, 5, 15 min) before {before[0]:.2f} {before[1]:.2f} "
        f"{before[2]:.2f}, after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; 2 CPUs"
    )


def _press_rows(result: dict[str, Any]) -> list[str]:
    return [label for label in result["rows"] if label.startswith("key press")]


def _print_cpu(result: dict[str, Any]) -> None:
    for label in result["rows"]:
        samples = [s for s in result["rows"].get(label, []) if "cpu" in s]
        if not samples:
            continue
        names = sorted({name for s in samples for name in s["cpu"]})
        means = {n: statistics.mean(s["cpu"].get(n, 0.0) for s in samples) for n in names}
        table = [[n[:70], fmt_time(v)] for n, v in sorted(means.items(), key=lambda kv: -kv[1])
                 if v >= 0.0005 and not n.startswith("Chromium") and n != "idle"]  # fmt: skip
        table += [[n, fmt_time(means[n])] for n in names if n.startswith("Chromium")]
        print(f"Renderer CPU, {label} (mean of {len(samples)}; "
              "sampled profile, self time; Chromium's counters last):\n")  # fmt: skip
        print_table(["where", "time"], table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9, help="key presses per row (default 9)")
    parser.add_argument("--quick", action="store_true", help="5 presses, 2 loads")
    parser.add_argument("--loads", type=int, default=5, help="page loads per row (default 5)")
    parser.add_argument("--trace", action="store_true", help="CPU profile of each key press")
    parser.add_argument("--no-big", action="store_true", help="skip T=1024, d=768")
    parser.add_argument("--floor", action="store_true", help="also load a 4-line app")
    parser.add_argument(
        "--experiment", choices=EXPERIMENTS, help="A/B: every other key press with a variant"
    )
    args = parser.parse_args()
    reps, loads = (min(args.reps, 5), min(args.loads, 2)) if args.quick else (args.reps, args.loads)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print(f"browser_timing: {started}, {os.cpu_count()} CPUs", file=sys.stderr)
    result = run(
        reps=reps, big=not args.no_big, loads=loads, trace=args.trace, experiment=args.experiment,
        floor=args.floor,
    )  # fmt: skip
    print_report(result, trace=args.trace)


if __name__ == "__main__":
    main()

"""Key press to redrawn chart, and page load to first chart, in a real browser (issues 9, 19).

Run from the repository root (no other server needed; about 3 minutes, ``--quick`` about 1.5)::

    python benchmarks/browser_timing.py              # the targets, as a table
    python benchmarks/browser_timing.py --quick      # fewer presses and loads
    python benchmarks/browser_timing.py --trace      # and where the renderer's CPU time goes
    python benchmarks/browser_timing.py --floor      # and a 6-line st.plotly_chart app's
    python benchmarks/browser_timing.py --docs       # and write the tables into docs/performance.md

It starts its own ``streamlit run app.py`` (``devtools.server.start_server``) and Debian's
Chromium (Playwright, ``executable_path``), then measures

* (a) a key press on the embedding-dimension slider at the defaults (d = 64 <-> 65; both
  tables cached after one uncounted round trip);
* (b) a key press on the window slider with a long text at T=1024, d=768;
* (c) a page load on the warm server to the first drawn chart: in a new browser context
  (empty HTTP cache) and again in the same context (plotly.js from the HTTP cache);
* (d) a key press on the Training tab's step slider (the small-init run, one snapshot on:
  only the tab's fragment reruns), beside (a): issue 26 asks that it cost no more.

The presses of (a), (d) and, with ``--floor``, the floor app's are taken in turns (one of
each, each in a page of its own), so that the rows compared are measured over the same
minutes.

Times are taken in the page's own clock (``performance.now()``; page loads from navigation
start). Every call of the page's Plotly is recorded (``devtools.plotly_calls``); the chart is
drawn when the first ``Plotly.react`` of posviz's chart component that shows new data has
finished and the browser has shown the next frame (posviz draws nothing hidden; a call made
while the graph is hidden would not count). Websocket messages are recorded as they arrive
(time, bytes), which splits a key press into the server's rerun, the page's handling of the
message and Plotly's draw; the server's CPU time per key press is read from its
``/proc/<pid>/stat`` (user + system), the bytes per key press are those of every message the
rerun sent. ``--trace`` adds a sampled CPU profile (CDP ``Profiler``) and Chromium's
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
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/browser_timing.py`: import from the root
    sys.path.insert(0, str(ROOT))

from benchmarks.tables import fmt_time, print_table  # noqa: E402
from benchmarks.texts import long_text  # noqa: E402
from devtools.plotly_calls import RECORD_PLOTLY_CALLS  # noqa: E402

VIEWPORT = {"width": 1600, "height": 1000}
QUIET_MS = 300  # a key press is over when nothing was drawn or received for this long
TIMEOUT_MS = 120_000
CHART = "embeddings"  # the chart measured: the Embeddings tab's
DEFAULTS = "key press -> redrawn chart, defaults (T=16, d=64)"
BIG = "key press -> redrawn chart, T=1024, d=768 (long text, window)"
LOAD_FRESH = "page load -> first chart, warm server, new context (cold HTTP cache)"
LOAD_WARM = "page load -> first chart, warm server, same context (warm HTTP cache)"
TRAINING = "key press -> redrawn chart, Training tab's step slider (small-init)"
STEP = "Training step"  # its slider's label
FLOOR_FRESH = "floor: page load -> chart, 6-line st.plotly_chart app, new context"
FLOOR_WARM = "floor: page load -> chart, 6-line st.plotly_chart app, same context"
FLOOR_KEY = "floor: key press -> redrawn chart, 6-line st.plotly_chart app (3 x 16 x d=64)"
TARGETS = {DEFAULTS: 0.090, BIG: 0.240, LOAD_FRESH: 1.5}  # seconds, issue 19
# --floor: what Streamlit 1.67 itself costs, an app with nothing but a slider and a Plotly
# chart of three 16 x d heatmaps (the defaults' sizes), redrawn when the slider moves.
FLOOR_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st
d = st.slider("Embedding dimension", 1, 128, 64)
z = [np.random.default_rng(i).standard_normal((16, d), dtype=np.float32) for i in range(3)]
st.plotly_chart(go.Figure([go.Heatmap(z=m) for m in z]), theme=None)
"""

# Record in the page's clock: the key press and websocket traffic (Plotly: RECORD_PLOTLY_CALLS).
_INIT_SCRIPT = r"""
(() => {
  const B = window.__bench = {key: 0, sent: 0, msgs: []};
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
})();
"""

# Before a key press: remember the data on screen, forget earlier records.
_ARM = """
(chart) => {
  const B = window.__bench;
  const gd = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
  B.oldZ = gd && gd.data && gd.data[0] ? gd.data[0].z : null;
  B.key = 0; B.sent = 0; B.msgs = [];
  window.__plotlyCalls.length = 0;
}
"""

# After a key press (or a page load: since = 0): the first finished, shown Plotly call of the
# chart with new data in three panels, once nothing more was drawn or received for QUIET_MS.
# (The floor app's chart has no key: its calls count as the chart's.)
_DONE = r"""
([since, quiet, chart, traces]) => {
  const B = window.__bench;
  const start = since ? B.key : 0;
  if (since && !start) return false;
  const all = window.__plotlyCalls.filter(c => c.t0 >= start);
  const calls = all.filter(c => c.chart === chart || c.chart === null);
  const drawn = calls.find(c => c.t3 && c.shown && c.z && c.z !== B.oldZ
                                && (traces === null ? c.traces > 0 : c.traces === traces));
  if (!drawn || all.some(c => !c.t3)) return false;
  const last = Math.max(...all.map(c => c.t3), ...B.msgs.map(m => m.t));
  if (performance.now() - last < quiet) return false;
  const clean = ({name, t0, t1, t2, t3, shown}) => ({name, t0, t1, t2, t3, shown});
  const resources = performance.getEntriesByType('resource')
    .filter(r => r.name.includes('/static/') || /plotly[-\w]*\.min\.js/.test(r.name))
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
    settled = max(c["t3"] for c in calls)
    before = [c for c in calls if c["t0"] < drawn["t0"]]
    out: dict[str, Any] = {
        "s": (drawn["t3"] - key) / 1000,
        "settled": (settled - key) / 1000,
        "plotly_calls": len(calls),
        "draws_before": sum(c["t2"] - c["t0"] for c in before) / 1000,
        "first_draw": (drawn["t2"] - drawn["t0"]) / 1000,
        "first_draw_sync": (drawn["t1"] - drawn["t0"]) / 1000,
        "to_frame": (drawn["t3"] - drawn["t2"]) / 1000,
        "after_first": (settled - drawn["t3"]) / 1000,
        "chart_msg_kb": chart_msg["bytes"] / 1000 if chart_msg else 0.0,
        "received_kb": sum(m["bytes"] for m in msgs) / 1000,
    }
    if not load:
        out["to_request"] = max(record["sent"] - key, 0) / 1000
        if chart_msg:
            out["server"] = (chart_msg["t"] - record["sent"]) / 1000
            out["msg_to_plotly"] = (first_call["t0"] - chart_msg["t"]) / 1000
            # The run's last message (the browser has all of it): what the page does after it
            # before the chart is drawn is the browser's (React renders the page's elements).
            out["messages"] = len(msgs)
            out["last_msg_to_plotly"] = (first_call["t0"] - max(m["t"] for m in msgs)) / 1000
            named = ("to_request", "server", "msg_to_plotly", "draws_before", "first_draw")
            out["waits"] = out["s"] - out["to_frame"] - sum(out[name] for name in named)
    else:
        plotly_js = next((r for r in record["resources"] if _is_plotly_js(r["name"])), None)
        index = next((r for r in record["resources"] if r["name"].startswith("index")), None)
        first_msg = msgs[0]["t"] if msgs else None
        out |= {
            "index_js": index["end"] / 1000 if index else None,
            "first_ws_msg": first_msg / 1000 if first_msg else None,
            "chart_msg": chart_msg["t"] / 1000 if chart_msg else None,
            "plotly_js_start": plotly_js["start"] / 1000 if plotly_js else None,
            "plotly_js_end": plotly_js["end"] / 1000 if plotly_js else None,
            "plotly_js_transfer_kb": plotly_js["bytes"] / 1000 if plotly_js else None,
            "first_plotly_call": first_call["t0"] / 1000,
        }
    return out


def _is_plotly_js(name: str) -> bool:
    """Whether ``name`` (a URL, or its last part) is one of plotly.js's builds: the plotly
    package's ``plotly.min.js`` or a partial bundle (``plotly-cartesian.min.js``...).

    >>> _is_plotly_js("plotly-cartesian.min.js?v=4.1.1"), _is_plotly_js("index.Bx1.js")
    (True, False)
    """
    return re.search(r"plotly[-\w]*\.min\.js", name) is not None


def _server_cpu(pid: int) -> float:
    """User + system CPU seconds the server process has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# --trace: a sampled CPU profile per key press, and Chromium's own counters.

_BUILT_INS = {
    "getBoundingClientRect": "forced style + layout (getBoundingClientRect; Plotly's bBox)",
    "getComputedStyle": "forced style (getComputedStyle)",
    "toDataURL": "heatmap image encoding (canvas.toDataURL)",
}


def _bucket(url: str, name: str) -> str:
    """Where a profile sample ran, by its script's URL (plotly.js runs from a blob: URL, the
    component from Streamlit's ``st-bidi-posviz_chart-*.js``)."""
    if name in ("(idle)", "(program)", "(garbage collector)", "(root)"):
        return {
            "(program)": "browser native (style, layout, paint, parse)",
            "(garbage collector)": "garbage collection",
        }.get(name, "idle")
    if "st-bidi-posviz_chart" in url:
        return "posviz chart component (decode, measure, theme)"
    if url.startswith("blob:") or _is_plotly_js(url):
        return "plotly.js (react: defaults, heatmaps, axes, text)"
    if "protobuf" in url:
        return "Streamlit: protobuf decode"
    if "/static/" in url:
        return "Streamlit + React (rerun handling, render)"
    if not url:  # the browser's own functions, called from the page's scripts
        return _BUILT_INS.get(name, "built-ins: other DOM and JS calls")
    return f"other scripts ({url.rsplit('/', 1)[-1][:40]})"


def _profile_buckets(profile: dict[str, Any]) -> Counter[str]:
    """Self time (s) of the profile's samples, by where they ran."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    buckets: Counter[str] = Counter()
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    for index, node_id in enumerate(samples):
        # A sample lasts until the next one (the last one: its own delta).
        seconds = (deltas[index + 1] if index + 1 < len(deltas) else deltas[index]) / 1e6
        frame = nodes[node_id]
        buckets[_bucket(frame.get("url", ""), frame.get("functionName", ""))] += seconds
    return buckets


class _Tracer:
    """CDP ``Profiler`` and ``Performance`` around one key press."""

    METRICS = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 200})  # microseconds
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
        buckets = _profile_buckets(profile)
        for name in self.METRICS:
            buckets[f"Chromium {name}"] = after[name] - self._before.get(name, 0.0)
        return dict(buckets)


# --------------------------------------------------------------------------------------------
# The measurements.


def _slider(page: Any, label: str) -> Any:
    """The ``<input type=range>`` of the slider whose label starts with ``label``."""
    return page.locator(f'input[type="range"][aria-label^="{label}"]').first


def _new_page(context: Any) -> Any:
    page = context.new_page()
    page.add_init_script(RECORD_PLOTLY_CALLS)
    page.add_init_script(_INIT_SCRIPT)
    return page


def _wait_done(
    page: Any, *, since_key: bool, chart: str = CHART, traces: int | None = 3
) -> dict[str, Any]:
    """Until chart ``chart`` drew new data (``traces`` traces; ``None``: any number)."""
    handle = page.wait_for_function(
        _DONE, arg=[since_key, QUIET_MS, chart, traces], timeout=TIMEOUT_MS, polling="raf"
    )
    result: dict[str, Any] = handle.json_value()
    return result


def _press(
    page: Any,
    target: Any,
    key: str,
    server_pid: int,
    tracer: _Tracer | None = None,
    *,
    chart: str = CHART,
    traces: int | None = 3,
) -> dict[str, Any]:
    page.evaluate(_ARM, chart)
    target.focus()
    if tracer:
        tracer.start()
    cpu = _server_cpu(server_pid)
    target.press(key)
    record = _wait_done(page, since_key=True, chart=chart, traces=traces)
    sample = _phases(record) | {"server_cpu": _server_cpu(server_pid) - cpu}
    if tracer:
        sample["cpu"] = tracer.stop()
    return sample


def _presses(
    page: Any,
    label: str,
    reps: int,
    keys: list[str],
    server_pid: int,
    tracer: _Tracer | None,
    *,
    chart: str = CHART,
    traces: int | None = 3,
) -> list[dict[str, Any]]:
    """``reps`` presses on the slider ``label``, cycling through ``keys``."""
    return [
        _press(
            page, _slider(page, label), keys[i % len(keys)], server_pid, tracer,
            chart=chart, traces=traces,
        )
        for i in range(reps)
    ]  # fmt: skip


def _load(context: Any, url: str, *, trace: bool = False) -> dict[str, Any]:
    """Open ``url`` in a new page of ``context``; phases of the load to the first chart."""
    page = _new_page(context)
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
    *, reps: int, big: bool = True, loads: int = 3, trace: bool = False, floor: bool = False
) -> dict[str, Any]:
    """Start a server and Chromium, measure, stop both; samples per row, and notes.

    The key presses of the rows compared with one another (the defaults, the Training tab's
    step, the floor app's) are taken in turns, one of each, each on a page of its own (its own
    browser context: its own renderer), so that a machine slower for a minute slows all of
    them alike (taken one row after the other, the same rows differed by 40 ms from one run to
    the next)."""
    from playwright.sync_api import sync_playwright

    from devtools.chromium import CHROMIUM, CHROMIUM_ARGS
    from devtools.server import start_server

    rows: dict[str, list[dict[str, Any]]] = {}
    notes: list[str] = []
    load_before = os.getloadavg()
    with ExitStack() as stack:
        server = stack.enter_context(start_server())
        floor_server = stack.enter_context(_floor_server()) if floor else None
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        stack.callback(browser.close)
        context = browser.new_context(viewport=VIEWPORT)
        page = _new_page(context)
        start = time.perf_counter()
        page.goto(server.url)
        _wait_done(page, since_key=False)
        notes.append(f"first page load (cold server process): {time.perf_counter() - start:.1f} s")
        # d = 64 <-> 65: one round trip first, so both tables are cached (a first visit of a
        # (seed, d) builds its 50,257-row table: not a redraw).
        keys = ["ArrowRight", "ArrowLeft"]
        warm = _presses(page, "Embedding dimension", 2, keys, server.pid, None)
        notes.append(f"d 64 -> 65, first visit of the table: {fmt_time(warm[0]['s'])}")
        # The Training tab (its step slider reruns the tab's fragment alone), opened at the
        # run's last step: back and forth from there.
        training = _new_page(browser.new_context(viewport=VIEWPORT))
        training.goto(f"{server.url}/?tab=training")
        training.wait_for_selector(f'input[type="range"][aria-label^="{STEP}"]', timeout=TIMEOUT_MS)
        _wait_done(training, since_key=False, chart="training", traces=None)
        back = ["ArrowLeft", "ArrowRight"]
        _presses(training, STEP, 2, back, server.pid, None, chart="training", traces=None)
        turns = [
            (DEFAULTS, page, "Embedding dimension", keys, server.pid, CHART, 3),
            (TRAINING, training, STEP, back, server.pid, "training", None),
        ]
        if floor_server is not None:
            floor_page = _new_page(browser.new_context(viewport=VIEWPORT))
            floor_page.goto(floor_server.url)
            _wait_done(floor_page, since_key=False)
            _presses(floor_page, "Embedding dimension", 2, keys, floor_server.pid, None)
            turns.append((FLOOR_KEY, floor_page, "Embedding dimension", keys, floor_server.pid,
                          CHART, 3))  # fmt: skip
        tracers = {label: _Tracer(turn_page) if trace else None
                   for label, turn_page, *_ in turns}  # fmt: skip
        for label, *_ in turns:
            rows[label] = []
        for index in range(reps):
            for label, turn_page, slider, turn_keys, pid, chart, traces in turns:
                rows[label].append(_press(
                    turn_page, _slider(turn_page, slider), turn_keys[index % len(turn_keys)],
                    pid, tracers[label], chart=chart, traces=traces,
                ))  # fmt: skip
        if big:
            text = page.locator('[data-testid="stTextArea"] textarea').first
            text.fill(long_text(0))
            page.evaluate(_ARM, CHART)
            text.press("Control+Enter")
            _wait_done(page, since_key=True)
            page.wait_for_selector('input[type="range"][aria-label^="Window"]', timeout=TIMEOUT_MS)
            _press(page, _slider(page, "Context length"), "End", server.pid)  # T=1024
            _press(page, _slider(page, "Embedding dimension"), "End", server.pid)  # 768
            # The long text has 5 windows of 1,024 tokens: 0 -> 4 -> 0 -> ...
            keys = ["ArrowRight"] * 4 + ["ArrowLeft"] * 4
            _presses(page, "Window", 1, keys, server.pid, None)  # warm-up
            rows[BIG] = _presses(
                page, "Window", reps, keys[1:] + keys[:1], server.pid, tracers[DEFAULTS]
            )
        rows[LOAD_FRESH], rows[LOAD_WARM] = [], []
        for _ in range(loads):
            context = browser.new_context(viewport=VIEWPORT)
            for label in (LOAD_FRESH, LOAD_WARM):
                rows[label].append(_load(context, server.url, trace=trace))
            context.close()
        if floor_server is not None:
            rows |= _floor_loads(browser, floor_server.url, loads=max(loads, 1), trace=trace)
    return {"rows": rows, "notes": notes, "load_average": [load_before, os.getloadavg()]}


@contextmanager
def _floor_server() -> Iterator[Any]:
    """A server of :data:`FLOOR_APP`'s own, in a folder that goes with it."""
    import tempfile

    from devtools.server import start_server

    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder) / "floor_app.py"
        app.write_text(FLOOR_APP, encoding="utf-8")
        with start_server(app=app) as server:
            yield server


def _floor_loads(
    browser: Any, url: str, *, loads: int, trace: bool
) -> dict[str, list[dict[str, Any]]]:
    """Page loads of :data:`FLOOR_APP` (its key presses are taken in turns with posviz's)."""
    rows: dict[str, list[dict[str, Any]]] = {FLOOR_FRESH: [], FLOOR_WARM: []}
    context = browser.new_context(viewport=VIEWPORT)
    _load(context, url)  # warm the server
    context.close()
    for _ in range(loads):
        context = browser.new_context(viewport=VIEWPORT)
        rows[FLOOR_FRESH].append(_load(context, url, trace=trace))
        rows[FLOOR_WARM].append(_load(context, url, trace=trace))
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


def _kb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} kB"


def report_tables(result: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report as (caption, header, rows) tables: the targets, key presses, page loads."""
    tables = []
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
    tables.append(("Browser timings (Chromium, streamlit run; page clock)",
                   ["target", "measured (median, p90, n)", "met?"], rows))  # fmt: skip
    press_rows = []
    for label in [r for r in result["rows"] if r.startswith(("key press", "floor: key press"))]:
        samples = result["rows"][label]
        if not samples:
            continue
        cpu = _median(samples, "server_cpu")
        press_rows.append([
            "floor: 6-line st.plotly_chart app" if label == FLOOR_KEY else label.split(", ", 1)[1],
            fmt_time(_median(samples, "to_request")),
            fmt_time(_median(samples, "server")),
            "-" if cpu is None else fmt_time(cpu),
            _kb(_median(samples, "received_kb")),
            fmt_time(_median(samples, "msg_to_plotly")),
            f"{_median(samples, 'messages') or 0:.0f}",
            fmt_time(_median(samples, "last_msg_to_plotly")),
            fmt_time(_median(samples, "first_draw")),
            fmt_time(_median(samples, "to_frame")),
            fmt_time(_median(samples, "s")),
            fmt_time(_median(samples, "waits")),
            f"{_median(samples, 'plotly_calls') or 0:.0f}",
        ])  # fmt: skip
    if press_rows:
        tables.append((
            "Key press phases (medians): key -> request sent; request -> chart message "
            "received (server rerun); the server's CPU time (user + system) for the press; "
            "bytes the rerun sent the page; message -> Plotly.react (protobuf, React, the "
            "component's decode); the messages the run sent, and from the last of them to "
            "Plotly.react (the page's own work once it has the whole run); the react; to the "
            "next frame (visible); the total; waits in it (frames, other tasks); Plotly calls "
            "of the press.",
            ["key press", "key->request", "server", "server CPU", "bytes", "msg->Plotly",
             "messages", "last msg->Plotly", "react", "->frame", "total (visible)", "waits",
             "Plotly calls"],
            press_rows,
        ))  # fmt: skip
    load_rows = []
    for label in [r for r in result["rows"] if "page load" in r]:
        samples = result["rows"][label]
        if not samples:
            continue
        load_rows.append([
            ("floor, " if label.startswith("floor") else "")
            + ("new context" if "new context" in label else "same context"),
            fmt_time(_median(samples, "index_js")),
            fmt_time(_median(samples, "first_ws_msg")),
            fmt_time(_median(samples, "chart_msg")),
            fmt_time(_median(samples, "plotly_js_start")),
            fmt_time(_median(samples, "plotly_js_end")),
            _kb(_median(samples, "plotly_js_transfer_kb")),
            fmt_time(_median(samples, "first_plotly_call")),
            fmt_time(_median(samples, "s")),
        ])  # fmt: skip
    if load_rows:
        tables.append((
            "Page load phases (medians, from navigation start): index.js received; first "
            "websocket message; the largest (chart) message; plotly.js requested / received "
            "(transferred: 0 = from the HTTP cache; the floor app's plotly.js is Streamlit's "
            "own chunk, not counted); first Plotly call; chart drawn and shown.",
            ["page load", "index.js", "first ws msg", "chart msg", "plotly.js asked",
             "plotly.js in", "transferred", "Plotly call", "drawn"],
            load_rows,
        ))  # fmt: skip
    return tables


def print_report(result: dict[str, Any], *, trace: bool = False) -> None:
    """The targets table, each row's phases, and (``trace``) the CPU breakdown."""
    for caption, header, rows in report_tables(result):
        print(f"## {caption}\n" if caption.startswith("Browser") else f"{caption}\n")
        print_table(header, rows)
    if trace:
        _print_cpu(result)
    for note in result.get("notes", []):
        print(f"note: {note}")
    before, after = result.get("load_average", [(0.0,) * 3, (0.0,) * 3])
    print(
        f"note: load average (1, 5, 15 min) before {before[0]:.2f} {before[1]:.2f} "
        f"{before[2]:.2f}, after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; 2 CPUs"
    )


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


def write_docs(
    result: dict[str, Any], started: Any, command: str, path: Path | None = None
) -> None:
    """The report's tables into docs/performance.md (or ``path``), stamped, through
    benchmarks/report.py."""
    from benchmarks.report import PERFORMANCE, stamp, table, write_block

    body = "\n\n".join(
        f"{caption}\n\n{table(header, rows)}" for caption, header, rows in report_tables(result)
    )
    notes = "\n".join(f"- {note}" for note in result.get("notes", []))
    write_block(
        "browser_timing", f"{body}\n\n{notes}", when=stamp(started), command=command,
        path=path or PERFORMANCE,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9, help="key presses per row (default 9)")
    parser.add_argument("--quick", action="store_true", help="5 presses, 2 loads")
    parser.add_argument("--loads", type=int, default=5, help="page loads per row (default 5)")
    parser.add_argument("--trace", action="store_true", help="CPU profile of each key press")
    parser.add_argument("--no-big", action="store_true", help="skip T=1024, d=768")
    parser.add_argument("--floor", action="store_true", help="also a 6-line st.plotly_chart app")
    parser.add_argument("--docs", action="store_true", help="write docs/performance.md's block")
    args = parser.parse_args()
    reps, loads = (min(args.reps, 5), min(args.loads, 2)) if args.quick else (args.reps, args.loads)
    from benchmarks.report import start

    started = start()
    print(f"browser_timing: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs", file=sys.stderr)  # fmt: skip
    result = run(reps=reps, big=not args.no_big, loads=loads, trace=args.trace, floor=args.floor)
    print_report(result, trace=args.trace)
    if args.docs:
        write_docs(result, started, "python benchmarks/browser_timing.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()

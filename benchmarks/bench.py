"""posviz benchmark (issue 4): rerun time, payload and memory, side by side with a naive app.

Run from the repository root::

    python benchmarks/bench.py            # full run, about 4-5 minutes on 2 cores
    python benchmarks/bench.py --quick    # about 1 minute: fewer repeats, naive app small only
    python benchmarks/bench.py --no-browser

Every measured sequence runs in a fresh ``python`` process (``--worker ...``), so caches and
peak RSS start clean. Each process drives an app through ``streamlit.testing.v1.AppTest``
with the widget keys of ``app.py`` (``text``, ``context_length``, ``emb_dim``, ``stride``,
``seed``, ``window``, ``scheme``) and times ``at.run()`` after each change. The same driver
runs against ``benchmarks/naive_app.py``. A baseline process only imports the libraries; an
empty-app process measures what AppTest itself costs per rerun. The browser part
(``benchmarks/browser_timing.py``) times key presses to the redrawn chart and page loads to
the first chart in Chromium, and prints its own table of issue 9's targets.
Results are printed and saved as JSON in ``benchmarks/results/``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `python benchmarks/bench.py`: import benchmarks.* from the root

from benchmarks import report as docs_report  # noqa: E402
from benchmarks.tables import fmt_time, print_table  # noqa: E402
from benchmarks.texts import edited, long_text, varied_text  # noqa: E402

APPS = {"posviz": ROOT / "app.py", "naive": ROOT / "benchmarks" / "naive_app.py"}
RESULTS = ROOT / "benchmarks" / "results"
TIMEOUT = 600  # seconds per AppTest run: the naive app needs ~20 s at T=1024, d=768
PASTE_DISTINCT = "text paste, 1,024 distinct tokens (T=1024, d=768)"
EDIT_DISTINCT = "text edit, 1,024 distinct tokens (T=1024, d=768)"  # issue 8: <= 80 ms
GROWTH_SIZES = [(4, 16), (16, 64), (64, 128), (256, 256), (512, 512), (1024, 768)]
BASELINE_IMPORTS = ("streamlit", "streamlit.testing.v1", "torch", "tiktoken", "plotly", "numpy")


def peak_rss_mb(field: str = "VmHWM") -> float:
    """Peak (``VmHWM``) or current (``VmRSS``) resident set size of this process, in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------------------------
# Workers: each runs in its own process and writes a JSON file.


class Driver:
    """Times ``at.run()`` after a widget change and records the figure payload of the rerun."""

    def __init__(self, app: Path) -> None:
        from streamlit.testing.v1 import AppTest

        self.app_test = AppTest
        self.app = app
        self.rows: dict[str, list[dict[str, float]]] = {}
        self.notes: list[str] = []
        self.at: Any = None

    def load(self, label: str | None) -> None:
        at = self.app_test.from_file(str(self.app), default_timeout=TIMEOUT)
        self._timed(label, at)
        self.at = at

    def widget(self, kind: str, key: str) -> Any:
        """The widget ``key`` of AppTest type ``kind``: that key, or the one widget whose key is
        ``key`` with the value it shows (posviz's seed box is ``seed_box=123``)."""
        widgets = getattr(self.at, kind)
        found = [w for w in widgets if w.key == key or str(w.key).startswith(f"{key}=")]
        if len(found) != 1:
            raise KeyError(key)
        return found[0]

    def change(self, label: str | None, kind: str, key: str, value: object) -> None:
        """Set widget ``key`` (of AppTest type ``kind``) to ``value`` and rerun, timed."""
        widget = self.widget(kind, key)
        if kind == "text_area":
            widget.input(value)
        else:
            widget.set_value(value)
        self._timed(label, self.at)

    def has(self, kind: str, key: str) -> bool:
        try:
            self.widget(kind, key)
        except KeyError:
            return False
        return True

    def _timed(self, label: str | None, at: Any) -> None:
        start = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - start
        problems = [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]
        # st.plotly_chart's figure JSON (the naive app), or posviz's chart component: its
        # binary payload and the JavaScript that travels with every element.
        charts = at.get("plotly_chart")
        components = at.get("bidi_component")
        if problems or not (charts or components):
            raise RuntimeError(f"{self.app.name}: {label}: no chart or an error: {problems}")
        payload = sum(len(chart.proto.spec) for chart in charts) + sum(
            len(c.proto.bytes) + len(c.proto.js_content) for c in components
        )
        if label is not None:
            self.rows.setdefault(label, []).append(
                {"s": seconds, "bytes": payload, "rss": peak_rss_mb("VmRSS"), "hwm": peak_rss_mb()}
            )

    def widget_value(self, kind: str, key: str) -> Any:
        return self.widget(kind, key).value


def scheme_widget(driver: Driver) -> str | None:
    for kind in ("selectbox", "radio"):
        if driver.has(kind, "scheme"):
            return kind
    return None


def worker_sequence(app: Path, reps: int, big: bool) -> dict[str, Any]:
    """The benchmark sequence: defaults first, then the maximum sizes (if ``big``)."""
    d = Driver(app)
    d.load("first load (cold process, imports torch)")
    fresh = Driver(app)
    fresh.load("first load (new session, warm process)")
    d.rows.update(fresh.rows)
    del fresh

    for i in range(reps):  # T=16, d=64: a new long text each time
        d.change("text edit (T=16, d=64)", "text_area", "text", long_text(i + 1))
    for i in range(reps):
        d.change("window change (T=16, d=64)", "slider", "window", 7 * (i + 1))

    kind = scheme_widget(d)
    if kind is None:
        d.notes.append("scheme: no selectbox/radio with key 'scheme' in this app; row skipped")
    else:
        widget = getattr(d.at, kind)(key="scheme")
        options = list(widget.options)
        current = widget.value
        others = [o for o in options if o != current] + [current]
        for i in range(reps):
            d.change("scheme change (T=16, d=64)", kind, "scheme", others[i % len(others)])
        d.change(None, kind, "scheme", current)

    # (seed, d) pairs: at most 8 distinct, the size of app.py's cache_resource.
    for emb_dim in [32, 128, 256, 512][: max(2, min(4, reps))]:
        d.change("emb_dim change, first visit of (seed, d<768)", "slider", "emb_dim", emb_dim)
    d.change("first visit of (seed, d=768): emb_dim or seed", "slider", "emb_dim", 768)
    # posviz's seed is a text box (it names what it cannot use); the naive app's a number box
    seed_box = ("text_input", "seed_box") if d.has("text_input", "seed_box") else None
    kind, key = seed_box or ("number_input", "seed")
    for seed in range(1001, 1001 + min(2, reps - 1)):
        value = str(seed) if seed_box else seed
        d.change("first visit of (seed, d=768): emb_dim or seed", kind, key, value)
    d.change(None, kind, key, "123" if seed_box else 123)  # revisit (123, 768)
    for i in range(reps):
        emb_dim = [512, 768, 128, 768, 256][i % 5]
        d.change("emb_dim change, revisit of (seed, d)", "slider", "emb_dim", emb_dim)
    d.change(None, "slider", "emb_dim", 64)
    for context_length in [32, 64, 128, 256, 512, 1024]:
        d.change("context_length change (32..1024, d=64)", "slider", "context_length",
                 context_length)  # fmt: skip
    if big:
        d.change("emb_dim to 768 at T=1024 (revisit of (seed, d))", "slider", "emb_dim", 768)
        for i in range(max(1, reps - 2)):
            d.change("text edit (T=1024, d=768)", "text_area", "text", long_text(100 + i))
        windows = int(d.at.slider(key="window").max) if d.has("slider", "window") else 0
        for window in range(1, min(windows, max(1, reps - 1)) + 1):
            d.change("window change (T=1024, d=768)", "slider", "window", window)
        # Real text at GPT-2 scale: 1,024 distinct tokens spread over the whole vocabulary
        # (~350 of the token table's 128-row blocks), pasted, then edited one word at a time.
        d.change(None, "slider", "window", 0)
        pastes = max(1, reps // 2)
        for i in range(pastes):
            d.change(PASTE_DISTINCT, "text_area", "text", varied_text(i))
        for i in range(1, max(3, reps) + 1):  # each edit: one word differs from the last text
            d.change(EDIT_DISTINCT, "text_area", "text", edited(varied_text(pastes - 1), i))
    return {"rows": d.rows, "notes": d.notes, "peak_rss_mb": peak_rss_mb()}


def worker_growth(app: Path, reps: int, sizes: list[tuple[int, int]]) -> dict[str, Any]:
    """Rerun time and payload of a window change at each ``T x d`` (long text, full windows)."""
    d = Driver(app)
    d.load(None)
    d.change(None, "text_area", "text", long_text(0))
    for context_length, emb_dim in sizes:
        size = f"{context_length}x{emb_dim}"
        d.change(f"{size} size change", "slider", "context_length", context_length)
        d.change(f"{size} size change", "slider", "emb_dim", emb_dim)
        windows = int(d.at.slider(key="window").max) if d.has("slider", "window") else 0
        n = reps if context_length * emb_dim < 2**17 else max(1, reps // 2)
        for window in range(1, min(windows, n) + 1):
            d.change(f"{size} window change", "slider", "window", window)
    return {"rows": d.rows, "notes": d.notes, "peak_rss_mb": peak_rss_mb()}


def worker_empty(reps: int) -> dict[str, Any]:
    """AppTest's own cost per rerun: an app with one slider and one line of text.

    The process imports the baseline's libraries first, so its peak RSS is the baseline plus
    what the Streamlit runtime under AppTest adds.
    """
    from streamlit.testing.v1 import AppTest

    worker_baseline()

    script = (
        "import streamlit as st\nst.slider('x', 0, 100, key='x')\nst.write(st.session_state.x)\n"
    )
    at = AppTest.from_string(script, default_timeout=60).run()
    times = []
    for i in range(max(10, 4 * reps)):
        at.slider(key="x").set_value(i + 1)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    return {"rows": {"empty app rerun (AppTest overhead)": [{"s": t, "bytes": 0} for t in times]},
            "notes": [], "peak_rss_mb": peak_rss_mb()}  # fmt: skip


def worker_baseline() -> dict[str, Any]:
    import importlib

    for name in BASELINE_IMPORTS:
        importlib.import_module(name)
    import plotly.graph_objects  # noqa: F401

    return {"rows": {}, "notes": [], "peak_rss_mb": peak_rss_mb()}


def run_worker(args: argparse.Namespace) -> None:
    app = APPS.get(args.app or "posviz") or Path(args.app).resolve()
    if args.worker == "sequence":
        result = worker_sequence(app, args.reps, big=args.big)
    elif args.worker == "growth":
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
        result = worker_growth(app, args.reps, sizes)  # type: ignore[arg-type]
    elif args.worker == "empty":
        result = worker_empty(args.reps)
    elif args.worker == "baseline":
        result = worker_baseline()
    elif args.worker == "browser":
        sys.path.insert(0, str(ROOT))
        from benchmarks.browser_timing import browser_timings

        result = browser_timings(reps=args.reps, big=args.big)
    else:
        raise SystemExit(f"unknown worker {args.worker!r}")
    Path(args.out).write_text(json.dumps(result))


# --------------------------------------------------------------------------------------------
# The parent: start workers, print the tables.


def spawn(worker: str, *extra: str, quiet_label: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        log = Path(tmp) / "stderr.txt"
        env = {
            **os.environ,
            "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
            "STREAMLIT_LOGGER_LEVEL": "error",
            "PYTHONPATH": str(ROOT),
        }
        start = time.perf_counter()
        print(f"  running {quiet_label} ...", end="", flush=True, file=sys.stderr)
        with log.open("w") as err:
            done = subprocess.run(
                [sys.executable, __file__, "--worker", worker, "--out", str(out), *extra],
                cwd=ROOT, env=env, stdout=err, stderr=err, check=False,
            )  # fmt: skip
        print(f" {time.perf_counter() - start:.0f} s", file=sys.stderr)
        if done.returncode or not out.exists():
            tail = log.read_text()[-3000:]
            return {"rows": {}, "notes": [f"{quiet_label} failed:\n{tail}"], "failed": True}
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def stats(samples: list[dict[str, float]] | None) -> dict[str, float] | None:
    if not samples:
        return None
    seconds = [s["s"] for s in samples]
    payload = [s["bytes"] for s in samples]
    return {
        "n": len(seconds),
        "median": statistics.median(seconds),
        "max": max(seconds),
        "total": sum(seconds),
        "kb": statistics.median(payload) / 1000,
        "kb_max": max(payload) / 1000,
    }


def sequence_table(fast: dict[str, Any], slow: dict[str, Any], overhead: float) -> list[list[str]]:
    labels = list(dict.fromkeys([*fast["rows"], *slow["rows"]]))
    rows = []
    for label in labels:
        a, b = stats(fast["rows"].get(label)), stats(slow["rows"].get(label))
        ratio = f"{b['median'] / a['median']:.0f}x" if a and b else "-"
        own = f"{max(a['median'] - overhead, 0) * 1000:.0f} ms" if a else "-"
        rows.append([
            label,
            str(a["n"]) if a else "0",
            fmt_time(a["median"]) if a else "-",
            fmt_time(a["max"]) if a else "-",
            own,
            f"{a['kb_max']:.0f} kB" if a else "-",
            fmt_time(b["median"]) if b else "-",
            fmt_time(b["max"]) if b else "-",
            f"{b['kb_max']:.0f} kB" if b else "-",
            ratio,
        ])  # fmt: skip
    return rows


def totals(result: dict[str, Any], labels: list[str]) -> float:
    return sum(sum(s["s"] for s in result["rows"].get(label, [])) for label in labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 1 minute: fewer repeats")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium timings")
    parser.add_argument("--json", type=Path, default=RESULTS / "latest.json")
    parser.add_argument(
        "--docs", action="store_true", help="also write the tables into docs/performance.md"
    )
    parser.add_argument(
        "--app-file",
        default="posviz",
        help="measure this copy of app.py instead (AppTest rows only; the browser uses app.py)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--app", help=argparse.SUPPRESS)  # posviz, naive or a path
    parser.add_argument("--reps", type=int, default=5, help=argparse.SUPPRESS)
    parser.add_argument("--big", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_worker(args)
        return

    reps = 3 if args.quick else 7
    all_sizes = ",".join(f"{t}x{d}" for t, d in GROWTH_SIZES)
    naive_sizes = all_sizes if not args.quick else ",".join(f"{t}x{d}" for t, d in GROWTH_SIZES[:4])
    started = time.perf_counter()
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    print(f"posviz benchmark on {machine}", file=sys.stderr)
    load_before = os.getloadavg()
    docs_started = docs_report.start()
    results: dict[str, Any] = {
        "baseline": spawn("baseline", quiet_label="baseline (imports only)"),
        "empty": spawn("empty", "--reps", str(reps), quiet_label="empty app (AppTest overhead)"),
        "posviz": spawn("sequence", "--app", args.app_file, "--reps", str(reps), "--big",
                        quiet_label="posviz sequence"),
        "naive": spawn("sequence", "--app", "naive", "--reps", "2" if args.quick else "3",
                       *([] if args.quick else ["--big"]), quiet_label="naive sequence"),
        "posviz_growth": spawn("growth", "--app", args.app_file, "--reps", str(reps),
                               "--sizes", all_sizes, quiet_label="posviz growth"),
        "naive_growth": spawn("growth", "--app", "naive", "--reps", "2", "--sizes", naive_sizes,
                              quiet_label="naive growth"),
    }  # fmt: skip
    if not args.no_browser:
        results["browser"] = spawn("browser", "--reps", "3" if args.quick else "5",
                                   *([] if args.quick else ["--big"]),
                                   quiet_label="browser (Chromium)")  # fmt: skip
    results["load_average"] = [load_before, os.getloadavg()]
    tables = io.StringIO()
    with contextlib.redirect_stdout(tables):
        report(results, quick=args.quick)
    print(tables.getvalue(), end="")
    if args.docs:
        command = "python benchmarks/bench.py " + " ".join(sys.argv[1:])
        docs_report.write_block(
            "bench", tables.getvalue(), when=docs_report.stamp(docs_started), command=command
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1))
    print(f"\n(raw numbers in {args.json}; whole run {time.perf_counter() - started:.0f} s)")


def report(results: dict[str, Any], *, quick: bool) -> None:
    overhead_stats = stats(results["empty"]["rows"].get("empty app rerun (AppTest overhead)"))
    overhead = overhead_stats["median"] if overhead_stats else 0.0
    posviz, naive = results["posviz"], results["naive"]
    print("\n### Interactions (AppTest, fresh process per app; medians of n reruns)\n")
    print(f"AppTest's own cost per rerun (empty app): median {overhead * 1000:.1f} ms; "
          "'own' = posviz median minus that.\n")  # fmt: skip
    print_table(
        ["interaction", "n", "posviz median", "max", "own", "chart payload",
         "naive median", "max", "figure JSON", "naive/posviz"],
        sequence_table(posviz, naive, overhead),
    )  # fmt: skip
    common = [
        label
        for label in posviz["rows"]
        if label in naive["rows"] and not label.startswith("first load")
        and len(posviz["rows"][label]) >= len(naive["rows"][label])
    ]  # fmt: skip
    # Same sequence: the interactions both apps ran, the naive count of each.
    fast = sum(
        sum(s["s"] for s in posviz["rows"][lab][: len(naive["rows"][lab])]) for lab in common
    )
    slow = totals(naive, common)
    base = results["baseline"].get("peak_rss_mb", 0.0)
    over = {k: results[k].get("peak_rss_mb", 0.0) - base for k in ("posviz", "naive")}
    print("### Memory and the whole sequence\n")
    rows = [
        ["baseline: imports only (" + ", ".join(BASELINE_IMPORTS) + ")", f"{base:.0f} MB", ""],
        ["empty app under AppTest (baseline imports + Streamlit runtime)",
         f"{results['empty'].get('peak_rss_mb', 0.0):.0f} MB",
         f"+{results['empty'].get('peak_rss_mb', 0.0) - base:.0f} MB"],
        ["posviz peak RSS over the sequence", f"{base + over['posviz']:.0f} MB",
         f"+{over['posviz']:.0f} MB"],
        ["naive peak RSS over the sequence", f"{base + over['naive']:.0f} MB",
         f"+{over['naive']:.0f} MB"],
        ["RSS over baseline, naive/posviz", f"{over['naive'] / max(over['posviz'], 1):.1f}x", ""],
        [f"same reruns in both ({len(common)} kinds, first loads excluded)",
         f"posviz {fmt_time(fast)}", f"naive {fmt_time(slow)}"],
        ["time, naive/posviz", f"{slow / max(fast, 1e-9):.0f}x", ""],
    ]  # fmt: skip
    for key in ("posviz_growth", "naive_growth"):
        if "peak_rss_mb" in results[key]:
            rows.append([f"{key.replace('_', ' ')} process peak RSS",
                         f"{results[key]['peak_rss_mb']:.0f} MB",
                         f"+{results[key]['peak_rss_mb'] - base:.0f} MB"])  # fmt: skip
    print_table(["", "value", ""], rows)
    print("### Growth: a window change at each T x d (long text, full windows)\n")
    growth_rows = []
    for t, dim in GROWTH_SIZES:
        size = f"{t}x{dim}"
        a = stats(results["posviz_growth"]["rows"].get(f"{size} window change"))
        b = stats(results["naive_growth"]["rows"].get(f"{size} window change"))
        sa = stats(results["posviz_growth"]["rows"].get(f"{size} size change"))
        growth_rows.append([
            f"T={t}, d={dim}", f"{t * dim * 3:,}",
            fmt_time(a["median"]) if a else "-", f"{a['kb_max']:.0f} kB" if a else "-",
            fmt_time(sa["max"]) if sa else "-",
            fmt_time(b["median"]) if b else "-", f"{b['kb_max']:.0f} kB" if b else "-",
            f"{b['median'] / a['median']:.0f}x" if a and b else "-",
        ])  # fmt: skip
    print_table(
        ["size", "cells (3 panels)", "posviz rerun", "chart payload", "posviz size change (max)",
         "naive rerun", "naive JSON", "ratio"],
        growth_rows,
    )  # fmt: skip
    if "browser" in results:
        from benchmarks.browser_timing import print_report  # the same table as run alone

        print_report(results["browser"])
    notes = [
        n
        for key, r in results.items()
        if isinstance(r, dict) and key != "browser"  # print_report gave the browser's
        for n in r.get("notes", [])
    ]
    before, after = results.get("load_average", [(0.0,), (0.0,)])
    notes.append(
        f"load average (1 min) {before[0]:.1f} before, {after[0]:.1f} after: other processes "
        "on this machine inflate the times; medians are the numbers to compare."
    )
    if quick:
        notes.append("--quick: fewer repeats; the naive app skips T=1024, d=768 and "
                     "growth above 256x256; browser at defaults only.")  # fmt: skip
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()

"""What each of the Training tab's two charts asks of plotly.js when the step moves (issue 26).

Run from the repository root (about 30 seconds)::

    python benchmarks/training_calls.py              # 12 steps back and forth
    python benchmarks/training_calls.py --steps 30

It starts its own ``streamlit run app.py`` and Debian's Chromium, opens ``?tab=training`` at
step 600, presses the step slider's arrow keys (600 -> 650 -> 600 ...), and prints, for each
chart (``training``: the panels a step changes; ``training_loss``: the loss, whose arrays are
the run's at every step), every Plotly call the presses made: its name, how many, and the
median time of its synchronous part and to its promise (the page's clock, recorded by
``devtools.plotly_calls``). The loss chart should make one ``relayout`` a step (its step marks
alone), never a ``react``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/training_calls.py`: import from the root
    sys.path.insert(0, str(ROOT))

from benchmarks.tables import print_table  # noqa: E402
from devtools.plotly_calls import RECORD_PLOTLY_CALLS  # noqa: E402

TIMEOUT_MS = 120_000
SLIDER = 'input[type="range"][aria-label^="Training step"]'
# The last Plotly call of the press has finished (one per chart), or the wait times out.
SETTLED = """(count) => window.__plotlyCalls.length >= count
    && window.__plotlyCalls.every(c => c.t2 > 0)"""


def measure(steps: int) -> list[dict[str, Any]]:
    """Every Plotly call the ``steps`` presses made, with its chart and times (ms)."""
    from playwright.sync_api import sync_playwright

    from devtools.chromium import CHROMIUM, CHROMIUM_ARGS
    from devtools.server import start_server

    with start_server() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
            page.add_init_script(RECORD_PLOTLY_CALLS)
            page.goto(f"{server.url}/?tab=training&step=600")
            page.wait_for_selector(".st-key-training_loss .js-plotly-plot", timeout=TIMEOUT_MS)
            page.wait_for_timeout(2000)  # the size reports and their redraws are over
            slider = page.locator(SLIDER).first
            calls: list[dict[str, Any]] = []
            for index in range(steps):
                page.evaluate("window.__plotlyCalls.length = 0")
                slider.focus()
                slider.press("ArrowLeft" if index % 2 else "ArrowRight")
                page.wait_for_function(SETTLED, arg=2, timeout=TIMEOUT_MS)
                page.wait_for_timeout(300)  # nothing more comes
                calls += page.evaluate("window.__plotlyCalls")
            return calls
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="step presses (default 12)")
    args = parser.parse_args(argv)
    print(f"training_calls: {args.steps} steps, load average before {os.getloadavg()[0]:.2f}")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for call in measure(args.steps):
        groups[(str(call["chart"]), str(call["name"]))].append(call)
    rows = [
        [chart, name, str(len(found)),
         f"{statistics.median(c['t1'] - c['t0'] for c in found):.1f} ms",
         f"{statistics.median(c['t2'] - c['t0'] for c in found):.1f} ms"]
        for (chart, name), found in sorted(groups.items())
    ]  # fmt: skip
    print_table(["chart", "Plotly call", "calls", "sync (median)", "to promise (median)"], rows)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Screenshots of compare mode (the "Word order" tab) from the running app.

    python docs/compare_screenshots.py            # docs/compare.png for the README
    python docs/compare_screenshots.py --sizes /tmp/shots   # plus 1920x1080, 1280x800, 390x844

Starts ``streamlit run app.py`` on 127.0.0.1 (``devtools.server``), opens the link
``?text=The dog bites the man&compare=The man bites the dog`` in Debian's headless Chromium
(Playwright, no ``playwright install``) and waits until the compare chart has drawn its eight
heatmaps and the run has finished. Waits are for page conditions, never for time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from devtools.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from devtools.server import running_server  # noqa: E402

TIMEOUT = 180_000  # ms: the server's first run imports torch on a busy machine
MAX_BYTES = 400_000
QUERY = {"text": "The dog bites the man", "compare": "The man bites the dog"}
DRAWN = """(selector) => {
    const gd = document.querySelector(selector);
    return !!gd && !!gd.data && gd.data.length === 8 && gd.querySelectorAll('g.hm').length === 8;
}"""
IDLE = """(marker) => document.fonts.status === 'loaded'
    && document.body.innerText.includes(marker)
    && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stStatusWidget"]')"""
MARKER = "Computed in float64"  # the Word order tab's last caption
CONTENT_HEIGHT = """() => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    return Math.ceil(main.scrollHeight);
}"""


def open_compare(page: Any, url: str, **extra: str) -> None:
    page.goto(f"{url}/?{urlencode({**QUERY, **extra})}")
    page.wait_for_function(DRAWN, arg=".st-key-compare .js-plotly-plot", timeout=TIMEOUT)
    page.wait_for_function(IDLE, arg=MARKER, timeout=TIMEOUT)
    page.mouse.move(0, 0)  # no hover label in the picture


def full_page(page: Any, path: Path, width: int) -> None:
    height = max(800, int(page.evaluate(CONTENT_HEIGHT)))
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(IDLE, arg=MARKER, timeout=TIMEOUT)
    page.screenshot(path=str(path), type="png", full_page=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=Path, help="also write viewport shots into this folder")
    args = parser.parse_args()
    with running_server() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            open_compare(page, server.url)
            readme = ROOT / "docs" / "compare.png"
            full_page(page, readme, 1600)
            size = readme.stat().st_size
            print(f"{readme.relative_to(ROOT)}: {size:,} bytes")
            if size > MAX_BYTES:
                raise SystemExit(f"{readme} is {size:,} bytes; keep it under {MAX_BYTES:,}")
            if args.sizes is not None:
                args.sizes.mkdir(parents=True, exist_ok=True)
                for width, height in ((1920, 1080), (1280, 800), (390, 844)):
                    for causal in ("0", "1"):
                        page.set_viewport_size({"width": width, "height": height})
                        open_compare(page, server.url, causal=causal)
                        path = args.sizes / f"compare-{width}x{height}-causal{causal}.png"
                        page.screenshot(path=str(path), type="png")
                        full = args.sizes / f"compare-{width}-causal{causal}-full.png"
                        full_page(page, full, width)
                        print(path, full)
        finally:
            browser.close()


if __name__ == "__main__":
    main()

"""Regenerate the README screenshots from the running app: ``python docs/screenshots.py``.

Starts ``streamlit run app.py`` on 127.0.0.1 (``devtools.server.start_server``), opens it in
Debian's headless Chromium (Playwright, no ``playwright install``) at 1600 x 1000 with device
scale factor 1, and writes into docs/:

* screenshot.png: the default view (three panels, token chips, tensor shapes);
* similarity.png: the Similarity tab for the default "A rose is a rose" text;
* lecture.png: lecture mode at its last step (all three panels);
* rope.png: the RoPE scheme.

Each page is taken at its full height (Streamlit scrolls inside its main section, so the
window is made as tall as that section). Waits are for page conditions, never for time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from devtools.chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from devtools.server import start_server  # noqa: E402

DOCS = ROOT / "docs"
WIDTH, HEIGHT = 1600, 1000
TIMEOUT = 120_000  # ms: the server's first run imports torch
MAX_BYTES = 400_000

# True once the chart has three traces, the first `shown` visible and drawn as heatmap layers.
DRAWN = """([selector, shown]) => {
    const gd = document.querySelector(selector);
    return !!gd && !!gd.data && gd.data.length === 3
        && gd.data.filter(t => t.visible !== false).length === shown
        && gd.querySelectorAll('g.hm').length === shown;
}"""
# True when the page shows `marker`, Streamlit has finished the run (no element is marked
# stale, no running indicator) and the fonts are loaded.
IDLE = """(marker) => document.fonts.status === 'loaded'
    && document.body.innerText.includes(marker)
    && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stStatusWidget"]')"""
LAST_CAPTION = "Positions count from 0."  # the last line of the Embeddings tab
CONTENT_HEIGHT = """() => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    return Math.ceil(main.scrollHeight);
}"""


def wait_for_chart(page: Any, key: str, marker: str, shown: int = 3) -> None:
    """Until chart ``key`` shows ``shown`` panels and the finished page shows ``marker``."""
    page.wait_for_function(DRAWN, arg=[f".st-key-{key} .js-plotly-plot", shown], timeout=TIMEOUT)
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)


def capture(page: Any, name: str, marker: str) -> Path:
    """Screenshot the whole page (grown to its content's height) into docs/<name>."""
    page.mouse.move(0, 0)  # no hover labels or modebar in the picture
    height = max(HEIGHT, int(page.evaluate(CONTENT_HEIGHT)))
    page.set_viewport_size({"width": WIDTH, "height": height})
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)
    path = DOCS / name
    page.screenshot(path=str(path), type="png", full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is {size:,} bytes; keep it under {MAX_BYTES:,} (clip it)")
    return path


def default_view(page: Any, url: str) -> Path:
    page.goto(url)
    wait_for_chart(page, "embeddings", LAST_CAPTION)
    return capture(page, "screenshot.png", LAST_CAPTION)


def similarity_view(page: Any, url: str) -> Path:
    page.goto(url)
    wait_for_chart(page, "embeddings", LAST_CAPTION)
    page.get_by_role("tab", name="Similarity").click()
    marker = "Middle: similarity"  # the similarity tab's last caption
    wait_for_chart(page, "similarity", marker)
    return capture(page, "similarity.png", marker)


def lecture_view(page: Any, url: str) -> Path:
    page.goto(f"{url}/?lecture=1")
    page.get_by_role("heading", name="1. Text").wait_for(timeout=TIMEOUT)
    next_button = page.locator(".st-key-step_next button")
    next_button.click()
    page.get_by_role("heading", name="2. Token IDs").wait_for(timeout=TIMEOUT)
    for shown in (1, 2, 3):
        next_button.click()
        wait_for_chart(page, "embeddings", LAST_CAPTION, shown)
    page.get_by_role("heading", name="5. Input embeddings").wait_for(timeout=TIMEOUT)
    return capture(page, "lecture.png", LAST_CAPTION)


def rope_view(page: Any, url: str) -> Path:
    page.goto(f"{url}/?scheme=rope")
    wait_for_chart(page, "embeddings", LAST_CAPTION)
    return capture(page, "rope.png", LAST_CAPTION)


def main() -> None:
    server = start_server()
    url = server.url
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            try:
                context = browser.new_context(
                    viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1
                )
                page = context.new_page()
                for shoot in (default_view, similarity_view, lecture_view, rope_view):
                    path = shoot(page, url)
                    print(f"{path.relative_to(ROOT)}: {path.stat().st_size:,} bytes")
            finally:
                browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()

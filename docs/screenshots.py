"""Regenerate the README screenshots from the running app: ``python docs/screenshots.py``
(or only some: ``python docs/screenshots.py geometry distance``).

Starts ``streamlit run app.py`` on 127.0.0.1 (``devtools.server.start_server``), opens it in
Debian's headless Chromium (Playwright, no ``playwright install``), one screen size per picture
(CSS px, device scale factor 1), and writes into docs/:

* lecture.png: lecture mode at slide 7 on a 1920 x 1080 projector, the reveal of "are the
  rose rows still equal after adding positions?", the window as it is (no scrolling:
  everything is on one screen);
* lecture_reveal.png: lecture mode at slide 9, the similarity answer (the cells that read 1.0
  outlined) on a 1280 x 800 laptop, the window as it is;
* screenshot.png: the default view at 1280 x 800 (a laptop), the whole page;
* rope.png: the RoPE scheme at 1024 x 768 with the sidebar open, the whole page;
* phone.png: a 390 x 844 phone (an iPhone's User-Agent), panels stacked, the whole page;
* similarity.png: the Similarity tab at 1280 x 800, the whole page;
* geometry.png: the Geometry tab's chart at 1280 x 800, the sinusoidal table (T = 64, d = 64)
  beside the book's random init;
* distance.png: the Distance & length tab's chart at 1280 x 800 (T = 64, 16 positions past it);
* attention.png: the Attention tab at 1280 x 800, ALiBi, head 0 of 4, moved 8 positions;
* training.png: the Training tab at 1280 x 800, the small-init run at step 600 (its principal
  components in a plane, the default), the tab's controls, sentence and chart;
* length.png: the Length tab's chart at 1280 x 800, the six shipped length runs and RoPE with
  YaRN (s = 4), the lesson's extension.

A whole page is taken by making the window as tall as Streamlit's main section (it scrolls
inside that section). Waits are for page conditions, never for time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from devtools.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE_CONTEXT  # noqa: E402
from devtools.pages import TAB_PANEL, open_tab  # noqa: E402
from devtools.server import start_server  # noqa: E402

DOCS = ROOT / "docs"
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
# True once a Geometry or Distance chart is drawn with its 3D `scenes` (by name) ready.
SHAPE_DRAWN = """([selector, scenes]) => {
    const gd = document.querySelector(selector);
    return !!gd && !!gd._fullLayout && scenes.every(name => gd._fullLayout[name]
        && gd._fullLayout[name]._scene && gd._fullLayout[name]._scene.glplot);
}"""
LESSON = "largest difference"  # the lesson sentence above the Embeddings chart
CONTENT_HEIGHT = """() => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    return Math.ceil(main.scrollHeight);
}"""


def wait_for_chart(page: Any, key: str, marker: str, shown: int = 3) -> None:
    """Until chart ``key`` shows ``shown`` panels and the finished page shows ``marker``."""
    page.wait_for_function(DRAWN, arg=[f".st-key-{key} .js-plotly-plot", shown], timeout=TIMEOUT)
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)


def capture(page: Any, name: str, marker: str, *, whole: bool = True) -> Path:
    """Screenshot into docs/<name>: the window as it is, or (``whole``) grown to the height of
    the page's content."""
    page.mouse.move(0, 0)  # no hover labels or modebar in the picture
    size = page.viewport_size
    if whole:
        height = max(size["height"], int(page.evaluate(CONTENT_HEIGHT)))
        page.set_viewport_size({"width": size["width"], "height": height})
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)
    path = DOCS / name
    page.screenshot(path=str(path), type="png", full_page=whole)
    page.set_viewport_size(size)
    if path.stat().st_size > MAX_BYTES:
        raise SystemExit(f"{path} is {path.stat().st_size:,} bytes; keep it under {MAX_BYTES:,}")
    return path


def default_view(page: Any, url: str) -> Path:
    page.goto(url)
    wait_for_chart(page, "embeddings", LESSON)
    return capture(page, "screenshot.png", LESSON)


def similarity_view(page: Any, url: str) -> Path:
    page.goto(url)
    wait_for_chart(page, "embeddings", LESSON)
    open_tab(page, "Similarity")
    marker = "read 1.000 in the token panel"  # the similarity tab's sentence
    wait_for_chart(page, "similarity", marker)
    return capture(page, "similarity.png", marker)


def lecture_view(page: Any, url: str) -> Path:
    page.goto(f"{url}/?lecture=1&step=7")
    page.get_by_role("heading", name="7. Input embeddings").wait_for(timeout=TIMEOUT)
    wait_for_chart(page, "embeddings", "Answer:")
    return capture(page, "lecture.png", "Answer:", whole=False)


def lecture_reveal_view(page: Any, url: str) -> Path:
    page.goto(f"{url}/?lecture=1&step=9")
    page.get_by_role("heading", name="9. Similarity").wait_for(timeout=TIMEOUT)
    wait_for_chart(page, "similarity", "Answer:")
    return capture(page, "lecture_reveal.png", "Answer:", whole=False)


def rope_view(page: Any, url: str) -> Path:
    page.goto(f"{url}/?scheme=rope")
    wait_for_chart(page, "embeddings", LESSON)
    return capture(page, "rope.png", LESSON)


def phone_view(page: Any, url: str) -> Path:
    page.goto(url)
    wait_for_chart(page, "embeddings", LESSON)
    return capture(page, "phone.png", LESSON)


def shape_chart(
    page: Any,
    url: str,
    query: str,
    key: str,
    marker: str,
    *,
    scenes: list[str] | None = None,
    whole_tab: bool = False,
    also: tuple[str, ...] = (),
) -> Path:
    """Chart ``key`` (the Geometry tab's scenes by default), once the page shows ``marker``,
    into docs/<key>.png: the chart, or (``whole_tab``) the open tab with its controls and
    words, once the charts ``also`` (their keys) are drawn too."""
    page.goto(f"{url}/?{query}")
    if scenes is None:
        scenes = ["scene", "scene2"] if key == "geometry" else []
    selector = f".st-key-{key} .js-plotly-plot"
    page.wait_for_function(SHAPE_DRAWN, arg=[selector, scenes], timeout=TIMEOUT)
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)
    page.mouse.move(0, 0)  # no hover labels or modebar in the picture
    size = page.viewport_size  # as tall as the page, so the whole chart is drawn on screen
    page.set_viewport_size({"width": size["width"], "height": int(page.evaluate(CONTENT_HEIGHT))})
    page.wait_for_function(SHAPE_DRAWN, arg=[selector, scenes], timeout=TIMEOUT)
    for other in also:
        page.wait_for_function(SHAPE_DRAWN, arg=[f".st-key-{other} .js-plotly-plot", []],
                               timeout=TIMEOUT)  # fmt: skip
    page.wait_for_function(IDLE, arg=marker, timeout=TIMEOUT)
    path = DOCS / f"{key}.png"
    shot = page.locator(TAB_PANEL) if whole_tab else page.locator(f".st-key-{key}")
    shot.screenshot(path=str(path), type="png")
    page.set_viewport_size(size)
    if path.stat().st_size > MAX_BYTES:
        raise SystemExit(f"{path} is {path.stat().st_size:,} bytes; keep it under {MAX_BYTES:,}")
    return path


def geometry_view(page: Any, url: str) -> Path:
    query = "tab=geometry&scheme=sinusoidal&context_length=64"
    return shape_chart(page, url, query, "geometry", "trace a curve")


def distance_view(page: Any, url: str) -> Path:
    query = "tab=distance&context_length=64"
    return shape_chart(page, url, query, "distance", "come from the formulas")


def attention_view(page: Any, url: str) -> Path:
    query = "tab=attention&scheme=alibi&heads=4&head=0&shift=8"
    return shape_chart(page, url, query, "attention", "Moved 8 positions later", whole_tab=True)


def training_view(page: Any, url: str) -> Path:
    query = "tab=training&train_step=600"
    marker = "After 600 steps neighbouring"
    return shape_chart(
        page, url, query, "training", marker, scenes=[], whole_tab=True, also=("training_loss",)
    )


def length_view(page: Any, url: str) -> Path:
    return shape_chart(page, url, "tab=length", "length", "Trained on 64 tokens", scenes=[])


# Each picture: how it is taken, the window (CSS px), and whether the browser is a phone.
SHOTS: tuple[tuple[Callable[[Any, str], Path], int, int, bool], ...] = (
    (lecture_view, 1920, 1080, False),
    (lecture_reveal_view, 1280, 800, False),
    (default_view, 1280, 800, False),
    (rope_view, 1024, 768, False),
    (phone_view, 390, 844, True),
    (similarity_view, 1280, 800, False),
    (geometry_view, 1280, 800, False),
    (distance_view, 1280, 800, False),
    (attention_view, 1280, 800, False),
    (training_view, 1280, 800, False),
    (length_view, 1280, 800, False),
)


def main(names: list[str]) -> None:
    """Take every picture of :data:`SHOTS`, or those whose file names start with ``names``."""
    shots = [shot for shot in SHOTS if not names or shot[0].__name__.split("_")[0] in names]
    if not shots:
        raise SystemExit(f"no picture named {' or '.join(names)}")
    server = start_server()
    url = server.url
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            try:
                for shoot, width, height, phone in shots:
                    options: dict[str, Any] = {
                        "viewport": {"width": width, "height": height},
                        "device_scale_factor": 1,
                    }
                    if phone:
                        options |= PHONE_CONTEXT
                    context = browser.new_context(**options)
                    path = shoot(context.new_page(), url)
                    context.close()
                    size = path.stat().st_size
                    print(f"{path.relative_to(ROOT)} ({width}x{height}): {size:,} bytes")
            finally:
                browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])

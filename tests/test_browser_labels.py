"""Issue 42, item 1, in a real browser (Debian's Chromium, Playwright, `streamlit run` on
127.0.0.1): the position labels of texts with dense repeats never collide, and no outline
covers a label. Read from what plotly.js drew: the boxes of the tick labels
(``getBoundingClientRect``) and of the outlines' paths, widened by half their stroke.

* 1920 x 1080, T = 1,024, d = 768: the first 6,000 characters of The Verdict ("␣he" at 550,
  556, 562, 580, 587 and 983, 988, 994; "," 61 times), the Embeddings and Similarity tabs;
* 1920 x 1080: a code snippet and a bulleted list (their punctuation and indentation repeat
  every few tokens);
* lecture mode at 1280 x 720: The Verdict's first 312 tokens (the commas at 31, 38, 44, 49 and
  161, 169), slides 3 and 7;
* the offline HTML ``python -m posviz --out fig.html`` writes, of the rose and of those 312
  tokens (the outlines covered the labels' last letters there).

Waits are for page conditions, never for time; nothing is timed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from pages import open_tab
from test_browser_layout import COLLISIONS, IDLE, STEP_TITLES, wait_drawn

pytestmark = pytest.mark.browser

EMBEDDINGS = ".st-key-embeddings .js-plotly-plot"
SIMILARITY = ".st-key-similarity .js-plotly-plot"
ROOT = Path(__file__).resolve().parent.parent
VERDICT = (ROOT / "posviz/data/the-verdict.txt").read_text(encoding="utf-8")
OPENING = VERDICT[:6_000]  # 1,486 tokens: the first window of T = 1,024 is dense with repeats
PARAGRAPH = VERDICT[:1_222]  # 312 tokens, to "in his own trade"
CODE = """class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec
"""
BULLETS = """Section 2.8, step by step:
- tokenize the text with the GPT-2 tokenizer;
- cut the token IDs into windows of context_length tokens;
- look up the token embeddings of every token;
- look up the positional embeddings of every position;
- add the two: the input embeddings;
- check the shape: [batch_size, context_length, emb_dim];
- feed the input embeddings to the attention layers;
- repeat for the next batch of windows.
"""

# Every tick label of the chart and every outline, as boxes [left, top, right, bottom]; an
# outline's box widened by half its stroke (getBoundingClientRect leaves the stroke out).
DRAWING = """(selector) => {
    const gd = document.querySelector(selector);
    const box = (r, pad) => [r.left - pad, r.top - pad, r.right + pad, r.bottom + pad];
    return {
        labels: Array.from(gd.querySelectorAll('[class*="tick"] text'), (t) =>
            [t.textContent, box(t.getBoundingClientRect(), 0)]),
        outlines: Array.from(gd.querySelectorAll('.shapelayer path'), (p) => {
            const stroke = parseFloat(getComputedStyle(p).strokeWidth) || 0;
            return [getComputedStyle(p).stroke, box(p.getBoundingClientRect(), stroke / 2),
                    stroke];
        }),
    };
}"""


def _crossing(a: list[float], b: list[float]) -> bool:
    """Whether boxes ``a`` and ``b`` share more than half a pixel each way."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width > 0.5 and height > 0.5


def _edges(box: list[float], stroke: float) -> list[list[float]]:
    """The four strokes of a rectangle's outline (its inside is see-through)."""
    left, top, right, bottom = box
    return [
        [left, top, left + stroke, bottom],
        [right - stroke, top, right, bottom],
        [left, top, right, top + stroke],
        [left, bottom - stroke, right, bottom],
    ]


def assert_labels_apart_and_uncovered(page: Any, selector: str) -> int:
    """No two of the chart's texts intersect (COLLISIONS), no outline's line crosses a tick
    label; returns how many row labels are drawn."""
    count, found = page.evaluate(COLLISIONS, selector)
    assert count > 10 and found == [], found
    drawing = page.evaluate(DRAWING, selector)
    covered = [
        (text, colour)
        for text, label in drawing["labels"]
        for colour, outline, stroke in drawing["outlines"]
        if any(_crossing(label, edge) for edge in _edges(outline, stroke))
    ]
    assert covered == [], f"outlines over labels: {covered[:10]}"
    return sum(" · " in text for text, _ in drawing["labels"])


@pytest.mark.parametrize(
    ("text", "context_length"),
    [(OPENING, 1024), (CODE, 256), (BULLETS, 256)],
    ids=["verdict-opening", "code", "bullets"],
)
def test_labels_of_dense_repeats_never_collide_at_1920x1080(
    sized: Any, server_url: str, text: str, context_length: int
) -> None:
    page = sized(1920, 1080)
    query = {"text": text, "context_length": context_length, "emb_dim": 768}
    page.goto(f"{server_url}/?{urlencode(query)}")
    wait_drawn(page, 3, EMBEDDINGS)
    assert assert_labels_apart_and_uncovered(page, EMBEDDINGS) > 5
    if text is OPENING:
        open_tab(page, "Similarity")
        wait_drawn(page, 3, SIMILARITY)
        assert_labels_apart_and_uncovered(page, SIMILARITY)
    assert page.console_errors == []


@pytest.mark.parametrize("step", [3, 7])
def test_a_1280x720_slide_of_a_312_token_paragraph_keeps_its_labels_apart(
    sized: Any, server_url: str, step: int
) -> None:
    page = sized(1280, 720)
    query = {"text": PARAGRAPH, "context_length": 512, "lecture": 1, "step": step}
    page.goto(f"{server_url}/?{urlencode(query)}")
    page.get_by_role("heading", name=STEP_TITLES[step - 1]).wait_for(timeout=180_000)
    page.wait_for_function(IDLE, timeout=180_000)
    wait_drawn(page, 1 if step == 3 else 3, EMBEDDINGS)
    assert assert_labels_apart_and_uncovered(page, EMBEDDINGS) > 5
    assert page.console_errors == []


@pytest.mark.parametrize(
    ("text", "context_length"), [("A rose is a rose is a rose.", 16), (PARAGRAPH, 512)]
)
def test_the_offline_html_keeps_outlines_off_the_labels(
    sized: Any, tmp_path: Path, text: str, context_length: int
) -> None:
    """The figure ``python -m posviz --out fig.html`` writes (Canvas(): laid out for no measured
    size), opened from the file. A real subprocess: without Streamlit imported, Plotly's own
    template is the default, and it draws no tick marks (Streamlit's, this process's default
    since conftest imported Streamlit, does)."""
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8")
    path = tmp_path / "fig.html"
    command = [sys.executable, "-m", "posviz", "--text-file", str(source), "--out", str(path)]
    command += ["--context-length", str(context_length)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    page = sized(1280, 800)
    page.goto(path.as_uri())
    page.wait_for_function(
        "(s) => document.querySelectorAll(s + ' g.hm').length === 3", arg=".js-plotly-plot"
    )
    assert assert_labels_apart_and_uncovered(page, ".js-plotly-plot") > 5
    assert page.console_errors == []

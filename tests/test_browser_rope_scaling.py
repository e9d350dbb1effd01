"""RoPE's context extensions as a learner meets them (issue 40, item 4), in a real browser:
Debian's Chromium, driven by Playwright, against `streamlit run app.py` on 127.0.0.1 (see
conftest.py).

A link opens the Attention tab with YaRN, its sentence on the page; choosing Llama 3 in the
sidebar's menu redraws the head, rewrites the sentence and the link, and keeps s. The counts the
sentences quote come from tests/reference.py (Hugging Face transformers' functions), never from
posviz.
"""

from __future__ import annotations

from typing import Any

import pytest
import reference
from pages import LOAD_TIMEOUT, wait_for_text
from test_rope_scaling import _reference_counts

pytestmark = pytest.mark.browser

ATTENTION = ".st-key-attention .js-plotly-plot"
# The default text at T = 16, d = 64 in 4 heads: the head dimension h is 16, 8 pairs, L₀ = T.
HEAD_DIM, PAIRS, ORIGINAL = 16, 8, 16


def _counts(scaling: str) -> tuple[int, int]:
    """How many of the 8 pairs the reference keeps and divides by s = 8."""
    theirs = reference.hf_rope_config(
        scaling, head_dim=HEAD_DIM, base=10_000.0, factor=8.0, original_length=ORIGINAL
    )
    _, kept, divided, _ = _reference_counts(scaling, theirs, 8.0, ORIGINAL)  # type: ignore[arg-type]
    return kept, divided


def _query(page: Any, name: str) -> str | None:
    value: str | None = page.evaluate("(n) => new URLSearchParams(location.search).get(n)", name)
    return value


def test_a_yarn_link_then_llama3_from_the_menu(sized: Any, server_url: str) -> None:
    page = sized(1280, 800)
    page.goto(f"{server_url}/?tab=attention&scheme=rope&rope_scaling=yarn&rope_factor=8")
    page.locator(ATTENTION).first.wait_for(timeout=LOAD_TIMEOUT)
    kept, divided = _counts("yarn")
    assert 0 < kept < PAIRS and 0 < divided < PAIRS, (kept, divided)  # the lesson's case
    keeps = "the fastest" if kept == 1 else f"the {kept} fastest"
    wait_for_text(page, f"YaRN with s = 8 keeps {keeps} of {PAIRS} frequency pairs")
    wait_for_text(page, f"divides the {divided} slowest by 8")

    page.locator(".st-key-rope_scaling").click()  # the sidebar's menu: the scaling
    page.get_by_role("option", name="llama3").click()
    kept, divided = _counts("llama3")
    slowest = "the slowest" if divided == 1 else f"the {divided} slowest"
    wait_for_text(
        page, f"Llama 3 scaling with s = 8 divides {slowest} of {PAIRS} frequency pairs by 8"
    )
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('rope_scaling') === 'llama3'",
        timeout=LOAD_TIMEOUT,
    )
    assert _query(page, "rope_factor") == "8", "s is kept"
    assert _query(page, "tab") == "attention"
    assert page.locator(ATTENTION).count() >= 1, "the head is drawn"
    assert "YaRN with" not in page.locator("body").inner_text(), "the old sentence is gone"
    assert page.console_errors == []

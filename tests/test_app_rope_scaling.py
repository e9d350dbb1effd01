"""RoPE's context extensions in the page (AppTest): a link opens the Attention tab with YaRN and
its sentence; the sidebar's widgets take the scaling, s and L₀ within their ranges (L₀ empty:
the context length T); a bad link value is named and the rest of the link kept."""

from __future__ import annotations

import re
from collections.abc import Callable

from streamlit.testing.v1 import AppTest


def _text(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info)]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts)).replace("\u2060", "")


def test_a_yarn_link_shows_its_sentence_on_the_attention_tab(
    app_test: Callable[..., AppTest],
) -> None:
    at = app_test(
        {"tab": "attention", "scheme": "rope", "rope_scaling": "yarn", "rope_factor": "4"}
    )
    assert not at.exception, [e.value for e in at.exception]
    said = _text(at)
    # d = 64 in 4 heads: h = 16, 8 pairs, L₀ = T = 16
    assert "YaRN with s = 4 keeps the fastest of 8 frequency pairs" in said
    assert "cos and sin are multiplied by 1.139 (0.1 · ln 4 + 1)" in said
    assert at.selectbox(key="rope_scaling").value == "yarn"
    assert at.query_params["rope_scaling"] in ("yarn", ["yarn"])


def test_the_widgets_hold_the_options_within_their_ranges(
    app_test: Callable[..., AppTest],
) -> None:
    at = app_test({"scheme": "rope", "emb_dim": "8"})
    assert not at.exception
    scaling = at.selectbox(key="rope_scaling")
    assert list(scaling.options) == [
        "default", "linear", "ntk", "dynamic", "ntk_parts", "yarn", "llama3"
    ]  # fmt: skip
    factor = at.number_input(key="rope_factor")
    assert (factor.min, factor.max, factor.value) == (1.0, 128.0, 4.0)
    original = at.number_input(key="rope_original")
    assert (original.min, original.max, original.value) == (1, 131_072, None)  # empty: T
    assert "context_length" in original.placeholder
    original.set_value(8).run()
    assert not at.exception
    assert at.query_params["rope_original"] in ("8", ["8"])


def test_a_bad_link_value_is_named_and_the_rest_kept(app_test: Callable[..., AppTest]) -> None:
    at = app_test({"scheme": "rope", "rope_scaling": "ntk", "rope_factor": "500"})
    assert not at.exception
    assert "rope_factor must be a number from 1 to 128, got 500" in _text(at)
    assert at.selectbox(key="rope_scaling").value == "ntk"
    assert at.number_input(key="rope_factor").value == 4.0

"""The sidebar draws a widget for each option of the chosen scheme, from its spec (RoPE's
base): a link sets it, the chart follows it, the link keeps it, and it survives a visit to
another scheme."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from charts import sent_figures
from reference import book_window, decode_array
from streamlit.testing.v1 import AppTest

from posviz.tokenizer import encode

ROSE = "A rose is a rose is a rose."


def rotated_panel(at: AppTest) -> np.ndarray:
    data = sent_figures(at)["embeddings"]["data"]
    return decode_array(data[2]["z"])


def rope_window(theta_base: float) -> np.ndarray:
    ids = encode(ROSE)
    return book_window(
        "rope", seed=123, emb_dim=8, context_length=16, token_ids=ids, theta_base=theta_base
    )[2].numpy()


def test_the_rope_base_widget_follows_the_link_and_the_chart_follows_it(
    app_test: Callable[..., AppTest],
) -> None:
    at = app_test({"scheme": "rope", "rope_base": "500000", "emb_dim": "8"})
    assert not at.exception
    assert at.number_input(key="rope_base").value == 500_000.0
    assert np.array_equal(rotated_panel(at), rope_window(500_000.0))
    at.number_input(key="rope_base").set_value(100.0).run()
    assert not at.exception
    assert np.array_equal(rotated_panel(at), rope_window(100.0))
    assert at.query_params["rope_base"] in ("100", ["100"])
    at.selectbox(key="scheme").set_value("learned").run()
    assert not at.exception
    assert [w for w in at.number_input if w.key == "rope_base"] == []  # not RoPE: no widget
    at.selectbox(key="scheme").set_value("rope").run()
    assert at.number_input(key="rope_base").value == 100.0  # kept meanwhile

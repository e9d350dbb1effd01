"""The app's "Word order" tab (compare mode), through AppTest: widgets by key, what is shown
checked against the core and against the book's code run here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from charts import sent_figures
from reference import book_attention, book_layers
from reproduce import run_scripts_saved
from streamlit.testing.v1 import AppTest
from widgets import example_menu, ok

from posviz.tokenizer import encode

AppFactory = Callable[..., AppTest]
Decode = Callable[[object], np.ndarray]
PAIR = ("The dog bites the man", "The man bites the dog")


def compare_chart(at: AppTest) -> dict[str, object] | None:
    return sent_figures(at).get("compare")


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def open_pair(app_test: AppFactory, **query: str) -> AppTest:
    return ok(app_test({"text": PAIR[0], "compare": PAIR[1], "emb_dim": "16", **query}))


def book_context_mean_cosine(positions: bool, emb_dim: int = 16) -> float:
    """The book's way: seeded tables, SelfAttention_v2 after manual_seed(789), float64."""
    token_embedding_layer, pos_embedding_layer = book_layers(123, emb_dim, 16)
    module = book_attention(emb_dim, emb_dim).double()
    means = []
    with torch.no_grad():
        for text in PAIR:
            ids = torch.tensor(encode(text))
            x = token_embedding_layer(ids)
            if positions:
                x = x + pos_embedding_layer(torch.arange(len(ids)))
            means.append(module(x.double()).mean(dim=0))
    return float(torch.nn.functional.cosine_similarity(means[0], means[1], dim=0))


def test_a_link_with_a_second_text_opens_the_word_order_tab(app_test: AppFactory) -> None:
    at = open_pair(app_test)
    assert at.session_state["view"] == "Word order"
    assert at.text_area(key="compare_text").value == PAIR[1]
    values = metric_values(at)
    no_positions = next(v for k, v in values.items() if "no positions" in k)
    with_positions = next(v for k, v in values.items() if "with positions" in k)
    assert no_positions == "1.000000"
    assert with_positions == f"{book_context_mean_cosine(positions=True):.6f}"
    assert float(with_positions) < 0.9999995
    figure = compare_chart(at)
    assert figure is not None
    assert [trace["type"] for trace in figure["data"]] == ["heatmap"] * 8  # type: ignore[index]
    markdown = " ".join(m.value for m in at.markdown)
    assert "bit for bit" in markdown and "two different sentences" in markdown


def test_the_causal_toggle_breaks_the_symmetry_and_says_what_it_means(
    app_test: AppFactory,
) -> None:
    at = open_pair(app_test)
    ok(at.toggle(key="causal").set_value(True).run())
    no_positions = next(v for k, v in metric_values(at).items() if "no positions" in k)
    assert float(no_positions) < 0.999
    markdown = " ".join(m.value for m in at.markdown)
    assert "mask alone breaks the symmetry" in markdown
    assert "Haviv et al. (2022)" in markdown and "does **not** mean" in markdown
    assert at.query_params["causal"] == "1"
    assert at.query_params["compare"] == PAIR[1]


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        pytest.param("", "The second text is empty", id="empty"),
        pytest.param(PAIR[0], "same order", id="identical"),
        pytest.param("The dog bites", "(5 tokens) and *The dog bites* (3 tokens)", id="counts"),
        pytest.param("dog bites The man the", "loses its space", id="leading-space"),
    ],
)
def test_texts_that_are_not_a_reordering_are_explained(
    app_test: AppFactory, second: str, expected: str
) -> None:
    at = open_pair(app_test)
    ok(at.text_area(key="compare_text").set_value(second).run())
    assert any(expected in info.value for info in at.info), [i.value for i in at.info]
    # no chart and no numbers under the sentence: identical texts too (issue 42), whose
    # chart said "differ" and "same rows, reordered"
    assert compare_chart(at) is None and not at.metric


def test_the_example_button_fills_both_texts(app_test: AppFactory) -> None:
    at = ok(app_test())
    at.session_state["view"] = "Word order"
    ok(at.run())
    assert any("The second text is empty" in info.value for info in at.info)
    ok(at.button(key="example_pair").click().run())
    assert at.text_area(key="text").value == PAIR[0]
    assert at.text_area(key="compare_text").value == PAIR[1]
    assert compare_chart(at) is not None


def test_the_word_order_example_opens_the_tab(app_test: AppFactory) -> None:
    at = ok(app_test())
    ok(example_menu(at).set_value("Word order: The dog bites the man").run())
    assert at.session_state["view"] == "Word order"
    assert compare_chart(at) is not None


@pytest.mark.parametrize("scheme", ["sinusoidal", "none", "rope"])
def test_every_scheme_shows_the_comparison(app_test: AppFactory, scheme: str) -> None:
    at = open_pair(app_test, scheme=scheme)
    values = metric_values(at)
    assert next(v for k, v in values.items() if "no positions" in k) == "1.000000"
    with_positions = next(v for k, v in values.items() if "with positions" in k)
    assert (with_positions == "1.000000") is (scheme == "none")


@pytest.mark.slow
def test_code_tab_script_prints_the_cosines_on_screen(app_test: AppFactory, tmp_path: Path) -> None:
    at = open_pair(app_test, causal="1", scheme="rope")
    values = metric_values(at)
    at.session_state["view"] = "Show the code"
    ok(at.run())
    _, stdout = run_scripts_saved([str(at.code[0].value)], tmp_path)
    no_positions = next(v for k, v in values.items() if "no positions" in k)
    with_positions = next(v for k, v in values.items() if "with positions" in k)
    assert f"cosine of the mean context vectors: no positions {no_positions}\n" in stdout
    assert f"cosine of the mean context vectors: with positions {with_positions}\n" in stdout

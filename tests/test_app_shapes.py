"""The Geometry and Distance & length tabs through AppTest: a ``tab=`` link opens them, and
what the charts carry is numpy's (tests/reference.py), for the book's tables and for GPT-2's
(the loopback stand-in's made-up ones). AppTest skips the browser: tests/test_browser_shapes.py
draws them in Chromium."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from charts import sent_figures
from reference import (
    book_tables,
    centred_pca,
    cosines_by_distance,
    decode_array,
    embedding_error_past_the_end,
    same_up_to_sign,
    sinusoidal,
)
from streamlit.testing.v1 import AppTest

from devtools.fake_hub import Blob, FakeHub
from posviz.lesson.lecture import SLIDES

AppFactory = Callable[..., AppTest]


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def chart(at: AppTest, key: str) -> dict[str, object]:
    """The one chart on the page, which must be ``key``'s."""
    figures = sent_figures(at)
    assert list(figures) == [key]
    return figures[key]


def text_of(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.warning)]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts)).replace("\u2060", "")


def scatter_points(spec: dict[str, object]) -> dict[str, np.ndarray]:
    """Each 3D scatter's [T, 3] points, by trace name."""
    traces = [t for t in spec["data"] if t["type"] == "scatter3d"]  # type: ignore[attr-defined]
    return {
        t["name"]: np.stack([decode_array(t[axis]) for axis in "xyz"], axis=1).astype(np.float64)
        for t in traces
    }


def test_a_geometry_link_opens_the_geometry_tab(app_test: AppFactory) -> None:
    at = app_test({"tab": "geometry", "context_length": "24", "emb_dim": "12", "seed": "5"})
    assert_ok(at)
    assert at.session_state["view"] == "Geometry"
    points = scatter_points(chart(at, "geometry"))
    want, _ = centred_pca(book_tables(5, 12, 24)[1].numpy())
    assert same_up_to_sign(points["learned, random init (seed 5)"], want, atol=1e-5)
    want, _ = centred_pca(sinusoidal(24, 12).numpy())
    assert same_up_to_sign(points["sinusoidal (formula)"], want, atol=1e-5)
    text = text_of(at)
    assert "90 % of the variance of its 24 centred rows lies in" in text
    assert "a **curve**" in text  # the sinusoidal table, from its step ratio
    assert at.query_params["tab"] == "geometry"  # the link keeps the tab


def test_a_distance_link_opens_the_distance_tab(app_test: AppFactory) -> None:
    at = app_test({"tab": "distance", "context_length": "20", "emb_dim": "8"})
    assert_ok(at)
    assert at.session_state["view"] == "Distance & length"
    assert at.slider(key="beyond").value == 5  # a quarter of T
    spec = chart(at, "distance")
    lines = {t["name"]: t for t in spec["data"] if t.get("hovertemplate")}  # type: ignore[attr-defined]
    assert list(lines)[:2] == ["learned, random init (seed 123)", "sinusoidal (formula)"]
    assert list(lines)[2].startswith("RoPE (")
    mean, _, _ = cosines_by_distance(book_tables(123, 8, 20)[1].numpy())
    np.testing.assert_allclose(
        decode_array(lines["learned, random init (seed 123)"]["y"]), mean, atol=2e-6
    )
    mean, _, _ = cosines_by_distance(sinusoidal(25, 8).numpy())
    np.testing.assert_allclose(decode_array(lines["sinusoidal (formula)"]["y"]), mean, atol=2e-6)
    text = text_of(at)
    assert f"raises `{embedding_error_past_the_end(20, 8)}`" in text  # torch's words, run
    assert "positions 20–24 come from the formulas" in text
    at.slider(key="beyond").set_value(0).run()
    assert_ok(at)
    assert chart(at, "distance")["layout"].get("shapes", []) == []  # type: ignore[union-attr]
    assert "come from the formulas" not in text_of(at)


def test_the_slider_stays_within_t_when_t_goes_down(app_test: AppFactory) -> None:
    at = app_test({"tab": "distance", "context_length": "64", "emb_dim": "8"})
    at.slider(key="beyond").set_value(60).run()
    at.slider(key="context_length").set_value(16).run()
    assert_ok(at)
    assert at.slider(key="beyond").value == 16


def test_an_unknown_tab_is_named_and_the_embeddings_open(app_test: AppFactory) -> None:
    at = app_test({"tab": "helix"})
    assert_ok(at)
    assert "tab: 'helix' is not one of embeddings, similarity, geometry" in text_of(at)
    assert chart(at, "embeddings")


def test_gpt2_geometry_and_distance_on_the_served_tables(
    app_test: AppFactory, gpt2_hub: FakeHub, gpt2_blob: Blob
) -> None:
    wpe = gpt2_blob.arrays["wpe.weight"]
    at = app_test({"weights": "gpt2", "tab": "geometry", "context_length": "32", "seed": "9"})
    assert_ok(at)
    points = scatter_points(chart(at, "geometry"))
    want, _ = centred_pca(wpe[:32])
    assert same_up_to_sign(points["learned, GPT-2 124M trained"], want, atol=1e-4)
    want, _ = centred_pca(book_tables(9, 768, 32)[1].numpy())
    assert same_up_to_sign(points["learned, random init (seed 9)"], want, atol=1e-4)
    assert "Largest |cosine| between a row of **learned, GPT-2 124M trained**" in text_of(at)

    at = app_test({"weights": "gpt2", "tab": "distance", "context_length": "1020"})
    assert_ok(at)
    lines = {t["name"]: t for t in chart(at, "distance")["data"] if t.get("hovertemplate")}  # type: ignore[attr-defined]
    gpt2 = decode_array(lines["learned, GPT-2 124M trained"]["y"])
    assert len(gpt2) == 1024  # T + 255 past it, but GPT-2 has 1,024 positions
    mean, _, _ = cosines_by_distance(wpe)
    np.testing.assert_allclose(gpt2, mean, atol=2e-6)
    assert "`wpe` has 1,024 rows" in text_of(at)


# --- lecture mode: the two views as predict-then-reveal steps --------------------------------


def slide_number(view: str, revealed: bool) -> int:
    return next(s.number for s in SLIDES if s.step.view == view and s.revealed is revealed)


def test_lecture_asks_then_reveals_the_geometry(app_test: AppFactory) -> None:
    asked = app_test({"lecture": "1", "step": str(slide_number("geometry", False))})
    assert_ok(asked)
    assert at_chart_keys(asked) == []  # the question alone: no picture to read it from
    assert "Your guess?** Will these positions look like a cloud or a curve?" in text_of(asked)
    shown = app_test({"lecture": "1", "step": str(slide_number("geometry", True)), "emb_dim": "16"})
    assert_ok(shown)
    points = scatter_points(chart(shown, "geometry"))
    want, _ = centred_pca(book_tables(123, 16, 16)[1].numpy())
    assert same_up_to_sign(points["learned, random init (seed 123)"], want, atol=1e-5)
    assert "**Answer:** **learned, random init (seed 123)**: a cloud" in text_of(shown)


def test_lecture_asks_then_reveals_the_distances(app_test: AppFactory) -> None:
    asked = app_test({"lecture": "1", "step": str(slide_number("distance", False))})
    assert_ok(asked)
    assert at_chart_keys(asked) == []
    shown = app_test({"lecture": "1", "step": str(slide_number("distance", True)), "emb_dim": "8"})
    assert_ok(shown)
    lines = {t["name"]: t for t in chart(shown, "distance")["data"] if t.get("hovertemplate")}  # type: ignore[attr-defined]
    mean, _, _ = cosines_by_distance(sinusoidal(20, 8).numpy())  # T = 16 and a quarter more
    np.testing.assert_allclose(decode_array(lines["sinusoidal (formula)"]["y"]), mean, atol=2e-6)
    assert "the learned table raises `IndexError: index out of range in self`" in text_of(shown)


def test_lecture_names_gpt2_in_its_question(app_test: AppFactory, gpt2_hub: FakeHub) -> None:
    at = app_test({"lecture": "1", "step": str(slide_number("geometry", False)), "weights": "gpt2"})
    assert_ok(at)
    assert "Will GPT-2's positions look like a cloud or a curve?" in text_of(at)


def at_chart_keys(at: AppTest) -> list[str]:
    return list(sent_figures(at))

"""The Geometry and Distance figures, tested as data: every trace named with its scheme, the
3D points and the curves equal to numpy's (tests/reference.py), hover texts, the shaded
distances past the context length, and the payload at T = 1024, d = 768 (bytes, exact)."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import pytest
from reference import centred_pca, cosines_by_distance, same_up_to_sign, sinusoidal
from shape_views import distance_of, geometry_of

from posviz.config import Settings
from posviz.embeddings import SeededEmbeddings
from posviz.export import figure_json
from posviz.plots import Canvas
from posviz.plots.distance import distance_figure
from posviz.plots.geometry import geometry_chart, geometry_figure

Decode = Callable[[object], np.ndarray]
BUDGET = 1_500_000  # bytes of figure JSON a view may send (issue 16)


def spec(figure: go.Figure) -> dict[str, object]:
    """The figure as the browser receives it."""
    return dict(json.loads(figure_json(figure)))


@pytest.mark.parametrize("stacked", [False, True])
@pytest.mark.parametrize("lecture", [False, True])
def test_geometry_scatters_are_numpys_projection(
    decode_array: Decode, stacked: bool, lecture: bool
) -> None:
    view = geometry_of(Settings(context_length=48, emb_dim=16))
    data = spec(geometry_figure(view, lecture=lecture, stacked=stacked))["data"]
    scatters = [t for t in data if t["type"] == "scatter3d"]  # type: ignore[index]
    assert [t["name"] for t in scatters] == [
        "learned, random init (seed 123)",
        "sinusoidal (formula)",
    ]
    assert [t["scene"] for t in scatters] == ["scene", "scene2"]
    for trace, shape in zip(scatters, (view.main, view.contrast), strict=True):
        points = np.stack([decode_array(trace[axis]) for axis in "xyz"], axis=1)
        assert points.dtype == np.float32 and points.shape == (48, 3)
        want, _ = centred_pca(shape.table.table.numpy())
        assert same_up_to_sign(points.astype(np.float64), want, atol=1e-5)
        positions = decode_array(trace["customdata"])
        assert positions.tolist() == list(range(48))  # in position order, for the hover
        assert decode_array(trace["marker"]["color"]).tolist() == list(range(48))
        assert trace["mode"] == "lines+markers"  # a line joins consecutive positions
        assert "position %{customdata}" in trace["hovertemplate"]
        assert "PC 3: %{z:.3f}" in trace["hovertemplate"]


def test_geometry_singular_values_and_lengths(decode_array: Decode) -> None:
    view = geometry_of(Settings(context_length=40, emb_dim=24, scheme="sinusoidal"))
    figure = spec(geometry_figure(view))
    lines = [t for t in figure["data"] if t["type"] == "scatter"]  # type: ignore[index]
    named = {t["name"] for t in lines if t.get("showlegend", True)}
    assert named == {"sinusoidal (formula)", "learned, random init (seed 123)"}
    values = [t for t in lines if t.get("xaxis") == "x" and t.get("mode") != "markers"]
    _, want = centred_pca(sinusoidal(40, 24).numpy())
    np.testing.assert_allclose(decode_array(values[0]["y"]), want, atol=1e-5, rtol=1e-5)
    lengths = [t for t in lines if t.get("xaxis") == "x2"]
    np.testing.assert_allclose(
        decode_array(lengths[0]["y"]), np.linalg.norm(sinusoidal(40, 24).numpy(), axis=1), rtol=1e-6
    )
    marks = [t for t in lines if t.get("mode") == "markers"]
    assert [m["x"] for m in marks] == [[view.main.directions_90], [view.contrast.directions_90]]
    assert "90 % of the variance" in marks[0]["hovertemplate"]
    titles = " ".join(a["text"] for a in figure["layout"]["annotations"])  # type: ignore[index]
    assert "singular values" in titles and "length |row p|" in titles


def test_a_table_of_zeros_says_there_is_nothing_to_project() -> None:
    figure = spec(
        geometry_figure(geometry_of(Settings(context_length=8, emb_dim=4, scheme="none")))
    )
    scatters = [t for t in figure["data"] if t["type"] == "scatter3d"]  # type: ignore[index]
    assert [t["name"] for t in scatters] == ["learned, random init (seed 123)"]  # the contrast only
    texts = [a["text"] for a in figure["layout"]["annotations"]]  # type: ignore[index]
    assert "all zeros:<br>nothing to project" in texts


def test_without_the_spectrum_only_the_scenes() -> None:
    figure = spec(
        geometry_figure(geometry_of(Settings(context_length=8, emb_dim=4)), spectrum=False)
    )
    assert {t["type"] for t in figure["data"]} == {"scatter3d"}  # type: ignore[index]
    assert figure["layout"]["showlegend"] is False  # type: ignore[index]


def _eyes(canvas: Canvas, *, lecture: bool) -> list[np.ndarray]:
    """Both scenes' camera eyes (and every axis of theirs asks for at most 5 ticks)."""
    view = geometry_of(Settings(context_length=16, emb_dim=64))
    drawn = geometry_chart(view, canvas=canvas, lecture=lecture, spectrum=not lecture)
    layout = json.loads(json.dumps(drawn.spec.layout))  # plain dicts, to index freely
    scenes = [layout[name] for name in ("scene", "scene2")]
    assert all(scene[axis]["nticks"] <= 5 for scene in scenes for axis in ("xaxis", "yaxis"))
    return [np.array(list(scene["camera"]["eye"].values())) for scene in scenes]


def test_the_camera_comes_as_near_as_the_measured_scene_allows() -> None:
    """Unmeasured, the cameras stand far enough for any scene (2.8, 2.8, 1.8); a projector's
    slide or tab, whose scenes are wider than tall, brings them nearer (a larger box to read),
    a 1024-px window's narrower scenes not; the direction stays."""
    far = _eyes(Canvas(), lecture=False)
    np.testing.assert_allclose(far[0], [2.8, 2.8, 1.8])
    # the charts' canvases as Chromium measures them (width; height from the chart's top)
    slide = _eyes(
        Canvas(width=1760, height=921, window_width=1920, window_height=1080), lecture=True
    )
    tab = _eyes(
        Canvas(width=1460, height=733, window_width=1920, window_height=1080), lecture=False
    )
    small = _eyes(
        Canvas(width=564, height=295, window_width=1024, window_height=768), lecture=False
    )
    distance = float(np.linalg.norm(far[0]))
    for eyes in (slide, tab, small):
        np.testing.assert_allclose(eyes[0], eyes[1])
        np.testing.assert_allclose(eyes[0] / np.linalg.norm(eyes[0]), far[0] / distance, atol=1e-3)
    assert np.linalg.norm(slide[0]) < 0.9 * distance and np.linalg.norm(tab[0]) < 0.7 * distance
    assert np.linalg.norm(tab[0]) < np.linalg.norm(small[0]) <= distance


@pytest.mark.parametrize("stacked", [False, True])
def test_distance_lines_and_bands_are_numpys(decode_array: Decode, stacked: bool) -> None:
    view = distance_of(Settings(context_length=24, emb_dim=8), beyond=6)
    figure = spec(distance_figure(view, stacked=stacked))
    data = figure["data"]
    lines = [t for t in data if t.get("hovertemplate")]  # type: ignore[union-attr]
    assert [t["name"] for t in lines] == [c.label for c in view.curves]
    assert lines[1]["name"] == "sinusoidal (formula)" and lines[2]["name"].startswith("RoPE")
    mean, low, high = cosines_by_distance(sinusoidal(30, 8).numpy())
    sin_traces = [t for t in data if t["legendgroup"] == "sinusoidal (formula)"]  # type: ignore[index]
    edges = {t["name"]: t for t in sin_traces}
    np.testing.assert_allclose(
        decode_array(edges["sinusoidal (formula): smallest over i"]["y"]), low, atol=2e-6
    )
    np.testing.assert_allclose(
        decode_array(edges["sinusoidal (formula): largest over i"]["y"]), high, atol=2e-6
    )
    np.testing.assert_allclose(decode_array(edges["sinusoidal (formula)"]["y"]), mean, atol=2e-6)
    assert edges["sinusoidal (formula): largest over i"]["fill"] == "tonexty"
    assert "over i: %{customdata[0]:.4f} to %{customdata[1]:.4f}" in lines[0]["hovertemplate"]
    assert len(decode_array(lines[0]["y"])) == 24  # the learned table stops at T - 1
    (shade,) = figure["layout"]["shapes"]  # type: ignore[index]
    assert (shade["x0"], shade["x1"]) == (23.5, 29.5)
    texts = [a["text"] for a in figure["layout"]["annotations"]]  # type: ignore[index]
    assert texts == ["distance k", "past T = 24"]  # the x axis's title, and the shading's


def test_no_shading_without_positions_past_the_context_length() -> None:
    figure = spec(distance_figure(distance_of(Settings(context_length=8, emb_dim=4), beyond=0)))
    layout = figure["layout"]
    assert layout.get("shapes", []) == []  # type: ignore[attr-defined]
    assert [a["text"] for a in layout["annotations"]] == ["distance k"]  # type: ignore[index]


@pytest.mark.slow
def test_both_views_send_under_the_budget_at_gpt2_size() -> None:
    """T = 1024, d = 768, with the distance view's default 256 positions past T: the JSON the
    page sends for each figure (bytes, exact)."""
    tables = SeededEmbeddings.create(seed=123, emb_dim=768)
    settings = Settings(text="The cat sat on the mat. " * 260, context_length=1024, emb_dim=768)
    geometry = geometry_of(settings, tables=lambda _: tables)
    distance = distance_of(settings, tables=lambda _: tables)
    sizes = [
        len(figure_json(geometry_figure(geometry))),
        len(figure_json(geometry_figure(geometry, stacked=True, lecture=True))),
        len(figure_json(distance_figure(distance))),
    ]
    assert max(sizes) <= BUDGET, sizes

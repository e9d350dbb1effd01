"""posviz_app.chart: the chart component's payload, the sizes it reports, and the Streamlit and
Plotly interfaces it rests on (these tests fail when an upgrade changes one of them).

The payload is read back with tests/charts.py's decoder, written from the format, and compared
with what plotly.py itself holds for the figure (``to_plotly_json``).
"""

from __future__ import annotations

import inspect
import json
import re
import struct
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline
import pytest
import streamlit
from charts import decode_chart, report_size, sent_charts, sent_figures
from streamlit.proto.BidiComponent_pb2 import BidiComponent
from streamlit.testing.v1 import AppTest

from posviz.config import Settings
from posviz.distance import build_distance
from posviz.geometry import build_geometry
from posviz.pipeline import WindowEmbeddings
from posviz.plots import UNKNOWN, Canvas
from posviz.plots._figure import FigureSpec
from posviz.plots.distance import distance_spec
from posviz.plots.geometry import geometry_spec
from posviz.plots.heatmaps import embeddings_figure, embeddings_spec, similarity_spec
from posviz.plots.word_order import compare_spec
from posviz.view import View, build_view, build_word_order
from posviz_app.chart import (
    CARTESIAN,
    CHART_CONFIG,
    COMPONENT_NAME,
    FULL,
    GL3D,
    LOADER_NAME,
    PLOTLY_JS_VERSION,
    VENDORED_DIR,
    canvas_from_report,
    chart_payload,
    decode_payload,
)

AppFactory = Callable[..., AppTest]
VERSION = PLOTLY_JS_VERSION
STATIC = Path(streamlit.__file__).parent / "static" / "static" / "js"


def _payload(figure: go.Figure, canvas: Canvas = UNKNOWN, fill: bool = False) -> bytes:
    return chart_payload(figure, canvas=canvas, fill=fill)


def _default_figure() -> go.Figure:
    view = build_view(Settings())
    assert view.embeddings is not None
    return embeddings_figure(view.embeddings)


def test_every_array_travels_as_raw_bytes_and_comes_back_bit_for_bit() -> None:
    figure = _default_figure()
    payload = _payload(figure)
    header = decode_chart(payload)
    assert header["canvas"] is None and header["fill"] is False
    assert header["config"] == CHART_CONFIG
    sent = header["figure"]
    for trace, original in zip(sent["data"], figure.data, strict=True):
        original_json = original.to_plotly_json()
        for key in ("z", "customdata"):
            want = np.asarray(original_json[key])
            assert trace[key].dtype == want.dtype == np.float32
            assert np.array_equal(trace[key].view(np.uint32), want.view(np.uint32))
        assert np.array_equal(trace["x"], original_json["x"])
        assert trace["y"] == list(original_json["y"]) and trace["type"] == "heatmap"
    assert sent["layout"] == json.loads(pio.to_json(figure.layout, validate=False))
    # The three panels' hover values are the same [n, k, 4] array: one buffer, not three.
    assert len(header["buffers"]) == 3 + 1 + 1  # z x3, customdata, x
    assert b'"bdata"' not in payload, "no base64 in the payload"


def test_the_payload_is_smaller_than_the_figure_json_streamlit_sent() -> None:
    figure = _default_figure()
    assert len(_payload(figure)) < 0.6 * len(pio.to_json(figure, validate=False))


def test_integers_are_narrowed_as_plotly_py_does_and_other_values_pass_as_json() -> None:
    figure = go.Figure(
        go.Scatter3d(
            x=np.arange(5, dtype=np.int64),  # -> int8
            y=np.array([0, 70_000, 3, 4, 5], dtype=np.int64),  # -> int32
            z=np.array([0.5, np.nan, 2.0, 3.0, 4.0], dtype=np.float64),
            text=["a", "<b>b</b>", "c", "d", "e"],
        ),
        layout={
            "shapes": [{"type": "rect", "x0": 0, "x1": 1, "y0": 0, "y1": 1}],
            "annotations": [{"text": "marker", "x": 1, "y": 2, "showarrow": False}],
            "xaxis": {"range": np.array([0.0, 4.0])},  # plotly.py keeps ranges as lists
        },
    )
    header = decode_chart(_payload(figure))
    trace = header["figure"]["data"][0]
    assert trace["x"].dtype == np.int8 and trace["x"].tolist() == [0, 1, 2, 3, 4]
    assert trace["y"].dtype == np.int32 and trace["y"].tolist() == [0, 70_000, 3, 4, 5]
    assert trace["z"].dtype == np.float64 and np.isnan(trace["z"][1])
    assert trace["text"] == ["a", "<b>b</b>", "c", "d", "e"] and trace["type"] == "scatter3d"
    layout = header["figure"]["layout"]
    assert layout["xaxis"]["range"] == [0.0, 4.0]
    assert layout["shapes"][0]["type"] == "rect" and layout["annotations"][0]["text"] == "marker"


def test_posvizs_own_decoder_reads_what_the_test_decoder_reads() -> None:
    canvas = Canvas(width=800, height=500, window_width=1280, window_height=800)
    payload = _payload(_default_figure(), canvas=canvas, fill=True)
    ours, theirs = decode_payload(payload), decode_chart(payload)
    assert ours.canvas == canvas and theirs["canvas"] == canvas.__dict__
    assert ours.fill is theirs["fill"] is True
    for a, b in zip(ours.figure["data"], theirs["figure"]["data"], strict=True):
        assert np.array_equal(a["z"], b["z"]) and np.array_equal(a["customdata"], b["customdata"])
    with pytest.raises(ValueError, match="not a posviz chart payload"):
        decode_payload(b"{}")


@pytest.mark.parametrize(
    "report",
    [
        pytest.param("wide", id="text"),
        pytest.param({"width": 800}, id="missing"),
        pytest.param({"width": 0, "height": 1, "window_width": 1, "window_height": 1}, id="zero"),
        pytest.param(
            {"width": True, "height": 1, "window_width": 1, "window_height": 1}, id="bool"
        ),
        pytest.param(
            {"width": float("inf"), "height": 1, "window_width": 1, "window_height": 1}, id="inf"
        ),
        pytest.param(
            {"width": "800", "height": 1, "window_width": 1, "window_height": 1}, id="string"
        ),
    ],
)
def test_a_size_no_browser_reports_is_ignored(report: object) -> None:
    assert canvas_from_report(report) is None


def test_the_first_run_uses_a_size_not_known_yet(app_test: AppFactory) -> None:
    at = app_test()
    (chart,) = sent_charts(at).values()
    assert chart["canvas"] is None and chart["fill"] is False
    assert chart["plotly"] == {
        "name": "cartesian",
        "path": f"component/posviz_app._streamlit.plotly_js/plotly-cartesian.min.js?v={VERSION}",
        "version": VERSION,
        "covers": ["cartesian", "full"],
    }


def test_a_reported_width_lays_the_next_figure_out_for_it(app_test: AppFactory) -> None:
    at = app_test()
    wide = sent_figures(at)["embeddings"]["layout"]
    assert wide["xaxis2"]["domain"][0] > 0, "side by side before the browser says anything"
    report_size(at, "embeddings", width=358, height=600, window_width=390, window_height=844)
    assert not at.exception
    chart = sent_charts(at)["embeddings"]
    assert chart["canvas"] == {"width": 358, "height": 600, "window_width": 390,
                               "window_height": 844}  # fmt: skip
    layout = chart["figure"]["layout"]
    assert [layout[f"xaxis{n}"]["domain"] for n in ("", "2", "3")] == [[0.0, 1.0]] * 3
    # Another tab's chart takes the width the page has until it reports its own.
    at.session_state["view"] = "Similarity"
    at.run()
    similarity = sent_charts(at)["similarity"]
    assert similarity["canvas"]["width"] == 358
    assert similarity["figure"]["layout"]["xaxis2"]["domain"] == [0.0, 1.0]


def test_lecture_mode_fills_the_room_the_browser_reported(app_test: AppFactory) -> None:
    at = app_test({"lecture": "1", "step": "5"})
    assert sent_charts(at)["embeddings"]["fill"] is True
    report_size(at, "embeddings", width=1120, height=570, window_width=1280, window_height=720)
    chart = sent_charts(at)["embeddings"]
    assert chart["fill"] is True and chart["canvas"]["height"] == 570
    layout = chart["figure"]["layout"]
    assert 500 < layout["height"] < 570, "as tall as the room, less the page's padding"
    assert len(layout["yaxis"]["tickvals"]) == 9, "every row of the rose sentence labelled"


# --- what the component rests on: a Streamlit or Plotly upgrade that changes it fails here ---


def test_streamlit_components_v2_takes_what_posviz_passes() -> None:
    register = inspect.signature(streamlit.components.v2.component)
    assert {"name", "html", "css", "js", "isolate_styles"} <= set(register.parameters)
    mount = inspect.signature(streamlit.components.v2.component("posviz_probe", js="x"))
    assert {"key", "data", "default", "width", "height"} <= set(mount.parameters)
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in mount.parameters.values())
    fields = BidiComponent.DESCRIPTOR.fields_by_name
    assert {"bytes", "component_name", "js_content", "isolate_styles", "id"} <= set(fields)
    declare = inspect.signature(streamlit.components.v1.declare_component)
    assert {"name", "path"} <= set(declare.parameters)


def test_streamlits_frontend_gives_the_component_bytes_its_element_and_set_state() -> None:
    """The frontend bundle of the installed Streamlit (minified; names of its API survive):
    bytes data handed over as it is, the element the module draws in, setStateValue."""
    (bundle,) = STATIC.glob("BidiComponent.*.js")
    code = bundle.read_text(encoding="utf-8")
    for needed in ("case`bytes`", "parentElement:", "setStateValue:", "d.default({"):
        assert needed in code, (
            f"Streamlit {streamlit.__version__}'s components v2 changed: {needed}"
        )


def _registered_traces(code: str) -> set[str]:
    """The trace types a plotly.js build registers (each trace module's ``moduleType``)."""
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', code))


def test_every_build_is_the_plotly_js_of_the_plotly_package() -> None:
    """The vendored partial bundles are plotly.js at the version the ``plotly`` package ships
    (a new plotly without new bundles fails here), with plotly.js's licence beside them."""
    assert plotly.__version__ == "7.1.0", "a new plotly: check chart.js's typed arrays in Chromium"
    version = plotly.offline.get_plotlyjs_version()  # what the plotly package ships
    assert version == PLOTLY_JS_VERSION
    for build, title in [(CARTESIAN, "cartesian - minified"), (GL3D, "gl3d - minified"),
                         (FULL, "")]:  # fmt: skip
        code = (Path(build.folder) / build.file).read_text(encoding="utf-8")
        name = f"plotly.js ({title}) v{version}" if title else f"plotly.js v{version}"
        assert name in code[:200], (build.file, code[:200])
        # plotly.js reads typed arrays whose bdata is an ArrayBuffer (chart.js sends them so).
        assert "decodeTypedArraySpec" in code and "constructor===ArrayBuffer" in code
        registered = _registered_traces(code)
        assert build.traces is None or build.traces == registered, (build.name, registered)
        assert {"heatmap", "scatter3d"} <= registered or build is not FULL
    licence = (Path(VENDORED_DIR) / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Plotly" in licence
    readme = (Path(VENDORED_DIR) / "README.md").read_text(encoding="utf-8")
    assert f"plotly.js-cartesian-dist-min@{version}" in readme
    assert f"plotly.js-gl3d-dist-min@{version}" in readme


def test_the_component_is_registered_under_the_name_the_tests_read() -> None:
    import charts

    assert charts.COMPONENT == COMPONENT_NAME


@cache
def _views() -> tuple[WindowEmbeddings, View, View]:
    """The rose window under RoPE, its view, and a two-text Word-order view (built once)."""
    rose = build_view(Settings(scheme="rope"))
    pair = build_view(Settings(text="The dog bites the man", compare_text="The man bites the dog"))
    assert rose.embeddings is not None
    return rose.embeddings, rose, pair


_WIDE = Canvas(width=900, height=600, window_width=1280, window_height=800)
_PHONE = Canvas(width=358, height=700, window_width=390, window_height=844)
SPECS: dict[str, Callable[[], FigureSpec]] = {  # every figure builder, as the page calls it
    "embeddings": lambda: embeddings_spec(_views()[0], canvas=_WIDE),
    "embeddings, phone": lambda: embeddings_spec(_views()[0], canvas=_PHONE),
    "embeddings, lecture": lambda: embeddings_spec(
        _views()[0], lecture=True, panels=2, canvas=_WIDE
    ),
    "similarity": lambda: similarity_spec(_views()[0], canvas=_WIDE),
    "word order": lambda: compare_spec(build_word_order(_views()[2]), canvas=_PHONE),
    "geometry": lambda: geometry_spec(build_geometry(_views()[1])),
    "distance": lambda: distance_spec(build_distance(_views()[1], beyond=4), stacked=True),
}


def _buffers(payload: bytes) -> bytes:
    """The payload's buffers: what follows the header, padded to 8 bytes (the format)."""
    (length,) = struct.unpack_from("<I", payload, 4)
    return payload[-(-(8 + length) // 8) * 8 :]


@pytest.mark.parametrize("name", SPECS)
def test_a_spec_sends_what_its_figure_would(name: str) -> None:
    """The page draws the builders' specs (no plotly.py objects); the bytes are those its
    ``go.Figure`` gives, template included, so the public figure and the chart are one."""
    spec = SPECS[name]()
    assert isinstance(spec, FigureSpec), name
    canvas = Canvas(width=900, height=600, window_width=1280, window_height=800)
    direct = chart_payload(spec, canvas=canvas, fill=False)
    through_plotly = chart_payload(spec.figure(), canvas=canvas, fill=False)
    # The same figure (plotly.py sorts the keys; the arrays are compared as numbers).
    canonical = [
        json.dumps(decode_payload(payload).figure, sort_keys=True, default=np.ndarray.tolist)
        for payload in (direct, through_plotly)
    ]
    assert canonical[0] == canonical[1]
    # The same arrays, as raw bytes in both (perhaps in another order; the JSON headers differ
    # by a separator or two).
    assert len(_buffers(direct)) == len(_buffers(through_plotly))
    assert decode_payload(direct).figure["layout"]["template"]["layout"]  # the default look


BUILD_OF = {  # the build each figure builder's figure is drawn with: 3-D only for Geometry
    "embeddings": "cartesian",
    "embeddings, phone": "cartesian",
    "embeddings, lecture": "cartesian",
    "similarity": "cartesian",
    "word order": "cartesian",
    "geometry": "gl3d",
    "distance": "cartesian",
}


@pytest.mark.parametrize("name", SPECS)
def test_each_figure_names_the_smallest_build_that_draws_it(name: str) -> None:
    spec = SPECS[name]()
    header = decode_chart(chart_payload(spec, canvas=UNKNOWN, fill=False))
    types = {trace.get("type", "scatter") for trace in header["figure"]["data"]}
    plotly_js = header["plotly"]
    assert plotly_js["name"] == BUILD_OF[name]
    drawing = [b for b in (CARTESIAN, GL3D, FULL) if b.traces is None or types <= b.traces]
    assert plotly_js["covers"] == [b.name for b in drawing] and drawing[-1] is FULL
    assert plotly_js["path"].split("/")[-1] == f"{drawing[0].file}?v={VERSION}"


def test_a_trace_no_partial_bundle_draws_takes_the_full_plotly_js() -> None:
    figure = go.Figure([go.Heatmap(z=[[1]]), go.Scatter3d(x=[1], y=[1], z=[1])])
    header = decode_chart(chart_payload(figure, canvas=UNKNOWN, fill=False))
    assert header["plotly"]["name"] == "full" and header["plotly"]["covers"] == ["full"]
    assert (
        header["plotly"]["path"]
        == f"component/posviz_app._streamlit.plotly/plotly.min.js?v={VERSION}"
    )


def test_the_early_loader_asks_for_the_cartesian_build_first(app_test: AppFactory) -> None:
    at = app_test()
    loaders = [e.proto for e in at.get("bidi_component") if e.proto.component_name == LOADER_NAME]
    assert len(loaders) == 1 and loaders[0].WhichOneof("data") == "json"
    assert json.loads(loaders[0].json) == {"preload": [CARTESIAN.source()]}
    first = at.get("bidi_component")[0].proto
    assert first.component_name == LOADER_NAME, "the loader comes before any chart"

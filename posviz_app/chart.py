"""posviz's charts on the page: one Plotly graph per chart, kept across reruns, laid out for the
room it has.

:func:`show_chart` is the one entry point::

    show_chart(lambda canvas: embeddings_figure(window, canvas=canvas), key="embeddings")

It takes a figure, or a function that builds one for a :class:`~posviz.plots.Canvas`
(the chart's width, the px from its top to the window's bottom, the window's size, as the
browser last reported them for ``key``; ``Canvas()`` until then), and mounts posviz's chart
component: a component of ``st.components`` version 2 with inline JavaScript (``chart.js``
next to this file, no build step), styles not isolated (Plotly puts its CSS in the page's
head). In the browser the component

* keeps one Plotly graph per ``key`` across reruns and changes it with ``Plotly.react`` (the
  key keeps Streamlit from remounting the element; nothing is drawn hidden), every figure
  with the same template object (plotly.js redraws everything for a new one);
* honours a figure's ``datarevision`` (the same revision: the same arrays): it gets plain
  arrays, which plotly.js's react then keeps, and one that differs from the figure drawn in
  its shapes alone is redrawn by ``Plotly.relayout`` of the shapes (the Training tab's loss
  at another step);
* reports its size back (``setStateValue("size", ...)``, debounced while the window is being
  resized), which reruns the page, so the next figure is laid out for it; its first figure
  waits (at most 1.5 s) for one laid out for the size it reported, so it does not jump;
* with ``fill``, draws the figure as tall as the window leaves below it (as
  ``st.plotly_chart(height="stretch")`` in a window-high container did), whatever height it
  was built for: posviz's own figures are built for that height already;
* maps Streamlit's theme colours onto what the figure leaves unset (the font stays Plotly's:
  posviz's layout is measured for it).

plotly.js comes in three builds (:data:`BUILDS`), each loaded by the page once, when a figure
first needs it: the cartesian partial bundle (heatmaps, lines: every view but Geometry), the
gl3d one (Geometry's 3-D scatter), both vendored in ``posviz_app/plotly_js/`` at the version
of plotly.js the ``plotly`` package ships, and, for a trace type neither draws, the full
plotly.min.js of the ``plotly`` package. Each payload names the smallest build that draws its
figure and every build that can; a chart keeps the build that drew it while that one can draw
the new figure, and is otherwise purged by it and drawn anew by the one named (``chart.js``).
:func:`start_plotly_early`, called at the top of every run, starts the page's first build
loading before the main area renders (in the session's first run; later ones hold its place).

The builds are served by Streamlit's file route for custom components
(``/component/<name>/<file>``, gzip-compressed), which
:func:`posviz_app._streamlit.serve_folder` registers the two folders with once per session.
This works for ``streamlit run app.py`` in a checkout (Community Cloud), for an installed
posviz (``posviz app``) and behind a path prefix alike (``server.enableStaticServing`` stays
off: it would serve the folder beside the main script, which is another one in each case).
The page fetches each build once, with a URL that carries plotly.js's version; its HTTP cache
then serves later page loads (see ``chart.js``).

The payload (``data`` of the component, bytes)::

    b"PVZ1"                       magic
    uint32, little-endian         n: bytes of the JSON header
    n bytes                       the header, UTF-8 JSON (below)
    zero padding                  to a multiple of 8: the buffers start here
    buffers                       each padded to a multiple of 8; header["buffers"] gives
                                  each one's offset (from the buffers' start) and size

    header = {"template": {...},     # optional: the layout's template, kept out of it
              "figure": {"data": [...], "layout": {...}},  # arrays as {dtype, shape, bref}
              "config": {...},       # Plotly's config (the PNG button's settings)
              "canvas": {...} | None,  # the size the figure was laid out for
              "fill": bool,          # the figure's height follows the window's
              "fitted": bool,        # laid out for the room to the window's bottom (fill too)
              "fill_room": {"gap": px, "min": px},  # ... down to the window's bottom less gap
              "plotly": {"name": "cartesian",  # the build to draw with (BUILDS)
                         "path": "component/.../plotly-cartesian.min.js?v=4.1.1",
                         "version": "4.1.1",
                         "covers": ["cartesian", "full"]},  # every build that can draw it
              "buffers": [[offset, nbytes], ...]}  # offsets from the buffers' start

Every numpy array plotly.py would send as a typed array (its ``to_typed_array_spec`` rules:
int64 narrowed, the 8 dtypes plotly.js reads) travels as raw bytes instead of base64 JSON;
identical arrays (the three panels' hover values) travel once; the default template is encoded
once per process and sent beside the layout, which gets it back in the browser.
:func:`decode_payload` reads it all back.

Streamlit APIs used here, all public in 1.67: ``component`` of ``st.components`` version 2
(``js``, ``isolate_styles``, ``data`` as bytes, ``key``, ``on_size_change``), the
component's ``setStateValue`` and ``parentElement`` in JavaScript, and ``st.session_state``
(through :mod:`posviz_app.state`, which keeps each chart's reported room);
the file route is :mod:`posviz_app._streamlit`'s. tests/test_chart.py fails when one of them
changes shape.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache, partial
from importlib import resources
from typing import Any, Final, Generic, TypeAlias, TypeVar

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io.json
import plotly.offline
import streamlit as st

from posviz.cache import BytesCache
from posviz.plots import CHART_BOTTOM_GAP, MIN_FILL_HEIGHT, UNKNOWN, Canvas, CanvasError
from posviz.plots._figure import Drawn, FigureSpec, default_template
from posviz_app import _streamlit, state

Drawable: TypeAlias = go.Figure | FigureSpec
"""What a chart draws: a figure, or a figure builder's spec (``embeddings_spec``...), which
skips building plotly.py's objects (the same JSON)."""

FigureSource: TypeAlias = "Drawable | Callable[[Canvas], Drawable]"
"""A figure (or its spec), or a function that builds one for the chart's canvas."""

CHART_CONFIG: Final = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "filename": "posviz", "scale": 2},
    "responsive": False,  # the component follows its size itself
}
MAGIC: Final = b"PVZ1"
CHART_JS: Final = resources.files("posviz_app").joinpath("chart.js").read_text(encoding="utf-8")
PLOTLY_JS_VERSION: Final = plotly.offline.get_plotlyjs_version()
PLOTLY_DIR: Final = str(resources.files("plotly").joinpath("package_data"))
VENDORED_DIR: Final = str(resources.files("posviz_app").joinpath("plotly_js"))
MIN_REPORTED_WIDTH: Final = 200  # px: a 320-px phone's page is wider
# plotly.py's typed arrays (_plotly_utils.utils): the dtypes plotly.js reads, keys it skips.
_DTYPES: Final = {
    "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2",
    "int32": "i4", "uint32": "u4", "float32": "f4", "float64": "f8",
}  # fmt: skip
_DTYPE_CODES: Final = {np.dtype(name): code for name, code in _DTYPES.items()}  # no str(dtype)
_SKIPPED_KEYS: Final = frozenset({"geojson", "layer", "layers", "range"})
# Values a figure holds that hold no array: kept as they are (their exact types: a subclass,
# a numpy scalar, goes the long way).
_LEAVES: Final = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True)
class PlotlyBuild:
    """A build of plotly.js the page can load: its name (the page loads each once), the
    folder it is served from and the name it is served as
    (:func:`~posviz_app._streamlit.serve_folder`), its file and the trace types it draws
    (``None``: every one)."""

    name: str
    served_as: str
    folder: str
    file: str
    traces: frozenset[str] | None

    @property
    def path(self) -> str:
        """Its URL path, relative to the page; with plotly.js's version, for the HTTP cache.

        >>> CARTESIAN.path
        'component/posviz_app._streamlit.plotly_js/plotly-cartesian.min.js?v=4.1.1'
        """
        return f"{_streamlit.folder_route(self.served_as)}/{self.file}?v={PLOTLY_JS_VERSION}"

    def draws(self, traces: set[str]) -> bool:
        """Whether it draws every trace type in ``traces``.

        >>> CARTESIAN.draws({"heatmap", "scatter"}), GL3D.draws({"heatmap", "scatter3d"})
        (True, False)
        """
        return self.traces is None or traces <= self.traces

    def source(self) -> dict[str, str]:
        """What the page needs to load it."""
        return {"name": self.name, "path": self.path, "version": PLOTLY_JS_VERSION}


# The trace types of each partial bundle: the names its code registers (tests/test_chart.py
# reads them from the files).
CARTESIAN: Final = PlotlyBuild(
    "cartesian", "plotly_js", VENDORED_DIR, "plotly-cartesian.min.js",
    frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d",
               "histogram2dcontour", "image", "pie", "scatter", "scatterternary", "violin"}),
)  # fmt: skip
GL3D: Final = PlotlyBuild(
    "gl3d", "plotly_js", VENDORED_DIR, "plotly-gl3d.min.js",
    frozenset({"cone", "isosurface", "mesh3d", "scatter", "scatter3d", "streamtube",
               "surface", "volume"}),
)  # fmt: skip
FULL: Final = PlotlyBuild("full", "plotly", PLOTLY_DIR, "plotly.min.js", None)
BUILDS: Final = (CARTESIAN, GL3D, FULL)  # smallest first (1.5, 1.8 and 4.8 MB)


def builds_for(data: list[dict[str, Any]]) -> list[PlotlyBuild]:
    """The builds that draw every trace of ``data`` (a figure's traces), smallest first.

    >>> [b.name for b in builds_for([{"type": "heatmap"}, {"y": [1, 2]}])]
    ['cartesian', 'full']
    >>> [b.name for b in builds_for([{"type": "scatter3d"}, {"type": "sankey"}])]
    ['full']
    """
    traces = {str(trace.get("type") or "scatter") for trace in data}  # Plotly's default
    return [build for build in BUILDS if build.draws(traces)]


COMPONENT_NAME: Final = "posviz_chart"
_component = st.components.v2.component(COMPONENT_NAME, js=CHART_JS, isolate_styles=False)
# start_plotly_early's: the same module (so the same loads), under a name charts never have.
LOADER_NAME: Final = state.PLOTLY_LOADER
_loader = st.components.v2.component(LOADER_NAME, js=CHART_JS, isolate_styles=False)
# Style only (st.html puts it in no room of the page): the loader draws nothing.
_HIDE_LOADER: Final = f"<style>.st-key-{LOADER_NAME} {{ display: none; }}</style>"


def start_plotly_early(*, three_d: bool = False) -> None:
    """Start loading plotly.js now: call it at the very top of every run, before anything
    else is drawn.

    The chart component asks for plotly.js when it first gets a figure, which comes as the
    main area renders; in the session's first run this mounts the component's code first,
    hidden, and has it fetch and evaluate the cartesian build (``three_d``: the gl3d one, for a
    page that opens on Geometry) while the rest of the page renders and the view is computed.
    Later runs keep its place with an empty element (the page's elements below keep theirs):
    the page has its plotly.js by then, and the loader cost each run 0.5 ms of the server's CPU
    and 17 kB (its inline code; issue 42).
    """
    if state.plotly_served():  # a later run of the session
        st.empty()
        return
    _serve_plotly()
    st.html(_HIDE_LOADER)
    build = GL3D if three_d else CARTESIAN
    # A tuple, not a list: Streamlit checks each list in a component's dict for a dataframe,
    # and that check imports pandas and pyarrow (70 MB in the server process); it skips tuples.
    _loader(key=LOADER_NAME, data={"preload": (build.source(),)})


def show_chart(
    figure: FigureSource,
    *,
    key: str,
    fill: bool = False,
    place: str = "",
    canvas: Canvas | None = None,
    fitted: bool = False,
) -> None:
    """Draw ``figure`` in the chart ``key`` (one Plotly graph for the key's whole life).

    ``figure``: a figure laid out for ``canvas`` (the chart's :func:`chart_canvas`, which the
    caller asked for to build it, and to word what the figure decided), or a function from that
    canvas to one. ``fill``: the figure's height follows the window's (lecture mode), so a
    change of the window's height lays it out again. ``place``: where on the page the chart
    stands, when that changes the room it has (lecture mode's slides put more or less text
    above it): the room is remembered for each place. ``fitted``: the figure was laid out for
    the room down to the window's bottom though it does not fill it (the Embeddings tab keeps
    the example's rows on the first screen), so a window that changes only its height lays it
    out again too.
    """
    if canvas is None:
        canvas = chart_canvas(key, place=place)
    built = figure(canvas) if callable(figure) else figure
    show_payload(
        chart_payload(built, canvas=canvas, fill=fill, fitted=fitted), key=key, place=place
    )


def show_payload(payload: bytes, *, key: str, place: str = "") -> None:
    """Draw a :func:`chart_payload` in the chart ``key`` (:func:`show_chart` for a payload
    built already: :func:`shared_chart`'s)."""
    _serve_plotly()
    _component(key=key, data=payload, on_size_change=partial(_remember_canvas, key, place))


D = TypeVar("D")
SHARED_BYTES: Final = 4 * 2**20  # about 80 payloads of the default view (50 kB each)


@dataclass(frozen=True, eq=False)
class SharedChart(Generic[D]):
    """A figure's decisions and its payload, without the figure (a big view's arrays)."""

    decisions: D
    payload: bytes

    @property
    def nbytes(self) -> int:
        """The payload's bytes (the decisions are a few hundred)."""
        return len(self.payload) + 512


@st.cache_resource(show_spinner=False)
def _shared() -> BytesCache[tuple[object, ...], SharedChart[Any]]:
    return BytesCache(max_bytes=SHARED_BYTES, size=lambda chart: chart.nbytes)


def shared_chart(
    key: tuple[object, ...],
    draw: Callable[[Canvas], Drawn[D]],
    *,
    canvas: Canvas,
    fill: bool | Callable[[D], bool] = False,
    fitted: bool = False,
) -> SharedChart[D]:
    """``draw(canvas)``'s decisions and payload, built once per server process for every
    session that shows the same figure in the same room: ``key`` names everything the figure
    is a function of besides the canvas (the view's settings; a class follows the lecturer's
    values, so most of it asks for the same few). ``fill`` as :func:`show_chart`'s, or read
    from the figure's decisions. :func:`show_payload` draws it."""

    def build() -> SharedChart[D]:
        drawn = draw(canvas)
        fills = fill(drawn.decisions) if callable(fill) else fill
        payload = chart_payload(drawn.spec, canvas=canvas, fill=fills, fitted=fitted)
        return SharedChart(drawn.decisions, payload)

    return _shared().get((*key, canvas, fitted, None if callable(fill) else fill), build)


def chart_canvas(key: str, *, place: str = "") -> Canvas:
    """The room chart ``key`` had at ``place`` when the browser last said; else its room
    anywhere, else any chart's (they share the page's width); ``Canvas()`` before any said."""
    return state.kept_canvas(key, place) or UNKNOWN


def canvas_from_report(value: object) -> Canvas | None:
    """The :class:`Canvas` in a size the browser reported, ``None`` if it is not one (the
    websocket carries whatever a client sends).

    >>> canvas_from_report({"width": 800, "height": 500, "window_width": 1280,
    ...                     "window_height": 800})
    Canvas(width=800, height=500, window_width=1280, window_height=800)
    >>> canvas_from_report({"width": -1}), canvas_from_report("wide")
    (None, None)
    >>> canvas_from_report({"width": 1, "height": 900, "window_width": 1280,
    ...                     "window_height": 800}) is None  # a chart in a closing tab
    True
    """
    if not isinstance(value, dict):
        return None
    try:
        numbers = [value[name] for name in ("width", "height", "window_width", "window_height")]
        if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
            return None
        canvas = Canvas(*(int(n) for n in numbers))
    except (KeyError, OverflowError, ValueError, CanvasError):
        return None
    # Narrower than any phone's page: a chart being hidden or squeezed, not room to lay out for.
    return canvas if (canvas.width or 0) >= MIN_REPORTED_WIDTH else None


def _remember_canvas(key: str, place: str) -> None:
    """``on_size_change``: keep the reported size (the component's own state goes when the
    chart is not drawn in a run, for example in a closed tab)."""
    canvas = canvas_from_report(state.chart_size(key))
    if canvas is not None:
        state.keep_canvas(key, place, canvas)


def _serve_plotly() -> None:
    """Register the builds' folders with Streamlit's file route, in each session's first run
    (the registry is the runtime's; registering in every run cost about 1 ms of each)."""
    if not state.plotly_served():
        for served_as, folder in sorted({(b.served_as, b.folder) for b in BUILDS}):
            _streamlit.serve_folder(served_as, folder)
        state.mark_plotly_served()


@cache
def _template_json(name: str) -> bytes:
    """Template ``name`` (:func:`~posviz.plots._figure.default_template`) as the header's JSON."""
    return str(plotly.io.json.to_json_plotly(plotly.io.templates[name], engine="json")).encode()


def chart_payload(figure: Drawable, *, canvas: Canvas, fill: bool, fitted: bool = False) -> bytes:
    """The bytes the component gets for ``figure`` (the format is in the module docstring).

    >>> payload = chart_payload(go.Figure(go.Heatmap(z=np.eye(2, dtype=np.float32))),
    ...                         canvas=Canvas(), fill=False)
    >>> payload[:4], decode_payload(payload).figure["data"][0]["z"].tolist()
    (b'PVZ1', [[1.0, 0.0], [0.0, 1.0]])
    >>> decode_payload(payload).plotly_build
    'cartesian'
    """
    buffers = _Buffers()
    plain = figure.plotly_json() if isinstance(figure, FigureSpec) else plotly_json(figure)
    layout = plain["layout"]
    shared = layout.get("template") is default_template()  # a spec's, by identity
    if shared:  # sent as the header's "template", encoded once per process
        layout = {name: value for name, value in layout.items() if name != "template"}
    figure_json = {  # split copies: the spec's dicts stay as they are
        "data": [buffers.split(trace) for trace in plain["data"]],
        "layout": buffers.split(layout),
    }
    table, blob = buffers.written()
    builds = builds_for(plain["data"])
    header = {
        "figure": figure_json,
        "config": CHART_CONFIG,
        "canvas": asdict(canvas) if canvas.measured else None,
        "fill": fill,
        "fitted": fitted or fill,
        "fill_room": {"gap": CHART_BOTTOM_GAP, "min": MIN_FILL_HEIGHT},
        "plotly": builds[0].source() | {"covers": [build.name for build in builds]},
        "buffers": table,
    }
    return _packed(header, blob, template=shared)


def _packed(header: dict[str, Any], blob: bytes, *, template: bool) -> bytes:
    """Magic, the JSON header's length, the header, padding to 8 bytes, the buffers; with
    ``template``, the header's first key is the default template, spliced in as encoded."""
    encoded = str(plotly.io.json.to_json_plotly(header, engine="json")).encode()
    if template:
        spliced = _template_json(str(plotly.io.templates.default))
        encoded = b'{"template": ' + spliced + b", " + encoded[1:]
    padding = _aligned(8 + len(encoded)) - (8 + len(encoded))
    return MAGIC + struct.pack("<I", len(encoded)) + encoded + b"\0" * padding + blob


def plotly_json(figure: go.Figure) -> dict[str, Any]:
    """``figure``'s traces and layout as dicts, numpy arrays kept as arrays (a figure's own
    ``to_plotly_json`` would write them as base64 strings)."""
    return {
        "data": [trace.to_plotly_json() for trace in figure.data],
        "layout": figure.layout.to_plotly_json(),
    }


def _aligned(offset: int) -> int:
    """``offset`` rounded up to a multiple of 8."""
    return -(-offset // 8) * 8


class _Buffers:
    """The arrays of a figure, each once, in the order first met."""

    def __init__(self) -> None:
        self._index: dict[tuple[str, tuple[int, ...], bytes], int] = {}
        self._arrays: list[np.ndarray] = []

    def split(self, value: Any, key: str = "") -> Any:
        """``value`` with every typed array replaced by ``{dtype, shape, bref}``.

        A figure is mostly plain values (a Length figure: about 700 of them, in 124 dicts), so
        they are kept without a call each: this walk was a twentieth of a rerun's CPU."""
        if isinstance(value, dict):
            split = self.split
            return {k: v if type(v) in _LEAVES else split(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            if all(type(v) in _LEAVES for v in value):  # ticks, labels: as is
                return list(value)
            return [self.split(v) for v in value]
        if isinstance(value, np.ndarray) and key not in _SKIPPED_KEYS:
            return self._spec(value)
        return value

    def _spec(self, array: np.ndarray) -> Any:
        array = _narrowed(array)
        dtype = _DTYPE_CODES.get(array.dtype)
        if dtype is None or array.size == 0 or array.ndim > 3:
            return array  # as plotly.py does: JSON (to_json_plotly writes it as a list)
        array = np.ascontiguousarray(array)
        digest = hashlib.blake2b(array.data, digest_size=16).digest()
        index = self._index.setdefault((dtype, array.shape, digest), len(self._arrays))
        if index == len(self._arrays):
            self._arrays.append(array)
        spec: dict[str, object] = {"dtype": dtype, "bref": index}
        if array.ndim > 1:
            spec["shape"] = ", ".join(str(n) for n in array.shape)
        return spec

    def written(self) -> tuple[list[list[int]], bytes]:
        """``[[offset, nbytes], ...]`` of the arrays, from the start of the buffers, and their
        bytes, each padded to a multiple of 8."""
        table, parts, offset = [], [], 0
        for array in self._arrays:
            data = array.tobytes()
            table.append([offset, len(data)])
            parts.append(data + b"\0" * (_aligned(len(data)) - len(data)))
            offset += _aligned(len(data))
        return table, b"".join(parts)


def _narrowed(array: np.ndarray) -> np.ndarray:
    """int64 / uint64 in the smallest integer type plotly.js reads (plotly.py's rule)."""
    if array.dtype.kind not in "iu" or array.dtype.itemsize != 8 or array.size == 0:
        return array
    low, high = int(array.min()), int(array.max())
    signed = array.dtype.kind == "i"
    for name in ("int8", "int16", "int32") if signed else ("uint8", "uint16", "uint32"):
        info = np.iinfo(name)
        if info.min <= low and high <= info.max:
            return array.astype(name)
    return array


@dataclass(frozen=True)
class ChartPayload:
    """What a payload holds, decoded: the figure (arrays as numpy arrays) and the rest."""

    figure: dict[str, Any]
    config: dict[str, Any]
    canvas: Canvas
    fill: bool
    plotly_build: str  # the build the page draws it with (a name in BUILDS)
    plotly_path: str


def decode_payload(payload: bytes) -> ChartPayload:
    """Read a :func:`chart_payload` back (the load test's client checks charts with it).

    Raises ``ValueError`` if ``payload`` is not one.
    """
    if payload[:4] != MAGIC or len(payload) < 8:
        raise ValueError(f"not a posviz chart payload (starts {payload[:8]!r}, expected {MAGIC!r})")
    (length,) = struct.unpack_from("<I", payload, 4)
    header = json.loads(payload[8 : 8 + length])
    start = _aligned(8 + length)

    def restore(value: Any) -> Any:
        if isinstance(value, dict):
            if "bref" in value:
                offset, size = header["buffers"][value["bref"]]
                dtype = np.dtype(value["dtype"])
                flat = np.frombuffer(payload, dtype, size // dtype.itemsize, start + offset)
                shape = value.get("shape")
                return flat if shape is None else flat.reshape([int(s) for s in shape.split(",")])
            return {k: restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [restore(v) for v in value]
        return value

    canvas = Canvas(**header["canvas"]) if header["canvas"] else UNKNOWN
    figure = restore(header["figure"])
    if "template" in header:
        figure["layout"]["template"] = header["template"]
    return ChartPayload(
        figure=figure,
        config=header["config"],
        canvas=canvas,
        fill=bool(header["fill"]),
        plotly_build=header["plotly"]["name"],
        plotly_path=header["plotly"]["path"],
    )

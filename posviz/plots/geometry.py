"""The Geometry figure: two positional tables as 3D point clouds (their centred rows on the
first three principal components) and, under them, the singular values and the length of
each row.

Top row, side by side (one under the other on a phone): one 3D scatter per table in position
order, a line joining consecutive positions, each point coloured by its position (one colour
bar for both); hover shows the position and its three coordinates. Bottom row: the singular
values of both centred tables (a diamond marks how many directions hold 90 % of the
variance) and ``|row p|`` per position, one colour per table, named in the legend.

Payload: ``3·T`` float32 coordinates and ``T`` positions per table, ``min(T, d) + T`` floats
below: about 0.1 MB of JSON at T = 1024, d = 768.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from posviz.geometry import GeometryView, TableGeometry
from posviz.plots._figure import Drawn, FigureSpec, as_figure
from posviz.plots._layout import (
    NARROWEST_CHART,
    POSITION_COLORSCALE,
    STACKED_WIDTH,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    TypeSizes,
    fill_height,
    narrow,
    panel_title,
    table_colour,
    title_height,
    trace,
    type_sizes,
    wrap_title,
)
from posviz.plots._notes import lecture_line, panel_note
from posviz.token_text import for_plotly

SCENE_HEIGHT: Final = 400  # px of each 3D scene side by side (on a phone: as tall as wide)
LECTURE_SCENE_HEIGHT: Final = 540
PANEL_HEIGHT: Final = 220  # px of the singular-value and length panels
MARKERS_UP_TO: Final = 64  # a dot per value up to this many values, a plain line above
# Further than plotly's (1.25, 1.25, 1.25) side by side: plotly fits a scene to its height, so
# a scene narrower than tall (half a 1024-px window's chart) still shows its whole box.
CAMERA_EYE: Final = {"x": 2.8, "y": 2.8, "z": 1.8}
# The camera's distance, from CAMERA_EYE's direction, for a measured scene wide enough (plotly's
# own eye is 2.17 away); a narrower one is seen from further, as plotly fits the box to the
# scene's height, never further than CAMERA_EYE.
NEAREST_EYE: Final = 2.6
WIDE: Final = 1.2  # ... from width / height below this (the box seen at an angle is wide)
STACKED_EYE: Final = {"x": 1.7, "y": 1.7, "z": 1.15}  # a phone's square scene
TICK_ROOM: Final = 46  # px left of an x-y panel for its tick labels (4 digits at 15 px)
TITLE_WIDTH: Final = 250  # px a title may take side by side: half a 1024-px window's chart
LECTURE_TITLE_WIDTH: Final = 500  # lecture mode has no sidebar: half a 1024-px window
_BAR_BAND: Final = 84  # px under the last scene on a phone: the horizontal colour bar


@dataclass(frozen=True)
class _Cell:
    """One panel: a 3D scene or an x-y plot, its title and note (posviz's words, escaped)."""

    scene: bool
    title: str
    note: str


@dataclass(frozen=True)
class _Row:
    """One row of panels: px for their titles, their plots and what lies below them."""

    cells: tuple[int, ...]  # indices into the figure's cells
    title: float
    plot: float
    below: float


def _scatter(shape: TableGeometry, scene: str, *, marker_size: int) -> Trace:
    """One table's positions in 3D, in order, coloured by position."""
    positions = np.arange(shape.table.rows, dtype=np.int32)
    points = shape.points.numpy().astype(np.float32)  # [T, 3]
    label = for_plotly(shape.table.label)
    return trace(
        "scatter3d",
        x=points[:, 0],
        y=points[:, 1],
        z=points[:, 2],
        mode="lines+markers",
        scene=scene,
        name=label,
        showlegend=False,
        customdata=positions,
        marker={"size": marker_size, "color": positions, "coloraxis": "coloraxis"},
        line={"color": positions, "coloraxis": "coloraxis", "width": 2},
        hovertemplate="position %{customdata}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<br>"
        f"PC 3: %{{z:.3f}}<extra>{label}</extra>",
    )


def _lines(shape: TableGeometry, axes: Sequence[tuple[str, str]]) -> list[Trace]:
    """The table's singular values (and the 90 % mark) on ``axes[0]``, its row lengths on
    ``axes[1]``, in the table's colour."""
    colour = _colour(shape)
    label = for_plotly(shape.table.label)
    values = shape.singular_values.numpy().astype(np.float32)  # [K]
    reached = np.cumsum(shape.variance_shares.numpy()).astype(np.float32)  # [K]
    norms = shape.row_norms.numpy().astype(np.float32)  # [T]
    common: dict[str, object] = {"legendgroup": label, "line": {"color": colour, "width": 2}}
    (x_values, y_values), (x_norms, y_norms) = axes
    traces = [
        trace(
            "scatter",
            y=values,
            x0=1,
            dx=1,
            customdata=reached,
            mode="lines+markers" if len(values) <= MARKERS_UP_TO else "lines",
            name=label,
            xaxis=x_values,
            yaxis=y_values,
            hovertemplate="direction %{x}: singular value %{y:.4f}<br>the first %{x} hold "
            f"%{{customdata:.1%}} of the variance<extra>{label}</extra>",
            **common,
        ),
        trace(
            "scatter",
            y=norms,
            x0=0,
            dx=1,
            mode="lines+markers" if len(norms) <= MARKERS_UP_TO else "lines",
            name=label,
            showlegend=False,
            xaxis=x_norms,
            yaxis=y_norms,
            hovertemplate=f"position %{{x}}: |row| = %{{y:.4f}}<extra>{label}</extra>",
            **common,
        ),
    ]
    k = shape.directions_90
    if k:
        traces.append(
            trace(
                "scatter",
                x=[k],
                y=[float(values[k - 1])],
                mode="markers",
                marker={"symbol": "diamond", "size": 12, "color": colour},
                name=f"{label}: 90 % of the variance",
                legendgroup=label,
                showlegend=False,
                xaxis=x_values,
                yaxis=y_values,
                hovertemplate=f"90 % of the variance: the first {k} directions"
                f"<extra>{label}</extra>",
            )
        )
    return traces


def scene_layout(
    shape: TableGeometry,
    x: tuple[float, float],
    y: tuple[float, float],
    font: int,
    eye: dict[str, float],
    *,
    uirevision: str = "geometry",
    cube: bool = False,
) -> dict[str, object]:
    """A 3D scene in the domain ``x`` by ``y``: true proportions when the table has three
    components (a flat or empty table would collapse them), or each axis as long as the others
    with ``cube`` (a small cell, where a flat box leaves the third axis's ticks on each other);
    ``uirevision`` names the view whose reruns keep the camera the reader turned (the Training
    view shares the scene)."""
    axes = {
        name: {"title": {"text": f"PC {number}", "font": {"size": font}},
               "tickfont": {"size": max(font - 3, 12)}, "nticks": 5}
        for number, name in enumerate(("xaxis", "yaxis", "zaxis"), start=1)
    }  # fmt: skip
    return {
        "domain": {"x": list(x), "y": list(y)},
        **axes,
        "aspectmode": "data" if shape.components == 3 and not cube else "cube",
        "camera": {"eye": eye},
        "uirevision": uirevision,  # a rerun keeps the camera the reader turned
    }


def camera_eye(width: float | None, height: float, font: int) -> dict[str, float]:
    """The camera of a scene ``width`` x ``height`` px whose axis titles are ``font`` px: from
    :data:`CAMERA_EYE`'s direction, :data:`NEAREST_EYE` away, further as the scene is narrower
    (below :data:`WIDE` times as wide as tall, besides three letters of its titles: those keep
    their px as the box shrinks); with ``None``, a width the browser has not measured,
    :data:`CAMERA_EYE`, which shows the box in any scene.

    >>> camera_eye(None, 400, 15) == CAMERA_EYE, camera_eye(690, 400, 15)
    (True, {'x': 1.674, 'y': 1.674, 'z': 1.076})
    """
    far = math.hypot(*CAMERA_EYE.values())
    if width is None:
        return dict(CAMERA_EYE)
    room = max(width - 3 * font, 1.0)
    distance = min(NEAREST_EYE * max(1.0, WIDE * height / room), far)
    return {axis: round(value * distance / far, 3) for axis, value in CAMERA_EYE.items()}


def _scene_note(shape: TableGeometry) -> str:
    """The small line under a scene's title."""
    if shape.components == 0:
        return f"{shape.table.rows} positions, all the same: nothing to project"
    return (
        f"{shape.table.rows} positions · {shape.components} components: "
        f"{shape.shown_share * 100:.0f} % of the variance"
    )


def _cells(
    shapes: Sequence[TableGeometry], *, width: float, sizes: TypeSizes, lecture: bool
) -> list[_Cell]:
    """The two scenes and the two x-y panels with their wrapped titles and notes (on a slide
    at a lecture's smallest size)."""

    def cell(scene: bool, title: str, note: str, coloured: str = "") -> _Cell:
        wrapped = panel_note(for_plotly(note), width=width, font_size=sizes.text, lecture=lecture)
        return _Cell(
            scene,
            wrap_title(for_plotly(title), width=width, font_size=sizes.title),
            wrapped + coloured,
        )

    counts = " · ".join(
        f'<span style="color:{_colour(s)}">{s.directions_90}</span>' for s in shapes
    )  # one number per table, in its colour (the legend names the colours)
    return [
        *(cell(True, s.table.label, _scene_note(s)) for s in shapes),
        cell(
            False,
            "singular values of the centred table",
            "",
            "".join(
                f"<br>{lecture_line(line)}" if lecture else f"<br><sup>{line}</sup>"
                for line in ("◆ 90 % of the variance:", f"the first {counts} directions")
            ),
        ),
        cell(False, "length |row p| of each position vector", ""),
    ]


def _rows(
    cells: Sequence[_Cell], *, stacked: bool, spectrum: bool, lecture: bool, sizes: TypeSizes
) -> list[_Row]:
    """The figure's rows, top to bottom, with their heights in px."""
    groups = [(0,), (1,), (2,), (3,)] if stacked else [(0, 1), (2, 3)]
    if not spectrum:
        groups = groups[: len(groups) // 2]
    scene_px = STACKED_WIDTH if stacked else (LECTURE_SCENE_HEIGHT if lecture else SCENE_HEIGHT)
    ticks = sizes.tick * 1.4 + sizes.text * 1.6 + 14  # x tick labels and the axis title
    rows = []
    for group in groups:
        scene = cells[group[0]].scene
        title = max(title_height(cells[i].title, cells[i].note, sizes) for i in group)
        # a phone's colour bar lies under the second scene; the x-y panels have tick labels
        below = (_BAR_BAND if stacked and 1 in group else 0.0) if scene else ticks
        rows.append(_Row(group, title, scene_px if scene else PANEL_HEIGHT, below))
    return rows


@dataclass(frozen=True)
class GeometryDecisions:
    """What :func:`geometry_chart` drew."""

    stacked: bool  # one scene under the other (a phone): as tall as they need
    spectrum: bool  # the singular values and row lengths are drawn under the scenes
    tables: tuple[str, str]  # the labels of the two tables drawn, main first
    components: tuple[int, int]  # principal components each scene draws (0: nothing)
    fills: bool  # the figure takes the window's height below its top


def geometry_chart(
    view: GeometryView,
    *,
    lecture: bool = False,
    stacked: bool = False,
    spectrum: bool = True,
    canvas: Canvas = UNKNOWN,
) -> Drawn[GeometryDecisions]:
    """The two tables' 3D scatters side by side (one under the other on a narrow ``canvas``,
    :func:`narrow`; with ``Canvas()``, when ``stacked``), and with ``spectrum`` their singular
    values and row lengths under them; and what the figure decided.

    >>> from posviz.config import Settings
    >>> from posviz.geometry import build_geometry
    >>> from posviz.view import build_view
    >>> shown = build_geometry(build_view(Settings(context_length=16, emb_dim=8)))
    >>> geometry_chart(shown, canvas=Canvas(width=358, window_width=390)).decisions.stacked
    True
    """
    if canvas.measured:
        stacked = narrow(canvas)
    spec = geometry_spec(view, lecture=lecture, stacked=stacked, spectrum=spectrum, canvas=canvas)
    decisions = GeometryDecisions(
        stacked=stacked,
        spectrum=spectrum,
        tables=(view.main.table.label, view.contrast.table.label),
        components=(view.main.components, view.contrast.components),
        fills=lecture and not stacked,
    )
    return Drawn(spec, decisions)


def geometry_spec(
    view: GeometryView,
    *,
    lecture: bool = False,
    stacked: bool = False,
    spectrum: bool = True,
    canvas: Canvas = UNKNOWN,
) -> FigureSpec:
    """The two tables' 3D scatters side by side (``stacked``: one under the other, for
    phones), and with ``spectrum`` their singular values and row lengths under them; a
    measured ``canvas`` brings the cameras as near as the scenes' px allow (:func:`camera_eye`;
    a slide's scenes are as tall as the window leaves)."""
    sizes = type_sizes(lecture=lecture)
    shapes = (view.main, view.contrast)
    width = STACKED_WIDTH if stacked else (LECTURE_TITLE_WIDTH if lecture else TITLE_WIDTH)
    cells = _cells(shapes, width=width, sizes=sizes, lecture=lecture)
    rows = _rows(cells, stacked=stacked, spectrum=spectrum, lecture=lecture, sizes=sizes)
    plot_height = sum(r.title + r.plot + r.below for r in rows) - rows[0].title
    legend = (sizes.text * 1.6 * (2 if stacked else 1) + 12) if spectrum else 0.0
    top_margin = rows[0].title + (TOOLBAR_ROOM if stacked else 0)
    # Scenes take the whole width; an x-y panel leaves room at its left for its tick labels
    # (the figure has no left margin, so a narrow scene keeps every pixel).
    ticks = TICK_ROOM / (STACKED_WIDTH if stacked else NARROWEST_CHART)
    scene_domains = {1: [(0.02, 0.98)], 2: [(0.02, 0.49), (0.51, 0.98)]}
    panel_domains = {1: [(ticks, 1.0)], 2: [(ticks, 0.47), (0.53 + ticks, 1.0)]}
    left, right = 8, 16 if stacked else sizes.text * 4.5 + 40  # px: margins (a bar at the right)
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hoverlabel": {"font": {"size": sizes.text}},
        "hovermode": "closest",
        "plot_bgcolor": "#ffffff",
        "showlegend": spectrum,
        "legend": {"orientation": "v" if stacked else "h", "x": 0.0, "y": 0.0, "xanchor": "left",
                   "yanchor": "bottom", "yref": "container", "font": {"size": sizes.text},
                   "tracegroupgap": 0},
        "annotations": [],
        "margin": {"t": round(top_margin), "b": round(legend + 6),
                   "l": left, "r": round(right)},
        "height": round(top_margin + plot_height + legend + 6),
    }  # fmt: skip
    traces: list[Trace] = []
    top = -rows[0].title  # px from the top of the plot area
    scene_rows: list[tuple[float, float]] = []
    eye = STACKED_EYE
    if not stacked:  # the scenes' px: about half the plot's width, as tall as their row
        scene_height = rows[0].plot
        if lecture and not spectrum and canvas.height is not None:  # a slide fills the window
            scene_height = fill_height(canvas.height) - round(top_margin) - round(legend + 6)
        scene_width = None if canvas.width is None else (canvas.width - left - right) * 0.47
        eye = camera_eye(scene_width, scene_height, sizes.text)
    for row in rows:
        top += row.title
        high, low = 1 - top / plot_height, 1 - (top + row.plot) / plot_height
        top += row.plot + row.below
        domains = (scene_domains if cells[row.cells[0]].scene else panel_domains)[len(row.cells)]
        for index, x in zip(row.cells, domains, strict=True):
            cell = cells[index]
            layout["annotations"].append(  # type: ignore[attr-defined]
                panel_title(cell.title, note=cell.note, x=sum(x) / 2, y=high, font_size=sizes.title)
            )
            if cell.scene:
                shape, name = shapes[index], ("scene", "scene2")[index]
                y = (max(low, 0.0), min(high, 1.0))
                layout[name] = scene_layout(shape, x, y, sizes.text, eye)
                scene_rows.append((low, high))
                if shape.components:
                    traces.append(_scatter(shape, name, marker_size=4 if lecture else 3))
                else:
                    layout["annotations"].append(  # type: ignore[attr-defined]
                        {"text": "all zeros:<br>nothing to project", "x": sum(x) / 2,
                         "y": (low + high) / 2, "xref": "paper", "yref": "paper",
                         "showarrow": False, "font": {"size": sizes.title}}
                    )  # fmt: skip
            else:
                suffix = "" if index == 2 else "2"
                axis_title = "direction (largest first)" if index == 2 else "position p"
                layout[f"xaxis{suffix}"] = {
                    "domain": list(x), "anchor": f"y{suffix}", "automargin": False,
                    "title": {"text": axis_title, "standoff": 4},
                    "tickfont": {"size": sizes.tick}, "zeroline": False, "showgrid": True,
                    "gridcolor": "#e5e5e5", "linecolor": "#444444",
                }  # fmt: skip
                layout[f"yaxis{suffix}"] = {
                    "domain": [max(low, 0.0), min(high, 1.0)], "anchor": f"x{suffix}",
                    "automargin": False, "tickfont": {"size": sizes.tick}, "rangemode": "tozero",
                    "gridcolor": "#e5e5e5", "linecolor": "#444444",
                }  # fmt: skip
    layout["coloraxis"] = _position_bar(view, sizes, scene_rows, stacked, plot_height)
    if spectrum:
        for shape in shapes:
            traces += _lines(shape, (("x", "y"), ("x2", "y2")))
    return FigureSpec(traces, layout)


def _position_bar(
    view: GeometryView,
    sizes: TypeSizes,
    scene_rows: Sequence[tuple[float, float]],
    stacked: bool,
    plot_height: float,
) -> dict[str, object]:
    """The colour axis of positions: a bar beside the scenes, or under them on a phone."""
    low, high = min(r[0] for r in scene_rows), max(r[1] for r in scene_rows)
    bar: dict[str, object] = {
        "title": {"text": "position", "side": "right", "font": {"size": sizes.text}},
        "tickfont": {"size": sizes.text},
        "thickness": 16,
    }
    if stacked:  # horizontal, in the band under the last scene
        bar |= {
            "orientation": "h", "x": 0.5, "xanchor": "center", "len": 0.7,
            "y": low - 12 / plot_height, "yanchor": "top", "nticks": 4,
        }  # fmt: skip
    else:
        bar |= {"y": (low + high) / 2, "yanchor": "middle", "len": high - low}
    return {
        "colorscale": POSITION_COLORSCALE,
        "cmin": 0,
        "cmax": max(view.settings.context_length - 1, 1),
        "colorbar": bar,
    }


geometry_figure = as_figure(geometry_spec)


def _colour(shape: TableGeometry) -> str:
    """The colour of the table ``shape`` describes."""
    return table_colour(shape.table.scheme, trained=shape.table.trained)

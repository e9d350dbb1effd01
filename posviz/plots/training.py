"""The Training figure: a run's positional table at one step, and what training did to it.

Panels, in reading order (two columns side by side; one under the other on a phone):

1. the positional table at the step, ``[T, d]`` (rows are positions, columns dimensions), on
   the main view's diverging colour scale, one scale for every step of the run (so the colours
   of step 0 and step 1,500 compare; a ``small`` init starts nearly white);
2. the cosine similarity between its positions ``[T, T]``, on ``[-1, 1]``;
3. the mean cosine of positions ``i`` and ``i + k`` against the distance ``k`` (the Distance
   tab's curve) at the step, at step 0 and, when the caller has them, for GPT-2's first ``T``
   positions;
4. the table's principal components, coloured by position, and GPT-2's beside them when
   given: by default PC 1 against PC 2 in a plane (PC 3 in the hover), so that stepping
   through the run redraws no WebGL scene; with ``components="3d"`` the first three in 3D
   (the Geometry tab's view, a scene to turn);
5. the loss: each step's batch, and the training and validation text evaluated at the kept
   steps, with the step marked (a dotted line, a dot on each text's loss: shapes).

The command line draws them in one figure; the Training tab in two charts, the panels a step
changes (:data:`STEP_PANELS`) and the loss (:data:`LOSS_PANELS`), whose arrays are the run's
at every step: its figure carries a ``datarevision`` of them, so that a step redraws its shapes
alone (``benchmarks/training_calls.py`` prints what each chart asks of plotly.js).

Payload: ``T·d + T² + 3·T`` float32 for the panels and the run's ``N`` batch losses: about
0.1 MB of JSON for the shipped runs (T = 64, d = 128, N = 1,500).

>>> from posviz.training.runs import load_named_run
>>> from posviz.training.view import build_training
>>> loss = training_chart(build_training(load_named_run("small-init"), 600), panels=LOSS_PANELS)
>>> [t["name"] for t in loss.spec.data], [s["type"] for s in loss.spec.layout["shapes"]]
(["each step's batch", 'training text', 'validation text'], ['line', 'circle', 'circle'])
>>> later = training_chart(build_training(load_named_run("small-init"), 700), panels=LOSS_PANELS)
>>> later.spec.layout["datarevision"] == loss.spec.layout["datarevision"]  # the run's arrays
True

>>> drawn = training_chart(build_training(load_named_run("small-init"), 600))
>>> drawn.decisions.panels
('table', 'similarity', 'distance', 'components', 'loss')
>>> [t["type"] for t in drawn.spec.data][:3], drawn.decisions.stacked
(['heatmap', 'heatmap', 'scatter'], False)
>>> drawn.decisions.components, [t["type"] for t in drawn.spec.data if t.get("xaxis") == "x4"]
('2d', ['scatter'])
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import plotly.graph_objects as go

from posviz.geometry import TableGeometry
from posviz.plots._figure import Drawn, FigureSpec
from posviz.plots._layout import (
    COLORSCALE_STEPS,
    GPT2_COLOUR,
    NARROWEST_CHART,
    POSITION_COLORSCALE,
    STACKED_WIDTH,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    TypeSizes,
    banded_layout,
    bar_step,
    fill_height,
    legend_height,
    panel_title,
    text_width,
    title_height,
    trace,
    type_sizes,
    wrap_title,
    xy_axes,
)
from posviz.plots._notes import panel_note
from posviz.plots.geometry import scene_layout
from posviz.schemes import LEARNED
from posviz.token_text import for_plotly
from posviz.training.view import TrainingView, run_label

MIN_FILLED_PANEL: Final = 150  # px a panel keeps, at least, when a slide fills the window
PANELS: Final = ("table", "similarity", "distance", "components", "gpt2", "loss")
# The Training tab's two charts: the panels a step changes, and the loss, whose arrays are the
# run's at every step (only its step marks move: its chart redraws them alone).
STEP_PANELS: Final = PANELS[:-1]
LOSS_PANELS: Final = PANELS[-1:]
# How the principal components are drawn: PC 1 against PC 2 in a plane (the default: a step
# change redraws 2-D panels only, no WebGL scene), or the first three in a 3-D scene.
COMPONENT_VIEWS: Final = ("2d", "3d")
STEP_COLOUR: Final = LEARNED.colour  # the run's table at the step: the learned orange
START_COLOUR: Final = "#777777"  # step 0, dashed
TRAIN_COLOUR: Final = "#0072B2"  # Okabe & Ito blue
VAL_COLOUR: Final = "#D55E00"  # vermillion
BATCH_COLOUR: Final = "rgba(0, 0, 0, 0.22)"
HEAT_HEIGHT: Final = 330  # px of a heatmap side by side (lecture: more)
SCENE_HEIGHT: Final = 330
LOSS_HEIGHT: Final = 250
STACK_BELOW: Final = 700  # px of chart width under which a measured canvas stacks the panels
MARGIN_RIGHT: Final = 16
# The 3-D components are a cube in a near-square cell (side by side or stacked): a camera this
# near fills the cell and keeps the axis titles inside it (the Geometry tab's far camera is for
# a box of true proportions, which left this one a quarter of its cell).
CUBE_EYE: Final = {"x": 1.9, "y": 1.9, "z": 1.25}
# px more above a slide's panel title: its notes are lines of 20 px (not a superscript), which
# leaves the title as tall as its band and the colour bar's ticks above it need air.
LECTURE_NOTE_AIR: Final = 12


@dataclass(frozen=True)
class TrainingDecisions:
    """What :func:`training_chart` decided, for the words beside it to read."""

    stacked: bool  # one panel under the other (a phone), else two columns
    step: int  # the step drawn
    panels: tuple[str, ...]  # the panels in reading order (see the module docstring)
    gpt2: bool  # GPT-2's curve and components stand beside the run's
    colour_limit: float  # the table's colour scale: -limit … limit, every step of the run
    components: str  # "2d": PC 1 against PC 2 in a plane; "3d": PC 1-3 in a scene
    fills: bool  # lecture mode on a measured canvas: the figure is as tall as the window leaves


@dataclass(frozen=True)
class _Cell:
    """One panel: its kind (``heat``, ``xy``, ``scene``), its height and words."""

    name: str
    kind: str
    title: str
    note: str
    height: float
    shape: TableGeometry | None = None  # a components panel's table (a plane or a scene)


def _cells(
    view: TrainingView, *, stacked: bool, lecture: bool, width: float, components: str
) -> list[_Cell]:
    """The panels in reading order, their titles (posviz's words) and plot heights."""
    rows, dims = view.run.config.context_length, view.run.config.emb_dim
    scale = 1.2 if lecture else 1.0
    heat = width if stacked else HEAT_HEIGHT * scale
    scene = width if stacked else SCENE_HEIGHT * scale
    loss = LOSS_HEIGHT * scale
    step = f"step\u00a0{view.step:,}"  # no break inside "step 600"
    cells = [
        _Cell(
            "table", "heat", f"positional table at {step}",
            f"pos_emb.weight [{rows}, {dims}]; one colour scale for every step", heat,
        ),
        _Cell("similarity", "heat", "cosine similarity between positions", step, heat),
        _Cell(
            "distance", "xy", "mean cosine of positions i and i\u00a0+\u00a0k",
            (f"at {step} and at step 0" if view.step else f"at {step}")
            + (", GPT-2 beside" if view.gpt2_curve else ""),
            scene,
        ),
    ]  # fmt: skip
    kind = "scene" if components == "3d" else "xy"
    which = "first three principal components" if kind == "scene" else "PC 1 and PC 2"
    cells.append(
        _Cell("components", kind, f"{which}, {step}", _share(view.geometry, kind), scene,
              view.geometry)
    )  # fmt: skip
    if view.gpt2_geometry is not None:
        cells.append(
            _Cell("gpt2", kind, f"GPT-2 124M trained: positions 0-{rows - 1}",
                  _share(view.gpt2_geometry, kind), scene, view.gpt2_geometry)
        )  # fmt: skip
    note = f"each step's batch; the two texts every {view.run.config.snapshot_every} steps"
    cells.append(_Cell("loss", "xy", "loss", note, loss))
    return cells


def _share(shape: TableGeometry, kind: str) -> str:
    """The note under a components panel: what its components hold; the colour is the
    position. A plane (``kind`` ``"xy"``) names PC 1 and 2's share and PC 3's, in the hover.

    >>> import torch
    >>> from posviz.geometry import analyse_table
    >>> from posviz.position_tables import PositionalTable
    >>> rows = [[3, 0, 0], [-3, 0, 0], [0, 2, 0], [0, -2, 0], [0, 0, 1], [0, 0, -1]]
    >>> table = PositionalTable(LEARNED, "learned", torch.tensor(rows, dtype=torch.float32), None)
    >>> _share(analyse_table(table), "xy")  # variances 18, 8 and 2 of 28
    '93 % of the variance (PC 3, in the hover: 7 %); colour: position'
    """
    if shape.components == 0:
        return "all rows the same: nothing to project"
    if kind == "scene":
        return (
            f"{shape.shown_share * 100:.0f} % of the variance; axes scaled to a cube; "
            "colour: position"
        )
    shares = [float(share) for share in shape.variance_shares[:3]] + [0.0, 0.0, 0.0]
    return (
        f"{(shares[0] + shares[1]) * 100:.0f} % of the variance (PC 3, in the hover: "
        f"{shares[2] * 100:.0f} %); colour: position"
    )


def _groups(cells: Sequence[_Cell], stacked: bool) -> list[tuple[int, ...]]:
    """Rows of cell indices: one cell per row stacked, else two (the loss alone at the end
    when there is no GPT-2 scene beside it)."""
    if stacked:
        return [(i,) for i in range(len(cells))]
    indices = list(range(len(cells)))
    return [tuple(indices[i : i + 2]) for i in range(0, len(indices), 2)]


def _heatmap(z: np.ndarray, name: str, axes: tuple[str, str], coloraxis: str, hover: str) -> Trace:
    return trace(
        "heatmap", z=z, x0=0, dx=1, y0=0, dy=1, coloraxis=coloraxis, name=name,
        xaxis=axes[0], yaxis=axes[1], hovertemplate=hover,
    )  # fmt: skip


def _curve(mean: np.ndarray, name: str, axes: tuple[str, str], colour: str, dash: str) -> Trace:
    return trace(
        "scatter", y=mean, x0=0, dx=1, mode="lines", name=name, xaxis=axes[0], yaxis=axes[1],
        line={"color": colour, "width": 2.5, "dash": dash},
        hovertemplate=f"distance k = %{{x}}<br>mean cosine %{{y:.3f}}<extra>{name}</extra>",
    )  # fmt: skip


def _scatter(shape: TableGeometry, scene: str, *, marker_size: int, label: str) -> Trace:
    """A table's positions in 3D, in order, coloured by position (as the Geometry tab)."""
    positions = np.arange(shape.table.rows, dtype=np.int32)
    points = shape.points.numpy().astype(np.float32)  # [T, 3]
    return trace(
        "scatter3d", x=points[:, 0], y=points[:, 1], z=points[:, 2], mode="lines+markers",
        scene=scene, name=label, showlegend=False, customdata=positions,
        marker={"size": marker_size, "color": positions, "coloraxis": "coloraxis3"},
        line={"color": positions, "coloraxis": "coloraxis3", "width": 2},
        hovertemplate="position %{customdata}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<br>"
        f"PC 3: %{{z:.3f}}<extra>{label}</extra>",
    )  # fmt: skip


def _plane(shape: TableGeometry, axes: tuple[str, str], *, marker_size: int, label: str) -> Trace:
    """A table's positions on PC 1 (x) and PC 2 (y), in order, coloured by position; PC 3
    in the hover."""
    positions = np.arange(shape.table.rows, dtype=np.int32)
    points = shape.points.numpy().astype(np.float32)  # [T, 3]
    return trace(
        "scatter", x=points[:, 0], y=points[:, 1], mode="lines+markers", name=label,
        xaxis=axes[0], yaxis=axes[1], showlegend=False,
        customdata=np.stack([positions.astype(np.float32), points[:, 2]], axis=1),
        marker={"size": marker_size, "color": positions, "coloraxis": "coloraxis3"},
        line={"color": "rgba(0, 0, 0, 0.3)", "width": 1},
        hovertemplate="position %{customdata[0]}<br>PC 1: %{x:.3f}<br>PC 2: %{y:.3f}<br>"
        f"PC 3: %{{customdata[1]:.3f}}<extra>{label}</extra>",
    )  # fmt: skip


def _loss_traces(view: TrainingView, axes: tuple[str, str]) -> list[Trace]:
    run = view.run
    steps = np.asarray(run.steps, dtype=np.int32)
    common = {"xaxis": axes[0], "yaxis": axes[1]}
    return [
        trace(
            "scatter", y=run.batch_loss.numpy(), x0=1, dx=1, mode="lines",
            name="each step's batch", line={"color": BATCH_COLOUR, "width": 1},
            hovertemplate="step %{x}: batch loss %{y:.3f}<extra></extra>", **common,
        ),
        trace(
            "scatter", x=steps, y=run.train_loss.numpy().astype(np.float32),
            mode="lines+markers", name="training text", marker={"size": 5},
            line={"color": TRAIN_COLOUR, "width": 2.5},
            hovertemplate="step %{x}: training loss %{y:.3f}<extra></extra>", **common,
        ),
        trace(
            "scatter", x=steps, y=run.val_loss.numpy().astype(np.float32),
            mode="lines+markers", name="validation text", marker={"size": 5},
            line={"color": VAL_COLOUR, "width": 2.5},
            hovertemplate="step %{x}: validation loss %{y:.3f}<extra></extra>", **common,
        ),
    ]  # fmt: skip


def _step_marks(view: TrainingView, refs: tuple[str, str]) -> list[dict[str, object]]:
    """The step on the loss panel: a dotted line, and a dot on each text's loss there. Shapes,
    not a trace: moving them redraws the shapes alone (see :func:`_loss_revision`)."""
    run, (x, y) = view.run, refs
    index = run.index(view.step)
    line = {
        "type": "line", "xref": x, "yref": f"{y} domain", "x0": view.step, "x1": view.step,
        "y0": 0, "y1": 1, "line": {"color": "#000000", "width": 1.5, "dash": "dot"},
    }  # fmt: skip
    radius = 6  # px
    dots = [
        {"type": "circle", "xref": x, "yref": y, "xsizemode": "pixel", "ysizemode": "pixel",
         "xanchor": view.step, "yanchor": float(loss[index]), "x0": -radius, "x1": radius,
         "y0": -radius, "y1": radius, "fillcolor": colour,
         "line": {"color": "#000000", "width": 1}}
        for loss, colour in ((run.train_loss, TRAIN_COLOUR), (run.val_loss, VAL_COLOUR))
    ]  # fmt: skip
    return [line, *dots]


def _loss_revision(view: TrainingView) -> str:
    """plotly.js's ``datarevision`` of a figure of the loss panel alone: a digest of the run's
    losses. Its arrays are the run's, whatever the step: with the revision unchanged,
    ``Plotly.react`` keeps them and redraws the step's shapes alone (without one, every new
    payload's arrays count as new data, and the whole figure is drawn again)."""
    run = view.run
    digest = hashlib.blake2b(digest_size=8)
    for values in (run.batch_loss, run.train_loss, run.val_loss):
        digest.update(values.numpy().tobytes())
    digest.update(np.asarray(run.steps, dtype=np.int64).tobytes())
    return f"{run.name}:{digest.hexdigest()}"


def _bar(
    limit: float, title: str, x: tuple[float, float], top: float, sizes: TypeSizes,
    length: float,
) -> dict[str, object]:  # fmt: skip
    """A diverging colour axis from ``-limit`` to ``limit`` with a horizontal bar whose top is
    at paper height ``top``, under the panel spanning ``x`` (``length`` px): upright tick
    labels at a round step whose labels fit beside its title (:func:`bar_step`; a phone's
    bar would otherwise have them turned, over the panel below)."""
    colorbar: dict[str, object] = {
        "orientation": "h", "x": (x[0] + x[1]) / 2, "xanchor": "center",
        "len": x[1] - x[0], "lenmode": "fraction", "y": top, "yanchor": "top",
        "thickness": 14, "nticks": 5, "tickfont": {"size": sizes.text}, "tickangle": 0,
        # each tick label right of its tick: the first never reaches back into the title
        "ticklabelposition": "outside right",
        "title": {"text": title, "side": "right", "font": {"size": sizes.text}},
    }  # fmt: skip
    room = length - text_width(title, sizes.text) - 2 * sizes.text
    step = bar_step(limit, sequential=False, length=room, font_size=sizes.text)
    if step is not None:
        colorbar |= {"tickmode": "linear", "tick0": 0.0, "dtick": step}
    return {
        "colorscale": COLORSCALE_STEPS,
        "cmid": 0.0,
        "cmin": -limit,
        "cmax": limit,
        "colorbar": colorbar,
    }


def _legend_names(view: TrainingView, shown: set[str]) -> list[str]:
    """The legend's entries: the curves' and the losses' names, for the panels ``shown``."""
    names = []
    if "distance" in shown:
        names += ["step 0", f"step {view.step:,}"] if view.step else ["step 0"]
        if view.gpt2_curve is not None:
            names.append("GPT-2 124M trained")
    if "loss" in shown:
        names += ["each step's batch", "training text", "validation text"]
    return names


def _stacks(canvas: Canvas, stacked: bool) -> bool:
    """A measured canvas stacks below :data:`STACK_BELOW` px (more on large screens, whose
    type is larger); ``Canvas()`` keeps ``stacked``."""
    if canvas.width is None:
        return stacked
    return canvas.width < STACK_BELOW * canvas.type_scale


def training_chart(
    view: TrainingView,
    *,
    lecture: bool = False,
    canvas: Canvas = UNKNOWN,
    stacked: bool = False,
    panels: Sequence[str] | None = None,
    components: str = "2d",
) -> Drawn[TrainingDecisions]:
    """The Training figure for ``view`` (see the module docstring) and its decisions.

    ``canvas``: the room the chart has (narrow: one panel under the other); with ``Canvas()``
    ``stacked`` stacks them. ``lecture``: projector type sizes. ``panels``: draw only these
    of :data:`PANELS`, in the figure's order (a lecture slide fits two or three on a screen;
    ``"gpt2"`` needs GPT-2's tables in the view). ``components``: one of
    :data:`COMPONENT_VIEWS`.

    >>> from posviz.training.runs import load_named_run
    >>> from posviz.training.view import build_training
    >>> view = build_training(load_named_run("small-init"), 1500)
    >>> training_chart(view, panels=["distance", "similarity"]).decisions.panels
    ('similarity', 'distance')
    """
    if panels is not None and not set(panels) <= set(PANELS):
        raise ValueError(
            f"panels must be among {', '.join(PANELS)}, got {', '.join(map(repr, panels))}: "
            "name the panels to draw"
        )
    if components not in COMPONENT_VIEWS:
        raise ValueError(f"components must be one of {COMPONENT_VIEWS}, got {components!r}")
    stacked = _stacks(canvas, stacked)
    sizes = type_sizes(lecture=lecture, canvas=canvas)
    chart = float(canvas.width or (STACKED_WIDTH + 60 if stacked else NARROWEST_CHART))
    left = sizes.tick * 2.0 + sizes.text * 1.6 + 12  # y tick labels ("-0.5") and axis title
    plot_width = max(chart - left - MARGIN_RIGHT, 100.0)
    gap = left / plot_width  # the right column's own tick labels, in plot fractions
    column = plot_width if stacked else plot_width * (1 - gap) / 2
    cells = _cells(view, stacked=stacked, lecture=lecture, width=column, components=components)
    if panels is not None:
        cells = [cell for cell in cells if cell.name in panels]
    if not cells:
        raise ValueError(f"no panel to draw: {list(panels or [])} (GPT-2's needs its tables)")
    wrapped = [
        (
            wrap_title(for_plotly(c.title), width=column, font_size=sizes.title),
            panel_note(for_plotly(c.note), width=column, font_size=sizes.text, lecture=lecture),
        )
        for c in cells
    ]
    ticks = sizes.tick * 1.4 + sizes.text * 1.6 + 14  # x tick labels and the axis title
    bar_band = 14 + sizes.text * 1.5 + 14  # a horizontal colour bar and its tick labels
    groups = _groups(cells, stacked)
    bands = []  # per row: (title px, plot px, below px)
    for group in groups:
        title = max(title_height(wrapped[i][0], wrapped[i][1], sizes) for i in group)
        title += LECTURE_NOTE_AIR if lecture else 0
        plot = max(cells[i].height for i in group)
        below = max(
            {"heat": ticks + bar_band, "xy": ticks, "scene": 8.0}[cells[i].kind] for i in group
        )
        bands.append((title, plot, below))
    drawn_names = {cell.name for cell in cells}
    legend = legend_height(_legend_names(view, drawn_names), sizes, chart=chart, stacked=stacked)
    # Lecture mode fills the window's height, unless its rows are stacked (a phone: the page
    # scrolls); a single row (one panel, or two side by side) fills it where its panels keep
    # MIN_FILLED_PANEL px (on a phone, under a slide's words, they would keep a few rows).
    fills = lecture and canvas.height is not None and (not stacked or len(groups) == 1)
    if fills and canvas.height is not None:  # lecture mode: as tall as the window leaves
        room = fill_height(canvas.height)
        fixed = sum(title + below for title, _, below in bands) + legend + 6
        plots = sum(plot for _, plot, _ in bands)
        scale = max((room - fixed) / plots, 0.25)
        if stacked and min(plot for _, plot, _ in bands) * scale < MIN_FILLED_PANEL:
            fills = False  # its own height, and the page scrolls
        else:
            bands = [(title, plot * scale, below) for title, plot, below in bands]
    top_margin = bands[0][0] + (TOOLBAR_ROOM if stacked else 0)
    plot_height = sum(sum(band) for band in bands) - bands[0][0]
    layout = banded_layout(
        sizes, top=top_margin, plot_height=plot_height, legend=legend, left=left,
        right=MARGIN_RIGHT, vertical_legend=stacked,
    )  # fmt: skip
    spans = {1: [(0.0, 1.0)], 2: [(0.0, (1 - gap) / 2), ((1 + gap) / 2, 1.0)]}
    traces: list[Trace] = []
    label = for_plotly(run_label(view.run))
    limit = max(view.shared.colour_limit, 1e-12)
    axis_number = 0
    scenes = 0
    top = -bands[0][0]  # px from the top of the plot area
    for group, (title_px, plot_px, below_px) in zip(groups, bands, strict=True):
        top += title_px
        high, low = 1 - top / plot_height, 1 - (top + plot_px) / plot_height
        top += plot_px + below_px
        for index, x in zip(group, spans[len(group)], strict=True):
            cell = cells[index]
            heading, note = wrapped[index]
            layout["annotations"].append(  # type: ignore[attr-defined]
                panel_title(heading, note=note, x=sum(x) / 2, y=high, font_size=sizes.title)
            )
            y = (max(low, 0.0), min(high, 1.0))
            shown = label if cell.name == "components" else "GPT-2 124M"  # a components panel's
            if cell.kind == "scene" and cell.shape is not None:
                scenes += 1
                name = "scene" if scenes == 1 else f"scene{scenes}"
                layout[name] = scene_layout(
                    cell.shape, x, y, sizes.text, CUBE_EYE, uirevision="training", cube=True
                )
                traces.append(
                    _scatter(cell.shape, name, marker_size=4 if lecture else 3, label=shown)
                )
                continue
            axis_number += 1
            suffix = "" if axis_number == 1 else str(axis_number)
            names = (f"xaxis{suffix}", f"yaxis{suffix}")
            refs = (f"x{suffix}", f"y{suffix}")
            bar_top = low - ticks / plot_height
            if cell.name == "table":
                layout |= xy_axes(x, y, names, ("dimension", "position"), sizes, reversed_y=True)
                layout["coloraxis"] = _bar(limit, "value", x, bar_top, sizes, column)
                traces.append(_heatmap(
                    view.table.table.numpy(), f"positional table, step {view.step:,}", refs,
                    "coloraxis", "position %{y}<br>dimension %{x}<br>value %{z:.4f}"
                    "<extra></extra>",
                ))  # fmt: skip
            elif cell.name == "similarity":
                layout |= xy_axes(x, y, names, ("position", "position"), sizes, reversed_y=True)
                layout["coloraxis2"] = _bar(1.0, "cosine", x, bar_top, sizes, column)
                traces.append(_heatmap(
                    view.similarity.numpy(), "cosine similarity", refs, "coloraxis2",
                    "positions %{y} and %{x}<br>cosine %{z:.3f}<extra></extra>",
                ))  # fmt: skip
            elif cell.shape is not None:  # the components in a plane
                layout |= xy_axes(x, y, names, ("PC 1", "PC 2"), sizes)
                # PC 1 and PC 2 on one scale (the Geometry tab's aspectmode "data"), the plot
                # under its title
                layout[names[1]] |= {  # type: ignore[operator]
                    "scaleanchor": refs[0], "constrain": "domain", "constraintoward": "top",
                }  # fmt: skip
                layout[names[0]] |= {"constrain": "domain"}  # type: ignore[operator]
                traces.append(
                    _plane(cell.shape, refs, marker_size=8 if lecture else 6, label=shown)
                )
            elif cell.name == "distance":
                layout |= xy_axes(x, y, names, ("distance k", "mean cosine"), sizes)
                layout[names[1]]["range"] = [-1.05, 1.05]  # type: ignore[index]
                curves = [  # at step 0 the two are one: drawn once
                    *([(view.start_curve, "step 0", START_COLOUR, "dash")] if view.step else []),
                    (view.curve, f"step {view.step:,}", STEP_COLOUR, "solid"),
                ]
                if view.gpt2_curve is not None:
                    curves.append((view.gpt2_curve, "GPT-2 124M trained", GPT2_COLOUR,
                                   "solid"))  # fmt: skip
                for curve, name, colour, dash in curves:
                    mean = curve.mean.numpy().astype(np.float32)
                    traces.append(_curve(mean, name, refs, colour, dash))
            else:  # the loss
                layout |= xy_axes(x, y, names, ("step", "loss"), sizes)
                traces += _loss_traces(view, refs)
                layout["shapes"] += _step_marks(view, refs)  # type: ignore[operator]
    layout["coloraxis3"] = {
        "colorscale": POSITION_COLORSCALE,
        "cmin": 0,
        "cmax": max(view.context_length - 1, 1),
        "showscale": False,
    }
    if drawn_names == set(LOSS_PANELS):  # every array the run's, whatever the step
        layout["datarevision"] = _loss_revision(view)
    decisions = TrainingDecisions(
        stacked=stacked,
        step=view.step,
        panels=tuple(cell.name for cell in cells),
        gpt2=view.gpt2_geometry is not None,
        colour_limit=limit,
        components=components,
        fills=fills,
    )
    return Drawn(FigureSpec(traces, layout), decisions)


def training_figure(
    view: TrainingView,
    *,
    lecture: bool = False,
    canvas: Canvas = UNKNOWN,
    stacked: bool = False,
    components: str = "2d",
) -> go.Figure:
    """:func:`training_chart`'s figure as ``go.Figure`` (the command line's)."""
    drawn = training_chart(
        view, lecture=lecture, canvas=canvas, stacked=stacked, components=components
    )
    return drawn.spec.figure()

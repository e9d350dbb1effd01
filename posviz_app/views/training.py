"""The Training view: a run of the book's GPT on *The Verdict* (``posviz.training``), its
positional table at one kept step, and what training did to it. Its tab takes the run, the step
and a play button that steps through the snapshots; lecture mode's slides ask whether position
10 ends up more like 11 or like 50, and which table moves.

The server never trains: the runs are read from the files ``python -m posviz train`` writes
(the shipped ones, and any in the cache folder's ``runs/``), once per process each.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Final

import streamlit as st

from posviz.config import Settings
from posviz.gpt2.store import Gpt2Embeddings, Gpt2Unavailable
from posviz.lesson import training as training_lesson
from posviz.lesson.lecture import TRAINING_STEPS, Slide
from posviz.plots.training import LOSS_PANELS, STEP_PANELS, training_chart
from posviz.query import TRAINING_LINK_KEYS, TRAINING_TAB, query_from_settings
from posviz.training.codegen import training_script
from posviz.training.runs import RunError, TrainingRun, available_runs, load_run
from posviz.training.view import TrainingView, build_training
from posviz_app import state
from posviz_app.caches import gpt2_store, kept
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain, keyed_markdown
from posviz_app.views.layout import slide_question

KEY: Final = state.TRAINING_CHART
LOSS_KEY: Final = state.TRAINING_LOSS_CHART  # a chart of its own (only its step marks move)
PLAY_EVERY: Final = 0.8  # seconds from one snapshot to the next while playing
SMALL: Final = "small-init"  # the two runs lecture mode compares
DEFAULT: Final = "default-init"
NEIGHBOUR_PANELS: Final = ("similarity", "distance")  # lecture: is 10 more like 11 or 50?
MOVING_PANELS: Final = ("table",)  # lecture: which table moves?
INITS: Final = {  # what each run's positional table started as, for the slide's columns
    "small": "positions started at N(0, 0.02²), as GPT-2 starts them",
    "default": "positions started at N(0, 1), nn.Embedding's default (§2.8)",
}


@st.cache_resource(show_spinner=False, max_entries=16)
def _run(path: str, modified: float, size: int) -> TrainingRun:
    """The run in ``path`` (read once per file version, shared by every session)."""
    return load_run(Path(path))


SHIPPED_ORDER: Final = (SMALL, DEFAULT, "book-settings")  # the lesson's order


def runs() -> dict[str, Path]:
    """The runs there are: the shipped ones in the lesson's order, then the cache folder's."""
    found = available_runs()
    order = {name: index for index, name in enumerate(SHIPPED_ORDER)}
    return dict(sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def loaded(name: str, found: dict[str, Path]) -> TrainingRun:
    """Run ``name`` among ``found`` (:class:`RunError` naming the runs there are)."""
    path = found.get(name)
    if path is None:
        raise RunError(f"there is no run named {name!r}: the runs are {', '.join(found)}")
    stat = path.stat()
    return _run(str(path), stat.st_mtime, stat.st_size)


def gpt2_positions() -> Gpt2Embeddings | None:
    """GPT-2's tables if the cache has them (this tab never downloads them)."""
    try:
        return gpt2_store().tables(download=False)
    except Gpt2Unavailable:
        return None


def view_of(run: TrainingRun, step: int) -> TrainingView:
    """``run`` at its kept step nearest ``step``, with GPT-2's curve and geometry beside it if
    the cache has GPT-2's tables."""
    return build_training(run, run.nearest_step(step), gpt2=gpt2_positions(), memo=kept)


def render(room: Room) -> None:
    """The tab (the run, the step, play), or a lecture slide."""
    found = runs()
    if room.slide is not None:
        _slide(room, room.slide, found)
        return
    settings = room.settings
    names = list(found)
    if settings.run not in found:  # a link to a run this server does not have
        st.warning(
            f"There is no run named {settings.run!r} here: showing {names[0]}. The runs are "
            f"{', '.join(names)}; `python -m posviz train` makes more (see the guide).",
            icon="⚠️",
        )
        state.set_values({state.RUN: names[0]})
    column, button = st.columns([4, 1], vertical_alignment="bottom")
    column.selectbox("Training run", names, key=state.RUN, on_change=state.pause)
    run = loaded(state.run_name(), found)
    if state.playing():
        button.button("⏸ Pause", key=state.TRAINING_PAUSE, on_click=state.pause, width="stretch")
    else:
        button.button(
            "▶ Play", key=state.TRAINING_PLAY, on_click=state.play, args=(run.steps,),
            width="stretch", help="Step through the run's snapshots, one every "
            f"{PLAY_EVERY:g} s.",
        )  # fmt: skip
    timed = state.playing()  # the fragment's timer runs while this page run said Pause
    chart_room(_tab_chart, run_every=PLAY_EVERY if timed else None)(room, run, timed=timed)
    code = st.expander("The code behind these numbers", key=state.TRAINING_CODE, on_change="rerun")
    if code.open:
        with code:
            step = run.nearest_step(state.train_step(settings.train_step))
            st.code(training_script(run.config, step=step, name=run.name), language="python")


def _link(run: TrainingRun, step: int) -> None:
    """The page's link names the run, the step and the components shown (the fragment's own
    runs too: its slider and its 3-D switch), as the page's own run writes it for this tab
    (``step=``, ``components=3d``)."""
    shown = replace(Settings(), run=run.name, train_step=step)
    link = query_from_settings(shown, tab=TRAINING_TAB, components=state.components())
    for key in TRAINING_LINK_KEYS:
        if key in link:
            st.query_params[key] = link[key]
        elif key in st.query_params:
            del st.query_params[key]


def _tab_chart(room: Room, run: TrainingRun, *, timed: bool) -> None:
    """The step slider, the figure and its sentences; while playing, each run shows the next
    snapshot. ``timed``: the page was drawn playing (the button says Pause, the fragment reruns
    on a timer). When the playing stops here (the last snapshot, a step chosen by hand on the
    slider, which runs this fragment alone), the whole page runs again at once: the button says
    Play and the timer stops, with no second click."""
    if state.playing():
        step = state.advance(run.steps)
    else:
        step = run.nearest_step(state.train_step(room.settings.train_step))
        state.set_values({state.TRAIN_STEP: step})
    if timed and not state.playing():
        st.rerun()  # the whole page, from this run: the button, then this fragment untimed
    slider, switch = st.columns([3, 1], vertical_alignment="bottom")  # one row: the chart higher
    slider.select_slider(
        "Training step",
        options=run.steps,
        key=state.TRAIN_STEP,
        format_func="{:,}".format,
        on_change=state.pause,
    )
    switch.toggle(
        "Components in 3-D",
        key=state.TRAIN_3D,
        help="PC 1-3 in a scene you can turn, the Geometry tab's view. Off: PC 1 against "
        "PC 2 in a plane (PC 3 in the hover), which redraws fastest while stepping.",
    )
    view = view_of(run, step)
    canvas = chart_canvas(KEY)
    drawn = training_chart(view, canvas=canvas, components=state.components(), panels=STEP_PANELS)
    explain(training_lesson.INTRO, lecture=False)
    lead, *rest = training_lesson.sentences(view)  # the lesson above the figure, then the rest
    keyed_markdown(lead, state.LESSON)
    show_chart(drawn.spec, key=KEY, canvas=canvas, fill=drawn.decisions.fills)
    loss_canvas = chart_canvas(LOSS_KEY)
    loss = training_chart(view, canvas=loss_canvas, panels=LOSS_PANELS)
    show_chart(loss.spec, key=LOSS_KEY, canvas=loss_canvas, fill=loss.decisions.fills)
    for paragraph in rest:
        st.markdown(paragraph)
    _link(run, step)


def _slide(room: Room, slide: Slide, found: dict[str, Path]) -> None:
    """The neighbour question on the small-init run (step 0 before the reveal, the last step
    after), or which table moves (both runs, step 0, then their last step)."""
    if SMALL not in found or DEFAULT not in found:
        st.info(f"This slide needs the shipped runs {SMALL} and {DEFAULT}.")
        return
    small = loaded(SMALL, found)
    if slide.step is TRAINING_STEPS[1]:
        _moving_slide(room, slide, small, loaded(DEFAULT, found))
    else:
        _neighbour_slide(room, slide, small)


@chart_room
def _neighbour_slide(room: Room, slide: Slide, small: TrainingRun) -> None:
    view = view_of(small, small.steps[-1] if slide.revealed else small.steps[0])
    ask_or_answer(slide, slide_question(room), lambda: training_lesson.neighbour_answer(view))
    canvas = chart_canvas(KEY, place=room.place)
    drawn = training_chart(view, lecture=True, canvas=canvas, panels=NEIGHBOUR_PANELS)
    show_chart(drawn.spec, key=KEY, canvas=canvas, fill=drawn.decisions.fills, place=room.place)


@chart_room
def _moving_slide(room: Room, slide: Slide, small: TrainingRun, default: TrainingRun) -> None:
    views = [
        view_of(run, run.steps[-1] if slide.revealed else run.steps[0]) for run in (small, default)
    ]
    ask_or_answer(slide, slide_question(room), lambda: training_lesson.moving_answer(*views))
    for column, view, key in zip(st.columns(2), views, state.TRAINING_RUN_CHARTS, strict=True):
        with column:
            st.markdown(f"**{view.run.name}**: {INITS[view.run.config.init]}")
            canvas = chart_canvas(key, place=room.place)
            drawn = training_chart(view, lecture=True, canvas=canvas, panels=MOVING_PANELS)
            show_chart(
                drawn.spec, key=key, canvas=canvas, fill=drawn.decisions.fills, place=room.place
            )

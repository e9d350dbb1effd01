"""The Geometry view: the positional table's principal components beside a contrasting table,
their singular values and row lengths, and what the numbers say. Its lecture slides ask "cloud
or curve?" and draw the two scenes only at the reveal."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.geometry import build_geometry
from posviz.lesson import geometry as geometry_lesson
from posviz.plots.geometry import geometry_chart
from posviz_app import state
from posviz_app.caches import kept, tables_for
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain
from posviz_app.views.code import view_code
from posviz_app.views.layout import slide_question

KEY: Final = state.GEOMETRY_CHART


def render(room: Room) -> None:
    """The tab, or a lecture slide (the question alone before the reveal)."""
    slide = room.slide
    if slide is not None and not slide.revealed:
        ask_or_answer(slide, slide_question(room), lambda: "")
        return
    _chart(room)
    if slide is None:
        view_code(room.settings, "geometry")


@chart_room
def _chart(room: Room) -> None:
    geometry = build_geometry(room.view, tables=room.tables, init_tables=tables_for, memo=kept)
    canvas = chart_canvas(KEY, place=room.place)
    if room.slide is None:
        explain(geometry_lesson.INTRO, lecture=False)
        drawn = geometry_chart(geometry, canvas=canvas)
        show_chart(drawn.spec, key=KEY, canvas=canvas)
        for paragraph in geometry_lesson.sentences(geometry, drawn.decisions):
            st.markdown(paragraph)
        return
    drawn = geometry_chart(geometry, lecture=True, spectrum=False, canvas=canvas)
    decisions = drawn.decisions
    answer = geometry_lesson.lecture_answer(geometry, decisions)
    ask_or_answer(room.slide, slide_question(room), lambda: answer)
    # One scene under the other on a phone: taller than its window, the page scrolls.
    show_chart(drawn.spec, key=KEY, canvas=canvas, fill=decisions.fills, place=room.place)

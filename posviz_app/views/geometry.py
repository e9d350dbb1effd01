"""The Geometry view: the positional table's principal components beside a contrasting table,
their singular values and row lengths, and what the numbers say. Its lecture slides ask "cloud
or curve?" and draw the two scenes only at the reveal."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.geometry import build_geometry
from posviz.lesson import geometry as geometry_lesson
from posviz.plots.geometry import geometry_spec
from posviz_app.caches import kept, tables_for
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain
from posviz_app.views.code import view_code
from posviz_app.views.layout import narrow, slide_question

KEY: Final = "geometry"


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
        show_chart(geometry_spec(geometry, stacked=narrow(canvas)), key=KEY, canvas=canvas)
        for paragraph in geometry_lesson.sentences(geometry):
            st.markdown(paragraph)
        return
    answer = geometry_lesson.lecture_answer(geometry)
    ask_or_answer(room.slide, slide_question(room), lambda: answer)
    phone = narrow(canvas)  # one scene under the other, taller than the window: the page scrolls
    spec = geometry_spec(geometry, lecture=True, stacked=phone, spectrum=False)
    show_chart(spec, key=KEY, canvas=canvas, fill=not phone, place=room.place)

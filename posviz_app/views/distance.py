"""The Distance & length view: the cosine of positions i and i + k per scheme, and what lies
past the context length. Its lecture slides show a quarter of T past the context length."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.distance import MAX_BEYOND, build_distance, default_beyond
from posviz.lesson import distance as distance_lesson
from posviz.plots.distance import distance_chart
from posviz_app import state
from posviz_app.caches import kept, tables_for
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain
from posviz_app.views.code import view_code
from posviz_app.views.layout import slide_question

KEY: Final = state.DISTANCE_CHART


def render(room: Room) -> None:
    """The tab (with its slider of positions past T), or a lecture slide."""
    slide = room.slide
    if slide is not None and (not slide.revealed or room.view.embeddings is None):
        ask_or_answer(slide, slide_question(room), lambda: "")
        return
    _chart(room)


@chart_room
def _chart(room: Room) -> None:
    settings, slide = room.settings, room.slide
    canvas = chart_canvas(KEY, place=room.place)
    if slide is not None:
        distance = build_distance(room.view, tables=room.tables, init_tables=tables_for, memo=kept)
        drawn = distance_chart(distance, lecture=True, canvas=canvas)
        decisions = drawn.decisions
        answer = distance_lesson.lecture_answer(distance, decisions)
        ask_or_answer(slide, slide_question(room), lambda: answer)
        show_chart(drawn.spec, key=KEY, canvas=canvas, fill=decisions.fills, place=room.place)
        return
    most = min(MAX_BEYOND, max(settings.context_length, 8))  # up to T more (at least 8)
    asked = state.beyond(default_beyond(settings.context_length))
    state.set_values({state.BEYOND: min(asked, most)})  # T went down: within the new range
    beyond = st.slider(
        "Positions past the context length (E)",
        0,
        most,
        key=state.BEYOND,
        help=distance_lesson.BEYOND_HELP,
    )
    distance = build_distance(
        room.view, beyond=beyond, tables=room.tables, init_tables=tables_for, memo=kept
    )
    explain(distance_lesson.INTRO, lecture=False)
    drawn = distance_chart(distance, canvas=canvas)
    show_chart(drawn.spec, key=KEY, canvas=canvas)
    for paragraph in distance_lesson.sentences(distance, drawn.decisions):
        st.markdown(paragraph)
    view_code(settings, "distance", beyond=beyond)

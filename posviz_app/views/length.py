"""The Length view: train short, test long. Each scheme's shipped run of the book's GPT,
trained at L = 64 tokens and read on held-out text at L, 2L and 4L; RoPE stretched by the
context extension chosen in the sidebar (RoPE's options), from the run, without retraining;
RoPE's wavelengths before and after it; and the sentence in the sidebar moved past L.

The server never trains: the runs are read once per process (:func:`posviz_app.caches.length_runs`).
"""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.lesson import length as length_lesson
from posviz.plots.length import length_chart
from posviz.training.length_view import build_length, chosen_schemes
from posviz_app import state
from posviz_app.caches import attention_weights, length_runs
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, chart_room, explain, keyed_markdown

KEY: Final = state.LENGTH_CHART


def render(room: Room) -> None:
    """The tab (which schemes to draw), or a lecture slide (the same figure, projected)."""
    runs = length_runs()
    specs = chosen_schemes(None, set(runs))
    labels = {spec.name: spec.label for spec in specs}
    if room.slide is None:
        state.start_length_schemes(list(labels))
        st.multiselect(
            "Schemes",
            list(labels),
            key=state.LENGTH_SCHEMES,
            format_func=labels.__getitem__,
            help="Whose held-out loss to draw. RoPE's context extension is RoPE's scaling "
            "option in the sidebar (choose the RoPE scheme to set it); with none chosen, the "
            "view shows YaRN with s = 4.",
        )
    _chart(room, state.length_schemes(list(labels)))


@chart_room
def _chart(room: Room, schemes: tuple[str, ...]) -> None:
    lecture = room.slide is not None
    view = build_length(
        room.settings,
        runs=length_runs(),
        schemes=schemes,
        tables=room.tables,
        attention=attention_weights,
    )
    canvas = chart_canvas(KEY, place=room.place)
    drawn = length_chart(view, lecture=lecture, canvas=canvas)
    explain(length_lesson.INTRO, lecture=lecture)
    for notice in view.notices:
        st.info(notice)
    keyed_markdown(length_lesson.headline(view), state.LESSON)
    show_chart(drawn.spec, key=KEY, canvas=canvas, place=room.place)
    for paragraph in (
        length_lesson.extension_sentence(view),
        length_lesson.attention_sentence(view),
    ):
        st.markdown(paragraph)
    st.caption(length_lesson.limits_note(view))

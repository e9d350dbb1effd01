"""The Similarity view: which cells read 1.0 and why, the three similarity matrices, and what
the position panel shows (said only as far as its numbers show it)."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.lesson.gpt2 import neighbour_sentence, pattern_sentence
from posviz.lesson.lecture import question_text, similarity_answer
from posviz.lesson.repeats import similarity_sentence
from posviz.lesson.schemes import position_panel_note
from posviz.plots.heatmaps import similarity_chart
from posviz.schemes import scheme
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain, keyed_markdown

KEY: Final = "similarity"


def render(room: Room) -> None:
    """The tab, or lecture mode's similarity slides (the answer outlines the cells that read
    1.0)."""
    _chart(room)


@chart_room
def _chart(room: Room) -> None:
    embeddings = room.view.embeddings
    if embeddings is None:
        return
    settings, slide = room.settings, room.slide
    canvas = chart_canvas(KEY, place=room.place)
    if slide is not None:
        drawn = similarity_chart(embeddings, lecture=True, outlines=slide.outlines, canvas=canvas)
        decisions = drawn.decisions
        question = question_text(slide, settings.scheme, decisions, weights=settings.weights)
        ask_or_answer(slide, question, lambda: similarity_answer(decisions))
        show_chart(drawn.spec, key=KEY, canvas=canvas, fill=decisions.fills, place=room.place)
        return
    drawn = similarity_chart(embeddings, canvas=canvas)
    decisions = drawn.decisions  # and the numbers of the cells it drew
    keyed_markdown(similarity_sentence(decisions), "lesson")
    show_chart(drawn.spec, key=KEY, canvas=canvas)
    if scheme(settings.scheme).learned and decisions.neighbours is not None:
        st.markdown(neighbour_sentence(decisions))
        explain(pattern_sentence(decisions, trained=settings.weights == "gpt2"), lecture=False)
    else:
        explain(position_panel_note(settings.scheme, spread=decisions.spread), lecture=False)

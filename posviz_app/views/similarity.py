"""The Similarity view: which cells read 1.0 and why, the three similarity matrices, and what
the position panel shows (said only as far as its numbers show it)."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.lesson.gpt2 import neighbour_sentence, pattern_sentence
from posviz.lesson.lecture import question_text, similarity_answer
from posviz.lesson.repeats import similarity_sentence
from posviz.lesson.schemes import position_panel_note
from posviz.plots.heatmaps import similarity_spec, stacks
from posviz.repeats import repeat_facts
from posviz.similarity import (
    MAX_POSITIONS,
    cosine_similarity,
    distance_spread,
    neighbour_similarity,
    similarity_facts,
)
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
        facts = repeat_facts(embeddings)
        question = question_text(slide, settings.scheme, facts, weights=settings.weights)
        ask_or_answer(slide, question, lambda: similarity_answer(similarity_facts(embeddings)))
        spec = similarity_spec(embeddings, lecture=True, outlines=slide.outlines, canvas=canvas)
        stacked = stacks(embeddings, canvas=canvas, lecture=True)
        show_chart(spec, key=KEY, canvas=canvas, fill=not stacked, place=room.place)
        return
    stacked = stacks(embeddings, canvas=canvas)
    keyed_markdown(similarity_sentence(similarity_facts(embeddings), stacked=stacked), "lesson")
    show_chart(similarity_spec(embeddings, canvas=canvas), key=KEY, canvas=canvas)
    positions = cosine_similarity(embeddings.pos_embeddings)
    neighbours = neighbour_similarity(positions)
    if settings.scheme == "learned" and neighbours is not None:
        st.markdown(neighbour_sentence(neighbours, len(embeddings.token_ids)))
        explain(pattern_sentence(neighbours, trained=settings.weights == "gpt2"), lecture=False)
    else:
        spread = distance_spread(positions[:MAX_POSITIONS, :MAX_POSITIONS])
        explain(position_panel_note(settings.scheme, spread=spread), lecture=False)

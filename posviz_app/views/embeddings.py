"""The Embeddings view: the lesson in numbers, the three heatmaps (token | position | input),
and what the scheme adds. Lecture slides 3 to 7 draw it one panel at a time."""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.lesson.gpt2 import source_caption
from posviz.lesson.lecture import input_answer, question_text, token_answer
from posviz.lesson.repeats import lesson_sentence
from posviz.plots import Canvas
from posviz.plots.heatmaps import embeddings_chart
from posviz.schemes import scheme
from posviz_app import state
from posviz_app.chart import chart_canvas, shared_chart, show_payload
from posviz_app.room import Room, ask_or_answer, chart_room, keyed_markdown
from posviz_app.views.tokens import shapes_line

KEY: Final = state.EMBEDDINGS_CHART
SHORT_WINDOW: Final = 800  # px: below this window height the shapes take one line of text


def short(canvas: Canvas) -> bool:
    """Whether the window is too short for the shapes as large numbers above the chart (a
    1280 x 720 screen keeps the repeated rows of the example on its first screen)."""
    return canvas.window_height is not None and canvas.window_height < SHORT_WINDOW


def render(room: Room) -> None:
    """The tab, or a lecture slide's panels (a question slide hides the outlines and the panel
    that answers it)."""
    _chart(room)


@chart_room
def _chart(room: Room) -> None:
    embeddings = room.view.embeddings
    if embeddings is None:
        return
    settings, slide = room.settings, room.slide
    canvas = chart_canvas(KEY, place=room.place)
    if slide is None:
        # The figure first: the words read what it decided (rows, dims, stacking, outlines).
        # A function of the settings and the room alone (GPT-2's tables: one commit a
        # process), so built once for every session that shows it.
        shown = shared_chart(
            ("embeddings", settings, state.tables_of(settings)),
            lambda room_canvas: embeddings_chart(embeddings, canvas=room_canvas),
            canvas=canvas,
            fitted=True,  # to the window's bottom
        )
        decisions = shown.decisions
        shapes_line(settings, room.view.batch, compact=decisions.stacked or short(canvas))
        keyed_markdown(lesson_sentence(decisions), state.LESSON)
        show_payload(shown.payload, key=KEY)
        if settings.weights == "gpt2":
            st.markdown(source_caption(state.tables_commit(), len(embeddings.token_ids)))
        else:
            st.markdown(scheme(settings.scheme).words.note)
        return
    shown = shared_chart(
        ("embeddings slide", settings, state.tables_of(settings), slide.panels, slide.outlines),
        lambda room_canvas: embeddings_chart(
            embeddings,
            lecture=True,
            panels=slide.panels,
            outlines=slide.outlines,
            canvas=room_canvas,
        ),
        canvas=canvas,
        fill=lambda decisions: decisions.fills,
    )
    decisions = shown.decisions
    answer = token_answer if slide.step.panels == 1 else input_answer
    question = question_text(slide, settings.scheme, decisions, weights=settings.weights)
    ask_or_answer(slide, question, lambda: answer(decisions))
    if not (slide.step.question and slide.revealed):  # an answer leaves its height to the rows
        shapes_line(settings, room.view.batch, compact=True)
    # Side by side: as tall as the window leaves below the chart's top; stacked (a phone): as
    # tall as its panels need, and the page scrolls.
    show_payload(shown.payload, key=KEY, place=room.place)

"""The Attention view: one head of the book's attention on the window, its content part,
position part, scores and weights, the scheme's bias against distance, and the shift test.

Its controls (heads H, the head K shown, the shift M) are settings (``heads=``, ``head=``,
``shift=`` in links): heads that do not divide d (a link, or a new d) are fitted to it
(:func:`posviz.config.fit_heads`) before the controls are drawn, with a notice. Its lecture
slides: the view; then "the sentence moves 8 positions later" asked on the sentence where it
is, and answered on the sentence moved (:func:`posviz.lesson.attention.lecture_shift`: 8, or as
far as a learned table holds the sentence).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import streamlit as st

from posviz.config import SHIFT_RANGE, Settings, fit_heads, fitting_heads, head_counts
from posviz.lesson import attention as attention_lesson
from posviz.plots.attention import attention_chart
from posviz.schemes import scheme
from posviz.scores import build_attention, shift_limit, table_rows
from posviz_app import state
from posviz_app.caches import attention_weights
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.room import Room, ask_or_answer, chart_room, explain
from posviz_app.views.code import view_code
from posviz_app.views.layout import slide_question

KEY: Final = state.ATTENTION_CHART


def render(room: Room) -> None:
    """The tab (its three controls, the chart, the words and the code), or a lecture slide."""
    settings, said = fit_heads(room.settings)  # heads that divide d (RoPE: even heads)
    slide = room.slide
    if slide is None:
        for notice in said:
            st.warning(f"Attention: {notice}", icon="⚠️")
        tokens = 1 if room.view.embeddings is None else len(room.view.embeddings.token_ids)
        settings = _controls(settings, tokens)
    moves = 0  # the shift test's slides: asked where it stands, answered moved this far
    if slide is not None and slide.step.question is not None and room.view.embeddings is not None:
        moves = attention_lesson.lecture_shift(settings, len(room.view.embeddings.token_ids))
        settings = replace(settings, shift=moves if slide.revealed else 0)
    _chart(replace(room, view=replace(room.view, settings=settings)), moves)


def _controls(settings: Settings, tokens: int) -> Settings:
    """Heads, head and shift, drawn with the fitted values; the settings they hold. The shift
    slider offers what can be shown for a sentence of ``tokens`` tokens
    (:func:`~posviz.scores.shift_limit`); a table that ends gets a switch to go past its end on
    purpose, on by itself for a link's shift past it, and a shift asked for is never cut."""
    # RoPE rotates pairs: heads of an even number of columns (for an odd d, any that divide it)
    choices = fitting_heads(settings.emb_dim, settings.scheme) or head_counts(settings.emb_dim)
    state.set_values(
        {state.HEADS: settings.heads, state.HEAD: settings.head, state.SHIFT: settings.shift}
    )
    heads_column, head_column, shift_column = st.columns([1, 1, 2])
    heads = heads_column.selectbox(
        "Heads H",
        choices,
        key=state.HEADS,
        persist_state="session",
        help=f"The book's MultiHeadAttention splits d = {settings.emb_dim} into H heads of d/H "
        "columns each (H must divide d).",
    )
    state.set_values({state.HEAD: min(state.head(), heads - 1)})
    head = head_column.selectbox(
        "Head K shown", range(heads), key=state.HEAD, persist_state="session"
    )
    spec = scheme(settings.scheme)
    past_end = False
    if spec.learned:
        if settings.shift > shift_limit(settings, tokens):
            state.set_values({state.PAST_END: True})
        past_end = shift_column.toggle(
            "Past the table's end",
            key=state.PAST_END,
            persist_state="session",
            help=f"Let the shift move the sentence past row {table_rows(settings) - 1}, the "
            "table's last: looking up a row it does not have raises torch's IndexError, "
            "which the view then shows.",
        )
    high = max(shift_limit(settings, tokens, past_end=past_end), settings.shift, 1)
    shift = shift_column.slider(
        "Shift M: the sentence at positions M … M+n−1",
        SHIFT_RANGE[0],
        min(high, SHIFT_RANGE[1]),
        key=state.SHIFT,
        persist_state="session",
        help="Move the same sentence later: a relative scheme's scores stay the same.",
    )
    return replace(settings, heads=int(heads), head=int(head), shift=int(shift))


@chart_room
def _chart(room: Room, moves: int) -> None:
    view = build_attention(room.view, tables=room.tables, attention=attention_weights)
    canvas = chart_canvas(KEY, place=room.place)
    slide = room.slide
    if slide is None:
        explain(attention_lesson.INTRO, lecture=False)
        drawn = attention_chart(view, canvas=canvas)
        st.markdown(attention_lesson.shift_sentence(view))
        show_chart(drawn.spec, key=KEY, canvas=canvas)
        for paragraph in attention_lesson.sentences(view, drawn.decisions)[1:]:
            st.markdown(paragraph)
        view_code(room.settings, "attention")
        return
    # The shift test's slides leave the heatmaps the room: the bias chart is the first slide's.
    drawn = attention_chart(
        view, lecture=True, canvas=canvas, bias_chart=slide.step.question is None
    )
    question = slide_question(room, shift=moves)
    ask_or_answer(slide, question, lambda: attention_lesson.shift_answer(view))
    show_chart(drawn.spec, key=KEY, canvas=canvas, fill=drawn.decisions.fills, place=room.place)

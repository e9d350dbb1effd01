"""The Word-order view: the window on screen and a second text through the book's
self-attention, without and with positions. Its tab takes the second text; lecture mode's
slides compare the page's second text if it has one, else the example pair."""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import streamlit as st

from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT, OrderComparison
from posviz.lesson.lecture import Slide, question_text, word_order_answer
from posviz.lesson.word_order import (
    ATTENTION_NOTE,
    CAUSAL_NOTE,
    cut_note,
    findings,
    status_message,
    texts_line,
)
from posviz.plots.word_order import compare_chart
from posviz.tokenizer import encode
from posviz.view import View, build_view, build_word_order
from posviz_app import state
from posviz_app.caches import attention_weights
from posviz_app.chart import chart_canvas, show_chart
from posviz_app.controls import text_box
from posviz_app.room import Room, ask_or_answer, chart_room, explain, keyed_markdown

KEY: Final = state.WORD_ORDER_CHART


def render(room: Room) -> None:
    """The tab (its second text box, the causal mask, the example), or a lecture slide."""
    if room.slide is not None:
        _slide(room, room.slide)
        return
    st.markdown(
        "Type the **same words in another order**. Section 2.8 adds positions because "
        "self-attention cannot see order: here is the proof, on your words."
    )
    text_column, options = st.columns([3, 2], vertical_alignment="bottom")
    with text_column:
        text_box(
            state.COMPARE_TEXT,
            "Second text (compared with the window on screen)",
            height=80,
            persist_state="session",
        )
    options.toggle(
        "Causal mask, as GPT",
        help="Each token attends only to itself and the tokens before it (chapter 3.5).",
        key=state.CAUSAL,
        persist_state="session",
    )
    options.button(
        "Example: dog bites man / man bites dog",
        help=f"First text *{DEFAULT_TEXT}*, second text *{DEFAULT_COMPARE_TEXT}*.",
        key=state.EXAMPLE_PAIR,
        on_click=state.use_example_pair,
    )
    _tab_chart(room)


def _comparison(room: Room, view: View) -> OrderComparison:
    return build_word_order(view, tables=room.tables, attention=attention_weights)


@chart_room
def _tab_chart(room: Room) -> None:
    settings = room.settings
    comparison = _comparison(room, room.view)
    message = status_message(comparison)
    if message is not None:
        st.info(message)
    note = cut_note(comparison)
    if note is not None:
        st.caption(note)
    without, positioned = comparison.without_positions, comparison.with_positions
    if message is not None or without is None or positioned is None:
        return  # identical texts too: the sentence says why, no chart to misread
    mask = "causal, " if settings.causal else ""
    labels = ("no positions", f"with positions ({settings.scheme})")
    for column, label, summary in zip(st.columns(2), labels, (without, positioned), strict=True):
        column.metric(
            f"mean context vector, {mask}{label}: cosine",
            f"{summary.mean_cosine:.6f}",
            delta="the same" if summary.permuted else "differs",
            delta_color="off",
            delta_arrow="off",
        )
    canvas = chart_canvas(KEY)
    drawn = compare_chart(comparison, canvas=canvas)
    show_chart(drawn.spec, key=KEY, canvas=canvas)
    for paragraph in findings(comparison, drawn.decisions):
        st.markdown(paragraph)
    if settings.causal:
        st.markdown(CAUSAL_NOTE)
    explain(ATTENTION_NOTE, lecture=False)


def slide_view(room: Room) -> View:
    """The view a word-order slide compares: the page's own texts if it has a second one,
    else the example pair, whole (a context length shorter than the example would compare
    them cut, no longer the same words in another order)."""
    settings = room.settings
    if settings.compare_text.strip():
        return room.view
    longest = max(len(encode(DEFAULT_TEXT)), len(encode(DEFAULT_COMPARE_TEXT)))
    example = replace(
        settings,
        text=DEFAULT_TEXT,
        compare_text=DEFAULT_COMPARE_TEXT,
        window=0,
        stride=None,
        context_length=max(settings.context_length, longest),
    )
    return build_view(example, tables=room.tables)


@chart_room
def _slide(room: Room, slide: Slide) -> None:
    """Before the reveal the two texts and the question, after it the figure and the numbers."""
    view = slide_view(room)
    comparison = _comparison(room, view)
    # The texts as compared (each cut to one window), not as typed.
    keyed_markdown(f"### {texts_line(comparison)}", state.WORD_ORDER_TEXTS)
    question = question_text(slide, room.settings.scheme, None, compared=comparison)
    ask_or_answer(slide, question, lambda: word_order_answer(comparison))
    if not slide.revealed:
        return
    message = status_message(comparison)
    if message is not None:
        st.info(message)
        return
    canvas = chart_canvas(KEY, place=room.place)
    drawn = compare_chart(comparison, lecture=True, canvas=canvas)
    show_chart(drawn.spec, key=KEY, canvas=canvas, fill=drawn.decisions.fills, place=room.place)

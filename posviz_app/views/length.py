"""The Length view: train short, test long. Each scheme's shipped run of the book's GPT,
trained at L = 64 tokens and read on held-out text at L, 2L and 4L; RoPE stretched by the
context extension chosen in the sidebar (RoPE's options), from the run, without retraining;
RoPE's wavelengths before and after it; and the sentence in the sidebar moved past L.

Its tab takes the schemes to draw; lecture mode's two slides ask, then show: which scheme keeps
its loss at 256 tokens (the input of 64 first, then 256), and whether RoPE can be stretched
without retraining (its wavelengths first, then its loss at 256 with the extension).

The server never trains: the runs are read once per process
(:func:`posviz_app.caches.length_runs`).
"""

from __future__ import annotations

from typing import Final

import streamlit as st

from posviz.codegen import shown_script
from posviz.lesson import length as length_lesson
from posviz.lesson.lecture import LENGTH_STEPS, Slide
from posviz.plots.length import length_chart
from posviz.schemes import scheme
from posviz.training.length_view import (
    LengthView,
    build_length,
    chosen_schemes,
    rotating_scheme,
)
from posviz_app import state
from posviz_app.caches import attention_weights, kept, length_runs
from posviz_app.chart import chart_canvas, shared_chart, show_payload
from posviz_app.room import Room, ask_or_answer, chart_room, explain, keyed_markdown
from posviz_app.views.layout import slide_question

KEY: Final = state.LENGTH_CHART


def render(room: Room) -> None:
    """The tab (which schemes to draw), or a lecture slide."""
    if room.slide is not None:
        _slide(room, room.slide)
        return
    _tab(room)


def _view(room: Room, schemes: tuple[str, ...] | None) -> LengthView:
    """The view of every scheme for the settings, kept for every session (the sentence's
    scores and RoPE's frequencies do not change with the schemes drawn), then the chosen."""
    every = kept(
        ("length", room.settings),
        lambda: build_length(
            room.settings, runs=length_runs(), tables=room.tables, attention=attention_weights
        ),
    )
    return every.with_schemes(schemes)


@chart_room
def _tab(room: Room) -> None:
    """The schemes menu and what it draws, in one fragment: a change of schemes runs only
    this (the browser asks for the fragment), not the page's sidebar and main view."""
    runs = length_runs()
    labels = {spec.name: spec.label for spec in chosen_schemes(None, set(runs))}
    state.start_length_schemes(list(labels))
    st.multiselect(
        "Schemes",
        list(labels),
        key=state.LENGTH_SCHEMES,
        format_func=labels.__getitem__,
        help="Whose held-out loss to draw. RoPE's context extension is RoPE's scaling option "
        "in the sidebar (choose the RoPE scheme to set it); with none chosen, the view shows "
        "YaRN with s = 4.",
    )
    schemes = state.length_schemes(list(labels))
    view = _view(room, schemes)
    canvas = chart_canvas(KEY, place=room.place)
    shown = shared_chart(
        ("length", room.settings, state.tables_of(room.settings), schemes),
        lambda room_canvas: length_chart(view, canvas=room_canvas),
        canvas=canvas,
    )
    explain(length_lesson.INTRO, lecture=False)
    for notice in view.notices:
        st.info(notice)
    keyed_markdown(length_lesson.headline(view), state.LESSON)
    show_payload(shown.payload, key=KEY)
    for paragraph in (
        length_lesson.extension_sentence(view),
        length_lesson.attention_sentence(view),
    ):
        st.markdown(paragraph)
    st.caption(length_lesson.limits_note(view))
    _code(room, view)


def _code(room: Room, view: LengthView) -> None:
    """The plain-torch script of the sidebar's scheme's run: it trains the run and prints the
    band means the sentence quotes (RoPE's with the extension shown), behind an expander."""
    shown = scheme(room.settings.scheme)
    run = length_runs().get(shown.name)
    code = st.expander("The code behind these numbers", key=state.LENGTH_CODE, on_change="rerun")
    if run is None or not code.open:
        return
    with code:
        st.caption(
            f"{shown.label}'s run (the scheme in the sidebar; choose another there for its "
            "script): trains the book's GPT as `posviz train --scheme` does (about 8 minutes "
            "on one thread) and prints each band's mean loss."
        )
        extension = (view.extension.scaling, view.extension.factor)
        st.code(shown_script(run.config, extension), language="python")


@chart_room
def _slide(room: Room, slide: Slide) -> None:
    """Which scheme keeps its loss (the input of L, then of 4L), or can RoPE be stretched (its
    wavelengths, then RoPE's loss at 4L with the extension)."""
    keeps = slide.step is LENGTH_STEPS[0]
    view = _view(room, None if keeps else (rotating_scheme().name,))
    if keeps:
        answer = length_lesson.keeps_answer
        panels, lengths = ["loss"], [view.longest if slide.revealed else view.context_length]
    else:
        answer = length_lesson.stretch_answer
        panels = ["loss"] if slide.revealed else ["wavelengths"]
        lengths = [view.longest]
    ask_or_answer(slide, slide_question(room), lambda: answer(view))
    canvas = chart_canvas(KEY, place=room.place)
    shown = shared_chart(  # the whole class is on this slide at once
        ("length slide", room.settings, state.tables_of(room.settings), slide.number),
        lambda room_canvas: length_chart(
            view, lecture=True, canvas=room_canvas, panels=panels, lengths=lengths
        ),
        canvas=canvas,
        fill=lambda decisions: decisions.fills,
    )
    show_payload(shown.payload, key=KEY, place=room.place)

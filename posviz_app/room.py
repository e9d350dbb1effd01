"""A view's room on the page: what every view's renderer gets, and the few things they share.

Every view (``posviz_app/views/<view>.py``) has one renderer, ``render(room)``, used by its tab
and by its lecture slides alike: a :class:`Room` holds the view on screen, where its tables come
from and, on a slide, the :class:`~posviz.lesson.lecture.Slide` (what differs there: panels,
outlines, question or answer). A renderer builds its numbers with ``posviz``, asks the figure
builder for the figure and the decisions it took, writes its sentences from those, and draws.

The part of a view that depends on the chart's size (the chart and the sentences beside it) is a
:func:`chart_room`: a fragment, so when the browser reports the chart's size only that part runs
again, never the page (a whole-page rerun cleared the page's notices and cost every other
view's work). Streamlit keeps a fragment's arguments for the session's life, to run it again;
a room is kept there without its view (:class:`_Kept`), which is built again from its settings
if the fragment runs after the page's run has let it go.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import wraps
from typing import Any, ParamSpec

import streamlit as st

from posviz.config import Settings
from posviz.lesson.lecture import Slide
from posviz.view import TablesFor, View, build_view
from posviz_app import runtime, state

P = ParamSpec("P")


@dataclass(frozen=True)
class Room:
    """What a view's renderer draws from: the view on screen, the tables it was built from, and
    the lecture slide it is drawn for (``None``: its tab)."""

    view: View
    tables: TablesFor
    slide: Slide | None = None

    @property
    def settings(self) -> Settings:
        """The settings shown."""
        return self.view.settings

    @property
    def lecture(self) -> bool:
        """Whether the view is drawn as a lecture slide (projector type, the window's height)."""
        return self.slide is not None

    @property
    def place(self) -> str:
        """Where the view's chart stands, for the room it remembers: each slide has its own text
        above the chart (``""``: the tab)."""
        return "" if self.slide is None else f"slide {self.slide.number}"


@dataclass(frozen=True)
class _Kept:
    """A :class:`Room` as a fragment keeps it between runs: its view only by a weak reference
    (a big view's three [1024, 768] matrices are 9 MB, and every session keeps its fragments'
    arguments), and the settings to build it again when the fragment runs alone later."""

    settings: Settings
    tables: TablesFor
    slide: Slide | None
    view: weakref.ReferenceType[View]

    @staticmethod
    def of(value: object) -> object:
        """``value``, a room kept lightly."""
        if not isinstance(value, Room):
            return value
        return _Kept(value.settings, value.tables, value.slide, weakref.ref(value.view))

    @staticmethod
    def room(value: object) -> Any:
        """``value``, a kept room as a :class:`Room` again (its view built anew if gone)."""
        if not isinstance(value, _Kept):
            return value
        view = value.view()
        if view is None:  # the page's run is over: the same settings give the same view
            view = build_view(value.settings, tables=value.tables)
        return Room(view, value.tables, value.slide)


def chart_room(draw: Callable[P, None], *, run_every: float | None = None) -> Callable[P, None]:
    """``draw`` as a fragment of the page (it reruns alone when its chart reports its size, and
    every ``run_every`` seconds if given: the Training tab's play button), holding the
    server's run slot while it computes, and showing a message, never a traceback, if it
    fails (Streamlit calls a fragment outside the page's own handler). Its rooms are kept
    without their views (:class:`_Kept`)."""

    def guarded(*kept: object, **kwargs: object) -> None:
        # A slide's stage packs its elements closely (gap xsmall) to leave the chart the
        # window's height; the fragment's own container would space them as a tab does.
        first = kept[0] if kept else None
        room = first if isinstance(first, Room | _Kept) else None
        lecture = room is not None and room.slide is not None
        # a big view's fragment running alone (its chart's size report) computes outside the
        # turn, as its page's run did
        turn = runtime.view_turn(room.settings) if room is not None else nullcontext()
        with runtime.run_slot(), turn, st.container(gap="xsmall" if lecture else "small"):
            try:
                draw(*(_Kept.room(value) for value in kept), **kwargs)  # type: ignore[arg-type]
            except Exception:
                runtime.LOGGER.exception("unexpected error in a view")
                st.error(
                    "posviz hit an unexpected problem drawing this view. Try other values or "
                    "reload."
                )

    fragment = st.fragment(wraps(draw)(guarded), run_every=run_every)

    @wraps(draw)
    def lodged(*args: P.args, **kwargs: P.kwargs) -> None:
        fragment(*(_Kept.of(value) for value in args), **kwargs)

    return lodged


def explain(text: str, *, lecture: bool) -> None:
    """A caption; in lecture mode normal-size text, readable from the back of the room."""
    if lecture:
        st.markdown(text)
    else:
        st.caption(text)


def keyed_markdown(text: str, key: str) -> None:
    """Markdown in a container the page's tests and style can find by ``key``."""
    with st.container(key=key):
        st.markdown(text)


def ask_or_answer(slide: Slide | None, question: str, answer: Callable[[], str]) -> None:
    """A question slide: before the reveal its question, after it the answer (computed only
    then); a tab or a slide without a question says nothing more."""
    if slide is None or slide.step.question is None:
        return
    if slide.revealed:
        keyed_markdown(f"**Answer:** {answer()}", state.LECTURE_ANSWER)
    else:
        keyed_markdown(f"**Your guess?** {question}", state.LECTURE_QUESTION)

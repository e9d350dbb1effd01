"""A view's room on the page: what every view's renderer gets, and the few things they share.

Every view (``posviz_app/views/<view>.py``) has one renderer, ``render(room)``, used by its tab
and by its lecture slides alike: a :class:`Room` holds the view on screen, where its tables come
from and, on a slide, the :class:`~posviz.lesson.lecture.Slide` (what differs there: panels,
outlines, question or answer). A renderer builds its numbers with ``posviz``, asks the figure
builder for the figure and the decisions it took, writes its sentences from those, and draws.

The part of a view that depends on the chart's size (the chart and the sentences beside it) is a
:func:`chart_room`: a fragment, so when the browser reports the chart's size only that part runs
again, never the page (a whole-page rerun cleared the page's notices and cost every other
view's work).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import ParamSpec

import streamlit as st

from posviz.config import Settings
from posviz.lesson.lecture import Slide
from posviz.view import TablesFor, View
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


def chart_room(draw: Callable[P, None], *, run_every: float | None = None) -> Callable[P, None]:
    """``draw`` as a fragment of the page (it reruns alone when its chart reports its size, and
    every ``run_every`` seconds if given: the Training tab's play button), holding one of the
    server's view slots while it computes, and showing a message, never a traceback, if it
    fails (Streamlit calls a fragment outside the page's own handler)."""

    @wraps(draw)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        # A slide's stage packs its elements closely (gap xsmall) to leave the chart the
        # window's height; the fragment's own container would space them as a tab does.
        lecture = bool(args) and isinstance(args[0], Room) and args[0].lecture
        with runtime.view_slot(), st.container(gap="xsmall" if lecture else "small"):
            try:
                draw(*args, **kwargs)
            except Exception:
                runtime.LOGGER.exception("unexpected error in a view")
                st.error(
                    "posviz hit an unexpected problem drawing this view. Try other values or "
                    "reload."
                )

    return st.fragment(guarded, run_every=run_every)


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

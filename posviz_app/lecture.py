"""Lecture mode's stage: one slide on one screen, the chart filling what the text leaves.

The slides are data (:data:`posviz.lesson.lecture.SLIDES`); the stage draws the navigation,
the slide's narration and the view the slide names, with that view's own renderer
(:data:`posviz_app.views.SLIDE_VIEWS`: the renderer its tab uses).

The navigation is a component (``nav.js``, inline, no build step): Back, the slide's title and
Next, and the keys a presentation clicker sends. It counts presses itself and sends the slide
they lead to, so no press is lost to a page still drawing the last one, and its keys work
wherever the focus is (right after the sidebar's toggle too), except in a text box or slider.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Final

import streamlit as st

from posviz.lesson.lecture import SLIDES
from posviz.view import TablesFor, View
from posviz_app import state
from posviz_app.room import Room
from posviz_app.views import SLIDE_VIEWS

NAV_NAME: Final = "posviz_nav"
NAV_JS: Final = resources.files("posviz_app").joinpath("nav.js").read_text(encoding="utf-8")
NAV_CSS: Final = resources.files("posviz_app").joinpath("nav.css").read_text(encoding="utf-8")
_nav = st.components.v2.component(NAV_NAME, js=NAV_JS, css=NAV_CSS, isolate_styles=False)


def stage(view: View, tables: TablesFor, *, window_picker: Callable[[View], None]) -> None:
    """The slide :func:`posviz_app.state.step` names, for the window on screen."""
    slide = SLIDES[state.step()]
    scheme = view.settings.scheme
    with st.container(key=state.LECTURE_STAGE, border=False, gap="xsmall"):
        _nav(
            key=state.NAV,
            data={
                "step": slide.number - 1,
                "count": len(SLIDES),
                "title": slide.title_for(scheme),
                "seq": state.nav_seq(),  # the last press taken: the navigation counts on
            },
            on_target_change=state.take_nav_target,
        )
        caption = slide.caption_for(scheme)
        if caption:
            st.markdown(caption)
        window_picker(view)
        SLIDE_VIEWS[slide.step.view](Room(view, tables, slide))

"""What several views share: the phone layout of the Geometry and Distance figures, and a
slide's question for the window on screen."""

from __future__ import annotations

from posviz.lesson.lecture import question_text
from posviz.plots import Canvas
from posviz.plots.geometry import NARROWEST_CHART
from posviz.repeats import repeat_facts
from posviz_app.room import Room


def narrow(canvas: Canvas) -> bool:
    """Whether the Geometry and Distance figures stack (a phone's layout) on ``canvas``: a
    chart narrower than the narrowest side-by-side one they promise (a 1024-px window with the
    sidebar open), as the browser measured it."""
    return canvas.width is not None and canvas.width < NARROWEST_CHART


def slide_question(room: Room) -> str:
    """The room's slide's question for this window and these weights (``""``: no slide, or a
    blank text)."""
    if room.slide is None or room.view.embeddings is None:
        return ""
    settings = room.settings
    facts = repeat_facts(room.view.embeddings)
    return question_text(room.slide, settings.scheme, facts, weights=settings.weights)

"""What several views share: a slide's question for the window on screen."""

from __future__ import annotations

from posviz.lesson.attention import LECTURE_SHIFT
from posviz.lesson.lecture import question_text
from posviz_app.room import Room


def slide_question(room: Room, *, shift: int = LECTURE_SHIFT) -> str:
    """The room's slide's question for these weights (``""``: no slide, or a blank text), for
    a view whose question names no token (Geometry, Distance; Attention's names the ``shift``
    its answer moves by)."""
    if room.slide is None or room.view.embeddings is None:
        return ""
    settings = room.settings
    return question_text(room.slide, settings.scheme, None, weights=settings.weights, shift=shift)

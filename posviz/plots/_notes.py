"""The small lines under a panel's title, at a size a lecture can read.

Plotly's ``<sup>`` (what :func:`posviz.plots._layout.small_note` writes) draws a line at 70 %
of its annotation's size: 16.8 px under a lecture slide's 24-px title, while everything a
student reads is at least :data:`LECTURE_SMALLEST` px (the guide's promise). On a slide a note
is therefore a line of exactly that size; elsewhere it stays the small superscript.

>>> panel_note("step 600", width=300, font_size=22, lecture=True)
"<br><span style='font-size:20px'>step 600</span>"
>>> panel_note("step 600", width=300, font_size=15, lecture=False)
'<br><sup>step 600</sup>'
"""

from __future__ import annotations

from typing import Final

from posviz.plots._layout import small_note, wrap_title

LECTURE_SMALLEST: Final = 20  # px: no text of a lecture slide is smaller


def panel_note(text: str, *, width: float, font_size: int, lecture: bool) -> str:
    """``text`` as lines under a panel title (``""`` for no note), wrapped to ``width`` px:
    :data:`LECTURE_SMALLEST` px each on a slide (``lecture``), else ``small_note``'s."""
    if not lecture:
        return small_note(text, width=width, font_size=font_size)
    if not text:
        return ""
    lines = wrap_title(text, width=width, font_size=LECTURE_SMALLEST).split("<br>")
    return "".join(f"<br>{lecture_line(line)}" for line in lines)


def lecture_line(text: str) -> str:
    """One line of :data:`LECTURE_SMALLEST` px, whatever its annotation's size."""
    return f"<span style='font-size:{LECTURE_SMALLEST}px'>{text}</span>"

"""The text and its tokens: lecture mode's first two slides, the token chips above the tabs,
and the tensor shapes of section 2.8.

Chips read ``position · token · id``; a token that repeats in the window is orange and says how
often (``×3``: colour is not the only sign); a character split over several tokens is named in
each (``東 (1 of 2)``), as the charts' row labels name it.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

import streamlit as st

from posviz.batching import Batch
from posviz.config import Settings
from posviz.lesson.schemes import shape_labels
from posviz.plots.attention import positions
from posviz.token_text import for_markdown, readable
from posviz.tokenizer import token_texts
from posviz.view import View
from posviz_app import state
from posviz_app.room import Room, explain

CHIPS_SHOWN: Final = 64  # token chips before "and N more"
LECTURE_CHIPS_SHOWN: Final = 24  # lecture mode's chips are larger
DROPPED_SHOWN: Final = 32


def render_text(room: Room) -> None:
    """Lecture mode's first slide: the text as typed (escaped), before it is tokenized."""
    st.markdown(f"## {for_markdown(readable(room.settings.text[:400]))}")


def render_tokens(room: Room) -> None:
    """Lecture mode: the window's tokens as chips with their ids."""
    chips(room.view, lecture=True)


def chips_markdown(view: View, start: int, stop: int, *, lecture: bool) -> str:
    """Markdown for the token chips of positions ``start``..``stop - 1``."""
    counts = Counter(view.token_ids)
    texts = view.token_texts
    # Badges have a fixed small size; coloured backgrounds grow with the heading in lecture mode.
    style, parts = ("background", ["####"]) if lecture else ("badge", [])
    for offset in range(start, stop):
        token_id, text = view.token_ids[offset], for_markdown(texts[offset])
        if counts[token_id] > 1:
            parts.append(f":orange-{style}[{offset} · {text} · {token_id} · ×{counts[token_id]}]")
        else:
            parts.append(f":blue-{style}[{offset} · {text} · {token_id}]")
    return " ".join(parts)


def chips(view: View, *, lecture: bool) -> None:
    """The window's tokens as chips: the first screenful, the rest behind "and N more"; outside
    lecture mode, what the window covers and the tokens the batch drops or skips."""
    batch, window = view.batch, view.window
    shown = min(len(view.token_ids), LECTURE_CHIPS_SHOWN if lecture else CHIPS_SHOWN)
    st.markdown(chips_markdown(view, 0, shown, lecture=lecture))
    if shown < len(view.token_ids):
        more = st.expander(
            f"and {len(view.token_ids) - shown:,} more tokens",
            key=state.MORE_CHIPS,
            on_change="rerun",
        )
        if more.open:  # built only when opened: a thousand chips are slow to draw
            with more:
                st.markdown(chips_markdown(view, shown, len(view.token_ids), lecture=False))
    if lecture:
        return  # the slide's narration says the rest
    span = batch.window_span(window)
    covered = positions(span.start, span.stop - 1, noun="token")
    explain(
        lecture=False,
        text=f"Window {window} of the batch covers {covered} of {len(batch.token_ids)} "
        f"({positions(0, len(span) - 1)}). Orange, ×N: a token that occurs N times in this "
        "window: same token id, same token vector.",
    )
    if batch.dropped:
        dropped = batch.dropped  # positions in the text
        struck = " ".join(
            f":gray-badge[~~{for_markdown(text)}~~]"  # read in the whole text, as the chips
            for text in token_texts(batch.token_ids, dropped[:DROPPED_SHOWN])
        )
        rest = f" and {len(dropped) - DROPPED_SHOWN} more" if len(dropped) > DROPPED_SHOWN else ""
        st.markdown(
            f"**Dropped:** {len(dropped)} token(s) at the end do not fill a window of "
            f"{batch.context_length}: {struck}{rest}"
        )
    if batch.skipped:
        st.markdown(f"**Skipped:** the stride jumps over {batch.skipped} token(s) between windows.")


def shapes_line(settings: Settings, batch: Batch, *, compact: bool) -> None:
    """The tensor shapes of section 2.8 for this text, worded for the scheme: large numbers,
    each as wide as it needs (never cut), wrapping onto a second row on narrow screens.
    ``compact`` (lecture mode, a phone, a short window): one line of text, to leave the window's
    height to the chart and keep the lesson on the first screen."""
    labels = shape_labels(
        settings.scheme, (batch.num_windows, batch.window_length), settings.emb_dim,
        settings.context_length,
    )  # fmt: skip
    if compact:
        st.markdown("  ".join(f"{s.label.rsplit(' [', 1)[0]} **{s.value}**" for s in labels))
        return
    with st.container(horizontal=True, gap="medium", key=state.SHAPES):
        for shape in labels:
            st.metric(
                shape.label,
                shape.value,
                delta=shape.note,
                delta_color="off",
                delta_arrow="off",
                width="content",
            )

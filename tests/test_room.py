"""A chart's fragment keeps its room without the view (posviz_app/room.py, issue 42).

Streamlit keeps a fragment's arguments for the session's life, to run it again alone when its
chart reports a size. A big view's matrices are 9 MB (T = 1,024, d = 768: 10 idle sessions on
such views held the server at 424 MB against 332 MB); the fragment keeps the view's settings
and a weak reference instead, and builds the view again when it runs after the page's run let
it go.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
import torch

from posviz.config import Settings
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import EmbeddingTables
from posviz.view import build_view
from posviz_app import room as room_module
from posviz_app.room import Room, _Kept, chart_room

SETTINGS = Settings(
    text="A rose is a rose is a rose, and the verdict is in.",
    context_length=6,
    emb_dim=16,
    seed=7,
    stride=4,
    window=1,
    scheme="sinusoidal",
)


def tables(settings: Settings) -> EmbeddingTables:
    return SeededEmbeddings.create(seed=settings.seed, emb_dim=settings.emb_dim)


def _matrices(room: Room) -> list[torch.Tensor]:
    embeddings = room.view.embeddings
    assert embeddings is not None
    return [
        embeddings.token_embeddings.clone(),
        embeddings.pos_embeddings.clone(),
        embeddings.input_embeddings.clone(),
    ]


def test_a_kept_room_holds_its_view_weakly_and_builds_the_same_again() -> None:
    first = Room(build_view(SETTINGS, tables=tables), tables)
    shown = _matrices(first)
    kept = _Kept.of(first)
    assert isinstance(kept, _Kept) and kept.view() is first.view
    assert _Kept.room(kept).view is first.view  # while the page's run holds it: that view
    del first
    gc.collect()
    assert kept.view() is None, "the kept room holds the view alive"
    again = _Kept.room(kept)
    assert isinstance(again, Room) and again.view.settings == SETTINGS and again.slide is None
    for built, was in zip(_matrices(again), shown, strict=True):
        assert torch.equal(built, was)


def test_chart_room_gives_the_fragment_a_kept_room_and_the_view_a_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept: list[tuple[Callable[..., None], tuple[Any, ...]]] = []

    def fragment(draw: Callable[..., None], run_every: float | None = None) -> Callable[..., None]:
        def first_run(*args: Any) -> None:  # Streamlit keeps the function and its arguments
            kept.append((draw, args))
            draw(*args)

        return first_run

    monkeypatch.setattr(room_module.st, "fragment", fragment)
    drawn: list[tuple[Room, int]] = []

    @chart_room
    def view(room: Room, extra: int) -> None:
        drawn.append((room, extra))

    page_room = Room(build_view(SETTINGS, tables=tables), tables)
    shown = _matrices(page_room)
    view(page_room, 3)
    ((again, arguments),) = kept
    assert isinstance(arguments[0], _Kept) and arguments[1] == 3
    assert drawn == [(page_room, 3)]  # the page's own run draws the page's view
    drawn.clear()
    del page_room
    gc.collect()
    assert arguments[0].view() is None, "the fragment's arguments hold the view"
    again(*arguments)  # the chart reports its size: the fragment runs alone
    ((room, extra),) = drawn
    assert extra == 3 and room.view.settings == SETTINGS
    for built, was in zip(_matrices(room), shown, strict=True):
        assert torch.equal(built, was)

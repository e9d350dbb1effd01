"""posviz.view: the one path from settings to a view, against the book's code."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
from reference import book_attention, book_layers, book_window

from posviz.attention import AttentionWeights, book_attention_weights
from posviz.config import Settings, SettingsError
from posviz.embeddings import SeededEmbeddings
from posviz.presets import VERDICT_OPENING
from posviz.tokenizer import encode
from posviz.view import build_view, build_word_order

# The book, section 2.8: the first batch over The Verdict (max_length=4, stride=4).
VERDICT_WINDOW_2 = (10899, 2138, 257, 7026)


def test_a_view_is_the_books_window() -> None:
    settings = Settings(text=VERDICT_OPENING, context_length=4, emb_dim=16, stride=4, window=2)
    view = build_view(settings)
    assert view.settings == settings
    assert view.notices == ()
    assert view.batch.shape == (8, 4)
    assert view.window == 2
    assert view.token_ids == VERDICT_WINDOW_2
    assert view.token_texts == ("burn", "␣rather", "␣a", "␣cheap")
    assert view.embeddings is not None
    token, position, total = book_window(
        "learned", seed=123, emb_dim=16, context_length=4, token_ids=VERDICT_WINDOW_2
    )
    assert torch.equal(view.embeddings.token_embeddings, token)
    assert torch.equal(view.embeddings.pos_embeddings, position)
    assert torch.equal(view.embeddings.input_embeddings, total)


def test_a_missing_window_falls_back_to_window_0_with_a_notice() -> None:
    view = build_view(Settings(text="Every effort moves you", context_length=2, window=10_000_000))
    assert view.window == 0
    assert view.settings == Settings(text="Every effort moves you", context_length=2)
    assert view.token_ids == (6109, 3626)
    assert view.notices == (
        "Window 10000000 does not exist: this text gives 2 window(s). Showing window 0.",
    )


def test_strict_views_refuse_a_missing_window() -> None:
    with pytest.raises(SettingsError, match="window must be from 0 to 1 for this text, got 2"):
        build_view(Settings(text="Every effort moves you", context_length=2, window=2), strict=True)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_a_blank_text_has_no_window_and_builds_no_tables(text: str) -> None:
    def no_tables(settings: Settings) -> object:
        raise AssertionError("tables built for a blank text")

    view = build_view(Settings(text=text), tables=no_tables)  # type: ignore[arg-type]
    assert view.embeddings is None
    assert (view.token_ids, view.token_texts, view.notices) == ((), (), ())


def test_bad_settings_raise() -> None:
    with pytest.raises(SettingsError, match="emb_dim must be from 2 to 768, got 1"):
        build_view(Settings(emb_dim=1))


class CountingTables:
    """Tables with known rows: token row i is all i; position row p is all 1000 * p."""

    def __init__(self, emb_dim: int) -> None:
        self.emb_dim = emb_dim

    def token_embeddings(self, token_ids: Sequence[int]) -> torch.Tensor:
        return torch.tensor(list(token_ids), dtype=torch.float32)[:, None].expand(-1, self.emb_dim)

    def pos_embeddings(self, context_length: int) -> torch.Tensor:
        rows = 1000.0 * torch.arange(context_length, dtype=torch.float32)
        return rows[:, None].expand(-1, self.emb_dim)


def test_the_tables_are_the_callers_choice() -> None:
    tables = CountingTables(emb_dim=3)
    asked: list[Settings] = []

    def tables_for(settings: Settings) -> CountingTables:
        asked.append(settings)
        return tables

    settings = Settings(text="Every effort moves you", context_length=4, emb_dim=3)
    view = build_view(settings, tables=tables_for)
    assert asked == [settings]
    assert view.embeddings is not None
    expected = torch.tensor([[6109.0], [3626 + 1000], [6100 + 2000], [345 + 3000]]).expand(-1, 3)
    assert torch.equal(view.embeddings.input_embeddings, expected)


@pytest.mark.parametrize("scheme", ["learned", "none"])
def test_the_word_order_view_is_the_books_self_attention(scheme: str) -> None:
    """build_word_order, the one path of the app and the command line: both texts' context
    vectors equal the book's SelfAttention_v2 (seed 789) run on the book's tables."""
    settings = Settings(
        text="The dog bites the man",
        compare_text="The man bites the dog",
        context_length=8,
        emb_dim=16,
        scheme=scheme,  # type: ignore[arg-type]
    )
    pair = build_word_order(build_view(settings))
    assert pair.status == "permutation" and pair.with_positions is not None
    token_layer, pos_layer = book_layers(settings.seed, settings.emb_dim, settings.context_length)
    module = book_attention(settings.emb_dim, settings.emb_dim).double()
    for ids, context in (
        (encode(settings.text), pair.with_positions.context_a),
        (encode(settings.compare_text), pair.with_positions.context_b),
    ):
        with torch.no_grad():
            x = token_layer(torch.tensor(ids))
            if scheme == "learned":
                x = x + pos_layer(torch.arange(len(ids)))
            expected = module(x.double())
        torch.testing.assert_close(context, expected, rtol=0, atol=1e-12)


def test_the_word_order_view_uses_the_callers_tables_and_attention() -> None:
    asked: list[object] = []

    def tables(settings: Settings) -> SeededEmbeddings:
        asked.append(settings.emb_dim)
        return SeededEmbeddings.create(seed=settings.seed, emb_dim=settings.emb_dim)

    def attention(emb_dim: int) -> AttentionWeights:
        asked.append(("attention", emb_dim))
        return book_attention_weights(d_in=emb_dim, d_out=emb_dim)

    settings = Settings(text="The dog bites", compare_text="The bites dog", emb_dim=8)
    view = build_view(settings, tables=tables)
    assert build_word_order(view, tables=tables, attention=attention).status == "permutation"
    assert asked == [8, 8, ("attention", 8)]

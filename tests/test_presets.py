"""posviz.presets: every preset is a valid view; the book's presets give the book's numbers."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from reference import BOOK_2_8_INPUTS, book_layers

from posviz.batching import make_batch
from posviz.config import Settings, for_weights, validate
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import embed_window, shapes
from posviz.presets import PRESETS, matching_preset
from posviz.tokenizer import encode

BOOK_2_5_IDS = [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812,
                2114, 286, 617, 34680, 27271, 13]  # fmt: skip


def preset_named(start: str) -> str:
    matches = [name for name in PRESETS if name.startswith(start)]
    assert len(matches) == 1, f"expected one preset starting {start!r}, got {matches}"
    return matches[0]


def test_the_issues_presets_exist() -> None:
    texts = {settings.text for settings in PRESETS.values()}
    assert "Every effort moves you" in texts
    assert (
        "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace." in texts
    )
    repeated = [s.text for s in PRESETS.values() if len(set(w := s.text.split())) < len(w)]
    assert repeated, "a preset with a repeated word"
    preset_named("Book §2.8")


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_validates_tokenizes_and_embeds(name: str) -> None:
    settings = validate(PRESETS[name])
    token_ids = encode(settings.text)
    assert token_ids
    batch = make_batch(
        token_ids, context_length=settings.context_length, stride=settings.effective_stride
    )
    assert 0 <= settings.window < batch.num_windows
    window_ids = batch.window_token_ids(settings.window)
    tables = SeededEmbeddings.create(seed=settings.seed, emb_dim=settings.emb_dim)
    view = embed_window(
        tables, window_ids, context_length=settings.context_length, scheme=settings.scheme
    )
    assert view.input_embeddings.shape == (len(window_ids), settings.emb_dim)


def test_book_2_5_preset_tokens() -> None:
    settings = PRESETS[preset_named("Book §2.5")]
    assert encode(settings.text) == BOOK_2_5_IDS
    batch = make_batch(encode(settings.text), context_length=settings.context_length)
    assert batch.num_windows == 1 and batch.window_token_ids(0) == tuple(BOOK_2_5_IDS)


def test_book_2_8_preset_gives_the_books_batch_and_shapes() -> None:
    settings = PRESETS[preset_named("Book §2.8")]
    assert (settings.context_length, settings.emb_dim, settings.effective_stride) == (4, 256, 4)
    token_ids = encode(settings.text)
    batch = make_batch(token_ids, context_length=4, stride=settings.effective_stride)
    inputs = torch.tensor([batch.window_token_ids(i) for i in range(batch.num_windows)])

    assert batch.shape == (8, 4)
    assert torch.equal(inputs, torch.tensor(token_ids[:32]).view(8, 4))
    assert inputs.tolist() == BOOK_2_8_INPUTS
    # One token more than the 32 in the batch: the last window's target, which the book's
    # GPTDatasetV1 needs to cut 8 windows (range(0, len(token_ids) - max_length, stride)).
    assert list(batch.dropped) == [32] and token_ids[32] == 287 and batch.skipped == 0
    assert batch.book_num_windows == 8 and batch.same_as_book

    # The book's shapes, from the book's code run here.
    token_embedding_layer, pos_embedding_layer = book_layers(settings.seed, 256, 4)
    with torch.no_grad():
        token_embeddings = token_embedding_layer(inputs)
        pos_embeddings = pos_embedding_layer(torch.arange(4))
        input_embeddings = token_embeddings + pos_embeddings
    assert tuple(token_embeddings.shape) == (8, 4, 256)
    assert tuple(pos_embeddings.shape) == (4, 256)
    assert tuple(input_embeddings.shape) == (8, 4, 256)
    printed = shapes(batch.shape, settings.emb_dim, settings.context_length)
    assert [printed[key] for key in ("inputs", "token_embeddings", "pos_embeddings")] == [
        "[8, 4]",
        "[8, 4, 256]",
        "[4, 256]",
    ]
    assert printed["input_embeddings"] == "[8, 4, 256]"

    # And the numbers of every window are the book's.
    tables = SeededEmbeddings.create(seed=settings.seed, emb_dim=256)
    for window in range(batch.num_windows):
        view = embed_window(tables, batch.window_token_ids(window), context_length=4)
        assert torch.equal(view.input_embeddings, input_embeddings[window])


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("scheme", ["learned", "rope"])
def test_a_preset_is_recognised_under_any_scheme(name: str, scheme: str) -> None:
    assert matching_preset(replace(PRESETS[name], scheme=scheme)) == name  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [{"text": "my own words"}, {"emb_dim": 8}, {"seed": 1}, {"stride": 2}],
    ids=["text", "emb_dim", "seed", "stride"],
)
def test_a_changed_preset_is_no_preset(change: dict[str, object]) -> None:
    assert matching_preset(replace(Settings(), **change)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [1, 7, 40])
def test_another_window_of_the_example_is_still_that_example(window: int) -> None:
    """The window slider looks into the example's batch (the Verdict's 8 windows); a link to a
    window the text lacks shows window 0 of it: either way the menu names the example, not
    "Your own text"."""
    name = "Book §2.8: The Verdict, [8, 4, 256]"
    assert matching_preset(replace(PRESETS[name], window=window)) == name
    assert matching_preset(replace(Settings(), window=window)) == next(iter(PRESETS))


def test_an_example_with_gpt2_weights_is_still_that_example() -> None:
    name, preset = next(iter(PRESETS.items()))
    assert matching_preset(for_weights(preset, "gpt2")) == name
    assert matching_preset(for_weights(replace(preset, text="mine"), "gpt2")) is None

"""posviz.pipeline: one window through section 2.8's pipeline, against the book's code.

Reference (the book, section 2.8; tests/reference.py)::

    torch.manual_seed(seed)
    token_embedding_layer = torch.nn.Embedding(vocab_size, output_dim)
    pos_embedding_layer = torch.nn.Embedding(context_length, output_dim)
    token_embeddings = token_embedding_layer(inputs)
    pos_embeddings = pos_embedding_layer(torch.arange(context_length))
    input_embeddings = token_embeddings + pos_embeddings
"""

from __future__ import annotations

import pytest
import torch
from reference import book_layers, book_rope
from reference import sinusoidal as reference_sinusoidal

from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import embed_window, shapes
from posviz.tokenizer import encode

GPT2_VOCAB = 50257


@pytest.mark.parametrize(
    ("seed", "emb_dim", "context_length", "text"),
    [
        pytest.param(123, 256, 4, "I HAD always thought", id="book-2.8-first-window"),
        pytest.param(123, 3, 8, "Every effort moves you", id="d3-T8"),
        pytest.param(0, 2, 1, "Hi", id="d2-T1"),
        pytest.param(7, 17, 6, "A rose is a rose", id="d17-T6-repeats"),
        pytest.param(2**32 - 1, 64, 20, "😀 大型 <|endoftext|> x", id="emoji-cjk-eot"),
        pytest.param(42, 768, 5, " tea? <|endoftext|>", id="d768"),
    ],
)
def test_learned_window_equals_the_book(
    seed: int, emb_dim: int, context_length: int, text: str
) -> None:
    token_ids = encode(text)[:context_length]
    n = len(token_ids)
    token_embedding_layer, pos_embedding_layer = book_layers(
        seed, emb_dim, context_length, vocab_size=GPT2_VOCAB
    )
    with torch.no_grad():
        token_embeddings = token_embedding_layer(torch.tensor(token_ids))
        pos_embeddings = pos_embedding_layer(torch.arange(n))
        input_embeddings = token_embeddings + pos_embeddings

    tables = SeededEmbeddings.create(seed=seed, emb_dim=emb_dim)
    view = embed_window(tables, token_ids, context_length=context_length)

    assert view.token_ids == tuple(token_ids)
    assert view.context_length == context_length
    assert view.scheme == "learned"
    assert view.emb_dim == emb_dim
    assert torch.equal(view.token_embeddings, token_embeddings)
    assert torch.equal(view.pos_embeddings, pos_embeddings)
    assert torch.equal(view.input_embeddings, input_embeddings)
    for tensor in (view.token_embeddings, view.pos_embeddings, view.input_embeddings):
        assert tensor.dtype == torch.float32 and tensor.shape == (n, emb_dim)


def test_short_window_uses_the_first_rows_of_the_T_row_table() -> None:
    """n=3 tokens, T=8: rows 0..2 of nn.Embedding(8, d), which differ from nn.Embedding(3, d)."""
    seed, vocab_size, emb_dim = 5, 100, 5
    token_ids = [3, 99, 3]
    _, pos_table_8 = book_layers(seed, emb_dim, 8, vocab_size=vocab_size)
    _, pos_table_3 = book_layers(seed, emb_dim, 3, vocab_size=vocab_size)
    tables = SeededEmbeddings.create(seed=seed, emb_dim=emb_dim, vocab_size=vocab_size)

    view = embed_window(tables, token_ids, context_length=8)

    assert torch.equal(view.pos_embeddings, pos_table_8.weight[:3].detach())
    assert not torch.allclose(pos_table_8.weight[:3], pos_table_3.weight)  # the check can fail
    assert not torch.allclose(view.pos_embeddings, pos_table_3.weight.detach())
    # repeated token: same token rows, different input rows
    assert torch.equal(view.token_embeddings[0], view.token_embeddings[2])
    assert not torch.equal(view.input_embeddings[0], view.input_embeddings[2])


def test_empty_window() -> None:
    tables = SeededEmbeddings.create(seed=1, emb_dim=4, vocab_size=10)
    view = embed_window(tables, [], context_length=4)
    assert view.input_embeddings.shape == (0, 4)


def test_window_longer_than_context_length_raises() -> None:
    tables = SeededEmbeddings.create(seed=1, emb_dim=4, vocab_size=10)
    with pytest.raises(ValueError, match=r"at most 2 tokens, got 3"):
        embed_window(tables, [1, 2, 3], context_length=2)


def test_other_schemes_are_wired_through() -> None:
    seed, emb_dim, token_ids = 3, 6, [5, 6, 7, 5]
    token_embedding_layer, _ = book_layers(seed, emb_dim, 4, vocab_size=10)
    token_embeddings = token_embedding_layer.weight.detach()[token_ids]
    tables = SeededEmbeddings.create(seed=seed, emb_dim=emb_dim, vocab_size=10)

    none = embed_window(tables, token_ids, context_length=4, scheme="none")
    assert torch.equal(none.input_embeddings, token_embeddings)
    assert torch.equal(none.pos_embeddings, torch.zeros(4, emb_dim))

    sinusoidal = embed_window(tables, token_ids, context_length=4, scheme="sinusoidal")
    pe = reference_sinusoidal(4, emb_dim)
    assert torch.equal(sinusoidal.pos_embeddings, pe)
    assert torch.equal(sinusoidal.input_embeddings, token_embeddings + pe)

    rope = embed_window(tables, token_ids, context_length=4, scheme="rope")
    cos, rotated = book_rope(token_embeddings)
    assert torch.equal(rope.token_embeddings, token_embeddings)
    assert torch.equal(rope.pos_embeddings, cos)
    assert torch.equal(rope.input_embeddings, rotated)
    assert torch.equal(rope.input_embeddings[0], token_embeddings[0])  # position 0: angle 0


def test_book_2_8_shapes_match_torch() -> None:
    """The book's tensors built here with torch; shapes() must print their shapes."""
    token_ids = list(range(1000, 1032))
    token_embedding_layer, pos_embedding_layer = book_layers(123, 256, 4, vocab_size=GPT2_VOCAB)
    with torch.no_grad():
        inputs = torch.tensor(token_ids).view(8, 4)
        token_embeddings = token_embedding_layer(inputs)
        pos_embeddings = pos_embedding_layer(torch.arange(4))
        input_embeddings = token_embeddings + pos_embeddings

    printed = shapes((8, 4), 256, 4)

    assert printed["inputs"] == str(list(inputs.shape)) == "[8, 4]"
    assert printed["token_embeddings"] == str(list(token_embeddings.shape)) == "[8, 4, 256]"
    assert printed["pos_embeddings"] == str(list(pos_embeddings.shape)) == "[4, 256]"
    assert printed["input_embeddings"] == str(list(input_embeddings.shape)) == "[8, 4, 256]"
    assert printed["pos_table"] == str(list(pos_embedding_layer.weight.shape)) == "[4, 256]"


def test_short_text_shapes() -> None:
    printed = shapes((1, 3), 16, 8)
    assert printed == {
        "inputs": "[1, 3]",
        "token_embeddings": "[1, 3, 16]",
        "pos_embeddings": "[3, 16]",
        "pos_table": "[8, 16]",
        "input_embeddings": "[1, 3, 16]",
    }

"""posviz.attention against the book's own code.

The reference (tests/reference.py) is the book's chapter-3 ``SelfAttention_v2``, made
after ``torch.manual_seed(789)``, the causal masking of section 3.5.1 as the book writes it, and
the rotation of the book's Llama notebook.
"""

from __future__ import annotations

import pytest
import torch
from reference import book_attention, book_causal_attention, book_rope, random_rows

from posviz.attention import book_attention_weights, self_attention

SIZES = [
    pytest.param(3, 2, id="book-d_in3-d_out2"),
    pytest.param(4, 4, id="d4"),
    pytest.param(7, 5, id="odd"),
    pytest.param(64, 64, id="d64"),
    pytest.param(256, 256, id="book-2.8-d256"),
]


@pytest.mark.parametrize(("d_in", "d_out"), SIZES)
def test_weights_are_the_books_after_manual_seed_789(d_in: int, d_out: int) -> None:
    module = book_attention(d_in, d_out)
    ours = book_attention_weights(d_in=d_in, d_out=d_out)
    assert torch.equal(ours.w_query, module.W_query.weight.detach())
    assert torch.equal(ours.w_key, module.W_key.weight.detach())
    assert torch.equal(ours.w_value, module.W_value.weight.detach())
    assert (ours.d_in, ours.d_out, ours.seed) == (d_in, d_out, 789)


def test_weights_do_not_touch_the_global_generator() -> None:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        expected = torch.rand(3)
        torch.manual_seed(5)
        book_attention_weights(d_in=8, d_out=8, seed=1)
        assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(("d_in", "d_out"), SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_forward_is_the_books_bit_for_bit(d_in: int, d_out: int, dtype: torch.dtype) -> None:
    x = random_rows(6, d_in)
    module = book_attention(d_in, d_out).to(dtype)
    with torch.no_grad():
        expected = module(x.to(dtype))
    ours = self_attention(x, book_attention_weights(d_in=d_in, d_out=d_out), dtype=dtype)
    assert ours.context_vecs.dtype == dtype
    assert torch.equal(ours.context_vecs, expected)
    assert torch.allclose(ours.attn_weights.sum(dim=-1), torch.ones(6, dtype=dtype))


@pytest.mark.parametrize(("d_in", "d_out"), SIZES)
def test_causal_is_the_books_masking_bit_for_bit(d_in: int, d_out: int) -> None:
    x = random_rows(5, d_in, seed=1).double()
    module = book_attention(d_in, d_out).double()
    with torch.no_grad():
        expected = book_causal_attention(module, x)
    ours = self_attention(x, book_attention_weights(d_in=d_in, d_out=d_out), causal=True)
    assert torch.equal(ours.context_vecs, expected)
    assert torch.equal(ours.attn_weights, ours.attn_weights.tril())  # nothing from the future
    assert ours.attn_weights[0, 0] == 1.0  # the first token sees only itself


@pytest.mark.parametrize("d", [2, 4, 64, 256])
def test_rope_rotates_queries_and_keys_as_the_notebook_does(d: int) -> None:
    x = random_rows(7, d, seed=2)
    weights = book_attention_weights(d_in=d, d_out=d)
    module = book_attention(d, d).double()
    with torch.no_grad():
        x64 = x.double()
        queries = book_rope(module.W_query(x64))[1]
        keys = book_rope(module.W_key(x64))[1]
        values = module.W_value(x64)
        expected = torch.softmax(queries @ keys.T / d**0.5, dim=-1) @ values
    ours = self_attention(x, weights, rope=True)
    assert torch.equal(ours.queries, queries)
    assert torch.equal(ours.keys, keys)
    assert torch.equal(ours.values, values)  # values are not rotated
    assert torch.equal(ours.context_vecs, expected)


def test_permuting_the_input_permutes_the_output_without_mask() -> None:
    """The property the compare view rests on, to float64 rounding."""
    x = random_rows(9, 16, seed=3)
    order = torch.tensor([4, 0, 8, 2, 6, 1, 3, 7, 5])
    weights = book_attention_weights(d_in=16, d_out=16)
    plain = self_attention(x, weights).context_vecs
    permuted = self_attention(x[order], weights).context_vecs
    torch.testing.assert_close(permuted, plain[order], rtol=0, atol=1e-12)
    # ... and neither the causal mask nor RoPE keeps it.
    for options in ({"causal": True}, {"rope": True}):
        plain = self_attention(x, weights, **options).context_vecs
        permuted = self_attention(x[order], weights, **options).context_vecs
        assert (permuted - plain[order]).abs().max() > 1e-3, options


def test_bad_shapes_raise_naming_the_shape() -> None:
    weights = book_attention_weights(d_in=4, d_out=4)
    with pytest.raises(ValueError, match=r"x must be \[n, 4\], got \[3, 5\]"):
        self_attention(torch.zeros(3, 5), weights)
    with pytest.raises(ValueError, match="must be positive"):
        book_attention_weights(d_in=0, d_out=4)


def test_the_books_printed_context_vectors() -> None:
    """Section 3.4.2 prints sa_v2(inputs) for "Your journey starts with one step"."""
    inputs = torch.tensor(
        [
            [0.43, 0.15, 0.89],  # Your
            [0.55, 0.87, 0.66],  # journey
            [0.57, 0.85, 0.64],  # starts
            [0.22, 0.58, 0.33],  # with
            [0.77, 0.25, 0.10],  # one
            [0.05, 0.80, 0.55],  # step
        ]
    )
    printed = torch.tensor(
        [
            [-0.0739, 0.0713],
            [-0.0748, 0.0703],
            [-0.0749, 0.0702],
            [-0.0760, 0.0685],
            [-0.0763, 0.0679],
            [-0.0754, 0.0693],
        ]
    )
    weights = book_attention_weights(d_in=3, d_out=2)
    context_vecs = self_attention(inputs, weights, dtype=torch.float32).context_vecs
    torch.testing.assert_close(context_vecs, printed, rtol=0, atol=5e-5)
